#!/bin/sh
# suite-times.sh [BUILDDIR [N]] — the N slowest tests (all when N is 0) of the
# last `make check` in BUILDDIR (default: the current directory), from the
# FILE.time lines tests/timed.sh wrote: wall and CPU seconds each, then the
# totals and the shortest a run on J cores could take (the longest test, or
# the CPU total over J, whichever is larger; J is $JOBS, default 2). A Markdown
# table, so that docs/testing.md can quote it as it is.
dir=${1:-.}
n=${2:-0}
jobs=${JOBS:-2}
files=$(find "$dir/tests" -name '*.time' 2>/dev/null | sort)
if [ -z "$files" ]; then
    echo "suite-times.sh: no timings under $dir/tests (run make check there first)" >&2
    exit 1
fi
# shellcheck disable=SC2086
cat $files | sort -k1,1 -g -r | awk -v n="$n" -v jobs="$jobs" '
    { wall += $1; cpu += $2; if ($1 > longest) longest = $1; count++
      if (n == 0 || count <= n) rows[count] = sprintf("| %s | %.1f | %.1f |", $3, $1, $2) }
    END {
        print "| test | wall s | CPU s |"
        print "|---|---:|---:|"
        for (i = 1; i <= count && (n == 0 || i <= n); i++) print rows[i]
        bound = cpu / jobs > longest ? cpu / jobs : longest
        printf "\n%d tests: %.0f s of wall clock one after another, %.0f CPU s; ", count, wall, cpu
        printf "on %d cores at least %.0f s (the longest test %.0f s)\n", jobs, bound, longest
    }'
