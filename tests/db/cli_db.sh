#!/bin/sh
# cli_db.sh — `relay-tune db`: the default path (--db, $RELAY_TUNE_DB,
# ./relay-tune.db), import with its counts and rejections, export and its exact
# round trip, filters, merge, stats and best (text and JSON), gc, benchmark
# results (bench-add, benchmarks), refused files and usage errors.
. "$(dirname "$0")/../lib.sh"
GEN="$top_builddir/tests/db/gen_log"
RT=$RELAY_TUNE
check() { # check NAME EXPECTED_RC COMMAND...
    name=$1 want=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ $rc -eq "$want" ]; then tap_ok "$name"; else tap_fail "$name (rc $rc, want $want)" "$(cat "$TMP/err")"; fi
}
has() { # has NAME FILE PATTERN: the file contains the fixed string
    if grep -qF -- "$3" "$2"; then tap_ok "$1"; else tap_fail "$1" "want: $3" "got: $(head -c 2000 "$2")"; fi
}
lacks() {
    if grep -qF -- "$3" "$2"; then tap_fail "$1" "unwanted: $3"; else tap_ok "$1"; fi
}
unset RELAY_TUNE_DB

check "relay-tune --help lists db" 0 "$RT" --help
has "--help names the db command" "$TMP/out" "db "
check "db --help exits 0" 0 "$RT" db --help
has "db --help states the default path" "$TMP/out" 'default: $RELAY_TUNE_DB if set, else ./relay-tune.db'
check "db without a command is a usage error" 2 "$RT" db
check "unknown db command" 2 "$RT" db frob
check "unknown option" 2 "$RT" db stats --bogus
check "option that does not apply" 2 "$RT" db stats --days 3
check "import needs a file" 2 "$RT" db import --db "$TMP/a.db"
check "stats of a missing database fails" 1 "$RT" db stats --db "$TMP/none.db"
has "the missing database is named" "$TMP/err" "none.db: no such database"
[ ! -e "$TMP/none.db" ] && tap_ok "stats does not create a database" || tap_fail "stats does not create a database"

"$GEN" 300 >"$TMP/log.jsonl"
check "import a log" 0 "$RT" db import --db "$TMP/a.db" "$TMP/log.jsonl"
has "import reports its counts" "$TMP/out" "imported 300, duplicates 0, rejected 0"
check "import it again" 0 "$RT" db import --db "$TMP/a.db" "$TMP/log.jsonl"
has "the second import finds only duplicates" "$TMP/out" "imported 0, duplicates 300, rejected 0"

# malformed lines of many kinds, between good ones
good=$(head -n 1 "$TMP/log.jsonl")
{
    echo "$good"
    echo 'not json at all'
    echo '{"v":2}'
    echo '[1,2,3]'
    echo "$good" | sed 's/"cores":4/"cores":"four"/'
    echo "$good" | sed 's/"error":"none"/"error":"melted"/'
    echo "$good" | sed 's/"costs":\[[^]]*\]/"costs":[-1]/'
    echo "$good" | sed 's/"timestamp":[0-9.]*/"timestamp":1e300/'
    echo "$good" | sed 's/"v":1,/"v":1,"surprise":true,/'
    echo "$good" | sed 's/data=1x/data=2x/'
    echo "$good" | sed 's/"index":[0-9]*,/"index":"x",/'
    echo ""
    "$GEN" 1 5000
} >"$TMP/mixed.jsonl"
check "import a log with malformed lines" 0 "$RT" db import --db "$TMP/m.db" "$TMP/mixed.jsonl"
has "malformed lines are counted" "$TMP/out" "imported 2, duplicates 0, rejected 10"
has "a rejection names file and line" "$TMP/err" "mixed.jsonl:2: rejected: not valid JSON"
has "an unknown version is named" "$TMP/err" "mixed.jsonl:3: rejected: v: unknown log version 2"
has "a wrong type is named" "$TMP/err" "mixed.jsonl:5: rejected: target.cores: expected an integer, got a string"
has "an unknown error kind is named" "$TMP/err" "unknown error kind 'melted'"
has "an absurd value is named" "$TMP/err" "mixed.jsonl:8: rejected: provenance.timestamp"
has "an unknown field is named" "$TMP/err" "surprise: unknown field"
has "an altered key is caught by its hash" "$TMP/err" "does not match the key"
check "import --strict exits 1 on rejections" 1 "$RT" db import --strict --db "$TMP/m2.db" "$TMP/mixed.jsonl"
has "import --strict still imports the good lines" "$TMP/out" "imported 2,"

# the default path: --db, else $RELAY_TUNE_DB, else ./relay-tune.db
check "RELAY_TUNE_DB names the database" 0 env RELAY_TUNE_DB="$TMP/a.db" "$RT" db stats
has "stats through RELAY_TUNE_DB" "$TMP/out" "records    300"
check "--db wins over RELAY_TUNE_DB" 0 env RELAY_TUNE_DB="$TMP/none.db" "$RT" db stats --db "$TMP/a.db"
mkdir -p "$TMP/cwd"
check "without either, ./relay-tune.db" 0 sh -c "cd '$TMP/cwd' && '$RT' db import - < '$TMP/log.jsonl'"
[ -f "$TMP/cwd/relay-tune.db" ] && tap_ok "import from stdin created ./relay-tune.db" || tap_fail "import from stdin created ./relay-tune.db"

# export round trip
check "export" 0 "$RT" db export --db "$TMP/a.db"
cp "$TMP/out" "$TMP/e1.jsonl"
[ "$(wc -l <"$TMP/e1.jsonl")" -eq 300 ] && tap_ok "export writes 300 lines" || tap_fail "export writes 300 lines"
check "export -o FILE" 0 "$RT" db export --db "$TMP/a.db" -o "$TMP/e1b.jsonl"
cmp -s "$TMP/e1.jsonl" "$TMP/e1b.jsonl" && tap_ok "-o writes the same log" || tap_fail "-o writes the same log"
check "import the export into an empty db" 0 "$RT" db import --db "$TMP/b.db" "$TMP/e1.jsonl"
has "every exported record is imported" "$TMP/out" "imported 300, duplicates 0, rejected 0"
"$RT" db export --db "$TMP/b.db" >"$TMP/e2.jsonl"
cmp -s "$TMP/e1.jsonl" "$TMP/e2.jsonl" && tap_ok "export -> import -> export is byte-identical" ||
    tap_fail "export -> import -> export is byte-identical" "$(diff "$TMP/e1.jsonl" "$TMP/e2.jsonl" | head -5)"
key='dense|float32|data=1x16x28x28|weight=16x16x3x3'
check "export --workload" 0 "$RT" db export --db "$TMP/a.db" --workload "$key"
n=$(wc -l <"$TMP/out")
[ "$n" -eq 50 ] && tap_ok "export --workload keeps one workload (50)" || tap_fail "export --workload keeps one workload" "got $n"
check "export --target of another target" 0 "$RT" db export --db "$TMP/a.db" --target opencl
[ ! -s "$TMP/out" ] && tap_ok "export --target filters" || tap_fail "export --target filters"

# merge
"$GEN" 200 100000 "opencl -device=0" >"$TMP/ocl.jsonl"
"$RT" db import --db "$TMP/c.db" "$TMP/ocl.jsonl" >/dev/null 2>&1
check "merge another database" 0 "$RT" db merge --db "$TMP/b.db" "$TMP/c.db"
has "merge reports its counts" "$TMP/out" "imported 200, duplicates 0, rejected 0"
check "merge it again" 0 "$RT" db merge --db "$TMP/b.db" "$TMP/c.db"
has "a second merge finds duplicates" "$TMP/out" "imported 0, duplicates 200, rejected 0"
check "merge of a text file fails" 1 "$RT" db merge --db "$TMP/b.db" "$TMP/log.jsonl"
has "merge names what is wrong" "$TMP/err" "log.jsonl: not a relay-tune database"

# stats, best
check "stats" 0 "$RT" db stats --db "$TMP/b.db"
has "stats counts records" "$TMP/out" "records    500"
has "stats lists failures by kind" "$TMP/out" "failed records by kind:"
check "stats --json" 0 "$RT" db stats --db "$TMP/b.db" --json
has "stats --json records" "$TMP/out" '"records":500'
has "stats --json errors by kind" "$TMP/out" '"errors":{"invalid_config":'
check "best" 0 "$RT" db best --db "$TMP/b.db"
has "best prints a table" "$TMP/out" "GFLOP/s"
lines=$(wc -l <"$TMP/out")
[ "$lines" -eq 13 ] && tap_ok "best: one row per workload and target (12) plus the header" || tap_fail "best: one row per workload and target" "$(cat "$TMP/out")"
check "best --target --json" 0 "$RT" db best --db "$TMP/b.db" --target "opencl -device=0" --json
has "best --json has gflops" "$TMP/out" '"gflops":'
has "best --json has speedup" "$TMP/out" '"speedup":'
has "best --json has the config" "$TMP/out" '"config":{"entities":'
lacks "best --target keeps one target" "$TMP/out" "skylake"

# gc
check "gc --days 0" 0 "$RT" db gc --db "$TMP/b.db" --days 0
has "gc reports what it deleted" "$TMP/out" "deleted "
"$RT" db stats --db "$TMP/b.db" --json >"$TMP/s.json"
has "gc leaves no failed record" "$TMP/s.json" '"failed_records":0'
check "gc --days -1 is a usage error" 2 "$RT" db gc --db "$TMP/b.db" --days -1

# benchmark results: bench-add reads JSON lines, benchmarks lists them
B='"target":"cpu","mean":0.0105,"median":0.01,"min":0.009,"max":0.012,"stddev":0.001,"repeats":20'
{
    printf '{"model":"resnet18.relay","config_source":"tuned","commit":"abc1234","host":"h1","isa":"avx512","peak_gflops":232.5,"threads":2,%s}\n' "$B"
    printf '\n{"model":"resnet18.relay","config_source":"pytorch","timestamp":1700000000,%s}\n' "$B"
} >"$TMP/bench.jsonl"
check "bench-add stores results" 0 "$RT" db bench-add --db "$TMP/bench.db" "$TMP/bench.jsonl"
has "bench-add counts them" "$TMP/out" "stored 2 benchmark results"
check "benchmarks lists them" 0 "$RT" db benchmarks --db "$TMP/bench.db" --model resnet18.relay
has "the listing shows the commit and host" "$TMP/out" "abc1234       h1"
has "the listing shows the median in ms" "$TMP/out" "10.0000"
has "the listing shows the host's ISA and peak on its threads" "$TMP/out" "avx512     232.5/2  resnet18.relay"
has "a given timestamp is kept" "$TMP/out" "2023-11-14 22:13:20  pytorch"
grep pytorch "$TMP/out" | grep -qF " $(uname -n) " && tap_ok "a missing host is this machine's" ||
    tap_fail "a missing host is this machine's" "$(cat "$TMP/out")"
check "benchmarks --json" 0 "$RT" db benchmarks --db "$TMP/bench.db" --json
has "the JSON carries the host" "$TMP/out" '"host":"h1"'
has "the JSON carries the ISA, peak and threads" "$TMP/out" '"isa":"avx512"'
has "the JSON carries the peak" "$TMP/out" '"peak_gflops":232.5'
"$RT" db benchmarks --db "$TMP/bench.db" --json | tr -d '[]' | sed 's/^ //; s/},$/}/' >"$TMP/again.jsonl"
check "the JSON reads back into another database" 0 "$RT" db bench-add --db "$TMP/bench2.db" "$TMP/again.jsonl"
has "all of it" "$TMP/out" "stored 2 benchmark results"
printf '{"model":"m","config_source":"tuned","colour":"red",%s}\n' "$B" >"$TMP/badfield.jsonl"
check "an unknown field is refused" 1 "$RT" db bench-add --db "$TMP/bench.db" "$TMP/badfield.jsonl"
has "the refusal names the line and field" "$TMP/err" "badfield.jsonl:1:"
has "the refusal names the field" "$TMP/err" "colour"
printf '{"model":"m2",%s}\n{"model":"m2","target":"cpu","mean":1,"median":2,"min":3,"max":4,"stddev":0,"repeats":1}\n' \
    "$B" >"$TMP/order.jsonl"
check "statistics out of order are refused" 1 "$RT" db bench-add --db "$TMP/bench.db" "$TMP/order.jsonl"
check "nothing of that file was stored" 0 "$RT" db benchmarks --db "$TMP/bench.db" --model m2
lacks "no row of m2" "$TMP/out" " m2"
check "benchmarks of a missing database fails" 1 "$RT" db benchmarks --db "$TMP/none.db"

# refused files
printf 'just some text, not a database\n' >"$TMP/text.db"
check "a text file is refused" 1 "$RT" db stats --db "$TMP/text.db"
has "the refusal says why" "$TMP/err" "not a relay-tune database"
cp "$TMP/a.db" "$TMP/bad.db"
size=$(wc -c <"$TMP/bad.db")
dd if=/dev/urandom of="$TMP/bad.db" bs=1024 seek=8 count=$(( size / 1024 - 16 )) conv=notrunc 2>/dev/null
check "a corrupted file is refused" 1 "$RT" db stats --db "$TMP/bad.db"
has "the corruption is named" "$TMP/err" "corrupt"
check "importing into a text file is refused" 1 "$RT" db import --db "$TMP/text.db" "$TMP/log.jsonl"
[ "$(cat "$TMP/text.db")" = "just some text, not a database" ] && tap_ok "the text file is untouched" || tap_fail "the text file is untouched"
tap_done
