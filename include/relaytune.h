/* relaytune.h — the public C API of librelaytune, which the relay-tune program
 * itself uses. Everything here is prefixed rt_; nothing else is exported.
 *
 * Errors: functions that can fail on user input take a `FILE *errs` and write
 * diagnostics there in the form "FILE:LINE:COL: error: MESSAGE" followed by the
 * source line and a caret; pass NULL to discard them. */
#ifndef RELAYTUNE_H
#define RELAYTUNE_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A parsed, type-checked Relay module. */
typedef struct rt_module rt_module;

/* Flags for rt_module_to_text. */
enum {
    RT_PRINT_TYPES = 1,   /* annotate bindings with their types (TVM's ty= comments) */
};

/* The library version ("0.1.0"). */
const char *rt_version(void);

/* Parses and type-checks a Relay text file; NULL after reporting errors to errs. */
rt_module *rt_module_load(const char *path, FILE *errs);
/* Parses and type-checks Relay text held in memory; name is used in messages. */
rt_module *rt_module_parse(const char *name, const char *text, size_t len, FILE *errs);
/* The module as canonical Relay text (malloc'd; free with free()). */
char *rt_module_to_text(const rt_module *m, int flags);
/* Number of global functions in the module. */
size_t rt_module_num_functions(const rt_module *m);
/* Frees a module (NULL is fine). */
void rt_module_free(rt_module *m);

/* Options of rt_module_optimize. Zero-initialized means -O0 with no printing. */
typedef struct rt_opt_options {
    int level;                  /* optimization level 0..3 */
    const char *print_after;    /* print the module to errs after this pass */
    int print_after_all;        /* nonzero: print after every pass */
    int max_fuse_depth;         /* most operators in one fused function (0: 256) */
} rt_opt_options;

/* Runs the optimization pipeline (passes, fusion) on m in place. Returns 0,
 * or -1 after writing errors to errs. Printouts requested by the options go to
 * errs too (stderr when errs is NULL). */
int rt_module_optimize(rt_module *m, const rt_opt_options *o, FILE *errs);
/* Writes the passes of the pipeline, one per line (name, level, help). */
void rt_list_passes(FILE *out);
/* Number of operator calls in @main and the number of primitive (fused)
 * functions it calls; -1 for either when there is no @main. */
void rt_module_counts(const rt_module *m, long *ops, long *primitives);

/* A tuning task: one distinct fused function with a tunable anchor. */
typedef struct rt_task {
    const char *key;            /* canonical workload key */
    const char *hash;           /* 16 hex digits of the key's FNV-1a hash */
    const char *template_name;  /* "conv2d_nchw", "dense", ... */
    const char *anchor;         /* "nn.conv2d" */
    const char *shapes;         /* input shapes, "1x64x56x56, 64x64x3x3" */
    double gflop;               /* one call, in 1e9 floating-point operations */
    int count;                  /* calls in the model */
} rt_task;

/* The tasks of an optimized module (see rt_module_optimize): *tasks is an
 * array of *n entries owned by the module, valid until it is freed. */
void rt_module_tasks(rt_module *m, const rt_task **tasks, size_t *n);
/* The tasks as a JSON document (malloc'd): {"tasks": [...], "total_gflop": x}. */
char *rt_tasks_json(const rt_task *tasks, size_t n);

/* What rt_task_lower returns. */
enum {
    RT_LOWER_LOOPIR = 0,    /* the loop nest (LoopIR text), prologues first */
    RT_LOWER_C = 1,         /* the generated C translation unit */
    RT_LOWER_TRACE = 2,     /* the schedule's primitives, one a line */
    RT_LOWER_SPACE = 3,     /* the config space: knobs and their candidates */
    RT_LOWER_CONFIG = 4,    /* the config used, as JSON */
};

/* Lowers task `index` of an optimized module (numbered as rt_module_tasks
 * lists them) with its schedule template and a config (JSON as
 * {"knobs": {...}}; NULL: the template's defaults) for a target ("cpu";
 * NULL: "cpu"), and returns the text `what` asks for (malloc'd), or NULL
 * after writing the error to errs. Weights that the template packs (dense
 * and conv2d) are packed by prologues, as the compiled model does once. */
char *rt_task_lower(rt_module *m, size_t index, const char *config_json, const char *target, int what, FILE *errs);

#ifdef __cplusplus
}
#endif
#endif
