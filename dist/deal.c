/* deal.c — rank 0's batch measurers, one per target of the run: each batch
 * the tuner proposes for a task of a target is split into one share per
 * rank that measures for that target (rank 0 included when it is rank 0's
 * own), sent out, and rank 0 measures its own share meanwhile; the
 * ranks build their shares too, so every rank's compilers and runner work
 * at once. A rank whose heartbeats stop (DIST_SILENCE_S) or whose share
 * runs past its deadline (every candidate's compile and run limits, plus
 * slack) is lost: its candidates go back to the queue and out to the
 * ranks left, or rank 0 measures them; a candidate lost with its rank
 * DIST_RETRIES times becomes an error record, so a candidate that kills
 * whoever measures it cannot take every rank down. Results of a lost rank
 * that arrive late are dropped: each candidate is recorded once. Which
 * target a rank measures for is settled once, from its hello: the run's
 * target with the same string, ISA features and cores (records then carry
 * the measuring rank's host and its own description of the target). A
 * task's confirmation (its best configs timed side by side) goes whole to
 * one rank of its target. Only one batch is in flight at a time: ranks of
 * the other targets wait meanwhile. */
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dist/dist.h"

/* How long rank 0 waits for the ranks' hellos. */
#define HELLO_WAIT_S 120.0

typedef struct peer {
    dist_hello hello;       /* what it said (strings in the dealer's arena) */
    bool said_hello;
    int target;             /* the run's target it measures for (-1: none) */
    bool lost;
    su_map sent;            /* keys of the tasks whose function it was sent */
    long job;               /* the share it holds (-1: idle) */
    int *held;              /* the batch positions of that share */
    int nheld;
    double deadline;        /* monotonic seconds after which the share is lost */
    int64_t measured;       /* candidates it measured in this run */
    int64_t confirming;     /* ... and configs it timed for confirmations (whole shares) */
    bool whole;             /* the share it holds is a confirmation */
    const char *why;        /* why it was lost */
} peer;

/* The batch measurer of one target: the context its functions get. */
typedef struct lane {
    dist_dealer *d;
    int k;                  /* the target's index */
} lane;

struct dist_dealer {
    dist_comm *c;
    const tun_measurer *local;
    db_target *targets;     /* the run's targets (copied into a) */
    int nt;
    int here;               /* the one rank 0 measures for */
    lane *lanes;            /* per target */
    FILE *notes;
    peer *peers;            /* by rank; peers[0] is this rank */
    int n;
    long next_job;
    su_arena a;
};

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void nap(void)
{
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
}

static bool same_target(const db_target *a, const db_target *b)
{
    return !strcmp(a->name, b->name) && !strcmp(a->isa, b->isa) && a->cores == b->cores;
}

static void note(dist_dealer *d, const char *fmt, ...) SU_PRINTF(2, 3);
static void note(dist_dealer *d, const char *fmt, ...)
{
    if (!d->notes)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("relay-tune: mpi: ", d->notes);
    vfprintf(d->notes, fmt, ap);
    fputc('\n', d->notes);
    fflush(d->notes);
    va_end(ap);
}

/* The run's targets as a note: 'cpu' (avx2; 2 cores), ... */
static const char *targets_text(dist_dealer *d)
{
    su_buf b = {0};
    for (int k = 0; k < d->nt; k++) {
        const db_target *t = &d->targets[k];
        su_buf_printf(&b, "%s'%s' (%s; %d cores)", k ? ", " : "", t->name, t->isa, t->cores);
    }
    const char *s = su_arena_strdup(&d->a, su_buf_str(&b));
    su_buf_free(&b);
    return s;
}

/* The hello of rank r: which of the run's targets it measures for. */
static void greet(dist_dealer *d, int r, const char *text)
{
    peer *p = &d->peers[r];
    su_buf err = {0};
    if (p->said_hello || !dist_hello_parse(text, &d->a, &p->hello, &err)) {
        if (!p->said_hello)
            note(d, "rank %d: its hello does not read (%s); it does not measure", r, su_buf_str(&err));
        su_buf_free(&err);
        p->said_hello = true;
        return;
    }
    su_buf_free(&err);
    p->said_hello = true;
    const db_target *t = &p->hello.target;
    for (int k = 0; k < d->nt && !p->hello.error; k++)
        if (same_target(t, &d->targets[k]))
            p->target = k;
    if (p->hello.error)
        note(d, "rank %d on %s (pid %ld) cannot measure: %s", r, p->hello.host, p->hello.pid, p->hello.error);
    else if (p->target < 0)
        note(d, "rank %d on %s (pid %ld) has target '%s' (%s; %d cores), not %s %s: it does not measure", r,
             p->hello.host, p->hello.pid, t->name, t->isa, t->cores, d->nt > 1 ? "one of this run's:" : "this run's",
             targets_text(d));
    else
        note(d, "rank %d on %s (pid %ld) measures for '%s'", r, p->hello.host, p->hello.pid, t->name);
}

dist_dealer *dist_dealer_new(dist_comm *c, const tun_measurer *local, const db_target *targets, size_t nt,
                             size_t here, FILE *notes)
{
    dist_dealer *d = su_calloc(1, sizeof *d);
    d->c = c, d->local = local, d->notes = notes;
    su_arena_init(&d->a);
    d->nt = (int)nt;
    d->here = (int)here;
    d->targets = su_arena_alloc(&d->a, (nt + 1) * sizeof *d->targets);
    d->lanes = su_arena_alloc(&d->a, (nt + 1) * sizeof *d->lanes);
    for (int k = 0; k < d->nt; k++) {
        /* the descriptions are the caller's; copy what the notes and matching read */
        d->targets[k] = targets[k];
        d->targets[k].name = su_arena_strdup(&d->a, targets[k].name);
        d->targets[k].isa = su_arena_strdup(&d->a, targets[k].isa ? targets[k].isa : "");
        d->lanes[k] = (lane){d, k};
    }
    d->n = dist_comm_size(c);
    d->peers = su_calloc((size_t)d->n + 1, sizeof *d->peers);
    for (int r = 0; r < d->n; r++)
        d->peers[r].job = -1, d->peers[r].target = -1;
    d->peers[0].said_hello = true;
    d->peers[0].target = d->here;
    d->peers[0].hello.host = tun_host_name();
    int waiting = d->n - 1;
    double until = mono_now() + HELLO_WAIT_S;
    while (waiting > 0 && mono_now() < until) {
        int src, tag;
        char *m = dist_comm_poll(c, -1, &src, &tag);
        if (!m) {
            nap();
            continue;
        }
        if (tag == DIST_TAG_HELLO && src > 0 && src < d->n && !d->peers[src].said_hello) {
            greet(d, src, m);
            waiting--;
        }
        free(m);
    }
    for (int r = 1; r < d->n; r++)
        if (!d->peers[r].said_hello) {
            d->peers[r].lost = true;
            d->peers[r].why = "no hello";
            dist_comm_forget(c, r);
            note(d, "rank %d said no hello within %.0f s: it does not measure", r, HELLO_WAIT_S);
        }
    su_buf b = {0};
    for (int k = 0; d->nt > 1 && k < d->nt; k++)
        su_buf_printf(&b, "%s%d for '%s'", k ? ", " : " (", dist_dealer_measurer(d, (size_t)k).width,
                      d->targets[k].name);
    note(d, "%d of %d ranks measure%s%s; rank 0 on %s (pid %ld) tunes", dist_dealer_width(d), d->n, su_buf_str(&b),
         d->nt > 1 ? ")" : "", tun_host_name(), (long)getpid());
    su_buf_free(&b);
    return d;
}

int dist_dealer_width(const dist_dealer *d)
{
    int w = 0;
    for (int r = 0; r < d->n; r++)
        w += d->peers[r].target >= 0 && !d->peers[r].lost;
    return w;
}

/* Whether rank r (not 0) measures for target k and is not lost. */
static bool serves(const dist_dealer *d, int r, int k)
{
    return r > 0 && !d->peers[r].lost && d->peers[r].target == k;
}

static bool measure_lane(void *ctx, const tun_space *s, const tun_task_data *td, uint64_t seed, int n,
                         const sch_config *cfgs, tun_result *out);
static bool measure_whole(void *ctx, const tun_space *s, const tun_task_data *td, uint64_t seed, int n,
                          const sch_config *cfgs, tun_result *out);

tun_batch_measurer dist_dealer_measurer(dist_dealer *d, size_t k)
{
    tun_batch_measurer m = {measure_lane, NULL, &d->lanes[k], (int)k == d->here};
    for (int r = 1; r < d->n; r++)
        m.width += serves(d, r, (int)k);
    /* rank 0 times its own target's confirmations itself, as without MPI */
    if ((int)k != d->here)
        m.together = measure_whole;
    return m;
}

/* One batch in flight. */
typedef struct batch {
    const tun_space *s;
    const tun_task_data *td;
    uint64_t seed;
    const sch_config *cfgs;
    tun_result *out;
    char **json;            /* each config's record JSON */
    int *queue, nq;         /* positions still to deal */
    int *losses;            /* per position: times lost with a rank */
    int left;               /* positions without a result */
    bool whole;             /* a confirmation: one rank times it all */
} batch;

/* Up to k positions off the queue's front into held. */
static int take(batch *b, int k, int *held)
{
    k = k < b->nq ? k : b->nq;
    memcpy(held, b->queue, (size_t)k * sizeof *held);
    memmove(b->queue, b->queue + k, (size_t)(b->nq - k) * sizeof *b->queue);
    b->nq -= k;
    return k;
}

static void send_share(dist_dealer *d, int r, batch *b, int k)
{
    peer *p = &d->peers[r];
    const tun_task *t = b->s->task;
    p->held = su_realloc(p->held, ((size_t)k + 1) * sizeof *p->held);
    p->nheld = take(b, k, p->held);
    p->job = d->next_job++;
    p->whole = b->whole;
    const char **cj = su_calloc((size_t)p->nheld + 1, sizeof *cj);
    for (int i = 0; i < p->nheld; i++)
        cj[i] = b->json[p->held[i]];
    bool first = !su_map_get(&p->sent, t->key);
    char *func = first ? tun_task_text(t) : NULL;
    dist_work w = {p->job, t->key, func, t->flops, t->nparams, t->param_const, b->seed, p->nheld, cj,
                   d->local->build, d->local->run};
    w.build.jobs = 0; /* the rank's own cores */
    char *text = dist_work_json(&w);
    dist_comm_send(d->c, r, DIST_TAG_WORK, text);
    free(text);
    free(func);
    free(cj);
    if (first)
        su_map_put(&p->sent, su_arena_strdup(&d->a, t->key), (void *)1);
    /* every candidate may compile twice (its unit, then alone) and run to its limit */
    double each = 2 * d->local->build.timeout_s + d->local->run.timeout_s + 10;
    p->deadline = mono_now() + p->nheld * each + DIST_SILENCE_S;
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Rank r is lost: its share goes back to the queue, or to error records. */
static void lose(dist_dealer *d, int r, batch *b, const char *why)
{
    peer *p = &d->peers[r];
    p->lost = true;
    p->why = why;
    dist_comm_forget(d->c, r);
    /* if it is alive after all (hung, slow), it should not go on */
    dist_comm_send(d->c, r, DIST_TAG_STOP, "{}");
    int requeued = 0;
    for (int i = 0; p->job >= 0 && i < p->nheld; i++) {
        int pos = p->held[i];
        if (++b->losses[pos] < DIST_RETRIES) {
            b->queue[b->nq++] = pos;
            requeued++;
            continue;
        }
        tun_result *o = &b->out[pos];
        memset(o, 0, sizeof *o);
        o->index = tun_config_encode(b->s, &b->cfgs[pos]);
        o->error = SU_MERR_UNKNOWN;
        o->msg = su_strdup("not measured: lost with the rank measuring it, every time it was dealt");
        o->timestamp = wall_now();
        b->left--;
    }
    note(d, "rank %d on %s (pid %ld) is lost (%s): %d of its %d candidates go to other ranks", r,
         p->hello.host ? p->hello.host : "?", p->hello.pid, why, requeued, p->job >= 0 ? p->nheld : 0);
    p->job = -1;
    p->nheld = 0;
}

/* A results message from rank r. */
static void collect(dist_dealer *d, int r, batch *b, const char *text)
{
    peer *p = &d->peers[r];
    if (p->lost || p->job < 0 || dist_results_job(text) != p->job)
        return; /* late: its candidates went elsewhere */
    tun_result *res = su_calloc((size_t)p->nheld + 1, sizeof *res);
    su_buf err = {0};
    if (!dist_results_parse(text, p->nheld, res, &err)) {
        char *why = su_arena_printf(&d->a, "its results do not read: %s", su_buf_str(&err));
        su_buf_free(&err);
        free(res);
        lose(d, r, b, why);
        return;
    }
    su_buf_free(&err);
    for (int i = 0; i < p->nheld; i++) {
        int pos = p->held[i];
        b->out[pos] = res[i];
        b->out[pos].index = tun_config_encode(b->s, &b->cfgs[pos]);
        b->out[pos].host = p->hello.host;
        b->out[pos].where = &p->hello.target;
    }
    *(p->whole ? &p->confirming : &p->measured) += p->nheld;
    b->left -= p->nheld;
    p->job = -1;
    p->nheld = 0;
    free(res);
}

/* Rank 0 measures up to k queued candidates itself; false when its runner died. */
static bool measure_here(dist_dealer *d, batch *b, int k)
{
    int *pos = su_calloc((size_t)k + 1, sizeof *pos);
    k = take(b, k, pos);
    sch_config *cf = su_calloc((size_t)k + 1, sizeof *cf);
    tun_result *res = su_calloc((size_t)k + 1, sizeof *res);
    for (int i = 0; i < k; i++)
        cf[i] = b->cfgs[pos[i]]; /* shallow: tun_measure only reads them */
    bool alive = tun_measure(d->local, b->s, b->td, k, cf, res);
    for (int i = 0; i < k; i++)
        b->out[pos[i]] = res[i];
    d->peers[0].measured += k;
    b->left -= k;
    free(pos);
    free(cf);
    free(res);
    return alive;
}

/* Receives what has come and loses the ranks that went silent or ran past
 * their deadline; true when something happened. */
static bool listen(dist_dealer *d, batch *b)
{
    bool any = false;
    int src, tag;
    char *m;
    while ((m = dist_comm_poll(d->c, -1, &src, &tag))) {
        if (tag == DIST_TAG_RESULTS && src > 0 && src < d->n)
            collect(d, src, b, m);
        free(m);
        any = true;
    }
    double now = mono_now();
    for (int r = 1; r < d->n; r++) {
        peer *p = &d->peers[r];
        if (p->lost)
            continue;
        if (dist_comm_silence(d->c, r) > DIST_SILENCE_S) {
            lose(d, r, b, "no heartbeat for 10 s");
            any = true;
        } else if (p->job >= 0 && now > p->deadline) {
            lose(d, r, b, "its share ran past every candidate's time limits");
            any = true;
        }
    }
    return any;
}

/* What is still queued gets an error record: no one is left to measure it. */
static void give_up(batch *b, const char *why)
{
    while (b->nq > 0) {
        int pos = b->queue[--b->nq];
        tun_result *o = &b->out[pos];
        o->index = tun_config_encode(b->s, &b->cfgs[pos]);
        o->error = SU_MERR_UNKNOWN;
        o->msg = su_strdup(why);
        o->timestamp = wall_now();
        b->left--;
    }
}

/* Measures a batch of target k: a share for every idle rank of k and one
 * for rank 0 when k is its own; whole: the batch goes to one rank (rank 0
 * when k is its own), in order, again whole to another if that one is lost. */
static bool deal(lane *l, const tun_space *s, const tun_task_data *td, uint64_t seed, int n, const sch_config *cfgs,
                 tun_result *out, bool whole)
{
    dist_dealer *d = l->d;
    int k = l->k;
    batch b = {s, td, seed, cfgs, out};
    b.whole = whole;
    b.json = su_calloc((size_t)n + 1, sizeof *b.json);
    b.queue = su_calloc((size_t)n + 1, sizeof *b.queue);
    b.losses = su_calloc((size_t)n + 1, sizeof *b.losses);
    for (int i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        b.json[i] = tun_config_record_json(s, &cfgs[i]);
        b.queue[b.nq++] = i;
    }
    b.left = n;
    bool alive = true, here = k == d->here;
    listen(d, &b);
    while (b.left > 0) {
        int idle = 0, ranks = 0;
        for (int r = 1; r < d->n; r++)
            if (serves(d, r, k))
                ranks++, idle += d->peers[r].job < 0;
        int takers = idle + (here && alive);
        int share = whole ? b.nq : takers ? (b.nq + takers - 1) / takers : 0;
        for (int r = 1; r < d->n && b.nq > 0 && (!whole || !here); r++)
            if (serves(d, r, k) && d->peers[r].job < 0)
                send_share(d, r, &b, share);
        bool measured = false;
        if (b.nq > 0 && here && alive) {
            alive = measure_here(d, &b, share > 0 ? share : b.nq);
            measured = true;
        } else if (b.nq > 0 && ranks == 0) {
            /* nobody is left to measure what is queued */
            give_up(&b, here ? "not run: the runner process died"
                             : "not measured: no rank of the task's target is left");
        }
        if (!listen(d, &b) && !measured && b.left > 0)
            nap();
    }
    for (int i = 0; i < n; i++)
        free(b.json[i]);
    free(b.json);
    free(b.queue);
    free(b.losses);
    return alive;
}

static bool measure_lane(void *ctx, const tun_space *s, const tun_task_data *td, uint64_t seed, int n,
                         const sch_config *cfgs, tun_result *out)
{
    return deal(ctx, s, td, seed, n, cfgs, out, false);
}

static bool measure_whole(void *ctx, const tun_space *s, const tun_task_data *td, uint64_t seed, int n,
                          const sch_config *cfgs, tun_result *out)
{
    return deal(ctx, s, td, seed, n, cfgs, out, true);
}

void dist_dealer_free(dist_dealer *d)
{
    if (!d)
        return;
    su_buf b = {0};
    for (int r = 0; r < d->n; r++) {
        peer *p = &d->peers[r];
        if (r > 0 && !p->lost)
            dist_comm_send(d->c, r, DIST_TAG_STOP, "{}");
        if (p->target >= 0) {
            su_buf_printf(&b, "%s rank %d (%s) %lld", b.len ? "," : "", r, p->hello.host ? p->hello.host : "?",
                          (long long)p->measured);
            if (d->nt > 1)
                su_buf_printf(&b, " for '%s'", d->targets[p->target].name);
            if (p->confirming)
                su_buf_printf(&b, " (and %lld timed for confirmations)", (long long)p->confirming);
            if (p->lost)
                su_buf_printf(&b, ", then lost: %s", p->why);
        }
    }
    note(d, "candidates measured by rank:%s", su_buf_str(&b));
    su_buf_free(&b);
    for (int r = 0; r < d->n; r++) {
        free(d->peers[r].held);
        su_map_free(&d->peers[r].sent);
    }
    free(d->peers);
    su_arena_free(&d->a);
    free(d);
}
