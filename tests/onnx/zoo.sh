#!/bin/sh
# zoo.sh — the model zoo exported to ONNX by torch.onnx.export
# (tests/gen/make_onnx_zoo.py: resnet18, mobilenet_v2, squeezenet1_0 and the
# BERT layer, graphs only, every weight a graph input): `relay-tune run
# M.onnx --random-params 0` draws the weights PyTorch ran with for
# tests/ref/models/M.npz, and both the interpreter and the cpu target must
# match PyTorch's output (relative error < 1e-4). Then each model as users
# have them, weights inside: tests/onnx/embed_weights writes those same
# seeded weights into a copy as external data (nothing large is committed),
# and `relay-tune run M.onnx --input data=x.npy --output y.npy --target cpu`
# must match PyTorch too.
. "$(dirname "$0")/lib.sh"
ZOO="$top_srcdir/tests/onnx/zoo"
REFS="$top_srcdir/tests/ref/models"
for m in squeezenet1_0 resnet18 mobilenet_v2 bert_layer; do
    for target in interp cpu; do
        check "$m.onnx runs on $target" 0 \
            "$RELAY_TUNE" run "$ZOO/$m.onnx" --random-params 0 --target $target --output "$TMP/$m-$target.npy"
        check "$m.onnx on $target matches PyTorch (rel. error < 1e-4)" 0 \
            "$NPYCMP" "$TMP/$m-$target.npy" "$REFS/$m.npz:output" 1e-4
    done
    check "$m: its seeded weights embedded as external data" 0 \
        "$top_builddir/tests/onnx/embed_weights" "$ZOO/$m.onnx" "$TMP/$m.onnx" "$TMP/$m-x.npy"
    check "$m.onnx with its weights runs on cpu with --input data=x.npy" 0 \
        "$RELAY_TUNE" run "$TMP/$m.onnx" --input data="$TMP/$m-x.npy" --output "$TMP/$m-y.npy" --target cpu
    check "$m.onnx with its weights on cpu matches PyTorch (rel. error < 1e-4)" 0 \
        "$NPYCMP" "$TMP/$m-y.npy" "$REFS/$m.npz:output" 1e-4
    rm -f "$TMP/$m.onnx.weights"
done
tap_done
