/* test_api.c — the dashboard's server and JSON API. The test fills a
 * database through the db API (a finished session over two tasks with a
 * default config, a failure whose message and model hold <script> and
 * markup, a session still running, model and kernel benchmark results),
 * starts the server on a free loopback port, fetches every endpoint over a
 * plain socket and compares the JSON with what it stored; then bad requests
 * (unknown paths and parameters, malformed ids, bodies, methods, huge
 * headers, a foreign Host) must get a 4xx answer and leave the server
 * serving; a writer adding records while the server runs is seen at once;
 * and the static report embeds the same answers without a way for a string
 * to end its script element. */
#include <arpa/inet.h>
#include <jansson.h>
#include <math.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dashboard/dashboard.h"
#include "tests/tap.h"

#define MARKUP_MODEL "<script>alert(1)</script><b>model</b>"
#define MARKUP_MSG "cc: error: <img src=x onerror=alert(2)>\n</pre>&amp;"

static int port;

/* ---- a tiny HTTP client ------------------------------------------------------------------ */

typedef struct reply {
    int status;
    su_buf head, body;
} reply;

/* Sends raw (a whole request) and reads the answer until the server closes. */
static reply send_raw(const char *raw, size_t len)
{
    reply r = {0};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0)
            close(fd);
        return r;
    }
    for (size_t off = 0; off < len;) {
        ssize_t k = send(fd, raw + off, len - off, MSG_NOSIGNAL);
        if (k <= 0)
            break;
        off += (size_t)k;
    }
    su_buf all = {0};
    char chunk[4096];
    ssize_t k;
    while ((k = recv(fd, chunk, sizeof chunk, 0)) > 0)
        su_buf_putn(&all, chunk, (size_t)k);
    close(fd);
    const char *s = su_buf_str(&all), *end = strstr(s, "\r\n\r\n");
    if (sscanf(s, "HTTP/1.%*d %d", &r.status) != 1)
        r.status = 0;
    if (end) {
        su_buf_putn(&r.head, s, (size_t)(end - s));
        su_buf_puts(&r.body, end + 4);
    }
    su_buf_free(&all);
    return r;
}

static reply request(const char *method, const char *path, const char *extra)
{
    su_buf q = {0};
    su_buf_printf(&q, "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n%s\r\n", method, path, port,
                  extra ? extra : "");
    reply r = send_raw(su_buf_str(&q), strlen(su_buf_str(&q)));
    su_buf_free(&q);
    return r;
}

static void reply_free(reply *r)
{
    su_buf_free(&r->head);
    su_buf_free(&r->body);
}

/* GETs path and parses its JSON answer (NULL when it is not JSON); *status set. */
static json_t *get_json(const char *path, int *status)
{
    reply r = request("GET", path, NULL);
    *status = r.status;
    json_t *j = json_loads(su_buf_str(&r.body), 0, NULL);
    if (!j)
        diag("GET %s: status %d, not JSON: %.200s", path, r.status, su_buf_str(&r.body));
    reply_free(&r);
    return j;
}

/* ---- the database ------------------------------------------------------------------------ */

static const char *const KEY[2] = {"dense|float32|in=1x64,32x64", "conv2d_nchw|float32|in=1x8x8x8,16x8x3x3"};
static const double FLOPS[2] = {4096, 148480};
/* costs per config of each task, config 0 the default; NaN: a compile error */
static const double COST[2][4] = {{4e-6, 2e-6, 3e-6, 1e-6}, {8e-5, NAN, 2e-5, 4e-5}};

static void hash_of(int task, char out[17])
{
    snprintf(out, 17, "%016llx", (unsigned long long)su_hash_str(KEY[task]));
}

/* Config cfg of task (its cost from COST) stored under config index idx. */
static db_record record(int task, int cfg, int idx, const char *session, double when, su_arena *a)
{
    db_record r = {0};
    r.workload = (db_workload){KEY[task], task ? "conv2d_nchw" : "dense", "{}", FLOPS[task]};
    r.target = (db_target){"cpu", "test cpu", "avx2 fma", 2, "Linux"};
    r.config_index = idx;
    r.config = su_arena_printf(a, "{\"index\":%d,\"entities\":[[\"template_version\",\"ot\",2],[\"tile\",\"sp\",[%d,%d]],"
                                  "[\"unroll\",\"ot\",%d]]}", idx, 1 << cfg, 16 >> cfg, cfg % 2);
    r.is_default = cfg == 0;
    double c = COST[task][cfg];
    if (isnan(c)) {
        r.error = SU_MERR_COMPILE_ERROR;
        r.error_msg = MARKUP_MSG;
    } else {
        double *costs = su_arena_alloc(a, sizeof *costs);
        *costs = c;
        r.costs = costs;
        r.ncosts = 1;
    }
    r.counters = "{}";
    r.tuner = cfg % 2 ? "xgb" : "random";
    r.session = session;
    r.timestamp = when;
    r.host = "node1";
    return r;
}

/* Fills the database; the finished session's uuid in done, the live one's in live. */
static bool fill(const char *path, char done[37], char live[37])
{
    su_buf err = {0};
    db *d = db_open(path, NULL, &err);
    if (!d) {
        diag("%s", su_buf_str(&err));
        return false;
    }
    su_arena a;
    su_arena_init(&a);
    bool good = db_session_begin(d, MARKUP_MODEL, "cpu", "relay-tune tune m.relay --trials 8", done);
    double t0 = db_now();
    db_record recs[8];
    for (int i = 0; i < 8; i++)   /* interleaved: dense 0, conv 0, dense 1, ... */
        recs[i] = record(i % 2, i / 2, i / 2, done, t0 + 0.5 * i, &a);
    good = good && db_add_records(d, recs, 8, NULL, NULL, NULL) && db_session_end(d, done, 8);
    /* the model calls the dense once and the conv 3 times; the live session
     * (as one imported from a log) says nothing of its calls */
    char h0[17], h1[17];
    hash_of(0, h0);
    hash_of(1, h1);
    const char *hs[2] = {h0, h1};
    const int calls[2] = {1, 3};
    good = good && db_session_set_tasks(d, done, 2, hs, calls);
    good = good && db_session_begin(d, "live.relay", "cpu", "relay-tune tune live.relay", live);
    db_record r = record(0, 3, 9, live, db_now(), &a);   /* another index than the finished session's */
    good = good && db_add_records(d, &r, 1, NULL, NULL, NULL);
    char h[17];
    hash_of(1, h);
    char kernel[64];
    snprintf(kernel, sizeof kernel, "kernel %s conv 1x8x8x8", h);
    db_bench b[3] = {
        {"resnet18.relay", "cpu", "default", 3e-3, 3e-3, 3e-3, 3e-3, 0, 10, "abc1234", 1790000000, "host-1"},
        {"resnet18.relay", "cpu", "tuned", 2e-3, 2e-3, 2e-3, 2e-3, 0, 10, "abc1234", 1790000001, "host-1"},
        {kernel, "cpu", "onednn", 1e-5, 1e-5, 1e-5, 1e-5, 0, 10, "abc1234", 1790000002, "host-1", "avx512", 250.5, 2},
    };
    good = good && db_add_benches(d, b, 3);
    if (!good)
        diag("filling the database: %s", db_errmsg(d));
    su_arena_free(&a);
    su_buf_free(&err);
    db_close(d);
    return good;
}

/* ---- the checks -------------------------------------------------------------------------- */

static json_t *find_by(json_t *arr, const char *field, const char *value)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) {
        const char *s = json_string_value(json_object_get(v, field));
        if (s && !strcmp(s, value))
            return v;
    }
    return NULL;
}

static double num(json_t *o, const char *field)
{
    json_t *v = json_object_get(o, field);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static bool near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fabs(b);
}

static void test_sessions(const char *done, const char *live)
{
    int st;
    json_t *j = get_json("/api/sessions", &st);
    is_int(st, 200, "/api/sessions answers 200");
    ok(json_array_size(j) == 2, "/api/sessions lists both sessions");
    json_t *s = find_by(j, "uuid", done), *l = find_by(j, "uuid", live);
    ok(s && l, "both uuids are listed");
    is_str(json_string_value(json_object_get(s, "model")), MARKUP_MODEL, "a model name with markup comes back exactly");
    is_int(json_integer_value(json_object_get(s, "records")), 8, "the finished session has its 8 records");
    is_int(json_integer_value(json_object_get(s, "ok")), 7, "7 of them valid");
    is_int(json_integer_value(json_object_get(json_object_get(s, "failures"), "compile_error")), 1,
           "failures by kind: one compile error");
    ok(json_is_false(json_object_get(s, "live")) && json_is_number(json_object_get(s, "ended")),
       "the finished session is not live and has its end");
    ok(json_is_true(json_object_get(l, "live")) && json_is_null(json_object_get(l, "ended")),
       "the running session is live");
    ok(num(s, "rate") > 0, "measurements per second are given");
    json_decref(j);
}

static void test_session(const char *done)
{
    char path[128], h[2][17];
    hash_of(0, h[0]);
    hash_of(1, h[1]);
    snprintf(path, sizeof path, "/api/sessions/%s", done);
    int st;
    json_t *s = get_json(path, &st);
    is_int(st, 200, "/api/sessions/ID answers 200");
    json_t *tasks = json_object_get(s, "tasks");
    is_int(json_array_size(tasks), 2, "the session has its two tasks");
    for (int t = 0; t < 2; t++) {
        json_t *o = find_by(tasks, "hash", h[t]);
        double best = INFINITY;
        for (int c = 0; c < 4; c++)
            best = COST[t][c] < best ? COST[t][c] : best;
        ok(o && near(num(o, "default_cost"), COST[t][0]) && near(num(o, "best_cost"), best) &&
               near(num(o, "best_gflops"), FLOPS[t] / best * 1e-9) && near(num(o, "speedup"), COST[t][0] / best),
           "task %d: default and best cost, GFLOP/s and speedup as stored", t);
        ok(o && json_integer_value(json_object_get(o, "calls")) == (t ? 3 : 1), "task %d: the model's calls of it", t);
    }
    json_t *f = json_array_get(json_object_get(s, "failure_messages"), 0);
    is_str(json_string_value(json_object_get(f, "message")), MARKUP_MSG, "the failure's message comes back exactly");
    is_str(json_string_value(json_object_get(f, "error")), "compile_error", "with its kind");
    json_decref(s);

    snprintf(path, sizeof path, "/api/sessions/%s/measurements", done);
    json_t *m = get_json(path, &st);
    is_int(json_array_size(m), 8, "measurements: all 8");
    bool order = true;
    for (size_t i = 0; i < json_array_size(m); i++) {
        json_t *x = json_array_get(m, i);
        int task = (int)i % 2, cfg = (int)i / 2;
        double c = COST[task][cfg];
        order &= json_integer_value(json_object_get(x, "n")) == (json_int_t)i + 1;
        order &= !strcmp(json_string_value(json_object_get(x, "hash")), h[task]);
        order &= isnan(c) ? json_is_null(json_object_get(x, "cost")) : near(num(x, "cost"), c);
        /* t counts from the session's start, which came a moment before the first record */
        double t0 = num(json_array_get(m, 0), "t");
        order &= t0 >= 0 && fabs(num(x, "t") - t0 - 0.5 * (double)i) < 1e-6;
        order &= !strcmp(json_string_value(json_object_get(x, "tuner")), cfg % 2 ? "xgb" : "random");
    }
    ok(order, "measurements: in order, numbered, with task, cost, time and tuner as stored");
    json_int_t third = json_integer_value(json_object_get(json_array_get(m, 2), "id"));
    json_decref(m);
    snprintf(path, sizeof path, "/api/sessions/%s/measurements?after=%lld", done, (long long)third);
    m = get_json(path, &st);
    ok(st == 200 && json_array_size(m) == 5 && json_integer_value(json_object_get(json_array_get(m, 0), "n")) == 4,
       "measurements?after=ID: only the newer ones, numbered from the session's first");
    json_decref(m);
}

static void test_task(void)
{
    char path[128], h[17];
    hash_of(1, h);
    snprintf(path, sizeof path, "/api/tasks/%s?target=cpu", h);
    int st;
    json_t *t = get_json(path, &st);
    is_int(st, 200, "/api/tasks/HASH answers 200");
    json_t *cfgs = json_object_get(t, "configs");
    is_int(json_array_size(cfgs), 3, "the task's valid configs (the failed one left out)");
    const int want[3] = {2, 3, 0};   /* by cost: 2e-5, 4e-5, 8e-5 */
    bool good = true;
    for (int i = 0; i < 3; i++) {
        json_t *c = json_array_get(cfgs, (size_t)i);
        good &= json_integer_value(json_object_get(c, "config_index")) == want[i];
        good &= near(num(c, "speedup"), COST[1][0] / COST[1][want[i]]);
        good &= json_array_size(json_object_get(c, "entities")) == 3;
    }
    ok(good, "configs best first, with speedup over the default and their knobs");
    ok(near(num(t, "default_cost"), COST[1][0]) && json_integer_value(json_object_get(t, "failed")) == 1,
       "the default's cost and the failures on the target");
    json_decref(t);
    snprintf(path, sizeof path, "/api/tasks/%s", h);
    t = get_json(path, &st);
    is_str(json_string_value(json_object_get(t, "target")), "cpu", "without target: the target with most records");
    json_decref(t);
}

static void test_best_and_benchmarks(void)
{
    int st;
    json_t *b = get_json("/api/best", &st);
    ok(st == 200 && json_array_size(b) == 2, "/api/best: a best config per task");
    json_decref(b);
    b = get_json("/api/benchmarks", &st);
    is_int(st, 200, "/api/benchmarks answers 200");
    json_t *models = json_object_get(b, "models"), *kernels = json_object_get(b, "kernels");
    ok(json_array_size(models) == 2 && !strcmp(json_string_value(json_object_get(json_array_get(models, 0), "source")),
                                               "default"),
       "model results oldest first");
    json_t *k = json_array_get(kernels, 0);
    ok(json_array_size(kernels) == 1 && near(num(k, "gflops"), FLOPS[1] / 1e-5 * 1e-9),
       "a kernel result with the GFLOP/s of its workload");
    ok(json_is_string(json_object_get(k, "isa")) && !strcmp(json_string_value(json_object_get(k, "isa")), "avx512") &&
           near(num(k, "peak_gflops"), 250.5) && json_integer_value(json_object_get(k, "threads")) == 2,
       "a kernel result with its host's ISA and FMA peak (the bars' % of peak)");
    ok(json_is_null(json_object_get(json_array_get(models, 0), "peak_gflops")),
       "a result without a measured peak says null, not 0");
    json_decref(b);
}

/* One bad request: its status and that the answer is a JSON error. */
static void bad(const char *method, const char *path, const char *extra, int want, const char *what)
{
    reply r = request(method, path, extra);
    json_t *j = json_loads(su_buf_str(&r.body), 0, NULL);
    ok(r.status == want && json_is_string(json_object_get(j, "error")), "%s: %d with a JSON error", what, want);
    if (r.status != want)
        diag("got %d: %.200s", r.status, su_buf_str(&r.body));
    json_decref(j);
    reply_free(&r);
}

static void test_bad_requests(const char *done)
{
    char path[256];
    bad("GET", "/api/nothing", NULL, 404, "an unknown endpoint");
    bad("GET", "/etc/passwd", NULL, 404, "a path outside the dashboard");
    bad("GET", "/assets/../../etc/passwd", NULL, 404, "an asset path climbing out");
    bad("GET", "/api/sessions/not-a-uuid", NULL, 400, "a malformed session id");
    bad("GET", "/api/sessions/00000000-0000-4000-8000-000000000000", NULL, 404, "an unknown session");
    bad("GET", "/api/sessions/00000000-0000-4000-8000-00000000000G", NULL, 400, "a session id with a bad digit");
    snprintf(path, sizeof path, "/api/sessions/%s/other", done);
    bad("GET", path, NULL, 404, "an unknown part of a session");
    snprintf(path, sizeof path, "/api/sessions/%s/measurements?after=-1", done);
    bad("GET", path, NULL, 400, "a negative after");
    snprintf(path, sizeof path, "/api/sessions/%s/measurements?after=12abc", done);
    bad("GET", path, NULL, 400, "an after that is not a number");
    snprintf(path, sizeof path, "/api/sessions/%s/measurements?after=99999999999999999999999", done);
    bad("GET", path, NULL, 400, "an after out of range");
    bad("GET", "/api/sessions?limit=5", NULL, 400, "an unknown parameter");
    bad("GET", "/api/best?target=cpu&target=x", NULL, 400, "a parameter given twice");
    bad("GET", "/api/best?a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&i=9&j=10&k=11&l=12&m=13&n=14&o=15&p=16&q=17", NULL, 400,
        "too many parameters");
    bad("GET", "/api/tasks/XYZ", NULL, 400, "a malformed task hash");
    bad("GET", "/api/tasks/0123456789abcdef", NULL, 404, "an unknown task");
    bad("GET", "/api/tasks/0123456789abcdef?target=", NULL, 400, "an empty target");
    su_buf longv = {0};
    su_buf_puts(&longv, "/api/best?target=");
    for (int i = 0; i < 2000; i++)
        su_buf_putc(&longv, 'x');
    bad("GET", su_buf_str(&longv), NULL, 400, "a parameter value over the limit");
    su_buf_free(&longv);
    bad("POST", "/api/sessions", "Content-Length: 5\r\n", 405, "a POST");
    bad("DELETE", "/api/sessions", NULL, 405, "a DELETE");

    /* a GET with a body: the body must be sent for the server to see it */
    const char *withbody = "GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                           "Content-Length: 4\r\n\r\nabcd";
    reply r = send_raw(withbody, strlen(withbody));
    ok(r.status == 413, "a GET with a body: 413");
    reply_free(&r);
    /* a header past the connection's memory limit: the library's own 4xx */
    su_buf huge = {0};
    su_buf_puts(&huge, "X-Big: ");
    for (int i = 0; i < 40000; i++)
        su_buf_putc(&huge, 'a');
    su_buf_puts(&huge, "\r\n");
    r = request("GET", "/api/sessions", su_buf_str(&huge));
    ok(r.status >= 400 && r.status < 500, "a 40 kB header: a 4xx status (%d)", r.status);
    reply_free(&r);
    su_buf_free(&huge);
    /* DNS rebinding: a page elsewhere naming another host */
    const char *foreign = "GET /api/sessions HTTP/1.1\r\nHost: attacker.example:80\r\nConnection: close\r\n\r\n";
    r = send_raw(foreign, strlen(foreign));
    ok(r.status == 403, "a request for another Host: 403");
    reply_free(&r);
    char q[160];
    snprintf(q, sizeof q, "GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1:%d9\r\nConnection: close\r\n\r\n", port);
    r = send_raw(q, strlen(q));
    ok(r.status == 403, "a Host naming another port: 403");
    reply_free(&r);
    snprintf(q, sizeof q, "GET /api/sessions HTTP/1.1\r\nHost: localhost:%d\r\nConnection: close\r\n\r\n", port);
    r = send_raw(q, strlen(q));
    ok(r.status == 200, "Host localhost with the server's port: answered");
    reply_free(&r);
    /* garbage instead of HTTP */
    r = send_raw("\x01\x02 not http at all\r\n\r\n", 22);
    ok(r.status == 0 || (r.status >= 400 && r.status < 500), "a request that is not HTTP: refused");
    reply_free(&r);
    int st;
    json_t *j = get_json("/api/sessions", &st);
    ok(st == 200 && json_array_size(j) == 2, "after the bad requests the server still answers");
    json_decref(j);
}

static void test_assets(void)
{
    reply r = request("GET", "/", NULL);
    ok(r.status == 200 && strstr(su_buf_str(&r.body), "<script src=\"/assets/app.js\">") &&
           strstr(su_buf_str(&r.head), "Content-Security-Policy: default-src 'none'; script-src 'self'"),
       "/ is the page, under a policy that allows only the dashboard's own scripts");
    reply_free(&r);
    r = request("GET", "/assets/chart.min.js", NULL);
    ok(r.status == 200 && strstr(su_buf_str(&r.body), "Chart.js v") && strstr(su_buf_str(&r.head), "text/javascript"),
       "Chart.js is served from the program");
    reply_free(&r);
    r = request("HEAD", "/assets/app.js", NULL);
    ok(r.status == 200 && su_buf_str(&r.body)[0] == 0, "HEAD answers without a body");
    reply_free(&r);
}

/* A writer (as `tune` is) adds records while the server runs: seen at once,
 * and a reader is not blocked by the writer's open transaction. */
static void test_concurrent_writer(const char *path, const char *live)
{
    su_buf err = {0};
    db *w = db_open(path, NULL, &err);
    su_arena a;
    su_arena_init(&a);
    db_record r = record(1, 3, 11, live, db_now(), &a);
    ok(w && db_add_records(w, &r, 1, NULL, NULL, NULL), "a writer adds a record while the server runs");
    int st;
    char p[128];
    snprintf(p, sizeof p, "/api/sessions/%s/measurements", live);
    json_t *m = get_json(p, &st);
    is_int(json_array_size(m), 2, "the new measurement is served at once");
    json_decref(m);
    ok(w && db_begin(w), "the writer holds a write transaction open");
    m = get_json("/api/sessions", &st);
    is_int(st, 200, "the server answers while the writer's transaction is open");
    json_decref(m);
    if (w)
        db_rollback(w);
    db_close(w);
    su_arena_free(&a);
    su_buf_free(&err);
}

/* The report: the same answers inline, no string can close its script. */
static void test_report(const char *path, const char *done)
{
    su_buf err = {0}, html = {0};
    db_open_opts o = {DB_OPEN_READONLY | DB_OPEN_NO_CREATE, 0, 0};
    db *d = db_open(path, &o, &err);
    ok(d && dash_report(d, NULL, &html), "the report of every session");
    const char *s = su_buf_str(&html);
    int scripts = 0, closes = 0;
    for (const char *p = s; (p = strstr(p, "<script")); p++)
        scripts++;
    for (const char *p = s; (p = strstr(p, "</script")); p++)
        closes++;
    is_int(closes, scripts, "every </script> in the report closes one of its own scripts");
    ok(!strstr(s, "<b>model</b>") && !strstr(s, "<img src=x"), "the markup in stored strings is not in the page as markup");
    const char *start = strstr(s, "id=\"rt-data\">");
    const char *end = start ? strstr(start, "</script>") : NULL;
    json_t *data = start && end ? json_loadb(start + 13, (size_t)(end - start - 13), 0, NULL) : NULL;
    char key[128];
    snprintf(key, sizeof key, "/api/sessions/%s", done);
    json_t *sess = json_object_get(data, key);
    is_str(json_string_value(json_object_get(sess, "model")), MARKUP_MODEL, "the embedded data holds the model name exactly");
    snprintf(key, sizeof key, "/api/sessions/%s/measurements", done);
    ok(json_array_size(json_object_get(data, key)) == 8 && json_object_get(data, "/api/benchmarks") &&
           json_object_size(data) == 1 + 1 + 2 * 2 + 2 + 1,
       "the data: sessions, each session and its measurements, each task, benchmarks");
    json_decref(data);
    su_buf_clear(&html);
    ok(d && !dash_report(d, "00000000-0000-4000-8000-000000000000", &html) && strstr(db_errmsg(d), "no session"),
       "a report of an unknown session fails with a message");
    ok(d && !dash_report(d, "nope", &html) && strstr(db_errmsg(d), "not a session id"), "a malformed session id too");
    db_close(d);
    su_buf_free(&html);
    su_buf_free(&err);
}

static void test_start_errors(const char *path)
{
    su_buf err = {0};
    ok(!dash_server_start("/nonexistent/x.db", NULL, 0, &err) && strstr(su_buf_str(&err), "cannot open"),
       "a missing database: refused with a message");
    su_buf_clear(&err);
    ok(!dash_server_start(path, "localhost", 0, &err) && strstr(su_buf_str(&err), "numeric"),
       "a host that is not an address: refused");
    su_buf_clear(&err);
    ok(!dash_server_start(path, NULL, 70000, &err) && strstr(su_buf_str(&err), "out of range"),
       "a port out of range: refused");
    su_buf_clear(&err);
    ok(!dash_server_start(path, NULL, port, &err) && strstr(su_buf_str(&err), "cannot listen"),
       "a port in use: refused with a message");
    su_buf_free(&err);
}

int main(void)
{
    char dir[] = "/tmp/rt-dash-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char path[64], done[37], live[37];
    snprintf(path, sizeof path, "%s/t.db", dir);
    ok(fill(path, done, live), "the database is filled through the db API");
    su_buf err = {0};
    dash_server *s = dash_server_start(path, NULL, 0, &err);
    ok(s != NULL, "the server starts on a free loopback port");
    if (!s) {
        diag("%s", su_buf_str(&err));
        return tap_done();
    }
    port = dash_server_port(s);
    ok(port > 0, "it reports its port (%d)", port);
    test_sessions(done, live);
    test_session(done);
    test_task();
    test_best_and_benchmarks();
    test_assets();
    test_bad_requests(done);
    test_concurrent_writer(path, live);
    test_start_errors(path);
    dash_server_stop(s);
    test_report(path, done);
    su_buf_free(&err);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        diag("could not remove %s", dir);
    return tap_done();
}
