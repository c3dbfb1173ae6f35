/* cmd_tasks.c — `relay-tune tasks MODEL.relay`: optimize the model and list
 * its tuning tasks (distinct fused functions with a tunable anchor; on an
 * opencl target also those whose device template has knobs): key hash,
 * template, input shapes, GFLOP per call, number of calls, and the model's
 * total. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void help(FILE *out)
{
    fprintf(out,
            "usage: relay-tune tasks MODEL.relay [--target cpu|opencl] [-O0..3] [--params W.npz ...] [--random-params S] [--json]\n"
            "                        [--keys] [--space]\n"
            "  Lists the tuning tasks of the model after optimization (default -O3). On an opencl\n"
            "  target the functions without a conv, dense or matmul whose device template has knobs\n"
            "  (reduce_cl's reductions, default_cl's injective and pooling functions) follow.\n"
            "  --params W.npz, --random-params S   bind weights as `relay-tune opt` does (constants\n"
            "           fold, so the tasks are those `relay-tune tune` tunes with the same weights)\n"
            "  --json   machine-readable output (keys, hashes, shapes, GFLOP, counts)\n"
            "  --keys   also print each task's full workload key\n"
            "  --space  also print each task's config space for the target: its template (and the\n"
            "           template's version), knobs, their candidates (* the default) and total size\n"
            "  --layout-block N [--layout-auto]   convs in NCHW[x]c; with --layout-auto a conv2d_nchwc\n"
            "           task per conv and candidate block, as tune tunes them (docs/layouts.md)\n"
            "  --winograd [auto|all|off] [--winograd-tile 2|4]   the 3x3 stride-1 convs as Winograd convs:\n"
            "                          auto (default) where the target's vectors make it pay, all every one,\n"
            "                          off none (docs/winograd.md)\n");
}

int cli_cmd_tasks(int argc, char **argv)
{
    cli_opts o = {.cmd = "tasks", .opt = {.level = 3, .winograd = RT_WINOGRAD_AUTO}};
    int rc = cli_options_parse(&o, CLI_TASKS, argc, argv, help);
    const char *target = o.target ? o.target : "cpu";
    /* Listing a target's spaces compiles nothing, so any target this build
     * knows is allowed, including one this host cannot run. */
    if (rc < 0 && rt_target_check(target, 0, stderr) != 0)
        rc = 2;
    rt_module *m = NULL;
    o.opt.layout_tasks = o.opt.layout_auto; /* the tasks tune would tune: every candidate block */
    o.opt.winograd_target = target;
    if (rc < 0 && (m = cli_load_model(o.model, o.params.v, o.params.n, o.random, o.seed)) &&
        rt_module_optimize(m, &o.opt, stderr) != 0) {
        rt_module_free(m);
        m = NULL;
    }
    int json = o.json, keys = o.keys, space = o.space;
    cli_opts_free(&o);
    if (!m)
        return rc >= 0 ? rc : 1;
    const rt_task *t;
    size_t n;
    if (rt_module_tasks_on(m, target, &t, &n, stderr) != 0) {
        rt_module_free(m);
        return 1;
    }
    if (json) {
        char *s = rt_tasks_json(t, n);
        puts(s);
        free(s);
    } else {
        double total = 0;
        int calls = 0;
        printf("%-3s %-16s %-22s %8s %5s  %s\n", "#", "hash", "template", "GFLOP", "count", "inputs");
        for (size_t i = 0; i < n; i++) {
            printf("%-3zu %-16s %-22s %8.4f %5d  %s\n", i, t[i].hash, t[i].template_name, t[i].gflop, t[i].count,
                   t[i].shapes);
            if (keys)
                printf("    key: %s\n", t[i].key);
            if (space) {
                char *sp = rt_task_lower(m, i, NULL, target, RT_LOWER_SPACE, stderr);
                if (!sp) {
                    rt_module_free(m);
                    return 1;
                }
                for (char *line = strtok(sp, "\n"); line; line = strtok(NULL, "\n"))
                    printf("    %s\n", line);
                free(sp);
            }
            total += t[i].gflop * t[i].count;
            calls += t[i].count;
        }
        printf("%zu tasks, %d calls, %.3f GFLOP in total\n", n, calls, total);
    }
    rt_module_free(m);
    return 0;
}
