#!/bin/sh
# run.sh — `relay-tune run`: the acceptance command on resnet18 (compared with
# PyTorch's output on the same seeded weights), inputs from --params and
# --input, outputs to --output and --output-dir, the summary and timing line,
# and every user error it must explain: missing parameters, wrong shapes and
# dtypes, unknown input names, corrupt files, tuple results, unknown targets,
# bad options, run-time errors with their source location.
. "$(dirname "$0")/../lib.sh"
NPYCMP="$top_builddir/tests/tools/npycmp"
IO="$top_srcdir/tests/ref/io"
MODELS="$top_srcdir/benchmarks/models"
REFS="$top_srcdir/tests/ref/models"
check() { # check NAME EXPECTED_RC COMMAND...
    name=$1 want=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ $rc -eq "$want" ]; then tap_ok "$name"; else tap_fail "$name (rc $rc, want $want)" "$(cat "$TMP/err")"; fi
}
has() { # has NAME FILE TEXT: FILE contains TEXT (fixed string)
    if grep -qF -- "$3" "$2"; then tap_ok "$1"; else tap_fail "$1" "want: $3" "got: $(cat "$2")"; fi
}

check "run --help exits 0" 0 "$RELAY_TUNE" run --help
has "run --help documents --random-params" "$TMP/out" "--random-params SEED"
check "relay-tune --help lists run" 0 "$RELAY_TUNE" --help
has "relay-tune --help lists run" "$TMP/out" "run "

# the acceptance command, checked against PyTorch
check "resnet18 --random-params 0 --output out.npy" 0 \
    "$RELAY_TUNE" run "$MODELS/resnet18.relay" --random-params 0 --output "$TMP/r18.npy"
has "run prints how long it took" "$TMP/out" "ran @main of $MODELS/resnet18.relay on interp in "
check "resnet18 output matches PyTorch (rel. error < 1e-4)" 0 "$NPYCMP" "$TMP/r18.npy" "$REFS/resnet18.npz:output" 1e-4

# summaries, determinism
check "mlp runs and summarizes its result" 0 "$RELAY_TUNE" run "$MODELS/mlp.relay" --random-params 0
has "summary names the type and range" "$TMP/out" "result: Tensor[(1, 10), float32]  min "
"$RELAY_TUNE" run "$MODELS/mlp.relay" --random-params 3 --output "$TMP/a.npy" >/dev/null 2>&1
"$RELAY_TUNE" run "$MODELS/mlp.relay" --random-params 3 --output "$TMP/b.npy" >/dev/null 2>&1
check "the same seed gives the same bits" 0 "$NPYCMP" "$TMP/a.npy" "$TMP/b.npy"
"$RELAY_TUNE" run "$MODELS/mlp.relay" --random-params 4 --output "$TMP/c.npy" >/dev/null 2>&1
check "another seed gives other values" 1 "$NPYCMP" "$TMP/a.npy" "$TMP/c.npy"

# missing parameters
check "no parameters: exit 1" 1 "$RELAY_TUNE" run "$MODELS/resnet18.relay"
has "missing parameters are counted and named" "$TMP/err" "error: no value for 103 parameters of @main: %data, %conv1_weight"
has "missing parameters: the hint names the options" "$TMP/err" "--random-params SEED"
cat >"$TMP/m.relay" <<'R'
#[version = "0.0.5"]
def @main(%a: Tensor[(2, 3, 4), float32], %s: int32) {
  %0 = multiply(%a, 2f);
  %1 = cast(%s, dtype="float32");
  add(%0, %1)
}
R
check "one missing parameter: exit 1" 1 "$RELAY_TUNE" run "$TMP/m.relay" --input a="$IO/float32.npy"
has "one missing parameter is named with its type" "$TMP/err" "error: no value for parameter %s of @main: int32"

# inputs from --params and --input
check "--params gives %a and %s (other arrays ignored)" 0 "$RELAY_TUNE" run "$TMP/m.relay" --params "$IO/savez.npz" --output "$TMP/m.npy"
has "unused arrays of an .npz are a warning" "$TMP/err" "warning: $IO/savez.npz: 2 arrays name no parameter of @main (ignored): b.weight, flags"
check "--params from savez_compressed" 0 "$RELAY_TUNE" run "$TMP/m.relay" --params "$IO/savez_compressed.npz" --output "$TMP/m2.npy"
check "stored and compressed archives give the same result" 0 "$NPYCMP" "$TMP/m.npy" "$TMP/m2.npy"
check "--input overrides --params" 0 "$RELAY_TUNE" run "$TMP/m.relay" --params "$IO/savez.npz" --input a="$IO/fortran.npy" --output "$TMP/m3.npy"
check "... a Fortran-order input reads as the C-order one" 0 "$NPYCMP" "$TMP/m.npy" "$TMP/m3.npy"
check "--input %NAME=FILE also works" 0 "$RELAY_TUNE" run "$TMP/m.relay" --params "$IO/savez.npz" --input %a="$IO/bigendian.npy" --output "$TMP/m4.npy"
check "... a big-endian input reads as the native one" 0 "$NPYCMP" "$TMP/m.npy" "$TMP/m4.npy"

# mismatches
check "shape mismatch: exit 1" 1 "$RELAY_TUNE" run "$TMP/m.relay" --params "$IO/savez.npz" --input a="$IO/vector.npy"
has "shape mismatch names the parameter, both types and the file" "$TMP/err" \
    "error: parameter %a of @main has type Tensor[(2, 3, 4), float32], but $IO/vector.npy gives Tensor[(5), int64]"
check "dtype mismatch: exit 1" 1 "$RELAY_TUNE" run "$TMP/m.relay" --params "$IO/savez.npz" --input a="$IO/float64.npy"
has "dtype mismatch names both types" "$TMP/err" "has type Tensor[(2, 3, 4), float32], but $IO/float64.npy gives Tensor[(2, 3, 4), float64]"
check "unknown --input name: exit 1" 1 "$RELAY_TUNE" run "$TMP/m.relay" --params "$IO/savez.npz" --input nope="$IO/float32.npy"
has "unknown --input name is named" "$TMP/err" "error: input 'nope' ($IO/float32.npy) names no parameter of @main"
check "--input without =: exit 2" 2 "$RELAY_TUNE" run "$TMP/m.relay" --input "$IO/float32.npy"

# broken files
head -c 300 "$IO/savez.npz" >"$TMP/cut.npz"
check "truncated .npz: exit 1" 1 "$RELAY_TUNE" run "$TMP/m.relay" --params "$TMP/cut.npz"
has "truncated .npz: the message names the file" "$TMP/err" "error: $TMP/cut.npz: "
head -c 200 "$IO/float32.npy" >"$TMP/cut.npy"
check "truncated .npy: exit 1" 1 "$RELAY_TUNE" run "$TMP/m.relay" --params "$IO/savez.npz" --input a="$TMP/cut.npy"
has "truncated .npy: the message says what is short" "$TMP/err" "error: $TMP/cut.npy: truncated data: the header's shape needs 96 bytes, the file has 72"
check "missing .npz: exit 1" 1 "$RELAY_TUNE" run "$TMP/m.relay" --params "$TMP/none.npz"
has "missing .npz: cannot read" "$TMP/err" "error: $TMP/none.npz: cannot read: No such file or directory"
check "unsupported dtype: exit 1" 1 "$RELAY_TUNE" run "$TMP/m.relay" --input a="$IO/uint16.npy"
has "unsupported dtype is named" "$TMP/err" "unsupported dtype '<u2'"

# tuple results
cat >"$TMP/t.relay" <<'R'
#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3, 4), float32]) {
  %0 = split(%x, indices_or_sections=[1], axis=1);
  %1 = %0.0;
  %2 = sum(%x, axis=[2]);
  (%1, (%2, %x))
}
R
check "a tuple result with --output: exit 1" 1 "$RELAY_TUNE" run "$TMP/t.relay" --input x="$IO/float32.npy" --output "$TMP/t.npy"
has "a tuple result asks for --output-dir" "$TMP/err" "the result is a tuple of 3 tensors: write it with --output-dir DIR"
check "a tuple result with --output-dir" 0 "$RELAY_TUNE" run "$TMP/t.relay" --input x="$IO/float32.npy" --output-dir "$TMP/outdir"
for f in 0 1.0 1.1; do
    [ -f "$TMP/outdir/$f.npy" ] && tap_ok "--output-dir wrote $f.npy" || tap_fail "--output-dir wrote $f.npy" "$(ls "$TMP/outdir")"
done
check "field 1.1 is the input itself" 0 "$NPYCMP" "$TMP/outdir/1.1.npy" "$IO/float32.npy"
check "a tuple result is summarized field by field" 0 "$RELAY_TUNE" run "$TMP/t.relay" --input x="$IO/float32.npy"
has "summary of field 1.0" "$TMP/out" "result 1.0: Tensor[(2, 3), float32]"
check "--output and --output-dir together: exit 2" 2 "$RELAY_TUNE" run "$TMP/t.relay" --output a.npy --output-dir d

# targets, options, run-time errors, results that are not data
check "unknown target: exit 1" 1 "$RELAY_TUNE" run "$TMP/m.relay" --params "$IO/savez.npz" --target tpu
has "unknown target is named" "$TMP/err" "target 'tpu'"
check "--target interp" 0 "$RELAY_TUNE" run "$TMP/m.relay" --params "$IO/savez.npz" --target interp
check "bad seed: exit 2" 2 "$RELAY_TUNE" run "$TMP/m.relay" --random-params abc
check "unknown option: exit 2" 2 "$RELAY_TUNE" run "$TMP/m.relay" --bogus
check "option without its value: exit 2" 2 "$RELAY_TUNE" run "$TMP/m.relay" --params
check "no model: exit 2" 2 "$RELAY_TUNE" run
check "model with a type error: exit 1" 1 "$RELAY_TUNE" run "$top_srcdir/tests/ir/errors/type_broadcast.relay" --random-params 0
cat >"$TMP/e.relay" <<'R'
#[version = "0.0.5"]
def @main(%d: Tensor[(5), float32], %i: Tensor[(3), int64]) {
  take(%d, %i, axis=0, mode="fast")
}
R
cat >"$TMP/idx.relay" <<'R'
#[version = "0.0.5"]
def @main() {
  %0 = expand_dims(1i64, axis=0);
  %1 = expand_dims(9i64, axis=0);
  %2 = expand_dims(2i64, axis=0);
  %3 = (%0, %1, %2);
  concatenate(%3)
}
R
check "a model without parameters writes an int64 .npy" 0 "$RELAY_TUNE" run "$TMP/idx.relay" --output "$TMP/idx.npy"
check "run-time error: exit 1" 1 "$RELAY_TUNE" run "$TMP/e.relay" --random-params 1 --input i="$TMP/idx.npy"
has "run-time error points at the call" "$TMP/err" "e.relay:3:3: error: take: index 9 is out of range for the axis of extent 5"
cat >"$TMP/f.relay" <<'R'
#[version = "0.0.5"]
def @main(%x: float32) {
  fn (%y: float32) { add(%x, %y) }
}
R
check "a function result: exit 1" 1 "$RELAY_TUNE" run "$TMP/f.relay" --random-params 0
has "a function result is explained" "$TMP/err" "error: @main: the result is a function, not data"
tap_done
