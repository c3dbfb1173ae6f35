/* dist.h — the map of dist/: tuning across machines on MPI
 * (docs/distributed.md). Rank 0 runs the tuner and the scheduler and is the
 * only writer of the database; it deals each batch out to the ranks whose
 * target is the batch's task's (a run may tune for several targets),
 * measures a share of its own target's itself, and stores the records the
 * ranks send back. The other ranks build and measure what they are sent on
 * their own host. A rank that dies or stops answering costs the candidates
 * it held: they go to another rank (an error record after DIST_RETRIES
 * losses), never the session. Prefix: dist_. Sits between api/ and tuner/:
 * uses tuner/ and the parts below it; tuner/ sees it only as a
 * tun_batch_measurer. wire.c is plain C (always built, unit-tested without
 * MPI); comm.c, deal.c and serve.c need Open MPI (configure's --with-mpi). */
#ifndef RT_DIST_H
#define RT_DIST_H

#include <stdio.h>

#include "tuner/tuner.h"

/* What a rank says first, and what dealing needs to know of it. */
typedef struct dist_hello {
    const char *host;       /* its host name */
    long pid;               /* its process id there */
    db_target target;       /* its target string, described on its host (tun_target_describe) */
    const char *error;      /* why it cannot measure (its target does not parse or does not run
                               there), or NULL */
} dist_hello;

/* One batch share rank 0 sends a rank: configs of one task. */
typedef struct dist_work {
    long job;               /* rank 0's number for this share; the results name it */
    const char *key;        /* the task's workload key */
    const char *func;       /* the task's function (tun_task_text), or NULL when the rank was sent
                               it before */
    int64_t flops;
    int nparams;
    bool *param_const;      /* per parameter: a weight the compiled model packs once */
    uint64_t seed;          /* the task data's seed (tun_task_data_new) */
    int n;
    const char **configs;   /* record JSON of each config (tun_config_record_json) */
    ms_build_options build; /* jobs 0: the rank's own */
    ms_run_options run;
} dist_work;

/* ---- wire.c: messages as JSON text --------------------------------------- */

/* The messages (malloc'd text). */
char *dist_hello_json(const dist_hello *h);
char *dist_work_json(const dist_work *w);
/* A share's results: one per config, in order. */
char *dist_results_json(long job, int n, const tun_result *r);

/* Reads a message back; strings go into a; false with a reason in err. */
bool dist_hello_parse(const char *text, su_arena *a, dist_hello *out, su_buf *err);
bool dist_work_parse(const char *text, su_arena *a, dist_work *out, su_buf *err);
/* The job a results message answers (-1 when the text is not one). */
long dist_results_job(const char *text);
/* Exactly n results into out (msg malloc'd; free with tun_result_free);
 * false with a reason, out then zeroed. */
bool dist_results_parse(const char *text, int n, tun_result *out, su_buf *err);

#ifdef HAVE_MPI
/* ---- comm.c: the ranks, text messages, heartbeats ------------------------ */

/* Message tags. */
enum { DIST_TAG_HELLO = 1, DIST_TAG_WORK, DIST_TAG_RESULTS, DIST_TAG_STOP, DIST_TAG_BEAT };

/* Seconds without a heartbeat after which a rank is taken for lost. */
#define DIST_SILENCE_S 10.0

typedef struct dist_comm dist_comm;
/* Joins the MPI job (MPI_THREAD_MULTIPLE, errors returned, not fatal) and
 * starts the heartbeat thread: rank 0 beats to every rank, the others to
 * rank 0. NULL with a reason. Call after the runner is forked. */
dist_comm *dist_comm_start(su_buf *err);
int dist_comm_rank(const dist_comm *c);
int dist_comm_size(const dist_comm *c);
/* Sends text to rank `to` without waiting (the text is copied). */
void dist_comm_send(dist_comm *c, int to, int tag, const char *text);
/* The next message waiting from rank `from` (-1: any), malloc'd, or NULL
 * when none is; heartbeats are consumed on the way. */
char *dist_comm_poll(dist_comm *c, int from, int *src, int *tag);
/* Seconds since a message or heartbeat last came from rank r. */
double dist_comm_silence(dist_comm *c, int r);
/* Rank r is lost: no more heartbeats go to it. */
void dist_comm_forget(dist_comm *c, int r);
/* Stops the heartbeats and leaves the MPI job (NULL is fine). MPI_Finalize
 * waits for every rank, and may wait forever for a lost one: after
 * DIST_SILENCE_S the process exits with `status` instead of returning. */
void dist_comm_stop(dist_comm *c, int status);

/* ---- deal.c: rank 0 deals batches out --------------------------------- */

/* A candidate lost with its rank this many times gets an error record. */
#define DIST_RETRIES 2

typedef struct dist_dealer dist_dealer;
/* Waits for every rank's hello; a rank measures for the target of
 * targets[0..nt) that it has (the same string, ISA features and cores),
 * rank 0 for targets[here], with `local` (whose build and run settings go
 * with every share). Notes on the ranks go to `notes`. */
dist_dealer *dist_dealer_new(dist_comm *c, const tun_measurer *local, const db_target *targets, size_t nt,
                             size_t here, FILE *notes);
/* Ranks that measure, for any target, rank 0 included. */
int dist_dealer_width(const dist_dealer *d);
/* The batch measurer of target k (width: its ranks; 0 when none measures
 * it): the batch split into a share per rank of target k, rank 0's
 * measured here when k is its own, a lost rank's candidates to the others;
 * together sends a confirmation whole to one rank of k (NULL for rank 0's
 * own target: rank 0 times it). Its functions return false only when
 * rank 0's own runner died. */
tun_batch_measurer dist_dealer_measurer(dist_dealer *d, size_t k);
/* Tells every rank to stop, notes what each measured, frees the dealer. */
void dist_dealer_free(dist_dealer *d);

/* ---- serve.c: the other ranks --------------------------------------------- */

/* Says hello (its target string, described here, or why it cannot
 * measure), then builds and measures the shares rank 0 sends until it says
 * stop. jobs: compilers at once (0: the target's cores). False with a
 * reason when rank 0 stops answering. */
bool dist_serve(dist_comm *c, ms_runner *r, const char *target, int jobs, su_buf *err);
#endif

#endif
