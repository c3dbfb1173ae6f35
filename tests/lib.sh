# lib.sh — TAP helpers for the shell tests. Source it, call tap_ok/tap_fail per
# check, and end with tap_done. $RELAY_TUNE, $top_srcdir and $top_builddir come
# from the test environment (Makefile.am); defaults let a test run by hand.
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${RELAY_TUNE:=$top_builddir/relay-tune}"
TAP_N=0
TAP_FAILED=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

tap_ok() { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $*"; }
tap_fail() {
    TAP_N=$((TAP_N + 1)); TAP_FAILED=$((TAP_FAILED + 1))
    echo "not ok $TAP_N - $1"
    shift
    for line in "$@"; do printf '%s\n' "$line" | sed 's/^/# /'; done
}
tap_done() { echo "1..$TAP_N"; [ "$TAP_FAILED" -eq 0 ]; }
# tap_run NAME EXPECTED_RC COMMAND...: one check that COMMAND exits with
# EXPECTED_RC; its output is left in $TMP/out and $TMP/err.
tap_run() {
    _name=$1 _want=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    _rc=$?
    if [ $_rc -eq "$_want" ]; then tap_ok "$_name"; else tap_fail "$_name (rc $_rc, want $_want)" "$(cat "$TMP/err")"; fi
}
# tap_has NAME FILE TEXT: one check that FILE holds TEXT.
tap_has() {
    if grep -qF -- "$3" "$2"; then tap_ok "$1"; else tap_fail "$1" "$(head -20 "$2")"; fi
}
# skip_without_opencl: ends the test as skipped, saying why, in a build
# without OpenCL or on a host whose platform 0 has no device 0.
skip_without_opencl() {
    "$RELAY_TUNE" targets >"$TMP/targets" 2>&1
    if grep -q "built without OpenCL" "$TMP/targets"; then
        echo "1..0 # SKIP this relay-tune was built without OpenCL"
        exit 0
    fi
    if ! grep -q "^opencl -platform=0 -device=0: " "$TMP/targets"; then
        echo "1..0 # SKIP no OpenCL device on this host: $(grep '^OpenCL' "$TMP/targets")"
        exit 0
    fi
}
