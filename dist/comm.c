/* comm.c — the MPI side of dist/: joining the job, text messages, and
 * heartbeats that tell a lost rank from a busy one.
 *
 * Open MPI 4 (Debian's) has no fault-tolerant MPI (ULFM) and no sessions,
 * so a dead rank is never reported by a failed call: a receive from it
 * simply never completes. Errors are set to return (MPI_ERRORS_RETURN) so
 * that nothing aborts the job, sends never wait (MPI_Isend; a send to a
 * dead rank stays pending and is abandoned), and a thread sends a heartbeat
 * every DIST_BEAT_S: rank 0 to every rank, the others to rank 0. A rank
 * busy building or measuring keeps beating, so silence longer than
 * DIST_SILENCE_S means the process died, hung as a whole, or its host or
 * link went away. Heartbeats are received by whoever polls (the main
 * thread), and silence is counted from when a message was received, or
 * from when the poller came back from a busy spell of its own (its first
 * poll back may not read every beat that came meanwhile), so a poller that
 * was busy itself does not take the others for lost. mpirun
 * must be told not to kill the job when one process dies
 * (--enable-recovery; docs/distributed.md). */
#include <mpi.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dist/dist.h"

#define DIST_BEAT_S 0.5
/* A process that did not poll for this long was busy (measuring, tuning):
 * silence is counted from its next poll. */
#define POLL_PAUSE_S 2.0

/* One send in flight: its request and the text it reads. */
typedef struct sending {
    MPI_Request req;
    char *text;
} sending;

struct dist_comm {
    int rank, size;
    double *heard;          /* per rank: when a message from it last arrived (monotonic seconds) */
    double polled;          /* when this process last polled */
    double resumed;         /* when it polled again after a pause of its own (busy measuring) */
    pthread_mutex_t lock;   /* guards forgotten and quit (the heartbeat thread reads them) */
    bool *forgotten;        /* per rank: lost, no more heartbeats to it */
    bool quit;
    pthread_t beater;
    bool beating;
    sending *out;           /* sends in flight */
    size_t nout, capout;
};

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *beat(void *arg)
{
    dist_comm *c = arg;
    static const int one = 1;
    MPI_Request *req = su_calloc((size_t)c->size + 1, sizeof *req);
    for (int r = 0; r < c->size; r++)
        req[r] = MPI_REQUEST_NULL;
    for (;;) {
        pthread_mutex_lock(&c->lock);
        bool quit = c->quit;
        pthread_mutex_unlock(&c->lock);
        if (quit)
            break;
        for (int r = 0; r < c->size; r++) {
            if (r == c->rank || (c->rank != 0 && r != 0))
                continue;
            pthread_mutex_lock(&c->lock);
            bool gone = c->forgotten[r];
            pthread_mutex_unlock(&c->lock);
            int done = 1;
            if (req[r] != MPI_REQUEST_NULL)
                MPI_Test(&req[r], &done, MPI_STATUS_IGNORE);
            /* one beat in flight per rank: a dead rank's stays pending */
            if (!gone && done)
                MPI_Isend(&one, 1, MPI_INT, r, DIST_TAG_BEAT, MPI_COMM_WORLD, &req[r]);
        }
        struct timespec ts = {0, (long)(DIST_BEAT_S * 1e9)};
        nanosleep(&ts, NULL);
    }
    free(req);
    return NULL;
}

dist_comm *dist_comm_start(su_buf *err)
{
    int inited = 0, provided = 0;
    MPI_Initialized(&inited);
    if (!inited && MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        su_buf_puts(err, "MPI could not start (is this process started by mpirun?)");
        return NULL;
    }
    if (provided < MPI_THREAD_MULTIPLE) {
        su_buf_puts(err, "this MPI library cannot be called from two threads (MPI_THREAD_MULTIPLE), which the "
                         "heartbeats need");
        MPI_Finalize();
        return NULL;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    dist_comm *c = su_calloc(1, sizeof *c);
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->size);
    c->heard = su_calloc((size_t)c->size + 1, sizeof *c->heard);
    c->forgotten = su_calloc((size_t)c->size + 1, sizeof *c->forgotten);
    double now = mono_now();
    for (int r = 0; r < c->size; r++)
        c->heard[r] = now;
    c->polled = c->resumed = now;
    pthread_mutex_init(&c->lock, NULL);
    c->beating = c->size > 1 && pthread_create(&c->beater, NULL, beat, c) == 0;
    return c;
}

int dist_comm_rank(const dist_comm *c)
{
    return c->rank;
}

int dist_comm_size(const dist_comm *c)
{
    return c->size;
}

/* Frees the sends that completed. */
static void reap(dist_comm *c)
{
    size_t k = 0;
    for (size_t i = 0; i < c->nout; i++) {
        int done = 0;
        MPI_Test(&c->out[i].req, &done, MPI_STATUS_IGNORE);
        if (done)
            free(c->out[i].text);
        else
            c->out[k++] = c->out[i];
    }
    c->nout = k;
}

void dist_comm_send(dist_comm *c, int to, int tag, const char *text)
{
    reap(c);
    if (c->nout == c->capout) {
        c->capout = c->capout ? 2 * c->capout : 16;
        c->out = su_realloc(c->out, c->capout * sizeof *c->out);
    }
    sending *s = &c->out[c->nout];
    s->text = su_strdup(text);
    if (MPI_Isend(s->text, (int)strlen(s->text) + 1, MPI_CHAR, to, tag, MPI_COMM_WORLD, &s->req) != MPI_SUCCESS) {
        /* the rank is unreachable: silence will tell */
        free(s->text);
        return;
    }
    c->nout++;
}

char *dist_comm_poll(dist_comm *c, int from, int *src, int *tag)
{
    double now = mono_now();
    if (now - c->polled > POLL_PAUSE_S)
        c->resumed = now;
    c->polled = now;
    for (;;) {
        int flag = 0;
        MPI_Status st;
        if (MPI_Iprobe(from < 0 ? MPI_ANY_SOURCE : from, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS ||
            !flag)
            return NULL;
        bool beat = st.MPI_TAG == DIST_TAG_BEAT;
        int len = 0;
        MPI_Get_count(&st, MPI_CHAR, &len);
        /* room for a heartbeat's int, or the text and a NUL of our own */
        char *buf = su_calloc((size_t)(len > 0 ? len : 0) + sizeof(int) + 1, 1);
        if (MPI_Recv(buf, beat ? 1 : len, beat ? MPI_INT : MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            free(buf);
            return NULL;
        }
        if (st.MPI_SOURCE >= 0 && st.MPI_SOURCE < c->size)
            c->heard[st.MPI_SOURCE] = mono_now();
        if (beat) {
            free(buf);
            continue;
        }
        buf[len] = 0; /* a text is sent with its NUL; never trust it */
        *src = st.MPI_SOURCE;
        *tag = st.MPI_TAG;
        return buf;
    }
}

double dist_comm_silence(dist_comm *c, int r)
{
    /* the beats that came while this process was busy may not all have
     * been read by its first poll back: silence counts from then at most */
    double since = c->heard[r] > c->resumed ? c->heard[r] : c->resumed;
    return mono_now() - since;
}

void dist_comm_forget(dist_comm *c, int r)
{
    pthread_mutex_lock(&c->lock);
    c->forgotten[r] = true;
    pthread_mutex_unlock(&c->lock);
}

/* The watchdog of MPI_Finalize: it waits for every rank, a dead one too
 * (Open MPI 4 has no fault-tolerant finalize), and sometimes forever once
 * a rank was lost. Everything is stored and said by then, so after
 * DIST_SILENCE_S the process leaves with its status without it; mpirun
 * ends when every process is gone. */
typedef struct watchdog {
    pthread_mutex_t lock;
    pthread_cond_t done_cv;
    bool done;
    int status;
} watchdog;

static void *watch(void *arg)
{
    watchdog *w = arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)DIST_SILENCE_S;
    pthread_mutex_lock(&w->lock);
    while (!w->done)
        if (pthread_cond_timedwait(&w->done_cv, &w->lock, &until) != 0)
            break;
    bool done = w->done;
    pthread_mutex_unlock(&w->lock);
    if (!done) {
        fflush(NULL);
        _exit(w->status);
    }
    return NULL;
}

static void finalize(int status)
{
    watchdog w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, status};
    pthread_t t;
    bool watching = pthread_create(&t, NULL, watch, &w) == 0;
    MPI_Finalize();
    if (watching) {
        pthread_mutex_lock(&w.lock);
        w.done = true;
        pthread_cond_signal(&w.done_cv);
        pthread_mutex_unlock(&w.lock);
        pthread_join(t, NULL);
    }
}

/* Whether some rank was taken for lost. */
static bool lost_any(dist_comm *c)
{
    bool any = false;
    pthread_mutex_lock(&c->lock);
    for (int r = 0; r < c->size; r++)
        any |= c->forgotten[r];
    pthread_mutex_unlock(&c->lock);
    return any;
}

/* Rank 0 ends the whole job once everything is stored and said, when a
 * rank was lost: a rank lost to silence may be hung (stopped, deadlocked,
 * its host frozen) rather than dead, and mpirun waits for every process
 * to exit, so without this it could wait forever. MPI_Abort has mpirun
 * end every process that is left (Open MPI wakes a stopped one first, then
 * terminates it, then kills it). */
static void end_job(int status)
{
    fprintf(stderr, "relay-tune: mpi: a rank was lost and may still be running: rank 0 ends the job (MPI_Abort, "
                    "status %d)\n", status);
    fflush(NULL);
    MPI_Abort(MPI_COMM_WORLD, status);
}

void dist_comm_stop(dist_comm *c, int status)
{
    if (!c)
        return;
    if (c->beating) {
        pthread_mutex_lock(&c->lock);
        c->quit = true;
        pthread_mutex_unlock(&c->lock);
        pthread_join(c->beater, NULL);
    }
    /* a moment for the last sends (the stop messages) to leave */
    for (int i = 0; i < 200 && c->nout; i++) {
        reap(c);
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    /* Open MPI finalizes with sends to dead ranks still pending; their
     * texts are freed after it, when nothing reads them any more */
    if (c->rank == 0 && lost_any(c))
        end_job(status);
    finalize(status);
    for (size_t i = 0; i < c->nout; i++)
        free(c->out[i].text);
    free(c->out);
    pthread_mutex_destroy(&c->lock);
    free(c->heard);
    free(c->forgotten);
    free(c);
}
