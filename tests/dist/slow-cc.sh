#!/bin/sh
# slow-cc.sh — a system compiler that takes at least a second a unit, for the
# test of rank 0 killed mid-session (RELAY_TUNE_CC points here): with a fresh
# kernel cache the run then lasts long enough to be killed between batches
# however fast the host measures.
sleep 1
exec cc "$@"
