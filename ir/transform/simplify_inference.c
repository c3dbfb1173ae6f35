/* simplify_inference.c — inference-time rewrites, as TVM's SimplifyInference:
 *   nn.batch_norm(x, g, b, mean, var).0 → x * s + (b - mean * s),
 *       s = g / sqrt(var + eps), both broadcast along `axis`
 *   .1 → mean and .2 → var (the moving statistics pass through at inference)
 *   nn.dropout(x).0 → x
 * layer_norm and softmax stay intact: they become single kernels later. When
 * the statistics are constants, constant folding turns s and the shift into
 * constants, and fold-scale-axis can push s into the conv weights. */
#include "ir/transform/transform.h"

ir_expr *tr_expand_trailing(ir_module *m, su_span sp, ir_expr *x, int n);

static ir_expr *call1(ir_module *m, su_span sp, ir_op_id op, ir_expr *a)
{
    return ir_op_call(m, sp, op, 1, &a, NULL);
}

static ir_expr *call2(ir_module *m, su_span sp, ir_op_id op, ir_expr *a, ir_expr *b)
{
    ir_expr *args[2] = {a, b};
    return ir_op_call(m, sp, op, 2, args, NULL);
}

static ir_expr *batch_norm_output(tr_rewriter *rw, ir_expr *bn, su_span sp)
{
    ir_module *m = rw->m;
    ir_expr *x = bn->u.call.args[0], *g = bn->u.call.args[1], *b = bn->u.call.args[2];
    ir_expr *mean = bn->u.call.args[3], *var = bn->u.call.args[4];
    const ir_type *xt = x->type;
    int axis = (int)ir_call_attr(bn, "axis")->i;
    if (axis < 0)
        axis += xt->ndim;
    double eps = ir_call_attr(bn, "epsilon")->f;
    bool center = ir_call_attr(bn, "center")->i != 0, scale = ir_call_attr(bn, "scale")->i != 0;
    ir_expr *epsc = ir_const(m, sp, ir_tensor_scalar(&m->arena, xt->dtype, eps));
    ir_expr *s = call1(m, sp, IR_OP_RSQRT, call2(m, sp, IR_OP_ADD, var, epsc));
    if (scale)
        s = call2(m, sp, IR_OP_MULTIPLY, s, g);
    ir_expr *shift = call2(m, sp, IR_OP_MULTIPLY, mean, s);
    shift = center ? call2(m, sp, IR_OP_SUBTRACT, b, shift) : call1(m, sp, IR_OP_NEGATIVE, shift);
    int trailing = xt->ndim - 1 - axis;
    if (trailing > 0) {
        s = tr_expand_trailing(m, sp, s, trailing);
        shift = tr_expand_trailing(m, sp, shift, trailing);
    }
    return call2(m, sp, IR_OP_ADD, call2(m, sp, IR_OP_MULTIPLY, x, s), shift);
}

static ir_expr *simplify(tr_rewriter *rw, ir_expr *e)
{
    if (e->kind != IR_PROJ)
        return e;
    ir_expr *t = e->u.proj.tuple;
    const ir_op_def *op = ir_call_op(t);
    if (op == ir_op_get(IR_OP_BATCH_NORM) && t->u.call.args[0]->type) {
        if (e->u.proj.index == 0)
            return batch_norm_output(rw, t, e->span);
        return t->u.call.args[2 + e->u.proj.index]; /* .1 mean, .2 var */
    }
    if (op == ir_op_get(IR_OP_DROPOUT) && e->u.proj.index == 0)
        return t->u.call.args[0];
    return e;
}

bool tr_simplify_inference(ir_module *m, const tr_options *o, su_diags *d)
{
    return tr_apply(m, simplify, NULL);
}
