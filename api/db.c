/* db.c — the public rt_db_ API over db/. Like api.c it owns no logic: it turns
 * db/ error values into printed messages, caps the stream of rejection
 * reports, and wraps the handle. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "api/api.h"

/* How many rejection messages one import or merge prints before summarizing. */
#define MAX_REPORTS 20

const char *rt_db_default_path(void)
{
    const char *env = getenv("RELAY_TUNE_DB");
    return env && env[0] ? env : "./relay-tune.db";
}

static void fail(FILE *errs, const char *msg)
{
    if (errs)
        fprintf(errs, "relay-tune: error: %s\n", msg);
}

rt_db *rt_db_open(const char *path, int flags, FILE *errs)
{
    struct stat sb;
    if (!(flags & RT_DB_CREATE) && stat(path, &sb) != 0 && errno == ENOENT) {
        if (errs)
            fprintf(errs, "relay-tune: error: %s: no such database (give --db PATH or set RELAY_TUNE_DB)\n", path);
        return NULL;
    }
    su_buf err = {0};
    db_open_opts o = {(flags & RT_DB_CREATE) ? 0 : DB_OPEN_NO_CREATE, 0, 0};
    db *d = db_open(path, &o, &err);
    if (!d) {
        fail(errs, su_buf_str(&err));
        su_buf_free(&err);
        return NULL;
    }
    su_buf_free(&err);
    rt_db *r = su_calloc(1, sizeof *r);
    r->d = d;
    return r;
}

void rt_db_close(rt_db *h)
{
    if (!h)
        return;
    db_close(h->d);
    free(h);
}

long long rt_db_export(rt_db *h, const char *workload, const char *target, FILE *out, FILE *errs)
{
    db_filter f = {workload, target};
    size_t n = 0;
    if (!db_export(h->d, &f, out, &n)) {
        fail(errs, db_errmsg(h->d));
        return -1;
    }
    return (long long)n;
}

typedef struct reporter {
    FILE *errs;
    const char *name;
    const char *unit;   /* "" for log lines ("NAME:LINE"), " record" for merged rows */
    size_t shown, hidden;
} reporter;

static void report(void *ctx, size_t where, const char *why)
{
    reporter *r = ctx;
    if (r->shown >= MAX_REPORTS) {
        r->hidden++;
        return;
    }
    r->shown++;
    if (r->errs)
        fprintf(r->errs, "%s:%s%zu: rejected: %s\n", r->name, r->unit, where, why);
}

static void report_end(reporter *r)
{
    if (r->hidden && r->errs)
        fprintf(r->errs, "%s: %zu more rejected%s not shown\n", r->name, r->hidden,
                r->unit[0] ? " records" : " lines");
}

static void add_counts(rt_db_counts *c, const db_counts *k)
{
    if (!c)
        return;
    c->imported += k->added;
    c->duplicates += k->duplicates;
    c->rejected += k->rejected;
}

int rt_db_import(rt_db *h, FILE *in, const char *name, rt_db_counts *counts, FILE *errs)
{
    reporter r = {errs, name, "", 0, 0};
    db_counts k = {0};
    bool good = db_import(h->d, in, name, &k, report, &r);
    report_end(&r);
    add_counts(counts, &k);
    if (!good)
        fail(errs, db_errmsg(h->d));
    return good ? 0 : -1;
}

int rt_db_merge(rt_db *h, const char *other_path, rt_db_counts *counts, FILE *errs)
{
    reporter r = {errs, other_path, "record ", 0, 0};
    db_counts k = {0};
    bool good = db_merge(h->d, other_path, &k, report, &r);
    report_end(&r);
    add_counts(counts, &k);
    if (!good)
        fail(errs, db_errmsg(h->d));
    return good ? 0 : -1;
}

char *rt_db_stats(rt_db *h, int flags, FILE *errs)
{
    db_stats s;
    if (!db_stats_get(h->d, &s)) {
        fail(errs, db_errmsg(h->d));
        return NULL;
    }
    su_buf b = {0};
    db_stats_print(h->d, &s, (flags & RT_DB_JSON) != 0, &b);
    return su_buf_take(&b);
}

char *rt_db_best(rt_db *h, const char *target, int flags, FILE *errs)
{
    su_arena a;
    su_arena_init(&a);
    db_best_row *rows;
    size_t n;
    if (!db_best_all(h->d, target, &a, &rows, &n)) {
        fail(errs, db_errmsg(h->d));
        su_arena_free(&a);
        return NULL;
    }
    su_buf b = {0};
    db_best_print(rows, n, (flags & RT_DB_JSON) != 0, &b);
    su_arena_free(&a);
    return su_buf_take(&b);
}

long long rt_db_gc(rt_db *h, double days, FILE *errs)
{
    int64_t n;
    if (!db_gc(h->d, days, db_now(), &n)) {
        fail(errs, db_errmsg(h->d));
        return -1;
    }
    return (long long)n;
}

long long rt_db_bench_add(rt_db *h, FILE *in, const char *name, FILE *errs)
{
    su_arena a;
    su_arena_init(&a);
    SU_VEC(db_bench) v = {0};
    su_buf why = {0};
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long long lineno = 0, stored = -1;
    bool good = true;
    while (good && (len = getline(&line, &cap, in)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            len--;
        if (len == 0)
            continue;
        db_bench b;
        good = db_bench_parse(line, (size_t)len, &a, &b, &why);
        if (good) {
            b.timestamp = b.timestamp ? b.timestamp : db_now();
            b.host = b.host[0] ? b.host : tun_host_name();
            su_vec_push(&v, b);
        }
    }
    if (!good && errs)
        fprintf(errs, "relay-tune: error: %s:%lld: %s\n", name, lineno, su_buf_str(&why));
    if (good && db_add_benches(h->d, v.data, v.len))
        stored = (long long)v.len;
    else if (good)
        fail(errs, db_errmsg(h->d));
    free(line);
    su_buf_free(&why);
    su_vec_free(&v);
    su_arena_free(&a);
    return stored;
}

char *rt_db_benchmarks(rt_db *h, const char *model, int flags, FILE *errs)
{
    su_arena a;
    su_arena_init(&a);
    db_bench *rows;
    size_t n;
    if (!db_benches(h->d, model, &a, &rows, &n)) {
        fail(errs, db_errmsg(h->d));
        su_arena_free(&a);
        return NULL;
    }
    su_buf b = {0};
    db_benches_print(rows, n, (flags & RT_DB_JSON) != 0, &b);
    su_arena_free(&a);
    return su_buf_take(&b);
}
