# lib.sh — what the ONNX shell tests share on top of tests/lib.sh: running a
# command with its expected exit status, and looking for text in its output.
. "$(dirname "$0")/../lib.sh"
NPYCMP="$top_builddir/tests/tools/npycmp"
check() { # check NAME EXPECTED_RC COMMAND...
    name=$1 want=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ $rc -eq "$want" ]; then tap_ok "$name"; else tap_fail "$name (rc $rc, want $want)" "$(cat "$TMP/err")"; fi
}
has() { # has NAME FILE TEXT: FILE contains TEXT (fixed string)
    if grep -qF -- "$3" "$2"; then tap_ok "$1"; else tap_fail "$1" "want: $3" "got: $(cat "$2")"; fi
}
