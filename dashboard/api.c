/* api.c — the dashboard's JSON API: a request path and its query parameters
 * in, a status and a JSON document out. Every parameter is checked before
 * the database sees it (a uuid is 36 characters of its form, a hash 16 hex
 * digits, a number a number), and a parameter the endpoint does not know is
 * an error rather than silently ignored, so that a mistyped URL says so.
 *
 *   /api/sessions                          every session, newest first
 *   /api/sessions/UUID                     one session: tasks, failures
 *   /api/sessions/UUID/measurements[?after=ID]   its measurements
 *   /api/tasks/HASH[?target=T]             a task's configs, best first
 *   /api/best[?target=T]                   the best config of every task
 *   /api/benchmarks                        benchmark results
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "dashboard/dashboard.h"

void dash_api_error(su_buf *out, int status, const char *msg)
{
    su_buf_puts(out, "{\"error\":");
    db_json_put_str(out, msg);
    su_buf_printf(out, ",\"status\":%d}", status);
}

/* Replaces out's content with an error; returns status. */
static int fail(su_buf *out, int status, const char *fmt, ...) SU_PRINTF(3, 4);
static int fail(su_buf *out, int status, const char *fmt, ...)
{
    su_buf msg = {0};
    va_list ap;
    va_start(ap, fmt);
    su_buf_vprintf(&msg, fmt, ap);
    va_end(ap);
    su_buf_clear(out);
    dash_api_error(out, status, su_buf_str(&msg));
    su_buf_free(&msg);
    return status;
}

/* A database failure: 500 with db's message. */
static int fail_db(db *d, su_buf *out)
{
    return fail(out, 500, "the database could not be read: %s", db_errmsg(d));
}

/* Checks that every parameter is one of the allowed names (NULL-terminated),
 * given once, and not too long; 0 or the error status. */
static int check_params(const dash_param *p, size_t n, const char *const *allowed, su_buf *out)
{
    for (size_t i = 0; i < n; i++) {
        bool known = false;
        for (const char *const *a = allowed; *a && !known; a++)
            known = !strcmp(p[i].name, *a);
        if (!known)
            return fail(out, 400, "unknown parameter '%.64s' (this endpoint takes %s)", p[i].name,
                        allowed[0] ? allowed[0] : "none");
        for (size_t j = 0; j < i; j++)
            if (!strcmp(p[i].name, p[j].name))
                return fail(out, 400, "parameter '%s' given twice", p[i].name);
        if (strlen(p[i].value) > DASH_MAX_PARAM)
            return fail(out, 400, "parameter '%s' is longer than %d bytes", p[i].name, DASH_MAX_PARAM);
    }
    return 0;
}

static const char *param(const dash_param *p, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(p[i].name, name))
            return p[i].value;
    return NULL;
}

static bool is_hash(const char *s, size_t len)
{
    if (len != 16)
        return false;
    for (size_t i = 0; i < 16; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

/* The segment of path that starts at p and ends at the next '/' or the end. */
static size_t segment(const char *p)
{
    const char *e = strchr(p, '/');
    return e ? (size_t)(e - p) : strlen(p);
}

/* Maps a db_dash_* result (1 found, 0 unknown, -1 error) to a status. */
static int found(db *d, int r, su_buf *out, const char *what, const char *id)
{
    if (r > 0)
        return 200;
    if (r == 0)
        return fail(out, 404, "no %s %s in this database", what, id);
    return fail_db(d, out);
}

static int sessions(db *d, const char *rest, const dash_param *p, size_t n, double now, su_buf *out)
{
    static const char *const none[] = {NULL}, *const after[] = {"after", NULL};
    if (!*rest) {
        int bad = check_params(p, n, none, out);
        return bad ? bad : db_dash_sessions(d, now, out) ? 200 : fail_db(d, out);
    }
    size_t len = segment(rest);
    char uuid[37];
    if (len != 36)
        return fail(out, 400, "'%.64s' is not a session id (36 characters: 8-4-4-4-12 hex digits)", rest);
    memcpy(uuid, rest, 36);
    uuid[36] = 0;
    if (!db_uuid_valid(uuid))
        return fail(out, 400, "'%s' is not a session id (8-4-4-4-12 lowercase hex digits)", uuid);
    rest += len;
    if (!*rest) {
        int bad = check_params(p, n, none, out);
        return bad ? bad : found(d, db_dash_session(d, uuid, now, out), out, "session", uuid);
    }
    if (strcmp(rest, "/measurements") != 0)
        return fail(out, 404, "no such endpoint (a session has /api/sessions/ID and /api/sessions/ID/measurements)");
    int bad = check_params(p, n, after, out);
    if (bad)
        return bad;
    int64_t from = 0;
    const char *a = param(p, n, "after");
    if (a) {
        char *end;
        errno = 0;
        long long v = strtoll(a, &end, 10);
        if (!*a || *end || errno || v < 0)
            return fail(out, 400, "after must be a record id (a non-negative integer), not '%.64s'", a);
        from = v;
    }
    return found(d, db_dash_measurements(d, uuid, from, out), out, "session", uuid);
}

static int tasks(db *d, const char *rest, const dash_param *p, size_t n, su_buf *out)
{
    static const char *const target[] = {"target", NULL};
    size_t len = segment(rest);
    if (!is_hash(rest, len) || rest[len])
        return fail(out, 400, "'%.64s' is not a task hash (16 lowercase hex digits, as in relay-tune tasks)", rest);
    int bad = check_params(p, n, target, out);
    if (bad)
        return bad;
    const char *t = param(p, n, "target");
    if (t && !*t)
        return fail(out, 400, "target is empty");
    return found(d, db_dash_task(d, rest, t, out), out, "task", rest);
}

static int best(db *d, const dash_param *p, size_t n, su_buf *out)
{
    static const char *const target[] = {"target", NULL};
    int bad = check_params(p, n, target, out);
    if (bad)
        return bad;
    su_arena a;
    su_arena_init(&a);
    db_best_row *rows;
    size_t nrows;
    bool good = db_best_all(d, param(p, n, "target"), &a, &rows, &nrows);
    if (good)
        db_best_print(rows, nrows, true, out);
    su_arena_free(&a);
    return good ? 200 : fail_db(d, out);
}

int dash_api(db *d, const char *path, const dash_param *p, size_t n, double now, su_buf *out)
{
    static const char *const none[] = {NULL};
    if (!strncmp(path, "/api/sessions", 13) && (path[13] == 0 || path[13] == '/'))
        return sessions(d, path[13] ? path + 14 : "", p, n, now, out);
    if (!strncmp(path, "/api/tasks/", 11))
        return tasks(d, path + 11, p, n, out);
    if (!strcmp(path, "/api/best"))
        return best(d, p, n, out);
    if (!strcmp(path, "/api/benchmarks")) {
        int bad = check_params(p, n, none, out);
        return bad ? bad : db_dash_benchmarks(d, out) ? 200 : fail_db(d, out);
    }
    return fail(out, 404, "no such endpoint: the API has /api/sessions, /api/sessions/ID, "
                          "/api/sessions/ID/measurements, /api/tasks/HASH, /api/best and /api/benchmarks");
}
