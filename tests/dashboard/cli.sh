#!/bin/sh
# cli.sh — `relay-tune dashboard` and `relay-tune report` from the command
# line: help, options checked with a clear message and exit 2, a missing
# database or a bad address refused with exit 1; the report of a database
# (a log of every failure kind, imported) is one self-contained HTML file
# that links nothing outside itself, also to standard output; an unknown
# session and an unwritable output are errors; neither command writes the
# database.
. "$(dirname "$0")/../lib.sh"
GEN="$top_builddir/tests/db/gen_log"

# expect NAME RC PATTERN CMD...: CMD exits RC and its stderr matches PATTERN
expect() {
    name=$1 want=$2 pat=$3
    shift 3
    "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ "$rc" = "$want" ] && grep -q -- "$pat" "$TMP/err"; then
        tap_ok "$name"
    else
        tap_fail "$name" "exit $rc (want $want)" "$(cat "$TMP/err")"
    fi
}

if "$RELAY_TUNE" --help | grep -q '^  dashboard ' && "$RELAY_TUNE" --help | grep -q '^  report '; then
    tap_ok "relay-tune --help lists dashboard and report"
else
    tap_fail "relay-tune --help lists dashboard and report"
fi
if "$RELAY_TUNE" dashboard --help | grep -q -- '--port N' && "$RELAY_TUNE" report --help | grep -q -- '-o REPORT.html'; then
    tap_ok "each command has its --help"
else
    tap_fail "each command has its --help"
fi

DB="$TMP/t.db"
"$GEN" 60 >"$TMP/log"
"$RELAY_TUNE" db import "$TMP/log" --db "$DB" >/dev/null 2>&1
sum() { cksum <"$DB"; }
before=$(sum)

expect "dashboard: a missing database" 1 "nothing.db: cannot open the database" "$RELAY_TUNE" dashboard --db "$TMP/nothing.db"
[ -e "$TMP/nothing.db" ] && tap_fail "dashboard creates no database" || tap_ok "dashboard creates no database"
expect "dashboard: --port out of range" 2 "port number (0 to 65535), not '70000'" "$RELAY_TUNE" dashboard --db "$DB" --port 70000
expect "dashboard: --port not a number" 2 "not '80x'" "$RELAY_TUNE" dashboard --db "$DB" --port 80x
expect "dashboard: --host not an address" 1 "not a numeric IPv4 or IPv6 address" "$RELAY_TUNE" dashboard --db "$DB" --host example.org
expect "dashboard: an unknown option" 2 "unknown option '--bogus'" "$RELAY_TUNE" dashboard --db "$DB" --bogus
expect "dashboard: an option missing its value" 2 "\-\-port needs a value" "$RELAY_TUNE" dashboard --db "$DB" --port
expect "report: no -o" 2 "give the output file with -o" "$RELAY_TUNE" report --db "$DB"
expect "report: a malformed session" 1 "'abc' is not a session id" "$RELAY_TUNE" report --db "$DB" --session abc -o "$TMP/r.html"
expect "report: an unknown session" 1 "no session 00000000-0000-4000-8000-000000000000" \
    "$RELAY_TUNE" report --db "$DB" --session 00000000-0000-4000-8000-000000000000 -o "$TMP/r.html"
expect "report: an unwritable output" 1 "cannot write $TMP/no/such/dir.html" "$RELAY_TUNE" report --db "$DB" -o "$TMP/no/such/dir.html"
expect "report: a missing database" 1 "nothing.db: cannot open the database" "$RELAY_TUNE" report --db "$TMP/nothing.db" -o "$TMP/r.html"

if "$RELAY_TUNE" report --db "$DB" -o "$TMP/r.html" 2>"$TMP/err"; then
    f="$TMP/r.html"
    if grep -q '<script type="application/json" id="rt-data">' "$f" && grep -q 'Chart.js v3' "$f" &&
        grep -q '"/api/benchmarks":' "$f" && ! grep -Eiq '<script src=|<link rel="stylesheet"|(src|href)="?(https?:)?//|url\((https?:)?//' "$f"; then
        tap_ok "report: one file with the data, Chart.js and the application inline, linking nothing outside"
    else
        tap_fail "report: one self-contained file" "$(grep -Eio '<script src=[^>]*>|<link rel="stylesheet"[^>]*>|(src|href)="?(https?:)?//[^ "]*' "$f" | head -5)"
    fi
    session=$(sed -n 's/.*"\/api\/sessions\/\([0-9a-f-]\{36\}\)":.*/\1/p' "$f" | head -n 1)
    n=$(grep -o '"/api/sessions/[0-9a-f-]*/measurements":' "$f" | wc -l)
    if [ -n "$session" ] && [ "$n" -ge 1 ]; then
        tap_ok "report: each session with its measurements ($n)"
    else
        tap_fail "report: each session with its measurements" "sessions: $n"
    fi
    if "$RELAY_TUNE" report --db "$DB" --session "$session" -o - >"$TMP/one.html" 2>"$TMP/err" &&
        grep -q "\"session\":\"$session\"" "$TMP/one.html" && [ "$(grep -o '/measurements":' "$TMP/one.html" | wc -l)" = 1 ]; then
        tap_ok "report --session ID -o -: that session only, on standard output"
    else
        tap_fail "report --session ID -o -: that session only" "$(cat "$TMP/err")"
    fi
else
    tap_fail "report writes the file" "$(cat "$TMP/err")"
fi
if [ "$(sum)" = "$before" ]; then
    tap_ok "neither command changed the database"
else
    tap_fail "neither command changed the database"
fi
tap_done
