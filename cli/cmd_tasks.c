/* cmd_tasks.c — `relay-tune tasks MODEL.relay`: optimize the model and list
 * its tuning tasks (distinct fused functions with a tunable anchor): key
 * hash, template, input shapes, GFLOP per call, number of calls, and the
 * model's total. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void help(FILE *out)
{
    fprintf(out,
            "usage: relay-tune tasks MODEL.relay [--target cpu] [-O0..3] [--params W.npz | --random-params S] [--json] [--keys]\n"
            "                        [--space]\n"
            "  Lists the tuning tasks of the model after optimization (default -O3).\n"
            "  --json   machine-readable output (keys, hashes, shapes, GFLOP, counts)\n"
            "  --keys   also print each task's full workload key\n"
            "  --space  also print each task's config space for the target: its template (and the\n"
            "           template's version), knobs, their candidates (* the default) and total size\n");
}

int cli_cmd_tasks(int argc, char **argv)
{
    int random_params = 0;
    unsigned long long random_seed = 0;
    const char *file = NULL, *params = NULL, *target = "cpu";
    rt_opt_options o = {.level = 3};
    int json = 0, keys = 0, space = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return 0;
        } else if (a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3' && !a[3]) {
            o.level = a[2] - '0';
        } else if (!strcmp(a, "--params") && i + 1 < argc) {
            params = argv[++i];
        } else if (!strcmp(a, "--random-params") && i + 1 < argc) {
            random_params = 1;
            random_seed = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--keys")) {
            keys = 1;
        } else if (!strcmp(a, "--space")) {
            space = 1;
        } else if (!strcmp(a, "--target") && i + 1 < argc) {
            target = argv[++i];
        } else if (a[0] == '-') {
            cli_error("tasks: unknown option '%s'", a);
            help(stderr);
            return 2;
        } else if (!file) {
            file = a;
        } else {
            cli_error("tasks: more than one model");
            return 2;
        }
    }
    if (!file) {
        help(stderr);
        return 2;
    }
    if (strcmp(target, "cpu") != 0 && strncmp(target, "cpu ", 4) != 0) {
        cli_error("tasks: unknown target '%s' (this build knows: cpu)", target);
        return 2;
    }
    rt_module *m = cli_load_model(file, &params, params != NULL, random_params, random_seed);
    if (!m)
        return 1;
    if (rt_module_optimize(m, &o, stderr) != 0) {
        rt_module_free(m);
        return 1;
    }
    const rt_task *t;
    size_t n;
    rt_module_tasks(m, &t, &n);
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
