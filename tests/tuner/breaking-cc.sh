#!/bin/sh
# breaking-cc.sh — a system compiler that breaks chosen candidates, for the
# tests of the tuner's error paths (RELAY_TUNE_CC points here). Each
# variable is an extended regex of entry names (k_HASH_INDEX):
#   BREAK_COMPILE  a unit holding such an entry fails to compile
#   BREAK_SLOW     a unit holding such an entry compiles for a minute
#   BREAK_WRONG    such an entry returns at once without writing its output
#                  (a wrong answer, and a very fast one)
# Everything else goes to cc unchanged. The source is the argument ending .c.
src=
for a in "$@"; do
    case "$a" in *.c) src=$a ;; esac
done
has() { [ -n "$1" ] && grep -Eq "^int ($1)\(void \*const \*args\)$" "$src"; }
if has "$BREAK_COMPILE"; then
    echo "$src: error: deliberately broken candidate" >&2
    exit 1
fi
if has "$BREAK_SLOW"; then
    sleep 60
fi
if has "$BREAK_WRONG"; then
    fake="$src.wrong.c"
    sed -E "s/^int ($BREAK_WRONG)\(void \*const \*args\)$/int \1_orig(void *const *args)/" "$src" >"$fake"
    grep -Eo "^int ($BREAK_WRONG)_orig\(" "$fake" | sed -E 's/^int (.*)_orig\($/\1/' | while read -r sym; do
        printf 'int %s(void *const *args) { (void)args; return 0; }\n' "$sym" >>"$fake"
    done
    n=$#
    i=0
    for a in "$@"; do
        i=$((i + 1))
        [ "$a" = "$src" ] && a=$fake
        set -- "$@" "$a"
    done
    shift "$n"
    cc "$@"
    rc=$?
    rm -f "$fake"
    exit $rc
fi
exec cc "$@"
