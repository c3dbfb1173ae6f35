#!/bin/sh
# cli.sh — ONNX models through relay-tune: `import` (text, and weights as an
# .npz that --params reads back), every model command on .onnx directly, the
# small CNN exported by torch.onnx (tests/gen/make_onnx_models.py) matching
# PyTorch on the interpreter and compiled for the cpu target, external data
# beside the model, and every refusal with the file and node or tensor it
# names: unsupported ops (all listed at once), dynamic shapes, opsets past 17,
# external data escaping the model's folder or shorter than it claims, raw
# data shorter than its dims, truncated and corrupt files; a call of
# constants too costly to fold while importing.
. "$(dirname "$0")/lib.sh"
M="$top_srcdir/tests/onnx/models"

check "relay-tune --help lists import" 0 "$RELAY_TUNE" --help
has "relay-tune --help lists import" "$TMP/out" "import "
check "import --help exits 0" 0 "$RELAY_TUNE" import --help
has "import --help documents --params-out" "$TMP/out" "--params-out W.npz"
check "import without a model is a usage error" 2 "$RELAY_TUNE" import

# the small CNN: interpreter and cpu target against PyTorch
check "run small_cnn.onnx on the interpreter" 0 \
    "$RELAY_TUNE" run "$M/small_cnn.onnx" --input data="$M/small_cnn_x.npy" --output "$TMP/y.npy"
check "the interpreter matches PyTorch (rel. error < 1e-4)" 0 "$NPYCMP" "$TMP/y.npy" "$M/small_cnn_y.npy" 1e-4
check "run small_cnn.onnx compiled for cpu" 0 \
    "$RELAY_TUNE" run "$M/small_cnn.onnx" --input data="$M/small_cnn_x.npy" --output "$TMP/yc.npy" --target cpu
check "the compiled model matches PyTorch (rel. error < 1e-4)" 0 "$NPYCMP" "$TMP/yc.npy" "$M/small_cnn_y.npy" 1e-4
check "external data beside the model is read" 0 \
    "$RELAY_TUNE" run "$M/small_cnn_ext.onnx" --input data="$M/small_cnn_x.npy" --output "$TMP/ye.npy"
check "the external-data model gives the same bits" 0 "$NPYCMP" "$TMP/ye.npy" "$TMP/y.npy"
# Resize with constant scales (torch.onnx's nearest and bilinear upsampling)
check "run upsampler.onnx (Resize, nearest and linear) on the interpreter" 0 \
    "$RELAY_TUNE" run "$M/upsampler.onnx" --input data="$M/upsampler_x.npy" --output "$TMP/u.npy"
check "  matches PyTorch (rel. error < 1e-5)" 0 "$NPYCMP" "$TMP/u.npy" "$M/upsampler_y.npy" 1e-5
check "run upsampler.onnx compiled for cpu" 0 \
    "$RELAY_TUNE" run "$M/upsampler.onnx" --input data="$M/upsampler_x.npy" --output "$TMP/uc.npy" --target cpu
check "  matches PyTorch (rel. error < 1e-5)" 0 "$NPYCMP" "$TMP/uc.npy" "$M/upsampler_y.npy" 1e-5
check "an unknown input name is refused" 1 \
    "$RELAY_TUNE" run "$M/small_cnn.onnx" --input x="$M/small_cnn_x.npy"
has "the refusal names the input" "$TMP/err" "x"

# import: weights as constants, or as parameters with an .npz
check "import prints Relay text" 0 "$RELAY_TUNE" import "$M/small_cnn.onnx" -o "$TMP/c.relay"
check "the text parses back" 0 "$RELAY_TUNE" parse "$TMP/c.relay"
has "the graph input keeps its ONNX name" "$TMP/out" "def @main(%data: Tensor[(1, 3, 16, 16), float32])"
check "run the imported text" 0 "$RELAY_TUNE" run "$TMP/c.relay" --input data="$M/small_cnn_x.npy" --output "$TMP/yt.npy"
check "the text gives the same bits" 0 "$NPYCMP" "$TMP/yt.npy" "$TMP/y.npy"
check "import --params-out" 0 "$RELAY_TUNE" import "$M/small_cnn.onnx" -o "$TMP/p.relay" --params-out "$TMP/w.npz"
has "the weights are parameters" "$TMP/p.relay" "%conv2_weight: Tensor[(16, 4, 3, 3), float32]"
check "run the text with --params W.npz" 0 \
    "$RELAY_TUNE" run "$TMP/p.relay" --params "$TMP/w.npz" --input data="$M/small_cnn_x.npy" --output "$TMP/yp.npy"
check "the weights from the .npz give the same bits" 0 "$NPYCMP" "$TMP/yp.npy" "$TMP/y.npy"

# the other commands take .onnx directly: parse, opt, tasks, compile, lower, tune, bench
check "parse small_cnn.onnx" 0 "$RELAY_TUNE" parse "$M/small_cnn.onnx"
check "opt small_cnn.onnx" 0 "$RELAY_TUNE" opt "$M/small_cnn.onnx" -O3
check "tasks small_cnn.onnx" 0 "$RELAY_TUNE" tasks "$M/small_cnn.onnx"
has "tasks lists the grouped conv" "$TMP/out" "group_conv2d_nchw"
check "compile small_cnn.onnx" 0 "$RELAY_TUNE" compile "$M/small_cnn.onnx" -o "$TMP/cnn.so"
check "lower small_cnn.onnx --task 0" 0 "$RELAY_TUNE" lower "$M/small_cnn.onnx" --task 0
has "lower prints the task's loop nest" "$TMP/out" "func kernel("
check "tune small_cnn.onnx (the weights come from the model)" 0 \
    "$RELAY_TUNE" tune "$M/small_cnn.onnx" --trials 4 --tuner random --db "$TMP/t.db" --jobs 1
check "bench small_cnn.onnx with the tuned configs" 0 "$RELAY_TUNE" bench "$M/small_cnn.onnx" --db "$TMP/t.db" --repeat 3

# refusals: exit 1 with the file and the node or tensor named
refuse() { # refuse NAME FILE TEXT
    check "$1 is refused" 1 "$RELAY_TUNE" parse "$2"
    has "$1: the message" "$TMP/err" "$3"
}
refuse "unsupported ops" "$M/unsupported.onnx" "unsupported ONNX op Cos (opset 13) in 2 nodes: 'cos1', 'cos2'"
has "every unsupported op is listed: Sin" "$TMP/err" "unsupported ONNX op Sin (opset 13) in 2 nodes: 'sin1', 'sin2'"
has "every unsupported op is listed: Round" "$TMP/err" "unsupported ONNX op Round (opset 13) in 1 node: 'round1'"
refuse "a dynamic shape" "$M/dynamic.onnx" "graph input 'x' has a dynamic dimension 0 ('N')"
refuse "opset 18" "$M/opset18.onnx" "opset18.onnx: ONNX opset 18 is not supported (opsets 6 to 17 are)"
refuse "external data outside the folder" "$M/escape.onnx" \
    "initializer tensor 'w': external data location '../../../etc/passwd' is not a file beside the model"
refuse "short external data" "$M/short_ext.onnx" "initializer tensor 'w': external data"
has "short external data: why" "$TMP/err" "is shorter than offset 1048576 + 24 bytes"
refuse "short raw data" "$M/bad_raw.onnx" "initializer tensor 'w' has 10 bytes of raw data, its dims need 24"
head -c 1000 "$M/small_cnn.onnx" >"$TMP/trunc.onnx"
refuse "a truncated model" "$TMP/trunc.onnx" "trunc.onnx: not an ONNX model: the protobuf is truncated or corrupt"
printf 'not a model\377\377\377\377' >"$TMP/junk.onnx"
refuse "a corrupt model" "$TMP/junk.onnx" "junk.onnx: not an ONNX model"
refuse "a missing model" "$TMP/none.onnx" "none.onnx: cannot read"
check "run refuses an unsupported model too" 1 "$RELAY_TUNE" run "$M/unsupported.onnx" --random-params 0

# a call of constants that costs more than 2^24 FLOPs is not folded while importing
check "import of a costly constant Conv finishes" 0 "$RELAY_TUNE" parse --no-types "$M/costly_fold.onnx"
has "  and the Conv stays a call, computed when run" "$TMP/out" "nn.conv3d(meta[relay.Constant][0], meta[relay.Constant][0]"
tap_done
