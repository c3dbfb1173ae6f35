/* rewrite.c — the one traversal every pass shares: rebuild an expression
 * bottom-up, memoized by node id so that a shared node is rewritten once and
 * stays shared, keeping a node as it is when none of its operands changed
 * (so its type survives), and calling the pass's rule on each result. The
 * operands are ir/visit.c's; making a node of a kind over new operands is
 * here, once (tr_rebuild), for this traversal and for fuse-ops' own. */
#include <string.h>

#include "ir/transform/transform.h"

enum { MAX_DEPTH = 20000 };

void tr_rewriter_init(tr_rewriter *rw, ir_module *m, tr_post_fn post, void *ctx)
{
    memset(rw, 0, sizeof *rw);
    rw->m = m;
    rw->post = post;
    rw->ctx = ctx;
}

void tr_rewriter_free(tr_rewriter *rw)
{
    free(rw->memo);
    rw->memo = NULL;
    rw->nmemo = 0;
}

static ir_expr *memo_get(tr_rewriter *rw, const ir_expr *e)
{
    return e->id < rw->nmemo ? rw->memo[e->id] : NULL;
}

static void memo_put(tr_rewriter *rw, const ir_expr *e, ir_expr *r)
{
    rw->memo = su_grow_zeroed(rw->memo, &rw->nmemo, e->id, sizeof *rw->memo);
    rw->memo[e->id] = r;
}

/* The node of e's kind over operands ops (ir_expr_child order), keeping
 * what is not an operand: attributes, bound variables, annotations. */
static ir_expr *remake(ir_module *m, const ir_expr *e, ir_expr *const *ops)
{
    switch (e->kind) {
    case IR_CALL: {
        ir_expr *r = ir_call(m, e->span, ops[0], e->u.call.nargs, ops + 1, e->u.call.attrs);
        r->u.call.nkvs = e->u.call.nkvs;     /* a function call's written attributes stay with it */
        r->u.call.kvs = e->u.call.kvs;
        return r;
    }
    case IR_TUPLE: return ir_tuple(m, e->span, e->u.tuple.n, ops);
    case IR_PROJ: return ir_proj(m, e->span, ops[0], e->u.proj.index);
    case IR_LET: return ir_let(m, e->span, e->u.let.var, ops[0], ops[1]);
    case IR_IF: return ir_if(m, e->span, ops[0], ops[1], ops[2]);
    case IR_FUNC: {
        ir_expr *f = ir_func(m, e->span, e->u.func.nparams, e->u.func.params, e->u.func.ret_annot, ops[0],
                             e->u.func.nattrs, e->u.func.attrs);
        f->u.func.ntparams = e->u.func.ntparams;
        f->u.func.tparams = e->u.func.tparams;
        return f;
    }
    case IR_MATCH: {
        /* the clauses keep their patterns (and so the variables they bind) */
        ir_clause *cs = su_arena_alloc(&m->arena, sizeof *cs * (size_t)(e->u.match.n + 1));
        for (int i = 0; i < e->u.match.n; i++)
            cs[i] = (ir_clause){e->u.match.clauses[i].pat, ops[1 + i]};
        return ir_match(m, e->span, ops[0], e->u.match.n, cs, e->u.match.partial);
    }
    case IR_REF_NEW: return ir_ref_expr(m, e->span, IR_REF_NEW, NULL, ops[0]);
    case IR_REF_READ: return ir_ref_expr(m, e->span, IR_REF_READ, ops[0], NULL);
    case IR_REF_WRITE: return ir_ref_expr(m, e->span, IR_REF_WRITE, ops[0], ops[1]);
    case IR_DEVICE: return ir_device(m, e->span, e->u.device.copy, ops[0], e->u.device.nkvs, e->u.device.kvs);
    case IR_VAR: case IR_GLOBAL: case IR_CONST: case IR_OP: case IR_CTOR: break;
    }
    return (ir_expr *)e;
}

ir_expr *tr_rebuild(ir_module *m, ir_expr *e, tr_operand_fn map, void *ctx)
{
    int n = ir_expr_nchildren(e);
    if (!n)
        return e;
    ir_expr *few[3];
    ir_expr **ops = n <= 3 ? few : su_malloc(sizeof *ops * (size_t)n);
    bool changed = false;
    for (int i = 0; i < n; i++) {
        ir_expr *x = ir_expr_child(e, i);
        ops[i] = map(ctx, e, i, x);
        changed |= ops[i] != x;
    }
    ir_expr *r = changed ? remake(m, e, ops) : e;
    if (ops != few)
        free(ops);
    return r;
}

static ir_expr *rewrite_operand(void *ctx, const ir_expr *e, int i, ir_expr *x)
{
    (void)e, (void)i;
    return tr_rewrite(ctx, x);
}

/* Rules read operand types, so every node a rule or a rebuild makes is typed
 * at once. A failure here is a bug in a rule: it is reported, not hidden. */
static ir_expr *typed(tr_rewriter *rw, ir_expr *e)
{
    if (!e->type && e->kind != IR_OP) {
        su_diags d = {0};
        if (!ir_infer_expr(rw->m, e, &d)) {
            rw->failed = true;
            su_diags_print(stderr, &d);
        }
        su_diags_free(&d);
    }
    return e;
}

ir_expr *tr_rewrite(tr_rewriter *rw, ir_expr *e)
{
    ir_expr *r = memo_get(rw, e);
    if (r)
        return r;
    if (++rw->depth > MAX_DEPTH) {
        rw->failed = true;
        rw->depth--;
        return e;
    }
    r = tr_rebuild(rw->m, e, rewrite_operand, rw);
    typed(rw, r);
    if (rw->post) {
        rw->orig = e;
        r = typed(rw, rw->post(rw, r));
    }
    rw->depth--;
    memo_put(rw, e, r);
    return r;
}

void tr_rewrite_module(tr_rewriter *rw)
{
    for (size_t i = 0; i < rw->m->defs.len; i++) {
        ir_global_def *g = &rw->m->defs.data[i];
        ir_expr *f = tr_rewrite(rw, g->func);
        if (f != g->func) {
            g->func = f;
            g->global->type = NULL;
        }
    }
}

typedef struct counter {
    size_t ops, prims;      /* operator calls; calls of primitive functions */
} counter;

static ir_visit_step count_call(ir_visitor *v, const ir_expr *e)
{
    counter *c = v->ctx;
    if (e->kind == IR_CALL) {
        c->ops += ir_call_op(e) != NULL;
        c->prims += ir_func_is_primitive(e->u.call.fn);
    }
    return IR_VISIT_DESCEND;
}

void tr_count(const ir_expr *e, size_t *ops, size_t *primitive_calls)
{
    counter c = {0};
    ir_visitor v;
    ir_visitor_init(&v, count_call, NULL, &c);
    ir_visit(&v, e);
    ir_visitor_free(&v);
    if (ops)
        *ops = c.ops;
    if (primitive_calls)
        *primitive_calls = c.prims;
}

bool tr_apply(ir_module *m, tr_post_fn rule, void *ctx)
{
    tr_rewriter rw;
    tr_rewriter_init(&rw, m, rule, ctx);
    tr_rewrite_module(&rw);
    bool okk = !rw.failed;
    tr_rewriter_free(&rw);
    return okk;
}
