/* api.h — the map of api/: the public rt_ API (include/relaytune.h) over the
 * internal parts. Holds the definitions of the opaque public types, which
 * every api/ file shares. Prefix: rt_ (public), api_ (internal). */
#ifndef RT_API_H
#define RT_API_H

#include "include/relaytune.h"
#include "db/db.h"
#include "dist/dist.h"
#include "ir/ir.h"
#include "tuner/tuner.h"

/* ---- api.c: modules ------------------------------------------------------ */

struct rt_module {
    ir_module *ir;          /* parsed and type-checked */
    tun_tasks tasks;        /* filled by rt_module_tasks */
    rt_task *pub;           /* the same, as the public struct */
};

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
