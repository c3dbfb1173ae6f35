#!/bin/sh
# float16.sh — float16 models compile for the CPU and match the interpreter:
# a small resnet in float16 (convolutions with batch-norm, which compiling
# folds into the convolutions' weights and a bias; relu, max pooling, residual
# adds, a strided block with a 1x1 projection, global pooling, dense,
# softmax; tests/cli/models/) and NaN
# through a compiled float16 relu. x86 has no float16 arithmetic (but
# AVX512-FP16, which these hosts lack): kernels hold float16 arguments as
# _Float16, compute in float32 and round at their stores; loads widen and
# stores round through integer operations that vectorize.
#
# Tolerance: the interpreter computes each op in float32 and rounds its
# result to float16 (unit roundoff 2^-11 = 4.9e-4); a compiled kernel rounds
# only at its outputs, so a fused conv + batch-norm + relu + add is rounded
# once instead of three or four times. The results differ by a few float16 roundings: 5e-3 relative to
# the output's largest value allows ten (measured: 1.1e-3).
. "$(dirname "$0")/../lib.sh"
RELAY_TUNE_CACHE="$TMP/cache"
export RELAY_TUNE_CACHE
M="$top_srcdir/tests/cli/models/resnet_fp16.relay"
NPYCMP="$top_builddir/tests/tools/npycmp"

tap_run "the interpreter runs the float16 resnet" 0 "$RELAY_TUNE" run "$M" --random-params 1 --output "$TMP/ref.npy"
tap_run "compile the float16 resnet" 0 "$RELAY_TUNE" compile "$M" --random-params 1 -o "$TMP/r.so"
tap_has "  every fused function became a kernel" "$TMP/out" "11 kernel calls, 11 distinct kernels"
tap_run "run it" 0 "$RELAY_TUNE" run "$TMP/r.so" --random-params 1 --output "$TMP/got.npy"
tap_run "  float16 output within 5e-3 of the interpreter's" 0 "$NPYCMP" -v "$TMP/ref.npy" "$TMP/got.npy" 5e-3
echo "# measured error $(cat "$TMP/out")"
cat "$RELAY_TUNE_CACHE"/*.c >"$TMP/all.c" 2>/dev/null
tap_has "kernels take float16 arguments as _Float16" "$TMP/all.c" "const _Float16 *restrict p0"
tap_has "  and widen their loads to float32" "$TMP/all.c" "rt_h2f(p0, "

# loads widen and stores round in vector integer operations (gcc 12
# converts _Float16 one element at a time: it vectorizes the conversion only
# with AVX512-FP16), so no scalar F16C conversion is left
fl=$("$RELAY_TUNE" targets cpu | sed -n 's/^  cflags: //p' | sed 's/ -fPIC -shared//')
: >"$TMP/all.s"
for c in $(grep -l "_Float16 \*restrict" "$RELAY_TUNE_CACHE"/*.c); do
    cc $fl -S -o "$TMP/one.s" "$c" 2>>"$TMP/err" && cat "$TMP/one.s" >>"$TMP/all.s"
done
if grep -Eq "vpmovzxwd[^#]*[yz]mm" "$TMP/all.s" && grep -Eq "(vpermt2w|vpmovdw|vpackusdw)[^#]*[yz]mm" "$TMP/all.s"; then
    tap_ok "loads widen float16 vectors (vpmovzxwd), stores narrow them (vpermt2w, vpmovdw or vpackusdw)"
else
    tap_fail "loads widen float16 vectors, stores narrow them" "$(grep -c -E "vpmovzxwd|vpermt2w|vpmovdw|vpackusdw" "$TMP/all.s") vector conversions"
fi
n=$(grep -c -E "vcvtps2ph|vcvtph2ps" "$TMP/all.s")
if [ "$n" = 0 ]; then
    tap_ok "  no scalar F16C conversion is left"
else
    tap_fail "  no scalar F16C conversion is left" "$n vcvtps2ph/vcvtph2ps"
fi
# the weights are packed widened to float32, once; max pooling accumulates
# in a float tile, never reading back its float16 output
tap_has "packed float16 weights are floats" "$TMP/all.c" "const float *restrict w0"
if grep -q "rt_h2f(o[0-9]" "$TMP/all.c"; then
    tap_fail "no kernel reads back its float16 output" "$(grep -m1 "rt_h2f(o[0-9]" "$TMP/all.c")"
else
    tap_ok "no kernel reads back its float16 output"
fi

# batch-norm folds into float16 weights: fold-scale-axis computes W * s in
# float32 and rounds it once to float16; the folded model, interpreted,
# agrees with the original
"$RELAY_TUNE" opt "$M" --random-params 1 --print-after fold-constant -o /dev/null 2>"$TMP/before.txt"
"$RELAY_TUNE" opt "$M" --random-params 1 --print-after fold-scale-axis --stats -o "$TMP/folded.relay" 2>"$TMP/after.txt"
nbn=$(grep -c "nn.batch_norm(" "$M")
nb=$(grep -c "multiply(" "$TMP/before.txt")
na=$(grep -c "multiply(" "$TMP/after.txt")
if [ "$nb" = "$nbn" ] && [ "$na" = 0 ]; then
    tap_ok "the $nbn batch-norm scales fold into float16 conv weights ($nb multiplies before fold-scale-axis, $na after)"
else
    tap_fail "the $nbn batch-norm scales fold into float16 conv weights" "$nb multiplies before, $na after"
fi
echo "# $(grep "operator calls" "$TMP/after.txt")"
tap_run "  the folded model runs in the interpreter" 0 "$RELAY_TUNE" run "$TMP/folded.relay" --random-params 1 \
    --output "$TMP/folded.npy"
tap_run "  within 5e-3 of the original's result" 0 "$NPYCMP" -v "$TMP/ref.npy" "$TMP/folded.npy" 5e-3
echo "# folded against unfolded, interpreted: $(cat "$TMP/out")"

# the AVX2 path: the same conversions in 256-bit vectors (vpackusdw)
tap_run "the float16 resnet compiled for AVX2 runs" 0 env RELAY_TUNE_MAX_ISA=avx2 "$RELAY_TUNE" run "$M" --random-params 1 \
    --target cpu --output "$TMP/got2.npy"
tap_run "  within 5e-3 of the interpreter's" 0 "$NPYCMP" -v "$TMP/ref.npy" "$TMP/got2.npy" 5e-3

# NaN and infinities survive float16 storage: relu(sqrt(x)) of a negative x
cat >"$TMP/nan.relay" <<'EOT'
#[version = "0.0.5"]
def @main(%x: Tensor[(2, 8), float16]) { nn.relu(sqrt(%x)) }
EOT
"$RELAY_TUNE" run "$TMP/nan.relay" --random-params 3 --output "$TMP/nan-ref.npy" >/dev/null 2>"$TMP/err" ||
    tap_fail "interpret the float16 relu(sqrt)" "$(cat "$TMP/err")"
tap_run "run the float16 relu(sqrt) compiled" 0 "$RELAY_TUNE" run "$TMP/nan.relay" --random-params 3 --target cpu \
    --output "$TMP/nan.npy"
tap_run "  bit for bit the interpreter's, NaN included" 0 "$NPYCMP" "$TMP/nan-ref.npy" "$TMP/nan.npy"
tap_done
