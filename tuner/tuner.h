/* tuner.h — the map of tuner/: tasks extracted from an optimized model (and,
 * in later stages, the tuning loop, tuners, features and cost models).
 * Prefix: tun_. May use every part below it. */
#ifndef RT_TUNER_H
#define RT_TUNER_H

#include "ir/ir.h"
#include "ir/transform/transform.h"

/* ---- task.c: tuning tasks and workload keys ----------------------------- */

/* One distinct primitive function worth tuning. */
typedef struct tun_task {
    char *key;              /* canonical workload text (template|dtype|inputs|attrs|body) */
    char hash[17];          /* FNV-1a 64 of key, hex */
    char *template_name;    /* schedule template family: "conv2d_nchw", "dense", ... */
    char *anchor;           /* anchor op: "nn.conv2d" */
    char *shapes;           /* inputs for people: "1x64x56x56, 64x64x3x3" */
    int64_t flops;          /* one call's floating-point operations */
    int count;              /* calls of this workload in the model */
    ir_expr *func;          /* one of its primitive functions (in the module's arena) */
} tun_task;

typedef struct tun_tasks {
    tun_task *items;
    size_t len, cap;
} tun_tasks;

/* Extracts the tasks of every primitive function called in m (a fused module),
 * in order of first call; functions without a tunable anchor are skipped. */
void tun_extract_tasks(const ir_module *m, tun_tasks *out);
/* The workload key of primitive function f (malloc'd), and its template name
 * (static string) or NULL when f has no tunable anchor. */
char *tun_workload_key(const ir_expr *f, const char **template_name, const ir_op_def **anchor);
/* Frees the tasks' strings and the array. */
void tun_tasks_free(tun_tasks *t);

#endif
