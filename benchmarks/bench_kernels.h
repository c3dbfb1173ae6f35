/* bench_kernels.h — what bench_kernels.c tells the baselines
 * (bench_baselines.c): the shape of one task as oneDNN and OpenBLAS see it,
 * and the functions that time that shape through each. Prefix: bk_. */
#ifndef RT_BENCH_KERNELS_H
#define RT_BENCH_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "benchmarks/bench_util.h"

typedef enum { BK_CONV, BK_DENSE, BK_BMM } bk_kind;

/* One task's anchor op and the element-wise ops fused after it. */
typedef struct bk_shape {
    bk_kind kind;
    /* conv2d (NCHW data, OIHW weight) */
    int64_t n, c, h, w;         /* data */
    int64_t o, kh, kw;          /* weight: output channels, kernel size */
    int64_t oh, ow;             /* output size */
    int64_t stride[2], dilation[2], pad[4];   /* pad: top, left, bottom, right */
    int64_t groups;
    /* dense: x (m, k) times w (n, k) transposed; batch_matmul: `batch` of
     * a (m, k) times b (n, k) transposed (transpose_b) or b (k, n) */
    int64_t batch, m, nn, k;
    bool transpose_b;
    /* fused after the anchor */
    bool bias;                  /* a per-channel (per-column) add */
    bool residual;              /* an add of a tensor of the output's shape */
    bool relu, gelu;            /* nn.relu; erf-based GELU */
} bk_shape;

/* Writes the shape for people ("conv 1x64x56x56 w64x64x3x3 s1 p1 +bias+relu"). */
void bk_shape_name(const bk_shape *s, char *out, size_t n);

/* Times the shape through oneDNN (fp32, blocked layouts of its choice,
 * reorders outside the timed loop, bias and post-ops fused where the task
 * fuses them). False with the reason in why. */
bool bk_onednn_time(const bk_shape *s, const bench_opts *o, bench_stats *out, char *why, size_t n);
/* Times the shape through OpenBLAS's cblas_sgemm (conv2d: im2col, parallel,
 * then one sgemm per group, both timed; nothing fused). */
bool bk_openblas_time(const bk_shape *s, const bench_opts *o, bench_stats *out, char *why, size_t n);
/* Sets both libraries to `threads` threads; writes what each reports. */
void bk_set_threads(int threads, char *out, size_t n);

#endif
