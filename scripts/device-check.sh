#!/bin/sh
# device-check.sh — relay-tune on this host's OpenCL GPU (docs/opencl.md,
# "The device check"): builds, runs the OpenCL tests, tunes resnet18 on the
# first GPU device that `relay-tune targets` lists for a short while, and
# ends in a table of each task's GFLOP/s with its default and its tuned
# config, and the model's end-to-end latency (bench median) with the
# defaults and tuned. A host without an OpenCL GPU says so, names the devices
# it has, and exits 0; --allow-cpu takes the first CPU device instead (PoCL),
# to try the script where no GPU is at hand.
#
# usage: scripts/device-check.sh [--allow-cpu] [--trials N] [--model M.relay]
#                                [--no-build] [--no-tests] [--dir DIR]
#   --trials N    tuning trials over all tasks (default 160: resnet18's 16
#                 tasks' defaults and 144 more)
#   --model M     the model to tune (default benchmarks/models/resnet18.relay)
#   --no-build    use the build in the tree as it is
#   --no-tests    skip the OpenCL tests
#   --dir DIR     where the database, the cache and the logs go (default a
#                 new folder under ${TMPDIR:-/tmp}; kept, and named at the end)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
allow_cpu=0 trials=160 model="$root/benchmarks/models/resnet18.relay" build=1 tests=1 dir=
while [ $# -gt 0 ]; do
    case "$1" in
    --allow-cpu) allow_cpu=1 ;;
    --trials) trials=${2:?--trials needs a number}; shift ;;
    --model) model=${2:?--model needs a file}; shift ;;
    --no-build) build=0 ;;
    --no-tests) tests=0 ;;
    --dir) dir=${2:?--dir needs a folder}; shift ;;
    -h | --help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "device-check: unknown option $1 (--help lists them)" >&2; exit 2 ;;
    esac
    shift
done
case "$trials" in '' | *[!0-9]*) echo "device-check: --trials takes a number" >&2; exit 2 ;; esac
[ -f "$model" ] || { echo "device-check: no model $model" >&2; exit 2; }
say() { printf '\n== %s\n' "$*"; }
cd "$root" || exit 1
jobs=$(nproc 2>/dev/null || echo 2)

if [ $build = 1 ]; then
    say "build"
    [ -x configure ] || ./autogen.sh >/dev/null || exit 1
    [ -f Makefile ] || ./configure -q || exit 1
    make -j"$jobs" -s >/dev/null || { echo "device-check: the build failed" >&2; exit 1; }
fi
RT="$root/relay-tune"
[ -x "$RT" ] || { echo "device-check: no relay-tune in $root (build first)" >&2; exit 1; }

# the device: the first GPU (or, with --allow-cpu, the first CPU device)
list=$("$RT" targets 2>&1 | grep '^opencl -platform=' || true)
target=$(printf '%s\n' "$list" | grep ' (gpu)$' | head -1 | sed 's/: .*//')
if [ -z "$target" ] && [ $allow_cpu = 1 ]; then
    target=$(printf '%s\n' "$list" | grep ' (cpu)$' | head -1 | sed 's/: .*//')
fi
if [ -z "$target" ]; then
    echo "device-check: no OpenCL GPU on this host; nothing to check."
    if [ -n "$list" ]; then
        echo "OpenCL devices found (none a GPU; --allow-cpu takes a CPU device):"
        printf '%s\n' "$list" | sed 's/^/  /'
    else
        echo "OpenCL: $("$RT" targets 2>&1 | grep '^OpenCL' || echo 'no platform')"
    fi
    exit 0
fi
say "device: $(printf '%s\n' "$list" | grep -F "$target:" | head -1)"
"$RT" targets "$target" | sed 's/^/  /'

if [ $tests = 1 ]; then
    say "the OpenCL tests"
    make -j"$jobs" check TESTS='tests/cli/opencl.sh tests/codegen/test_opencl tests/cli/opencl_model.sh
        tests/tuner/test_tune_cl tests/tuner/tune_opencl.sh' 2>&1 | grep -E '^(PASS|FAIL|SKIP|ERROR|# )' |
        grep -Ev '^PASS' || true
fi

[ -n "$dir" ] || dir=$(mktemp -d "${TMPDIR:-/tmp}/device-check-XXXXXX")
mkdir -p "$dir"
export RELAY_TUNE_CACHE="$dir/cache"
db="$dir/tune.db"
name=$(basename "$model" .relay)
say "tune $name on $target: $trials trials (log: $dir/tune.err)"
t0=$(date +%s)
"$RT" tune "$model" --random-params 0 --target "$target" --trials "$trials" --db "$db" --progress lines \
    >"$dir/tune.out" 2>"$dir/tune.err" || { echo "device-check: tuning failed:" >&2; tail -5 "$dir/tune.err" >&2; exit 1; }
secs=$(($(date +%s) - t0))
tail -4 "$dir/tune.out"

say "bench $name: defaults, then tuned"
median() { sed -n 's/.* median \([0-9.]*\) ms.*/\1/p' "$1"; }
"$RT" bench "$model" --random-params 0 --target "$target" --repeat 20 --warmup 3 >"$dir/bench-default.out" 2>&1
"$RT" bench "$model" --random-params 0 --target "$target" --db "$db" --repeat 20 --warmup 3 \
    >"$dir/bench-tuned.out" 2>&1
def=$(median "$dir/bench-default.out") tuned=$(median "$dir/bench-tuned.out")

say "result: $name on $(printf '%s\n' "$list" | grep -F "$target:" | head -1 | sed 's/^[^:]*: //')"
printf '%-4s %-17s %-14s %5s %10s %10s %8s\n' task hash template calls "default" tuned speedup
printf '%-4s %-17s %-14s %5s %10s %10s %8s\n' "" "" "" "" GFLOP/s GFLOP/s ""
# the tune table's rows: task, hash, template, calls, default, best, speedup
awk '/^[0-9]+ +[0-9a-f]+ / { printf "%-4s %-17s %-14s %5s %10s %10s %8s\n", $1, $2, $3, $4, $5, $6, $7 }' \
    "$dir/tune.out"
printf 'end to end (bench median of 20): default %s ms, tuned %s ms' "${def:--}" "${tuned:--}"
if [ -n "$def" ] && [ -n "$tuned" ]; then
    awk -v d="$def" -v t="$tuned" 'BEGIN { if (t > 0) printf " (%.2fx)", d / t }'
fi
printf '\ntuning: %s trials in %s s; database %s\n' "$trials" "$secs" "$db"
