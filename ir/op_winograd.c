/* op_winograd.c — the two ops of Winograd convolution, with TVM's names:
 * nn.contrib_conv2d_winograd_weight_transform (weight [K, C, 3, 3] ->
 * U = G g G^T, [alpha, alpha, K, C]) and
 * nn.contrib_conv2d_winograd_without_weight_transform (NCHW data and U ->
 * the NCHW conv of the weight U came from). The winograd pass
 * (ir/transform/winograd.c) makes them; the weight transform of a bound
 * weight is folded at compile time, so inference reads U only. The conv
 * takes conv2d's attributes (and indices) plus tile_size, and is written for
 * what the transform computes: stride 1, dilation 1, groups 1, NCHW. Its
 * relation hands the weight U stands for to conv2d's, so the two cannot
 * disagree on padding or shapes; its FLOPs are the direct conv's, so that
 * GFLOP/s compare with the direct kernels' (docs/winograd.md). */
#include <string.h>

#include "ir/ir.h"

const ir_attr_schema ir_schema_winograd_weight = IR_SCHEMA({"tile_size", IR_AT_INT, "4", true});

const ir_attr_schema ir_schema_conv2d_winograd = IR_SCHEMA(IR_CONV2D_ATTRS, {"tile_size", IR_AT_INT, "4", true});

/* The tile m of attribute idx, checked: 2 or 4. */
static bool tile_ok(ir_rel_ctx *cx, const ir_attrs *at, int idx, int64_t *m)
{
    *m = ir_attr_int(at, idx);
    if (*m != 2 && *m != 4) {
        ir_rel_error(cx, "tile_size=%lld: F(m x m, 3 x 3) is written for m = 2 and m = 4", (long long)*m);
        return false;
    }
    return true;
}

const ir_type *ir_rel_winograd_weight(ir_rel_ctx *cx, const ir_type *const *args, int nargs, const ir_attrs *attrs)
{
    int64_t m;
    const ir_type *w = ir_rel_tensor(cx, args, 0);
    if (!w || !tile_ok(cx, attrs, 0, &m))
        return NULL;
    if (w->ndim != 4 || w->shape[2] != IR_WINO_R || w->shape[3] != IR_WINO_R || !ir_dtype_is_float(w->dtype))
        return ir_rel_error(cx, "the weight must be a float (K, C, 3, 3) in OIHW, got %s", ir_type_str(cx->arena, w));
    int64_t shape[4] = {m + IR_WINO_R - 1, m + IR_WINO_R - 1, w->shape[0], w->shape[1]};
    return ir_tensor_type(cx->arena, w->dtype, 4, shape);
}

const ir_type *ir_rel_conv2d_winograd(ir_rel_ctx *cx, const ir_type *const *args, int nargs, const ir_attrs *attrs)
{
    int64_t m, pad[4];
    if (!tile_ok(cx, attrs, IR_WINO_TILE_SIZE, &m))
        return NULL;
    const char *out = ir_attr_str(attrs, IR_CONV_OUT_LAYOUT);
    if (strcmp(ir_attr_str(attrs, IR_CONV_DATA_LAYOUT), "NCHW") || strcmp(ir_attr_str(attrs, IR_CONV_KERNEL_LAYOUT), "OIHW") ||
        (*out && strcmp(out, "NCHW")))
        return ir_rel_error(cx, "layouts data_layout=\"%s\", kernel_layout=\"%s\", out_layout=\"%s\": expects NCHW, OIHW "
                            "(the weight U transforms) and NCHW (or \"\")", ir_attr_str(attrs, IR_CONV_DATA_LAYOUT),
                            ir_attr_str(attrs, IR_CONV_KERNEL_LAYOUT), out);
    if (!ir_winograd_window(attrs, pad))
        return ir_rel_error(cx, "Winograd convolution is written for strides [1, 1], dilation [1, 1] and groups=1");
    const ir_type *d = ir_rel_tensor(cx, args, 0), *u = d ? ir_rel_tensor(cx, args, 1) : NULL;
    if (!u)
        return NULL;
    int64_t alpha = m + IR_WINO_R - 1;
    if (u->ndim != 4 || u->shape[0] != alpha || u->shape[1] != alpha)
        return ir_rel_error(cx, "the transformed weight must be (%lld, %lld, K, C) for tile_size=%lld, got %s",
                            (long long)alpha, (long long)alpha, (long long)m, ir_shape_str(cx->arena, u));
    if (u->dtype != d->dtype || !ir_dtype_is_float(d->dtype))
        return ir_rel_error(cx, "data %s and transformed weight %s must be of one float dtype",
                            ir_type_str(cx->arena, d), ir_type_str(cx->arena, u));
    /* the weight U stands for: conv2d's relation decides the rest */
    int64_t ws[4] = {u->shape[2], u->shape[3], IR_WINO_R, IR_WINO_R};
    const ir_type *plain[2] = {d, ir_tensor_type(cx->arena, u->dtype, 4, ws)};
    return ir_rel_conv2d(cx, plain, 2, attrs);
}

/* The transform's multiply-adds, twice: per (K, C), g G^T (3 alpha x 3)
 * then G (g G^T) (alpha^2 x 3). */
int64_t ir_flops_winograd_weight(const ir_type *const *args, int nargs, const ir_attrs *attrs, const ir_type *out)
{
    int64_t alpha = out->shape[0];
    return 2 * out->shape[2] * out->shape[3] * (IR_WINO_R * IR_WINO_R * alpha + IR_WINO_R * alpha * alpha);
}

/* The direct conv's count, 2 N K OH OW C 9: what the op computes, not how. */
int64_t ir_flops_conv2d_winograd(const ir_type *const *args, int nargs, const ir_attrs *attrs, const ir_type *out)
{
    const ir_type *u = args[1];
    int64_t n = 1;
    for (int i = 0; i < out->ndim; i++)
        n *= out->shape[i];
    return 2 * n * u->shape[3] * IR_WINO_R * IR_WINO_R;
}
