#!/bin/sh
# opt_models.sh — every zoo model, optimized at -O3 with its weights bound to
# seeded random constants (so constant folding and fold-scale-axis run), gives
# the same output as before in the reference interpreter: check mode runs
# @main before and after every pass and fails at the first pass that changes
# the result (relative error above 1e-4). The small models are also checked
# with their weights left as parameters. (That the check can fail is tested
# in test_passes.c.)
. "$(dirname "$0")/../lib.sh"
for f in "$top_srcdir"/benchmarks/models/*.relay; do
    name=$(basename "$f" .relay)
    if "$RELAY_TUNE" opt --check 3 --random-params 7 --stats "$f" >"$TMP/out" 2>"$TMP/err"; then
        tap_ok "opt $name (weights bound): every pass keeps the interpreter's result ($(tail -n 1 "$TMP/err" | sed 's/.*: //'))"
    else
        tap_fail "opt $name (weights bound): every pass keeps the interpreter's result" "$(tail -n 3 "$TMP/err")"
    fi
done
for name in mlp squeezenet1_0 bert_layer; do
    if "$RELAY_TUNE" opt --check 5 "$top_srcdir/benchmarks/models/$name.relay" >"$TMP/out" 2>"$TMP/err"; then
        tap_ok "opt $name (weights as parameters): every pass keeps the interpreter's result"
    else
        tap_fail "opt $name (weights as parameters): every pass keeps the interpreter's result" "$(tail -n 3 "$TMP/err")"
    fi
done
tap_done
