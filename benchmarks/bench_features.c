/* bench_features.c — how fast the cost model's features are extracted
 * (tun_config_features: schedule, lower, walk the LoopIR; no compiling):
 * for each task of a model (weights bound, optimized as `tune` does), a
 * spread of configs of its space, timed; one line per task with features
 * per second, then the total. The xgb tuner's simulated annealing scores
 * configs at this rate the first time it meets them (they are cached).
 *
 *   benchmarks/bench_features [MODEL.relay] [--configs N] [--target T]
 *   benchmarks/bench_features [MODEL.relay] --dump TASK INDEX    (one config's nonzero features)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Times n configs of one space spread over its indices; false when one of
 * them cannot be instantiated. */
static bool bench_space(const tun_space *s, int n, float *f, double *secs, int *done)
{
    su_buf err = {0};
    bool ok = true;
    double t0 = now();
    int k = 0;
    for (; k < n && k < s->size; k++) {
        /* a stride coprime with most sizes visits the space evenly */
        int64_t idx = (int64_t)(((uint64_t)k * 2654435761u) % (uint64_t)s->size);
        if (!tun_config_features(s, idx, f, &err)) {
            fprintf(stderr, "bench_features: %s\n", su_buf_str(&err));
            su_buf_clear(&err);
            ok = false;
        }
    }
    *secs = now() - t0;
    *done = k;
    su_buf_free(&err);
    return ok;
}

/* Prints the nonzero features of one config, name = value. */
static int dump(const tun_space *s, int64_t index, float *f)
{
    su_buf err = {0};
    bool ok = tun_config_features(s, index, f, &err);
    if (!ok)
        fprintf(stderr, "bench_features: %s\n", su_buf_str(&err));
    su_buf_free(&err);
    for (int i = 0; ok && i < tun_feature_count(); i++)
        if (f[i] != 0)
            printf("%-24s %g\n", tun_feature_name(i), f[i]);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *file = "benchmarks/models/resnet18.relay", *target = "cpu";
    int configs = 200;
    long dump_task = -1;
    long long dump_index = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--configs") && i + 1 < argc)
            configs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dump") && i + 2 < argc) {
            dump_task = atol(argv[++i]);
            dump_index = atoll(argv[++i]);
        }
        else if (!strcmp(argv[i], "--target") && i + 1 < argc)
            target = argv[++i];
        else if (argv[i][0] != '-')
            file = argv[i];
        else {
            fprintf(stderr, "usage: bench_features [MODEL.relay] [--configs N] [--target T]\n");
            return 2;
        }
    }
    size_t len;
    char *text = su_read_file(file, &len);
    rt_module *m = text ? rt_module_parse(file, text, len, stderr) : NULL;
    free(text);
    rt_opt_options oo = {.level = 3};
    if (!m || rt_module_bind_random_params(m, 0, 1, stderr) < 0 || rt_module_optimize(m, &oo, stderr) != 0) {
        fprintf(stderr, "bench_features: cannot load %s\n", file);
        rt_module_free(m);
        return 1;
    }
    const rt_task *pub;
    size_t nt;
    rt_module_tasks(m, &pub, &nt);
    tg_target tg;
    const char *why;
    if (!tg_target_parse(target, &tg, &why)) {
        fprintf(stderr, "bench_features: target '%s': %s\n", target, why);
        rt_module_free(m);
        return 1;
    }
    float *f = su_malloc((size_t)tun_feature_count() * sizeof *f);
    if (dump_task >= 0) {
        tun_space s;
        su_buf err = {0};
        int rc = 1;
        if ((size_t)dump_task >= nt || !tun_space_init(&s, &m->tasks.items[dump_task], &tg.hw, &err))
            fprintf(stderr, "bench_features: no task %ld %s\n", dump_task, su_buf_str(&err));
        else {
            rc = dump(&s, dump_index, f);
            tun_space_free(&s);
        }
        su_buf_free(&err);
        free(f);
        rt_module_free(m);
        return rc;
    }
    printf("%d features per config; %d configs per task\n", tun_feature_count(), configs);
    printf("%-4s %-22s %8s %8s %12s\n", "#", "template", "space", "configs", "features/s");
    double total_s = 0;
    int total = 0, rc = 0;
    for (size_t i = 0; i < nt; i++) {
        tun_space s;
        su_buf err = {0};
        if (!tun_space_init(&s, &m->tasks.items[i], &tg.hw, &err)) {
            fprintf(stderr, "bench_features: task %zu: %s\n", i, su_buf_str(&err));
            su_buf_free(&err);
            rc = 1;
            continue;
        }
        su_buf_free(&err);
        double secs;
        int done;
        if (!bench_space(&s, configs, f, &secs, &done))
            rc = 1;
        printf("%-4zu %-22s %8lld %8d %12.0f\n", i, s.task->template_name, (long long)s.size, done,
               secs > 0 ? done / secs : 0);
        total_s += secs;
        total += done;
        tun_space_free(&s);
    }
    printf("total: %d configs in %.3f s: %.0f features/s\n", total, total_s, total_s > 0 ? total / total_s : 0);
    free(f);
    rt_module_free(m);
    return rc;
}
