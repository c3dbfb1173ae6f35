/* bench_baselines.c — the reference implementations bench_kernels compares
 * relay-tune's kernels with, on the same shapes in the same process:
 *
 * - oneDNN (Debian's libdnnl 2.6, OpenMP): convolution forward (direct,
 *   fp32) with format_tag any for data, weights and output, so that it picks
 *   its blocked layouts; the weights (constants of the model) and the data
 *   are reordered once, before timing, and the output stays in its layout,
 *   as between two layers of a network run by oneDNN. Bias, the residual add
 *   (a sum post-op), ReLU and GELU are fused where the task fuses them.
 *   Dense is an inner product (weights in a layout of its choice, packed
 *   once); batch_matmul a matmul on the plain layouts (both operands are
 *   activations, nothing to pack ahead of time).
 * - OpenBLAS cblas_sgemm: dense directly, batch_matmul as one sgemm per
 *   batch, conv2d as im2col (OpenMP, timed) + one sgemm per group; nothing
 *   fused (a reference point for the GEMM itself).
 *
 * Inputs are seeded random values; the answers are not compared (the shapes
 * and operations are the task's; correctness of our kernels is the tuner's
 * check against the reference interpreter). */
#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/bench_kernels.h"

/* OpenBLAS's own, not in Debian's cblas.h of every version */
void openblas_set_num_threads(int n);
int openblas_get_num_threads(void);

void bk_shape_name(const bk_shape *s, char *out, size_t n)
{
    int k;
    if (s->kind == BK_CONV)
        k = snprintf(out, n, "conv %lldx%lldx%lldx%lld w%lldx%lldx%lldx%lld s%lld p%lld", (long long)s->n,
                     (long long)s->c, (long long)s->h, (long long)s->w, (long long)s->o,
                     (long long)(s->c / s->groups), (long long)s->kh, (long long)s->kw, (long long)s->stride[0],
                     (long long)s->pad[0]);
    else if (s->kind == BK_DENSE)
        k = snprintf(out, n, "dense %lldx%lld w%lldx%lld", (long long)s->m, (long long)s->k, (long long)s->nn,
                     (long long)s->k);
    else
        k = snprintf(out, n, "bmm %lldx%lldx%lld %s%lldx%lld", (long long)s->batch, (long long)s->m,
                     (long long)s->k, s->transpose_b ? "bT" : "b", (long long)(s->transpose_b ? s->nn : s->k),
                     (long long)(s->transpose_b ? s->k : s->nn));
    const char *parts[] = {s->bias ? "+bias" : "", s->residual ? "+res" : "", s->relu ? "+relu" : "",
                           s->gelu ? "+gelu" : ""};
    for (size_t i = 0; i < 4 && k >= 0 && (size_t)k < n; i++)
        k += snprintf(out + k, n - (size_t)k, "%s", parts[i]);
}

void bk_set_threads(int threads, char *out, size_t n)
{
    omp_set_num_threads(threads);
    openblas_set_num_threads(threads);
    const dnnl_version_t *v = dnnl_version();
    snprintf(out, n, "OpenMP (our kernels, oneDNN %d.%d.%d) %d threads, OpenBLAS %d threads", v->major, v->minor,
             v->patch, omp_get_max_threads(), openblas_get_num_threads());
}

/* ---- oneDNN ----------------------------------------------------------------- */

/* One primitive ready to run, with its arguments. */
typedef struct dnn_run {
    dnnl_engine_t eng;
    dnnl_stream_t strm;
    dnnl_primitive_t prim;
    dnnl_exec_arg_t args[5];
    int nargs;
    dnnl_memory_t mem[5];
} dnn_run;

static void dnn_exec(void *p)
{
    dnn_run *r = p;
    if (dnnl_primitive_execute(r->prim, r->strm, r->nargs, r->args) != dnnl_success ||
        dnnl_stream_wait(r->strm) != dnnl_success) {
        fprintf(stderr, "bench_kernels: oneDNN failed while timing\n");
        exit(1);
    }
}

/* Memory of descriptor md filled with random values: written in the plain
 * layout `plain` and reordered into md's layout when they differ. */
static bool dnn_memory(dnn_run *r, const dnnl_memory_desc_t *md, const dnnl_memory_desc_t *plain, unsigned seed,
                       dnnl_memory_t *out)
{
    if (dnnl_memory_create(out, md, r->eng, DNNL_MEMORY_ALLOCATE) != dnnl_success)
        return false;
    dnnl_memory_t src;
    if (dnnl_memory_create(&src, plain, r->eng, DNNL_MEMORY_ALLOCATE) != dnnl_success)
        return false;
    void *h;
    dnnl_memory_get_data_handle(src, &h);
    bench_fill(h, dnnl_memory_desc_get_size(plain) / sizeof(float), &seed);
    dnnl_primitive_desc_t rpd;
    dnnl_primitive_t rp;
    bool good = dnnl_reorder_primitive_desc_create(&rpd, plain, r->eng, md, r->eng, NULL) == dnnl_success &&
                dnnl_primitive_create(&rp, rpd) == dnnl_success;
    if (good) {
        dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, *out}};
        good = dnnl_primitive_execute(rp, r->strm, 2, a) == dnnl_success && dnnl_stream_wait(r->strm) == dnnl_success;
        dnnl_primitive_destroy(rp);
        dnnl_primitive_desc_destroy(rpd);
    }
    dnnl_memory_destroy(src);
    return good;
}

/* The post-ops of the shape: sum (residual), then ReLU or GELU. */
static dnnl_primitive_attr_t dnn_attr(const bk_shape *s)
{
    dnnl_primitive_attr_t attr;
    dnnl_post_ops_t po;
    dnnl_primitive_attr_create(&attr);
    dnnl_post_ops_create(&po);
    if (s->residual)
        dnnl_post_ops_append_sum(po, 1.0f);
    if (s->relu)
        dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f);
    if (s->gelu)
        dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_gelu_erf, 0.0f, 0.0f);
    dnnl_primitive_attr_set_post_ops(attr, po);
    dnnl_post_ops_destroy(po);
    return attr;
}

/* The operation descriptor of the shape, and the plain layouts of its
 * source, weights, bias and destination. */
typedef struct dnn_desc {
    union { dnnl_convolution_desc_t conv; dnnl_inner_product_desc_t ip; dnnl_matmul_desc_t mm; } op;
    dnnl_memory_desc_t plain[4];    /* src, weights, bias, dst */
} dnn_desc;

static bool dnn_describe(const bk_shape *s, dnn_desc *d)
{
    dnnl_memory_desc_t any[4];
    dnnl_format_tag_t ftag = dnnl_format_tag_any;
    if (s->kind == BK_CONV) {
        dnnl_dims_t src = {s->n, s->c, s->h, s->w}, dst = {s->n, s->o, s->oh, s->ow}, bias = {s->o};
        dnnl_dims_t wg = {s->groups, s->o / s->groups, s->c / s->groups, s->kh, s->kw};
        dnnl_dims_t st = {s->stride[0], s->stride[1]}, dil = {s->dilation[0] - 1, s->dilation[1] - 1};
        dnnl_dims_t pl = {s->pad[0], s->pad[1]}, pr = {s->pad[2], s->pad[3]};
        bool g = s->groups > 1;
        const int64_t *w = g ? wg : wg + 1;
        dnnl_memory_desc_init_by_tag(&d->plain[0], 4, src, dnnl_f32, dnnl_nchw);
        dnnl_memory_desc_init_by_tag(&d->plain[1], g ? 5 : 4, w, dnnl_f32, g ? dnnl_goihw : dnnl_oihw);
        dnnl_memory_desc_init_by_tag(&d->plain[2], 1, bias, dnnl_f32, dnnl_x);
        dnnl_memory_desc_init_by_tag(&d->plain[3], 4, dst, dnnl_f32, dnnl_nchw);
        dnnl_memory_desc_init_by_tag(&any[0], 4, src, dnnl_f32, ftag);
        dnnl_memory_desc_init_by_tag(&any[1], g ? 5 : 4, w, dnnl_f32, ftag);
        dnnl_memory_desc_init_by_tag(&any[3], 4, dst, dnnl_f32, ftag);
        return dnnl_dilated_convolution_forward_desc_init(&d->op.conv, dnnl_forward_inference,
                                                          dnnl_convolution_direct, &any[0], &any[1],
                                                          s->bias ? &d->plain[2] : NULL, &any[3], st, dil, pl,
                                                          pr) == dnnl_success;
    }
    if (s->kind == BK_DENSE) {
        dnnl_dims_t src = {s->m, s->k}, w = {s->nn, s->k}, bias = {s->nn}, dst = {s->m, s->nn};
        dnnl_memory_desc_init_by_tag(&d->plain[0], 2, src, dnnl_f32, dnnl_nc);
        dnnl_memory_desc_init_by_tag(&d->plain[1], 2, w, dnnl_f32, dnnl_oi);
        dnnl_memory_desc_init_by_tag(&d->plain[2], 1, bias, dnnl_f32, dnnl_x);
        dnnl_memory_desc_init_by_tag(&d->plain[3], 2, dst, dnnl_f32, dnnl_nc);
        dnnl_memory_desc_init_by_tag(&any[0], 2, src, dnnl_f32, ftag);
        dnnl_memory_desc_init_by_tag(&any[1], 2, w, dnnl_f32, ftag);
        dnnl_memory_desc_init_by_tag(&any[3], 2, dst, dnnl_f32, ftag);
        return dnnl_inner_product_forward_desc_init(&d->op.ip, dnnl_forward_inference, &any[0], &any[1],
                                                    s->bias ? &d->plain[2] : NULL, &any[3]) == dnnl_success;
    }
    /* batch_matmul: b is (batch, n, k) when transposed, read as (batch, k, n) by strides */
    dnnl_dims_t a = {s->batch, s->m, s->k}, b = {s->batch, s->k, s->nn}, bias = {1, 1, s->nn},
                c = {s->batch, s->m, s->nn};
    dnnl_dims_t bt = {s->nn * s->k, 1, s->k};
    dnnl_memory_desc_init_by_tag(&d->plain[0], 3, a, dnnl_f32, dnnl_abc);
    if (s->transpose_b)
        dnnl_memory_desc_init_by_strides(&d->plain[1], 3, b, dnnl_f32, bt);
    else
        dnnl_memory_desc_init_by_tag(&d->plain[1], 3, b, dnnl_f32, dnnl_abc);
    dnnl_memory_desc_init_by_tag(&d->plain[2], 3, bias, dnnl_f32, dnnl_abc);
    dnnl_memory_desc_init_by_tag(&d->plain[3], 3, c, dnnl_f32, dnnl_abc);
    return dnnl_matmul_desc_init(&d->op.mm, &d->plain[0], &d->plain[1], s->bias ? &d->plain[2] : NULL,
                                 &d->plain[3]) == dnnl_success;
}

static void dnn_free(dnn_run *r)
{
    for (int i = 0; i < r->nargs; i++)
        dnnl_memory_destroy(r->mem[i]);
    if (r->prim)
        dnnl_primitive_destroy(r->prim);
    if (r->strm)
        dnnl_stream_destroy(r->strm);
    if (r->eng)
        dnnl_engine_destroy(r->eng);
}

bool bk_onednn_time(const bk_shape *s, const bench_opts *o, bench_stats *out, char *why, size_t n)
{
    dnn_run r = {0};
    dnn_desc d;
    dnnl_primitive_desc_t pd = NULL;
    bool good = dnnl_engine_create(&r.eng, dnnl_cpu, 0) == dnnl_success &&
                dnnl_stream_create(&r.strm, r.eng, dnnl_stream_default_flags) == dnnl_success;
    if (good && !dnn_describe(s, &d))
        good = !snprintf(why, n, "oneDNN refused the operation descriptor");
    if (good) {
        dnnl_primitive_attr_t attr = dnn_attr(s);
        good = dnnl_primitive_desc_create(&pd, &d.op, attr, r.eng, NULL) == dnnl_success &&
               dnnl_primitive_create(&r.prim, pd) == dnnl_success;
        dnnl_primitive_attr_destroy(attr);
        if (!good)
            snprintf(why, n, "oneDNN has no implementation for this shape and post-ops");
    }
    static const struct { dnnl_query_t q; int arg; int plain; } roles[] = {
        {dnnl_query_src_md, DNNL_ARG_SRC, 0}, {dnnl_query_weights_md, DNNL_ARG_WEIGHTS, 1},
        {dnnl_query_dst_md, DNNL_ARG_DST, 3}, {dnnl_query_weights_md, DNNL_ARG_BIAS, 2}};
    for (int i = 0; good && i < (s->bias ? 4 : 3); i++) {
        const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, roles[i].q, i == 3);
        good = md && dnn_memory(&r, md, &d.plain[roles[i].plain], 11u + (unsigned)i, &r.mem[r.nargs]);
        if (good)
            r.args[r.nargs] = (dnnl_exec_arg_t){roles[i].arg, r.mem[r.nargs]}, r.nargs++;
        else
            snprintf(why, n, "oneDNN could not set up its memory");
    }
    if (good)
        *out = bench_time(dnn_exec, &r, o);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    dnn_free(&r);
    return good;
}

/* ---- OpenBLAS ------------------------------------------------------------------ */

typedef struct blas_run {
    const bk_shape *s;
    float *a, *b, *c, *col;
} blas_run;

/* col[(ci, ky, kx), (oy, ox)] of one group's input channels */
static void im2col(const bk_shape *s, const float *x, float *col)
{
    int64_t cg = s->c / s->groups, ohw = s->oh * s->ow;
#pragma omp parallel for
    for (int64_t r = 0; r < cg * s->kh * s->kw; r++) {
        int64_t ci = r / (s->kh * s->kw), ky = r / s->kw % s->kh, kx = r % s->kw;
        float *dst = col + r * ohw;
        for (int64_t oy = 0; oy < s->oh; oy++) {
            int64_t iy = oy * s->stride[0] - s->pad[0] + ky * s->dilation[0];
            for (int64_t ox = 0; ox < s->ow; ox++) {
                int64_t ix = ox * s->stride[1] - s->pad[1] + kx * s->dilation[1];
                bool in = iy >= 0 && iy < s->h && ix >= 0 && ix < s->w;
                dst[oy * s->ow + ox] = in ? x[(ci * s->h + iy) * s->w + ix] : 0.0f;
            }
        }
    }
}

static bool is_pointwise(const bk_shape *s)
{
    return s->kh == 1 && s->kw == 1 && s->stride[0] == 1 && s->stride[1] == 1 && !s->pad[0] && !s->pad[1] &&
           !s->pad[2] && !s->pad[3];
}

static void blas_exec(void *p)
{
    blas_run *r = p;
    const bk_shape *s = r->s;
    if (s->kind == BK_DENSE) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)s->m, (int)s->nn, (int)s->k, 1.0f, r->a,
                    (int)s->k, r->b, (int)s->k, 0.0f, r->c, (int)s->nn);
    } else if (s->kind == BK_BMM) {
        for (int64_t i = 0; i < s->batch; i++)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, s->transpose_b ? CblasTrans : CblasNoTrans, (int)s->m,
                        (int)s->nn, (int)s->k, 1.0f, r->a + i * s->m * s->k, (int)s->k, r->b + i * s->nn * s->k,
                        (int)(s->transpose_b ? s->k : s->nn), 0.0f, r->c + i * s->m * s->nn, (int)s->nn);
    } else {
        /* per group: w (o/g, c/g*kh*kw) times col (c/g*kh*kw, oh*ow) */
        int64_t og = s->o / s->groups, kk = s->c / s->groups * s->kh * s->kw, ohw = s->oh * s->ow;
        for (int64_t g = 0; g < s->groups; g++) {
            const float *x = r->a + g * (s->c / s->groups) * s->h * s->w;
            const float *col = x;
            if (!is_pointwise(s)) {
                im2col(s, x, r->col);
                col = r->col;
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)og, (int)ohw, (int)kk, 1.0f,
                        r->b + g * og * kk, (int)kk, col, (int)ohw, 0.0f, r->c + g * og * ohw, (int)ohw);
        }
    }
}

bool bk_openblas_time(const bk_shape *s, const bench_opts *o, bench_stats *out, char *why, size_t n)
{
    size_t na, nb, nc, ncol = 1;
    if (s->kind == BK_CONV) {
        na = (size_t)(s->n * s->c * s->h * s->w);
        nb = (size_t)(s->o * (s->c / s->groups) * s->kh * s->kw);
        nc = (size_t)(s->n * s->o * s->oh * s->ow);
        ncol = (size_t)((s->c / s->groups) * s->kh * s->kw * s->oh * s->ow);
        if (s->n != 1) {
            snprintf(why, n, "batch %lld: the im2col baseline handles batch 1", (long long)s->n);
            return false;
        }
    } else {
        int64_t batch = s->kind == BK_BMM ? s->batch : 1;
        na = (size_t)(batch * s->m * s->k);
        nb = (size_t)(batch * s->nn * s->k);
        nc = (size_t)(batch * s->m * s->nn);
    }
    blas_run r = {s, bench_buffer(na), bench_buffer(nb), bench_buffer(nc), bench_buffer(ncol)};
    unsigned seed = 5;
    bench_fill(r.a, na, &seed);
    bench_fill(r.b, nb, &seed);
    *out = bench_time(blas_exec, &r, o);
    free(r.a);
    free(r.b);
    free(r.c);
    free(r.col);
    return true;
}
