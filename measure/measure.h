/* measure.h — the map of measure/: timing candidates safely. A runner
 * process, forked before the tool starts any thread, forks one child per
 * candidate, so that a crash, a hang or a wrong answer costs one record and
 * never the session, and so that OpenMP in the candidate starts clean.
 * Prefix: ms_. Uses targets/ (code generation, the compiler), schedule/
 * (templates, lowering), ir/ (tensors) and support/ (error codes). */
#ifndef RT_MEASURE_H
#define RT_MEASURE_H

#include "ir/ir.h"
#include "targets/targets.h"

enum { MS_MAX_EVENTS = 8, MS_MAX_REPEAT = 64, MS_MSG = 256, MS_NAME = 64 };

/* ---- papi.c: clocks and hardware counters -------------------------------- */

/* Hardware counters of one measurement: those read, and those asked for but
 * unavailable on this host (a VM often exposes none). */
typedef struct ms_counters {
    int n;                                  /* counters read */
    char names[MS_MAX_EVENTS][MS_NAME];
    long long values[MS_MAX_EVENTS];        /* totals over the timed runs */
    int nmissing;                           /* counters unavailable */
    char missing[MS_MAX_EVENTS][MS_NAME];
    char why[MS_MSG];                       /* why they are missing ("" when none are) */
} ms_counters;

/* Initializes PAPI once; false (with the reason) when the library cannot
 * start, in which case ms_clock_ns falls back to clock_gettime. */
bool ms_papi_init(char *why, size_t n);
/* Wall-clock nanoseconds (PAPI_get_real_nsec when PAPI started). */
int64_t ms_clock_ns(void);
/* An event set of the requested counters that exist here; those that do not
 * are listed in c->missing with the reason. NULL when none can be counted. */
typedef struct ms_papi_set ms_papi_set;
ms_papi_set *ms_papi_open(const char *const *events, int n, ms_counters *c);
/* Starts counting. */
void ms_papi_start(ms_papi_set *s);
/* Stops counting and adds the counts to c->values. */
void ms_papi_stop(ms_papi_set *s, ms_counters *c);
/* Releases the event set (NULL is fine). */
void ms_papi_close(ms_papi_set *s);

/* ---- runner.c: isolated, timed runs of compiled candidates ------------- */

/* How to run one candidate (AutoTVM's knobs). */
typedef struct ms_run_options {
    int warmup;             /* untimed runs first (default 1; the first is the checked run, and a second
                               sizes `number` when the first is shorter than min_repeat_ms) */
    int number;             /* runs averaged into one cost (at least; see min_repeat_ms) */
    int repeat;             /* costs to report (1..MS_MAX_REPEAT) */
    int min_repeat_ms;      /* raise `number` until one repeat lasts this long */
    double timeout_s;       /* wall-clock limit for the whole candidate */
    bool flush_cache;       /* evict caches before each repeat */
    double stop_above;      /* seconds a run: once a repeat costs more, the rest are skipped
                               (the candidate is plainly slower than what is known; 0: never) */
    int nevents;            /* PAPI counters to read (may be unavailable) */
    const char *events[MS_MAX_EVENTS];
} ms_run_options;

/* Default options: warmup 1, number 1, repeat 3, min_repeat_ms 0, 10 s. */
ms_run_options ms_run_defaults(void);

/* The outcome of one candidate. */
typedef struct ms_result {
    su_merr error;                  /* NONE when costs are valid */
    char msg[MS_MSG];               /* what went wrong (signal, error size, ...) */
    int ncosts;
    double costs[MS_MAX_REPEAT];    /* seconds per run, one per repeat */
    double mean;                    /* mean of costs */
    int number;                     /* runs per repeat actually used */
    double max_abs_err;             /* largest difference from the expected output */
    ms_counters counters;
    double run_time_s;              /* wall time of the whole measurement */
    bool stopped;                   /* fewer repeats than asked: one cost more than stop_above */
    double load_s;                  /* of which: mapping the data and loading the object */
    double check_s;                 /* ... the first run and the check of its output */
    int thrown;                     /* calibrating passes that fell short of min_repeat_ms (not kept) */
} ms_result;

/* The inputs of a task and the expected outputs (from the reference
 * kernels), written once to a file that every candidate's child maps. */
typedef struct ms_task_data ms_task_data;
/* Writes the data to a file in dir ($TMPDIR or /tmp when NULL); NULL with a
 * reason in err. rtol/atol: a candidate's output o matches e when
 * |o - e| <= atol + rtol * |e| everywhere. */
ms_task_data *ms_task_data_create(const char *dir, int nin, const ir_tensor *const *in, int nout,
                                  const ir_tensor *const *expected, double rtol, double atol, su_buf *err);
/* Removes the file and frees the handle (NULL is fine). */
void ms_task_data_free(ms_task_data *t);

/* The runner process. */
typedef struct ms_runner ms_runner;
/* Forks the runner; call before the process starts any thread (OpenMP,
 * XGBoost), so that children start clean. NULL with a reason in err. */
ms_runner *ms_runner_start(su_buf *err);
/* Runs entry `symbol` (int symbol(void *const *args): inputs then outputs)
 * of shared object so_path on the task's data in a child; fills *out. False
 * only when the runner process itself failed (stop it and start another); a
 * failing candidate returns true with out->error set. */
bool ms_runner_measure(ms_runner *r, const ms_task_data *t, const char *so_path, const char *symbol,
                       const ms_run_options *o, ms_result *out);
/* Stops the runner process (NULL is fine). The runner removes the data files
 * of the tasks it ran as it stops (also when the tool died without
 * removing them), so task data must not outlive the runner that used it. */
void ms_runner_stop(ms_runner *r);

/* ---- builder.c: candidates into shared objects ---------------------------- */

/* One candidate: a primitive function scheduled by a template with a config. */
typedef struct ms_candidate {
    const ir_expr *func;        /* the primitive function (typed) */
    const char *template_name;  /* its template (NULL: the anchor's) */
    const sch_config *cfg;      /* the config (NULL: the template's defaults) */
    const bool *param_const;    /* per parameter: a weight, whose packing is hoisted into a
                                   prologue the entry runs once (NULL: none) */
    const char *symbol;         /* the entry point: a C identifier, unique in the batch; the
                                   entry takes the parameters, then the outputs */
} ms_candidate;

/* What became of a candidate. */
typedef struct ms_built {
    su_merr error;              /* NONE, INVALID_CONFIG, INSTANTIATION, COMPILE_ERROR,
                                   COMPILE_TIMEOUT (UNKNOWN: the cache could not be written) */
    char *msg;                  /* why (malloc'd; the compiler's log, cut to 4 KiB), or NULL */
    char *so_path;              /* the shared object with `symbol` (malloc'd), NULL on an error */
    double build_time_s;        /* scheduling and code generation, plus its share of its unit's
                                   compile (0 for a cached object) */
    double codegen_s;           /* of which: scheduling, lowering and writing its C */
} ms_built;

typedef struct ms_build_options {
    int jobs;                   /* compilers at once (0: the target's cores) */
    int per_unit;               /* candidates per translation unit (0: the batch spread over
                                   `jobs` units) */
    double timeout_s;           /* compile time limit per candidate (a unit of k gets k times
                                   as long; 0: none) */
} ms_build_options;

/* Builds n candidates for target t; out[i] tells what became of cands[i].
 * Never fails as a whole: each candidate gets its own error. A unit that
 * fails to compile is compiled again candidate by candidate. */
void ms_build(const ms_candidate *cands, int n, const tg_target *t, const ms_build_options *o, ms_built *out);
/* Frees a result's strings. */
void ms_built_free(ms_built *b);
/* Schedules and lowers candidate c for t (schedule/build.c) into *k; false
 * with out's error (INVALID_CONFIG or INSTANTIATION) and message set, k freed. */
bool ms_schedule(const ms_candidate *c, const tg_target *t, sch_kernel *k, ms_built *out);

/* ---- runner.c, for opencl.c: a task's data in a candidate's child ------- */

/* The task's data file as a candidate's child maps it. */
typedef struct ms_child_data {
    int nin, nout;              /* inputs, then expected outputs, in data[] */
    const void *data[64];       /* each tensor's bytes (a read-only mapping) */
    int64_t bytes[64];
    const void *ref[64];        /* runner.c's description of each (for ms_child_check) */
    double rtol, atol;
} ms_child_data;
/* Maps the task data file at path; false with res's error set. */
bool ms_child_map(const char *path, ms_child_data *d, ms_result *res);
/* Checks output i (got) against the expected one, updating res->max_abs_err;
 * false with res's error WRONG_ANSWER and the first mismatch. */
bool ms_child_check(const ms_child_data *d, int i, const void *got, ms_result *res);
/* Completes a timed result: done of asked repeats (costs[0..done) summing
 * to sum) of number runs each, no error; when res->stopped, the message
 * says the last repeat was over the cutoff. */
void ms_result_timed(ms_result *res, int done, int asked, int number, double sum, double cutoff);

/* ---- opencl.c: measuring on an OpenCL device ------------------------------
 * The builder writes each candidate's OpenCL C and launch description to a
 * candidate file in the cache (no OpenCL call in the tool); the runner's
 * child builds it with clBuildProgram, binds the data once and times the
 * kernel's launches by their profiling events (device time). */

/* Writes the candidate files of n candidates for OpenCL target t; out[i] is
 * as ms_build's (so_path: the candidate file; INVALID_CONFIG, INSTANTIATION,
 * or UNKNOWN when the file cannot be written). */
void ms_cl_build(const ms_candidate *cands, int n, const tg_target *t, ms_built *out);
/* Whether path is an OpenCL candidate file (its first bytes say so). */
bool ms_cl_is_candidate(const char *path);
/* In the runner's child: builds, checks and times the candidate file at
 * cand_path on the task data at data_path with options o; fills res as
 * the CPU child does (costs: device seconds per run). */
void ms_cl_child(const char *cand_path, const char *data_path, const ms_run_options *o, ms_result *res);
/* For tests only (fault injection, as RELAY_TUNE_CC is for the CPU): fn sees
 * every candidate's OpenCL C with its entry name before it is written and
 * may change it; NULL turns it off. No command sets it. */
typedef void (*ms_cl_source_hook)(su_buf *src, const char *symbol, void *ctx);
void ms_cl_set_source_hook(ms_cl_source_hook fn, void *ctx);

#endif
