/* op_nchwc.c — nn.contrib_conv2d_NCHWc, the convolution of the blocked
 * layouts (TVM's name and attributes): data in NCHW[x]c (rank 5, the last
 * axis x channels of one block), weight in OIHW[x]i[y]o (rank 6: blocks of
 * y output by x input channels), result in NCHW[y]c. It has conv2d's
 * attributes; its relation and reference kernel read the tensors as the
 * NCHW/OIHW ones they block and hand them to conv2d's, so that the two ops
 * cannot disagree on padding, strides or dilation. */
#include <string.h>

#include "ir/ir.h"

/* The block of layout s when it is exactly `plain` and then the sub-axis
 * `sub` ("NCHW8c": 8); 0 when s is not of that form. */
static int64_t block_of(const char *s, const char *plain, char sub)
{
    ir_layout l;
    int n = (int)strlen(plain);
    if (ir_layout_parse(s, &l) || l.n != n + 1 || memcmp(l.axis, plain, (size_t)n) || l.axis[n] != sub)
        return 0;
    return l.factor[n];
}

bool ir_nchwc_blocks(const ir_attrs *at, int64_t *ib, int64_t *wib, int64_t *wob, int64_t *ob)
{
    ir_layout k;
    const char *out = ir_attr_str(at, IR_CONV_OUT_LAYOUT);
    *ib = block_of(ir_attr_str(at, IR_CONV_DATA_LAYOUT), "NCHW", 'c');
    *wib = *wob = 0;
    if (!ir_layout_parse(ir_attr_str(at, IR_CONV_KERNEL_LAYOUT), &k) && k.n == 6 &&
        !memcmp(k.axis, "OIHWio", 6)) {
        *wib = k.factor[4];
        *wob = k.factor[5];
    }
    *ob = *out ? block_of(out, "NCHW", 'c') : *wob;
    return *ib > 0 && *wib > 0 && *ob > 0;
}

void ir_nchwc_plain_attrs(const ir_attrs *at, ir_attr_val *vals, ir_attrs *out)
{
    memcpy(vals, at->vals, sizeof *vals * (size_t)at->n);
    vals[IR_CONV_DATA_LAYOUT].s = "NCHW";
    vals[IR_CONV_KERNEL_LAYOUT].s = "OIHW";
    vals[IR_CONV_OUT_LAYOUT].s = "";
    out->n = at->n;
    out->vals = vals;
}

const ir_type *ir_rel_conv2d_nchwc(ir_rel_ctx *cx, const ir_type *const *args, int nargs, const ir_attrs *attrs)
{
    int64_t ib, wib, wob, ob;
    if (!ir_nchwc_blocks(attrs, &ib, &wib, &wob, &ob))
        return ir_rel_error(cx, "layouts data_layout=\"%s\", kernel_layout=\"%s\", out_layout=\"%s\": expects "
                            "NCHW[x]c, OIHW[x]i[y]o and NCHW[y]c (or \"\")", ir_attr_str(attrs, IR_CONV_DATA_LAYOUT),
                            ir_attr_str(attrs, IR_CONV_KERNEL_LAYOUT), ir_attr_str(attrs, IR_CONV_OUT_LAYOUT));
    if (ib != wib || ob != wob)
        return ir_rel_error(cx, "the weight's blocks (%lldi, %lldo) must match the data's %lldc and the output's %lldc",
                            (long long)wib, (long long)wob, (long long)ib, (long long)ob);
    if (ir_attr_int(attrs, IR_CONV_GROUPS) != 1)
        return ir_rel_error(cx, "groups=%lld: the blocked convolution is written for groups=1",
                            (long long)ir_attr_int(attrs, IR_CONV_GROUPS));
    const ir_type *d = ir_rel_tensor(cx, args, 0), *w = d ? ir_rel_tensor(cx, args, 1) : NULL;
    if (!w)
        return NULL;
    if (d->ndim != 5 || d->shape[4] != ib)
        return ir_rel_error(cx, "data must have rank 5 with %lld channels in its last axis, got %s", (long long)ib,
                            ir_shape_str(cx->arena, d));
    if (w->ndim != 6 || w->shape[4] != ib || w->shape[5] != ob)
        return ir_rel_error(cx, "weight must have rank 6 ending in (%lld, %lld), got %s", (long long)ib,
                            (long long)ob, ir_shape_str(cx->arena, w));
    /* the tensors as the NCHW/OIHW ones they block: conv2d's relation decides */
    int64_t ds[4] = {d->shape[0], d->shape[1] * ib, d->shape[2], d->shape[3]};
    int64_t ws[4] = {w->shape[0] * ob, w->shape[1] * ib, w->shape[2], w->shape[3]};
    const ir_type *plain[2] = {ir_tensor_type(cx->arena, d->dtype, 4, ds), ir_tensor_type(cx->arena, w->dtype, 4, ws)};
    ir_attr_val vals[16];
    ir_attrs pa;
    ir_nchwc_plain_attrs(attrs, vals, &pa);
    const ir_type *r = ir_rel_conv2d(cx, plain, 2, &pa);
    if (!r)
        return NULL;
    int64_t os[5] = {r->shape[0], r->shape[1] / ob, r->shape[2], r->shape[3], ob};
    return ir_tensor_type(cx->arena, r->dtype, 5, os);
}

/* 2 * every output element * the input channels and kernel taps it sums. */
int64_t ir_flops_conv2d_nchwc(const ir_type *const *args, int nargs, const ir_attrs *attrs, const ir_type *out)
{
    const ir_type *w = args[1];
    int64_t n = 1;
    for (int i = 0; i < out->ndim; i++)
        n *= out->shape[i];
    return 2 * n * w->shape[1] * w->shape[2] * w->shape[3] * w->shape[4];
}

/* ---- pooling on blocked data -------------------------------------------- */

int64_t ir_layout_blocked(const ir_attrs *at, int idx, int oidx)
{
    int64_t b = block_of(ir_attr_str(at, idx), "NCHW", 'c');
    const char *out = ir_attr_str(at, oidx);
    return b && (!*out || block_of(out, "NCHW", 'c') == b) ? b : 0;
}

void ir_plain_layout_attrs(const ir_attrs *at, int idx, int oidx, ir_attr_val *vals, ir_attrs *out)
{
    memcpy(vals, at->vals, sizeof *vals * (size_t)at->n);
    vals[idx].s = "NCHW";
    vals[oidx].s = "";
    out->n = at->n;
    out->vals = vals;
}

const ir_type *ir_rel_blocked(ir_rel_ctx *cx, const ir_type *const *args, int nargs, const ir_attrs *attrs, int idx,
                              int oidx, ir_rel_fn plain)
{
    int64_t b = ir_layout_blocked(attrs, idx, oidx);
    const ir_type *d = ir_rel_tensor(cx, args, 0);
    if (!d)
        return NULL;
    if (d->ndim != 5 || d->shape[4] != b)
        return ir_rel_error(cx, "data in layout \"%s\" must have rank 5 ending in %lld, got %s",
                            ir_attr_str(attrs, idx), (long long)b, ir_shape_str(cx->arena, d));
    int64_t ds[4] = {d->shape[0], d->shape[1] * b, d->shape[2], d->shape[3]};
    const ir_type *pargs[1] = {ir_tensor_type(cx->arena, d->dtype, 4, ds)};
    ir_attr_val vals[16];
    ir_attrs pa;
    ir_plain_layout_attrs(attrs, idx, oidx, vals, &pa);
    const ir_type *r = plain(cx, pargs, 1, &pa);
    if (!r)
        return NULL;
    int64_t os[5] = {r->shape[0], r->shape[1] / b, r->shape[2], r->shape[3], b};
    return ir_tensor_type(cx->arena, r->dtype, 5, os);
}
