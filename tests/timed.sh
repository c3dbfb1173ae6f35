#!/bin/sh
# timed.sh DRIVER... -- the log driver around automake's tap-driver: runs the
# driver with its arguments and writes the test's wall-clock and CPU seconds
# (user + system of the test and everything it waited for) to FILE.time
# beside the test's FILE.log, one line "wall cpu name start end" (start and
# end in seconds since the epoch, which show how the tests shared the cores
# under make -j). tests/suite-times.sh turns those files into the table of
# the slowest tests (docs/testing.md). CPU seconds matter beside wall
# seconds because test machines are shared, and a loaded machine stretches
# the wall clock only.
# The body is one function, read whole before it runs: a shell reads a script
# as it goes, and a test can outlast an edit of this file (or a checkout).
main() {
    log=
    name=
    prev=
    for a in "$@"; do
        case $prev in
        --log-file) log=$a ;;
        --test-name) name=$a ;;
        esac
        [ "$a" = "--" ] && break
        prev=$a
    done
    now() { date +%s.%N; }
    t0=$(now)
    "$@"
    rc=$?
    t1=$(now)
    # `times` prints the shell's own user/system line, then its children's; it
    # must run in this shell (a pipeline's subshell has no children yet).
    if [ -n "$log" ]; then
        out=${log%.log}.time
        times >"$out"
        awk -v t0="$t0" -v t1="$t1" -v name="$name" '
            function secs(s,   m) { m = s; sub(/m.*/, "", m); sub(/^[0-9]*m/, "", s); sub(/s$/, "", s); return m * 60 + s }
            NR == 2 { printf "%.2f %.2f %s %.2f %.2f\n", t1 - t0, secs($1) + secs($2), name, t0, t1 }' "$out" >"$out.tmp" && mv "$out.tmp" "$out"
    fi
    return $rc
}
main "$@"; exit $?
