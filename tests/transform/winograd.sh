#!/bin/sh
# winograd.sh — the winograd pass (`opt --winograd`, docs/winograd.md): the
# golden printout of a small model (3x3 stride-1 convs rewritten, the
# stride-2 one left, the epilogue fused into the new anchor, weights
# transformed at compile time), the tile option, bad input refused, and
# resnet18 rewritten with the interpreter run before and after every pass
# (check mode: the result within 1e-4 of the largest magnitude); the
# automatic choice on named targets, off, all and --winograd-tile alone.
. "$(dirname "$0")/../lib.sh"
d="$top_srcdir/tests/transform/winograd"
tap_run "opt --winograd runs" 0 "$RELAY_TUNE" opt --winograd --random-params 0 --no-types "$d/convs.relay"
[ -n "$UPDATE_GOLDEN" ] && cp "$TMP/out" "$d/convs.expected"
if diff -u "$d/convs.expected" "$TMP/out" >"$TMP/diff"; then tap_ok "opt --winograd matches convs.expected"
else tap_fail "opt --winograd matches convs.expected" "$(cat "$TMP/diff")"; fi
n=$(grep -c "nn.contrib_conv2d_winograd_without_weight_transform" "$TMP/out")
[ "$n" -eq 2 ] && tap_ok "two 3x3 stride-1 convs rewritten" || tap_fail "two 3x3 stride-1 convs rewritten" "got $n"
tap_has "the stride-2 conv stays nn.conv2d" "$TMP/out" "nn.conv2d(%p0, %p1, strides=[2, 2]"
if grep -q "winograd_weight_transform" "$TMP/out"; then tap_fail "no weight transform left (folded)"
else tap_ok "no weight transform left (folded)"; fi
tap_run "opt --winograd-tile 2" 0 "$RELAY_TUNE" opt --winograd-tile 2 --random-params 0 --no-types "$d/convs.relay"
tap_has "--winograd-tile 2 gives F(2x2) and 4x4 weights" "$TMP/out" "Tensor[(4, 4, 4, 3), float32]"
tap_run "opt --winograd-tile 4" 0 "$RELAY_TUNE" opt --winograd-tile 4 --random-params 0 --no-types "$d/convs.relay"
tap_has "--winograd-tile 4 gives F(4x4) and 6x6 weights (outputs under 8 wide take F(2x2) by default)" "$TMP/out" \
    "Tensor[(6, 6, 4, 3), float32]"
tap_run "opt --winograd without weights leaves the convs" 0 "$RELAY_TUNE" opt --winograd --no-types "$d/convs.relay"
if grep -q "winograd" "$TMP/out"; then tap_fail "a parameter weight is not rewritten"
else tap_ok "a parameter weight is not rewritten"; fi
tap_run "--winograd-tile 3 refused" 1 "$RELAY_TUNE" opt --winograd-tile 3 --random-params 0 "$d/convs.relay"
tap_run "opt --winograd --check resnet18 (the interpreter before and after each pass)" 0 \
    "$RELAY_TUNE" opt --winograd --random-params 0 --check "$top_srcdir/benchmarks/models/resnet18.relay" -o "$TMP/r18.relay"
n=$(grep -c "nn.contrib_conv2d_winograd_without_weight_transform" "$TMP/r18.relay")
# 16 3x3 convs, 3 of them stride 2 (the first of layers 2-4)
[ "$n" -eq 13 ] && tap_ok "resnet18: its 13 3x3 stride-1 convs rewritten" || tap_fail "resnet18: its 13 3x3 stride-1 convs rewritten" "got $n"

# the automatic choice (--winograd auto, the default of the commands that
# compile; tr_winograd_pick): on a named target, the tile whose count fills
# two vectors and cuts the products at least 2x; resnet18's 56x56 and 28x28
# layers F(4x4), 14x14 F(4x4) on AVX2 (16 tiles, two ymm) and F(2x2) on
# AVX-512 (16 tiles are one zmm), 7x7 direct on both (F(2x2) cuts 1.7x)
R18="$top_srcdir/benchmarks/models/resnet18.relay"
wino_tasks() { # wino_tasks LABEL EXPECTED ARGS...: the Winograd tasks' data and weight shapes
    label=$1 want=$2
    shift 2
    "$RELAY_TUNE" tasks "$R18" --random-params 0 "$@" >"$TMP/tasks" 2>"$TMP/err" || { tap_fail "$label" "$(cat "$TMP/err")"; return; }
    got=$(awk '$3 == "conv2d_winograd" { printf "%s%s %s", sep, $6, $7; sep = "; " }' "$TMP/tasks")
    [ "$got" = "$want" ] && tap_ok "$label" || tap_fail "$label" "got: $got"
}
AUTO512="1x64x56x56, 6x6x64x64,; 1x64x56x56, 6x6x64x64,; 1x128x28x28, 6x6x128x128,; 1x128x28x28, 6x6x128x128,; 1x256x14x14, 4x4x256x256,; 1x256x14x14, 4x4x256x256,"
AUTO2="1x64x56x56, 6x6x64x64,; 1x64x56x56, 6x6x64x64,; 1x128x28x28, 6x6x128x128,; 1x128x28x28, 6x6x128x128,; 1x256x14x14, 6x6x256x256,; 1x256x14x14, 6x6x256x256,"
wino_tasks "tasks: AVX-512 by default: F(4x4) at 56 and 28, F(2x2) at 14, 7x7 direct" "$AUTO512" --target "cpu -mcpu=skylake-avx512"
wino_tasks "tasks --winograd auto: the same" "$AUTO512" --target "cpu -mcpu=skylake-avx512" --winograd auto
wino_tasks "tasks: AVX2 by default: F(4x4) at 56, 28 and 14, 7x7 direct" "$AUTO2" --target "cpu -mcpu=haswell"
wino_tasks "tasks --winograd off: none" "" --target "cpu -mcpu=haswell" --winograd off
if "$RELAY_TUNE" targets 2>/dev/null | grep -q "^opencl -platform=0 -device=0: "; then
    wino_tasks "tasks on an OpenCL target: none (the rule is the CPU's)" "" --target opencl
else tap_ok "# SKIP tasks on an OpenCL target: no OpenCL device here"; fi
"$RELAY_TUNE" tasks "$R18" --random-params 0 --target "cpu -mcpu=haswell" --winograd all >"$TMP/tasks"
n=$(awk '$3 == "conv2d_winograd" { n += $5 } END { print n + 0 }' "$TMP/tasks")
[ "$n" -eq 13 ] && tap_ok "tasks --winograd all: every 3x3 stride-1 conv (13 calls)" || tap_fail "tasks --winograd all: every 3x3 stride-1 conv (13 calls)" "got $n"
"$RELAY_TUNE" tasks "$R18" --random-params 0 --target "cpu -mcpu=haswell" --winograd-tile 2 >"$TMP/tasks"
n=$(grep -c "conv2d_winograd.*4x4x" "$TMP/tasks")
[ "$n" -eq 8 ] && tap_ok "--winograd-tile 2 alone: every one at F(2x2), as before (8 tasks)" || tap_fail "--winograd-tile 2 alone: every one at F(2x2), as before (8 tasks)" "got $n"
# squeezenet's expand convs: only the 64-channel one (27x27) has the depth
"$RELAY_TUNE" tasks "$top_srcdir/benchmarks/models/squeezenet1_0.relay" --random-params 0 --target "cpu -mcpu=skylake-avx512" >"$TMP/tasks"
got=$(awk '$3 == "conv2d_winograd" { printf "%s%s", sep, $6; sep = " " }' "$TMP/tasks")
[ "$got" = "1x64x27x27," ] && tap_ok "squeezenet: only the 64-channel expand conv is Winograd" || tap_fail "squeezenet: only the 64-channel expand conv is Winograd" "got: $got"
# fewer input channels than 64 (the GEMM's depth): direct
cat >"$TMP/c4.relay" <<'EOF2'
#[version = "0.0.5"]
def @main(%x: Tensor[(1, 4, 56, 56), float32], %w: Tensor[(64, 4, 3, 3), float32]) {
  nn.conv2d(%x, %w, padding=[1, 1], channels=64, kernel_size=[3, 3])
}
EOF2
tap_run "tasks: a 4-channel 3x3 conv" 0 "$RELAY_TUNE" tasks "$TMP/c4.relay" --random-params 0 --target "cpu -mcpu=haswell"
tap_has "  stays direct (too few input channels)" "$TMP/out" "conv2d_nchw"
tap_done
