/* rewrite.c — the one traversal every pass shares: rebuild an expression
 * bottom-up, memoized by node id so that a shared node is rewritten once and
 * stays shared, keeping a node as it is when none of its operands changed
 * (so its type survives), and calling the pass's rule on each result. */
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

/* Rewrites n operands into out; true when any changed. */
static bool rewrite_all(tr_rewriter *rw, int n, ir_expr *const *in, ir_expr **out)
{
    bool changed = false;
    for (int i = 0; i < n; i++) {
        out[i] = tr_rewrite(rw, in[i]);
        changed |= out[i] != in[i];
    }
    return changed;
}

static ir_expr *rebuild(tr_rewriter *rw, ir_expr *e)
{
    ir_module *m = rw->m;
    switch (e->kind) {
    case IR_CALL: {
        ir_expr *fn = tr_rewrite(rw, e->u.call.fn);
        ir_expr **args = su_malloc(sizeof *args * (size_t)(e->u.call.nargs + 1));
        bool ch = rewrite_all(rw, e->u.call.nargs, e->u.call.args, args);
        ir_expr *r = !ch && fn == e->u.call.fn ? e : ir_call(m, e->span, fn, e->u.call.nargs, args, e->u.call.attrs);
        r->u.call.nkvs = e->u.call.nkvs;     /* a function call's written attributes stay with it */
        r->u.call.kvs = e->u.call.kvs;
        free(args);
        return r;
    }
    case IR_TUPLE: {
        ir_expr **fs = su_malloc(sizeof *fs * (size_t)(e->u.tuple.n + 1));
        bool ch = rewrite_all(rw, e->u.tuple.n, e->u.tuple.fields, fs);
        ir_expr *r = ch ? ir_tuple(m, e->span, e->u.tuple.n, fs) : e;
        free(fs);
        return r;
    }
    case IR_PROJ: {
        ir_expr *t = tr_rewrite(rw, e->u.proj.tuple);
        return t == e->u.proj.tuple ? e : ir_proj(m, e->span, t, e->u.proj.index);
    }
    case IR_LET: {
        ir_expr *v = tr_rewrite(rw, e->u.let.value);
        ir_expr *b = tr_rewrite(rw, e->u.let.body);
        return v == e->u.let.value && b == e->u.let.body ? e : ir_let(m, e->span, e->u.let.var, v, b);
    }
    case IR_IF: {
        ir_expr *c = tr_rewrite(rw, e->u.if_.cond);
        ir_expr *t = tr_rewrite(rw, e->u.if_.then_branch);
        ir_expr *f = tr_rewrite(rw, e->u.if_.else_branch);
        if (c == e->u.if_.cond && t == e->u.if_.then_branch && f == e->u.if_.else_branch)
            return e;
        return ir_if(m, e->span, c, t, f);
    }
    case IR_FUNC: {
        ir_expr *b = tr_rewrite(rw, e->u.func.body);
        if (b == e->u.func.body)
            return e;
        ir_expr *f = ir_func(m, e->span, e->u.func.nparams, e->u.func.params, e->u.func.ret_annot, b,
                             e->u.func.nattrs, e->u.func.attrs);
        f->u.func.ntparams = e->u.func.ntparams;
        f->u.func.tparams = e->u.func.tparams;
        return f;
    }
    default:
        return e;
    }
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
    r = rebuild(rw, e);
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

typedef struct {
    uint8_t *seen;          /* visited, by node id */
    size_t cap;
    size_t ops, prims;      /* operator calls; calls of primitive functions */
} counter;

static void count(counter *c, const ir_expr *e)
{
    if (e->kind == IR_VAR || e->kind == IR_GLOBAL || e->kind == IR_CONST || e->kind == IR_OP)
        return;
    c->seen = su_grow_zeroed(c->seen, &c->cap, e->id, 1);
    if (c->seen[e->id])
        return;
    c->seen[e->id] = 1;
    switch (e->kind) {
    case IR_CALL:
        c->ops += ir_call_op(e) != NULL;
        c->prims += tr_is_primitive(e->u.call.fn);
        count(c, e->u.call.fn);
        for (int i = 0; i < e->u.call.nargs; i++)
            count(c, e->u.call.args[i]);
        return;
    case IR_TUPLE:
        for (int i = 0; i < e->u.tuple.n; i++)
            count(c, e->u.tuple.fields[i]);
        return;
    case IR_PROJ: count(c, e->u.proj.tuple); return;
    case IR_LET:
        count(c, e->u.let.value);
        count(c, e->u.let.body);
        return;
    case IR_IF:
        count(c, e->u.if_.cond);
        count(c, e->u.if_.then_branch);
        count(c, e->u.if_.else_branch);
        return;
    case IR_FUNC: count(c, e->u.func.body); return;
    default: return;
    }
}

void tr_count(const ir_expr *e, size_t *ops, size_t *primitive_calls)
{
    counter c = {0};
    count(&c, e);
    free(c.seen);
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
