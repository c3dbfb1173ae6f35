/* bench_peak.c — the host's FP32 FMA peak, measured, so that the benchmarks
 * can say how far a kernel is from what the cores can do (% of peak) rather
 * than only how it compares with a library (bench_util.h).
 *
 * One loop per ISA, each compiled for its ISA with a target attribute, so
 * one binary carries all three and picks at run time
 * (__builtin_cpu_supports): AVX-512 (zmm, 16 lanes), AVX2 + FMA (ymm, 8
 * lanes), SSE (xmm, 4 lanes; no FMA instruction, so a multiply and an add,
 * which count the same two flops). Each loop updates independent
 * accumulator chains, c = c * a + b: a chain waits for its previous FMA
 * (4-5 cycles), so the units are kept busy only when chains >= latency x
 * FMA units (4 x 2 = 8 on Skylake-SP, 5 x 2 = 10 on Zen 1); the loops use
 * 16 chains on zmm (32 registers) and 12 on ymm and xmm (16 registers:
 * 12 accumulators and the two operands, no spill; tests/benchmarks/
 * peak_asm.sh checks the assembly). With a < 1 the chains converge to
 * b / (1 - a) and never reach denormals, which would be slow.
 *
 * On T threads the same loop runs on T pthreads released together by a
 * flag; the peak is all their flops over the wall time from the release
 * to the last one's end. The best of five runs is kept: the peak is what
 * the cores can do, and a run slowed by another process says less about it. */
#include <immintrin.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "benchmarks/bench_util.h"

/* Seconds of a monotonic clock (bench_now's, kept here so that the probe
 * links without the rest of the benchmarks' code: fma_peak and its test). */
static double peak_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* chain constants: a < 1 and b > 0 read at run time, so that the compiler
 * cannot fold the loop away */
static volatile float peak_a = 0.99999f, peak_b = 1e-5f;
/* the loops' results land here (summed by the thread that started them),
 * so that they are computed */
static volatile float peak_sink;

/* The loops' chains are written out one by one: named locals, not an
 * array, so that every accumulator is a register. */
#define CHAINS12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define CHAINS16(X) CHAINS12(X) X(12) X(13) X(14) X(15)

/* One loop, for the vector type V and its intrinsics SET1, STEP (one
 * chain's update: c * a + b), ADD and STORE, defined before each use. */
#define PEAK_INIT(i) V c##i = SET1(seed + (float)(i) * 1e-3f);
#define PEAK_STEP(i) c##i = STEP(c##i, va, vb);
#define PEAK_SUM(i) s = ADD(s, c##i);
#define PEAK_LOOP(NAME, TARGET, CHAINS, LANES)                                                                       \
    __attribute__((target(TARGET), noinline)) static float NAME(long iters, float seed)                             \
    {                                                                                                                \
        V va = SET1(peak_a), vb = SET1(peak_b);                                                                      \
        CHAINS(PEAK_INIT)                                                                                            \
        for (long i = 0; i < iters; i++) {                                                                           \
            CHAINS(PEAK_STEP)                                                                                        \
        }                                                                                                            \
        V s = SET1(0.0f);                                                                                            \
        CHAINS(PEAK_SUM)                                                                                             \
        float out[LANES], sum = 0;                                                                                   \
        STORE(out, s);                                                                                               \
        for (int l = 0; l < LANES; l++)                                                                              \
            sum += out[l];                                                                                           \
        return sum;                                                                                                  \
    }

#define V __m512
#define SET1 _mm512_set1_ps
#define STEP _mm512_fmadd_ps
#define ADD _mm512_add_ps
#define STORE _mm512_storeu_ps
PEAK_LOOP(peak_loop_avx512, "avx512f", CHAINS16, 16)
#undef V
#undef SET1
#undef STEP
#undef ADD
#undef STORE

#define V __m256
#define SET1 _mm256_set1_ps
#define STEP _mm256_fmadd_ps
#define ADD _mm256_add_ps
#define STORE _mm256_storeu_ps
PEAK_LOOP(peak_loop_avx2, "avx2,fma", CHAINS12, 8)
#undef V
#undef SET1
#undef STEP
#undef ADD
#undef STORE

/* no-fma: a build with -march=native must not contract the multiply and
 * the add into an FMA here, or this would measure another ISA */
#define V __m128
#define SET1 _mm_set1_ps
#define STEP(c, a, b) _mm_add_ps(_mm_mul_ps(c, a), b)
#define ADD _mm_add_ps
#define STORE _mm_storeu_ps
PEAK_LOOP(peak_loop_sse, "no-fma,no-avx", CHAINS12, 4)
#undef V
#undef SET1
#undef STEP
#undef ADD
#undef STORE

/* One ISA's loop: its name, vector width and chains, and whether the host runs it. */
typedef struct peak_isa {
    const char *name;
    int lanes, chains;
    float (*loop)(long iters, float seed);
} peak_isa;

/* widest first */
static const peak_isa isas[] = {
    {"avx512", 16, 16, peak_loop_avx512},
    {"avx2", 8, 12, peak_loop_avx2},
    {"sse", 4, 12, peak_loop_sse},
};
enum { NISA = sizeof isas / sizeof *isas };

static bool host_runs(const peak_isa *k)
{
    __builtin_cpu_init();
    if (!strcmp(k->name, "avx512"))
        return __builtin_cpu_supports("avx512f");
    if (!strcmp(k->name, "avx2"))
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return true; /* SSE2 is part of x86-64 */
}

const char *bench_peak_isa(void)
{
    for (int i = 0; i < NISA; i++)
        if (host_runs(&isas[i]))
            return isas[i].name;
    return isas[NISA - 1].name;
}

/* What one thread of a run does: wait for the start, run the loop (or
 * nothing when the run was called off). */
typedef struct peak_job {
    const peak_isa *k;
    long iters;
    atomic_int *go;     /* 0: wait, 1: run, -1: called off */
    float seed;
    float sum;          /* out: the loop's result */
    double cpu;         /* out: the thread's CPU seconds in the loop */
} peak_job;

static double thread_cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *peak_thread(void *p)
{
    peak_job *j = p;
    int go;
    while ((go = atomic_load_explicit(j->go, memory_order_acquire)) == 0)
        sched_yield();
    double t0 = thread_cpu_now();
    if (go > 0)
        j->sum = j->k->loop(j->iters, j->seed);
    j->cpu = thread_cpu_now() - t0;
    return NULL;
}

/* Seconds for `threads` threads to run `iters` iterations each, from their
 * release to the last one's end; negative when a thread cannot start.
 * *share: the part of that time the threads were on a CPU. */
static double peak_run(const peak_isa *k, int threads, long iters, double *share)
{
    pthread_t tid[BENCH_PEAK_MAX_THREADS];
    peak_job jobs[BENCH_PEAK_MAX_THREADS];
    atomic_int go = 0;
    int started = 0;
    for (; started < threads; started++) {
        jobs[started] = (peak_job){k, iters, &go, 0.5f + (float)started * 1e-2f};
        if (pthread_create(&tid[started], NULL, peak_thread, &jobs[started]) != 0)
            break;
    }
    double t0 = peak_now();
    atomic_store_explicit(&go, started < threads ? -1 : 1, memory_order_release);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    double t = peak_now() - t0, cpu = 0;
    float sum = 0;
    for (int i = 0; i < started; i++)
        cpu += jobs[i].cpu, sum += jobs[i].sum;
    peak_sink = sum;
    *share = t > 0 ? fmin(1.0, cpu / (t * threads)) : 1.0;
    return started < threads ? -1 : t;
}

/* The best GFLOP/s of five runs lasting about `seconds` each; *share as
 * peak_run's, of the best run. */
static double peak_gflops(const peak_isa *k, int threads, double seconds, double *share)
{
    /* iterations per second, from a short run (which also wakes up the
     * vector units: AVX-512 starts at a lower throughput) */
    long iters = 1 << 14;
    double t;
    while ((t = peak_run(k, 1, iters, share)) >= 0 && t < 0.01 && iters < (1L << 40))
        iters *= 4;
    if (t < 0)
        return -1;
    iters = (long)fmax(1.0, (double)iters * seconds / fmax(t, 1e-9));
    double flops = 2.0 * k->lanes * k->chains * (double)iters * threads, best = 0;
    for (int r = 0; r < 5; r++) {
        double sh, s = peak_run(k, threads, iters, &sh);
        if (s < 0)
            return -1;
        if (flops / fmax(s, 1e-9) * 1e-9 > best)
            best = flops / fmax(s, 1e-9) * 1e-9, *share = sh;
    }
    return best;
}

bool bench_peak_measure_isa(const char *isa, int threads, double seconds, bench_peak *out, char *why, size_t n)
{
    const peak_isa *k = NULL;
    for (int i = 0; i < NISA; i++)
        if (!strcmp(isa, isas[i].name))
            k = &isas[i];
    if (!k) {
        snprintf(why, n, "unknown ISA '%s' (avx512, avx2 or sse)", isa);
        return false;
    }
    if (!host_runs(k)) {
        snprintf(why, n, "this host cannot run %s", isa);
        return false;
    }
    if (threads < 1 || threads > BENCH_PEAK_MAX_THREADS || !(seconds > 0) || seconds > 60) {
        snprintf(why, n, "threads must be 1..%d and seconds in (0, 60]", BENCH_PEAK_MAX_THREADS);
        return false;
    }
    *out = (bench_peak){k->name, k->lanes, k->chains, threads, 0, 0, 1};
    double share1 = 1;
    out->gflops1 = peak_gflops(k, 1, seconds, &share1);
    out->gflops = threads == 1 ? out->gflops1 : peak_gflops(k, threads, seconds, &out->share);
    out->share = fmin(out->share, share1);
    if (out->gflops1 <= 0 || out->gflops <= 0) {
        snprintf(why, n, "cannot start %d threads", threads);
        return false;
    }
    return true;
}

bool bench_peak_measure(int threads, double seconds, bench_peak *out, char *why, size_t n)
{
    return bench_peak_measure_isa(bench_peak_isa(), threads, seconds, out, why, n);
}

void bench_peak_describe(const bench_peak *p, char *out, size_t n)
{
    int k = snprintf(out, n, "host ISA %s; FP32 FMA peak %.1f GFLOP/s on 1 thread, %.1f on %d (%d chains of %d lanes)",
                     p->isa, p->gflops1, p->gflops, p->threads, p->chains, p->lanes);
    /* a busy host lowers the peak measured, and every % of peak with it */
    if (p->share < 0.9 && k > 0 && (size_t)k < n)
        snprintf(out + k, n - (size_t)k, "; BUSY HOST: the probe's threads ran %.0f%% of the time", p->share * 100);
}
