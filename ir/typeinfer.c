/* typeinfer.c — type inference for Relay modules. Every parameter carries its
 * type annotation (as in TVM's printed text), so inference runs forward:
 * leaves get their types from annotations and constants, op calls from the
 * op's type relation, calls of functions from the callee's function type.
 * Global functions are inferred on demand, so a def may call one written
 * later; a recursive def needs its return type written down.
 * Each expression's type is stored once in ir_expr.type (the only field of
 * a node that is set after construction). */
#include <string.h>

#include "ir/ir.h"

enum { MAX_DEPTH = 20000 };

typedef enum { DEF_TODO, DEF_ACTIVE, DEF_DONE, DEF_FAILED } def_state;

typedef struct checker {
    ir_module *m;
    su_diags *d;
    def_state *state;   /* per module def */
    int depth;
    bool failed;
} checker;

static const ir_type *infer(checker *c, ir_expr *e);

static const ir_type *fail(checker *c, su_span sp, const char *fmt, ...) SU_PRINTF(3, 4);
static const ir_type *fail(checker *c, su_span sp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    su_diag_vadd(c->d, SU_ERROR, sp, fmt, ap);
    va_end(ap);
    c->failed = true;
    return NULL;
}

static const char *tstr(checker *c, const ir_type *t)
{
    return ir_type_str(&c->m->arena, t);
}

static const ir_type *infer_def(checker *c, size_t i, su_span use);

static const ir_type *infer_global(checker *c, ir_expr *e)
{
    ir_global_def *g = ir_module_find(c->m, e->u.global.name);
    if (!g)
        return fail(c, e->span, "unknown global function @%s", e->u.global.name);
    return infer_def(c, (size_t)(g - c->m->defs.data), e->span);
}

static const ir_type *infer_op_call(checker *c, ir_expr *e, const ir_op_def *op)
{
    int n = e->u.call.nargs;
    if (n < op->min_args || n > op->max_args)
        return fail(c, e->span, "%s takes %d argument%s, but %d were given", op->name, op->min_args,
                    op->min_args == 1 ? "" : "s", n);
    const ir_type *argt[8];
    for (int i = 0; i < n; i++)
        if (!(argt[i] = infer(c, e->u.call.args[i])))
            return NULL;
    ir_rel_ctx cx = {&c->m->arena, c->d, e->span, op, e->u.call.args};
    const ir_attrs *attrs = e->u.call.attrs ? e->u.call.attrs : ir_op_default_attrs(&c->m->arena, op);
    const ir_type *t = op->rel(&cx, argt, n, attrs);
    if (!t)
        c->failed = true;
    return t;
}

/* ---- polymorphism: a call of a def or fn with type parameters ---- */

/* The binding of each of a callee's type parameters at one call. */
typedef struct subst {
    int n;
    const ir_type *const *vars;     /* the callee's type parameters */
    const ir_type **to;             /* their types at this call (NULL: not yet known) */
} subst;

static int subst_index(const subst *s, const ir_type *v)
{
    for (int i = 0; i < s->n; i++)
        if (s->vars[i] == v)
            return i;
    return -1;
}

/* Matches the parameter type pat against the argument type t, binding the
 * callee's type parameters; false when they do not unify. On failure *why_a
 * and *why_b are the two types that differ. */
static bool unify(subst *s, const ir_type *pat, const ir_type *t, const ir_type **why_a, const ir_type **why_b)
{
    int k = pat->kind == IR_TY_VAR ? subst_index(s, pat) : -1;
    if (k >= 0) {
        if (!s->to[k]) {
            s->to[k] = t;
            return true;
        }
        pat = s->to[k];
        if (ir_type_equal(pat, t))
            return true;
        *why_a = pat;
        *why_b = t;
        return false;
    }
    bool same = pat->kind == t->kind && pat->nfields == t->nfields;
    if (same && (pat->kind == IR_TY_TUPLE || pat->kind == IR_TY_FUNC)) {
        for (int i = 0; i < pat->nfields; i++)
            if (!unify(s, pat->fields[i], t->fields[i], why_a, why_b))
                return false;
        return pat->kind == IR_TY_TUPLE || unify(s, pat->ret, t->ret, why_a, why_b);
    }
    if (same && ir_type_equal(pat, t))
        return true;
    *why_a = pat;
    *why_b = t;
    return false;
}

/* t with the bound type parameters replaced. */
static const ir_type *apply(checker *c, const subst *s, const ir_type *t)
{
    int k = t->kind == IR_TY_VAR ? subst_index(s, t) : -1;
    if (k >= 0)
        return s->to[k] ? s->to[k] : t;
    if (t->kind != IR_TY_TUPLE && t->kind != IR_TY_FUNC)
        return t;
    const ir_type **fs = su_arena_alloc(&c->m->arena, (size_t)(t->nfields + 1) * sizeof *fs);
    for (int i = 0; i < t->nfields; i++)
        fs[i] = apply(c, s, t->fields[i]);
    return t->kind == IR_TY_TUPLE ? ir_tuple_type(&c->m->arena, t->nfields, fs)
                                  : ir_func_type(&c->m->arena, t->nfields, fs, apply(c, s, t->ret));
}

/* A type parameter of s left in t after apply, or NULL. */
static const ir_type *unbound(const subst *s, const ir_type *t)
{
    if (t->kind == IR_TY_VAR)
        return subst_index(s, t) >= 0 ? t : NULL;
    const ir_type *u = t->kind == IR_TY_FUNC ? unbound(s, t->ret) : NULL;
    for (int i = 0; !u && (t->kind == IR_TY_TUPLE || t->kind == IR_TY_FUNC) && i < t->nfields; i++)
        u = unbound(s, t->fields[i]);
    return u;
}

/* The function node a callee names directly (a def or a fn literal), whose
 * type parameters a call instantiates; NULL for closures in variables, which
 * are not polymorphic. */
static const ir_expr *callee_func(checker *c, const ir_expr *fn)
{
    if (fn->kind == IR_FUNC)
        return fn;
    if (fn->kind == IR_GLOBAL) {
        ir_global_def *g = ir_module_find(c->m, fn->u.global.name);
        return g ? g->func : NULL;
    }
    return NULL;
}

static const ir_type *infer_call(checker *c, ir_expr *e)
{
    ir_expr *fn = e->u.call.fn;
    if (fn->kind == IR_OP)
        return infer_op_call(c, e, fn->u.op.def);
    const ir_type *ft = infer(c, fn);
    if (!ft)
        return NULL;
    if (ft->kind != IR_TY_FUNC)
        return fail(c, e->span, "cannot call a value of type %s: it is not a function", tstr(c, ft));
    const char *callee = fn->kind == IR_GLOBAL ? su_arena_printf(&c->m->arena, "@%s", fn->u.global.name)
                         : fn->kind == IR_VAR  ? su_arena_printf(&c->m->arena, "%%%s", fn->u.var.name)
                                               : "function";
    if (e->u.call.nargs != ft->nfields)
        return fail(c, e->span, "call of %s: expected %d argument%s, got %d", callee, ft->nfields,
                    ft->nfields == 1 ? "" : "s", e->u.call.nargs);
    const ir_expr *cf = callee_func(c, fn);
    int ntp = cf ? cf->u.func.ntparams : 0;
    const ir_type **bound = su_arena_alloc(&c->m->arena, (size_t)(ntp + 1) * sizeof *bound);
    subst s = {ntp, ntp ? cf->u.func.tparams : NULL, bound};
    for (int i = 0; i < e->u.call.nargs; i++) {
        const ir_type *at = infer(c, e->u.call.args[i]);
        if (!at)
            return NULL;
        const ir_type *wa = NULL, *wb = NULL;
        if (ntp ? !unify(&s, ft->fields[i], at, &wa, &wb) : !ir_type_equal(at, ft->fields[i])) {
            if (ntp && (wa != ft->fields[i] || wb != at))
                return fail(c, e->span, "call of %s: argument %d has type %s, but the parameter expects %s: "
                            "%s and %s do not unify", callee, i + 1, tstr(c, at), tstr(c, apply(c, &s, ft->fields[i])),
                            tstr(c, wa), tstr(c, wb));
            return fail(c, e->span, "call of %s: argument %d has type %s, but the parameter expects %s",
                        callee, i + 1, tstr(c, at), tstr(c, ntp ? apply(c, &s, ft->fields[i]) : ft->fields[i]));
        }
    }
    if (!ntp)
        return ft->ret;
    const ir_type *r = apply(c, &s, ft->ret), *free_var = unbound(&s, r);
    if (free_var)
        return fail(c, e->span, "call of %s: the arguments do not determine the type parameter %s", callee,
                    free_var->name);
    return r;
}

static const ir_type *infer_func(checker *c, ir_expr *e)
{
    SU_VEC(const ir_type *) pts = {0};
    for (int i = 0; i < e->u.func.nparams; i++) {
        ir_expr *v = e->u.func.params[i];
        if (!v->u.var.annot) {
            su_vec_free(&pts);
            return fail(c, v->span, "parameter %%%s needs a type annotation (%%%s: Tensor[(...), float32])",
                        v->u.var.name, v->u.var.name);
        }
        v->type = v->u.var.annot;
        su_vec_push(&pts, v->type);
    }
    const ir_type *ret = e->u.func.ret_annot;
    const ir_type *bt = infer(c, e->u.func.body);
    const ir_type *ft = NULL;
    if (bt && ret && !ir_type_equal(bt, ret))
        fail(c, e->u.func.body->span, "the function body has type %s, but its declared return type is %s",
             tstr(c, bt), tstr(c, ret));
    else if (bt)
        ft = ir_func_type(&c->m->arena, (int)pts.len, pts.data, bt);
    su_vec_free(&pts);
    return ft;
}

static const ir_type *infer_kind(checker *c, ir_expr *e)
{
    switch (e->kind) {
    case IR_VAR:
        if (e->u.var.annot)
            return e->u.var.annot;
        return fail(c, e->span, "the type of %%%s is unknown (annotate it)", e->u.var.name);
    case IR_GLOBAL:
        return infer_global(c, e);
    case IR_CONST: {
        const ir_tensor *v = e->u.constant.value;
        return ir_tensor_type(&c->m->arena, v->dtype, v->ndim, v->shape);
    }
    case IR_CALL:
        return infer_call(c, e);
    case IR_LET: {
        const ir_type *vt = infer(c, e->u.let.value);
        if (!vt)
            return NULL;
        ir_expr *var = e->u.let.var;
        if (var->u.var.annot && !ir_type_equal(var->u.var.annot, vt))
            return fail(c, e->u.let.value->span, "let %%%s is declared as %s, but its value has type %s",
                        var->u.var.name, tstr(c, var->u.var.annot), tstr(c, vt));
        var->type = vt;
        return infer(c, e->u.let.body);
    }
    case IR_IF: {
        const ir_type *ct = infer(c, e->u.if_.cond);
        if (!ct)
            return NULL;
        if (ct->kind != IR_TY_TENSOR || ct->ndim != 0 || ct->dtype != IR_BOOL)
            return fail(c, e->span, "the condition of if must be a scalar bool, not %s", tstr(c, ct));
        const ir_type *tt = infer(c, e->u.if_.then_branch);
        const ir_type *et = tt ? infer(c, e->u.if_.else_branch) : NULL;
        if (!et)
            return NULL;
        if (!ir_type_equal(tt, et))
            return fail(c, e->span, "the branches of if have different types: %s and %s", tstr(c, tt), tstr(c, et));
        return tt;
    }
    case IR_TUPLE: {
        SU_VEC(const ir_type *) fs = {0};
        for (int i = 0; i < e->u.tuple.n; i++) {
            const ir_type *t = infer(c, e->u.tuple.fields[i]);
            if (!t) {
                su_vec_free(&fs);
                return NULL;
            }
            su_vec_push(&fs, t);
        }
        const ir_type *t = ir_tuple_type(&c->m->arena, (int)fs.len, fs.data);
        su_vec_free(&fs);
        return t;
    }
    case IR_PROJ: {
        const ir_type *tt = infer(c, e->u.proj.tuple);
        if (!tt)
            return NULL;
        if (tt->kind != IR_TY_TUPLE)
            return fail(c, e->span, "cannot take field %d of a value of type %s: it is not a tuple",
                        e->u.proj.index, tstr(c, tt));
        if (e->u.proj.index >= tt->nfields)
            return fail(c, e->span, "tuple index %d is out of range: %s has %d field%s", e->u.proj.index,
                        tstr(c, tt), tt->nfields, tt->nfields == 1 ? "" : "s");
        return tt->fields[e->u.proj.index];
    }
    case IR_FUNC:
        return infer_func(c, e);
    case IR_OP:
        return fail(c, e->span, "operator %s must be called", e->u.op.def->name);
    }
    return NULL;
}

static const ir_type *infer(checker *c, ir_expr *e)
{
    if (e->type)
        return e->type;
    if (++c->depth > MAX_DEPTH) {
        c->depth--;
        return fail(c, e->span, "expression is nested more than %d levels deep", MAX_DEPTH);
    }
    const ir_type *t = infer_kind(c, e);
    c->depth--;
    e->type = t;
    return t;
}

/* The function type of def i; its body is inferred the first time. */
static const ir_type *infer_def(checker *c, size_t i, su_span use)
{
    ir_global_def *g = &c->m->defs.data[i];
    ir_expr *f = g->func;
    switch (c->state[i]) {
    case DEF_DONE:
        return f->type;
    case DEF_FAILED:
        c->failed = true;
        return NULL;
    case DEF_ACTIVE: {
        /* a recursive call: the signature as written is all there is */
        if (!f->u.func.ret_annot)
            return fail(c, use, "@%s calls itself recursively, so its def needs a return type (-> T)", g->name);
        SU_VEC(const ir_type *) pts = {0};
        for (int k = 0; k < f->u.func.nparams; k++)
            su_vec_push(&pts, f->u.func.params[k]->u.var.annot);
        const ir_type *t = ir_func_type(&c->m->arena, (int)pts.len, pts.data, f->u.func.ret_annot);
        su_vec_free(&pts);
        for (int k = 0; k < f->u.func.nparams; k++)
            if (!f->u.func.params[k]->u.var.annot)
                return fail(c, f->u.func.params[k]->span, "parameter needs a type annotation");
        return t;
    }
    case DEF_TODO:
        break;
    }
    c->state[i] = DEF_ACTIVE;
    const ir_type *t = infer(c, f);
    c->state[i] = t ? DEF_DONE : DEF_FAILED;
    if (t)
        g->global->type = t;
    return t;
}

bool ir_infer_types(ir_module *m, su_diags *d)
{
    checker c = {m, d, su_calloc(m->defs.len + 1, sizeof(def_state)), 0, false};
    size_t before = d->errors;
    for (size_t i = 0; i < m->defs.len; i++)
        infer_def(&c, i, m->defs.data[i].global->span);
    free(c.state);
    return !c.failed && d->errors == before;
}

bool ir_infer_expr(ir_module *m, ir_expr *e, su_diags *d)
{
    checker c = {m, d, su_calloc(m->defs.len + 1, sizeof(def_state)), 0, false};
    for (size_t i = 0; i < m->defs.len; i++)
        if (m->defs.data[i].func->type)
            c.state[i] = DEF_DONE;
    size_t before = d->errors;
    infer(&c, e);
    free(c.state);
    return !c.failed && d->errors == before;
}
