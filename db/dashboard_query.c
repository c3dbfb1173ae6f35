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

/* Columns 0-8 describe a session, 9-11 its records: one row per session.
 * records has no index on session_id (the schema is the tuner's), so the
 * counts come from one scan grouped by session rather than a scan for each
 * session; SESSION_ONE restricts the scan to the session named by ?1. */
#define SESSION_COLS \
    "SELECT s.id, s.uuid, s.model, s.target, s.host, s.command, s.started, s.ended, s.trials, " \
    "coalesce(a.n, 0), coalesce(a.ok, 0), a.last FROM sessions s LEFT JOIN " \
    "(SELECT session_id, count(*) AS n, sum(error = 0) AS ok, max(timestamp) AS last FROM records "
#define SESSION_ALL SESSION_COLS "GROUP BY session_id) a ON a.session_id = s.id "
#define SESSION_ONE \
    SESSION_COLS "WHERE session_id = (SELECT id FROM sessions WHERE uuid = ?1)) a ON a.session_id = s.id " \
                 "WHERE s.uuid = ?1"

/* Failures by kind of session sid (0: of every session), as an object
 * session id -> (kind name -> count), in one scan. */
static json_t *failure_kinds(db *d, int64_t sid, bool *good)
{
    json_t *all = json_object();
    sqlite3_stmt *st = prepare(d, "SELECT session_id, error, count(*) FROM records WHERE error != 0 "
                                  "AND session_id IS NOT NULL AND (?1 = 0 OR session_id = ?1) "
                                  "GROUP BY session_id, error ORDER BY session_id, error");
    if (!st)
        return *good = false, all;
    sqlite3_bind_int64(st, 1, sid);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        char key[24];
        snprintf(key, sizeof key, "%lld", (long long)sqlite3_column_int64(st, 0));
        json_t *o = json_object_get(all, key);
        if (!o)
            json_object_set_new(all, key, o = json_object());
        int64_t e = sqlite3_column_int64(st, 1);
        json_object_set_new(o, su_merr_valid(e) ? su_merr_name((su_merr)e) : "unknown",
                            json_integer(sqlite3_column_int64(st, 2)));
    }
    *good &= finish(d, st, rc);
    return all;
}

/* One session row as an object, with its failures from failure_kinds'
 * answer; *sid gets the row id. */
static json_t *session_row(sqlite3_stmt *st, double now, json_t *failures, int64_t *sid)
{
    *sid = sqlite3_column_int64(st, 0);
    double started = sqlite3_column_double(st, 6);
    bool ended = sqlite3_column_type(st, 7) != SQLITE_NULL && sqlite3_column_double(st, 7) > 0;
    double last = sqlite3_column_type(st, 11) == SQLITE_NULL ? started : sqlite3_column_double(st, 11);
    double until = ended ? sqlite3_column_double(st, 7) : last;
    int64_t records = sqlite3_column_int64(st, 9);
    char key[24];
    snprintf(key, sizeof key, "%lld", (long long)*sid);
    json_t *fail = json_object_get(failures, key);
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
    json_object_set_new(o, "failures", fail ? json_incref(fail) : json_object());
    return o;
}

bool db_dash_sessions(db *d, double now, su_buf *out)
{
    bool good = true;
    json_t *failures = failure_kinds(d, 0, &good);
    sqlite3_stmt *st = good ? prepare(d, SESSION_ALL "ORDER BY s.started DESC, s.id DESC") : NULL;
    json_t *arr = json_array();
    int rc = SQLITE_DONE;
    int64_t sid;
    if (st)
        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
            json_array_append_new(arr, session_row(st, now, failures, &sid));
    good = good && st && finish(d, st, rc);
    json_decref(failures);
    if (!good) {
        json_decref(arr);
        return false;
    }
    return put_json(d, arr, out);
}

/* The session called uuid: 1 with its object and row id, 0 unknown, -1 error. */
static int session_find(db *d, const char *uuid, double now, json_t **obj, int64_t *sid)
{
    sqlite3_stmt *st = prepare(d, SESSION_ONE);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        *obj = NULL;
        return rc == SQLITE_DONE ? 0 : (db_fail_sql(d, rc, "reading a session"), -1);
    }
    *sid = sqlite3_column_int64(st, 0);
    bool good = true;
    json_t *failures = failure_kinds(d, *sid, &good);
    *obj = session_row(st, now, failures, sid);
    json_decref(failures);
    sqlite3_finalize(st);
    if (!good) {
        json_decref(*obj);
        return -1;
    }
    return 1;
}

/* The tasks of session sid: every workload it measured, in order of first
 * measurement, with the default config's cost on the session's target (from
 * any session: the default is measured once per target), the best cost
 * the session reached and the model's calls of it (null when unknown). */
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
    json_object_set_new(o, "calls", sqlite3_column_type(st, 10) == SQLITE_NULL ? json_null()
                                                                               : json_integer(sqlite3_column_int64(st, 10)));
    return o;
}

static json_t *session_tasks(db *d, int64_t sid, bool *good)
{
#define TASK_SQL(calls)                                                                                        \
    "SELECT w.hash, w.key, w.template, w.flops, count(*), sum(r.error = 0), "                                  \
    "min(CASE WHEN r.error = 0 THEN r.mean_cost END), "                                                        \
    "(SELECT min(x.mean_cost) FROM records x WHERE x.workload_id = w.id AND x.target_id = r.target_id "        \
    " AND x.is_default AND x.error = 0), "                                                                     \
    "group_concat(DISTINCT r.tuner), t.target, " calls " "                                                     \
    "FROM records r JOIN workloads w ON w.id = r.workload_id JOIN targets t ON t.id = r.target_id "            \
    "WHERE r.session_id = ?1 GROUP BY w.id ORDER BY min(r.id)"
    /* version 5 records each task's calls in the model; before, and for
     * sessions imported from logs, they are unknown (null) */
    sqlite3_stmt *st = prepare(
        d, d->version >= 5
               ? TASK_SQL("(SELECT c.calls FROM session_tasks c WHERE c.session_id = ?1 AND c.hash = w.hash)")
               : TASK_SQL("NULL"));
#undef TASK_SQL
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

/* Appends a number, or null where it is not finite. */
static void put_num(su_buf *b, double v)
{
    if (isfinite(v))
        db_json_put_num(b, v);
    else
        su_buf_puts(b, "null");
}

/* One measurement as a JSON object. Written by hand rather than through
 * jansson: a long session has hundreds of thousands, and building a tree
 * of objects first made this view ten times slower. Only the hash and the
 * tuner are strings (the hash hex digits; the tuner escaped). */
static void put_measurement(sqlite3_stmt *st, double started, su_buf *b)
{
    int64_t e = sqlite3_column_int64(st, 5);
    double cost = e == 0 && sqlite3_column_type(st, 4) != SQLITE_NULL ? sqlite3_column_double(st, 4) : NAN;
    const char *hash = (const char *)sqlite3_column_text(st, 1), *tuner = (const char *)sqlite3_column_text(st, 6);
    su_buf_printf(b, "{\"id\":%lld,\"hash\":", (long long)sqlite3_column_int64(st, 0));
    db_json_put_str(b, hash ? hash : "");
    su_buf_printf(b, ",\"n\":%lld,\"t\":", (long long)sqlite3_column_int64(st, 2));
    put_num(b, sqlite3_column_double(st, 3) - started);
    su_buf_puts(b, ",\"cost\":");
    put_num(b, cost);
    su_buf_puts(b, ",\"gflops\":");
    put_num(b, gflops(sqlite3_column_double(st, 9), cost));
    su_buf_printf(b, ",\"error\":\"%s\",\"tuner\":", su_merr_valid(e) ? su_merr_name((su_merr)e) : "unknown");
    db_json_put_str(b, tuner ? tuner : "");
    su_buf_printf(b, ",\"config_index\":%lld,\"default\":%s}", (long long)sqlite3_column_int64(st, 7),
                  sqlite3_column_int(st, 8) ? "true" : "false");
}

int db_dash_measurements(db *d, const char *uuid, int64_t after, su_buf *out)
{
    /* only the session's row id and start: a live page polls this */
    sqlite3_stmt *st = prepare(d, "SELECT id, started FROM sessions WHERE uuid = ?1");
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    int64_t sid = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    double started = rc == SQLITE_ROW ? sqlite3_column_double(st, 1) : 0;
    if (!finish(d, st, rc == SQLITE_ROW ? SQLITE_DONE : rc))
        return -1;
    if (rc != SQLITE_ROW)
        return 0;
    /* n numbers the session's measurements from 1, whatever `after` skips */
    st = prepare(
        d, "SELECT id, hash, n, timestamp, mean_cost, error, tuner, config_index, is_default, flops FROM "
           "(SELECT r.id, w.hash, row_number() OVER (ORDER BY r.id) AS n, r.timestamp, r.mean_cost, r.error, "
           " r.tuner, r.config_index, r.is_default, w.flops "
           " FROM records r JOIN workloads w ON w.id = r.workload_id WHERE r.session_id = ?1) "
           "WHERE id > ?2 ORDER BY id");
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, sid);
    sqlite3_bind_int64(st, 2, after);
    su_buf b = {0};
    su_buf_putc(&b, '[');
    for (bool first = true; (rc = sqlite3_step(st)) == SQLITE_ROW; first = false) {
        if (!first)
            su_buf_putc(&b, ',');
        put_measurement(st, started, &b);
    }
    su_buf_putc(&b, ']');
    bool good = finish(d, st, rc);
    if (good)
        su_buf_puts(out, su_buf_str(&b));
    su_buf_free(&b);
    return good ? 1 : -1;
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

/* The flops of a kernel result's workload, and the rest of the benchmarks
 * query: the newest 20,000 results, oldest first. */
#define BENCH_FLOPS \
    "(SELECT w.flops FROM workloads w WHERE b.model LIKE 'kernel %' AND w.hash = substr(b.model, 8, 16) LIMIT 1) " \
    "FROM (SELECT * FROM benchmarks ORDER BY timestamp DESC, id DESC LIMIT 20000) b ORDER BY b.timestamp, b.id"

bool db_dash_benchmarks(db *d, su_buf *out)
{
    json_t *o = json_object(), *models = json_array(), *kernels = json_array();
    json_object_set_new(o, "models", models);
    json_object_set_new(o, "kernels", kernels);
    if (d->version < 2)   /* a file from before benchmark results */
        return put_json(d, o, out);
    /* model latency history, oldest first; kernel rows (bench_kernels names them
     * "kernel HASH SHAPE") carry their workload's flops for GFLOP/s. A file of
     * version 2 has no host column: read-only, it is shown as it is. */
#define BENCH_COLS "SELECT b.model, b.target, b.config_source, b.median, b.mean, b.min, b.max, b.stddev, " \
                   "b.repeats, b.commit_id, b.timestamp, "
    /* version 4 added the host's ISA and its FMA peak measured in the run */
    sqlite3_stmt *st = prepare(d, d->version >= 4   ? BENCH_COLS "b.host, b.isa, b.peak_gflops, b.threads, " BENCH_FLOPS
                                  : d->version >= 3 ? BENCH_COLS "b.host, '', 0, 0, " BENCH_FLOPS
                                                    : BENCH_COLS "'', '', 0, 0, " BENCH_FLOPS);
#undef BENCH_COLS
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
        json_object_set_new(b, "isa", col_text(st, 12));
        double peak = sqlite3_column_double(st, 13);
        json_object_set_new(b, "peak_gflops", peak > 0 ? json_real(peak) : json_null());
        json_object_set_new(b, "threads", json_integer(sqlite3_column_int64(st, 14)));
        if (kernel) {
            double flops = sqlite3_column_type(st, 15) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 15);
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
