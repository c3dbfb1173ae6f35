/* relaytune.h — the public C API of librelaytune, which the relay-tune program
 * itself uses. Everything here is prefixed rt_; nothing else is exported.
 *
 * Errors: functions that can fail on user input take a `FILE *errs` and write
 * diagnostics there in the form "FILE:LINE:COL: error: MESSAGE" followed by the
 * source line and a caret; pass NULL to discard them. */
#ifndef RELAYTUNE_H
#define RELAYTUNE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
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

/* Parses and type-checks a Relay text file, or imports an ONNX model (a path
 * ending in .onnx: its weights become constants, its graph inputs the
 * parameters of @main); NULL after reporting errors to errs. */
rt_module *rt_module_load(const char *path, FILE *errs);
/* Imports an ONNX model (`relay-tune import`). With params_out, its float
 * weights become parameters of @main after the graph's inputs, and their
 * values are written to the .npz file params_out (keys: parameter names);
 * without, they are constants. NULL after reporting errors to errs. */
rt_module *rt_onnx_import(const char *path, const char *params_out, FILE *errs);
/* Parses and type-checks Relay text held in memory; name is used in messages. */
rt_module *rt_module_parse(const char *name, const char *text, size_t len, FILE *errs);
/* The module as canonical Relay text (malloc'd; free with free()). */
char *rt_module_to_text(const rt_module *m, int flags);
/* Number of global functions in the module. */
size_t rt_module_num_functions(const rt_module *m);
/* Frees a module (NULL is fine). */
void rt_module_free(rt_module *m);

/* Binds parameters of @main to the arrays of an .npz file (key = parameter
 * name without %), which become constants that optimization can fold; keys
 * that name no parameter are reported as a note. Returns the number bound,
 * or -1 after writing errors (unreadable file, a shape or dtype mismatch
 * naming the parameter and both types) to errs. */
int rt_module_bind_params(rt_module *m, const char *npz_path, FILE *errs);

/* Binds every parameter of @main but the first `keep` (the model's inputs)
 * to seeded random constants, drawn as `relay-tune run --random-params`
 * draws them. Returns the number bound, or -1 after writing errors. */
int rt_module_bind_random_params(rt_module *m, unsigned long long seed, int keep, FILE *errs);

#define RT_WINOGRAD_AUTO 2

/* Options of rt_module_optimize. Zero-initialized means -O0 with no printing. */
typedef struct rt_opt_options {
    int level;                  /* optimization level 0..3 */
    const char *print_after;    /* print the module to errs after this pass */
    int print_after_all;        /* nonzero: print after every pass */
    int max_fuse_depth;         /* most operators in one fused function (0: 256) */
    int check;                  /* nonzero: run @main in the interpreter before and after
                                   each pass on seeded random inputs; fail at the first
                                   pass that changes the result */
    unsigned long long check_seed; /* seed of those inputs */
    int layout_block;           /* alter-layout (-O3): convs in NCHW[x]c with x up to this (0: plain NCHW) */
    int layout_auto;            /* nonzero: each conv's blocks chosen by a DP over the graph (kernel
                                   and transform time), layout_block being the vector lanes */
    int layout_tasks;           /* with layout_auto, nonzero: the module's tasks (rt_module_tasks,
                                   rt_tune) cover every candidate block of every conv, not only the
                                   chosen ones (the graph is optimized once more per candidate) */
    const char *layout_db;      /* with layout_auto: the DP's kernel times from this tuning database's
                                   best records (a conv and blocks without one: the analytic model) */
    const char *layout_target;  /* the target of those records (NULL: "cpu") */
    int winograd;               /* -O3: 3x3 stride-1 convs with constant weights as Winograd convs
                                   (docs/winograd.md): 1 every one, RT_WINOGRAD_AUTO those where
                                   winograd_target's vectors make it pay, none with layout_block
                                   (0: none) */
    int winograd_tile;          /* with winograd: the output tile, 2 or 4 (0: from each conv's shape) */
    const char *winograd_target; /* RT_WINOGRAD_AUTO: the target (NULL: "cpu"; not a cpu: none) */
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
/* rt_module_tasks for a target (NULL: "cpu", the same list): on an opencl
 * target the functions without an anchor whose device template has more
 * than one config (reduce_cl, default_cl) follow the anchored tasks; -1
 * after a message to errs for a bad target. */
int rt_module_tasks_on(rt_module *m, const char *target, const rt_task **tasks, size_t *n, FILE *errs);
/* The tasks as a JSON document (malloc'd): {"tasks": [...], "total_gflop": x}. */
char *rt_tasks_json(const rt_task *tasks, size_t n);
/* ---- tuning database -------------------------------------------------------
 * Every measurement is kept in one SQLite file (docs/database.md); logs of
 * JSON lines (docs/log-format.md) carry records between machines. Functions
 * that fail write "relay-tune-style" messages to errs (NULL discards them). */

/* An open tuning database. */
typedef struct rt_db rt_db;

/* What import and merge did. */
typedef struct rt_db_counts {
    size_t imported;     /* new records stored */
    size_t duplicates;   /* exact duplicates of stored records, skipped */
    size_t rejected;     /* invalid lines or records, skipped and reported */
} rt_db_counts;

/* Flags for rt_db_open, rt_db_stats and rt_db_best. */
enum {
    RT_DB_CREATE = 1,    /* rt_db_open: create the file when missing */
    RT_DB_JSON = 2,      /* rt_db_stats, rt_db_best: JSON instead of text */
};

/* The default database path: $RELAY_TUNE_DB when set and not empty, else
 * "./relay-tune.db". */
const char *rt_db_default_path(void);
/* Opens (or with RT_DB_CREATE creates) a database; NULL after a message when
 * the file is missing, is not a relay-tune database, is corrupt or is newer. */
rt_db *rt_db_open(const char *path, int flags, FILE *errs);
/* Closes a database (NULL is fine). */
void rt_db_close(rt_db *db);
/* Writes the records of a workload key and/or target name (NULL: all) as JSON
 * lines; returns how many, or -1 after a message. */
long long rt_db_export(rt_db *db, const char *workload, const char *target, FILE *out, FILE *errs);
/* Imports a JSON-lines log (name is used in messages). Rejected lines are
 * reported to errs as NAME:LINE: rejected: REASON (the first 20 of them).
 * Adds to counts; returns 0, or -1 on a read or database error. */
int rt_db_import(rt_db *db, FILE *in, const char *name, rt_db_counts *counts, FILE *errs);
/* Merges the database at other_path in, like rt_db_import. */
int rt_db_merge(rt_db *db, const char *other_path, rt_db_counts *counts, FILE *errs);
/* Counts of workloads, records, targets, sessions and errors by kind, as text
 * or (RT_DB_JSON) a JSON object; malloc'd, NULL after a message. */
char *rt_db_stats(rt_db *db, int flags, FILE *errs);
/* The best config of every workload (of one target, or all when NULL) with
 * GFLOP/s and speedup over the default config; malloc'd, NULL after a message. */
char *rt_db_best(rt_db *db, const char *target, int flags, FILE *errs);
/* Deletes failed records older than days and compacts the file; returns how
 * many were deleted, or -1 after a message. */
long long rt_db_gc(rt_db *db, double days, FILE *errs);
/* Stores benchmark results read as JSON objects, one a line (fields in
 * docs/benchmarks.md; a missing timestamp is now, a missing host this
 * machine's name). All lines are checked before any is stored: returns how
 * many results were read (an exact duplicate of a stored one is kept once),
 * or -1 after a message naming the line. */
long long rt_db_bench_add(rt_db *db, FILE *in, const char *name, FILE *errs);
/* Benchmark results of a model (NULL: all), newest first, as a table or
 * (RT_DB_JSON) a JSON array; malloc'd, NULL after a message. */
char *rt_db_benchmarks(rt_db *db, const char *model, int flags, FILE *errs);
/* ---- tensors ---------------------------------------------------------------
 * Dense C-order tensors with 64-byte aligned data, in the dtypes of Relay
 * ("float32", "float16", "float64", "int8", "int16", "int32", "int64",
 * "uint8", "bool"). Files are numpy's .npy; see docs/tensor-files.md. */

typedef struct rt_tensor rt_tensor;

/* A zeroed tensor; NULL for an unknown dtype, a negative extent, a rank above
 * 16 or too little memory. */
rt_tensor *rt_tensor_new(const char *dtype, int ndim, const int64_t *shape);
/* Reads a .npy file (format 1.0 to 3.0; Fortran order and big-endian data
 * are converted); NULL after printing "error: FILE: why" to errs. */
rt_tensor *rt_tensor_load(const char *path, FILE *errs);
/* Writes t as a .npy file; 0 on success, -1 after printing the reason. */
int rt_tensor_save(const rt_tensor *t, const char *path, FILE *errs);
/* The dtype's name ("float32"). */
const char *rt_tensor_dtype(const rt_tensor *t);
/* The rank and the extents. */
int rt_tensor_ndim(const rt_tensor *t);
const int64_t *rt_tensor_shape(const rt_tensor *t);
/* The elements, and their size in bytes. */
void *rt_tensor_data(rt_tensor *t);
const void *rt_tensor_cdata(const rt_tensor *t);
size_t rt_tensor_nbytes(const rt_tensor *t);
/* The type as Relay writes it ("Tensor[(1, 1000), float32]"; malloc'd). */
char *rt_tensor_type(const rt_tensor *t);
/* Frees a tensor (NULL is fine). */
void rt_tensor_free(rt_tensor *t);

/* ---- running a model -------------------------------------------------------
 * The values of a function's parameters come from named inputs (the name is
 * the parameter's without its %, as in numpy.savez(**params)); the result is
 * a tensor or a tuple of them. */

/* Named tensors handed to rt_run. */
typedef struct rt_inputs rt_inputs;

rt_inputs *rt_inputs_new(void);
/* Adds t under name, taking it over (an earlier tensor of that name is
 * replaced). origin names where it came from in messages ("x.npy"); strict
 * makes a name that matches no parameter an error (else a warning). */
void rt_inputs_set(rt_inputs *in, const char *name, rt_tensor *t, const char *origin, int strict);
/* Adds every array of an .npz file (numpy.savez or savez_compressed), not
 * strict; 0 on success, -1 after printing "error: FILE: entry 'K.npy': why". */
int rt_inputs_load_npz(rt_inputs *in, const char *path, FILE *errs);
/* Number of inputs. */
size_t rt_inputs_count(const rt_inputs *in);
/* Frees the inputs and their tensors (NULL is fine). */
void rt_inputs_free(rt_inputs *in);

typedef struct rt_run_options {
    const char *target;         /* where to run: "interp" (NULL: interp, the reference interpreter) */
    const char *function;       /* the function to call (NULL: main) */
    int random_params;          /* fill parameters that no input gives with seeded values */
    uint64_t seed;              /* their seed (docs/interpreter.md gives the distributions) */
    const char *missing_hint;   /* appended to the message about parameters without a value */
} rt_run_options;

/* The outcome of a run. */
typedef struct rt_result rt_result;

/* Runs a function of m on the inputs (opts may be NULL). Every parameter must
 * be given (or filled) with exactly its dtype and shape. NULL after printing
 * why to errs: a missing or mistyped parameter (naming it and both types),
 * an unknown target, or a run-time error at the expression that failed. */
rt_result *rt_run(const rt_module *m, const rt_inputs *in, const rt_run_options *opts, FILE *errs);
/* The tensors of the result: one for a tensor, the fields of a tuple
 * (nested tuples flattened depth first). */
size_t rt_result_count(const rt_result *r);
const rt_tensor *rt_result_tensor(const rt_result *r, size_t i);
/* Where tensor i sits: "" for a tensor result, "0", "1", "2.0", ... for
 * fields of a tuple. */
const char *rt_result_name(const rt_result *r, size_t i);
/* True when the result is a tuple. */
int rt_result_is_tuple(const rt_result *r);
/* Wall-clock seconds the function took (inputs prepared, results not yet copied). */
double rt_result_seconds(const rt_result *r);
/* Frees the result (NULL is fine). */
void rt_result_free(rt_result *r);

/* ---- tuning --------------------------------------------------------------
 * `relay-tune tune`: every task's schedule is searched on this machine, each
 * candidate measured in an isolated process and checked against the
 * reference interpreter, every result kept in the database; compiling then
 * uses the best valid record per task. See docs/tuning.md. */

/* The measurement runner: a process that runs every candidate in a child of
 * its own, so that a crash or a hang costs one record. */
typedef struct rt_runner rt_runner;

/* Forks the runner. Call it before anything that may start threads:
 * optimizing a model with bound weights runs the reference kernels, which
 * start OpenMP's threads, and a process forked after that can hang in its
 * first parallel region. NULL after a message. */
rt_runner *rt_runner_start(FILE *errs);
/* Stops the runner (NULL is fine). */
void rt_runner_stop(rt_runner *r);

/* Tuning across machines on MPI (docs/distributed.md): every process of an
 * mpirun job runs the same command; rank 0 tunes and writes the database,
 * the other ranks build and measure the candidates it deals them. */
typedef struct rt_mpi rt_mpi;

/* Nonzero when this process was started by mpirun (Open MPI's or a PMIx
 * launcher's environment). */
int rt_mpi_launched(void);
/* Joins the MPI job; call after rt_runner_start (MPI starts threads). NULL
 * after a message, also when this build has no MPI. */
rt_mpi *rt_mpi_start(FILE *errs);
/* This process's rank and the job's size. */
int rt_mpi_rank(const rt_mpi *c);
int rt_mpi_size(const rt_mpi *c);
/* A rank other than 0: builds and measures what rank 0 deals it on target
 * (its own host's description of the string) with `jobs` compilers (0: the
 * target's cores) until rank 0 says stop. 0, or -1 after a message (rank 0
 * went silent, the runner died). */
int rt_mpi_serve(rt_mpi *c, rt_runner *r, const char *target, int jobs, FILE *errs);
/* Leaves the MPI job (NULL is fine). Leaving waits for every rank; where
 * one was lost it may never end, so after 10 s the process exits with
 * `status` (stdio flushed) instead of returning: call it last. */
void rt_mpi_stop(rt_mpi *c, int status);

/* What rt_tune reports as it goes. */
enum { RT_TUNE_TASK_BEGIN = 0, RT_TUNE_BATCH = 1, RT_TUNE_TASK_END = 2 };

typedef struct rt_tune_progress {
    int event;                  /* RT_TUNE_* */
    size_t pos, npos;           /* the task's position among the tasks tuned */
    size_t task;                /* its index in rt_module_tasks */
    const rt_task *info;
    long long trials;           /* its configs measured on this target (earlier sessions too) */
    long long budget;           /* its share of the trials (--scheduler fixed; 0 under gradient,
                                   where the trials go wherever they help most) */
    long long errors;           /* failed ones among trials */
    double default_gflops;      /* the default config's speed (0: not measured, or it failed) */
    double best_gflops;         /* the best speed (0: none) */
    int batch, batch_errors;    /* RT_TUNE_BATCH: configs just measured, failed ones */
    long long done, todo;       /* measurements of this run: made, planned */
    double elapsed;             /* seconds since the run started */
    double left;                /* estimate of seconds left (-1: unknown yet) */
    int early_stopped;          /* RT_TUNE_TASK_END: stopped without improvement */
    const char *failure;        /* RT_TUNE_TASK_END: why the task could not be tuned, or NULL */
    const char *target;         /* the target the task is tuned for */
    int ntargets;               /* targets of the run (several: each task once per target) */
} rt_tune_progress;

/* The phases of a tuning run's profile (tune --profile). */
#define RT_TUNE_PHASES 11
/* The name of phase i (0 <= i < RT_TUNE_PHASES): propose, learn, transfer,
 * task data, codegen, compile, load, check, time, store, confirm. */
const char *rt_tune_phase_name(int i);

typedef struct rt_tune_options {
    const char *target;         /* "cpu", "cpu -cores=2" (NULL: "cpu"); records are made for it */
    const char *const *targets; /* ntargets > 0: these targets at once, instead of target: a task
                                   per (task, target), each with its own tuner, records, best and
                                   confirmation, one budget spent over all (docs/distributed.md) */
    int ntargets;
    const char *rank_target;    /* under MPI: the one of them rank 0 measures for (NULL: the first);
                                   the others are measured by the ranks that have them */
    long long trials;           /* the budget over the tasks tuned; configs already measured count
                                   (0 with a time budget: none but the spaces) */
    double time_budget;         /* seconds the run may take, confirmations included (0: none) */
    int profile;                /* nonzero: the report says where the run's time went */
    double cutoff;              /* a candidate whose repeat costs more than this many times its task's
                                   best so far is not timed further (0: 2; <0: every repeat of all) */
    const char *tuner;          /* "xgb", "ga", "random" or "grid" (NULL: "xgb") */
    int plan_size;              /* xgb: configs a batch is planned from, the model's best (0: 64) */
    const char *objective;      /* xgb: the cost model's objective, "rank" or "reg" (NULL: "rank") */
    double epsilon;             /* xgb: share of random configs in a batch (0: 0.05; <0: none) */
    const char *scheduler;      /* which task the next batch goes to: "gradient" (NULL) or "fixed" */
    int no_transfer;            /* nonzero: tuners do not learn from similar workloads' records */
    const char *tasks;          /* which tasks: "0,3-5,e6a6" (indices, ranges, hash prefixes; NULL: all) */
    long long early_stopping;   /* a task stops after this many trials without improvement (0: never) */
    unsigned long long seed;    /* tuners and the tasks' random inputs */
    int jobs;                   /* compilers at once (0: the target's cores) */
    int batch;                  /* configs per batch (0: 4 per job, at least 8) */
    int confirm;                /* a task's end re-measures its best this many configs side by side
                                   and compiling takes the best median (0: 3; <0: none) ... */
    int confirm_rounds;         /* ... this many times each (0: 3) */
    int per_unit;               /* candidates per translation unit (0: a batch over `jobs` units) */
    double compile_timeout;     /* seconds per candidate's compile (0: 60) */
    double run_timeout;         /* seconds per candidate's run (0: 10) */
    int repeat;                 /* costs per candidate (0: 3) */
    int min_repeat_ms;          /* runs per cost grow until one cost takes this long (0: 10; <0: 0) */
    int flush_cache;            /* nonzero: evict caches before each repeat */
    const char *papi_events;    /* comma-separated PAPI counters to read (NULL: none) */
    const char *model;          /* the model, for the session ("" when NULL) */
    const char *command;        /* the command line, for the session */
    volatile sig_atomic_t *stop;   /* when it becomes nonzero, the batch in flight is finished
                                      and stored and rt_tune returns (NULL: never) */
    void (*progress)(void *ctx, const rt_tune_progress *p);
    void *progress_ctx;
    rt_mpi *mpi;                /* rank 0 of an MPI job: batches are dealt to the ranks whose target
                                   is the task's, rank 0 measuring a share of its own target's
                                   (NULL: this process, which measures every target) */
} rt_tune_options;

/* One task of a tuning run, at its end. */
typedef struct rt_tune_row {
    size_t task;                /* index in rt_module_tasks */
    const rt_task *info;
    const char *target;         /* the target it was tuned for */
    long long budget, trials, measured, errors;  /* trials: configs on this target; measured: by this run */
    long long stale, invalid;   /* records skipped (template version changed; config does not fit) */
    long long space;            /* configs in its space */
    double default_gflops, best_gflops, speedup; /* 0 where unknown */
    int early_stopped, exhausted;
    long long transferred;      /* records of similar workloads its tuner learnt from */
    long long transfer_skipped; /* such records skipped: no stored function, stale, not fitting, another form */
    long long transfer_dropped_at; /* its own results when its tuner dropped them, which ranked its
                                    * held-out configs worse than its own did (0: kept) */
    double transfer_weight;     /* the weight its tuner gave them at the end (1: full; 0: dropped or none) */
    int confirmed;              /* configs its end re-measured side by side (0: none) */
    long long confirmed_index;  /* the one with the best median, which compiling uses (-1: none) */
    double confirmed_gflops;    /* at that median */
    int fallback;               /* compiling would use the default config (no valid successful record) */
    const char *failure;        /* why it could not be tuned, or NULL */
} rt_tune_row;

typedef struct rt_tune_report {
    rt_tune_row *rows;
    size_t n;
    long long measured;         /* measurements made by this run */
    int interrupted;            /* the stop flag ended it */
    int out_of_time;            /* the time budget ended it */
    double seconds;
    double estimate;            /* the model's time in the tasks with a best: calls x best cost, seconds */
    double improved_at;         /* run seconds when that last fell by more than 1% (-1: never) */
    long long improved_after;   /* ... after this many of the run's measurements */
    int profiled;               /* phase_seconds holds the run's profile */
    double phase_seconds[RT_TUNE_PHASES]; /* wall seconds per phase (rt_tune_phase_name) */
    char session[37];           /* the session's uuid in the database */
    const char *scheduler;      /* the scheduler's name (static) */
    int ntargets;               /* targets tuned for (rows: the first's tasks, then the next's ...) */
    double confirm_seconds;     /* of `seconds`, the tasks' confirmations */
} rt_tune_report;

/* Tunes the tasks of an optimized module on the target (or on each of
 * o->targets at once, a row per task and target), storing every
 * measurement in db. Returns 0 (also when interrupted: the report says so),
 * or -1 after a message (bad options, a database or runner failure; the
 * batches committed stay). *out (may be NULL) gets the report, also on -1. */
int rt_tune(rt_module *m, rt_runner *r, rt_db *db, const rt_tune_options *o, rt_tune_report **out, FILE *errs);
/* The end-of-run table: task, calls, default and best GFLOP/s, speedup,
 * trials; then the tasks that fall back to the default config (malloc'd). */
char *rt_tune_report_text(const rt_tune_report *r);
void rt_tune_report_free(rt_tune_report *r);

/* The config task `index` of m is compiled with on target (NULL: "cpu"): the
 * best successful record in db whose config fits the task's space now,
 * measured on this target string, else on one with the same ISA. Returns 1
 * (this target) or 2 (same ISA) with *config_json the config for
 * rt_task_lower; 0 when the task falls back to the default config
 * (*config_json NULL); -1 after a message. *notes (may be NULL) gets the
 * records skipped as stale or invalid, one a line (malloc'd, or NULL). */
int rt_task_best_config(rt_module *m, size_t index, rt_db *db, const char *target, char **config_json, char **notes,
                        FILE *errs);

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

/* ---- targets -----------------------------------------------------------------
 * "cpu" is the host; "cpu -mcpu=NAME" a named CPU; -isa=, -cores=, -l1=, -l2=,
 * -l3=, -fma= override single fields (docs/targets.md). */

/* Checks a target string (NULL: "cpu"): 0 when it parses and, with run set,
 * this host can execute its code; else -1 after a message naming the target
 * and both ISAs. */
int rt_target_check(const char *target, int run, FILE *errs);
/* What a target string describes, as text (ISA, lanes, registers, FMA pipes,
 * caches, cores, compiler flags, whether it runs here), malloc'd; NULL after
 * a message for a bad target. */
char *rt_target_describe(const char *target, FILE *errs);
/* The host's widest vector ISA ("avx512", "avx2", "sse4.2", "x86-64"),
 * capped by $RELAY_TUNE_MAX_ISA. */
const char *rt_host_isa(void);
/* This host's OpenCL devices, one line each as its target string and name
 * (or why there are none: no platform, or a build without OpenCL); *count
 * (may be NULL) gets their number. Malloc'd. */
char *rt_opencl_devices(int *count);

/* ---- compiled models ---------------------------------------------------------
 * A compiled model is one shared object with the ABI of relaytune_model.h
 * (docs/compiled-model.md). */

typedef struct rt_compile_options {
    const char *target;         /* "cpu" (NULL: cpu) */
    const char *db_path;        /* best configs from this tuning database (NULL: every task with
                                   its template's defaults) */
    int jobs;                   /* compilers at once (0: one per core) */
} rt_compile_options;

/* What went into a compiled model. */
typedef struct rt_compile_report {
    int calls;                  /* kernel calls per run */
    int kernels;                /* distinct kernels */
    int tuned;                  /* kernels built from a database config */
    int inputs, outputs;
    int weights;                /* weight tensors stored */
    int packed;                 /* of them, packed at compile time */
    long long weight_bytes;
    int intermediates;          /* intermediate tensors */
    long long peak_bytes;       /* the memory plan's arena */
    long long sum_bytes;        /* every intermediate in a buffer of its own */
    long long live_bytes;       /* the most bytes live at once (a lower bound on the peak) */
    double seconds;             /* wall-clock compile time */
} rt_compile_report;

/* Compiles @main of an optimized module (rt_module_optimize at level 3, so
 * that it calls only fused functions) into the shared object out_path; with
 * out_path NULL, into the cache (named by the hash of its sources; an object
 * already there is reused). Parameters of @main become the model's inputs,
 * bound parameters its weights. Returns the object's path (malloc'd), or
 * NULL after writing the error to errs. report may be NULL. */
char *rt_model_compile(rt_module *m, const char *out_path, const rt_compile_options *o, rt_compile_report *report,
                       FILE *errs);

/* A loaded compiled model with one instance. */
typedef struct rt_cmodel rt_cmodel;

/* Loads a compiled model; NULL after a message when the file is not one. */
rt_cmodel *rt_cmodel_load(const char *path, FILE *errs);
size_t rt_cmodel_num_inputs(const rt_cmodel *c);
size_t rt_cmodel_num_outputs(const rt_cmodel *c);
const char *rt_cmodel_input_name(const rt_cmodel *c, size_t i);
/* The bytes of the model's intermediate arena. */
size_t rt_cmodel_arena_bytes(const rt_cmodel *c);
/* What the model runs on: "opencl" for an OpenCL model, else "cpu". */
const char *rt_cmodel_kind(const rt_cmodel *c);
/* Sets the input called name from t (dtype and shape must match; the
 * message names the input and both types); 0, or -1 after writing errs. */
int rt_cmodel_set_input(rt_cmodel *c, const char *name, const rt_tensor *t, FILE *errs);
/* Sets every input the inputs name (unknown names are an error); fills the
 * inputs they do not name with seeded random values when random, else
 * reports the first missing one. 0, or -1 after a message. */
int rt_cmodel_set_inputs(rt_cmodel *c, const rt_inputs *in, int random, uint64_t seed, FILE *errs);
/* Runs the model once: 0, or -1 after a message. */
int rt_cmodel_run(rt_cmodel *c, FILE *errs);
/* The per-kernel profile (relaytune_model.h's rtm_profile): the steps of a
 * run (one kernel call each), or -1 for a model without a profile (an
 * OpenCL model, or one compiled before it existed). */
int rt_cmodel_num_steps(const rt_cmodel *c);
/* Step i's name ("nn.conv2d+add+nn.relu 1x64x56x56"), its distinct kernel
 * and its FLOPs (NULL / -1 out of range). */
const char *rt_cmodel_step_name(const rt_cmodel *c, int i);
int rt_cmodel_step_kernel(const rt_cmodel *c, int i);
int64_t rt_cmodel_step_flops(const rt_cmodel *c, int i);
/* Runs the model once timing each step into seconds[0..rt_cmodel_num_steps):
 * 0, or -1 after a message (also for a model without a profile). */
int rt_cmodel_run_profiled(rt_cmodel *c, double *seconds, FILE *errs);
/* A copy of output i after a run (free with rt_tensor_free). */
rt_tensor *rt_cmodel_output(const rt_cmodel *c, size_t i);
/* Unloads (NULL is fine). */
void rt_cmodel_free(rt_cmodel *c);

/* ---- the dashboard (docs/dashboard.md) -------------------------------------- */

/* Serves the dashboard of the database at db_path (opened read-only) on host
 * (a numeric address; NULL: 127.0.0.1) and port (0: a free one) until SIGINT
 * or SIGTERM; prints its URL to out once listening. 0 after a stop by signal,
 * -1 after a message. */
int rt_dashboard_serve(const char *db_path, const char *host, int port, FILE *out, FILE *errs);
/* Writes the self-contained HTML report of the database at db_path (one
 * session, or every one when session is NULL) to out_path ("-": standard
 * output); 0, or -1 after a message. */
int rt_dashboard_report(const char *db_path, const char *session, const char *out_path, FILE *errs);

#ifdef __cplusplus
}
#endif
#endif
