/* bench_dense.c — dense 1024 x 1024 x 1024 (nn.dense: x (M, K) times
 * w (N, K) transposed) with relay-tune's default schedule for the CPU,
 * next to OpenBLAS's cblas_sgemm in the same process when the build found
 * OpenBLAS. The weight is packed once ahead of time, as the compiled model
 * does for constant weights (the packing's own time is printed apart);
 * sgemm packs inside every call. Reports the best and the median of
 * --repeat runs after warm-up, in GFLOP/s with its % of the host's FP32
 * FMA peak (measured first, on the kernels' threads: bench_peak.c), and
 * the ratio.
 *
 *   env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE benchmarks/bench_dense [--size N] [--repeat R]
 *       [--emit-c FILE] [--config JSON | --db DB]
 *
 * --db times the best valid record of DB for target cpu instead of the
 * default (what `relay-tune compile --db` applies; benchmarks/dense1024.relay
 * is the same task at the default size, tuned like a model), and says when
 * the database has none.
 *
 * (this machine's environment sets those two variables, which makes
 * OpenBLAS pick a slower kernel; unset them for its best). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "benchmarks/bench_util.h"
#include "config.h"
#include "ir/transform/transform.h"
#include "schedule/schedule.h"
#include "targets/targets.h"

#ifdef HAVE_OPENBLAS
#include <cblas.h>
#endif

/* Times fn(ctx) `repeat` times after two warm-up runs; best and median. */
static void time_best_median(bench_fn fn, void *ctx, int repeat, double *best, double *median)
{
    bench_opts o = {repeat, 0, 2};
    bench_stats st = bench_time(fn, ctx, &o);
    *best = st.best;
    *median = st.median;
}

typedef struct kctx { tg_entry_fn fn; void *args[4]; } kctx;
static void run_kernel(void *p)
{
    kctx *k = p;
    if (k->fn(k->args) != 0)
        exit(1);
}

#ifdef HAVE_OPENBLAS
typedef struct bctx { int n; const float *a, *b; float *c; } bctx;
static void run_blas(void *p)
{
    bctx *k = p;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, k->n, k->n, k->n, 1.0f, k->a, k->n, k->b, k->n, 0.0f, k->c,
                k->n);
}
#endif

/* The best valid config of DB for the dense task of `text`, as compiling
 * picks it (weights bound, as tuning binds them); NULL with a note when the
 * database has none. Exits on errors. */
static char *tuned_config(const char *db_path, const char *text)
{
    rt_db *rdb = rt_db_open(db_path, 0, stderr);
    rt_module *rm = rdb ? rt_module_parse("dense.relay", text, strlen(text), stderr) : NULL;
    rt_opt_options oo = {.level = 3};
    if (!rm || rt_module_bind_random_params(rm, 0, 1, stderr) < 0 || rt_module_optimize(rm, &oo, stderr) != 0)
        exit(1);
    char *json = NULL;
    int kind = rt_task_best_config(rm, 0, rdb, "cpu", &json, NULL, stderr);
    if (kind < 0)
        exit(1);
    if (!json)
        printf("  %s has no valid record of this task for cpu: the default config\n", db_path);
    rt_module_free(rm);
    rt_db_close(rdb);
    return json;
}

int main(int argc, char **argv)
{
    int n = 1024, repeat = 20;
    const char *emit = NULL, *config = NULL, *db_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--emit-c") && i + 1 < argc)
            emit = argv[++i];
        else if (!strcmp(argv[i], "--config") && i + 1 < argc)
            config = argv[++i];
        else if (!strcmp(argv[i], "--db") && i + 1 < argc)
            db_path = argv[++i];
        else
            n = 0;
    }
    if (n < 1 || repeat < 1 || (config && db_path)) {
        fprintf(stderr, "usage: bench_dense [--size N] [--repeat R] [--emit-c FILE] [--config JSON | --db DB]\n");
        return 2;
    }
    char text[512];
    snprintf(text, sizeof text,
             "#[version = \"0.0.5\"]\ndef @main(%%x: Tensor[(%d, %d), float32], %%w: Tensor[(%d, %d), float32]) "
             "{ nn.dense(%%x, %%w) }\n", n, n, n, n);
    char *tuned = db_path ? tuned_config(db_path, text) : NULL;
    if (tuned)
        config = tuned;
    su_diags d = {0};
    ir_module *m = ir_parse("dense.relay", text, strlen(text), &d);
    tr_options o = {.level = 3};
    if (!m || !ir_infer_types(m, &d) || !tr_optimize(m, &o, &d)) {
        su_diags_print(stderr, &d);
        return 1;
    }
    /* main's body calls the one primitive function */
    const ir_expr *call = ir_module_find(m, "main")->func->u.func.body;
    const ir_expr *f = call->u.call.fn;
    tg_target t;
    const char *why;
    if (!tg_target_parse("cpu", &t, &why)) {
        fprintf(stderr, "bench_dense: %s\n", why);
        return 1;
    }
    bool consts[2] = {false, true};
    su_buf src = {0};
    tg_c_prelude(&src);
    sch_kernel kn;
    const sch_lowered *l = bench_lower(f, NULL, &t.hw, config, consts, "dense_kernel",
                                       TG_KERNEL_BODY | TG_KERNEL_PROLOGUES, &src, &kn);
    if (!l)
        return kn.failed == SCH_BUILD_CONFIG ? 2 : 1;
    if (emit) {
        FILE *out = fopen(emit, "w");
        if (out) {
            fputs(su_buf_str(&src), out);
            fclose(out);
        }
    }
    tg_lib *lib;
    char *log;
    if (tg_build(su_buf_str(&src), &t, &lib, &log)) {
        fprintf(stderr, "bench_dense: build failed:\n%s\n", log ? log : "");
        return 1;
    }
    char *cj = sch_config_json(&kn.space, &kn.cfg), peak_why[160], line[256];
    printf("dense %dx%dx%d, %d threads, config %s\n", n, n, n, t.cores, cj);
    free(cj);
    bench_peak peak;
    if (!bench_peak_measure(t.cores, 0.2, &peak, peak_why, sizeof peak_why)) {
        fprintf(stderr, "bench_dense: the FMA peak: %s\n", peak_why);
        return 1;
    }
    bench_peak_describe(&peak, line, sizeof line);
    printf("  %s\n", line);
    float *x = bench_buffer((size_t)n * n), *w = bench_buffer((size_t)n * n), *y = bench_buffer((size_t)n * n);
    float *wp = l->nprologues ? bench_buffer((size_t)l->prologues[0].packed->size) : NULL;
    unsigned seed = 1;
    for (size_t i = 0; i < (size_t)n * n; i++) {
        x[i] = (float)rand_r(&seed) / RAND_MAX - 0.5f;
        w[i] = (float)rand_r(&seed) / RAND_MAX - 0.5f;
    }
    double gflop = 2.0 * n * n * n * 1e-9, best, median;
    kctx k = {(tg_entry_fn)tg_lib_sym(lib, "dense_kernel"), {x, w, wp ? (void *)wp : (void *)y, y}};
    if (wp) {
        tg_entry_fn pack = (tg_entry_fn)tg_lib_sym(lib, "dense_kernel_p0");
        void *pa[2] = {w, wp};
        double t0 = bench_now();
        pack(pa);
        printf("  weight packing (once, ahead of time): %.3f ms\n", (bench_now() - t0) * 1e3);
    }
    time_best_median(run_kernel, &k, repeat, &best, &median);
    double ours = gflop / best;
    printf("  relay-tune %-7s schedule: best %.3f ms (%.1f GFLOP/s, %.0f%% of peak), median %.3f ms (%.1f GFLOP/s, "
           "%.0f%%)\n", tuned ? "tuned" : config ? "given" : "default", best * 1e3, ours, ours / peak.gflops * 100, median * 1e3,
           gflop / median, gflop / median / peak.gflops * 100);
#ifdef HAVE_OPENBLAS
    float *ref = bench_buffer((size_t)n * n);
    bctx b = {n, x, w, ref};
    time_best_median(run_blas, &b, repeat, &best, &median);
    double blas = gflop / best;
    printf("  OpenBLAS cblas_sgemm:        best %.3f ms (%.1f GFLOP/s, %.0f%% of peak), median %.3f ms (%.1f GFLOP/s, "
           "%.0f%%)\n", best * 1e3, blas, blas / peak.gflops * 100, median * 1e3, gflop / median,
           gflop / median / peak.gflops * 100);
    double err = 0, mx = 1e-6;
    for (size_t i = 0; i < (size_t)n * n; i++) {
        err = fmax(err, fabs((double)y[i] - ref[i]));
        mx = fmax(mx, fabs((double)ref[i]));
    }
    printf("  ratio (best): %.2f of OpenBLAS; max error relative to the output: %.1e\n", ours / blas, err / mx);
    free(ref);
#else
    printf("  (OpenBLAS not found at configure time: no baseline)\n");
#endif
    free(x);
    free(w);
    free(y);
    free(wp);
    free(tuned);
    su_buf_free(&src);
    tg_lib_close(lib);
    sch_kernel_free(&kn);
    ir_module_free(m);
    su_diags_free(&d);
    return 0;
}
