/* confirmations.c — the best configs of a task re-measured side by side.
 * A record's cost is one measurement, and the best of hundreds of single
 * measurements is partly luck; so a tuner that finishes a task re-measures
 * its few best configs interleaved (A B C A B C ...) and stores the result
 * here: each config's per-round costs, their median, and its rank by median.
 * Compiling with the database takes the latest confirmation's winner on the
 * exact target before any record. Confirmations stay in the database they
 * were made in: logs and merges carry records only (a confirmation is about
 * one machine's timing, and the records it came from travel anyway). */
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double db_median(const double *v, size_t n)
{
    if (!n)
        return NAN;
    double *s = su_malloc(n * sizeof *s);
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, by_double);
    double m = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    return m;
}

/* Checks one row and writes its canonical config; false with the reason. */
static bool check_row(db *d, const db_confirmed *r, size_t i, su_arena *a, const char **config, su_buf *costs)
{
    su_buf why = {0};
    *config = db_config_canon(r->config, a, &why);
    bool ok = *config != NULL;
    if (!ok)
        db_fail(d, "%s: confirmation row %zu: %s", d->path, i, su_buf_str(&why));
    su_buf_free(&why);
    for (size_t k = 0; ok && k < r->ncosts; k++)
        if (!isfinite(r->costs[k]) || r->costs[k] <= 0)
            ok = db_fail(d, "%s: confirmation row %zu: cost %zu is not a positive number", d->path, i, k);
    if (ok && (!r->ncosts || !isfinite(r->median) || r->median <= 0))
        ok = db_fail(d, "%s: confirmation row %zu: no costs or no median", d->path, i);
    if (ok)
        db_costs_format(r->costs, r->ncosts, costs);
    return ok;
}

bool db_add_confirmation(db *d, const char *key, const db_target *t, const char *session, const db_confirmed *rows,
                         size_t n)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(d->sql,
                                "INSERT INTO confirmations (key, target, isa, rank, config_index, config, costs, median, "
                                "session_id, timestamp) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
                                "(SELECT id FROM sessions WHERE uuid = ?9), ?10)",
                                -1, &st, NULL);
    if (rc != SQLITE_OK)
        return db_fail_sql(d, rc, "storing a confirmation");
    if (!db_begin(d)) {
        sqlite3_finalize(st);
        return false;
    }
    su_arena a;
    su_arena_init(&a);
    su_buf costs = {0};
    double now = db_now();
    bool ok = true;
    for (size_t i = 0; ok && i < n; i++) {
        const char *config;
        su_buf_clear(&costs);
        if (!(ok = check_row(d, &rows[i], i, &a, &config, &costs)))
            break;
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, t->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, t->isa ? t->isa : "", -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, (int64_t)i + 1);
        sqlite3_bind_int64(st, 5, rows[i].config_index);
        sqlite3_bind_text(st, 6, config, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 7, su_buf_str(&costs), -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 8, rows[i].median);
        sqlite3_bind_text(st, 9, session ? session : "", -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 10, now);
        rc = sqlite3_step(st);
        sqlite3_reset(st);
        ok = rc == SQLITE_DONE || db_fail_sql(d, rc, "storing a confirmation");
    }
    sqlite3_finalize(st);
    su_buf_free(&costs);
    su_arena_free(&a);
    if (!ok) {
        db_rollback(d);
        return false;
    }
    return db_commit(d);
}

bool db_confirmed_latest(db *d, const char *key, const db_target *t, su_arena *a, db_confirmed **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(d->sql,
                                "SELECT config_index, config, costs, median, timestamp FROM confirmations "
                                "WHERE key = ?1 AND target = ?2 AND isa = ?3 AND timestamp = "
                                "(SELECT max(timestamp) FROM confirmations WHERE key = ?1 AND target = ?2 AND isa = ?3) "
                                "ORDER BY rank",
                                -1, &st, NULL);
    if (rc != SQLITE_OK)
        return db_fail_sql(d, rc, "reading confirmations");
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, t->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, t->isa ? t->isa : "", -1, SQLITE_STATIC);
    size_t cap = 0;
    bool ok = true;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && ok) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 4;
            db_confirmed *g = su_arena_alloc(a, cap * sizeof *g);
            if (*n)
                memcpy(g, *out, *n * sizeof *g);
            *out = g;
        }
        db_confirmed *r = &(*out)[(*n)++];
        r->config_index = sqlite3_column_int64(st, 0);
        r->config = db_col_str(st, 1, a);
        ok = db_costs_parse(db_col_str(st, 2, a), a, &r->costs, &r->ncosts) ||
             db_fail(d, "%s: a confirmation's costs are damaged", d->path);
        r->median = sqlite3_column_double(st, 3);
        r->timestamp = sqlite3_column_double(st, 4);
    }
    if (ok && rc != SQLITE_DONE && rc != SQLITE_ROW)
        ok = db_fail_sql(d, rc, "reading confirmations");
    sqlite3_finalize(st);
    return ok;
}
