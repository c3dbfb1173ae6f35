/* ref_nn.c — reference kernels of the nn.* ops (op_nn.c's family except
 * nn.pad and nn.batch_flatten, which move data and live in ref_transform.c):
 * conv2d, dense, batch_matmul, pooling, softmax, layer_norm, batch_norm,
 * dropout and bias_add, written for NCHW/OIHW; convolution and pooling in
 * other orders of those letters (NHWC, HWIO...) run them on transposed
 * copies (ir_ref_in_layouts).
 *
 * They compute in float32, like the models they run; arguments of other
 * dtypes are converted to float32 first and results converted back (exact
 * for integers below 2^24). Sums that feed a division — means, variances,
 * softmax denominators — accumulate in double.
 *
 * Speed matters because the interpreter is the oracle every tuned kernel is
 * checked against, on whole models: conv2d, dense and batch_matmul share
 * one blocked matrix product (gemm below) whose inner loop runs over
 * contiguous output columns, which the compiler vectorizes; conv2d feeds it
 * tiles of the "im2col" matrix (or the input itself for 1x1 convolutions),
 * and depthwise convolutions use a direct loop. Loops over channels, rows
 * and tiles run in parallel with OpenMP. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ir/ir.h"

#define PAR_MIN (1 << 15)

/* Elements to allocate for n (at least 1, so that empty tensors need no case). */
static size_t at_least_1(int64_t n)
{
    return n > 0 ? (size_t)n : 1;
}

/* ---- float32 views of any dtype ------------------------------------------- */

/* Argument t as float32 data: its own when it is float32, else a converted
 * copy that *tmp owns. */
static const float *f32_in(const ir_tensor *t, float **tmp)
{
    *tmp = NULL;
    if (t->dtype == IR_FLOAT32)
        return t->data;
    int64_t n = ir_tensor_numel(t);
    float *b = su_malloc(at_least_1(n) * sizeof *b);
    for (int64_t i = 0; i < n; i++)
        b[i] = (float)ir_tensor_get(t, i);
    *tmp = b;
    return b;
}

/* Where to compute result t in float32: its data, or a buffer that
 * f32_out_done converts into t. */
static float *f32_out(ir_tensor *t, float **tmp)
{
    *tmp = NULL;
    if (t->dtype == IR_FLOAT32)
        return t->data;
    int64_t n = ir_tensor_numel(t);
    *tmp = su_calloc(at_least_1(n), sizeof(float));
    return *tmp;
}

static void f32_out_done(ir_tensor *t, float *tmp)
{
    if (!tmp)
        return;
    for (int64_t i = 0; i < ir_tensor_numel(t); i++)
        ir_tensor_set(t, i, tmp[i]);
    free(tmp);
}

/* ---- the matrix product ------------------------------------------------- */

enum {
    MR = 6,     /* rows of C per micro tile */
    NR = 8,     /* columns of C per micro tile: two 4-float vectors */
    MC = 48,    /* rows of C per parallel task */
    NC = 256,   /* columns of C per parallel task */
    KC = 256,   /* depth of one pass over a B panel (KC x NC stays in cache) */
};

/* Four floats in one SSE register (GCC/Clang vector extension); the
 * aligned(4) variant reads and writes unaligned memory. */
typedef float v4f __attribute__((vector_size(16)));
typedef float v4f_u __attribute__((vector_size(16), aligned(4)));

/* C[MR x NR] += A[MR x kc] . B[kc x NR]. The MR x NR accumulators are named
 * vectors so that they stay in registers for the whole depth: per step of
 * the depth it loads one row of B (two vectors) and MR values of A, and does
 * 2 MR vector multiply-adds. */
static void micro_full(int64_t kc, const float *A, int64_t lda, const float *B, int64_t ldb, float *C, int64_t ldc)
{
    v4f c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0};
    v4f c30 = {0}, c31 = {0}, c40 = {0}, c41 = {0}, c50 = {0}, c51 = {0};
    const float *a0 = A, *a1 = A + lda, *a2 = A + 2 * lda, *a3 = A + 3 * lda, *a4 = A + 4 * lda, *a5 = A + 5 * lda;
    for (int64_t p = 0; p < kc; p++) {
        const v4f b0 = *(const v4f_u *)(B + p * ldb), b1 = *(const v4f_u *)(B + p * ldb + 4);
        v4f a;
        a = (v4f){0} + a0[p], c00 += a * b0, c01 += a * b1;
        a = (v4f){0} + a1[p], c10 += a * b0, c11 += a * b1;
        a = (v4f){0} + a2[p], c20 += a * b0, c21 += a * b1;
        a = (v4f){0} + a3[p], c30 += a * b0, c31 += a * b1;
        a = (v4f){0} + a4[p], c40 += a * b0, c41 += a * b1;
        a = (v4f){0} + a5[p], c50 += a * b0, c51 += a * b1;
    }
    const v4f acc[MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
    for (int r = 0; r < MR; r++) {
        v4f_u *c = (v4f_u *)(C + r * ldc);
        c[0] += acc[r][0];
        c[1] += acc[r][1];
    }
}

/* The same for a partial tile at the edges (mr <= MR rows, nr <= NR columns). */
static void micro_edge(int mr, int nr, int64_t kc, const float *A, int64_t lda, const float *B, int64_t ldb,
                       float *C, int64_t ldc)
{
    for (int r = 0; r < mr; r++)
        for (int64_t p = 0; p < kc; p++) {
            const float a = A[r * lda + p], *b = B + p * ldb;
            float *c = C + r * ldc;
            for (int j = 0; j < nr; j++)
                c[j] += a * b[j];
        }
}

/* C[m x n] += A[m x k] . B[k x n], row-major with leading dimensions. */
static void gemm(int64_t m, int64_t n, int64_t k, const float *A, int64_t lda, const float *B, int64_t ldb,
                 float *C, int64_t ldc)
{
    int64_t mt = (m + MC - 1) / MC, nt = (n + NC - 1) / NC;
#pragma omp parallel for collapse(2) schedule(dynamic) if (m * n * k > PAR_MIN && mt * nt > 1)
    for (int64_t bi = 0; bi < mt; bi++)
        for (int64_t bj = 0; bj < nt; bj++) {
            int64_t i0 = bi * MC, i1 = i0 + MC < m ? i0 + MC : m;
            int64_t j0 = bj * NC, j1 = j0 + NC < n ? j0 + NC : n;
            for (int64_t p0 = 0; p0 < k; p0 += KC) {
                int64_t kc = k - p0 < KC ? k - p0 : KC;
                for (int64_t i = i0; i < i1; i += MR) {
                    int mr = i1 - i < MR ? (int)(i1 - i) : MR;
                    for (int64_t j = j0; j < j1; j += NR) {
                        int nr = j1 - j < NR ? (int)(j1 - j) : NR;
                        const float *a = A + i * lda + p0, *b = B + p0 * ldb + j;
                        float *c = C + i * ldc + j;
                        if (mr == MR && nr == NR)
                            micro_full(kc, a, lda, b, ldb, c, ldc);
                        else
                            micro_edge(mr, nr, kc, a, lda, b, ldb, c, ldc);
                    }
                }
            }
        }
}

/* dst[cols x rows] = transpose of src[rows x cols]. */
static void transpose2d(const float *src, int64_t rows, int64_t cols, float *dst)
{
#pragma omp parallel for if (rows * cols > PAR_MIN)
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < rows; i++)
            dst[j * rows + i] = src[i * cols + j];
}

/* ---- window attributes ---------------------------------------------------- */

/* A 2-D window attribute: one value stands for both axes. */
static void hw_pair(const ir_attrs *at, int idx, int64_t out[2])
{
    int64_t v[2] = {1, 1};
    int n = ir_attr_ints(at, idx, v, 2);
    out[0] = v[0];
    out[1] = n == 2 ? v[1] : v[0];
}

/* padding as top, left, bottom, right from 1, 2 or 4 values. */
static void hw_padding(const ir_attrs *at, int idx, int64_t out[4])
{
    int64_t v[4] = {0, 0, 0, 0};
    int n = ir_attr_ints(at, idx, v, 4);
    for (int i = 0; i < 4; i++)
        out[i] = n == 1 ? v[0] : n == 2 ? v[i % 2] : v[i];
}

/* ---- nn.conv2d ------------------------------------------------------------ */

typedef struct conv {
    int64_t n, c, h, w;         /* data (N, C, H, W) */
    int64_t k, kh, kw;          /* weight (K, C / groups, KH, KW) */
    int64_t oh, ow;             /* output extents */
    int64_t sh, sw, dh, dw;     /* strides, dilation */
    int64_t pt, pl;             /* top and left padding (bottom/right only shape the output) */
    int64_t groups;
} conv;

/* Rows [r0, r1) of the im2col matrix for output pixels [p0, p0 + pb) of one
 * image: row (c, kh, kw) holds the input pixel each output pixel's window
 * puts under tap (kh, kw) of channel c, or 0 in the padding. */
static void im2col(const conv *g, const float *in, int64_t p0, int64_t pb, float *col)
{
    int64_t rows = g->c * g->kh * g->kw;
#pragma omp parallel for if (rows * pb > PAR_MIN)
    for (int64_t r = 0; r < rows; r++) {
        int64_t c = r / (g->kh * g->kw), t = r % (g->kh * g->kw), kh = t / g->kw, kw = t % g->kw;
        const float *plane = in + c * g->h * g->w;
        float *dst = col + r * pb;
        int64_t oh = p0 / g->ow, ow = p0 % g->ow;
        for (int64_t p = 0; p < pb; p++) {
            int64_t ih = oh * g->sh - g->pt + kh * g->dh, iw = ow * g->sw - g->pl + kw * g->dw;
            dst[p] = ih >= 0 && ih < g->h && iw >= 0 && iw < g->w ? plane[ih * g->w + iw] : 0.0f;
            if (++ow == g->ow) {
                ow = 0;
                oh++;
            }
        }
    }
}

/* One image through the matrix product, per group:
 * out_g[Kg x P] = W_g[Kg x R] . col_g[R x P] with R = (C / groups) KH KW. */
static void conv_gemm(const conv *g, const float *in, const float *w, float *out)
{
    int64_t cg = g->c / g->groups, kg = g->k / g->groups, rg = cg * g->kh * g->kw, np = g->oh * g->ow;
    bool direct = g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->pt == 0 && g->pl == 0 &&
                  g->oh == g->h && g->ow == g->w;
    if (direct) {   /* a 1x1 convolution: the input planes are the matrix */
        for (int64_t gi = 0; gi < g->groups; gi++)
            gemm(kg, np, rg, w + gi * kg * rg, rg, in + gi * cg * np, np, out + gi * kg * np, np);
        return;
    }
    /* tiles of output pixels small enough that their im2col rows stay in cache */
    int64_t rows = g->c * g->kh * g->kw, pb = (1 << 18) / (rows ? rows : 1);
    pb = pb < 64 ? 64 : pb > 1024 ? 1024 : pb;
    pb = pb > np ? np : pb;
    float *col = su_malloc(at_least_1(rows * pb) * sizeof *col);
    for (int64_t p0 = 0; p0 < np; p0 += pb) {
        int64_t n = np - p0 < pb ? np - p0 : pb;
        im2col(g, in, p0, n, col);
        for (int64_t gi = 0; gi < g->groups; gi++)
            gemm(kg, n, rg, w + gi * kg * rg, rg, col + gi * rg * n, n, out + gi * kg * np + p0, np);
    }
    free(col);
}

/* Depthwise (C / groups == 1): each output channel reads one input channel,
 * so a direct loop over its window beats a matrix product of width 1. */
static void conv_depthwise(const conv *g, const float *in, const float *w, float *out)
{
    int64_t mult = g->k / g->groups;
#pragma omp parallel for if (g->k * g->oh * g->ow * g->kh * g->kw > PAR_MIN)
    for (int64_t k = 0; k < g->k; k++) {
        const float *plane = in + (k / mult) * g->h * g->w, *wk = w + k * g->kh * g->kw;
        float *o = out + k * g->oh * g->ow;
        for (int64_t oh = 0; oh < g->oh; oh++)
            for (int64_t kh = 0; kh < g->kh; kh++) {
                int64_t ih = oh * g->sh - g->pt + kh * g->dh;
                if (ih < 0 || ih >= g->h)
                    continue;
                const float *row = plane + ih * g->w;
                for (int64_t kw = 0; kw < g->kw; kw++) {
                    const float wt = wk[kh * g->kw + kw];
                    /* the output columns whose tap kw lands inside the row */
                    int64_t off = kw * g->dw - g->pl, lo = 0, hi = g->ow;
                    while (lo < hi && lo * g->sw + off < 0)
                        lo++;
                    while (hi > lo && (hi - 1) * g->sw + off >= g->w)
                        hi--;
                    float *orow = o + oh * g->ow;
                    for (int64_t ow = lo; ow < hi; ow++)
                        orow[ow] += wt * row[ow * g->sw + off];
                }
            }
    }
}

static bool conv2d_nchw(const ir_ref_call *c)
{
    const ir_tensor *d = c->in[0], *wt = c->in[1];
    ir_tensor *o = c->out[0];
    conv g = {d->shape[0], d->shape[1], d->shape[2], d->shape[3], wt->shape[0], wt->shape[2], wt->shape[3],
              o->shape[2], o->shape[3], 0, 0, 0, 0, 0, 0, ir_attr_int(c->attrs, IR_CONV_GROUPS)};
    int64_t st[2], dil[2], pad[4];
    hw_pair(c->attrs, IR_CONV_STRIDES, st);
    hw_pair(c->attrs, IR_CONV_DILATION, dil);
    hw_padding(c->attrs, IR_CONV_PADDING, pad);
    g.sh = st[0], g.sw = st[1], g.dh = dil[0], g.dw = dil[1], g.pt = pad[0], g.pl = pad[1];
    float *t_in, *t_w, *t_out;
    const float *in = f32_in(d, &t_in), *w = f32_in(wt, &t_w);
    float *out = f32_out(o, &t_out);
    for (int64_t n = 0; n < g.n; n++) {
        const float *img = in + n * g.c * g.h * g.w;
        float *res = out + n * g.k * g.oh * g.ow;
        if (g.c / g.groups == 1 && g.groups > 1)
            conv_depthwise(&g, img, w, res);
        else
            conv_gemm(&g, img, w, res);
    }
    free(t_in);
    free(t_w);
    f32_out_done(o, t_out);
    return true;
}

/* ---- nn.dense, nn.batch_matmul -------------------------------------------- */

/* data (..., K) x weight (N, K) -> (..., N): out = data . weight^T. */
bool ir_ref_dense(const ir_ref_call *c)
{
    const ir_tensor *d = c->in[0], *wt = c->in[1];
    ir_tensor *o = c->out[0];
    int64_t k = wt->shape[1], n = wt->shape[0], m = n ? ir_tensor_numel(o) / n : 0;
    float *t_in, *t_w, *t_out;
    const float *x = f32_in(d, &t_in), *w = f32_in(wt, &t_w);
    float *y = f32_out(o, &t_out);
    float *wT = su_malloc(at_least_1(k * n) * sizeof *wT);
    transpose2d(w, n, k, wT);
    gemm(m, n, k, x, k, wT, n, y, n);
    free(wT);
    free(t_in);
    free(t_w);
    f32_out_done(o, t_out);
    return true;
}

/* a (B, M, K) x b (B, N, K) -> (B, M, N) with the default transpose_b=True;
 * transpose_a reads a as (B, K, M), transpose_b=False reads b as (B, K, N).
 * A batch of 1 repeats. */
bool ir_ref_batch_matmul(const ir_ref_call *c)
{
    const ir_tensor *ta = c->in[0], *tb = c->in[1];
    ir_tensor *o = c->out[0];
    bool tra = ir_attr_bool(c->attrs, IR_BMM_TRANSPOSE_A), trb = ir_attr_bool(c->attrs, IR_BMM_TRANSPOSE_B);
    int64_t batch = o->shape[0], m = o->shape[1], n = o->shape[2], k = ta->shape[tra ? 1 : 2];
    float *t_a, *t_b, *t_out;
    const float *a = f32_in(ta, &t_a), *b = f32_in(tb, &t_b);
    float *y = f32_out(o, &t_out);
    float *pa = tra ? su_malloc(at_least_1(m * k) * sizeof *pa) : NULL;
    float *pb = trb ? su_malloc(at_least_1(k * n) * sizeof *pb) : NULL;
    for (int64_t i = 0; i < batch; i++) {
        const float *ai = a + (ta->shape[0] == 1 ? 0 : i) * m * k, *bi = b + (tb->shape[0] == 1 ? 0 : i) * k * n;
        if (tra)
            transpose2d(ai, k, m, pa), ai = pa;
        if (trb)
            transpose2d(bi, n, k, pb), bi = pb;
        gemm(m, n, k, ai, k, bi, n, y + i * m * n, n);
    }
    free(pa);
    free(pb);
    free(t_a);
    free(t_b);
    f32_out_done(o, t_out);
    return true;
}

/* ---- pooling -------------------------------------------------------------- */

/* nn.max_pool2d and nn.avg_pool2d. A window's taps in the padding are
 * skipped by max (TVM pads with the lowest float) and by avg unless
 * count_include_pad, which counts the taps up to the end of the padding (as
 * TVM and PyTorch do; a ceil_mode window may overhang it). */
static bool pool2d_nchw(const ir_ref_call *c)
{
    const ir_tensor *d = c->in[0];
    ir_tensor *o = c->out[0];
    bool is_max = c->op->id == IR_OP_MAX_POOL2D;
    bool include_pad = !is_max && ir_attr_bool(c->attrs, IR_POOL_COUNT_INCLUDE_PAD);
    int64_t k[2], st[2], dil[2], pad[4];
    hw_pair(c->attrs, IR_POOL_SIZE, k);
    hw_pair(c->attrs, IR_POOL_STRIDES, st);
    hw_pair(c->attrs, IR_POOL_DILATION, dil);
    hw_padding(c->attrs, IR_POOL_PADDING, pad);
    int64_t planes = d->shape[0] * d->shape[1], h = d->shape[2], w = d->shape[3], oh = o->shape[2], ow = o->shape[3];
    float *t_in, *t_out;
    const float *in = f32_in(d, &t_in);
    float *out = f32_out(o, &t_out);
#pragma omp parallel for if (planes * oh * ow * k[0] * k[1] > PAR_MIN)
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *x = in + pl * h * w;
        float *y = out + pl * oh * ow;
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++) {
                int64_t hs = i * st[0] - pad[0], ws = j * st[1] - pad[1], taps_h = 0, taps_w = 0;
                double acc = is_max ? -FLT_MAX : 0;
                int64_t valid = 0;
                for (int64_t a = 0; a < k[0]; a++) {
                    int64_t ih = hs + a * dil[0];
                    taps_h += ih <= h + pad[2] - 1;
                    if (ih < 0 || ih >= h)
                        continue;
                    for (int64_t b = 0; b < k[1]; b++) {
                        int64_t iw = ws + b * dil[1];
                        if (iw < 0 || iw >= w)
                            continue;
                        double v = x[ih * w + iw];
                        acc = is_max ? ir_max_nan(acc, v) : acc + v;
                        valid++;
                    }
                }
                for (int64_t b = 0; b < k[1]; b++)
                    taps_w += ws + b * dil[1] <= w + pad[3] - 1;
                int64_t count = include_pad ? taps_h * taps_w : valid;
                y[i * ow + j] = (float)(is_max ? acc : count ? acc / (double)count : 0);
            }
    }
    free(t_in);
    f32_out_done(o, t_out);
    return true;
}

/* nn.global_avg_pool2d: the mean of each (N, C) plane. */
static bool global_pool2d_nchw(const ir_ref_call *c)
{
    const ir_tensor *d = c->in[0];
    ir_tensor *o = c->out[0];
    int64_t planes = d->shape[0] * d->shape[1], hw = d->shape[2] * d->shape[3];
    float *t_in, *t_out;
    const float *in = f32_in(d, &t_in);
    float *out = f32_out(o, &t_out);
#pragma omp parallel for if (planes * hw > PAR_MIN)
    for (int64_t p = 0; p < planes; p++) {
        double s = 0;
        for (int64_t i = 0; i < hw; i++)
            s += in[p * hw + i];
        out[p] = (float)(hw ? s / (double)hw : 0);
    }
    free(t_in);
    f32_out_done(o, t_out);
    return true;
}

/* nn.adaptive_avg_pool2d: output cell (i, j) averages input rows
 * [floor(i H / OH), ceil((i + 1) H / OH)) and the same for columns. */
static bool adaptive_pool2d_nchw(const ir_ref_call *c)
{
    const ir_tensor *d = c->in[0];
    ir_tensor *o = c->out[0];
    int64_t planes = d->shape[0] * d->shape[1], h = d->shape[2], w = d->shape[3], oh = o->shape[2], ow = o->shape[3];
    float *t_in, *t_out;
    const float *in = f32_in(d, &t_in);
    float *out = f32_out(o, &t_out);
#pragma omp parallel for if (planes * h * w > PAR_MIN)
    for (int64_t p = 0; p < planes; p++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++) {
                int64_t h0 = i * h / oh, h1 = ((i + 1) * h + oh - 1) / oh;
                int64_t w0 = j * w / ow, w1 = ((j + 1) * w + ow - 1) / ow;
                double s = 0;
                for (int64_t y = h0; y < h1; y++)
                    for (int64_t x = w0; x < w1; x++)
                        s += in[(p * h + y) * w + x];
                int64_t count = (h1 - h0) * (w1 - w0);
                out[(p * oh + i) * ow + j] = (float)(count ? s / (double)count : 0);
            }
    free(t_in);
    f32_out_done(o, t_out);
    return true;
}

/* ---- softmax and normalization -------------------------------------------- */

/* The data as outer x len x inner around axis. */
static void around_axis(const ir_tensor *t, int64_t axis, int64_t *outer, int64_t *len, int64_t *inner)
{
    int ax = (int)(axis < 0 ? axis + t->ndim : axis);
    *outer = *inner = 1;
    for (int i = 0; i < t->ndim; i++)
        if (i < ax)
            *outer *= t->shape[i];
        else if (i > ax)
            *inner *= t->shape[i];
    *len = t->shape[ax];
}

/* nn.softmax and nn.log_softmax along axis, stabilized by the maximum. */
bool ir_ref_softmax(const ir_ref_call *c)
{
    const ir_tensor *d = c->in[0];
    ir_tensor *o = c->out[0];
    bool log_form = c->op->id == IR_OP_LOG_SOFTMAX;
    int64_t outer, len, inner;
    around_axis(d, ir_attr_int(c->attrs, IR_SOFTMAX_AXIS), &outer, &len, &inner);
    float *t_in, *t_out;
    const float *in = f32_in(d, &t_in);
    float *out = f32_out(o, &t_out);
#pragma omp parallel for if (outer * len * inner > PAR_MIN)
    for (int64_t r = 0; r < outer * inner; r++) {
        const float *x = in + (r / inner) * len * inner + r % inner;
        float *y = out + (r / inner) * len * inner + r % inner;
        double mx = -INFINITY, sum = 0;
        for (int64_t i = 0; i < len; i++)
            mx = ir_max_nan(mx, x[i * inner]);
        for (int64_t i = 0; i < len; i++)
            sum += exp(x[i * inner] - mx);
        double lse = mx + log(sum);
        for (int64_t i = 0; i < len; i++)
            y[i * inner] = (float)(log_form ? x[i * inner] - lse : exp(x[i * inner] - mx) / sum);
    }
    free(t_in);
    f32_out_done(o, t_out);
    return true;
}

/* nn.layer_norm(data, gamma, beta): normalizes along axis with the biased
 * variance, then scales by gamma (if scale) and shifts by beta (if center). */
bool ir_ref_layer_norm(const ir_ref_call *c)
{
    const ir_tensor *d = c->in[0];
    ir_tensor *o = c->out[0];
    double eps = ir_attr_float(c->attrs, IR_NORM_EPSILON);
    bool center = ir_attr_bool(c->attrs, IR_NORM_CENTER), scale = ir_attr_bool(c->attrs, IR_NORM_SCALE);
    int64_t outer, len, inner;
    around_axis(d, ir_attr_int(c->attrs, IR_NORM_AXIS), &outer, &len, &inner);
    float *t_in, *t_g, *t_b, *t_out;
    const float *in = f32_in(d, &t_in), *gamma = f32_in(c->in[1], &t_g), *beta = f32_in(c->in[2], &t_b);
    float *out = f32_out(o, &t_out);
#pragma omp parallel for if (outer * len * inner > PAR_MIN)
    for (int64_t r = 0; r < outer * inner; r++) {
        const float *x = in + (r / inner) * len * inner + r % inner;
        float *y = out + (r / inner) * len * inner + r % inner;
        double mean = 0, var = 0;
        for (int64_t i = 0; i < len; i++)
            mean += x[i * inner];
        mean /= (double)(len ? len : 1);
        for (int64_t i = 0; i < len; i++)
            var += (x[i * inner] - mean) * (x[i * inner] - mean);
        var /= (double)(len ? len : 1);
        double inv = 1.0 / sqrt(var + eps);
        for (int64_t i = 0; i < len; i++) {
            double v = (x[i * inner] - mean) * inv;
            y[i * inner] = (float)((scale ? v * gamma[i] : v) + (center ? beta[i] : 0));
        }
    }
    free(t_in);
    free(t_g);
    free(t_b);
    f32_out_done(o, t_out);
    return true;
}

/* nn.batch_norm(data, gamma, beta, moving_mean, moving_var) in inference:
 * (data - mean) / sqrt(var + eps) * gamma + beta per channel of axis; the
 * statistics come back unchanged as the second and third results. */
bool ir_ref_batch_norm(const ir_ref_call *c)
{
    const ir_tensor *d = c->in[0];
    ir_tensor *o = c->out[0];
    double eps = ir_attr_float(c->attrs, IR_NORM_EPSILON);
    bool center = ir_attr_bool(c->attrs, IR_NORM_CENTER), scale_on = ir_attr_bool(c->attrs, IR_NORM_SCALE);
    int64_t outer, len, inner;
    around_axis(d, ir_attr_int(c->attrs, IR_NORM_AXIS), &outer, &len, &inner);
    float *t_in, *t_out;
    const float *in = f32_in(d, &t_in);
    float *out = f32_out(o, &t_out);
    float *scale = su_malloc(at_least_1(len) * sizeof *scale), *shift = su_malloc(at_least_1(len) * sizeof *shift);
    for (int64_t i = 0; i < len; i++) {
        double s = 1.0 / sqrt(ir_tensor_get(c->in[4], i) + eps) * (scale_on ? ir_tensor_get(c->in[1], i) : 1.0);
        scale[i] = (float)s;
        shift[i] = (float)((center ? ir_tensor_get(c->in[2], i) : 0.0) - ir_tensor_get(c->in[3], i) * s);
    }
#pragma omp parallel for if (outer * len * inner > PAR_MIN)
    for (int64_t r = 0; r < outer * len; r++) {
        const float *x = in + r * inner;
        float *y = out + r * inner;
        const float s = scale[r % len], b = shift[r % len];
#pragma omp simd
        for (int64_t i = 0; i < inner; i++)
            y[i] = x[i] * s + b;
    }
    free(scale);
    free(shift);
    free(t_in);
    f32_out_done(o, t_out);
    memcpy(c->out[1]->data, c->in[3]->data, ir_tensor_nbytes(c->out[1]));
    memcpy(c->out[2]->data, c->in[4]->data, ir_tensor_nbytes(c->out[2]));
    return true;
}

/* nn.dropout in inference: the data unchanged and a mask of ones. */
bool ir_ref_dropout(const ir_ref_call *c)
{
    memcpy(c->out[0]->data, c->in[0]->data, ir_tensor_nbytes(c->out[0]));
    for (int64_t i = 0; i < ir_tensor_numel(c->out[1]); i++)
        ir_tensor_set(c->out[1], i, 1.0);
    return true;
}

/* nn.bias_add(data, bias): bias[c] added along axis. */
bool ir_ref_bias_add(const ir_ref_call *c)
{
    const ir_tensor *d = c->in[0];
    ir_tensor *o = c->out[0];
    int64_t outer, len, inner;
    around_axis(d, ir_attr_int(c->attrs, IR_BIAS_ADD_AXIS), &outer, &len, &inner);
    if (!ir_dtype_is_float(d->dtype)) {
        for (int64_t i = 0; i < ir_tensor_numel(o); i++) {
            int64_t v = (int64_t)((uint64_t)ir_tensor_get_i64(d, i) + (uint64_t)ir_tensor_get_i64(c->in[1], i / inner % len));
            ir_tensor_set_i64(o, i, v);
        }
        return true;
    }
    float *t_in, *t_b, *t_out;
    const float *in = f32_in(d, &t_in), *bias = f32_in(c->in[1], &t_b);
    float *out = f32_out(o, &t_out);
#pragma omp parallel for if (outer * len * inner > PAR_MIN)
    for (int64_t r = 0; r < outer * len; r++) {
        const float *x = in + r * inner;
        float *y = out + r * inner;
        const float b = bias[r % len];
#pragma omp simd
        for (int64_t i = 0; i < inner; i++)
            y[i] = x[i] + b;
    }
    free(t_in);
    free(t_b);
    f32_out_done(o, t_out);
    return true;
}

/* ---- other layouts --------------------------------------------------------- */

/* The positions of layout attribute idx (or of dflt_idx when it is "") as a
 * permutation of canon; false when it is canonical already. The relation
 * accepted the layout, so it is a permutation. */
static bool permuted(const ir_attrs *at, int idx, int dflt_idx, const char *canon, int pos[4])
{
    const char *l = ir_attr_str(at, idx);
    ir_layout_perm(*l ? l : ir_attr_str(at, dflt_idx), canon, pos);
    return pos[0] != 0 || pos[1] != 1 || pos[2] != 2 || pos[3] != 3;
}

/* A kernel of data in `layout` (attribute idx, out_layout oidx): through NCHW. */
static bool data_layout_call(const ir_ref_call *c, int idx, int oidx, ir_ref_fn fn)
{
    if (ir_layout_blocked(c->attrs, idx, oidx))     /* NCHW[x]c: ir/ref_nchwc.c */
        return ir_ref_blocked(c, idx, oidx, fn);
    int dp[4], op[4];
    bool pd = permuted(c->attrs, idx, idx, "NCHW", dp), po = permuted(c->attrs, oidx, idx, "NCHW", op);
    if (!pd && !po)
        return fn(c);
    const int *in_pos[1] = {pd ? dp : NULL};
    return ir_ref_in_layouts(c, in_pos, op, fn);
}

bool ir_ref_conv2d(const ir_ref_call *c)
{
    int dp[4], kp[4], op[4];
    bool pd = permuted(c->attrs, IR_CONV_DATA_LAYOUT, IR_CONV_DATA_LAYOUT, "NCHW", dp);
    bool pk = permuted(c->attrs, IR_CONV_KERNEL_LAYOUT, IR_CONV_KERNEL_LAYOUT, "OIHW", kp);
    bool po = permuted(c->attrs, IR_CONV_OUT_LAYOUT, IR_CONV_DATA_LAYOUT, "NCHW", op);
    if (!pd && !pk && !po)
        return conv2d_nchw(c);
    const int *in_pos[2] = {pd ? dp : NULL, pk ? kp : NULL};
    return ir_ref_in_layouts(c, in_pos, op, conv2d_nchw);
}

bool ir_ref_pool2d(const ir_ref_call *c)
{
    return data_layout_call(c, IR_POOL_LAYOUT, IR_POOL_OUT_LAYOUT, pool2d_nchw);
}

bool ir_ref_global_pool2d(const ir_ref_call *c)
{
    return data_layout_call(c, IR_GPOOL_LAYOUT, IR_GPOOL_OUT_LAYOUT, global_pool2d_nchw);
}

bool ir_ref_adaptive_pool2d(const ir_ref_call *c)
{
    return data_layout_call(c, IR_APOOL_LAYOUT, IR_APOOL_OUT_LAYOUT, adaptive_pool2d_nchw);
}

/* ---- nn.conv1d ----------------------------------------------------------------- */

/* Direct convolution in double, one output element at a time (conv1d is
 * rare in the models relay-tune meets; clarity over speed). */
bool ir_ref_conv1d(const ir_ref_call *c)
{
    const ir_tensor *d = c->in[0], *w = c->in[1];
    ir_tensor *o = c->out[0];
    int64_t st, dil, pad[2], g = ir_attr_int(c->attrs, IR_CONV_GROUPS);
    ir_conv1d_params(c->attrs, &st, &dil, pad);
    int64_t C = d->shape[1], W = d->shape[2], O = w->shape[0], CG = w->shape[1], K = w->shape[2], OW = o->shape[2];
    for (int64_t n = 0; n < d->shape[0]; n++)
        for (int64_t oc = 0; oc < O; oc++)
            for (int64_t x = 0; x < OW; x++) {
                double acc = 0;
                int64_t c0 = oc / (O / g) * CG;
                for (int64_t ic = 0; ic < CG; ic++)
                    for (int64_t k = 0; k < K; k++) {
                        int64_t iw = x * st - pad[0] + k * dil;
                        if (iw >= 0 && iw < W)
                            acc += ir_tensor_get(d, (n * C + c0 + ic) * W + iw) * ir_tensor_get(w, (oc * CG + ic) * K + k);
                    }
                ir_tensor_set(o, (n * O + oc) * OW + x, acc);
            }
    return true;
}

/* ---- nn.conv1d_transpose, nn.conv2d_transpose, nn.conv3d_transpose ---------- */

/* Scatter form, in double: each input element adds its products with the
 * weights of its group to the outputs its taps reach. Data of 1 or 2
 * spatial axes is viewed as 3-D with unit leading axes (stride and
 * dilation 1, no padding), so one loop nest serves the three ops. */
bool ir_ref_conv_transpose(const ir_ref_call *c)
{
    const ir_tensor *d = c->in[0], *w = c->in[1];
    ir_tensor *o = c->out[0];
    int ns = d->ndim - 2, lead = 3 - ns;
    ir_conv_transpose p;
    ir_conv_transpose_params(c->attrs, ns, &p);
    /* the spatial extents, strides, dilations and leading pads over D, H, W */
    int64_t in[3], k[3], out[3], st[3], dil[3], pad[3];
    for (int i = 0; i < 3; i++) {
        int j = i - lead;
        in[i] = j < 0 ? 1 : d->shape[2 + j];
        k[i] = j < 0 ? 1 : w->shape[2 + j];
        out[i] = j < 0 ? 1 : o->shape[2 + j];
        st[i] = j < 0 ? 1 : p.stride[j];
        dil[i] = j < 0 ? 1 : p.dilation[j];
        pad[i] = j < 0 ? 0 : p.pad_lo[j];
    }
    int64_t N = d->shape[0], C = d->shape[1], OG = w->shape[1], O = o->shape[1], CG = C / p.groups;
    int64_t sp = in[0] * in[1] * in[2], ksp = k[0] * k[1] * k[2], osp = out[0] * out[1] * out[2];
    int64_t n_out = ir_tensor_numel(o);
    double *acc = su_calloc((size_t)(n_out ? n_out : 1), sizeof *acc);
    for (int64_t n = 0; n < N; n++)
        for (int64_t ic = 0; ic < C; ic++)
            for (int64_t f = 0; f < sp; f++) {
                int64_t x[3] = {f / (in[1] * in[2]), f / in[2] % in[1], f % in[2]};
                double v = ir_tensor_get(d, (n * C + ic) * sp + f);
                for (int64_t og = 0; og < OG; og++) {
                    int64_t oc = ic / CG * OG + og;
                    for (int64_t t = 0; t < ksp; t++) {
                        int64_t kk[3] = {t / (k[1] * k[2]), t / k[2] % k[1], t % k[2]}, at = 0;
                        bool inside = true;
                        for (int i = 0; i < 3; i++) {
                            int64_t y = x[i] * st[i] + kk[i] * dil[i] - pad[i];
                            inside = inside && y >= 0 && y < out[i];
                            at = at * out[i] + y;
                        }
                        if (inside)
                            acc[(n * O + oc) * osp + at] += v * ir_tensor_get(w, (ic * OG + og) * ksp + t);
                    }
                }
            }
    for (int64_t i = 0; i < n_out; i++)
        ir_tensor_set(o, i, acc[i]);
    free(acc);
    return true;
}

/* ---- nn.conv3d, nn.max_pool3d, nn.avg_pool3d -------------------------------- */

/* Direct loops over NCDHW data in float32 views, accumulating in double:
 * 3-D convolutions and pools are rarer than 2-D ones in the models
 * relay-tune meets, so there is no blocked product here; what keeps them
 * fast enough to fold constants and check kernels is that each output
 * position visits only the taps inside the data (window_axis). */

/* The taps k in [k0, k1) of output index o on axis i (window extent K) that
 * land inside the data of extent n; *padded counts those inside the padded
 * data (from the front padding up to the end of the back one). */
static void window_axis(const ir_window3d *w, int i, int64_t o, int64_t n, int64_t K, int64_t *k0, int64_t *k1,
                        int64_t *padded)
{
    int64_t s = o * w->stride[i] - w->pad[i], d = w->dil[i];
    /* s + k * d >= 0 and s + k * d < n, and for padded s + k * d <= n + pad_back - 1 */
    int64_t lo = s >= 0 ? 0 : (-s + d - 1) / d, hi = n - s <= 0 ? 0 : (n - s + d - 1) / d;
    int64_t ph = n + w->pad[i + 3] - s <= 0 ? 0 : (n + w->pad[i + 3] - 1 - s) / d + 1;
    *k0 = lo < K ? lo : K;
    *k1 = hi < K ? hi : K;
    if (*k1 < *k0)
        *k1 = *k0;
    *padded = ph < K ? ph : K;
}

bool ir_ref_conv3d(const ir_ref_call *c)
{
    const ir_tensor *d = c->in[0], *wt = c->in[1];
    ir_tensor *o = c->out[0];
    ir_window3d w;
    ir_window3d_params(c->attrs, false, &w);
    int64_t g = ir_attr_int(c->attrs, IR_CONV_GROUPS), C = d->shape[1], O = wt->shape[0], CG = wt->shape[1];
    const int64_t *n = d->shape + 2, *k = wt->shape + 2, *os = o->shape + 2;
    int64_t sp = n[0] * n[1] * n[2], ksp = k[0] * k[1] * k[2], osp = os[0] * os[1] * os[2];
    int64_t planes = d->shape[0] * O;
    float *t_in, *t_w, *t_out;
    const float *x = f32_in(d, &t_in), *wv = f32_in(wt, &t_w);
    float *y = f32_out(o, &t_out);
#pragma omp parallel for if (planes * osp * CG * ksp > PAR_MIN)
    for (int64_t pl = 0; pl < planes; pl++) {
        int64_t b = pl / O, oc = pl % O, c0 = oc / (O / g) * CG;
        for (int64_t f = 0; f < osp; f++) {
            int64_t op[3] = {f / (os[1] * os[2]), f / os[2] % os[1], f % os[2]}, k0[3], k1[3], pad;
            for (int i = 0; i < 3; i++)
                window_axis(&w, i, op[i], n[i], k[i], &k0[i], &k1[i], &pad);
            int64_t base[3];
            for (int i = 0; i < 3; i++)
                base[i] = op[i] * w.stride[i] - w.pad[i];
            double acc = 0;
            for (int64_t ic = 0; ic < CG; ic++) {
                const float *xc = x + (b * C + c0 + ic) * sp, *wc = wv + (oc * CG + ic) * ksp;
                for (int64_t a = k0[0]; a < k1[0]; a++)
                    for (int64_t e = k0[1]; e < k1[1]; e++) {
                        const float *xr = xc + ((base[0] + a * w.dil[0]) * n[1] + base[1] + e * w.dil[1]) * n[2] + base[2];
                        const float *wr = wc + (a * k[1] + e) * k[2];
                        for (int64_t q = k0[2]; q < k1[2]; q++)
                            acc += (double)xr[q * w.dil[2]] * wr[q];
                    }
            }
            y[pl * osp + f] = (float)acc;
        }
    }
    free(t_in);
    free(t_w);
    f32_out_done(o, t_out);
    return true;
}

/* As pool2d: taps in the padding are skipped by max and by avg, whose
 * divisor counts the taps inside the padded data with count_include_pad. */
bool ir_ref_pool3d(const ir_ref_call *c)
{
    const ir_tensor *d = c->in[0];
    ir_tensor *o = c->out[0];
    bool is_max = c->op->id == IR_OP_MAX_POOL3D;
    bool include_pad = !is_max && ir_attr_bool(c->attrs, IR_POOL_COUNT_INCLUDE_PAD);
    ir_window3d w;
    ir_window3d_params(c->attrs, true, &w);
    const int64_t *n = d->shape + 2, *os = o->shape + 2;
    int64_t sp = n[0] * n[1] * n[2], osp = os[0] * os[1] * os[2], planes = d->shape[0] * d->shape[1];
    float *t_in, *t_out;
    const float *x = f32_in(d, &t_in);
    float *y = f32_out(o, &t_out);
#pragma omp parallel for if (planes * osp * w.k[0] * w.k[1] * w.k[2] > PAR_MIN)
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t f = 0; f < osp; f++) {
            int64_t op[3] = {f / (os[1] * os[2]), f / os[2] % os[1], f % os[2]}, k0[3], k1[3], padded[3], base[3];
            for (int i = 0; i < 3; i++) {
                window_axis(&w, i, op[i], n[i], w.k[i], &k0[i], &k1[i], &padded[i]);
                base[i] = op[i] * w.stride[i] - w.pad[i];
            }
            double acc = is_max ? -FLT_MAX : 0;
            const float *xp = x + pl * sp;
            for (int64_t a = k0[0]; a < k1[0]; a++)
                for (int64_t e = k0[1]; e < k1[1]; e++)
                    for (int64_t q = k0[2]; q < k1[2]; q++) {
                        double v = xp[((base[0] + a * w.dil[0]) * n[1] + base[1] + e * w.dil[1]) * n[2] + base[2] +
                                      q * w.dil[2]];
                        acc = is_max ? (v > acc ? v : acc) : acc + v;
                    }
            int64_t count = include_pad ? padded[0] * padded[1] * padded[2]
                                        : (k1[0] - k0[0]) * (k1[1] - k0[1]) * (k1[2] - k0[2]);
            y[pl * osp + f] = (float)(is_max ? acc : count ? acc / (double)count : 0);
        }
    free(t_in);
    f32_out_done(o, t_out);
    return true;
}
