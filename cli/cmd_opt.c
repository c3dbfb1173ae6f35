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
            "usage: relay-tune opt MODEL.relay [-O0|-O1|-O2|-O3] [--params W.npz ...] [--random-params S]\n"
            "                      [--print-after PASS] [--print-after-all] [--max-fuse-depth N] [--layout-block N [--layout-auto]] [--check [SEED]]\n"
            "                      [--winograd [auto|all|off] [--winograd-tile 2|4]] [--stats] [--no-types] [-o OUT] [--list-passes]\n"
            "  Optimizes the model and prints it as Relay text (default -O3). Fused\n"
            "  subgraphs appear as functions marked Primitive=1.\n"
            "  --params W.npz       bind @main's parameters to these arrays (key = name without %%),\n"
            "                       so that they fold into constants (weights, batch-norm statistics);\n"
            "                       may be given several times\n"
            "  --random-params S    bind every parameter --params leaves but the first (the input) to\n"
            "                       seeded random constants, drawn as `relay-tune run --random-params S`\n"
            "                       draws them\n"
            "  --print-after PASS   print the module after PASS (to stderr)\n"
            "  --print-after-all    print the module after every pass (to stderr)\n"
            "  --max-fuse-depth N   at most N operators in one fused function (default 256)\n"
            "  --layout-block N     -O3: convs and the ops between them in NCHW[x]c, x up to N (default 0: NCHW)\n"
            "  --layout-auto        with --layout-block N: each conv's blocks chosen by a DP over the graph\n"
            "                       (kernel + transform time), N the vector lanes (docs/layouts.md)\n"
            "  --db DB              with --layout-auto: the DP's kernel times from DB's best records\n"
            "                       of --target (default cpu); the analytic model for those without\n"
            "  --winograd [all]     -O3: 3x3 stride-1 convs with bound weights as Winograd convs, their\n"
            "                       weights transformed at once (docs/winograd.md); auto: only where\n"
            "                       --target's vectors make it pay (the default of the commands that\n"
            "                       compile; opt's is off)\n"
            "  --winograd-tile M    the output tile, 2 or 4 (default: 4 unless an output is under 4 wide)\n"
            "  --check [SEED]       run @main in the interpreter before and after every pass on\n"
            "                       seeded random inputs; stop at the first pass that changes the result\n"
            "  --stats              print operator and fused-function counts to stderr\n"
            "  --list-passes        list the passes and the level each runs at\n");
}

int cli_cmd_opt(int argc, char **argv)
{
    cli_opts o = {.cmd = "opt", .opt = {.level = 3}};
    int rc = cli_options_parse(&o, CLI_OPT, argc, argv, help);
    if (rc < 0 && o.list_passes) {
        rt_list_passes(stdout);
        rc = 0;
    }
    rt_module *m = NULL;
    if (rc >= 0 || !(m = cli_load_model(o.model, o.params.v, o.params.n, o.random, o.seed))) {
        cli_opts_free(&o);
        return rc >= 0 ? rc : 1;
    }
    long ops0, prim0, ops1, prim1;
    rt_module_counts(m, &ops0, &prim0);
    rc = 1;
    o.opt.layout_db = o.db; /* the DP's kernel times (docs/layouts.md); refused without --layout-auto */
    o.opt.layout_target = o.target;
    o.opt.winograd_target = o.target;
    if (rt_module_optimize(m, &o.opt, stderr) == 0) {
        rt_module_counts(m, &ops1, &prim1);
        if (o.stats)
            fprintf(stderr, "%s: %ld operator calls before, %ld after in %ld fused functions (-O%d)\n", o.model, ops0,
                    ops1, prim1, o.opt.level);
        rc = cli_write_module("opt", o.out, m, !o.no_types);
    }
    rt_module_free(m);
    cli_opts_free(&o);
    return rc;
}
