/* bench_util.c — the clock, buffers and timing loop of the benchmarks
 * (bench_util.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "benchmarks/bench_util.h"
#include "targets/targets.h"

double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

float *bench_buffer(size_t floats)
{
    float *p = aligned_alloc(64, (floats * sizeof(float) + 63) & ~(size_t)63);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

void bench_fill(float *p, size_t n, unsigned *seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (float)rand_r(seed) / RAND_MAX - 0.5f;
}

bench_stats bench_time(bench_fn fn, void *ctx, const bench_opts *o)
{
    int repeat = o->repeat > 0 ? o->repeat : 1;
    for (int i = 0; i < o->warmup; i++)
        fn(ctx);
    /* calls per repeat: from one timed call, enough to last min_ms */
    double t0 = bench_now();
    fn(ctx);
    double once = bench_now() - t0;
    long number = 1;
    if (o->min_ms > 0 && once > 0)
        number = (long)ceil(o->min_ms * 1e-3 / once);
    number = number < 1 ? 1 : number;
    double *t = malloc((size_t)repeat * sizeof *t);
    double sum = 0, sq = 0;
    for (int r = 0; r < repeat; r++) {
        double s = bench_now();
        for (long k = 0; k < number; k++)
            fn(ctx);
        t[r] = (bench_now() - s) / (double)number;
        sum += t[r];
    }
    bench_stats st = {.repeats = repeat, .number = number, .mean = sum / repeat};
    for (int r = 0; r < repeat; r++)
        sq += (t[r] - st.mean) * (t[r] - st.mean);
    st.stddev = repeat > 1 ? sqrt(sq / (repeat - 1)) : 0;
    qsort(t, (size_t)repeat, sizeof *t, bench_cmp_double);
    st.best = t[0];
    st.worst = t[repeat - 1];
    st.median = t[repeat / 2];
    /* rounding in the sum must not put the mean outside [best, worst] */
    st.mean = fmin(fmax(st.mean, st.best), st.worst);
    free(t);
    return st;
}

const sch_lowered *bench_lower(const ir_expr *f, const char *tmpl, const sch_hw *hw, const char *config,
                               const bool *consts, const char *name, unsigned parts, su_buf *src, sch_kernel *k)
{
    sch_build_opts bo = {.template_name = tmpl, .hw = hw, .cfg_json = config, .param_const = consts};
    if (sch_build(f, &bo, k))
        tg_kernel_c(src, k->l, name, parts);
    else if (k->failed == SCH_BUILD_CONFIG)
        fprintf(stderr, "%s: config: %s\n", name, k->why);
    else if (k->failed == SCH_BUILD_LOWER)
        fprintf(stderr, "%s: cannot lower: %s\n", name, k->why);
    else
        fprintf(stderr, "%s: cannot schedule: %s\n", name, k->why && *k->why ? k->why : sch_err_name(k->err));
    su_diags_print(stderr, &k->diags);
    return k->l;
}

void **bench_kernel_args(const sch_func *f)
{
    void **args = calloc((size_t)f->nargs + 1, sizeof *args);
    unsigned seed = 7;
    for (int a = 0; a < f->nargs; a++) {
        size_t bytes = (size_t)f->args[a]->size * (size_t)ir_dtype_bytes(f->args[a]->dtype);
        args[a] = bench_buffer((bytes + 3) / 4);
        bench_fill(args[a], bytes / 4, &seed);
    }
    return args;
}

void bench_kernel_args_free(const sch_func *f, void **args)
{
    for (int a = 0; a < f->nargs; a++)
        free(args[a]);
    free(args);
}

void bench_run_entry(void *entry)
{
    bench_entry *e = entry;
    if (e->fn(e->args) != 0) {
        fprintf(stderr, "a kernel reported a failure\n");
        exit(1);
    }
}
