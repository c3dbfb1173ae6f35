/* benchmarks.c — end-to-end latency results of compiled models, kept beside
 * the measurements that produced their configs, so that the dashboard can show
 * how a model's latency moved with tuning and with the code (commit). A result
 * is checked before it is stored: finite, non-negative, min <= median, mean
 * <= max. Exact duplicates (same content) are stored once. */
#include <math.h>
#include <sqlite3.h>
#include <string.h>

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
    return true;
}

bool db_add_bench(db *d, const db_bench *b)
{
    if (!bench_check(d, b))
        return false;
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(d->sql,
                                "INSERT OR IGNORE INTO benchmarks (model, target, config_source, mean, median, min,"
                                " max, stddev, repeats, commit_id, timestamp)"
                                " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
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
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE || db_fail_sql(d, rc, "adding a benchmark result");
}

bool db_benches(db *d, const char *model, su_arena *a, db_bench **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (d->version < 2)
        return true; /* an old file opened read-only: no benchmark table yet */
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(d->sql,
                                "SELECT model, target, config_source, mean, median, min, max, stddev, repeats,"
                                " commit_id, timestamp FROM benchmarks WHERE ?1 IS NULL OR model = ?1"
                                " ORDER BY timestamp DESC, id DESC",
                                -1, &st, NULL);
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
            db_col_str(st, 9, a), sqlite3_column_double(st, 10),
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
