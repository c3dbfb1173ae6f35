/* omp_regions.c — where a compiled model's parallel regions spend their
 * time, as a library preloaded into any program that runs one:
 *
 *   gcc -O2 -Wall -Wextra -shared -fPIC -o omp_regions.so benchmarks/omp_regions.c -ldl
 *   OMP_NUM_THREADS=2 LD_PRELOAD=./omp_regions.so ./relay-tune bench model.so --repeat 50
 *
 * A kernel's `#pragma omp parallel for schedule(static)` is a call of
 * libgomp's GOMP_parallel (schedule(guided), tried in session 7, is
 * GOMP_parallel_loop_nonmonotonic_guided). This library stands in for
 * both, and for the monotonic guided form: it runs each region's body under a
 * wrapper that reads the clock as each thread starts and ends its share
 * (with guided, all of its chunks), and prints at exit (stderr, totals over every region
 * of the process, ms):
 *
 *   wake    entry to the last thread's start: the fork (threads woken)
 *   share   the mean thread's time in its share of the loop: the work
 *   wait    the last thread's end minus the first's: the time the earlier
 *           threads wait at the region's closing barrier
 *   least   each region's smallest wait over its calls, times its calls:
 *           the part of the wait that is the split itself (iterations
 *           that do not divide evenly, uneven work), not the host's noise
 *   join    the last end to the return: the join
 *
 * Divide by the runs (bench: --warmup plus --repeat, twice with --profile)
 * for a run's share. docs/compiled-model.md ("Where the time between
 * kernels goes") reads it. Regions of other forms (dynamic loops, tasks)
 * are not timed. Models are loaded with RTLD_LOCAL, so the real entry
 * points are looked up in libgomp itself, not with RTLD_NEXT. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_THREADS 256  /* threads of a region that are timed */
#define MAX_BODIES 4096  /* distinct region bodies whose least wait is kept */

typedef void (*body_fn)(void *);

/* One region call: the body, its data, each thread's start and end. */
typedef struct {
    body_fn fn;
    void *data;
    double start[MAX_THREADS], end[MAX_THREADS];
} region_call;

/* The totals over all calls (seconds) and each body's least wait. */
static struct {
    pthread_mutex_t lock;
    long calls;
    double wall, wake, share, wait, join;
    int nbodies;
    struct {
        body_fn fn;
        double least;  /* the smallest wait of one of its calls */
        long calls;
    } body[MAX_BODIES];
} tot = {.lock = PTHREAD_MUTEX_INITIALIZER};

typedef void (*loop_fn)(body_fn, void *, unsigned, long, long, long, long, unsigned);
static void (*real_parallel)(body_fn, void *, unsigned, unsigned);
static loop_fn real_guided, real_nonmonotonic_guided;
static int (*thread_num)(void);

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The body as each thread runs it, between two clock reads. */
static void timed_body(void *p)
{
    region_call *c = p;
    int t = thread_num();
    double t0 = now();
    c->fn(c->data);
    if (t >= 0 && t < MAX_THREADS) {
        c->start[t] = t0;
        c->end[t] = now();
    }
}

/* libgomp's own entry points, once; exits when there is no libgomp. */
static void find_libgomp(void)
{
    void *g = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!g)
        g = dlopen("libgomp.so.1", RTLD_NOW);
    real_parallel = g ? (void (*)(body_fn, void *, unsigned, unsigned))dlsym(g, "GOMP_parallel") : NULL;
    real_guided = g ? (loop_fn)dlsym(g, "GOMP_parallel_loop_guided") : NULL;
    real_nonmonotonic_guided = g ? (loop_fn)dlsym(g, "GOMP_parallel_loop_nonmonotonic_guided") : NULL;
    thread_num = g ? (int (*)(void))dlsym(g, "omp_get_thread_num") : NULL;
    if (!real_parallel || !real_guided || !real_nonmonotonic_guided || !thread_num) {
        fprintf(stderr, "omp_regions: libgomp.so.1's GOMP_parallel entry points not found\n");
        exit(1);
    }
}

/* One call into the totals: t0 and t1 are the entry and the return. */
static void account(const region_call *c, double t0, double t1)
{
    int k = 0;
    double last_start = t0, first_end = t1, last_end = t0, share = 0;
    for (int i = 0; i < MAX_THREADS; i++) {
        if (c->end[i] <= 0)
            continue;
        k++;
        last_start = c->start[i] > last_start ? c->start[i] : last_start;
        first_end = c->end[i] < first_end ? c->end[i] : first_end;
        last_end = c->end[i] > last_end ? c->end[i] : last_end;
        share += c->end[i] - c->start[i];
    }
    if (!k)
        return;
    double wait = last_end - first_end;
    pthread_mutex_lock(&tot.lock);
    tot.calls++;
    tot.wall += t1 - t0;
    tot.wake += last_start - t0;
    tot.share += share / k;
    tot.wait += wait;
    tot.join += t1 - last_end;
    int b = 0;
    while (b < tot.nbodies && tot.body[b].fn != c->fn)
        b++;
    if (b == tot.nbodies && b < MAX_BODIES)
        tot.body[tot.nbodies++] = (typeof(tot.body[0])){c->fn, wait, 0};
    if (b < tot.nbodies) {
        tot.body[b].least = wait < tot.body[b].least ? wait : tot.body[b].least;
        tot.body[b].calls++;
    }
    pthread_mutex_unlock(&tot.lock);
}

/* A region's call record, or NULL (then the region runs untimed). */
static region_call *region_new(body_fn fn, void *data)
{
    if (!real_parallel)
        find_libgomp();
    region_call *c = calloc(1, sizeof *c);
    if (c) {
        c->fn = fn;
        c->data = data;
    }
    return c;
}

/* The stand-ins for libgomp's: the same region, timed. */
void GOMP_parallel(body_fn fn, void *data, unsigned num_threads, unsigned flags)
{
    region_call *c = region_new(fn, data);
    if (!c) {
        real_parallel(fn, data, num_threads, flags);
        return;
    }
    double t0 = now();
    real_parallel(timed_body, c, num_threads, flags);
    account(c, t0, now());
    free(c);
}

/* A guided loop's region: its body takes its chunks itself, so the
 * wrapper's clock reads bracket all of a thread's chunks. */
static void guided(loop_fn *real, body_fn fn, void *data, unsigned num_threads, long start, long end, long incr,
                   long chunk, unsigned flags)
{
    region_call *c = region_new(fn, data);
    if (!c) {
        (*real)(fn, data, num_threads, start, end, incr, chunk, flags);
        return;
    }
    double t0 = now();
    (*real)(timed_body, c, num_threads, start, end, incr, chunk, flags);
    account(c, t0, now());
    free(c);
}

void GOMP_parallel_loop_guided(body_fn fn, void *data, unsigned num_threads, long start, long end, long incr,
                               long chunk, unsigned flags)
{
    guided(&real_guided, fn, data, num_threads, start, end, incr, chunk, flags);
}

void GOMP_parallel_loop_nonmonotonic_guided(body_fn fn, void *data, unsigned num_threads, long start, long end,
                                            long incr, long chunk, unsigned flags)
{
    guided(&real_nonmonotonic_guided, fn, data, num_threads, start, end, incr, chunk, flags);
}

__attribute__((destructor)) static void report(void)
{
    if (!tot.calls)
        return;  /* a process without regions (the compiler the tool runs) */
    double least = 0;
    for (int b = 0; b < tot.nbodies; b++)
        least += tot.body[b].least * (double)tot.body[b].calls;
    fprintf(stderr,
            "omp_regions: %ld regions (%d bodies): wall %.3f ms = wake %.3f + share %.3f + the rest of the "
            "longest share + join %.3f; wait %.3f ms (least %.3f)\n",
            tot.calls, tot.nbodies, tot.wall * 1e3, tot.wake * 1e3, tot.share * 1e3, tot.join * 1e3, tot.wait * 1e3,
            least * 1e3);
}
