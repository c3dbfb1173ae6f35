/* main.c — the relay-tune command: dispatches to subcommands. Subcommands run
 * on a thread with a large stack, because the IR is walked recursively and a
 * big model's expressions nest deeply. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const struct {
    const char *name;
    cli_cmd_fn fn;
    const char *help;
} commands[] = {
    {"parse", cli_cmd_parse, "parse and type-check a Relay text file; print it with inferred types"},
    {"import", cli_cmd_import, "import an ONNX model as Relay text (+ its weights as .npz); every command reads .onnx too"},
    {"opt", cli_cmd_opt, "optimize a model (passes, operator fusion) and print it"},
    {"tasks", cli_cmd_tasks, "list the tuning tasks (fused kernels) of a model"},
    {"lower", cli_cmd_lower, "print the loop nest (or C) of a task under a schedule"},
    {"tune", cli_cmd_tune, "search the tasks' schedules on this machine; every measurement into the database"},
    {"db", cli_cmd_db, "the tuning database: export, import, merge, stats, best, gc"},
    {"compile", cli_cmd_compile, "compile a model into one shared object (kernels, weights, memory plan)"},
    {"run", cli_cmd_run, "run a model's @main on .npz/.npy inputs (or seeded random ones): interpreter or compiled"},
    {"bench", cli_cmd_bench, "latency of a compiled model: median, p10, p90 of N runs"},
    {"targets", cli_cmd_targets, "what this host can run, and what a target string describes"},
    {"dashboard", cli_cmd_dashboard, "serve the tuning and benchmark dashboard of a database (read-only)"},
    {"report", cli_cmd_report, "write the dashboard's pages and data into one self-contained HTML file"},
};

void cli_error(const char *fmt, ...)
{
    va_list ap;
    fputs("relay-tune: error: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int cli_write_output(const char *cmd, const char *out, const char *text)
{
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f) {
        cli_error("%s: cannot write %s", cmd, out);
        return 1;
    }
    fputs(text, f);
    int bad = ferror(f);
    if (out)
        bad |= fclose(f) != 0;
    else
        bad |= fflush(f) != 0;
    if (bad) {
        cli_error("%s: error writing %s", cmd, out ? out : "standard output");
        return 1;
    }
    return 0;
}

bool cli_model_operand(const char *cmd, const char *a, bool has_value, const char **model, void (*help)(FILE *))
{
    if (a[0] == '-' && a[1]) {
        cli_error(has_value || strncmp(a, "--", 2) ? "%s: unknown option '%s'" : "%s: %s needs a value", cmd, a);
        help(stderr);
        return false;
    }
    if (*model) {
        cli_error("%s: more than one model file ('%s' and '%s')", cmd, *model, a);
        return false;
    }
    *model = a;
    return true;
}

int cli_write_module(const char *cmd, const char *out, const rt_module *m, bool types)
{
    char *text = rt_module_to_text(m, types ? RT_PRINT_TYPES : 0);
    int rc = cli_write_output(cmd, out, text);
    free(text);
    return rc;
}

rt_module *cli_load_model(const char *file, const char *const *params, int nparams, bool random,
                          unsigned long long seed)
{
    rt_module *m = rt_module_load(file, stderr);
    if (!m)
        return NULL;
    for (int i = 0; i < nparams; i++)
        if (rt_module_bind_params(m, params[i], stderr) < 0)
            goto fail;
    if (random && rt_module_bind_random_params(m, seed, 1, stderr) < 0)
        goto fail;
    return m;
fail:
    rt_module_free(m);
    return NULL;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: relay-tune COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].help);
    fprintf(out, "\nA MODEL is Relay text (MODEL.relay) or an ONNX model (MODEL.onnx) for every command.\n");
    fprintf(out, "relay-tune COMMAND --help shows a command's options. Version %s.\n", rt_version());
}

typedef struct { cli_cmd_fn fn; int argc; char **argv; int rc; } job;

static void *run_job(void *arg)
{
    job *j = arg;
    j->rc = j->fn(j->argc, j->argv);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("relay-tune %s\n", rt_version());
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
        if (strcmp(argv[1], commands[i].name) != 0)
            continue;
        job j = {commands[i].fn, argc - 1, argv + 1, 1};
        pthread_attr_t attr;
        pthread_t t;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, (size_t)512 << 20);
        if (pthread_create(&t, &attr, run_job, &j) != 0)
            run_job(&j);
        else
            pthread_join(t, NULL);
        pthread_attr_destroy(&attr);
        return j.rc;
    }
    cli_error("unknown command '%s'", argv[1]);
    usage(stderr);
    return 2;
}
