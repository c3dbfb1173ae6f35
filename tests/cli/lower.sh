#!/bin/sh
# lower.sh — relay-tune lower: the loop nest, C, trace, space and config of a
# task; configs given as JSON or @file, checked against the space; errors for
# bad tasks, configs and options.
. "$(dirname "$0")/../lib.sh"
M="$top_srcdir/benchmarks/models/resnet18.relay"
# the schedules checked here are an AVX-512 CPU's, whatever the host (tests/cli/isa.sh
# checks other ISAs)
T="cpu -mcpu=skylake-avx512 -cores=2"
check() { # check NAME EXPECTED_RC COMMAND...
    name=$1 want=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ $rc -eq "$want" ]; then tap_ok "$name"; else tap_fail "$name (rc $rc, want $want)" "$(cat "$TMP/err")"; fi
}
has() { # has NAME FILE TEXT
    if grep -qF -- "$3" "$2"; then tap_ok "$1"; else tap_fail "$1" "$(head -40 "$2")"; fi
}
check "lower --help" 0 "$RELAY_TUNE" lower --help
check "lower needs --task" 2 "$RELAY_TUNE" lower "$M"
check "lower a conv task" 0 "$RELAY_TUNE" lower "$M" --target "$T" --task 2
has "a prologue packs the weight" "$TMP/out" "func pack_p1(p0: float32[64, 64, 3, 3], w0: float32[2, 64, 3, 3, 32] out)"
has "the kernel takes the packed weight" "$TMP/out" "w0: float32[2, 64, 3, 3, 32], o0: float32[1, 64, 56, 56] out)"
has "parallel outer loop" "$TMP/out" "parallel for ax0.ax1.o.f.ax2.f in 0..112 {"
has "accumulator tile" "$TMP/out" "alloc l0: float32[1, 1, 8, 32] local"
has "vectorized output channels" "$TMP/out" "vectorized for oc.i in 0..32 {"
# conv + scale + shift + residual + relu: one store to the output
n=$(grep -c 'o0\[' "$TMP/out")
[ "$n" -eq 1 ] && tap_ok "the output is written once" || tap_fail "the output is written once ($n stores)"
check "--emit c" 0 "$RELAY_TUNE" lower "$M" --target "$T" --task 2 --emit c
has "C: OpenMP parallel for" "$TMP/out" "#pragma omp parallel for"
has "C: restrict buffers" "$TMP/out" "const float *restrict p0"
has "C: entry point named by the task hash" "$TMP/out" "int kernel_a7ef5d37c5bd2e5e(void *const *args)"
if cc -std=c11 -fopenmp -fsyntax-only -x c "$TMP/out" 2>"$TMP/cc"; then tap_ok "C: compiles"; else tap_fail "C: compiles" "$(cat "$TMP/cc")"; fi
check "--emit trace" 0 "$RELAY_TUNE" lower "$M" --target "$T" --task 2 --emit trace
has "trace: compute_at" "$TMP/out" "compute_at(conv2d1, relu5, ax3.o)"
check "--emit space" 0 "$RELAY_TUNE" lower "$M" --target "$T" --task 2 --emit space
has "space: tile_oc" "$TMP/out" "tile_oc: split 64 into 2:"
has "space: a reorder knob" "$TMP/out" "order_outer: reorder oc,oh: *[oc,oh] [oh,oc]"
has "space: an annotate knob" "$TMP/out" "unroll_kw: annotate kw: *none unroll"
check "--emit config" 0 "$RELAY_TUNE" lower "$M" --target "$T" --task 2 --emit config
has "config JSON" "$TMP/out" '{"template":"conv2d_nchw","knobs":{"vec_ow":0,"tile_oc":[2,32],"tile_ow":[7,8]'
sed 's/"tile_oc":\[2,32\]/"tile_oc":[4,16]/' "$TMP/out" >"$TMP/cfg.json"
check "--config @file" 0 "$RELAY_TUNE" lower "$M" --target "$T" --task 2 --config "@$TMP/cfg.json"
has "the config's tile" "$TMP/out" "vectorized for oc.i in 0..16 {"
check "--config inline JSON" 0 "$RELAY_TUNE" lower "$M" --target "$T" --task 15 --config '{"knobs":{"tile_x":[125,8],"tile_y":[1,1],"pack_weight":0,"tile_k":[4,128],"order_k":[1,0]}}'
has "dense without packing" "$TMP/out" "func kernel(p0: float32[1, 512], p1: float32[1000, 512], p2: float32[1000], o0: float32[1, 1000] out)"
check "a config outside the space" 1 "$RELAY_TUNE" lower "$M" --target "$T" --task 2 --config '{"knobs":{"tile_oc":[3,3]}}'
has "names the bad knob" "$TMP/err" "config: knob tile_oc has a value outside its candidates"
check "malformed config" 1 "$RELAY_TUNE" lower "$M" --target "$T" --task 2 --config '{'
check "task out of range" 1 "$RELAY_TUNE" lower "$M" --target "$T" --task 99
has "says how many tasks" "$TMP/err" "no task 99 (the model has 16)"
check "unknown --emit" 2 "$RELAY_TUNE" lower "$M" --target "$T" --task 0 --emit asm
check "unknown target" 1 "$RELAY_TUNE" lower "$M" --task 0 --target tpu
tap_done
