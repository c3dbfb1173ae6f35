#!/bin/sh
# slow-cc.sh — a system compiler for the test of rank 0 killed mid-session
# (RELAY_TUNE_CC points here): each unit takes two seconds more, and while
# the file SLOW_CC_GATE names exists a unit waits (at most two minutes), so
# the test can hold the run after its first batch is reported, kill rank 0
# and only then let compiling go on. Sleeping alone raced with the load: at
# load 20 rank 0 stored all 24 records, sleeping one and then three seconds a
# unit, before the test could kill it.
sleep 2
if [ -n "${SLOW_CC_GATE:-}" ]; then
    i=0
    while [ -e "$SLOW_CC_GATE" ] && [ $i -lt 1200 ]; do
        sleep 0.1
        i=$((i + 1))
    done
fi
exec cc "$@"
