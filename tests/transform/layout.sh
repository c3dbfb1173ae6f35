#!/bin/sh
# layout.sh — the alter-layout pass (docs/layouts.md), turned on by
# `opt --layout-block N`:
# - golden: tests/transform/layout/convnet.relay printed after the pass
#   (weights as parameters, so the weight transforms show) is convnet.expected;
# - with weights bound, no layout_transform reads a constant (weights are
#   packed at compile time) and the transforms left in a ResNet are only
#   those at the graph's edges and before the ops that need NCHW;
# - check mode: every zoo model, weights bound, keeps the interpreter's
#   result through every pass with the pass on (at the small inputs of
#   opt_models.sh); and the pass is off by default.
. "$(dirname "$0")/../lib.sh"
L=$top_srcdir/tests/transform/layout
# golden printout after the pass
if "$RELAY_TUNE" opt -O3 --layout-block 8 --no-types --print-after alter-layout -o "$TMP/o" "$L/convnet.relay" \
    2>"$TMP/out"; then
    [ -n "$UPDATE_GOLDEN" ] && cp "$TMP/out" "$L/convnet.expected"
    if diff -u "$L/convnet.expected" "$TMP/out" >"$TMP/diff"; then tap_ok "layout: convnet after alter-layout matches"
    else tap_fail "layout: convnet after alter-layout matches" "$(head -n 40 "$TMP/diff")"; fi
else
    tap_fail "layout: opt --layout-block 8 runs on convnet" "$(tail -n 5 "$TMP/out")"
fi
# the pass is off unless asked for
"$RELAY_TUNE" opt -O3 --print-after alter-layout -o "$TMP/o" "$L/convnet.relay" 2>"$TMP/out"
if grep -q "nn.conv2d(" "$TMP/out" && ! grep -q "contrib_conv2d_NCHWc\|layout_transform" "$TMP/out"; then
    tap_ok "layout: without --layout-block the convs stay NCHW"
else
    tap_fail "layout: without --layout-block the convs stay NCHW" "$(head -n 20 "$TMP/out")"
fi
# small: the zoo model NAME at a small input (as opt_models.sh shrinks it)
small() {
    sed '2s/^def @main(%data: Tensor\[(1, 3, 224, 224), float32\]/def @main(%data: Tensor[(1, 3, 64, 64), float32]/' \
        "$top_srcdir/benchmarks/models/$1.relay" >"$TMP/$1.relay"
    echo "$TMP/$1.relay"
}
# transforms left in resnet18, weights bound: the input's and the one after the
# global pool (batch_flatten needs NCHW); none of a constant
m=$(small resnet18)
if "$RELAY_TUNE" opt -O3 --layout-block 16 --random-params 7 --no-types --print-after alter-layout -o "$TMP/o" "$m" \
    2>"$TMP/out"; then
    sed '/^#\[metadata\]/,$d' "$TMP/out" >"$TMP/graph"
    n=$(grep -o 'layout_transform(' "$TMP/graph" | wc -l)
    k=$(grep -o 'contrib_conv2d_NCHWc(' "$TMP/graph" | wc -l)
    if [ "$k" -eq 20 ]; then tap_ok "layout: every conv of resnet18 is blocked"
    else tap_fail "layout: every conv of resnet18 is blocked" "$k contrib_conv2d_NCHWc, 20 expected"; fi
    if [ "$n" -eq 2 ]; then tap_ok "layout: resnet18 keeps 2 layout_transforms (the input's, after the global pool)"
    else tap_fail "layout: resnet18 keeps 2 layout_transforms" "$n left: $(grep 'layout_transform(' "$TMP/graph" | head -n 8)"; fi
    if grep -q 'nn.max_pool2d(.*layout="NCHW16c"' "$TMP/graph"; then tap_ok "layout: resnet18's max-pool runs blocked"
    else tap_fail "layout: resnet18's max-pool runs blocked" "$(grep max_pool2d "$TMP/graph")"; fi
    if grep 'layout_transform(' "$TMP/graph" | grep -q 'layout_transform(meta'; then
        tap_fail "layout: no layout_transform of a weight is left" "$(grep 'layout_transform(meta' "$TMP/graph" | head -n 3)"
    else
        tap_ok "layout: no layout_transform of a weight is left (packed at compile time)"
    fi
else
    tap_fail "layout: opt --layout-block 16 runs on resnet18" "$(tail -n 5 "$TMP/out")"
fi
# check mode on the zoo
for f in "$top_srcdir"/benchmarks/models/*.relay; do
    name=$(basename "$f" .relay)
    case $name in resnet*|mobilenet*|squeezenet*) m=$(small "$name") ;; *) m=$f ;; esac
    [ "$name" = bert_layer ] && continue   # no conv: the pass leaves it as it is (tested below)
    if "$RELAY_TUNE" opt --check 3 -O3 --layout-block 8 --random-params 7 -o "$TMP/o" "$m" 2>"$TMP/err"; then
        tap_ok "layout: opt --check with --layout-block 8 keeps $name's result"
    else
        tap_fail "layout: opt --check with --layout-block 8 keeps $name's result" "$(tail -n 3 "$TMP/err")"
    fi
done
# the graph-level choice of blocks (layout_dp.c) keeps the result too
if "$RELAY_TUNE" opt --check 3 -O3 --layout-block 8 --layout-auto --random-params 7 -o "$TMP/o" "$(small resnet18)" 2>"$TMP/err" &&
    grep -q 'nn.contrib_conv2d_NCHWc' "$TMP/o"; then
    tap_ok "layout: opt --check with --layout-block 8 --layout-auto keeps resnet18's result"
else
    tap_fail "layout: opt --check with --layout-block 8 --layout-auto keeps resnet18's result" "$(tail -n 3 "$TMP/err")"
fi
if ! "$RELAY_TUNE" opt -O3 --layout-auto -o "$TMP/o" "$L/convnet.relay" 2>"$TMP/err" &&
    grep -q 'layout-auto needs --layout-block' "$TMP/err"; then
    tap_ok "layout: --layout-auto without --layout-block is refused with a message"
else
    tap_fail "layout: --layout-auto without --layout-block is refused with a message" "$(cat "$TMP/err")"
fi
"$RELAY_TUNE" opt -O3 -o "$TMP/plain" "$top_srcdir/benchmarks/models/bert_layer.relay" 2>/dev/null
"$RELAY_TUNE" opt -O3 --layout-block 8 -o "$TMP/blocked" "$top_srcdir/benchmarks/models/bert_layer.relay" 2>/dev/null
if cmp -s "$TMP/plain" "$TMP/blocked"; then tap_ok "layout: a model without convs is left as it is"
else tap_fail "layout: a model without convs is left as it is" "the printouts differ"; fi
# compiled (the conv2d_nchwc template) against the interpreter: convnet and the zoo's CNNs
RELAY_TUNE_CACHE="$TMP/cache"
mkdir -p "$RELAY_TUNE_CACHE"
export RELAY_TUNE_CACHE
NPYCMP="$top_builddir/tests/tools/npycmp"
compiled_same() { # compiled_same NAME MODEL BLOCK [--layout-auto]
    if "$RELAY_TUNE" run "$2" --random-params 3 --output "$TMP/i.npy" >/dev/null 2>"$TMP/err" &&
        "$RELAY_TUNE" run "$2" --random-params 3 --target cpu --layout-block "$3" ${4:+"$4"} --output "$TMP/c.npy" \
            >/dev/null 2>>"$TMP/err" && "$NPYCMP" "$TMP/c.npy" "$TMP/i.npy" 1e-4 >>"$TMP/err" 2>&1; then
        tap_ok "layout: $1 compiled with --layout-block $3 $4 matches the interpreter"
    else
        tap_fail "layout: $1 compiled with --layout-block $3 $4 matches the interpreter" "$(tail -n 5 "$TMP/err")"
    fi
}
compiled_same convnet "$L/convnet.relay" 8
for name in resnet18 resnet50 mobilenet_v2 squeezenet1_0; do
    compiled_same "$name" "$(small "$name")" 16
done
compiled_same "resnet18 (blocks of 8)" "$(small resnet18)" 8
compiled_same "resnet18 (blocks chosen by the DP, lanes 8)" "$(small resnet18)" 8 --layout-auto
# the template's kernel, for a named target: the block is the vector loop of the register tile
T="cpu -mcpu=skylake-avx512 -cores=2"
if "$RELAY_TUNE" lower -O3 --layout-block 16 --random-params 7 --target "$T" --task 1 "$(small resnet18)" \
    >"$TMP/k" 2>"$TMP/err" && grep -q "unrolled for ow.i in 0..16" "$TMP/k" &&
    grep -A1 "unrolled for ow.i in 0..16" "$TMP/k" | grep -q "vectorized for oc in 0..16"; then
    tap_ok "layout: the blocked conv's register tile is 16 columns x one 16-lane block (AVX-512)"
else
    tap_fail "layout: the blocked conv's register tile is 16 columns x one 16-lane block (AVX-512)" \
        "$(cat "$TMP/err")" "$(head -n 20 "$TMP/k")"
fi
T="cpu -mcpu=haswell -cores=2"
if "$RELAY_TUNE" lower -O3 --layout-block 8 --random-params 7 --target "$T" --task 1 "$(small resnet18)" \
    >"$TMP/k" 2>"$TMP/err" && grep -A1 "unrolled for ow.i in 0..8" "$TMP/k" | grep -q "vectorized for oc in 0..8"; then
    tap_ok "layout: on AVX2 with blocks of 8 the tile is 8 columns x one 8-lane block (12 accumulators at most)"
else
    tap_fail "layout: on AVX2 with blocks of 8 the tile is 8 columns x one 8-lane block" "$(cat "$TMP/err")" \
        "$(head -n 20 "$TMP/k")"
fi
# a full-size model: resnet18's stem writes rows of 112 columns, more than a
# loop may unroll; the unrolled loop is the column tile's, so it lowers
T="cpu -mcpu=skylake-avx512 -cores=2"
if "$RELAY_TUNE" lower -O3 --layout-block 16 --random-params 7 --target "$T" --task 0 \
    "$top_srcdir/benchmarks/models/resnet18.relay" >"$TMP/k" 2>"$TMP/err" && grep -q "unrolled for ow.i in 0..16" "$TMP/k"; then
    tap_ok "layout: resnet18's stem at 224x224 (112 columns a row) lowers blocked, its tile unrolled"
else
    tap_fail "layout: resnet18's stem at 224x224 (112 columns a row) lowers blocked" "$(tail -n 3 "$TMP/err")"
fi
# tuning sees the blocked convs: their tasks use the conv2d_nchwc template
if "$RELAY_TUNE" tasks -O3 --layout-block 8 --random-params 7 "$L/convnet.relay" >"$TMP/t" 2>"$TMP/err" &&
    [ "$(grep -c ' conv2d_nchwc ' "$TMP/t")" -eq 2 ] && ! grep -q ' conv2d_nchw ' "$TMP/t"; then
    tap_ok "layout: tasks --layout-block 8 gives convnet's two convs as conv2d_nchwc tasks"
else
    tap_fail "layout: tasks --layout-block 8 gives convnet's two convs as conv2d_nchwc tasks" "$(cat "$TMP/err" "$TMP/t")"
fi
tap_done
