/* cmd_compile.c — `relay-tune compile MODEL.relay -o model.so`: binds the
 * weights (--params or --random-params), optimizes at -O3 and compiles @main
 * into one shared object with the ABI of relaytune_model.h; prints what went
 * in and the memory plan. Also cli_compile, which `run` and `bench` use to
 * compile a .relay file into the cache. Exit 0, 1 on failure, 2 for usage. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void help(FILE *out)
{
    fprintf(out,
            "usage: relay-tune compile MODEL.relay [--params W.npz ...] [--random-params SEED] [--target cpu|opencl]\n"
            "                          [--db DB] [-j N] [--layout-block N [--layout-auto]] [-o MODEL.so]\n"
            "  Compiles @main into one shared object holding every kernel, the packed weights\n"
            "  and the calls over a static memory plan; its C ABI is relaytune_model.h\n"
            "  (docs/compiled-model.md).\n"
            "  --params W.npz          bind these arrays (key = parameter name without %%) as weights;\n"
            "                          may be given several times\n"
            "  --random-params SEED    bind every parameter --params leaves but the first to seeded\n"
            "                          random weights\n"
            "  --target cpu|opencl     the target (default cpu; opencl: the model runs on that device)\n"
            "  --db DB                 build each task with its best config in tuning database DB\n"
            "  -j N                    run N compilers at once (default: one per core)\n"
            "  --winograd [auto|all|off] [--winograd-tile 2|4]  3x3 stride-1 convs as Winograd convs:\n"
            "                          auto (default) where the target's vectors make it pay, all (the\n"
            "                          word optional) every one, off none (docs/winograd.md)\n"
            "  --layout-block N        convs and the ops between them in NCHW[x]c, x up to N\n"
            "  --layout-auto           with --layout-block N: blocks chosen by a DP over the graph, N the vector lanes,\n"
            "                          by --db's kernel times where it has them\n"
            "                          (docs/layouts.md; default 0: NCHW)\n"
            "  -o MODEL.so             the object to write (default: MODEL's name with .so, here)\n"
            "  The parameters left unbound are the model's inputs.\n");
}

char *cli_compile(const char *model, const char *const *params, int nparams, bool random, unsigned long long seed,
                  const rt_opt_options *graph, const rt_compile_options *o, const char *out, rt_compile_report *rep)
{
    rt_module *m = cli_load_model(model, params, nparams, random, seed);
    if (!m)
        return NULL;
    char *path = NULL;
    rt_opt_options opt = {0};
    opt.level = 3;
    opt.layout_block = graph->layout_block;
    opt.layout_auto = graph->layout_auto;
    opt.winograd = graph->winograd;
    opt.winograd_tile = graph->winograd_tile;
    opt.winograd_target = o->target;
    if (opt.layout_auto) {
        opt.layout_db = o->db_path; /* the DP picks blocks by the database's kernel times */
        opt.layout_target = o->target;
    }
    if (rt_module_optimize(m, &opt, stderr) != 0)
        goto done;
    path = rt_model_compile(m, out, o, rep, stderr);
done:
    rt_module_free(m);
    return path;
}

static double mib(long long b)
{
    return (double)b / (1024.0 * 1024.0);
}

/* MODEL's name with .so, in this folder (malloc'd). */
static char *default_out(const char *model)
{
    const char *base = strrchr(model, '/') ? strrchr(model, '/') + 1 : model;
    size_t n = strlen(base);
    if (n > 6 && !strcmp(base + n - 6, ".relay"))
        n -= 6;
    char *def = malloc(n + 4);
    memcpy(def, base, n);
    strcpy(def + n, ".so");
    return def;
}

static void print_report(const char *model, const char *path, const rt_compile_report *r)
{
    printf("compiled %s -> %s in %.1f s\n", model, path, r->seconds);
    printf("  %d kernel calls, %d distinct kernels (%d with a database config)\n", r->calls, r->kernels, r->tuned);
    printf("  %d inputs, %d outputs; %d weights (%d packed at compile time), %.2f MiB\n", r->inputs, r->outputs,
           r->weights, r->packed, mib(r->weight_bytes));
    printf("  memory plan: %d intermediates, peak %.2f MiB (sum of all %.2f MiB, %.1fx less; most live at once "
           "%.2f MiB)\n",
           r->intermediates, mib(r->peak_bytes), mib(r->sum_bytes),
           r->peak_bytes ? (double)r->sum_bytes / (double)r->peak_bytes : 1.0, mib(r->live_bytes));
}

int cli_cmd_compile(int argc, char **argv)
{
    cli_opts o = {.cmd = "compile", .opt = {.winograd = RT_WINOGRAD_AUTO}};
    int rc = cli_options_parse(&o, CLI_COMPILE, argc, argv, help);
    if (rc >= 0) {
        cli_opts_free(&o);
        return rc;
    }
    char *def = o.out ? NULL : default_out(o.model);
    rt_compile_options co = {.target = o.target, .db_path = o.db, .jobs = o.jobs};
    rt_compile_report r;
    char *path = cli_compile(o.model, o.params.v, o.params.n, o.random, o.seed, &o.opt, &co, o.out ? o.out : def, &r);
    if (path)
        print_report(o.model, path, &r);
    rc = path ? 0 : 1;
    free(path);
    free(def);
    cli_opts_free(&o);
    return rc;
}
