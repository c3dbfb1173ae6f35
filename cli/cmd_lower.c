/* cmd_lower.c — `relay-tune lower MODEL.relay --task N [--config JSON]`:
 * optimize a model, schedule one of its tasks with its template (the
 * defaults, or a config) and print the loop nest (LoopIR), the generated C,
 * the schedule's trace, the config space or the config. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void help(FILE *out)
{
    fprintf(out,
            "usage: relay-tune lower MODEL.relay --task N [--config JSON|@FILE] [--emit WHAT] [--target cpu|opencl] [-O0..3]\n"
            "                        [--params W.npz ...] [--random-params S]\n"
            "  Lowers task N (as `relay-tune tasks` numbers them) with its schedule template and\n"
            "  prints the result. Without --config the template's default schedule is used.\n"
            "  --params, --random-params bind weights as `relay-tune tasks` does (the same tasks).\n"
            "  --layout-block N, --layout-auto, --winograd [auto|all|off], --winograd-tile M: the graph as\n"
            "  `tasks` makes it (--winograd auto by default).\n"
            "  --emit loopir   the loop nest (default)\n"
            "  --emit c        the generated C (on an opencl target: the OpenCL C kernels)\n"
            "  --emit trace    the schedule primitives applied, one a line\n"
            "  --emit space    the config space: knobs and candidates (* marks the default)\n"
            "  --emit config   the config used, as JSON (a starting point for --config)\n");
}

/* JSON text, or the contents of FILE for @FILE (malloc'd). */
static char *config_text(const char *arg)
{
    if (arg[0] != '@')
        return strdup(arg);
    FILE *f = fopen(arg + 1, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    char chunk[4096];
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        memcpy(buf + len, chunk, n);
        len += n;
    }
    fclose(f);
    if (!buf)
        buf = calloc(1, 1);
    else
        buf[len] = 0;
    return buf;
}

/* The --emit word as RT_LOWER_*; -1 after a message. */
static int emit_of(const char *e)
{
    static const struct { const char *name; int what; } emits[] = {
        {"loopir", RT_LOWER_LOOPIR}, {"c", RT_LOWER_C}, {"trace", RT_LOWER_TRACE},
        {"space", RT_LOWER_SPACE}, {"config", RT_LOWER_CONFIG},
    };
    for (size_t k = 0; k < sizeof emits / sizeof *emits; k++)
        if (!strcmp(e, emits[k].name))
            return emits[k].what;
    cli_error("lower: --emit takes loopir, c, trace, space or config, not '%s'", e);
    return -1;
}

/* Prints task o->task of the optimized model as --emit asks. */
static int lower(const cli_opts *o, int what, const char *cfg)
{
    rt_module *m = cli_load_model(o->model, o->params.v, o->params.n, o->random, o->seed);
    int rc = 1;
    rt_opt_options opt = o->opt;
    opt.layout_tasks = opt.layout_auto; /* the task numbers of `tasks`: every candidate block */
    opt.winograd_target = o->target;
    if (m && rt_module_optimize(m, &opt, stderr) == 0) {
        char *text = rt_task_lower(m, (size_t)o->task, cfg, o->target ? o->target : "cpu", what, stderr);
        if (text) {
            fputs(text, stdout);
            free(text);
            rc = 0;
        }
    }
    rt_module_free(m);
    return rc;
}

int cli_cmd_lower(int argc, char **argv)
{
    cli_opts o = {.cmd = "lower", .opt = {.level = 3, .winograd = RT_WINOGRAD_AUTO}, .task = -1};
    int rc = cli_options_parse(&o, CLI_LOWER, argc, argv, help);
    if (rc < 0 && o.task < 0) {
        help(stderr);
        rc = 2;
    }
    int what = rc < 0 && o.emit ? emit_of(o.emit) : RT_LOWER_LOOPIR;
    if (what < 0)
        rc = 2;
    char *cfg = NULL;
    if (rc < 0 && o.config && !(cfg = config_text(o.config))) {
        cli_error("lower: cannot read config file '%s'", o.config + 1);
        rc = 1;
    }
    if (rc < 0)
        rc = lower(&o, what, cfg);
    free(cfg);
    cli_opts_free(&o);
    return rc;
}
