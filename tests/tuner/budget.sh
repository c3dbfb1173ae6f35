#!/bin/sh
# budget.sh — what a task's confirmation costs: it loads the objects its
# batches built (the compiler cache gains no unit), and a --time-budget run
# reserves for the confirmations what they cost, so that it ends near its
# budget (not at half of it, not past it) and says the confirmations' share.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tiny.sh"

units() { find "$1" -name '*.so' 2>/dev/null | wc -l; }

# ---- confirming compiles nothing the batches built -------------------------
# the same seed proposes the same configs, so the two runs build the same units
for k in 0 3; do
    RELAY_TUNE_CACHE="$TMP/cache$k" "$RELAY_TUNE" tune "$M" --trials 8 --tasks 0 --db "$TMP/c$k.db" --tuner random \
        --seed 5 --repeat 1 --min-repeat-ms 1 --progress none --confirm $k >"$TMP/out$k" 2>"$TMP/err$k"
    eval "rc$k=\$?"
done
u0=$(units "$TMP/cache0")
u3=$(units "$TMP/cache3")
if [ "$rc0" = 0 ] && [ "$rc3" = 0 ] && grep -q "^task 0: [34] configs (its best and the default) re-measured" "$TMP/out3" &&
    [ "$u0" -gt 0 ] && [ "$u0" = "$u3" ]; then
    tap_ok "a confirmation loads the objects its task's batches built ($u3 units with it, $u0 without)"
else
    tap_fail "a confirmation loads the objects its task's batches built" "rc $rc0 $rc3, units $u0 without, $u3 with" \
        "$(cat "$TMP/out3" "$TMP/err3")"
fi

# ---- a time budget holds its confirmations ----------------------------------
# the confirmations (3 best and the default, 3 rounds each, every task) run
# after the last batch, inside the budget; the run's own clock is the one the
# budget spends (model loading comes before it)
"$RELAY_TUNE" tune "$M" --time-budget 40s --db "$TMP/budget.db" --tuner random --progress none >"$TMP/out" 2>"$TMP/err"
rc=$?
line=$(grep "^done: " "$TMP/out")
secs=$(echo "$line" | sed -n 's/^done: [0-9]* measurements in \([0-9.]*\) s (confirmations \([0-9.]*\) s, \([0-9]*\)%).*/\1/p')
share=$(echo "$line" | sed -n 's/.*(confirmations [0-9.]* s, \([0-9]*\)%).*/\1/p')
if [ $rc = 0 ] && [ -n "$secs" ] && [ -n "$share" ] && [ "$share" -gt 0 ] &&
    awk -v s="$secs" 'BEGIN { exit !(s >= 34 && s <= 46) }'; then
    tap_ok "tune --time-budget 40s ends after $secs s (within 15%), confirmations $share% of it"
else
    tap_fail "tune --time-budget 40s ends within 15% of 40 s and says the confirmations' share" "rc $rc: $line" \
        "$(cat "$TMP/out" "$TMP/err")"
fi
tap_done
