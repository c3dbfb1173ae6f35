/* dashboard_query.c — the read-only views the dashboard serves: sessions with
 * their rates and failures, one session's tasks, measurements and failure
 * messages, one task's best configs and every config it measured, and the
 * benchmark history. Each view appends one JSON document to a buffer, built
 * with jansson so that every string from the database (shared logs are
 * written by other people) is escaped as JSON; the pages then put them into
 * the document as text, never as markup. Nothing here writes the database:
 * the dashboard opens it read-only, beside a `tune` that may be writing it. */
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "db/db.h"

/* A session counts as live while it has no end time and wrote something
 * within this many seconds; a killed `tune` never writes its end time. */
#define LIVE_SECONDS 120.0

/* ---- small helpers ----------------------------------------------------------------------- */

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return json_string(s ? (const char *)s : "");
}

static json_t *col_real(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null() : num_or_null(sqlite3_column_double(st, i));
}

/* Appends v as compact JSON to out and frees it; false when encoding failed
 * (a string that is not UTF-8 cannot come from SQLite's text, but a value
 * jansson refuses is reported rather than served half-written). */
static bool put_json(db *d, json_t *v, su_buf *out)
{
    char *t = v ? json_dumps(v, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(v);
    if (!t)
        return db_fail(d, "the dashboard could not encode a view as JSON (a string in the database is not UTF-8?)");
    su_buf_puts(out, t);
    free(t);
    return true;
}

static sqlite3_stmt *prepare(db *d, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(d->sql, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) {
        db_fail_sql(d, rc, "reading for the dashboard");
        sqlite3_finalize(st);
        return NULL;
    }
    return st;
}

/* Finishes a statement stepped until it stopped with rc. */
static bool finish(db *d, sqlite3_stmt *st, int rc)
{
    sqlite3_finalize(st);
    return rc == SQLITE_DONE || db_fail_sql(d, rc, "reading for the dashboard");
}

/* An array of row(st) for every row of a prepared and bound statement
 * (NULL: preparing failed), which it finalizes; *good false on error. */
static json_t *collect(db *d, sqlite3_stmt *st, json_t *(*row)(sqlite3_stmt *st, const void *ctx), const void *ctx,
                       bool *good)
{
    json_t *arr = json_array();
    if (!st)
        return *good = false, arr;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        json_array_append_new(arr, row(st, ctx));
    *good &= finish(d, st, rc);
    return arr;
}

static json_t *error_name(int64_t e)
{
    return json_string(su_merr_valid(e) ? su_merr_name((su_merr)e) : "unknown");
}

/* GFLOP/s of a run of flops operations taking cost seconds; NaN when unknown. */
static double gflops(double flops, double cost)
{
    return flops > 0 && cost > 0 ? flops / cost * 1e-9 : NAN;
}

/* ---- sessions ---------------------------------------------------------------------------- */

/* Columns 0-8 describe a session, 9-11 its records; one row per session. */
#define SESSION_SQL \
    "SELECT s.id, s.uuid, s.model, s.target, s.host, s.command, s.started, s.ended, s.trials, " \
    "(SELECT count(*) FROM records r WHERE r.session_id = s.id), " \
    "(SELECT count(*) FROM records r WHERE r.session_id = s.id AND r.error = 0), " \
    "(SELECT max(timestamp) FROM records r WHERE r.session_id = s.id) FROM sessions s "

/* Failures of session sid by kind, as an object name -> count. */
static json_t *failure_kinds(db *d, int64_t sid, bool *good)
{
    json_t *o = json_object();
    sqlite3_stmt *st = prepare(d, "SELECT error, count(*) FROM records WHERE session_id = ?1 AND error != 0 "
                                  "GROUP BY error ORDER BY error");
    if (!st)
        return *good = false, o;
    sqlite3_bind_int64(st, 1, sid);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t e = sqlite3_column_int64(st, 0);
        json_object_set_new(o, su_merr_valid(e) ? su_merr_name((su_merr)e) : "unknown",
                            json_integer(sqlite3_column_int64(st, 1)));
    }
    *good &= finish(d, st, rc);
    return o;
}

/* One SESSION_SQL row as an object; *sid gets the row id. */
static json_t *session_row(db *d, sqlite3_stmt *st, double now, int64_t *sid, bool *good)
{
    *sid = sqlite3_column_int64(st, 0);
    double started = sqlite3_column_double(st, 6);
    bool ended = sqlite3_column_type(st, 7) != SQLITE_NULL && sqlite3_column_double(st, 7) > 0;
    double last = sqlite3_column_type(st, 11) == SQLITE_NULL ? started : sqlite3_column_double(st, 11);
    double until = ended ? sqlite3_column_double(st, 7) : last;
    int64_t records = sqlite3_column_int64(st, 9);
    json_t *o = json_object();
    json_object_set_new(o, "uuid", col_text(st, 1));
    json_object_set_new(o, "model", col_text(st, 2));
    json_object_set_new(o, "target", col_text(st, 3));
    json_object_set_new(o, "host", col_text(st, 4));
    json_object_set_new(o, "command", col_text(st, 5));
    json_object_set_new(o, "started", num_or_null(started));
    json_object_set_new(o, "ended", ended ? col_real(st, 7) : json_null());
    json_object_set_new(o, "trials", json_integer(sqlite3_column_int64(st, 8)));
    json_object_set_new(o, "records", json_integer(records));
    json_object_set_new(o, "ok", json_integer(sqlite3_column_int64(st, 10)));
    json_object_set_new(o, "last", num_or_null(last));
    json_object_set_new(o, "rate", until > started ? json_real((double)records / (until - started)) : json_null());
    json_object_set_new(o, "live", json_boolean(!ended && now - last < LIVE_SECONDS));
    json_object_set_new(o, "failures", failure_kinds(d, *sid, good));
    return o;
}

bool db_dash_sessions(db *d, double now, su_buf *out)
{
    sqlite3_stmt *st = prepare(d, SESSION_SQL "ORDER BY s.started DESC, s.id DESC");
    if (!st)
        return false;
    json_t *arr = json_array();
    bool good = true;
    int rc;
    int64_t sid;
    while (good && (rc = sqlite3_step(st)) == SQLITE_ROW)
        json_array_append_new(arr, session_row(d, st, now, &sid, &good));
    good = finish(d, st, good ? rc : SQLITE_DONE) && good;
    if (!good) {
        json_decref(arr);
        return false;
    }
    return put_json(d, arr, out);
}

/* The session called uuid: 1 with its object and row id, 0 unknown, -1 error. */
static int session_find(db *d, const char *uuid, double now, json_t **obj, int64_t *sid)
{
    sqlite3_stmt *st = prepare(d, SESSION_SQL "WHERE s.uuid = ?1");
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    bool good = true;
    *obj = rc == SQLITE_ROW ? session_row(d, st, now, sid, &good) : NULL;
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        db_fail_sql(d, rc, "reading a session");
        return -1;
    }
    if (!good) {
        json_decref(*obj);
        return -1;
    }
    return rc == SQLITE_ROW;
}

/* The tasks of session sid: every workload it measured, in order of first
 * measurement, with the default config's cost on the session's target (from
 * any session: the default is measured once per target) and the best cost
 * the session reached. */
static json_t *task_row(sqlite3_stmt *st, const void *ctx)
{
    double flops = sqlite3_column_double(st, 3);
    double best = sqlite3_column_type(st, 6) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 6);
    double def = sqlite3_column_type(st, 7) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 7);
    json_t *o = json_object();
    json_object_set_new(o, "hash", col_text(st, 0));
    json_object_set_new(o, "key", col_text(st, 1));
    json_object_set_new(o, "template", col_text(st, 2));
    json_object_set_new(o, "flops", num_or_null(flops));
    json_object_set_new(o, "records", json_integer(sqlite3_column_int64(st, 4)));
    json_object_set_new(o, "ok", json_integer(sqlite3_column_int64(st, 5)));
    json_object_set_new(o, "best_cost", num_or_null(best));
    json_object_set_new(o, "best_gflops", num_or_null(gflops(flops, best)));
    json_object_set_new(o, "default_cost", num_or_null(def));
    json_object_set_new(o, "default_gflops", num_or_null(gflops(flops, def)));
    json_object_set_new(o, "speedup", num_or_null(def / best));
    json_object_set_new(o, "tuners", col_text(st, 8));
    json_object_set_new(o, "target", col_text(st, 9));
    return o;
}

static json_t *session_tasks(db *d, int64_t sid, bool *good)
{
    sqlite3_stmt *st = prepare(
        d, "SELECT w.hash, w.key, w.template, w.flops, count(*), sum(r.error = 0), "
           "min(CASE WHEN r.error = 0 THEN r.mean_cost END), "
           "(SELECT min(x.mean_cost) FROM records x WHERE x.workload_id = w.id AND x.target_id = r.target_id "
           " AND x.is_default AND x.error = 0), "
           "group_concat(DISTINCT r.tuner), t.target "
           "FROM records r JOIN workloads w ON w.id = r.workload_id JOIN targets t ON t.id = r.target_id "
           "WHERE r.session_id = ?1 GROUP BY w.id ORDER BY min(r.id)");
    if (st)
        sqlite3_bind_int64(st, 1, sid);
    return collect(d, st, task_row, NULL, good);
}

/* The session's failures grouped by task, kind and message, most frequent first. */
static json_t *failure_row(sqlite3_stmt *st, const void *ctx)
{
    json_t *o = json_object();
    json_object_set_new(o, "hash", col_text(st, 0));
    json_object_set_new(o, "error", error_name(sqlite3_column_int64(st, 1)));
    json_object_set_new(o, "message", col_text(st, 2));
    json_object_set_new(o, "count", json_integer(sqlite3_column_int64(st, 3)));
    json_object_set_new(o, "first", col_real(st, 4));
    return o;
}

static json_t *session_failures(db *d, int64_t sid, bool *good)
{
    sqlite3_stmt *st = prepare(d, "SELECT w.hash, r.error, r.error_msg, count(*), min(r.timestamp) "
                                  "FROM records r JOIN workloads w ON w.id = r.workload_id "
                                  "WHERE r.session_id = ?1 AND r.error != 0 "
                                  "GROUP BY w.id, r.error, r.error_msg ORDER BY count(*) DESC, min(r.id) LIMIT 500");
    if (st)
        sqlite3_bind_int64(st, 1, sid);
    return collect(d, st, failure_row, NULL, good);
}

int db_dash_session(db *d, const char *uuid, double now, su_buf *out)
{
    json_t *o;
    int64_t sid;
    int found = session_find(d, uuid, now, &o, &sid);
    if (found <= 0)
        return found;
    bool good = true;
    json_object_set_new(o, "tasks", session_tasks(d, sid, &good));
    json_object_set_new(o, "failure_messages", session_failures(d, sid, &good));
    if (!good) {
        json_decref(o);
        return -1;
    }
    return put_json(d, o, out) ? 1 : -1;
}

static json_t *measurement_row(sqlite3_stmt *st, const void *ctx)
{
    double started = *(const double *)ctx;
    int64_t e = sqlite3_column_int64(st, 5);
    double cost = e == 0 && sqlite3_column_type(st, 4) != SQLITE_NULL ? sqlite3_column_double(st, 4) : NAN;
    json_t *m = json_object();
    json_object_set_new(m, "id", json_integer(sqlite3_column_int64(st, 0)));
    json_object_set_new(m, "hash", col_text(st, 1));
    json_object_set_new(m, "n", json_integer(sqlite3_column_int64(st, 2)));
    json_object_set_new(m, "t", num_or_null(sqlite3_column_double(st, 3) - started));
    json_object_set_new(m, "cost", num_or_null(cost));
    json_object_set_new(m, "gflops", num_or_null(gflops(sqlite3_column_double(st, 9), cost)));
    json_object_set_new(m, "error", error_name(e));
    json_object_set_new(m, "tuner", col_text(st, 6));
    json_object_set_new(m, "config_index", json_integer(sqlite3_column_int64(st, 7)));
    json_object_set_new(m, "default", json_boolean(sqlite3_column_int(st, 8)));
    return m;
}

int db_dash_measurements(db *d, const char *uuid, int64_t after, su_buf *out)
{
    json_t *o;
    int64_t sid;
    int found = session_find(d, uuid, 0, &o, &sid);
    if (found <= 0)
        return found;
    double started = json_real_value(json_object_get(o, "started"));
    json_decref(o);
    /* n numbers the session's measurements from 1, whatever `after` skips */
    sqlite3_stmt *st = prepare(
        d, "SELECT id, hash, n, timestamp, mean_cost, error, tuner, config_index, is_default, flops FROM "
           "(SELECT r.id, w.hash, row_number() OVER (ORDER BY r.id) AS n, r.timestamp, r.mean_cost, r.error, "
           " r.tuner, r.config_index, r.is_default, w.flops "
           " FROM records r JOIN workloads w ON w.id = r.workload_id WHERE r.session_id = ?1) "
           "WHERE id > ?2 ORDER BY id");
    if (st) {
        sqlite3_bind_int64(st, 1, sid);
        sqlite3_bind_int64(st, 2, after);
    }
    bool good = true;
    json_t *arr = collect(d, st, measurement_row, &started, &good);
    if (!good) {
        json_decref(arr);
        return -1;
    }
    return put_json(d, arr, out) ? 1 : -1;
}

/* ---- a task ------------------------------------------------------------------------------ */

/* The workload with this hash: 1 with its row id and flops, 0 none, -1 error. */
static int workload_find(db *d, const char *hash, json_t *o, int64_t *wid, double *flops)
{
    sqlite3_stmt *st = prepare(d, "SELECT id, key, template, args, flops FROM workloads WHERE hash = ?1 "
                                  "ORDER BY id LIMIT 1");
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, hash, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *wid = sqlite3_column_int64(st, 0);
        *flops = sqlite3_column_double(st, 4);
        json_object_set_new(o, "hash", json_string(hash));
        json_object_set_new(o, "key", col_text(st, 1));
        json_object_set_new(o, "template", col_text(st, 2));
        json_object_set_new(o, "flops", num_or_null(*flops));
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return db_fail_sql(d, rc, "reading a workload"), -1;
    return rc == SQLITE_ROW;
}

/* The targets the workload was measured on, most records first. */
static json_t *first_text(sqlite3_stmt *st, const void *ctx)
{
    return col_text(st, 0);
}

static json_t *workload_targets(db *d, int64_t wid, bool *good)
{
    sqlite3_stmt *st = prepare(d, "SELECT t.target, count(*) FROM records r JOIN targets t ON t.id = r.target_id "
                                  "WHERE r.workload_id = ?1 GROUP BY t.target ORDER BY count(*) DESC, t.target");
    if (st)
        sqlite3_bind_int64(st, 1, wid);
    return collect(d, st, first_text, NULL, good);
}

/* The successful records of the workload on target (by name), best first;
 * each with its config parsed, so that the page can read its knobs. */
/* What a config's GFLOP/s and speedup are computed from. */
typedef struct task_ctx {
    double flops;     /* the workload's flops (0 when unknown) */
    double def;       /* the default config's cost (NaN when not measured) */
} task_ctx;

static json_t *config_row(sqlite3_stmt *st, const void *ctx)
{
    const task_ctx *t = ctx;
    double cost = sqlite3_column_double(st, 2);
    const char *cfg = (const char *)sqlite3_column_text(st, 1);
    json_t *parsed = json_loads(cfg ? cfg : "", 0, NULL);
    json_t *ents = json_object_get(parsed, "entities");
    json_t *o = json_object();
    json_object_set_new(o, "config_index", json_integer(sqlite3_column_int64(st, 0)));
    json_object_set_new(o, "entities", json_is_array(ents) ? json_incref(ents) : json_array());
    json_object_set_new(o, "cost", num_or_null(cost));
    json_object_set_new(o, "gflops", num_or_null(gflops(t->flops, cost)));
    json_object_set_new(o, "speedup", num_or_null(t->def / cost));
    json_object_set_new(o, "timestamp", col_real(st, 3));
    json_object_set_new(o, "tuner", col_text(st, 4));
    json_object_set_new(o, "default", json_boolean(sqlite3_column_int(st, 5)));
    json_decref(parsed);
    return o;
}

static json_t *task_configs(db *d, int64_t wid, const char *target, const task_ctx *t, bool *good)
{
    sqlite3_stmt *st = prepare(d, "SELECT r.config_index, r.config, r.mean_cost, r.timestamp, r.tuner, r.is_default "
                                  "FROM records r JOIN targets t ON t.id = r.target_id "
                                  "WHERE r.workload_id = ?1 AND t.target = ?2 AND r.error = 0 "
                                  "ORDER BY " DB_BEST_ORDER " LIMIT 5000");
    if (st) {
        sqlite3_bind_int64(st, 1, wid);
        sqlite3_bind_text(st, 2, target, -1, SQLITE_TRANSIENT);
    }
    return collect(d, st, config_row, t, good);
}

int db_dash_task(db *d, const char *hash, const char *target, su_buf *out)
{
    json_t *o = json_object();
    int64_t wid;
    double flops;
    int found = workload_find(d, hash, o, &wid, &flops);
    if (found <= 0) {
        json_decref(o);
        return found;
    }
    bool good = true;
    json_t *targets = workload_targets(d, wid, &good);
    json_object_set_new(o, "targets", targets);
    if (!target)
        target = json_array_size(targets) ? json_string_value(json_array_get(targets, 0)) : "";
    json_object_set_new(o, "target", json_string(target));
    double def = NAN;
    /* the default's cost, then the counts of every record on the target */
    sqlite3_stmt *st = prepare(d, "SELECT (SELECT min(r.mean_cost) FROM records r JOIN targets t ON t.id = r.target_id "
                                  " WHERE r.workload_id = ?1 AND t.target = ?2 AND r.is_default AND r.error = 0), "
                                  "count(*), sum(r.error != 0) FROM records r JOIN targets t ON t.id = r.target_id "
                                  "WHERE r.workload_id = ?1 AND t.target = ?2");
    if (!st)
        good = false;
    else {
        sqlite3_bind_int64(st, 1, wid);
        sqlite3_bind_text(st, 2, target, -1, SQLITE_TRANSIENT);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            def = sqlite3_column_type(st, 0) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 0);
            json_object_set_new(o, "records", json_integer(sqlite3_column_int64(st, 1)));
            json_object_set_new(o, "failed", json_integer(sqlite3_column_int64(st, 2)));
            rc = SQLITE_DONE;
        }
        good &= finish(d, st, rc);
    }
    json_object_set_new(o, "default_cost", num_or_null(def));
    json_object_set_new(o, "default_gflops", num_or_null(gflops(flops, def)));
    task_ctx tc = {flops, def};
    json_object_set_new(o, "configs", task_configs(d, wid, target, &tc, &good));
    if (!good) {
        json_decref(o);
        return -1;
    }
    return put_json(d, o, out) ? 1 : -1;
}

/* ---- benchmarks -------------------------------------------------------------------------- */

bool db_dash_benchmarks(db *d, su_buf *out)
{
    json_t *o = json_object(), *models = json_array(), *kernels = json_array();
    json_object_set_new(o, "models", models);
    json_object_set_new(o, "kernels", kernels);
    if (d->version < 3)   /* an old file without host names: shown once migrated by a writer */
        return put_json(d, o, out);
    /* model latency history, oldest first; kernel rows (bench_kernels names them
     * "kernel HASH SHAPE") carry their workload's flops for GFLOP/s */
    sqlite3_stmt *st = prepare(
        d, "SELECT b.model, b.target, b.config_source, b.median, b.mean, b.min, b.max, b.stddev, b.repeats, "
           "b.commit_id, b.timestamp, b.host, "
           "(SELECT w.flops FROM workloads w WHERE b.model LIKE 'kernel %' "
           " AND w.hash = substr(b.model, 8, 16) LIMIT 1) "
           "FROM benchmarks b ORDER BY b.timestamp, b.id LIMIT 20000");
    if (!st) {
        json_decref(o);
        return false;
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *model = (const char *)sqlite3_column_text(st, 0);
        bool kernel = model && !strncmp(model, "kernel ", 7);
        json_t *b = json_object();
        json_object_set_new(b, "model", col_text(st, 0));
        json_object_set_new(b, "target", col_text(st, 1));
        json_object_set_new(b, "source", col_text(st, 2));
        json_object_set_new(b, "median", col_real(st, 3));
        json_object_set_new(b, "mean", col_real(st, 4));
        json_object_set_new(b, "min", col_real(st, 5));
        json_object_set_new(b, "max", col_real(st, 6));
        json_object_set_new(b, "stddev", col_real(st, 7));
        json_object_set_new(b, "repeats", json_integer(sqlite3_column_int64(st, 8)));
        json_object_set_new(b, "commit", col_text(st, 9));
        json_object_set_new(b, "timestamp", col_real(st, 10));
        json_object_set_new(b, "host", col_text(st, 11));
        if (kernel) {
            double flops = sqlite3_column_type(st, 12) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 12);
            json_object_set_new(b, "flops", num_or_null(flops));
            json_object_set_new(b, "gflops", num_or_null(gflops(flops, sqlite3_column_double(st, 3))));
        }
        json_array_append_new(kernel ? kernels : models, b);
    }
    if (!finish(d, st, rc)) {
        json_decref(o);
        return false;
    }
    return put_json(d, o, out);
}
