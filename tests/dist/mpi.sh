#!/bin/sh
# mpi.sh — `relay-tune tune --mpi` under mpirun on this host (docs/distributed.md):
# 3 ranks tune a tiny model and every record arrives once, each rank
# measuring a share; the database holds what a single-process run with the
# same seed and batch holds (the same configs, record count and schema); the
# same command again measures nothing; a rank whose target differs measures
# nothing; rank 0 killed with SIGKILL loses at most its batch in flight and
# the same command measures what is left; a worker rank killed with SIGKILL
# while it holds candidates is reported lost, its candidates are measured by
# the others and the session finishes with every trial stored once; one
# session tunes for two targets at once, each target's tasks measured only
# by the ranks of that target (rank 0 and rank 1 'cpu', rank 2
# 'cpu -cores=1', its confirmations too), every record once with its rank's
# host and target, and the same command again measures nothing; a worker
# stopped as a whole (SIGSTOP: no answer, no heartbeat) is taken for lost
# by its silence, its candidates go to the others, every trial is stored
# once, and the job still ends (rank 0 ends it, mpirun ends the stopped
# rank). Skips when mpirun or an MPI build is missing.
. "$(dirname "$0")/../lib.sh"
export RELAY_TUNE_CACHE="$TMP/cache"
if [ -z "$MPIRUN" ] || ! command -v "$MPIRUN" >/dev/null 2>&1; then
    echo "1..0 # SKIP mpirun not found (install openmpi-bin; scripts/setup.sh)"
    exit 0
fi
# the tiny model of tests/tuner/tune.sh: a conv2d + relu and a dense
M="$top_srcdir/tests/tuner/tiny.relay"
Q="--tuner random --seed 5 --batch 6 --repeat 1 --min-repeat-ms 1 --progress lines"
# outside mpirun, --mpi says what it needs: an MPI build, or mpirun
"$RELAY_TUNE" tune "$M" --trials 1 --db "$TMP/probe.db" --mpi $Q 2>"$TMP/err" >/dev/null
rc=$?
if grep -q "needs a relay-tune built with MPI" "$TMP/err"; then
    echo "1..0 # SKIP this relay-tune is built without MPI"
    exit 0
fi
if [ $rc = 1 ] && grep -q "error: --mpi: this process was not started by mpirun" "$TMP/err"; then
    tap_ok "tune --mpi outside mpirun says so"
else
    tap_fail "tune --mpi outside mpirun says so (rc $rc)" "$(cat "$TMP/err")"
fi
# we run as root in CI containers; loopback only (a container may have no network);
# --enable-recovery: a rank that dies does not take the job down with it
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
MPI="$MPIRUN --oversubscribe --enable-recovery --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo"

records() { "$RELAY_TUNE" db stats --json --db "$1" 2>/dev/null | sed -n "s/.*\"$2\": *\([0-9]*\).*/\1/p"; }
# the configs in a database (workload hash + config index), sorted
configs() {
    "$RELAY_TUNE" db export --db "$1" | sed -n 's/.*"hash":"\([0-9a-f]*\)".*"index":\([0-9]*\)}.*/\1 \2/p' | sort
}
# candidates measured per rank, from rank 0's closing note
measured_by() { sed -n "s/.*candidates measured by rank:.* rank $2 ([^)]*) \([0-9]*\).*/\1/p" "$1"; }

# ---- 3 ranks: every record once, every rank a share -------------------------
timeout 300 $MPI -np 3 "$RELAY_TUNE" tune "$M" --trials 12 --db "$TMP/mpi.db" --mpi $Q >"$TMP/out" 2>"$TMP/err"
rc=$?
n=$(records "$TMP/mpi.db" records)
if [ $rc = 0 ] && [ "$n" = 12 ] && [ "$(configs "$TMP/mpi.db" | uniq -d | wc -l)" = 0 ] &&
    grep -q "^done: 12 measurements" "$TMP/out" && grep -q "3 of 3 ranks measure" "$TMP/err"; then
    tap_ok "3 ranks: 12 trials, 12 records, no config twice"
else
    tap_fail "3 ranks: 12 trials, 12 records, no config twice" "rc $rc, records $n" "$(cat "$TMP/out" "$TMP/err")"
fi
r0=$(measured_by "$TMP/err" 0) r1=$(measured_by "$TMP/err" 1) r2=$(measured_by "$TMP/err" 2)
if [ "${r0:-0}" -gt 0 ] && [ "${r1:-0}" -gt 0 ] && [ "${r2:-0}" -gt 0 ] && [ $((r0 + r1 + r2)) = 12 ]; then
    tap_ok "every rank measured a share ($r0, $r1, $r2)"
else
    tap_fail "every rank measured a share" "$(grep 'measured by rank' "$TMP/err")"
fi
hosts=$("$RELAY_TUNE" db export --db "$TMP/mpi.db" | grep -c "\"host\":\"$(hostname)\"")
if [ "$hosts" = 12 ]; then
    tap_ok "records carry the measuring rank's host"
else
    tap_fail "records carry the measuring rank's host" "$hosts of 12 name $(hostname)"
fi

# ---- the same database as one process would hold -----------------------------
"$RELAY_TUNE" tune "$M" --trials 12 --db "$TMP/one.db" $Q >"$TMP/out1" 2>"$TMP/err1"
same=yes
for k in schema_version workloads records targets sessions; do
    [ "$(records "$TMP/one.db" $k)" = "$(records "$TMP/mpi.db" $k)" ] || same="no ($k)"
done
configs "$TMP/one.db" >"$TMP/c1"
configs "$TMP/mpi.db" >"$TMP/c2"
if [ "$same" = yes ] && cmp -s "$TMP/c1" "$TMP/c2"; then
    tap_ok "the MPI run's database holds what one process's does: schema, counts, the same configs"
else
    tap_fail "the MPI run's database holds what one process's does" "$same" "$(diff "$TMP/c1" "$TMP/c2")"
fi

# ---- resume: the same command again measures nothing --------------------------
timeout 300 $MPI -np 3 "$RELAY_TUNE" tune "$M" --trials 12 --db "$TMP/mpi.db" --mpi $Q >"$TMP/out" 2>"$TMP/err"
if [ $? = 0 ] && grep -q "^done: 0 measurements" "$TMP/out" && [ "$(records "$TMP/mpi.db" records)" = 12 ]; then
    tap_ok "the same MPI command again measures nothing"
else
    tap_fail "the same MPI command again measures nothing" "$(cat "$TMP/out" "$TMP/err")"
fi

# ---- a rank of another target measures nothing --------------------------------
timeout 300 $MPI -np 2 "$RELAY_TUNE" tune "$M" --trials 6 --db "$TMP/het.db" --mpi $Q : \
    -np 1 "$RELAY_TUNE" tune "$M" --trials 6 --db "$TMP/het.db" --mpi --target "cpu -cores=1" $Q >"$TMP/out" 2>"$TMP/err"
if [ $? = 0 ] && grep -q "rank 2 on .* has target 'cpu -cores=1' .* it does not measure" "$TMP/err" &&
    grep -q "2 of 3 ranks measure" "$TMP/err" && [ "$(records "$TMP/het.db" records)" = 6 ] &&
    [ "$(measured_by "$TMP/err" 2)" = "" ]; then
    tap_ok "a rank whose target is not the run's measures nothing"
else
    tap_fail "a rank whose target is not the run's measures nothing" "$(cat "$TMP/out" "$TMP/err")"
fi

# ---- rank 0 killed: at most the batch in flight is lost, the same command resumes ----
# (plain mpirun: the job ends with rank 0; a kernel cache of its own and a
# compiler that waits while a gate file exists, which the test creates once
# the first batch is reported, so the run cannot finish before the kill
# however fast the host or however slow this shell)
MPI0="$MPIRUN --oversubscribe --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo"
gate="$TMP/cc-gate"
rm -f "$gate"
SLOW_CC_GATE="$gate" RELAY_TUNE_CACHE="$TMP/cache-k0" RELAY_TUNE_CC="$top_srcdir/tests/dist/slow-cc.sh" timeout 300 \
    $MPI0 -np 2 "$RELAY_TUNE" tune "$M" --trials 24 --db "$TMP/k0.db" --mpi $Q \
    >"$TMP/out" 2>"$TMP/err" &
job=$!
# (up to 5 minutes: under the sanitizers and a loaded CI host mpirun alone
# can take a minute to start its ranks)
for i in $(seq 3000); do
    grep -q "^\[.*trials" "$TMP/err" 2>/dev/null && grep -q "rank 0 on .* (pid [0-9]*) tunes" "$TMP/err" && break
    sleep 0.1
done
touch "$gate"
pid0=$(sed -n 's/.*rank 0 on .* (pid \([0-9]*\)) tunes.*/\1/p' "$TMP/err")
if [ -n "$pid0" ]; then kill -9 "$pid0"; else rm -f "$gate"; fi
wait $job
rm -f "$gate"
before=$(records "$TMP/k0.db" records)
timeout 300 $MPI -np 2 "$RELAY_TUNE" tune "$M" --trials 24 --db "$TMP/k0.db" --mpi $Q >"$TMP/out" 2>"$TMP/err"
rc=$?
after=$(records "$TMP/k0.db" records)
if [ -n "$pid0" ] && [ "${before:-0}" -gt 0 ] && [ "$before" -lt 24 ] && [ $rc = 0 ] && [ "$after" = 24 ] &&
    grep -q "^done: $((24 - before)) measurements" "$TMP/out" && [ "$(configs "$TMP/k0.db" | uniq -d | wc -l)" = 0 ]; then
    tap_ok "rank 0 killed after $before records: the same command measures the $((24 - before)) left, none twice"
else
    tap_fail "rank 0 killed: the same command resumes" "pid '$pid0', records $before then $after, rc $rc" \
        "$(cat "$TMP/out" "$TMP/err")"
fi

# ---- a worker killed mid-session: its candidates go to the others -------------
# 3 ranks tune into $TMP/NAME.db while rank 2's first compile stalls
# (tests/dist/stall-cc.sh), so that it holds its share when it gets SIGNAL
# (KILL: it dies; STOP: it hangs as a whole, heartbeat thread and all).
# Sets victim (the pid that got it), pid (rank 2's, from its hello) and rc.
stalled_run() { # NAME SIGNAL
    S="$TMP/stall-$1"
    mkdir -p "$S"
    RELAY_TUNE_CACHE="$TMP/cache-$1" RELAY_TUNE_CC="$top_srcdir/tests/dist/stall-cc.sh" STALL_DIR="$S" timeout 300 \
        $MPI -np 3 "$RELAY_TUNE" tune "$M" --trials 18 --db "$TMP/$1.db" --mpi $Q >"$TMP/out" 2>"$TMP/err" &
    job=$!
    for i in $(seq 600); do
        pid=$(sed -n 's/.*rank 2 on .* (pid \([0-9]*\)) measures.*/\1/p' "$TMP/err")
        [ -n "$pid" ] && break
        sleep 0.1
    done
    [ -n "$pid" ] && echo "$pid" >"$S/pids"
    for i in $(seq 600); do
        [ -f "$S/victim" ] && break
        sleep 0.1
    done
    victim=
    if [ -f "$S/victim" ]; then
        read -r victim sleeper <"$S/victim"
        kill -"$2" "$victim"
        kill "$sleeper" 2>/dev/null
    fi
    wait $job
    rc=$?
}
stalled_run kill KILL
n=$(records "$TMP/kill.db" records)
if [ -n "$victim" ] && [ "$victim" = "$pid" ] && grep -q "^done: 18 measurements" "$TMP/out" && [ "$n" = 18 ] &&
    [ "$(configs "$TMP/kill.db" | uniq -d | wc -l)" = 0 ] &&
    grep -Eq "rank 2 on .* is lost \(no heartbeat for 10 s\): [1-9][0-9]* of its [1-9][0-9]* candidates go to other ranks" "$TMP/err"; then
    tap_ok "a worker killed while holding candidates: they are measured by the others, 18 records, none twice"
else
    tap_fail "a worker killed while holding candidates" "victim '$victim' (rank 2: '$pid'), records $n" "$(cat "$TMP/out" "$TMP/err")"
fi
[ "$(records "$TMP/kill.db" failed_records)" = 0 ] && tap_ok "no error record for the lost candidates" ||
    tap_fail "no error record for the lost candidates" "$("$RELAY_TUNE" db stats --db "$TMP/kill.db")"

# ---- two targets in one session: each measured by its own ranks ----------------
B="cpu -cores=1"
# each record as "TARGET|CORES|HOST|HASH INDEX"
rows() {
    "$RELAY_TUNE" db export --db "$1" |
        sed -n 's/.*"hash":"\([0-9a-f]*\)".*"target":{"name":"\([^"]*\)".*"cores":\([0-9]*\).*"index":\([0-9]*\)}.*"host":"\([^"]*\)".*/\2|\3|\5|\1 \4/p'
}
two() {
    timeout 300 $MPI -np 2 "$RELAY_TUNE" tune "$M" --trials 24 --db "$TMP/two.db" --mpi $Q --target cpu --target "$B" : \
        -np 1 "$RELAY_TUNE" tune "$M" --trials 24 --db "$TMP/two.db" --mpi $Q --target cpu --target "$B" --rank-target "$B" \
        >"$TMP/out" 2>"$TMP/err"
}
two
rc=$?
rows "$TMP/two.db" >"$TMP/rows"
na=$(grep -c "^cpu|" "$TMP/rows") nb=$(grep -c "^$B|1|$(hostname)|" "$TMP/rows")
r0=$(measured_by "$TMP/err" 0) r1=$(measured_by "$TMP/err" 1) r2=$(measured_by "$TMP/err" 2)
if [ $rc = 0 ] && [ "$(records "$TMP/two.db" records)" = 24 ] && [ "$(records "$TMP/two.db" targets)" = 2 ] &&
    grep -q "^done: 24 measurements" "$TMP/out" &&
    grep -q "3 of 3 ranks measure (2 for 'cpu', 1 for '$B')" "$TMP/err" &&
    grep -q "rank 2 on .* measures for '$B'" "$TMP/err" && grep -q "rank 1 on .* measures for 'cpu'" "$TMP/err"; then
    tap_ok "two targets, 3 ranks: 24 trials, 24 records, both targets in the database"
else
    tap_fail "two targets, 3 ranks: 24 records of both targets" "rc $rc" "$(cat "$TMP/out" "$TMP/err")"
fi
if [ "$nb" -gt 0 ] && [ "${r2:-0}" = "$nb" ] && [ "${r0:-0}" -gt 0 ] && [ $((${r0:-0} + ${r1:-0})) = "$na" ] &&
    [ $((na + nb)) = 24 ] && grep -q "rank 0 ([^)]*) $r0 for 'cpu'.* rank 2 ([^)]*) $r2 for '$B' (and [1-9]" "$TMP/err"; then
    tap_ok "each target's tasks measured only by its ranks: cpu by ranks 0, 1 ($r0 + $r1), '$B' by rank 2 ($r2, its confirmations too)"
else
    tap_fail "each target's tasks measured only by its ranks" "cpu $na, '$B' $nb; ranks $r0 $r1 $r2" \
        "$(grep 'measured by rank' "$TMP/err")"
fi
if [ "$(grep -c "|$(hostname)|" "$TMP/rows")" = 24 ] && [ "$(cut -d'|' -f1,4 "$TMP/rows" | sort | uniq -d | wc -l)" = 0 ] &&
    grep -q "^task 0 on '$B': [0-9]* configs (its best and the default)" "$TMP/out"; then
    tap_ok "every record once, with its rank's host and its rank's own target (cores)"
else
    tap_fail "every record once, with its rank's host and target" "$(sort "$TMP/rows")"
fi
two
if [ $? = 0 ] && grep -q "^done: 0 measurements" "$TMP/out" && [ "$(records "$TMP/two.db" records)" = 24 ]; then
    tap_ok "the same two-target MPI command again measures nothing"
else
    tap_fail "the same two-target MPI command again measures nothing" "$(cat "$TMP/out" "$TMP/err")"
fi

# a target that no rank measures is refused before anything is measured
timeout 300 $MPI -np 2 "$RELAY_TUNE" tune "$M" --trials 6 --db "$TMP/none.db" --mpi $Q --target cpu --target "$B" \
    >"$TMP/out" 2>"$TMP/err"
rc=$?
# (mpirun --enable-recovery does not always pass rank 0's status on: Open MPI 4)
if [ $rc != 124 ] && [ "$(records "$TMP/none.db" records)" = 0 ] && ! grep -q "^done:" "$TMP/out" &&
    grep -q "error: target '$B': no rank of the MPI job measures for it" "$TMP/err"; then
    tap_ok "a target that no rank measures is refused, nothing measured"
else
    tap_fail "a target that no rank measures is refused" "rc $rc" "$(cat "$TMP/out" "$TMP/err")"
fi

# ---- the cpu and the opencl target in one session (where OpenCL has a device) ----
"$RELAY_TUNE" targets >"$TMP/targets" 2>&1
if grep -q "^opencl -platform=0 -device=0: " "$TMP/targets"; then
    cl() {
        timeout 300 $MPI -np 1 "$RELAY_TUNE" tune "$M" --trials 16 --db "$TMP/cl.db" --mpi $Q --target cpu \
            --target opencl : -np 1 "$RELAY_TUNE" tune "$M" --trials 16 --db "$TMP/cl.db" --mpi $Q --target cpu \
            --target opencl --rank-target opencl >"$TMP/out" 2>"$TMP/err"
    }
    cl
    rc=$?
    rows "$TMP/cl.db" >"$TMP/rows"
    nc=$(grep -c "^cpu|" "$TMP/rows") no=$(grep -c "^opencl|" "$TMP/rows")
    r0=$(measured_by "$TMP/err" 0) r1=$(measured_by "$TMP/err" 1)
    if [ $rc = 0 ] && [ "$(records "$TMP/cl.db" records)" = 16 ] && [ "$nc" -gt 0 ] && [ "$no" -gt 0 ] &&
        [ "${r0:-0}" = "$nc" ] && [ "${r1:-0}" = "$no" ] && grep -q "rank 1 on .* measures for 'opencl'" "$TMP/err" &&
        [ "$(cut -d'|' -f1,4 "$TMP/rows" | sort | uniq -d | wc -l)" = 0 ]; then
        tap_ok "cpu and opencl in one session: rank 0 measures the cpu's $nc, rank 1 the device's $no, none twice"
    else
        tap_fail "cpu and opencl in one session" "rc $rc; cpu $nc, opencl $no; ranks $r0 $r1" "$(cat "$TMP/out" "$TMP/err")"
    fi
else
    tap_ok "cpu and opencl in one session # SKIP no OpenCL device: $(grep "^OpenCL" "$TMP/targets")"
fi

# ---- a worker stopped as a whole (SIGSTOP) mid-session -------------------------
stalled_run stop STOP
# mpirun ended the stopped rank (gone, or a zombie nobody reaps here), not waited for it
state=$([ -n "$victim" ] && ps -o stat= -p "$victim" 2>/dev/null)
[ -n "$victim" ] && kill -CONT "$victim" 2>/dev/null && kill -9 "$victim" 2>/dev/null
n=$(records "$TMP/stop.db" records)
if [ -n "$victim" ] && [ "$victim" = "$pid" ] && [ $rc = 0 ] && grep -q "^done: 18 measurements" "$TMP/out" &&
    [ "$n" = 18 ] && [ "$(configs "$TMP/stop.db" | uniq -d | wc -l)" = 0 ] &&
    [ "$(records "$TMP/stop.db" failed_records)" = 0 ] &&
    grep -Eq "rank 2 on .* is lost \(no heartbeat for 10 s\): [1-9][0-9]* of its [1-9][0-9]* candidates go to other ranks" "$TMP/err"; then
    tap_ok "a worker stopped with SIGSTOP is lost by its silence: the others measure its candidates, 18 records, none twice"
else
    tap_fail "a worker stopped with SIGSTOP is lost by its silence" "victim '$victim' (rank 2: '$pid'), rc $rc, records $n" \
        "$(cat "$TMP/out" "$TMP/err")"
fi
case "$state" in
T*) tap_fail "the job ends with a stopped rank" "mpirun left rank 2 stopped ($state)" ;;
*) if [ $rc != 124 ] && grep -q "a rank was lost and may still be running: rank 0 ends the job (MPI_Abort, status 0)" "$TMP/err"; then
    tap_ok "the job ends with a stopped rank: rank 0 ends it, mpirun ends the stopped rank (${state:-gone})"
else
    tap_fail "the job ends with a stopped rank" "rc $rc" "$(cat "$TMP/err")"
fi ;;
esac
tap_done
