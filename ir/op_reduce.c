/* op_reduce.c — reductions: sum, mean, max, min (which keep the dtype) and
 * argmax (which gives int32 indices). One relation decides which axes go
 * away: the axes named by `axis` or, with exclude, all the others; keepdims
 * leaves them as extent 1. The FLOP count (one per input element) is the
 * shared input_elems of op_tensor.c. */
#include "ir/ir.h"

/* ---- schemas ------------------------------------------------------------ */

const ir_attr_schema ir_schema_reduce = IR_SCHEMA(
    {"axis", IR_AT_INTS_OPT, "None"},
    {"keepdims", IR_AT_BOOL, "False"},
    {"exclude", IR_AT_BOOL, "False"});

/* TVM's ArgReduceAttrs: select_last_index comes before exclude. It does not
 * change the type. */
const ir_attr_schema ir_schema_argreduce = IR_SCHEMA(
    {"axis", IR_AT_INTS_OPT, "None"},
    {"keepdims", IR_AT_BOOL, "False"},
    {"select_last_index", IR_AT_BOOL, "False"},
    {"exclude", IR_AT_BOOL, "False"});

/* ---- relations ---------------------------------------------------------- */

/* The reduced type of argument 0 with result dtype dt (-1: the input's).
 * axis None or [] reduces every axis, whatever exclude says (as TVM's
 * GetReduceAxes); a negative axis counts from the end. */
static const ir_type *reduce_type(ir_rel_ctx *cx, const ir_type *const *args, const ir_attrs *at,
                                  int axis_idx, int keep_idx, int excl_idx, int dt)
{
    const ir_type *d = ir_rel_tensor(cx, args, 0);
    int64_t axes[IR_MAX_DIMS], shape[IR_MAX_DIMS];
    bool reduced[IR_MAX_DIMS];
    int n = 0, no = 0;
    if (!d)
        return NULL;
    if (!ir_attr_is_none(at, axis_idx) && (n = ir_attr_ints(at, axis_idx, axes, IR_MAX_DIMS)) < 0)
        return ir_rel_error(cx, "axis must be at most %d integers", IR_MAX_DIMS);
    bool exclude = n > 0 && ir_attr_bool(at, excl_idx);
    for (int i = 0; i < d->ndim; i++)
        reduced[i] = n == 0 || exclude;
    for (int i = 0; i < n; i++) {
        int ax;
        if (!ir_rel_axis(cx, axes[i], d->ndim, &ax))
            return NULL;
        reduced[ax] = !exclude;
    }
    bool keepdims = ir_attr_bool(at, keep_idx);
    for (int i = 0; i < d->ndim; i++)
        if (!reduced[i] || keepdims)
            shape[no++] = reduced[i] ? 1 : d->shape[i];
    return ir_tensor_type(cx->arena, dt < 0 ? d->dtype : (ir_dtype)dt, no, shape);
}

/* sum, mean, max, min. */
const ir_type *ir_rel_reduce(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                             const ir_attrs *attrs)
{
    return reduce_type(cx, args, attrs, IR_REDUCE_AXIS, IR_REDUCE_KEEPDIMS, IR_REDUCE_EXCLUDE, -1);
}

/* argmax: int32 indices, as TVM's ArgReduceRel. */
const ir_type *ir_rel_argreduce(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                                const ir_attrs *attrs)
{
    return reduce_type(cx, args, attrs, IR_ARGREDUCE_AXIS, IR_ARGREDUCE_KEEPDIMS, IR_ARGREDUCE_EXCLUDE, IR_INT32);
}
