/* claims.c — the configs a tuner is about to measure, claimed in the database
 * so that two tune processes sharing one file never measure the same config,
 * neither one the other has measured nor one the other is measuring.
 *
 * A claim names a workload, a target string and a config in its canonical
 * record text (which carries the template's version, so a claim means what a
 * record means). Claiming a batch is one write transaction: a config that is
 * already recorded, or claimed by another owner whose claim is still live, is
 * refused; the rest are claimed until `expires`. A claim is void once it has
 * expired, or once its owner is a process of this host that no longer runs
 * (owners are "host:pid:..."), so a killed tuner never blocks a config for
 * long. Owners release their claims once the batch is stored. */
#include <errno.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"

void db_claim_owner(const char *session, char *out, size_t n)
{
    char host[256];
    db_host_name(host, sizeof host);
    snprintf(out, n, "%s:%ld:%s", host, (long)getpid(), session ? session : "");
}

/* True when the owner is a process of this host that has exited. */
static bool owner_dead(const char *owner)
{
    char host[256];
    db_host_name(host, sizeof host);
    size_t hl = strlen(host);
    if (!hl || strncmp(owner, host, hl) != 0 || owner[hl] != ':')
        return false;
    char *end;
    long pid = strtol(owner + hl + 1, &end, 10);
    if (end == owner + hl + 1 || *end != ':' || pid <= 0)
        return false;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

static bool step_done(db *d, sqlite3_stmt *st, const char *doing)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE || db_fail_sql(d, rc, doing);
}

/* Drops expired claims and those of exited processes of this host. */
static bool drop_void(db *d, double now)
{
    sqlite3_stmt *st = db_stmt(d, DB_ST_CLAIM_EXPIRE);
    if (!st)
        return false;
    sqlite3_bind_double(st, 1, now);
    if (!step_done(d, st, "dropping expired claims"))
        return false;
    if (!(st = db_stmt(d, DB_ST_CLAIM_OWNERS)))
        return false;
    su_arena a;
    su_arena_init(&a);
    const char **dead = NULL;
    size_t ndead = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *o = db_col_str(st, 0, &a);
        if (!owner_dead(o))
            continue;
        if (ndead == cap)
            dead = su_realloc(dead, (cap = cap ? 2 * cap : 4) * sizeof *dead);
        dead[ndead++] = o;
    }
    sqlite3_reset(st);
    bool ok = rc == SQLITE_DONE || db_fail_sql(d, rc, "reading claim owners");
    for (size_t i = 0; ok && i < ndead; i++)
        ok = db_release_claims(d, dead[i]);
    free(dead);
    su_arena_free(&a);
    return ok;
}

/* The state of one config: recorded, claimed by another owner, or free
 * (then claimed, or its own claim renewed). */
static int claim_one(db *d, const char *key, const char *target, const char *config, const char *owner,
                     double expires)
{
    sqlite3_stmt *st = db_stmt(d, DB_ST_CLAIM_RECORDED);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, target, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, config, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc == SQLITE_ROW)
        return DB_CLAIM_RECORDED;
    if (rc != SQLITE_DONE)
        return db_fail_sql(d, rc, "looking up a claimed config's records"), -1;
    if (!(st = db_stmt(d, DB_ST_CLAIM_PUT)))
        return -1;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, target, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, config, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, owner, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 5, expires);
    if (!step_done(d, st, "claiming a config"))
        return -1;
    /* the upsert renews only our own claim: no change means another owner holds it */
    return sqlite3_changes(d->sql) ? DB_CLAIM_OURS : DB_CLAIM_TAKEN;
}

bool db_claim(db *d, const char *key, const char *target, const char *const *configs, size_t n,
              const char *owner, double now, double expires, int *state)
{
    if (!db_begin(d))
        return false;
    bool ok = drop_void(d, now);
    su_arena a;
    su_arena_init(&a);
    for (size_t i = 0; ok && i < n; i++) {
        su_buf why = {0};
        const char *canon = db_config_canon(configs[i], &a, &why);
        if (!canon)
            ok = db_fail(d, "%s: cannot claim config %zu: %s", d->path, i, su_buf_str(&why));
        su_buf_free(&why);
        int s = ok ? claim_one(d, key, target, canon, owner, expires) : -1;
        ok = s >= 0;
        state[i] = s;
    }
    su_arena_free(&a);
    if (!ok) {
        db_rollback(d);
        return false;
    }
    return db_commit(d);
}

bool db_release_claims(db *d, const char *owner)
{
    sqlite3_stmt *st = db_stmt(d, DB_ST_CLAIM_RELEASE);
    if (!st)
        return false;
    sqlite3_bind_text(st, 1, owner, -1, SQLITE_STATIC);
    return step_done(d, st, "releasing claims");
}

int64_t db_claims_count(db *d)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(d->sql, "SELECT count(*) FROM claims", -1, &st, NULL) != SQLITE_OK)
        return -1;
    int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    return n;
}
