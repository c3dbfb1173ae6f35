/* compute_nchwc.c — the compute definition of nn.contrib_conv2d_NCHWc:
 * out[n, ocb, oh, ow, oc] = sum over (icb, kh, kw, ic) of
 *   data[n, icb, oh*sh + kh*dh, ow*sw + kw*dw, ic] * w[ocb, icb, kh, kw, ic, oc]
 * with the padding a separate stage as conv2d's. The block axes come last
 * in both tensors, so the innermost output axis oc walks contiguous
 * weights and outputs: the axis a schedule vectorizes. Reduction axes are
 * the block's outer and inner parts (icb, ic), not one axis split by
 * division, so that every index is affine. */
#include <string.h>

#include "schedule/schedule.h"

#define VAR(v) sch_varref(a, v)
#define I(v) sch_int(a, v)

/* Strides, dilation and padding (top, left, bottom, right) as the relation
 * accepted them: one value stands for both axes, two for both sides. */
static void window(const ir_attrs *at, int64_t st[2], int64_t dil[2], int64_t pad[4])
{
    int64_t v[4];
    int n = ir_attr_ints(at, IR_CONV_STRIDES, v, 2);
    st[0] = v[0], st[1] = v[n - 1];
    n = ir_attr_ints(at, IR_CONV_DILATION, v, 2);
    dil[0] = v[0], dil[1] = v[n - 1];
    n = ir_attr_ints(at, IR_CONV_PADDING, v, 4);
    for (int i = 0; i < 4; i++)
        pad[i] = v[n == 4 ? i : i % n];
}

bool sch_compute_conv2d_nchwc(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    const ir_attrs *at = cx->call->u.call.attrs;
    int64_t ib, wib, wob, ob, st[2], dil[2], pad[4];
    if (!ir_nchwc_blocks(at, &ib, &wib, &wob, &ob))
        return sch_cctx_error(cx, "nn.contrib_conv2d_NCHWc: layouts not of the NCHW[x]c form");
    window(at, st, dil, pad);
    sch_tensor *data = in[0], *w = in[1], *src = data;
    int64_t H = data->shape[2], W = data->shape[3];
    if (pad[0] || pad[1] || pad[2] || pad[3]) {
        int64_t shape[5] = {data->shape[0], data->shape[1], H + pad[0] + pad[2], W + pad[1] + pad[3], ib};
        static const char *const names[] = {"n", "cb", "h", "w", "c"};
        cx->tag = "pad";
        sch_tensor *p = sch_stage_new(cx, data->dtype, 5, shape, names);
        const sch_expr *h = sch_sub(a, VAR(p->axes[2]), I(pad[0])), *x = sch_sub(a, VAR(p->axes[3]), I(pad[1]));
        const sch_expr *inside = sch_and(a, sch_and(a, sch_bin(a, SCH_GE, h, I(0)), sch_bin(a, SCH_LT, h, I(H))),
                                         sch_and(a, sch_bin(a, SCH_GE, x, I(0)), sch_bin(a, SCH_LT, x, I(W))));
        const sch_expr *ix[5] = {VAR(p->axes[0]), VAR(p->axes[1]), h, x, VAR(p->axes[4])};
        p->body = sch_select(a, inside, sch_read(a, data, 5, ix), sch_const(a, data->dtype, 0));
        src = p;
    }
    const ir_type *ot = sch_out_type(cx, 0);
    static const char *const names[] = {"n", "ocb", "oh", "ow", "oc"};
    sch_tensor *t = sch_stage_new(cx, ot->dtype, 5, ot->shape, names);
    sch_var *icb = sch_stage_raxis(cx, t, "icb", w->shape[1]);
    sch_var *kh = sch_stage_raxis(cx, t, "kh", w->shape[2]);
    sch_var *kw = sch_stage_raxis(cx, t, "kw", w->shape[3]);
    sch_var *ic = sch_stage_raxis(cx, t, "ic", ib);
    const sch_expr *dix[5] = {
        VAR(t->axes[0]), VAR(icb),
        sch_add(a, sch_mul(a, VAR(t->axes[2]), I(st[0])), sch_mul(a, VAR(kh), I(dil[0]))),
        sch_add(a, sch_mul(a, VAR(t->axes[3]), I(st[1])), sch_mul(a, VAR(kw), I(dil[1]))),
        VAR(ic),
    };
    const sch_expr *wix[6] = {VAR(t->axes[1]), VAR(icb), VAR(kh), VAR(kw), VAR(ic), VAR(t->axes[4])};
    t->body = sch_mul(a, sch_cast(a, ot->dtype, sch_read(a, src, 5, dix)), sch_cast(a, ot->dtype, sch_read(a, w, 6, wix)));
    t->reduce = SCH_RED_SUM;
    out[0] = t;
    *nout = 1;
    return true;
}

/* ---- pooling on blocked data ---------------------------------------------- */

int64_t sch_layout_block(const sch_cctx *cx, const char *name, const char *out_name)
{
    const ir_op_def *op = ir_call_op(cx->call);
    int idx = op ? ir_op_attr_index(op, name, strlen(name)) : -1, oidx = op ? ir_op_attr_index(op, out_name, strlen(out_name)) : -1;
    return cx->canonical || idx < 0 || oidx < 0 ? 0 : ir_layout_blocked(cx->call->u.call.attrs, idx, oidx);
}

bool sch_compute_blocked(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout, int64_t b,
                         sch_compute_fn fn)
{
    su_arena *a = cx->a;
    sch_tensor *d = in[0];
    int64_t shape[4] = {d->shape[0], d->shape[1] * b, d->shape[2], d->shape[3]};
    cx->tag = "unblocked";
    sch_tensor *u = sch_stage_new(cx, d->dtype, 4, shape, NULL);
    const sch_expr *c = VAR(u->axes[1]);
    const sch_expr *ix[5] = {VAR(u->axes[0]), sch_div(a, c, I(b)), VAR(u->axes[2]), VAR(u->axes[3]), sch_mod(a, c, I(b))};
    u->body = sch_read(a, d, 5, ix);
    /* the call as the plain definition sees it: its result unblocked */
    const ir_type *ot = sch_out_type(cx, 0);
    int64_t os[4] = {ot->shape[0], ot->shape[1] * b, ot->shape[2], ot->shape[3]};
    sch_cctx inner = sch_cctx_canonical(cx, ir_tensor_type(a, ot->dtype, 4, os));
    sch_tensor *res[2], *ins[1] = {u};
    int nres = 0;
    if (!fn(&inner, ins, 1, res, &nres))
        return false;
    sch_tensor *t = sch_stage_like(cx, 0, NULL);
    const sch_expr *rx[4] = {VAR(t->axes[0]), sch_add(a, sch_mul(a, VAR(t->axes[1]), I(b)), VAR(t->axes[4])),
                             VAR(t->axes[2]), VAR(t->axes[3])};
    t->body = sch_read(a, res[0], 4, rx);
    out[0] = t;
    *nout = 1;
    return true;
}
