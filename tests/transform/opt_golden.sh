#!/bin/sh
# opt_golden.sh — `relay-tune opt --no-types` on each tests/transform/golden/
# NAME.relay (with --params NAME.npz where that file exists) must print
# NAME.expected, and that printout must parse back to itself (fused modules,
# and their tensor constants in the #[metadata] section, are Relay text).
. "$(dirname "$0")/../lib.sh"
for f in "$top_srcdir"/tests/transform/golden/*.relay; do
    name=$(basename "$f" .relay)
    exp="${f%.relay}.expected"
    params=
    [ -f "${f%.relay}.npz" ] && params="--params ${f%.relay}.npz"
    if ! "$RELAY_TUNE" opt --no-types $params "$f" >"$TMP/out" 2>"$TMP/err"; then
        tap_fail "opt $name runs" "$(cat "$TMP/err")"
        continue
    fi
    [ -n "$UPDATE_GOLDEN" ] && cp "$TMP/out" "$exp"
    if diff -u "$exp" "$TMP/out" >"$TMP/diff"; then tap_ok "opt $name matches"
    else tap_fail "opt $name matches" "$(cat "$TMP/diff")"; fi
    if "$RELAY_TUNE" parse --no-types "$TMP/out" >"$TMP/out2" 2>"$TMP/err" && cmp -s "$TMP/out" "$TMP/out2"; then
        tap_ok "opt $name output parses back to itself"
    else
        tap_fail "opt $name output parses back to itself" "$(cat "$TMP/err")"
    fi
done
for f in "$top_srcdir"/benchmarks/models/*.relay; do
    name=$(basename "$f" .relay)
    if "$RELAY_TUNE" opt "$f" >"$TMP/o" 2>"$TMP/err" && "$RELAY_TUNE" parse "$TMP/o" >"$TMP/p" 2>>"$TMP/err" &&
       cmp -s "$TMP/o" "$TMP/p"; then
        tap_ok "opt zoo $name: optimized module is a print/parse fixed point"
    else
        tap_fail "opt zoo $name: optimized module is a print/parse fixed point" "$(head -n 5 "$TMP/err")"
    fi
done
tap_done
