/* op_tensor.c — elementwise ops: unary math, broadcasting binary arithmetic,
 * comparisons, logic, where, clip and cast. Their relations are the numpy
 * rules (ir_rel_broadcast_shapes) plus dtype checks; their FLOP count is one
 * per output element. Also home of the FLOP helpers that every family shares
 * (elemwise, zero, input_elems) and of the empty schema `none`. */
#include <string.h>

#include "ir/ir.h"

/* ---- schemas ------------------------------------------------------------ */

const ir_attr_schema ir_schema_none = {0, NULL};

/* TVM's ClipAttrs have no defaults: a_min and a_max are required. A schema
 * needs some default text, so 0f stands in for both. */
const ir_attr_schema ir_schema_clip = IR_SCHEMA(
    {"a_min", IR_AT_FLOAT, "0f", true},
    {"a_max", IR_AT_FLOAT, "0f", true});

/* dtype "" (TVM's null DataType) stands for "not given"; the relation rejects it. */
const ir_attr_schema ir_schema_cast = IR_SCHEMA({"dtype", IR_AT_STR, "\"\"", true});

/* ---- relations ---------------------------------------------------------- */

/* relu, exp, clip, leaky_relu, copy, ...: the result has the argument's type. */
const ir_type *ir_rel_unary(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                            const ir_attrs *attrs)
{
    return ir_rel_tensor(cx, args, 0);
}

/* Arguments first..first+1 as tensors of one dtype, broadcast together;
 * the result carries their dtype. Shared by arithmetic, compare, logic. */
static const ir_type *broadcast2(ir_rel_ctx *cx, const ir_type *const *args, int first)
{
    const ir_type *a = ir_rel_tensor(cx, args, first);
    const ir_type *b = a ? ir_rel_tensor(cx, args, first + 1) : NULL;
    if (!b)
        return NULL;
    if (a->dtype != b->dtype)
        return ir_rel_error(cx, "operand dtypes differ: %s and %s (shapes %s and %s)",
                            ir_dtype_name(a->dtype), ir_dtype_name(b->dtype),
                            ir_shape_str(cx->arena, a), ir_shape_str(cx->arena, b));
    int n;
    int64_t shape[IR_MAX_DIMS];
    if (!ir_rel_broadcast_shapes(cx, a, b, &n, shape))
        return NULL;
    return ir_tensor_type(cx->arena, a->dtype, n, shape);
}

/* add, subtract, multiply, divide, power, maximum, minimum. */
const ir_type *ir_rel_broadcast(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                                const ir_attrs *attrs)
{
    return broadcast2(cx, args, 0);
}

/* equal, less, ...: operands as for arithmetic, result bool. */
const ir_type *ir_rel_compare(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                              const ir_attrs *attrs)
{
    const ir_type *t = broadcast2(cx, args, 0);
    return t ? ir_tensor_type(cx->arena, IR_BOOL, t->ndim, t->shape) : NULL;
}

/* Argument i as a bool tensor, or NULL after saying which dtype it has. */
static const ir_type *bool_arg(ir_rel_ctx *cx, const ir_type *const *args, int i)
{
    const ir_type *t = ir_rel_tensor(cx, args, i);
    if (t && t->dtype != IR_BOOL)
        return ir_rel_error(cx, "argument %d must be bool, got %s %s", i, ir_dtype_name(t->dtype),
                            ir_shape_str(cx->arena, t));
    return t;
}

/* logical_and, logical_or: bool operands, broadcast, bool result. */
const ir_type *ir_rel_logical(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                              const ir_attrs *attrs)
{
    if (!bool_arg(cx, args, 0) || !bool_arg(cx, args, 1))
        return NULL;
    return broadcast2(cx, args, 0);
}

const ir_type *ir_rel_logical_not(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                                  const ir_attrs *attrs)
{
    return bool_arg(cx, args, 0);
}

/* where(cond, x, y): x and y share a dtype; all three broadcast together. */
const ir_type *ir_rel_where(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                            const ir_attrs *attrs)
{
    const ir_type *cond = bool_arg(cx, args, 0);
    const ir_type *xy = cond ? broadcast2(cx, args, 1) : NULL;
    if (!xy)
        return NULL;
    int n;
    int64_t shape[IR_MAX_DIMS];
    if (!ir_rel_broadcast_shapes(cx, cond, xy, &n, shape))
        return NULL;
    return ir_tensor_type(cx->arena, xy->dtype, n, shape);
}

const ir_type *ir_rel_cast(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                           const ir_attrs *attrs)
{
    const ir_type *t = ir_rel_tensor(cx, args, 0);
    if (!t)
        return NULL;
    const char *name = ir_attr_str(attrs, IR_CAST_DTYPE);
    ir_dtype dt;
    if (!*name)
        return ir_rel_error(cx, "dtype is required");
    if (!ir_dtype_parse(name, strlen(name), &dt))
        return ir_rel_error(cx, "unknown dtype \"%s\"", name);
    return ir_tensor_type(cx->arena, dt, t->ndim, t->shape);
}

/* ---- FLOP counts shared by all op families ------------------------------ */

/* Elements of a tensor type, or of all fields of a tuple type. */
static int64_t elems(const ir_type *t)
{
    if (!t)
        return 0;
    if (t->kind == IR_TY_TENSOR)
        return ir_type_numel(t);
    int64_t n = 0;
    if (t->kind == IR_TY_TUPLE)
        for (int i = 0; i < t->nfields; i++)
            n += elems(t->fields[i]);
    return n;
}

/* One operation per output element (arithmetic, activations, bias_add). */
int64_t ir_flops_elemwise(const ir_type *const *args, int nargs, const ir_attrs *attrs,
                          const ir_type *out)
{
    return elems(out);
}

/* Data movement only (reshape, cast, pad, ...). */
int64_t ir_flops_zero(const ir_type *const *args, int nargs, const ir_attrs *attrs,
                      const ir_type *out)
{
    return 0;
}

/* One operation per input element (reductions, global pooling). */
int64_t ir_flops_input_elems(const ir_type *const *args, int nargs, const ir_attrs *attrs,
                             const ir_type *out)
{
    return nargs > 0 ? elems(args[0]) : 0;
}
