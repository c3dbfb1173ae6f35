/* ref_nchwc.c — the reference kernel of nn.contrib_conv2d_NCHWc: the data
 * and weight unblocked to NCHW/OIHW, conv2d's reference kernel, the result
 * blocked again. Three copies per call, written for agreement with conv2d
 * rather than speed (the interpreter is the oracle, not the product). */
#include <string.h>

#include "ir/ir.h"

bool ir_ref_relayout(const ir_tensor *x, const char *src, const char *dst, ir_tensor *out, su_buf *err)
{
    ir_attr_val v[2] = {{.kind = IR_AV_STR, .s = src}, {.kind = IR_AV_STR, .s = dst}};
    ir_attrs at = {2, v};
    ir_ref_call c = {ir_op_get(IR_OP_LAYOUT_TRANSFORM), &at, 1, &x, 1, &out, err};
    return ir_ref_layout_transform(&c);
}

bool ir_ref_conv2d_nchwc(const ir_ref_call *c)
{
    int64_t ib, wib, wob, ob;
    if (!ir_nchwc_blocks(c->attrs, &ib, &wib, &wob, &ob)) {
        su_buf_printf(c->err, "bad layouts");
        return false;
    }
    const ir_tensor *d = c->in[0], *w = c->in[1];
    ir_tensor *o = c->out[0];
    int64_t ds[4] = {d->shape[0], d->shape[1] * ib, d->shape[2], d->shape[3]};
    int64_t ws[4] = {w->shape[0] * wob, w->shape[1] * wib, w->shape[2], w->shape[3]};
    int64_t os[4] = {o->shape[0], o->shape[1] * ob, o->shape[2], o->shape[3]};
    ir_tensor *pd = ir_tensor_alloc(d->dtype, 4, ds), *pw = ir_tensor_alloc(w->dtype, 4, ws);
    ir_tensor *po = ir_tensor_alloc(o->dtype, 4, os);
    bool okk = pd && pw && po;
    if (!okk)
        su_buf_printf(c->err, "out of memory");
    okk = okk && ir_ref_relayout(d, ir_attr_str(c->attrs, IR_CONV_DATA_LAYOUT), "NCHW", pd, c->err) &&
          ir_ref_relayout(w, ir_attr_str(c->attrs, IR_CONV_KERNEL_LAYOUT), "OIHW", pw, c->err);
    if (okk) {
        ir_attr_val vals[16];
        ir_attrs pa;
        ir_nchwc_plain_attrs(c->attrs, vals, &pa);
        const ir_tensor *ins[2] = {pd, pw};
        ir_ref_call cc = {ir_op_get(IR_OP_CONV2D), &pa, 2, ins, 1, &po, c->err};
        char dst[32];
        snprintf(dst, sizeof dst, "NCHW%lldc", (long long)ob);
        okk = ir_ref_conv2d(&cc) && ir_ref_relayout(po, "NCHW", dst, o, c->err);
    }
    ir_tensor_free(pd);
    ir_tensor_free(pw);
    ir_tensor_free(po);
    return okk;
}

bool ir_ref_blocked(const ir_ref_call *c, int idx, int oidx, ir_ref_fn plain)
{
    const char *lay = ir_attr_str(c->attrs, idx);
    int64_t b = ir_layout_blocked(c->attrs, idx, oidx);
    const ir_tensor *d = c->in[0];
    ir_tensor *o = c->out[0];
    int64_t ds[4] = {d->shape[0], d->shape[1] * b, d->shape[2], d->shape[3]};
    int64_t os[4] = {o->shape[0], o->shape[1] * b, o->shape[2], o->shape[3]};
    ir_tensor *pd = ir_tensor_alloc(d->dtype, 4, ds), *po = ir_tensor_alloc(o->dtype, 4, os);
    bool okk = b > 0 && pd && po;
    if (!okk)
        su_buf_printf(c->err, b ? "out of memory" : "bad layout");
    if (okk && (okk = ir_ref_relayout(d, lay, "NCHW", pd, c->err))) {
        ir_attr_val vals[16];
        ir_attrs pa;
        ir_plain_layout_attrs(c->attrs, idx, oidx, vals, &pa);
        const ir_tensor *ins[1] = {pd};
        ir_ref_call cc = {c->op, &pa, 1, ins, 1, &po, c->err};
        okk = plain(&cc) && ir_ref_relayout(po, "NCHW", lay, o, c->err);
    }
    ir_tensor_free(pd);
    ir_tensor_free(po);
    return okk;
}
