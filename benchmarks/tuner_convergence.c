/* tuner_convergence.c — how fast each tuner finds a good schedule. A fixed
 * set of tasks (four resnet50 convolutions of different shapes, a BERT
 * dense, a BERT batch_matmul) is tuned by random search, the genetic tuner,
 * the XGBoost tuner and the XGBoost tuner warm-started from the other tasks
 * of its template (transfer), each with several seeds, and the best
 * throughput found after every trial is kept. The report gives, per task,
 * the median best GFLOP/s at each budget, the trials needed to reach 95% of
 * the best throughput any tuner found, whether the targets hold (xgb
 * reaches random search's best at the largest budget within a quarter of
 * it, xgb+transfer within an eighth), and the cost model's ranking quality
 * on held-out measurements.
 *
 * Every run reads one shared measurement table (convergence_table.c): each
 * (task, config) is measured once, so the tuners are compared on identical
 * costs and measuring is bounded by the union of what they propose
 * (docs/tuner-convergence.md).
 *
 *   benchmarks/tuner_convergence [--db PATH] [--tasks N|NAME,...] [--tuners LIST]
 *       [--seeds N] [--budgets 64,128,256,512] [--json] ...   (--help) */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "benchmarks/convergence.h"

/* ---- the task set -------------------------------------------------------- */

/* A task of the set: found in a model's tasks by its template and inputs. */
typedef struct cv_spec {
    const char *name;       /* short name for tables and --tasks */
    const char *model;      /* file under the models folder; NULL: the in-process dense model */
    const char *tmpl;       /* its template */
    const char *shapes;     /* its inputs, as `relay-tune tasks` prints them */
} cv_spec;

static const cv_spec specs[] = {
    {"conv7x7s2", "resnet50.relay", "conv2d_nchw", "1x3x224x224, 64x3x7x7, 64x1x1"},         /* the stem */
    {"conv3x3", "resnet50.relay", "conv2d_nchw", "1x64x56x56, 64x64x3x3, 64x1x1"},           /* layer1 */
    {"conv1x1x4", "resnet50.relay", "conv2d_nchw", "1x64x56x56, 256x64x1x1, 256x1x1"},       /* expansion */
    {"conv3x3s2", "resnet50.relay", "conv2d_nchw", "1x256x28x28, 256x256x3x3, 256x1x1"},     /* layer3 entry */
    {"dense-qkv", "bert_layer.relay", "dense", "128x768, 768x768, 768"},                     /* Q, K, V projections */
    {"bmm-qk", "bert_layer.relay", "batch_matmul", "12x128x64, 12x128x64"},                  /* Q x K^T */
};
#define NSPECS (sizeof specs / sizeof *specs)

/* The modules the tasks come from, loaded once and kept alive. */
typedef struct models {
    const char *file[NSPECS];
    rt_module *mod[NSPECS];
    size_t n;
} models;

/* The optimized module of a model file, with its
 * weights bound to seeded random values; NULL after a message. */
static rt_module *model_get(models *ms, const char *dir, const char *file)
{
    const char *key = file;
    for (size_t i = 0; i < ms->n; i++)
        if (!strcmp(ms->file[i], key))
            return ms->mod[i];
    char *path = su_calloc(strlen(dir) + strlen(file) + 2, 1);
    sprintf(path, "%s/%s", dir, file);
    rt_module *m = rt_module_load(path, stderr);
    free(path);
    rt_opt_options oo = {.level = 3};
    if (m && (rt_module_bind_random_params(m, 0, 1, stderr) < 0 || rt_module_optimize(m, &oo, stderr) != 0)) {
        rt_module_free(m);
        m = NULL;
    }
    if (!m)
        return NULL;
    const rt_task *t;
    size_t n;
    rt_module_tasks(m, &t, &n);
    ms->file[ms->n] = key;
    ms->mod[ms->n++] = m;
    return m;
}

/* Finds spec's task and its space; false after a message. */
static bool task_init(models *ms, const char *dir, const cv_spec *sp, const sch_hw *hw, cv_task *out)
{
    rt_module *m = model_get(ms, dir, sp->model);
    if (!m)
        return false;
    memset(out, 0, sizeof *out);
    out->name = sp->name;
    for (size_t i = 0; i < m->tasks.len && !out->task; i++)
        if (!strcmp(m->tasks.items[i].template_name, sp->tmpl) && !strcmp(m->tasks.items[i].shapes, sp->shapes))
            out->task = &m->tasks.items[i];
    if (!out->task) {
        fprintf(stderr, "tuner_convergence: task %s (%s with inputs %s) is not among the tasks of %s: did "
                        "the optimizer's fusion change?\n",
                sp->name, sp->tmpl, sp->shapes, sp->model);
        return false;
    }
    su_buf why = {0};
    bool ok = tun_space_init(&out->space, out->task, hw, &why);
    if (!ok)
        fprintf(stderr, "tuner_convergence: task %s: %s\n", sp->name, su_buf_str(&why));
    su_buf_free(&why);
    return ok;
}

/* ---- options --------------------------------------------------------------- */

#define MAX_BUDGETS 16

/* The tuners compared: a tuner, with or without transfer. */
typedef struct cv_variant {
    const char *label;          /* "xgb+transfer" */
    const char *tuner;          /* tun_tuner_find's name */
    bool transfer;
} cv_variant;

static const cv_variant variants[] = {
    {"random", "random", false},
    {"ga", "ga", false},
    {"xgb", "xgb", false},
    {"xgb+transfer", "xgb", true},
};
#define NVARIANTS (sizeof variants / sizeof *variants)

typedef struct cv_opts {
    const char *db_path, *models_dir, *target, *tasks, *tuners;
    int seeds;
    uint64_t seed;              /* the first seed; the others follow */
    int budgets[MAX_BUDGETS], nbudgets;
    int batch;                  /* configs a tuner proposes at once */
    int jobs, repeat, min_repeat_ms;
    double timeout, compile_timeout;
    bool json, verbose, no_ranking;
    int confirm, confirm_rounds; /* the noise check: the table's best configs re-measured side by side */
} cv_opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tuner_convergence [--db PATH] [--models DIR] [--tasks N|NAME,...] [--tuners LIST]\n"
            "                         [--seeds N] [--seed S] [--budgets B1,B2,...] [--batch N]\n"
            "                         [--jobs J] [--repeat R] [--min-repeat-ms MS] [--timeout S]\n"
            "                         [--compile-timeout S] [--target T] [--confirm K] [--confirm-rounds R]\n"
            "                         [--no-ranking] [--json] [-v]\n"
            "  --db PATH          the measurement table (default tuner_convergence.db); reused runs\n"
            "                     measure only configs it lacks\n"
            "  --models DIR       where resnet50.relay and bert_layer.relay are (default benchmarks/models)\n"
            "  --tasks            the first N tasks of the set, or names:");
    for (size_t i = 0; i < NSPECS; i++)
        fprintf(f, "%s%s", i ? "," : " ", specs[i].name);
    fprintf(f, "\n"
               "  --tuners LIST      of random,ga,xgb,xgb+transfer (default all four)\n"
               "  --seeds N          runs per tuner and task (default 3), seeds S, S+1, ... (--seed, default 1)\n"
               "  --budgets LIST     trial counts reported (default 64,128,256,512); runs go to the largest\n"
               "  --batch N          configs a tuner proposes at once (default 8)\n"
               "  measurement: --jobs 2, --repeat 3, --min-repeat-ms 10, --timeout 10 (s per run),\n"
               "  --compile-timeout 60 (s per candidate)\n"
               "  --confirm K        re-measure the table's K best configs side by side (default 5; 0: no)\n"
               "  --confirm-rounds R ... R times each (default 5): how far their single measurements\n"
               "                     stand above their medians, and how much one config's times spread\n"
               "  --no-ranking       skip the cost model's ranking quality\n"
               "  --json             the results as JSON on stdout; -v a line per measured batch\n");
}

/* A positive integer option value; false after a message. */
static bool parse_int(const char *opt, const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "tuner_convergence: %s: '%s' is not an integer from %d to %d\n", opt, s, lo, hi);
        return false;
    }
    *out = (int)v;
    return true;
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* Budgets: ascending, distinct, positive. */
static bool parse_budgets(const char *s, cv_opts *o)
{
    o->nbudgets = 0;
    char *copy = su_strdup(s), *save = NULL;
    bool ok = true;
    for (char *p = strtok_r(copy, ",", &save); p && ok; p = strtok_r(NULL, ",", &save)) {
        if (o->nbudgets == MAX_BUDGETS) {
            fprintf(stderr, "tuner_convergence: --budgets: at most %d\n", MAX_BUDGETS);
            ok = false;
        } else {
            ok = parse_int("--budgets", p, 1, 1000000, &o->budgets[o->nbudgets++]);
        }
    }
    free(copy);
    if (ok && !o->nbudgets) {
        fprintf(stderr, "tuner_convergence: --budgets: give at least one trial count\n");
        ok = false;
    }
    qsort(o->budgets, (size_t)o->nbudgets, sizeof *o->budgets, cmp_int);
    int k = 0;
    for (int i = 0; i < o->nbudgets; i++)
        if (!k || o->budgets[i] != o->budgets[k - 1])
            o->budgets[k++] = o->budgets[i];
    o->nbudgets = k;
    return ok;
}

static bool parse_args(int argc, char **argv, cv_opts *o, bool *help)
{
    *o = (cv_opts){"tuner_convergence.db", "benchmarks/models", "cpu", NULL, "random,ga,xgb,xgb+transfer", 3, 1,
                   {64, 128, 256, 512}, 4, 8, 2, 3, 10, 10, 60, false, false, false, 5, 5};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int n;
        bool ok = true, takes = true;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            *help = true;
            return true;
        } else if (!strcmp(a, "--json")) {
            o->json = true, takes = false;
        } else if (!strcmp(a, "-v")) {
            o->verbose = true, takes = false;
        } else if (!strcmp(a, "--no-ranking")) {
            o->no_ranking = true, takes = false;
        } else if (!v) {
            fprintf(stderr, "tuner_convergence: %s: unknown option or missing value\n", a);
            return false;
        } else if (!strcmp(a, "--db")) {
            o->db_path = v;
        } else if (!strcmp(a, "--models")) {
            o->models_dir = v;
        } else if (!strcmp(a, "--target")) {
            o->target = v;
        } else if (!strcmp(a, "--tasks")) {
            o->tasks = v;
        } else if (!strcmp(a, "--tuners")) {
            o->tuners = v;
        } else if (!strcmp(a, "--budgets")) {
            ok = parse_budgets(v, o);
        } else if (!strcmp(a, "--confirm")) {
            ok = parse_int(a, v, 0, 64, &o->confirm);
        } else if (!strcmp(a, "--confirm-rounds")) {
            ok = parse_int(a, v, 1, 99, &o->confirm_rounds);
        } else if (!strcmp(a, "--seeds")) {
            ok = parse_int(a, v, 1, 100, &o->seeds);
        } else if (!strcmp(a, "--seed")) {
            ok = parse_int(a, v, 0, 1 << 30, &n), o->seed = (uint64_t)n;
        } else if (!strcmp(a, "--batch")) {
            ok = parse_int(a, v, 1, 1024, &o->batch);
        } else if (!strcmp(a, "--jobs")) {
            ok = parse_int(a, v, 1, 1024, &o->jobs);
        } else if (!strcmp(a, "--repeat")) {
            ok = parse_int(a, v, 1, MS_MAX_REPEAT, &o->repeat);
        } else if (!strcmp(a, "--min-repeat-ms")) {
            ok = parse_int(a, v, 0, 100000, &o->min_repeat_ms);
        } else if (!strcmp(a, "--timeout")) {
            ok = parse_int(a, v, 1, 3600, &n), o->timeout = n;
        } else if (!strcmp(a, "--compile-timeout")) {
            ok = parse_int(a, v, 1, 3600, &n), o->compile_timeout = n;
        } else {
            fprintf(stderr, "tuner_convergence: unknown option '%s'\n", a);
            return false;
        }
        if (!ok)
            return false;
        i += takes;
    }
    return true;
}

/* Which of the set's tasks --tasks names; false after a message. */
static bool select_tasks(const char *s, bool *sel)
{
    int n;
    if (!s) {
        for (size_t i = 0; i < NSPECS; i++)
            sel[i] = true;
        return true;
    }
    if (s[0] >= '0' && s[0] <= '9') {
        if (!parse_int("--tasks", s, 1, (int)NSPECS, &n))
            return false;
        for (size_t i = 0; i < NSPECS; i++)
            sel[i] = (int)i < n;
        return true;
    }
    char *copy = su_strdup(s), *save = NULL;
    bool ok = true;
    for (char *p = strtok_r(copy, ",", &save); p && ok; p = strtok_r(NULL, ",", &save)) {
        size_t i = 0;
        while (i < NSPECS && strcmp(specs[i].name, p))
            i++;
        if (i == NSPECS)
            fprintf(stderr, "tuner_convergence: --tasks: no task '%s' (see --help)\n", p), ok = false;
        else
            sel[i] = true;
    }
    free(copy);
    return ok;
}

/* Which variants --tuners names, and their tuners (NULL: not built in this
 * tree, skipped with a message); false after a message. */
static bool select_tuners(const char *s, bool *sel, const tun_tuner_ops **ops)
{
    char *copy = su_strdup(s), *save = NULL;
    bool ok = true;
    for (char *p = strtok_r(copy, ",", &save); p && ok; p = strtok_r(NULL, ",", &save)) {
        size_t v = 0;
        while (v < NVARIANTS && strcmp(variants[v].label, p))
            v++;
        if (v == NVARIANTS) {
            fprintf(stderr, "tuner_convergence: --tuners: no tuner '%s' (random, ga, xgb, xgb+transfer)\n", p);
            ok = false;
            break;
        }
        ops[v] = tun_tuner_find(variants[v].tuner);
        sel[v] = ops[v] != NULL;
        if (!ops[v])
            fprintf(stderr, "tuner_convergence: tuner %s is not in this build: %s skipped\n", variants[v].tuner, p);
        else if (variants[v].transfer && !ops[v]->transfer)
            fprintf(stderr, "tuner_convergence: tuner %s does not transfer: %s is the same as %s\n",
                    variants[v].tuner, p, variants[v].tuner);
    }
    free(copy);
    return ok;
}

/* ---- runs ------------------------------------------------------------------- */

/* One tuner run on a task for B trials: curve[i] is the best GFLOP/s after
 * trial i + 1 (held when the space runs out). Trial 1 is the template's
 * default config, as in the tuning loop. When note is set, what the tuner
 * proposed joins the task's transfer source. */
static bool run_tuner(cv_bench *b, cv_task *t, const tun_tuner_ops *ops, uint64_t seed, const tun_transfer_rec *recs,
                      size_t nrecs, int B, int bsize, bool note, double *curve, su_buf *err)
{
    tun_tuner *tu = tun_tuner_new_conf(ops, &t->space, seed, NULL);
    if (nrecs)
        tun_transfer(tu, nrecs, recs);
    int64_t *idx = su_calloc((size_t)bsize + 1, sizeof *idx);
    double *cost = su_calloc((size_t)bsize + 1, sizeof *cost);
    int done = 0;
    double best = 0;
    bool ok = true;
    while (done < B) {
        int k = 0, want = B - done < bsize ? B - done : bsize;
        if (!done) {
            idx[k++] = t->space.default_index;
            tun_idxset_add(&tu->seen, t->space.default_index);
        }
        if (want > k)
            k += tun_next_batch(tu, want - k, idx + k);
        if (!k || !(ok = cv_table_costs(b, t, k, idx, ops->name, cost, err)))
            break;
        tun_update(tu, k, idx, cost);
        for (int i = 0; i < k; i++) {
            best = fmax(best, cv_gflops(t, cost[i]));
            curve[done++] = best;
            if (note)
                tun_idxset_add(&t->proposed, idx[i]);
        }
    }
    while (done < B)
        curve[done++] = best;
    tun_tuner_free(tu);
    free(idx);
    free(cost);
    return ok;
}

/* The most records a transfer run starts from (the tuning loop's limit). */
#define TRANSFER_MAX 4096

/* What xgb+transfer learns from before tuning task self: the rows of the
 * other tasks of the set with the same template code and a space of the
 * same form (sch_space_same_form, as the tuning loop's transfer: the
 * general convolutions among themselves, not with the 1x1; dense and
 * batch_matmul) that the tuners without transfer proposed in this run —
 * never the task's own workload. */
static tun_transfer_rec *transfer_source(const cv_task *tasks, size_t n, size_t self, size_t *nrecs, su_buf *names)
{
    sch_template_fn fn = sch_template_find(tasks[self].task->template_name);
    tun_transfer_rec *recs = NULL;
    size_t len = 0, cap = 0;
    for (size_t u = 0; u < n; u++) {
        if (u == self || sch_template_find(tasks[u].task->template_name) != fn ||
            !sch_space_same_form(&tasks[u].space.sp, &tasks[self].space.sp))
            continue;
        su_buf_printf(names, "%s%s", names->len ? ", " : "", tasks[u].name);
        for (size_t r = 0; r < tasks[u].nrows; r++) {
            const cv_row *row = &tasks[u].rows[r];
            if (!tun_idxset_has(&tasks[u].proposed, row->index))
                continue;
            recs = su_grow_zeroed(recs, &cap, len + 1, sizeof *recs);
            recs[len++] = (tun_transfer_rec){&tasks[u].space, row->index, cv_gflops(&tasks[u], row->cost)};
        }
    }
    /* as many as the tuning loop hands over at most: an even subsample */
    size_t keep = len < TRANSFER_MAX ? len : TRANSFER_MAX;
    for (size_t i = 0; i < keep; i++)
        recs[i] = recs[i * len / keep];
    *nrecs = keep;
    return recs;
}

/* A task's best configs in the table re-measured side by side (the noise
 * check). */
typedef struct cv_noise {
    int configs;                /* how many (0: not checked) */
    double top, top_median;     /* the table's best row and its config's median, GFLOP/s */
    double lo, hi;              /* the lowest and highest median of them, GFLOP/s */
    double spread;              /* the median over them of (slowest - fastest round) / median */
} cv_noise;

/* Every curve of the run: [task][variant][seed][trial]. */
typedef struct cv_results {
    size_t ntasks;
    int nseeds, B;
    bool ran[NVARIANTS];
    double *curves;
    size_t *ntransfer;          /* per task: the records xgb+transfer started from */
    char **from;                /* per task: the tasks they came from (malloc'd) */
    cv_noise *noise;            /* per task: its best configs re-measured */
} cv_results;

static double *curve_of(const cv_results *r, size_t t, size_t v, int s)
{
    return r->curves + ((t * NVARIANTS + v) * (size_t)r->nseeds + (size_t)s) * (size_t)r->B;
}

/* The variants with transfer run last, once every task's source is known. */
static bool run_all(cv_bench *b, cv_task *tasks, const cv_opts *o, const tun_tuner_ops **ops, cv_results *r,
                    su_buf *err)
{
    for (int phase = 0; phase < 2; phase++)
        for (size_t t = 0; t < r->ntasks; t++)
            for (size_t v = 0; v < NVARIANTS; v++) {
                if (!r->ran[v] || variants[v].transfer != (phase == 1))
                    continue;
                size_t nrecs = 0;
                su_buf names = {0};
                tun_transfer_rec *recs = phase ? transfer_source(tasks, r->ntasks, t, &nrecs, &names) : NULL;
                if (phase) {
                    r->ntransfer[t] = nrecs;
                    r->from[t] = su_buf_take(&names);
                }
                su_buf_free(&names);
                for (int s = 0; s < r->nseeds; s++) {
                    double *c = curve_of(r, t, v, s);
                    if (!run_tuner(b, &tasks[t], ops[v], o->seed + (uint64_t)s, recs, nrecs, r->B, o->batch,
                                   !phase, c, err)) {
                        free(recs);
                        return false;
                    }
                    fprintf(stderr, "%s %s seed %llu: %.1f GFLOP/s after %d trials (%lld measured in all)\n",
                            tasks[t].name, variants[v].label, (unsigned long long)(o->seed + (uint64_t)s),
                            c[r->B - 1], r->B, (long long)b->measured);
                }
                free(recs);
            }
    return true;
}

/* ---- statistics ---------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The trial after which a curve first reaches x (INFINITY: never). */
static double reach(const double *curve, int B, double x)
{
    for (int i = 0; i < B; i++)
        if (curve[i] >= x * (1 - 1e-9))
            return i + 1;
    return INFINITY;
}

/* Median over seeds of the best after `budget` trials. */
static double med_best(const cv_results *r, size_t t, size_t v, int budget)
{
    double *x = su_calloc((size_t)r->nseeds, sizeof *x);
    for (int s = 0; s < r->nseeds; s++)
        x[s] = curve_of(r, t, v, s)[budget - 1];
    double m = median(x, r->nseeds);
    free(x);
    return m;
}

/* Median over seeds of the trials needed to reach x. */
static double med_reach(const cv_results *r, size_t t, size_t v, double x)
{
    double *y = su_calloc((size_t)r->nseeds, sizeof *y);
    for (int s = 0; s < r->nseeds; s++)
        y[s] = reach(curve_of(r, t, v, s), r->B, x);
    double m = median(y, r->nseeds);
    free(y);
    return m;
}

/* The best throughput any run found on the task. */
static double best_any(const cv_results *r, size_t t)
{
    double best = 0;
    for (size_t v = 0; v < NVARIANTS; v++)
        for (int s = 0; r->ran[v] && s < r->nseeds; s++)
            best = fmax(best, curve_of(r, t, v, s)[r->B - 1]);
    return best;
}

/* Re-measures each task's best configs in the table: on a noisy host the
 * best single measurement stands above what its config runs at (the most
 * lucky of hundreds), and trials to 95% of it count luck. False with a
 * message when the runner failed. */
static bool check_noise(cv_bench *b, cv_task *tasks, const cv_opts *o, cv_results *r, su_buf *err)
{
    size_t k = (size_t)o->confirm + 1;
    int64_t *idx = su_calloc(k, sizeof *idx);
    double *med = su_calloc(k, sizeof *med), *spread = su_calloc(k, sizeof *spread);
    bool ok = true;
    for (size_t t = 0; ok && o->confirm > 0 && t < r->ntasks; t++) {
        cv_task *c = &tasks[t];
        int n = cv_table_confirm(b, c, o->confirm, o->confirm_rounds, idx, med, spread, err);
        ok = n >= 0;
        if (n <= 0)
            continue;
        cv_noise *z = &r->noise[t];
        z->configs = n;
        z->top = cv_gflops(c, cv_table_find(c, idx[0])->cost);
        z->top_median = cv_gflops(c, med[0]);
        z->lo = z->hi = z->top_median;
        for (int i = 0; i < n; i++)
            z->lo = fmin(z->lo, cv_gflops(c, med[i])), z->hi = fmax(z->hi, cv_gflops(c, med[i]));
        z->spread = median(spread, n);
    }
    free(idx), free(med), free(spread);
    return ok;
}

/* The targets on one task: random search's median best at the
 * largest budget B, and the median trials xgb (limit B/4) and xgb+transfer
 * (limit B/8) need to reach it (negative: the variant did not run). */
typedef struct cv_target {
    double ref;
    double trials[NVARIANTS];
    int limit[NVARIANTS];       /* 0: no target for the variant */
} cv_target;

static bool target_of(const cv_results *r, size_t t, cv_target *out)
{
    memset(out, 0, sizeof *out);
    if (!r->ran[0])
        return false;
    out->ref = med_best(r, t, 0, r->B);
    for (size_t v = 2; v < NVARIANTS; v++) {
        out->limit[v] = r->B / (variants[v].transfer ? 8 : 4);
        out->trials[v] = r->ran[v] ? med_reach(r, t, v, out->ref) : -1;
    }
    return true;
}

/* ---- ranking quality of the cost model ------------------------------------ */

/* How well the cost model, trained on 80% of a task's table, orders the
 * other 20% (docs/tuner-convergence.md). */
typedef struct cv_rank {
    bool done;
    size_t train, test;         /* rows */
    double pairwise;            /* share of test pairs of different throughput ordered right */
    double recall;              /* share of the test rows' true top k in the predicted top k */
    int k;
    char *why;                  /* why it was not measured (malloc'd), or NULL */
} cv_rank;

#define RANK_K 10

/* Features of the task's rows in order (rows x tun_feature_count()); a
 * config the template cannot instantiate keeps zeros, as the tuner sees it. */
static float *row_features(const cv_task *t, const size_t *rows, size_t n)
{
    size_t nf = (size_t)tun_feature_count();
    float *x = su_calloc(n * nf + 1, sizeof *x);
    su_buf why = {0};
    for (size_t i = 0; i < n; i++)
        tun_config_features(&t->space, t->rows[rows[i]].index, x + i * nf, &why);
    su_buf_free(&why);
    return x;
}

static void rank_stats(const double *truth, const float *pred, size_t n, int k, cv_rank *q)
{
    size_t right = 0, pairs = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            if (truth[i] == truth[j])
                continue;
            pairs++;
            right += (truth[i] > truth[j]) == (pred[i] > pred[j]);
        }
    q->pairwise = pairs ? (double)right / (double)pairs : NAN;
    /* top k by truth and by prediction: ranks by counting (n is small) */
    size_t kk = (size_t)k < n ? (size_t)k : n, hits = 0;
    for (size_t i = 0; i < n; i++) {
        size_t above_t = 0, above_p = 0;
        for (size_t j = 0; j < n; j++) {
            above_t += truth[j] > truth[i] || (truth[j] == truth[i] && j < i);
            above_p += pred[j] > pred[i] || (pred[j] == pred[i] && j < i);
        }
        hits += above_t < kk && above_p < kk;
    }
    q->recall = kk ? (double)hits / (double)kk : NAN;
    q->k = (int)kk;
}

/* Trains on a seeded 80% of the task's rows and scores the rest. */
static void rank_task(const cv_task *t, uint64_t seed, cv_rank *q)
{
    memset(q, 0, sizeof *q);
    size_t n = t->nrows;
    if (n < 20) {
        q->why = su_strdup("fewer than 20 measured configs");
        return;
    }
    size_t *order = su_calloc(n, sizeof *order);
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    uint64_t h = seed;
    for (size_t i = n - 1; i > 0; i--) {
        h = su_hash_u64(h, i);
        size_t j = (size_t)(h % (i + 1)), tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
    q->train = n * 4 / 5;
    q->test = n - q->train;
    su_buf err = {0};
    float *x = row_features(t, order, n);
    float *y = su_calloc(n, sizeof *y), *pred = su_calloc(q->test, sizeof *pred);
    double *truth = su_calloc(q->test, sizeof *truth);
    for (size_t i = 0; i < n; i++)
        y[i] = (float)cv_gflops(t, t->rows[order[i]].cost);
    for (size_t i = 0; i < q->test; i++)
        truth[i] = y[q->train + i];
    tun_cost_model *m = tun_cost_model_new(TUN_OBJ_RANK, seed);
    size_t nf = (size_t)tun_feature_count();
    if (tun_cost_model_fit(m, q->train, x, y, NULL, &err) &&
        tun_cost_model_predict(m, q->test, x + q->train * nf, pred, &err)) {
        if (tun_cost_model_trained(m)) {
            rank_stats(truth, pred, q->test, RANK_K, q);
            q->done = true;
        } else {
            su_buf_puts(&err, "the model could not be trained (all training labels equal?)");
        }
    }
    if (!q->done)
        q->why = su_buf_take(&err);
    su_buf_free(&err);
    tun_cost_model_free(m);
    free(order);
    free(x);
    free(y);
    free(pred);
    free(truth);
}

/* ---- the report ------------------------------------------------------------ */

/* A trial count for tables: ">B" for never. */
static const char *trials_text(double n, int B, char *buf, size_t size)
{
    if (isinf(n))
        snprintf(buf, size, ">%d", B);
    else
        snprintf(buf, size, "%.0f", n);
    return buf;
}

static void print_header(const cv_opts *o, const char *last)
{
    printf("  %-14s", "tuner");
    for (int i = 0; i < o->nbudgets; i++)
        printf(" %8d", o->budgets[i]);
    printf("  %s\n", last);
}

static void print_task(const cv_task *t, size_t ti, const cv_results *r, const cv_opts *o, const cv_rank *q)
{
    const tun_task *k = t->task;
    double best = best_any(r, ti);
    char buf[32], buf2[32];
    printf("%s: %s %s (%.3f GFLOP), %lld configs; table %zu rows (%lld from the database, %lld measured now, "
           "%lld records not fitting the space)\n",
           t->name, k->template_name, k->shapes, (double)k->flops * 1e-9, (long long)t->space.size, t->nrows,
           (long long)t->loaded, (long long)t->measured, (long long)t->skipped);
    printf("  median best GFLOP/s after N trials over %d seeds; trials to reach 95%% of the best found (%.1f)\n",
           r->nseeds, best);
    print_header(o, "to 95%");
    for (size_t v = 0; v < NVARIANTS; v++) {
        if (!r->ran[v])
            continue;
        printf("  %-14s", variants[v].label);
        for (int i = 0; i < o->nbudgets; i++)
            printf(" %8.1f", med_best(r, ti, v, o->budgets[i]));
        printf("  %s\n", trials_text(med_reach(r, ti, v, 0.95 * best), r->B, buf, sizeof buf));
    }
    if (r->ran[3] && r->from[ti][0])
        printf("  xgb+transfer started from %zu records of %s\n", r->ntransfer[ti], r->from[ti]);
    else if (r->ran[3])
        printf("  xgb+transfer had nothing to start from: no other task of its template and form was selected\n");
    cv_target tg;
    if (target_of(r, ti, &tg))
        for (size_t v = 2; v < NVARIANTS; v++)
            if (tg.trials[v] >= 0)
                printf("  target: %s reaches random's best at %d (%.1f) in %s trials (<= %d): %s\n", variants[v].label,
                       r->B, tg.ref, trials_text(tg.trials[v], r->B, buf2, sizeof buf2), tg.limit[v],
                       tg.trials[v] <= tg.limit[v] ? "yes" : "NO");
    const cv_noise *z = &r->noise[ti];
    if (z->configs)
        printf("  noise: the table's %d best re-measured %d times side by side: medians %.1f-%.1f GFLOP/s, one "
               "config's rounds spread %.0f%% (median); the best row (%.1f) runs at %.1f (%+.0f%%)%s\n",
               z->configs, o->confirm_rounds, z->lo, z->hi, 100 * z->spread, z->top, z->top_median,
               100 * (z->top_median / z->top - 1),
               z->spread > 0.05 || z->top_median < 0.95 * z->top ? ": trials to 95% here are within the noise" : "");
    if (q->done)
        printf("  cost model ranking (trained on %zu rows, tested on %zu): pairwise accuracy %.3f, top-%d recall "
               "%.2f\n",
               q->train, q->test, q->pairwise, q->k, q->recall);
    else if (q->why)
        printf("  cost model ranking: not measured: %s\n", q->why);
    printf("\n");
}

/* Over tasks: each tuner's median best as a share of the best found
 * (geometric mean), the median of its trials to 95%, the targets met. */
static void print_summary(const cv_task *tasks, const cv_results *r, const cv_opts *o, const cv_rank *q,
                          const cv_bench *b)
{
    size_t n = r->ntasks;
    char buf[32];
    printf("summary over %zu tasks: median best as %% of the best found (geometric mean over tasks)\n", n);
    print_header(o, "to 95% (median over tasks)  targets met");
    double *tmp = su_calloc(n + 1, sizeof *tmp);
    for (size_t v = 0; v < NVARIANTS; v++) {
        if (!r->ran[v])
            continue;
        printf("  %-14s", variants[v].label);
        for (int i = 0; i < o->nbudgets; i++) {
            double lg = 0;
            for (size_t t = 0; t < n; t++)
                lg += log(fmax(med_best(r, t, v, o->budgets[i]), 1e-9) / fmax(best_any(r, t), 1e-9));
            printf(" %7.1f%%", 100 * exp(lg / (double)n));
        }
        int met = 0;
        cv_target tg;
        for (size_t t = 0; t < n; t++) {
            tmp[t] = med_reach(r, t, v, 0.95 * best_any(r, t));
            met += target_of(r, t, &tg) && tg.limit[v] && tg.trials[v] <= tg.limit[v];
        }
        printf("  %-26s", trials_text(median(tmp, (int)n), r->B, buf, sizeof buf));
        if (v >= 2 && r->ran[0])
            printf("  %d/%zu", met, n);
        printf("\n");
    }
    double pw = 0, rc = 0;
    int nq = 0;
    for (size_t t = 0; t < n; t++)
        if (q[t].done)
            pw += q[t].pairwise, rc += q[t].recall, nq++;
    if (nq)
        printf("  cost model ranking: mean pairwise accuracy %.3f, mean top-%d recall %.2f over %d tasks\n", pw / nq,
               RANK_K, rc / nq, nq);
    size_t rows = 0;
    for (size_t t = 0; t < n; t++)
        rows += tasks[t].nrows;
    printf("  measured %lld configs in %.0f s (%.2f s each); the table holds %zu rows\n", (long long)b->measured,
           b->measure_s, b->measured ? b->measure_s / (double)b->measured : 0, rows);
    free(tmp);
}

/* A number for JSON: null for never (infinite) or unknown (NaN). */
static json_t *jnum(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

/* A trial count for JSON (a median of two may end in .5): null for never. */
static json_t *jtrials(double x)
{
    return !isfinite(x) ? json_null() : x == floor(x) ? json_integer((json_int_t)x) : json_real(x);
}

static json_t *json_tuner(const cv_results *r, size_t t, size_t v, const cv_opts *o, double best)
{
    json_t *med = json_object(), *seeds = json_object(), *reach_s = json_array();
    for (int i = 0; i < o->nbudgets; i++) {
        char key[16];
        snprintf(key, sizeof key, "%d", o->budgets[i]);
        json_object_set_new(med, key, json_real(med_best(r, t, v, o->budgets[i])));
        json_t *per = json_array();
        for (int s = 0; s < r->nseeds; s++)
            json_array_append_new(per, json_real(curve_of(r, t, v, s)[o->budgets[i] - 1]));
        json_object_set_new(seeds, key, per);
    }
    for (int s = 0; s < r->nseeds; s++)
        json_array_append_new(reach_s, jtrials(reach(curve_of(r, t, v, s), r->B, 0.95 * best)));
    return json_pack("{s:o, s:o, s:o, s:o}", "median_best_gflops", med, "best_gflops_per_seed", seeds,
                     "trials_to_95", jtrials(med_reach(r, t, v, 0.95 * best)), "trials_to_95_per_seed", reach_s);
}

static json_t *json_task(const cv_task *t, size_t ti, const cv_results *r, const cv_opts *o, const cv_rank *q)
{
    double best = best_any(r, ti);
    json_t *tuners = json_object();
    for (size_t v = 0; v < NVARIANTS; v++)
        if (r->ran[v])
            json_object_set_new(tuners, variants[v].label, json_tuner(r, ti, v, o, best));
    json_t *jt = json_pack("{s:s, s:s, s:s, s:s, s:f, s:I, s:I, s:I, s:I, s:I, s:f, s:o}", "name", t->name, "hash",
                           t->task->hash, "template", t->task->template_name, "shapes", t->task->shapes, "gflop",
                           (double)t->task->flops * 1e-9, "space", (json_int_t)t->space.size, "table_rows",
                           (json_int_t)t->nrows, "loaded", (json_int_t)t->loaded, "measured",
                           (json_int_t)t->measured, "skipped", (json_int_t)t->skipped, "best_gflops", best,
                           "tuners", tuners);
    const cv_noise *z = &r->noise[ti];
    if (z->configs)
        json_object_set_new(jt, "noise", json_pack("{s:i, s:i, s:f, s:f, s:f, s:f, s:f}", "configs", z->configs,
                                                   "rounds", o->confirm_rounds, "best_row_gflops", z->top,
                                                   "best_row_median_gflops", z->top_median, "median_low_gflops",
                                                   z->lo, "median_high_gflops", z->hi, "spread", z->spread));
    if (r->ran[3]) {
        json_object_set_new(jt, "transfer_records", json_integer((json_int_t)r->ntransfer[ti]));
        json_object_set_new(jt, "transfer_from", json_string(r->from[ti]));
    }
    cv_target tg;
    if (target_of(r, ti, &tg)) {
        json_t *jg = json_pack("{s:f, s:i}", "random_best_gflops", tg.ref, "budget", r->B);
        for (size_t v = 2; v < NVARIANTS; v++)
            if (tg.trials[v] >= 0)
                json_object_set_new(jg, variants[v].label,
                                    json_pack("{s:o, s:i, s:b}", "trials", jtrials(tg.trials[v]), "limit", tg.limit[v],
                                              "met", tg.trials[v] <= tg.limit[v]));
        json_object_set_new(jt, "targets", jg);
    }
    if (q->done)
        json_object_set_new(jt, "ranking",
                            json_pack("{s:I, s:I, s:o, s:i, s:o}", "train", (json_int_t)q->train, "test",
                                      (json_int_t)q->test, "pairwise_accuracy", jnum(q->pairwise), "k", q->k,
                                      "top_k_recall", jnum(q->recall)));
    else if (q->why)
        json_object_set_new(jt, "ranking", json_pack("{s:s}", "not_measured", q->why));
    return jt;
}

static void print_json(const cv_task *tasks, const cv_results *r, const cv_opts *o, const cv_rank *q,
                       const cv_bench *b)
{
    json_t *budgets = json_array(), *jtasks = json_array(), *tuners = json_array();
    for (int i = 0; i < o->nbudgets; i++)
        json_array_append_new(budgets, json_integer(o->budgets[i]));
    for (size_t v = 0; v < NVARIANTS; v++)
        if (r->ran[v])
            json_array_append_new(tuners, json_string(variants[v].label));
    for (size_t t = 0; t < r->ntasks; t++)
        json_array_append_new(jtasks, json_task(&tasks[t], t, r, o, &q[t]));
    json_t *settings = json_pack("{s:o, s:i, s:I, s:o, s:i, s:i, s:i, s:i, s:s, s:s}", "budgets", budgets, "seeds",
                                 r->nseeds, "first_seed", (json_int_t)o->seed, "tuners", tuners, "batch", o->batch,
                                 "jobs", o->jobs, "repeat", o->repeat, "min_repeat_ms", o->min_repeat_ms, "db",
                                 o->db_path, "target", b->target.name);
    json_t *doc = json_pack("{s:o, s:o, s:I, s:f}", "settings", settings, "tasks", jtasks, "measured",
                            (json_int_t)b->measured, "measure_seconds", b->measure_s);
    char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    puts(s);
    free(s);
    json_decref(doc);
}

/* ---- main ------------------------------------------------------------------- */

/* The measurer and the database; false after a message. */
static bool bench_open(cv_bench *b, const cv_opts *o, ms_runner *runner, tg_target *tg)
{
    const char *why;
    if (!tg_target_parse(o->target, tg, &why)) {
        fprintf(stderr, "tuner_convergence: target '%s': %s\n", o->target, why);
        return false;
    }
    su_arena_init(&b->arena);
    tun_target_describe(tg, o->target, &b->arena, &b->target);
    b->m.runner = runner;
    b->m.target = tg;
    b->m.build = (ms_build_options){o->jobs, 0, o->compile_timeout};
    b->m.run = ms_run_defaults();
    b->m.run.repeat = o->repeat;
    b->m.run.min_repeat_ms = o->min_repeat_ms;
    b->m.run.timeout_s = o->timeout;
    b->verbose = o->verbose;
    su_buf err = {0};
    b->d = db_open(o->db_path, NULL, &err);
    if (!b->d)
        fprintf(stderr, "tuner_convergence: %s\n", su_buf_str(&err));
    su_buf_free(&err);
    return b->d != NULL;
}

int main(int argc, char **argv)
{
    cv_opts o;
    bool help = false, sel[NSPECS] = {0};
    cv_results r = {0};
    const tun_tuner_ops *ops[NVARIANTS] = {0};
    if (!parse_args(argc, argv, &o, &help) || (!help && (!select_tasks(o.tasks, sel) ||
                                                         !select_tuners(o.tuners, r.ran, ops)))) {
        usage(stderr);
        return 2;
    }
    if (help) {
        usage(stdout);
        return 0;
    }
    bool any = false;
    for (size_t v = 0; v < NVARIANTS; v++)
        any |= r.ran[v];
    if (!any) {
        fprintf(stderr, "tuner_convergence: none of the tuners asked for is in this build\n");
        return 1;
    }
    /* the runner forks first: before any thread (OpenMP, XGBoost) exists */
    su_buf err = {0};
    ms_runner *runner = ms_runner_start(&err);
    if (!runner) {
        fprintf(stderr, "tuner_convergence: %s\n", su_buf_str(&err));
        su_buf_free(&err);
        return 1;
    }
    cv_bench b = {0};
    tg_target tg;
    models ms = {0};
    cv_task tasks[NSPECS];
    size_t n = 0;
    cv_rank q[NSPECS] = {0};
    bool ok = bench_open(&b, &o, runner, &tg);
    for (size_t i = 0; ok && i < NSPECS; i++)
        if (sel[i] && (ok = task_init(&ms, o.models_dir, &specs[i], &tg.hw, &tasks[n])))
            ok = cv_table_load(&b, &tasks[n++], &err);
    if (ok && !(ok = db_session_begin(b.d, "tuner_convergence", b.target.name, "benchmarks/tuner_convergence",
                                      b.session)))
        su_buf_puts(&err, db_errmsg(b.d));
    r.ntasks = n;
    r.nseeds = o.seeds;
    r.B = o.budgets[o.nbudgets - 1];
    r.curves = su_calloc(n * NVARIANTS * (size_t)o.seeds * (size_t)r.B + 1, sizeof *r.curves);
    r.ntransfer = su_calloc(n + 1, sizeof *r.ntransfer);
    r.from = su_calloc(n + 1, sizeof *r.from);
    r.noise = su_calloc(n + 1, sizeof *r.noise);
    if (ok)
        ok = run_all(&b, tasks, &o, ops, &r, &err);
    if (ok)
        ok = check_noise(&b, tasks, &o, &r, &err);
    if (b.session[0] && !db_session_end(b.d, b.session, b.measured) && ok)
        su_buf_puts(&err, db_errmsg(b.d)), ok = false;
    for (size_t t = 0; ok && !o.no_ranking && t < n; t++)
        rank_task(&tasks[t], o.seed, &q[t]);
    if (ok && o.json)
        print_json(tasks, &r, &o, q, &b);
    else if (ok) {
        for (size_t t = 0; t < n; t++)
            print_task(&tasks[t], t, &r, &o, &q[t]);
        print_summary(tasks, &r, &o, q, &b);
    }
    if (err.len)
        fprintf(stderr, "tuner_convergence: %s\n", su_buf_str(&err));
    for (size_t t = 0; t < n; t++) {
        cv_task_free(&tasks[t]);
        free(q[t].why);
        free(r.from[t]);
    }
    free(r.from);
    for (size_t i = 0; i < ms.n; i++)
        rt_module_free(ms.mod[i]);
    free(r.curves);
    free(r.ntransfer);
    free(r.noise);
    db_close(b.d);
    su_arena_free(&b.arena);
    ms_runner_stop(runner);
    su_buf_free(&err);
    return ok ? 0 : 1;
}
