#!/bin/sh
# golden.sh — each tests/ir/golden/NAME.relay is parsed and printed by
# `relay-tune parse`; the output must equal NAME.expected byte for byte, and
# printing that output again must give the same text (a fixed point).
. "$(dirname "$0")/../lib.sh"
for f in "$top_srcdir"/tests/ir/golden/*.relay; do
    name=$(basename "$f" .relay)
    exp="${f%.relay}.expected"
    if ! "$RELAY_TUNE" parse "$f" >"$TMP/out" 2>"$TMP/err"; then
        tap_fail "golden $name parses" "$(cat "$TMP/err")"
        continue
    fi
    if [ -n "$UPDATE_GOLDEN" ]; then cp "$TMP/out" "$exp"; fi
    if diff -u "$exp" "$TMP/out" >"$TMP/diff"; then
        tap_ok "golden $name matches"
    else
        tap_fail "golden $name matches" "$(cat "$TMP/diff")"
    fi
    if "$RELAY_TUNE" parse "$TMP/out" >"$TMP/out2" 2>"$TMP/err" && cmp -s "$TMP/out" "$TMP/out2"; then
        tap_ok "golden $name is a fixed point"
    else
        tap_fail "golden $name is a fixed point" "$(cat "$TMP/err")" "$(diff -u "$TMP/out" "$TMP/out2")"
    fi
done
tap_done
