#!/bin/sh
# compiled.sh — Relay that issue 19 made readable, compiled for this CPU
# (`run --target cpu`, which binds seeded weights, so the passes that fold
# constants and batch-norm run) against the interpreter: the new ops and
# layouts of golden/new_ops.relay, infix operators and sequencing, an
# NHWC/HWIO convolution with batch-norm, one with a scale that
# fold-scale-axis (written for NCHW/OIHW) must leave alone, and the refusal
# of a polymorphic @main by compile.
. "$(dirname "$0")/../lib.sh"
RELAY_TUNE_CACHE="$TMP/cache"
mkdir -p "$RELAY_TUNE_CACHE"
export RELAY_TUNE_CACHE
NPYCMP="$top_builddir/tests/tools/npycmp"
same() { # same NAME MODEL: the compiled result matches the interpreter's
    if "$RELAY_TUNE" run "$2" --random-params 3 --output-dir "$TMP/i" >"$TMP/out" 2>"$TMP/err" &&
        "$RELAY_TUNE" run "$2" --random-params 3 --target cpu --output-dir "$TMP/c" >"$TMP/out" 2>>"$TMP/err"; then
        bad=""
        for f in "$TMP"/i/*.npy; do
            "$NPYCMP" "$TMP/c/$(basename "$f")" "$f" 1e-4 >>"$TMP/err" 2>&1 || bad="$bad $(basename "$f")"
        done
        [ -z "$bad" ] && tap_ok "$1" || tap_fail "$1" "differs in$bad" "$(cat "$TMP/err")"
    else
        tap_fail "$1 (runs)" "$(cat "$TMP/err")"
    fi
    rm -rf "$TMP/i" "$TMP/c"
}
same "new ops and NHWC layouts compile and match the interpreter" "$top_srcdir/tests/ir/golden/new_ops.relay"
cat >"$TMP/bn.relay" <<'R'
def @main(%x: Tensor[(1, 8, 8, 3), float32], %w: Tensor[(3, 3, 3, 4), float32], %g: Tensor[(4), float32],
          %b: Tensor[(4), float32], %m: Tensor[(4), float32], %v: Tensor[(4), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1], data_layout="NHWC", kernel_layout="HWIO");
  %1 = nn.batch_norm(%0, %g, %b, %m, %v, axis=3);
  multiply(nn.relu(%1.0), 2f)
}
R
same "NHWC conv2d + batch_norm with bound weights matches the interpreter" "$TMP/bn.relay"
# a scale on axis 1 of an NHWC result whose extent equals the kernel height:
# fold-scale-axis, written for NCHW/OIHW, would fold it into the kernel rows
cat >"$TMP/fs.relay" <<'R'
def @main(%x: Tensor[(1, 3, 3, 3), float32], %w: Tensor[(3, 3, 3, 4), float32], %s: Tensor[(3, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1], data_layout="NHWC", kernel_layout="HWIO");
  multiply(%0, %s)
}
R
same "fold-scale-axis leaves an NHWC convolution alone" "$TMP/fs.relay"
cat >"$TMP/seq.relay" <<'R'
def @main(%a: Tensor[(2, 3), float32], %b: Tensor[(2, 3), float32]) {
  %0 = -%a + %b * %a - %b / 2f;
  exp(%0); nn.relu(%0) * arange(1f, 4f, 1f)
}
R
same "infix operators and sequencing compile and match the interpreter" "$TMP/seq.relay"
printf 'def @main[A](%%x: A) -> A { %%x }\n' >"$TMP/poly.relay"
if "$RELAY_TUNE" compile "$TMP/poly.relay" -o "$TMP/poly.so" >"$TMP/out" 2>"$TMP/err"; then
    tap_fail "compile refuses a polymorphic @main" "it compiled"
elif grep -qF "@main has type parameters" "$TMP/err"; then
    tap_ok "compile refuses a polymorphic @main, saying why"
else
    tap_fail "compile refuses a polymorphic @main, saying why" "$(cat "$TMP/err")"
fi
tap_done
