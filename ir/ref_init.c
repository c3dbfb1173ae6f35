/* ref_init.c — reference kernels of zeros_like, ones_like, full and
 * shape_of. Results arrive zeroed, so zeros_like has nothing to do. full
 * converts its fill value as cast does: integers exactly (wrapping to the
 * target's width), anything with a float through double. */
#include "ir/ir.h"

/* Every element of o set to element 0 of v, converted as cast converts. */
static void fill(ir_tensor *o, const ir_tensor *v)
{
    int64_t n = ir_tensor_numel(o);
    bool ints = !ir_dtype_is_float(v->dtype) && !ir_dtype_is_float(o->dtype);
    int64_t iv = ir_tensor_get_i64(v, 0);
    double fv = ir_tensor_get(v, 0);
    for (int64_t i = 0; i < n; i++) {
        if (ints)
            ir_tensor_set_i64(o, i, iv);
        else
            ir_tensor_set(o, i, fv);
    }
}

bool ir_ref_init(const ir_ref_call *c)
{
    ir_tensor *o = c->out[0];
    switch (c->op->id) {
    case IR_OP_ZEROS_LIKE:
        return true;
    case IR_OP_ONES_LIKE: {
        int64_t n = ir_tensor_numel(o);
        for (int64_t i = 0; i < n; i++)
            ir_tensor_set_i64(o, i, 1);
        return true;
    }
    case IR_OP_FULL:
        fill(o, c->in[0]);
        return true;
    case IR_OP_ARANGE: {
        /* start + i * step in double, rounded into the dtype */
        double start = ir_tensor_get(c->in[0], 0), step = ir_tensor_get(c->in[2], 0);
        for (int64_t i = 0; i < o->shape[0]; i++)
            ir_tensor_set(o, i, start + (double)i * step);
        return true;
    }
    case IR_OP_SHAPE_OF:
        for (int i = 0; i < c->in[0]->ndim; i++)
            ir_tensor_set_i64(o, i, c->in[0]->shape[i]);
        return true;
    default:
        su_buf_printf(c->err, "not an init op");
        return false;
    }
}
