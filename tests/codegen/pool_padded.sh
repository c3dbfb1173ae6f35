#!/bin/sh
# pool_padded.sh — float32 max pooling whose windows reach outside the data
# (padding, ceil_mode) reads a copy padded with -inf, so that the window's
# taps are plain strided loads instead of guarded ones (compute_nn.c's
# pool_padded); a pool whose windows stay inside reads its input directly.
# Each compiled model against the interpreter, exactly (a max picks one
# of its inputs; the padding's -inf never wins a window that holds data;
# NaN inputs: tests/codegen/test_nan).
. "$(dirname "$0")/../lib.sh"
RELAY_TUNE_CACHE="$TMP/cache"
export RELAY_TUNE_CACHE
NPYCMP="$top_builddir/tests/tools/npycmp"
model() { # model NAME SHAPE ATTRS: a model of one max pool
    printf '#[version = "0.0.5"]\ndef @main(%%x: Tensor[(%s), float32]) {\n  nn.max_pool2d(%%x, %s)\n}\n' "$2" "$3" \
        >"$TMP/$1.relay"
}
model pad "1, 5, 17, 18" "pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1]"
model ceil "1, 3, 10, 9" "pool_size=[3, 3], strides=[2, 2], ceil_mode=True"
model asym "1, 2, 9, 12" "pool_size=[2, 3], strides=[1, 2], padding=[0, 2, 1, 0]"
model inside "1, 4, 13, 13" "pool_size=[3, 3], strides=[2, 2]"
for m in pad ceil asym inside; do
    tap_run "$m: compile" 0 "$RELAY_TUNE" compile "$TMP/$m.relay" -o "$TMP/$m.so"
    for seed in 1 2; do
        tap_run "$m: run (seed $seed)" 0 "$RELAY_TUNE" run "$TMP/$m.so" --random-params $seed --output "$TMP/so.npy"
        tap_run "$m: the interpreter" 0 "$RELAY_TUNE" run "$TMP/$m.relay" --random-params $seed --output "$TMP/ref.npy"
        tap_run "$m: the compiled pool matches the interpreter (seed $seed)" 0 "$NPYCMP" "$TMP/so.npy" "$TMP/ref.npy" 0
    done
done
# the kernels' C (the cache keeps it beside each object): the pool's taps
# read the padded copy without a select where windows leave the data
kernel_c() { # kernel_c NAME: the C of the unit that holds NAME's kernel
    rm -rf "$RELAY_TUNE_CACHE"
    "$RELAY_TUNE" compile "$TMP/$1.relay" -o "$TMP/$1.so" >/dev/null 2>&1
    grep -l 'k0_body' "$RELAY_TUNE_CACHE"/*.c | head -1
}
c=$(kernel_c pad)
if [ -n "$c" ] && grep -q 'rt_max_float(o0\[[^]]*\], t0\[' "$c" && ! grep 'rt_max_float' "$c" | grep -q '?'; then
    tap_ok "pad: the taps read the padded copy, unguarded"
else
    tap_fail "pad: the taps read the padded copy, unguarded" "$(grep -A3 -B3 rt_max_float "$c" 2>&1 | head -20)"
fi
c=$(kernel_c inside)
if [ -n "$c" ] && grep -q 'rt_max_float(o0\[[^]]*\], p0\[' "$c" && ! grep -q 'float \*restrict t0' "$c"; then
    tap_ok "inside: the taps read the input itself, no copy"
else
    tap_fail "inside: the taps read the input itself, no copy" "$(grep -A3 -B3 rt_max_float "$c" 2>&1 | head -20)"
fi
tap_done
