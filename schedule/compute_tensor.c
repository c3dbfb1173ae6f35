/* compute_tensor.c — compute definitions of the elementwise ops: unary math
 * and activations, casts, broadcasting binary arithmetic, comparisons,
 * logic and where. Every one is out[i] = f(in[bcast(i)]), an injective
 * stage that lowering inlines into its consumer (or into the anchor's
 * epilogue). Integer divide and modulo are floor division, as TVM's
 * floor_divide; float min/max compare with < and > (NaN-oblivious, as the
 * SIMD instructions they become). */
#include <string.h>

#include "schedule/schedule.h"

/* f(x) for a unary op. */
static const sch_expr *unary(sch_cctx *cx, ir_op_id op, const sch_expr *x, ir_dtype out_dt)
{
    su_arena *a = cx->a;
    ir_dtype dt = x->dtype;
    bool fl = ir_dtype_is_float(dt);
    switch (op) {
    case IR_OP_RELU: return sch_max(a, x, sch_const(a, dt, 0));
    case IR_OP_LEAKY_RELU:
        return sch_select(a, sch_bin(a, SCH_GT, x, sch_const(a, dt, 0)), x,
                          sch_mul(a, x, sch_const(a, dt, sch_attr_float(cx, "alpha"))));
    case IR_OP_NEGATIVE: return sch_sub(a, sch_const(a, dt, 0), x);
    case IR_OP_ABS:
        return fl ? sch_call1(a, SCH_FN_FABS, x)
                  : sch_select(a, sch_bin(a, SCH_LT, x, sch_const(a, dt, 0)), sch_sub(a, sch_const(a, dt, 0), x), x);
    case IR_OP_EXP: return sch_call1(a, SCH_FN_EXP, x);
    case IR_OP_LOG: return sch_call1(a, SCH_FN_LOG, x);
    case IR_OP_SQRT: return sch_call1(a, SCH_FN_SQRT, x);
    case IR_OP_RSQRT: return sch_div(a, sch_const(a, dt, 1), sch_call1(a, SCH_FN_SQRT, x));
    case IR_OP_TANH: return sch_call1(a, SCH_FN_TANH, x);
    case IR_OP_SIGMOID:
        return sch_div(a, sch_const(a, dt, 1),
                       sch_add(a, sch_const(a, dt, 1), sch_call1(a, SCH_FN_EXP, sch_sub(a, sch_const(a, dt, 0), x))));
    case IR_OP_ERF: return sch_call1(a, SCH_FN_ERF, x);
    /* integers are their own floor and ceil; ceil(x) = -floor(-x) keeps the
     * intrinsic table (and the cost model's features) as it is */
    case IR_OP_FLOOR: return fl ? sch_call1(a, SCH_FN_FLOOR, x) : x;
    case IR_OP_CEIL:
        return fl ? sch_sub(a, sch_const(a, dt, 0), sch_call1(a, SCH_FN_FLOOR, sch_sub(a, sch_const(a, dt, 0), x))) : x;
    case IR_OP_CLIP: {
        /* as TVM: max(min(x, a_max), a_min), bounds converted to the dtype */
        const sch_expr *lo = sch_const(a, dt, sch_attr_float(cx, "a_min"));
        const sch_expr *hi = sch_const(a, dt, sch_attr_float(cx, "a_max"));
        return sch_max(a, sch_min(a, x, hi), lo);
    }
    case IR_OP_CAST: return sch_cast(a, out_dt, x);
    case IR_OP_COPY: return x;
    case IR_OP_LOGICAL_NOT: return sch_not(a, x);
    default: return NULL;
    }
}

bool sch_compute_unary(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    const ir_op_def *op = ir_call_op(cx->call);
    const ir_type *ot = sch_out_type(cx, 0);
    if (!ir_dtype_is_float(in[0]->dtype) &&
        (op->id == IR_OP_EXP || op->id == IR_OP_LOG || op->id == IR_OP_SQRT || op->id == IR_OP_RSQRT ||
         op->id == IR_OP_TANH || op->id == IR_OP_SIGMOID || op->id == IR_OP_ERF))
        return sch_cctx_error(cx, "%s of %s is not supported", op->name, ir_dtype_name(in[0]->dtype));
    sch_tensor *t = sch_stage_like(cx, 0, NULL);
    t->body = unary(cx, op->id, sch_read_axes(cx->a, in[0], t), ot->dtype);
    out[0] = t;
    *nout = 1;
    return true;
}

bool sch_compute_binary(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    const ir_op_def *op = ir_call_op(cx->call);
    sch_tensor *t = sch_stage_like(cx, 0, NULL);
    const sch_expr *x = sch_read_axes(a, in[0], t), *y = sch_read_axes(a, in[1], t);
    sch_expr_kind k;
    switch (op->id) {
    case IR_OP_ADD: k = SCH_ADD; break;
    case IR_OP_SUBTRACT: k = SCH_SUB; break;
    case IR_OP_MULTIPLY: k = SCH_MUL; break;
    case IR_OP_DIVIDE: k = SCH_DIV; break;
    case IR_OP_MAXIMUM: k = SCH_MAX; break;
    case IR_OP_MINIMUM: k = SCH_MIN; break;
    case IR_OP_EQUAL: k = SCH_EQ; break;
    case IR_OP_NOT_EQUAL: k = SCH_NE; break;
    case IR_OP_LESS: k = SCH_LT; break;
    case IR_OP_LESS_EQUAL: k = SCH_LE; break;
    case IR_OP_GREATER: k = SCH_GT; break;
    case IR_OP_GREATER_EQUAL: k = SCH_GE; break;
    case IR_OP_LOGICAL_AND: k = SCH_AND; break;
    case IR_OP_LOGICAL_OR: k = SCH_OR; break;
    case IR_OP_POWER:
        if (!ir_dtype_is_float(x->dtype))
            return sch_cctx_error(cx, "power of %s is not supported", ir_dtype_name(x->dtype));
        t->body = sch_call(a, SCH_FN_POW, x->dtype, 2, (const sch_expr *[]){x, y});
        out[0] = t;
        *nout = 1;
        return true;
    default: return sch_cctx_error(cx, "not a binary op");
    }
    t->body = sch_bin(a, k, x, y);
    out[0] = t;
    *nout = 1;
    return true;
}

bool sch_compute_where(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *t = sch_stage_like(cx, 0, NULL);
    t->body = sch_select(a, sch_read_axes(a, in[0], t), sch_read_axes(a, in[1], t), sch_read_axes(a, in[2], t));
    out[0] = t;
    *nout = 1;
    return true;
}
