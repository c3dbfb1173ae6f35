#!/bin/sh
# tune_opencl.sh — `relay-tune tune --target opencl` on the first OpenCL
# device (docs/opencl.md): on the tiny model of tune.sh every trial is a
# record carrying the device's identity, the table comes, the same command
# again measures nothing, and `compile --target opencl --db` builds every
# task with its tuned config and matches the interpreter; a run killed with
# SIGKILL mid-way keeps its committed batches and the restart measures only
# what is left, nothing twice; on resnet18 a short tuning (one trial a task
# and a few more) gives a compiled model that matches the interpreter
# (1e-4) under `run --db` and benchmarks under `bench --db`; a softmax and a
# layer_norm are reduce_cl tasks, tuned, confirmed and compiled with their
# best configs, matching the interpreter. A build without
# OpenCL or a host without a device skips, saying why.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tiny.sh"
NPYCMP="$top_builddir/tests/tools/npycmp"

skip_without_opencl

# same NAME MODEL DB: run --target opencl --db DB matches the interpreter
same() {
    if "$RELAY_TUNE" run "$2" --random-params 3 --output-dir "$TMP/i" >"$TMP/out" 2>"$TMP/err" &&
        "$RELAY_TUNE" run "$2" --random-params 3 --target opencl --db "$3" --output-dir "$TMP/c" >"$TMP/out" \
            2>>"$TMP/err"; then
        bad=""
        for f in "$TMP"/i/*.npy; do
            "$NPYCMP" "$TMP/c/$(basename "$f")" "$f" 1e-4 >>"$TMP/err" 2>&1 || bad="$bad $(basename "$f")"
        done
        if [ -z "$bad" ]; then tap_ok "$1"; else tap_fail "$1" "differs in$bad" "$(cat "$TMP/err")"; fi
    else
        tap_fail "$1 (runs)" "$(cat "$TMP/err")"
    fi
    rm -rf "$TMP/i" "$TMP/c"
}

# ---- the tiny model: records, the table, resume, compile --db -------------
db="$TMP/t.db"
if "$RELAY_TUNE" tune "$M" --target opencl --trials 8 --db "$db" --seed 3 $Q >"$TMP/out" 2>"$TMP/err"; then
    if [ "$(records "$db")" = 8 ] && grep -q "^done: 8 measurements" "$TMP/out" &&
        grep -Eq '^0 .* [0-9.]+x +[0-9]+ +[0-9]+ +0$' "$TMP/out"; then
        tap_ok "tune --target opencl: 8 trials, 8 records, the table"
    else
        tap_fail "tune --target opencl: 8 trials, 8 records, the table" "$(cat "$TMP/out" "$TMP/err")"
    fi
else
    tap_fail "tune --target opencl runs" "$(cat "$TMP/err")"
fi
"$RELAY_TUNE" db export --db "$db" >"$TMP/log"
if grep -q '"name":"opencl"' "$TMP/log" && grep -q '"isa":"device-[^"]* driver-' "$TMP/log" &&
    [ "$(grep -c '"error":"none"' "$TMP/log")" = 8 ]; then
    tap_ok "every record is a measurement on the device, which it names with its driver"
else
    tap_fail "every record names the device" "$(head -c 2000 "$TMP/log")"
fi
if "$RELAY_TUNE" tune "$M" --target opencl --trials 8 --db "$db" $Q >"$TMP/out" 2>"$TMP/err" &&
    grep -q "^done: 0 measurements" "$TMP/out" && [ "$(records "$db")" = 8 ]; then
    tap_ok "the same command again measures nothing"
else
    tap_fail "the same command again measures nothing" "$(cat "$TMP/out" "$TMP/err")"
fi
tap_run "compile --target opencl --db" 0 "$RELAY_TUNE" compile "$M" --random-params 3 --target opencl --db "$db" \
    -o "$TMP/m.so"
tap_has "every task has its tuned config (the reshape's too: a device task)" "$TMP/out" \
    "3 distinct kernels (3 with a database config)"
same "the tuned tiny model matches the interpreter" "$M" "$db"
tap_run "the CPU finds no record of the device's" 0 "$RELAY_TUNE" compile "$M" --random-params 3 --db "$db" \
    -o "$TMP/cpu.so"
tap_has "so it compiles with the defaults" "$TMP/out" "(0 with a database config)"

# ---- reductions as tasks: a softmax and a layer_norm (reduce_cl) ------------
# With -wg-reduce=1 (on by default on a device that is no cpu) both are
# work-group reductions; on a device each is a task of its own (after the
# anchored ones: here there are none), measured by the same builder, runner
# and records, confirmed at its end, and compile takes its best. PoCL builds
# a kernel of barrier trees slowly under load: a generous build limit.
N="$TMP/norm.relay"
cat >"$N" <<'RELAY'
#[version = "0.0.5"]
def @main(%x: Tensor[(64, 256), float32], %g: Tensor[(256), float32], %b: Tensor[(256), float32]) {
  %0 = nn.softmax(%x);
  nn.layer_norm(%0, %g, %b)
}
RELAY
WG="opencl -wg-reduce=1"
db="$TMP/norm.db"
"$RELAY_TUNE" tasks "$N" --random-params 3 --target "$WG" >"$TMP/tasks" 2>"$TMP/err"
if [ "$(grep -c "^[01] .* reduce_cl " "$TMP/tasks")" = 2 ] && grep -q "^2 tasks" "$TMP/tasks"; then
    tap_ok "the softmax and the layer_norm are reduce_cl tasks"
else tap_fail "the softmax and the layer_norm are reduce_cl tasks" "$(cat "$TMP/tasks" "$TMP/err")"; fi
if "$RELAY_TUNE" tune "$N" --random-params 3 --target "$WG" --trials 6 --db "$db" --tuner grid --repeat 1 \
    --min-repeat-ms 1 --compile-timeout 60 --confirm 2 --confirm-rounds 1 --progress none >"$TMP/out" 2>"$TMP/err"; then
    tap_ok "tune the reductions --target '$WG'"
else tap_fail "tune the reductions --target '$WG'" "$(cat "$TMP/out" "$TMP/err")"; fi
"$RELAY_TUNE" db export --db "$db" >"$TMP/log"
nred=$(grep '"template": *"reduce_cl"' "$TMP/log" | grep -c '"error": *"none"')
if [ "$nred" -ge 4 ] && grep -q "^0 .* reduce_cl .* [0-9.]*x " "$TMP/out" && grep -q "^1 .* reduce_cl " "$TMP/out"; then
    tap_ok "each reduction task measured on the device ($nred good reduce_cl records)"
else tap_fail "each reduction task measured on the device" "good records: $nred" "$(cat "$TMP/out" | head -20)"; fi
if [ "$(grep -Ec "^task [01]: [0-9]+ configs .* re-measured side by side: config [0-9]+ wins" "$TMP/out")" = 2 ]; then
    tap_ok "each confirmed at its end"
else tap_fail "each confirmed at its end" "$(cat "$TMP/out")"; fi
tap_run "compile the reductions --db" 0 "$RELAY_TUNE" compile "$N" --random-params 3 --target "$WG" --db "$db" \
    -o "$TMP/norm.so"
tap_has "takes both tuned configs" "$TMP/out" "(2 with a database config)"
if "$RELAY_TUNE" run "$N" --random-params 3 --output-dir "$TMP/ni" >/dev/null 2>"$TMP/err" &&
    "$RELAY_TUNE" run "$N" --random-params 3 --target "$WG" --db "$db" --output-dir "$TMP/nc" >/dev/null 2>>"$TMP/err" &&
    "$NPYCMP" "$TMP/nc/0.npy" "$TMP/ni/0.npy" 1e-4 >>"$TMP/err" 2>&1; then
    tap_ok "the tuned reductions match the interpreter"
else tap_fail "the tuned reductions match the interpreter" "$(cat "$TMP/err")"; fi

# ---- SIGKILL mid-run, then the same command: it resumes ---------------------
db="$TMP/kill.db"
"$RELAY_TUNE" tune "$M" --target opencl --trials 16 --db "$db" --batch 4 --tuner grid --repeat 1 \
    --min-repeat-ms 100 --confirm 0 --progress none >"$TMP/out1" 2>"$TMP/err1" &
pid=$!
i=0
while [ "$(records "$db")" = "" ] || [ "$(records "$db")" -lt 4 ]; do
    i=$((i + 1))
    if [ $i -gt 1200 ] || ! kill -0 $pid 2>/dev/null; then break; fi
    sleep 0.1
done
kill -KILL $pid 2>/dev/null
wait $pid 2>/dev/null
killed=$(records "$db")
if [ -n "$killed" ] && [ "$killed" -ge 4 ] && [ "$killed" -lt 16 ]; then
    tap_ok "a run killed with SIGKILL keeps its committed batches ($killed records)"
else
    tap_fail "a run killed with SIGKILL keeps its committed batches" "records: $killed" "$(cat "$TMP/err1")"
fi
"$RELAY_TUNE" tune "$M" --target opencl --trials 16 --db "$db" --batch 4 --tuner grid $Q >"$TMP/out" 2>"$TMP/err"
rc=$?
total=$(records "$db")
new=$(sed -n 's/^done: \([0-9]*\) measurements.*/\1/p' "$TMP/out")
if [ $rc = 0 ] && [ "$total" = 16 ] && [ "$new" = $((16 - killed)) ] && [ "$(twice "$db")" = 0 ]; then
    tap_ok "the restart resumes: measures the $new configs left, none twice"
else
    tap_fail "the restart resumes without measuring again" "killed at $killed, now $total, new $new" \
        "$(cat "$TMP/out" "$TMP/err")"
fi

# ---- resnet18: a short tuning, then the tuned model -------------------------
R="$top_srcdir/benchmarks/models/resnet18.relay"
db="$TMP/r18.db"
t0=$(date +%s)
if "$RELAY_TUNE" tune "$R" --random-params 3 --target opencl --trials 20 --db "$db" --min-repeat-ms 5 \
    --progress none >"$TMP/out" 2>"$TMP/err" && [ "$(records "$db")" -ge 20 ]; then
    tap_ok "tune resnet18 --target opencl --trials 20 ($(($(date +%s) - t0)) s)"
else
    tap_fail "tune resnet18 --target opencl --trials 20" "$(cat "$TMP/out" "$TMP/err")"
fi
tap_has "no task falls back to its default" "$TMP/out" "tasks that fall back to the default config: none"
same "the tuned resnet18 matches the interpreter" "$R" "$db"
tap_run "bench resnet18 --target opencl --db" 0 "$RELAY_TUNE" bench "$R" --random-params 3 --target opencl \
    --db "$db" --repeat 3 --warmup 1
tap_has "reports its latency" "$TMP/out" "on opencl: median"
tap_done
