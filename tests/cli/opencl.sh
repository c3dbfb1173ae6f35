#!/bin/sh
# opencl.sh — the opencl target at the command line: `relay-tune targets`
# lists this host's OpenCL devices and describes one (limits, identity in
# records); bad device strings are refused by name; `lower --emit c` prints a
# task's OpenCL C (compiled models: opencl_model.sh); a softmax is a reduce_cl
# task on the device, no task on the cpu, and its OpenCL C has work-group
# reductions (__local arrays, barriers) and matches. A build without OpenCL
# refuses the target with that reason; a host without a device skips the
# rest and says why.
. "$(dirname "$0")/../lib.sh"
M="$top_srcdir/benchmarks/models/mlp.relay"

tap_run "targets lists the host" 0 "$RELAY_TUNE" targets
if grep -q "built without OpenCL" "$TMP/out"; then
    tap_run "a build without OpenCL refuses the target" 1 "$RELAY_TUNE" targets opencl
    tap_has "and says what is missing" "$TMP/err" "ocl-icd-opencl-dev"
    tap_done
    exit
fi
if ! grep -q "^opencl -platform=0 -device=0: " "$TMP/out"; then
    echo "1..0 # SKIP no OpenCL device on this host: $(grep '^OpenCL' "$TMP/out")"
    exit 0
fi
tap_ok "targets lists the OpenCL devices"

tap_run "describe the first device" 0 "$RELAY_TUNE" targets opencl "opencl -platform=0 -device=0"
tap_has "its limits" "$TMP/out" "compute units, work-groups of up to"
tap_has "its identity in records" "$TMP/out" "identity in records: device "
tap_run "a device that is not there" 1 "$RELAY_TUNE" targets "opencl -device=77"
tap_has "is named" "$TMP/err" "no such device on this OpenCL platform"
tap_run "a platform that is not there" 1 "$RELAY_TUNE" targets "opencl -platform=9"
tap_has "is named" "$TMP/err" "no such OpenCL platform"
tap_run "an unknown option" 1 "$RELAY_TUNE" targets "opencl -device=0;rm"
tap_has "is refused" "$TMP/err" "take an index"

tap_run "lower --emit c --target opencl" 0 "$RELAY_TUNE" lower "$M" --task 0 --emit c --target opencl
tap_has "prints an OpenCL kernel" "$TMP/out" "__kernel void kernel_"
tap_has "with __global buffers" "$TMP/out" "__global const float *restrict p0"
tap_has "whose work-group index is a bound loop" "$TMP/out" "= rt_item(0);"
tap_has "and so is its work-item index" "$TMP/out" "= rt_item(3);"
tap_has "which are the group and local ids" "$TMP/out" "(a) < 3 ? (long)get_group_id(a) : (long)get_local_id((a) - 3)"
nk=$(grep -c "^__kernel void " "$TMP/out")
nl=$(grep -c "^/\* launch kernel_[0-9a-z_]*: global [0-9x]* local [0-9x]* \*/$" "$TMP/out")
if [ "$nk" -gt 0 ] && [ "$nk" = "$nl" ]; then tap_ok "each of its $nk kernels under its launch's NDRange"
else tap_fail "each kernel under its launch's NDRange" "$nk kernels, $nl launch comments"; fi
tap_run "lower --emit c --target opencl, a conv2d task" 0 "$RELAY_TUNE" lower "$top_srcdir/benchmarks/models/resnet18.relay" --task 1 --emit c --target opencl
if grep -q "^/\* launch kernel_[0-9a-z_]*: global [0-9x]* local [0-9x]* \*/$" "$TMP/out" && grep -q "rt_item(0)" "$TMP/out"; then
    tap_ok "runs over a grid of work-groups"
else tap_fail "runs over a grid of work-groups" "$(grep -n "launch\|rt_item\|get_" "$TMP/out" | head)"; fi
if grep -q "#pragma omp" "$TMP/out"; then tap_fail "no OpenMP in OpenCL C"; else tap_ok "no OpenMP in OpenCL C"; fi
R18="$top_srcdir/benchmarks/models/resnet18.relay"
tap_run "the device template's space" 0 "$RELAY_TUNE" lower "$R18" --task 3 --emit space --target opencl
tap_has "has the work-group knob" "$TMP/out" "wg_items: choice: 1 2 4"
tap_run "its config" 0 "$RELAY_TUNE" lower "$R18" --task 3 --emit config --target opencl
tap_has "names the device template" "$TMP/out" '{"template":"conv2d_nchw_cl",'
sed 's/"wg_items":[0-9]*/"wg_items":2/' "$TMP/out" > "$TMP/cfg.json"
tap_run "lower under a config of that space" 0 "$RELAY_TUNE" lower "$R18" --task 3 --emit c --target opencl --config "@$TMP/cfg.json"
tap_has "takes its work-group shape" "$TMP/out" " local 2 */"
# the knob vec (targets/lang_opencl.c's vector types): its candidates go up
# to the device's preferred float width; 8 is one where that is 8 or more
tap_run "the device template's vector knob" 0 "$RELAY_TUNE" lower "$R18" --task 3 --emit space --target opencl
tap_has "is a choice from scalar work-items up" "$TMP/out" "vec: choice: 1 "
if grep -q "^ *vec: choice: 1 .*\b8\b" "$TMP/out"; then vec=8; else vec=$(sed -n 's/^ *vec: choice: 1 \*\{0,1\}\([0-9]*\).*/\1/p' "$TMP/out"); fi
sed "s/\"vec\":[0-9]*/\"vec\":$vec/" "$TMP/cfg.json" > "$TMP/vec.json"
tap_run "lower a conv with vec $vec" 0 "$RELAY_TUNE" lower "$R18" --task 3 --emit c --target opencl --config "@$TMP/vec.json"
if grep "^ *rt_vstore$vec(.*rt_vload$vec(w0 + " "$TMP/out" | grep -q "((float$vec)("; then
    tap_ok "its accumulators, weights and broadcast inputs are float$vec vectors"
else tap_fail "its accumulators, weights and broadcast inputs are float$vec vectors" "$(grep -n "rt_v\|float" "$TMP/out" | tail -5)"; fi
sed 's/"vec":[0-9]*/"vec":1/' "$TMP/cfg.json" > "$TMP/vec1.json"
tap_run "lower a conv with vec 1" 0 "$RELAY_TUNE" lower "$R18" --task 3 --emit c --target opencl --config "@$TMP/vec1.json"
if grep -q "^ *rt_vstore" "$TMP/out"; then tap_fail "prints scalar work-items" "$(grep -n "^ *rt_vstore" "$TMP/out" | head -3)"
else tap_ok "prints scalar work-items"; fi
tap_run "the cpu target" 0 "$RELAY_TUNE" lower "$R18" --task 3 --emit config
tap_has "keeps the CPU template" "$TMP/out" '{"template":"conv2d_nchw",'

# On a device, functions without an anchor whose device template has knobs
# are tasks too, after the anchored ones (tuner/task.c): with -wg-reduce=1
# softmax rows are work-group reductions (reduce_cl): `tasks` names the
# template, `lower --emit c` prints its __local arrays and barriers (that
# the cpu's kernels have neither, tests/codegen/test_opencl checks); by
# default only on a device that is not a cpu. The cpu's task list stays
# what it was: the anchored tasks only, the golden lists of
# tests/tuner/tasks.sh.
cat >"$TMP/softmax.relay" <<'R'
def @main(%x: Tensor[(5, 1000), float32]) {
  nn.softmax(%x)
}
R
export RELAY_TUNE_CACHE="$TMP/cache"
WG="opencl -wg-reduce=1"
tap_run "tasks of a softmax --target '$WG'" 0 "$RELAY_TUNE" tasks "$TMP/softmax.relay" --target "$WG" --space
if grep -q "^0 .* reduce_cl .* 5x1000$" "$TMP/out"; then tap_ok "the softmax is a reduce_cl task"
else tap_fail "the softmax is a reduce_cl task" "$(cat "$TMP/out")"; fi
tap_has "the work-group size of its reduction is a knob" "$TMP/out" "wg_reduce: choice: 2 4 "
if grep -q "^ *wg_rows: choice: \*1 2 4$" "$TMP/out"; then tap_ok "and so are its rows a work-group (up to its 5 rows)"
else tap_fail "and so are its rows a work-group (up to its 5 rows)" "$(grep wg_rows "$TMP/out")"; fi
tap_has "and its vector width" "$TMP/out" "vec: choice: 1 "
tap_run "lower the reduction task --emit c" 0 "$RELAY_TUNE" lower "$TMP/softmax.relay" --task 0 --emit c --target "$WG"
tap_has "its OpenCL C has __local arrays" "$TMP/out" "__local float s0["
tap_has "and barriers" "$TMP/out" "barrier(CLK_LOCAL_MEM_FENCE);"
tap_has "launched one work-group a row" "$TMP/out" "global 320 local 64, __local 512 bytes"
tap_run "lower it under a config in float4" 0 "$RELAY_TUNE" lower "$TMP/softmax.relay" --task 0 \
    --emit c --target "$WG" --config '{"knobs":{"wg_reduce":64,"wg_rows":1,"vec":4}}'
tap_has "stores float4 vectors" "$TMP/out" "rt_vstore4("
tap_run "the softmax on the cpu target" 0 "$RELAY_TUNE" tasks "$TMP/softmax.relay"
tap_has "is no task" "$TMP/out" "0 tasks, 0 calls"
tap_run "bert_layer's tasks on the cpu" 0 "$RELAY_TUNE" tasks "$top_srcdir/benchmarks/models/bert_layer.relay"
cp "$TMP/out" "$TMP/cpu_tasks"
tap_run "and on the device" 0 "$RELAY_TUNE" tasks "$top_srcdir/benchmarks/models/bert_layer.relay" --target opencl
ncpu=$(($(wc -l <"$TMP/cpu_tasks") - 2))
head -n $((ncpu + 1)) "$TMP/cpu_tasks" >"$TMP/cpu_head"
head -n $((ncpu + 1)) "$TMP/out" >"$TMP/dev_head"
if [ "$ncpu" -gt 0 ] && cmp -s "$TMP/cpu_head" "$TMP/dev_head" && ! grep -q "default_cl\|reduce_cl" "$TMP/cpu_tasks" &&
    grep -q "default_cl" "$TMP/out"; then
    tap_ok "the device lists the cpu's $ncpu tasks first, then its own"
else tap_fail "the device lists the cpu's tasks first, then its own" "$(cat "$TMP/cpu_tasks" "$TMP/out")"; fi
tap_run "compile a softmax --target '$WG'" 0 "$RELAY_TUNE" compile "$TMP/softmax.relay" --target "$WG" -o "$TMP/sm.so"
strings "$TMP/sm.so" > "$TMP/sm.txt"
tap_has "its kernel declares __local arrays" "$TMP/sm.txt" "__local float s0["
tap_has "and waits at work-group barriers" "$TMP/sm.txt" "barrier(CLK_LOCAL_MEM_FENCE);"
tap_has "its launch: one work-group a row, with its local memory" "$TMP/sm.txt" "global 320 local 64, __local 512 bytes"
"$RELAY_TUNE" run "$TMP/softmax.relay" --random-params 3 --output-dir "$TMP/si" >/dev/null 2>"$TMP/err"
tap_run "run it on the device" 0 "$RELAY_TUNE" run "$TMP/softmax.relay" --random-params 3 --target "$WG" --output-dir "$TMP/sc"
tap_run "which matches the interpreter" 0 "$top_builddir/tests/tools/npycmp" "$TMP/sc/0.npy" "$TMP/si/0.npy" 1e-4
tap_run "compile it --target opencl" 0 "$RELAY_TUNE" compile "$TMP/softmax.relay" --target opencl -o "$TMP/sm0.so"
strings "$TMP/sm0.so" > "$TMP/sm0.txt"
"$RELAY_TUNE" targets > "$TMP/targets.txt"
if grep -q "^opencl -platform=0 -device=0: .*(cpu)$" "$TMP/targets.txt"; then
    # (the prelude's vector loads name __local too: look for arrays and barriers)
    if grep -q "__local float\|barrier(CLK" "$TMP/sm0.txt"; then
        tap_fail "a cpu device keeps one work-item a row" "$(grep -n "__local float\|barrier(CLK" "$TMP/sm0.txt" | head -2)"
    else tap_ok "a cpu device keeps one work-item a row (no __local)"; fi
else
    tap_has "a device that is no cpu takes work-group reductions" "$TMP/sm0.txt" "__local float s0["
fi
tap_run "-wg-reduce takes 0 or 1" 1 "$RELAY_TUNE" targets "opencl -wg-reduce=3"
tap_has "and says so" "$TMP/err" "-wg-reduce takes 0 or 1"

# dense_cl (schedule/templates/dense_cl.c): 2-D work-groups, and with the
# knob local_stage the k block's tiles of both operands staged in __local
# memory (cache_read) between barriers; the cpu target's C has neither.
BERT="$top_srcdir/benchmarks/models/bert_layer.relay"
tap_run "the dense device template's space" 0 "$RELAY_TUNE" lower "$BERT" --task 0 --emit space --target opencl
tap_has "has the work-group shape" "$TMP/out" "wg_m: choice: 1 2 "
tap_has "of two axes" "$TMP/out" "wg_n: choice: 1 2 "
tap_has "and local-memory staging" "$TMP/out" "local_stage: choice: "
tap_run "its config" 0 "$RELAY_TUNE" lower "$BERT" --task 0 --emit config --target opencl
tap_has "names dense_cl" "$TMP/out" '{"template":"dense_cl",'
# staged WHAT MODEL TASK SED LAUNCH ARRAY: task TASK of MODEL under the
# config in $TMP/out with local_stage 1 (and the edits SED) stages its tiles
# in __local arrays (ARRAY) between barriers, launched as LAUNCH (a grep
# pattern); with local_stage 0 it stages nothing.
staged() {
    sed "s/\"local_stage\":[01]/\"local_stage\":1/; $4" "$TMP/out" > "$TMP/stage1.json"
    sed 's/"local_stage":[01]/"local_stage":0/' "$TMP/out" > "$TMP/stage0.json"
    tap_run "lower the $1 with local_stage 1" 0 "$RELAY_TUNE" lower "$2" --task "$3" --emit c --target opencl --config "@$TMP/stage1.json"
    tap_has "its tiles are __local arrays" "$TMP/out" "$6"
    tap_has "between barriers" "$TMP/out" "barrier(CLK_LOCAL_MEM_FENCE);"
    if grep -q "$5" "$TMP/out"; then tap_ok "launched over 2-D work-groups with their local memory"
    else tap_fail "launched over 2-D work-groups with their local memory" "$(grep -n "launch" "$TMP/out" | head -3)"; fi
    tap_run "lower it with local_stage 0" 0 "$RELAY_TUNE" lower "$2" --task "$3" --emit c --target opencl --config "@$TMP/stage0.json"
    if grep -q "__local float\|barrier(CLK" "$TMP/out"; then tap_fail "stages nothing" "$(grep -n "__local float\|barrier(CLK" "$TMP/out" | head -2)"
    else tap_ok "stages nothing"; fi
}
staged dense "$BERT" 0 "" "^/\* launch kernel_[0-9a-z]*: global [0-9]*x[0-9]* local [0-9]*x[0-9]*, __local [0-9]* bytes \*/$" "__local float s0["
# conv2d_nchw_cl (schedule/templates/conv2d_cl.c): 2-D work-groups of output
# channels x pixels, and with local_stage each input-channel block's patch
# and weights staged in __local memory between barriers; a cpu device's
# default stages nothing. Task 6 is resnet18's 3x3 conv of 128 channels.
tap_run "the conv device template's space" 0 "$RELAY_TUNE" lower "$R18" --task 6 --emit space --target opencl
tap_has "has a work-group shape over channels" "$TMP/out" "wg_oc: choice: "
tap_has "and pixels" "$TMP/out" "wg_px: choice: "
tap_has "per-work-item tiles" "$TMP/out" "tile_px: choice: 1 2 "
tap_has "and local-memory staging" "$TMP/out" "local_stage: choice: "
tap_run "its config" 0 "$RELAY_TUNE" lower "$R18" --task 6 --emit config --target opencl
tap_has "names conv2d_nchw_cl" "$TMP/out" '{"template":"conv2d_nchw_cl",'
cpu_dev=$("$RELAY_TUNE" targets opencl | grep -c "(cpu,")
if [ "$cpu_dev" -gt 0 ]; then tap_has "a cpu device's default stages nothing" "$TMP/out" '"local_stage":0'
else tap_has "a device that is no cpu stages by default" "$TMP/out" '"local_stage":1'; fi
staged conv "$R18" 6 's/"wg_oc":[0-9]*/"wg_oc":4/; s/"wg_px":[0-9]*/"wg_px":4/; s/"tile_oc":[0-9]*/"tile_oc":4/; s/"tile_ic":[0-9]*/"tile_ic":8/' \
    "^/\* launch kernel_[0-9a-z]*: global [0-9]*x[0-9]*x[0-9]* local 4x4x1, __local [0-9]* bytes \*/$" "__local float s1["
tap_run "-local-stage=1 makes staging the conv's default" 0 "$RELAY_TUNE" lower "$R18" --task 6 --emit config --target "opencl -local-stage=1"
tap_has "local_stage 1" "$TMP/out" '"local_stage":1'
# batch_matmul_cl (schedule/templates/batch_matmul_cl.c): dense_cl's 2-D
# work-groups over each batch element (group axis 2) and its staged k-block
# tiles; bert's scores (task 1: the right operand stored k innermost) and
# its context (task 2).
tap_run "the batch_matmul device template's space" 0 "$RELAY_TUNE" lower "$BERT" --task 1 --emit space --target opencl
tap_has "has the work-group shape" "$TMP/out" "wg_m: choice: 1 2 "
tap_has "of two axes" "$TMP/out" "wg_n: choice: 1 2 "
tap_has "an unroll" "$TMP/out" "unroll_k: choice: "
tap_has "a vector width" "$TMP/out" "vec: choice: 1 "
tap_has "and local-memory staging" "$TMP/out" "local_stage: choice: "
for task in 1 2; do
    tap_run "its config (task $task)" 0 "$RELAY_TUNE" lower "$BERT" --task $task --emit config --target opencl
    tap_has "names batch_matmul_cl" "$TMP/out" '{"template":"batch_matmul_cl",'
    # (tile_n 16: the default follows the device's vector width, and 32 on
    # an AVX-512 host's PoCL leaves the context's 64 columns two tiles)
    staged "batch_matmul (task $task)" "$BERT" $task 's/"wg_m":[0-9]*/"wg_m":4/; s/"wg_n":[0-9]*/"wg_n":4/; s/"tile_n":[0-9]*/"tile_n":16/' \
        "^/\* launch kernel_[0-9a-z]*: global [0-9]*x[0-9]*x12 local 4x4x1, __local [0-9]* bytes \*/$" "__local float s1["
done
# Grouped convs and the direct form's depthwise convs (dilated) take
# conv2d_nchw_cl's form under their own names: with local_stage the
# input patch and weights a work-group's channels share are staged.
printf '%s\n' '#[version = "0.0.5"]' 'def @main(%x: Tensor[(1, 8, 9, 9), float32], %w: Tensor[(16, 4, 3, 3), float32]) { nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=2) }' > "$TMP/gconv.relay"
printf '%s\n' '#[version = "0.0.5"]' 'def @main(%x: Tensor[(1, 8, 13, 13), float32], %w: Tensor[(8, 1, 3, 3), float32]) { nn.conv2d(%x, %w, padding=[2, 2, 2, 2], dilation=[2, 2], groups=8) }' > "$TMP/dwconv.relay"
for kind in gconv:group_conv2d_nchw_cl dwconv:depthwise_conv2d_nchw_cl; do
    f=${kind%%:*}; name=${kind#*:}
    tap_run "the $name space" 0 "$RELAY_TUNE" lower "$TMP/$f.relay" --task 0 --emit space --target opencl
    tap_has "has a work-group shape over channels" "$TMP/out" "wg_oc: choice: "
    tap_has "and local-memory staging" "$TMP/out" "local_stage: choice: "
    tap_run "its config" 0 "$RELAY_TUNE" lower "$TMP/$f.relay" --task 0 --emit config --target opencl
    tap_has "names $name" "$TMP/out" "{\"template\":\"$name\","
    staged "$name" "$TMP/$f.relay" 0 's/"wg_oc":[0-9]*/"wg_oc":2/; s/"wg_px":[0-9]*/"wg_px":4/' \
        "^/\* launch kernel_[0-9a-z]*: global [0-9]*x[0-9]*x[0-9]* local [0-9]*x2x1, __local [0-9]* bytes \*/$" "__local float s1["
done
# mobilenet_v2's depthwise convs (task 1: 32 channels at 112 x 112): a
# device that stages (-local-stage=1, or one that is no cpu) takes them in
# the direct form, tiled on 2-D work-groups with its patch staged; a cpu
# device that does not stage keeps the flat form, without local_stage.
MB="$top_srcdir/benchmarks/models/mobilenet_v2.relay"
tap_run "mobilenet's depthwise conv when the device stages" 0 "$RELAY_TUNE" lower "$MB" --task 1 --emit space --target "opencl -local-stage=1"
tap_has "is depthwise_conv2d_nchw_cl's direct form" "$TMP/out" "template depthwise_conv2d_nchw_cl (version 4)"
tap_has "with a work-group shape over channels" "$TMP/out" "wg_oc: choice: "
tap_has "and staging on by default" "$TMP/out" "local_stage: choice: 0 *1"
tap_run "its OpenCL C" 0 "$RELAY_TUNE" lower "$MB" --task 1 --emit c --target "opencl -local-stage=1"
tap_has "stages the patch in __local memory" "$TMP/out" "__local float s1["
tap_has "between barriers" "$TMP/out" "barrier(CLK_LOCAL_MEM_FENCE);"
if grep -q "^/\* launch kernel_[0-9a-z]*: global [0-9]*x[0-9]*x112 local [0-9]*x[0-9]*x1, __local [0-9]* bytes \*/$" "$TMP/out"; then
    tap_ok "over 2-D work-groups of channels x pixels, a row a group"
else tap_fail "over 2-D work-groups of channels x pixels, a row a group" "$(grep -n "launch" "$TMP/out" | head -3)"; fi
tap_run "mobilenet's depthwise conv by default" 0 "$RELAY_TUNE" lower "$MB" --task 1 --emit space --target opencl
if [ "$cpu_dev" -gt 0 ]; then tap_has "a cpu device keeps the flat form" "$TMP/out" "tile_c: "
else tap_has "a device that is no cpu takes the direct form" "$TMP/out" "local_stage: choice: 0 *1"; fi
tap_run "lower the dense for the cpu target" 0 "$RELAY_TUNE" lower "$BERT" --task 0 --emit c
if grep -q "__local\|barrier(" "$TMP/out"; then tap_fail "its C has no __local memory or barrier" "$(grep -n "__local\|barrier(" "$TMP/out" | head -2)"
else tap_ok "its C has no __local memory or barrier"; fi

tap_done
