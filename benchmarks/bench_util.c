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

sch_lowered *bench_lower(const ir_expr *f, const char *tmpl, const sch_hw *hw, const char *config,
                         const bool *consts, const char *name, su_buf *src, sch_schedule **sched)
{
    su_diags d = {0};
    sch_space sp = {0};
    sch_config cfg = {0};
    sch_lowered *l = NULL;
    sch_schedule *s = sch_create(f, &d);
    sch_err e = s ? sch_apply_template(s, tmpl, hw, NULL, &sp) : SCH_E_UNSUPPORTED;
    if (!e && config) {
        /* the space is known now: read the config in it, then apply it to a
         * fresh schedule */
        char *bad = NULL;
        if (!sch_config_parse(&sp, config, &cfg, &bad)) {
            fprintf(stderr, "%s: config: %s\n", name, bad);
            free(bad);
            goto done;
        }
        sch_free(s);
        s = sch_create(f, &d);
        e = s ? sch_apply_template(s, tmpl, hw, &cfg, NULL) : SCH_E_UNSUPPORTED;
    }
    if (e) {
        fprintf(stderr, "%s: cannot schedule: %s\n", name, s && s->err_msg ? s->err_msg : sch_err_name(e));
        goto done;
    }
    sch_lower_opts lo = {consts, true, false};
    l = sch_lower(s, &lo);
    if (!l)
        fprintf(stderr, "%s: cannot lower: %s\n", name, s->err_msg ? s->err_msg : "");
    else
        tg_c_func(src, l->kernel, name);
done:
    su_diags_print(stderr, &d);
    su_diags_free(&d);
    sch_config_free(&cfg);
    sch_space_free(&sp);
    *sched = s;
    return l;
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
