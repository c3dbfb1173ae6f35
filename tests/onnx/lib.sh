# lib.sh — what the ONNX shell tests share on top of tests/lib.sh: running a
# command with its expected exit status, and looking for text in its output.
. "$(dirname "$0")/../lib.sh"
NPYCMP="$top_builddir/tests/tools/npycmp"
check() { tap_run "$@"; } # check NAME EXPECTED_RC COMMAND... (tests/lib.sh)
has() { # has NAME FILE TEXT: FILE contains TEXT (fixed string)
    if grep -qF -- "$3" "$2"; then tap_ok "$1"; else tap_fail "$1" "want: $3" "got: $(cat "$2")"; fi
}
