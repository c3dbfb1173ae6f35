#!/bin/sh
# winograd.sh — the winograd pass (`opt --winograd`, docs/winograd.md): the
# golden printout of a small model (3x3 stride-1 convs rewritten, the
# stride-2 one left, the epilogue fused into the new anchor, weights
# transformed at compile time), the tile option, bad input refused, and
# resnet18 rewritten with the interpreter run before and after every pass
# (check mode: the result within 1e-4 of the largest magnitude).
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
tap_done
