/* test_db.c — the tuning database: schema and migrations, refusing files that
 * are not ours or are damaged, storing records (batches, duplicates,
 * validation), best / top-k / all / similar lookups with a stable tie-break,
 * sessions, benchmark results, the JSON-lines log (strict parsing of many
 * malformed lines, exact round trip), merging, stats, best-with-speedup and gc. */
#include <math.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/db.h"
#include "tests/tap.h"

static char tmpdir[] = "/tmp/rt-test-db-XXXXXX";

static const char *tpath(const char *name)
{
    static char buf[8][256];
    static int k;
    char *p = buf[k++ % 8];
    snprintf(p, 256, "%s/%s", tmpdir, name);
    return p;
}

static db *open_db(const char *path)
{
    su_buf err = {0};
    db *d = db_open(path, NULL, &err);
    if (!d)
        diag("open %s: %s", path, su_buf_str(&err));
    su_buf_free(&err);
    return d;
}

/* Opening must fail; returns whether the message contains want. */
static bool refused(const char *path, const db_open_opts *o, const char *want)
{
    su_buf err = {0};
    db *d = db_open(path, o, &err);
    bool good = !d && strstr(su_buf_str(&err), want) != NULL;
    if (!good)
        diag("open %s: %s (want a refusal with '%s')", path, d ? "opened" : su_buf_str(&err), want);
    db_close(d);
    su_buf_free(&err);
    return good;
}

static double costs_a[] = {0.0010, 0.0012, 0.0011};
static double costs_b[] = {0.0020};
static double costs_c[] = {0.0005, 0.0005};

/* A sample record: workload w of template tmpl, config index i, given costs. */
static db_record rec(const char *key, const char *tmpl, int64_t i, const double *costs, size_t n, su_arena *a)
{
    db_record r = {0};
    r.workload.key = key;
    r.workload.tmpl = tmpl;
    r.workload.args = "{\"data\":[1,64,56,56],\"weight\":[64,64,3,3]}";
    r.workload.flops = 231211008;
    r.target = (db_target){"cpu -mcpu=skylake -cores=4", "Intel(R) Xeon(R)", "avx2 fma", 4, "Linux 6.1"};
    r.config_index = i;
    r.config = su_arena_printf(a, "{\"index\":%lld,\"entities\":[[\"tile_oc\",\"sp\",[-1,%lld,8]],"
                                  "[\"unroll\",\"ot\",16],[\"order\",\"re\",[1,0,2]],[\"ann\",\"an\",[\"vec\"]]]}",
                               (long long)i, (long long)(i % 7 + 1));
    r.costs = costs;
    r.ncosts = n;
    r.error = SU_MERR_NONE;
    r.counters = "{\"cycles\":123456,\"instructions\":99}";
    r.build_time = 0.25;
    r.run_time = 0.125;
    r.tuner = "random";
    r.timestamp = 1700000000.0 + (double)i;
    r.host = "node1";
    return r;
}

static int64_t count_rows(db *d, const char *sql)
{
    sqlite3_stmt *st;
    int64_t n = -1;
    if (sqlite3_prepare_v2(d->sql, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

static void raw_exec(const char *path, const char *sql)
{
    sqlite3 *s;
    sqlite3_open(path, &s);
    sqlite3_exec(s, sql, NULL, NULL, NULL);
    sqlite3_close(s);
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    fwrite(data, 1, n, f);
    fclose(f);
}

/* ---- schema ------------------------------------------------------------------ */

/* A version-2 file with a benchmark result: read-only it reads with host
 * "", and opening it migrates to version 3 keeping the result. */
static void test_migrate_v2(su_arena *a)
{
    const char *p2 = tpath("v2.db");
    su_buf err = {0};
    db_open_opts o2 = {0, 0, 2};
    db *d = db_open(p2, &o2, &err);
    ok(d && db_schema_version(d) == 2, "migrate: a file can be created at version 2");
    db_close(d);
    raw_exec(p2, "INSERT INTO benchmarks (model, target, config_source, mean, median, min, max, stddev,"
                 " repeats, commit_id, timestamp) VALUES ('resnet18.relay', 'cpu', 'tuned', 0.012, 0.011,"
                 " 0.010, 0.02, 0.001, 100, 'abc123', 1700000000)");
    db_open_opts ro = {DB_OPEN_READONLY, 0, 0};
    db_bench *bs = NULL;
    size_t n = 0;
    d = db_open(p2, &ro, &err);
    ok(d && db_benches(d, NULL, a, &bs, &n) && n == 1 && !strcmp(bs[0].host, ""),
       "migrate: a version-2 file read-only lists its results with host \"\"");
    db_close(d);
    d = open_db(p2);
    ok(d && db_schema_version(d) == DB_SCHEMA_VERSION, "migrate: reopening migrates version 2 to the current one");
    ok(d && db_benches(d, NULL, a, &bs, &n) && n == 1 && bs[0].repeats == 100 && !strcmp(bs[0].commit, "abc123") &&
           !strcmp(bs[0].host, ""),
       "migrate: benchmark results survive the migration, host \"\"");
    db_bench b = bs ? bs[0] : (db_bench){0};
    b.host = "bench-host";
    b.timestamp += 1;
    ok(d && db_add_bench(d, &b) && db_benches(d, NULL, a, &bs, &n) && n == 2 && !strcmp(bs[0].host, "bench-host"),
       "migrate: a new result keeps its host");
    ok(d && count_rows(d, "SELECT count(*) FROM sqlite_master WHERE name = 'benchmarks_model'") == 1,
       "migrate: version 3 keeps the benchmarks index");
    db_close(d);
    su_buf_free(&err);
}

/* A version-3 file with a benchmark result: read-only it reads with isa ""
 * and peak 0, and opening it migrates to version 4 keeping the result; a
 * new result keeps the host's ISA, peak and threads, which travel through
 * the JSON objects of bench-add and `db benchmarks --json` and show in the
 * table; a bad peak is refused. */
static void test_migrate_v3(su_arena *a)
{
    const char *p3 = tpath("v3.db");
    su_buf err = {0};
    db_open_opts o3 = {0, 0, 3};
    db *d = db_open(p3, &o3, &err);
    ok(d && db_schema_version(d) == 3, "migrate: a file can be created at version 3");
    db_close(d);
    raw_exec(p3, "INSERT INTO benchmarks (model, target, config_source, mean, median, min, max, stddev,"
                 " repeats, commit_id, timestamp, host) VALUES ('resnet18.relay', 'cpu', 'tuned', 0.012, 0.011,"
                 " 0.010, 0.02, 0.001, 100, 'abc123', 1700000000, 'old-host')");
    db_open_opts ro = {DB_OPEN_READONLY, 0, 0};
    db_bench *bs = NULL;
    size_t n = 0;
    d = db_open(p3, &ro, &err);
    ok(d && db_benches(d, NULL, a, &bs, &n) && n == 1 && !strcmp(bs[0].isa, "") && bs[0].peak_gflops == 0 &&
           bs[0].threads == 0 && !strcmp(bs[0].host, "old-host"),
       "migrate: a version-3 file read-only lists its results with isa \"\", peak 0, threads 0");
    db_close(d);
    d = open_db(p3);
    ok(d && db_schema_version(d) == DB_SCHEMA_VERSION, "migrate: reopening migrates version 3 to the current one");
    ok(d && db_benches(d, NULL, a, &bs, &n) && n == 1 && bs[0].repeats == 100 && !strcmp(bs[0].host, "old-host") &&
           !strcmp(bs[0].isa, "") && bs[0].peak_gflops == 0,
       "migrate: benchmark results survive the migration, isa \"\" and peak 0");
    db_bench b = bs ? bs[0] : (db_bench){0};
    b.timestamp += 1;
    b.isa = "avx2";
    b.peak_gflops = 77.25;
    b.threads = 2;
    ok(d && db_add_bench(d, &b) && db_benches(d, NULL, a, &bs, &n) && n == 2 && !strcmp(bs[0].isa, "avx2") &&
           bs[0].peak_gflops == 77.25 && bs[0].threads == 2,
       "bench: a new result keeps its ISA, peak and threads");
    su_buf out = {0}, why = {0};
    db_benches_print(bs, n, true, &out);
    ok(strstr(su_buf_str(&out), "\"isa\":\"avx2\"") && strstr(su_buf_str(&out), "\"peak_gflops\":77.25") &&
           strstr(su_buf_str(&out), "\"threads\":2"),
       "bench: the JSON has isa, peak_gflops and threads");
    /* the first object of the array, read back */
    const char *j = su_buf_str(&out) + 1, *end = strstr(j, "},");
    db_bench back = {0};
    ok(end && db_bench_parse(j, (size_t)(end + 1 - j), a, &back, &why) && !strcmp(back.isa, "avx2") &&
           back.peak_gflops == 77.25 && back.threads == 2 && back.median == b.median,
       "bench: the JSON reads back with the same ISA, peak and threads (%s)", su_buf_str(&why));
    const char *plain = "{\"model\":\"m\",\"target\":\"cpu\",\"mean\":1,\"median\":1,\"min\":1,\"max\":1,"
                        "\"stddev\":0,\"repeats\":1}";
    ok(db_bench_parse(plain, strlen(plain), a, &back, &why) && !strcmp(back.isa, "") && back.peak_gflops == 0 &&
           back.threads == 0,
       "bench: isa, peak_gflops and threads are optional (\"\", 0, 0)");
    su_buf_clear(&out);
    db_benches_print(bs, n, false, &out);
    ok(strstr(su_buf_str(&out), "peak GF/s") && strstr(su_buf_str(&out), "avx2") &&
           strstr(su_buf_str(&out), "77.2/2"),
       "bench: the table shows the ISA and the peak with its threads");
    b.timestamp += 1;
    b.peak_gflops = NAN;
    ok(d && !db_add_bench(d, &b) && strstr(db_errmsg(d), "peak_gflops"), "bench: a peak that is not a number is refused");
    b.peak_gflops = -1;
    ok(d && !db_add_bench(d, &b) && strstr(db_errmsg(d), "peak_gflops"), "bench: a negative peak is refused");
    b.peak_gflops = 10;
    b.threads = -2;
    ok(d && !db_add_bench(d, &b) && strstr(db_errmsg(d), "threads"), "bench: negative threads are refused");
    db_close(d);
    su_buf_free(&out);
    su_buf_free(&why);
    su_buf_free(&err);
}

static void test_schema(void)
{
    const char *p = tpath("new.db");
    db *d = open_db(p);
    ok(d != NULL, "schema: a new file is created");
    if (!d)
        return;
    is_int(db_schema_version(d), DB_SCHEMA_VERSION, "schema: new file is at the current version");
    is_int(count_rows(d, "PRAGMA application_id"), DB_APPLICATION_ID, "schema: application_id is RTDB");
    sqlite3_stmt *st;
    sqlite3_prepare_v2(d->sql, "PRAGMA journal_mode", -1, &st, NULL);
    sqlite3_step(st);
    is_str((const char *)sqlite3_column_text(st, 0), "wal", "schema: WAL mode");
    sqlite3_finalize(st);
    is_int(count_rows(d, "PRAGMA foreign_keys"), 1, "schema: foreign keys on");
    is_int(count_rows(d, "SELECT count(*) FROM sqlite_master WHERE name = 'records_lookup'"), 1,
           "schema: best-lookup index exists");
    db_close(d);
    d = open_db(p);
    ok(d && db_schema_version(d) == DB_SCHEMA_VERSION, "schema: reopening keeps the version");
    db_close(d);

    /* a file created at version 1 migrates forward, keeping its records */
    const char *p1 = tpath("v1.db");
    su_buf err = {0};
    db_open_opts o1 = {0, 0, 1};
    d = db_open(p1, &o1, &err);
    ok(d && db_schema_version(d) == 1, "migrate: a file can be created at version 1");
    su_arena a;
    su_arena_init(&a);
    db_record r = rec("dense|float32|a=1x512|b=1000x512", "dense.x86", 3, costs_a, 3, &a);
    ok(d && db_add_records(d, &r, 1, NULL, NULL, NULL), "migrate: a version-1 file stores records");
    ok(d && count_rows(d, "SELECT count(*) FROM sqlite_master WHERE name = 'benchmarks'") == 0,
       "migrate: version 1 has no benchmarks table");
    db_close(d);
    db_open_opts ro = {DB_OPEN_READONLY, 0, 0};
    d = db_open(p1, &ro, &err);
    ok(d && db_schema_version(d) == 1, "migrate: read-only open leaves an old file as it is");
    db_close(d);
    d = open_db(p1);
    ok(d && db_schema_version(d) == DB_SCHEMA_VERSION, "migrate: reopening migrates version 1 to the current one");
    ok(d && count_rows(d, "SELECT count(*) FROM records") == 1, "migrate: records survive the migration");
    ok(d && count_rows(d, "SELECT count(*) FROM sqlite_master WHERE name = 'benchmarks'") == 1,
       "migrate: version 2 adds the benchmarks table");
    db_close(d);
    test_migrate_v2(&a);
    test_migrate_v3(&a);
    su_arena_free(&a);
    su_buf_free(&err);

    /* files that are not ours, or are damaged, are refused with a message */
    const char *newer = tpath("newer.db");
    db_close(open_db(newer));
    raw_exec(newer, "PRAGMA user_version = 99");
    ok(refused(newer, NULL, "schema version 99 is newer"), "refuse: a newer schema version");
    const char *text = tpath("text.db");
    write_file(text, "hello, this is not a database\n", 30);
    ok(refused(text, NULL, "not a relay-tune database (not an SQLite file"), "refuse: a text file");
    char junk[8192];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (char)(i * 131 + 7);
    const char *bin = tpath("junk.db");
    write_file(bin, junk, sizeof junk);
    ok(refused(bin, NULL, "not a relay-tune database"), "refuse: random bytes");
    const char *foreign = tpath("foreign.db");
    raw_exec(foreign, "CREATE TABLE people (name TEXT); INSERT INTO people VALUES ('ann')");
    struct stat before, after;
    stat(foreign, &before);
    ok(refused(foreign, NULL, "without relay-tune's application_id"), "refuse: an SQLite file of another program");
    stat(foreign, &after);
    ok(before.st_size == after.st_size && before.st_mtime == after.st_mtime, "refuse: the foreign file is untouched");
    const char *other_app = tpath("otherapp.db");
    raw_exec(other_app, "PRAGMA application_id = 1234; CREATE TABLE t (x)");
    ok(refused(other_app, NULL, "application_id 0x000004d2"), "refuse: an SQLite file with another application_id");
    ok(refused(tmpdir, NULL, "not a regular file"), "refuse: a directory");
    db_open_opts nc = {DB_OPEN_NO_CREATE, 0, 0};
    ok(refused(tpath("absent.db"), &nc, "No such file"), "refuse: a missing file with NO_CREATE");
    ok(access(tpath("absent.db"), F_OK) != 0, "refuse: NO_CREATE creates nothing");
    const char *empty = tpath("empty.db");
    write_file(empty, "", 0);
    d = open_db(empty);
    ok(d != NULL, "an empty file becomes a new database");
    db_close(d);
}

/* Builds a database of many records, then damages pages after the first. */
static void test_corrupt(void)
{
    const char *p = tpath("corrupt.db");
    db *d = open_db(p);
    su_arena a;
    su_arena_init(&a);
    SU_VEC(db_record) v = {0};
    for (int i = 0; i < 2000; i++) {
        char *key = su_arena_printf(&a, "conv2d|float32|data=1x%dx56x56", i % 50 + 1);
        su_vec_push(&v, rec(key, "conv2d.x86", i, costs_a, 3, &a));
    }
    ok(d && db_add_records(d, v.data, v.len, NULL, NULL, NULL), "corrupt: setup stores 2000 records");
    db_close(d); /* the last close checkpoints the WAL into the file */
    su_vec_free(&v);
    su_arena_free(&a);
    FILE *f = fopen(p, "r+b");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    /* overwrite the middle third of the file with garbage */
    char garbage[4096];
    for (size_t i = 0; i < sizeof garbage; i++)
        garbage[i] = (char)(0xA5 ^ (i * 37));
    for (long off = size / 3; off < 2 * size / 3; off += (long)sizeof garbage) {
        fseek(f, off, SEEK_SET);
        fwrite(garbage, 1, sizeof garbage, f);
    }
    fclose(f);
    ok(refused(p, NULL, "corrupt"), "refuse: a file with damaged pages (quick_check)");
    /* a damaged header */
    const char *h = tpath("badheader.db");
    db_close(open_db(h));
    f = fopen(h, "r+b");
    fwrite("SQLite format 2\0", 1, 16, f);
    fclose(f);
    ok(refused(h, NULL, "not a relay-tune database"), "refuse: a file with a damaged header");
    /* a truncated file */
    const char *t = tpath("truncated.db");
    d = open_db(t);
    su_arena_init(&a);
    for (int i = 0; i < 500; i++) {
        char *key = su_arena_printf(&a, "conv2d|float32|data=1x%dx28x28", i);
        db_record r = rec(key, "conv2d.x86", i, costs_a, 3, &a);
        db_add_records(d, &r, 1, NULL, NULL, NULL);
    }
    su_arena_free(&a);
    db_close(d);
    struct stat sb;
    stat(t, &sb);
    ok(truncate(t, sb.st_size / 2) == 0 && refused(t, NULL, "corrupt"), "refuse: a truncated file");
}

/* ---- records and lookups -------------------------------------------------------- */

typedef struct rejects {
    int n;
    char last[512];
    size_t last_index;
} rejects;

static void on_reject(void *ctx, size_t index, const char *why)
{
    rejects *r = ctx;
    r->n++;
    r->last_index = index;
    snprintf(r->last, sizeof r->last, "%s", why);
}

static void test_records(void)
{
    db *d = open_db(tpath("records.db"));
    su_arena a;
    su_arena_init(&a);
    const char *k1 = "conv2d_nchwc|float32|data=1x64x56x56|weight=64x64x3x3";
    const char *k2 = "conv2d_nchwc|float32|data=1x128x28x28|weight=128x128x3x3";
    const char *k3 = "dense|float32|data=1x512|weight=1000x512";
    db_record b[6] = {
        rec(k1, "conv2d_nchwc.x86", 5, costs_a, 3, &a), rec(k1, "conv2d_nchwc.x86", 9, costs_c, 2, &a),
        rec(k1, "conv2d_nchwc.x86", 2, costs_b, 1, &a), rec(k2, "conv2d_nchwc.x86", 1, costs_b, 1, &a),
        rec(k3, "dense.x86", 0, costs_a, 3, &a),        rec(k1, "conv2d_nchwc.x86", 7, NULL, 0, &a),
    };
    b[5].error = SU_MERR_COMPILE_ERROR;
    b[5].error_msg = "error: 'x' undeclared\n  x = 1;\n  ^";
    b[0].is_default = true;
    db_counts c = {0};
    ok(db_add_records(d, b, 6, &c, NULL, NULL), "records: a batch of 6 is stored");
    ok(c.added == 6 && c.duplicates == 0 && c.rejected == 0, "records: counts 6 added");
    c = (db_counts){0};
    ok(db_add_records(d, b, 6, &c, NULL, NULL) && c.added == 0 && c.duplicates == 6,
       "records: the same batch again is 6 exact duplicates");
    db_record changed = b[0];
    changed.timestamp += 1;
    c = (db_counts){0};
    ok(db_add_records(d, &changed, 1, &c, NULL, NULL) && c.added == 1, "records: a record differing in one field is new");

    /* strict mode: one invalid record fails the batch, nothing stored */
    db_record bad[2] = {rec(k3, "dense.x86", 42, costs_a, 3, &a), rec(k3, "dense.x86", 43, costs_a, 3, &a)};
    bad[1].timestamp = 12;
    int64_t before = count_rows(d, "SELECT count(*) FROM records");
    ok(!db_add_records(d, bad, 2, NULL, NULL, NULL), "records: strict batch with an invalid record fails");
    ok(strstr(db_errmsg(d), "record 1 of the batch is invalid: provenance.timestamp") != NULL,
       "records: the message names the record and field");
    is_int(count_rows(d, "SELECT count(*) FROM records"), before, "records: nothing of the failed batch is stored");
    rejects rj = {0};
    c = (db_counts){0};
    ok(db_add_records(d, bad, 2, &c, on_reject, &rj) && c.added == 1 && c.rejected == 1 && rj.n == 1 &&
           rj.last_index == 1,
       "records: lenient batch stores the valid record and reports the invalid one");

    /* a workload key must keep its description */
    db_record conflict = rec(k3, "dense.x86", 50, costs_a, 3, &a);
    conflict.workload.flops = 1;
    rj = (rejects){0};
    ok(db_add_records(d, &conflict, 1, NULL, on_reject, &rj) && rj.n == 1 && strstr(rj.last, "another template"),
       "records: a known key with other flops is rejected");
    /* args: a newer writer's add fields, an older one's lack them */
    db_record *wr;
    size_t wn;
    db_record more = rec(k3, "dense.x86", 51, costs_a, 3, &a), less = rec(k3, "dense.x86", 52, costs_a, 3, &a),
              other = rec(k3, "dense.x86", 53, costs_a, 3, &a);
    more.workload.args = "{\"a\":[1,512],\"func\":\"def @main() { 0f }\"}";
    ok(db_add_records(d, &more, 1, NULL, NULL, NULL), "records: args adding a field are the same workload");
    bool read = db_workload_records(d, k3, NULL, &a, &wr, &wn);
    ok(read && wn && strstr(wr[0].workload.args, "\"func\""), "records: the workload's args grow to the union (%s)",
       wn ? wr[0].workload.args : "");
    less.workload.args = "{\"a\":[1,512]}";
    bool added = db_add_records(d, &less, 1, NULL, NULL, NULL);
    read = db_workload_records(d, k3, NULL, &a, &wr, &wn);
    ok(added && read && wn && strstr(wr[0].workload.args, "\"func\""),
       "records: args lacking a field are the same workload, the stored args stay (%s)", db_errmsg(d));
    other.workload.args = "{\"a\":[1,256]}";
    rj = (rejects){0};
    ok(db_add_records(d, &other, 1, NULL, on_reject, &rj) && rj.n == 1 && strstr(rj.last, "args"),
       "records: args that disagree are rejected");
    ok(db_args_merge("{\"a\":1}", "{\"b\":2}", &a) && !strcmp(db_args_merge("{\"a\":1}", "{\"b\":2}", &a), "{\"a\":1,\"b\":2}") &&
           !db_args_merge("{\"a\":1}", "{\"a\":2}", &a),
       "args merge: the union where they agree, nothing where they do not");

    /* best: lowest mean, ties by config index */
    db_record best;
    is_int(db_best(d, k1, "cpu -mcpu=skylake -cores=4", &a, &best), 1, "best: found");
    is_int(best.config_index, 9, "best: lowest mean cost wins");
    ok(fabs(best.mean_cost - 0.0005) < 1e-15, "best: mean cost is the mean of the repeats");
    ok(best.ncosts == 2 && best.costs[0] == 0.0005, "best: costs are read back");
    is_str(best.workload.tmpl, "conv2d_nchwc.x86", "best: template read back");
    is_str(best.target.isa, "avx2 fma", "best: target read back");
    is_str(best.counters, "{\"cycles\":123456,\"instructions\":99}", "best: counters read back");
    is_int(db_best(d, k1, "opencl", &a, &best), 0, "best: none for another target");
    is_int(db_best(d, "nope", "cpu -mcpu=skylake -cores=4", &a, &best), 0, "best: none for an unknown key");

    db_record *top;
    size_t n;
    ok(db_top_k(d, k1, "cpu -mcpu=skylake -cores=4", 10, &a, &top, &n) && n == 4, "top-k: failures are excluded");
    ok(n == 4 && top[0].config_index == 9 && top[1].config_index == 5 && top[2].config_index == 5 &&
           top[3].config_index == 2,
       "top-k: ordered by mean cost, then timestamp");
    ok(db_top_k(d, k1, "cpu -mcpu=skylake -cores=4", 2, &a, &top, &n) && n == 2, "top-k: k limits");
    ok(db_workload_records(d, k1, NULL, &a, &top, &n) && n == 5, "all records: failures included");
    ok(n == 5 && top[3].error == SU_MERR_COMPILE_ERROR && strstr(top[3].error_msg, "undeclared"),
       "all records: error and message read back");
    ok(db_workload_records(d, k1, "opencl", &a, &top, &n) && n == 0, "all records: target filter");
    const char *sky = "cpu -mcpu=skylake -cores=4";
    ok(db_similar_records(d, "conv2d_nchwc.x86", k1, sky, "avx2 fma", 0, &a, &top, &n) && n == 1 &&
           !strcmp(top[0].workload.key, k2),
       "similar: same template, other shapes, not the workload's own records");
    ok(db_similar_records(d, "conv2d_nchwc.x86", k1, "cpu -cores=8", "avx2 fma", 0, &a, &top, &n) && n == 6 &&
           !strcmp(top[0].workload.key, k1) && top[0].id > top[1].id,
       "similar: for another target string of the ISA, the workload's own records too, the most recent first");
    ok(db_similar_records(d, "conv2d_nchwc.x86", k1, "cpu -cores=8", "avx2 fma", 2, &a, &top, &n) && n == 2,
       "similar: at most limit records");
    ok(db_similar_records(d, "conv2d_nchwc.x86", k1, sky, "sse2", 0, &a, &top, &n) && n == 0,
       "similar: another ISA's records are not similar");
    ok(db_similar_records(d, "dense.x86", k3, sky, NULL, 0, &a, &top, &n) && n == 0, "similar: no other dense workload");

    /* hook: the tuner's template check */
    db_set_config_check(d, NULL, NULL);
    db_close(d);
    su_arena_free(&a);
}

/* The tie-break does not depend on insertion order. */
static void test_stable_best(void)
{
    su_arena a;
    su_arena_init(&a);
    const char *k = "matmul|float32|m=64|n=64|k=64";
    db_record r[4];
    static double same[] = {0.003};
    for (int i = 0; i < 4; i++)
        r[i] = rec(k, "matmul.x86", 10 + i % 2, same, 1, &a); /* indices 10, 11, 10, 11 */
    r[2].timestamp = r[0].timestamp - 5;                       /* the earlier of the two index-10 records */
    r[2].host = "node2";
    db *d1 = open_db(":memory:"), *d2 = open_db(":memory:");
    db_add_records(d1, r, 4, NULL, NULL, NULL);
    db_record rev[4] = {r[3], r[2], r[1], r[0]};
    db_add_records(d2, rev, 4, NULL, NULL, NULL);
    db_record b1, b2;
    db_best(d1, k, r[0].target.name, &a, &b1);
    db_best(d2, k, r[0].target.name, &a, &b2);
    ok(b1.config_index == 10 && b2.config_index == 10, "stable best: equal costs break to the lower config index");
    ok(!strcmp(b1.host, "node2") && !strcmp(b2.host, "node2"),
       "stable best: then to the earlier timestamp, whatever the insertion order");
    /* one target name measured on two hosts: two target rows, merged */
    static double c1[] = {0.004}, c2[] = {0.002}, c3[] = {0.003};
    db_record h[3] = {rec(k, "matmul.x86", 1, c1, 1, &a), rec(k, "matmul.x86", 2, c2, 1, &a),
                      rec(k, "matmul.x86", 3, c3, 1, &a)};
    h[1].target.cpu = "AMD EPYC";
    h[2].target.cpu = "Intel Core";
    db_add_records(d1, h, 3, NULL, NULL, NULL);
    db_record *top;
    size_t n;
    ok(db_top_k(d1, k, h[0].target.name, 3, &a, &top, &n) && n == 3 && top[0].config_index == 2 &&
           top[1].config_index == 3 && top[2].config_index == 10,
       "top-k: records of one target name on several hosts are merged in order");
    db_close(d1);
    db_close(d2);
    su_arena_free(&a);
}

/* ---- validation ------------------------------------------------------------------- */

static void test_validation(void)
{
    su_arena a;
    su_arena_init(&a);
    su_buf why = {0};
    db_record good = rec("k|float32", "t.x86", 1, costs_a, 3, &a);
    ok(db_record_check(&good, &why), "check: a good record passes (%s)", su_buf_str(&why));
    static double neg[] = {-1}, nan1[] = {NAN}, huge[] = {1e9}, zero[] = {0};
    struct {
        const char *name, *want;
        db_record r;
    } cases[20];
    int n = 0;
#define CASE(nm, w, field, val) do { cases[n].name = nm; cases[n].want = w; cases[n].r = good; \
        cases[n].r.field = val; n++; } while (0)
    CASE("empty key", "workload.key: must not be empty", workload.key, "");
    CASE("key with a newline", "workload.key: contains control character", workload.key, "a\nb");
    CASE("invalid UTF-8", "not valid UTF-8", workload.key, "caf\xe9");
    CASE("negative flops", "workload.flops", workload.flops, -1);
    CASE("args not an object", "workload.args: must be a JSON object", workload.args, "[1,2]");
    CASE("args not JSON", "workload.args: not valid JSON", workload.args, "{oops");
    CASE("negative cost", "result.costs[0]", costs, neg);
    CASE("NaN cost", "result.costs[0]", costs, nan1);
    CASE("absurd cost", "result.costs[0]", costs, huge);
    CASE("zero cost", "result.costs[0]", costs, zero);
    CASE("success without costs", "needs at least one cost", ncosts, 0);
    CASE("timestamp before 2000", "provenance.timestamp", timestamp, 5);
    CASE("unknown error code", "result.error: unknown error code", error, (su_merr)77);
    CASE("bad session", "provenance.session: must be a uuid", session, "not-a-uuid");
    CASE("config index mismatch", "config.index: must be the integer 2", config_index, 2);
    CASE("config not an object", "config: must be an object", config, "[1]");
    CASE("duplicate knob", "appears twice", config, "{\"index\":1,\"entities\":[[\"a\",\"ot\",1],[\"a\",\"ot\",2]]}");
    CASE("bad split", "a split must be", config, "{\"index\":1,\"entities\":[[\"a\",\"sp\",[0,4]]]}");
    CASE("bad reorder", "a reorder must be a permutation", config, "{\"index\":1,\"entities\":[[\"a\",\"re\",[0,0]]]}");
    CASE("unknown knob kind", "unknown knob kind", config, "{\"index\":1,\"entities\":[[\"a\",\"zz\",1]]}");
#undef CASE
    for (int i = 0; i < n; i++) {
        su_buf_clear(&why);
        bool rejected = !db_record_check(&cases[i].r, &why) && strstr(su_buf_str(&why), cases[i].want);
        ok(rejected, "check rejects %s", cases[i].name);
        if (!rejected)
            diag("got '%s', want '%s'", su_buf_str(&why), cases[i].want);
    }
    db_record e = good;
    e.counters = "{\"cycles\":-5}";
    su_buf_clear(&why);
    ok(!db_record_check(&e, &why) && strstr(why.data, "result.counters.cycles"), "check rejects a negative counter");
    e = good;
    e.target.isa = "AVX2";
    su_buf_clear(&why);
    ok(!db_record_check(&e, &why) && strstr(why.data, "target.isa"), "check rejects uppercase ISA features");
    su_buf_free(&why);
    su_arena_free(&a);
}

static bool reject_odd_configs(void *ctx, const char *tmpl, const char *key, int64_t index, const char *config,
                               su_buf *why)
{
    int *calls = ctx;
    (*calls)++;
    if (index % 2) {
        su_buf_printf(why, "config.index: %lld is outside the space of %s", (long long)index, tmpl);
        return false;
    }
    return strstr(config, "\"index\"") != NULL;
}

static void test_hook(void)
{
    su_arena a;
    su_arena_init(&a);
    db *d = open_db(":memory:");
    int calls = 0;
    db_set_config_check(d, reject_odd_configs, &calls);
    db_record r[3] = {rec("k", "t.x86", 2, costs_a, 3, &a), rec("k", "t.x86", 3, costs_a, 3, &a),
                      rec("k", "t.x86", 4, costs_a, 3, &a)};
    db_counts c = {0};
    rejects rj = {0};
    ok(db_add_records(d, r, 3, &c, on_reject, &rj) && c.added == 2 && c.rejected == 1, "hook: rejects what it refuses");
    ok(calls == 3 && strstr(rj.last, "outside the space of t.x86"), "hook: called for each record, reason kept");
    db_set_config_check(d, NULL, NULL);
    c = (db_counts){0};
    ok(db_add_records(d, r, 3, &c, NULL, NULL) && c.added == 1 && c.duplicates == 2, "hook: removed again");
    db_close(d);
    su_arena_free(&a);
}

/* ---- sessions and benchmarks ------------------------------------------------------------- */

static void test_sessions(void)
{
    db *d = open_db(":memory:");
    su_arena a;
    su_arena_init(&a);
    char uuid[37];
    ok(db_session_begin(d, "resnet18.relay", "cpu", "relay-tune tune resnet18.relay", uuid), "session: begins");
    ok(db_uuid_valid(uuid), "session: has a uuid (%s)", uuid);
    db_record r = rec("k", "t.x86", 1, costs_a, 3, &a);
    r.session = uuid;
    ok(db_add_records(d, &r, 1, NULL, NULL, NULL), "session: records point to it");
    ok(db_session_end(d, uuid, 1), "session: ends");
    db_session s;
    ok(db_session_get(d, uuid, &a, &s) == 1 && s.trials == 1 && s.ended >= s.started &&
           !strcmp(s.model, "resnet18.relay") && !strcmp(s.command, "relay-tune tune resnet18.relay"),
       "session: bookkeeping read back");
    db_record best;
    ok(db_best(d, "k", r.target.name, &a, &best) == 1 && best.session && !strcmp(best.session, uuid) &&
           !strcmp(best.model, "resnet18.relay"),
       "session: a record knows its session and model");
    ok(!db_session_end(d, "00000000-0000-4000-8000-000000000000", 1), "session: ending an unknown session fails");
    const char *hashes[2] = {"0123456789abcdef", "fedcba9876543210"};
    const int calls[2] = {2, 5}, again[1] = {7};
    ok(db_session_set_tasks(d, uuid, 2, hashes, calls) && db_session_set_tasks(d, uuid, 1, hashes, again),
       "session: the model's calls of each task are recorded (and replaced)");
    ok(!db_session_set_tasks(d, "00000000-0000-4000-8000-000000000000", 1, hashes, calls) &&
           strstr(db_errmsg(d), "no session"),
       "session: the calls of an unknown session are refused");
    db_session *all;
    size_t n;
    ok(db_sessions(d, &a, &all, &n) && n == 1, "session: listed");

    db_bench b = {"resnet18.relay", "cpu", "tuned", 0.012, 0.011, 0.010, 0.02, 0.001, 100, "abc123", 1700000000,
                  "host-a"};
    ok(db_add_bench(d, &b), "bench: a result is stored");
    ok(db_add_bench(d, &b), "bench: storing it again is fine");
    db_bench bad = b;
    bad.min = 1;
    ok(!db_add_bench(d, &bad) && strstr(db_errmsg(d), "out of order"), "bench: min above median is refused");
    db_bench *bs;
    ok(db_benches(d, "resnet18.relay", &a, &bs, &n) && n == 1 && bs[0].repeats == 100 && !strcmp(bs[0].host, "host-a"),
       "bench: read back once, with its host");
    db_close(d);
    su_arena_free(&a);
}

/* ---- the log --------------------------------------------------------------------------- */

static const char *good_line =
    "{\"v\":1,\"workload\":{\"key\":\"dense|float32|a=1x8\",\"hash\":\"%s\",\"template\":\"dense.x86\","
    "\"args\":{\"a\":[1,8]},\"flops\":16},\"target\":{\"name\":\"cpu\",\"cpu\":\"x\",\"isa\":\"avx2\",\"cores\":2,"
    "\"os\":\"Linux\"},\"config\":{\"index\":3,\"entities\":[[\"t\",\"sp\",[-1,2]]]},\"default\":false,"
    "\"result\":{\"costs\":[0.001,0.002],\"error\":\"none\",\"error_msg\":\"\",\"counters\":{},\"build_time\":0.1,"
    "\"run_time\":0.2},\"provenance\":{\"tuner\":\"random\",\"session\":null,\"model\":\"\","
    "\"timestamp\":1700000000.5,\"host\":\"h\"}}";

/* The good line with `from` replaced by `to` (first occurrence). */
static char *variant(const char *from, const char *to)
{
    static char hash[17];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)su_hash_str("dense|float32|a=1x8"));
    char base[2048];
    snprintf(base, sizeof base, good_line, hash);
    su_buf b = {0};
    const char *p = from ? strstr(base, from) : NULL;
    if (!p) {
        su_buf_puts(&b, base);
        return su_buf_take(&b);
    }
    su_buf_putn(&b, base, (size_t)(p - base));
    su_buf_puts(&b, to);
    su_buf_puts(&b, p + strlen(from));
    return su_buf_take(&b);
}

static void test_log_parse(void)
{
    su_arena a;
    su_arena_init(&a);
    su_buf why = {0};
    db_record r;
    char *g = variant(NULL, NULL);
    ok(db_log_parse(g, strlen(g), &a, &r, &why), "log: a good line parses (%s)", su_buf_str(&why));
    ok(r.ncosts == 2 && r.costs[1] == 0.002 && r.config_index == 3 && r.target.cores == 2 && !r.session,
       "log: fields read");
    ok(db_record_check(&r, &why), "log: and passes the record check");
    free(g);
    static const struct {
        const char *name, *from, *to, *want;
    } bad[] = {
        {"not JSON", "{\"v\"", "{v", "not valid JSON"},
        {"truncated", "\"host\":\"h\"}}", "\"host\":\"h\"", "not valid JSON"},
        {"an array", NULL, NULL, ""},
        {"unknown version", "\"v\":1", "\"v\":2", "unknown log version 2"},
        {"version as a string", "\"v\":1", "\"v\":\"1\"", "v: expected an integer"},
        {"no version", "\"v\":1,", "", "v: missing"},
        {"unknown top field", "\"v\":1,", "\"v\":1,\"extra\":0,", "extra: unknown field"},
        {"unknown nested field", "\"host\":\"h\"", "\"host\":\"h\",\"x\":1", "provenance.x: unknown field"},
        {"missing field", "\"cores\":2,", "", "target.cores: missing"},
        {"key altered", "a=1x8\",\"hash", "a=1x9\",\"hash", "does not match the key"},
        {"flops as a string", "\"flops\":16", "\"flops\":\"16\"", "workload.flops: expected a number, got a string"},
        {"cores as a real", "\"cores\":2", "\"cores\":2.5", "target.cores: expected an integer"},
        {"negative cores", "\"cores\":2", "\"cores\":-2", "target.cores: -2 is out of range"},
        {"cost as a string", "[0.001,0.002]", "[0.001,\"fast\"]", "result.costs[1]: expected a number"},
        {"costs as an object", "[0.001,0.002]", "{}", "result.costs: expected an array"},
        {"unknown error kind", "\"error\":\"none\"", "\"error\":\"exploded\"", "unknown error kind 'exploded'"},
        {"default as a number", "\"default\":false", "\"default\":0", "default: expected a boolean"},
        {"session as a number", "\"session\":null", "\"session\":7", "provenance.session: expected a string"},
        {"args as a string", "\"args\":{\"a\":[1,8]}", "\"args\":\"a\"", "workload.args: expected an object"},
        {"config without index", "\"index\":3,", "", "config.index: expected an integer"},
        {"duplicate key", "\"v\":1,", "\"v\":1,\"v\":1,", "not valid JSON"},
        {"embedded NUL escape", "\"host\":\"h\"", "\"host\":\"h\\u0000\"", "not valid JSON"},
        {"huge integer", "\"cores\":2", "\"cores\":99999999999999999999999", "not valid JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *line = bad[i].from ? variant(bad[i].from, bad[i].to) : su_strdup("[1,2,3]");
        su_buf_clear(&why);
        bool rejected = !db_log_parse(line, strlen(line), &a, &r, &why) && strstr(su_buf_str(&why), bad[i].want);
        ok(rejected, "log rejects: %s", bad[i].name);
        if (!rejected)
            diag("got '%s', want '%s'", su_buf_str(&why), bad[i].want);
        free(line);
    }
    /* parses but fails the value check */
    static const struct {
        const char *name, *from, *to, *want;
    } values[] = {
        {"negative cost", "[0.001,0.002]", "[-0.001]", "result.costs[0]"},
        {"timestamp in 1970", "1700000000.5", "12", "provenance.timestamp"},
        {"absurd flops", "\"flops\":16", "\"flops\":1e30", "workload.flops"},
        {"negative config index", "\"index\":3", "\"index\":-3", "config.index: -3 is out of range"},
        {"success without costs", "[0.001,0.002]", "[]", "needs at least one cost"},
    };
    for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
        char *line = variant(values[i].from, values[i].to);
        su_buf_clear(&why);
        bool parsed = db_log_parse(line, strlen(line), &a, &r, &why);
        bool rejected = parsed && !db_record_check(&r, &why) && strstr(su_buf_str(&why), values[i].want);
        ok(rejected, "log value check rejects: %s", values[i].name);
        if (!rejected)
            diag("got '%s', want '%s'", su_buf_str(&why), values[i].want);
        free(line);
    }
    su_buf_free(&why);
    su_arena_free(&a);
}

static char *export_all(db *d)
{
    char *text = NULL;
    size_t len = 0, n;
    FILE *f = open_memstream(&text, &len);
    if (!db_export(d, NULL, f, &n))
        diag("export: %s", db_errmsg(d));
    fclose(f);
    return text;
}

static size_t import_text(db *d, const char *text, db_counts *c, rejects *rj)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    if (!db_import(d, f, "log", c, on_reject, rj))
        diag("import: %s", db_errmsg(d));
    fclose(f);
    return c->added;
}

/* A varied database: errors, unicode, sessions, many workloads and targets. */
static void fill(db *d, int n, su_arena *a)
{
    char uuid[37];
    db_session_begin(d, "bert_layer.relay", "cpu", "relay-tune tune", uuid);
    SU_VEC(db_record) v = {0};
    for (int i = 0; i < n; i++) {
        char *key = su_arena_printf(a, "conv2d|float32|data=1x%dx%dx%d|weight=%dx%dx3x3", i % 13 + 1, 8 << (i % 3),
                                    8 << (i % 3), i % 13 + 1, i % 13 + 1);
        db_record r = rec(key, i % 13 % 2 ? "conv2d.x86" : "conv2d_winograd.x86", i, costs_a, 1 + i % 3, a);
        double *cs = su_arena_alloc(a, 3 * sizeof *cs);
        for (int j = 0; j < 3; j++)
            cs[j] = 1e-4 * (1 + (i * 7 + j * 3) % 17) / 3.0;
        r.costs = cs;
        if (i % 5 == 0) {
            r.error = (su_merr)(1 + i % (SU_MERR_COUNT - 1));
            r.error_msg = su_arena_printf(a, "failure %d: «ünïcödé» \"quoted\"\ttab\nline", i);
            r.ncosts = i % 2;
        }
        if (i % 4 == 0)
            r.target = (db_target){"opencl -device=0", "", "", 0, ""};
        r.session = i % 3 ? uuid : NULL;
        r.is_default = i % 11 == 0;
        r.timestamp = 1700000000.0 + i * 0.1234567;
        r.build_time = i * 1e-3;
        su_vec_push(&v, r);
    }
    if (!db_add_records(d, v.data, v.len, NULL, NULL, NULL))
        diag("fill: %s", db_errmsg(d));
    su_vec_free(&v);
}

static void test_round_trip(void)
{
    su_arena a;
    su_arena_init(&a);
    db *d = open_db(tpath("rt-src.db"));
    fill(d, 3000, &a);
    char *first = export_all(d);
    size_t lines = 0;
    for (const char *p = first; *p; p++)
        lines += *p == '\n';
    is_int(lines, 3000, "round trip: export writes one line per record");
    db *e = open_db(tpath("rt-dst.db"));
    db_counts c = {0};
    rejects rj = {0};
    import_text(e, first, &c, &rj);
    ok(c.added == 3000 && c.duplicates == 0 && c.rejected == 0, "round trip: import into an empty db takes all 3000 "
       "(added %zu, dup %zu, rejected %zu: %s)", c.added, c.duplicates, c.rejected, rj.last);
    char *second = export_all(e);
    ok(first && second && !strcmp(first, second), "round trip: the second export is byte-identical");
    /* field by field through the API too */
    db_record *r1, *r2;
    size_t n1, n2;
    const char *k = "conv2d|float32|data=1x1x8x8|weight=1x1x3x3";
    db_workload_records(d, k, NULL, &a, &r1, &n1);
    db_workload_records(e, k, NULL, &a, &r2, &n2);
    bool same = n1 == n2 && n1 > 0;
    for (size_t i = 0; same && i < n1; i++) {
        same = r1[i].ncosts == r2[i].ncosts && r1[i].timestamp == r2[i].timestamp &&
               r1[i].build_time == r2[i].build_time && r1[i].error == r2[i].error &&
               !strcmp(r1[i].error_msg, r2[i].error_msg) && !strcmp(r1[i].config, r2[i].config) &&
               !strcmp(r1[i].target.name, r2[i].target.name) && r1[i].is_default == r2[i].is_default &&
               !!r1[i].session == !!r2[i].session && !strcmp(r1[i].model, r2[i].model);
        for (size_t j = 0; same && j < r1[i].ncosts; j++)
            same = r1[i].costs[j] == r2[i].costs[j];
    }
    ok(same, "round trip: every field of every record is equal (%zu records compared)", n1);
    c = (db_counts){0};
    import_text(e, first, &c, &rj);
    ok(c.added == 0 && c.duplicates == 3000, "round trip: importing again finds 3000 duplicates");
    /* a mixed log: good lines, bad lines, blank lines, CRLF */
    su_buf mixed = {0};
    char *g = variant(NULL, NULL);
    su_buf_printf(&mixed, "%s\r\n\n   \nnot json\n%s\n{\"v\":9}\n \r\t\n", g, g);
    free(g);
    db *m = open_db(":memory:");
    c = (db_counts){0};
    rj = (rejects){0};
    import_text(m, su_buf_str(&mixed), &c, &rj);
    ok(c.added == 1 && c.duplicates == 1 && c.rejected == 2, "import: mixed log counts imported 1, duplicates 1, "
       "rejected 2");
    ok(rj.n == 2 && rj.last_index == 6 && strstr(rj.last, "unknown log version 9"),
       "import: rejections are reported with their line numbers");
    /* a line over the limit is rejected without holding it in memory */
    su_buf_clear(&mixed);
    for (int i = 0; i < DB_LOG_MAX_LINE + 100; i++)
        su_buf_putc(&mixed, i % 50 ? 'x' : ' ');
    su_buf_puts(&mixed, "\n");
    g = variant(NULL, NULL);
    su_buf_printf(&mixed, "%s\n", g);
    free(g);
    db *m2 = open_db(":memory:");
    c = (db_counts){0};
    rj = (rejects){0};
    import_text(m2, su_buf_str(&mixed), &c, &rj);
    ok(c.rejected == 1 && c.duplicates == 0 && rj.last_index == 1 && strstr(rj.last, "line longer than"),
       "import: an overlong line is rejected (%s)", rj.last);
    ok(c.added == 1, "import: the line after it is read and imported");
    db_close(m2);
    su_buf_free(&mixed);
    db_close(m);
    free(first);
    free(second);
    db_close(d);
    db_close(e);
    su_arena_free(&a);
}

/* ---- merge, stats, best, gc ------------------------------------------------------------------ */

static void test_merge_and_queries(void)
{
    su_arena a;
    su_arena_init(&a);
    const char *pa = tpath("ma.db"), *pb = tpath("mb.db");
    db *da = open_db(pa), *dbb = open_db(pb);
    fill(da, 400, &a);
    fill(dbb, 600, &a); /* records 0..399 are the same content, sessions differ */
    db_bench b = {"resnet18.relay", "cpu", "tuned", 0.012, 0.011, 0.010, 0.02, 0.001, 100, "abc123", 1700000000};
    db_add_bench(dbb, &b);
    db_close(dbb);
    db_counts c = {0};
    rejects rj = {0};
    ok(db_merge(da, pb, &c, on_reject, &rj), "merge: succeeds (%s)", db_errmsg(da));
    ok(c.added == 200 && c.duplicates == 400 && c.rejected == 0, "merge: 200 new, 400 duplicates (%zu/%zu/%zu)",
       c.added, c.duplicates, c.rejected);
    c = (db_counts){0};
    ok(db_merge(da, pb, &c, on_reject, &rj) && c.added == 0 && c.duplicates == 600, "merge: again, all duplicates");
    ok(!db_merge(da, pa, &c, NULL, NULL) && strstr(db_errmsg(da), "into itself"), "merge: not into itself");
    const char *text = tpath("text2.db");
    write_file(text, "not a database at all, just text....", 36);
    ok(!db_merge(da, text, &c, NULL, NULL) && strstr(db_errmsg(da), "not a relay-tune database"),
       "merge: a file that is not a database is refused");
    ok(!db_merge(da, tpath("missing.db"), &c, NULL, NULL) && access(tpath("missing.db"), F_OK) != 0,
       "merge: a missing file is refused and not created");
    db_stats s;
    ok(db_stats_get(da, &s), "stats: computed");
    ok(s.records == 600 && s.sessions == 2 && s.targets == 2 && s.benches == 1, "stats: counts (%lld records, %lld "
       "sessions, %lld targets)", (long long)s.records, (long long)s.sessions, (long long)s.targets);
    int64_t failed = 0;
    for (int e = 1; e < SU_MERR_COUNT; e++)
        failed += s.errors[e];
    ok(failed == 120 && s.ok_records == 480, "stats: errors by kind add up");
    su_buf out = {0};
    db_stats_print(da, &s, true, &out);
    ok(strstr(out.data, "\"records\":600") && strstr(out.data, "\"compile_error\":"), "stats: JSON output");
    su_buf_clear(&out);
    db_stats_print(da, &s, false, &out);
    ok(strstr(out.data, "records    600 (480 measured, 120 failed)") != NULL, "stats: text output");

    /* best with GFLOP/s and speedup: one workload with a default config */
    db *q = open_db(":memory:");
    static double fast[] = {0.001}, slow[] = {0.004};
    db_record r2[2] = {rec("w", "t.x86", 0, slow, 1, &a), rec("w", "t.x86", 1, fast, 1, &a)};
    r2[0].is_default = true;
    r2[0].workload.flops = r2[1].workload.flops = 2e9;
    db_add_records(q, r2, 2, NULL, NULL, NULL);
    db_best_row *rows;
    size_t n;
    ok(db_best_all(q, NULL, &a, &rows, &n) && n == 1, "best all: one row");
    ok(n == 1 && rows[0].best.config_index == 1 && fabs(rows[0].gflops - 2000) < 1e-6 &&
           fabs(rows[0].speedup - 4) < 1e-9 && rows[0].records == 2,
       "best all: GFLOP/s 2000 and speedup 4x over the default");
    su_buf_clear(&out);
    db_best_print(rows, n, true, &out);
    ok(strstr(out.data, "\"gflops\":2000") && strstr(out.data, "\"speedup\":4") &&
           strstr(out.data, "\"key\":\"w\"") && strstr(out.data, "\"config\":{\"entities\""),
       "best all: JSON has key, config, gflops, speedup");
    ok(db_best_all(da, "opencl -device=0", &a, &rows, &n) && n > 0, "best all: target filter");
    bool all_opencl = true;
    for (size_t i = 0; i < n; i++)
        all_opencl &= !strcmp(rows[i].best.target.name, "opencl -device=0");
    ok(all_opencl, "best all: only that target");

    int64_t deleted;
    ok(db_gc(da, 0, 1700000000.0 + 200 * 0.1234567, &deleted) && deleted > 0 && deleted < 120,
       "gc: drops only failed records older than the cutoff (%lld)", (long long)deleted);
    ok(db_gc(da, 0, 4e9, &deleted) && count_rows(da, "SELECT count(*) FROM records WHERE error <> 0") == 0,
       "gc: with a later cutoff every failed record goes");
    is_int(count_rows(da, "SELECT count(*) FROM records WHERE error = 0"), 480, "gc: successful records stay");
    ok(!db_gc(da, -1, 0, &deleted), "gc: a negative age is refused");
    su_buf_free(&out);
    db_close(q);
    db_close(da);
    su_arena_free(&a);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_schema();
    test_corrupt();
    test_records();
    test_stable_best();
    test_validation();
    test_hook();
    test_sessions();
    test_log_parse();
    test_round_trip();
    test_merge_and_queries();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        diag("could not remove %s", tmpdir);
    return tap_done();
}
