/* canonicalize.c — rewrites ops into the smaller set that later stages know:
 * nn.bias_add(x, b, axis) becomes add(x, b') where b' is b with trailing unit
 * axes (expand_dims) so that numpy broadcasting lines it up with `axis`. */
#include "ir/transform/transform.h"

/* expand_dims(x, axis=1, num_newaxis=n) as a built call (n >= 1). */
ir_expr *tr_expand_trailing(ir_module *m, su_span sp, ir_expr *x, int n);

ir_expr *tr_expand_trailing(ir_module *m, su_span sp, ir_expr *x, int n)
{
    const ir_op_def *op = ir_op_get(IR_OP_EXPAND_DIMS);
    ir_attr_val *vals = su_arena_alloc(&m->arena, sizeof *vals * 2);
    vals[0] = (ir_attr_val){.kind = IR_AV_INT, .i = 1};
    vals[1] = (ir_attr_val){.kind = IR_AV_INT, .i = n};
    ir_attrs *at = su_arena_alloc(&m->arena, sizeof *at);
    at->n = op->schema->n;
    at->vals = vals;
    return ir_op_call(m, sp, IR_OP_EXPAND_DIMS, 1, &x, at);
}

static ir_expr *bias_add_to_add(tr_rewriter *rw, ir_expr *e)
{
    if (ir_call_op(e) != ir_op_get(IR_OP_BIAS_ADD))
        return e;
    const ir_type *xt = e->u.call.args[0]->type;
    if (!xt || xt->kind != IR_TY_TENSOR)
        return e;
    int64_t axis = ir_call_attr(e, "axis")->i;
    if (axis < 0)
        axis += xt->ndim;
    ir_expr *b = e->u.call.args[1];
    int trailing = xt->ndim - 1 - (int)axis;
    if (trailing > 0)
        b = tr_expand_trailing(rw->m, e->span, b, trailing);
    ir_expr *args[2] = {e->u.call.args[0], b};
    return ir_op_call(rw->m, e->span, IR_OP_ADD, 2, args, NULL);
}

bool tr_canonicalize(ir_module *m, const tr_options *o, su_diags *d)
{
    return tr_apply(m, bias_add_to_add, NULL);
}
