#!/bin/sh
# compile.sh — relay-tune compile, run (a .so, or a .relay with --target cpu)
# and bench; the object's dependencies and exported symbols; the compiled
# result against the interpreter's; input checks; parameter names that are
# C keywords or ABI names (only ever string data in the object); the example
# program of examples/ built against a compiled model and run.
. "$(dirname "$0")/../lib.sh"
RELAY_TUNE_CACHE="$TMP/cache"
export RELAY_TUNE_CACHE
M="$top_srcdir/benchmarks/models/mlp.relay"
NPYCMP="$top_builddir/tests/tools/npycmp"
check() { # check NAME EXPECTED_RC COMMAND...
    name=$1 want=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ $rc -eq "$want" ]; then tap_ok "$name"; else tap_fail "$name (rc $rc, want $want)" "$(cat "$TMP/err")"; fi
}
has() { # has NAME FILE TEXT
    if grep -qF -- "$3" "$2"; then tap_ok "$1"; else tap_fail "$1" "$(head -40 "$2")"; fi
}
check "compile --help" 0 "$RELAY_TUNE" compile --help
check "compile needs a model" 2 "$RELAY_TUNE" compile
check "compile: unknown option" 2 "$RELAY_TUNE" compile "$M" --frobnicate
check "compile: bad seed" 2 "$RELAY_TUNE" compile "$M" --random-params x
check "compile: unknown target" 1 "$RELAY_TUNE" compile "$M" --target gpu9 -o "$TMP/x.so"
check "compile the MLP" 0 "$RELAY_TUNE" compile "$M" --random-params 1 -o "$TMP/mlp.so"
has "reports the kernels" "$TMP/out" "4 kernel calls, 4 distinct kernels"
has "reports the packed weights" "$TMP/out" "6 weights (3 packed at compile time)"
has "reports the memory plan" "$TMP/out" "memory plan: 3 intermediates, peak"
[ -s "$TMP/mlp.so" ] && tap_ok "writes the object" || tap_fail "writes the object"
readelf -d "$TMP/mlp.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort >"$TMP/needed"
bad=$(grep -v -e '^libc\.so' -e '^libm\.so' -e '^libgomp\.so' "$TMP/needed")
[ -z "$bad" ] && tap_ok "depends on libc, libm and libgomp only ($(tr '\n' ' ' <"$TMP/needed"))" ||
    tap_fail "depends on libc, libm and libgomp only" "$bad"
nm -D --defined-only "$TMP/mlp.so" | awk '{print $3}' | grep -v '^rtm_' >"$TMP/syms"
[ ! -s "$TMP/syms" ] && tap_ok "exports only rtm_ symbols" || tap_fail "exports only rtm_ symbols" "$(cat "$TMP/syms")"
check "run the .so" 0 "$RELAY_TUNE" run "$TMP/mlp.so" --random-params 1 --output "$TMP/so.npy"
has "run says it ran compiled" "$TMP/out" "on cpu (compiled)"
check "run the interpreter" 0 "$RELAY_TUNE" run "$M" --random-params 1 --output "$TMP/interp.npy"
check "the .so matches the interpreter" 0 "$NPYCMP" "$TMP/so.npy" "$TMP/interp.npy" 1e-4
check "run .relay --target cpu" 0 "$RELAY_TUNE" run "$M" --target cpu --random-params 1 --output "$TMP/cpu.npy"
check "--target cpu matches the interpreter" 0 "$NPYCMP" "$TMP/cpu.npy" "$TMP/interp.npy" 1e-4
check "run .relay --target cpu again (cached)" 0 "$RELAY_TUNE" run "$M" --target cpu --random-params 1
has "summary of the result" "$TMP/out" "result: Tensor[(1, 10), float32]"
check "run: an input of the wrong shape" 1 "$RELAY_TUNE" run "$TMP/mlp.so" --input "data=$TMP/so.npy"
has "names the input and both types" "$TMP/err" "input 'data' is a Tensor[(1, 784), float32], but the value given is a Tensor[(1, 10), float32]"
check "run: an unknown input" 1 "$RELAY_TUNE" run "$TMP/mlp.so" --input "nope=$TMP/so.npy"
has "says which" "$TMP/err" "no input named 'nope'"
check "run: a missing input" 1 "$RELAY_TUNE" run "$TMP/mlp.so"
has "says which is missing" "$TMP/err" "input 'data' has no value"
check "run: no --params for a .so" 2 "$RELAY_TUNE" run "$TMP/mlp.so" --params "$TMP/x.npz"
printf 'not a model' >"$TMP/bad.so"
check "run: not a shared object" 1 "$RELAY_TUNE" run "$TMP/bad.so" --random-params 1
has "cannot load" "$TMP/err" "cannot load"
check "compile --db: a missing database" 1 "$RELAY_TUNE" compile "$M" --random-params 1 --db "$TMP/none.db" -o "$TMP/x.so"
has "says so" "$TMP/err" "no such database"
[ ! -e "$TMP/none.db" ] && tap_ok "--db does not create a database" || tap_fail "--db does not create a database"
"$RELAY_TUNE" db import --db "$TMP/t.db" "$top_srcdir/fuzz/log-seeds/three.jsonl" >/dev/null 2>&1
check "compile --db: a database without these workloads" 0 "$RELAY_TUNE" compile "$M" --random-params 1 --db "$TMP/t.db" -o "$TMP/x.so"
has "every kernel with its defaults" "$TMP/out" "4 distinct kernels (0 with a database config)"
check "bench the .so" 0 "$RELAY_TUNE" bench "$TMP/mlp.so" --repeat 5 --warmup 1
has "bench: median p10 p90" "$TMP/out" "ms, p10"
check "bench --json" 0 "$RELAY_TUNE" bench "$TMP/mlp.so" --repeat 5 --json
has "bench --json: median_ms" "$TMP/out" '"median_ms": '
check "bench a .relay (compiled into the cache)" 0 "$RELAY_TUNE" bench "$M" --target cpu --repeat 3
check "bench: bad --repeat" 2 "$RELAY_TUNE" bench "$TMP/mlp.so" --repeat 0
check "bench: interp is not a compiled target" 2 "$RELAY_TUNE" bench "$M" --target interp
# parameter names that are C keywords and ABI names: string data only
cat >"$TMP/names.relay" <<'R'
#[version = "0.0.5"]
def @main(%int: Tensor[(2, 3), float32], %rtm_run: Tensor[(3), float32], %return: Tensor[(2, 3), float32]) {
  add(multiply(%int, %rtm_run), %return)
}
R
check "compile a model with awkward parameter names" 0 "$RELAY_TUNE" compile "$TMP/names.relay" -o "$TMP/names.so"
check "run it" 0 "$RELAY_TUNE" run "$TMP/names.so" --random-params 3 --output "$TMP/n1.npy"
check "the interpreter" 0 "$RELAY_TUNE" run "$TMP/names.relay" --random-params 3 --output "$TMP/n2.npy"
check "awkward names: same result" 0 "$NPYCMP" "$TMP/n1.npy" "$TMP/n2.npy" 1e-6
# the example program
CC=${CC:-cc}
if $CC -std=c11 -Wall -Werror -I"$top_srcdir/include" "$top_srcdir/examples/run_model.c" "$TMP/mlp.so" \
    -Wl,-rpath,"$TMP" -o "$TMP/run_model" 2>"$TMP/cc"; then
    tap_ok "examples/run_model.c builds against mlp.so"
else
    tap_fail "examples/run_model.c builds against mlp.so" "$(cat "$TMP/cc")"
fi
check "the example runs" 0 "$TMP/run_model"
has "the example lists the input" "$TMP/out" "input 0: data float32 (1, 784)"
has "the example prints the output" "$TMP/out" "output 0: float32 (1, 10) ="
tap_done
