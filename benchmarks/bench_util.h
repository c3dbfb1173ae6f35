/* bench_util.h — what the benchmark programs share: a monotonic clock,
 * aligned buffers of seeded random floats, the timing loop (warm-up, then
 * repeats of enough calls to last a minimum time, as AutoTVM's
 * min_repeat_ms; the median and best of the repeats), and one fused
 * function scheduled, lowered and emitted as C (bench_util.c); the host's
 * FP32 FMA peak (bench_peak.c). Prefix: bench_. */
#ifndef RT_BENCH_UTIL_H
#define RT_BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/ir.h"
#include "schedule/schedule.h"
#include "targets/targets.h"

/* Seconds of a monotonic clock. */
double bench_now(void);
/* qsort comparison of doubles, ascending. */
int bench_cmp_double(const void *a, const void *b);
/* A 64-byte aligned buffer of `floats` floats (exits on out of memory). */
float *bench_buffer(size_t floats);
/* Fills p[0..n) with values in [-0.5, 0.5) drawn from *seed. */
void bench_fill(float *p, size_t n, unsigned *seed);

/* The function timed, and its argument. */
typedef void (*bench_fn)(void *ctx);

/* How long to time: `repeat` repeats, each of as many calls as last
 * min_ms milliseconds (at least one), after `warmup` calls. */
typedef struct bench_opts {
    int repeat;
    double min_ms;
    int warmup;
} bench_opts;

/* Statistics of one timing, seconds per call. */
typedef struct bench_stats {
    double median, best, worst, mean, stddev;
    int repeats;        /* repeats timed */
    long number;        /* calls per repeat */
} bench_stats;

/* Times fn(ctx) as o says. */
bench_stats bench_time(bench_fn fn, void *ctx, const bench_opts *o);

/* Builds primitive function f (sch_build) with template tmpl (NULL: by its
 * anchor) and config (schedule JSON as sch_config_parse reads it; NULL:
 * the template's default), consts (per parameter, a weight whose packing
 * becomes a prologue), and appends its parts (TG_KERNEL_*) to src under
 * `name`. *k (to sch_kernel_free) owns the result; NULL after a message to
 * stderr. */
const sch_lowered *bench_lower(const ir_expr *f, const char *tmpl, const sch_hw *hw, const char *config,
                               const bool *consts, const char *name, unsigned parts, su_buf *src, sch_kernel *k);
/* A compiled kernel and its arguments; bench_run_entry calls it (for
 * bench_time) and exits when it reports a failure. */
typedef struct bench_entry {
    tg_entry_fn fn;
    void **args;
} bench_entry;
void bench_run_entry(void *entry);
/* Buffers of seeded random values for each argument of a lowered kernel
 * (packed weights included: their values do not change the time). */
void **bench_kernel_args(const sch_func *f);
void bench_kernel_args_free(const sch_func *f, void **args);

/* ---- bench_peak.c: the host's FP32 FMA peak ---------------------------------- */

/* Most threads bench_peak_measure runs. */
#define BENCH_PEAK_MAX_THREADS 256

/* One measurement of the peak. */
typedef struct bench_peak {
    const char *isa;    /* the loop's ISA: "avx512", "avx2" or "sse" (static string) */
    int lanes;          /* floats per vector register of that ISA */
    int chains;         /* independent accumulator chains of the loop */
    int threads;        /* threads of `gflops` */
    double gflops1;     /* FP32 GFLOP/s on one thread */
    double gflops;      /* FP32 GFLOP/s on `threads` threads */
    double share;       /* the least part of the best runs' time the threads were on a CPU (1: a quiet host) */
} bench_peak;

/* The widest ISA this host runs: "avx512" (AVX-512F), "avx2" (AVX2 and
 * FMA) or "sse". */
const char *bench_peak_isa(void);
/* Measures the peak of the widest ISA on 1 and on `threads` threads, each
 * the best of five runs of about `seconds`. False with the reason in why. */
bool bench_peak_measure(int threads, double seconds, bench_peak *out, char *why, size_t n);
/* The same with the loop of a named ISA; refused for one the host cannot run. */
bool bench_peak_measure_isa(const char *isa, int threads, double seconds, bench_peak *out, char *why, size_t n);
/* The peak for a benchmark's header: "host ISA avx2; FP32 FMA peak ...". */
void bench_peak_describe(const bench_peak *p, char *out, size_t n);

#endif
