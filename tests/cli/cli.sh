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
# opt: levels, passes, printing after a pass
printf 'def @main(%%x: Tensor[(2), float32], %%b: Tensor[(2), float32]) { %%0 = nn.bias_add(%%x, %%b, axis=0); nn.relu(%%0) }\n' >"$TMP/o.relay"
check "opt --list-passes" 0 "$RELAY_TUNE" opt --list-passes
grep -q "fuse-ops" "$TMP/out" && grep -q "fold-constant" "$TMP/out" && tap_ok "--list-passes names the passes" || tap_fail "--list-passes names the passes" "$(cat "$TMP/out")"
check "opt -O0" 0 "$RELAY_TUNE" opt -O0 --no-types "$TMP/o.relay"
grep -q "Primitive" "$TMP/out" && tap_fail "-O0 fuses nothing" "$(cat "$TMP/out")" || tap_ok "-O0 fuses nothing"
check "opt --print-after canonicalize" 0 "$RELAY_TUNE" opt --print-after canonicalize "$TMP/o.relay"
grep -q "after canonicalize" "$TMP/err" && ! grep -q "bias_add" "$TMP/err" && tap_ok "--print-after prints the module after that pass" || tap_fail "--print-after prints the module after that pass" "$(cat "$TMP/err")"
check "opt --print-after-all" 0 "$RELAY_TUNE" opt --print-after-all "$TMP/o.relay"
[ "$(grep -c '// ---- after' "$TMP/err")" -ge 5 ] && tap_ok "--print-after-all prints after every pass" || tap_fail "--print-after-all prints after every pass" "$(grep '// ----' "$TMP/err")"
check "opt --params with a missing file" 1 "$RELAY_TUNE" opt --params "$TMP/none.npz" "$TMP/o.relay"
grep -q "none.npz" "$TMP/err" && tap_ok "a missing --params file is named" || tap_fail "a missing --params file is named" "$(cat "$TMP/err")"
check "tasks --json" 0 "$RELAY_TUNE" tasks --json "$top_srcdir/benchmarks/models/mlp.relay"
grep -q '"total_gflop"' "$TMP/out" && grep -q '"template": "dense"' "$TMP/out" && tap_ok "tasks --json lists templates and the total" || tap_fail "tasks --json lists templates and the total" "$(cat "$TMP/out")"
check "tasks with an unknown target" 2 "$RELAY_TUNE" tasks --target tpu "$TMP/o.relay"
tap_done
