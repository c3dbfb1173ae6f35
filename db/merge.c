/* merge.c — bringing another tuning database in (`relay-tune db merge`). The
 * other file is opened read-only and checked like any database (ours, not
 * corrupt, not newer); then its sessions, records and benchmark results are
 * copied. Its records go through db_add_records like imported log lines: a
 * database from elsewhere is as untrusted as a log, and a record that fails
 * validation is counted and skipped, never stored. Records are committed in
 * batches, so a merge interrupted midway can simply be run again: what was
 * merged before is recognized as duplicates. */
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>

#include "db/db.h"

#define MERGE_BATCH 5000

typedef struct merge_ctx {
    db *into;
    db_record *batch;       /* pending records, deep-copied into arena */
    size_t pending;
    su_arena arena;
    db_counts *counts;
    db_reject_fn on_reject;
    void *ctx;
    int64_t ids[MERGE_BATCH];   /* row id in the other file of each pending record */
    bool failed;
} merge_ctx;

static void reject_in_batch(void *ctx, size_t index, const char *why)
{
    merge_ctx *m = ctx;
    if (m->on_reject)
        m->on_reject(m->ctx, (size_t)m->ids[index], why);
}

static bool flush(merge_ctx *m)
{
    bool good = !m->pending || db_add_records(m->into, m->batch, m->pending, m->counts, reject_in_batch, m);
    m->pending = 0;
    su_arena_free(&m->arena);
    return good;
}

static const char *copy(su_arena *a, const char *s)
{
    return s ? su_arena_strdup(a, s) : NULL;
}

static bool merge_one(void *ctx, const db_record *r)
{
    merge_ctx *m = ctx;
    su_arena *a = &m->arena;
    db_record c = *r;
    c.workload.key = copy(a, r->workload.key);
    c.workload.tmpl = copy(a, r->workload.tmpl);
    c.workload.args = copy(a, r->workload.args);
    c.target.name = copy(a, r->target.name);
    c.target.cpu = copy(a, r->target.cpu);
    c.target.isa = copy(a, r->target.isa);
    c.target.os = copy(a, r->target.os);
    c.config = copy(a, r->config);
    c.costs = r->ncosts ? su_arena_dup(a, r->costs, r->ncosts * sizeof *r->costs) : NULL;
    c.error_msg = copy(a, r->error_msg);
    c.counters = copy(a, r->counters);
    c.tuner = copy(a, r->tuner);
    c.session = copy(a, r->session);
    c.model = copy(a, r->model);
    c.host = copy(a, r->host);
    m->ids[m->pending] = r->id;
    m->batch[m->pending++] = c;
    if (m->pending == MERGE_BATCH && !flush(m)) {
        m->failed = true;
        return false;
    }
    return true;
}

/* Copies the sessions of other that d does not know, with their bookkeeping. */
static bool merge_sessions(db *d, db *other)
{
    su_arena a;
    su_arena_init(&a);
    db_session *s;
    size_t n;
    if (!db_sessions(other, &a, &s, &n)) {
        db_fail(d, "%s", db_errmsg(other));
        su_arena_free(&a);
        return false;
    }
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(d->sql,
                                "INSERT OR IGNORE INTO sessions (uuid, model, target, started, ended, trials,"
                                " command, host) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                                -1, &st, NULL);
    bool good = rc == SQLITE_OK || db_fail_sql(d, rc, "merging sessions");
    if (good)
        good = db_begin(d);
    for (size_t i = 0; good && i < n; i++) {
        if (!db_uuid_valid(s[i].uuid))
            continue; /* not one of ours: its records will name it and be rejected */
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, s[i].uuid, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, s[i].model, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, s[i].target, -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 4, s[i].started);
        if (s[i].ended > 0)
            sqlite3_bind_double(st, 5, s[i].ended);
        else
            sqlite3_bind_null(st, 5);
        sqlite3_bind_int64(st, 6, s[i].trials);
        sqlite3_bind_text(st, 7, s[i].command, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 8, s[i].host, -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
        if (rc != SQLITE_DONE)
            good = db_fail_sql(d, rc, "merging sessions");
    }
    sqlite3_finalize(st);
    if (good)
        good = db_commit(d);
    else
        db_rollback(d);
    su_arena_free(&a);
    return good;
}

static bool merge_benches(db *d, db *other)
{
    su_arena a;
    su_arena_init(&a);
    db_bench *b;
    size_t n;
    bool good = db_benches(other, NULL, &a, &b, &n) || db_fail(d, "%s", db_errmsg(other));
    for (size_t i = 0; good && i < n; i++)
        if (!db_add_bench(d, &b[i]))
            su_buf_clear(&d->err); /* an invalid result of the other file is skipped */
    su_arena_free(&a);
    return good;
}

bool db_merge(db *d, const char *other_path, db_counts *counts, db_reject_fn on_reject, void *ctx)
{
    struct stat s1, s2;
    if (strcmp(d->path, ":memory:") != 0 && stat(d->path, &s1) == 0 && stat(other_path, &s2) == 0 &&
        s1.st_dev == s2.st_dev && s1.st_ino == s2.st_ino)
        return db_fail(d, "%s: cannot merge a database into itself", other_path);
    su_buf err = {0};
    db_open_opts o = {DB_OPEN_READONLY | DB_OPEN_NO_CREATE, 0, 0};
    db *other = db_open(other_path, &o, &err);
    if (!other) {
        db_fail(d, "%s", su_buf_str(&err));
        su_buf_free(&err);
        return false;
    }
    su_buf_free(&err);
    merge_ctx *m = su_calloc(1, sizeof *m);
    m->into = d;
    m->batch = su_malloc(MERGE_BATCH * sizeof *m->batch);
    m->counts = counts;
    m->on_reject = on_reject;
    m->ctx = ctx;
    su_arena_init(&m->arena);
    db_counts local = {0};
    if (!m->counts)
        m->counts = &local;
    bool good = merge_sessions(d, other);
    if (good && !db_foreach_record(other, NULL, merge_one, m) && !m->failed)
        good = db_fail(d, "%s", db_errmsg(other));
    if (good && !m->failed)
        good = flush(m);
    if (m->failed)
        good = false;
    if (good)
        good = merge_benches(d, other);
    su_arena_free(&m->arena);
    free(m->batch);
    free(m);
    db_close(other);
    return good;
}
