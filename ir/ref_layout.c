/* ref_layout.c — reference kernels of layout_transform and stack, and the
 * wrapper that runs a kernel written for NCHW/OIHW on tensors in another
 * order of the same letters (NHWC, HWIO...). The layout transform walks the
 * output and computes, for each element, the primal coordinate of every axis
 * letter, then the source element that holds it: a plain gather, written
 * for clarity rather than speed. */
#include <ctype.h>
#include <string.h>

#include "ir/ir.h"

bool ir_ref_layout_transform(const ir_ref_call *c)
{
    const ir_tensor *x = c->in[0];
    ir_tensor *o = c->out[0];
    ir_layout src, dst;
    if (ir_layout_parse(ir_attr_str(c->attrs, IR_LT_SRC_LAYOUT), &src) ||
        ir_layout_parse(ir_attr_str(c->attrs, IR_LT_DST_LAYOUT), &dst)) {
        su_buf_printf(c->err, "bad layout");
        return false;
    }
    int64_t xstride[IR_MAX_DIMS];
    int64_t s = 1;
    for (int i = x->ndim; i-- > 0;) {
        xstride[i] = s;
        s *= x->shape[i];
    }
    /* per axis, once: the primal letter it belongs to (0..25) and its
     * weight in that letter's coordinate (dst) or the factor it divides by
     * or takes the remainder of (src), so that the loop below does no
     * lookups: alter-layout folds a transform of every conv weight */
    int dl[IR_MAX_DIMS], sl[IR_MAX_DIMS];
    int64_t dmul[IR_MAX_DIMS], sf[IR_MAX_DIMS];
    bool supper[IR_MAX_DIMS];
    for (int i = 0; i < dst.n; i++) {
        char up = (char)toupper((unsigned char)dst.axis[i]);
        dl[i] = up - 'A';
        dmul[i] = isupper((unsigned char)dst.axis[i]) ? ir_layout_factor(&dst, up) : 1;
    }
    for (int i = 0; i < src.n; i++) {
        char up = (char)toupper((unsigned char)src.axis[i]);
        sl[i] = up - 'A';
        sf[i] = ir_layout_factor(&src, up);
        supper[i] = isupper((unsigned char)src.axis[i]);
    }
    size_t es = (size_t)ir_dtype_bytes(o->dtype);
    int64_t n = ir_tensor_numel(o), idx[IR_MAX_DIMS] = {0};
    for (int64_t k = 0; k < n; k++) {
        int64_t primal[26];
        for (int i = 0; i < dst.n; i++)
            primal[dl[i]] = 0;
        for (int i = 0; i < dst.n; i++)
            primal[dl[i]] += idx[i] * dmul[i];
        int64_t off = 0;
        for (int i = 0; i < src.n; i++)
            off += (supper[i] ? primal[sl[i]] / sf[i] : primal[sl[i]] % sf[i]) * xstride[i];
        memcpy((uint8_t *)o->data + (size_t)k * es, (const uint8_t *)x->data + (size_t)off * es, es);
        for (int i = o->ndim; i-- > 0 && ++idx[i] == o->shape[i];)
            idx[i] = 0;
    }
    return true;
}

/* The argument is a tuple, flattened: nin tensors of one shape. */
bool ir_ref_stack(const ir_ref_call *c)
{
    ir_tensor *o = c->out[0];
    int64_t axis = ir_attr_int(c->attrs, IR_STACK_AXIS);
    axis = axis < 0 ? axis + o->ndim : axis;
    int64_t outer = 1, inner = ir_dtype_bytes(o->dtype);
    for (int i = 0; i < o->ndim; i++) {
        if (i < axis)
            outer *= o->shape[i];
        else if (i > axis)
            inner *= o->shape[i];
    }
    uint8_t *d = o->data;
    for (int64_t r = 0; r < outer; r++)
        for (int k = 0; k < c->nin; k++, d += inner)
            memcpy(d, (const uint8_t *)c->in[k]->data + r * inner, (size_t)inner);
    return true;
}

/* t permuted: canonical axis i of the result is axis pos[i] of t (to), or
 * the reverse (from the canonical tensor c into t). */
static void permute4(const ir_tensor *src, ir_tensor *dst, const int pos[4], bool to)
{
    const ir_tensor *lay = to ? src : dst, *can = to ? dst : src;
    int64_t st[4], s = 1;
    for (int i = 4; i-- > 0;) {
        st[i] = s;
        s *= lay->shape[i];
    }
    size_t es = (size_t)ir_dtype_bytes(src->dtype);
    int64_t n = ir_tensor_numel(can), idx[4] = {0};
    for (int64_t k = 0; k < n; k++) {
        int64_t off = 0;
        for (int i = 0; i < 4; i++)
            off += idx[i] * st[pos[i]];
        if (to)
            memcpy((uint8_t *)dst->data + (size_t)k * es, (const uint8_t *)src->data + (size_t)off * es, es);
        else
            memcpy((uint8_t *)dst->data + (size_t)off * es, (const uint8_t *)src->data + (size_t)k * es, es);
        for (int i = 4; i-- > 0 && ++idx[i] == can->shape[i];)
            idx[i] = 0;
    }
}

/* A heap copy of t with its axes in canonical order. */
static ir_tensor *to_canonical(const ir_tensor *t, const int pos[4])
{
    int64_t shape[4];
    for (int i = 0; i < 4; i++)
        shape[i] = t->shape[pos[i]];
    ir_tensor *c = ir_tensor_alloc(t->dtype, 4, shape);
    if (c)
        permute4(t, c, pos, true);
    return c;
}

bool ir_ref_in_layouts(const ir_ref_call *c, const int *const *in_pos, const int *out_pos, ir_ref_fn fn)
{
    const ir_tensor *ins[8];
    ir_tensor *tmp[8] = {0}, *out = NULL;
    bool okk = c->nin <= 8;
    for (int i = 0; okk && i < c->nin; i++) {
        ins[i] = c->in[i];
        if (in_pos[i] && !(ins[i] = tmp[i] = to_canonical(c->in[i], in_pos[i])))
            okk = false;
    }
    int64_t shape[4];
    for (int i = 0; okk && i < 4; i++)
        shape[i] = c->out[0]->shape[out_pos[i]];
    if (okk && !(out = ir_tensor_alloc(c->out[0]->dtype, 4, shape)))
        okk = false;
    if (!okk) {
        su_buf_printf(c->err, "out of memory");
    } else {
        ir_ref_call cc = *c;
        cc.in = ins;
        cc.out = &out;
        okk = fn(&cc);
        if (okk)
            permute4(out, c->out[0], out_pos, false);
    }
    for (int i = 0; i < 8; i++)
        ir_tensor_free(tmp[i]);
    ir_tensor_free(out);
    return okk;
}
