/* typeinfer.c — type inference for Relay modules. Every parameter carries its
 * type annotation (as in TVM's printed text), so inference runs forward:
 * leaves get their types from annotations and constants, op calls from the
 * op's type relation, calls of functions from the callee's function type.
 * What the annotations leave open is an unknown (IR_TY_META) solved by
 * unification: the type parameters of a polymorphic def or constructor at
 * each use (`Nil` is a List[_] until something says of what), `let %x: _`,
 * the fields a pattern binds. When a def is done its types are solved in
 * place ("zonked"); an unknown left over is an error at the innermost node
 * that has it, as in TVM, and a `match` that misses a value is a warning.
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
    bool warn;          /* report non-exhaustive matches (once, by ir_infer_types) */
    SU_VEC(const ir_type *) metas; /* what each unknown stands for (NULL: not solved yet) */
} checker;

static const ir_type *infer(checker *c, ir_expr *e);
static const char *tstr(checker *c, const ir_type *t);
static const ir_type *zonk(checker *c, const ir_type *t);

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
    for (int i = 0; i < n; i++) {
        /* relations read shapes: a type still unknown here cannot be checked */
        argt[i] = zonk(c, argt[i]);
        if (ir_type_has_meta(argt[i]))
            return fail(c, e->u.call.args[i]->span, "%s: the type of argument %d is not known here (%s): annotate it",
                        op->name, i + 1, tstr(c, argt[i]));
    }
    ir_rel_ctx cx = {&c->m->arena, c->d, e->span, op, e->u.call.args};
    const ir_attrs *attrs = e->u.call.attrs ? e->u.call.attrs : ir_op_default_attrs(&c->m->arena, op);
    const ir_type *t = op->rel(&cx, argt, n, attrs);
    if (!t)
        c->failed = true;
    return t;
}

/* ---- unknowns: type variables that inference solves ---- */

/* A new unknown (IR_TY_META, numbered by ndim). */
static const ir_type *fresh(checker *c)
{
    ir_type *t = su_arena_alloc(&c->m->arena, sizeof *t);
    t->kind = IR_TY_META;
    t->ndim = (int)c->metas.len;
    t->name = "_";
    su_vec_push(&c->metas, (const ir_type *)NULL);
    return t;
}

/* t, or what the unknown t stands for so far. */
static const ir_type *resolve(checker *c, const ir_type *t)
{
    while (t && t->kind == IR_TY_META && c->metas.data[t->ndim])
        t = c->metas.data[t->ndim];
    return t;
}

static bool has_fields(const ir_type *t)
{
    return t->kind == IR_TY_TUPLE || t->kind == IR_TY_FUNC || t->kind == IR_TY_ADT || t->kind == IR_TY_REF;
}

/* t with the types of type parameters vars[i] (to[i]) and of solved unknowns
 * put in (to may be NULL: only unknowns). A type that did not change is
 * returned as it is. */
static const ir_type *replace(checker *c, const ir_type *t, int n, const ir_type *const *vars, const ir_type *const *to)
{
    if (!t)
        return t;
    t = resolve(c, t);
    if (t->kind == IR_TY_VAR)
        for (int i = 0; i < n; i++)
            if (vars[i] == t)
                return to[i];
    if (!has_fields(t))
        return t;
    const ir_type **fs = su_arena_alloc(&c->m->arena, (size_t)(t->nfields + 1) * sizeof *fs);
    bool changed = false;
    for (int i = 0; i < t->nfields; i++)
        changed |= (fs[i] = replace(c, t->fields[i], n, vars, to)) != t->fields[i];
    const ir_type *ret = t->kind == IR_TY_FUNC ? replace(c, t->ret, n, vars, to) : NULL;
    if (!changed && ret == t->ret)
        return t;
    switch (t->kind) {
    case IR_TY_TUPLE: return ir_tuple_type(&c->m->arena, t->nfields, fs);
    case IR_TY_FUNC: return ir_func_type(&c->m->arena, t->nfields, fs, ret);
    case IR_TY_ADT: return ir_adt_type(&c->m->arena, t->adt, t->nfields, fs);
    default: return ir_ref_type(&c->m->arena, fs[0]);
    }
}

/* t with every solved unknown replaced by its solution. */
static const ir_type *zonk(checker *c, const ir_type *t)
{
    return replace(c, t, 0, NULL, NULL);
}

/* A solved form of t for messages. */
static const char *tstr(checker *c, const ir_type *t)
{
    return ir_type_str(&c->m->arena, zonk(c, t));
}

/* True when the unknown u appears in t (solving u as t would make an infinite type). */
static bool occurs(checker *c, const ir_type *u, const ir_type *t)
{
    t = resolve(c, t);
    if (t == u)
        return true;
    if (has_fields(t)) {
        for (int i = 0; i < t->nfields; i++)
            if (occurs(c, u, t->fields[i]))
                return true;
        return t->kind == IR_TY_FUNC && occurs(c, u, t->ret);
    }
    return false;
}

/* Makes a and b the same type by solving unknowns (type parameters are rigid:
 * equal only to themselves); false when they differ, with *why_a and *why_b
 * the two parts that do not unify. */
static bool unify(checker *c, const ir_type *a, const ir_type *b, const ir_type **why_a, const ir_type **why_b)
{
    a = resolve(c, a);
    b = resolve(c, b);
    if (a == b)
        return true;
    if (a->kind == IR_TY_META || b->kind == IR_TY_META) {
        const ir_type *u = a->kind == IR_TY_META ? a : b, *t = u == a ? b : a;
        if (!occurs(c, u, t)) {
            c->metas.data[u->ndim] = t;
            return true;
        }
    } else if (a->kind == b->kind && a->nfields == b->nfields && (a->kind != IR_TY_ADT || a->adt == b->adt) &&
               has_fields(a)) {
        for (int i = 0; i < a->nfields; i++)
            if (!unify(c, a->fields[i], b->fields[i], why_a, why_b))
                return false;
        return a->kind != IR_TY_FUNC || unify(c, a->ret, b->ret, why_a, why_b);
    } else if (a->kind == b->kind && a->kind == IR_TY_TENSOR && ir_type_equal(a, b)) {
        return true;
    }
    *why_a = a;
    *why_b = b;
    return false;
}

/* unify without the parts (for the checks whose message names the whole types). */
static bool same(checker *c, const ir_type *a, const ir_type *b)
{
    const ir_type *wa, *wb;
    return unify(c, a, b, &wa, &wb);
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

static const char *callee_name(checker *c, const ir_expr *fn)
{
    switch (fn->kind) {
    case IR_GLOBAL: return su_arena_printf(&c->m->arena, "@%s", fn->u.global.name);
    case IR_VAR: return su_arena_printf(&c->m->arena, "%%%s", fn->u.var.name);
    case IR_CTOR: return su_arena_printf(&c->m->arena, "the constructor %s", fn->u.ctor.def->name);
    default: return "function";
    }
}

static const ir_type *infer_call(checker *c, ir_expr *e)
{
    ir_expr *fn = e->u.call.fn;
    if (fn->kind == IR_OP)
        return infer_op_call(c, e, fn->u.op.def);
    const ir_type *ft = resolve(c, infer(c, fn));
    if (!ft)
        return NULL;
    if (ft->kind != IR_TY_FUNC)
        return fail(c, e->span, "cannot call a value of type %s: it is not a function", tstr(c, ft));
    const char *callee = callee_name(c, fn);
    if (e->u.call.nargs != ft->nfields)
        return fail(c, e->span, "call of %s: expected %d argument%s, got %d", callee, ft->nfields,
                    ft->nfields == 1 ? "" : "s", e->u.call.nargs);
    /* a def or fn with type parameters: each call gets unknowns in their place */
    const ir_expr *cf = callee_func(c, fn);
    int ntp = cf ? cf->u.func.ntparams : 0;
    const ir_type **inst = su_arena_alloc(&c->m->arena, (size_t)(ntp + 1) * sizeof *inst);
    for (int i = 0; i < ntp; i++)
        inst[i] = fresh(c);
    if (ntp)
        ft = replace(c, ft, ntp, cf->u.func.tparams, inst);
    for (int i = 0; i < e->u.call.nargs; i++) {
        const ir_type *at = infer(c, e->u.call.args[i]);
        if (!at)
            return NULL;
        const ir_type *wa = NULL, *wb = NULL;
        bool poly = ntp && ir_type_has_meta(ft->fields[i]);  /* the parameter mentions a type parameter */
        if (!unify(c, ft->fields[i], at, &wa, &wb)) {
            if (poly || (ntp && (resolve(c, wa) != resolve(c, ft->fields[i]) || resolve(c, wb) != resolve(c, at))))
                return fail(c, e->span, "call of %s: argument %d has type %s, but the parameter expects %s: "
                            "%s and %s do not unify", callee, i + 1, tstr(c, at), tstr(c, ft->fields[i]),
                            tstr(c, wa), tstr(c, wb));
            return fail(c, e->span, "call of %s: argument %d has type %s, but the parameter expects %s",
                        callee, i + 1, tstr(c, at), tstr(c, ft->fields[i]));
        }
    }
    const ir_type *r = zonk(c, ft->ret);
    for (int i = 0; i < ntp; i++)
        if (resolve(c, inst[i]) == inst[i] && occurs(c, inst[i], r))
            return fail(c, e->span, "call of %s: the arguments do not determine the type parameter %s", callee,
                        cf->u.func.tparams[i]->name);
    return r;
}

/* ---- algebraic data types ---- */

/* The type of constructor c used as a value: fn (fields) -> T[...], with a
 * new unknown for each of its type's parameters. */
static const ir_type *ctor_type(checker *c, const ir_ctor *k, const ir_type ***args_out)
{
    const ir_adt *adt = k->adt;
    const ir_type **args = su_arena_alloc(&c->m->arena, (size_t)(adt->ntparams + 1) * sizeof *args);
    for (int i = 0; i < adt->ntparams; i++)
        args[i] = fresh(c);
    const ir_type **fs = su_arena_alloc(&c->m->arena, (size_t)(k->nfields + 1) * sizeof *fs);
    for (int i = 0; i < k->nfields; i++)
        fs[i] = replace(c, k->fields[i], adt->ntparams, adt->tparams, args);
    if (args_out)
        *args_out = args;
    return ir_func_type(&c->m->arena, k->nfields, fs, ir_adt_type(&c->m->arena, adt, adt->ntparams, args));
}

/* Checks that values of type t can match pattern p, and types the variables it binds. */
static bool check_pattern(checker *c, const ir_pattern *p, const ir_type *t)
{
    switch (p->kind) {
    case IR_PT_WILD:
        return true;
    case IR_PT_VAR:
        if (p->var->u.var.annot && !same(c, p->var->u.var.annot, t))
            return fail(c, p->span, "the pattern variable %%%s is declared as %s, but the matched value has type %s",
                        p->var->u.var.name, tstr(c, p->var->u.var.annot), tstr(c, t)) != NULL;
        p->var->type = t;
        return true;
    case IR_PT_CTOR: {
        const ir_type *ft = ctor_type(c, p->ctor, NULL);
        if (!same(c, ft->ret, t))
            return fail(c, p->span, "the pattern %s makes a value of type %s, but the matched value has type %s",
                        p->ctor->name, tstr(c, ft->ret), tstr(c, t)) != NULL;
        for (int i = 0; i < p->n; i++)
            if (!check_pattern(c, &p->subs[i], ft->fields[i]))
                return false;
        return true;
    }
    case IR_PT_TUPLE: {
        const ir_type *r = resolve(c, t);
        if (r->kind == IR_TY_META) {
            const ir_type **fs = su_arena_alloc(&c->m->arena, (size_t)(p->n + 1) * sizeof *fs);
            for (int i = 0; i < p->n; i++)
                fs[i] = fresh(c);
            same(c, r, ir_tuple_type(&c->m->arena, p->n, fs));
            r = resolve(c, r);
        }
        if (r->kind != IR_TY_TUPLE || r->nfields != p->n)
            return fail(c, p->span, "the tuple pattern has %d field%s, but the matched value has type %s", p->n,
                        p->n == 1 ? "" : "s", tstr(c, t)) != NULL;
        for (int i = 0; i < p->n; i++)
            if (!check_pattern(c, &p->subs[i], r->fields[i]))
                return false;
        return true;
    }
    }
    return false;
}

static const ir_type *infer_match(checker *c, ir_expr *e)
{
    const ir_type *dt = infer(c, e->u.match.data);
    if (!dt)
        return NULL;
    const ir_type *result = NULL;
    for (int i = 0; i < e->u.match.n; i++) {
        const ir_clause *cl = &e->u.match.clauses[i];
        if (!check_pattern(c, &cl->pat, dt))
            return NULL;
        const ir_type *bt = infer(c, cl->body);
        if (!bt)
            return NULL;
        if (!result)
            result = bt;
        else if (!same(c, result, bt))
            return fail(c, cl->body->span, "the clauses of match have different types: %s and %s", tstr(c, result),
                        tstr(c, bt));
    }
    return result;
}

/* ref_read(r) and ref_write(r, v): r must be a reference; the type it holds. */
static const ir_type *ref_content(checker *c, ir_expr *e, const char *what)
{
    const ir_type *rt = infer(c, e->u.ref.ref);
    if (!rt)
        return NULL;
    const ir_type *of = fresh(c);
    if (!same(c, rt, ir_ref_type(&c->m->arena, of)))
        return fail(c, e->span, "%s of a value of type %s: it is not a reference (ref(...))", what, tstr(c, rt));
    return of;
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
    if (bt && ret && !same(c, bt, ret))
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
        if (var->u.var.annot && !same(c, var->u.var.annot, vt))
            return fail(c, e->u.let.value->span, "let %%%s is declared as %s, but its value has type %s",
                        var->u.var.name, tstr(c, var->u.var.annot), tstr(c, vt));
        var->type = vt;
        return infer(c, e->u.let.body);
    }
    case IR_IF: {
        const ir_type *ct = infer(c, e->u.if_.cond);
        if (!ct)
            return NULL;
        if (resolve(c, ct)->kind == IR_TY_META)
            same(c, ct, ir_scalar_type(&c->m->arena, IR_BOOL));
        ct = resolve(c, ct);
        if (ct->kind != IR_TY_TENSOR || ct->ndim != 0 || ct->dtype != IR_BOOL)
            return fail(c, e->span, "the condition of if must be a scalar bool, not %s", tstr(c, ct));
        const ir_type *tt = infer(c, e->u.if_.then_branch);
        const ir_type *et = tt ? infer(c, e->u.if_.else_branch) : NULL;
        if (!et)
            return NULL;
        if (!same(c, tt, et))
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
        const ir_type *tt = resolve(c, infer(c, e->u.proj.tuple));
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
    case IR_CTOR:
        return ctor_type(c, e->u.ctor.def, NULL);
    case IR_MATCH:
        return infer_match(c, e);
    case IR_REF_NEW: {
        const ir_type *vt = infer(c, e->u.ref.value);
        return vt ? ir_ref_type(&c->m->arena, vt) : NULL;
    }
    case IR_REF_READ:
        return ref_content(c, e, "ref_read");
    case IR_REF_WRITE: {
        const ir_type *of = ref_content(c, e, "ref_write");
        const ir_type *vt = of ? infer(c, e->u.ref.value) : NULL;
        if (!vt)
            return NULL;
        if (!same(c, of, vt))
            return fail(c, e->span, "ref_write of a value of type %s into a reference of type ref(%s)", tstr(c, vt),
                        tstr(c, of));
        return ir_tuple_type(&c->m->arena, 0, NULL);
    }
    case IR_DEVICE:
        return infer(c, e->u.device.value);
    }
    return NULL;
}

/* ---- after a def: every type solved, matches checked ---- */

static void zonk_var(checker *c, ir_expr *v)
{
    if (v->type)
        v->type = zonk(c, v->type);
}

static void zonk_pattern(checker *c, const ir_pattern *p)
{
    if (p->kind == IR_PT_VAR)
        zonk_var(c, p->var);
    for (int i = 0; i < p->n; i++)
        zonk_pattern(c, &p->subs[i]);
}

/* Puts the solutions into a node's type (operands first, so that an unknown
 * left over is reported at the innermost node that has it). */
static void zonk_node(ir_visitor *v, const ir_expr *ce)
{
    checker *c = v->ctx;
    ir_expr *e = (ir_expr *)ce;
    if (!e->type || c->failed)
        return;
    e->type = zonk(c, e->type);
    if (e->kind == IR_LET)
        zonk_var(c, e->u.let.var);
    if (e->kind == IR_FUNC)
        for (int i = 0; i < e->u.func.nparams; i++)
            zonk_var(c, e->u.func.params[i]);
    if (e->kind == IR_MATCH)
        for (int i = 0; i < e->u.match.n; i++)
            zonk_pattern(c, &e->u.match.clauses[i].pat);
    /* a constructor's own type is open until its call says more: the call is the place to report */
    if (ir_type_has_meta(e->type) && e->kind != IR_CTOR) {
        if (e->kind == IR_CALL && e->u.call.fn->kind == IR_CTOR)
            fail(c, e->span, "the type of %s%s cannot be determined (%s): annotate it, e.g. let %%x: %s[...] = ...",
                 e->u.call.fn->u.ctor.def->name, e->u.call.nargs ? "(...)" : "", ir_type_str(&c->m->arena, e->type),
                 e->u.call.fn->u.ctor.def->adt->name);
        else
            fail(c, e->span, "the type of this %s cannot be determined (%s): annotate it, e.g. let %%x: T = ...",
                 ir_expr_kind_name(e->kind), ir_type_str(&c->m->arena, e->type));
        return;
    }
    if (e->kind == IR_MATCH && !e->u.match.partial && c->warn) {
        const char *missing = ir_match_missing(&c->m->arena, e);
        if (missing)
            su_diag_add(c->d, SU_WARNING, e->span,
                        "match is not exhaustive: no clause matches %s (write match? for a partial match)", missing);
    }
}

static void zonk_expr(checker *c, ir_expr *e)
{
    ir_visitor v;
    ir_visitor_init(&v, NULL, zonk_node, c);
    ir_visit(&v, e);
    ir_visitor_free(&v);
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
    bool failed_before = c->failed;
    c->failed = false;
    const ir_type *t = infer(c, f);
    if (t) {
        zonk_expr(c, f);
        t = c->failed ? NULL : f->type;
    }
    c->failed = c->failed || failed_before;
    c->state[i] = t ? DEF_DONE : DEF_FAILED;
    if (t)
        g->global->type = t;
    return t;
}

bool ir_infer_types(ir_module *m, su_diags *d)
{
    checker c = {m, d, su_calloc(m->defs.len + 1, sizeof(def_state)), 0, false, true, {0}};
    size_t before = d->errors;
    for (size_t i = 0; i < m->defs.len; i++)
        infer_def(&c, i, m->defs.data[i].global->span);
    free(c.state);
    su_vec_free(&c.metas);
    return !c.failed && d->errors == before;
}

bool ir_infer_expr(ir_module *m, ir_expr *e, su_diags *d)
{
    checker c = {m, d, su_calloc(m->defs.len + 1, sizeof(def_state)), 0, false, false, {0}};
    for (size_t i = 0; i < m->defs.len; i++)
        if (m->defs.data[i].func->type)
            c.state[i] = DEF_DONE;
    size_t before = d->errors;
    if (infer(&c, e))
        zonk_expr(&c, e);
    free(c.state);
    su_vec_free(&c.metas);
    return !c.failed && d->errors == before;
}
