/* records.c — storing measurements and looking them up.
 *
 * Every path that brings records in (the tuner's batches, `db import`, `db
 * merge`) ends in db_add_records, so every record is checked the same way:
 * types and ranges and the structure of its config (db_check_record in
 * check.c), the
 * template hook when the tuner installed one, and agreement with what the
 * database already knows about its workload (the same template and flops;
 * args may gain fields, never change one). A batch is one transaction.
 *
 * Exact duplicates are found with one probe of the records_lookup index (a
 * duplicate has the same workload, target, error, mean cost and timestamp),
 * then confirmed by a 64-bit digest of the content (ids excluded, so it is the
 * same in every database) and column by column, so a collision can never drop
 * a record.
 * JSON fields are stored canonically (sorted keys, compact) so that equal
 * content is equal text.
 *
 * Workload, target and session ids are cached per handle: rows of those
 * tables are never deleted, so a committed id stays valid; the caches are
 * dropped on rollback because they may hold ids of rows that were rolled back. */
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <string.h>

#include "db/db.h"

/* ---- resolving ids ------------------------------------------------------------------ */

static const char *nz(const char *s)
{
    return s ? s : "";
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
    sqlite3_bind_text(st, i, nz(s), -1, SQLITE_STATIC);
}

static void cache_put(db *d, su_map *m, const char *key, int64_t id, uint64_t desc)
{
    db_cached *c = su_arena_alloc(&d->cache, sizeof *c);
    c->id = id;
    c->desc = desc;
    su_map_put(m, su_arena_strdup(&d->cache, key), c);
}

/* The target resolved last: consecutive records usually share it. */
static void remember_target(db *d, const char *ident, int64_t id)
{
    su_buf_clear(&d->last_target);
    su_buf_puts(&d->last_target, ident);
    d->last_target_id = id;
}

/* Row id of the target, created when new. -1 on a database error. */
static int64_t target_id(db *d, const db_target *t)
{
    char ident[1400];
    snprintf(ident, sizeof ident, "%s\x1f%s\x1f%s\x1f%d\x1f%s", nz(t->name), nz(t->cpu), nz(t->isa), t->cores,
             nz(t->os));
    if (d->last_target.data && !strcmp(d->last_target.data, ident))
        return d->last_target_id;
    db_cached *c = su_map_get(&d->targets, ident);
    if (c) {
        remember_target(d, ident, c->id);
        return c->id;
    }
    sqlite3_stmt *st = db_stmt(d, DB_ST_TARGET_FIND);
    if (!st)
        return -1;
    bind_text(st, 1, t->name);
    bind_text(st, 2, t->cpu);
    bind_text(st, 3, t->isa);
    sqlite3_bind_int(st, 4, t->cores);
    bind_text(st, 5, t->os);
    int rc = sqlite3_step(st);
    int64_t id;
    if (rc == SQLITE_ROW) {
        id = sqlite3_column_int64(st, 0);
    } else if (rc == SQLITE_DONE) {
        if (!(st = db_stmt(d, DB_ST_TARGET_ADD)))
            return -1;
        bind_text(st, 1, t->name);
        bind_text(st, 2, t->cpu);
        bind_text(st, 3, t->isa);
        sqlite3_bind_int(st, 4, t->cores);
        bind_text(st, 5, t->os);
        if ((rc = sqlite3_step(st)) != SQLITE_DONE)
            return db_fail_sql(d, rc, "adding a target"), -1;
        id = sqlite3_last_insert_rowid(d->sql);
    } else {
        return db_fail_sql(d, rc, "looking up a target"), -1;
    }
    sqlite3_reset(st);
    cache_put(d, &d->targets, ident, id, 0);
    remember_target(d, ident, id);
    return id;
}

static uint64_t workload_desc(const char *tmpl, const char *args, double flops)
{
    return db_hash_f64(db_hash_str(db_hash_str(SU_HASH_INIT, tmpl), args), flops);
}

static sqlite3_stmt *prepare(db *d, const char *sql)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(d->sql, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) {
        db_fail_sql(d, rc, "preparing a query");
        return NULL;
    }
    return st;
}

const char *db_args_merge(const char *stored, const char *incoming, su_arena *a)
{
    json_t *s = json_loads(stored, 0, NULL), *in = json_loads(incoming, 0, NULL);
    const char *out = NULL;
    bool agree = json_is_object(s) && json_is_object(in);
    const char *k;
    json_t *v;
    if (agree)
        json_object_foreach(in, k, v) {
            json_t *o = json_object_get(s, k);
            if (o && !json_equal(o, v)) {
                agree = false;
                break;
            }
        }
    if (agree) {
        json_object_update_missing(s, in);
        char *t = json_dumps(s, JSON_COMPACT);
        su_buf why = {0};
        out = t ? db_json_canon(t, 'o', a, &why) : NULL;
        su_buf_free(&why);
        free(t);
    }
    json_decref(s);
    json_decref(in);
    return out;
}

/* The key is known with another description: the same template and flops
 * with args that agree where both have a field are the same workload, and
 * its stored args grow to the union (*have becomes their description). 0
 * then; -2 with the reason in why; -1 on a database error. */
static int reconcile(db *d, int64_t id, const db_workload *w, const db_canon *c, uint64_t *have, su_buf *why)
{
    sqlite3_stmt *st = prepare(d, "SELECT template, args, flops FROM workloads WHERE id = ?1");
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        return db_fail_sql(d, rc, "looking up a workload"), -1;
    }
    su_arena a;
    su_arena_init(&a);
    const char *stored = su_arena_strdup(&a, (const char *)sqlite3_column_text(st, 1));
    const char *merged = NULL;
    if (!strcmp((const char *)sqlite3_column_text(st, 0), w->tmpl) && sqlite3_column_double(st, 2) + 0.0 == c->flops)
        merged = db_args_merge(stored, c->args, &a);
    sqlite3_finalize(st);
    int r = 0;
    if (!merged) {
        su_buf_puts(why, "workload: this key is already recorded with another template, args or flops");
        r = -2;
    } else if (strcmp(merged, stored) != 0) {
        if (!(st = prepare(d, "UPDATE workloads SET args = ?2 WHERE id = ?1")))
            r = -1;
        else {
            sqlite3_bind_int64(st, 1, id);
            bind_text(st, 2, merged);
            if ((rc = sqlite3_step(st)) != SQLITE_DONE)
                r = -1, db_fail_sql(d, rc, "updating a workload's args");
            sqlite3_finalize(st);
        }
    }
    if (!r) {
        *have = workload_desc(w->tmpl, merged, c->flops);
        db_cached *cached = su_map_get(&d->workloads, w->key);
        if (cached)
            cached->desc = *have;
    }
    su_arena_free(&a);
    return r;
}

/* Row id of the workload, created when new; -2 (reason in why) when the key
 * is known with another template or flops, or args that disagree; -1 on a
 * database error. */
static int64_t workload_id(db *d, const db_workload *w, const db_canon *c, su_buf *why)
{
    if (d->last_wid > 0 && !strcmp(su_buf_str(&d->last_wkey), w->key) && !strcmp(d->last_wtmpl.data, w->tmpl) &&
        !strcmp(d->last_wargs.data, c->args) && d->last_wflops == c->flops)
        return d->last_wid;
    uint64_t desc = workload_desc(w->tmpl, c->args, c->flops);
    db_cached *cached = su_map_get(&d->workloads, w->key);
    int64_t id;
    uint64_t have;
    if (cached) {
        id = cached->id;
        have = cached->desc;
    } else {
        sqlite3_stmt *st = db_stmt(d, DB_ST_WORKLOAD_FIND);
        if (!st)
            return -1;
        bind_text(st, 1, w->key);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            id = sqlite3_column_int64(st, 0);
            have = workload_desc((const char *)sqlite3_column_text(st, 1), (const char *)sqlite3_column_text(st, 2),
                                 sqlite3_column_double(st, 3) + 0.0);
        } else if (rc == SQLITE_DONE) {
            if (!(st = db_stmt(d, DB_ST_WORKLOAD_ADD)))
                return -1;
            bind_text(st, 1, w->key);
            char hash[17];
            snprintf(hash, sizeof hash, "%016llx", (unsigned long long)su_hash_str(w->key));
            bind_text(st, 2, hash);
            bind_text(st, 3, w->tmpl);
            bind_text(st, 4, c->args);
            sqlite3_bind_double(st, 5, c->flops);
            if ((rc = sqlite3_step(st)) != SQLITE_DONE)
                return db_fail_sql(d, rc, "adding a workload"), -1;
            id = sqlite3_last_insert_rowid(d->sql);
            have = desc;
        } else {
            return db_fail_sql(d, rc, "looking up a workload"), -1;
        }
        sqlite3_reset(st);
        cache_put(d, &d->workloads, w->key, id, have);
    }
    if (have != desc) {
        int r = reconcile(d, id, w, c, &have, why);
        if (r < 0)
            return r;
    }
    su_buf_clear(&d->last_wkey);
    su_buf_puts(&d->last_wkey, w->key);
    su_buf_clear(&d->last_wtmpl);
    su_buf_puts(&d->last_wtmpl, w->tmpl);
    su_buf_clear(&d->last_wargs);
    su_buf_puts(&d->last_wargs, c->args);
    d->last_wflops = c->flops;
    d->last_wid = id;
    return id;
}

/* Row id of the session (0 for none), created when new; -2 when it is known
 * with another model; -1 on a database error. */
static int64_t session_id(db *d, const db_record *r, su_buf *why)
{
    if (!r->session)
        return 0;
    uint64_t desc = db_hash_str(SU_HASH_INIT, r->model);
    db_cached *cached = su_map_get(&d->sessions, r->session);
    int64_t id;
    uint64_t have;
    if (cached) {
        id = cached->id;
        have = cached->desc;
    } else {
        sqlite3_stmt *st = db_stmt(d, DB_ST_SESSION_FIND);
        if (!st)
            return -1;
        bind_text(st, 1, r->session);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            id = sqlite3_column_int64(st, 0);
            have = db_hash_str(SU_HASH_INIT, (const char *)sqlite3_column_text(st, 1));
        } else if (rc == SQLITE_DONE) {
            if (!(st = db_stmt(d, DB_ST_SESSION_ADD)))
                return -1;
            bind_text(st, 1, r->session);
            bind_text(st, 2, r->model);
            bind_text(st, 3, r->target.name);
            sqlite3_bind_double(st, 4, r->timestamp);
            bind_text(st, 5, "");
            bind_text(st, 6, r->host);
            if ((rc = sqlite3_step(st)) != SQLITE_DONE)
                return db_fail_sql(d, rc, "adding a session"), -1;
            id = sqlite3_last_insert_rowid(d->sql);
            have = desc;
        } else {
            return db_fail_sql(d, rc, "looking up a session"), -1;
        }
        sqlite3_reset(st);
        cache_put(d, &d->sessions, r->session, id, have);
    }
    if (r->model && r->model[0] && have != desc) {
        su_buf_puts(why, "provenance.model: the session is already recorded with another model");
        return -2;
    }
    return id;
}

static bool col_eq(sqlite3_stmt *st, int i, const char *s)
{
    const char *v = (const char *)sqlite3_column_text(st, i);
    return v && !strcmp(v, nz(s));
}

/* 1 when an identical record is stored, 0 when not, -1 on error. */
static int find_duplicate(db *d, const db_record *r, const db_canon *c, int64_t wid, int64_t tid)
{
    sqlite3_stmt *st = db_stmt(d, DB_ST_DUP_FIND);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, (int64_t)c->digest);
    sqlite3_bind_int64(st, 2, wid);
    sqlite3_bind_int64(st, 3, tid);
    sqlite3_bind_int(st, 4, (int)r->error);
    if (r->ncosts)
        sqlite3_bind_double(st, 5, c->mean);
    sqlite3_bind_double(st, 6, r->timestamp);
    int rc, found = 0;
    while (!found && (rc = sqlite3_step(st)) == SQLITE_ROW)
        found = sqlite3_column_int64(st, 0) == wid && sqlite3_column_int64(st, 1) == tid &&
                sqlite3_column_int64(st, 2) == r->config_index && col_eq(st, 3, c->config) &&
                sqlite3_column_int(st, 4) == (int)r->is_default && col_eq(st, 5, c->costs) &&
                sqlite3_column_int(st, 6) == (int)r->error && col_eq(st, 7, r->error_msg) &&
                col_eq(st, 8, c->counters) && sqlite3_column_double(st, 9) == c->build_time &&
                sqlite3_column_double(st, 10) == c->run_time && col_eq(st, 11, r->tuner) &&
                sqlite3_column_double(st, 12) == r->timestamp && col_eq(st, 13, r->host);
    if (!found && rc != SQLITE_DONE)
        return db_fail_sql(d, rc, "looking for duplicates"), -1;
    sqlite3_reset(st);
    return found;
}

/* Stores one record: 1 added, 0 duplicate, -2 rejected (why), -1 db error. */
static int add_one(db *d, const db_record *r, su_arena *a, su_buf *why)
{
    db_canon c;
    if (!db_check_record(d, r, a, &c, why))
        return -2;
    if (d->check && !d->check(d->check_ctx, r->workload.tmpl, r->workload.key, r->config_index, c.config, why)) {
        if (!why->len)
            su_buf_puts(why, "config: does not fit its template");
        return -2;
    }
    c.digest = db_digest(r, &c);
    int64_t wid = workload_id(d, &r->workload, &c, why);
    if (wid < 0)
        return (int)wid;
    int64_t tid = target_id(d, &r->target);
    if (tid < 0)
        return -1;
    int64_t sid = session_id(d, r, why);
    if (sid < 0)
        return (int)sid;
    int dup = find_duplicate(d, r, &c, wid, tid);
    if (dup)
        return dup < 0 ? -1 : 0;
    sqlite3_stmt *st = db_stmt(d, DB_ST_RECORD_ADD);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, wid);
    sqlite3_bind_int64(st, 2, tid);
    sqlite3_bind_int64(st, 3, r->config_index);
    bind_text(st, 4, c.config);
    sqlite3_bind_int(st, 5, r->is_default);
    bind_text(st, 6, c.costs);
    if (r->ncosts)
        sqlite3_bind_double(st, 7, c.mean);
    sqlite3_bind_int(st, 8, (int)r->error);
    bind_text(st, 9, r->error_msg);
    bind_text(st, 10, c.counters);
    sqlite3_bind_double(st, 11, c.build_time);
    sqlite3_bind_double(st, 12, c.run_time);
    bind_text(st, 13, r->tuner);
    if (sid)
        sqlite3_bind_int64(st, 14, sid);
    sqlite3_bind_double(st, 15, r->timestamp);
    bind_text(st, 16, r->host);
    sqlite3_bind_int64(st, 17, (int64_t)c.digest);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return db_fail_sql(d, rc, "adding a record"), -1;
    return 1;
}

bool db_add_records(db *d, const db_record *recs, size_t n, db_counts *counts, db_reject_fn on_reject, void *ctx)
{
    db_counts c = {0};
    su_arena a;
    su_buf why = {0};
    su_arena_init(&a);
    if (!db_begin(d))
        return false;
    bool good = true;
    for (size_t i = 0; good && i < n; i++) {
        if (a.total > (1u << 20))
            su_arena_free(&a);
        su_buf_clear(&why);
        int rc = add_one(d, &recs[i], &a, &why);
        if (rc == 1) {
            c.added++;
        } else if (rc == 0) {
            c.duplicates++;
        } else if (rc == -2 && on_reject) {
            c.rejected++;
            on_reject(ctx, i, su_buf_str(&why));
        } else if (rc == -2) {
            good = db_fail(d, "%s: record %zu of the batch is invalid: %s; nothing of the batch was stored",
                           d->path, i, su_buf_str(&why));
        } else {
            good = false;
        }
    }
    su_arena_free(&a);
    su_buf_free(&why);
    if (!good) {
        db_rollback(d);
        return false;
    }
    if (!db_commit(d))
        return false;
    if (counts) {
        counts->added += c.added;
        counts->duplicates += c.duplicates;
        counts->rejected += c.rejected;
    }
    return true;
}

/* ---- reading records ----------------------------------------------------------------- */

const char *db_col_str(sqlite3_stmt *st, int i, su_arena *a)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return s ? su_arena_strndup(a, (const char *)s, (size_t)sqlite3_column_bytes(st, i)) : "";
}

void db_row_to_record(sqlite3_stmt *st, su_arena *a, db_record *r)
{
    memset(r, 0, sizeof *r);
    r->id = sqlite3_column_int64(st, 0);
    r->workload.key = db_col_str(st, 1, a);
    r->workload.tmpl = db_col_str(st, 2, a);
    r->workload.args = db_col_str(st, 3, a);
    r->workload.flops = sqlite3_column_double(st, 4);
    r->target.name = db_col_str(st, 5, a);
    r->target.cpu = db_col_str(st, 6, a);
    r->target.isa = db_col_str(st, 7, a);
    r->target.cores = sqlite3_column_int(st, 8);
    r->target.os = db_col_str(st, 9, a);
    r->config_index = sqlite3_column_int64(st, 10);
    r->config = db_col_str(st, 11, a);
    r->is_default = sqlite3_column_int(st, 12) != 0;
    double *costs = NULL;
    size_t n = 0;
    if (!db_costs_parse(db_col_str(st, 13, a), a, &costs, &n)) {
        /* only a foreign or damaged file gets here; the record then fails
         * db_record_check (a success without costs, or a NaN cost) */
        costs = su_arena_alloc(a, sizeof *costs);
        costs[0] = NAN;
        n = 1;
    }
    r->costs = costs;
    r->ncosts = n;
    r->mean_cost = sqlite3_column_double(st, 14);
    int64_t e = sqlite3_column_int64(st, 15);
    r->error = su_merr_valid(e) ? (su_merr)e : SU_MERR_COUNT;
    r->error_msg = db_col_str(st, 16, a);
    r->counters = db_col_str(st, 17, a);
    r->build_time = sqlite3_column_double(st, 18);
    r->run_time = sqlite3_column_double(st, 19);
    r->tuner = db_col_str(st, 20, a);
    r->session = sqlite3_column_type(st, 21) == SQLITE_NULL ? NULL : db_col_str(st, 21, a);
    r->model = db_col_str(st, 22, a);
    r->timestamp = sqlite3_column_double(st, 23);
    r->host = db_col_str(st, 24, a);
}

/* Collects every row of a prepared query into an arena array. */
static bool collect(db *d, sqlite3_stmt *st, su_arena *a, db_record **out, size_t *n, const char *doing)
{
    SU_VEC(db_record) v = {0};
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        db_record r;
        db_row_to_record(st, a, &r);
        su_vec_push(&v, r);
    }
    if (rc != SQLITE_DONE) {
        su_vec_free(&v);
        return db_fail_sql(d, rc, doing);
    }
    *n = v.len;
    *out = v.len ? su_arena_dup(a, v.data, v.len * sizeof *v.data) : NULL;
    su_vec_free(&v);
    return true;
}

/* A candidate of top-k with the digest its order needs. */
typedef struct ranked {
    db_record r;
    int64_t digest;
} ranked;

/* db_best's order (DB_BEST_ORDER) in C, for merging several target rows. */
static int rank_cmp(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->r.mean_cost != b->r.mean_cost)
        return a->r.mean_cost < b->r.mean_cost ? -1 : 1;
    if (a->r.config_index != b->r.config_index)
        return a->r.config_index < b->r.config_index ? -1 : 1;
    if (a->r.timestamp != b->r.timestamp)
        return a->r.timestamp < b->r.timestamp ? -1 : 1;
    if (a->digest != b->digest)
        return a->digest < b->digest ? -1 : 1;
    return (a->r.id > b->r.id) - (a->r.id < b->r.id);
}

/* The workload's row id: 0 when unknown, -1 on error. */
static int64_t find_workload(db *d, const char *key)
{
    db_cached *c = su_map_get(&d->workloads, key);
    if (c)
        return c->id;
    sqlite3_stmt *st = db_stmt(d, DB_ST_WORKLOAD_FIND);
    if (!st)
        return -1;
    bind_text(st, 1, key);
    int rc = sqlite3_step(st);
    int64_t id = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return db_fail_sql(d, rc, "looking up a workload"), -1;
    return id;
}

/* The best records of one workload on one target row are the first rows of
 * records_lookup index range (error = 0), in mean-cost order; a target name may have several
 * rows (one per host description), whose first k are merged here. */
bool db_top_k(db *d, const char *key, const char *target, size_t k, su_arena *a, db_record **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    int64_t wid = find_workload(d, key);
    if (wid <= 0 || k == 0)
        return wid == 0 || k == 0;
    sqlite3_stmt *ts = db_stmt(d, DB_ST_TARGET_IDS);
    if (!ts)
        return false;
    bind_text(ts, 1, target);
    SU_VEC(int64_t) tids = {0};
    int rc;
    while ((rc = sqlite3_step(ts)) == SQLITE_ROW)
        su_vec_push(&tids, sqlite3_column_int64(ts, 0));
    sqlite3_reset(ts);
    if (rc != SQLITE_DONE) {
        su_vec_free(&tids);
        return db_fail_sql(d, rc, "looking up a target");
    }
    SU_VEC(ranked) v = {0};
    bool good = true;
    for (size_t t = 0; good && t < tids.len; t++) {
        sqlite3_stmt *st = db_stmt(d, DB_ST_BEST);
        if (!st) {
            good = false;
            break;
        }
        sqlite3_bind_int64(st, 1, wid);
        sqlite3_bind_int64(st, 2, tids.data[t]);
        sqlite3_bind_int64(st, 3, k > INT64_MAX ? INT64_MAX : (int64_t)k);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            ranked r;
            db_row_to_record(st, a, &r.r);
            r.digest = sqlite3_column_int64(st, 25);
            su_vec_push(&v, r);
        }
        sqlite3_reset(st);
        if (rc != SQLITE_DONE)
            good = db_fail_sql(d, rc, "looking up the best records");
    }
    bool several = tids.len > 1;
    su_vec_free(&tids);
    if (good && v.len) {
        if (several)
            qsort(v.data, v.len, sizeof *v.data, rank_cmp);
        *n = v.len < k ? v.len : k;
        db_record *o = su_arena_alloc(a, *n * sizeof *o);
        for (size_t i = 0; i < *n; i++)
            o[i] = v.data[i].r;
        *out = o;
    }
    su_vec_free(&v);
    return good;
}

int db_best(db *d, const char *key, const char *target, su_arena *a, db_record *out)
{
    db_record *r;
    size_t n;
    if (!db_top_k(d, key, target, 1, a, &r, &n))
        return -1;
    if (n)
        *out = r[0];
    return n ? 1 : 0;
}

bool db_top_k_isa(db *d, const char *key, const char *isa, size_t k, su_arena *a, db_record **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st = prepare(d, "SELECT " DB_RECORD_COLUMNS " FROM " DB_RECORD_FROM
                                  " WHERE r.workload_id = (SELECT id FROM workloads WHERE key = ?1)"
                                  " AND t.isa = ?2 AND r.error = 0 AND r.mean_cost IS NOT NULL"
                                  " ORDER BY " DB_BEST_ORDER " LIMIT ?3");
    if (!st)
        return false;
    bind_text(st, 1, key);
    bind_text(st, 2, isa);
    sqlite3_bind_int64(st, 3, k > INT64_MAX ? INT64_MAX : (int64_t)k);
    bool good = collect(d, st, a, out, n, "looking up the best records of an ISA");
    sqlite3_finalize(st);
    return good;
}

bool db_workload_records(db *d, const char *key, const char *target, su_arena *a, db_record **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st = prepare(d, "SELECT " DB_RECORD_COLUMNS " FROM " DB_RECORD_FROM
                                  " WHERE r.workload_id = (SELECT id FROM workloads WHERE key = ?1)"
                                  " AND (?2 IS NULL OR t.target = ?2) ORDER BY r.id");
    if (!st)
        return false;
    bind_text(st, 1, key);
    if (target)
        bind_text(st, 2, target);
    bool good = collect(d, st, a, out, n, "reading the records of a workload");
    sqlite3_finalize(st);
    return good;
}

bool db_similar_records(db *d, const char *tmpl, const char *key, const char *target, const char *isa, size_t limit,
                        su_arena *a, db_record **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st = prepare(d, "SELECT " DB_RECORD_COLUMNS " FROM " DB_RECORD_FROM
                                  " WHERE w.template = ?1 AND (?3 IS NULL OR t.isa = ?3)"
                                  " AND NOT (w.key = ?2 AND t.target IS ?4) ORDER BY r.id DESC LIMIT ?5");
    if (!st)
        return false;
    bind_text(st, 1, tmpl);
    bind_text(st, 2, key);
    if (isa)
        bind_text(st, 3, isa);
    if (target)
        bind_text(st, 4, target);
    sqlite3_bind_int64(st, 5, limit ? (int64_t)limit : -1);
    bool good = collect(d, st, a, out, n, "reading the records of similar workloads");
    sqlite3_finalize(st);
    return good;
}

bool db_foreach_record(db *d, const db_filter *f, bool (*fn)(void *ctx, const db_record *r), void *ctx)
{
    sqlite3_stmt *st = prepare(d, "SELECT " DB_RECORD_COLUMNS " FROM " DB_RECORD_FROM
                                  " WHERE (?1 IS NULL OR w.key = ?1) AND (?2 IS NULL OR t.target = ?2)"
                                  " ORDER BY r.id");
    if (!st)
        return false;
    if (f && f->key)
        bind_text(st, 1, f->key);
    if (f && f->target)
        bind_text(st, 2, f->target);
    su_arena a;
    su_arena_init(&a);
    int rc;
    bool go = true;
    while (go && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        db_record r;
        db_row_to_record(st, &a, &r);
        go = fn(ctx, &r);
        su_arena_free(&a);
    }
    bool good = !go || rc == SQLITE_DONE || db_fail_sql(d, rc, "reading records");
    sqlite3_finalize(st);
    su_arena_free(&a);
    return good;
}
