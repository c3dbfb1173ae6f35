#!/bin/sh
# opt_models.sh — every zoo model, optimized at -O3 with its weights bound to
# seeded random constants (so constant folding and fold-scale-axis run), gives
# the same output as before in the reference interpreter: check mode runs
# @main before and after every pass and fails at the first pass that changes
# the result (relative error above 1e-4). The small models are also checked
# with their weights left as parameters. (That the check can fail is tested
# in test_passes.c.)
#
# The models run at a smaller input than the zoo's: the CNNs at 64x64
# instead of 224x224 (their pooling before the classifier is adaptive), the
# BERT layer with 32 tokens instead of 128 (every 128 in it is the sequence
# length). The graph, its weights and what every pass does are the same (the
# passes never look at spatial sizes or sequence lengths; the operator and
# fused-function counts printed are those of the full models), while each
# interpreter run, one per pass, costs 4 to 12 times fewer FLOPs. The full
# models, optimized and compiled, are checked against the interpreter in
# tests/codegen/test_model.c.
. "$(dirname "$0")/../lib.sh"
# model NAME: the file the checks use; small NAME: the input it is given
model() {
    f="$top_srcdir/benchmarks/models/$1.relay"
    case $1 in
    resnet*|mobilenet*|squeezenet*)
        sed '2s/^def @main(%data: Tensor\[(1, 3, 224, 224), float32\]/def @main(%data: Tensor[(1, 3, 64, 64), float32]/' \
            "$f" >"$TMP/$1.relay" ;;
    bert_layer) sed 's/\([^0-9.]\)128\([^0-9.]\)/\132\2/g' "$f" >"$TMP/$1.relay" ;;
    *) echo "$f"; return ;;
    esac
    echo "$TMP/$1.relay"
}
small() {
    case $1 in
    resnet*|mobilenet*|squeezenet*) echo "Tensor[(1, 3, 64, 64), float32]" ;;
    bert_layer) echo "Tensor[(1, 32, 768), float32]" ;;
    esac
}
# check NAME SEED WHAT [OPTION...]: opt --check SEED on the smaller model; with
# --stats the check's name ends with the operator and fused-function counts
check() {
    name=$1 seed=$2 what=$3
    shift 3
    m=$(model "$name")
    want=$(small "$name")
    if [ -n "$want" ] && ! sed -n 2p "$m" | grep -qF "def @main(%data: $want"; then
        tap_fail "opt $name: the input shrinks to $want" "$(sed -n 2p "$m" | cut -c1-200)"
    elif "$RELAY_TUNE" opt --check "$seed" "$@" "$m" >"$TMP/out" 2>"$TMP/err"; then
        stats=
        case " $* " in *" --stats "*) stats=" ($(tail -n 1 "$TMP/err" | sed 's/.*: //'))" ;; esac
        tap_ok "opt $name ($what): every pass keeps the interpreter's result$stats"
    else
        tap_fail "opt $name ($what): every pass keeps the interpreter's result" "$(tail -n 3 "$TMP/err")"
    fi
}
for f in "$top_srcdir"/benchmarks/models/*.relay; do
    check "$(basename "$f" .relay)" 3 "weights bound" --random-params 7 --stats
done
for name in mlp squeezenet1_0 bert_layer; do
    check "$name" 5 "weights as parameters"
done
tap_done
