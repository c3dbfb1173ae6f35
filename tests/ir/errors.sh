#!/bin/sh
# errors.sh — each tests/ir/errors/NAME.relay is malformed or ill-typed. Its
# first line says what must be reported:
#   // expect: LINE: GIST
# `relay-tune parse` must exit 1 and print "FILE:LINE:COL: error: ..." whose
# message contains GIST, followed by the source line and a caret.
. "$(dirname "$0")/../lib.sh"
for f in "$top_srcdir"/tests/ir/errors/*.relay; do
    name=$(basename "$f" .relay)
    spec=$(sed -n '1s|^// expect: ||p' "$f")
    line=${spec%%:*}
    gist=${spec#*: }
    "$RELAY_TUNE" parse "$f" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    first=$(head -n 1 "$TMP/err")
    case "$first" in
    "$f:$line:"*": error: "*"$gist"*)
        if [ $rc -eq 1 ] && [ "$(sed -n '3p' "$TMP/err" | tr -d ' ~')" = "^" ]; then
            tap_ok "error $name: line $line, '$gist'"
        else
            tap_fail "error $name: exit 1 with source line and caret" "rc=$rc" "$(cat "$TMP/err")"
        fi ;;
    *)
        tap_fail "error $name: line $line, '$gist'" "rc=$rc" "$(cat "$TMP/err")" ;;
    esac
done
tap_done
