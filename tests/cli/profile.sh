#!/bin/sh
# profile.sh — `relay-tune bench --profile`: the per-kernel profile of a
# compiled model (rtm_profile of relaytune_model.h). A model of two convs of
# one workload (one distinct kernel, two steps) and a pool: one row a step,
# in run order in JSON, the slowest first in the table; names from the fused
# ops and shapes; FLOPs as `relay-tune tasks` counts them; shares that add
# up; a run's time split into its steps and the time outside them; usage
# errors.
. "$(dirname "$0")/../lib.sh"
RELAY_TUNE_CACHE="$TMP/cache"
export RELAY_TUNE_CACHE
OMP_NUM_THREADS=1
export OMP_NUM_THREADS
M="$TMP/p.relay"
cat >"$M" <<'RELAY'
#[version = "0.0.5"]
def @main(%data: Tensor[(1, 8, 16, 16), float32], %w1: Tensor[(8, 8, 3, 3), float32], %w2: Tensor[(8, 8, 3, 3), float32]) {
  %0 = nn.conv2d(%data, %w1, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3]);
  %1 = nn.relu(%0);
  %2 = nn.conv2d(%1, %w2, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3]);
  %3 = nn.relu(%2);
  nn.max_pool2d(%3, pool_size=[2, 2], strides=[2, 2])
}
RELAY
tap_run "compile the model" 0 "$RELAY_TUNE" compile "$M" -o "$TMP/p.so"
tap_run "bench --profile" 0 "$RELAY_TUNE" bench "$TMP/p.so" --repeat 5 --warmup 1 --profile
tap_has "the latency comes first" "$TMP/out" "ms, p10"
tap_has "the profile's head: steps and runs" "$TMP/out" "profile: 3 steps, medians of 5 runs; sum"
tap_has "the profiled runs: their steps and the time outside them" "$TMP/out" "  a profiled run "
# the table: the rows after the column heads
sed -n '/^ step kernel/,$p' "$TMP/out" | tail -n +2 >"$TMP/rows"
[ "$(wc -l <"$TMP/rows")" -eq 3 ] && tap_ok "one row a step" || tap_fail "one row a step" "$(cat "$TMP/out")"
[ "$(awk '{print $1}' "$TMP/rows" | sort -n | tr '\n' ' ')" = "0 1 2 " ] && tap_ok "each step once" ||
    tap_fail "each step once" "$(cat "$TMP/rows")"
awk 'NR > 1 && $3 + 0 > prev + 0 { bad = 1 } { prev = $3 } END { exit bad }' "$TMP/rows" &&
    tap_ok "the slowest first" || tap_fail "the slowest first" "$(cat "$TMP/rows")"
# shares are rounded to 0.1%: three of them add up to 100 within 0.15
awk '{ s += $4 } END { exit !(s > 99.85 && s < 100.15) }' "$TMP/rows" && tap_ok "the shares add up to 100%" ||
    tap_fail "the shares add up to 100%" "$(cat "$TMP/rows")"
[ "$(tail -1 "$TMP/rows" | awk '{print $5}')" = "100.0%" ] && tap_ok "the last cumulative share is 100%" ||
    tap_fail "the last cumulative share is 100%" "$(cat "$TMP/rows")"
[ "$(grep -c 'nn.conv2d+nn.relu 1x8x16x16$' "$TMP/rows")" -eq 2 ] && tap_ok "the convs' names: ops and shape" ||
    tap_fail "the convs' names: ops and shape" "$(cat "$TMP/rows")"
tap_has "the pool's name" "$TMP/rows" "nn.max_pool2d 1x8x8x8"

tap_run "bench --profile --json" 0 "$RELAY_TUNE" bench "$TMP/p.so" --repeat 3 --warmup 1 --profile --json
cp "$TMP/out" "$TMP/json"
[ "$(wc -l <"$TMP/json")" -eq 1 ] && tap_ok "--json: one object" || tap_fail "--json: one object" "$(cat "$TMP/json")"
tap_has "--json: the latency" "$TMP/json" '"median_ms": '
# the steps in run order: step, kernel, name
sed 's/{"step"/\n&/g' "$TMP/json" | sed -n 's/^{"step": \([0-9]*\), "kernel": \([0-9]*\), "name": "\([^"]*\)".*/\1 \2 \3/p' \
    >"$TMP/steps"
printf '0 0 nn.conv2d+nn.relu 1x8x16x16\n1 0 nn.conv2d+nn.relu 1x8x16x16\n2 1 nn.max_pool2d 1x8x8x8\n' >"$TMP/want"
cmp -s "$TMP/steps" "$TMP/want" && tap_ok "--json: the steps in order; the two convs share a kernel" ||
    tap_fail "--json: the steps in order; the two convs share a kernel" "$(cat "$TMP/json")"
# the conv's FLOPs are the task's (relay-tune tasks --json: GFLOP)
"$RELAY_TUNE" tasks "$M" --json >"$TMP/tasks" 2>&1
want=$(sed -n 's/.*"gflop": \([0-9.e+-]*\),*/\1/p' "$TMP/tasks" | head -1 | awk '{printf "%.0f", $1 * 1e9}')
got=$(sed 's/{"step"/\n&/g' "$TMP/json" | sed -n '2s/.*"flops": \([0-9]*\).*/\1/p')
[ -n "$want" ] && [ "$got" = "$want" ] && tap_ok "--json: a conv's FLOPs are its task's ($got)" ||
    tap_fail "--json: a conv's FLOPs are its task's" "got '$got', tasks say '$want'" "$(cat "$TMP/tasks")"
awk -F'"min_ms": ' '{ for (i = 2; i <= NF; i++) { split($i, a, ","); if (a[1] + 0 < 0) bad = 1 } } END { exit bad }' \
    "$TMP/json" && tap_ok "--json: minimums are times" || tap_fail "--json: minimums are times" "$(cat "$TMP/json")"

# a run's steps lie inside it, each run's time outside them is >= 0, so the
# medians keep that order too; each step's minimum is at most its median
field() { sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" "$TMP/json"; }
run=$(field run_median_ms) steps=$(field steps_median_ms) outside=$(field outside_median_ms)
sum=$(field sum_ms) minsum=$(field min_sum_ms)
[ -n "$run" ] && [ -n "$steps" ] && [ -n "$outside" ] &&
    awk -v r="$run" -v s="$steps" -v o="$outside" 'BEGIN { exit !(s > 0 && s <= r && o >= 0 && o <= r) }' &&
    tap_ok "--json: a profiled run ($run ms) holds its steps ($steps) and the time outside them ($outside)" ||
    tap_fail "--json: a profiled run holds its steps and the time outside them" "$(cat "$TMP/json")"
[ -n "$sum" ] && [ -n "$minsum" ] && awk -v m="$minsum" -v s="$sum" 'BEGIN { exit !(m > 0 && m <= s) }' &&
    tap_ok "--json: the steps' minimums sum to at most their medians" ||
    tap_fail "--json: the steps' minimums sum to at most their medians" "$(cat "$TMP/json")"

tap_run "--profile takes no value" 2 "$RELAY_TUNE" bench "$TMP/p.so" --profile=3
tap_run "--profile is bench's only" 2 "$RELAY_TUNE" run "$TMP/p.so" --profile
tap_done
