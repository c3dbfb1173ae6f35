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

typedef struct tg_target {
    tg_kind kind;
    char name[64];          /* "cpu" */
    int cores;              /* threads for parallel loops (-cores=N, else the online CPUs) */
    bool avx512;            /* the host (or -mcpu) has AVX-512F */
    bool avx2;
    sch_hw hw;              /* what schedule templates see */
    char cflags[256];       /* flags for the system compiler */
} tg_target;

/* Parses a target string ("cpu", "cpu -cores=2"); false with a message
 * (static text) in *why for an unknown target or option. */
bool tg_target_parse(const char *text, tg_target *t, const char **why);

/* ---- codegen_c.c: LoopIR -> C ------------------------------------------- */

/* Appends the includes and helpers every generated translation unit starts
 * with (once per unit). */
void tg_c_prelude(su_buf *out);
/* Appends function f as C: a static body with one restrict pointer per
 * buffer and an exported entry `int NAME(void *const *args)` taking the
 * buffers in f's argument order (returns 0, or -1 when a temporary could not
 * be allocated). name must be a C identifier. */
void tg_c_func(su_buf *out, const sch_func *f, const char *name);

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
 * else $HOME/.cache/relay-tune (malloc'd). */
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

#endif
