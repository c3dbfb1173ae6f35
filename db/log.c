/* log.c — the JSON-lines log: one measurement a line, self-contained, so that
 * logs can be shared, concatenated, grepped and imported anywhere. The format
 * is versioned ("v") and documented in docs/log-format.md.
 *
 * A shared log is untrusted input. Parsing here is strict about shape: every
 * field must be present with the right JSON type, no unknown field is
 * accepted, and a version this program does not know is refused. Values are
 * then checked by db_record_check (ranges, sizes, config structure) when the
 * record is added, so a line that passes here may still be rejected there;
 * both are counted as rejected. Exporting and importing round-trips every
 * record exactly: numbers are written with 17 significant digits. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "db/db.h"

/* ---- writing ----------------------------------------------------------------------- */

/* Appends s as a JSON string. Strings were checked to be UTF-8 when stored, so
 * only quotes, backslashes and control characters need escapes. */
void db_json_put_str(su_buf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    su_buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') {
            su_buf_putc(b, '\\');
            su_buf_putc(b, (char)*p);
        } else if (*p == '\n') {
            su_buf_puts(b, "\\n");
        } else if (*p == '\t') {
            su_buf_puts(b, "\\t");
        } else if (*p < 0x20) {
            char e[7] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15], 0};
            su_buf_puts(b, e);
        } else {
            su_buf_putc(b, (char)*p);
        }
    }
    su_buf_putc(b, '"');
}

/* Appends a finite number with the fewest of 15, 16 or 17 significant digits
 * that reads back as the same double: readable, and exact. */
void db_json_put_num(su_buf *b, double v)
{
    char s[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(s, sizeof s, "%.*g", prec, v);
        if (strtod(s, NULL) == v)
            break;
    }
    su_buf_puts(b, s);
}

/* Appends JSON text stored canonically by the database ({} when empty). */
static void put_json(su_buf *b, const char *text)
{
    su_buf_puts(b, text && text[0] ? text : "{}");
}

void db_log_format(const db_record *r, su_buf *b)
{
    su_buf_printf(b, "{\"v\":%d,\"workload\":{\"key\":", DB_LOG_VERSION);
    db_json_put_str(b, r->workload.key);
    su_buf_printf(b, ",\"hash\":\"%016llx\",\"template\":", (unsigned long long)su_hash_str(r->workload.key ? r->workload.key : ""));
    db_json_put_str(b, r->workload.tmpl);
    su_buf_puts(b, ",\"args\":");
    put_json(b, r->workload.args);
    su_buf_puts(b, ",\"flops\":");
    db_json_put_num(b, r->workload.flops);
    su_buf_puts(b, "},\"target\":{\"name\":");
    db_json_put_str(b, r->target.name);
    su_buf_puts(b, ",\"cpu\":");
    db_json_put_str(b, r->target.cpu);
    su_buf_puts(b, ",\"isa\":");
    db_json_put_str(b, r->target.isa);
    su_buf_printf(b, ",\"cores\":%d,\"os\":", r->target.cores);
    db_json_put_str(b, r->target.os);
    su_buf_puts(b, "},\"config\":");
    put_json(b, r->config);
    su_buf_printf(b, ",\"default\":%s,\"result\":{\"costs\":[", r->is_default ? "true" : "false");
    for (size_t i = 0; i < r->ncosts; i++) {
        if (i)
            su_buf_putc(b, ',');
        db_json_put_num(b, r->costs[i]);
    }
    su_buf_printf(b, "],\"error\":\"%s\",\"error_msg\":", su_merr_name(r->error));
    db_json_put_str(b, r->error_msg);
    su_buf_puts(b, ",\"counters\":");
    put_json(b, r->counters);
    su_buf_puts(b, ",\"build_time\":");
    db_json_put_num(b, r->build_time);
    su_buf_puts(b, ",\"run_time\":");
    db_json_put_num(b, r->run_time);
    su_buf_puts(b, "},\"provenance\":{\"tuner\":");
    db_json_put_str(b, r->tuner);
    su_buf_puts(b, ",\"session\":");
    if (r->session)
        db_json_put_str(b, r->session);
    else
        su_buf_puts(b, "null");
    su_buf_puts(b, ",\"model\":");
    db_json_put_str(b, r->model);
    su_buf_puts(b, ",\"timestamp\":");
    db_json_put_num(b, r->timestamp);
    su_buf_puts(b, ",\"host\":");
    db_json_put_str(b, r->host);
    su_buf_puts(b, "}}\n");
}

/* ---- reading ----------------------------------------------------------------------- */

/* Parsing state of one line: where the strings go and where the reason goes. */
typedef struct lp {
    su_arena *a;
    su_buf *why;
} lp;

static const char *type_name(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

/* Checks that o is an object with exactly the listed fields (NULL-terminated). */
static bool fields(lp *p, json_t *o, const char *where, const char *const *names)
{
    if (!json_is_object(o)) {
        su_buf_printf(p->why, "%s: expected an object, got %s", where, type_name(o));
        return false;
    }
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        size_t i = 0;
        while (names[i] && strcmp(names[i], k) != 0)
            i++;
        if (!names[i]) {
            su_buf_printf(p->why, "%s%s%s: unknown field", where, where[0] ? "." : "", k);
            return false;
        }
    }
    for (size_t i = 0; names[i]; i++)
        if (!json_object_get(o, names[i])) {
            su_buf_printf(p->why, "%s%s%s: missing", where, where[0] ? "." : "", names[i]);
            return false;
        }
    return true;
}

static json_t *get(json_t *o, const char *k)
{
    return json_object_get(o, k);
}

static bool wrong(lp *p, const char *where, const char *k, const char *want, json_t *got)
{
    su_buf_printf(p->why, "%s.%s: expected %s, got %s", where, k, want, type_name(got));
    return false;
}

static bool str(lp *p, json_t *o, const char *where, const char *k, const char **out)
{
    json_t *v = get(o, k);
    if (!json_is_string(v))
        return wrong(p, where, k, "a string", v);
    *out = su_arena_strndup(p->a, json_string_value(v), json_string_length(v));
    return true;
}

static bool num(lp *p, json_t *o, const char *where, const char *k, double *out)
{
    json_t *v = get(o, k);
    if (!json_is_number(v))
        return wrong(p, where, k, "a number", v);
    *out = json_number_value(v);
    return true;
}

static bool integer(lp *p, json_t *o, const char *where, const char *k, long long *out)
{
    json_t *v = get(o, k);
    if (!json_is_integer(v))
        return wrong(p, where, k, "an integer", v);
    *out = json_integer_value(v);
    return true;
}

/* Keeps a JSON value of the expected kind as canonical text. */
static bool json_text(lp *p, json_t *o, const char *where, const char *k, bool (*is)(const json_t *),
                      const char *want, const char **out)
{
    json_t *v = get(o, k);
    if (!is(v))
        return wrong(p, where, k, want, v);
    char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
    if (!s) {
        su_buf_printf(p->why, "%s.%s: cannot be written back as JSON", where, k);
        return false;
    }
    *out = su_arena_strdup(p->a, s);
    free(s);
    return true;
}

static bool is_object(const json_t *j)
{
    return json_is_object(j);
}

static const char *const top_fields[] = {"v", "workload", "target", "config", "default", "result", "provenance",
                                         NULL};
static const char *const workload_fields[] = {"key", "hash", "template", "args", "flops", NULL};
static const char *const target_fields[] = {"name", "cpu", "isa", "cores", "os", NULL};
static const char *const result_fields[] = {"costs", "error", "error_msg", "counters", "build_time", "run_time",
                                            NULL};
static const char *const prov_fields[] = {"tuner", "session", "model", "timestamp", "host", NULL};

static bool parse_workload(lp *p, json_t *w, db_record *r)
{
    const char *hash;
    if (!fields(p, w, "workload", workload_fields) || !str(p, w, "workload", "key", &r->workload.key) ||
        !str(p, w, "workload", "hash", &hash) || !str(p, w, "workload", "template", &r->workload.tmpl) ||
        !json_text(p, w, "workload", "args", is_object, "an object", &r->workload.args) ||
        !num(p, w, "workload", "flops", &r->workload.flops))
        return false;
    char want[17];
    snprintf(want, sizeof want, "%016llx", (unsigned long long)su_hash_str(r->workload.key));
    if (strcmp(hash, want) != 0) {
        su_buf_printf(p->why, "workload.hash: %s does not match the key (expected %s); the key was altered",
                      hash, want);
        return false;
    }
    return true;
}

static bool parse_target(lp *p, json_t *t, db_record *r)
{
    long long cores;
    if (!fields(p, t, "target", target_fields) || !str(p, t, "target", "name", &r->target.name) ||
        !str(p, t, "target", "cpu", &r->target.cpu) || !str(p, t, "target", "isa", &r->target.isa) ||
        !integer(p, t, "target", "cores", &cores) || !str(p, t, "target", "os", &r->target.os))
        return false;
    if (cores < 0 || cores > (1 << 20)) {
        su_buf_printf(p->why, "target.cores: %lld is out of range (0 .. %d)", cores, 1 << 20);
        return false;
    }
    r->target.cores = (int)cores;
    return true;
}

static bool parse_config(lp *p, json_t *c, db_record *r)
{
    if (!json_is_object(c)) {
        su_buf_printf(p->why, "config: expected an object, got %s", type_name(c));
        return false;
    }
    json_t *idx = get(c, "index");
    if (!json_is_integer(idx)) {
        su_buf_printf(p->why, "config.index: expected an integer, got %s", idx ? type_name(idx) : "nothing");
        return false;
    }
    r->config_index = json_integer_value(idx);
    char *s = json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS);
    if (!s) {
        su_buf_puts(p->why, "config: cannot be written back as JSON");
        return false;
    }
    r->config = su_arena_strdup(p->a, s);
    free(s);
    return true;
}

static bool parse_result(lp *p, json_t *res, db_record *r)
{
    const char *err;
    if (!fields(p, res, "result", result_fields))
        return false;
    json_t *costs = get(res, "costs");
    if (!json_is_array(costs))
        return wrong(p, "result", "costs", "an array", costs);
    size_t n = json_array_size(costs);
    if (n > 100000) {
        su_buf_printf(p->why, "result.costs: %zu repeats is more than 100000", n);
        return false;
    }
    double *v = su_arena_alloc(p->a, (n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        json_t *c = json_array_get(costs, i);
        if (!json_is_number(c)) {
            su_buf_printf(p->why, "result.costs[%zu]: expected a number, got %s", i, type_name(c));
            return false;
        }
        v[i] = json_number_value(c);
    }
    r->costs = v;
    r->ncosts = n;
    if (!str(p, res, "result", "error", &err))
        return false;
    if (!su_merr_parse(err, &r->error)) {
        su_buf_printf(p->why, "result.error: unknown error kind '%s'", err);
        return false;
    }
    return str(p, res, "result", "error_msg", &r->error_msg) &&
           json_text(p, res, "result", "counters", is_object, "an object", &r->counters) &&
           num(p, res, "result", "build_time", &r->build_time) && num(p, res, "result", "run_time", &r->run_time);
}

static bool parse_provenance(lp *p, json_t *pv, db_record *r)
{
    if (!fields(p, pv, "provenance", prov_fields) || !str(p, pv, "provenance", "tuner", &r->tuner) ||
        !str(p, pv, "provenance", "model", &r->model) || !num(p, pv, "provenance", "timestamp", &r->timestamp) ||
        !str(p, pv, "provenance", "host", &r->host))
        return false;
    json_t *s = get(pv, "session");
    if (json_is_null(s)) {
        r->session = NULL;
        return true;
    }
    return str(p, pv, "provenance", "session", &r->session);
}

bool db_log_parse(const char *line, size_t len, su_arena *a, db_record *out, su_buf *why)
{
    memset(out, 0, sizeof *out);
    if (len > DB_LOG_MAX_LINE) {
        su_buf_printf(why, "line longer than %d bytes", DB_LOG_MAX_LINE);
        return false;
    }
    json_error_t e;
    json_t *j = json_loadb(line, len, JSON_REJECT_DUPLICATES, &e);
    if (!j) {
        su_buf_printf(why, "not valid JSON: %s (column %d)", e.text, e.column);
        return false;
    }
    lp p = {a, why};
    bool good = false;
    json_t *v = get(j, "v");
    if (!json_is_object(j)) {
        su_buf_printf(why, "expected a JSON object, got %s", type_name(j));
    } else if (!v) {
        su_buf_puts(why, "v: missing (not a relay-tune log line?)");
    } else if (!json_is_integer(v)) {
        su_buf_printf(why, "v: expected an integer, got %s", type_name(v));
    } else if (json_integer_value(v) != DB_LOG_VERSION) {
        su_buf_printf(why, "v: unknown log version %lld (this relay-tune reads version %d)",
                      (long long)json_integer_value(v), DB_LOG_VERSION);
    } else if (fields(&p, j, "", top_fields) && parse_workload(&p, get(j, "workload"), out) &&
               parse_target(&p, get(j, "target"), out) && parse_config(&p, get(j, "config"), out)) {
        json_t *def = get(j, "default");
        if (!json_is_boolean(def)) {
            su_buf_printf(why, "default: expected a boolean, got %s", type_name(def));
        } else {
            out->is_default = json_is_true(def);
            good = parse_result(&p, get(j, "result"), out) && parse_provenance(&p, get(j, "provenance"), out);
        }
    }
    json_decref(j);
    return good;
}

/* ---- export and import --------------------------------------------------------------- */

typedef struct export_ctx {
    FILE *out;
    su_buf line;
    size_t written;
    bool failed;
} export_ctx;

static bool export_one(void *ctx, const db_record *r)
{
    export_ctx *x = ctx;
    su_buf_clear(&x->line);
    db_log_format(r, &x->line);
    if (fwrite(x->line.data, 1, x->line.len, x->out) != x->line.len) {
        x->failed = true;
        return false;
    }
    x->written++;
    return true;
}

bool db_export(db *d, const db_filter *f, FILE *out, size_t *written)
{
    export_ctx x = {out, {0}, 0, false};
    bool good = db_foreach_record(d, f, export_one, &x);
    su_buf_free(&x.line);
    if (written)
        *written = x.written;
    if (good && (x.failed || fflush(out) != 0 || ferror(out)))
        return db_fail(d, "error writing the log (disk full, or the pipe was closed)");
    return good;
}

/* Records parsed but not yet stored, with the line each came from. */
#define IMPORT_BATCH 5000

typedef struct import_ctx {
    db_reject_fn on_reject;
    void *ctx;
    size_t lines[IMPORT_BATCH];   /* 1-based line number of each pending record */
} import_ctx;

static void reject_in_batch(void *ctx, size_t index, const char *why)
{
    import_ctx *x = ctx;
    if (x->on_reject)
        x->on_reject(x->ctx, x->lines[index], why);
}

/* Reads one line (without its newline) into *buf, keeping at most max bytes
 * and skipping the rest of a longer line (*too_long). 1 read, 0 end of input,
 * -1 read error. Unlike getline, a huge line cannot exhaust memory. */
static int read_line(FILE *in, char **buf, size_t *cap, size_t *len, size_t max, bool *too_long)
{
    size_t n = 0;
    int c;
    bool any = false;
    *too_long = false;
    while ((c = getc_unlocked(in)) != EOF) {
        any = true;
        if (c == '\n')
            break;
        if (n == max) {
            *too_long = true;
            continue;
        }
        if (n + 1 >= *cap) {
            *cap = *cap ? *cap * 2 : 4096;
            *buf = su_realloc(*buf, *cap);
        }
        (*buf)[n++] = (char)c;
    }
    if (c == EOF && ferror(in))
        return -1;
    if (*buf)
        (*buf)[n] = 0;
    *len = n;
    return any ? 1 : 0;
}

bool db_import(db *d, FILE *in, const char *name, db_counts *counts, db_reject_fn on_reject, void *ctx)
{
    import_ctx *x = su_calloc(1, sizeof *x);
    x->on_reject = on_reject;
    x->ctx = ctx;
    db_record *batch = su_malloc(IMPORT_BATCH * sizeof *batch);
    size_t pending = 0, lineno = 0, cap = 0;
    su_arena a;
    su_arena_init(&a);
    su_buf why = {0};
    char *line = NULL;
    size_t n;
    bool too_long;
    int rd = 0;
    db_counts c = {0};
    bool good = true;
    flockfile(in);
    while (good && (rd = read_line(in, &line, &cap, &n, DB_LOG_MAX_LINE, &too_long)) > 0) {
        lineno++;
        while (n && line[n - 1] == '\r')
            n--;
        size_t blank = 0;
        while (blank < n && (line[blank] == ' ' || line[blank] == '\t' || line[blank] == '\r'))
            blank++;
        if (blank == n && !too_long)
            continue;
        su_buf_clear(&why);
        if (too_long) {
            su_buf_printf(&why, "line longer than %d bytes", DB_LOG_MAX_LINE);
        } else if (memchr(line, 0, n)) {
            su_buf_puts(&why, "contains a NUL byte");
        } else if (db_log_parse(line, n, &a, &batch[pending], &why)) {
            x->lines[pending++] = lineno;
        }
        if (why.len) {
            c.rejected++;
            if (on_reject)
                on_reject(ctx, lineno, su_buf_str(&why));
        }
        if (pending == IMPORT_BATCH) {
            good = db_add_records(d, batch, pending, &c, reject_in_batch, x);
            pending = 0;
            su_arena_free(&a);
        }
    }
    funlockfile(in);
    if (good && rd < 0)
        good = db_fail(d, "%s: read error: %s", name, strerror(errno));
    if (good && pending)
        good = db_add_records(d, batch, pending, &c, reject_in_batch, x);
    free(line);
    su_buf_free(&why);
    su_arena_free(&a);
    free(batch);
    free(x);
    if (counts) {
        counts->added += c.added;
        counts->duplicates += c.duplicates;
        counts->rejected += c.rejected;
    }
    return good;
}
