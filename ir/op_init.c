/* op_init.c — ops that make a tensor from a shape rather than from data:
 * zeros_like, ones_like (the argument's type), full (a scalar fill value, a
 * constant shape and a dtype), shape_of (the argument's static shape as a
 * 1-D integer tensor) and arange (constant bounds). Shapes are static in
 * relay-tune, so all are known at compile time; a shape computed at run time
 * (TVM's dynamic full, arange of computed bounds) is refused by name. */
#include <math.h>
#include <string.h>

#include "ir/ir.h"

/* TVM's InitOpAttrs: shape (None only in the dynamic form), dtype ("" = the fill value's). */
const ir_attr_schema ir_schema_full = IR_SCHEMA(
    {"shape", IR_AT_INTS_OPT, "None"},
    {"dtype", IR_AT_STR, "\"\""});

const ir_attr_schema ir_schema_shape_of = IR_SCHEMA({"dtype", IR_AT_STR, "\"int32\""});

/* TVM's ArangeAttrs keep the bounds as expressions too; the arguments are
 * what counts, the attributes are read as written and unused. */
const ir_attr_schema ir_schema_arange = IR_SCHEMA(
    {"start", IR_AT_ANY, "None"},
    {"stop", IR_AT_ANY, "None"},
    {"step", IR_AT_ANY, "None"},
    {"dtype", IR_AT_STR, "\"float32\""});

/* The dtype attribute at idx, or dflt when it is "" (TVM's null DataType);
 * false after reporting an unknown name. */
static bool dtype_attr(ir_rel_ctx *cx, const ir_attrs *attrs, int idx, ir_dtype dflt, ir_dtype *out)
{
    const char *name = ir_attr_str(attrs, idx);
    *out = dflt;
    if (*name && !ir_dtype_parse(name, strlen(name), out)) {
        ir_rel_error(cx, "unknown dtype \"%s\"", name);
        return false;
    }
    return true;
}

const ir_type *ir_rel_full(ir_rel_ctx *cx, const ir_type *const *args, int nargs, const ir_attrs *attrs)
{
    const ir_type *fill = ir_rel_tensor(cx, args, 0);
    if (!fill)
        return NULL;
    if (fill->ndim != 0)
        return ir_rel_error(cx, "the fill value must be a scalar, not %s", ir_type_str(cx->arena, fill));
    if (ir_attr_is_none(attrs, IR_FULL_SHAPE))
        return ir_rel_error(cx, "the shape attribute is required (a shape computed at run time is not supported)");
    int64_t shape[IR_MAX_DIMS];
    int n = ir_attr_ints(attrs, IR_FULL_SHAPE, shape, IR_MAX_DIMS);
    if (n < 0)
        return ir_rel_error(cx, "shape has more than %d dimensions", IR_MAX_DIMS);
    for (int i = 0; i < n; i++)
        if (shape[i] < 0)
            return ir_rel_error(cx, "negative extent %lld in shape", (long long)shape[i]);
    ir_dtype dt;
    if (!dtype_attr(cx, attrs, IR_FULL_DTYPE, fill->dtype, &dt))
        return NULL;
    return ir_tensor_type(cx->arena, dt, n, shape);
}

const ir_type *ir_rel_shape_of(ir_rel_ctx *cx, const ir_type *const *args, int nargs, const ir_attrs *attrs)
{
    const ir_type *t = ir_rel_tensor(cx, args, 0);
    ir_dtype dt;
    if (!t || !dtype_attr(cx, attrs, IR_SHAPE_OF_DTYPE, IR_INT32, &dt))
        return NULL;
    if (!ir_dtype_is_int(dt))
        return ir_rel_error(cx, "dtype must be an integer type, not %s", ir_dtype_name(dt));
    int64_t n = t->ndim;
    return ir_tensor_type(cx->arena, dt, 1, &n);
}

int64_t ir_arange_length(double start, double stop, double step)
{
    double n = ceil((stop - start) / step);
    return n > 0 ? (int64_t)n : 0;
}

/* arange(start, stop, step, dtype): scalar constants; ceil((stop - start) / step) elements. */
const ir_type *ir_rel_arange(ir_rel_ctx *cx, const ir_type *const *args, int nargs, const ir_attrs *attrs)
{
    double v[3];
    for (int i = 0; i < 3; i++) {
        const ir_type *t = ir_rel_tensor(cx, args, i);
        if (!t)
            return NULL;
        if (t->ndim != 0)
            return ir_rel_error(cx, "start, stop and step must be scalars, argument %d is %s", i,
                                ir_type_str(cx->arena, t));
        const ir_expr *e = cx->arg_exprs ? cx->arg_exprs[i] : NULL;
        if (!e || e->kind != IR_CONST)
            return ir_rel_error(cx, "start, stop and step must be constants (an arange of bounds computed at run "
                                "time has a dynamic shape, which is not supported)");
        v[i] = ir_tensor_get(e->u.constant.value, 0);
    }
    ir_dtype dt;
    if (!dtype_attr(cx, attrs, IR_ARANGE_DTYPE, IR_FLOAT32, &dt))
        return NULL;
    if (!(v[2] != 0) || !isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]))
        return ir_rel_error(cx, "step must be non-zero and the bounds finite");
    int64_t n = ir_arange_length(v[0], v[1], v[2]);
    if (n > ((int64_t)1 << 40))
        return ir_rel_error(cx, "%lld elements are too many", (long long)n);
    return ir_tensor_type(cx->arena, dt, 1, &n);
}
