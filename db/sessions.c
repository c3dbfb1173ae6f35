/* sessions.c — tuning-session bookkeeping. A session is one run of the tuner
 * over a model; its records point to it, so that an interrupted session can be
 * found and resumed, and a log says which run a measurement came from. A
 * session is named by a random uuid rather than a row id, so that sessions of
 * two machines stay apart when their logs or databases are merged. */
#include <fcntl.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"

double db_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void db_uuid_new(char out[37])
{
    unsigned char b[16];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
        /* no entropy source: mix the clock and the process id instead */
        uint64_t h = su_hash_u64(su_hash_u64(SU_HASH_INIT, (uint64_t)(db_now() * 1e9)), (uint64_t)getpid());
        uint64_t h2 = su_hash_u64(h, (uint64_t)clock());
        memcpy(b, &h, 8);
        memcpy(b + 8, &h2, 8);
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    static const char hex[] = "0123456789abcdef";
    char *p = out;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            *p++ = '-';
        *p++ = hex[b[i] >> 4];
        *p++ = hex[b[i] & 15];
    }
    *p = 0;
}

bool db_uuid_valid(const char *s)
{
    if (!s || strlen(s) != 36)
        return false;
    for (int i = 0; i < 36; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    }
    return true;
}

void db_host_name(char *out, size_t n)
{
    if (gethostname(out, n) != 0)
        out[0] = 0;
    out[n - 1] = 0;
}

bool db_session_begin(db *d, const char *model, const char *target, const char *command, char uuid[37])
{
    char host[256];
    db_host_name(host, sizeof host);
    db_uuid_new(uuid);
    sqlite3_stmt *st = db_stmt(d, DB_ST_SESSION_ADD);
    if (!st)
        return false;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, model ? model : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, target ? target : "", -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 4, db_now());
    sqlite3_bind_text(st, 5, command ? command : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, host, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE || db_fail_sql(d, rc, "starting a session");
}

bool db_session_end(db *d, const char *uuid, int64_t trials)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(d->sql, "UPDATE sessions SET ended = ?2, trials = ?3 WHERE uuid = ?1", -1, &st, NULL);
    if (rc != SQLITE_OK)
        return db_fail_sql(d, rc, "ending a session");
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 2, db_now());
    sqlite3_bind_int64(st, 3, trials);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_fail_sql(d, rc, "ending a session");
    if (sqlite3_changes(d->sql) == 0)
        return db_fail(d, "%s: no session %s", d->path, uuid);
    return true;
}

bool db_session_set_tasks(db *d, const char *uuid, size_t n, const char *const *hashes, const int *calls)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(d->sql,
                                "INSERT OR REPLACE INTO session_tasks (session_id, hash, calls) "
                                "SELECT id, ?2, ?3 FROM sessions WHERE uuid = ?1",
                                -1, &st, NULL);
    if (rc != SQLITE_OK)
        return db_fail_sql(d, rc, "recording a session's tasks");
    for (size_t i = 0; i < n && rc != SQLITE_ERROR; i++) {
        sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, hashes[i], -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, calls[i]);
        rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE)
            break;
        if (sqlite3_changes(d->sql) == 0) {
            sqlite3_finalize(st);
            return db_fail(d, "%s: no session %s", d->path, uuid);
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE || n == 0 || db_fail_sql(d, rc, "recording a session's tasks");
}

static void row_to_session(sqlite3_stmt *st, su_arena *a, db_session *s)
{
    s->uuid = db_col_str(st, 0, a);
    s->model = db_col_str(st, 1, a);
    s->target = db_col_str(st, 2, a);
    s->started = sqlite3_column_double(st, 3);
    s->ended = sqlite3_column_double(st, 4);
    s->trials = sqlite3_column_int64(st, 5);
    s->command = db_col_str(st, 6, a);
    s->host = db_col_str(st, 7, a);
}

#define SESSION_COLUMNS "uuid, model, target, started, ended, trials, command, host"

int db_session_get(db *d, const char *uuid, su_arena *a, db_session *out)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(d->sql, "SELECT " SESSION_COLUMNS " FROM sessions WHERE uuid = ?1", -1, &st, NULL);
    if (rc != SQLITE_OK)
        return db_fail_sql(d, rc, "reading a session"), -1;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        row_to_session(st, a, out);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW)
        return 1;
    return rc == SQLITE_DONE ? 0 : (db_fail_sql(d, rc, "reading a session"), -1);
}

bool db_sessions(db *d, su_arena *a, db_session **out, size_t *n)
{
    sqlite3_stmt *st;
    *out = NULL;
    *n = 0;
    int rc = sqlite3_prepare_v2(d->sql, "SELECT " SESSION_COLUMNS " FROM sessions ORDER BY started, id", -1, &st,
                                NULL);
    if (rc != SQLITE_OK)
        return db_fail_sql(d, rc, "reading sessions");
    SU_VEC(db_session) v = {0};
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        db_session s;
        row_to_session(st, a, &s);
        su_vec_push(&v, s);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE && v.len) {
        *out = su_arena_dup(a, v.data, v.len * sizeof *v.data);
        *n = v.len;
    }
    su_vec_free(&v);
    return rc == SQLITE_DONE || db_fail_sql(d, rc, "reading sessions");
}
