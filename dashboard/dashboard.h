/* dashboard.h — the map of dashboard/: the benchmark and tuning dashboard.
 * An HTTP server on libmicrohttpd serves a JSON API over a tuning database
 * (opened read-only, so it keeps serving while a `tune` writes it) and one
 * page application that draws it with Chart.js; the static report is the
 * same application with the API's answers written inside one HTML file.
 * The web assets (dashboard/web/ and Debian's Chart.js) are embedded at
 * build time: nothing is read from disk or the network at view time.
 * Prefix: dash_. Uses db/ and support/. Pages and API: docs/dashboard.md. */
#ifndef RT_DASHBOARD_H
#define RT_DASHBOARD_H

#include <stdio.h>

#include "db/db.h"

/* ---- assets.c: the embedded web assets ------------------------------------ */

/* One embedded file. */
typedef struct dash_asset {
    const char *name;          /* path under the server's root, "app.js" */
    const char *type;          /* its Content-Type */
    const unsigned char *data; /* its bytes, then a NUL (so a script can be inlined as text) */
    size_t size;               /* their number, the NUL not counted */
} dash_asset;

/* The asset called name, or NULL: only these files are ever served. */
const dash_asset *dash_asset_find(const char *name);
/* Appends the page that boots the application: with data NULL it links the
 * assets (the server's page); otherwise scripts and styles are inline and
 * data, a JSON object from API path to answer, rides along (the report). */
void dash_page(su_buf *out, const char *data);
/* Appends JSON text so that it cannot end the <script> element it sits in:
 * '<', '>' and '&' (which JSON only has inside strings) as \u escapes. */
void dash_put_script_json(su_buf *out, const char *json);

/* ---- api.c: the JSON API ---------------------------------------------------- */

/* The longest query parameter value the API reads. */
#define DASH_MAX_PARAM 1024

/* One query parameter of a request. */
typedef struct dash_param {
    const char *name;    /* as sent */
    const char *value;   /* "" when sent without a value */
} dash_param;

/* Answers GET path (under /api/) with n query parameters: appends the JSON
 * answer (or {"error": ..., "status": N}) to out and returns the HTTP status:
 * 200, 400 for a bad parameter, 404 for an unknown path or record, 500 when
 * the database fails. now decides which sessions are live. */
int dash_api(db *d, const char *path, const dash_param *params, size_t n, double now, su_buf *out);
/* Appends an API error object for status with message msg. */
void dash_api_error(su_buf *out, int status, const char *msg);

/* ---- server.c: the HTTP server ------------------------------------------------ */

typedef struct dash_server dash_server;

/* Starts serving the database at db_path on host (a numeric IPv4 or IPv6
 * address; NULL is 127.0.0.1) and port (0: any free one), on a thread of
 * its own; NULL with the reason in err. */
dash_server *dash_server_start(const char *db_path, const char *host, int port, su_buf *err);
/* The port it listens on. */
int dash_server_port(const dash_server *s);
/* Stops serving and closes the database (NULL is fine). */
void dash_server_stop(dash_server *s);

/* ---- report.c: the static report ------------------------------------------------- */

/* Appends the self-contained HTML report of the database: the sessions
 * list, every session (or only session when not NULL) with its tasks, and
 * the benchmarks. False with a message in d's error (an unknown session
 * too). */
bool dash_report(db *d, const char *session, su_buf *out);

#endif
