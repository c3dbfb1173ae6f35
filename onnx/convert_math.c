/* convert_math.c — ONNX's elementwise ops (numpy broadcasting is Relay's
 * too), the variadic Sum/Mean/Max/Min, Clip in its attribute (before opset
 * 11) and input forms, Where, Cast, the reductions in their attribute and
 * input (ReduceSum from opset 13) forms (ReduceProd is Relay's prod), and ArgMax/ArgMin, whose int64
 * results Relay computes as int32 and casts. */
#include <float.h>
#include <string.h>

#include "onnx/onnx.h"

typedef struct named_op {
    const char *onnx;
    ir_op_id op;
} named_op;

static bool lookup(const named_op *t, size_t n, const char *name, ir_op_id *out)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t[i].onnx, name)) {
            *out = t[i].op;
            return true;
        }
    return false;
}

static const named_op binary_ops[] = {
    {"Add", IR_OP_ADD}, {"Sub", IR_OP_SUBTRACT}, {"Mul", IR_OP_MULTIPLY}, {"Div", IR_OP_DIVIDE},
    {"Pow", IR_OP_POWER}, {"Equal", IR_OP_EQUAL}, {"Less", IR_OP_LESS}, {"Greater", IR_OP_GREATER},
    {"LessOrEqual", IR_OP_LESS_EQUAL}, {"GreaterOrEqual", IR_OP_GREATER_EQUAL}, {"And", IR_OP_LOGICAL_AND},
    {"Or", IR_OP_LOGICAL_OR}, {"Xor", IR_OP_NOT_EQUAL},
};

bool ox_conv_binary(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    ir_op_id op = IR_OP_ADD;
    lookup(binary_ops, sizeof binary_ops / sizeof *binary_ops, n->op_type, &op);
    if (nin != 2 || !in[0] || !in[1])
        return ox_fail(cx, "%s needs two inputs", n->op_type);
    ir_expr *a = in[0], *b = in[1];
    if (cx->opset < 7 && ox_attr_int(n, "broadcast", 0) && ox_attr(n, "axis")) {
        /* before opset 7, B's dims align with A's from `axis` on */
        const ir_type *at = ox_type(a), *bt = ox_type(b);
        int axis;
        if (!ox_axis(cx, ox_attr_int(n, "axis", 0), at->ndim, &axis))
            return false;
        if (axis + bt->ndim > at->ndim)
            return ox_fail(cx, "B of rank %d does not fit A of rank %d at axis %d", bt->ndim, at->ndim, axis);
        int64_t s[IR_MAX_DIMS];
        for (int i = 0; i < at->ndim; i++)
            s[i] = i >= axis && i < axis + bt->ndim ? bt->shape[i - axis] : 1;
        b = ox_reshape(cx, b, at->ndim - axis, s + axis);
    }
    /* Pow's exponent may have its own type (opset 12); Relay's power wants one */
    if (op == IR_OP_POWER)
        b = ox_cast(cx, b, ox_type(a)->dtype);
    if (op == IR_OP_ADD) {
        out[0] = ox_add(cx, a, b);
        return out[0] != NULL;
    }
    out[0] = ox_call2(cx, op, a, b);
    return out[0] != NULL;
}

static const named_op unary_ops[] = {
    {"Not", IR_OP_LOGICAL_NOT}, {"Abs", IR_OP_ABS}, {"Neg", IR_OP_NEGATIVE}, {"Exp", IR_OP_EXP},
    {"Log", IR_OP_LOG}, {"Sqrt", IR_OP_SQRT}, {"Erf", IR_OP_ERF}, {"Floor", IR_OP_FLOOR}, {"Ceil", IR_OP_CEIL},
};

bool ox_conv_unary(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    ir_op_id op;
    if (!strcmp(n->op_type, "Reciprocal"))
        out[0] = ox_call2(cx, IR_OP_DIVIDE, ox_scalar(cx, ox_type(in[0])->dtype, 1), in[0]);
    else if (lookup(unary_ops, sizeof unary_ops / sizeof *unary_ops, n->op_type, &op))
        out[0] = ox_call1(cx, op, in[0]);
    return out[0] != NULL;
}

bool ox_conv_variadic(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    const char *name = n->op_type;
    ir_op_id op = !strcmp(name, "Max") ? IR_OP_MAXIMUM : !strcmp(name, "Min") ? IR_OP_MINIMUM : IR_OP_ADD;
    if (nin < 1 || !in[0])
        return ox_fail(cx, "%s needs at least one input", name);
    ir_expr *y = in[0];
    for (int i = 1; i < nin; i++)
        y = ox_call2(cx, op, y, in[i]);
    if (y && !strcmp(name, "Mean") && nin > 1)
        y = ox_call2(cx, IR_OP_DIVIDE, y, ox_scalar(cx, ox_type(y)->dtype, nin));
    out[0] = y;
    return y != NULL;
}

/* Clip as maximum/minimum with the bounds, which works for every dtype and
 * for bounds computed at run time. */
bool ox_conv_clip(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    ir_expr *y = in[0];
    ir_dtype dt = ox_type(y)->dtype;
    ir_expr *lo = NULL, *hi = NULL;
    if (cx->opset < 11) {
        lo = ox_scalar(cx, dt, ox_attr_float(n, "min", -FLT_MAX));
        hi = ox_scalar(cx, dt, ox_attr_float(n, "max", FLT_MAX));
    } else {
        lo = nin > 1 ? in[1] : NULL;
        hi = nin > 2 ? in[2] : NULL;
    }
    const ir_tensor *lv = ox_value(lo), *hv = ox_value(hi);
    if (ir_dtype_is_float(dt) && lv && hv && ir_tensor_numel(lv) == 1 && ir_tensor_numel(hv) == 1) {
        /* constant bounds: Relay's clip (ReLU6 is the common case) */
        ox_attrs at = ox_attrs_new(cx, IR_OP_CLIP);
        ox_set_float(&at, IR_CLIP_A_MIN, ir_tensor_get(lv, 0));
        ox_set_float(&at, IR_CLIP_A_MAX, ir_tensor_get(hv, 0));
        out[0] = ox_call(cx, IR_OP_CLIP, 1, &y, &at);
        return out[0] != NULL;
    }
    if (lo)
        y = ox_call2(cx, IR_OP_MAXIMUM, y, lo);
    if (hi)
        y = ox_call2(cx, IR_OP_MINIMUM, y, hi);
    out[0] = y;
    return y != NULL;
}

bool ox_conv_where(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    if (nin != 3 || !in[0] || !in[1] || !in[2])
        return ox_fail(cx, "Where needs condition, X and Y");
    out[0] = ox_call(cx, IR_OP_WHERE, 3, in, NULL);
    return out[0] != NULL;
}

bool ox_conv_cast(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    ir_dtype dt;
    if (!strcmp(n->op_type, "CastLike")) {
        if (nin < 2 || !in[1])
            return ox_fail(cx, "CastLike needs input and target_type");
        out[0] = ox_cast(cx, in[0], ox_type(in[1])->dtype);
        return out[0] != NULL;
    }
    int64_t to = ox_attr_int(n, "to", 0);
    if (!ox_dtype((int32_t)to, &dt))
        return ox_fail(cx, "Cast to ONNX type %lld is not supported", (long long)to);
    out[0] = ox_cast(cx, in[0], dt);
    return out[0] != NULL;
}

/* ---- reductions --------------------------------------------------------- */

/* The reduction's axes (normalized; *n = 0 and *all when it covers every axis). */
static bool reduce_axes(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, int nd, int64_t *axes,
                        int *na, bool *noop)
{
    int64_t raw[IR_MAX_DIMS];
    int k;
    *noop = false;
    if (!strcmp(n->op_type, "ReduceSum") && cx->opset >= 13) {
        k = nin > 1 && in[1] ? ox_const_ints(cx, in[1], "axes", raw, IR_MAX_DIMS) : 0;
        if (nin > 1 && in[1] && k < 0)
            return false;
        if (k == 0 && ox_attr_int(n, "noop_with_empty_axes", 0))
            *noop = true;
    } else {
        k = ox_attr_ints(cx, n, "axes", raw, IR_MAX_DIMS);
        if (k < 0)
            k = 0;
    }
    if (k == 0) {   /* every axis */
        for (int i = 0; i < nd; i++)
            axes[i] = i;
        *na = nd;
        return true;
    }
    for (int i = 0; i < k; i++) {
        int a;
        if (!ox_axis(cx, raw[i], nd, &a))
            return false;
        axes[i] = a;
    }
    *na = k;
    return true;
}

static ir_expr *reduce(ox_ctx *cx, ir_op_id op, ir_expr *x, int na, const int64_t *axes, bool keep)
{
    ox_attrs at = ox_attrs_new(cx, op);
    ox_set_ints(cx, &at, IR_REDUCE_AXIS, na, axes);
    ox_set_bool(&at, IR_REDUCE_KEEPDIMS, keep);
    return ox_call(cx, op, 1, &x, &at);
}

bool ox_conv_reduce(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    const char *name = n->op_type + strlen("Reduce");
    ir_expr *x = in[0];
    int nd = ox_type(x)->ndim, na;
    int64_t axes[IR_MAX_DIMS];
    bool noop, keep = ox_attr_int(n, "keepdims", 1) != 0;
    if (!reduce_axes(cx, n, in, nin, nd, axes, &na, &noop))
        return false;
    if (noop) {
        out[0] = x;
        return true;
    }
    ir_expr *y;
    if (!strcmp(name, "Mean"))
        y = reduce(cx, IR_OP_MEAN, x, na, axes, keep);
    else if (!strcmp(name, "Sum"))
        y = reduce(cx, IR_OP_SUM, x, na, axes, keep);
    else if (!strcmp(name, "Max"))
        y = reduce(cx, IR_OP_MAX, x, na, axes, keep);
    else if (!strcmp(name, "Min"))
        y = reduce(cx, IR_OP_MIN, x, na, axes, keep);
    else if (!strcmp(name, "L1"))
        y = reduce(cx, IR_OP_SUM, ox_call1(cx, IR_OP_ABS, x), na, axes, keep);
    else if (!strcmp(name, "L2"))
        y = ox_call1(cx, IR_OP_SQRT, reduce(cx, IR_OP_SUM, ox_call2(cx, IR_OP_MULTIPLY, x, x), na, axes, keep));
    else if (!strcmp(name, "SumSquare"))
        y = reduce(cx, IR_OP_SUM, ox_call2(cx, IR_OP_MULTIPLY, x, x), na, axes, keep);
    else if (!strcmp(name, "Prod"))
        y = reduce(cx, IR_OP_PROD, x, na, axes, keep);
    else if (!strcmp(name, "LogSum"))
        y = ox_call1(cx, IR_OP_LOG, reduce(cx, IR_OP_SUM, x, na, axes, keep));
    else    /* LogSumExp */
        y = ox_call1(cx, IR_OP_LOG, reduce(cx, IR_OP_SUM, ox_call1(cx, IR_OP_EXP, x), na, axes, keep));
    out[0] = y;
    return y != NULL;
}

/* ArgMin is the ArgMax of the negation (exact for floats; the same ties). */
bool ox_conv_argreduce(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    ir_expr *x = in[0];
    int axis;
    if (!ox_axis(cx, ox_attr_int(n, "axis", 0), ox_type(x)->ndim, &axis))
        return false;
    if (!ir_dtype_is_float(ox_type(x)->dtype))
        return ox_fail(cx, "%s of %s is not supported (float only)", n->op_type, ir_dtype_name(ox_type(x)->dtype));
    if (!strcmp(n->op_type, "ArgMin"))
        x = ox_call1(cx, IR_OP_NEGATIVE, x);
    ox_attrs at = ox_attrs_new(cx, IR_OP_ARGMAX);
    int64_t ax = axis;
    ox_set_ints(cx, &at, IR_ARGREDUCE_AXIS, 1, &ax);
    ox_set_bool(&at, IR_ARGREDUCE_KEEPDIMS, ox_attr_int(n, "keepdims", 1) != 0);
    ox_set_bool(&at, IR_ARGREDUCE_SELECT_LAST_INDEX, ox_attr_int(n, "select_last_index", 0) != 0);
    out[0] = ox_cast(cx, ox_call(cx, IR_OP_ARGMAX, 1, &x, &at), IR_INT64);
    return out[0] != NULL;
}
