/* targets.h — the map of targets/: target descriptions, C code generation
 * from LoopIR, and building generated code into a loaded shared object
 * through the system compiler, with a cache. Prefix: tg_. Depends on
 * schedule/, ir/ and support/.
 *
 * Generated C uses only identifiers from our own counters (i0, p0, o0, t0,
 * l0, w0) and names the caller chooses (which callers derive from hashes and
 * counters), never text from a model. */
#ifndef RT_TARGETS_H
#define RT_TARGETS_H

#include "schedule/schedule.h"

/* ---- target.c: target descriptions -------------------------------------- */

typedef enum { TG_CPU, TG_OPENCL } tg_kind;

/* The x86-64 vector ISAs a cpu target plans for, narrowest first. */
typedef enum { TG_ISA_GENERIC, TG_ISA_SSE42, TG_ISA_AVX2, TG_ISA_AVX512 } tg_isa;

/* An OpenCL device as queried (targets/opencl.c): its identity and the limits
 * templates and launches plan for. */
typedef struct tg_cl_device {
    int platform, device;   /* indices (-platform=N -device=M) */
    char platform_name[128];
    char name[128];         /* CL_DEVICE_NAME */
    char vendor[128];
    char driver[64];        /* CL_DRIVER_VERSION */
    char version[160];      /* CL_DEVICE_VERSION ("OpenCL 3.0 PoCL ...") */
    char type[16];          /* "cpu", "gpu", "accelerator", "other" */
    int compute_units;
    int64_t max_wg;         /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
    int wg_dims;            /* CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS */
    int64_t max_items[3];   /* CL_DEVICE_MAX_WORK_ITEM_SIZES */
    int64_t local_mem;      /* bytes */
    int64_t global_mem;     /* bytes */
    int64_t global_cache;   /* bytes of the global memory cache (0: none) */
    int vec_float;          /* CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT */
    bool fp64;              /* the device has double precision */
} tg_cl_device;

typedef struct tg_target {
    tg_kind kind;
    char name[64];          /* "cpu", "opencl" */
    tg_isa isa;             /* what the templates plan for (-isa, -mcpu's, else the host's) */
    int cores;              /* threads for parallel loops (-cores=N, else the online CPUs) */
    int fma;                /* FMA pipes of a core (-fma=N, else 2) */
    int64_t l1, l2, l3;     /* data cache bytes: L1d and L2 per core, L3 (-lN=, -mcpu's, else sysfs) */
    bool cache_given[3];    /* -l1/-l2/-l3 given */
    bool fma_given;
    bool host;              /* compiled with -march=native for the host */
    char march[48];         /* the -march value */
    sch_hw hw;              /* what schedule templates see */
    char cflags[256];       /* flags for the system compiler */
    tg_cl_device cl;        /* kind TG_OPENCL: the device */
    bool link_opencl;       /* tg_build_shared links the ICD loader (an OpenCL model's host C) */
} tg_target;

/* Parses a target string ("cpu", "cpu -mcpu=znver3 -cores=2", "cpu
 * -isa=avx2 -l2=512K", "opencl", "opencl -platform=0 -device=1"; an opencl
 * target queries its device, so the device must be on this host); false with a message (static text) in *why for an
 * unknown target, option or CPU name. */
bool tg_target_parse(const char *text, tg_target *t, const char **why);
/* Whether this host can execute code built for t; false with *why (static
 * text) when t's ISA is wider than the host's. Compiling stays allowed. */
bool tg_target_runnable(const tg_target *t, const char **why);
/* The host's widest ISA, capped by $RELAY_TUNE_MAX_ISA when that is set. */
tg_isa tg_host_isa(void);
/* An ISA's name ("avx512", "avx2", "sse4.2", "x86-64"). */
const char *tg_isa_name(tg_isa isa);
/* Parses an ISA name (also "generic", "sse2"); false when unknown. */
bool tg_isa_parse(const char *s, tg_isa *out);
/* Appends the ISA features t's code may use ("sse4.2 avx avx2 fma"); for an
 * OpenCL target the device's identity (name, vendor, driver and OpenCL
 * versions), so that records of one device never apply to another. */
void tg_target_features(const tg_target *t, su_buf *b);
/* Appends a one-line description of t (ISA, lanes, caches, cores, -march). */
void tg_target_print(const tg_target *t, su_buf *b);

/* ---- lang_c.c: LoopIR -> C ---------------------------------------------- */

/* The C + OpenMP language: the forms the shared LoopIR walk (sch_emit_*)
 * writes C through. */
extern const sch_lang tg_lang_c;
/* Appends the includes and helpers every generated translation unit starts
 * with (once per unit): tg_lang_c's prelude. */
void tg_c_prelude(su_buf *out);
/* Appends function f as C: a static body with one restrict pointer per
 * buffer and an exported entry `int NAME(void *const *args)` taking the
 * buffers in f's argument order (returns 0, or -1 when a temporary could not
 * be allocated). name must be a C identifier. sch_emit_func with tg_lang_c. */
void tg_c_func(su_buf *out, const sch_func *f, const char *name);

/* ---- lang_opencl.c: LoopIR -> OpenCL C ----------------------------------- */

/* The OpenCL C languages: tg_lang_cl_grid runs one nest over a grid of
 * work-groups (its outermost parallel loop on the global index, or its
 * bound loops on the work-group and work-item indices); tg_lang_cl_group
 * runs a function as one work-group whose work-items share each nest's
 * outermost parallel loop (a barrier after each); tg_lang_cl_single as one
 * work-item. The last two run bound loops serially. */
extern const sch_lang tg_lang_cl_grid;
extern const sch_lang tg_lang_cl_group;
extern const sch_lang tg_lang_cl_single;
/* True when f can run as one work-group: every store lies inside the
 * outermost parallel loop of its nest (else work-items would race on it). */
bool tg_cl_groupable(const sch_func *f);
/* One launch of a function on the device: a kernel entry of the program and
 * its NDRange (global and local sizes per dimension; local 0: the driver's
 * choice). */
typedef struct tg_cl_step {
    char name[64];
    int dims;               /* 1..3 */
    int64_t global[3], local[3];
    int64_t local_mem;      /* bytes of the entry's __local arrays (a work-group reduction's); where
                               > 0 over a grid, local[] is exactly its item loops' extents, never the
                               driver's choice: the code indexes the arrays by its local id */
} tg_cl_step;
enum { TG_CL_MAX_STEPS = 8 };
/* How one function runs on the device: its launches in order (each over all
 * of the function's buffers and the scratch buffer) and the scratch bytes
 * they need. What a kernel's launches are is decided here, in
 * targets/lang_opencl.c, and nowhere else: the test harness, measurement
 * and compiled models launch what this says. */
typedef struct tg_cl_launch {
    int n;
    tg_cl_step step[TG_CL_MAX_STEPS];
    int64_t scratch;
} tg_cl_launch;
/* Appends f to out as the OpenCL C kernels of its launches for device d
 * (entry names NAME, NAME_1, ...: `name` is a C identifier; each takes
 * `__global T *p0, ..., __global char *scratch`: f's buffers in argument
 * order, then the scratch buffer; each under a comment with its NDRange) and
 * describes in *l how to launch them: one launch per top-level nest, over
 * many work-groups where the nest's outer loop is parallel or bound, else
 * one work-item; more nests than TG_CL_MAX_STEPS (or d NULL): one launch,
 * one work-group or one work-item. The unit starts with
 * tg_lang_cl_group.prelude (once). */
void tg_cl_func(su_buf *out, const sch_func *f, const char *name, const tg_cl_device *d, tg_cl_launch *l);

/* ---- opencl.c: OpenCL platforms, devices, programs ------------------------ */

/* Whether this build has OpenCL (configure found the ICD loader). */
bool tg_cl_built(void);
/* Queries device `device` of platform `platform`; false with *why (static
 * text) when the build has no OpenCL, there is no such platform or device. */
bool tg_cl_query(int platform, int device, tg_cl_device *out, const char **why);
/* Appends this host's OpenCL platforms and devices, one line each (or why
 * there are none); returns the number of devices. */
int tg_cl_list(su_buf *b);
/* A program built for one device, with its context and queue. */
typedef struct tg_cl_prog tg_cl_prog;
/* Builds OpenCL C source for the device of t (clBuildProgram); NULL with the
 * reason or the build log in *log (malloc'd). */
tg_cl_prog *tg_cl_build(const tg_target *t, const char *src, char **log);
/* Runs the launches l of p in order over host buffers args[0..nargs) of
 * bytes[i] (copied in before, those with out[i] copied back after) and a
 * scratch buffer of l->scratch bytes. *device_ns (NULL: not wanted) gets the
 * launches' time on the device from profiling events. 0, or -1 with *log. */
int tg_cl_run(tg_cl_prog *p, const tg_cl_launch *l, int nargs, void *const *args, const int64_t *bytes,
              const bool *out, int64_t *device_ns, char **log);
void tg_cl_free(tg_cl_prog *p);
/* Buffers bound once on p's device, for timing: n buffers of bytes[i], those
 * with init[i] (init may be NULL) copied in from the host. NULL with *log. */
typedef struct tg_cl_bound tg_cl_bound;
tg_cl_bound *tg_cl_bind(tg_cl_prog *p, int n, const int64_t *bytes, void *const *init, char **log);
/* Runs launches l `runs` times over bound buffers idx[0..nidx) (the launch's
 * arguments in order) and a scratch buffer of l->scratch bytes; *device_ns
 * gets the sum of the launches' device time from profiling events. 0, or -1
 * with *log (malloc'd). */
int tg_cl_time(tg_cl_bound *b, const tg_cl_launch *l, int nidx, const int *idx, int runs, int64_t *device_ns,
               char **log);
/* Copies bytes of bound buffer i into dst (blocking). 0, or -1 with *log. */
int tg_cl_read(tg_cl_bound *b, int i, void *dst, int64_t bytes, char **log);
/* Releases the buffers (NULL is fine); the program stays. */
void tg_cl_unbind(tg_cl_bound *b);

/* ---- kernel.c: one built kernel as C ------------------------------------ */

/* The parts of a kernel tg_kernel_c writes. */
enum {
    TG_KERNEL_BODY = 1,         /* the kernel: NAME (NAME_k under the wrapper) */
    TG_KERNEL_PROLOGUES = 2,    /* its weight-packing prologues: NAME_p0, NAME_p1, ... */
    TG_KERNEL_WRAPPER = 4,      /* where there are prologues, the entry NAME that packs the
                                   weights once into static buffers, then runs NAME_k: the
                                   builder's candidate, measured as the model runs it */
    TG_KERNEL_MEASURED = TG_KERNEL_BODY | TG_KERNEL_PROLOGUES | TG_KERNEL_WRAPPER,
};
/* Appends the parts (TG_KERNEL_*) of lowered kernel l under entry name
 * `name` (a C identifier) to a unit begun with tg_c_prelude; every entry
 * takes its buffers as `void *const *args` (tg_c_func). */
void tg_kernel_c(su_buf *out, const sch_lowered *l, const char *name, unsigned parts);

/* ---- build.c: the system compiler, the cache, dlopen --------------------- */

/* X(ID, name): build errors (a tuner counts them). */
#define TG_ERRORS(X)                                    \
    X(OK, "ok")                                         \
    X(IO, "cannot write the cache")                     \
    X(COMPILE, "compile error")                         \
    X(LOAD, "cannot load the shared object")           \
    X(TIMEOUT, "compile timeout")

typedef enum {
#define X(id, name) TG_E_##id,
    TG_ERRORS(X)
#undef X
} tg_err;

const char *tg_err_name(tg_err e);

/* A loaded shared object. */
typedef struct tg_lib tg_lib;

/* The cache directory: $RELAY_TUNE_CACHE, else $XDG_CACHE_HOME/relay-tune,
 * else $HOME/.cache/relay-tune (malloc'd), created when it is missing. */
char *tg_cache_dir(void);
/* Compiles C source into a shared object (or finds it in the cache, keyed
 * by the hash of the compiler, flags and source) and loads it. The compiler
 * is $RELAY_TUNE_CC or cc; flags are the target's. On an error, *log gets
 * the compiler's messages or the reason (malloc'd; may be NULL). */
tg_err tg_build(const char *src, const tg_target *t, tg_lib **out, char **log);
/* Builds n translation units, running up to `jobs` compilers at once;
 * out[i] gets unit i's object (NULL where it failed). Returns the first
 * error (its log in *log), TG_E_OK when all were built. */
tg_err tg_build_many(const char *const *srcs, int n, const tg_target *t, int jobs, tg_lib **out, char **log);
/* Compiles n translation units into cached object files (up to `jobs`
 * compilers at once, keyed like tg_build) and links them into one shared
 * object at out_path (written under a private name, then renamed), linked
 * only against libc, libm and the OpenMP runtime. Nothing is loaded. */
tg_err tg_build_shared(const char *const *srcs, int n, const tg_target *t, int jobs, const char *out_path, char **log);
/* Options of tg_build_units. */
typedef struct tg_build_opts {
    int jobs;               /* compilers run at once (at least 1) */
    double timeout_s;       /* a compiler running longer is killed: TG_E_TIMEOUT (0: no limit) */
} tg_build_opts;
/* Builds n translation units like tg_build_many, reporting each unit:
 * out[i] its object (NULL where it failed), errs[i] its error, logs[i] (may
 * be NULL) the compiler's messages or the reason (malloc'd, NULL when none),
 * seconds[i] (may be NULL) the compiler's wall time (0 for a cache hit). */
void tg_build_units(const char *const *srcs, int n, const tg_target *t, const tg_build_opts *o, tg_lib **out,
                    tg_err *errs, char **logs, double *seconds);
/* The address of an exported function, or NULL. */
void *tg_lib_sym(tg_lib *l, const char *name);
/* The shared object's path (in the cache). */
const char *tg_lib_path(const tg_lib *l);
/* Unloads (NULL is fine). */
void tg_lib_close(tg_lib *l);

/* The signature of every generated entry point. */
typedef int (*tg_entry_fn)(void *const *args);

/* ---- memplan.c: the static memory plan of a compiled model -------------- */

/* One intermediate buffer: its size and the steps (calls) from the one that
 * writes it to the last that reads it; the plan fills offset. */
typedef struct tg_mem_item {
    int64_t bytes;
    int first, last;
    int64_t offset;
} tg_mem_item;

/* What a plan costs. */
typedef struct tg_mem_stats {
    int64_t peak;           /* the arena: max offset + bytes */
    int64_t sum;            /* every intermediate in a buffer of its own */
    int64_t live;           /* the most bytes live at one step (a lower bound on peak) */
} tg_mem_stats;

/* Places the items in one arena so that two whose lifetimes overlap never
 * share bytes: largest first, each at the lowest offset (a multiple of
 * align) that is free over its lifetime. Returns the statistics. */
tg_mem_stats tg_memplan(tg_mem_item *items, int n, int64_t align);

/* ---- model.c: ahead-of-time compiled models ------------------------------ */

/* A tuned config of one workload, resolved before compiling (a parsed
 * value: the tuner read it from its database). */
typedef struct tg_kernel_config {
    const char *workload_key;   /* sch_workload_key of the kernels it is for */
    sch_config cfg;             /* the config, in the space of the workload's template on the target */
} tg_kernel_config;

typedef struct tg_model_opts {
    const char *out_path;   /* the shared object to write (NULL: in the cache, named by
                               the hash of its sources; one already there is reused) */
    const tg_kernel_config *configs; /* the tuned configs (a workload not there: its
                               template's defaults) */
    int nconfigs;
    int jobs;               /* compilers at once (0: the target's cores) */
    FILE *notes;            /* where to say that a config does not apply (NULL: nowhere) */
} tg_model_opts;

/* What went into a compiled model. */
typedef struct tg_model_info {
    int ncalls;             /* kernel calls per run */
    int nkernels;           /* distinct kernels */
    int ntuned;             /* kernels built from a config of o->configs */
    int ninputs, noutputs;
    int nconsts;            /* weights stored */
    int64_t weight_bytes;   /* bytes of weights stored (packed where packed) */
    int npacked;            /* weights packed at compile time */
    int nintermediates;
    tg_mem_stats mem;       /* the plan of the intermediates */
    char *path;             /* the object written (malloc'd; the caller frees it) */
} tg_model_info;

/* Compiles @main of m (type-checked and optimized, so that it calls only
 * primitive functions) into one shared object exporting the ABI of
 * include/relaytune_model.h: every called primitive function lowered with
 * its template (config from o->configs, else the defaults), weights packed
 * at compile time, the calls in order over a static memory plan. Parameters
 * of @main are the model's inputs; constants are its weights. False with
 * the reason in *err (malloc'd). */
bool tg_model_compile(const ir_module *m, const tg_target *t, const tg_model_opts *o, tg_model_info *info,
                      char **err);

#endif
