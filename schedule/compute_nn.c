/* compute_nn.c — compute definitions of the nn.* ops: convolution (with its
 * padding as a separate injective stage, so that a schedule may inline it as
 * guarded loads or materialize it), dense and batch_matmul (sum over k),
 * pooling (max, and average with the divisor counting the window's valid
 * taps), softmax and layer_norm as chains of row reductions, batch_norm and
 * dropout for completeness (passes remove them before codegen), bias_add and
 * pad. Axis names (n, oc, oh, ow; ic, kh, kw) are the loop names that
 * schedules and traces refer to. */
#include <string.h>

#include "schedule/schedule.h"

/* A two-value window attribute (one value stands for both). */
static void pair(sch_cctx *cx, const char *name, int64_t out[2])
{
    int64_t v[2] = {1, 1};
    int n = sch_attr_ints(cx, name, v, 2);
    out[0] = v[0];
    out[1] = n == 2 ? v[1] : v[0];
}

/* padding: top, left, bottom, right (TVM's 1, 2 and 4 value forms). */
static void padding4(sch_cctx *cx, const char *name, int64_t out[4])
{
    int64_t v[4] = {0, 0, 0, 0};
    int n = sch_attr_ints(cx, name, v, 4);
    for (int i = 0; i < 4; i++)
        out[i] = n == 1 ? v[0] : n == 2 ? v[i % 2] : n == 4 ? v[i] : 0;
}

#define VAR(v) sch_varref(a, v)
#define I(v) sch_int(a, v)

/* lo <= x < hi, with NULL for the checks that are always true. */
static const sch_expr *in_range(su_arena *a, const sch_expr *x, int64_t lo, int64_t hi, bool check_lo,
                                bool check_hi)
{
    const sch_expr *c = NULL;
    if (check_lo)
        c = sch_bin(a, SCH_GE, x, I(lo));
    if (check_hi)
        c = sch_and(a, c, sch_bin(a, SCH_LT, x, I(hi)));
    return c;
}

/* Pooling in another order of NCHW's letters (layout, out_layout). */
static bool in_other_layout(sch_cctx *cx)
{
    int p[4];
    return sch_layout_block(cx, "layout", "out_layout") || sch_layout_permuted(cx, "layout", "layout", "NCHW", p) ||
           sch_layout_permuted(cx, "out_layout", "layout", "NCHW", p);
}

static bool pooled_in_layouts(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout,
                              sch_compute_fn fn)
{
    static const int ident[4] = {0, 1, 2, 3};
    int64_t b = sch_layout_block(cx, "layout", "out_layout");
    if (b)  /* NCHW[x]c: compute_nchwc.c */
        return sch_compute_blocked(cx, in, nin, out, nout, b, fn);
    int dp[4], op[4];
    bool pd = sch_layout_permuted(cx, "layout", "layout", "NCHW", dp);
    bool po = sch_layout_permuted(cx, "out_layout", "layout", "NCHW", op);
    const int *in_pos[1] = {pd ? dp : NULL};
    return sch_compute_in_layouts(cx, in, nin, out, nout, in_pos, po ? op : ident, fn);
}

/* ---- nn.conv2d ------------------------------------------------------------- */

/* t's body: the sum over its reduction axes of x[xi] * w[wi], both read
 * as t's type (a conv's product, whatever form it takes). */
static void conv_product(sch_cctx *cx, sch_tensor *t, sch_tensor *x, int nx, const sch_expr *const *xi,
                         sch_tensor *w, const sch_expr *const *wi)
{
    su_arena *a = cx->a;
    t->body = sch_mul(a, sch_cast(a, t->dtype, sch_read(a, x, nx, xi)), sch_cast(a, t->dtype, sch_read(a, w, 4, wi)));
    t->reduce = SCH_RED_SUM;
}

/* The view that gives a conv of another form back its NCHW axes (the ops
 * after it inline it); the caller sets its body. */
static sch_tensor *nchw_view(sch_cctx *cx, const ir_type *ot)
{
    static const char *const vnames[] = {"n", "oc", "oh", "ow"};
    cx->tag = "view";
    return sch_stage_new(cx, ot->dtype, 4, ot->shape, vnames);
}

/* A 1x1 unpadded conv is a matrix product over the pixels: the reducing
 * stage is out[n, oc, p] = sum_ic w[oc, ic] * x[n, ic, p] on the fused
 * pixel axis p = oh * OW + ow (the conv2d_1x1 template tiles it like a
 * GEMM, so that a 7x7 image is 49 columns, not 7 rows of 7), and an
 * injective view gives it back its four axes for the ops after it (inlined
 * into them). A tile of p is then a contiguous range that the view reads
 * at p itself, so the tile's region stays a range (bound.c). At a stride
 * above 1 the product reads x through a `stride` stage, the input's
 * subsampled pixels [n, ic, oh, ow] = x[n, ic, oh * sh, ow * sw] (1/(sh *
 * sw) of it), which the template copies once into a contiguous buffer, so
 * that a tile of pixels is a run of it, or reads in place (its knob
 * copy_input). */
static sch_tensor *subsampled(sch_cctx *cx, sch_tensor *data, const int64_t st[2], const ir_type *ot)
{
    if (st[0] == 1 && st[1] == 1)
        return data;
    su_arena *a = cx->a;
    int64_t shape[4] = {data->shape[0], data->shape[1], ot->shape[2], ot->shape[3]};
    static const char *const names[] = {"n", "c", "h", "w"};
    cx->tag = "stride";
    sch_tensor *s = sch_stage_new(cx, data->dtype, 4, shape, names);
    const sch_expr *ix[4] = {VAR(s->axes[0]), VAR(s->axes[1]), sch_mul(a, VAR(s->axes[2]), I(st[0])),
                             sch_mul(a, VAR(s->axes[3]), I(st[1]))};
    s->body = sch_read(a, data, 4, ix);
    return s;
}

static bool conv2d_pointwise(sch_cctx *cx, sch_tensor *data, sch_tensor *w, const int64_t st[2], sch_tensor **out,
                             int *nout)
{
    su_arena *a = cx->a;
    const ir_type *ot = sch_out_type(cx, 0);
    data = subsampled(cx, data, st, ot);
    int64_t OW = ot->shape[3], shape[3] = {ot->shape[0], ot->shape[1], ot->shape[2] * ot->shape[3]};
    static const char *const names[] = {"n", "oc", "p"};
    sch_tensor *t = sch_stage_new(cx, ot->dtype, 3, shape, names);
    sch_var *ic = sch_stage_raxis(cx, t, "ic", w->shape[1]);
    const sch_expr *p = VAR(t->axes[2]);
    const sch_expr *dix[4] = {VAR(t->axes[0]), VAR(ic), sch_div(a, p, I(OW)), sch_mod(a, p, I(OW))};
    const sch_expr *wix[4] = {VAR(t->axes[1]), VAR(ic), I(0), I(0)};
    conv_product(cx, t, data, 4, dix, w, wix);
    sch_tensor *v = nchw_view(cx, ot);
    const sch_expr *pix = sch_add(a, sch_mul(a, VAR(v->axes[2]), I(OW)), VAR(v->axes[3]));
    const sch_expr *vix[3] = {VAR(v->axes[0]), VAR(v->axes[1]), pix};
    v->body = sch_read(a, t, 3, vix);
    out[0] = v;
    *nout = 1;
    return true;
}

/* A depthwise conv as a 1-D conv over each channel's padded plane laid out
 * flat (docs/codegen.md, "the flat depthwise form"). With the input padded
 * to rows of Wp = W + left + right, output pixel (oh, ow) of a stride-1
 * conv is flat position p = oh * Wp + ow of the padded grid and tap
 * (kh, kw) reads position p + kh * Wp + kw: a constant offset per tap, so a
 * run of p is whole vectors whatever the width (a row of 28, 14 or 7
 * columns is a masked vector). At stride (sh, sw) the padded plane is
 * de-interleaved into sh * sw phases, phase (ph, pw) holding the padded
 * pixels (hq * sh + ph, wq * sw + pw) in rows of Wq = ceil(Wp / sw): tap
 * (kh, kw) of output (oh, ow) is then pixel (oh + kh / sh, ow + kw / sw) of
 * phase (kh % sh, kw % sw), so every tap reads unit-stride runs of one
 * phase at a constant offset (stride 1: one phase, the padded plane
 * itself). The Wq - OW positions at the end of each grid row are computed
 * and never read. Stages: the pad, with zero rows below the image so that
 * the last tiles' taps stay inside; at a stride its phases (n, c, phase,
 * hq, wq), a copy of the padded plane de-interleaved; the conv over
 * (n, c, r, q), p = r * 16 + q, its tiles of 16 positions rounded up to a
 * multiple of 4 so that a register tile may span 1, 2 or 4 of them; a view
 * back to NCHW that the epilogue inlines. 16 is the widest float32 vector
 * of the ISAs the templates plan for (AVX-512); narrower ones run a tile
 * as several vectors. */
#define DW_FLAT_LANES 16
#define DW_FLAT_TILES 4

/* k / s and k % s of a tap index, without the division at stride 1. */
static const sch_expr *tap_div(su_arena *a, const sch_expr *k, int64_t s)
{
    return s == 1 ? k : sch_div(a, k, I(s));
}

static const sch_expr *tap_mod(su_arena *a, const sch_expr *k, int64_t s)
{
    return s == 1 ? I(0) : sch_mod(a, k, I(s));
}

static bool conv2d_depthwise_flat(sch_cctx *cx, sch_tensor *data, sch_tensor *w, const int64_t st[2],
                                  const int64_t pad[4], sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    const ir_type *ot = sch_out_type(cx, 0);
    int64_t N = data->shape[0], C = data->shape[1], H = data->shape[2], W = data->shape[3];
    int64_t KH = w->shape[2], KW = w->shape[3], OH = ot->shape[2], OW = ot->shape[3], sh = st[0], sw = st[1];
    int64_t Wp = W + pad[1] + pad[3], Wq = (Wp + sw - 1) / sw;
    /* a row pitch of whole tiles (14x14 padded to 16) would make the view's
     * reads fold to q = ow, and the conv's region, computed at the channel
     * tile, shrink to OW of the 16 lanes (masked vectors): one more column */
    if (Wq % DW_FLAT_LANES == 0)
        Wq++;
    int64_t used = (OH - 1) * Wq + OW;
    int64_t blk = DW_FLAT_LANES * DW_FLAT_TILES, NT = (used + blk - 1) / blk * DW_FLAT_TILES;
    int64_t reach = NT * DW_FLAT_LANES + (KH - 1) / sh * Wq + (KW - 1) / sw, Hq = (reach + Wq - 1) / Wq;
    /* the padded plane, Hq * sh rows of Wq * sw (zero rows below) */
    static const char *const pnames[] = {"n", "c", "h", "w"};
    int64_t pshape[4] = {N, C, Hq * sh, Wq * sw};
    cx->tag = "pad";
    sch_tensor *pd = sch_stage_new(cx, data->dtype, 4, pshape, pnames);
    const sch_expr *h = sch_sub(a, VAR(pd->axes[2]), I(pad[0])), *x = sch_sub(a, VAR(pd->axes[3]), I(pad[1]));
    const sch_expr *ok = sch_and(a, in_range(a, h, 0, H, pad[0] > 0, true), in_range(a, x, 0, W, pad[1] > 0, true));
    const sch_expr *ix[4] = {VAR(pd->axes[0]), VAR(pd->axes[1]), h, x};
    pd->body = sch_select(a, ok, sch_read(a, data, 4, ix), sch_const(a, data->dtype, 0));
    /* at a stride, its phases (n, c, phase, hq, wq), read from the padded
     * plane without guards: a guarded load at a stride is a masked gather,
     * which gcc does not vectorize */
    sch_tensor *src = pd;
    if (sh * sw > 1) {
        static const char *const fnames[] = {"n", "c", "f", "h", "w"};
        int64_t fshape[5] = {N, C, sh * sw, Hq, Wq};
        cx->tag = "phase";
        src = sch_stage_new(cx, data->dtype, 5, fshape, fnames);
        const sch_expr *f = VAR(src->axes[2]);
        const sch_expr *fix[4] = {VAR(src->axes[0]), VAR(src->axes[1]),
                                  sch_add(a, sch_mul(a, VAR(src->axes[3]), I(sh)), tap_div(a, f, sw)),
                                  sch_add(a, sch_mul(a, VAR(src->axes[4]), I(sw)), tap_mod(a, f, sw))};
        src->body = sch_read(a, pd, 4, fix);
    }
    static const char *const names[] = {"n", "c", "r", "q"};
    int64_t shape[4] = {N, C, NT, DW_FLAT_LANES};
    sch_tensor *t = sch_stage_new(cx, ot->dtype, 4, shape, names);
    sch_var *kh = sch_stage_raxis(cx, t, "kh", KH);
    sch_var *kw = sch_stage_raxis(cx, t, "kw", KW);
    const sch_expr *p = sch_add(a, sch_mul(a, VAR(t->axes[2]), I(DW_FLAT_LANES)), VAR(t->axes[3]));
    const sch_expr *off = sch_add(a, sch_mul(a, tap_div(a, VAR(kh), sh), I(Wq)), tap_div(a, VAR(kw), sw));
    const sch_expr *tap = sch_add(a, p, off);
    const sch_expr *phase = sch_add(a, sch_mul(a, tap_mod(a, VAR(kh), sh), I(sw)), tap_mod(a, VAR(kw), sw));
    /* the phase's plane read flat: the row and column of tap, which
     * lowering's row-major address folds back into tap itself */
    const sch_expr *row = sch_div(a, tap, I(Wq)), *col = sch_mod(a, tap, I(Wq));
    const sch_expr *dix[5] = {VAR(t->axes[0]), VAR(t->axes[1]), phase, row, col};
    const sch_expr *wix[4] = {VAR(t->axes[1]), I(0), VAR(kh), VAR(kw)};
    if (src == pd) {
        dix[2] = row;
        dix[3] = col;
    }
    conv_product(cx, t, src, src == pd ? 4 : 5, dix, w, wix);
    sch_tensor *v = nchw_view(cx, ot);
    const sch_expr *vp = sch_add(a, sch_mul(a, VAR(v->axes[2]), I(Wq)), VAR(v->axes[3]));
    const sch_expr *vix[4] = {VAR(v->axes[0]), VAR(v->axes[1]), sch_div(a, vp, I(DW_FLAT_LANES)),
                              sch_mod(a, vp, I(DW_FLAT_LANES))};
    v->body = sch_read(a, t, 4, vix);
    out[0] = v;
    *nout = 1;
    return true;
}

bool sch_compute_conv2d(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    int dp[4], kp[4], op[4];
    bool pd = sch_layout_permuted(cx, "data_layout", "data_layout", "NCHW", dp);
    bool pk = sch_layout_permuted(cx, "kernel_layout", "kernel_layout", "OIHW", kp);
    bool po = sch_layout_permuted(cx, "out_layout", "data_layout", "NCHW", op);
    if (pd || pk || po) {
        static const int ident[4] = {0, 1, 2, 3};
        const int *in_pos[2] = {pd ? dp : NULL, pk ? kp : NULL};
        return sch_compute_in_layouts(cx, in, nin, out, nout, in_pos, po ? op : ident, sch_compute_conv2d);
    }
    su_arena *a = cx->a;
    sch_tensor *data = in[0], *w = in[1];
    int64_t st[2], dil[2], pad[4];
    pair(cx, "strides", st);
    pair(cx, "dilation", dil);
    padding4(cx, "padding", pad);
    int64_t groups = sch_attr_int(cx, "groups");
    const ir_type *ot = sch_out_type(cx, 0);
    int64_t C = data->shape[1], H = data->shape[2], W = data->shape[3];
    int64_t K = w->shape[0], CG = w->shape[1], KH = w->shape[2], KW = w->shape[3];
    /* (a 1x1 kernel's dilation moves no tap) */
    if (groups == 1 && KH == 1 && KW == 1 && !(pad[0] || pad[1] || pad[2] || pad[3]))
        return conv2d_pointwise(cx, data, w, st, out, nout);
    /* (a device that stages takes them direct: conv2d_cl.c tiles that form
     * on 2-D work-groups over channels and pixels and stages its patches) */
    if (groups == C && K == C && CG == 1 && dil[0] == 1 && dil[1] == 1 && !cx->s->dw_direct)
        return conv2d_depthwise_flat(cx, data, w, st, pad, out, nout);
    sch_tensor *src = data;
    if (pad[0] || pad[1] || pad[2] || pad[3]) {
        int64_t shape[4] = {data->shape[0], C, H + pad[0] + pad[2], W + pad[1] + pad[3]};
        static const char *const names[] = {"n", "c", "h", "w"};
        cx->tag = "pad";
        sch_tensor *p = sch_stage_new(cx, data->dtype, 4, shape, names);
        const sch_expr *h = sch_sub(a, VAR(p->axes[2]), I(pad[0])), *x = sch_sub(a, VAR(p->axes[3]), I(pad[1]));
        const sch_expr *ok = sch_and(a, in_range(a, h, 0, H, pad[0] > 0, pad[2] > 0),
                                     in_range(a, x, 0, W, pad[1] > 0, pad[3] > 0));
        const sch_expr *ix[4] = {VAR(p->axes[0]), VAR(p->axes[1]), h, x};
        p->body = sch_select(a, ok, sch_read(a, data, 4, ix), sch_const(a, data->dtype, 0));
        src = p;
    }
    static const char *const names[] = {"n", "oc", "oh", "ow"};
    sch_tensor *t = sch_stage_new(cx, ot->dtype, 4, ot->shape, names);
    sch_var *ic = sch_stage_raxis(cx, t, "ic", CG);
    sch_var *kh = sch_stage_raxis(cx, t, "kh", KH);
    sch_var *kw = sch_stage_raxis(cx, t, "kw", KW);
    const sch_expr *c = VAR(ic);
    if (groups > 1)
        c = sch_add(a, sch_mul(a, sch_div(a, VAR(t->axes[1]), I(K / groups)), I(CG)), c);
    const sch_expr *dix[4] = {
        VAR(t->axes[0]), c,
        sch_add(a, sch_mul(a, VAR(t->axes[2]), I(st[0])), sch_mul(a, VAR(kh), I(dil[0]))),
        sch_add(a, sch_mul(a, VAR(t->axes[3]), I(st[1])), sch_mul(a, VAR(kw), I(dil[1]))),
    };
    const sch_expr *wix[4] = {VAR(t->axes[1]), VAR(ic), VAR(kh), VAR(kw)};
    conv_product(cx, t, src, 4, dix, w, wix);
    out[0] = t;
    *nout = 1;
    return true;
}

/* ---- nn.dense, nn.batch_matmul -------------------------------------------- */

bool sch_compute_dense(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *d = in[0], *w = in[1];
    const ir_type *ot = sch_out_type(cx, 0);
    const char *names[IR_MAX_DIMS] = {0};
    if (ot->ndim == 2) {
        names[0] = "i";
        names[1] = "j";
    }
    sch_tensor *t = sch_stage_new(cx, ot->dtype, ot->ndim, ot->shape, names);
    sch_var *k = sch_stage_raxis(cx, t, "k", w->shape[1]);
    const sch_expr *dix[IR_MAX_DIMS];
    for (int i = 0; i < d->ndim - 1; i++)
        dix[i] = VAR(t->axes[i]);
    dix[d->ndim - 1] = VAR(k);
    const sch_expr *wix[2] = {VAR(t->axes[t->ndim - 1]), VAR(k)};
    t->body = sch_mul(a, sch_cast(a, ot->dtype, sch_read(a, d, d->ndim, dix)), sch_cast(a, ot->dtype, sch_read(a, w, 2, wix)));
    t->reduce = SCH_RED_SUM;
    out[0] = t;
    *nout = 1;
    return true;
}

bool sch_compute_batch_matmul(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *x = in[0], *y = in[1];
    bool ta = sch_attr_bool(cx, "transpose_a"), tb = sch_attr_bool(cx, "transpose_b");
    const ir_type *ot = sch_out_type(cx, 0);
    static const char *const names[] = {"b", "i", "j"};
    sch_tensor *t = sch_stage_new(cx, ot->dtype, 3, ot->shape, names);
    sch_var *k = sch_stage_raxis(cx, t, "k", x->shape[ta ? 1 : 2]);
    const sch_expr *bx = x->shape[0] == 1 ? I(0) : VAR(t->axes[0]);
    const sch_expr *by = y->shape[0] == 1 ? I(0) : VAR(t->axes[0]);
    const sch_expr *xi[3] = {bx, ta ? VAR(k) : VAR(t->axes[1]), ta ? VAR(t->axes[1]) : VAR(k)};
    const sch_expr *yi[3] = {by, tb ? VAR(t->axes[2]) : VAR(k), tb ? VAR(k) : VAR(t->axes[2])};
    t->body = sch_mul(a, sch_cast(a, ot->dtype, sch_read(a, x, 3, xi)), sch_cast(a, ot->dtype, sch_read(a, y, 3, yi)));
    t->reduce = SCH_RED_SUM;
    out[0] = t;
    *nout = 1;
    return true;
}

/* ---- pooling ------------------------------------------------------------- */

/* Number of taps k in [0, n) of a window starting at `start` (stride of taps
 * d) that land in [lo, hi): max(0, min(n-1, floor((hi-1-start)/d)) -
 * max(0, ceil((lo-start)/d)) + 1). */
static const sch_expr *taps(su_arena *a, const sch_expr *start, int64_t n, int64_t d, int64_t lo, int64_t hi)
{
    const sch_expr *last = sch_min(a, I(n - 1), sch_div(a, sch_sub(a, I(hi - 1), start), I(d)));
    const sch_expr *first = sch_max(a, I(0), sch_div(a, sch_add(a, sch_sub(a, I(lo), start), I(d - 1)), I(d)));
    return sch_max(a, I(0), sch_add(a, sch_sub(a, last, first), I(1)));
}

/* Max pooling's input d padded with -inf, a stage of its own computed whole
 * (not injective, so never inlined) over every row and column the windows
 * touch; the window then reads it without guards. For float16: the guarded
 * loads keep gcc from vectorizing the pooling loop, and unvectorized, each
 * tap would convert its float16 input again (k x k times per element); the
 * padded copy converts each input once, into floats, in vector loops (the
 * float16 resnet's 3x3/2 max pool: 25 us instead of 680 us measured alone).
 * For float32 where a window reaches outside the data (padding, or a
 * ceil_mode window past the end): the guarded taps are masked strided
 * loads; after the copy, plain strided ones (resnet18's 3x3/2 max pool
 * over 64x112x112 on AVX-512, 1 thread: 1.01 -> 0.30 ms, the copy
 * included; 2 threads 0.51-0.88 -> 0.15-0.18 ms). A pool whose windows stay
 * inside (squeezenet's) has no guards to lose and reads the data itself. */
static sch_tensor *pool_padded(sch_cctx *cx, sch_tensor *d, const int64_t k[2], const int64_t st[2],
                               const int64_t dil[2], const int64_t pad[4])
{
    su_arena *a = cx->a;
    const ir_type *ot = sch_out_type(cx, 0);
    int64_t H = d->shape[2], W = d->shape[3];
    int64_t shape[4] = {d->shape[0], d->shape[1], (ot->shape[2] - 1) * st[0] + (k[0] - 1) * dil[0] + 1,
                        (ot->shape[3] - 1) * st[1] + (k[1] - 1) * dil[1] + 1};
    static const char *const names[] = {"n", "c", "h", "w"};
    cx->tag = "pad";
    sch_tensor *p = sch_stage_new(cx, d->dtype, 4, shape, names);
    p->injective = false;
    const sch_expr *h = sch_sub(a, VAR(p->axes[2]), I(pad[0])), *w = sch_sub(a, VAR(p->axes[3]), I(pad[1]));
    const sch_expr *ok = sch_and(a, in_range(a, h, 0, H, pad[0] > 0, shape[2] - pad[0] > H),
                                 in_range(a, w, 0, W, pad[1] > 0, shape[3] - pad[1] > W));
    const sch_expr *ix[4] = {VAR(p->axes[0]), VAR(p->axes[1]), h, w};
    const sch_expr *v = sch_read(a, d, 4, ix);
    p->body = ok ? sch_select(a, ok, v, sch_lowest(a, d->dtype)) : v;
    return p;
}

bool sch_compute_pool2d(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    if (!cx->canonical && in_other_layout(cx))
        return pooled_in_layouts(cx, in, nin, out, nout, sch_compute_pool2d);
    su_arena *a = cx->a;
    sch_tensor *d = in[0];
    bool is_max = ir_call_op(cx->call)->id == IR_OP_MAX_POOL2D;
    int64_t k[2], st[2], dil[2], pad[4];
    pair(cx, "pool_size", k);
    pair(cx, "strides", st);
    pair(cx, "dilation", dil);
    padding4(cx, "padding", pad);
    int64_t H = d->shape[2], W = d->shape[3];
    static const char *const names[] = {"n", "c", "oh", "ow"};
    const char *tag = cx->tag;
    const ir_type *ot = sch_out_type(cx, 0);
    bool outside = pad[0] || pad[1] || (ot->shape[2] - 1) * st[0] + (k[0] - 1) * dil[0] + 1 > H ||
                   (ot->shape[3] - 1) * st[1] + (k[1] - 1) * dil[1] + 1 > W;
    sch_tensor *padded = is_max && (d->dtype == IR_FLOAT16 || outside) ? pool_padded(cx, d, k, st, dil, pad) : NULL;
    cx->tag = is_max ? tag : "poolsum";
    sch_tensor *t = sch_stage_like(cx, 0, names);
    sch_var *kh = sch_stage_raxis(cx, t, "kh", k[0]), *kw = sch_stage_raxis(cx, t, "kw", k[1]);
    const sch_expr *h0 = sch_sub(a, sch_mul(a, VAR(t->axes[2]), I(st[0])), I(pad[0]));
    const sch_expr *w0 = sch_sub(a, sch_mul(a, VAR(t->axes[3]), I(st[1])), I(pad[1]));
    const sch_expr *h = sch_add(a, h0, sch_mul(a, VAR(kh), I(dil[0])));
    const sch_expr *w = sch_add(a, w0, sch_mul(a, VAR(kw), I(dil[1])));
    const sch_expr *ix[4] = {VAR(t->axes[0]), VAR(t->axes[1]), h, w};
    /* ceil_mode windows may reach past the bottom/right padding too */
    const sch_expr *ok = sch_and(a, in_range(a, h, 0, H, true, true), in_range(a, w, 0, W, true, true));
    const sch_expr *x = sch_read(a, d, 4, ix);
    t->body = sch_select(a, ok, x, is_max ? sch_lowest(a, d->dtype) : sch_const(a, d->dtype, 0));
    t->reduce = is_max ? SCH_RED_MAX : SCH_RED_SUM;
    if (padded) {
        const sch_expr *pix[4] = {VAR(t->axes[0]), VAR(t->axes[1]), sch_add(a, h, I(pad[0])), sch_add(a, w, I(pad[1]))};
        t->body = sch_read(a, padded, 4, pix);
    }
    if (is_max) {
        out[0] = t;
        *nout = 1;
        return true;
    }
    /* average: the divisor counts taps inside the data, or inside the
     * padded data with count_include_pad (PyTorch's rule) */
    bool incl = sch_attr_bool(cx, "count_include_pad");
    sch_tensor *avg = sch_stage_like(cx, 0, names);
    const sch_expr *sh0 = sch_sub(a, sch_mul(a, VAR(avg->axes[2]), I(st[0])), I(pad[0]));
    const sch_expr *sw0 = sch_sub(a, sch_mul(a, VAR(avg->axes[3]), I(st[1])), I(pad[1]));
    const sch_expr *nh = incl ? taps(a, sh0, k[0], dil[0], -pad[0], H + pad[2]) : taps(a, sh0, k[0], dil[0], 0, H);
    const sch_expr *nw = incl ? taps(a, sw0, k[1], dil[1], -pad[1], W + pad[3]) : taps(a, sw0, k[1], dil[1], 0, W);
    const sch_expr *cnt = sch_max(a, sch_mul(a, nh, nw), I(1));
    avg->body = sch_div(a, sch_read_axes(a, t, avg), sch_cast(a, d->dtype, cnt));
    out[0] = avg;
    *nout = 1;
    return true;
}

bool sch_compute_global_pool2d(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    if (!cx->canonical && in_other_layout(cx))
        return pooled_in_layouts(cx, in, nin, out, nout, sch_compute_global_pool2d);
    su_arena *a = cx->a;
    sch_tensor *d = in[0];
    static const char *const names[] = {"n", "c", "oh", "ow"};
    cx->tag = "poolsum";
    sch_tensor *s = sch_stage_like(cx, 0, names);
    sch_var *rh = sch_stage_raxis(cx, s, "rh", d->shape[2]), *rw = sch_stage_raxis(cx, s, "rw", d->shape[3]);
    const sch_expr *ix[4] = {VAR(s->axes[0]), VAR(s->axes[1]), VAR(rh), VAR(rw)};
    s->body = sch_read(a, d, 4, ix);
    s->reduce = SCH_RED_SUM;
    sch_tensor *t = sch_stage_like(cx, 0, names);
    t->body = sch_div(a, sch_read_axes(a, s, t), sch_const(a, d->dtype, (double)(d->shape[2] * d->shape[3])));
    out[0] = t;
    *nout = 1;
    return true;
}

bool sch_compute_adaptive_pool2d(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    if (!cx->canonical && in_other_layout(cx))
        return pooled_in_layouts(cx, in, nin, out, nout, sch_compute_adaptive_pool2d);
    su_arena *a = cx->a;
    sch_tensor *d = in[0];
    const ir_type *ot = sch_out_type(cx, 0);
    int64_t H = d->shape[2], W = d->shape[3], OH = ot->shape[2], OW = ot->shape[3];
    /* window i covers [floor(i*H/OH), ceil((i+1)*H/OH)); the widest one bounds the loop */
    int64_t mh = 0, mw = 0;
    for (int64_t i = 0; i < OH; i++) {
        int64_t n = ((i + 1) * H + OH - 1) / OH - i * H / OH;
        mh = n > mh ? n : mh;
    }
    for (int64_t i = 0; i < OW; i++) {
        int64_t n = ((i + 1) * W + OW - 1) / OW - i * W / OW;
        mw = n > mw ? n : mw;
    }
    static const char *const names[] = {"n", "c", "oh", "ow"};
    cx->tag = "poolsum";
    sch_tensor *s = sch_stage_like(cx, 0, names);
    sch_var *rh = sch_stage_raxis(cx, s, "rh", mh), *rw = sch_stage_raxis(cx, s, "rw", mw);
#define START(v, n, on) sch_div(a, sch_mul(a, v, I(n)), I(on))
#define END(v, n, on) sch_div(a, sch_add(a, sch_mul(a, sch_add(a, v, I(1)), I(n)), I(on - 1)), I(on))
    const sch_expr *hs = START(VAR(s->axes[2]), H, OH), *he = END(VAR(s->axes[2]), H, OH);
    const sch_expr *ws = START(VAR(s->axes[3]), W, OW), *we = END(VAR(s->axes[3]), W, OW);
    const sch_expr *ix[4] = {VAR(s->axes[0]), VAR(s->axes[1]), sch_add(a, hs, VAR(rh)), sch_add(a, ws, VAR(rw))};
    const sch_expr *ok = sch_and(a, sch_bin(a, SCH_LT, VAR(rh), sch_sub(a, he, hs)),
                                 sch_bin(a, SCH_LT, VAR(rw), sch_sub(a, we, ws)));
    s->body = sch_select(a, ok, sch_read(a, d, 4, ix), sch_const(a, d->dtype, 0));
    s->reduce = SCH_RED_SUM;
    sch_tensor *t = sch_stage_like(cx, 0, names);
    const sch_expr *th = START(VAR(t->axes[2]), H, OH), *teh = END(VAR(t->axes[2]), H, OH);
    const sch_expr *tw = START(VAR(t->axes[3]), W, OW), *tew = END(VAR(t->axes[3]), W, OW);
    const sch_expr *cnt = sch_mul(a, sch_sub(a, teh, th), sch_sub(a, tew, tw));
    t->body = sch_div(a, sch_read_axes(a, s, t), sch_cast(a, d->dtype, cnt));
#undef START
#undef END
    out[0] = t;
    *nout = 1;
    return true;
}

/* ---- softmax, layer_norm -------------------------------------------------- */

/* A row reduction of x over `axis`: a stage shaped like x without that axis
 * whose body is body_of(x read at the stage's axes with the reduction axis
 * inserted). The returned index array (idx) is that read position. */
static sch_tensor *row_stage(sch_cctx *cx, sch_tensor *x, int axis, const char *tag, sch_var **r)
{
    int64_t shape[IR_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < x->ndim; i++)
        if (i != axis)
            shape[n++] = x->shape[i];
    cx->tag = tag;
    sch_tensor *t = sch_stage_new(cx, x->dtype, n, shape, NULL);
    *r = sch_stage_raxis(cx, t, "r", x->shape[axis]);
    return t;
}

/* Position in x of row stage t's element with the reduction at rv. */
static void row_index(su_arena *a, const sch_tensor *x, int axis, const sch_tensor *t, const sch_expr *rv,
                      const sch_expr **ix)
{
    int j = 0;
    for (int i = 0; i < x->ndim; i++)
        ix[i] = i == axis ? rv : sch_varref(a, t->axes[j++]);
}

/* The read of row stage t at the row of element idx (of x's rank). */
static const sch_expr *row_read(su_arena *a, sch_tensor *t, int axis, int ndim, const sch_expr *const *idx)
{
    const sch_expr *ix[IR_MAX_DIMS];
    int j = 0;
    for (int i = 0; i < ndim; i++)
        if (i != axis)
            ix[j++] = idx[i];
    return sch_read(a, t, j, ix);
}

static int norm_axis(int64_t axis, int ndim)
{
    return (int)(axis < 0 ? axis + ndim : axis);
}

bool sch_compute_softmax(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *x = in[0];
    bool log_sm = ir_call_op(cx->call)->id == IR_OP_LOG_SOFTMAX;
    int axis = norm_axis(sch_attr_int(cx, "axis"), x->ndim);
    const sch_expr *ix[IR_MAX_DIMS];
    sch_var *r;
    sch_tensor *m = row_stage(cx, x, axis, "rowmax", &r);
    row_index(a, x, axis, m, VAR(r), ix);
    m->body = sch_read(a, x, x->ndim, ix);
    m->reduce = SCH_RED_MAX;
    sch_tensor *s = row_stage(cx, x, axis, "rowsum", &r);
    row_index(a, x, axis, s, VAR(r), ix);
    const sch_expr *sx = sch_read(a, x, x->ndim, ix);
    const sch_expr *sm[IR_MAX_DIMS];
    for (int i = 0; i < s->ndim; i++)
        sm[i] = VAR(s->axes[i]);
    s->body = sch_call1(a, SCH_FN_EXP, sch_sub(a, sx, sch_read(a, m, s->ndim, sm)));
    s->reduce = SCH_RED_SUM;
    sch_tensor *t = sch_stage_like(cx, 0, NULL);
    for (int i = 0; i < t->ndim; i++)
        ix[i] = VAR(t->axes[i]);
    const sch_expr *shifted = sch_sub(a, sch_read(a, x, x->ndim, ix), row_read(a, m, axis, t->ndim, ix));
    const sch_expr *sum = row_read(a, s, axis, t->ndim, ix);
    t->body = log_sm ? sch_sub(a, shifted, sch_call1(a, SCH_FN_LOG, sum))
                     : sch_div(a, sch_call1(a, SCH_FN_EXP, shifted), sum);
    out[0] = t;
    *nout = 1;
    return true;
}

bool sch_compute_layer_norm(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *x = in[0], *gamma = in[1], *beta = in[2];
    int axis = norm_axis(sch_attr_int(cx, "axis"), x->ndim);
    double eps = sch_attr_float(cx, "epsilon");
    const sch_expr *n = sch_const(a, x->dtype, (double)x->shape[axis]);
    const sch_expr *ix[IR_MAX_DIMS], *sm[IR_MAX_DIMS];
    sch_var *r;
    sch_tensor *s1 = row_stage(cx, x, axis, "rowsum", &r);
    row_index(a, x, axis, s1, VAR(r), ix);
    s1->body = sch_read(a, x, x->ndim, ix);
    s1->reduce = SCH_RED_SUM;
    sch_tensor *s2 = row_stage(cx, x, axis, "rowsqsum", &r);
    row_index(a, x, axis, s2, VAR(r), ix);
    for (int i = 0; i < s2->ndim; i++)
        sm[i] = VAR(s2->axes[i]);
    const sch_expr *dev = sch_sub(a, sch_read(a, x, x->ndim, ix), sch_div(a, sch_read(a, s1, s2->ndim, sm), n));
    s2->body = sch_mul(a, dev, dev);
    s2->reduce = SCH_RED_SUM;
    sch_tensor *t = sch_stage_like(cx, 0, NULL);
    for (int i = 0; i < t->ndim; i++)
        ix[i] = VAR(t->axes[i]);
    const sch_expr *mean = sch_div(a, row_read(a, s1, axis, t->ndim, ix), n);
    const sch_expr *var = sch_div(a, row_read(a, s2, axis, t->ndim, ix), n);
    const sch_expr *v = sch_mul(a, sch_sub(a, sch_read(a, x, x->ndim, ix), mean),
                                sch_div(a, sch_const(a, x->dtype, 1),
                                        sch_call1(a, SCH_FN_SQRT, sch_add(a, var, sch_const(a, x->dtype, eps)))));
    const sch_expr *c = ix[axis];
    if (sch_attr_bool(cx, "scale"))
        v = sch_mul(a, v, sch_read(a, gamma, 1, &c));
    if (sch_attr_bool(cx, "center"))
        v = sch_add(a, v, sch_read(a, beta, 1, &c));
    t->body = v;
    out[0] = t;
    *nout = 1;
    return true;
}

/* ---- batch_norm, dropout, bias_add, pad ------------------------------------ */

bool sch_compute_batch_norm(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *x = in[0];
    int axis = norm_axis(sch_attr_int(cx, "axis"), x->ndim);
    double eps = sch_attr_float(cx, "epsilon");
    sch_tensor *t = sch_stage_like(cx, 0, NULL);
    const sch_expr *c = VAR(t->axes[axis]);
    const sch_expr *v = sch_mul(a, sch_sub(a, sch_read_axes(a, x, t), sch_read(a, in[3], 1, &c)),
                                sch_div(a, sch_const(a, x->dtype, 1),
                                        sch_call1(a, SCH_FN_SQRT, sch_add(a, sch_read(a, in[4], 1, &c),
                                                                          sch_const(a, x->dtype, eps)))));
    if (sch_attr_bool(cx, "scale"))
        v = sch_mul(a, v, sch_read(a, in[1], 1, &c));
    if (sch_attr_bool(cx, "center"))
        v = sch_add(a, v, sch_read(a, in[2], 1, &c));
    t->body = v;
    out[0] = t;
    for (int i = 1; i < 3; i++) {
        sch_tensor *s = sch_stage_like(cx, i, NULL);
        s->body = sch_read_axes(a, in[i + 2], s);
        out[i] = s;
    }
    *nout = 3;
    return true;
}

/* Inference: the data passes through; the mask is all ones. */
bool sch_compute_dropout(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *t = sch_stage_like(cx, 0, NULL);
    t->body = sch_read_axes(a, in[0], t);
    sch_tensor *m = sch_stage_like(cx, 1, NULL);
    m->body = sch_const(a, m->dtype, 1);
    out[0] = t;
    out[1] = m;
    *nout = 2;
    return true;
}

bool sch_compute_bias_add(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *t = sch_stage_like(cx, 0, NULL);
    int axis = norm_axis(sch_attr_int(cx, "axis"), t->ndim);
    const sch_expr *c = VAR(t->axes[axis]);
    t->body = sch_add(a, sch_read_axes(a, in[0], t), sch_read(a, in[1], 1, &c));
    out[0] = t;
    *nout = 1;
    return true;
}

bool sch_compute_pad(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *x = in[0];
    const ir_attr_val *pw = ir_call_attr(cx->call, "pad_width");
    const char *mode = sch_attr_str(cx, "pad_mode");
    sch_tensor *t = sch_stage_like(cx, 0, NULL);
    const sch_expr *ix[IR_MAX_DIMS], *ok = NULL;
    for (int i = 0; i < x->ndim; i++) {
        int64_t before = pw->items[i].items[0].i, after = pw->items[i].items[1].i, n = x->shape[i];
        const sch_expr *j = sch_sub(a, VAR(t->axes[i]), I(before));
        if (!strcmp(mode, "edge")) {
            j = sch_max(a, sch_min(a, j, I(n - 1)), I(0));
        } else if (!strcmp(mode, "reflect")) {
            /* -j before the start, 2(n-1) - j past the end (numpy's reflect) */
            j = sch_select(a, sch_bin(a, SCH_LT, j, I(0)), sch_sub(a, I(0), j),
                           sch_select(a, sch_bin(a, SCH_GE, j, I(n)), sch_sub(a, I(2 * (n - 1)), j), j));
            j = sch_max(a, sch_min(a, j, I(n - 1)), I(0));
        } else {
            ok = sch_and(a, ok, in_range(a, j, 0, n, before > 0, after > 0));
        }
        ix[i] = j;
    }
    const sch_expr *value = sch_const(a, x->dtype, 0);
    if (nin > 1)
        value = sch_cast(a, x->dtype, sch_read(a, in[1], 0, NULL));
    t->body = sch_select(a, ok ? ok : sch_const_int(a, IR_BOOL, 1), sch_read(a, x, x->ndim, ix), value);
    out[0] = t;
    *nout = 1;
    return true;
}

/* ---- nn.conv1d ----------------------------------------------------------------- */

/* A sum over (ic, kw) with the padding as a guard on the read; the stage is
 * named after nn.conv1d, so it gets the default template. */
bool sch_compute_conv1d(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *d = in[0], *w = in[1];
    int64_t st, dil, pad[2], g = sch_attr_int(cx, "groups");
    if (!ir_conv1d_params(cx->call->u.call.attrs, &st, &dil, pad))
        return sch_cctx_error(cx, "bad window attributes");
    const ir_type *ot = sch_out_type(cx, 0);
    int64_t W = d->shape[2], O = w->shape[0], CG = w->shape[1], K = w->shape[2];
    static const char *const names[] = {"n", "oc", "ow"};
    sch_tensor *t = sch_stage_new(cx, ot->dtype, 3, ot->shape, names);
    sch_var *ic = sch_stage_raxis(cx, t, "ic", CG), *kw = sch_stage_raxis(cx, t, "kw", K);
    const sch_expr *c = VAR(ic);
    if (g > 1)
        c = sch_add(a, sch_mul(a, sch_div(a, VAR(t->axes[1]), I(O / g)), I(CG)), c);
    const sch_expr *iw = sch_add(a, sch_sub(a, sch_mul(a, VAR(t->axes[2]), I(st)), I(pad[0])), sch_mul(a, VAR(kw), I(dil)));
    const sch_expr *dix[3] = {VAR(t->axes[0]), c, iw}, *wix[3] = {VAR(t->axes[1]), VAR(ic), VAR(kw)};
    const sch_expr *x = sch_cast(a, ot->dtype, sch_read(a, d, 3, dix));
    /* windows reach below 0 only through the left padding, past W only through the right */
    const sch_expr *ok = in_range(a, iw, 0, W, pad[0] > 0, pad[1] > 0);
    if (ok)
        x = sch_select(a, ok, x, sch_const(a, ot->dtype, 0));
    t->body = sch_mul(a, x, sch_cast(a, ot->dtype, sch_read(a, w, 3, wix)));
    t->reduce = SCH_RED_SUM;
    out[0] = t;
    *nout = 1;
    return true;
}

/* ---- nn.conv1d_transpose, nn.conv2d_transpose, nn.conv3d_transpose --------------- */

/* Gather form: output position y reads input position (y + pad - k * dil) /
 * stride on each spatial axis, where that divides exactly and lands inside
 * the data; a sum over the group's input channels and the kernel taps. */
bool sch_compute_conv_transpose(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *d = in[0], *w = in[1];
    int ns = d->ndim - 2;
    ir_conv_transpose p;
    if (!ir_conv_transpose_params(cx->call->u.call.attrs, ns, &p))
        return sch_cctx_error(cx, "bad window attributes");
    const ir_type *ot = sch_out_type(cx, 0);
    int64_t C = d->shape[1], OG = w->shape[1], CG = C / p.groups;
    /* axis and tap names of the last ns spatial axes of (D, H, W) */
    static const char *const names[] = {"n", "oc", "od", "oh", "ow"}, *const taps_of[] = {"kd", "kh", "kw"};
    const char *nm[5] = {names[0], names[1]};
    for (int i = 0; i < ns; i++)
        nm[2 + i] = names[5 - ns + i];
    sch_tensor *t = sch_stage_new(cx, ot->dtype, ns + 2, ot->shape, nm);
    sch_var *ic = sch_stage_raxis(cx, t, "ic", CG), *k[3];
    for (int i = 0; i < ns; i++)
        k[i] = sch_stage_raxis(cx, t, taps_of[3 - ns + i], w->shape[2 + i]);
    const sch_expr *oc = VAR(t->axes[1]);
    const sch_expr *dix[5] = {VAR(t->axes[0]), sch_add(a, sch_mul(a, sch_div(a, oc, I(OG)), I(CG)), VAR(ic))};
    const sch_expr *wix[5] = {dix[1], sch_mod(a, oc, I(OG))}, *ok = NULL;
    for (int i = 0; i < ns; i++) {
        const sch_expr *q = sch_sub(a, sch_add(a, VAR(t->axes[2 + i]), I(p.pad_lo[i])), sch_mul(a, VAR(k[i]), I(p.dilation[i])));
        const sch_expr *pos = p.stride[i] == 1 ? q : sch_div(a, q, I(p.stride[i]));
        ok = sch_and(a, ok, in_range(a, pos, 0, d->shape[2 + i], true, true));
        if (p.stride[i] > 1)
            ok = sch_and(a, ok, sch_bin(a, SCH_EQ, sch_mod(a, q, I(p.stride[i])), I(0)));
        dix[2 + i] = pos;
        wix[2 + i] = VAR(k[i]);
    }
    const sch_expr *x = sch_select(a, ok, sch_cast(a, ot->dtype, sch_read(a, d, ns + 2, dix)), sch_const(a, ot->dtype, 0));
    t->body = sch_mul(a, x, sch_cast(a, ot->dtype, sch_read(a, w, ns + 2, wix)));
    t->reduce = SCH_RED_SUM;
    out[0] = t;
    *nout = 1;
    return true;
}

/* ---- nn.conv3d, nn.max_pool3d, nn.avg_pool3d ---------------------------------- */

/* Input coordinates of the window taps r of an output position (axes t->axes
 * 2..4) along D, H, W, and the guard that keeps them inside the data (NULL
 * where no tap can leave it: no padding on either side and no ceil_mode
 * overhang, which the stage's extents already rule out). */
static const sch_expr *window3d_taps(su_arena *a, const sch_tensor *t, sch_var *const r[3], const ir_window3d *w,
                                     const int64_t *n, bool overhang, const sch_expr *ix[3])
{
    const sch_expr *ok = NULL;
    for (int i = 0; i < 3; i++) {
        const sch_expr *o = sch_sub(a, sch_mul(a, VAR(t->axes[2 + i]), I(w->stride[i])), I(w->pad[i]));
        ix[i] = sch_add(a, o, sch_mul(a, VAR(r[i]), I(w->dil[i])));
        const sch_expr *c = in_range(a, ix[i], 0, n[i], w->pad[i] > 0, w->pad[i + 3] > 0 || overhang);
        if (c)
            ok = sch_and(a, ok, c);
    }
    return ok;
}

/* A sum over (ic, kd, kh, kw) with the padding as a guard on the read, as
 * conv1d; the stage is named after nn.conv3d, so it gets the default template. */
bool sch_compute_conv3d(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *d = in[0], *wt = in[1];
    ir_window3d w;
    int64_t g = sch_attr_int(cx, "groups");
    if (!ir_window3d_params(cx->call->u.call.attrs, false, &w))
        return sch_cctx_error(cx, "bad window attributes");
    const ir_type *ot = sch_out_type(cx, 0);
    int64_t O = wt->shape[0], CG = wt->shape[1];
    static const char *const names[] = {"n", "oc", "od", "oh", "ow"};
    sch_tensor *t = sch_stage_new(cx, ot->dtype, 5, ot->shape, names);
    sch_var *ic = sch_stage_raxis(cx, t, "ic", CG);
    sch_var *r[3] = {sch_stage_raxis(cx, t, "kd", wt->shape[2]), sch_stage_raxis(cx, t, "kh", wt->shape[3]),
                     sch_stage_raxis(cx, t, "kw", wt->shape[4])};
    const sch_expr *c = VAR(ic), *sp[3];
    if (g > 1)
        c = sch_add(a, sch_mul(a, sch_div(a, VAR(t->axes[1]), I(O / g)), I(CG)), c);
    const sch_expr *ok = window3d_taps(a, t, r, &w, d->shape + 2, false, sp);
    const sch_expr *dix[5] = {VAR(t->axes[0]), c, sp[0], sp[1], sp[2]};
    const sch_expr *wix[5] = {VAR(t->axes[1]), VAR(ic), VAR(r[0]), VAR(r[1]), VAR(r[2])};
    const sch_expr *x = sch_cast(a, ot->dtype, sch_read(a, d, 5, dix));
    if (ok)
        x = sch_select(a, ok, x, sch_const(a, ot->dtype, 0));
    t->body = sch_mul(a, x, sch_cast(a, ot->dtype, sch_read(a, wt, 5, wix)));
    t->reduce = SCH_RED_SUM;
    out[0] = t;
    *nout = 1;
    return true;
}

/* As pool2d: a max or a sum over the window's taps inside the data, then for
 * avg a stage dividing by the count of taps inside the data (or inside the
 * padded data, count_include_pad). */
bool sch_compute_pool3d(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *d = in[0];
    bool is_max = ir_call_op(cx->call)->id == IR_OP_MAX_POOL3D;
    ir_window3d w;
    if (!ir_window3d_params(cx->call->u.call.attrs, true, &w))
        return sch_cctx_error(cx, "bad window attributes");
    static const char *const names[] = {"n", "c", "od", "oh", "ow"};
    if (!is_max)
        cx->tag = "poolsum";
    sch_tensor *t = sch_stage_like(cx, 0, names);
    sch_var *r[3] = {sch_stage_raxis(cx, t, "kd", w.k[0]), sch_stage_raxis(cx, t, "kh", w.k[1]),
                     sch_stage_raxis(cx, t, "kw", w.k[2])};
    const sch_expr *sp[3];
    /* ceil_mode windows may reach past the back/bottom/right padding too */
    const sch_expr *ok = window3d_taps(a, t, r, &w, d->shape + 2, sch_attr_bool(cx, "ceil_mode"), sp);
    const sch_expr *ix[5] = {VAR(t->axes[0]), VAR(t->axes[1]), sp[0], sp[1], sp[2]};
    const sch_expr *x = sch_read(a, d, 5, ix);
    t->body = ok ? sch_select(a, ok, x, is_max ? sch_lowest(a, d->dtype) : sch_const(a, d->dtype, 0)) : x;
    t->reduce = is_max ? SCH_RED_MAX : SCH_RED_SUM;
    out[0] = t;
    *nout = 1;
    if (is_max)
        return true;
    bool incl = sch_attr_bool(cx, "count_include_pad");
    sch_tensor *avg = sch_stage_like(cx, 0, names);
    const sch_expr *cnt = I(1);
    for (int i = 0; i < 3; i++) {
        const sch_expr *s0 = sch_sub(a, sch_mul(a, VAR(avg->axes[2 + i]), I(w.stride[i])), I(w.pad[i]));
        int64_t n = d->shape[2 + i];
        cnt = sch_mul(a, cnt, incl ? taps(a, s0, w.k[i], w.dil[i], -w.pad[i], n + w.pad[i + 3])
                                   : taps(a, s0, w.k[i], w.dil[i], 0, n));
    }
    avg->body = sch_div(a, sch_read_axes(a, t, avg), sch_cast(a, d->dtype, sch_max(a, cnt, I(1))));
    out[0] = avg;
    return true;
}
