#!/bin/sh
# targets.sh — one `relay-tune tune` for two targets at once, in one process
# (`--target cpu --target 'cpu -cores=1'`, both run by this host; and two
# -mcpu values, each tuned with its own ISA): every
# task is tuned for each target with its own records and confirmation, the
# one budget spent over all of them and the table showing both; the records
# carry each target's own description; the same command again measures
# nothing; `compile --db --target T` then builds with T's own records (and,
# as a control, with another target's of the same ISA when T has none);
# a target given twice and a --rank-target that is not a --target are
# refused. The MPI side (ranks of each target) is tests/dist/mpi.sh.
. "$(dirname "$0")/../lib.sh"
export RELAY_TUNE_CACHE="$TMP/cache"
# the tiny model of tune.sh: a conv2d + relu and a dense
M="$top_srcdir/tests/tuner/tiny.relay"
Q="--tuner random --seed 5 --batch 6 --repeat 1 --min-repeat-ms 1 --progress lines"
B="cpu -cores=1"

records() { "$RELAY_TUNE" db stats --json --db "$1" 2>/dev/null | sed -n "s/.*\"$2\": *\([0-9]*\).*/\1/p"; }
# each record as "TARGET|CORES|HASH INDEX"
rows() {
    "$RELAY_TUNE" db export --db "$1" |
        sed -n 's/.*"hash":"\([0-9a-f]*\)".*"target":{"name":"\([^"]*\)".*"cores":\([0-9]*\).*"index":\([0-9]*\)}.*/\2|\3|\1 \4/p'
}

# ---- two targets in one run ---------------------------------------------------
"$RELAY_TUNE" tune "$M" --trials 24 --db "$TMP/two.db" --target cpu --target "$B" $Q >"$TMP/out" 2>"$TMP/err"
rc=$?
rows "$TMP/two.db" >"$TMP/rows"
na=$(grep -c "^cpu|" "$TMP/rows") nb=$(grep -c "^$B|" "$TMP/rows")
if [ $rc = 0 ] && [ "$(records "$TMP/two.db" records)" = 24 ] && [ "$na" -gt 0 ] && [ "$nb" -gt 0 ] &&
    [ $((na + nb)) = 24 ] && grep -q "^done: 24 measurements" "$TMP/out" && [ "$(records "$TMP/two.db" targets)" = 2 ]; then
    tap_ok "two targets, one run: 24 trials spent over both ($na for cpu, $nb for $B), 24 records"
else
    tap_fail "two targets, one run" "rc $rc, cpu $na, '$B' $nb" "$(cat "$TMP/out" "$TMP/err")"
fi
if [ "$(cut -d'|' -f1,3 "$TMP/rows" | sort | uniq -d | wc -l)" = 0 ] &&
    [ "$(grep -c "^$B|1|" "$TMP/rows")" = "$nb" ] && [ "$(grep "^cpu|" "$TMP/rows" | cut -d'|' -f2 | sort -u | wc -l)" = 1 ]; then
    tap_ok "no config twice on a target; each target's records carry its own description (cores)"
else
    tap_fail "each target's records carry its own description" "$(sort "$TMP/rows")"
fi
# the table: a block per target, each task confirmed on each target
if grep -q "^target 'cpu':" "$TMP/out" && grep -q "^target '$B':" "$TMP/out" &&
    [ "$(grep -c "^[01] .*conv2d_nchw\|^[01] .*dense" "$TMP/out")" = 4 ] &&
    grep -q "^task 0 on 'cpu': [0-9]* configs (its best" "$TMP/out" && grep -q "^task 1 on '$B': [0-9]* configs (its best" "$TMP/out" &&
    grep -q "^\[.*\] task 0 on '$B' conv2d_nchw" "$TMP/err"; then
    tap_ok "the table shows each task once per target, each confirmed on its own target"
else
    tap_fail "the table shows each task once per target" "$(cat "$TMP/out")"
fi

# ---- the same command again ------------------------------------------------------
"$RELAY_TUNE" tune "$M" --trials 24 --db "$TMP/two.db" --target cpu --target "$B" $Q >"$TMP/out" 2>"$TMP/err"
if [ $? = 0 ] && grep -q "^done: 0 measurements" "$TMP/out" && [ "$(records "$TMP/two.db" records)" = 24 ]; then
    tap_ok "the same two-target command again measures nothing"
else
    tap_fail "the same two-target command again measures nothing" "$(cat "$TMP/out" "$TMP/err")"
fi

# ---- compile --target T uses T's records ----------------------------------------
# records of T for every task: no note of records borrowed from the other target
"$RELAY_TUNE" compile "$M" --db "$TMP/two.db" --target "$B" -o "$TMP/b.so" >"$TMP/out" 2>"$TMP/err"
rc=$?
# control: a database tuned for cpu only, where '$B' borrows cpu's records (same ISA)
"$RELAY_TUNE" tune "$M" --trials 4 --db "$TMP/one.db" $Q --confirm 0 >/dev/null 2>&1
"$RELAY_TUNE" compile "$M" --db "$TMP/one.db" --target "$B" -o "$TMP/c.so" >"$TMP/out2" 2>"$TMP/err2"
if [ $rc = 0 ] && [ -s "$TMP/b.so" ] && ! grep -q "same ISA\|no valid tuning record" "$TMP/err" &&
    grep -q "same ISA" "$TMP/err2"; then
    tap_ok "compile --db --target '$B' builds with that target's own records"
else
    tap_fail "compile --db --target '$B' builds with that target's own records" "rc $rc" "$(cat "$TMP/err")" \
        "control: $(cat "$TMP/err2")"
fi

# ---- two -mcpu values: each target's own ISA ---------------------------------------
V2="cpu -mcpu=x86-64-v2" V3="cpu -mcpu=x86-64-v3"
if "$RELAY_TUNE" targets "$V3" 2>/dev/null | grep -q "runs here: yes"; then
    "$RELAY_TUNE" tune "$M" --trials 8 --db "$TMP/mcpu.db" --target "$V2" --target "$V3" $Q --batch 2 --confirm 0 \
        >"$TMP/out" 2>"$TMP/err"
    rc=$?
    "$RELAY_TUNE" db export --db "$TMP/mcpu.db" | sed -n 's/.*"target":{"name":"\([^"]*\)".*"isa":"\([^"]*\)".*/\1|\2/p' \
        >"$TMP/isa"
    n2=$(grep -c "^$V2|sse4.2$" "$TMP/isa") n3=$(grep "^$V3|" "$TMP/isa" | grep -c " avx2")
    if [ $rc = 0 ] && [ "$n2" -gt 0 ] && [ "$n3" -gt 0 ] && [ $((n2 + n3)) = 8 ] &&
        [ "$(records "$TMP/mcpu.db" failed_records)" = 0 ]; then
        tap_ok "two -mcpu values in one run: each target's records made with its own ISA ($n2 sse4.2, $n3 avx2)"
    else
        tap_fail "two -mcpu values in one run" "rc $rc" "$(cat "$TMP/isa" "$TMP/out" "$TMP/err")"
    fi
else
    tap_ok "# SKIP this host cannot run $V3"
fi

# ---- refused ---------------------------------------------------------------------
tap_run "a target given twice is refused" 1 "$RELAY_TUNE" tune "$M" --trials 2 --db "$TMP/x.db" --target cpu --target cpu $Q
tap_has "... saying so" "$TMP/err" "target 'cpu' is given twice"
tap_run "a --rank-target that is not a --target is refused" 1 "$RELAY_TUNE" tune "$M" --trials 2 --db "$TMP/x.db" \
    --target cpu --rank-target "$B" $Q
tap_has "... saying so" "$TMP/err" "--rank-target '$B' is not one of the run's targets"
tap_done
