/* cli.h — the map of cli/: the relay-tune command and its subcommands. The CLI
 * uses only the public API in include/relaytune.h. Prefix: cli_. */
#ifndef RT_CLI_H
#define RT_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "relaytune.h"

/* A subcommand: argv[0] is the subcommand's name; returns the exit status. */
typedef int (*cli_cmd_fn)(int argc, char **argv);

/* ---- options.c: the option table of the commands that read a model ---- */

/* The commands of the table, as bits of a row's set. */
enum {
    CLI_RUN = 1, CLI_COMPILE = 2, CLI_BENCH = 4, CLI_TUNE = 8, CLI_OPT = 16, CLI_TASKS = 32, CLI_LOWER = 64,
    CLI_PARSE = 128, CLI_IMPORT = 256,
};

/* The words an option given several times collected, in order. */
typedef struct cli_list {
    const char **v;
    int n;
} cli_list;

/* What the options of the commands that read a model said (run, compile,
 * bench, tune, opt, tasks, lower; parse and import, which take no weights);
 * the caller sets cmd and the command's defaults before parsing. */
typedef struct cli_opts {
    const char *cmd;            /* the command's name, for messages ("run") */
    const char *model;          /* the model file (the one operand) */
    cli_list params;            /* --params W.npz: weights, bound in order */
    bool random;                /* --random-params SEED was given */
    unsigned long long seed;    /* its SEED: random weights and inputs */
    cli_list inputs;            /* --input NAME=FILE.npy (run, bench) */
    const char *target, *db;    /* --target, --db (tune: target is the first of targets) */
    cli_list targets;           /* tune: --target, each one given (several: tuned at once) */
    const char *output, *output_dir; /* run: --output, --output-dir */
    const char *out;            /* compile, opt, parse, import: -o */
    const char *params_out;     /* import: --params-out */
    int jobs;                   /* compile: -j */
    int runs, warmup;           /* bench: --repeat, --warmup */
    int json;                   /* bench, tasks: --json */
    int profile;                /* bench: --profile */
    int mpi;                    /* tune: --mpi (also implied under mpirun) */
    rt_opt_options opt;         /* tune, opt, tasks, lower: -O0..3; opt: the pipeline's options */
    int stats, list_passes;     /* opt: --stats, --list-passes */
    int no_types;               /* opt, parse, import: --no-types */
    int keys, space;            /* tasks: --keys, --space */
    long long task;             /* lower: --task (the caller sets -1: required) */
    const char *config, *emit;  /* lower: --config, --emit */
    const char *progress;       /* tune: --progress */
    rt_tune_options tune;       /* tune: the search and the measurements */
    uint64_t given;             /* bit i: row i of the table was given */
} cli_opts;

/* Parses argv[1..argc) as options of command cmd (CLI_RUN, ...) into o:
 * -1 to go on, 0 after printing help (--help), 2 after a usage error
 * (reported; a missing model prints the help on stderr, unless an option
 * that is the whole request, such as opt's --list-passes, was given). */
int cli_options_parse(cli_opts *o, unsigned cmd, int argc, char **argv, void (*help)(FILE *));
/* True when option name was given. */
bool cli_option_given(const cli_opts *o, const char *name);
/* Frees o's lists. */
void cli_opts_free(cli_opts *o);
/* True when model names a compiled model (MODEL.so). */
bool cli_is_so(const char *model);
/* Adds the --input files to in: 0, 1 when a file cannot be read, 2 for a
 * malformed NAME=FILE (each after a message). */
int cli_load_inputs(const cli_opts *o, rt_inputs *in);
/* The compiled model of o->model (a .relay is compiled into the cache with
 * o's weights, random ones from o->seed when random_weights, and o's target
 * and database) with in set as its inputs, the rest seeded random ones when
 * random_inputs; NULL after a message. */
rt_cmodel *cli_load_compiled(const cli_opts *o, bool random_weights, const rt_inputs *in, bool random_inputs);

/* ---- cmd_parse.c ---- */
/* relay-tune parse FILE [--no-types] [-o OUT] */
int cli_cmd_parse(int argc, char **argv);

/* ---- cmd_import.c ---- */
/* relay-tune import MODEL.onnx [-o OUT.relay] [--params-out W.npz] [--no-types] */
int cli_cmd_import(int argc, char **argv);

/* ---- cmd_opt.c ---- */
/* relay-tune opt MODEL [-O3] ... */
int cli_cmd_opt(int argc, char **argv);

/* ---- cmd_tasks.c ---- */
/* relay-tune tasks MODEL [--json] ... */
int cli_cmd_tasks(int argc, char **argv);

/* ---- cmd_lower.c ---- */
/* relay-tune lower MODEL --task N [--config JSON] [--emit WHAT] */
int cli_cmd_lower(int argc, char **argv);

/* ---- cmd_tune.c ---- */
/* relay-tune tune MODEL --trials N [--target cpu] [--db DB] [--tuner random|grid|ga] ... */
int cli_cmd_tune(int argc, char **argv);

/* ---- cmd_db.c ---- */
/* relay-tune db export|import|merge|stats|best|gc [--db PATH] ... */
int cli_cmd_db(int argc, char **argv);
/* ---- cmd_run.c ---- */
/* relay-tune run MODEL.relay [--params W.npz] [--input NAME=FILE.npy ...] [--output OUT.npy | --output-dir DIR]
 *                [--target interp] [--random-params SEED] */
int cli_cmd_run(int argc, char **argv);

/* ---- cmd_compile.c ---- */
/* relay-tune compile MODEL.relay [--params W.npz | --random-params S] [--target cpu] [--db DB] [-o OUT.so] */
int cli_cmd_compile(int argc, char **argv);
/* Loads MODEL.relay, binds --params files and (random) seeded weights for all
 * parameters but the first, optimizes at -O3 with graph's graph-level choices
 * (layout_block: convs blocked up to that many channels, 0: NCHW; layout_auto:
 * blocks chosen by the graph-level DP, layout_block the lanes; winograd,
 * winograd_tile: docs/winograd.md; the rest of graph is not read) and compiles
 * it to out (NULL: into the cache); the object's path (malloc'd) or NULL after a message. */
char *cli_compile(const char *model, const char *const *params, int nparams, bool random, unsigned long long seed,
                  const rt_opt_options *graph, const rt_compile_options *o, const char *out, rt_compile_report *rep);
/* ---- cmd_bench.c ---- */
/* relay-tune bench MODEL.relay|MODEL.so [--target cpu] [--db DB] [--repeat N] [--json] */
int cli_cmd_bench(int argc, char **argv);

/* ---- cmd_targets.c ---- */
/* relay-tune targets [TARGET ...] */
int cli_cmd_targets(int argc, char **argv);
/* ---- cmd_dashboard.c ---- */
/* relay-tune dashboard [--db DB] [--port N] [--host ADDR] */
int cli_cmd_dashboard(int argc, char **argv);
/* relay-tune report [--db DB] [--session ID] -o REPORT.html */
int cli_cmd_report(int argc, char **argv);

/* ---- main.c ---- */
/* Loads MODEL and binds its weights: the arrays of each of the nparams .npz
 * files, then (when random) seeded random values for every parameter but
 * the first; NULL after printing errors. */
rt_module *cli_load_model(const char *file, const char *const *params, int nparams, bool random,
                          unsigned long long seed);
/* Writes text to the file out (standard output when NULL); returns the exit
 * status, after reporting a failure as "CMD: cannot write ...". */
int cli_write_output(const char *cmd, const char *out, const char *text);
/* Writes m as Relay text (with type comments when types) like cli_write_output. */
int cli_write_module(const char *cmd, const char *out, const rt_module *m, bool types);
/* Takes a command-line word no option of cmd took: a lone "-" or a word is
 * the model file (once); a word starting with '-' is an unknown option (or
 * one missing its value), reported with help on stderr. False after an
 * error. */
bool cli_model_operand(const char *cmd, const char *a, bool has_value, const char **model, void (*help)(FILE *));
/* Prints "relay-tune: error: ..." to stderr. */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

#endif
