/* api.h — the map of api/: the public rt_ API (include/relaytune.h) over the
 * internal parts. Holds the definitions of the opaque public types, which
 * every api/ file shares. Prefix: rt_ (public), api_ (internal). */
#ifndef RT_API_H
#define RT_API_H

#include "include/relaytune.h"
#include "db/db.h"
#include "dist/dist.h"
#include "ir/ir.h"
#include "ir/transform/transform.h"
#include "tuner/tuner.h"

/* ---- api.c: modules ------------------------------------------------------ */

struct rt_module {
    ir_module *ir;          /* parsed and type-checked */
    tun_tasks tasks;        /* filled by rt_module_tasks (api_module_tasks) */
    rt_task *pub;           /* the same, as the public struct */
    char *tasks_target;     /* the target string they are for (NULL: cpu; malloc'd) */
    /* rt_opt_options.layout_tasks: @main and the rest as alter-layout's
       variant k + 1 makes them (every conv in its k + 1-th candidate block),
       whose tasks rt_module_tasks adds; NULL where not made */
    ir_global_def *variants[TR_LAYOUT_VARIANTS];
    size_t nvariant_defs[TR_LAYOUT_VARIANTS];
};

/* Fills m->tasks and m->pub for target (NULL: "cpu"; an opencl target adds
 * its device tasks, tun_extract_tasks_on), again only where they are
 * another target's or not made; false after a message to errs. */
bool api_module_tasks(rt_module *m, const char *target, FILE *errs);

/* ---- layout_cost.c: the layout DP's kernel times from a database -------- */

typedef struct api_layout_costs api_layout_costs;
/* The best record of every conv2d_nchwc workload of target (NULL: "cpu") in
 * the database at path, by conv and blocks; NULL after a message to errs. */
api_layout_costs *api_layout_costs_load(const char *path, const char *target, FILE *errs);
/* A tr_layout_cost_fn over them (ctx: the api_layout_costs): the least cost
 * of a record of conv in blocks (ib, ob), seconds, or -1 without one. */
double api_layout_cost(void *ctx, const ir_expr *conv, int64_t ib, int64_t ob);
/* The (conv, blocks) pairs known; *records (unless NULL) gets the records read. */
size_t api_layout_costs_count(const api_layout_costs *c, size_t *records);
void api_layout_costs_free(api_layout_costs *c);

/* ---- run.c: tensors, inputs, rt_run -------------------------------------- */

struct rt_tensor {
    ir_tensor *t;           /* a heap tensor the rt_tensor owns */
};

/* Wraps a heap tensor (taking it over). */
rt_tensor *api_tensor_wrap(ir_tensor *t);

/* Item i of the inputs (false past the end). */
bool api_inputs_item(const rt_inputs *in, size_t i, const char **name, const rt_tensor **t, const char **origin);


/* ---- db.c: the tuning database ------------------------------------------ */

struct rt_db {
    db *d;                  /* the open database */
};

/* ---- target.c: target strings (rt_target_check, rt_target_describe) ------ */

/* Whether this host can execute t's code (an opencl target: always, its
 * device was found when it was parsed); false after a message naming the
 * target string `text` and both ISAs. */
bool api_target_runnable(const tg_target *t, const char *text, FILE *errs);

/* ---- model.c: compiled models (rt_model_compile, rt_cmodel_*) ------------ */

/* ---- lower.c: rt_task_lower (schedules and code of one task) ------------ */

/* ---- tune.c: the runner, rt_tune, the best config of a task -------------- */

struct rt_runner {
    ms_runner *r;           /* the fork server */
};


/* ---- mpi.c: tuning across machines (rt_mpi_*; dist/) ---------------------- */

#ifdef HAVE_MPI
struct rt_mpi {
    dist_comm *c;           /* this process's place in the MPI job */
};
#endif

#endif
