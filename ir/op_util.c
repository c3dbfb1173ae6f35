/* op_util.c — helpers shared by the type relations of the op_*.c files:
 * reporting a type error in the name of the op being checked, fetching an
 * argument as a tensor, normalizing an axis and numpy broadcasting. Every
 * relation reports through ir_rel_error so that a message always starts with
 * the op's Relay name ("nn.conv2d: ...") and lands at the call's span. */
#include "ir/ir.h"

const ir_type *ir_rel_error(ir_rel_ctx *cx, const char *fmt, ...)
{
    /* Relations are also run by passes that only want to know whether a
     * rewrite type-checks; they may pass no diagnostics list. */
    if (!cx->diags)
        return NULL;
    su_buf msg = {0};
    va_list ap;
    va_start(ap, fmt);
    su_buf_vprintf(&msg, fmt, ap);
    va_end(ap);
    const char *name = cx->op ? cx->op->name : "type relation";
    su_error(cx->diags, cx->span, "%s: %s", name, su_buf_str(&msg));
    su_buf_free(&msg);
    return NULL;
}

const ir_type *ir_rel_tensor(ir_rel_ctx *cx, const ir_type *const *args, int i)
{
    const ir_type *t = args[i];
    if (!t)
        return ir_rel_error(cx, "argument %d has no type", i);
    if (t->kind != IR_TY_TENSOR)
        return ir_rel_error(cx, "argument %d must be a tensor, got %s", i, ir_type_str(cx->arena, t));
    if (t->ndim > IR_MAX_DIMS)
        return ir_rel_error(cx, "argument %d has rank %d, more than the %d supported", i, t->ndim,
                            IR_MAX_DIMS);
    return t;
}

bool ir_rel_axis(ir_rel_ctx *cx, int64_t axis, int ndim, int *out)
{
    if (axis < -(int64_t)ndim || axis >= ndim) {
        ir_rel_error(cx, "axis %lld is out of range for a tensor of rank %d", (long long)axis, ndim);
        return false;
    }
    *out = (int)(axis < 0 ? axis + ndim : axis);
    return true;
}

bool ir_rel_broadcast_shapes(ir_rel_ctx *cx, const ir_type *a, const ir_type *b, int *ndim, int64_t *out)
{
    int n = a->ndim > b->ndim ? a->ndim : b->ndim;
    if (n > IR_MAX_DIMS) {
        ir_rel_error(cx, "cannot broadcast shapes %s and %s: rank above %d", ir_shape_str(cx->arena, a),
                     ir_shape_str(cx->arena, b), IR_MAX_DIMS);
        return false;
    }
    /* Align the shapes at their last dimension; a missing leading dimension
     * counts as 1, and 1 stretches to the other side's extent (even 0). */
    for (int i = 0; i < n; i++) {
        int ia = a->ndim - n + i, ib = b->ndim - n + i;
        int64_t da = ia >= 0 ? a->shape[ia] : 1;
        int64_t db = ib >= 0 ? b->shape[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            ir_rel_error(cx, "cannot broadcast shapes %s and %s", ir_shape_str(cx->arena, a),
                         ir_shape_str(cx->arena, b));
            return false;
        }
        out[i] = da == 1 ? db : da;
    }
    *ndim = n;
    return true;
}
