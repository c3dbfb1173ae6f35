/* bench_tasks.c — the tuning tasks of a model under their default schedules:
 * each task's kernel is built (all in one shared object) and timed on
 * random inputs (weights packed ahead of time), and the table gives
 * milliseconds, GFLOP/s and the model's total over all calls of the tasks.
 * With --all, every distinct fused function is timed (the tunable tasks
 * and the rest: elementwise, shape ops, pooling, softmax, layer_norm), and
 * the total is the sum over all calls of the model: a lower bound of its
 * latency, without the graph's own overheads.
 *
 *   benchmarks/bench_tasks MODEL.relay [--repeat R] [--task N [--config JSON]] [--all]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/bench_util.h"
#include "ir/transform/transform.h"
#include "schedule/schedule.h"
#include "targets/targets.h"
#include "tuner/tuner.h"

/* Every distinct fused function called from @main, as tasks (the ones
 * without a tunable anchor get the default template). */
static void add_calls(const ir_expr *e, tun_tasks *out, su_map *seen)
{
    if (e->kind == IR_TUPLE) {
        for (int i = 0; i < e->u.tuple.n; i++)
            add_calls(e->u.tuple.fields[i], out, seen);
        return;
    }
    if (e->kind == IR_PROJ) {
        add_calls(e->u.proj.tuple, out, seen);
        return;
    }
    if (e->kind != IR_CALL)
        return;
    char idk[24];
    snprintf(idk, sizeof idk, "#%u", e->id);
    if (su_map_get(seen, idk))
        return;
    su_map_put(seen, su_strdup(idk), (void *)1);
    for (int i = 0; i < e->u.call.nargs; i++)
        add_calls(e->u.call.args[i], out, seen);
    if (!ir_func_is_primitive(e->u.call.fn))
        return;
    const char *tmpl;
    char *key = sch_workload_key(e->u.call.fn, &tmpl, NULL);
    uintptr_t k = (uintptr_t)su_map_get(seen, key);
    if (k) {
        out->items[k - 1].count++;
        free(key);
        return;
    }
    if (out->len == out->cap) {
        out->cap = out->cap ? out->cap * 2 : 64;
        out->items = su_realloc(out->items, out->cap * sizeof *out->items);
    }
    tun_task *t = &out->items[out->len++];
    memset(t, 0, sizeof *t);
    t->key = key;
    t->template_name = su_strdup(tmpl ? tmpl : "default");
    t->anchor = su_strdup("");
    su_buf sh = {0};
    const ir_type *rt = e->type;
    if (rt && rt->kind == IR_TY_TENSOR)
        for (int d = 0; d < rt->ndim; d++)
            su_buf_printf(&sh, "%s%lld", d ? "x" : "-> ", (long long)rt->shape[d]);
    t->shapes = su_buf_take(&sh);
    t->count = 1;
    t->func = e->u.call.fn;
    su_map_put(seen, t->key, (void *)(uintptr_t)out->len);
}

static void all_functions(const ir_module *m, tun_tasks *out)
{
    su_map seen = {0};
    add_calls(ir_module_find(m, "main")->func->u.func.body, out, &seen);
    for (size_t i = 0; i < seen.cap; i++)
        if (seen.slots[i].key && seen.slots[i].key[0] == '#')
            free((void *)seen.slots[i].key);
    su_map_free(&seen);
}

int main(int argc, char **argv)
{
    const char *file = NULL;
    int repeat = 10;
    long only = -1;
    bool all = false;
    const char *config = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--all"))
            all = true;
        else if (!strcmp(argv[i], "--config") && i + 1 < argc)
            config = argv[++i];
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--task") && i + 1 < argc)
            only = atol(argv[++i]);
        else if (!file && argv[i][0] != '-')
            file = argv[i];
        else {
            fprintf(stderr, "usage: bench_tasks MODEL.relay [--repeat R] [--task N [--config JSON]] [--all]\n");
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
    if (all)
        all_functions(m, &tasks);
    else
        tun_extract_tasks(m, &tasks);
    size_t n = tasks.len;
    sch_kernel *ks = calloc(n + 1, sizeof *ks);
    const sch_lowered **ls = calloc(n + 1, sizeof *ls);
    su_buf src = {0};
    tg_c_prelude(&src);
    /* every parameter but the first is a weight */
    bool consts[64];
    for (int k = 0; k < 64; k++)
        consts[k] = k > 0;
    for (size_t i = 0; i < n; i++) {
        if (only >= 0 && (long)i != only)
            continue;
        char name[32];
        snprintf(name, sizeof name, "k%zu", i);
        ls[i] = bench_lower(tasks.items[i].func, tasks.items[i].template_name, &t.hw, only >= 0 ? config : NULL,
                            consts, name, TG_KERNEL_BODY, &src, &ks[i]);
        if (!ls[i])
            return 1;
    }
    tg_lib *lib;
    char *log;
    double t0 = bench_now();
    if (tg_build(su_buf_str(&src), &t, &lib, &log)) {
        fprintf(stderr, "build failed:\n%s\n", log ? log : "");
        return 1;
    }
    printf("%s: %zu tasks, built in %.1f s, %d threads\n", file, n, bench_now() - t0, t.cores);
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
        bench_opts bo = {repeat, 0, 1};
        double med = bench_time(bench_run_entry, &(bench_entry){fn, args}, &bo).median;
        const tun_task *tk = &tasks.items[i];
        if (tk->flops)
            printf("%-3zu %-22s %10.3f %9.1f %5d  %s\n", i, tk->template_name, med * 1e3,
                   (double)tk->flops / med * 1e-9, tk->count, tk->shapes);
        else
            printf("%-3zu %-22s %10.3f %9s %5d  %s\n", i, tk->template_name, med * 1e3, "-", tk->count, tk->shapes);
        if (all && getenv("BENCH_TRACE")) {
            su_buf b = {0};
            sch_print_func(&b, ls[i]->kernel);
            fputs(su_buf_str(&b), stdout);
            su_buf_free(&b);
        }
        total += med * tk->count;
        total_flop += (double)tk->flops * tk->count;
        for (int a = 0; a < f->nargs && a < 64; a++)
            free(args[a]);
    }
    printf("%s total: %.3f ms for %.3f GFLOP of tasks\n", all ? "all calls" : "tasks", total * 1e3,
           total_flop * 1e-9);
    tg_lib_close(lib);
    for (size_t i = 0; i < n; i++)
        sch_kernel_free(&ks[i]);
    free(ks);
    free(ls);
    su_buf_free(&src);
    tun_tasks_free(&tasks);
    ir_module_free(m);
    free(text);
    su_diags_free(&d);
    return 0;
}
