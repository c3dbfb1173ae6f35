#!/bin/sh
# winograd.sh — Winograd convs compiled (docs/winograd.md): models of one
# 3x3 conv at odd sizes, channels 1, 3, 17 and 64, padding 0 and 1, batch 2,
# with bias, relu and residual epilogues, run with `run --winograd --target
# cpu` (both tiles) must match the interpreter on the ORIGINAL model (direct
# conv2d) within 1e-4 of its largest magnitude; resnet18 the same end to end
# (every conv, and the default automatic choice on the host's and AVX2's vectors);
# `tasks --winograd` names the conv2d_winograd template and `tune --winograd`
# stores its records under it; the template's schedule for a resnet layer
# on a named AVX-512 and AVX2 target: the GEMM in a register tile (a local
# accumulator of rows x two vectors), and no vector loop dividing its own
# index by the tile row (a 64-bit division per lane).
. "$(dirname "$0")/../lib.sh"
export RELAY_TUNE_CACHE="$TMP/cache"
NPYCMP="$top_builddir/tests/tools/npycmp"
model() {  # NAME N C H W K PAD EPILOGUE: a conv with EPILOGUE (bias, relu, residual) on %0
    cat >"$TMP/$1.relay" <<RELAY
#[version = "0.0.5"]
def @main(%x: Tensor[($2, $3, $4, $5), float32], %w: Tensor[($6, $3, 3, 3), float32], %b: Tensor[($6), float32],
          %r: Tensor[($2, $6, $(($4 + 2 * $7 - 2)), $(($5 + 2 * $7 - 2))), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[$7, $7], channels=$6, kernel_size=[3, 3]);
  $8
}
RELAY
}
model c1_7x7 2 1 7 7 3 1 'nn.relu(nn.bias_add(%0, %b))'
model c3_13x13 1 3 13 13 17 0 'add(%0, %r)'
model c17_14x14 2 17 14 14 5 1 'nn.relu(add(nn.bias_add(%0, %b), %r))'
model c64_56x9 1 64 56 9 64 1 'nn.relu(nn.bias_add(%0, %b))'
for name in c1_7x7 c3_13x13 c17_14x14 c64_56x9; do
    "$RELAY_TUNE" run "$TMP/$name.relay" --random-params 5 --output "$TMP/$name.ref.npy" >/dev/null 2>"$TMP/err" ||
        tap_fail "$name: the interpreter runs" "$(cat "$TMP/err")"
    for tile in 2 4; do
        if "$RELAY_TUNE" run "$TMP/$name.relay" --target cpu --winograd-tile $tile --random-params 5 \
               --output "$TMP/$name.$tile.npy" >/dev/null 2>"$TMP/err" &&
           "$NPYCMP" -v "$TMP/$name.$tile.npy" "$TMP/$name.ref.npy" 1e-4 >"$TMP/cmp" 2>&1; then
            tap_ok "$name, F(${tile}x$tile) compiled matches the interpreter's direct conv ($(cat "$TMP/cmp"))"
        else
            tap_fail "$name, F(${tile}x$tile) compiled matches the interpreter's direct conv" "$(cat "$TMP/err" "$TMP/cmp" 2>/dev/null)"
        fi
    done
done
# the model of one conv as tasks and as records
tap_run "tasks --winograd" 0 "$RELAY_TUNE" tasks "$TMP/c17_14x14.relay" --winograd --random-params 0
tap_has "tasks --winograd: the conv is a conv2d_winograd task" "$TMP/out" "conv2d_winograd"
db="$TMP/w.db"
tap_run "tune --winograd: 4 trials" 0 "$RELAY_TUNE" tune "$TMP/c17_14x14.relay" --winograd --trials 4 --db "$db" \
    --repeat 1 --min-repeat-ms 1 --progress lines --confirm 0
"$RELAY_TUNE" db best --db "$db" >"$TMP/best" 2>&1
tap_has "tune --winograd: records under conv2d_winograd" "$TMP/best" "conv2d_winograd"
# the schedule's shape, for a target named (not the host's)
model c64_56x56 1 64 56 56 64 1 'nn.relu(nn.bias_add(%0, %b))'
for t in "skylake-avx512 float32[1, 1, 8, 32] local" "znver1 float32[1, 1, 4, 16] local"; do
    cpu=${t%% *} tile=${t#* }
    "$RELAY_TUNE" lower "$TMP/c64_56x56.relay" --winograd --random-params 0 --task 0 --target "cpu -mcpu=$cpu -cores=2" \
        >"$TMP/lower" 2>&1 || tap_fail "lower --winograd on $cpu" "$(cat "$TMP/lower")"
    tap_has "$cpu: the batched GEMM accumulates in a register tile ($tile)" "$TMP/lower" "$tile"
    # each vectorized loop's body: its variable divided (or taken modulo) by 14, the tiles across
    awk '/vectorized for/ { v = $3; next }
         v != "" && (index($0, v " / 14") || index($0, v " % 14")) { print; bad = 1 }
         /^ *}$/ { v = "" }
         END { exit bad }' "$TMP/lower" >"$TMP/div" &&
        tap_ok "$cpu: no vector loop divides its index by the tile row" ||
        tap_fail "$cpu: no vector loop divides its index by the tile row" "$(head -5 "$TMP/div")"
done
# resnet18 end to end
r18="$top_srcdir/benchmarks/models/resnet18.relay"
"$RELAY_TUNE" run "$r18" --random-params 0 --output "$TMP/r18.ref.npy" >/dev/null 2>"$TMP/err" ||
    tap_fail "resnet18: the interpreter runs" "$(cat "$TMP/err")"
if "$RELAY_TUNE" run "$r18" --target cpu --winograd --random-params 0 --output "$TMP/r18.npy" >/dev/null 2>"$TMP/err" &&
   "$NPYCMP" -v "$TMP/r18.npy" "$TMP/r18.ref.npy" 1e-4 >"$TMP/cmp" 2>&1; then
    tap_ok "resnet18 run --winograd matches the interpreter ($(cat "$TMP/cmp"))"
else
    tap_fail "resnet18 run --winograd matches the interpreter" "$(cat "$TMP/err" "$TMP/cmp" 2>/dev/null)"
fi
# the default (--winograd auto): direct and Winograd convs in one model, on
# the host's vectors, and on AVX2's where the host runs them
for tg in cpu "cpu -isa=avx2"; do
    if [ "$tg" != cpu ] && ! "$RELAY_TUNE" targets "$tg" 2>/dev/null | grep -q "runs here: yes"; then
        tap_ok "# SKIP resnet18 by default on $tg: this host cannot run it"
        continue
    fi
    if "$RELAY_TUNE" run "$r18" --target "$tg" --random-params 0 --output "$TMP/r18d.npy" >/dev/null 2>"$TMP/err" &&
       "$NPYCMP" -v "$TMP/r18d.npy" "$TMP/r18.ref.npy" 1e-4 >"$TMP/cmp" 2>&1; then
        tap_ok "resnet18 run on $tg by default (the automatic choice) matches the interpreter ($(cat "$TMP/cmp"))"
    else
        tap_fail "resnet18 run on $tg by default matches the interpreter" "$(cat "$TMP/err" "$TMP/cmp" 2>/dev/null)"
    fi
done
tap_done
