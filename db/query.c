/* query.c — what people and scripts ask of a tuning database: how much is in
 * it (`db stats`), the best config of each workload with its throughput and
 * its speedup over the template's default config (`db best`), and cleaning
 * up failed measurements (`db gc`). Each summary prints as text for people
 * or as JSON for scripts and the dashboard. */
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>

#include "db/db.h"

static bool count(db *d, const char *sql, int64_t *out)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(d->sql, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return db_fail_sql(d, rc, "counting");
    rc = sqlite3_step(st);
    *out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || db_fail_sql(d, rc, "counting");
}

bool db_stats_get(db *d, db_stats *s)
{
    memset(s, 0, sizeof *s);
    s->schema_version = d->version;
    struct stat sb;
    if (strcmp(d->path, ":memory:") != 0 && stat(d->path, &sb) == 0)
        s->file_bytes = sb.st_size;
    if (!count(d, "SELECT count(*) FROM workloads", &s->workloads) ||
        !count(d, "SELECT count(*) FROM records", &s->records) ||
        !count(d, "SELECT count(*) FROM targets", &s->targets) ||
        !count(d, "SELECT count(*) FROM sessions", &s->sessions))
        return false;
    if (d->version >= 2 && !count(d, "SELECT count(*) FROM benchmarks", &s->benches))
        return false;
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(d->sql, "SELECT error, count(*) FROM records GROUP BY error", -1, &st, NULL);
    if (rc != SQLITE_OK)
        return db_fail_sql(d, rc, "counting errors");
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t e = sqlite3_column_int64(st, 0);
        if (su_merr_valid(e))
            s->errors[e] = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    s->ok_records = s->errors[SU_MERR_NONE];
    return rc == SQLITE_DONE || db_fail_sql(d, rc, "counting errors");
}

static void put_json_str(su_buf *b, const char *s)
{
    json_t *j = json_string(s ? s : "");
    char *t = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    su_buf_puts(b, t ? t : "\"\"");
    free(t);
    json_decref(j);
}

static void put_num(su_buf *b, double v)
{
    if (isfinite(v))
        db_json_put_num(b, v);
    else
        su_buf_puts(b, "null");
}

void db_stats_print(const db *d, const db_stats *s, bool json, su_buf *out)
{
    int64_t failed = s->records - s->ok_records;
    if (json) {
        su_buf_puts(out, "{\"path\":");
        put_json_str(out, d->path);
        su_buf_printf(out,
                      ",\"schema_version\":%d,\"file_bytes\":%lld,\"workloads\":%lld,\"records\":%lld,"
                      "\"ok_records\":%lld,\"failed_records\":%lld,\"targets\":%lld,\"sessions\":%lld,"
                      "\"benchmarks\":%lld,\"errors\":{",
                      s->schema_version, (long long)s->file_bytes, (long long)s->workloads, (long long)s->records,
                      (long long)s->ok_records, (long long)failed, (long long)s->targets, (long long)s->sessions,
                      (long long)s->benches);
        for (int e = 1; e < SU_MERR_COUNT; e++)
            su_buf_printf(out, "%s\"%s\":%lld", e > 1 ? "," : "", su_merr_name((su_merr)e),
                          (long long)s->errors[e]);
        su_buf_puts(out, "}}\n");
        return;
    }
    su_buf_printf(out, "database   %s (schema version %d, %.1f MiB)\n", d->path, s->schema_version,
                  (double)s->file_bytes / (1 << 20));
    su_buf_printf(out, "workloads  %lld\n", (long long)s->workloads);
    su_buf_printf(out, "records    %lld (%lld measured, %lld failed)\n", (long long)s->records,
                  (long long)s->ok_records, (long long)failed);
    su_buf_printf(out, "targets    %lld\n", (long long)s->targets);
    su_buf_printf(out, "sessions   %lld\n", (long long)s->sessions);
    su_buf_printf(out, "benchmarks %lld\n", (long long)s->benches);
    if (failed) {
        su_buf_puts(out, "failed records by kind:\n");
        for (int e = 1; e < SU_MERR_COUNT; e++)
            if (s->errors[e])
                su_buf_printf(out, "  %-16s %8lld  %s\n", su_merr_name((su_merr)e), (long long)s->errors[e],
                              su_merr_desc((su_merr)e));
    }
}

bool db_best_all(db *d, const char *target, su_arena *a, db_best_row **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    /* rank the successful records of each (workload, target name) pair in
     * db_best's order; keep the first, with the default config's best cost and
     * the number of records of the pair */
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(
        d->sql,
        "WITH ranked AS (SELECT r.id, row_number() OVER (PARTITION BY r.workload_id, t.target ORDER BY "
        DB_BEST_ORDER ") AS rank FROM records r JOIN targets t ON t.id = r.target_id"
        " WHERE r.error = 0 AND (?1 IS NULL OR t.target = ?1))"
        " SELECT " DB_RECORD_COLUMNS ","
        " (SELECT min(r2.mean_cost) FROM records r2 JOIN targets t2 ON t2.id = r2.target_id"
        "  WHERE r2.workload_id = r.workload_id AND t2.target = t.target AND r2.error = 0 AND r2.is_default = 1),"
        " (SELECT count(*) FROM records r3 JOIN targets t3 ON t3.id = r3.target_id"
        "  WHERE r3.workload_id = r.workload_id AND t3.target = t.target)"
        " FROM ranked k JOIN records r ON r.id = k.id JOIN workloads w ON w.id = r.workload_id"
        " JOIN targets t ON t.id = r.target_id LEFT JOIN sessions s ON s.id = r.session_id"
        " WHERE k.rank = 1 ORDER BY w.key, t.target",
        -1, &st, NULL);
    if (rc != SQLITE_OK)
        return db_fail_sql(d, rc, "finding the best configs");
    if (target)
        sqlite3_bind_text(st, 1, target, -1, SQLITE_STATIC);
    SU_VEC(db_best_row) v = {0};
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        db_best_row row = {0};
        db_row_to_record(st, a, &row.best);
        double cost = row.best.mean_cost;
        double def = sqlite3_column_type(st, 25) == SQLITE_NULL ? 0 : sqlite3_column_double(st, 25);
        row.gflops = cost > 0 ? row.best.workload.flops / cost / 1e9 : 0;
        row.speedup = cost > 0 && def > 0 ? def / cost : 0;
        row.records = sqlite3_column_int64(st, 26);
        su_vec_push(&v, row);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE && v.len) {
        *out = su_arena_dup(a, v.data, v.len * sizeof *v.data);
        *n = v.len;
    }
    su_vec_free(&v);
    return rc == SQLITE_DONE || db_fail_sql(d, rc, "finding the best configs");
}

void db_best_print(const db_best_row *rows, size_t n, bool json, su_buf *out)
{
    if (json) {
        su_buf_putc(out, '[');
        for (size_t i = 0; i < n; i++) {
            const db_record *r = &rows[i].best;
            su_buf_puts(out, i ? ",\n{\"key\":" : "\n{\"key\":");
            put_json_str(out, r->workload.key);
            su_buf_puts(out, ",\"target\":");
            put_json_str(out, r->target.name);
            su_buf_puts(out, ",\"template\":");
            put_json_str(out, r->workload.tmpl);
            su_buf_printf(out, ",\"config\":%s,\"cost\":", r->config);
            put_num(out, r->mean_cost);
            su_buf_puts(out, ",\"gflops\":");
            if (r->workload.flops > 0)
                put_num(out, rows[i].gflops);
            else
                su_buf_puts(out, "null");
            su_buf_puts(out, ",\"speedup\":");
            if (rows[i].speedup > 0)
                put_num(out, rows[i].speedup);
            else
                su_buf_puts(out, "null");
            su_buf_printf(out, ",\"records\":%lld}", (long long)rows[i].records);
        }
        su_buf_puts(out, n ? "\n]\n" : "]\n");
        return;
    }
    if (!n) {
        su_buf_puts(out, "no successful measurements\n");
        return;
    }
    int tw = 6;
    for (size_t i = 0; i < n; i++)
        if ((int)strlen(rows[i].best.target.name) > tw)
            tw = (int)strlen(rows[i].best.target.name);
    su_buf_printf(out, "%-12s %10s %9s %8s %8s  %-*s  %s\n", "config", "cost(ms)", "GFLOP/s", "speedup", "records", tw,
                  "target", "workload");
    for (size_t i = 0; i < n; i++) {
        const db_record *r = &rows[i].best;
        char gf[32] = "-", sp[32] = "-";
        if (r->workload.flops > 0)
            snprintf(gf, sizeof gf, "%.2f", rows[i].gflops);
        if (rows[i].speedup > 0)
            snprintf(sp, sizeof sp, "%.2fx", rows[i].speedup);
        su_buf_printf(out, "%-12lld %10.4f %9s %8s %8lld  %-*s  %s\n", (long long)r->config_index,
                      r->mean_cost * 1e3, gf, sp, (long long)rows[i].records, tw, r->target.name, r->workload.key);
    }
}

bool db_gc(db *d, double days, double now, int64_t *deleted)
{
    *deleted = 0;
    if (!isfinite(days) || days < 0)
        return db_fail(d, "gc: the age must be a non-negative number of days");
    sqlite3_stmt *st;
    if (!db_begin(d))
        return false;
    int rc = sqlite3_prepare_v2(d->sql, "DELETE FROM records WHERE error <> 0 AND timestamp < ?1", -1, &st, NULL);
    if (rc != SQLITE_OK) {
        db_fail_sql(d, rc, "deleting failed records");
        db_rollback(d);
        return false;
    }
    sqlite3_bind_double(st, 1, now - days * 86400.0);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        db_fail_sql(d, rc, "deleting failed records");
        db_rollback(d);
        return false;
    }
    int64_t n = sqlite3_changes(d->sql);
    if (!db_commit(d))
        return false;
    *deleted = n;
    return db_exec(d, "VACUUM") && db_exec(d, "PRAGMA wal_checkpoint(TRUNCATE)");
}
