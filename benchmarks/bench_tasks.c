/* bench_tasks.c — the tuning tasks of a model under their default schedules:
 * each task's kernel is built (all in one shared object) and timed on
 * random inputs (weights packed ahead of time), and the table gives
 * milliseconds, GFLOP/s and the model's total over all calls of the tasks
 * (tasks only: fused functions without a tunable anchor are not counted).
 *
 *   benchmarks/bench_tasks MODEL.relay [--repeat R] [--task N]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/transform/transform.h"
#include "schedule/schedule.h"
#include "targets/targets.h"
#include "tuner/tuner.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    const char *file = NULL;
    int repeat = 10;
    long only = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--task") && i + 1 < argc)
            only = atol(argv[++i]);
        else if (!file && argv[i][0] != '-')
            file = argv[i];
        else {
            fprintf(stderr, "usage: bench_tasks MODEL.relay [--repeat R] [--task N]\n");
            return 2;
        }
    }
    if (!file || repeat < 1)
        return 2;
    size_t len;
    char *text = su_read_file(file, &len);
    su_diags d = {0};
    ir_module *m = text ? ir_parse(file, text, len, &d) : NULL;
    tr_options o = {.level = 3};
    if (!m || !ir_infer_types(m, &d) || !tr_optimize(m, &o, &d)) {
        su_diags_print(stderr, &d);
        return 1;
    }
    tg_target t;
    const char *why;
    if (!tg_target_parse("cpu", &t, &why))
        return 1;
    tun_tasks tasks = {0};
    tun_extract_tasks(m, &tasks);
    size_t n = tasks.len;
    sch_schedule **ss = calloc(n, sizeof *ss);
    sch_lowered **ls = calloc(n, sizeof *ls);
    su_buf src = {0};
    tg_c_prelude(&src);
    for (size_t i = 0; i < n; i++) {
        if (only >= 0 && (long)i != only)
            continue;
        ss[i] = sch_create(tasks.items[i].func, &d);
        if (!ss[i] || sch_apply_template(ss[i], tasks.items[i].template_name, &t.hw, NULL, NULL)) {
            fprintf(stderr, "task %zu: %s\n", i, ss[i] && ss[i]->err_msg ? ss[i]->err_msg : "cannot schedule");
            return 1;
        }
        bool consts[64];
        for (int k = 0; k < 64; k++)
            consts[k] = k > 0;
        sch_lower_opts lo = {consts, true, false};
        ls[i] = sch_lower(ss[i], &lo);
        if (!ls[i])
            return 1;
        char name[32];
        snprintf(name, sizeof name, "k%zu", i);
        tg_c_func(&src, ls[i]->kernel, name);
    }
    tg_lib *lib;
    char *log;
    double t0 = now();
    if (tg_build(su_buf_str(&src), &t, &lib, &log)) {
        fprintf(stderr, "build failed:\n%s\n", log ? log : "");
        return 1;
    }
    printf("%s: %zu tasks, built in %.1f s, %d threads\n", file, n, now() - t0, t.cores);
    printf("%-3s %-22s %10s %9s %5s  %s\n", "#", "template", "ms", "GFLOP/s", "count", "inputs");
    double total = 0, total_flop = 0;
    for (size_t i = 0; i < n; i++) {
        if (!ls[i])
            continue;
        char name[32];
        snprintf(name, sizeof name, "k%zu", i);
        tg_entry_fn fn = (tg_entry_fn)tg_lib_sym(lib, name);
        const sch_func *f = ls[i]->kernel;
        void *args[64];
        unsigned seed = 7;
        for (int a = 0; a < f->nargs && a < 64; a++) {
            size_t bytes = (size_t)f->args[a]->size * (size_t)ir_dtype_bytes(f->args[a]->dtype);
            args[a] = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
            for (size_t k = 0; k < bytes / 4; k++)
                ((float *)args[a])[k] = (float)rand_r(&seed) / RAND_MAX - 0.5f;
        }
        double *tm = malloc((size_t)repeat * sizeof *tm);
        fn(args);
        for (int r = 0; r < repeat; r++) {
            double s0 = now();
            fn(args);
            tm[r] = now() - s0;
        }
        qsort(tm, (size_t)repeat, sizeof *tm, cmp_double);
        double med = tm[repeat / 2];
        const tun_task *tk = &tasks.items[i];
        printf("%-3zu %-22s %10.3f %9.1f %5d  %s\n", i, tk->template_name, med * 1e3, (double)tk->flops / med * 1e-9,
               tk->count, tk->shapes);
        total += med * tk->count;
        total_flop += (double)tk->flops * tk->count;
        free(tm);
        for (int a = 0; a < f->nargs && a < 64; a++)
            free(args[a]);
    }
    printf("tasks total: %.3f ms for %.3f GFLOP (%.1f GFLOP/s)\n", total * 1e3, total_flop * 1e-9,
           total_flop / total * 1e-9);
    tg_lib_close(lib);
    for (size_t i = 0; i < n; i++)
        sch_free(ss[i]);
    free(ss);
    free(ls);
    su_buf_free(&src);
    tun_tasks_free(&tasks);
    ir_module_free(m);
    free(text);
    su_diags_free(&d);
    return 0;
}
