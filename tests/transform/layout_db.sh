#!/bin/sh
# layout_db.sh — the block as a tuned knob and the layout DP's kernel times
# from the database (docs/layouts.md, "The block as a tuned knob"), on
# tests/transform/layout/blocks.relay: two convs of 32 channels, whose
# candidate blocks at lanes 8 are 8, 16 and 32.
# - tasks --layout-auto: one conv2d_nchwc task per conv and candidate block;
# - a short tune of those tasks, then compile --db --layout-auto, matches the
#   interpreter;
# - known answers: databases made from that tune's log with the costs of one
#   block's records set far below the others' (db import of the edited log)
#   make the DP pick that block (16, then 32), where the analytic model picks
#   the lanes (8); each choice compiled matches the interpreter (so every
#   block's kernel does);
# - --db without --layout-auto is refused; a missing database is an error.
. "$(dirname "$0")/../lib.sh"
B=$top_srcdir/tests/transform/layout/blocks.relay
RELAY_TUNE_CACHE="$TMP/cache"
export RELAY_TUNE_CACHE
NPYCMP="$top_builddir/tests/tools/npycmp"
W="--random-params 1 --layout-block 8"

# the tasks: conv 1 (3 -> 32) and conv 2 (32 -> 32), each in blocks 8, 16, 32
if "$RELAY_TUNE" tasks $W --layout-auto --keys "$B" >"$TMP/t" 2>"$TMP/err"; then
    got=$(grep -o 'kernel_layout="OIHW[0-9]*i[0-9]*o"' "$TMP/t" | sort | tr '\n' ' ')
    want='kernel_layout="OIHW16i16o" kernel_layout="OIHW32i32o" kernel_layout="OIHW3i16o" kernel_layout="OIHW3i32o" kernel_layout="OIHW3i8o" kernel_layout="OIHW8i8o" '
    if [ "$got" = "$want" ] && [ "$(grep -c ' conv2d_nchwc ' "$TMP/t")" -eq 6 ]; then
        tap_ok "layout_db: tasks --layout-auto has a conv2d_nchwc task per conv and candidate block (8, 16, 32)"
    else
        tap_fail "layout_db: tasks --layout-auto has a task per conv and candidate block" "got: $got" "$(head -n 12 "$TMP/t")"
    fi
else
    tap_fail "layout_db: tasks --layout-auto runs" "$(tail -n 5 "$TMP/err")"
fi
"$RELAY_TUNE" tasks $W "$B" >"$TMP/t1" 2>/dev/null
if [ "$(grep -c ' conv2d_nchwc ' "$TMP/t1")" -eq 2 ]; then
    tap_ok "layout_db: without --layout-auto the tasks are the rule's blocks only (2)"
else
    tap_fail "layout_db: without --layout-auto the tasks are the rule's blocks only" "$(cat "$TMP/t1")"
fi

# a short tune of every block's tasks, then the compiled model against the interpreter
"$RELAY_TUNE" run "$B" --random-params 3 --output "$TMP/i.npy" >/dev/null 2>"$TMP/err"
if "$RELAY_TUNE" tune $W --layout-auto "$B" --trials 12 --db "$TMP/t.db" --repeat 1 --min-repeat-ms 1 --progress lines \
    --confirm 0 >"$TMP/tune" 2>&1; then
    n=$("$RELAY_TUNE" db best --db "$TMP/t.db" --json | grep -o '"key": *"conv2d_nchwc|' | wc -l)
    if [ "$n" -eq 6 ]; then tap_ok "layout_db: tune --layout-auto measures all 6 tasks"
    else tap_fail "layout_db: tune --layout-auto measures all 6 tasks" "$n have a best record" "$(tail -n 12 "$TMP/tune")"; fi
else
    tap_fail "layout_db: tune --layout-auto runs" "$(tail -n 12 "$TMP/tune")"
fi
same() { # same NAME DB: run with the DB's blocks matches the interpreter
    if "$RELAY_TUNE" run "$B" --random-params 3 --target cpu --layout-block 8 --layout-auto --db "$2" \
        --output "$TMP/c.npy" >/dev/null 2>"$TMP/err" && "$NPYCMP" "$TMP/c.npy" "$TMP/i.npy" 1e-4 >>"$TMP/err" 2>&1; then
        tap_ok "layout_db: $1 matches the interpreter"
    else
        tap_fail "layout_db: $1 matches the interpreter" "$(tail -n 5 "$TMP/err")"
    fi
}
same "compiled with the tuned database and --layout-auto" "$TMP/t.db"

# the blocks the DP picks (opt prints the module after the pass)
picked() { # picked [--db DB]: the convs' kernel layouts after alter-layout, in order
    "$RELAY_TUNE" opt $W --layout-auto "$@" --no-types --print-after alter-layout -o /dev/null "$B" 2>&1 |
        sed '/^#\[metadata\]/,$d' | grep -o 'kernel_layout="OIHW[0-9]*i[0-9]*o"' | tr '\n' ' '
}
got=$(picked)
if [ "$got" = 'kernel_layout="OIHW3i8o" kernel_layout="OIHW8i8o" ' ]; then
    tap_ok "layout_db: without a database the analytic model picks the lanes (8)"
else
    tap_fail "layout_db: without a database the analytic model picks the lanes (8)" "got: $got"
fi
# a database whose records of block B cost 1 us and all others 10 ms
"$RELAY_TUNE" db export --db "$TMP/t.db" >"$TMP/log" 2>"$TMP/err"
cheap() { # cheap B: a database where block B is the fastest, named $TMP/bB.db
    sed -e 's/"costs":\[[^]]*\]/"costs":[0.01]/' -e "/i${1}o/s/\"costs\":\[[^]]*\]/\"costs\":[0.000001]/" "$TMP/log" \
        >"$TMP/b$1.jsonl"
    rm -f "$TMP/b$1.db"
    "$RELAY_TUNE" db import --db "$TMP/b$1.db" "$TMP/b$1.jsonl" >/dev/null 2>>"$TMP/err"
}
for b in 16 32; do
    cheap $b
    got=$(picked --db "$TMP/b$b.db")
    if [ "$got" = "kernel_layout=\"OIHW3i${b}o\" kernel_layout=\"OIHW${b}i${b}o\" " ]; then
        tap_ok "layout_db: a database where block $b's kernels are fastest makes the DP pick $b"
    else
        tap_fail "layout_db: a database where block $b's kernels are fastest makes the DP pick $b" "got: $got" \
            "$(tail -n 5 "$TMP/err")"
    fi
    same "compiled with the DP's blocks from that database (block $b)" "$TMP/b$b.db"
done
# records of another target are not this target's times: the analytic model again
got=$(picked --db "$TMP/b32.db" --target "cpu -cores=1")
if [ "$got" = 'kernel_layout="OIHW3i8o" kernel_layout="OIHW8i8o" ' ]; then
    tap_ok "layout_db: records of another target string are not used (the analytic model picks 8)"
else
    tap_fail "layout_db: records of another target string are not used" "got: $got"
fi

# errors
tap_run "layout_db: opt --db without --layout-auto is refused" 1 \
    "$RELAY_TUNE" opt $W --db "$TMP/t.db" -o /dev/null "$B"
tap_has "layout_db: ... saying it needs --layout-auto" "$TMP/err" "needs --layout-auto"
tap_run "layout_db: a missing database is an error" 1 \
    "$RELAY_TUNE" opt $W --layout-auto --db "$TMP/none.db" -o /dev/null "$B"
tap_has "layout_db: ... naming it" "$TMP/err" "none.db"
tap_done
