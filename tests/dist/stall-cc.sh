#!/bin/sh
# stall-cc.sh — a system compiler that stalls once, for the test of a rank
# killed mid-session (RELAY_TUNE_CC points here). The first compile started
# by a process whose pid is listed in $STALL_DIR/pids (the rank to kill)
# writes that pid and its own (the sleep's, for the test to end it) to
# $STALL_DIR/victim and sleeps, so that the rank holds its share while the
# test kills it; every other compile is cc's.
if [ -f "$STALL_DIR/pids" ] && grep -qx "$PPID" "$STALL_DIR/pids" && mkdir "$STALL_DIR/stalled" 2>/dev/null; then
    echo "$PPID $$" >"$STALL_DIR/victim.tmp"
    mv "$STALL_DIR/victim.tmp" "$STALL_DIR/victim"
    exec sleep 120
fi
exec cc "$@"
