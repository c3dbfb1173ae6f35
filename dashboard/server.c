/* server.c — the dashboard's HTTP server on libmicrohttpd. One thread of
 * the library's own answers every request in turn, so the one read-only
 * database handle is never used by two threads; a request is small work
 * (an indexed query), and a `tune` writing the same file does not block a
 * reader in WAL mode.
 *
 * What it serves is closed: "/" (the page), "/assets/NAME" for the embedded
 * files, and "/api/..." (api.c); anything else is a 404 with a JSON error.
 * Only GET and HEAD are answered; a request with a body, too many query
 * parameters or headers over the connection's memory limit is refused with
 * a 4xx status. Bound to loopback (the default), it also refuses a Host
 * header naming another machine, so that a web page elsewhere cannot reach
 * the API through DNS rebinding. */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "dashboard/dashboard.h"

/* Per-connection memory (request line, headers): a longer request is
 * refused by the library with 414 or 431. */
#define MEMORY_LIMIT (32 * 1024)
/* Query parameters one request may carry. */
#define MAX_PARAMS 16

struct dash_server {
    struct MHD_Daemon *mhd;  /* the library's daemon */
    db *d;                   /* the database, read-only */
    int port;                /* the port bound */
    bool loopback;           /* bound to a loopback address: check Host */
};

/* Markers kept in the library's per-request slot between calls. */
static char seen_request, seen_body;

static enum MHD_Result respond(struct MHD_Connection *c, int status, const char *type, const void *data,
                               size_t size, bool page)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(size, (void *)data, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "X-Frame-Options", "DENY");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    if (page)   /* only our own scripts and styles; nothing from elsewhere */
        MHD_add_response_header(r, "Content-Security-Policy",
                                "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, "Allow", "GET, HEAD");
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result respond_json(struct MHD_Connection *c, int status, const su_buf *b)
{
    const char *s = su_buf_str(b);
    return respond(c, status, "application/json; charset=utf-8", s, strlen(s), false);
}

static enum MHD_Result respond_error(struct MHD_Connection *c, int status, const char *msg)
{
    su_buf b = {0};
    dash_api_error(&b, status, msg);
    enum MHD_Result ok = respond_json(c, status, &b);
    su_buf_free(&b);
    return ok;
}

/* The query parameters, collected by the library's iterator. */
typedef struct params {
    dash_param p[MAX_PARAMS];
    size_t n;
    bool too_many;
} params;

static enum MHD_Result collect(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    params *ps = cls;
    if (ps->n == MAX_PARAMS) {
        ps->too_many = true;
        return MHD_NO;
    }
    ps->p[ps->n++] = (dash_param){key ? key : "", value ? value : ""};
    return MHD_YES;
}

/* True when the Host header names this server on a loopback name. */
static bool host_ok(const dash_server *s, struct MHD_Connection *c)
{
    if (!s->loopback)
        return true;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    if (!h)
        return false;
    static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        size_t len = strlen(names[i]);
        if (strncmp(h, names[i], len) != 0)
            continue;
        if (h[len] == 0)
            return true;
        char *end;
        long p = h[len] == ':' ? strtol(h + len + 1, &end, 10) : -1;
        if (p == s->port && !*end)
            return true;
    }
    return false;
}

static enum MHD_Result serve(dash_server *s, struct MHD_Connection *c, const char *url)
{
    if (!host_ok(s, c))
        return respond_error(c, 403, "this dashboard answers requests for 127.0.0.1 and localhost only");
    if (!strcmp(url, "/")) {
        su_buf b = {0};
        dash_page(&b, NULL);
        enum MHD_Result ok = respond(c, 200, "text/html; charset=utf-8", su_buf_str(&b), strlen(su_buf_str(&b)), true);
        su_buf_free(&b);
        return ok;
    }
    if (!strncmp(url, "/assets/", 8)) {
        const dash_asset *a = dash_asset_find(url + 8);
        return a ? respond(c, 200, a->type, a->data, a->size, false) : respond_error(c, 404, "no such asset");
    }
    if (strncmp(url, "/api/", 5) != 0)
        return respond_error(c, 404, "no such page: the dashboard is at / and its API under /api/");
    params ps = {.n = 0};
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect, &ps);
    if (ps.too_many)
        return respond_error(c, 400, "too many query parameters");
    su_buf b = {0};
    int status = dash_api(s->d, url, ps.p, ps.n, db_now(), &b);
    enum MHD_Result ok = respond_json(c, status, &b);
    su_buf_free(&b);
    return ok;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **req)
{
    if (!*req) {   /* the headers are in; a body may follow */
        *req = &seen_request;
        if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
            return respond_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "the dashboard only reads: use GET");
        return MHD_YES;
    }
    if (*upload_size) {   /* drop the body; the request is refused below */
        *upload_size = 0;
        *req = &seen_body;
        return MHD_YES;
    }
    if (*req == &seen_body)
        return respond_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "a GET request carries no body");
    return serve(cls, c, url);
}

/* Fills addr from a numeric host and port; false when host is not an address. */
static bool address(const char *host, int port, struct sockaddr_storage *addr, bool *v6, bool *loopback)
{
    memset(addr, 0, sizeof *addr);
    struct sockaddr_in *a4 = (struct sockaddr_in *)addr;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)addr;
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        *v6 = false;
        *loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
        return true;
    }
    if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        *v6 = true;
        *loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
        return true;
    }
    return false;
}

dash_server *dash_server_start(const char *db_path, const char *host, int port, su_buf *err)
{
    host = host ? host : "127.0.0.1";
    struct sockaddr_storage addr;
    bool v6, loopback;
    if (port < 0 || port > 65535) {
        su_buf_printf(err, "port %d is out of range (0 to 65535; 0 picks a free one)", port);
        return NULL;
    }
    if (!address(host, port, &addr, &v6, &loopback)) {
        su_buf_printf(err, "'%s' is not a numeric IPv4 or IPv6 address (e.g. 127.0.0.1, 0.0.0.0 or ::1)", host);
        return NULL;
    }
    /* readers of a WAL database never block its writer; a short busy wait
     * covers the moment a writer checkpoints */
    db_open_opts o = {DB_OPEN_READONLY | DB_OPEN_NO_CREATE, 2000, 0};
    db *d = db_open(db_path, &o, err);
    if (!d)
        return NULL;
    dash_server *s = su_calloc(1, sizeof *s);
    s->d = d;
    s->loopback = loopback;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | (v6 ? MHD_USE_IPv6 : 0);
    s->mhd = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, handle, s, MHD_OPTION_SOCK_ADDR,
                              (struct sockaddr *)&addr, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)MEMORY_LIMIT,
                              MHD_OPTION_CONNECTION_LIMIT, 64u, MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
    if (!s->mhd) {
        su_buf_printf(err, "cannot listen on %s port %d (in use, or not an address of this machine)", host, port);
        dash_server_stop(s);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : port;
    return s;
}

int dash_server_port(const dash_server *s)
{
    return s->port;
}

void dash_server_stop(dash_server *s)
{
    if (!s)
        return;
    if (s->mhd)
        MHD_stop_daemon(s->mhd);
    db_close(s->d);
    free(s);
}
