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
            "usage: relay-tune bench MODEL.relay|MODEL.so [--target cpu] [--db DB] [--params W.npz]\n"
            "                        [--repeat N] [--warmup N] [--json]\n"
            "  Latency of the compiled model: --warmup runs (default 3), then --repeat timed runs\n"
            "  (default 20); prints the median, p10 and p90 in ms. A .relay file is compiled\n"
            "  into the cache first, with weights from --params or seeded random ones, and\n"
            "  with tuned configs from --db. Inputs are seeded random values. Threads: as\n"
            "  OpenMP decides (OMP_NUM_THREADS).\n");
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

int cli_cmd_bench(int argc, char **argv)
{
    const char *model = NULL;
    const char **params = calloc((size_t)argc, sizeof *params);
    int nparams = 0, rc = 2, repeat = 20, warmup = 3;
    bool json = false;
    rt_compile_options o = {0};
    rt_cmodel *cm = NULL;
    double *ms = NULL;
    char *path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            rc = 0;
            goto out;
        } else if (!strcmp(a, "--params") && has_value) {
            params[nparams++] = argv[++i];
        } else if (!strcmp(a, "--target") && has_value) {
            o.target = argv[++i];
        } else if (!strcmp(a, "--db") && has_value) {
            o.db_path = argv[++i];
        } else if ((!strcmp(a, "--repeat") || !strcmp(a, "--warmup")) && has_value) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < (a[2] == 'r' ? 1 : 0) || v > 1000000) {
                cli_error("bench: %s takes a count, not '%s'", a, argv[i]);
                goto out;
            }
            *(a[2] == 'r' ? &repeat : &warmup) = (int)v;
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (!cli_model_operand("bench", a, has_value, &model, help)) {
            goto out;
        }
    }
    if (!model) {
        help(stderr);
        goto out;
    }
    if (o.target && strcmp(o.target, "cpu") != 0 && strncmp(o.target, "cpu ", 4) != 0) {
        cli_error("bench: target '%s': only compiled models (cpu) are benchmarked", o.target);
        goto out;
    }
    rc = 1;
    if (rt_target_check(o.target, 1, stderr) != 0)
        goto out;
    size_t len = strlen(model);
    bool so = len > 3 && !strcmp(model + len - 3, ".so");
    if (so && (nparams || o.db_path)) {
        cli_error("bench: %s is compiled already (no --params or --db)", model);
        rc = 2;
        goto out;
    }
    if (!so && !(path = cli_compile(model, params, nparams, nparams == 0, 0, &o, NULL, NULL)))
        goto out;
    if (!(cm = rt_cmodel_load(path ? path : model, stderr)) || rt_cmodel_set_inputs(cm, NULL, 1, 0, stderr) != 0)
        goto out;
    for (int i = 0; i < warmup; i++)
        if (rt_cmodel_run(cm, stderr) != 0)
            goto out;
    ms = calloc((size_t)repeat, sizeof *ms);
    for (int i = 0; i < repeat; i++) {
        double t0 = now();
        if (rt_cmodel_run(cm, stderr) != 0)
            goto out;
        ms[i] = (now() - t0) * 1e3;
    }
    double mean = 0, var = 0;
    for (int i = 0; i < repeat; i++)
        mean += ms[i] / repeat;
    for (int i = 0; i < repeat && repeat > 1; i++)
        var += (ms[i] - mean) * (ms[i] - mean) / (repeat - 1);
    qsort(ms, (size_t)repeat, sizeof *ms, cmp_double);
    double med = quantile(ms, repeat, 0.5), p10 = quantile(ms, repeat, 0.1), p90 = quantile(ms, repeat, 0.9);
    const char *threads = getenv("OMP_NUM_THREADS");
    if (json) {
        printf("{\"model\": \"");
        for (const char *c = model; *c; c++)
            if (*c == '"' || *c == '\\')
                printf("\\%c", *c);
            else if ((unsigned char)*c < 0x20)
                printf("\\u%04x", *c);
            else
                putchar(*c);
        printf("\", \"target\": \"cpu\", \"repeat\": %d, \"warmup\": %d, \"median_ms\": %.4f, \"p10_ms\": %.4f, "
               "\"p90_ms\": %.4f, \"min_ms\": %.4f, \"max_ms\": %.4f, \"mean_ms\": %.4f, \"stddev_ms\": %.4f, "
               "\"arena_bytes\": %zu}\n",
               repeat, warmup, med, p10, p90, ms[0], ms[repeat - 1], mean, sqrt(var), rt_cmodel_arena_bytes(cm));
    } else {
        printf("%s on cpu%s%s%s: median %.3f ms, p10 %.3f ms, p90 %.3f ms (%d runs after %d warm-up)\n", model,
               threads ? " (OMP_NUM_THREADS=" : "", threads ? threads : "", threads ? ")" : "", med, p10, p90, repeat,
               warmup);
    }
    rc = 0;
out:
    free(ms);
    free(path);
    rt_cmodel_free(cm);
    free(params);
    return rc;
}
