#!/bin/sh
# browser.sh — the dashboard in headless Chromium: a database made by a short
# real `relay-tune tune` run, a session imported from a log whose strings
# hold <script> and HTML markup (model, host, tuner, error message), and
# benchmark results of two commits on two hosts and of the run's kernels;
# `relay-tune dashboard --port 0` serves it on loopback and
# tests/dashboard/pages.mjs drives every page and the static report
# (playwright-core with Debian's /usr/bin/chromium), then watches the page
# of a session that a second `tune` is writing update by itself, saving a screenshot of
# each page in tests/dashboard/screenshots/ of the build tree. The tools are
# installed by scripts/setup.sh: when one is missing the test fails and says
# which, rather than passing without looking.
. "$(dirname "$0")/../lib.sh"
export RELAY_TUNE_CACHE="$TMP/cache"
HERE="$top_srcdir/tests/dashboard"
SHOTS="$top_builddir/tests/dashboard/screenshots"

missing=
command -v node >/dev/null 2>&1 || missing="$missing node (nodejs)"
[ -x /usr/bin/chromium ] || missing="$missing /usr/bin/chromium (Debian package chromium)"
[ -f "$HERE/node_modules/playwright-core/package.json" ] || missing="$missing playwright-core (npm, in tests/dashboard/node_modules)"
if [ -n "$missing" ]; then
    tap_fail "the browser test's tools are installed (run scripts/setup.sh)" "missing:$missing"
    tap_done
    exit 1
fi
tap_ok "the browser test's tools are installed"

# ---- a database from a real tuning run ------------------------------------
M="$TMP/tiny.relay"
cat >"$M" <<'EOF'
#[version = "0.0.5"]
def @main(%x: Tensor[(1, 8, 8, 8), float32], %w: Tensor[(16, 8, 3, 3), float32], %d: Tensor[(16, 1024), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3]);
  %1 = nn.relu(%0);
  %2 = reshape(%1, newshape=[1, 1024]);
  nn.dense(%2, %d, units=16)
}
EOF
DB="$TMP/t.db"
if "$RELAY_TUNE" tune "$M" --trials 16 --db "$DB" --seed 1 --repeat 1 --min-repeat-ms 1 --progress lines >"$TMP/tune" 2>&1; then
    tap_ok "a short tuning run fills the database"
else
    tap_fail "a short tuning run fills the database" "$(cat "$TMP/tune")"
fi

# ---- a session with markup in its strings, imported from a log ------------
"$RELAY_TUNE" db export --db "$DB" >"$TMP/log"
node -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").slice(0, 2).map(JSON.parse);
lines.forEach((r, i) => {
  Object.assign(r.provenance, { session: "0badc0de-0000-4000-8000-000000000001", tuner: "<i>tuner</i>",
    model: "<script>window.__pwned=1</script><b>bold</b>", host: "<img src=x onerror=window.__pwned=3>",
    timestamp: r.provenance.timestamp - 86400 + i });
  if (i === 1) Object.assign(r.result, { costs: [], error: "compile_error", error_msg: "cc: <img src=x onerror=window.__pwned=2>\n</pre><script>window.__pwned=4</script>" });
  else r.result.costs = [r.result.costs[0] * 1.5];
  console.log(JSON.stringify(r));
});' "$TMP/log" >"$TMP/markup.log"
if "$RELAY_TUNE" db import "$TMP/markup.log" --db "$DB" >"$TMP/out" 2>&1; then
    tap_ok "a log whose strings hold <script> and markup imports"
else
    tap_fail "a log whose strings hold <script> and markup imports" "$(cat "$TMP/out")"
fi

# ---- benchmark results: two commits on two hosts, and the run's kernels ----
hashes=$(sed -n 's/.*"hash":"\([0-9a-f]*\)".*/\1/p' "$TMP/log" | sort -u)
{
    t=1790000000
    for c in "a1b2c3d host-1 3.0" "d4e5f6a host-1 2.6" "d4e5f6a host-2 2.9"; do
        set -- $c
        for src in default tuned pytorch; do
            case $src in default) f=1 ;; tuned) f=0.6 ;; *) f=0.75 ;; esac
            s=$(awk "BEGIN { print $3 * $f / 1000 }")
            echo "{\"model\":\"resnet18.relay\",\"target\":\"cpu\",\"config_source\":\"$src\",\"mean\":$s,\"median\":$s,\"min\":$s,\"max\":$s,\"stddev\":0,\"repeats\":10,\"commit\":\"$1\",\"timestamp\":$t,\"host\":\"$2\"}"
            t=$((t + 1))
        done
    done
    for h in $hashes; do
        for src in default tuned onednn openblas; do
            case $src in default) s=0.00004 ;; tuned) s=0.00001 ;; onednn) s=0.000008 ;; *) s=0.000012 ;; esac
            echo "{\"model\":\"kernel $h shape-$h\",\"target\":\"cpu\",\"config_source\":\"$src\",\"mean\":$s,\"median\":$s,\"min\":$s,\"max\":$s,\"stddev\":0,\"repeats\":10,\"commit\":\"d4e5f6a\",\"timestamp\":$t,\"host\":\"host-1\",\"isa\":\"avx512\",\"peak_gflops\":40,\"threads\":2}"
        done
    done
} >"$TMP/bench.jsonl"
if "$RELAY_TUNE" db bench-add "$TMP/bench.jsonl" --db "$DB" >"$TMP/out" 2>&1; then
    tap_ok "benchmark results store"
else
    tap_fail "benchmark results store" "$(cat "$TMP/out")"
fi

# ---- the report and the server --------------------------------------------
if "$RELAY_TUNE" report --db "$DB" -o "$TMP/report.html" 2>"$TMP/err" && [ -s "$TMP/report.html" ]; then
    tap_ok "report writes the static page"
else
    tap_fail "report writes the static page" "$(cat "$TMP/err")"
fi
"$RELAY_TUNE" dashboard --db "$DB" --port 0 >"$TMP/serve" 2>&1 &
server=$!
url=
for _ in $(seq 1 100); do
    url=$(sed -n 's|.* at \(http://127.0.0.1:[0-9]*\)/ .*|\1|p' "$TMP/serve")
    [ -n "$url" ] && break
    sleep 0.1
done
if [ -n "$url" ]; then
    tap_ok "dashboard --port 0 serves on a free loopback port"
    mkdir -p "$SHOTS"
    rm -f "$SHOTS"/*.png
    # the live check runs a longer tune of the same model on the database
    tune="[\"$RELAY_TUNE\", \"tune\", \"$M\", \"--trials\", \"200\", \"--db\", \"$DB\", \"--seed\", \"2\", \"--repeat\", \"1\", \"--min-repeat-ms\", \"1\", \"--tuner\", \"random\", \"--progress\", \"lines\"]"
    node "$HERE/pages.mjs" "$url" "$TMP/report.html" "$SHOTS" "$tune" >"$TMP/pages" 2>&1
    rc=$?
    while IFS= read -r line; do
        case "$line" in
        PASS\ *) tap_ok "${line#PASS }" ;;
        FAIL\ *) tap_fail "${line#FAIL }" ;;
        esac
    done <"$TMP/pages"
    if [ $rc -eq 0 ] && grep -q '^PASS ' "$TMP/pages"; then
        tap_ok "the page checks ran to the end ($(ls "$SHOTS" | wc -l) screenshots in $SHOTS)"
    else
        tap_fail "the page checks ran to the end" "$(grep -v '^PASS ' "$TMP/pages")"
    fi
else
    tap_fail "dashboard --port 0 serves on a free loopback port" "$(cat "$TMP/serve")"
fi
kill -TERM "$server" 2>/dev/null
if wait "$server"; then
    tap_ok "the dashboard stops cleanly on SIGTERM"
else
    tap_fail "the dashboard stops cleanly on SIGTERM" "$(cat "$TMP/serve")"
fi
tap_done
