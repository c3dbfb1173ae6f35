#!/bin/sh
# isa.sh — targets decide the ISA the templates plan for, whatever the host:
# target strings are described as the table and options say; code for every
# ISA is generated and compiled to assembly (vector registers of that width,
# no spills in the innermost FMA loops); code runs only where the host has
# its ISA, and a target the host cannot execute is refused by run, bench and
# tune (compiling for it stays allowed). RELAY_TUNE_MAX_ISA caps the host, so
# an AVX-512 host checks the AVX2 host's refusals too.
. "$(dirname "$0")/../lib.sh"
M="$top_srcdir/benchmarks/models/resnet18.relay"
MLP="$top_srcdir/benchmarks/models/mlp.relay"
AVX512="cpu -mcpu=skylake-avx512 -cores=2"
AVX2="cpu -mcpu=haswell -cores=2"
ZEN1="cpu -mcpu=znver1 -cores=2"
host=$("$RELAY_TUNE" targets | sed -n 's/^host ISA: //p')
case $host in avx512|avx2|sse4.2|x86-64) tap_ok "targets names the host ISA ($host)" ;; *) tap_fail "targets names the host ISA" "$host" ;; esac

# ---- descriptions --------------------------------------------------------
tap_run "describe avx512 and avx2 CPUs" 0 "$RELAY_TUNE" targets "$AVX512" "$ZEN1"
tap_has "skylake-avx512: 16 lanes, 32 registers" "$TMP/out" "isa avx512 (16 float32 lanes, 32 vector registers), 2 FMA pipes, L1d 32K, L2 1024K"
tap_has "znver1: 8 lanes, 16 registers, 512K L2" "$TMP/out" "isa avx2 (8 float32 lanes, 16 vector registers), 2 FMA pipes, L1d 32K, L2 512K"
tap_has "the compiler targets the CPU at the planned width" "$TMP/out" "-march=znver1 -mno-avx512f -mprefer-vector-width=256"
tap_run "options override the table" 0 "$RELAY_TUNE" targets "cpu -mcpu=znver1 -l2=1M -fma=1 -cores=3"
tap_has "overridden L2, FMA pipes and cores" "$TMP/out" "1 FMA pipe, L1d 32K, L2 1024K, L3 8192K, 3 cores"
tap_run "-isa narrows a CPU" 0 "$RELAY_TUNE" targets "cpu -mcpu=skylake-avx512 -isa=avx2"
tap_has "narrowed: 8 lanes, AVX-512 off" "$TMP/out" "-march=skylake-avx512 -mno-avx512f"
tap_run "-isa wider than the CPU" 1 "$RELAY_TUNE" targets "cpu -mcpu=haswell -isa=avx512"
tap_has "says so" "$TMP/err" "-isa is wider than this -mcpu has"
tap_run "an -mcpu the compiler lacks" 1 "$RELAY_TUNE" targets "cpu -mcpu=notacpu9"
tap_has "names the problem" "$TMP/err" "the system compiler does not know this -mcpu name"
tap_run "an -mcpu the table lacks, from the compiler" 0 "$RELAY_TUNE" targets "cpu -mcpu=ivybridge"
tap_has "ivybridge has no AVX2: sse4.2" "$TMP/out" "isa sse4.2 (4 float32 lanes"
tap_run "a bad -isa" 1 "$RELAY_TUNE" targets "cpu -isa=avx3"
tap_run "a bad cache size" 1 "$RELAY_TUNE" targets "cpu -l2=lots"
tap_run "a CPU name with a shell character" 1 "$RELAY_TUNE" targets 'cpu -mcpu=x;true'
tap_has "refused before any compiler sees it" "$TMP/err" "-mcpu takes a CPU name"
RELAY_TUNE_MAX_ISA=x86-64 "$RELAY_TUNE" targets >"$TMP/out" 2>&1
tap_has "RELAY_TUNE_MAX_ISA caps the host" "$TMP/out" "host ISA: x86-64"
tap_has "  and cpu then plans for it" "$TMP/out" "isa x86-64 (4 float32 lanes, 16 vector registers)"

# ---- schedules follow the target, not the host ----------------------------
tap_run "lower for avx512" 0 "$RELAY_TUNE" lower "$M" --task 2 --target "$AVX512" --emit config
tap_has "avx512: 32 channels (two vectors) by 8 columns" "$TMP/out" '"vec_ow":0,"tile_oc":[2,32],"tile_ow":[7,8]'
tap_run "lower for avx2" 0 "$RELAY_TUNE" lower "$M" --task 2 --target "$AVX2" --emit config
# rows of 8 columns would hold 8 channels, 8 accumulators (short of them):
# 16 channels by 6 columns and a tail instead, its taps kept a loop
tap_has "avx2: 16 channels (two vectors) by 6 columns and a tail" "$TMP/out" '"vec_ow":0,"tile_oc":[4,16],"tile_ow":[10,6]'
tap_run "  its C for avx2" 0 "$RELAY_TUNE" lower "$M" --task 2 --target "$AVX2" --emit c
tap_has "  its taps a loop gcc may not unroll" "$TMP/out" "#pragma GCC unroll 1"
tap_run "  its C for avx512" 0 "$RELAY_TUNE" lower "$M" --task 2 --target "$AVX512" --emit c
if grep -q "#pragma GCC unroll 1" "$TMP/out"; then
    tap_fail "avx512: its tile leaves room for unrolled taps" "$(grep -n 'unroll 1' "$TMP/out")"
else
    tap_ok "avx512: its tile leaves room for unrolled taps"
fi
tap_run "lower for x86-64 (SSE2)" 0 "$RELAY_TUNE" lower "$M" --task 2 --target "cpu -isa=x86-64" --emit config
tap_has "x86-64: rows of 4-lane vectors" "$TMP/out" '"vec_ow":1'
tap_run "dense space for avx2" 0 "$RELAY_TUNE" lower "$M" --task 15 --target "$AVX2" --emit space
tap_has "avx2: at most 32 columns (four vectors)" "$TMP/out" "tile_x: split 1000 into 2: [40,25] [42,24] [50,20]"
tap_run "dense space for avx512" 0 "$RELAY_TUNE" lower "$M" --task 15 --target "$AVX512" --emit space
tap_has "avx512: at most 64 columns" "$TMP/out" "tile_x: split 1000 into 2: [20,50] [21,48] [25,40]"
# the L2 decides the default input-channel blocks of a 3x3 conv with 512 channels
tap_run "lower a 512-channel conv, 1M L2" 0 "$RELAY_TUNE" lower "$M" --task 13 --target "$AVX512" --emit config
tap_has "its weight panel fits: no blocks" "$TMP/out" '"tile_ic":[1,512]'
tap_run "the same conv, 256K L2" 0 "$RELAY_TUNE" lower "$M" --task 13 --target "$AVX512 -l2=256K" --emit config
tap_has "two blocks fit: blocked" "$TMP/out" '"tile_ic":[4,128]'

# ---- assembly of each ISA: vector width, no spills in FMA loops -----------
cflags() { "$RELAY_TUNE" targets "$1" | sed -n 's/^  cflags: //p' | sed 's/ -fPIC -shared//'; }
asm_check() { # asm_check LABEL TARGET REG NOREG TASK...
    label=$1 tg=$2 reg=$3 noreg=$4
    shift 4
    fl=$(cflags "$tg")
    for task in "$@"; do
        "$RELAY_TUNE" lower "${ASM_MODEL:-$M}" $ASM_ARGS --task "$task" --target "$tg" --emit c >"$TMP/k.c" 2>"$TMP/err" &&
            cc $fl -S -o "$TMP/k.s" "$TMP/k.c" 2>>"$TMP/err"
        if [ $? -ne 0 ]; then
            tap_fail "$label task $task: compiles to assembly" "$(cat "$TMP/err")"
            continue
        fi
        awk -f "$top_srcdir/tests/tools/fma_loops.awk" "$TMP/k.s" >"$TMP/loops"
        n=$(wc -l <"$TMP/loops")
        spills=$(awk '$3 > 0' "$TMP/loops")
        if [ "$n" -gt 0 ] && [ -z "$spills" ]; then
            tap_ok "$label task $task: $n innermost FMA loops, no vector spills"
        else
            tap_fail "$label task $task: innermost FMA loops without spills" "$(cat "$TMP/loops")"
        fi
        if grep -q "$reg" "$TMP/k.s" && ! grep -q "$noreg" "$TMP/k.s"; then
            tap_ok "$label task $task: uses $reg, not $noreg"
        else
            tap_fail "$label task $task: uses $reg, not $noreg"
        fi
    done
}
# the stem, a 3x3 conv, a 1x1 projection, a 512-channel 3x3, the dense
asm_check avx512 "$AVX512" zmm xxnone 0 2 5 13 15
asm_check avx2 "$ZEN1" ymm zmm 0 2 5 13 15
# with weights bound, tasks 2 and 5 are the Winograd convs of the 56x56 and
# 28x28 layers (the automatic choice): on AVX2 the batched GEMM's register
# tile and the transforms spill nothing (the copy of the tile into M kept
# unrolled made gcc keep all 8 accumulators in memory)
ASM_ARGS="--random-params 0" asm_check "avx2 winograd" "$ZEN1" ymm zmm 2 5
ASM_ARGS="--random-params 0" asm_check "haswell winograd" "cpu -mcpu=haswell -cores=2" ymm zmm 2 5
# 1x1 stride-1 convs tiled over their fused pixels (conv2d_1x1.c): 56x56
# (vectors of pixels), 14x14 and 7x7 (vectors of channels), on AVX-512 and
# on Haswell's AVX2
R50="$top_srcdir/benchmarks/models/resnet50.relay"
HASWELL="cpu -mcpu=haswell -cores=2"
tap_run "lower resnet50's 56x56 1x1 conv for avx512" 0 "$RELAY_TUNE" lower "$R50" --task 1 --target "$AVX512" --emit config
tap_has "avx512: 8 channels by 32 pixels (two vectors) of 3136" "$TMP/out" '"vec_p":1,"tile_oc":[8,8],"tile_p":[98,32]'
tap_run "  for haswell" 0 "$RELAY_TUNE" lower "$R50" --task 1 --target "$HASWELL" --emit config
# 4 channels by 16 pixels would hold 8 accumulators: the channels vectorized
tap_has "avx2: 16 channels (two vectors) by 6 pixels" "$TMP/out" '"vec_p":0,"tile_oc":[4,16],"tile_p":[523,6]'
tap_run "lower its 7x7 1x1 conv for avx512" 0 "$RELAY_TUNE" lower "$R50" --task 22 --target "$AVX512" --emit config
tap_has "49 pixels make no vector: 32 channels (two vectors) by 7 pixels" "$TMP/out" '"vec_p":0,"tile_oc":[16,32],"tile_p":[7,7]'
ASM_MODEL=$R50
asm_check "avx512 1x1" "$AVX512" zmm xxnone 1 16 22
asm_check "haswell 1x1" "$HASWELL" ymm zmm 1 16 22
# tiles with a tail (lower.c's partition): squeezenet's 13x13 3x3 conv
# (5 + 5 + 3 columns on Haswell) and 13x13 1x1 conv (33 tiles of 5 pixels
# and a 4-pixel tail), whose tails' vector loops stay vectorized
SQZ="$top_srcdir/benchmarks/models/squeezenet1_0.relay"
tap_run "squeezenet's 13x13 3x3 conv for haswell" 0 "$RELAY_TUNE" lower "$SQZ" --task 20 --target "$HASWELL" --emit config
tap_has "haswell: 3 column tiles of 5, the last a tail of 3" "$TMP/out" '"tile_ow":[3,5]'
tap_run "  its 13x13 1x1 conv" 0 "$RELAY_TUNE" lower "$SQZ" --task 18 --target "$HASWELL" --emit config
tap_has "haswell: 34 pixel tiles of 5, the last a tail of 4" "$TMP/out" '"tile_p":[34,5]'
ASM_MODEL=$SQZ
asm_check "avx512 tails" "$AVX512" zmm xxnone 0 18 20
asm_check "haswell tails" "$HASWELL" ymm zmm 0 18 20
ASM_MODEL=
# stride-1 depthwise 3x3 convs (mobilenet_v2) in the flat form
# (conv2d_dw_flat.c): each padded plane a 1-D conv, the register tile whole
# vectors of 16 positions whatever the width (the row form's 56-, 28-, 14-
# and 7-wide rows were masked vectors on the stack). Channels x tiles of 16
# by the registers' rule (docs/targets.md): 2 x 4 zmm on AVX-512, 1 x 2
# (two ymm each) on AVX2.
MNV2="$top_srcdir/benchmarks/models/mobilenet_v2.relay"
tap_run "lower a 56x56 depthwise conv for avx512" 0 "$RELAY_TUNE" lower "$MNV2" --task 7 --target "$AVX512" --emit config
tap_has "avx512: 2 channels x 4 tiles of 16 positions" "$TMP/out" '"tile_c":[72,2],"tile_r":[51,4]'
tap_run "  for haswell" 0 "$RELAY_TUNE" lower "$MNV2" --task 7 --target "$HASWELL" --emit config
tap_has "avx2: 1 channel x 2 tiles of 16 positions" "$TMP/out" '"tile_c":[144,1],"tile_r":[102,2]'
ASM_MODEL=$MNV2
asm_check "avx512 depthwise" "$AVX512" zmm xxnone 1 7 12 17 26
asm_check "haswell depthwise" "$HASWELL" ymm zmm 1 7 12 17 26
# the taps unrolled where the tile's weights leave four registers spare
# (AVX-512's 8 + 18 of 32), loops on AVX2 (4 + 9 of 16: gcc spilled weights)
tap_run "lower the 56x56 depthwise conv for avx512 again" 0 "$RELAY_TUNE" lower "$MNV2" --task 7 --target "$AVX512" --emit config
tap_has "avx512: taps unrolled" "$TMP/out" '"unroll_taps":["unroll"]'
tap_run "  the same conv for haswell" 0 "$RELAY_TUNE" lower "$MNV2" --task 7 --target "$HASWELL" --emit config
tap_has "avx2: taps as loops" "$TMP/out" '"unroll_taps":["none"]'
# a channel tile's planes (padded, conv) fit L2: 112x112's two channels
# (2 x 66K) in a 1M L2, one in 64K
tap_run "lower the 112x112 depthwise conv for avx512" 0 "$RELAY_TUNE" lower "$MNV2" --task 1 --target "$AVX512" --emit config
tap_has "1M L2: 2 channels" "$TMP/out" '"tile_c":[16,2]'
tap_run "  with a 64K L2" 0 "$RELAY_TUNE" lower "$MNV2" --task 1 --target "$AVX512 -l2=64K" --emit config
tap_has "64K L2: 1 channel" "$TMP/out" '"tile_c":[32,1]'
# stride-2 depthwise convs (mobilenet's 112, 56, 28 and 14 wide) in the
# same flat form over the padded plane's de-interleaved phases: every tap
# a unit-stride run of one phase, no gathers, no spills
asm_check "avx512 stride-2 depthwise" "$AVX512" zmm xxnone 4 9 14 23
asm_check "haswell stride-2 depthwise" "$HASWELL" ymm zmm 4 9 14 23
no_gathers() { # no_gathers LABEL MODEL TASK: its kernel's assembly for AVX-512 and Haswell
    for tg in "$AVX512" "$HASWELL"; do
        "$RELAY_TUNE" lower "$2" --task "$3" --target "$tg" --emit c >"$TMP/k.c" 2>"$TMP/err" &&
            cc $(cflags "$tg") -S -o "$TMP/k.s" "$TMP/k.c" 2>>"$TMP/err"
        if [ $? -eq 0 ] && ! grep -q gather "$TMP/k.s"; then
            tap_ok "$1 for ${tg#cpu -mcpu=}: no gathers"
        else
            tap_fail "$1 for ${tg#cpu -mcpu=}: no gathers" "$(grep -c gather "$TMP/k.s") $(cat "$TMP/err")"
        fi
    done
}
no_gathers "stride-2 depthwise" "$MNV2" 4
ASM_MODEL=
# resnet18's stride-2 3x3 convs (56x56, 28x28 and 14x14 inputs): the
# register tile vectorizes along the output channels and broadcasts the
# strided columns, so no gathers; its accumulators stay in registers
asm_check "avx512 stride-2 3x3" "$AVX512" zmm xxnone 3 7 11
asm_check "haswell stride-2 3x3" "$HASWELL" ymm zmm 3 7 11
no_gathers "resnet18's 56x56 stride-2 3x3 conv" "$M" 3
no_gathers "the stem (7x7 stride 2)" "$M" 0
# stride-2 1x1 convs as GEMMs too: resnet18's downsample (64 -> 128
# channels, 56x56 -> 28x28: 784 pixels, whole vectors) copies its
# subsampled input once, rows split among threads as the pixel tiles are
tap_run "lower resnet18's stride-2 1x1 conv for avx512" 0 "$RELAY_TUNE" lower "$M" --task 4 --target "$AVX512" --emit config
tap_has "avx512: 16 channels by 16 pixels, pixel tiles outside, input copied" "$TMP/out" \
    '"vec_p":1,"tile_oc":[8,16],"tile_p":[49,16],"pack_weight":1,"order_outer":[1,0],"copy_input":1'
tap_run "  for haswell" 0 "$RELAY_TUNE" lower "$M" --task 4 --target "$HASWELL" --emit config
tap_has "avx2: 16 channels (two vectors) by 6 pixels" "$TMP/out" '"vec_p":0,"tile_oc":[8,16],"tile_p":[131,6]'
tap_has "  the input read in place (a broadcast each)" "$TMP/out" '"copy_input":0'
asm_check "avx512 stride-2 1x1" "$AVX512" zmm xxnone 4
asm_check "haswell stride-2 1x1" "$HASWELL" ymm zmm 4

# ---- row reductions (softmax, layer_norm) run as SIMD reductions ----------
RELAY_TUNE_CACHE="$TMP/cache" "$RELAY_TUNE" compile "$top_srcdir/benchmarks/models/bert_layer.relay" --random-params 1 \
    --target "$AVX512" -o "$TMP/bert.so" >/dev/null 2>"$TMP/err" || tap_fail "compile bert_layer" "$(cat "$TMP/err")"
cat "$TMP"/cache/*.c >"$TMP/bert.c" 2>/dev/null
tap_has "softmax's row max: a simd max reduction (NaN-aware lanes)" "$TMP/bert.c" "#pragma omp simd reduction(rt_max:"
tap_has "its row sum and layer_norm's moments: simd sums" "$TMP/bert.c" "#pragma omp simd reduction(+:"
fl=$(cflags "$AVX512")
: >"$TMP/bert.s"
for c in $(grep -l "reduction(rt_max:" "$TMP"/cache/*.c); do
    cc $fl -S -o "$TMP/one.s" "$c" 2>>"$TMP/err" && cat "$TMP/one.s" >>"$TMP/bert.s"
done
# a NaN-propagating max is a vector max, or a compare and a blend (masked move)
zmax='(vmaxps|vblendmps|vmovaps|vmovups)[^#]*zmm[0-9]+[{]%k'
if grep -Eq "vmaxps.*zmm|$zmax" "$TMP/bert.s" && grep -q "vcmp.*ps.*zmm" "$TMP/bert.s"; then
    tap_ok "the max reduction compiles to zmm compares and max or blend instructions"
else
    tap_fail "the max reduction compiles to zmm compares and max or blend instructions" "$(cat "$TMP/err")"
fi
# relu keeps NaN (as PyTorch) and still vectorizes: its loop is zmm compares and blends
printf '#[version = "0.0.5"]\ndef @main(%%x: Tensor[(4, 256), float32]) { nn.relu(%%x) }\n' >"$TMP/relu.relay"
rm -rf "$TMP/cache"
RELAY_TUNE_CACHE="$TMP/cache" "$RELAY_TUNE" compile "$TMP/relu.relay" --target "$AVX512" -o "$TMP/relu.so" >/dev/null 2>"$TMP/err" ||
    tap_fail "compile the relu model" "$(cat "$TMP/err")"
: >"$TMP/relu.s"
for c in $(grep -l "rt_max_float(p0" "$TMP"/cache/*.c); do
    cc $fl -S -o "$TMP/one.s" "$c" 2>>"$TMP/err" && cat "$TMP/one.s" >>"$TMP/relu.s"
done
if grep -Eq "vmaxps.*zmm|$zmax" "$TMP/relu.s"; then
    tap_ok "relu's loop compiles to zmm max or blend instructions"
else
    tap_fail "relu's loop compiles to zmm max or blend instructions" "$(cat "$TMP/err" "$TMP/relu.s" 2>/dev/null | head -40)"
fi

# global pooling: the plane's two reduction loops fused into one SIMD reduction
cat >"$TMP/gap.relay" <<'EOF'
#[version = "0.0.5"]
def @main(%x: Tensor[(1, 64, 7, 7), float32]) {
  %0 = nn.global_avg_pool2d(%x);
  %1 = nn.adaptive_avg_pool2d(%x, output_size=[1, 1]);
  add(%0, %1)
}
EOF
rm -rf "$TMP/cache"
RELAY_TUNE_CACHE="$TMP/cache" "$RELAY_TUNE" run "$TMP/gap.relay" --random-params 2 --target cpu --output "$TMP/gap.npy" \
    >/dev/null 2>"$TMP/err" || tap_fail "run the pooling model compiled" "$(cat "$TMP/err")"
"$RELAY_TUNE" run "$TMP/gap.relay" --random-params 2 --output "$TMP/gap-ref.npy" >/dev/null 2>&1
cat "$TMP"/cache/*.c >"$TMP/gap.c" 2>/dev/null
tap_has "global pooling sums its 49-element plane as a simd reduction" "$TMP/gap.c" "for (int64_t i1 = 0; i1 < 49; i1++)"
tap_has "  under the reduction pragma" "$TMP/gap.c" "#pragma omp simd reduction(+:"
tap_run "  and matches the interpreter" 0 "$top_builddir/tests/tools/npycmp" "$TMP/gap-ref.npy" "$TMP/gap.npy" 1e-5

# ---- running: only ISAs the host has; refusals ----------------------------
"$RELAY_TUNE" run "$MLP" --random-params 3 --output "$TMP/ref.npy" >/dev/null 2>"$TMP/err" ||
    tap_fail "interpreter reference" "$(cat "$TMP/err")"
for isa in avx512 avx2 sse4.2 x86-64; do
    case "$host:$isa" in
    avx512:*|avx2:avx2|avx2:sse4.2|avx2:x86-64|sse4.2:sse4.2|sse4.2:x86-64|x86-64:x86-64)
        tap_run "run mlp compiled for $isa" 0 "$RELAY_TUNE" run "$MLP" --random-params 3 --target "cpu -isa=$isa" \
            --output "$TMP/$isa.npy"
        tap_run "  $isa matches the interpreter" 0 "$top_builddir/tests/tools/npycmp" "$TMP/ref.npy" "$TMP/$isa.npy" 1e-5 ;;
    *)
        tap_run "compile mlp for $isa (the host cannot run it)" 0 "$RELAY_TUNE" compile "$MLP" --random-params 3 \
            --target "cpu -isa=$isa" -o "$TMP/$isa.so"
        # its packing prologues ran at compile time, built for this host
        if grep -qE '[(][1-9][0-9]* packed at compile time' "$TMP/out"; then tap_ok "  its weights packed at compile time"
        else tap_fail "  its weights packed at compile time" "$(cat "$TMP/out")"; fi ;;
    esac
done
if [ "$host" = avx512 ]; then
    export RELAY_TUNE_MAX_ISA=avx2
    tap_run "capped host: run refuses an avx512 target" 1 "$RELAY_TUNE" run "$MLP" --random-params 3 --target "$AVX512"
    tap_has "names the target and both ISAs" "$TMP/err" "target 'cpu -mcpu=skylake-avx512 -cores=2' plans for avx512 but this host has avx2"
    tap_run "capped host: bench refuses it" 1 "$RELAY_TUNE" bench "$MLP" --target "cpu -isa=avx512"
    tap_run "capped host: tune refuses it" 1 "$RELAY_TUNE" tune "$MLP" --trials 1 --db "$TMP/t.db" --target "cpu -isa=avx512"
    if [ ! -e "$TMP/t.db" ]; then tap_ok "  before creating a database"; else tap_fail "  before creating a database"; fi
    tap_run "capped host: compiling for avx512 is allowed" 0 "$RELAY_TUNE" compile "$MLP" --random-params 3 \
        --target "cpu -isa=avx512" -o "$TMP/m512.so"
    tap_run "capped host: the avx512 model refuses to load" 1 "$RELAY_TUNE" run "$TMP/m512.so" --random-params 3
    tap_has "  saying why" "$TMP/err" "was compiled for avx512, which this host cannot execute (it has avx2)"
    tap_run "capped host: cpu plans for avx2" 0 "$RELAY_TUNE" run "$MLP" --random-params 3 --target cpu \
        --output "$TMP/capped.npy"
    tap_run "  and matches the interpreter" 0 "$top_builddir/tests/tools/npycmp" "$TMP/ref.npy" "$TMP/capped.npy" 1e-5
    unset RELAY_TUNE_MAX_ISA
    # compiled while capped, its weight-packing prologues were built for avx2
    # (the host "could not" run avx512): the packed weights must still be right
    tap_run "uncapped: the avx512 model packed on the capped host runs" 0 "$RELAY_TUNE" run "$TMP/m512.so" \
        --random-params 3 --output "$TMP/m512.npy"
    tap_run "  and matches the interpreter" 0 "$top_builddir/tests/tools/npycmp" "$TMP/ref.npy" "$TMP/m512.npy" 1e-5
else
    for i in 1 2 3 4 5 6 7 8 9 10 11 12; do tap_ok "# SKIP the refusal checks run on an AVX-512 host capped to avx2"; done
fi
tap_done
