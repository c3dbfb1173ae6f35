/* cmd_bench.c — `relay-tune bench MODEL.relay|MODEL.so`: the latency of a
 * compiled model (a .relay is compiled into the cache first): warm-up runs,
 * then N timed runs; prints the median, p10 and p90 in milliseconds, as text
 * or JSON (with min, max, mean and standard deviation, which
 * benchmarks/bench_e2e.py stores with `relay-tune db bench-add`). Inputs are seeded random values. Exit 0, 1 on failure, 2 for
 * usage. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"

static void help(FILE *out)
{
    fprintf(out,
            "usage: relay-tune bench MODEL.relay|MODEL.so [--target cpu|opencl] [--db DB] [--params W.npz]\n"
            "                        [--random-params SEED] [--input NAME=FILE.npy ...]\n"
            "                        [--repeat N] [--warmup N] [--json] [--profile] [--layout-block N]\n"
            "  Latency of the compiled model: --warmup runs (default 3), then --repeat timed runs\n"
            "  (default 20); prints the median, p10 and p90 in ms. A .relay file is compiled\n"
            "  into the cache first, with weights from --params (may be given several times),\n"
            "  seeded random ones for the parameters left, and tuned configs from --db.\n"
            "  Inputs come from --input, the others are seeded random values. --random-params\n"
            "  SEED seeds the random weights and inputs (default 0). Threads: as OpenMP decides\n"
            "  (OMP_NUM_THREADS). --layout-block N compiles the convs in NCHW[x]c, x up to N\n"
            "  (docs/layouts.md; default 0: NCHW). --winograd auto (the default) compiles as Winograd\n"
            "  convs the 3x3 stride-1 convs where the target's vectors make it pay, --winograd [all]\n"
            "  every one (--winograd-tile 2|4), off none (docs/winograd.md). --profile then times\n"
            "  --repeat more runs kernel by kernel and prints each step's median, its share\n"
            "  of their sum and its GFLOP/s, the slowest first (cpu models), after the profiled\n"
            "  runs' median split into their steps and the time outside them.\n");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile of sorted v[0..n) (linear interpolation). */
static double quantile(const double *v, int n, double q)
{
    double pos = q * (n - 1);
    int lo = (int)pos;
    int hi = lo + 1 < n ? lo + 1 : lo;
    return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The options' checks beyond the table: a compiled target, and no weights
 * or configs for a model compiled already. -1 to go on, else the status. */
static int check_options(const cli_opts *o)
{
    if (o->target && strcmp(o->target, "cpu") != 0 && strncmp(o->target, "cpu ", 4) != 0 &&
        strncmp(o->target, "opencl", 6) != 0) {
        cli_error("bench: target '%s': only compiled models (cpu, opencl) are benchmarked", o->target);
        return 2;
    }
    if (rt_target_check(o->target, 1, stderr) != 0)
        return 1;
    if (cli_is_so(o->model) && (o->params.n || o->db)) {
        cli_error("bench: %s is compiled already (no --params or --db)", o->model);
        return 2;
    }
    return -1;
}

static void print_json_string(const char *s)
{
    putchar('"');
    for (const char *c = s; *c; c++)
        if (*c == '"' || *c == '\\')
            printf("\\%c", *c);
        else if ((unsigned char)*c < 0x20)
            printf("\\u%04x", *c);
        else
            putchar(*c);
    putchar('"');
}

/* The per-kernel profile of some more runs, in ms. A run's steps tile it
 * (rtm_run reads the clock once after each kernel), so the time of a run
 * outside its steps is what passes between and around the kernels' calls:
 * the argument arrays, the output copies, the API's call. The steps'
 * medians sum to less than a run's median: each run has its slow steps
 * (a thread descheduled, a barrier waiting for it), and they are other
 * steps in another run. Both are reported, so that neither is taken for
 * the other (docs/compiled-model.md, "Where the time between kernels
 * goes"). */
typedef struct {
    int ns;               /* steps of a run */
    double *med, *min;    /* [ns]: each step's median and minimum */
    double sum_med;       /* the steps' medians, summed */
    double sum_min;       /* the steps' minimums, summed */
    double run;           /* the median of the profiled runs' times, end to end */
    double steps;         /* the median over runs of a run's steps, summed */
    double outside;       /* the median over runs of a run's time outside its steps */
} bench_profile;

static void profile_free(bench_profile *p)
{
    if (p) {
        free(p->med);
        free(p->min);
        free(p);
    }
}

/* The median of v[0..n), sorted in place. */
static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return quantile(v, n, 0.5);
}

/* Steps [s] of run r into all[s * runs + r]; per run its time into
 * tot[r] and its steps' sum into sum[r]. false after a message. */
static bool profile_time(rt_cmodel *cm, int ns, int runs, double *all, double *tot, double *sum)
{
    double *one = calloc((size_t)ns + 1, sizeof *one);
    bool ok = one != NULL;
    for (int r = 0; ok && r < runs; r++) {
        double t0 = now();
        ok = rt_cmodel_run_profiled(cm, one, stderr) == 0;
        tot[r] = (now() - t0) * 1e3;
        sum[r] = 0;
        for (int s = 0; ok && s < ns; s++) {
            all[(size_t)s * (size_t)runs + (size_t)r] = one[s] * 1e3;
            sum[r] += one[s] * 1e3;
        }
    }
    free(one);
    return ok;
}

/* The profile of `runs` more runs. The end-to-end runs before it are
 * untimed per step, so the profile's clock reads never touch the latency
 * reported. NULL after a message. */
static bench_profile *profile_runs(rt_cmodel *cm, int runs)
{
    int ns = rt_cmodel_num_steps(cm);
    if (ns < 0) {
        /* the API's message: which kind of model has no profile */
        (void)rt_cmodel_run_profiled(cm, NULL, stderr);
        return NULL;
    }
    bench_profile *p = calloc(1, sizeof *p);
    double *all = calloc((size_t)ns * (size_t)runs + 1, sizeof *all);
    double *tot = calloc((size_t)runs, sizeof *tot), *sum = calloc((size_t)runs, sizeof *sum);
    bool ok = p && all && tot && sum && (p->med = calloc((size_t)ns + 1, sizeof *p->med)) &&
              (p->min = calloc((size_t)ns + 1, sizeof *p->min)) && profile_time(cm, ns, runs, all, tot, sum);
    for (int s = 0; ok && s < ns; s++) {
        double *v = all + (size_t)s * (size_t)runs;
        p->med[s] = median_of(v, runs);
        p->min[s] = v[0];
        p->sum_med += p->med[s];
        p->sum_min += p->min[s];
    }
    if (ok) {
        p->ns = ns;
        for (int r = 0; r < runs; r++)
            all[r] = tot[r] - sum[r];
        p->outside = median_of(all, runs);
        p->run = median_of(tot, runs);
        p->steps = median_of(sum, runs);
    }
    free(all);
    free(tot);
    free(sum);
    if (!ok) {
        profile_free(p);
        return NULL;
    }
    return p;
}

/* The index order of the steps, the slowest first (ties: in run order). */
static const double *sort_key;
static int cmp_step(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    double x = sort_key[i], y = sort_key[j];
    return x > y ? -1 : x < y ? 1 : (i > j) - (i < j);
}

/* "0.000", never "-0.000", for a difference that rounds to zero. */
static double no_negative_zero(double ms)
{
    return ms > -5e-4 && ms < 5e-4 ? 0 : ms;
}

static void print_profile_json(const rt_cmodel *cm, const bench_profile *p)
{
    printf(", \"profile\": {\"sum_ms\": %.4f, \"min_sum_ms\": %.4f, \"run_median_ms\": %.4f, "
           "\"steps_median_ms\": %.4f, \"outside_median_ms\": %.4f, \"steps\": [",
           p->sum_med, p->sum_min, p->run, p->steps, p->outside);
    for (int s = 0; s < p->ns; s++) {
        printf("%s{\"step\": %d, \"kernel\": %d, \"name\": ", s ? ", " : "", s, rt_cmodel_step_kernel(cm, s));
        print_json_string(rt_cmodel_step_name(cm, s));
        printf(", \"median_ms\": %.4f, \"min_ms\": %.4f, \"flops\": %lld}", p->med[s], p->min[s],
               (long long)rt_cmodel_step_flops(cm, s));
    }
    printf("]}");
}

/* The head lines and the table of the steps, the slowest first. */
static void print_profile_table(const cli_opts *o, const rt_cmodel *cm, const bench_profile *p, double e2e)
{
    int ns = p->ns;
    printf("profile: %d steps, medians of %d runs; sum %.3f ms against %.3f ms end to end (%.3f ms more)\n", ns,
           o->runs, p->sum_med, e2e, no_negative_zero(e2e - p->sum_med));
    printf("  a profiled run %.3f ms: its steps %.3f ms, outside them %.3f ms (between and around the kernels); "
           "the steps' minimums sum to %.3f ms\n",
           p->run, p->steps, no_negative_zero(p->outside), p->sum_min);
    int *order = calloc((size_t)ns + 1, sizeof *order);
    for (int s = 0; s < ns; s++)
        order[s] = s;
    sort_key = p->med;
    qsort(order, (size_t)ns, sizeof *order, cmp_step);
    printf("%5s %6s %9s %6s %7s %8s  %s\n", "step", "kernel", "ms", "share", "cumul", "GFLOP/s", "ops and shape");
    double cum = 0, sum = p->sum_med;
    for (int k = 0; k < ns; k++) {
        int s = order[k];
        cum += p->med[s];
        long long fl = (long long)rt_cmodel_step_flops(cm, s);
        printf("%5d %6d %9.4f %5.1f%% %6.1f%% ", s, rt_cmodel_step_kernel(cm, s), p->med[s],
               sum > 0 ? 100 * p->med[s] / sum : 0, sum > 0 ? 100 * cum / sum : 0);
        if (fl > 0 && p->med[s] > 0)
            printf("%8.1f", (double)fl / (p->med[s] * 1e6));
        else
            printf("%8s", "-");
        printf("  %s\n", rt_cmodel_step_name(cm, s));
    }
    free(order);
}

/* The profile after the latency: in JSON the "profile" member of report's
 * object (each step in run order, with its minimum), else the table. */
static void print_profile(const cli_opts *o, const rt_cmodel *cm, const bench_profile *p, double e2e)
{
    if (o->json)
        print_profile_json(cm, p);
    else
        print_profile_table(o, cm, p, e2e);
}

/* ms[0..runs) of the timed runs after the warm-up ones, sorted; NULL after a message. */
static double *time_runs(rt_cmodel *cm, int warmup, int runs)
{
    for (int i = 0; i < warmup; i++)
        if (rt_cmodel_run(cm, stderr) != 0)
            return NULL;
    double *ms = calloc((size_t)runs, sizeof *ms);
    for (int i = 0; i < runs; i++) {
        double t0 = now();
        if (rt_cmodel_run(cm, stderr) != 0) {
            free(ms);
            return NULL;
        }
        ms[i] = (now() - t0) * 1e3;
    }
    qsort(ms, (size_t)runs, sizeof *ms, cmp_double);
    return ms;
}

/* The latency; then the profile when there is one. */
static void report(const cli_opts *o, const double *ms, size_t arena_bytes, const rt_cmodel *cm,
                   const bench_profile *prof)
{
    int n = o->runs;
    double mean = 0, var = 0;
    for (int i = 0; i < n; i++)
        mean += ms[i] / n;
    for (int i = 0; i < n && n > 1; i++)
        var += (ms[i] - mean) * (ms[i] - mean) / (n - 1);
    double med = quantile(ms, n, 0.5), p10 = quantile(ms, n, 0.1), p90 = quantile(ms, n, 0.9);
    const char *threads = getenv("OMP_NUM_THREADS");
    const char *kind = o->target && !strncmp(o->target, "opencl", 6) ? "opencl" : "cpu";
    if (o->json) {
        printf("{\"model\": ");
        print_json_string(o->model);
        printf(", \"target\": \"%s\", \"repeat\": %d, \"warmup\": %d, \"median_ms\": %.4f, \"p10_ms\": %.4f, "
               "\"p90_ms\": %.4f, \"min_ms\": %.4f, \"max_ms\": %.4f, \"mean_ms\": %.4f, \"stddev_ms\": %.4f, "
               "\"arena_bytes\": %zu",
               kind, n, o->warmup, med, p10, p90, ms[0], ms[n - 1], mean, sqrt(var), arena_bytes);
        if (prof)
            print_profile(o, cm, prof, med);
        printf("}\n");
    } else {
        printf("%s on %s%s%s%s: median %.3f ms, p10 %.3f ms, p90 %.3f ms (%d runs after %d warm-up)\n", o->model, kind,
               threads ? " (OMP_NUM_THREADS=" : "", threads ? threads : "", threads ? ")" : "", med, p10, p90, n,
               o->warmup);
        if (prof)
            print_profile(o, cm, prof, med);
    }
}

int cli_cmd_bench(int argc, char **argv)
{
    cli_opts o = {.cmd = "bench", .runs = 20, .warmup = 3, .opt = {.winograd = RT_WINOGRAD_AUTO}};
    int rc = cli_options_parse(&o, CLI_BENCH, argc, argv, help);
    if (rc < 0)
        rc = check_options(&o);
    rt_inputs *in = NULL;
    rt_cmodel *cm = NULL;
    double *ms = NULL;
    bench_profile *prof = NULL;
    if (rc >= 0)
        goto out;
    in = rt_inputs_new();
    if ((rc = cli_load_inputs(&o, in)) != 0)
        goto out;
    rc = 1;
    /* weights: --params, else seeded random ones (--random-params adds them to --params);
     * inputs: --input, the others seeded random */
    if (!(cm = cli_load_compiled(&o, o.random || !o.params.n, in, true)) || !(ms = time_runs(cm, o.warmup, o.runs)))
        goto out;
    if (o.profile && !(prof = profile_runs(cm, o.runs)))
        goto out;
    report(&o, ms, rt_cmodel_arena_bytes(cm), cm, prof);
    rc = 0;
out:
    free(ms);
    profile_free(prof);
    rt_cmodel_free(cm);
    rt_inputs_free(in);
    cli_opts_free(&o);
    return rc;
}
