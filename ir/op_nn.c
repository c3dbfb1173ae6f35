/* op_nn.c — the nn.* ops: convolution, dense, batch_matmul, pooling,
 * softmax, normalization, dropout, bias_add, leaky_relu's attributes,
 * batch_flatten and pad. Each op has its attribute schema (names, order and
 * defaults exactly as TVM's C++ attrs, so that Relay text printed by TVM, which
 * leaves out default values, means the same here), its type relation and its
 * FLOP count. Convolution and pooling take every permutation of the NCHW
 * (and OIHW) letters as layout: NHWC, HWIO, OHWI...; the relations read the
 * shapes in NCHW order (as their messages show them) and give the result in
 * the output layout. Blocked layouts (NCHW16c) are rejected by name rather
 * than silently misread. */
#include <string.h>

#include "ir/ir.h"

/* ---- schemas ------------------------------------------------------------ */

const ir_attr_schema ir_schema_conv2d = IR_SCHEMA(IR_CONV2D_ATTRS);

const ir_attr_schema ir_schema_dense = IR_SCHEMA(
    {"units", IR_AT_INT_OPT, "None"},
    {"out_dtype", IR_AT_STR, "\"\""});

const ir_attr_schema ir_schema_batch_matmul = IR_SCHEMA(
    {"out_dtype", IR_AT_STR, "\"\""},
    {"transpose_a", IR_AT_BOOL, "False"},
    {"transpose_b", IR_AT_BOOL, "True"});

/* max_pool2d and avg_pool2d share the first seven entries and one relation;
 * TVM requires pool_size, [1, 1] stands in as its default. */
#define POOL2D_ATTRS                                  \
    {"pool_size", IR_AT_INTS, "[1, 1]", true},    \
    {"strides", IR_AT_INTS, "[1, 1]"},            \
    {"dilation", IR_AT_INTS, "[1, 1]"},           \
    {"padding", IR_AT_INTS, "[0, 0]"},            \
    {"layout", IR_AT_STR, "\"NCHW\""},            \
    {"out_layout", IR_AT_STR, "\"\""},            \
    {"ceil_mode", IR_AT_BOOL, "False"}
const ir_attr_schema ir_schema_max_pool2d = IR_SCHEMA(POOL2D_ATTRS);
const ir_attr_schema ir_schema_avg_pool2d = IR_SCHEMA(
    POOL2D_ATTRS,
    {"count_include_pad", IR_AT_BOOL, "False"});

const ir_attr_schema ir_schema_global_pool2d = IR_SCHEMA(
    {"layout", IR_AT_STR, "\"NCHW\""},
    {"out_layout", IR_AT_STR, "\"\""});

const ir_attr_schema ir_schema_adaptive_pool2d = IR_SCHEMA(
    {"output_size", IR_AT_INTS_OPT, "None"},
    {"layout", IR_AT_STR, "\"NCHW\""},
    {"out_layout", IR_AT_STR, "\"\""});

const ir_attr_schema ir_schema_softmax = IR_SCHEMA({"axis", IR_AT_INT, "-1"});

/* layer_norm and batch_norm: the same fields, different default axis. */
const ir_attr_schema ir_schema_layer_norm = IR_SCHEMA(
    {"axis", IR_AT_INT, "-1"},
    {"epsilon", IR_AT_FLOAT, "1e-05f"},
    {"center", IR_AT_BOOL, "True"},
    {"scale", IR_AT_BOOL, "True"});
const ir_attr_schema ir_schema_batch_norm = IR_SCHEMA(
    {"axis", IR_AT_INT, "1"},
    {"epsilon", IR_AT_FLOAT, "1e-05f"},
    {"center", IR_AT_BOOL, "True"},
    {"scale", IR_AT_BOOL, "True"});

const ir_attr_schema ir_schema_dropout = IR_SCHEMA({"rate", IR_AT_FLOAT, "0.5f"});

const ir_attr_schema ir_schema_bias_add = IR_SCHEMA({"axis", IR_AT_INT, "1"});

/* 0.25 is TVM's C++ default (LeakyReluAttrs); the Python wrapper's 0.01 is
 * always printed explicitly, so text from TVM reads right either way. */
const ir_attr_schema ir_schema_leaky_relu = IR_SCHEMA({"alpha", IR_AT_FLOAT, "0.25f"});

/* The pad value is the optional second argument (TVM's newer signature). */
const ir_attr_schema ir_schema_pad = IR_SCHEMA(
    {"pad_width", IR_AT_INTS2, "[]", true},
    {"pad_mode", IR_AT_STR, "\"constant\""});

/* ---- helpers ------------------------------------------------------------ */

/* Argument i as a rank-4 tensor (NCHW data or OIHW weight). */
static const ir_type *tensor4(ir_rel_ctx *cx, const ir_type *const *args, int i, const char *what)
{
    const ir_type *t = ir_rel_tensor(cx, args, i);
    if (t && t->ndim != 4)
        return ir_rel_error(cx, "%s must have rank 4, got shape %s", what, ir_shape_str(cx->arena, t));
    return t;
}

/* Reads a layout attribute as a permutation of canon's letters into pos; an
 * empty string means `dflt` (out_layout: the data's layout). */
static bool layout_ok(ir_rel_ctx *cx, const ir_attrs *at, int idx, const char *name, const char *canon,
                      const char *dflt, int pos[4])
{
    const char *l = ir_attr_str(at, idx);
    if (ir_layout_perm(*l ? l : dflt, canon, pos))
        return true;
    ir_rel_error(cx, "unsupported %s \"%s\": relay-tune implements the orders of the letters %s (such as %s), "
                 "not blocked or other layouts", name, l, canon, canon[0] == 'O' ? "OIHW, HWIO" : "NCHW, NHWC");
    return false;
}

/* t (rank 4, in the layout whose canonical positions are pos) as the tensor
 * type of the same data in canonical order. */
static const ir_type *canonical(ir_rel_ctx *cx, const ir_type *t, const int pos[4])
{
    int64_t shape[4];
    for (int i = 0; i < 4; i++)
        shape[i] = t->shape[pos[i]];
    return ir_tensor_type(cx->arena, t->dtype, 4, shape);
}

/* A result type from its canonical shape, in the layout of positions pos. */
static const ir_type *in_layout(ir_rel_ctx *cx, ir_dtype dt, const int64_t canon[4], const int pos[4])
{
    int64_t shape[4];
    for (int i = 0; i < 4; i++)
        shape[pos[i]] = canon[i];
    return ir_tensor_type(cx->arena, dt, 4, shape);
}

/* Window attributes and paddings beyond this are surely mistakes; bounding
 * them keeps the extent arithmetic below far from int64 overflow. */
#define MAX_WINDOW (1LL << 30)

/* A two-dimensional window attribute (strides, dilation, pool_size,
 * kernel_size, output_size): one value stands for both axes. */
static bool hw_pair(ir_rel_ctx *cx, const ir_attrs *at, int idx, const char *name, int64_t out[2])
{
    int64_t v[2];
    int n = ir_attr_ints(at, idx, v, 2);
    if (n != 1 && n != 2) {
        ir_rel_error(cx, "%s must have 1 or 2 values", name);
        return false;
    }
    out[0] = v[0];
    out[1] = n == 2 ? v[1] : v[0];
    if (out[0] <= 0 || out[1] <= 0 || out[0] > MAX_WINDOW || out[1] > MAX_WINDOW) {
        ir_rel_error(cx, "%s must be positive and at most 2^30, got [%lld, %lld]", name, (long long)out[0],
                     (long long)out[1]);
        return false;
    }
    return true;
}

/* padding as TVM writes it: [p] on all sides, [h, w] symmetric, or
 * [top, left, bottom, right]; out is top, left, bottom, right. */
static bool hw_padding(ir_rel_ctx *cx, const ir_attrs *at, int idx, int64_t out[4])
{
    int64_t v[4];
    int n = ir_attr_ints(at, idx, v, 4);
    if (n != 1 && n != 2 && n != 4) {
        ir_rel_error(cx, "padding must have 1, 2 or 4 values");
        return false;
    }
    for (int i = 0; i < 4; i++) {
        out[i] = n == 1 ? v[0] : n == 2 ? v[i % 2] : v[i];
        if (out[i] < 0 || out[i] > MAX_WINDOW) {
            ir_rel_error(cx, "padding must be in [0, 2^30], got %lld", (long long)out[i]);
            return false;
        }
    }
    return true;
}

/* out_dtype: "" means the input's dtype. */
static bool out_dtype(ir_rel_ctx *cx, const ir_attrs *at, int idx, ir_dtype input, ir_dtype *out)
{
    const char *s = ir_attr_str(at, idx);
    *out = input;
    if (!*s || ir_dtype_parse(s, strlen(s), out))
        return true;
    ir_rel_error(cx, "unknown out_dtype \"%s\"", s);
    return false;
}

/* Output extent of a window of size k (dilation d, stride s) sliding over
 * an axis of extent n padded by lo and hi; 0 or less when it does not fit.
 * ceil_mode also counts a last partial window, unless it would start in
 * the bottom/right padding (PyTorch's rule, which TVM's kernels follow). */
static int64_t window_out(int64_t n, int64_t lo, int64_t hi, int64_t k, int64_t d, int64_t s,
                          bool ceil_mode)
{
    int64_t span = n + lo + hi - ((k - 1) * d + 1);
    if (span < 0)
        return 0;
    if (!ceil_mode)
        return span / s + 1;
    int64_t out = (span + s - 1) / s + 1;
    if ((out - 1) * s >= n + lo)
        out--;
    return out;
}

/* Argument i as a vector of extent c and dtype dt: gamma, beta, bias and
 * batch_norm's moving statistics, sized by the data's channel axis. */
static const ir_type *channel_vec(ir_rel_ctx *cx, const ir_type *const *args, int i, const char *what,
                                  const ir_type *data, int axis)
{
    const ir_type *t = ir_rel_tensor(cx, args, i);
    if (!t)
        return NULL;
    int64_t c = data->shape[axis];
    if (t->ndim != 1 || t->shape[0] != c)
        return ir_rel_error(cx, "%s must have shape (%lld) to match axis %d of data %s, got %s", what,
                            (long long)c, axis, ir_shape_str(cx->arena, data), ir_shape_str(cx->arena, t));
    if (t->dtype != data->dtype)
        return ir_rel_error(cx, "%s has dtype %s but data has %s", what, ir_dtype_name(t->dtype),
                            ir_dtype_name(data->dtype));
    return t;
}

/* ---- nn.conv2d ---------------------------------------------------------- */

/* Weight (K, C/groups, KH, KW) against data (N, C, H, W), groups and the
 * optional channels/kernel_size attributes; returns w, or NULL after
 * reporting. */
static const ir_type *conv2d_weight(ir_rel_ctx *cx, const ir_attrs *at, const ir_type *d,
                                    const ir_type *w)
{
    int64_t g = ir_attr_int(at, IR_CONV_GROUPS), c = d->shape[1], k = w->shape[0];
    const char *ds = ir_shape_str(cx->arena, d), *ws = ir_shape_str(cx->arena, w);
    if (g <= 0)
        return ir_rel_error(cx, "groups must be positive, got %lld", (long long)g);
    if (c % g != 0)
        return ir_rel_error(cx, "data %s has %lld channels, not divisible by groups=%lld", ds,
                            (long long)c, (long long)g);
    if (k % g != 0)
        return ir_rel_error(cx, "weight %s has %lld output channels, not divisible by groups=%lld", ws,
                            (long long)k, (long long)g);
    if (w->shape[1] != c / g)
        return ir_rel_error(cx, "channel mismatch: data %s has %lld channels, so weight %s should have "
                            "%lld input channels (groups=%lld), not %lld", ds, (long long)c, ws,
                            (long long)(c / g), (long long)g, (long long)w->shape[1]);
    if (!ir_attr_is_none(at, IR_CONV_CHANNELS) && ir_attr_int(at, IR_CONV_CHANNELS) != k)
        return ir_rel_error(cx, "channels=%lld but weight %s has %lld output channels",
                            (long long)ir_attr_int(at, IR_CONV_CHANNELS), ws, (long long)k);
    int64_t ks[2];
    if (ir_attr_is_none(at, IR_CONV_KERNEL_SIZE))
        return w;
    if (!hw_pair(cx, at, IR_CONV_KERNEL_SIZE, "kernel_size", ks))
        return NULL;
    if (ks[0] != w->shape[2] || ks[1] != w->shape[3])
        return ir_rel_error(cx, "kernel_size=[%lld, %lld] but weight %s has a %lldx%lld kernel",
                            (long long)ks[0], (long long)ks[1], ws, (long long)w->shape[2],
                            (long long)w->shape[3]);
    return w;
}

const ir_type *ir_rel_conv2d(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                             const ir_attrs *attrs)
{
    /* layouts first: a blocked layout's rank-5 data would otherwise read as a rank error */
    int dp[4], kp[4], op[4];
    if (!layout_ok(cx, attrs, IR_CONV_DATA_LAYOUT, "data_layout", "NCHW", "NCHW", dp) ||
        !layout_ok(cx, attrs, IR_CONV_KERNEL_LAYOUT, "kernel_layout", "OIHW", "OIHW", kp) ||
        !layout_ok(cx, attrs, IR_CONV_OUT_LAYOUT, "out_layout", "NCHW", ir_attr_str(attrs, IR_CONV_DATA_LAYOUT), op))
        return NULL;
    const ir_type *d = tensor4(cx, args, 0, "data");
    const ir_type *w = d ? tensor4(cx, args, 1, "weight") : NULL;
    if (!w)
        return NULL;
    d = canonical(cx, d, dp);
    w = canonical(cx, w, kp);
    int64_t st[2], dil[2], pad[4];
    ir_dtype dt;
    if (!hw_pair(cx, attrs, IR_CONV_STRIDES, "strides", st) ||
        !hw_pair(cx, attrs, IR_CONV_DILATION, "dilation", dil) ||
        !hw_padding(cx, attrs, IR_CONV_PADDING, pad) || !conv2d_weight(cx, attrs, d, w) ||
        !out_dtype(cx, attrs, IR_CONV_OUT_DTYPE, d->dtype, &dt))
        return NULL;
    int64_t oh = window_out(d->shape[2], pad[0], pad[2], w->shape[2], dil[0], st[0], false);
    int64_t ow = window_out(d->shape[3], pad[1], pad[3], w->shape[3], dil[1], st[1], false);
    if (oh <= 0 || ow <= 0)
        return ir_rel_error(cx, "the kernel of weight %s (dilation [%lld, %lld]) does not fit in data %s "
                            "padded by [%lld, %lld, %lld, %lld]", ir_shape_str(cx->arena, w),
                            (long long)dil[0], (long long)dil[1], ir_shape_str(cx->arena, d),
                            (long long)pad[0], (long long)pad[1], (long long)pad[2], (long long)pad[3]);
    int64_t shape[4] = {d->shape[0], w->shape[0], oh, ow};
    return in_layout(cx, dt, shape, op);
}

/* A multiply and an add per weight element per output pixel:
 * 2 * N * K * OH * OW * (C / groups) * KH * KW. */
int64_t ir_flops_conv2d(const ir_type *const *args, int nargs, const ir_attrs *attrs,
                        const ir_type *out)
{
    /* every weight element but the output channel's: all of them over O */
    const ir_type *w = args[1];
    int kp[4];
    int64_t o = ir_layout_perm(ir_attr_str(attrs, IR_CONV_KERNEL_LAYOUT), "OIHW", kp) ? w->shape[kp[0]] : w->shape[0];
    return 2 * ir_type_numel(out) * (ir_type_numel(w) / (o ? o : 1));
}

/* ---- nn.dense, nn.batch_matmul ------------------------------------------ */

/* data (..., K) x weight (N, K) -> (..., N). */
const ir_type *ir_rel_dense(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                            const ir_attrs *attrs)
{
    const ir_type *d = ir_rel_tensor(cx, args, 0);
    const ir_type *w = d ? ir_rel_tensor(cx, args, 1) : NULL;
    ir_dtype dt;
    if (!w || !out_dtype(cx, attrs, IR_DENSE_OUT_DTYPE, d->dtype, &dt))
        return NULL;
    if (d->ndim < 1 || w->ndim != 2)
        return ir_rel_error(cx, "expected data (..., K) and weight (N, K), got %s and %s",
                            ir_shape_str(cx->arena, d), ir_shape_str(cx->arena, w));
    int64_t k = d->shape[d->ndim - 1];
    if (w->shape[1] != k)
        return ir_rel_error(cx, "reduction dims differ: data %s has K=%lld but weight %s has K=%lld",
                            ir_shape_str(cx->arena, d), (long long)k, ir_shape_str(cx->arena, w),
                            (long long)w->shape[1]);
    if (!ir_attr_is_none(attrs, IR_DENSE_UNITS) && ir_attr_int(attrs, IR_DENSE_UNITS) != w->shape[0])
        return ir_rel_error(cx, "units=%lld but weight %s has %lld rows",
                            (long long)ir_attr_int(attrs, IR_DENSE_UNITS), ir_shape_str(cx->arena, w),
                            (long long)w->shape[0]);
    int64_t shape[IR_MAX_DIMS];
    memcpy(shape, d->shape, (size_t)d->ndim * sizeof *shape);
    shape[d->ndim - 1] = w->shape[0];
    return ir_tensor_type(cx->arena, dt, d->ndim, shape);
}

/* 2 * M * N * K: a multiply and an add per output element per K. */
int64_t ir_flops_dense(const ir_type *const *args, int nargs, const ir_attrs *attrs,
                       const ir_type *out)
{
    return 2 * ir_type_numel(out) * args[1]->shape[1];
}

/* a (B, M, K) x b (B, N, K) -> (B, M, N) with the default transpose_b=True;
 * transpose_a takes a as (B, K, M), transpose_b=False takes b as (B, K, N).
 * A batch of 1 broadcasts. */
const ir_type *ir_rel_batch_matmul(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                                   const ir_attrs *attrs)
{
    const ir_type *a = ir_rel_tensor(cx, args, 0);
    const ir_type *b = a ? ir_rel_tensor(cx, args, 1) : NULL;
    ir_dtype dt;
    if (!b || !out_dtype(cx, attrs, IR_BMM_OUT_DTYPE, a->dtype, &dt))
        return NULL;
    const char *as = ir_shape_str(cx->arena, a), *bs = ir_shape_str(cx->arena, b);
    if (a->ndim != 3 || b->ndim != 3)
        return ir_rel_error(cx, "operands must have rank 3, got %s and %s", as, bs);
    bool ta = ir_attr_bool(attrs, IR_BMM_TRANSPOSE_A), tb = ir_attr_bool(attrs, IR_BMM_TRANSPOSE_B);
    int64_t m = a->shape[ta ? 2 : 1], ka = a->shape[ta ? 1 : 2];
    int64_t n = b->shape[tb ? 1 : 2], kb = b->shape[tb ? 2 : 1];
    int64_t ba = a->shape[0], bb = b->shape[0];
    if (ba != bb && ba != 1 && bb != 1)
        return ir_rel_error(cx, "batch dims differ: a %s and b %s", as, bs);
    if (ka != kb)
        return ir_rel_error(cx, "reduction dims differ: a %s has K=%lld but b %s has K=%lld "
                            "(transpose_a=%s, transpose_b=%s)", as, (long long)ka, bs, (long long)kb,
                            ta ? "True" : "False", tb ? "True" : "False");
    int64_t shape[3] = {ba == 1 ? bb : ba, m, n};
    return ir_tensor_type(cx->arena, dt, 3, shape);
}

/* 2 * B * M * N * K. */
int64_t ir_flops_batch_matmul(const ir_type *const *args, int nargs, const ir_attrs *attrs,
                              const ir_type *out)
{
    const ir_type *a = args[0];
    int64_t k = a->shape[ir_attr_bool(attrs, IR_BMM_TRANSPOSE_A) ? 1 : 2];
    return 2 * ir_type_numel(out) * k;
}

/* ---- pooling ------------------------------------------------------------ */

/* nn.max_pool2d and nn.avg_pool2d: (N, C, H, W) -> (N, C, OH, OW). */
const ir_type *ir_rel_pool2d(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                             const ir_attrs *attrs)
{
    if (ir_layout_blocked(attrs, IR_POOL_LAYOUT, IR_POOL_OUT_LAYOUT))    /* NCHW[x]c: ir/op_nchwc.c */
        return ir_rel_blocked(cx, args, nargs, attrs, IR_POOL_LAYOUT, IR_POOL_OUT_LAYOUT, ir_rel_pool2d);
    int64_t k[2], st[2], dil[2], pad[4];
    int dp[4], op[4];
    const ir_type *d = NULL;
    if (!layout_ok(cx, attrs, IR_POOL_LAYOUT, "layout", "NCHW", "NCHW", dp) ||
        !layout_ok(cx, attrs, IR_POOL_OUT_LAYOUT, "out_layout", "NCHW", ir_attr_str(attrs, IR_POOL_LAYOUT), op) ||
        !(d = tensor4(cx, args, 0, "data")) ||
        !hw_pair(cx, attrs, IR_POOL_SIZE, "pool_size", k) || !hw_pair(cx, attrs, IR_POOL_STRIDES, "strides", st) ||
        !hw_pair(cx, attrs, IR_POOL_DILATION, "dilation", dil) || !hw_padding(cx, attrs, IR_POOL_PADDING, pad))
        return NULL;
    d = canonical(cx, d, dp);
    bool ceil_mode = ir_attr_bool(attrs, IR_POOL_CEIL_MODE);
    int64_t oh = window_out(d->shape[2], pad[0], pad[2], k[0], dil[0], st[0], ceil_mode);
    int64_t ow = window_out(d->shape[3], pad[1], pad[3], k[1], dil[1], st[1], ceil_mode);
    if (oh <= 0 || ow <= 0)
        return ir_rel_error(cx, "pool_size [%lld, %lld] (dilation [%lld, %lld]) does not fit in data %s "
                            "padded by [%lld, %lld, %lld, %lld]", (long long)k[0], (long long)k[1],
                            (long long)dil[0], (long long)dil[1], ir_shape_str(cx->arena, d),
                            (long long)pad[0], (long long)pad[1], (long long)pad[2], (long long)pad[3]);
    int64_t shape[4] = {d->shape[0], d->shape[1], oh, ow};
    return in_layout(cx, d->dtype, shape, op);
}

/* a * b * c, or INT64_MAX where that overflows (windows of up to 2^30 an
 * axis make FLOP counts no int64 holds). */
static int64_t mul_sat(int64_t a, int64_t b, int64_t c)
{
    int64_t ab, abc;
    if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc))
        return INT64_MAX;
    return abc;
}

/* One max or add per window element per output element. */
int64_t ir_flops_pool2d(const ir_type *const *args, int nargs, const ir_attrs *attrs,
                        const ir_type *out)
{
    int64_t k[2];
    int n = ir_attr_ints(attrs, IR_POOL_SIZE, k, 2);
    if (n == 1)
        k[1] = k[0];
    return n > 0 ? mul_sat(ir_type_numel(out), k[0], k[1]) : 0;
}

/* nn.global_avg_pool2d: (N, C, H, W) -> (N, C, 1, 1). */
const ir_type *ir_rel_global_pool2d(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                                    const ir_attrs *attrs)
{
    if (ir_layout_blocked(attrs, IR_GPOOL_LAYOUT, IR_GPOOL_OUT_LAYOUT))
        return ir_rel_blocked(cx, args, nargs, attrs, IR_GPOOL_LAYOUT, IR_GPOOL_OUT_LAYOUT, ir_rel_global_pool2d);
    int dp[4], op[4];
    const ir_type *d = NULL;
    if (!layout_ok(cx, attrs, IR_GPOOL_LAYOUT, "layout", "NCHW", "NCHW", dp) ||
        !layout_ok(cx, attrs, IR_GPOOL_OUT_LAYOUT, "out_layout", "NCHW", ir_attr_str(attrs, IR_GPOOL_LAYOUT), op) ||
        !(d = tensor4(cx, args, 0, "data")))
        return NULL;
    d = canonical(cx, d, dp);
    int64_t shape[4] = {d->shape[0], d->shape[1], 1, 1};
    return in_layout(cx, d->dtype, shape, op);
}

/* nn.adaptive_avg_pool2d: output_size None keeps (H, W); one value is used
 * for both axes. */
const ir_type *ir_rel_adaptive_pool2d(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                                      const ir_attrs *attrs)
{
    if (ir_layout_blocked(attrs, IR_APOOL_LAYOUT, IR_APOOL_OUT_LAYOUT))
        return ir_rel_blocked(cx, args, nargs, attrs, IR_APOOL_LAYOUT, IR_APOOL_OUT_LAYOUT, ir_rel_adaptive_pool2d);
    int dp[4], op[4];
    const ir_type *d = NULL;
    if (!layout_ok(cx, attrs, IR_APOOL_LAYOUT, "layout", "NCHW", "NCHW", dp) ||
        !layout_ok(cx, attrs, IR_APOOL_OUT_LAYOUT, "out_layout", "NCHW", ir_attr_str(attrs, IR_APOOL_LAYOUT), op) ||
        !(d = tensor4(cx, args, 0, "data")))
        return NULL;
    d = canonical(cx, d, dp);
    int64_t hw[2] = {d->shape[2], d->shape[3]};
    if (!ir_attr_is_none(attrs, IR_APOOL_OUTPUT_SIZE) &&
        !hw_pair(cx, attrs, IR_APOOL_OUTPUT_SIZE, "output_size", hw))
        return NULL;
    int64_t shape[4] = {d->shape[0], d->shape[1], hw[0], hw[1]};
    return in_layout(cx, d->dtype, shape, op);
}

/* ---- softmax and normalization ------------------------------------------ */

/* nn.softmax, nn.log_softmax: the type of the data, given a valid axis. */
const ir_type *ir_rel_softmax(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                              const ir_attrs *attrs)
{
    const ir_type *d = ir_rel_tensor(cx, args, 0);
    int axis;
    if (!d || !ir_rel_axis(cx, ir_attr_int(attrs, IR_SOFTMAX_AXIS), d->ndim, &axis))
        return NULL;
    return d;
}

/* Per element: the running max, exp(x - max), the sum, the divide (or, for
 * log_softmax, log and subtract on the row instead): 4 per element. */
int64_t ir_flops_softmax(const ir_type *const *args, int nargs, const ir_attrs *attrs,
                         const ir_type *out)
{
    return 4 * ir_type_numel(out);
}

/* nn.layer_norm(data, gamma, beta): gamma and beta are (C_axis). */
const ir_type *ir_rel_layer_norm(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                                 const ir_attrs *attrs)
{
    const ir_type *d = ir_rel_tensor(cx, args, 0);
    int axis;
    if (!d || !ir_rel_axis(cx, ir_attr_int(attrs, IR_NORM_AXIS), d->ndim, &axis))
        return NULL;
    if (!channel_vec(cx, args, 1, "gamma", d, axis) || !channel_vec(cx, args, 2, "beta", d, axis))
        return NULL;
    return d;
}

/* Per element: 1 add for the mean; subtract, square and add for the
 * variance; subtract and multiply by rsqrt(var + eps) to normalize; multiply
 * by gamma, add beta: 8 per element (the per-row rsqrt is ignored). */
int64_t ir_flops_layer_norm(const ir_type *const *args, int nargs, const ir_attrs *attrs,
                            const ir_type *out)
{
    return 8 * ir_type_numel(out);
}

/* nn.batch_norm(data, gamma, beta, moving_mean, moving_var) ->
 * (normalized data, new mean (C), new var (C)), C = data.shape[axis]. */
const ir_type *ir_rel_batch_norm(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                                 const ir_attrs *attrs)
{
    static const char *const names[] = {"gamma", "beta", "moving_mean", "moving_var"};
    const ir_type *d = ir_rel_tensor(cx, args, 0);
    int axis;
    if (!d || !ir_rel_axis(cx, ir_attr_int(attrs, IR_NORM_AXIS), d->ndim, &axis))
        return NULL;
    for (int i = 1; i < 5; i++)
        if (!channel_vec(cx, args, i, names[i - 1], d, axis))
            return NULL;
    const ir_type *vec = ir_tensor_type(cx->arena, d->dtype, 1, &d->shape[axis]);
    const ir_type *fields[3] = {d, vec, vec};
    return ir_tuple_type(cx->arena, 3, fields);
}

/* Inference folds the statistics into one multiply and one add per element. */
int64_t ir_flops_batch_norm(const ir_type *const *args, int nargs, const ir_attrs *attrs,
                            const ir_type *out)
{
    return 2 * ir_type_numel(args[0]);
}

/* ---- other nn ops ------------------------------------------------------- */

/* nn.dropout -> (output, mask), both shaped and typed as the data. */
const ir_type *ir_rel_dropout(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                              const ir_attrs *attrs)
{
    const ir_type *d = ir_rel_tensor(cx, args, 0);
    if (!d)
        return NULL;
    double rate = ir_attr_float(attrs, IR_DROPOUT_RATE);
    if (!(rate >= 0 && rate < 1))
        return ir_rel_error(cx, "rate must be in [0, 1), got %g", rate);
    const ir_type *fields[2] = {d, d};
    return ir_tuple_type(cx->arena, 2, fields);
}

/* nn.bias_add(data, bias): bias is (C_axis). */
const ir_type *ir_rel_bias_add(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                               const ir_attrs *attrs)
{
    const ir_type *d = ir_rel_tensor(cx, args, 0);
    int axis;
    if (!d || !ir_rel_axis(cx, ir_attr_int(attrs, IR_BIAS_ADD_AXIS), d->ndim, &axis))
        return NULL;
    return channel_vec(cx, args, 1, "bias", d, axis) ? d : NULL;
}

/* nn.batch_flatten: (N, d1, d2, ...) -> (N, d1 * d2 * ...). */
const ir_type *ir_rel_batch_flatten(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                                    const ir_attrs *attrs)
{
    const ir_type *d = ir_rel_tensor(cx, args, 0);
    if (!d)
        return NULL;
    if (d->ndim < 1)
        return ir_rel_error(cx, "data must have a batch axis, got a scalar");
    int64_t shape[2] = {d->shape[0], 1};
    for (int i = 1; i < d->ndim; i++)
        shape[1] *= d->shape[i];
    return ir_tensor_type(cx->arena, d->dtype, 2, shape);
}

/* nn.pad(data[, pad_value]): one [before, after] per axis, both >= 0. */
const ir_type *ir_rel_pad(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                          const ir_attrs *attrs)
{
    const ir_type *d = ir_rel_tensor(cx, args, 0);
    if (!d)
        return NULL;
    if (nargs > 1) {
        const ir_type *v = ir_rel_tensor(cx, args, 1);
        if (!v)
            return NULL;
        if (v->ndim != 0)
            return ir_rel_error(cx, "pad value must be a scalar, got shape %s", ir_shape_str(cx->arena, v));
    }
    const char *mode = ir_attr_str(attrs, IR_PAD_MODE);
    if (strcmp(mode, "constant") != 0 && strcmp(mode, "edge") != 0 && strcmp(mode, "reflect") != 0)
        return ir_rel_error(cx, "unknown pad_mode \"%s\" (constant, edge or reflect)", mode);
    const ir_attr_val *pw = ir_attr_get(attrs, IR_PAD_WIDTH);
    if (pw->kind != IR_AV_LIST || pw->n != d->ndim)
        return ir_rel_error(cx, "pad_width needs one [before, after] per axis of data %s, got %d",
                            ir_shape_str(cx->arena, d), pw->kind == IR_AV_LIST ? pw->n : 0);
    int64_t shape[IR_MAX_DIMS];
    for (int i = 0; i < d->ndim; i++) {
        const ir_attr_val *row = &pw->items[i];
        if (row->kind != IR_AV_LIST || row->n != 2 || row->items[0].kind != IR_AV_INT ||
            row->items[1].kind != IR_AV_INT || row->items[0].i < 0 || row->items[1].i < 0 ||
            row->items[0].i > MAX_WINDOW || row->items[1].i > MAX_WINDOW)
            return ir_rel_error(cx, "pad_width row %d must be [before, after], both in [0, 2^30]", i);
        shape[i] = d->shape[i] + row->items[0].i + row->items[1].i;
    }
    return ir_tensor_type(cx->arena, d->dtype, d->ndim, shape);
}

bool ir_conv2d_is_nchw(const ir_expr *call)
{
    const char *out = ir_call_attr(call, "out_layout")->s;
    return !strcmp(ir_call_attr(call, "data_layout")->s, "NCHW") && !strcmp(ir_call_attr(call, "kernel_layout")->s, "OIHW") &&
           (!*out || !strcmp(out, "NCHW"));
}

/* ---- nn.conv1d ------------------------------------------------------------ */

/* TVM's Conv1DAttrs: the same fields in the same order as conv2d's, so the
 * IR_CONV_* indices serve both. */
const ir_attr_schema ir_schema_conv1d = IR_SCHEMA(
    {"strides", IR_AT_INTS, "[1]"},
    {"padding", IR_AT_INTS, "[0, 0]"},
    {"dilation", IR_AT_INTS, "[1]"},
    {"groups", IR_AT_INT, "1"},
    {"channels", IR_AT_INT_OPT, "None"},
    {"kernel_size", IR_AT_INTS_OPT, "None"},
    {"data_layout", IR_AT_STR, "\"NCW\""},
    {"kernel_layout", IR_AT_STR, "\"OIW\""},
    {"out_layout", IR_AT_STR, "\"\""},
    {"out_dtype", IR_AT_STR, "\"\""});

/* A one-value window attribute of conv1d (strides, dilation, kernel_size). */
static bool one_value(ir_rel_ctx *cx, const ir_attrs *at, int idx, const char *name, int64_t *out)
{
    int64_t v[2];
    if (ir_attr_ints(at, idx, v, 2) != 1 || v[0] < 1 || v[0] > MAX_WINDOW) {
        ir_rel_error(cx, "%s must be one value in [1, 2^30]", name);
        return false;
    }
    *out = v[0];
    return true;
}

bool ir_conv1d_params(const ir_attrs *at, int64_t *stride, int64_t *dilation, int64_t pad[2])
{
    int64_t v[2];
    int n = ir_attr_ints(at, IR_CONV_PADDING, v, 2);
    if (n != 1 && n != 2)
        return false;
    pad[0] = v[0];
    pad[1] = n == 2 ? v[1] : v[0];
    return ir_attr_ints(at, IR_CONV_STRIDES, stride, 1) == 1 && ir_attr_ints(at, IR_CONV_DILATION, dilation, 1) == 1;
}

/* data (N, C, W) * weight (O, C / groups, K) -> (N, O, OW), in NCW/OIW. */
const ir_type *ir_rel_conv1d(ir_rel_ctx *cx, const ir_type *const *args, int nargs, const ir_attrs *attrs)
{
    const char *dl = ir_attr_str(attrs, IR_CONV_DATA_LAYOUT), *kl = ir_attr_str(attrs, IR_CONV_KERNEL_LAYOUT);
    const char *ol = ir_attr_str(attrs, IR_CONV_OUT_LAYOUT);
    if (strcmp(dl, "NCW") || strcmp(kl, "OIW") || (*ol && strcmp(ol, "NCW")))
        return ir_rel_error(cx, "unsupported layouts data_layout=\"%s\", kernel_layout=\"%s\", out_layout=\"%s\": "
                            "only NCW/OIW are implemented", dl, kl, ol);
    const ir_type *d = ir_rel_tensor(cx, args, 0);
    const ir_type *w = d ? ir_rel_tensor(cx, args, 1) : NULL;
    if (!w)
        return NULL;
    const char *ds = ir_shape_str(cx->arena, d), *ws = ir_shape_str(cx->arena, w);
    if (d->ndim != 3 || w->ndim != 3)
        return ir_rel_error(cx, "data and weight must have rank 3 (NCW, OIW), got %s and %s", ds, ws);
    int64_t st, dil, pad[2], g = ir_attr_int(attrs, IR_CONV_GROUPS);
    ir_dtype dt;
    if (!one_value(cx, attrs, IR_CONV_STRIDES, "strides", &st) || !one_value(cx, attrs, IR_CONV_DILATION, "dilation", &dil))
        return NULL;
    if (!ir_conv1d_params(attrs, &st, &dil, pad) || pad[0] < 0 || pad[1] < 0 || pad[0] > MAX_WINDOW || pad[1] > MAX_WINDOW)
        return ir_rel_error(cx, "padding must be 1 or 2 values in [0, 2^30]");
    if (g < 1 || d->shape[1] % g || w->shape[0] % g || w->shape[1] * g != d->shape[1])
        return ir_rel_error(cx, "channel mismatch: data %s has %lld channels, weight %s takes %lld per group (groups=%lld)",
                            ds, (long long)d->shape[1], ws, (long long)w->shape[1], (long long)g);
    if (!ir_attr_is_none(attrs, IR_CONV_CHANNELS) && ir_attr_int(attrs, IR_CONV_CHANNELS) != w->shape[0])
        return ir_rel_error(cx, "channels=%lld but weight %s has %lld output channels",
                            (long long)ir_attr_int(attrs, IR_CONV_CHANNELS), ws, (long long)w->shape[0]);
    if (!ir_attr_is_none(attrs, IR_CONV_KERNEL_SIZE)) {
        int64_t ks;
        if (!one_value(cx, attrs, IR_CONV_KERNEL_SIZE, "kernel_size", &ks))
            return NULL;
        if (ks != w->shape[2])
            return ir_rel_error(cx, "kernel_size=[%lld] but weight %s has a kernel of %lld", (long long)ks, ws,
                                (long long)w->shape[2]);
    }
    if (!out_dtype(cx, attrs, IR_CONV_OUT_DTYPE, d->dtype, &dt))
        return NULL;
    int64_t ow = window_out(d->shape[2], pad[0], pad[1], w->shape[2], dil, st, false);
    if (ow <= 0)
        return ir_rel_error(cx, "the kernel of weight %s (dilation %lld) does not fit in data %s padded by [%lld, %lld]",
                            ws, (long long)dil, ds, (long long)pad[0], (long long)pad[1]);
    int64_t shape[3] = {d->shape[0], w->shape[0], ow};
    return ir_tensor_type(cx->arena, dt, 3, shape);
}

int64_t ir_flops_conv1d(const ir_type *const *args, int nargs, const ir_attrs *attrs, const ir_type *out)
{
    return 2 * ir_type_numel(out) * args[1]->shape[1] * args[1]->shape[2];
}

/* ---- nn.conv2d_transpose, nn.conv1d_transpose --------------------------- */

/* TVM's Conv2DTransposeAttrs, Conv3DTransposeAttrs and Conv1DTransposeAttrs:
 * the same fields in the same order (IR_CONVT_* indices), one to three
 * spatial axes. */
const ir_attr_schema ir_schema_conv2d_transpose = IR_SCHEMA(
    {"channels", IR_AT_INT_OPT, "None"},
    {"kernel_size", IR_AT_INTS_OPT, "None"},
    {"strides", IR_AT_INTS, "[1, 1]"},
    {"padding", IR_AT_INTS, "[0, 0]"},
    {"output_padding", IR_AT_INTS, "[0, 0]"},
    {"dilation", IR_AT_INTS, "[1, 1]"},
    {"groups", IR_AT_INT, "1"},
    {"data_layout", IR_AT_STR, "\"NCHW\""},
    {"kernel_layout", IR_AT_STR, "\"IOHW\""},
    {"out_layout", IR_AT_STR, "\"\""},
    {"out_dtype", IR_AT_STR, "\"\""});

const ir_attr_schema ir_schema_conv3d_transpose = IR_SCHEMA(
    {"channels", IR_AT_INT_OPT, "None"},
    {"kernel_size", IR_AT_INTS_OPT, "None"},
    {"strides", IR_AT_INTS, "[1, 1, 1]"},
    {"padding", IR_AT_INTS, "[0, 0, 0]"},
    {"output_padding", IR_AT_INTS, "[0, 0, 0]"},
    {"dilation", IR_AT_INTS, "[1, 1, 1]"},
    {"groups", IR_AT_INT, "1"},
    {"data_layout", IR_AT_STR, "\"NCDHW\""},
    {"kernel_layout", IR_AT_STR, "\"IODHW\""},
    {"out_layout", IR_AT_STR, "\"\""},
    {"out_dtype", IR_AT_STR, "\"\""});

const ir_attr_schema ir_schema_conv1d_transpose = IR_SCHEMA(
    {"channels", IR_AT_INT_OPT, "None"},
    {"kernel_size", IR_AT_INTS_OPT, "None"},
    {"strides", IR_AT_INTS, "[1]"},
    {"padding", IR_AT_INTS, "[0, 0]"},
    {"output_padding", IR_AT_INTS, "[0]"},
    {"dilation", IR_AT_INTS, "[1]"},
    {"groups", IR_AT_INT, "1"},
    {"data_layout", IR_AT_STR, "\"NCW\""},
    {"kernel_layout", IR_AT_STR, "\"IOW\""},
    {"out_layout", IR_AT_STR, "\"\""},
    {"out_dtype", IR_AT_STR, "\"\""});

/* Reads a list attribute of ns values (one value stands for all). */
static bool spatial(const ir_attrs *at, int idx, int ns, int64_t *out)
{
    int64_t v[3];
    int n = ir_attr_ints(at, idx, v, 3);
    if (n != 1 && n != ns)
        return false;
    for (int i = 0; i < ns; i++)
        out[i] = v[n == 1 ? 0 : i];
    return true;
}

bool ir_conv_transpose_params(const ir_attrs *at, int ns, ir_conv_transpose *p)
{
    int64_t v[6];
    int n = ir_attr_ints(at, IR_CONVT_PADDING, v, 6);
    p->ns = ns;
    /* padding: one value, a value per axis (both sides), or before and after each axis */
    if (n == 1 || n == ns)
        for (int i = 0; i < ns; i++)
            p->pad_lo[i] = p->pad_hi[i] = v[n == 1 ? 0 : i];
    else if (n == 2 * ns)
        for (int i = 0; i < ns; i++)
            p->pad_lo[i] = v[i], p->pad_hi[i] = v[ns + i];
    else
        return false;
    p->groups = ir_attr_int(at, IR_CONVT_GROUPS);
    return spatial(at, IR_CONVT_STRIDES, ns, p->stride) && spatial(at, IR_CONVT_DILATION, ns, p->dilation) &&
           spatial(at, IR_CONVT_OUTPUT_PADDING, ns, p->out_pad);
}

/* data (N, C, [[D,] H,] W) and weight (C, O / groups, [[KD,] KH,] KW) ->
 * (N, O, [[OD,] OH,] OW) with OH = (H - 1) * stride - pads + dilation * (KH - 1)
 * + output_padding + 1. */
const ir_type *ir_rel_conv_transpose(ir_rel_ctx *cx, const ir_type *const *args, int nargs, const ir_attrs *attrs)
{
    static const char *const data_layouts[] = {"NCW", "NCHW", "NCDHW"}, *const kernel_layouts[] = {"IOW", "IOHW", "IODHW"};
    int ns = cx->op->id == IR_OP_CONV3D_TRANSPOSE ? 3 : cx->op->id == IR_OP_CONV2D_TRANSPOSE ? 2 : 1;
    const char *dl = ir_attr_str(attrs, IR_CONVT_DATA_LAYOUT), *kl = ir_attr_str(attrs, IR_CONVT_KERNEL_LAYOUT);
    const char *ol = ir_attr_str(attrs, IR_CONVT_OUT_LAYOUT), *wd = data_layouts[ns - 1], *wk = kernel_layouts[ns - 1];
    if (strcmp(dl, wd) || strcmp(kl, wk) || (*ol && strcmp(ol, wd)))
        return ir_rel_error(cx, "unsupported layouts data_layout=\"%s\", kernel_layout=\"%s\", out_layout=\"%s\": "
                            "only %s/%s are implemented", dl, kl, ol, wd, wk);
    const ir_type *d = ir_rel_tensor(cx, args, 0);
    const ir_type *w = d ? ir_rel_tensor(cx, args, 1) : NULL;
    if (!w)
        return NULL;
    const char *ds = ir_shape_str(cx->arena, d), *ws = ir_shape_str(cx->arena, w);
    if (d->ndim != ns + 2 || w->ndim != ns + 2)
        return ir_rel_error(cx, "data and weight must have rank %d, got %s and %s", ns + 2, ds, ws);
    ir_conv_transpose p;
    if (!ir_conv_transpose_params(attrs, ns, &p))
        return ir_rel_error(cx, "strides, dilation and output_padding take 1 or %d values, padding 1, %d or %d", ns, ns,
                            2 * ns);
    ir_dtype dt;
    if (!out_dtype(cx, attrs, IR_CONVT_OUT_DTYPE, d->dtype, &dt))
        return NULL;
    if (p.groups < 1 || d->shape[1] % p.groups || w->shape[0] != d->shape[1])
        return ir_rel_error(cx, "channel mismatch: data %s has %lld channels, so weight %s needs them as its axis 0 "
                            "(groups=%lld)", ds, (long long)d->shape[1], ws, (long long)p.groups);
    int64_t shape[5] = {d->shape[0], w->shape[1] * p.groups};
    if (!ir_attr_is_none(attrs, IR_CONVT_CHANNELS) && ir_attr_int(attrs, IR_CONVT_CHANNELS) != shape[1])
        return ir_rel_error(cx, "channels=%lld but weight %s with groups=%lld makes %lld",
                            (long long)ir_attr_int(attrs, IR_CONVT_CHANNELS), ws, (long long)p.groups,
                            (long long)shape[1]);
    for (int i = 0; i < ns; i++) {
        int64_t n = d->shape[2 + i], k = w->shape[2 + i];
        if (p.stride[i] < 1 || p.dilation[i] < 1 || p.stride[i] > MAX_WINDOW || p.dilation[i] > MAX_WINDOW ||
            p.pad_lo[i] < 0 || p.pad_hi[i] < 0 || p.pad_lo[i] > MAX_WINDOW || p.pad_hi[i] > MAX_WINDOW ||
            p.out_pad[i] < 0 || p.out_pad[i] >= (p.stride[i] > p.dilation[i] ? p.stride[i] : p.dilation[i]))
            return ir_rel_error(cx, "bad window attributes: strides and dilation at least 1, paddings at least 0, "
                                "output_padding below the stride or the dilation");
        shape[2 + i] = (n - 1) * p.stride[i] - p.pad_lo[i] - p.pad_hi[i] + p.dilation[i] * (k - 1) + p.out_pad[i] + 1;
        if (shape[2 + i] <= 0)
            return ir_rel_error(cx, "the padding leaves no output (data %s, weight %s)", ds, ws);
    }
    return ir_tensor_type(cx->arena, dt, ns + 2, shape);
}

/* Every input element meets every tap of its group's weights. */
int64_t ir_flops_conv_transpose(const ir_type *const *args, int nargs, const ir_attrs *attrs, const ir_type *out)
{
    return 2 * ir_type_numel(args[0]) * (ir_type_numel(args[1]) / (args[1]->shape[0] ? args[1]->shape[0] : 1));
}

/* ---- nn.conv3d, nn.max_pool3d, nn.avg_pool3d ------------------------------ */

/* TVM's Conv3DAttrs (the IR_CONV_* order) and MaxPool3DAttrs/AvgPool3DAttrs
 * (the IR_POOL_* order), in NCDHW/OIDHW: the layouts that ONNX's 5-D Conv
 * and pools use. Other layouts are refused by name. */
const ir_attr_schema ir_schema_conv3d = IR_SCHEMA(
    {"strides", IR_AT_INTS, "[1, 1, 1]"},
    {"padding", IR_AT_INTS, "[0, 0, 0]"},
    {"dilation", IR_AT_INTS, "[1, 1, 1]"},
    {"groups", IR_AT_INT, "1"},
    {"channels", IR_AT_INT_OPT, "None"},
    {"kernel_size", IR_AT_INTS_OPT, "None"},
    {"data_layout", IR_AT_STR, "\"NCDHW\""},
    {"kernel_layout", IR_AT_STR, "\"OIDHW\""},
    {"out_layout", IR_AT_STR, "\"\""},
    {"out_dtype", IR_AT_STR, "\"\""});

#define POOL3D_ATTRS                                  \
    {"pool_size", IR_AT_INTS, "[1, 1, 1]", true}, \
    {"strides", IR_AT_INTS, "[1, 1, 1]"},         \
    {"dilation", IR_AT_INTS, "[1, 1, 1]"},        \
    {"padding", IR_AT_INTS, "[0, 0, 0]"},         \
    {"layout", IR_AT_STR, "\"NCDHW\""},           \
    {"out_layout", IR_AT_STR, "\"\""},            \
    {"ceil_mode", IR_AT_BOOL, "False"}
const ir_attr_schema ir_schema_max_pool3d = IR_SCHEMA(POOL3D_ATTRS);
const ir_attr_schema ir_schema_avg_pool3d = IR_SCHEMA(
    POOL3D_ATTRS,
    {"count_include_pad", IR_AT_BOOL, "False"});

bool ir_window3d_params(const ir_attrs *at, bool pool, ir_window3d *w)
{
    int st = pool ? IR_POOL_STRIDES : IR_CONV_STRIDES, dil = pool ? IR_POOL_DILATION : IR_CONV_DILATION;
    int64_t v[6];
    int n = ir_attr_ints(at, pool ? IR_POOL_PADDING : IR_CONV_PADDING, v, 6);
    /* padding: one value, a value per axis (both sides), or the fronts then the backs (TVM's forms) */
    if (n != 1 && n != 3 && n != 6)
        return false;
    for (int i = 0; i < 6; i++)
        w->pad[i] = n == 1 ? v[0] : n == 3 ? v[i % 3] : v[i];
    return spatial(at, st, 3, w->stride) && spatial(at, dil, 3, w->dil) &&
           (!pool || spatial(at, IR_POOL_SIZE, 3, w->k));
}

/* Checks the window's attributes and puts the output's spatial extents for
 * data extents n in out[0..2] (w->k already holds a convolution's kernel);
 * false after reporting. */
static bool window3d_out(ir_rel_ctx *cx, const ir_attrs *at, bool pool, const int64_t *n, ir_window3d *w,
                         int64_t out[3], const char *ds)
{
    const char *pk = pool ? "pool_size, " : "";
    if (!ir_window3d_params(at, pool, w)) {
        ir_rel_error(cx, "%sstrides and dilation take 1 or 3 values, padding 1, 3 or 6", pk);
        return false;
    }
    for (int i = 0; i < 6; i++) {
        bool bad = w->pad[i] < 0 || w->pad[i] > MAX_WINDOW;
        if (i < 3)
            bad = bad || w->k[i] < 1 || w->stride[i] < 1 || w->dil[i] < 1 || w->k[i] > MAX_WINDOW ||
                  w->stride[i] > MAX_WINDOW || w->dil[i] > MAX_WINDOW;
        if (bad) {
            ir_rel_error(cx, "window attributes out of range: %sstrides and dilation in [1, 2^30], padding in [0, 2^30]",
                         pk);
            return false;
        }
    }
    bool ceil_mode = pool && ir_attr_bool(at, IR_POOL_CEIL_MODE);
    for (int i = 0; i < 3; i++) {
        out[i] = window_out(n[i], w->pad[i], w->pad[i + 3], w->k[i], w->dil[i], w->stride[i], ceil_mode);
        if (out[i] <= 0) {
            ir_rel_error(cx, "the window [%lld, %lld, %lld] (dilation [%lld, %lld, %lld]) does not fit in data %s "
                         "padded by [%lld, %lld, %lld, %lld, %lld, %lld]", (long long)w->k[0], (long long)w->k[1],
                         (long long)w->k[2], (long long)w->dil[0], (long long)w->dil[1], (long long)w->dil[2], ds,
                         (long long)w->pad[0], (long long)w->pad[1], (long long)w->pad[2], (long long)w->pad[3],
                         (long long)w->pad[4], (long long)w->pad[5]);
            return false;
        }
    }
    return true;
}

/* The layout attribute at idx is `want` (or "" where empty_ok). */
static bool layout_is(const ir_attrs *at, int idx, const char *want, bool empty_ok)
{
    const char *l = ir_attr_str(at, idx);
    return !strcmp(l, want) || (empty_ok && !*l);
}

/* data (N, C, D, H, W) * weight (O, C / groups, KD, KH, KW) -> (N, O, OD, OH, OW). */
const ir_type *ir_rel_conv3d(ir_rel_ctx *cx, const ir_type *const *args, int nargs, const ir_attrs *attrs)
{
    if (!layout_is(attrs, IR_CONV_DATA_LAYOUT, "NCDHW", false) || !layout_is(attrs, IR_CONV_KERNEL_LAYOUT, "OIDHW", false) ||
        !layout_is(attrs, IR_CONV_OUT_LAYOUT, "NCDHW", true))
        return ir_rel_error(cx, "unsupported layouts data_layout=\"%s\", kernel_layout=\"%s\", out_layout=\"%s\": "
                            "only NCDHW/OIDHW are implemented", ir_attr_str(attrs, IR_CONV_DATA_LAYOUT),
                            ir_attr_str(attrs, IR_CONV_KERNEL_LAYOUT), ir_attr_str(attrs, IR_CONV_OUT_LAYOUT));
    const ir_type *d = ir_rel_tensor(cx, args, 0);
    const ir_type *w = d ? ir_rel_tensor(cx, args, 1) : NULL;
    if (!w)
        return NULL;
    const char *ds = ir_shape_str(cx->arena, d), *ws = ir_shape_str(cx->arena, w);
    if (d->ndim != 5 || w->ndim != 5)
        return ir_rel_error(cx, "data and weight must have rank 5 (NCDHW, OIDHW), got %s and %s", ds, ws);
    int64_t g = ir_attr_int(attrs, IR_CONV_GROUPS);
    if (g < 1 || d->shape[1] % g || w->shape[0] % g || w->shape[1] * g != d->shape[1])
        return ir_rel_error(cx, "channel mismatch: data %s has %lld channels, weight %s takes %lld per group (groups=%lld)",
                            ds, (long long)d->shape[1], ws, (long long)w->shape[1], (long long)g);
    if (!ir_attr_is_none(attrs, IR_CONV_CHANNELS) && ir_attr_int(attrs, IR_CONV_CHANNELS) != w->shape[0])
        return ir_rel_error(cx, "channels=%lld but weight %s has %lld output channels",
                            (long long)ir_attr_int(attrs, IR_CONV_CHANNELS), ws, (long long)w->shape[0]);
    int64_t ks[3];
    if (!ir_attr_is_none(attrs, IR_CONV_KERNEL_SIZE) &&
        (!spatial(attrs, IR_CONV_KERNEL_SIZE, 3, ks) || ks[0] != w->shape[2] || ks[1] != w->shape[3] ||
         ks[2] != w->shape[4]))
        return ir_rel_error(cx, "kernel_size must be the kernel of weight %s", ws);
    ir_dtype dt;
    if (!out_dtype(cx, attrs, IR_CONV_OUT_DTYPE, d->dtype, &dt))
        return NULL;
    ir_window3d win;
    int64_t shape[5] = {d->shape[0], w->shape[0]};
    memcpy(win.k, w->shape + 2, sizeof win.k);
    if (!window3d_out(cx, attrs, false, d->shape + 2, &win, shape + 2, ds))
        return NULL;
    return ir_tensor_type(cx->arena, dt, 5, shape);
}

/* 2 * out * (C / groups) * KD * KH * KW. */
int64_t ir_flops_conv3d(const ir_type *const *args, int nargs, const ir_attrs *attrs, const ir_type *out)
{
    const ir_type *w = args[1];
    return 2 * ir_type_numel(out) * (ir_type_numel(w) / (w->shape[0] ? w->shape[0] : 1));
}

/* nn.max_pool3d and nn.avg_pool3d: (N, C, D, H, W) -> (N, C, OD, OH, OW). */
const ir_type *ir_rel_pool3d(ir_rel_ctx *cx, const ir_type *const *args, int nargs, const ir_attrs *attrs)
{
    if (!layout_is(attrs, IR_POOL_LAYOUT, "NCDHW", false) || !layout_is(attrs, IR_POOL_OUT_LAYOUT, "NCDHW", true))
        return ir_rel_error(cx, "unsupported layout=\"%s\", out_layout=\"%s\": only NCDHW is implemented",
                            ir_attr_str(attrs, IR_POOL_LAYOUT), ir_attr_str(attrs, IR_POOL_OUT_LAYOUT));
    const ir_type *d = ir_rel_tensor(cx, args, 0);
    if (!d)
        return NULL;
    const char *ds = ir_shape_str(cx->arena, d);
    if (d->ndim != 5)
        return ir_rel_error(cx, "data must have rank 5 (NCDHW), got %s", ds);
    ir_window3d win;
    int64_t shape[5] = {d->shape[0], d->shape[1]};
    if (!window3d_out(cx, attrs, true, d->shape + 2, &win, shape + 2, ds))
        return NULL;
    return ir_tensor_type(cx->arena, d->dtype, 5, shape);
}

/* One max or add per window element per output element. */
int64_t ir_flops_pool3d(const ir_type *const *args, int nargs, const ir_attrs *attrs, const ir_type *out)
{
    ir_window3d w;
    return ir_window3d_params(attrs, true, &w) ? mul_sat(mul_sat(ir_type_numel(out), w.k[0], 1), w.k[1], w.k[2]) : 0;
}
