/* dce.c — dead-code elimination. In graph form an unused binding is simply
 * unreachable and disappears by itself; what remains are `let` bindings whose
 * variable the body never mentions. Relay values are pure, so such a let is
 * replaced by its body. */
#include "ir/transform/transform.h"

/* The walk ends at the let's variable: it is used. */
static ir_visit_step find_var(ir_visitor *v, const ir_expr *e)
{
    return e == v->ctx ? IR_VISIT_STOP : IR_VISIT_DESCEND;
}

static ir_expr *drop_dead_let(tr_rewriter *rw, ir_expr *e)
{
    (void)rw;
    if (e->kind != IR_LET)
        return e;
    ir_visitor v;
    ir_visitor_init(&v, find_var, NULL, e->u.let.var);
    bool used = !ir_visit(&v, e->u.let.body);
    ir_visitor_free(&v);
    return used ? e : e->u.let.body;
}

bool tr_dead_code(ir_module *m, const tr_options *o, su_diags *d)
{
    return tr_apply(m, drop_dead_let, NULL);
}
