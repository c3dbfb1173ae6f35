#!/bin/sh
# zoo.sh — the model zoo exported to ONNX by torch.onnx.export
# (tests/gen/make_onnx_zoo.py: resnet18, mobilenet_v2, squeezenet1_0 and the
# BERT layer, graphs only, every weight a graph input): `relay-tune run
# M.onnx --random-params 0` draws the weights PyTorch ran with for
# tests/ref/models/M.npz, and both the interpreter and the cpu target must
# match PyTorch's output (relative error < 1e-4).
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
done
tap_done
