#!/bin/sh
# slow-cc.sh — a system compiler that takes at least three seconds a unit, for the
# test of rank 0 killed mid-session (RELAY_TUNE_CC points here): with a fresh
# kernel cache the run then lasts long enough to be killed between batches
# however fast the host measures (one second was not enough at load 20: rank 0
# had stored all 24 records before the test could kill it).
sleep 3
exec cc "$@"
