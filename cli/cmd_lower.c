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
            "usage: relay-tune lower MODEL.relay --task N [--config JSON|@FILE] [--emit WHAT] [--target cpu] [-O0..3]\n"
            "  Lowers task N (as `relay-tune tasks` numbers them) with its schedule template and\n"
            "  prints the result. Without --config the template's default schedule is used.\n"
            "  --emit loopir   the loop nest (default)\n"
            "  --emit c        the generated C\n"
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

int cli_cmd_lower(int argc, char **argv)
{
    const char *file = NULL, *target = "cpu", *config = NULL;
    long task = -1;
    int what = RT_LOWER_LOOPIR;
    rt_opt_options o = {.level = 3};
    static const struct { const char *name; int what; } emits[] = {
        {"loopir", RT_LOWER_LOOPIR}, {"c", RT_LOWER_C}, {"trace", RT_LOWER_TRACE},
        {"space", RT_LOWER_SPACE}, {"config", RT_LOWER_CONFIG},
    };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return 0;
        } else if (a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3' && !a[3]) {
            o.level = a[2] - '0';
        } else if (!strcmp(a, "--task") && i + 1 < argc) {
            char *end;
            task = strtol(argv[++i], &end, 10);
            if (*end || task < 0) {
                cli_error("lower: --task needs a task number, got '%s'", argv[i]);
                return 2;
            }
        } else if (!strcmp(a, "--config") && i + 1 < argc) {
            config = argv[++i];
        } else if (!strcmp(a, "--target") && i + 1 < argc) {
            target = argv[++i];
        } else if (!strcmp(a, "--emit") && i + 1 < argc) {
            const char *e = argv[++i];
            what = -1;
            for (size_t k = 0; k < sizeof emits / sizeof *emits; k++)
                if (!strcmp(e, emits[k].name))
                    what = emits[k].what;
            if (what < 0) {
                cli_error("lower: --emit takes loopir, c, trace, space or config, not '%s'", e);
                return 2;
            }
        } else if (a[0] == '-' && a[1]) {
            cli_error("lower: unknown option '%s'", a);
            help(stderr);
            return 2;
        } else if (!file) {
            file = a;
        } else {
            cli_error("lower: more than one model");
            return 2;
        }
    }
    if (!file || task < 0) {
        help(stderr);
        return 2;
    }
    char *cfg = NULL;
    if (config && !(cfg = config_text(config))) {
        cli_error("lower: cannot read config file '%s'", config + 1);
        return 1;
    }
    rt_module *m = rt_module_load(file, stderr);
    if (!m) {
        free(cfg);
        return 1;
    }
    int rc = 1;
    if (rt_module_optimize(m, &o, stderr) == 0) {
        char *text = rt_task_lower(m, (size_t)task, cfg, target, what, stderr);
        if (text) {
            fputs(text, stdout);
            free(text);
            rc = 0;
        }
    }
    free(cfg);
    rt_module_free(m);
    return rc;
}
