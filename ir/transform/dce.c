/* dce.c — dead-code elimination. In graph form an unused binding is simply
 * unreachable and disappears by itself; what remains are `let` bindings whose
 * variable the body never mentions. Relay values are pure, so such a let is
 * replaced by its body. */
#include "ir/transform/transform.h"

/* True when var occurs in e (memoized per node id through a stamp array). */
typedef struct { const ir_expr *var; uint8_t *seen; size_t nseen; } use_scan;

static bool uses(use_scan *s, const ir_expr *e)
{
    if (e == s->var)
        return true;
    if (e->id < s->nseen && s->seen[e->id])
        return false;
    if (e->id < s->nseen)
        s->seen[e->id] = 1;
    switch (e->kind) {
    case IR_CALL:
        if (uses(s, e->u.call.fn))
            return true;
        for (int i = 0; i < e->u.call.nargs; i++)
            if (uses(s, e->u.call.args[i]))
                return true;
        return false;
    case IR_TUPLE:
        for (int i = 0; i < e->u.tuple.n; i++)
            if (uses(s, e->u.tuple.fields[i]))
                return true;
        return false;
    case IR_PROJ: return uses(s, e->u.proj.tuple);
    case IR_LET: return uses(s, e->u.let.value) || uses(s, e->u.let.body);
    case IR_IF: return uses(s, e->u.if_.cond) || uses(s, e->u.if_.then_branch) || uses(s, e->u.if_.else_branch);
    case IR_FUNC: return uses(s, e->u.func.body);
    default: return false;
    }
}

static ir_expr *drop_dead_let(tr_rewriter *rw, ir_expr *e)
{
    if (e->kind != IR_LET)
        return e;
    use_scan s = {e->u.let.var, su_calloc(rw->m->next_id + 1, 1), rw->m->next_id + 1};
    bool used = uses(&s, e->u.let.body);
    free(s.seen);
    return used ? e : e->u.let.body;
}

bool tr_dead_code(ir_module *m, const tr_options *o, su_diags *d)
{
    return tr_apply(m, drop_dead_let, NULL);
}
