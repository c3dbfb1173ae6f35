/* bench_util.h — what the benchmark programs share: a monotonic clock,
 * aligned buffers of seeded random floats, the timing loop (warm-up, then
 * repeats of enough calls to last a minimum time, as AutoTVM's
 * min_repeat_ms; the median and best of the repeats), and one fused
 * function scheduled, lowered and emitted as C. Prefix: bench_. */
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

/* Schedules primitive function f with template tmpl (NULL: by its anchor)
 * and config (schedule JSON as sch_config_parse reads it; NULL: the
 * template's default), lowers it (consts: per parameter, a weight whose
 * packing becomes a prologue) and appends the kernel to src as `name`.
 * *sched (to sch_free) owns the result; NULL after a message to stderr. */
sch_lowered *bench_lower(const ir_expr *f, const char *tmpl, const sch_hw *hw, const char *config,
                         const bool *consts, const char *name, su_buf *src, sch_schedule **sched);
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

#endif
