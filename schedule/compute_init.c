/* compute_init.c — compute definitions of zeros_like, ones_like, full,
 * shape_of and arange: stages whose value does not depend on the position's
 * data (a constant, the scalar fill value, the static shape chosen by the
 * output index, start + i * step), so lowering inlines them into their
 * consumers like any injective stage. */
#include "schedule/schedule.h"

bool sch_compute_init(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    const ir_op_def *op = ir_call_op(cx->call);
    sch_tensor *t = sch_stage_like(cx, 0, NULL);
    switch (op->id) {
    case IR_OP_ZEROS_LIKE:
    case IR_OP_ONES_LIKE:
        t->body = sch_const(a, t->dtype, op->id == IR_OP_ONES_LIKE);
        break;
    case IR_OP_FULL: {
        const sch_expr *v = sch_read(a, in[0], 0, NULL);
        t->body = v->dtype == t->dtype ? v : sch_cast(a, t->dtype, v);
        break;
    }
    case IR_OP_ARANGE: {
        /* start + i * step, computed in double (as the reference kernel) and converted once */
        const sch_expr *start = sch_cast(a, IR_FLOAT64, sch_read(a, in[0], 0, NULL));
        const sch_expr *step = sch_cast(a, IR_FLOAT64, sch_read(a, in[2], 0, NULL));
        const sch_expr *v = sch_add(a, start, sch_mul(a, sch_cast(a, IR_FLOAT64, sch_varref(a, t->axes[0])), step));
        t->body = t->dtype == IR_FLOAT64 ? v : sch_cast(a, t->dtype, v);
        break;
    }
    case IR_OP_SHAPE_OF: {
        /* shape[i] for output index i: a chain of selects over the rank */
        const sch_expr *v = sch_const(a, t->dtype, 0);
        for (int i = in[0]->ndim; i-- > 0;)
            v = sch_select(a, sch_bin(a, SCH_EQ, sch_varref(a, t->axes[0]), sch_int(a, i)),
                           sch_const_int(a, t->dtype, in[0]->shape[i]), v);
        t->body = v;
        break;
    }
    default:
        return sch_cctx_error(cx, "not an init op");
    }
    out[0] = t;
    *nout = 1;
    return true;
}
