#!/bin/sh
# cli.sh — the relay-tune command line: exit codes, help, stdin, -o, and the
# error format for unreadable files.
. "$(dirname "$0")/../lib.sh"
check() { # check NAME EXPECTED_RC COMMAND...
    name=$1 want=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ $rc -eq "$want" ]; then tap_ok "$name"; else tap_fail "$name (rc $rc, want $want)" "$(cat "$TMP/err")"; fi
}
check "no arguments prints usage, exit 2" 2 "$RELAY_TUNE"
check "--help exits 0" 0 "$RELAY_TUNE" --help
grep -q "parse" "$TMP/out" && tap_ok "--help lists parse" || tap_fail "--help lists parse"
check "--version exits 0" 0 "$RELAY_TUNE" --version
check "unknown command exits 2" 2 "$RELAY_TUNE" frobnicate
check "parse --help exits 0" 0 "$RELAY_TUNE" parse --help
check "parse of a missing file exits 1" 1 "$RELAY_TUNE" parse "$TMP/nope.relay"
grep -q "nope.relay: error: cannot read" "$TMP/err" && tap_ok "missing file is named" || tap_fail "missing file is named" "$(cat "$TMP/err")"
printf 'def @main(%%x: Tensor[(2), float32]) { nn.relu(%%x) }\n' >"$TMP/m.relay"
check "parse from stdin" 0 sh -c "'$RELAY_TUNE' parse - < '$TMP/m.relay'"
grep -q -- '-> Tensor\[(2), float32\] {' "$TMP/out" && tap_ok "stdin: inferred return type printed" || tap_fail "stdin: inferred return type printed" "$(cat "$TMP/out")"
check "parse -o writes a file" 0 "$RELAY_TUNE" parse "$TMP/m.relay" -o "$TMP/o.relay"
cmp -s "$TMP/o.relay" "$(cd "$TMP" && "$RELAY_TUNE" parse m.relay > p.relay && echo p.relay)" 2>/dev/null
[ -s "$TMP/o.relay" ] && tap_ok "-o output is not empty" || tap_fail "-o output is not empty"
check "parse --no-types" 0 "$RELAY_TUNE" parse --no-types "$TMP/m.relay"
grep -q 'ty=' "$TMP/out" && tap_fail "--no-types drops ty comments" "$(cat "$TMP/out")" || tap_ok "--no-types drops ty comments"
check "unknown option exits 2" 2 "$RELAY_TUNE" parse --bogus "$TMP/m.relay"
printf '\001\002garbage' >"$TMP/bin.relay"
check "binary garbage is an error, not a crash" 1 "$RELAY_TUNE" parse "$TMP/bin.relay"
tap_done
