/* records.c — storing measurements and looking them up.
 *
 * Every path that brings records in (the tuner's batches, `db import`, `db
 * merge`) ends in db_add_records, so every record is checked the same way:
 * types and ranges (db_record_check), the structure of its config, the
 * template hook when the tuner installed one, and agreement with what the
 * database already knows about its workload. A batch is one transaction.
 *
 * Exact duplicates are found with one probe of the records_lookup index (a
 * duplicate has the same workload, target, error, mean cost and timestamp),
 * then confirmed by a 64-bit digest of the content (ids excluded, so it is the
 * same in every database) and column by column, so a collision can never drop
 * a record.
 * JSON fields are stored canonically (sorted keys, compact) so that equal
 * content is equal text.
 *
 * Workload, target and session ids are cached per handle: rows of those
 * tables are never deleted, so a committed id stays valid; the caches are
 * dropped on rollback because they may hold ids of rows that were rolled back. */
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <string.h>

#include "db/db.h"

/* ---- small helpers ------------------------------------------------------------ */

const char *db_col_str(sqlite3_stmt *st, int i, su_arena *a)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return s ? su_arena_strndup(a, (const char *)s, (size_t)sqlite3_column_bytes(st, i)) : "";
}

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

/* A record's fields in canonical form, as stored. */
typedef struct canon {
    const char *args, *config, *counters, *costs;  /* canonical JSON texts */
    double mean;                                    /* mean cost (0 when no costs) */
    double flops, build_time, run_time;             /* with -0 made +0 */
    uint64_t digest;                                /* content digest */
} canon;

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
static bool check_record(db *d, const db_record *r, su_arena *a, canon *c, su_buf *why)
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
    canon c;
    bool good = check_record(NULL, r, &a, &c, why);
    su_arena_free(&a);
    return good;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
    s = s ? s : "";
    return su_hash_bytes(h, s, strlen(s) + 1);
}

static uint64_t hash_f64(uint64_t h, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return su_hash_u64(h, bits);
}

/* The content digest: every stored field except ids and the session. */
static uint64_t digest(const db_record *r, const canon *c)
{
    uint64_t h = SU_HASH_INIT;
    h = hash_str(h, r->workload.key);
    h = hash_str(h, r->target.name);
    h = hash_str(h, r->target.cpu);
    h = hash_str(h, r->target.isa);
    h = su_hash_u64(h, (uint64_t)r->target.cores);
    h = hash_str(h, r->target.os);
    h = su_hash_u64(h, (uint64_t)r->config_index);
    h = hash_str(h, c->config);
    h = su_hash_u64(h, r->is_default);
    h = hash_str(h, c->costs);
    h = su_hash_u64(h, (uint64_t)r->error);
    h = hash_str(h, r->error_msg);
    h = hash_str(h, c->counters);
    h = hash_f64(h, c->build_time);
    h = hash_f64(h, c->run_time);
    h = hash_str(h, r->tuner);
    h = hash_f64(h, r->timestamp);
    h = hash_str(h, r->host);
    return h;
}

/* ---- resolving ids ------------------------------------------------------------------ */

static const char *nz(const char *s)
{
    return s ? s : "";
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
    sqlite3_bind_text(st, i, nz(s), -1, SQLITE_STATIC);
}

static void cache_put(db *d, su_map *m, const char *key, int64_t id, uint64_t desc)
{
    db_cached *c = su_arena_alloc(&d->cache, sizeof *c);
    c->id = id;
    c->desc = desc;
    su_map_put(m, su_arena_strdup(&d->cache, key), c);
}

/* The target resolved last: consecutive records usually share it. */
static void remember_target(db *d, const char *ident, int64_t id)
{
    su_buf_clear(&d->last_target);
    su_buf_puts(&d->last_target, ident);
    d->last_target_id = id;
}

/* Row id of the target, created when new. -1 on a database error. */
static int64_t target_id(db *d, const db_target *t)
{
    char ident[1400];
    snprintf(ident, sizeof ident, "%s\x1f%s\x1f%s\x1f%d\x1f%s", nz(t->name), nz(t->cpu), nz(t->isa), t->cores,
             nz(t->os));
    if (d->last_target.data && !strcmp(d->last_target.data, ident))
        return d->last_target_id;
    db_cached *c = su_map_get(&d->targets, ident);
    if (c) {
        remember_target(d, ident, c->id);
        return c->id;
    }
    sqlite3_stmt *st = db_stmt(d, DB_ST_TARGET_FIND);
    if (!st)
        return -1;
    bind_text(st, 1, t->name);
    bind_text(st, 2, t->cpu);
    bind_text(st, 3, t->isa);
    sqlite3_bind_int(st, 4, t->cores);
    bind_text(st, 5, t->os);
    int rc = sqlite3_step(st);
    int64_t id;
    if (rc == SQLITE_ROW) {
        id = sqlite3_column_int64(st, 0);
    } else if (rc == SQLITE_DONE) {
        if (!(st = db_stmt(d, DB_ST_TARGET_ADD)))
            return -1;
        bind_text(st, 1, t->name);
        bind_text(st, 2, t->cpu);
        bind_text(st, 3, t->isa);
        sqlite3_bind_int(st, 4, t->cores);
        bind_text(st, 5, t->os);
        if ((rc = sqlite3_step(st)) != SQLITE_DONE)
            return db_fail_sql(d, rc, "adding a target"), -1;
        id = sqlite3_last_insert_rowid(d->sql);
    } else {
        return db_fail_sql(d, rc, "looking up a target"), -1;
    }
    sqlite3_reset(st);
    cache_put(d, &d->targets, ident, id, 0);
    remember_target(d, ident, id);
    return id;
}

static uint64_t workload_desc(const char *tmpl, const char *args, double flops)
{
    return hash_f64(hash_str(hash_str(SU_HASH_INIT, tmpl), args), flops);
}

/* Row id of the workload, created when new; -2 (reason in why) when the key
 * is known with another description; -1 on a database error. */
static int64_t workload_id(db *d, const db_workload *w, const canon *c, su_buf *why)
{
    if (d->last_wid > 0 && !strcmp(su_buf_str(&d->last_wkey), w->key) && !strcmp(d->last_wtmpl.data, w->tmpl) &&
        !strcmp(d->last_wargs.data, c->args) && d->last_wflops == c->flops)
        return d->last_wid;
    uint64_t desc = workload_desc(w->tmpl, c->args, c->flops);
    db_cached *cached = su_map_get(&d->workloads, w->key);
    int64_t id;
    uint64_t have;
    if (cached) {
        id = cached->id;
        have = cached->desc;
    } else {
        sqlite3_stmt *st = db_stmt(d, DB_ST_WORKLOAD_FIND);
        if (!st)
            return -1;
        bind_text(st, 1, w->key);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            id = sqlite3_column_int64(st, 0);
            have = workload_desc((const char *)sqlite3_column_text(st, 1), (const char *)sqlite3_column_text(st, 2),
                                 sqlite3_column_double(st, 3) + 0.0);
        } else if (rc == SQLITE_DONE) {
            if (!(st = db_stmt(d, DB_ST_WORKLOAD_ADD)))
                return -1;
            bind_text(st, 1, w->key);
            char hash[17];
            snprintf(hash, sizeof hash, "%016llx", (unsigned long long)su_hash_str(w->key));
            bind_text(st, 2, hash);
            bind_text(st, 3, w->tmpl);
            bind_text(st, 4, c->args);
            sqlite3_bind_double(st, 5, c->flops);
            if ((rc = sqlite3_step(st)) != SQLITE_DONE)
                return db_fail_sql(d, rc, "adding a workload"), -1;
            id = sqlite3_last_insert_rowid(d->sql);
            have = desc;
        } else {
            return db_fail_sql(d, rc, "looking up a workload"), -1;
        }
        sqlite3_reset(st);
        cache_put(d, &d->workloads, w->key, id, have);
    }
    if (have != desc) {
        su_buf_puts(why, "workload: this key is already recorded with another template, args or flops");
        return -2;
    }
    su_buf_clear(&d->last_wkey);
    su_buf_puts(&d->last_wkey, w->key);
    su_buf_clear(&d->last_wtmpl);
    su_buf_puts(&d->last_wtmpl, w->tmpl);
    su_buf_clear(&d->last_wargs);
    su_buf_puts(&d->last_wargs, c->args);
    d->last_wflops = c->flops;
    d->last_wid = id;
    return id;
}

/* Row id of the session (0 for none), created when new; -2 when it is known
 * with another model; -1 on a database error. */
static int64_t session_id(db *d, const db_record *r, su_buf *why)
{
    if (!r->session)
        return 0;
    uint64_t desc = hash_str(SU_HASH_INIT, r->model);
    db_cached *cached = su_map_get(&d->sessions, r->session);
    int64_t id;
    uint64_t have;
    if (cached) {
        id = cached->id;
        have = cached->desc;
    } else {
        sqlite3_stmt *st = db_stmt(d, DB_ST_SESSION_FIND);
        if (!st)
            return -1;
        bind_text(st, 1, r->session);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            id = sqlite3_column_int64(st, 0);
            have = hash_str(SU_HASH_INIT, (const char *)sqlite3_column_text(st, 1));
        } else if (rc == SQLITE_DONE) {
            if (!(st = db_stmt(d, DB_ST_SESSION_ADD)))
                return -1;
            bind_text(st, 1, r->session);
            bind_text(st, 2, r->model);
            bind_text(st, 3, r->target.name);
            sqlite3_bind_double(st, 4, r->timestamp);
            bind_text(st, 5, "");
            bind_text(st, 6, r->host);
            if ((rc = sqlite3_step(st)) != SQLITE_DONE)
                return db_fail_sql(d, rc, "adding a session"), -1;
            id = sqlite3_last_insert_rowid(d->sql);
            have = desc;
        } else {
            return db_fail_sql(d, rc, "looking up a session"), -1;
        }
        sqlite3_reset(st);
        cache_put(d, &d->sessions, r->session, id, have);
    }
    if (r->model && r->model[0] && have != desc) {
        su_buf_puts(why, "provenance.model: the session is already recorded with another model");
        return -2;
    }
    return id;
}

static bool col_eq(sqlite3_stmt *st, int i, const char *s)
{
    const char *v = (const char *)sqlite3_column_text(st, i);
    return v && !strcmp(v, nz(s));
}

/* 1 when an identical record is stored, 0 when not, -1 on error. */
static int find_duplicate(db *d, const db_record *r, const canon *c, int64_t wid, int64_t tid)
{
    sqlite3_stmt *st = db_stmt(d, DB_ST_DUP_FIND);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, (int64_t)c->digest);
    sqlite3_bind_int64(st, 2, wid);
    sqlite3_bind_int64(st, 3, tid);
    sqlite3_bind_int(st, 4, (int)r->error);
    if (r->ncosts)
        sqlite3_bind_double(st, 5, c->mean);
    sqlite3_bind_double(st, 6, r->timestamp);
    int rc, found = 0;
    while (!found && (rc = sqlite3_step(st)) == SQLITE_ROW)
        found = sqlite3_column_int64(st, 0) == wid && sqlite3_column_int64(st, 1) == tid &&
                sqlite3_column_int64(st, 2) == r->config_index && col_eq(st, 3, c->config) &&
                sqlite3_column_int(st, 4) == (int)r->is_default && col_eq(st, 5, c->costs) &&
                sqlite3_column_int(st, 6) == (int)r->error && col_eq(st, 7, r->error_msg) &&
                col_eq(st, 8, c->counters) && sqlite3_column_double(st, 9) == c->build_time &&
                sqlite3_column_double(st, 10) == c->run_time && col_eq(st, 11, r->tuner) &&
                sqlite3_column_double(st, 12) == r->timestamp && col_eq(st, 13, r->host);
    if (!found && rc != SQLITE_DONE)
        return db_fail_sql(d, rc, "looking for duplicates"), -1;
    sqlite3_reset(st);
    return found;
}

/* Stores one record: 1 added, 0 duplicate, -2 rejected (why), -1 db error. */
static int add_one(db *d, const db_record *r, su_arena *a, su_buf *why)
{
    canon c;
    if (!check_record(d, r, a, &c, why))
        return -2;
    if (d->check && !d->check(d->check_ctx, r->workload.tmpl, r->workload.key, r->config_index, c.config, why)) {
        if (!why->len)
            su_buf_puts(why, "config: does not fit its template");
        return -2;
    }
    c.digest = digest(r, &c);
    int64_t wid = workload_id(d, &r->workload, &c, why);
    if (wid < 0)
        return (int)wid;
    int64_t tid = target_id(d, &r->target);
    if (tid < 0)
        return -1;
    int64_t sid = session_id(d, r, why);
    if (sid < 0)
        return (int)sid;
    int dup = find_duplicate(d, r, &c, wid, tid);
    if (dup)
        return dup < 0 ? -1 : 0;
    sqlite3_stmt *st = db_stmt(d, DB_ST_RECORD_ADD);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, wid);
    sqlite3_bind_int64(st, 2, tid);
    sqlite3_bind_int64(st, 3, r->config_index);
    bind_text(st, 4, c.config);
    sqlite3_bind_int(st, 5, r->is_default);
    bind_text(st, 6, c.costs);
    if (r->ncosts)
        sqlite3_bind_double(st, 7, c.mean);
    sqlite3_bind_int(st, 8, (int)r->error);
    bind_text(st, 9, r->error_msg);
    bind_text(st, 10, c.counters);
    sqlite3_bind_double(st, 11, c.build_time);
    sqlite3_bind_double(st, 12, c.run_time);
    bind_text(st, 13, r->tuner);
    if (sid)
        sqlite3_bind_int64(st, 14, sid);
    sqlite3_bind_double(st, 15, r->timestamp);
    bind_text(st, 16, r->host);
    sqlite3_bind_int64(st, 17, (int64_t)c.digest);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return db_fail_sql(d, rc, "adding a record"), -1;
    return 1;
}

bool db_add_records(db *d, const db_record *recs, size_t n, db_counts *counts, db_reject_fn on_reject, void *ctx)
{
    db_counts c = {0};
    su_arena a;
    su_buf why = {0};
    su_arena_init(&a);
    if (!db_begin(d))
        return false;
    bool good = true;
    for (size_t i = 0; good && i < n; i++) {
        if (a.total > (1u << 20))
            su_arena_free(&a);
        su_buf_clear(&why);
        int rc = add_one(d, &recs[i], &a, &why);
        if (rc == 1) {
            c.added++;
        } else if (rc == 0) {
            c.duplicates++;
        } else if (rc == -2 && on_reject) {
            c.rejected++;
            on_reject(ctx, i, su_buf_str(&why));
        } else if (rc == -2) {
            good = db_fail(d, "%s: record %zu of the batch is invalid: %s; nothing of the batch was stored",
                           d->path, i, su_buf_str(&why));
        } else {
            good = false;
        }
    }
    su_arena_free(&a);
    su_buf_free(&why);
    if (!good) {
        db_rollback(d);
        return false;
    }
    if (!db_commit(d))
        return false;
    if (counts) {
        counts->added += c.added;
        counts->duplicates += c.duplicates;
        counts->rejected += c.rejected;
    }
    return true;
}

/* ---- reading records ----------------------------------------------------------------- */

void db_row_to_record(sqlite3_stmt *st, su_arena *a, db_record *r)
{
    memset(r, 0, sizeof *r);
    r->id = sqlite3_column_int64(st, 0);
    r->workload.key = db_col_str(st, 1, a);
    r->workload.tmpl = db_col_str(st, 2, a);
    r->workload.args = db_col_str(st, 3, a);
    r->workload.flops = sqlite3_column_double(st, 4);
    r->target.name = db_col_str(st, 5, a);
    r->target.cpu = db_col_str(st, 6, a);
    r->target.isa = db_col_str(st, 7, a);
    r->target.cores = sqlite3_column_int(st, 8);
    r->target.os = db_col_str(st, 9, a);
    r->config_index = sqlite3_column_int64(st, 10);
    r->config = db_col_str(st, 11, a);
    r->is_default = sqlite3_column_int(st, 12) != 0;
    double *costs = NULL;
    size_t n = 0;
    if (!db_costs_parse(db_col_str(st, 13, a), a, &costs, &n)) {
        /* only a foreign or damaged file gets here; the record then fails
         * db_record_check (a success without costs, or a NaN cost) */
        costs = su_arena_alloc(a, sizeof *costs);
        costs[0] = NAN;
        n = 1;
    }
    r->costs = costs;
    r->ncosts = n;
    r->mean_cost = sqlite3_column_double(st, 14);
    int64_t e = sqlite3_column_int64(st, 15);
    r->error = su_merr_valid(e) ? (su_merr)e : SU_MERR_COUNT;
    r->error_msg = db_col_str(st, 16, a);
    r->counters = db_col_str(st, 17, a);
    r->build_time = sqlite3_column_double(st, 18);
    r->run_time = sqlite3_column_double(st, 19);
    r->tuner = db_col_str(st, 20, a);
    r->session = sqlite3_column_type(st, 21) == SQLITE_NULL ? NULL : db_col_str(st, 21, a);
    r->model = db_col_str(st, 22, a);
    r->timestamp = sqlite3_column_double(st, 23);
    r->host = db_col_str(st, 24, a);
}

/* Collects every row of a prepared query into an arena array. */
static bool collect(db *d, sqlite3_stmt *st, su_arena *a, db_record **out, size_t *n, const char *doing)
{
    SU_VEC(db_record) v = {0};
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        db_record r;
        db_row_to_record(st, a, &r);
        su_vec_push(&v, r);
    }
    if (rc != SQLITE_DONE) {
        su_vec_free(&v);
        return db_fail_sql(d, rc, doing);
    }
    *n = v.len;
    *out = v.len ? su_arena_dup(a, v.data, v.len * sizeof *v.data) : NULL;
    su_vec_free(&v);
    return true;
}

static sqlite3_stmt *prepare(db *d, const char *sql)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(d->sql, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) {
        db_fail_sql(d, rc, "preparing a query");
        return NULL;
    }
    return st;
}

/* A candidate of top-k with the digest its order needs. */
typedef struct ranked {
    db_record r;
    int64_t digest;
} ranked;

/* db_best's order (DB_BEST_ORDER) in C, for merging several target rows. */
static int rank_cmp(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->r.mean_cost != b->r.mean_cost)
        return a->r.mean_cost < b->r.mean_cost ? -1 : 1;
    if (a->r.config_index != b->r.config_index)
        return a->r.config_index < b->r.config_index ? -1 : 1;
    if (a->r.timestamp != b->r.timestamp)
        return a->r.timestamp < b->r.timestamp ? -1 : 1;
    if (a->digest != b->digest)
        return a->digest < b->digest ? -1 : 1;
    return (a->r.id > b->r.id) - (a->r.id < b->r.id);
}

/* The workload's row id: 0 when unknown, -1 on error. */
static int64_t find_workload(db *d, const char *key)
{
    db_cached *c = su_map_get(&d->workloads, key);
    if (c)
        return c->id;
    sqlite3_stmt *st = db_stmt(d, DB_ST_WORKLOAD_FIND);
    if (!st)
        return -1;
    bind_text(st, 1, key);
    int rc = sqlite3_step(st);
    int64_t id = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return db_fail_sql(d, rc, "looking up a workload"), -1;
    return id;
}

/* The best records of one workload on one target row are the first rows of
 * records_lookup index range (error = 0), in mean-cost order; a target name may have several
 * rows (one per host description), whose first k are merged here. */
bool db_top_k(db *d, const char *key, const char *target, size_t k, su_arena *a, db_record **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    int64_t wid = find_workload(d, key);
    if (wid <= 0 || k == 0)
        return wid == 0 || k == 0;
    sqlite3_stmt *ts = db_stmt(d, DB_ST_TARGET_IDS);
    if (!ts)
        return false;
    bind_text(ts, 1, target);
    SU_VEC(int64_t) tids = {0};
    int rc;
    while ((rc = sqlite3_step(ts)) == SQLITE_ROW)
        su_vec_push(&tids, sqlite3_column_int64(ts, 0));
    sqlite3_reset(ts);
    if (rc != SQLITE_DONE) {
        su_vec_free(&tids);
        return db_fail_sql(d, rc, "looking up a target");
    }
    SU_VEC(ranked) v = {0};
    bool good = true;
    for (size_t t = 0; good && t < tids.len; t++) {
        sqlite3_stmt *st = db_stmt(d, DB_ST_BEST);
        if (!st) {
            good = false;
            break;
        }
        sqlite3_bind_int64(st, 1, wid);
        sqlite3_bind_int64(st, 2, tids.data[t]);
        sqlite3_bind_int64(st, 3, k > INT64_MAX ? INT64_MAX : (int64_t)k);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            ranked r;
            db_row_to_record(st, a, &r.r);
            r.digest = sqlite3_column_int64(st, 25);
            su_vec_push(&v, r);
        }
        sqlite3_reset(st);
        if (rc != SQLITE_DONE)
            good = db_fail_sql(d, rc, "looking up the best records");
    }
    bool several = tids.len > 1;
    su_vec_free(&tids);
    if (good && v.len) {
        if (several)
            qsort(v.data, v.len, sizeof *v.data, rank_cmp);
        *n = v.len < k ? v.len : k;
        db_record *o = su_arena_alloc(a, *n * sizeof *o);
        for (size_t i = 0; i < *n; i++)
            o[i] = v.data[i].r;
        *out = o;
    }
    su_vec_free(&v);
    return good;
}

int db_best(db *d, const char *key, const char *target, su_arena *a, db_record *out)
{
    db_record *r;
    size_t n;
    if (!db_top_k(d, key, target, 1, a, &r, &n))
        return -1;
    if (n)
        *out = r[0];
    return n ? 1 : 0;
}

bool db_workload_records(db *d, const char *key, const char *target, su_arena *a, db_record **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st = prepare(d, "SELECT " DB_RECORD_COLUMNS " FROM " DB_RECORD_FROM
                                  " WHERE r.workload_id = (SELECT id FROM workloads WHERE key = ?1)"
                                  " AND (?2 IS NULL OR t.target = ?2) ORDER BY r.id");
    if (!st)
        return false;
    bind_text(st, 1, key);
    if (target)
        bind_text(st, 2, target);
    bool good = collect(d, st, a, out, n, "reading the records of a workload");
    sqlite3_finalize(st);
    return good;
}

bool db_similar_records(db *d, const char *key, const char *target, size_t limit, su_arena *a, db_record **out,
                        size_t *n)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st = prepare(d, "SELECT " DB_RECORD_COLUMNS " FROM " DB_RECORD_FROM
                                  " WHERE w.template = (SELECT template FROM workloads WHERE key = ?1)"
                                  " AND w.key <> ?1 AND (?2 IS NULL OR t.target = ?2) ORDER BY r.id LIMIT ?3");
    if (!st)
        return false;
    bind_text(st, 1, key);
    if (target)
        bind_text(st, 2, target);
    sqlite3_bind_int64(st, 3, limit ? (int64_t)limit : -1);
    bool good = collect(d, st, a, out, n, "reading the records of similar workloads");
    sqlite3_finalize(st);
    return good;
}

bool db_foreach_record(db *d, const db_filter *f, bool (*fn)(void *ctx, const db_record *r), void *ctx)
{
    sqlite3_stmt *st = prepare(d, "SELECT " DB_RECORD_COLUMNS " FROM " DB_RECORD_FROM
                                  " WHERE (?1 IS NULL OR w.key = ?1) AND (?2 IS NULL OR t.target = ?2)"
                                  " ORDER BY r.id");
    if (!st)
        return false;
    if (f && f->key)
        bind_text(st, 1, f->key);
    if (f && f->target)
        bind_text(st, 2, f->target);
    su_arena a;
    su_arena_init(&a);
    int rc;
    bool go = true;
    while (go && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        db_record r;
        db_row_to_record(st, &a, &r);
        go = fn(ctx, &r);
        su_arena_free(&a);
    }
    bool good = !go || rc == SQLITE_DONE || db_fail_sql(d, rc, "reading records");
    sqlite3_finalize(st);
    su_arena_free(&a);
    return good;
}
