/* bench_kernels.c — issue 7's per-shape benchmark: every conv2d, dense and
 * batch_matmul task of the given models (weights bound to seeded random
 * values, optimized at -O3, tasks as `relay-tune tasks` lists them; a shape
 * shared by two models once; benchmarks/dense1024.relay is dense 1024^3),
 * each timed in this process four ways: relay-tune's kernel under the template's default config, under
 * the tuned config (the best valid record of --db, as `relay-tune compile
 * --db` picks it; the default when the database has none, and the table
 * says so), oneDNN and OpenBLAS (bench_baselines.c). It prints GFLOP/s and
 * the ratios tuned/oneDNN and tuned/OpenBLAS per shape, each GFLOP/s with
 * its % of the host's FP32 FMA peak (measured first, in the same run, on
 * the same threads: bench_peak.c), then the conv geomeans and minimums, the
 * large 3x3 convs' % of peak and the dense/batch_matmul minimums against
 * issue 12's targets, and stores every timing in the database's benchmark
 * table with the commit, host, ISA and peak (docs/benchmarks.md).
 *
 *   env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_WAIT_POLICY=passive \
 *   benchmarks/bench_kernels [--db DB] [--repeat R] [--min-ms MS] [--threads T]
 *       [--commit C] [--no-store] MODEL.relay...
 *
 * Dense tasks with one row (the classifier's matrix-vector product) are
 * left out: the targets are about matrix products. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "benchmarks/bench_kernels.h"
#include "targets/targets.h"

/* One distinct shape and what was measured on it. */
typedef struct row {
    const tun_task *task;
    rt_module *m;
    size_t index;           /* the task's index in m */
    char models[64];        /* the models that have it */
    char name[160];         /* the shape for people */
    bk_shape shape;
    char *tuned;            /* the tuned config (schedule JSON), NULL: none in the database */
    int kind;               /* rt_task_best_config's answer */
    bench_stats st[4];      /* default, tuned, oneDNN, OpenBLAS */
    bool have[4];
} row;

enum { DEF, TUNED, DNN, BLAS };
static const char *const source_names[4] = {"default", "tuned", "onednn", "openblas"};

typedef struct options {
    const char *db, *commit;
    bench_opts timing;
    int threads;
    bool store;
    bench_peak peak;        /* the host's, measured at the start */
} options;

/* ---- the shape of a task, read from its fused function ----------------------- */

static int64_t attr_ints(const ir_expr *call, const char *name, int64_t *out, int max)
{
    const ir_op_def *op = call->u.call.fn->u.op.def;
    int idx = ir_op_attr_index(op, name, strlen(name));
    return idx < 0 ? 0 : ir_attr_ints(call->u.call.attrs, idx, out, max);
}

static void anchor_shape(const ir_expr *call, bk_shape *s)
{
    const char *op = call->u.call.fn->u.op.def->name;
    const ir_type *a = call->u.call.args[0]->type, *b = call->u.call.args[1]->type, *r = call->type;
    if (!strcmp(op, "nn.conv2d")) {
        s->kind = BK_CONV;
        s->n = a->shape[0], s->c = a->shape[1], s->h = a->shape[2], s->w = a->shape[3];
        s->o = b->shape[0], s->kh = b->shape[2], s->kw = b->shape[3];
        s->oh = r->shape[2], s->ow = r->shape[3];
        int64_t st[2] = {1, 1}, dil[2] = {1, 1}, pad[4] = {0};
        attr_ints(call, "strides", st, 2);
        attr_ints(call, "dilation", dil, 2);
        int np = (int)attr_ints(call, "padding", pad, 4);
        if (np == 2)
            pad[2] = pad[0], pad[3] = pad[1];
        else if (np == 1)
            pad[1] = pad[2] = pad[3] = pad[0];
        memcpy(s->stride, st, sizeof st);
        memcpy(s->dilation, dil, sizeof dil);
        memcpy(s->pad, pad, sizeof pad);
        int idx = ir_op_attr_index(call->u.call.fn->u.op.def, "groups", 6);
        s->groups = idx < 0 ? 1 : ir_attr_int(call->u.call.attrs, idx);
    } else if (!strcmp(op, "nn.dense")) {
        s->kind = BK_DENSE;
        s->m = a->shape[0], s->k = a->shape[1], s->nn = b->shape[0];
    } else {
        int tb = ir_op_attr_index(call->u.call.fn->u.op.def, "transpose_b", 11);
        s->kind = BK_BMM;
        s->transpose_b = tb < 0 || ir_attr_bool(call->u.call.attrs, tb);
        s->batch = a->shape[0], s->m = a->shape[1], s->k = a->shape[2];
        s->nn = s->transpose_b ? b->shape[1] : b->shape[2];
    }
}

/* Walks the fused body: the anchor's shape, and the ops fused after it. An
 * add of a parameter as large as the output is the residual; a smaller one
 * (broadcast per channel or column) the bias. */
static bool walk(const ir_expr *e, const ir_type *out, bk_shape *s)
{
    if (e->kind != IR_CALL || e->u.call.fn->kind != IR_OP) {
        return false;
    }
    bool found = false;
    for (int i = 0; i < e->u.call.nargs; i++)
        found |= walk(e->u.call.args[i], out, s);
    const char *op = e->u.call.fn->u.op.def->name;
    if (!strcmp(op, "nn.conv2d") || !strcmp(op, "nn.dense") || !strcmp(op, "nn.batch_matmul")) {
        anchor_shape(e, s);
        return true;
    }
    if (!found)
        return false;
    if (!strcmp(op, "add") || !strcmp(op, "nn.bias_add"))
        for (int i = 0; i < e->u.call.nargs; i++) {
            const ir_expr *x = e->u.call.args[i];
            if (x->kind == IR_VAR || x->kind == IR_CONST)
                *(ir_type_numel(x->type) == ir_type_numel(out) ? &s->residual : &s->bias) = true;
        }
    s->relu |= !strcmp(op, "nn.relu");
    s->gelu |= !strcmp(op, "erf");
    return true;
}

/* ---- building and timing our kernels --------------------------------------------- */

/* Builds the default and tuned kernels of every row in one shared object
 * and times them. */
static bool time_ours(row *rows, size_t n, const options *o)
{
    tg_target t;
    const char *why;
    if (!tg_target_parse("cpu", &t, &why))
        return false;
    su_buf src = {0};
    tg_c_prelude(&src);
    sch_kernel *ks = calloc(2 * n, sizeof *ks);
    const sch_lowered **ls = calloc(2 * n, sizeof *ls);
    bool good = true;
    for (size_t i = 0; i < 2 * n && good; i++) {
        row *r = &rows[i / 2];
        if (i % 2 == TUNED && !r->tuned)
            continue;
        char name[40];
        snprintf(name, sizeof name, "k%zu_%s", i / 2, source_names[i % 2]);
        ls[i] = bench_lower(r->task->func, r->task->template_name, &t.hw, i % 2 ? r->tuned : NULL,
                            r->task->param_const, name, TG_KERNEL_BODY, &src, &ks[i]);
        good = ls[i] != NULL;
    }
    tg_lib *lib = NULL;
    char *log = NULL;
    double t0 = bench_now();
    if (good && tg_build(su_buf_str(&src), &t, &lib, &log)) {
        fprintf(stderr, "bench_kernels: build failed:\n%s\n", log ? log : "");
        good = false;
    }
    if (good)
        printf("built %zu kernels in %.1f s\n", n, bench_now() - t0);
    for (size_t i = 0; i < 2 * n && good; i++) {
        if (!ls[i])
            continue;
        char name[40];
        snprintf(name, sizeof name, "k%zu_%s", i / 2, source_names[i % 2]);
        bench_entry c = {(tg_entry_fn)tg_lib_sym(lib, name), bench_kernel_args(ls[i]->kernel)};
        rows[i / 2].st[i % 2] = bench_time(bench_run_entry, &c, &o->timing);
        rows[i / 2].have[i % 2] = true;
        bench_kernel_args_free(ls[i]->kernel, c.args);
    }
    if (lib)
        tg_lib_close(lib);
    for (size_t i = 0; i < 2 * n; i++)
        sch_kernel_free(&ks[i]);
    free(ks);
    free(ls);
    su_buf_free(&src);
    return good;
}

/* ---- the shapes of the models ----------------------------------------------------------- */

static rt_module *load(const char *path)
{
    rt_module *m = rt_module_load(path, stderr);
    rt_opt_options oo = {.level = 3};
    if (!m || rt_module_bind_random_params(m, 0, 1, stderr) < 0 || rt_module_optimize(m, &oo, stderr) != 0) {
        rt_module_free(m);
        return NULL;
    }
    return m;
}

/* The model's name for people: the file name without folder and .relay. */
static void model_label(const char *path, char *out, size_t n)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t k = strcspn(b, ".");
    snprintf(out, n, "%.*s", (int)k, b);
}

/* Adds the model's conv2d, dense and batch_matmul tasks not seen yet. */
static void add_rows(rt_module *m, const char *label, rt_db *rdb, row **rows, size_t *n)
{
    const rt_task *pub;
    size_t nt;
    rt_module_tasks(m, &pub, &nt);
    for (size_t i = 0; i < nt; i++) {
        const tun_task *t = &m->tasks.items[i];
        bk_shape s = {0};
        if (!walk(t->func->u.func.body, t->func->u.func.body->type, &s) || (s.kind == BK_DENSE && s.m == 1))
            continue;
        size_t k = 0;
        while (k < *n && strcmp((*rows)[k].task->key, t->key) != 0)
            k++;
        if (k < *n) {
            row *r = &(*rows)[k];
            size_t len = strlen(r->models);
            snprintf(r->models + len, sizeof r->models - len, ",%s", label);
            continue;
        }
        *rows = realloc(*rows, (*n + 1) * sizeof **rows);
        row *r = &(*rows)[(*n)++];
        *r = (row){.task = t, .m = m, .index = i, .shape = s};
        snprintf(r->models, sizeof r->models, "%s", label);
        bk_shape_name(&s, r->name, sizeof r->name);
        r->kind = rdb ? rt_task_best_config(m, i, rdb, "cpu", &r->tuned, NULL, stderr) : 0;
    }
}

/* ---- the report ------------------------------------------------------------------------------- */

static double gflops(const row *r, int src)
{
    return r->have[src] && r->st[src].median > 0 ? (double)r->task->flops / r->st[src].median * 1e-9 : 0;
}

/* relay-tune's tuned config, or the default where the database has none */
static int ours(const row *r)
{
    return r->have[TUNED] ? TUNED : DEF;
}

/* src's GFLOP/s over a baseline's; 0 when either is missing */
static double ratio(const row *r, int src, int base)
{
    double a = gflops(r, src), b = gflops(r, base);
    return a > 0 && b > 0 ? a / b : 0;
}

/* GFLOP/s and its % of the peak: "  512.3  92%" */
static void put_gflops(const options *o, double g, char *out, size_t n)
{
    snprintf(out, n, " %8.1f %3.0f%%", g, o->peak.gflops > 0 ? g / o->peak.gflops * 100 : 0);
}

static void print_rows(const row *rows, size_t n, const options *o)
{
    printf("\n%-52s %-17s %7s %13s %13s %13s %13s %6s %6s\n", "shape (GFLOP/s, % of peak; medians)", "models",
           "GFLOP", "default", "tuned", "oneDNN", "OpenBLAS", "t/dnn", "t/blas");
    for (size_t i = 0; i < n; i++) {
        const row *r = &rows[i];
        char col[4][32];
        for (int src = 0; src < 4; src++)
            put_gflops(o, gflops(r, src), col[src], sizeof col[src]);
        if (!r->have[TUNED])
            snprintf(col[TUNED], sizeof col[TUNED], " %13s", r->kind < 0 ? "error" : "=def");
        printf("%-52.52s %-17.17s %7.4f%s%s%s%s %6.2f %6.2f\n", r->name, r->models, (double)r->task->flops * 1e-9,
               col[DEF], col[TUNED], col[DNN], col[BLAS], ratio(r, ours(r), DNN), ratio(r, ours(r), BLAS));
    }
    printf("(%%: of the FP32 FMA peak on %d threads, %.1f GFLOP/s; =def: no valid record in the database, the tuned\n"
           " config is the default; t/dnn, t/blas: tuned over oneDNN, OpenBLAS; oneDNN fuses bias, residual and\n"
           " activation as the task does, OpenBLAS fuses nothing)\n", o->peak.threads, o->peak.gflops);
}

/* The geomean and the minimum of src/base over the rows of one kind
 * (conv: true for the conv2d rows, false for dense and batch_matmul). */
typedef struct spread {
    int n;
    double geomean, min;
    const char *min_name;
} spread;

static spread ratios(const row *rows, size_t n, bool conv, int src, int base)
{
    spread s = {0, 0, INFINITY, ""};
    double logsum = 0;
    for (size_t i = 0; i < n; i++) {
        const row *r = &rows[i];
        double q = ratio(r, src < 0 ? ours(r) : src, base);
        if ((r->shape.kind == BK_CONV) != conv || q <= 0)
            continue;
        logsum += log(q);
        s.n++;
        if (q < s.min)
            s.min = q, s.min_name = r->name;
    }
    s.geomean = s.n ? exp(logsum / s.n) : 0;
    return s;
}

static const char *verdict(bool met)
{
    return met ? "met" : "MISSED";
}

/* The large 3x3 convs: stride 1, 64 or more channels in and out (the
 * resnets' stages), where a kernel has the work to run near the peak. */
static bool large_3x3(const bk_shape *s)
{
    return s->kind == BK_CONV && s->kh == 3 && s->kw == 3 && s->stride[0] == 1 && s->stride[1] == 1 && s->c >= 64 &&
           s->o >= 64 && s->groups == 1;
}

/* issue 12's targets; "tuned" is the default where the database has none */
static void summary(const row *rows, size_t n, const options *o)
{
    printf("\n");
    spread t = ratios(rows, n, true, -1, DNN), d = ratios(rows, n, true, DEF, DNN);
    if (t.n) {
        printf("conv2d, %d shapes: tuned/oneDNN geomean %.2f (target >= 0.90: %s), min %.2f at %s (target >= 0.75: "
               "%s)\n", t.n, t.geomean, verdict(t.geomean >= 0.9), t.min, t.min_name, verdict(t.min >= 0.75));
        printf("conv2d, %d shapes: default/oneDNN geomean %.2f (target >= 0.75: %s), min %.2f at %s\n", d.n,
               d.geomean, verdict(d.geomean >= 0.75), d.min, d.min_name);
    }
    double pmin = INFINITY;
    const char *pmin_name = "";
    int nlarge = 0;
    for (size_t i = 0; i < n; i++)
        if (large_3x3(&rows[i].shape) && o->peak.gflops > 0) {
            double pct = gflops(&rows[i], ours(&rows[i])) / o->peak.gflops * 100;
            nlarge++;
            if (pct < pmin)
                pmin = pct, pmin_name = rows[i].name;
        }
    if (nlarge)
        printf("large 3x3 convs, %d shapes: tuned min %.0f%% of the peak at %s (target >= 85%%: %s)\n", nlarge, pmin,
               pmin_name, verdict(pmin >= 85));
    t = ratios(rows, n, false, -1, BLAS);
    d = ratios(rows, n, false, DEF, BLAS);
    if (t.n) {
        printf("dense and batch_matmul, %d shapes: tuned/OpenBLAS min %.2f at %s (target >= 1.00: %s)\n", t.n, t.min,
               t.min_name, verdict(t.min >= 1.0));
        printf("dense and batch_matmul, %d shapes: default/OpenBLAS min %.2f at %s (target >= 0.90: %s)\n", d.n,
               d.min, d.min_name, verdict(d.min >= 0.9));
    }
}

/* Stores each timing as a benchmark result named after the task. */
static bool store(rt_db *rdb, const row *rows, size_t n, const options *o)
{
    double now = db_now();
    bool good = true;
    for (size_t i = 0; i < n && good; i++)
        for (int src = 0; src < 4 && good; src++) {
            const row *r = &rows[i];
            const bench_stats *st = &r->st[src];
            if (!r->have[src])
                continue;
            char model[256];
            snprintf(model, sizeof model, "kernel %s %s", r->task->hash, r->name);
            db_bench b = {model, "cpu", source_names[src], st->mean, st->median, st->best, st->worst, st->stddev,
                          st->repeats, o->commit, now, tun_host_name(), o->peak.isa, o->peak.gflops, o->threads};
            good = db_add_bench(rdb->d, &b);
        }
    if (!good)
        fprintf(stderr, "bench_kernels: %s\n", db_errmsg(rdb->d));
    else
        printf("stored %zu shapes' timings in %s (relay-tune db benchmarks --db %s)\n", n, o->db, o->db);
    return good;
}

/* ---- main ---------------------------------------------------------------------------------------- */

static int usage(void)
{
    fprintf(stderr, "usage: bench_kernels [--db DB] [--repeat R] [--min-ms MS] [--threads T] [--commit C] "
                    "[--no-store] MODEL.relay...\n");
    return 2;
}

int main(int argc, char **argv)
{
    options o = {.commit = "", .timing = {5, 50, 1}, .threads = 2, .store = true};
    const char **models = calloc((size_t)argc, sizeof *models);
    int nmodels = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool v = i + 1 < argc;
        if (!strcmp(a, "--db") && v)
            o.db = argv[++i];
        else if (!strcmp(a, "--commit") && v)
            o.commit = argv[++i];
        else if (!strcmp(a, "--repeat") && v)
            o.timing.repeat = atoi(argv[++i]);
        else if (!strcmp(a, "--min-ms") && v)
            o.timing.min_ms = atof(argv[++i]);
        else if (!strcmp(a, "--threads") && v)
            o.threads = atoi(argv[++i]);
        else if (!strcmp(a, "--no-store"))
            o.store = false;
        else if (a[0] != '-')
            models[nmodels++] = a;
        else
            return usage();
    }
    if (!nmodels || o.timing.repeat < 1 || o.timing.min_ms < 0 || o.threads < 1)
        return usage();
    char threads[160], peak_why[160], peak[256];
    bk_set_threads(o.threads, threads, sizeof threads);
    printf("threads: %s; OPENBLAS_CORETYPE %s\n", threads, getenv("OPENBLAS_CORETYPE") ? "SET (slows OpenBLAS)" : "unset");
    if (!bench_peak_measure(o.threads, 0.2, &o.peak, peak_why, sizeof peak_why)) {
        fprintf(stderr, "bench_kernels: the FMA peak: %s\n", peak_why);
        return 1;
    }
    bench_peak_describe(&o.peak, peak, sizeof peak);
    printf("%s\n", peak);
    rt_db *rdb = o.db ? rt_db_open(o.db, RT_DB_CREATE, stderr) : NULL;
    if (o.db && !rdb)
        return 1;
    rt_module **mods = calloc((size_t)nmodels, sizeof *mods);
    row *rows = NULL;
    size_t n = 0;
    for (int i = 0; i < nmodels; i++) {
        char label[64];
        if (!(mods[i] = load(models[i])))
            return 1;
        model_label(models[i], label, sizeof label);
        add_rows(mods[i], label, rdb, &rows, &n);
    }
    size_t tuned = 0;
    for (size_t i = 0; i < n; i++)
        tuned += rows[i].tuned != NULL;
    printf("%zu shapes; %zu with a tuned config in %s\n", n, tuned, o.db ? o.db : "(no --db)");
    if (!time_ours(rows, n, &o))
        return 1;
    /* one library after the other: OpenBLAS's threads spin a while after
     * each call, which would slow whatever ran next on these cores */
    for (size_t i = 0; i < n; i++) {
        char why[160] = "";
        rows[i].have[DNN] = bk_onednn_time(&rows[i].shape, &o.timing, &rows[i].st[DNN], why, sizeof why);
        if (!rows[i].have[DNN])
            fprintf(stderr, "bench_kernels: %s: oneDNN: %s\n", rows[i].name, why);
    }
    for (size_t i = 0; i < n; i++) {
        char why[160] = "";
        rows[i].have[BLAS] = bk_openblas_time(&rows[i].shape, &o.timing, &rows[i].st[BLAS], why, sizeof why);
        if (!rows[i].have[BLAS])
            fprintf(stderr, "bench_kernels: %s: OpenBLAS: %s\n", rows[i].name, why);
    }
    print_rows(rows, n, &o);
    summary(rows, n, &o);
    int rc = rdb && o.store && !store(rdb, rows, n, &o);
    for (size_t i = 0; i < n; i++)
        free(rows[i].tuned);
    free(rows);
    for (int i = 0; i < nmodels; i++)
        rt_module_free(mods[i]);
    free(mods);
    free(models);
    rt_db_close(rdb);
    return rc;
}
