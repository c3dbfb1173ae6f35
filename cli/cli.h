/* cli.h — the map of cli/: the relay-tune command and its subcommands. The CLI
 * uses only the public API in include/relaytune.h. Prefix: cli_. */
#ifndef RT_CLI_H
#define RT_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "relaytune.h"

/* A subcommand: argv[0] is the subcommand's name; returns the exit status. */
typedef int (*cli_cmd_fn)(int argc, char **argv);

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
 * parameters but the first, optimizes at -O3 and compiles it to out (NULL:
 * into the cache); the object's path (malloc'd) or NULL after a message. */
char *cli_compile(const char *model, const char *const *params, int nparams, bool random, unsigned long long seed,
                  const rt_compile_options *o, const char *out, rt_compile_report *rep);
/* Parses a --random-params seed; false after a message. */
bool cli_parse_seed(const char *cmd, const char *s, unsigned long long *seed);

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
