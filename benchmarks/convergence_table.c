/* convergence_table.c — the measurement table of the convergence benchmark.
 * Every (task, config) is measured once: the table is the database's records
 * of the task's workload on this target, and a config some tuner proposes
 * that is not there yet is measured (in the tuner's batch, through
 * tun_measure like the tuning loop) and stored as an ordinary tuning record.
 * Every tuner run then sees the same cost for the same config, and a second
 * run of the benchmark on the same database measures nothing. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "benchmarks/convergence.h"

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double cv_gflops(const cv_task *t, double cost)
{
    return isfinite(cost) && cost > 0 ? (double)t->task->flops / cost * 1e-9 : 0;
}

static size_t slot_of(const cv_task *t, int64_t idx)
{
    return (size_t)su_hash_u64(SU_HASH_INIT, (uint64_t)idx) & (t->nslots - 1);
}

const cv_row *cv_table_find(const cv_task *t, int64_t idx)
{
    if (!t->nslots)
        return NULL;
    for (size_t s = slot_of(t, idx);; s = (s + 1) & (t->nslots - 1)) {
        if (!t->slots[s])
            return NULL;
        if (t->rows[t->slots[s] - 1].index == idx)
            return &t->rows[t->slots[s] - 1];
    }
}

/* Adds a row unless the config has one (a database may hold a config twice:
 * the first record wins). */
static void table_add(cv_task *t, int64_t idx, double cost)
{
    if (cv_table_find(t, idx))
        return;
    if (2 * (t->nrows + 1) > t->nslots) {
        /* rehash at half load, so probing stays short */
        t->nslots = t->nslots ? 2 * t->nslots : 64;
        free(t->slots);
        t->slots = su_calloc(t->nslots, sizeof *t->slots);
        for (size_t i = 0; i < t->nrows; i++) {
            size_t s = slot_of(t, t->rows[i].index);
            while (t->slots[s])
                s = (s + 1) & (t->nslots - 1);
            t->slots[s] = (int64_t)i + 1;
        }
    }
    t->rows = su_grow_zeroed(t->rows, &t->cap, t->nrows + 1, sizeof *t->rows);
    t->rows[t->nrows] = (cv_row){idx, cost};
    size_t s = slot_of(t, idx);
    while (t->slots[s])
        s = (s + 1) & (t->nslots - 1);
    t->slots[s] = (int64_t)++t->nrows;
}

bool cv_table_load(cv_bench *b, cv_task *t, su_buf *err)
{
    su_arena a;
    su_arena_init(&a);
    db_record *recs;
    size_t n;
    if (!db_workload_records(b->d, t->task->key, b->target.name, &a, &recs, &n)) {
        su_buf_printf(err, "%s: reading its records: %s", t->name, db_errmsg(b->d));
        su_arena_free(&a);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        sch_config c;
        su_buf why = {0};
        tun_cfg_status st = tun_config_from_record(&t->space, recs[i].config, &c, &why);
        su_buf_free(&why);
        if (st != TUN_CFG_OK) {
            t->skipped++;
            continue;
        }
        int64_t idx = tun_config_encode(&t->space, &c);
        sch_config_free(&c);
        size_t before = t->nrows;
        table_add(t, idx, recs[i].error ? INFINITY : recs[i].mean_cost);
        t->loaded += t->nrows > before;
    }
    su_arena_free(&a);
    return true;
}

/* A record's message: printable ASCII, newlines and tabs (compiler logs may
 * hold anything, and records must be valid UTF-8). */
static const char *ascii_text(su_arena *a, const char *s)
{
    char *r = su_arena_strdup(a, s ? s : "");
    for (char *p = r; *p; p++)
        if ((unsigned char)*p >= 0x7f || ((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t'))
            *p = '?';
    return r;
}

/* The database record of one result. */
static void to_record(const cv_bench *b, const cv_task *t, const char *tuner, const sch_config *cfg,
                      const tun_result *r, su_arena *a, db_record *rec)
{
    memset(rec, 0, sizeof *rec);
    rec->workload = (db_workload){t->task->key, t->task->template_name, t->args, (double)t->task->flops};
    rec->target = b->target;
    rec->config_index = r->index;
    char *cj = tun_config_record_json(&t->space, cfg);
    rec->config = su_arena_strdup(a, cj);
    free(cj);
    rec->is_default = r->index == t->space.default_index;
    double *costs = su_arena_alloc(a, (size_t)(r->ncosts + 1) * sizeof *costs);
    for (int i = 0; i < r->ncosts; i++)
        costs[i] = fmax(r->costs[i], 1e-12); /* records hold positive costs */
    rec->costs = costs;
    rec->ncosts = r->error ? 0 : (size_t)r->ncosts;
    rec->error = r->error;
    rec->error_msg = ascii_text(a, r->msg);
    rec->build_time = r->build_time;
    rec->run_time = r->run_time;
    rec->tuner = tuner;
    rec->session = b->session[0] ? b->session : NULL;
    rec->timestamp = r->timestamp;
    rec->host = tun_host_name();
}

/* Measures n configs missing from the table, stores them and adds them. */
static bool measure(cv_bench *b, cv_task *t, int n, const int64_t *idx, const char *tuner, su_buf *err)
{
    if (!t->td && !(t->td = tun_task_data_new(t->task, 0, err)))
        return false;
    /* the args the tuning loop stores (with the function, printed once), so
     * that `relay-tune tune` can transfer from the benchmark's records */
    if (!t->args)
        t->args = tun_workload_args(t->task, &b->arena);
    sch_config *cfgs = su_calloc((size_t)n, sizeof *cfgs);
    tun_result *res = su_calloc((size_t)n, sizeof *res);
    for (int i = 0; i < n; i++)
        tun_config_decode(&t->space, idx[i], &cfgs[i]);
    double t0 = mono_now();
    bool ok = tun_measure(&b->m, &t->space, t->td, n, cfgs, res);
    b->measure_s += mono_now() - t0;
    if (!ok)
        su_buf_printf(err, "%s: the measurement runner process died", t->name);
    su_arena a;
    su_arena_init(&a);
    db_record *recs = su_arena_alloc(&a, (size_t)n * sizeof *recs);
    for (int i = 0; ok && i < n; i++)
        to_record(b, t, tuner, &cfgs[i], &res[i], &a, &recs[i]);
    if (ok && !(ok = db_add_records(b->d, recs, (size_t)n, NULL, NULL, NULL)))
        su_buf_printf(err, "%s: storing measurements: %s", t->name, db_errmsg(b->d));
    int failed = 0;
    for (int i = 0; ok && i < n; i++) {
        table_add(t, idx[i], res[i].error ? INFINITY : res[i].mean);
        failed += res[i].error != SU_MERR_NONE;
    }
    if (ok) {
        t->measured += n;
        b->measured += n;
        if (b->verbose)
            fprintf(stderr, "  %s: measured %d (%d failed), %lld in the run so far, %.0f s measuring\n", t->name, n,
                    failed, (long long)b->measured, b->measure_s);
    }
    for (int i = 0; i < n; i++) {
        sch_config_free(&cfgs[i]);
        tun_result_free(&res[i]);
    }
    free(cfgs);
    free(res);
    su_arena_free(&a);
    return ok;
}

bool cv_table_costs(cv_bench *b, cv_task *t, int n, const int64_t *idx, const char *tuner, double *cost, su_buf *err)
{
    int64_t *missing = su_calloc((size_t)n + 1, sizeof *missing);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!cv_table_find(t, idx[i]))
            missing[k++] = idx[i];
    bool ok = !k || measure(b, t, k, missing, tuner, err);
    for (int i = 0; ok && i < n; i++)
        cost[i] = cv_table_find(t, idx[i])->cost;
    free(missing);
    return ok;
}

static int cmp_cost(const void *a, const void *b)
{
    const cv_row *x = a, *y = b;
    return (x->cost > y->cost) - (x->cost < y->cost);
}

int cv_table_confirm(cv_bench *b, cv_task *t, int k, int rounds, int64_t *idx, double *med, double *spread,
                     su_buf *err)
{
    cv_row *top = su_malloc((t->nrows + 1) * sizeof *top);
    int n = 0;
    for (size_t i = 0; i < t->nrows; i++)
        if (isfinite(t->rows[i].cost))
            top[n++] = t->rows[i];
    qsort(top, (size_t)n, sizeof *top, cmp_cost);
    n = n < k ? n : k;
    bool ok = !n || t->td || (t->td = tun_task_data_new(t->task, 0, err));
    if (!n || !ok) {
        free(top);
        return ok ? 0 : -1;
    }
    sch_config *cfgs = su_calloc((size_t)n, sizeof *cfgs);
    tun_result *res = su_calloc((size_t)n, sizeof *res);
    double *costs = su_malloc((size_t)n * (size_t)rounds * sizeof *costs);
    for (int i = 0; i < n; i++)
        tun_config_decode(&t->space, top[i].index, &cfgs[i]);
    /* the rounds load what the first one built */
    su_map built = {0};
    tun_measurer m = b->m;
    m.built = &built;
    double t0 = mono_now();
    for (int r = 0; ok && r < rounds; r++) {
        ok = tun_measure(&m, &t->space, t->td, n, cfgs, res);
        for (int i = 0; i < n; i++) {
            costs[i * rounds + r] = ok && !res[i].error ? res[i].mean : INFINITY;
            tun_result_free(&res[i]);
        }
    }
    b->measure_s += mono_now() - t0;
    if (!ok)
        su_buf_printf(err, "%s: the measurement runner process died while re-measuring", t->name);
    for (int i = 0; ok && i < n; i++) {
        const double *c = costs + i * rounds;
        double lo = c[0], hi = c[0];
        if (b->verbose)
            fprintf(stderr, "  %s: config %lld: table %.1f GFLOP/s, re-measured", t->name, (long long)top[i].index,
                    cv_gflops(t, top[i].cost));
        for (int r = 0; r < rounds; r++) {
            lo = fmin(lo, c[r]), hi = fmax(hi, c[r]);
            if (b->verbose)
                fprintf(stderr, " %.1f", cv_gflops(t, c[r]));
        }
        if (b->verbose)
            fprintf(stderr, "\n");
        idx[i] = top[i].index;
        med[i] = db_median(c, (size_t)rounds);
        spread[i] = isfinite(hi) ? (hi - lo) / med[i] : INFINITY;
    }
    for (int i = 0; i < n; i++)
        sch_config_free(&cfgs[i]);
    tun_built_free(&built);
    free(costs), free(res), free(cfgs), free(top);
    return ok ? n : -1;
}

void cv_task_free(cv_task *t)
{
    free(t->rows);
    free(t->slots);
    tun_task_data_free(t->td);
    tun_idxset_free(&t->proposed);
    tun_space_free(&t->space);
    memset(t, 0, sizeof *t);
}
