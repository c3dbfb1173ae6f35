/* check.c — what makes a record valid, and its canonical form. Every record
 * that enters a database passes here (db_add_records calls db_check_record):
 * text fields are bounded UTF-8 without control characters, numbers finite
 * and in range, and the JSON fields (args, config, counters) parse and have
 * the expected structure. The canonical form is what is stored and compared:
 * JSON with sorted keys, costs written so that they read back exactly. The
 * content digest (every field but ids and the session) is computed here too,
 * so that it is the same in every database. */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "db/db.h"

/* ---- canonical JSON and costs ------------------------------------------------------ */

void db_costs_format(const double *costs, size_t n, su_buf *out)
{
    su_buf_putc(out, '[');
    for (size_t i = 0; i < n; i++)
        su_buf_printf(out, "%s%.17g", i ? "," : "", costs[i]);
    su_buf_putc(out, ']');
}

bool db_costs_parse(const char *text, su_arena *a, double **costs, size_t *n)
{
    const char *p = text;
    size_t count = 0;
    if (*p != '[')
        return false;
    for (const char *q = p; *q; q++)
        count += *q == ',';
    double *v = su_arena_alloc(a, (count + 1) * sizeof *v);
    size_t k = 0;
    p++;
    if (*p == ']') {
        *costs = v;
        *n = 0;
        return p[1] == 0;
    }
    for (;;) {
        char *end;
        if (k > count || !(*p == '-' || (*p >= '0' && *p <= '9')))
            return false;
        v[k++] = strtod(p, &end);
        if (end == p)
            return false;
        p = end;
        if (*p == ',') {
            p++;
        } else if (*p == ']' && p[1] == 0) {
            *costs = v;
            *n = k;
            return true;
        } else {
            return false;
        }
    }
}

const char *db_json_canon(const char *text, int kind, su_arena *a, su_buf *why)
{
    json_error_t e;
    json_t *j = json_loads(text ? text : "{}", JSON_REJECT_DUPLICATES, &e);
    if (!j) {
        su_buf_printf(why, "not valid JSON (%s)", e.text);
        return NULL;
    }
    if ((kind == 'o' && !json_is_object(j)) || (kind == 'a' && !json_is_array(j))) {
        su_buf_printf(why, "must be a JSON %s", kind == 'o' ? "object" : "array");
        json_decref(j);
        return NULL;
    }
    char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    json_decref(j);
    if (!s) {
        su_buf_puts(why, "cannot be written back as JSON");
        return NULL;
    }
    const char *r = su_arena_strdup(a, s);
    free(s);
    return r;
}

/* ---- checking a record ------------------------------------------------------------ */

/* True when s is valid UTF-8 (no overlong forms or surrogates). */
static bool utf8_valid(const unsigned char *s)
{
    while (*s) {
        unsigned c = *s;
        int n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
        if (n < 0)
            return false;
        unsigned cp = n == 0 ? c : n == 1 ? c & 0x1f : n == 2 ? c & 0x0f : c & 0x07;
        for (int i = 1; i <= n; i++) {
            if ((s[i] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i] & 0x3f);
        }
        if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        s += n + 1;
    }
    return true;
}

/* Checks a text field: length bounds, UTF-8, and no control characters unless
 * multiline (then tabs and newlines are fine). */
static bool check_text(const char *s, const char *field, size_t minlen, size_t maxlen, bool multiline,
                       su_buf *why)
{
    if (!s)
        s = "";
    size_t n = strlen(s);
    if (n < minlen) {
        su_buf_printf(why, "%s: must not be empty", field);
        return false;
    }
    if (n > maxlen) {
        su_buf_printf(why, "%s: longer than %zu bytes", field, maxlen);
        return false;
    }
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p < 0x20 && !(multiline && (*p == '\n' || *p == '\t' || *p == '\r'))) || *p == 0x7f) {
            su_buf_printf(why, "%s: contains control character 0x%02x", field, *p);
            return false;
        }
    if (!utf8_valid((const unsigned char *)s)) {
        su_buf_printf(why, "%s: not valid UTF-8", field);
        return false;
    }
    return true;
}

static bool check_num(double v, const char *field, double lo, double hi, bool open_lo, su_buf *why)
{
    if (!isfinite(v) || v < lo || v > hi || (open_lo && v == lo)) {
        su_buf_printf(why, "%s: %g is out of range (%s%g .. %g)", field, v, open_lo ? "above " : "", lo, hi);
        return false;
    }
    return true;
}

/* Checks one config entity [name, kind, value]; names must be unique. */
static bool check_entity(json_t *e, size_t i, su_map *names, su_buf *why)
{
    if (!json_is_array(e) || json_array_size(e) != 3) {
        su_buf_printf(why, "config.entities[%zu]: must be an array [name, kind, value]", i);
        return false;
    }
    json_t *name = json_array_get(e, 0), *kind = json_array_get(e, 1), *val = json_array_get(e, 2);
    if (!json_is_string(name) || json_string_length(name) == 0 || json_string_length(name) > 128) {
        su_buf_printf(why, "config.entities[%zu]: the name must be a string of 1 to 128 bytes", i);
        return false;
    }
    const char *nm = json_string_value(name);
    if (su_map_put(names, nm, (void *)nm)) {
        su_buf_printf(why, "config.entities[%zu]: knob '%s' appears twice", i, nm);
        return false;
    }
    const char *k = json_is_string(kind) ? json_string_value(kind) : "";
    size_t len = json_is_array(val) ? json_array_size(val) : 0;
    if (!strcmp(k, "sp")) {
        /* split: factors, the first may be -1 (the remainder) */
        bool good = len >= 1 && len <= 16;
        for (size_t j = 0; good && j < len; j++) {
            json_t *f = json_array_get(val, j);
            good = json_is_integer(f) && (json_integer_value(f) >= 1 || (j == 0 && json_integer_value(f) == -1)) &&
                   json_integer_value(f) <= (1 << 30);
        }
        if (!good) {
            su_buf_printf(why, "config.entities[%zu] (%s): a split must be 1 to 16 positive factors "
                          "(the first may be -1)", i, nm);
            return false;
        }
    } else if (!strcmp(k, "re")) {
        /* reorder: a permutation of 0..len-1 */
        bool good = len >= 1 && len <= 64, seen[64] = {0};
        for (size_t j = 0; good && j < len; j++) {
            json_t *f = json_array_get(val, j);
            json_int_t x = json_is_integer(f) ? json_integer_value(f) : -1;
            good = x >= 0 && x < (json_int_t)len && !seen[x];
            if (good)
                seen[x] = true;
        }
        if (!good) {
            su_buf_printf(why, "config.entities[%zu] (%s): a reorder must be a permutation of 0..n-1 (n <= 64)",
                          i, nm);
            return false;
        }
    } else if (!strcmp(k, "an")) {
        /* annotate: one annotation name per axis */
        bool good = len >= 1 && len <= 64;
        for (size_t j = 0; good && j < len; j++) {
            json_t *f = json_array_get(val, j);
            good = json_is_string(f) && json_string_length(f) >= 1 && json_string_length(f) <= 64;
        }
        if (!good) {
            su_buf_printf(why, "config.entities[%zu] (%s): an annotation must be 1 to 64 strings", i, nm);
            return false;
        }
    } else if (!strcmp(k, "ot")) {
        /* other: one scalar choice */
        bool good = json_is_integer(val) || json_is_boolean(val) ||
                    (json_is_real(val) && isfinite(json_real_value(val))) ||
                    (json_is_string(val) && json_string_length(val) <= 256);
        if (!good) {
            su_buf_printf(why, "config.entities[%zu] (%s): a choice must be a number, a boolean or a string",
                          i, nm);
            return false;
        }
    } else {
        su_buf_printf(why, "config.entities[%zu] (%s): unknown knob kind (sp, re, an or ot)", i, nm);
        return false;
    }
    return true;
}

/* Appends one validated entity value (canonical: what jansson's parse of the
 * text gives back, written with the log's number format). */
static void write_value(su_buf *b, json_t *v)
{
    if (json_is_array(v)) {
        su_buf_putc(b, '[');
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                su_buf_putc(b, ',');
            write_value(b, json_array_get(v, i));
        }
        su_buf_putc(b, ']');
    } else if (json_is_integer(v)) {
        su_buf_printf(b, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        db_json_put_num(b, json_real_value(v));
    } else if (json_is_string(v)) {
        db_json_put_str(b, json_string_value(v));
    } else {
        su_buf_puts(b, json_is_true(v) ? "true" : "false");
    }
}

/* The canonical text of a validated config: keys in order, compact. Written
 * by hand because it is on the insert path of every record (jansson's
 * sorted dump costs more than the rest of the record check). */
static const char *write_config(json_t *j, su_arena *a)
{
    json_t *ents = json_object_get(j, "entities");
    su_buf b = {0};
    su_buf_puts(&b, "{\"entities\":[");
    for (size_t i = 0; i < json_array_size(ents); i++) {
        json_t *e = json_array_get(ents, i);
        su_buf_puts(&b, i ? ",[" : "[");
        db_json_put_str(&b, json_string_value(json_array_get(e, 0)));
        su_buf_putc(&b, ',');
        db_json_put_str(&b, json_string_value(json_array_get(e, 1)));
        su_buf_putc(&b, ',');
        write_value(&b, json_array_get(e, 2));
        su_buf_putc(&b, ']');
    }
    su_buf_printf(&b, "],\"index\":%lld}", (long long)json_integer_value(json_object_get(j, "index")));
    const char *r = su_arena_strndup(a, b.data, b.len);
    su_buf_free(&b);
    return r;
}

/* Parses and checks a config; writes its canonical text. */
static const char *canon_config(const char *text, int64_t index, su_arena *a, su_buf *why)
{
    json_error_t e;
    json_t *j = text ? json_loads(text, JSON_REJECT_DUPLICATES, &e) : NULL;
    if (!j) {
        if (text)
            su_buf_printf(why, "config: not valid JSON (%s)", e.text);
        else
            su_buf_puts(why, "config: missing");
        return NULL;
    }
    const char *r = NULL;
    json_t *idx = json_object_get(j, "index"), *ents = json_object_get(j, "entities");
    su_map names = {0};
    if (!json_is_object(j) || json_object_size(j) != 2 || !idx || !ents) {
        su_buf_puts(why, "config: must be an object with exactly the fields index and entities");
        goto done;
    }
    if (!json_is_integer(idx) || json_integer_value(idx) != index) {
        su_buf_printf(why, "config.index: must be the integer %lld (the record's config index)", (long long)index);
        goto done;
    }
    if (!json_is_array(ents) || json_array_size(ents) > 1024) {
        su_buf_puts(why, "config.entities: must be an array of at most 1024 knobs");
        goto done;
    }
    for (size_t i = 0; i < json_array_size(ents); i++)
        if (!check_entity(json_array_get(ents, i), i, &names, why))
            goto done;
    r = write_config(j, a);
done:
    su_map_free(&names);
    json_decref(j);
    return r;
}

const char *db_config_canon(const char *text, su_arena *a, su_buf *why)
{
    json_t *j = text ? json_loads(text, 0, NULL) : NULL;
    json_t *idx = json_object_get(j, "index");
    int64_t index = json_is_integer(idx) ? (int64_t)json_integer_value(idx) : -1;
    json_decref(j);
    return canon_config(text, index, a, why);
}

/* Parses and checks the counters object; writes its canonical text. */
static const char *canon_counters(const char *text, su_arena *a, su_buf *why)
{
    if (!text || !strcmp(text, "{}"))
        return "{}";
    json_error_t e;
    json_t *j = json_loads(text ? text : "{}", JSON_REJECT_DUPLICATES, &e);
    if (!j) {
        su_buf_printf(why, "result.counters: not valid JSON (%s)", e.text);
        return NULL;
    }
    const char *r = NULL, *name;
    json_t *v;
    if (!json_is_object(j) || json_object_size(j) > 256) {
        su_buf_puts(why, "result.counters: must be an object of at most 256 counters");
        goto done;
    }
    json_object_foreach(j, name, v) {
        if (!check_text(name, "result.counters (a name)", 1, 128, false, why))
            goto done;
        if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < 0) {
            su_buf_printf(why, "result.counters.%s: must be a non-negative number", name);
            goto done;
        }
    }
    char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    r = s ? su_arena_strdup(a, s) : NULL;
    if (!s)
        su_buf_puts(why, "result.counters: cannot be written back as JSON");
    free(s);
done:
    json_decref(j);
    return r;
}


/* ISA features: lowercase tokens of [a-z0-9_.+-] separated by single spaces. */
static bool check_isa(const char *s, su_buf *why)
{
    if (!check_text(s, "target.isa", 0, 4096, false, why))
        return false;
    for (const char *p = s ? s : ""; *p; p++) {
        bool tok = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || strchr("_.+-", *p);
        bool sep = *p == ' ' && p != s && p[1] && p[1] != ' ';
        if (!tok && !sep) {
            su_buf_puts(why, "target.isa: must be lowercase feature names separated by single spaces");
            return false;
        }
    }
    return true;
}

/* The canonical args text; d (when not NULL) remembers the last one, since
 * consecutive records of a batch usually share their workload. */
static const char *canon_args(db *d, const char *raw, su_arena *a, su_buf *why)
{
    raw = raw ? raw : "{}";
    if (d && d->args_raw.data && !strcmp(d->args_raw.data, raw))
        return su_arena_strndup(a, d->args_canon.data, d->args_canon.len);
    su_buf sub = {0};
    const char *c = db_json_canon(raw, 'o', a, &sub);
    if (!c)
        su_buf_printf(why, "workload.args: %s", su_buf_str(&sub));
    else if (strlen(c) > 65536)
        su_buf_puts(why, "workload.args: longer than 65536 bytes"), c = NULL;
    su_buf_free(&sub);
    if (c && d) {
        su_buf_clear(&d->args_raw);
        su_buf_puts(&d->args_raw, raw);
        su_buf_clear(&d->args_canon);
        su_buf_puts(&d->args_canon, c);
    }
    return c;
}

/* Everything db_record_check promises, producing the canonical form; d may be
 * NULL (it only memoizes). */
bool db_check_record(db *d, const db_record *r, su_arena *a, db_canon *c, su_buf *why)
{
    const db_workload *w = &r->workload;
    const db_target *t = &r->target;
    if (!check_text(w->key, "workload.key", 1, 4096, false, why) ||
        !check_text(w->tmpl, "workload.template", 1, 256, false, why) ||
        !check_num(w->flops, "workload.flops", 0, 1e18, false, why) ||
        !check_text(t->name, "target.name", 1, 256, false, why) ||
        !check_text(t->cpu, "target.cpu", 0, 256, false, why) || !check_isa(t->isa, why) ||
        !check_num(t->cores, "target.cores", 0, 1 << 20, false, why) ||
        !check_text(t->os, "target.os", 0, 256, false, why))
        return false;
    if (r->config_index < 0 || r->config_index > ((int64_t)1 << 53)) {
        su_buf_printf(why, "config.index: %lld is out of range (0 .. 2^53)", (long long)r->config_index);
        return false;
    }
    if (!su_merr_valid(r->error)) {
        su_buf_printf(why, "result.error: unknown error code %d", (int)r->error);
        return false;
    }
    if (r->ncosts > 100000) {
        su_buf_printf(why, "result.costs: %zu repeats is more than 100000", r->ncosts);
        return false;
    }
    if (r->ncosts && !r->costs) {
        su_buf_puts(why, "result.costs: missing");
        return false;
    }
    if (r->error == SU_MERR_NONE && r->ncosts == 0) {
        su_buf_puts(why, "result.costs: a successful measurement needs at least one cost");
        return false;
    }
    double sum = 0;
    for (size_t i = 0; i < r->ncosts; i++) {
        char field[48];
        snprintf(field, sizeof field, "result.costs[%zu]", i);
        if (!check_num(r->costs[i], field, 0, 1e4, true, why))
            return false;
        sum += r->costs[i];
    }
    if (!check_text(r->error_msg, "result.error_msg", 0, 65536, true, why) ||
        !check_num(r->build_time, "result.build_time", 0, 1e6, false, why) ||
        !check_num(r->run_time, "result.run_time", 0, 1e6, false, why) ||
        !check_text(r->tuner, "provenance.tuner", 0, 64, false, why) ||
        !check_text(r->model, "provenance.model", 0, 4096, false, why) ||
        !check_num(r->timestamp, "provenance.timestamp", 946684800.0, 4102444800.0, false, why) ||
        !check_text(r->host, "provenance.host", 0, 256, false, why))
        return false;
    if (r->session && !db_uuid_valid(r->session)) {
        su_buf_puts(why, "provenance.session: must be a uuid (8-4-4-4-12 lowercase hex digits) or null");
        return false;
    }
    if (!(c->args = canon_args(d, w->args, a, why)) || !(c->config = canon_config(r->config, r->config_index, a, why)) ||
        !(c->counters = canon_counters(r->counters, a, why)))
        return false;
    su_buf cb = {0};
    db_costs_format(r->costs, r->ncosts, &cb);
    c->costs = su_arena_strdup(a, su_buf_str(&cb));
    su_buf_free(&cb);
    c->mean = r->ncosts ? sum / (double)r->ncosts : 0;
    c->flops = w->flops + 0.0;
    c->build_time = r->build_time + 0.0;
    c->run_time = r->run_time + 0.0;
    return true;
}

bool db_record_check(const db_record *r, su_buf *why)
{
    su_arena a;
    su_arena_init(&a);
    db_canon c;
    bool good = db_check_record(NULL, r, &a, &c, why);
    su_arena_free(&a);
    return good;
}

uint64_t db_hash_str(uint64_t h, const char *s)
{
    s = s ? s : "";
    return su_hash_bytes(h, s, strlen(s) + 1);
}

uint64_t db_hash_f64(uint64_t h, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return su_hash_u64(h, bits);
}

/* The content digest: every stored field except ids and the session. */
uint64_t db_digest(const db_record *r, const db_canon *c)
{
    uint64_t h = SU_HASH_INIT;
    h = db_hash_str(h, r->workload.key);
    h = db_hash_str(h, r->target.name);
    h = db_hash_str(h, r->target.cpu);
    h = db_hash_str(h, r->target.isa);
    h = su_hash_u64(h, (uint64_t)r->target.cores);
    h = db_hash_str(h, r->target.os);
    h = su_hash_u64(h, (uint64_t)r->config_index);
    h = db_hash_str(h, c->config);
    h = su_hash_u64(h, r->is_default);
    h = db_hash_str(h, c->costs);
    h = su_hash_u64(h, (uint64_t)r->error);
    h = db_hash_str(h, r->error_msg);
    h = db_hash_str(h, c->counters);
    h = db_hash_f64(h, c->build_time);
    h = db_hash_f64(h, c->run_time);
    h = db_hash_str(h, r->tuner);
    h = db_hash_f64(h, r->timestamp);
    h = db_hash_str(h, r->host);
    return h;
}
