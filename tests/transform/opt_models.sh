#!/bin/sh
# opt_models.sh — every zoo model, optimized at -O3 with its weights bound to
# seeded random constants (so constant folding and fold-scale-axis run), gives
# the same output as before in the reference interpreter: check mode runs
# @main before and after every pass and fails at the first pass that changes
# the result (relative error above 1e-4). The small models are also checked
# with their weights left as parameters. (That the check can fail is tested
# in test_passes.c.)
#
# The convolutional models run at 64x64 instead of 224x224: their pooling
# before the classifier is adaptive, so the graph, its weights and every
# pass's work are the same, while each interpreter run (one per pass) costs
# 12 times fewer FLOPs. The passes never look at spatial sizes; the compiled
# models at full size are checked in tests/codegen/test_model.c.
. "$(dirname "$0")/../lib.sh"
# model NAME: the model file the checks use (the CNNs with the small input)
model() {
    f="$top_srcdir/benchmarks/models/$1.relay"
    case $1 in
    resnet*|mobilenet*|squeezenet*)
        sed '2s/^def @main(%data: Tensor\[(1, 3, 224, 224), float32\]/def @main(%data: Tensor[(1, 3, 64, 64), float32]/' \
            "$f" >"$TMP/$1.relay"
        f="$TMP/$1.relay" ;;
    esac
    echo "$f"
}
for f in "$top_srcdir"/benchmarks/models/*.relay; do
    name=$(basename "$f" .relay)
    m=$(model "$name")
    if [ "$m" != "$f" ] && ! sed -n 2p "$m" | grep -q "Tensor\[(1, 3, 64, 64), float32\]"; then
        tap_fail "opt $name: the input shrinks to 64x64" "$(sed -n 2p "$m" | cut -c1-200)"
    elif "$RELAY_TUNE" opt --check 3 --random-params 7 --stats "$m" >"$TMP/out" 2>"$TMP/err"; then
        tap_ok "opt $name (weights bound): every pass keeps the interpreter's result ($(tail -n 1 "$TMP/err" | sed 's/.*: //'))"
    else
        tap_fail "opt $name (weights bound): every pass keeps the interpreter's result" "$(tail -n 3 "$TMP/err")"
    fi
done
for name in mlp squeezenet1_0 bert_layer; do
    if "$RELAY_TUNE" opt --check 5 "$(model "$name")" >"$TMP/out" 2>"$TMP/err"; then
        tap_ok "opt $name (weights as parameters): every pass keeps the interpreter's result"
    else
        tap_fail "opt $name (weights as parameters): every pass keeps the interpreter's result" "$(tail -n 3 "$TMP/err")"
    fi
done
tap_done
