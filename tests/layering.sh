#!/bin/sh
# layering.sh — no file includes a header of a part above it: the rule is
# docs/architecture.md's ```layers block, checked by tests/tools/layering.sh
# on the source tree; fixture trees show that the checker fails where it must.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
. "$(dirname "$0")/lib.sh"
check=$top_srcdir/tests/tools/layering.sh

if sh "$check" "$top_srcdir" >"$TMP/out" 2>&1; then
    tap_ok "the source tree keeps docs/architecture.md's layers"
else
    tap_fail "the source tree keeps docs/architecture.md's layers" "$(cat "$TMP/out")"
fi

# fixture: top uses low, beside uses nothing; public headers in include/
fixture() { # fixture DIR: a tree that keeps its layers
    mkdir -p "$1/docs" "$1/top" "$1/low" "$1/beside" "$1/include"
    printf '# map\n\n```layers\ntop     → low include\nlow     →\nbeside  →\ninclude →\n```\n' >"$1/docs/architecture.md"
    printf '/* low */\n' >"$1/low/low.h"
    printf '/* public */\n' >"$1/include/pub.h"
    printf '#include <stdio.h>\n#include "low/low.h"\n#include "pub.h"\n#include "config.h"\n' >"$1/top/top.c"
    printf '#include "low/low.h"\n#include "low.h"\n' >"$1/low/low.c"
    printf '/* beside */\n' >"$1/beside/b.c"
}
fixture "$TMP/good"
tap_run "a tree that keeps its layers passes" 0 sh "$check" "$TMP/good"

fixture "$TMP/up"
printf '/* top */\n' >"$TMP/up/top/top.h"
printf '#include "low/low.h"\n\n#  include "top/top.h"\n' >"$TMP/up/low/up.c"
tap_run "an upward include fails" 1 sh "$check" "$TMP/up"
tap_has "it names file:line and both folders" "$TMP/out" \
    'low/up.c:3: low/ includes "top/top.h" of top/, which is above it in docs/architecture.md'"'"'s layers'
[ "$(wc -l <"$TMP/out")" -eq 1 ] && tap_ok "only the upward include is reported" || tap_fail "only the upward include is reported" "$(cat "$TMP/out")"

fixture "$TMP/side"
printf '#include "beside/b.h"\n' >"$TMP/side/top/side.c"
printf '/* b */\n' >"$TMP/side/beside/b.h"
tap_run "an include of a part beside the chain fails" 1 sh "$check" "$TMP/side"
tap_has "it says the part may not be used" "$TMP/out" 'top/side.c:1: top/ includes "beside/b.h" of beside/, which it may not use'

fixture "$TMP/pub"
printf '#include "pub.h"\n' >"$TMP/pub/low/pub.c"
tap_run "a public header is include/'s, not the includer's" 1 sh "$check" "$TMP/pub"
tap_has "the public header is named with its folder" "$TMP/out" 'low/pub.c:1: low/ includes "pub.h" of include/'

fixture "$TMP/new"
mkdir -p "$TMP/new/other"
printf 'int x;\n' >"$TMP/new/other/x.c"
tap_run "a folder the layers do not name is an error" 2 sh "$check" "$TMP/new"
tap_has "it names the folder" "$TMP/err" 'other/ holds C files but docs/architecture.md gives it no layer'

fixture "$TMP/nolayers"
printf '# map\n' >"$TMP/nolayers/docs/architecture.md"
tap_run "a page without layers is an error" 2 sh "$check" "$TMP/nolayers"
tap_has "it says so" "$TMP/err" 'has no ```layers block'

fixture "$TMP/typo"
printf '```layers\ntop → low lwo\nlow →\nbeside →\ninclude →\n```\n' >"$TMP/typo/docs/architecture.md"
tap_run "a layer naming a missing folder is an error" 2 sh "$check" "$TMP/typo"
tap_has "it names the folder" "$TMP/err" 'names lwo/, which does not exist'
tap_done
