/* cmd_opt.c — `relay-tune opt MODEL.relay [-O3]`: parse, type-check and
 * optimize a model (the pass pipeline and operator fusion) and print the
 * optimized module as Relay text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void help(FILE *out)
{
    fprintf(out,
            "usage: relay-tune opt MODEL.relay [-O0|-O1|-O2|-O3] [--params W.npz | --random-params S] [--print-after PASS] [--print-after-all]\n"
            "                      [--max-fuse-depth N] [--check [SEED]] [--stats] [--no-types] [-o OUT] [--list-passes]\n"
            "  Optimizes the model and prints it as Relay text (default -O3). Fused\n"
            "  subgraphs appear as functions marked Primitive=1.\n"
            "  --params W.npz       bind @main's parameters to these arrays (key = name without %%),\n"
            "                       so that they fold into constants (weights, batch-norm statistics)\n"
            "  --random-params S    bind every parameter but the first (the input) to seeded random\n"
            "                       constants, drawn as `relay-tune run --random-params S` draws them\n"
            "  --print-after PASS   print the module after PASS (to stderr)\n"
            "  --print-after-all    print the module after every pass (to stderr)\n"
            "  --max-fuse-depth N   at most N operators in one fused function (default 256)\n"
            "  --check [SEED]       run @main in the interpreter before and after every pass on\n"
            "                       seeded random inputs; stop at the first pass that changes the result\n"
            "  --stats              print operator and fused-function counts to stderr\n"
            "  --list-passes        list the passes and the level each runs at\n");
}

int cli_cmd_opt(int argc, char **argv)
{
    int random_params = 0;
    unsigned long long random_seed = 0;
    const char *file = NULL, *params = NULL, *out = NULL;
    rt_opt_options o = {.level = 3};
    int flags = RT_PRINT_TYPES, stats = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return 0;
        } else if (!strcmp(a, "--list-passes")) {
            rt_list_passes(stdout);
            return 0;
        } else if (a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3' && !a[3]) {
            o.level = a[2] - '0';
        } else if (!strcmp(a, "--print-after") && i + 1 < argc) {
            o.print_after = argv[++i];
        } else if (!strcmp(a, "--print-after-all")) {
            o.print_after_all = 1;
        } else if (!strcmp(a, "--max-fuse-depth") && i + 1 < argc) {
            o.max_fuse_depth = atoi(argv[++i]);
            if (o.max_fuse_depth < 1) {
                cli_error("opt: --max-fuse-depth must be at least 1");
                return 2;
            }
        } else if (!strcmp(a, "--params") && i + 1 < argc) {
            params = argv[++i];
        } else if (!strcmp(a, "--random-params") && i + 1 < argc) {
            random_params = 1;
            random_seed = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(a, "--check")) {
            o.check = 1;
            if (i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9')
                o.check_seed = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(a, "--stats")) {
            stats = 1;
        } else if (!strcmp(a, "--no-types")) {
            flags &= ~RT_PRINT_TYPES;
        } else if (!strcmp(a, "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (a[0] == '-') {
            cli_error("opt: unknown option '%s'", a);
            help(stderr);
            return 2;
        } else if (!file) {
            file = a;
        } else {
            cli_error("opt: more than one model");
            return 2;
        }
    }
    if (!file) {
        help(stderr);
        return 2;
    }
    rt_module *m = cli_load_model(file, &params, params != NULL, random_params, random_seed);
    if (!m)
        return 1;
    long ops0, prim0, ops1, prim1;
    rt_module_counts(m, &ops0, &prim0);
    if (rt_module_optimize(m, &o, stderr) != 0) {
        rt_module_free(m);
        return 1;
    }
    rt_module_counts(m, &ops1, &prim1);
    if (stats)
        fprintf(stderr, "%s: %ld operator calls before, %ld after in %ld fused functions (-O%d)\n", file, ops0, ops1,
                prim1, o.level);
    char *text = rt_module_to_text(m, flags);
    int rc = cli_write_output("opt", out, text);
    free(text);
    rt_module_free(m);
    return rc;
}
