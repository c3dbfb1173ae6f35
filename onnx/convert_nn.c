/* convert_nn.c — ONNX's neural-network ops: Conv, Gemm, MatMul, pooling,
 * normalizations, softmax and the activations. 1-D convolutions and pools
 * run as 2-D ones over a height of 1 (exact), 3-D ones as nn.conv3d and the
 * 3-D pools; ONNX's auto_pad is resolved
 * into explicit pads from the static shapes; the activations Relay lacks
 * are written as the elementwise formulas of the ONNX spec. */
#include <math.h>
#include <string.h>

#include "onnx/onnx.h"

/* ---- windows: kernel, strides, dilations, pads -------------------------- */

/* The window attributes of a Conv or pool over `nsp` spatial dims (1 to 3). */
typedef struct window {
    int nsp;
    int64_t k[3], stride[3], dil[3], pad[6];    /* pad: begins, then ends */
} window;

/* Reads kernel (from kshape when kernel_shape is absent), strides,
 * dilations and pads, resolving auto_pad from the input's spatial extents. */
static bool read_window(ox_ctx *cx, const Onnx__NodeProto *n, const int64_t *in_sp, const int64_t *kshape, int nsp,
                        window *w)
{
    int64_t v[6];
    w->nsp = nsp;
    int nk = ox_attr_ints(cx, n, "kernel_shape", v, 3);
    if (nk < 0 && !kshape)
        return ox_fail(cx, "kernel_shape is required");
    if (nk >= 0 && nk != nsp)
        return ox_fail(cx, "kernel_shape has %d values for %d spatial dims", nk, nsp);
    for (int i = 0; i < nsp; i++) {
        w->k[i] = nk >= 0 ? v[i] : kshape[i];
        w->stride[i] = w->dil[i] = 1;
        w->pad[i] = w->pad[i + nsp] = 0;
    }
    int ns = ox_attr_ints(cx, n, "strides", v, 3);
    if (ns >= 0 && ns != nsp)
        return ox_fail(cx, "strides has %d values for %d spatial dims", ns, nsp);
    for (int i = 0; i < ns; i++)
        w->stride[i] = v[i];
    int nd = ox_attr_ints(cx, n, "dilations", v, 3);
    if (nd >= 0 && nd != nsp)
        return ox_fail(cx, "dilations has %d values for %d spatial dims", nd, nsp);
    for (int i = 0; i < nd; i++)
        w->dil[i] = v[i];
    for (int i = 0; i < nsp; i++)
        if (w->k[i] <= 0 || w->stride[i] <= 0 || w->dil[i] <= 0 || w->k[i] > (1 << 30) || w->stride[i] > (1 << 30) ||
            w->dil[i] > (1 << 30))
            return ox_fail(cx, "kernel, strides and dilations must be in [1, 2^30]");
    const char *ap = ox_attr_str(cx, n, "auto_pad", "NOTSET");
    if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
        for (int i = 0; i < nsp; i++) {
            int64_t out = (in_sp[i] + w->stride[i] - 1) / w->stride[i];
            int64_t total = (out - 1) * w->stride[i] + (w->k[i] - 1) * w->dil[i] + 1 - in_sp[i];
            total = total < 0 ? 0 : total;
            int64_t small = total / 2;
            w->pad[i] = ap[5] == 'U' ? small : total - small;
            w->pad[i + nsp] = total - w->pad[i];
        }
    } else if (!strcmp(ap, "NOTSET")) {
        int np = ox_attr_ints(cx, n, "pads", v, 6);
        if (np >= 0 && np != 2 * nsp)
            return ox_fail(cx, "pads has %d values for %d spatial dims", np, nsp);
        for (int i = 0; i < np; i++) {
            if (v[i] < 0 || v[i] > (1 << 30))
                return ox_fail(cx, "pads must be in [0, 2^30]");
            w->pad[i] = v[i];
        }
    } else if (strcmp(ap, "VALID") != 0) {
        return ox_fail(cx, "unknown auto_pad '%s'", ap);
    }
    return true;
}

/* The window as 2-D attribute lists (a 1-D window gets a unit height). */
static void window2d(const window *w, int64_t k[2], int64_t st[2], int64_t dil[2], int64_t pad[4])
{
    if (w->nsp == 2) {
        memcpy(k, w->k, 2 * sizeof *k);
        memcpy(st, w->stride, 2 * sizeof *st);
        memcpy(dil, w->dil, 2 * sizeof *dil);
        pad[0] = w->pad[0], pad[1] = w->pad[1], pad[2] = w->pad[2], pad[3] = w->pad[3];
    } else {
        k[0] = st[0] = dil[0] = 1;
        k[1] = w->k[0], st[1] = w->stride[0], dil[1] = w->dil[0];
        pad[0] = pad[2] = 0;
        pad[1] = w->pad[0], pad[3] = w->pad[1];
    }
}

/* e (rank 3) with a unit axis inserted at 2, so 1-D ops run as 2-D. */
static ir_expr *to2d(ox_ctx *cx, ir_expr *e)
{
    const ir_type *t = ox_type(e);
    int64_t s[4] = {t->shape[0], t->shape[1], 1, t->shape[2]};
    return ox_reshape(cx, e, 4, s);
}

/* Undoes to2d on a result. */
static ir_expr *from2d(ox_ctx *cx, ir_expr *e)
{
    if (!e)
        return NULL;
    const ir_type *t = ox_type(e);
    int64_t s[3] = {t->shape[0], t->shape[1], t->shape[3]};
    return ox_reshape(cx, e, 3, s);
}

/* The spatial rank of a Conv/pool input (1 to 3); -1 after reporting. */
static int spatial_rank(ox_ctx *cx, const ir_type *t)
{
    if (t->ndim >= 3 && t->ndim <= 5)
        return t->ndim - 2;
    ox_fail(cx, "input of rank %d: only 1-D, 2-D and 3-D (rank 3 to 5) data is supported", t->ndim);
    return -1;
}

/* The spatial rank (1 or 2) of a Conv or ConvTranspose's X and W, whose
 * types go to *xt and *wt; -1 after reporting. */
static int conv_operands(ox_ctx *cx, const char *op, ir_expr *const *in, int nin, const ir_type **xt,
                         const ir_type **wt)
{
    if (nin < 2 || !in[0] || !in[1])
        return ox_fail(cx, "%s needs X and W", op), -1;
    *xt = ox_type(in[0]), *wt = ox_type(in[1]);
    int nsp = spatial_rank(cx, *xt);
    if (nsp >= 0 && (*wt)->ndim != (*xt)->ndim)
        return ox_fail(cx, "weight of rank %d for data of rank %d", (*wt)->ndim, (*xt)->ndim), -1;
    return nsp;
}

/* y + B along the channels, where the node has B. */
static ir_expr *with_bias(ox_ctx *cx, ir_expr *y, ir_expr *const *in, int nin)
{
    if (!y || nin <= 2 || !in[2])
        return y;
    ir_expr *ba[2] = {y, in[2]};
    return ox_call(cx, IR_OP_BIAS_ADD, 2, ba, NULL);
}

/* A 3-D Conv: nn.conv3d takes ONNX's forms as they are (a value per axis;
 * the pads as the begins, then the ends). */
static bool conv3d(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, const window *w, ir_expr **out)
{
    ox_attrs at = ox_attrs_new(cx, IR_OP_CONV3D);
    ox_set_ints(cx, &at, IR_CONV_STRIDES, 3, w->stride);
    ox_set_ints(cx, &at, IR_CONV_DILATION, 3, w->dil);
    ox_set_ints(cx, &at, IR_CONV_PADDING, 6, w->pad);
    ox_set_int(&at, IR_CONV_GROUPS, ox_attr_int(n, "group", 1));
    out[0] = with_bias(cx, ox_call(cx, IR_OP_CONV3D, 2, in, &at), in, nin);
    return out[0] != NULL;
}

bool ox_conv_conv(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    const ir_type *xt, *wt;
    int nsp = conv_operands(cx, "Conv", in, nin, &xt, &wt);
    if (nsp < 0)
        return false;
    window w;
    if (!read_window(cx, n, xt->shape + 2, wt->shape + 2, nsp, &w))
        return false;
    if (nsp == 3)
        return conv3d(cx, n, in, nin, &w, out);
    int64_t k[2], st[2], dil[2], pad[4];
    window2d(&w, k, st, dil, pad);
    ir_expr *x = nsp == 1 ? to2d(cx, in[0]) : in[0];
    ir_expr *wgt = nsp == 1 ? to2d(cx, in[1]) : in[1];
    ox_attrs at = ox_attrs_new(cx, IR_OP_CONV2D);
    ox_set_ints(cx, &at, IR_CONV_STRIDES, 2, st);
    ox_set_ints(cx, &at, IR_CONV_DILATION, 2, dil);
    ox_set_ints(cx, &at, IR_CONV_PADDING, 4, pad);
    ox_set_int(&at, IR_CONV_GROUPS, ox_attr_int(n, "group", 1));
    ir_expr *args[2] = {x, wgt};
    ir_expr *y = with_bias(cx, ox_call(cx, IR_OP_CONV2D, 2, args, &at), in, nin);
    out[0] = nsp == 1 ? from2d(cx, y) : y;
    return out[0] != NULL;
}

/* ConvTranspose: Relay's nn.conv2d_transpose (nn.conv1d_transpose for 1-D
 * data, nn.conv3d_transpose for 3-D) with ONNX's weight layout (C,
 * M / group, k...), which is Relay's IOHW (IOW, IODHW). The output's
 * extent per axis is stride * (in - 1) + output_padding + (k - 1) *
 * dilation + 1 - pads; output_shape and auto_pad SAME_* give the
 * total padding instead (ONNX puts the odd unit at the end for SAME_UPPER and
 * when output_shape is given, at the start for SAME_LOWER), or more output
 * padding where output_shape is longer than the padding-free output. */
bool ox_conv_conv_transpose(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out,
                            int nout)
{
    (void)nout;
    const ir_type *xt, *wt;
    int nsp = conv_operands(cx, "ConvTranspose", in, nin, &xt, &wt);
    if (nsp < 0)
        return false;
    /* kernel, strides, dilations and explicit pads (auto_pad checked there);
     * the pads are resolved below where output_shape or SAME_* says */
    window w;
    if (!read_window(cx, n, xt->shape + 2, wt->shape + 2, nsp, &w))
        return false;
    const char *ap = ox_attr_str(cx, n, "auto_pad", "NOTSET");
    bool same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
    int64_t v[6], opad[3] = {0, 0, 0};
    int no = ox_attr_ints(cx, n, "output_padding", v, 3);
    if (no >= 0 && no != nsp)
        return ox_fail(cx, "output_padding has %d values for %d spatial dims", no, nsp);
    for (int i = 0; i < no; i++) {
        if (v[i] < 0 || v[i] >= (w.stride[i] > w.dil[i] ? w.stride[i] : w.dil[i]))
            return ox_fail(cx, "output_padding must be below the stride or the dilation");
        opad[i] = v[i];
    }
    int ns = ox_attr_ints(cx, n, "output_shape", v, 5);
    if (ns >= 0 && ns != nsp && ns != nsp + 2)
        return ox_fail(cx, "output_shape has %d values for %d spatial dims", ns, nsp);
    for (int i = 0; i < nsp; i++) {
        int64_t full = w.stride[i] * (xt->shape[2 + i] - 1) + opad[i] + (w.k[i] - 1) * w.dil[i] + 1;
        int64_t oshape = ns >= 0 ? v[ns - nsp + i] : same ? xt->shape[2 + i] * w.stride[i] : -1;
        if (oshape < 0)
            continue;
        int64_t total = full - oshape, limit = w.stride[i] > w.dil[i] ? w.stride[i] : w.dil[i];
        /* a longer output than the padding-free one: the extra units come
         * as output padding (ONNX's reference pads with negative totals) */
        if (total < 0 && -total + opad[i] < limit) {
            opad[i] += -total;
            total = 0;
        } else if (total < 0) {
            return ox_fail(cx, "output_shape %lld is longer than the transposed convolution can make (%lld)",
                           (long long)oshape, (long long)full);
        }
        bool lower = same && ap[5] == 'L';
        w.pad[i] = lower ? total - total / 2 : total / 2;
        w.pad[i + nsp] = total - w.pad[i];
    }
    /* Relay's transposed convolutions take ONNX's forms: a value per axis,
     * and the pads as the begins, then the ends */
    ir_op_id op = nsp == 3 ? IR_OP_CONV3D_TRANSPOSE : nsp == 2 ? IR_OP_CONV2D_TRANSPOSE : IR_OP_CONV1D_TRANSPOSE;
    ox_attrs at = ox_attrs_new(cx, op);
    ox_set_ints(cx, &at, IR_CONVT_STRIDES, nsp, w.stride);
    ox_set_ints(cx, &at, IR_CONVT_DILATION, nsp, w.dil);
    ox_set_ints(cx, &at, IR_CONVT_PADDING, 2 * nsp, w.pad);
    ox_set_ints(cx, &at, IR_CONVT_OUTPUT_PADDING, nsp, opad);
    ox_set_int(&at, IR_CONVT_GROUPS, ox_attr_int(n, "group", 1));
    out[0] = with_bias(cx, ox_call(cx, op, 2, in, &at), in, nin);
    return out[0] != NULL;
}

bool ox_conv_pool(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    const ir_type *xt = ox_type(in[0]);
    int nsp = spatial_rank(cx, xt);
    if (nsp < 0)
        return false;
    bool avg = !strcmp(n->op_type, "AveragePool");
    if (!avg && ox_attr_int(n, "storage_order", 0) != 0)
        return ox_fail(cx, "storage_order=1 is not supported");
    window w;
    if (!read_window(cx, n, xt->shape + 2, NULL, nsp, &w))
        return false;
    /* 2-D attribute lists for 1-D and 2-D pools; 3-D pools take ONNX's as they are */
    int64_t k[2], st[2], dil[2], pad[4];
    window2d(&w, k, st, dil, pad);
    bool d3 = nsp == 3;
    ir_op_id op = avg ? (d3 ? IR_OP_AVG_POOL3D : IR_OP_AVG_POOL2D) : d3 ? IR_OP_MAX_POOL3D : IR_OP_MAX_POOL2D;
    int ns = d3 ? 3 : 2;
    ox_attrs at = ox_attrs_new(cx, op);
    ox_set_ints(cx, &at, IR_POOL_SIZE, ns, d3 ? w.k : k);
    ox_set_ints(cx, &at, IR_POOL_STRIDES, ns, d3 ? w.stride : st);
    ox_set_ints(cx, &at, IR_POOL_DILATION, ns, d3 ? w.dil : dil);
    ox_set_ints(cx, &at, IR_POOL_PADDING, 2 * ns, d3 ? w.pad : pad);
    ox_set_bool(&at, IR_POOL_CEIL_MODE, ox_attr_int(n, "ceil_mode", 0) != 0);
    if (avg)
        ox_set_bool(&at, IR_POOL_COUNT_INCLUDE_PAD, ox_attr_int(n, "count_include_pad", 0) != 0);
    ir_expr *x = nsp == 1 ? to2d(cx, in[0]) : in[0];
    ir_expr *y = ox_call(cx, op, 1, &x, &at);
    out[0] = nsp == 1 ? from2d(cx, y) : y;
    /* MaxPool's Indices output stays unset: using it is refused by name */
    return out[0] != NULL;
}

/* A reduction of e over axes first..ndim-1 (keepdims). */
static ir_expr *reduce_tail(ox_ctx *cx, ir_op_id op, ir_expr *e, int first)
{
    int nd = ox_type(e)->ndim;
    int64_t axes[IR_MAX_DIMS];
    for (int i = first; i < nd; i++)
        axes[i - first] = i;
    ox_attrs at = ox_attrs_new(cx, op);
    ox_set_ints(cx, &at, IR_REDUCE_AXIS, nd - first, axes);
    ox_set_bool(&at, IR_REDUCE_KEEPDIMS, true);
    return ox_call(cx, op, 1, &e, &at);
}

bool ox_conv_global_pool(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out,
                         int nout)
{
    const ir_type *xt = ox_type(in[0]);
    if (xt->ndim < 3)
        return ox_fail(cx, "input of rank %d (at least 3 is needed)", xt->ndim);
    bool avg = !strcmp(n->op_type, "GlobalAveragePool");
    if (avg && xt->ndim == 4)
        out[0] = ox_call1(cx, IR_OP_GLOBAL_AVG_POOL2D, in[0]);
    else
        out[0] = reduce_tail(cx, avg ? IR_OP_MEAN : IR_OP_MAX, in[0], 2);
    return out[0] != NULL;
}

/* A per-channel vector (C) shaped to broadcast along axis 1 of rank nd. */
static ir_expr *channel_vec(ox_ctx *cx, ir_expr *v, int nd)
{
    int64_t s[IR_MAX_DIMS];
    if (ox_type(v)->ndim != 1) {
        ox_fail(cx, "a per-channel input of rank %d (a vector is needed)", ox_type(v)->ndim);
        return NULL;
    }
    s[0] = ox_type(v)->shape[0];
    for (int i = 1; i < nd - 1; i++)
        s[i] = 1;
    return ox_reshape(cx, v, nd - 1, s);
}

/* (x - mean) / sqrt(var + eps) over axes first.. (biased variance); *mean
 * and *inv_sd (when not NULL) get the mean and 1 / sqrt(var + eps). */
static ir_expr *normalize_tail(ox_ctx *cx, ir_expr *x, int first, double eps, ir_expr **mean_out,
                               ir_expr **inv_sd)
{
    ir_expr *mean = reduce_tail(cx, IR_OP_MEAN, x, first);
    ir_expr *d = ox_call2(cx, IR_OP_SUBTRACT, x, mean);
    ir_expr *var = reduce_tail(cx, IR_OP_MEAN, ox_call2(cx, IR_OP_MULTIPLY, d, d), first);
    if (!var)
        return NULL;
    ir_dtype dt = ox_type(x)->dtype;
    ir_expr *sd = ox_call1(cx, IR_OP_SQRT, ox_call2(cx, IR_OP_ADD, var, ox_scalar(cx, dt, eps)));
    if (mean_out)
        *mean_out = mean;
    if (inv_sd)
        *inv_sd = ox_call2(cx, IR_OP_DIVIDE, ox_scalar(cx, dt, 1), sd);
    return ox_call2(cx, IR_OP_DIVIDE, d, sd);
}

bool ox_conv_batch_norm(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    if (nin < 5)
        return ox_fail(cx, "BatchNormalization needs X, scale, B, mean and var");
    if (ox_attr_int(n, "training_mode", 0) || (ox_attr(n, "is_test") && !ox_attr_int(n, "is_test", 0)))
        return ox_fail(cx, "training_mode=1 is not supported (inference only)");
    if (!ox_attr_int(n, "spatial", 1))
        return ox_fail(cx, "spatial=0 (statistics per element) is not supported");
    if (ox_type(in[0])->ndim < 2)
        return ox_fail(cx, "input of rank %d (at least 2 is needed)", ox_type(in[0])->ndim);
    ox_attrs at = ox_attrs_new(cx, IR_OP_BATCH_NORM);
    ox_set_float(&at, IR_NORM_EPSILON, ox_attr_float(n, "epsilon", 1e-5));
    ox_set_int(&at, IR_NORM_AXIS, 1);
    out[0] = ox_proj(cx, ox_call(cx, IR_OP_BATCH_NORM, 5, in, &at), 0);
    /* the running mean and variance outputs exist only in training */
    return out[0] != NULL;
}

bool ox_conv_instance_norm(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out,
                           int nout)
{
    if (nin < 3)
        return ox_fail(cx, "InstanceNormalization needs input, scale and B");
    int nd = ox_type(in[0])->ndim;
    if (nd < 3)
        return ox_fail(cx, "input of rank %d (at least 3 is needed)", nd);
    ir_expr *y = normalize_tail(cx, in[0], 2, ox_attr_float(n, "epsilon", 1e-5), NULL, NULL);
    y = ox_call2(cx, IR_OP_MULTIPLY, y, channel_vec(cx, in[1], nd));
    out[0] = ox_call2(cx, IR_OP_ADD, y, channel_vec(cx, in[2], nd));
    return out[0] != NULL;
}

bool ox_conv_layer_norm(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out,
                        int nout)
{
    int nd = ox_type(in[0])->ndim, axis;
    if (nin < 2 || !in[1])
        return ox_fail(cx, "LayerNormalization needs X and Scale");
    if (!ox_axis(cx, ox_attr_int(n, "axis", -1), nd, &axis))
        return false;
    if (ox_attr_int(n, "stash_type", 1) != 1)
        return ox_fail(cx, "stash_type other than float is not supported");
    const ir_type *st = ox_type(in[1]);
    bool want_stats = (nout > 1 && n->output[1] && *n->output[1]) || (nout > 2 && n->output[2] && *n->output[2]);
    if (axis == nd - 1 && st->ndim == 1 && !want_stats) {
        /* over the last axis it is Relay's nn.layer_norm (B defaults to 0) */
        ox_attrs at = ox_attrs_new(cx, IR_OP_LAYER_NORM);
        ox_set_int(&at, IR_NORM_AXIS, -1);
        ox_set_float(&at, IR_NORM_EPSILON, ox_attr_float(n, "epsilon", 1e-5));
        ir_expr *args[3] = {in[0], in[1], nin > 2 && in[2] ? in[2] : ox_filled(cx, st->dtype, 1, st->shape, 0)};
        out[0] = ox_call(cx, IR_OP_LAYER_NORM, 3, args, &at);
        return out[0] != NULL;
    }
    ir_expr *mean, *inv_sd;
    ir_expr *y = normalize_tail(cx, in[0], axis, ox_attr_float(n, "epsilon", 1e-5), &mean, &inv_sd);
    if (nout > 1)
        out[1] = mean;
    if (nout > 2)
        out[2] = inv_sd;
    y = ox_call2(cx, IR_OP_MULTIPLY, y, in[1]);
    if (nin > 2 && in[2])
        y = ox_call2(cx, IR_OP_ADD, y, in[2]);
    out[0] = y;
    return y != NULL;
}

bool ox_conv_softmax(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    ir_op_id op = !strcmp(n->op_type, "Softmax") ? IR_OP_SOFTMAX : IR_OP_LOG_SOFTMAX;
    const ir_type *t = ox_type(in[0]);
    int axis;
    if (!ox_axis(cx, ox_attr_int(n, "axis", cx->opset >= 13 ? -1 : 1), t->ndim, &axis))
        return false;
    ox_attrs at = ox_attrs_new(cx, op);
    ox_set_int(&at, IR_SOFTMAX_AXIS, cx->opset >= 13 ? axis : 1);
    if (cx->opset >= 13) {
        out[0] = ox_call(cx, op, 1, in, &at);
        return out[0] != NULL;
    }
    /* before opset 13 the input is coerced to 2-D at axis: the softmax runs
     * over all the axes from axis on */
    int64_t s[2] = {1, 1};
    for (int i = 0; i < t->ndim; i++)
        s[i >= axis] *= t->shape[i];
    ir_expr *x = ox_reshape(cx, in[0], 2, s);
    out[0] = ox_reshape(cx, ox_call(cx, op, 1, &x, &at), t->ndim, t->shape);
    return out[0] != NULL;
}

/* One-hot of the first maximum along axis: equal(iota, argmax). */
static ir_expr *hardmax_axis(ox_ctx *cx, ir_expr *x, int axis)
{
    const ir_type *t = ox_type(x);
    ox_attrs at = ox_attrs_new(cx, IR_OP_ARGMAX);
    int64_t ax = axis;
    ox_set_ints(cx, &at, IR_ARGREDUCE_AXIS, 1, &ax);
    ox_set_bool(&at, IR_ARGREDUCE_KEEPDIMS, true);
    ir_expr *am = ox_call(cx, IR_OP_ARGMAX, 1, &x, &at);
    int64_t s[IR_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++)
        s[i] = i == axis ? t->shape[i] : 1;
    ir_tensor *iota = ir_tensor_new(&cx->m->arena, IR_INT32, t->ndim, s);
    for (int64_t i = 0; i < t->shape[axis]; i++)
        ir_tensor_set_i64(iota, i, i);
    return ox_cast(cx, ox_call2(cx, IR_OP_EQUAL, ox_const(cx, iota), am), t->dtype);
}

bool ox_conv_hardmax(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    const ir_type *t = ox_type(in[0]);
    int axis;
    if (!ox_axis(cx, ox_attr_int(n, "axis", cx->opset >= 13 ? -1 : 1), t->ndim, &axis))
        return false;
    if (cx->opset >= 13) {
        out[0] = hardmax_axis(cx, in[0], axis);
        return out[0] != NULL;
    }
    int64_t s[2] = {1, 1};  /* coerced to 2-D at axis, as Softmax before opset 13 */
    for (int i = 0; i < t->ndim; i++)
        s[i >= axis] *= t->shape[i];
    out[0] = ox_reshape(cx, hardmax_axis(cx, ox_reshape(cx, in[0], 2, s), 1), t->ndim, t->shape);
    return out[0] != NULL;
}

/* where(x < 0, neg, x) */
static ir_expr *negative_part(ox_ctx *cx, ir_expr *x, ir_expr *neg)
{
    ir_expr *c = ox_call2(cx, IR_OP_LESS, x, ox_scalar(cx, ox_type(x)->dtype, 0));
    ir_expr *args[3] = {c, neg, x};
    return ox_call(cx, IR_OP_WHERE, 3, args, NULL);
}

/* alpha * (exp(x) - 1) */
static ir_expr *elu_neg(ox_ctx *cx, ir_expr *x, double alpha)
{
    ir_dtype dt = ox_type(x)->dtype;
    ir_expr *em1 = ox_call2(cx, IR_OP_SUBTRACT, ox_call1(cx, IR_OP_EXP, x), ox_scalar(cx, dt, 1));
    return ox_call2(cx, IR_OP_MULTIPLY, em1, ox_scalar(cx, dt, alpha));
}

/* max(0, min(1, alpha * x + beta)) */
static ir_expr *hard_sigmoid(ox_ctx *cx, ir_expr *x, double alpha, double beta)
{
    ir_dtype dt = ox_type(x)->dtype;
    ir_expr *l = ox_call2(cx, IR_OP_ADD, ox_call2(cx, IR_OP_MULTIPLY, x, ox_scalar(cx, dt, alpha)),
                          ox_scalar(cx, dt, beta));
    return ox_call2(cx, IR_OP_MAXIMUM, ox_call2(cx, IR_OP_MINIMUM, l, ox_scalar(cx, dt, 1)), ox_scalar(cx, dt, 0));
}

bool ox_conv_activation(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    const char *op = n->op_type;
    ir_expr *x = in[0];
    if (!x)
        return ox_fail(cx, "input X is required");
    ir_dtype dt = ox_type(x)->dtype;
    if (!ir_dtype_is_float(dt) && strcmp(op, "Shrink"))
        return ox_fail(cx, "%s of %s is not supported (float only)", op, ir_dtype_name(dt));
    ir_expr *y;
    if (!strcmp(op, "Relu")) {
        y = ox_call1(cx, IR_OP_RELU, x);
    } else if (!strcmp(op, "LeakyRelu")) {
        ox_attrs at = ox_attrs_new(cx, IR_OP_LEAKY_RELU);
        ox_set_float(&at, IR_LEAKY_RELU_ALPHA, ox_attr_float(n, "alpha", 0.01));
        y = ox_call(cx, IR_OP_LEAKY_RELU, 1, &x, &at);
    } else if (!strcmp(op, "PRelu")) {
        if (nin < 2 || !in[1])
            return ox_fail(cx, "PRelu needs slope");
        ir_expr *slope = in[1];
        const ir_type *st = ox_type(slope), *xt = ox_type(x);
        /* before opset 7 a 1-D slope runs along the channels */
        if (cx->opset < 7 && st->ndim == 1 && xt->ndim > 2 && st->shape[0] == xt->shape[1] && st->shape[0] != 1)
            slope = channel_vec(cx, slope, xt->ndim);
        y = negative_part(cx, x, ox_call2(cx, IR_OP_MULTIPLY, x, slope));
    } else if (!strcmp(op, "Elu")) {
        y = negative_part(cx, x, elu_neg(cx, x, ox_attr_float(n, "alpha", 1.0)));
    } else if (!strcmp(op, "Selu")) {
        double alpha = ox_attr_float(n, "alpha", 1.67326319217681884765625);
        double gamma = ox_attr_float(n, "gamma", 1.05070102214813232421875);
        ir_expr *c = ox_call2(cx, IR_OP_LESS_EQUAL, x, ox_scalar(cx, dt, 0));
        ir_expr *args[3] = {c, elu_neg(cx, x, alpha), x};
        y = ox_call2(cx, IR_OP_MULTIPLY, ox_call(cx, IR_OP_WHERE, 3, args, NULL), ox_scalar(cx, dt, gamma));
    } else if (!strcmp(op, "Sigmoid")) {
        y = ox_call1(cx, IR_OP_SIGMOID, x);
    } else if (!strcmp(op, "Tanh")) {
        y = ox_call1(cx, IR_OP_TANH, x);
    } else if (!strcmp(op, "HardSigmoid")) {
        y = hard_sigmoid(cx, x, ox_attr_float(n, "alpha", 0.2), ox_attr_float(n, "beta", 0.5));
    } else if (!strcmp(op, "HardSwish")) {
        y = ox_call2(cx, IR_OP_MULTIPLY, x, hard_sigmoid(cx, x, 1.0 / 6, 0.5));
    } else if (!strcmp(op, "ThresholdedRelu")) {
        ir_expr *c = ox_call2(cx, IR_OP_GREATER, x, ox_scalar(cx, dt, ox_attr_float(n, "alpha", 1.0)));
        ir_expr *args[3] = {c, x, ox_scalar(cx, dt, 0)};
        y = ox_call(cx, IR_OP_WHERE, 3, args, NULL);
    } else if (!strcmp(op, "Shrink")) {
        double lambd = ox_attr_float(n, "lambd", 0.5), bias = ox_attr_float(n, "bias", 0);
        ir_expr *hi = ox_call2(cx, IR_OP_GREATER, x, ox_scalar(cx, dt, lambd));
        ir_expr *a1[3] = {hi, ox_call2(cx, IR_OP_SUBTRACT, x, ox_scalar(cx, dt, bias)), ox_scalar(cx, dt, 0)};
        ir_expr *lo = ox_call2(cx, IR_OP_LESS, x, ox_scalar(cx, dt, -lambd));
        ir_expr *a2[3] = {lo, ox_call2(cx, IR_OP_ADD, x, ox_scalar(cx, dt, bias)), ox_call(cx, IR_OP_WHERE, 3, a1, NULL)};
        y = ox_call(cx, IR_OP_WHERE, 3, a2, NULL);
    } else {    /* Softplus: log(exp(x) + 1) */
        y = ox_call1(cx, IR_OP_LOG, ox_call2(cx, IR_OP_ADD, ox_call1(cx, IR_OP_EXP, x), ox_scalar(cx, dt, 1)));
    }
    out[0] = y;
    return y != NULL;
}

bool ox_conv_dropout(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    /* inference: the identity, and a mask of all true; a constant
     * training_mode=true with a nonzero ratio would drop values at random */
    double ratio = 0.5, training = 0;
    if (nin > 2 && in[2] && !ox_const_scalar(cx, in[2], "training_mode", &training))
        return false;
    if (nin > 1 && in[1] && !ox_const_scalar(cx, in[1], "ratio", &ratio))
        return false;
    if (training && ratio != 0)
        return ox_fail(cx, "training_mode=true drops values at random, which is not supported (inference only)");
    out[0] = in[0];
    if (nout > 1) {
        const ir_type *t = ox_type(in[0]);
        out[1] = ox_filled(cx, IR_BOOL, t->ndim, t->shape, 1);
    }
    return true;
}

/* ---- dense products ------------------------------------------------------ */

/* a (..., K) times w (N, K) → (..., N), any rank of a. */
static ir_expr *dense(ox_ctx *cx, ir_expr *a, ir_expr *w)
{
    return ox_call2(cx, IR_OP_DENSE, a, w);
}

static ir_expr *transpose2(ox_ctx *cx, ir_expr *e)
{
    int64_t p[2] = {1, 0};
    return ox_transpose(cx, e, 2, p);
}

bool ox_conv_gemm(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    if (nin < 2 || !in[0] || !in[1])
        return ox_fail(cx, "Gemm needs A and B");
    if (ox_type(in[0])->ndim != 2 || ox_type(in[1])->ndim != 2)
        return ox_fail(cx, "A and B must be matrices");
    ir_expr *a = ox_attr_int(n, "transA", 0) ? transpose2(cx, in[0]) : in[0];
    ir_expr *b = ox_attr_int(n, "transB", 0) ? in[1] : transpose2(cx, in[1]);
    ir_expr *y = dense(cx, a, b);
    if (!y)
        return false;
    ir_dtype dt = ox_type(y)->dtype;
    double alpha = ox_attr_float(n, "alpha", 1), beta = ox_attr_float(n, "beta", 1);
    if (alpha != 1)
        y = ox_call2(cx, IR_OP_MULTIPLY, y, ox_scalar(cx, dt, alpha));
    if (nin > 2 && in[2]) {
        ir_expr *c = beta != 1 ? ox_call2(cx, IR_OP_MULTIPLY, in[2], ox_scalar(cx, dt, beta)) : in[2];
        y = ox_add(cx, y, c);
    }
    out[0] = y;
    return y != NULL;
}

bool ox_conv_matmul(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    const ir_type *at = ox_type(in[0]), *bt = ox_type(in[1]);
    if (at->ndim < 1 || bt->ndim < 1)
        return ox_fail(cx, "MatMul of scalars");
    /* 1-D operands become matrices, and the axis they added goes at the end */
    int64_t as[IR_MAX_DIMS + 1], bs[IR_MAX_DIMS + 1];
    int na = at->ndim, nb = bt->ndim;
    memcpy(as, at->shape, (size_t)na * sizeof *as);
    memcpy(bs, bt->shape, (size_t)nb * sizeof *bs);
    ir_expr *a = in[0], *b = in[1];
    if (na == 1) {
        as[1] = as[0], as[0] = 1, na = 2;
        a = ox_reshape(cx, a, 2, as);
    }
    if (nb == 1) {
        bs[1] = 1, nb = 2;
        b = ox_reshape(cx, b, 2, bs);
    }
    int64_t m = as[na - 2], k = as[na - 1], nn = bs[nb - 1];
    if (bs[nb - 2] != k)
        return ox_fail(cx, "inner dims differ: %lld and %lld", (long long)k, (long long)bs[nb - 2]);
    /* the batch dims broadcast */
    int nbatch = (na > nb ? na : nb) - 2;
    int64_t batch[IR_MAX_DIMS], total = 1;
    for (int i = 0; i < nbatch; i++) {
        int ia = i - (nbatch - (na - 2)), ib = i - (nbatch - (nb - 2));
        int64_t da = ia >= 0 ? as[ia] : 1, db = ib >= 0 ? bs[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return ox_fail(cx, "batch dims %lld and %lld do not broadcast", (long long)da, (long long)db);
        batch[i] = da == 1 ? db : da;
        total *= batch[i];
    }
    ir_expr *y;
    if (nb == 2) {
        /* (..., M, K) x (K, N): one dense over all rows */
        int64_t s2[2] = {total * m, k};
        if (na != 2)
            a = ox_broadcast_to(cx, a, na, as), a = ox_reshape(cx, a, 2, s2);
        y = dense(cx, a, transpose2(cx, b));
    } else {
        int64_t full[IR_MAX_DIMS + 2];
        memcpy(full, batch, (size_t)nbatch * sizeof *full);
        full[nbatch] = m, full[nbatch + 1] = k;
        int64_t s3[3] = {total, m, k};
        a = ox_reshape(cx, ox_broadcast_to(cx, ox_reshape(cx, a, na, as), nbatch + 2, full), 3, s3);
        full[nbatch] = k, full[nbatch + 1] = nn;
        int64_t t3[3] = {total, k, nn};
        b = ox_reshape(cx, ox_broadcast_to(cx, b, nbatch + 2, full), 3, t3);
        ox_attrs bat = ox_attrs_new(cx, IR_OP_BATCH_MATMUL);
        ox_set_bool(&bat, IR_BMM_TRANSPOSE_B, false);
        ir_expr *args[2] = {a, b};
        y = ox_call(cx, IR_OP_BATCH_MATMUL, 2, args, &bat);
    }
    if (!y)
        return false;
    /* the result's shape: batch, then M and N unless they came from 1-D operands */
    int64_t rs[IR_MAX_DIMS + 2];
    int nr = 0;
    for (int i = 0; i < nbatch; i++)
        rs[nr++] = batch[i];
    if (at->ndim != 1)
        rs[nr++] = m;
    if (bt->ndim != 1)
        rs[nr++] = nn;
    out[0] = ox_reshape(cx, y, nr, rs);
    return out[0] != NULL;
}

/* ---- Resize, Upsample ------------------------------------------------------ */

/* The scales input (or attribute) of a Resize/Upsample as floats; false
 * after reporting. n gets how many (0 when the input is absent or empty). */
static bool resize_scales(ox_ctx *cx, const ir_expr *e, double *out, int *n)
{
    *n = 0;
    if (!e)
        return true;
    const ir_tensor *t = ox_value(e);
    if (!t)
        return ox_fail(cx, "input scales is computed at run time; only constant (static) values are supported");
    int64_t k = ir_tensor_numel(t);
    if (k != 0 && k != 4)
        return ox_fail(cx, "scales has %lld values; 4-D (NCHW) data needs 4", (long long)k);
    for (int64_t i = 0; i < k; i++)
        out[i] = ir_tensor_get(t, i);
    *n = (int)k;
    return true;
}

/* Resize (opsets 10-17) and Upsample (7-9): image.resize2d on NCHW data,
 * scaling H and W only. The output size is `sizes`, else floor(in * scale).
 * Relay maps output to input coordinates by the size ratio; ONNX by the
 * scale, which is the same wherever in * scale is whole. Upsample and
 * Resize-10 map asymmetrically with floor for nearest; cubic (opset 11
 * on) takes cubic_coeff_a and exclude_outside; tf_crop_and_resize is
 * refused by name. */
bool ox_conv_resize(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    (void)nout;
    if (nin < 1 || !in[0])
        return ox_fail(cx, "needs X");
    const ir_type *xt = ox_type(in[0]);
    if (xt->ndim != 4)
        return ox_fail(cx, "input of rank %d: only 4-D (NCHW) data is resized", xt->ndim);
    bool upsample = !strcmp(n->op_type, "Upsample"), legacy = upsample || cx->opset < 11;
    double sc[4] = {1, 1, 1, 1};
    int nsc = 0;
    int64_t size[4] = {-1, -1, -1, -1};
    if (upsample && cx->opset < 9) {
        const Onnx__AttributeProto *a = ox_attr(n, "scales");
        if (!a || a->n_floats != 4)
            return ox_fail(cx, "Upsample needs 4 scales");
        for (int i = 0; i < 4; i++)
            sc[i] = a->floats[i];
        nsc = 4;
    } else if (!resize_scales(cx, nin > (legacy ? 1 : 2) ? in[legacy ? 1 : 2] : NULL, sc, &nsc)) {
        return false;
    }
    if (!legacy && nin > 3 && in[3]) {
        int k = ox_const_ints(cx, in[3], "sizes", size, 4);
        if (k < 0)
            return false;
        if (k != 4)
            return ox_fail(cx, "sizes has %d values; 4-D (NCHW) data needs 4", k);
    } else if (nsc != 4) {
        return ox_fail(cx, "needs scales or sizes");
    }
    for (int i = 0; i < 4; i++) {
        if (size[i] < 0) {
            if (!(sc[i] > 0) || sc[i] * (double)xt->shape[i] > (double)OX_MAX_ELEMS)
                return ox_fail(cx, "scale %g is not a positive finite number in range", sc[i]);
            size[i] = (int64_t)floor((double)xt->shape[i] * sc[i]);
        }
        if (i < 2 && size[i] != xt->shape[i])
            return ox_fail(cx, "resizing the batch or channel axis is not supported");
        if (size[i] < 1)
            return ox_fail(cx, "an output extent of %lld", (long long)size[i]);
    }
    const char *mode = ox_attr_str(cx, n, "mode", "nearest");
    const char *coord = legacy ? "asymmetric" : ox_attr_str(cx, n, "coordinate_transformation_mode", "half_pixel");
    const char *near = legacy ? "floor" : ox_attr_str(cx, n, "nearest_mode", "round_prefer_floor");
    const char *method = !strcmp(mode, "nearest") ? "nearest_neighbor"
                         : !strcmp(mode, "linear") ? "linear"
                         : !strcmp(mode, "cubic") && !legacy ? "cubic" : NULL;
    if (!method)
        return ox_fail(cx, "mode '%s' is not supported (nearest, linear%s)", mode, legacy ? "" : ", cubic");
    if (!strcmp(coord, "tf_crop_and_resize"))
        return ox_fail(cx, "coordinate_transformation_mode tf_crop_and_resize is not supported");
    static const char *const coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                         "tf_half_pixel_for_nn"};
    static const char *const nears[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    bool known = false;
    for (size_t i = 0; i < sizeof coords / sizeof *coords; i++)
        known |= !strcmp(coord, coords[i]);
    if (!known)
        return ox_fail(cx, "unknown coordinate_transformation_mode '%s'", coord);
    known = false;
    for (size_t i = 0; i < sizeof nears / sizeof *nears; i++)
        known |= !strcmp(near, nears[i]);
    if (!known)
        return ox_fail(cx, "unknown nearest_mode '%s'", near);
    ox_attrs at = ox_attrs_new(cx, IR_OP_RESIZE2D);
    /* exclude_outside changes cubic weights only: linear taps outside the
     * image weigh as their clamped neighbours, nearest has no weights */
    if (!strcmp(method, "cubic")) {
        ox_set_float(&at, IR_RESIZE_CUBIC_ALPHA, ox_attr_float(n, "cubic_coeff_a", -0.75f));
        ox_set_int(&at, IR_RESIZE_CUBIC_EXCLUDE, ox_attr_int(n, "exclude_outside", 0) != 0);
    }
    ox_set_ints(cx, &at, IR_RESIZE_SIZE, 2, size + 2);
    ox_set_str(&at, IR_RESIZE_METHOD, method);
    ox_set_str(&at, IR_RESIZE_COORD_MODE, coord);
    ox_set_str(&at, IR_RESIZE_ROUNDING, strcmp(method, "nearest_neighbor") ? "" : near);
    out[0] = ox_call(cx, IR_OP_RESIZE2D, 1, in, &at);
    return out[0] != NULL;
}
