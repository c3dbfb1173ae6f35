#!/bin/sh
# options.sh — the option table that run, compile, bench, tune, opt, tasks
# and lower share (cli/options.c): the same weight options in every command
# that takes a model, one message for a bad value of a shared option,
# bench's --random-params and --input, lower's weights, and tune's checks
# before it starts anything.
. "$(dirname "$0")/../lib.sh"
# a cache folder that does not exist yet: the first compile makes it (the
# model's weights are written into it before any kernel is built)
RELAY_TUNE_CACHE="$TMP/new/cache"
export RELAY_TUNE_CACHE
printf 'def @main(%%x: Tensor[(2, 3), float32], %%w: Tensor[(2, 3), float32], %%b: Tensor[(2, 3), float32]) {\n  add(multiply(%%x, %%w), %%b)\n}\n' >"$TMP/m.relay"
printf 'def @main(%%x: Tensor[(2, 3), float32]) { %%x }\n' >"$TMP/id.relay"
# two weight files, one array each, and an input
"$RELAY_TUNE" run "$TMP/id.relay" --random-params 1 --output "$TMP/w.npy" >/dev/null 2>&1
"$RELAY_TUNE" run "$TMP/id.relay" --random-params 2 --output "$TMP/x.npy" >/dev/null 2>&1
(cd "$TMP" && cp w.npy b.npy && rm -f w.npz b.npz && zip -q w.npz w.npy && zip -q b.npz b.npy) 2>/dev/null
if [ ! -s "$TMP/w.npz" ] || [ ! -s "$TMP/b.npz" ]; then
    tap_fail "weight files for the checks (zip)"
    tap_done
    exit
fi

for cmd in run compile bench tune opt tasks lower; do
    tap_run "$cmd: a bad --random-params seed is a usage error" 2 "$RELAY_TUNE" $cmd "$TMP/m.relay" --random-params -3 --trials 1
    tap_has "$cmd: the seed's message" "$TMP/err" "$cmd: --random-params needs a seed (a non-negative integer), not '-3'"
    tap_run "$cmd: an unknown option" 2 "$RELAY_TUNE" $cmd --frobnicate "$TMP/m.relay"
    tap_has "$cmd: names it" "$TMP/err" "$cmd: unknown option '--frobnicate'"
    tap_run "$cmd: --params without its value" 2 "$RELAY_TUNE" $cmd "$TMP/m.relay" --params
    tap_has "$cmd: says it needs a value" "$TMP/err" "$cmd: --params needs a value"
    tap_run "$cmd: two models" 2 "$RELAY_TUNE" $cmd "$TMP/m.relay" "$TMP/id.relay"
    tap_has "$cmd: says so" "$TMP/err" "more than one model file"
    tap_run "$cmd --help" 0 "$RELAY_TUNE" $cmd --help
    tap_has "$cmd --help documents --params" "$TMP/out" "--params W.npz"
    tap_has "$cmd --help documents --random-params" "$TMP/out" "--random-params S"
done

# --params given twice: each file binds its array
tap_run "run: --params twice" 0 "$RELAY_TUNE" run "$TMP/m.relay" --params "$TMP/w.npz" --params "$TMP/b.npz" \
    --input x="$TMP/x.npy"
tap_run "compile: --params twice" 0 "$RELAY_TUNE" compile "$TMP/m.relay" --params "$TMP/w.npz" --params "$TMP/b.npz" \
    -o "$TMP/m.so"
tap_has "both files are weights: one input left" "$TMP/out" "1 inputs, 1 outputs; 2 weights"
tap_run "bench: --params twice" 0 "$RELAY_TUNE" bench "$TMP/m.relay" --params "$TMP/w.npz" --params "$TMP/b.npz" --repeat 1
tap_run "compile: --params and --random-params for the rest" 0 "$RELAY_TUNE" compile "$TMP/m.relay" --params "$TMP/w.npz" \
    --random-params 3 -o "$TMP/m2.so"
tap_has "the rest are seeded weights" "$TMP/out" "1 inputs, 1 outputs; 2 weights"

# bench: --random-params seeds weights and inputs; --input gives an input
tap_run "bench --random-params" 0 "$RELAY_TUNE" bench "$TMP/m.relay" --random-params 7 --repeat 2 --warmup 0
tap_has "it benchmarks" "$TMP/out" "median"
tap_run "bench --input on a .so" 0 "$RELAY_TUNE" bench "$TMP/m.so" --input x="$TMP/x.npy" --repeat 1
tap_run "bench: a malformed --input" 2 "$RELAY_TUNE" bench "$TMP/m.so" --input x
tap_has "says what it takes" "$TMP/err" "bench: --input takes NAME=FILE.npy, not 'x'"
tap_run "bench: an --input of no parameter" 1 "$RELAY_TUNE" bench "$TMP/m.so" --input nope="$TMP/x.npy" --repeat 1
tap_run "bench: --params on a .so" 2 "$RELAY_TUNE" bench "$TMP/m.so" --params "$TMP/w.npz"

# numbers: one reader, one message per kind
tap_run "tune: --trials is required" 2 "$RELAY_TUNE" tune "$TMP/m.relay"
tap_has "says so" "$TMP/err" "tune: --trials N or --time-budget DURATION is required"
tap_run "tune: a fractional --trials" 2 "$RELAY_TUNE" tune "$TMP/m.relay" --trials 2.5
tap_has "says what it takes" "$TMP/err" "tune: --trials takes a whole number of at least 0, not '2.5'"
tap_run "tune: a --timeout under its least" 2 "$RELAY_TUNE" tune "$TMP/m.relay" --trials 1 --timeout 0
tap_has "names the least" "$TMP/err" "tune: --timeout needs a number of at least 0.001, not '0'"
tap_run "tune: a bad --progress" 2 "$RELAY_TUNE" tune "$TMP/m.relay" --trials 1 --progress loud
tap_has "lists the modes" "$TMP/err" "--progress takes auto, live, lines or none"
tap_run "bench: --repeat 0" 2 "$RELAY_TUNE" bench "$TMP/m.so" --repeat 0
tap_has "gives the range" "$TMP/err" "bench: --repeat takes a whole number from 1 to 1000000, not '0'"
# lower and tasks bind weights alike, so they number the same tasks
printf 'def @main(%%x: Tensor[(1, 8), float32], %%w: Tensor[(4, 8), float32]) { nn.relu(nn.dense(%%x, %%w)) }\n' >"$TMP/d.relay"
tap_run "tasks --random-params" 0 "$RELAY_TUNE" tasks "$TMP/d.relay" --random-params 1
tap_has "one dense task" "$TMP/out" "1 tasks"
tap_run "lower --random-params" 0 "$RELAY_TUNE" lower "$TMP/d.relay" --random-params 1 --task 0 --emit config
tap_has "lowers it" "$TMP/out" "knobs"
tap_run "lower: --task is required" 2 "$RELAY_TUNE" lower "$TMP/d.relay" --random-params 1
tap_run "lower: a bad --task" 2 "$RELAY_TUNE" lower "$TMP/d.relay" --task -1
tap_has "says what it takes" "$TMP/err" "lower: --task takes a whole number of at least 0, not '-1'"
tap_run "opt --list-passes needs no model" 0 "$RELAY_TUNE" opt --list-passes
tap_has "lists them" "$TMP/out" "fuse-ops"
tap_run "opt --check SEED" 0 "$RELAY_TUNE" opt "$TMP/d.relay" --check 5 --no-types
tap_run "opt --check without a seed, before the model" 0 "$RELAY_TUNE" opt --check "$TMP/d.relay"
tap_run "opt: --max-fuse-depth 0" 2 "$RELAY_TUNE" opt "$TMP/d.relay" --max-fuse-depth 0
tap_has "gives the least" "$TMP/err" "opt: --max-fuse-depth takes a whole number of at least 1, not '0'"
# parse and import read the table too, without weight options
tap_run "parse: weights are not its business" 2 "$RELAY_TUNE" parse "$TMP/m.relay" --params "$TMP/w.npz"
tap_has "an unknown option there" "$TMP/err" "parse: unknown option '--params'"
tap_run "parse: two files" 2 "$RELAY_TUNE" parse "$TMP/m.relay" "$TMP/id.relay"
tap_has "says so" "$TMP/err" "parse: more than one model file"
tap_run "parse --no-types -o" 0 "$RELAY_TUNE" parse --no-types "$TMP/m.relay" -o "$TMP/p.relay"
grep -q 'ty=' "$TMP/p.relay" && tap_fail "--no-types drops the types" "$(cat "$TMP/p.relay")" || tap_ok "--no-types drops the types"
tap_run "import: --params-out without its value" 2 "$RELAY_TUNE" import "$TMP/x.onnx" --params-out
tap_has "says it needs a value" "$TMP/err" "import: --params-out needs a value"
tap_run "an option of another command" 2 "$RELAY_TUNE" run "$TMP/m.relay" --trials 3
tap_has "is unknown here" "$TMP/err" "run: unknown option '--trials'"
tap_done
