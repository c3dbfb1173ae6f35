#!/bin/sh
# suite-times.sh [BUILDDIR [N]] — the N slowest tests (all when N is 0) of the
# last `make check` in BUILDDIR (default: the current directory), from the
# FILE.time lines tests/timed.sh wrote: wall and CPU seconds each, as a
# Markdown table (docs/testing.md quotes it as it is). Then the totals; the
# shortest a run on J cores could take (the longest test, or the CPU total
# over J, whichever is larger; J is $JOBS, default 2); and, from the tests'
# start and end times, how long the run took and for how many of those
# seconds fewer than J tests ran (a core idle: a long test alone at the end
# shows here).
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
      if (n == 0 || count <= n) rows[count] = sprintf("| %s | %.1f | %.1f |", $3, $1, $2)
      if (NF >= 5) { t0[count] = $4; t1[count] = $5; timed++ } }
    END {
        print "| test | wall s | CPU s |"
        print "|---|---:|---:|"
        for (i = 1; i <= count && (n == 0 || i <= n); i++) print rows[i]
        bound = cpu / jobs > longest ? cpu / jobs : longest
        printf "\n%d tests: %.0f s of wall clock one after another, %.0f CPU s; ", count, wall, cpu
        printf "on %d cores at least %.0f s (the longest test %.0f s)\n", jobs, bound, longest
        if (timed < count) exit
        # sweep the starts and ends in time order: the seconds with fewer
        # than jobs tests running
        first = t0[1]; last = t1[1]
        for (i = 1; i <= count; i++) {
            ev[2 * i - 1] = t0[i] " 1"; ev[2 * i] = t1[i] " -1"
            if (t0[i] < first) first = t0[i]
            if (t1[i] > last) last = t1[i]
        }
        m = 2 * count
        for (i = 2; i <= m; i++) {          # insertion sort by time
            x = ev[i]; split(x, a, " ")
            for (j = i - 1; j >= 1; j--) { split(ev[j], b, " "); if (b[1] + 0 <= a[1] + 0) break; ev[j + 1] = ev[j] }
            ev[j + 1] = x
        }
        running = 0; idle = 0; prev = first
        for (i = 1; i <= m; i++) {
            split(ev[i], a, " ")
            if (running < jobs) idle += a[1] - prev
            running += a[2]; prev = a[1]
        }
        printf "the run: %.0f s from the first start to the last end, %.0f s of them with fewer than %d tests running\n",
            last - first, idle, jobs
    }'
