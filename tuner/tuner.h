/* tuner.h — the map of tuner/: tasks extracted from an optimized model, their
 * config spaces as the tuner sees them, measurement of (task, config)
 * pairs, the tuners (xgb: a cost model over LoopIR features searched by
 * simulated annealing; genetic, random, grid), the tuning loop that spreads
 * trials over a model's tasks and keeps every result in the database, and
 * the lookup of the best valid config that compiling uses. Prefix: tun_.
 * May use every part below it (measure, targets, schedule, ir, db).
 *
 * The small interfaces (docs/tuning.md): a tuner proposes a batch of
 * configs and learns from their results (tun_tuner_ops: next_batch /
 * update); a measurement maps (target, task, config) to costs, an error
 * and times (tun_measure). */
#ifndef RT_TUNER_H
#define RT_TUNER_H

#include <signal.h>

#include "db/db.h"
#include "ir/ir.h"
#include "ir/transform/transform.h"
#include "measure/measure.h"
#include "schedule/schedule.h"
#include "targets/targets.h"

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
    int nparams;            /* func's kernel parameters: a tuple parameter's fields count one each */
    bool *param_const;      /* per kernel parameter: a constant (a weight) at the first call, so
                               the compiled model packs it once, ahead of time (malloc'd) */
    bool light;             /* a device's function without an anchor (reduce_cl, default_cl): a
                               pass or two over memory, whose small space few trials cover */
} tun_task;

typedef struct tun_tasks {
    tun_task *items;
    size_t len, cap;
} tun_tasks;

/* Extracts the tasks of every primitive function called in m (a fused module),
 * in order of first call; functions without a tunable anchor are skipped. */
void tun_extract_tasks(const ir_module *m, tun_tasks *out);
/* Adds to out the tasks of the functions defs[0..n) (another graph of the
 * same model, such as one of alter-layout's block variants) whose keys out
 * lacks. */
void tun_extract_tasks_add(const ir_global_def *defs, size_t n, tun_tasks *out);
/* tun_extract_tasks for a target: device (an opencl target's machine, wg_max
 * > 0) adds after the anchored tasks the functions without an anchor whose
 * device template has more than one config (named by that template:
 * reduce_cl, default_cl); NULL or a cpu machine: tun_extract_tasks. */
void tun_extract_tasks_on(const ir_module *m, const sch_hw *device, tun_tasks *out);
/* tun_extract_tasks_add for a target, as tun_extract_tasks_on. */
void tun_extract_tasks_add_on(const ir_global_def *defs, size_t n, const sch_hw *device, tun_tasks *out);
/* Frees the tasks' strings and the array. */
void tun_tasks_free(tun_tasks *t);

/* ---- config.c: a task's space; configs as indices and as record JSON ----- */

/* A task's config space on one target. */
typedef struct tun_space {
    const tun_task *task;
    sch_space sp;           /* the knobs of the task's template (for the target's sch_hw) */
    int version;            /* the template's version (sch_template_version) */
    int64_t size;           /* configs in the space (at most 2^53) */
    int64_t default_index;  /* the template's default config */
    sch_hw hw;              /* the machine the template schedules for (configs are instantiated with it) */
} tun_space;

/* Runs the task's template on its defaults to learn its space; false with a
 * message when the template cannot schedule the task at all. */
bool tun_space_init(tun_space *s, const tun_task *task, const sch_hw *hw, su_buf *err);
void tun_space_free(tun_space *s);
/* True when the template rejects config `index` (SCH_E_BAD_CONFIG: a config
 * that cannot win, never compiled nor measured), its reason appended to why
 * (may be NULL); other failures are the measurement's to report. */
bool tun_config_rejected(const tun_space *s, int64_t index, su_buf *why);
/* Config index <-> choices (mixed radix, the first knob varying fastest).
 * encode returns -1 for choices outside the space. */
void tun_config_decode(const tun_space *s, int64_t index, sch_config *c);
int64_t tun_config_encode(const tun_space *s, const sch_config *c);
/* The config of a tuning record (docs/log-format.md), malloc'd:
 * {"entities":[["template_version","ot",V],["tile_oc","sp",[2,32]],...],"index":N}.
 * Choices outside the space are written as what they asked for. */
char *tun_config_record_json(const tun_space *s, const sch_config *c);
/* How a record's config relates to the space now. */
typedef enum {
    TUN_CFG_OK,         /* it fits: *c holds its choices */
    TUN_CFG_STALE,      /* made under another version of the template */
    TUN_CFG_INVALID,    /* an unknown or missing knob, or a value outside the candidates */
} tun_cfg_status;
/* Reads a record's config JSON back by its knobs' values; the reason for a
 * stale or invalid one is appended to why. */
tun_cfg_status tun_config_from_record(const tun_space *s, const char *json, sch_config *c, su_buf *why);
/* The config in the form rt_task_lower and sch_config_parse read
 * ({"template": ..., "knobs": {...}}), malloc'd. */
char *tun_config_sch_json(const tun_space *s, const sch_config *c);

/* ---- features.c: what the cost model sees of a config ------------------- */

/* Length of every feature vector: the same for every template and task, so
 * that records of other shapes train the same model (docs/cost-model.md). */
int tun_feature_count(void);
/* The name of feature i ("l3.extent", "l3.b1.reuse", "knob5", ...), or NULL. */
const char *tun_feature_name(int i);
/* Features of config `index` of space s from its lowered LoopIR (no
 * compiling) into out[tun_feature_count()]; false with a message when the
 * config cannot be instantiated (out is then all zeros). */
bool tun_config_features(const tun_space *s, int64_t index, float *out, su_buf *err);

/* ---- tuner.c, random.c, grid.c, ga.c, xgb.c: the tuners --------------------------- */

/* A set of config indices. */
typedef struct tun_idxset {
    int64_t *slots;         /* cap slots; -1 is empty */
    size_t cap, len;
} tun_idxset;
bool tun_idxset_has(const tun_idxset *s, int64_t v);
/* Adds v; false when it was there. */
bool tun_idxset_add(tun_idxset *s, int64_t v);
void tun_idxset_free(tun_idxset *s);

typedef struct tun_tuner tun_tuner;

/* One measured config of another task (transfer learning): a record of the
 * same template on another shape, or on another target of the same ISA. */
typedef struct tun_transfer_rec {
    const tun_space *space; /* the other task's space (its task and template) */
    int64_t index;          /* the config in that space */
    double gflops;          /* its throughput; 0 for a failed measurement */
} tun_transfer_rec;

/* The cost model's training objective. */
typedef enum { TUN_OBJ_RANK, TUN_OBJ_REG } tun_objective;

/* What a model-based tuner is told (the others ignore it). */
typedef struct tun_tuner_conf {
    int plan_size;          /* configs a batch is planned from (the top of the model's ranking) */
    double epsilon;         /* share of each batch drawn at random */
    tun_objective objective;
    int walkers;            /* parallel simulated-annealing walkers */
    int64_t plan_new;       /* xgb, a space scored whole: configs each plan featurizes beyond the last one's */
} tun_tuner_conf;

/* The settings a tuner gets when none are given. */
extern const tun_tuner_conf tun_tuner_conf_default;

/* A tuner: proposes batches, learns from results (AutoTVM's Tuner). */
typedef struct tun_tuner_ops {
    const char *name;               /* "random", "grid", "ga", "xgb" (stored in records) */
    void (*init)(tun_tuner *t);     /* sets up t->state (may be NULL) */
    /* Proposes up to n configs never proposed nor measured (not in t->seen;
     * it adds what it proposes); returns how many (0: nothing left). */
    int (*next_batch)(tun_tuner *t, int n, int64_t *out);
    /* Learns from n measured configs: cost in seconds, INFINITY for a
     * failure (may be NULL). */
    void (*update)(tun_tuner *t, int n, const int64_t *idx, const double *cost);
    void (*free)(tun_tuner *t);     /* frees t->state (may be NULL) */
    /* Learns from n measured configs of other tasks before the first
     * measurement of this one (may be NULL: the tuner does not transfer). */
    void (*transfer)(tun_tuner *t, size_t n, const tun_transfer_rec *recs);
} tun_tuner_ops;

struct tun_tuner {
    const tun_tuner_ops *ops;
    const tun_space *space;
    uint64_t rng;           /* splitmix64 state (seeded) */
    tun_idxset seen;        /* configs proposed or measured */
    void *state;            /* the tuner's own */
    tun_tuner_conf conf;    /* model-based tuners' settings */
    int64_t transfer_dropped_at; /* own results when it dropped what transfer gave it, which ranked
                                  * its held-out configs worse (0: kept, or none given) */
    double transfer_weight; /* the weight its scores give what transfer taught (1 at first, lowered
                               * when the task's own results rank better without it; 0: none) */
    int64_t featurized;     /* feature vectors a model-based tuner computed (its search's main cost) */
    int64_t rejected;       /* proposals the template rejected (tun_config_rejected), skipped */
};

extern const tun_tuner_ops tun_random_ops, tun_grid_ops, tun_ga_ops;
/* xgb.c: simulated annealing over the space scored by an XGBoost cost
 * model refit after every batch; implements transfer (docs/cost-model.md). */
extern const tun_tuner_ops tun_xgb_ops;
/* The tuner named name, or NULL. */
const tun_tuner_ops *tun_tuner_find(const char *name);
tun_tuner *tun_tuner_new(const tun_tuner_ops *ops, const tun_space *space, uint64_t seed);
/* The same with settings (conf NULL: tun_tuner_conf_default). */
tun_tuner *tun_tuner_new_conf(const tun_tuner_ops *ops, const tun_space *space, uint64_t seed,
                              const tun_tuner_conf *conf);
/* Gives the tuner what other tasks' records teach (nothing for tuners
 * without transfer). Call before the first batch. */
void tun_transfer(tun_tuner *t, size_t n, const tun_transfer_rec *recs);
void tun_tuner_free(tun_tuner *t);
/* Up to n new configs to measure; 0 when the space is exhausted. Configs
 * the template rejects are skipped (marked seen, counted in t->rejected,
 * taught to the tuner as failures), so fewer than n means the space ran
 * out. */
int tun_next_batch(tun_tuner *t, int n, int64_t *out);
/* Results of measured configs (this session's or earlier ones'): they are
 * never proposed again, and the tuner learns from them. */
void tun_update(tun_tuner *t, int n, const int64_t *idx, const double *cost);
/* True when every config was proposed or measured. */
bool tun_tuner_exhausted(const tun_tuner *t);
/* Helpers for tuners: random numbers (tun_rand_unit: uniform in [0, 1)), a
 * random config not yet seen (-1: none). */
uint64_t tun_rand(tun_tuner *t);
int64_t tun_rand_below(tun_tuner *t, int64_t n);
double tun_rand_unit(tun_tuner *t);
int64_t tun_random_unseen(tun_tuner *t);

/* ---- xgb_model.c: the cost model (XGBoost) ------------------------------- */

typedef struct tun_cost_model tun_cost_model;
/* An untrained model with the given objective; seed makes training
 * reproducible. */
tun_cost_model *tun_cost_model_new(tun_objective obj, uint64_t seed);
/* Trains from scratch on n rows (x: n x tun_feature_count(), row-major)
 * with labels y (throughput, larger is better, 0 for failures); group (may
 * be NULL) numbers the task of each row: the rank objective ranks within a
 * group, and labels are normalized per group. Too few rows or all-equal
 * labels leave the model untrained and return true; false with a message on
 * an XGBoost error (the previous model stays). */
bool tun_cost_model_fit(tun_cost_model *m, size_t n, const float *x, const float *y, const int *group, su_buf *err);
/* The same boosting from a prior score per row (margin, NULL: none), as
 * XGBoost's base_margin: the trees learn what the prior gets wrong, and the
 * model's scores are to be added to the prior's (tun_cost_model_predict
 * leaves the prior out). */
bool tun_cost_model_fit_margin(tun_cost_model *m, size_t n, const float *x, const float *y, const int *group,
                               const float *margin, su_buf *err);
/* Among the pairs of n rows with different labels y, the share that score
 * orders the same way (a tie in score counts half); -1 when there is none.
 * *pairs (may be NULL) gets the number of such pairs. */
double tun_pairwise_accuracy(size_t n, const float *y, const float *score, size_t *pairs);
bool tun_cost_model_trained(const tun_cost_model *m);
/* Scores of n rows (higher is better; all 0 while untrained); false with a
 * message. */
bool tun_cost_model_predict(tun_cost_model *m, size_t n, const float *x, float *out, su_buf *err);
void tun_cost_model_free(tun_cost_model *m);

/* ---- measure.c: (target, task, config) -> result --------------------------- */

/* A task's inputs and expected outputs, in the runner's data file. */
typedef struct tun_task_data tun_task_data;
/* Seeded random inputs for the task's parameters and the reference
 * interpreter's outputs on them; NULL with a message. */
tun_task_data *tun_task_data_new(const tun_task *task, uint64_t seed, su_buf *err);
void tun_task_data_free(tun_task_data *td);
/* A candidate of the task whose repeat costs more than seconds a run has
 * its remaining repeats skipped (0: never); tun_measure applies it. */
void tun_task_data_set_cutoff(tun_task_data *td, double seconds);

/* How candidates are built and run. */
/* Where a tuning run's wall time went, in seconds per phase (tune --profile). */
typedef enum {
    TUN_PH_PROPOSE,     /* tuners proposing batches (features, the search), and claiming them */
    TUN_PH_LEARN,       /* tuners learning from results (the cost model's fits) */
    TUN_PH_TRANSFER,    /* reading similar workloads' records, and learning from them */
    TUN_PH_DATA,        /* task inputs and reference outputs (the interpreter), once per task */
    TUN_PH_CODEGEN,     /* scheduling, lowering and writing C */
    TUN_PH_COMPILE,     /* the C compiler (wall time; several at once) */
    TUN_PH_LOAD,        /* a candidate's process mapping the data and loading its object */
    TUN_PH_CHECK,       /* its first run and the check of its output */
    TUN_PH_TIME,        /* timing it (warm-up, repeats), the fork and the wait */
    TUN_PH_STORE,       /* database writes */
    TUN_PH_CONFIRM,     /* re-measuring the best configs when tasks end */
    TUN_PH_COUNT
} tun_phase;

typedef struct tun_profile {
    double seconds[TUN_PH_COUNT];
} tun_profile;

/* The phase's name as tune --profile prints it. */
const char *tun_phase_name(tun_phase p);

typedef struct tun_measurer {
    ms_runner *runner;      /* started before the tool had threads */
    const tg_target *target;
    ms_build_options build; /* compilers at once, candidates per unit, compile limit */
    ms_run_options run;     /* warm-up, number, repeat, min_repeat_ms, time limit, counters */
    tun_profile *profile;   /* where build and run times are added up (NULL: nowhere) */
    su_map *built;          /* entry name -> shared object of the candidates built so far, which
                               later batches load instead of compiling again (a task's
                               confirmation); keys and values malloc'd (NULL: none kept) */
} tun_measurer;

/* The result of one measurement. */
typedef struct tun_result {
    int64_t index;              /* the config's index (-1: outside the space) */
    su_merr error;
    char *msg;                  /* the compiler's or runner's message (malloc'd; may be "") */
    int ncosts;
    double costs[MS_MAX_REPEAT];
    double mean;
    ms_counters counters;
    double build_time, run_time;    /* seconds */
    double timestamp;           /* when it was measured (seconds since the epoch) */
    const char *host;           /* the host that measured it (borrowed from the measurer; NULL: this one) */
    const db_target *where;     /* the target it was measured on, described there (borrowed; NULL:
                                   the run's target) */
} tun_result;

/* Builds and runs n configs of a task; out[i] is cfgs[i]'s result. A config
 * given twice is built once, and one in m->built (still on disk) is not
 * built again. False when the runner process died (the results say which
 * were not run). */
bool tun_measure(const tun_measurer *m, const tun_space *s, const tun_task_data *td, int n, const sch_config *cfgs,
                 tun_result *out);
void tun_result_free(tun_result *r);
/* Frees a tun_measurer's map of built candidates: its keys, values and slots. */
void tun_built_free(su_map *built);

/* ---- host.c: where records are measured ------------------------------------ */

/* Describes target t, named by the user's target string, for records: the
 * canonical name (spaces collapsed), the host's CPU model, ISA features,
 * the target's cores and the OS; strings in the arena. */
void tun_target_describe(const tg_target *t, const char *name, su_arena *a, db_target *out);
/* The host's name (static storage). */
const char *tun_host_name(void);

/* ---- scheduler.c: which task the next batch goes to ------------------------ */

typedef enum {
    TUN_SCHED_GRADIENT,     /* warm-up round, then the task whose gain (calls x best cost
                               falling, Ansor's estimate) is largest; 5% at random */
    TUN_SCHED_FIXED,        /* shares by FLOPs x calls, tasks one after the other; what a
                               finished task leaves unused goes to the tasks still to come */
} tun_sched_kind;

/* What the scheduler knows of one task. */
typedef struct tun_sched_task {
    const char *group;      /* similar tasks share it (the template's name; NULL: none) */
    double flops;           /* one call's FLOPs */
    int calls;              /* calls in the model */
    int64_t size;           /* configs in its space */
    int64_t trials;         /* configs measured, earlier sessions included */
    int64_t budget;         /* fixed: its share of the trials (unused by gradient) */
    double best;            /* its best cost, seconds (0: none succeeded) */
    double *hist;           /* best cost after each batch of this run (malloc'd) */
    int64_t *hist_trials;   /* trials after each batch */
    size_t nhist, cap;
    double seconds;         /* wall time this run spent on its batches ... */
    int64_t timed;          /* ... and the trials they measured */
    bool done;              /* dropped out (budget, space exhausted, early stop, failure) */
    bool no_default;        /* its default config is still to be measured: the pool keeps
                               a trial for it while other tasks take their batches */
    bool light;             /* tun_task.light: batches of at most TUN_SCHED_LIGHT_BATCH */
} tun_sched_task;

/* The largest batch a light task gets (its warm-up batch included): its
 * share of the model's time is small, and gradient gives it more batches
 * only while they pay. */
#define TUN_SCHED_LIGHT_BATCH 4

typedef struct tun_sched {
    tun_sched_kind kind;
    tun_sched_task *tasks;  /* n, filled by the caller after tun_sched_init */
    size_t n;
    int64_t trials;         /* the budget over all tasks (configs already measured count) */
    double epsilon;         /* share of batches given to a random open task */
    uint64_t rng;           /* splitmix64 state */
    size_t warm;            /* gradient: tasks through the warm-up round */
    bool per_second;        /* gradient: a gain per second of measuring, not per trial (a time budget) */
} tun_sched;

/* "gradient" (also NULL) or "fixed"; false for another name. */
bool tun_sched_kind_parse(const char *name, tun_sched_kind *out);
const char *tun_sched_kind_name(tun_sched_kind k);
/* n zeroed tasks for the caller to describe, then tun_sched_start. */
void tun_sched_init(tun_sched *s, tun_sched_kind kind, size_t n, int64_t trials, uint64_t seed);
/* Starts the run once the tasks are described (fixed: their shares). */
void tun_sched_start(tun_sched *s);
void tun_sched_free(tun_sched *s);
/* Trials left in the pool (negative when the database holds more). */
int64_t tun_sched_left(const tun_sched *s);
/* The task the next batch goes to, or n when the run is over. */
size_t tun_sched_next(tun_sched *s);
/* How many configs task i may measure in its next batch (0: none), at most batch. */
int64_t tun_sched_want(const tun_sched *s, size_t i, int batch);
/* After a batch of task i: its trials and best cost (0: none succeeded). */
void tun_sched_update(tun_sched *s, size_t i, int64_t trials, double best);
/* Task i is done; its unused trials go to the others. */
void tun_sched_drop(tun_sched *s, size_t i);
/* A batch of task i measured n trials in seconds of wall time. */
void tun_sched_timed(tun_sched *s, size_t i, int64_t n, double seconds);
/* Seconds a trial of task i takes: its own average this run, else the
 * average over the tasks timed so far (0: none timed yet). */
double tun_sched_trial_seconds(const tun_sched *s, size_t i);

/* ---- transfer.c: what other workloads' records teach a task ---------------- */

/* The workload's args for records (in a): the anchor, the input shapes and
 * "func", the primitive function as Relay text (a module whose @main is the
 * function), from which transfer rebuilds the workload's space. "func" is
 * left out when the text would not fit a record's args (64 KiB). */
const char *tun_workload_args(const tun_task *t, su_arena *a);

/* The primitive function as Relay text: a module whose @main is the
 * function, which tun_task_from_text reads back (malloc'd). */
char *tun_task_text(const tun_task *t);
/* The task of a function printed by tun_task_text, rebuilt into out (one
 * task of one call, no constant parameters, the given FLOPs; free with
 * tun_tasks_free); the module returned owns the function, so free it after
 * the task. NULL when the text does not parse or type, or its workload key
 * is not `key` (then the text is not trusted). */
ir_module *tun_task_from_text(const char *text, const char *key, int64_t flops, tun_tasks *out);

/* The other workloads met while transferring, parsed once each: their
 * tasks and spaces stay alive as long as the pool, since the records handed
 * to tuners point at the spaces (the loop keeps one pool for a whole run
 * and frees it after the tuners). */
typedef struct tun_transfer_pool tun_transfer_pool;
tun_transfer_pool *tun_transfer_pool_new(const sch_hw *hw);
void tun_transfer_pool_free(tun_transfer_pool *p);

/* How the records of other workloads were used. */
typedef struct tun_transfer_stats {
    int64_t used;           /* handed to the tuner */
    int64_t no_func;        /* their workload has no stored function (an older database) */
    int64_t bad_func;       /* its stored function does not parse, has no task or another key */
    int64_t stale, invalid; /* config of another template version; not fitting the space */
    int64_t other_form;     /* a space of another form than the task's (sch_space_same_form) */
    int64_t dropped_at;     /* the task's own results when its tuner dropped them (0: kept) */
    double weight;          /* the weight its tuner gives them at the end (tun_tuner.transfer_weight) */
} tun_transfer_stats;

/* At most this many records per task (the most recent). */
#define TUN_TRANSFER_LIMIT 4096

/* The records the task of `space` could learn from (*out malloc'd, pointing
 * at spaces of the pool): records of its template on other workloads whose
 * spaces have its form, and of its own workload on other targets, measured
 * on targets with target->isa's ISA, at most limit of them considered, the
 * most recent first. False on a database error. */
bool tun_transfer_gather(tun_transfer_pool *p, db *d, const tun_space *space, const db_target *target,
                         size_t limit, tun_transfer_rec **out, size_t *n, tun_transfer_stats *st, su_buf *err);

/* ---- loop.c: the tuning loop -------------------------------------------- */

/* One task's part of a tuning run. */
typedef struct tun_task_report {
    size_t task;            /* its index in the model's tasks */
    size_t target;          /* its target: the index of its options in tun_tune_targets (0: the one) */
    int64_t budget;         /* fixed: its share of the trials (records already there count; 0
                               while a gradient run goes on, its trials at the end) */
    int64_t trials;         /* its configs measured on this target, earlier sessions included */
    int64_t measured;       /* measured by this run */
    int64_t errors;         /* failed ones among trials */
    int64_t stale, invalid; /* records skipped: another template version; not fitting the space */
    int64_t space;          /* configs in its space */
    double default_cost;    /* the default config's cost, seconds (0: not measured or failed) */
    double best_cost;       /* the best cost (0: none succeeded) */
    int64_t best_index;     /* the best config (-1: none) */
    bool early_stopped;     /* stopped after early_stopping trials without improvement */
    int64_t rejected;       /* configs of this run's proposals the template rejected (never measured) */
    bool exhausted;         /* every config of the space was measured or rejected */
    int confirmed;          /* configs its end re-measured side by side (0: none) */
    int64_t confirmed_index; /* the one with the best median (-1: none) */
    double confirmed_cost;  /* that median, seconds */
    char *failure;          /* why the task could not be tuned (malloc'd), or NULL */
    tun_transfer_stats transfer; /* records of similar workloads its tuner learnt from */
} tun_task_report;

typedef struct tun_report {
    tun_task_report *tasks; /* the selected tasks, in model order */
    size_t n;
    int64_t measured;       /* measurements made by this run */
    bool interrupted;       /* the stop flag ended it early */
    bool out_of_time;       /* the time budget ended it */
    double seconds;         /* wall time of the run */
    double confirm_seconds; /* ... of which the tasks' confirmations */
    double estimate;        /* calls x best cost over the tasks with a best, seconds (0: none) */
    double improved_at;     /* when that estimate last fell by more than 1% (run seconds; -1: never) */
    int64_t improved_after; /* ... after this many of the run's measurements */
    char session[37];       /* the session's uuid */
} tun_report;

typedef enum { TUN_EV_TASK_BEGIN, TUN_EV_BATCH, TUN_EV_TASK_END } tun_event;

/* What a progress callback sees. */
typedef struct tun_progress {
    tun_event event;
    size_t pos, npos;           /* the task's position among the selected ones */
    const tun_task *task;
    const tun_task_report *rep; /* the task's numbers so far */
    int batch, batch_errors;    /* TUN_EV_BATCH: configs measured in the batch, failed ones */
    int64_t done, todo;         /* measurements of this run: made, planned in all */
    double elapsed_s, left_s;   /* since the run started; estimate of what is left (-1: unknown) */
} tun_progress;

/* Where a batch is measured: by default tun_measure in this process; the
 * MPI part (dist/) deals it out to ranks instead. measure has
 * tun_measure's contract plus the task data's seed (a remote rank makes its
 * own task data); a false return ends the run after the batch is stored. */
typedef struct tun_batch_measurer {
    bool (*measure)(void *ctx, const tun_space *s, const tun_task_data *td, uint64_t seed, int n,
                    const sch_config *cfgs, tun_result *out);
    /* the same, but every config on one measurer, in order, so that they are
     * timed side by side (a task's confirmation); NULL: tun_measure here */
    bool (*together)(void *ctx, const tun_space *s, const tun_task_data *td, uint64_t seed, int n,
                     const sch_config *cfgs, tun_result *out);
    void *ctx;
    int width;                  /* measurers at work at once: the default batch grows with it (0: 1) */
} tun_batch_measurer;

typedef struct tun_options {
    const tun_tuner_ops *tuner;
    const tun_tuner_conf *tuner_conf;   /* model-based tuners' settings (NULL: the defaults) */
    tun_sched_kind scheduler;   /* which task the next batch goes to */
    bool transfer;              /* tuners that transfer learn from similar workloads' records */
    int64_t trials;             /* the budget over the selected tasks (at least each one's default) */
    int64_t early_stopping;     /* a task stops after this many trials without improvement (0: never) */
    uint64_t seed;              /* tuners and task inputs */
    int batch;                  /* configs per batch (0: 4 per compile job, at least 8, times the
                                   batch measurer's width) */
    double time_budget;         /* seconds of wall time the run may take (0: none; trials then bound it) */
    tun_profile *profile;       /* where the loop's phases are added up (NULL: nowhere) */
    double cutoff;              /* a candidate costing more than this many times its task's best
                                   gets no more repeats (< 1: every candidate all of them) */
    int confirm_top;            /* a task's end re-measures its best this many configs (< 2: none) ... */
    int confirm_rounds;         /* ... interleaved, this many times each (0: 3) */
    tun_measurer measurer;
    tun_batch_measurer batch_measurer;  /* measure NULL: measurer, here */
    const db_target *target;    /* where the records are made (tun_target_describe) */
    const char *model;          /* for the session */
    const char *command;
    volatile sig_atomic_t *stop;   /* set (by a signal handler) to stop after the batch in flight */
    void (*progress)(void *ctx, const tun_progress *p);
    void *progress_ctx;
} tun_options;

/* Trials per task: each selected task gets its default, the rest is spread
 * by FLOPs x calls (largest remainders), capped at each space's size with
 * the surplus spread again. budgets[i] for selected tasks, 0 for others. */
void tun_budgets(const tun_tasks *tasks, const bool *selected, const int64_t *space_sizes, int64_t trials,
                 int64_t *budgets);
/* Tunes the selected tasks (selected NULL: all), storing every result in d
 * in one transaction per batch, the batches handed out by o->scheduler.
 * Configs already measured on this target (this template version) are not
 * measured again, and count toward the budget. False with a message when the database or the runner
 * failed (what was committed stays); rep is filled either way. */
bool tun_tune(const tun_tasks *tasks, const bool *selected, db *d, const tun_options *o, tun_report *rep,
              su_buf *err);
/* tun_tune for nt targets at once: a task per (selected task, target), each
 * with its own space, tuner, records, best and confirmation, os[k] giving
 * target k's measurer, batch measurer and target description (the rest,
 * the budget over all of them included, is read from os[0]); the report
 * lists target 0's tasks, then target 1's, ..., each row naming its target. */
bool tun_tune_targets(const tun_tasks *tasks, const bool *selected, db *d, const tun_options *os, size_t nt,
                      tun_report *rep, su_buf *err);
void tun_report_free(tun_report *r);

/* ---- best.c: the best valid config for compiling ---------------------------- */

typedef enum {
    TUN_BEST_NONE,      /* no valid successful record: the default config */
    TUN_BEST_EXACT,     /* measured on this target */
    TUN_BEST_ISA,       /* measured on another target of the same ISA */
} tun_best_kind;

typedef struct tun_best {
    tun_best_kind kind;
    bool confirmed;         /* chosen by the latest re-measurement of the best configs (cost: its median) */
    sch_config cfg;         /* the config (the default for TUN_BEST_NONE) */
    int64_t index;
    double cost;            /* its mean cost, seconds (0 for NONE) */
    char *target;           /* the target it was measured on (malloc'd; NULL for NONE) */
    char *notes;            /* records skipped and why, one a line (malloc'd; NULL when none) */
} tun_best;

/* The best successful record of the task whose config fits its space now:
 * exact target match first, then the same ISA; stale and invalid records
 * are skipped and listed in notes. On the exact target, the winner of the
 * latest confirmation (db/confirmations.c) comes first unless a record
 * better than its median was made after it. False only on a database error. */
bool tun_best_config(db *d, const tun_space *s, const db_target *t, tun_best *out, su_buf *err);
void tun_best_free(tun_best *b);
/* The task's space on target tg (its string `target`, as records name it)
 * and its best config there, as tun_best_config finds it: what compiling
 * builds the task's kernels with. False (nothing to free) when the space
 * or the database fails, with the reason in err; else free both. */
bool tun_task_best(db *d, const tun_task *task, const tg_target *tg, const char *target, tun_space *sp,
                   tun_best *out, su_buf *err);

#endif
