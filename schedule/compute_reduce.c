/* compute_reduce.c — compute definitions of the reductions: sum, max and
 * min (one reduction stage), mean (a sum and an elementwise division) and
 * argmax, which needs no tuple-valued reduction: a max stage, then the
 * smallest index at which the input equals that max (the largest with
 * select_last_index). Reduced axes follow the type relation: the axes
 * named by `axis`, or all the others with exclude; all when axis is None or
 * []. */
#include <string.h>

#include "schedule/schedule.h"

#define VAR(v) sch_varref(a, v)
#define I(v) sch_int(a, v)

/* Which axes of x the call reduces. */
static void reduced_axes(sch_cctx *cx, const sch_tensor *x, bool *red)
{
    int64_t axes[IR_MAX_DIMS];
    int n = sch_attr_ints(cx, "axis", axes, IR_MAX_DIMS);
    bool exclude = n > 0 && sch_attr_bool(cx, "exclude");
    for (int i = 0; i < x->ndim; i++)
        red[i] = n <= 0 || exclude;
    for (int i = 0; i < n; i++) {
        int64_t ax = axes[i] < 0 ? axes[i] + x->ndim : axes[i];
        red[ax] = !exclude;
    }
}

/* A reduction stage shaped like the call's result whose body reads x with
 * each reduced axis at a new reduction variable; *r gets the read. */
static sch_tensor *reduce_stage(sch_cctx *cx, sch_tensor *x, const bool *red, ir_dtype dt, const char *tag,
                                const sch_expr **read, const sch_expr **flat_r)
{
    su_arena *a = cx->a;
    bool keep = sch_attr_bool(cx, "keepdims");
    const ir_type *ot = sch_out_type(cx, 0);
    cx->tag = tag;
    sch_tensor *t = sch_stage_new(cx, dt, ot->ndim, ot->shape, NULL);
    const sch_expr *ix[IR_MAX_DIMS], *flat = I(0);
    int o = 0;
    for (int i = 0; i < x->ndim; i++) {
        if (red[i]) {
            char name[16];
            snprintf(name, sizeof name, "r%d", i);
            sch_var *r = sch_stage_raxis(cx, t, name, x->shape[i]);
            ix[i] = VAR(r);
            flat = sch_add(a, sch_mul(a, flat, I(x->shape[i])), VAR(r));
            if (keep)
                o++;
        } else {
            ix[i] = VAR(t->axes[o++]);
        }
    }
    *read = sch_read(a, x, x->ndim, ix);
    if (flat_r)
        *flat_r = flat;
    return t;
}

bool sch_compute_reduce(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *x = in[0];
    ir_op_id op = ir_call_op(cx->call)->id;
    bool red[IR_MAX_DIMS];
    reduced_axes(cx, x, red);
    const sch_expr *read;
    sch_tensor *t = reduce_stage(cx, x, red, x->dtype, op == IR_OP_MEAN ? "sum" : NULL, &read, NULL);
    t->body = read;
    t->reduce = op == IR_OP_MAX ? SCH_RED_MAX : op == IR_OP_MIN ? SCH_RED_MIN : op == IR_OP_PROD ? SCH_RED_PROD
                                                                                           : SCH_RED_SUM;
    if (op == IR_OP_MEAN) {
        int64_t n = 1;
        for (int i = 0; i < x->ndim; i++)
            if (red[i])
                n *= x->shape[i];
        sch_tensor *m = sch_stage_like(cx, 0, NULL);
        m->body = sch_div(a, sch_read_axes(a, t, m), sch_const(a, x->dtype, (double)n));
        t = m;
    }
    out[0] = t;
    *nout = 1;
    return true;
}

bool sch_compute_argmax(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *x = in[0];
    bool red[IR_MAX_DIMS];
    reduced_axes(cx, x, red);
    bool last = sch_attr_bool(cx, "select_last_index");
    const sch_expr *read, *flat;
    sch_tensor *m = reduce_stage(cx, x, red, x->dtype, "max", &read, NULL);
    m->body = read;
    m->reduce = SCH_RED_MAX;
    sch_tensor *t = reduce_stage(cx, x, red, IR_INT32, NULL, &read, &flat);
    const sch_expr *mi[IR_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++)
        mi[i] = VAR(t->axes[i]);
    const sch_expr *mx = sch_read(a, m, t->ndim, mi);
    const sch_expr *hit = sch_bin(a, SCH_EQ, read, mx);
    /* a NaN is the maximum (max propagates it) and the answer, as in
     * torch.argmax; NaN equals nothing, so it is matched by being NaN */
    if (ir_dtype_is_float(x->dtype))
        hit = sch_bin(a, SCH_OR, hit,
                      sch_bin(a, SCH_AND, sch_bin(a, SCH_NE, read, read), sch_bin(a, SCH_NE, mx, mx)));
    t->body = sch_select(a, hit, sch_cast(a, IR_INT32, flat), last ? sch_const_int(a, IR_INT32, -1)
                                                                    : sch_const_int(a, IR_INT32, INT32_MAX));
    t->reduce = last ? SCH_RED_MAX : SCH_RED_MIN;
    out[0] = t;
    *nout = 1;
    return true;
}
