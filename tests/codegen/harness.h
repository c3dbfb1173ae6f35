/* harness.h — what the code generation tests share: an independent oracle
 * (oracle.c), loading small models, lowering their primitive functions with
 * a template and config, building many kernels into one shared object (one
 * compiler run), running them on random inputs and measuring the error. */
#ifndef RT_TEST_HARNESS_H
#define RT_TEST_HARNESS_H

#include "ir/ir.h"
#include "ir/transform/transform.h"
#include "schedule/schedule.h"
#include "targets/targets.h"

/* A tensor of the oracle: values as doubles whatever the dtype. */
typedef struct hx_tensor {
    ir_dtype dtype;
    int ndim;
    int64_t shape[IR_MAX_DIMS];
    int64_t n;
    double *v;
    bool borrowed;      /* an input: the oracle does not free it */
} hx_tensor;

typedef struct hx_oracle {
    const ir_expr *func;
    hx_tensor *const *inputs;
} hx_oracle;

hx_tensor *hx_tensor_new(ir_dtype dt, int ndim, const int64_t *shape);
void hx_tensor_free(hx_tensor *t);
/* Frees ts[0..n). */
void hx_tensors_free(hx_tensor **ts, int n);
/* Evaluates a primitive function on inputs (one per parameter); returns the
 * number of outputs written to outputs[]. */
int hx_oracle_run(const ir_expr *func, hx_tensor *const *inputs, hx_tensor **outputs);

/* Evaluates a primitive function with the reference kernels of its ops
 * (ir/ref_*.c, the interpreter's): the oracle of every generated kernel.
 * Same contract as hx_oracle_run; aborts the test when a kernel fails. */
int hx_ref_run(const ir_expr *func, hx_tensor *const *inputs, hx_tensor **outputs);

/* Parses and type-checks Relay text, then optimizes it at -O3 (fusion);
 * aborts the test on errors. */
ir_module *hx_load(const char *name, const char *text);
/* The primitive functions called from @main, in call order (malloc'd array). */
size_t hx_primitives(const ir_module *m, const ir_expr ***out);
/* The last primitive function @main calls (where a model's anchor is), or NULL. */
const ir_expr *hx_last_primitive(const ir_module *m);
/* The schedule of primitive function f (its diagnostics printed to stderr), or NULL. */
sch_schedule *hx_schedule(const ir_expr *f);

/* One generated kernel. */
typedef struct hx_kernel {
    const ir_expr *func;
    sch_schedule *s;
    sch_lowered *l;
    char name[32];          /* entry point: k<N>; prologues k<N>_p<i> */
    tg_entry_fn fn;
    tg_entry_fn pro[8];
} hx_kernel;

/* Schedules func with template tmpl (NULL: its own) and cfg (NULL: the
 * defaults; naive: no template at all) and lowers it (hoisting packs of
 * every parameter when hoist). False with a diagnostic printed on failure. */
bool hx_prepare(hx_kernel *k, const ir_expr *func, const char *tmpl, const sch_config *cfg, bool naive, bool hoist);
/* A uniformly random config of sp (rand_r on *seed) among those func's
 * template (tmpl, NULL: its own) keeps on hw (NULL: sch_hw_default): drawn
 * again while the template rejects it with SCH_E_BAD_CONFIG (the conv's
 * losing channel-vector tiles, which the tuners never propose). */
void hx_config_random_kept(const ir_expr *func, const char *tmpl, const sch_space *sp, const sch_hw *hw,
                           unsigned *seed, sch_config *c);
/* hx_prepare for the machine hw describes (NULL: sch_hw_default), in its
 * compute forms (sch_create_for: depthwise convs direct on a device that is
 * no cpu or stages). */
bool hx_prepare_hw(hx_kernel *k, const ir_expr *func, const char *tmpl, const sch_config *cfg, bool naive, bool hoist,
                   const sch_hw *hw);
/* Builds kernels into shared objects, one translation unit per core
 * compiled side by side (RELAY_TUNE_CACHE must be set), and resolves their
 * entry points; NULL with the log printed on failure. */
tg_lib **hx_build(hx_kernel *ks, int n, int *nlibs);
/* hx_build into `units` translation units (kernel i in unit i % units; 0: one per core). */
tg_lib **hx_build_units(hx_kernel *ks, int n, int units, int *nlibs);
/* Unloads what hx_build loaded. */
void hx_close(tg_lib **libs, int n);
void hx_kernel_free(hx_kernel *k);
/* Runs a kernel (prologues first) on inputs; outputs[] get new tensors.
 * Returns the kernel's status. */
int hx_run(hx_kernel *k, hx_tensor *const *inputs, hx_tensor **outputs, int *nout);
/* Runs a kernel some other way (on a device): exec gets the kernel's
 * buffers (inputs filled in, outputs zeroed; f's argument order) and
 * returns its status. */
typedef int (*hx_exec_fn)(void *ctx, hx_kernel *k, void **args);
/* hx_run through exec. */
int hx_run_with(hx_kernel *k, hx_tensor *const *inputs, hx_tensor **outputs, int *nout, hx_exec_fn exec, void *ctx);
/* Random inputs for func's parameters: floats in [lo, hi], ints in [0, 3]
 * (indices of take), bools at random. */
void hx_random_inputs(const ir_expr *func, unsigned seed, double lo, double hi, hx_tensor **inputs);
/* max |got - want| / max(max |want|, 1e-6) (NaN and size mismatch: inf). */
double hx_max_rel_err(const hx_tensor *got, const hx_tensor *want);
/* The cases of a kernel check (hx_check_cases): the functions some kernels
 * compute, each case checked on its own seeded random inputs. */
typedef struct hx_cases {
    int n;                          /* cases */
    const ir_expr *const *funcs;    /* case c's function (NULL: kernel c's own, one case per kernel) */
    const int *owner;               /* kernel i's case (NULL: case i) */
    const char *const *labels;      /* case c's name in diagnostics (NULL: its kernel's template) */
    unsigned seed;                  /* case c's inputs: hx_random_inputs(funcs[c], seed + c, lo[c], hi[c]) */
    const double *lo, *hi;          /* case c's range of floats (NULL: [-1, 1]) */
    double tol;                     /* an error at or above it prints the schedule (0: 1e-4) */
    /* When not NULL, called with case c's inputs and its nw reference
     * outputs before its kernels run (a test's own checks of them). */
    void (*on_case)(void *ctx, int c, hx_tensor *const *inputs, hx_tensor *const *want, int nw);
    void *ctx;
} hx_cases;

/* The kernel check the code generation tests share: builds ks[0..n)
 * (hx_build), gives each case its seeded inputs and the reference kernels'
 * outputs on them (hx_ref_run), and runs each kernel on its case's inputs:
 * err[i] gets kernel i's error (hx_max_rel_err, the worst of its outputs;
 * inf where it did not build or run, or gave other outputs), and an error of
 * cs->tol or more prints the kernel's schedule as a TAP comment. When not
 * NULL, bad[c] counts case c's kernels off by cs->tol or more and worst[c]
 * gets its worst error. Unloads the kernels; false when the build failed. */
bool hx_check_cases(hx_kernel *ks, int n, const hx_cases *cs, double *err, int *bad, double *worst);
/* Sets RELAY_TUNE_CACHE to a fresh temporary directory, removed at exit. */
void hx_temp_cache(void);

#endif
