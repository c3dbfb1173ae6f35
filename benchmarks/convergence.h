/* convergence.h — what the two files of the tuner convergence benchmark
 * share: the benchmark's tasks and the measurement table every tuner run
 * reads (docs/tuner-convergence.md). Prefix: cv_.
 *
 *   tuner_convergence.c   the task set, the tuner runs, the statistics and
 *                         the report (text and JSON);
 *   convergence_table.c   the measurement table: one cost per (task, config),
 *                         read from the database, measured when missing and
 *                         stored back. */
#ifndef RT_CONVERGENCE_H
#define RT_CONVERGENCE_H

#include "tuner/tuner.h"

/* One row of a task's table: a measured config. */
typedef struct cv_row {
    int64_t index;          /* the config in the task's space */
    double cost;            /* mean seconds; INFINITY for a failed measurement */
} cv_row;

/* A task of the benchmark and its measurement table. */
typedef struct cv_task {
    const char *name;       /* the benchmark's short name ("conv3x3s2") */
    const tun_task *task;   /* in its module's tasks (kept alive for the run) */
    tun_space space;        /* alive for the whole run: transfer records point at it */
    cv_row *rows;           /* the table, in the order rows arrived */
    size_t nrows, cap;
    int64_t *slots;         /* open addressing over rows: position + 1, 0 empty */
    size_t nslots;
    tun_task_data *td;      /* inputs and reference outputs, made at the first measurement */
    const char *args;       /* its workload args for records (in the bench's arena), made then too */
    tun_idxset proposed;    /* configs the tuners without transfer proposed in this run */
    int64_t loaded;         /* rows read from the database */
    int64_t measured;       /* rows measured by this run */
    int64_t skipped;        /* records of the database that do not fit the space now */
} cv_task;

/* What measuring needs, and what it cost. */
typedef struct cv_bench {
    db *d;                  /* the table's database */
    db_target target;       /* where records are made (strings in arena) */
    tun_measurer m;         /* the runner, target, build and run options */
    su_arena arena;
    char session[37];       /* the database session the new records belong to */
    int64_t measured;       /* measurements made by this run */
    double measure_s;       /* wall seconds spent building and running them */
    bool verbose;           /* a line on stderr per measured batch */
} cv_bench;

/* Reads the task's records on this target into its table (records made
 * under another template version or not fitting the space are skipped and
 * counted); false with a message on a database error. */
bool cv_table_load(cv_bench *b, cv_task *t, su_buf *err);
/* The row of config idx, or NULL when it was never measured. */
const cv_row *cv_table_find(const cv_task *t, int64_t idx);
/* Costs of n distinct configs: those missing from the table are measured in
 * one batch (tuner names the records' tuner) and stored in the database
 * first. False with a message on a database or runner failure. */
bool cv_table_costs(cv_bench *b, cv_task *t, int n, const int64_t *idx, const char *tuner, double *cost,
                    su_buf *err);
/* Re-measures the table's k fastest configs side by side, `rounds` times
 * (each round one batch of all of them, so that the host's drift falls on
 * every config alike): idx[i], its table cost, med[i], its median cost in
 * seconds (INFINITY: it failed), and spread[i], (slowest - fastest) /
 * median of its rounds, in the table's order (fastest row first). Nothing
 * is stored. The number re-measured (at most k), or -1 with a message on a
 * runner failure. */
int cv_table_confirm(cv_bench *b, cv_task *t, int k, int rounds, int64_t *idx, double *med, double *spread,
                     su_buf *err);
/* Throughput of a cost for the task: GFLOP/s, 0 for a failure. */
double cv_gflops(const cv_task *t, double cost);
/* Frees the table, the task data and the space. */
void cv_task_free(cv_task *t);

#endif
