#!/bin/sh
# timing.sh — the suite's timing tools: tests/timed.sh passes its driver's exit
# status through and writes FILE.time beside FILE.log (wall and CPU seconds
# of what it waited for, name, start and end); tests/suite-times.sh sorts
# the timings, sums them, and counts the seconds with a core idle.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"  # lib.sh assumes tests/PART/
. "$(dirname "$0")/lib.sh"
T="$top_srcdir/tests/timed.sh"
S="$top_srcdir/tests/suite-times.sh"

# ---- timed.sh -------------------------------------------------------------
# a stand-in driver: burns CPU in a child, then exits 3
mkdir -p "$TMP/b/tests/x"
sh "$T" sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i + 1)); done; exit 3' driver \
    --test-name tests/x/t --log-file "$TMP/b/tests/x/t.log" --trs-file "$TMP/b/tests/x/t.trs" -- ./t
rc=$?
[ $rc = 3 ] && tap_ok "timed.sh: the driver's exit status passes through" || tap_fail "timed.sh: exit status" "rc $rc"
line=$(cat "$TMP/b/tests/x/t.time" 2>/dev/null)
if echo "$line" | awk '{ exit !(NF == 5 && $3 == "tests/x/t" && $1 > 0 && $2 > 0 && $2 <= $1 + 0.5 && ($5 - $4 - $1) ^ 2 < 0.001) }'; then
    tap_ok "timed.sh: FILE.time holds wall, CPU (the child's), name, start and end ($line)"
else
    tap_fail "timed.sh: FILE.time holds wall, CPU, name, start and end" "$line"
fi
sh "$T" true --test-name none -- ./t
[ $? = 0 ] && [ "$(find "$TMP/b" -name '*.time' | wc -l)" = 1 ] &&
    tap_ok "timed.sh: without --log-file it writes nothing" || tap_fail "timed.sh: without --log-file it writes nothing"

# ---- suite-times.sh ---------------------------------------------------------
# a on one core for 10 s; b then c on the other for 4 + 3 s: 3 s with a core idle
printf '10.00 5.00 a 100.00 110.00\n' >"$TMP/b/tests/x/t.time"
mkdir -p "$TMP/b/tests/y"
printf '4.00 4.00 b 100.00 104.00\n' >"$TMP/b/tests/y/b.time"
printf '3.00 3.00 c 104.00 107.00\n' >"$TMP/b/tests/y/c.time"
JOBS=2 sh "$S" "$TMP/b" 2 >"$TMP/out" 2>&1
if [ "$(sed -n 3,4p "$TMP/out" | cut -d'|' -f2 | tr -d ' ' | tr '\n' ' ')" = "a b " ] && ! grep -q '| c |' "$TMP/out"; then
    tap_ok "suite-times.sh: the N slowest, slowest first"
else
    tap_fail "suite-times.sh: the N slowest, slowest first" "$(cat "$TMP/out")"
fi
grep -q "^3 tests: 17 s of wall clock one after another, 12 CPU s; on 2 cores at least 10 s" "$TMP/out" &&
    tap_ok "suite-times.sh: totals and the bound on 2 cores" || tap_fail "suite-times.sh: totals" "$(cat "$TMP/out")"
grep -q "^the run: 10 s from the first start to the last end, 3 s of them with fewer than 2 tests running" "$TMP/out" &&
    tap_ok "suite-times.sh: the seconds with a core idle" || tap_fail "suite-times.sh: idle seconds" "$(cat "$TMP/out")"
if sh "$S" "$TMP/nothing" >"$TMP/out" 2>&1; then
    tap_fail "suite-times.sh: no timings is an error"
else
    grep -q "no timings under" "$TMP/out" && tap_ok "suite-times.sh: no timings is an error" ||
        tap_fail "suite-times.sh: no timings is an error" "$(cat "$TMP/out")"
fi
tap_done
