#!/bin/sh
# backend_cpu.sh — the ONNX backend tests of tests/onnx/test_backend run on
# the interpreter and, for each test that passes there, compiled for the cpu
# target (default schedules, -O3) and checked again: every covered op is
# checked on both. The compile cache is a fresh directory, so the run costs
# what it costs in a fresh clone (identical kernels of different tests are
# compiled once). Tests that pass on the interpreter only are listed with
# why in tests/onnx/expected_cpu_failures.txt.
cache=$(mktemp -d "${TMPDIR:-/tmp}/relay-tune-onnx-cpu-XXXXXX") || exit 1
RELAY_TUNE_CACHE=$cache "$top_builddir/tests/onnx/test_backend" --cpu
rc=$?
rm -rf "$cache"
exit $rc
