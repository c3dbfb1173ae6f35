/* report.c — the static report: the dashboard's page with Chart.js, the
 * application and the API's answers inline, in one HTML file that opens
 * from disk (for a CI run's artifacts, or a colleague). The application
 * reads its answers from the embedded object instead of the server, keyed
 * by API path, so the report shows the same charts as the live pages. */
#include <jansson.h>
#include <string.h>

#include "dashboard/dashboard.h"

/* Appends "PATH": answer to the data object; done holds the paths written. */
static void put_answer(su_buf *data, json_t *done, const char *path, const su_buf *answer)
{
    json_object_set_new(done, path, json_true());
    su_buf_putc(data, ',');
    db_json_put_str(data, path);
    su_buf_putc(data, ':');
    su_buf_puts(data, su_buf_str(answer));
}

/* The answers about one session: itself, its measurements, its tasks. */
static bool put_session(db *d, const char *uuid, double now, su_buf *data, json_t *done)
{
    su_buf a = {0}, path = {0};
    bool good = db_dash_session(d, uuid, now, &a) > 0;
    json_t *s = good ? json_loads(su_buf_str(&a), 0, NULL) : NULL;
    if (good) {
        su_buf_printf(&path, "/api/sessions/%s", uuid);
        put_answer(data, done, su_buf_str(&path), &a);
        su_buf_clear(&a);
        su_buf_puts(&path, "/measurements");
        good = db_dash_measurements(d, uuid, 0, &a) > 0;
        if (good)
            put_answer(data, done, su_buf_str(&path), &a);
    }
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(s, "tasks"), i, t) {
        const char *hash = json_string_value(json_object_get(t, "hash"));
        const char *target = json_string_value(json_object_get(t, "target"));
        su_buf_clear(&path);
        su_buf_printf(&path, "/api/tasks/%s", hash ? hash : "");
        if (!good || !hash || json_object_get(done, su_buf_str(&path)))
            continue;
        su_buf_clear(&a);
        good = db_dash_task(d, hash, target, &a) > 0;
        if (good)
            put_answer(data, done, su_buf_str(&path), &a);
    }
    json_decref(s);
    su_buf_free(&a);
    su_buf_free(&path);
    return good;
}

bool dash_report(db *d, const char *session, su_buf *out)
{
    if (session && !db_uuid_valid(session))
        return db_fail(d, "'%s' is not a session id (8-4-4-4-12 lowercase hex digits)", session);
    double now = db_now();
    su_buf data = {0}, a = {0};
    json_t *done = json_object();
    bool good = db_dash_sessions(d, now, &a);
    json_t *list = good ? json_loads(su_buf_str(&a), 0, NULL) : NULL;
    /* the application's first page: the session asked for, else the list */
    su_buf_puts(&data, "{\"report\":{\"generated\":");
    db_json_put_num(&data, now);
    su_buf_puts(&data, ",\"session\":");
    if (session)
        db_json_put_str(&data, session);
    else
        su_buf_puts(&data, "null");
    su_buf_putc(&data, '}');
    if (good)
        put_answer(&data, done, "/api/sessions", &a);
    bool seen = false;
    size_t i;
    json_t *s;
    json_array_foreach(list, i, s) {
        const char *uuid = json_string_value(json_object_get(s, "uuid"));
        if (!good || !uuid || (session && strcmp(uuid, session) != 0))
            continue;
        seen = true;
        good = put_session(d, uuid, now, &data, done);
    }
    if (good && session && !seen)
        good = db_fail(d, "no session %s in %s (relay-tune report without --session lists them all)", session,
                       db_path(d));
    su_buf_clear(&a);
    if (good && (good = db_dash_benchmarks(d, &a)))
        put_answer(&data, done, "/api/benchmarks", &a);
    su_buf_putc(&data, '}');
    if (good)
        dash_page(out, su_buf_str(&data));
    json_decref(list);
    json_decref(done);
    su_buf_free(&data);
    su_buf_free(&a);
    return good;
}
