/* benchmarks.c — latency results of compiled models and of their kernels,
 * kept beside the measurements that produced their configs, so that the
 * dashboard can show how a model's latency moved with tuning, with the code
 * (commit) and between machines (host). A result
 * is checked before it is stored: finite, non-negative, min <= median, mean
 * <= max. Each result says what the host could do (its ISA and measured
 * FMA peak, and the threads), so that a latency read later, or from
 * another machine, has its roofline beside it. Exact duplicates (same
 * content) are stored once. Results travel as
 * JSON objects (one a line) for scripts: `relay-tune db bench-add` reads them
 * and `db benchmarks --json` writes them (docs/benchmarks.md). */
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "db/db.h"

static bool bench_check(db *d, const db_bench *b)
{
    const double v[] = {b->mean, b->median, b->min, b->max, b->stddev};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        if (!isfinite(v[i]) || v[i] < 0 || v[i] > 1e6)
            return db_fail(d, "%s: benchmark of %s: latency statistics must be finite seconds", d->path,
                           b->model ? b->model : "?");
    if (b->min > b->median || b->median > b->max || b->min > b->mean || b->mean > b->max)
        return db_fail(d, "%s: benchmark of %s: statistics out of order (need min <= median, mean <= max)",
                       d->path, b->model ? b->model : "?");
    if (!b->model || !b->model[0] || !b->target || !b->target[0] || b->repeats < 1 ||
        !isfinite(b->timestamp) || b->timestamp < 946684800.0 || b->timestamp > 4102444800.0)
        return db_fail(d, "%s: benchmark: model, target, repeats >= 1 and a timestamp (2000..2100) are required",
                       d->path);
    if (!isfinite(b->peak_gflops) || b->peak_gflops < 0 || b->peak_gflops > 1e7 || b->threads < 0 ||
        b->threads > 100000)
        return db_fail(d, "%s: benchmark of %s: peak_gflops must be finite GFLOP/s >= 0 and threads 0..100000",
                       d->path, b->model);
    return true;
}

bool db_add_bench(db *d, const db_bench *b)
{
    if (!bench_check(d, b))
        return false;
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(d->sql,
                                "INSERT OR IGNORE INTO benchmarks (model, target, config_source, mean, median, min,"
                                " max, stddev, repeats, commit_id, timestamp, host, isa, peak_gflops, threads)"
                                " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
                                -1, &st, NULL);
    if (rc != SQLITE_OK)
        return db_fail_sql(d, rc, "adding a benchmark result");
    sqlite3_bind_text(st, 1, b->model, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, b->target, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, b->config_source ? b->config_source : "", -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 4, b->mean);
    sqlite3_bind_double(st, 5, b->median);
    sqlite3_bind_double(st, 6, b->min);
    sqlite3_bind_double(st, 7, b->max);
    sqlite3_bind_double(st, 8, b->stddev);
    sqlite3_bind_int64(st, 9, b->repeats);
    sqlite3_bind_text(st, 10, b->commit ? b->commit : "", -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 11, b->timestamp);
    sqlite3_bind_text(st, 12, b->host ? b->host : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 13, b->isa ? b->isa : "", -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 14, b->peak_gflops);
    sqlite3_bind_int64(st, 15, b->threads);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE || db_fail_sql(d, rc, "adding a benchmark result");
}

bool db_add_benches(db *d, const db_bench *b, size_t n)
{
    if (!db_begin(d))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!db_add_bench(d, &b[i])) {
            db_rollback(d);
            return false;
        }
    return db_commit(d);
}

bool db_benches(db *d, const char *model, su_arena *a, db_bench **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (d->version < 2)
        return true; /* an old file opened read-only: no benchmark table yet */
    /* an old file opened read-only lacks the later columns: version 2 the
     * host, version 3 the ISA, peak and threads */
    char sql[320];
    snprintf(sql, sizeof sql,
             "SELECT model, target, config_source, mean, median, min, max, stddev, repeats, commit_id, timestamp, %s,"
             " %s FROM benchmarks WHERE ?1 IS NULL OR model = ?1 ORDER BY timestamp DESC, id DESC",
             d->version < 3 ? "''" : "host", d->version < 4 ? "'', 0, 0" : "isa, peak_gflops, threads");
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(d->sql, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return db_fail_sql(d, rc, "reading benchmark results");
    if (model)
        sqlite3_bind_text(st, 1, model, -1, SQLITE_STATIC);
    SU_VEC(db_bench) v = {0};
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        db_bench b = {
            db_col_str(st, 0, a), db_col_str(st, 1, a), db_col_str(st, 2, a),
            sqlite3_column_double(st, 3), sqlite3_column_double(st, 4), sqlite3_column_double(st, 5),
            sqlite3_column_double(st, 6), sqlite3_column_double(st, 7), sqlite3_column_int64(st, 8),
            db_col_str(st, 9, a), sqlite3_column_double(st, 10), db_col_str(st, 11, a), db_col_str(st, 12, a),
            sqlite3_column_double(st, 13), sqlite3_column_int64(st, 14),
        };
        su_vec_push(&v, b);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE && v.len) {
        *out = su_arena_dup(a, v.data, v.len * sizeof *v.data);
        *n = v.len;
    }
    su_vec_free(&v);
    return rc == SQLITE_DONE || db_fail_sql(d, rc, "reading benchmark results");
}

bool db_bench_parse(const char *line, size_t len, su_arena *a, db_bench *out, su_buf *why)
{
    json_error_t e;
    json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &e);
    if (!o) {
        su_buf_printf(why, "not JSON: %s", e.text);
        return false;
    }
    const char *model = NULL, *target = NULL, *source = "", *commit = "", *host = "", *isa = "";
    json_int_t repeats = 0, threads = 0;
    *out = (db_bench){0};
    /* "!": an unknown field is refused, as in the log format */
    bool good = json_unpack_ex(o, &e, JSON_STRICT,
                               "{s:s, s:s, s?s, s:F, s:F, s:F, s:F, s:F, s:I, s?s, s?F, s?s, s?s, s?F, s?I}",
                               "model", &model, "target", &target, "config_source", &source, "mean", &out->mean,
                               "median", &out->median, "min", &out->min, "max", &out->max, "stddev", &out->stddev,
                               "repeats", &repeats, "commit", &commit, "timestamp", &out->timestamp, "host", &host,
                               "isa", &isa, "peak_gflops", &out->peak_gflops, "threads", &threads) == 0;
    if (good) {
        out->model = su_arena_strdup(a, model);
        out->target = su_arena_strdup(a, target);
        out->config_source = su_arena_strdup(a, source);
        out->commit = su_arena_strdup(a, commit);
        out->host = su_arena_strdup(a, host);
        out->isa = su_arena_strdup(a, isa);
        out->repeats = (int64_t)repeats;
        out->threads = (int64_t)threads;
    } else {
        su_buf_printf(why, "not a benchmark result (docs/benchmarks.md): %s", e.text);
    }
    json_decref(o);
    return good;
}

/* One result as a JSON object (the fields db_bench_parse reads). */
static void put_bench_json(su_buf *b, const db_bench *r)
{
    const char *names[] = {"model", "target", "config_source", "commit", "host", "isa"};
    const char *strs[] = {r->model, r->target, r->config_source, r->commit, r->host, r->isa};
    const char *nnames[] = {"mean", "median", "min", "max", "stddev", "timestamp", "peak_gflops"};
    const double nums[] = {r->mean, r->median, r->min, r->max, r->stddev, r->timestamp, r->peak_gflops};
    su_buf_putc(b, '{');
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        su_buf_printf(b, "%s\"%s\":", i ? "," : "", names[i]);
        db_json_put_str(b, strs[i]);
    }
    for (size_t i = 0; i < sizeof nnames / sizeof *nnames; i++) {
        su_buf_printf(b, ",\"%s\":", nnames[i]);
        db_json_put_num(b, nums[i]);
    }
    su_buf_printf(b, ",\"repeats\":%lld,\"threads\":%lld}", (long long)r->repeats, (long long)r->threads);
}

void db_benches_print(const db_bench *rows, size_t n, bool json, su_buf *out)
{
    if (json) {
        su_buf_putc(out, '[');
        for (size_t i = 0; i < n; i++) {
            su_buf_puts(out, i ? ",\n " : "");
            put_bench_json(out, &rows[i]);
        }
        su_buf_puts(out, "]\n");
        return;
    }
    su_buf_printf(out, "%-19s  %-14s  %10s  %10s  %7s  %-12s  %-12s  %-6s  %10s  %s\n", "when (UTC)", "source",
                  "median ms", "min ms", "repeats", "commit", "host", "isa", "peak GF/s", "model");
    for (size_t i = 0; i < n; i++) {
        const db_bench *r = &rows[i];
        char when[32];
        time_t t = (time_t)r->timestamp;
        struct tm tm;
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", gmtime_r(&t, &tm));
        /* the peak with its threads: "232.1/2"; "-" for results from before */
        char peak[32] = "-";
        if (r->peak_gflops > 0)
            snprintf(peak, sizeof peak, "%.1f/%lld", r->peak_gflops, (long long)r->threads);
        su_buf_printf(out, "%-19s  %-14s  %10.4f  %10.4f  %7lld  %-12.12s  %-12s  %-6s  %10s  %s\n", when,
                      r->config_source, r->median * 1e3, r->min * 1e3, (long long)r->repeats,
                      r->commit[0] ? r->commit : "-", r->host[0] ? r->host : "-", r->isa[0] ? r->isa : "-", peak,
                      r->model);
    }
}
