#!/bin/sh
# opencl_model.sh — compiled models for OpenCL (docs/opencl.md): `run
# --target opencl` on small models (the interpreter's golden models, a
# conv+relu, a dense) and the zoo's CNNs and BERT layer match the interpreter (rel.
# error < 1e-4), mobilenet_v2 staged too (-local-stage=1); `compile --target opencl` writes an object that needs the
# ICD loader and exports only rtm_ names, runs by itself and under `bench`,
# and is refused, saying why, where the ICD loader finds no device;
# a short `tune --target opencl` gives records that `compile --target
# opencl --db` uses (tests/tuner/tune_opencl.sh tunes in earnest). A build without OpenCL
# or a host without a device skips, saying why.
. "$(dirname "$0")/../lib.sh"
RELAY_TUNE_CACHE="$TMP/cache"
mkdir -p "$RELAY_TUNE_CACHE"
export RELAY_TUNE_CACHE
NPYCMP="$top_builddir/tests/tools/npycmp"
M="$top_srcdir/benchmarks/models/mlp.relay"

skip_without_opencl

same() { # same NAME MODEL [TARGET]: the result on the device (opencl) matches the interpreter's
    if "$RELAY_TUNE" run "$2" --random-params 3 --output-dir "$TMP/i" >"$TMP/out" 2>"$TMP/err" &&
        "$RELAY_TUNE" run "$2" --random-params 3 --target "${3:-opencl}" --output-dir "$TMP/c" >"$TMP/out" 2>>"$TMP/err"; then
        bad=""
        for f in "$TMP"/i/*.npy; do
            "$NPYCMP" "$TMP/c/$(basename "$f")" "$f" 1e-4 >>"$TMP/err" 2>&1 || bad="$bad $(basename "$f")"
        done
        if ! grep -q "on opencl (compiled)" "$TMP/out"; then
            tap_fail "$1" "did not run on the device" "$(cat "$TMP/out")"
        elif [ -z "$bad" ]; then
            tap_ok "$1"
        else
            tap_fail "$1" "differs in$bad" "$(cat "$TMP/err")"
        fi
    else
        tap_fail "$1 (runs)" "$(cat "$TMP/err")"
    fi
    rm -rf "$TMP/i" "$TMP/c"
}

cat >"$TMP/conv.relay" <<'R'
def @main(%x: Tensor[(1, 3, 12, 12), float32], %w: Tensor[(8, 3, 3, 3), float32], %b: Tensor[(8), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1], channels=8, kernel_size=[3, 3]);
  nn.relu(nn.bias_add(%0, %b))
}
R
same "conv2d + bias + relu matches the interpreter" "$TMP/conv.relay"
cat >"$TMP/dense.relay" <<'R'
def @main(%x: Tensor[(3, 40), float32], %w: Tensor[(17, 40), float32]) {
  nn.dense(%x, %w)
}
R
same "dense matches the interpreter" "$TMP/dense.relay"
for g in small_convnet tensor_ops pooling transformer_bits new_ops; do
    same "golden model $g matches the interpreter" "$top_srcdir/tests/ir/golden/$g.relay"
done
same "the MLP matches the interpreter" "$M"
for z in squeezenet1_0 resnet18 mobilenet_v2 bert_layer; do
    same "zoo model $z matches the interpreter" "$top_srcdir/benchmarks/models/$z.relay"
done
# a device that stages takes mobilenet's depthwise convs in the direct form
# (a cpu device that does not: the flat one, above), each staged
same "mobilenet_v2 staged (-local-stage=1: its depthwise convs direct) matches the interpreter" \
    "$top_srcdir/benchmarks/models/mobilenet_v2.relay" "opencl -local-stage=1"

tap_run "compile --target opencl" 0 "$RELAY_TUNE" compile "$M" --random-params 0 --target opencl -o "$TMP/m.so"
if readelf -d "$TMP/m.so" | grep NEEDED | grep -q "libOpenCL"; then
    tap_ok "the object needs the ICD loader"
else
    tap_fail "the object needs the ICD loader" "$(readelf -d "$TMP/m.so" | grep NEEDED)"
fi
if readelf -d "$TMP/m.so" | grep NEEDED | grep -q "libgomp"; then
    tap_fail "and no OpenMP runtime" "$(readelf -d "$TMP/m.so" | grep NEEDED)"
else
    tap_ok "and no OpenMP runtime"
fi
other=$(nm -D --defined-only "$TMP/m.so" | awk '{print $3}' | grep -v '^rtm_' | grep -v '^_' || true)
if [ -z "$other" ]; then tap_ok "it exports only rtm_ names"; else tap_fail "it exports only rtm_ names" "$other"; fi
"$RELAY_TUNE" run "$M" --random-params 0 --output "$TMP/i.npy" >"$TMP/out" 2>"$TMP/err"
tap_run "the object runs by itself" 0 "$RELAY_TUNE" run "$TMP/m.so" --random-params 0 --output "$TMP/c.npy"
tap_has "and says it ran on opencl, though the command names no target" "$TMP/out" "on opencl (compiled)"
tap_run "and matches the interpreter" 0 "$NPYCMP" "$TMP/c.npy" "$TMP/i.npy" 1e-4
# a host without the device (the ICD loader told of no platforms): refused in create
mkdir -p "$TMP/no-icds"
tap_run "without its device the object is refused" 1 env OCL_ICD_VENDORS="$TMP/no-icds" "$RELAY_TUNE" run "$TMP/m.so" \
    --random-params 0 --output "$TMP/c2.npy"
tap_has "saying why" "$TMP/err" "cannot set up its OpenCL device"
tap_run "bench --target opencl" 0 "$RELAY_TUNE" bench "$M" --target opencl --repeat 3 --warmup 1 --json
tap_has "reports the target" "$TMP/out" '"target": "opencl"'
# (4 tasks on the device: the mlp's 3 denses and its last function, a
# default_cl task there; each task's default is measured)
tap_run "tune --target opencl" 0 "$RELAY_TUNE" tune "$M" --random-params 0 --target opencl --trials 4 --db "$TMP/t.db" \
    --repeat 1 --min-repeat-ms 1 --confirm 0 --progress none
tap_has "measures on the device" "$TMP/out" "done: 4 measurements"
tap_run "compile --target opencl --db" 0 "$RELAY_TUNE" compile "$M" --random-params 0 --target opencl --db "$TMP/t.db" \
    -o "$TMP/t.so"
tap_has "takes the device's records" "$TMP/out" " with a database config)"
if grep -q "(0 with a database config)" "$TMP/out"; then
    tap_fail "and uses some of them" "$(cat "$TMP/out")"
else
    tap_ok "and uses some of them"
fi
tap_done
