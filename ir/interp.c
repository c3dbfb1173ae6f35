/* interp.c — the reference interpreter: evaluates any well-typed module with
 * the ops' reference kernels. It is the oracle that optimized and generated
 * code is checked against, so it favours being obviously right; the kernels
 * make it fast enough to run whole models.
 *
 * Values are tensors, tuples, closures, constructed values of algebraic data
 * types and mutable references, reference-counted (a reference made to hold
 * a closure that captures it is a cycle, freed only with the process). A function call
 * runs in a frame that maps expression nodes to their values:
 *   - a graph binding (a node used several times, `%0 = ...;`) is evaluated
 *     once per frame and then looked up (memoized by node id);
 *   - parameters, let-bound variables and a closure's captured variables are
 *     entered into the frame when they are bound;
 *   - every node knows, from a per-function plan made once, how many
 *     references the function's body holds to it; when the last one has been
 *     used its value is released, so intermediate tensors die as soon as the
 *     graph no longer needs them (a branch not taken never uses its
 *     references: those values live until the frame ends).
 * A nested `fn` becomes a closure capturing the values of its free variables;
 * graph bindings of the enclosing function that it uses are evaluated again
 * in its own frame (they are pure, so only time is spent). Global functions
 * are called directly and may recurse; evaluation depth is bounded so that
 * runaway recursion is an error, not a crashed stack. */
#include <string.h>

#include "ir/ir.h"

/* ---- values ---------------------------------------------------------------- */

static ir_value *value_new(ir_value_kind k)
{
    ir_value *v = su_calloc(1, sizeof *v);
    v->kind = k;
    v->refs = 1;
    return v;
}

ir_value *ir_value_tensor(ir_tensor *t, bool owned)
{
    ir_value *v = value_new(IR_VAL_TENSOR);
    v->tensor = t;
    v->owned = owned;
    return v;
}

ir_value *ir_value_tuple(int n, ir_value *const *fields)
{
    ir_value *v = value_new(IR_VAL_TUPLE);
    v->n = n;
    v->items = su_calloc((size_t)(n ? n : 1), sizeof *v->items);
    if (n)
        memcpy(v->items, fields, (size_t)n * sizeof *fields);
    return v;
}

static ir_value *closure_new(const ir_expr *func, int n)
{
    ir_value *v = value_new(IR_VAL_CLOSURE);
    v->func = func;
    v->n = n;
    v->items = su_calloc((size_t)(n ? n : 1), sizeof *v->items);
    return v;
}

ir_value *ir_value_retain(ir_value *v)
{
    v->refs++;
    return v;
}

void ir_value_release(ir_value *v)
{
    if (!v || --v->refs > 0)
        return;
    if (v->kind == IR_VAL_TENSOR && v->owned)
        ir_tensor_free(v->tensor);
    for (int i = 0; i < v->n; i++)
        ir_value_release(v->items[i]);
    free(v->items);
    free(v);
}

bool ir_value_has_type(const ir_value *v, const ir_type *t)
{
    switch (t->kind) {
    case IR_TY_TENSOR:
        return v->kind == IR_VAL_TENSOR && ir_tensor_has_shape(v->tensor, t->dtype, t->ndim, t->shape);
    case IR_TY_TUPLE:
        if (v->kind != IR_VAL_TUPLE || v->n != t->nfields)
            return false;
        for (int i = 0; i < v->n; i++)
            if (!ir_value_has_type(v->items[i], t->fields[i]))
                return false;
        return true;
    case IR_TY_FUNC:
        return v->kind == IR_VAL_CLOSURE && (v->ctor || ir_type_has_var(t) || ir_type_equal(v->func->type, t));
    case IR_TY_VAR:
        return true;    /* a polymorphic parameter takes any value; inference checked the uses */
    case IR_TY_ADT:
        return v->kind == IR_VAL_ADT && v->ctor->adt == t->adt;
    case IR_TY_REF:
        return v->kind == IR_VAL_REF;
    case IR_TY_META:
        return false;
    }
    return false;
}

/* A value made by constructor c over n fields (one reference to each taken over). */
static ir_value *adt_new(const ir_ctor *c, int n, ir_value *const *fields)
{
    ir_value *v = ir_value_tuple(n, fields);
    v->kind = IR_VAL_ADT;
    v->ctor = c;
    return v;
}

/* ---- a map from node ids ---------------------------------------------------- */

/* Open addressing from node id to a pointer and a count; ids are stored + 1
 * so that 0 marks an empty slot. Entries are never removed: a released value
 * leaves its slot with val == NULL. */
typedef struct slot {
    uint32_t key;
    int count;
    void *val;
} slot;

typedef struct idmap {
    slot *s;
    size_t cap, len;
} idmap;

static slot *idmap_find(const idmap *m, uint32_t id)
{
    if (!m->cap)
        return NULL;
    for (size_t i = (id * 2654435761u) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (m->s[i].key == id + 1)
            return &m->s[i];
        if (m->s[i].key == 0)
            return NULL;
    }
}

/* The slot of id, created (zeroed) when missing. */
static slot *idmap_slot(idmap *m, uint32_t id)
{
    slot *e = idmap_find(m, id);
    if (e)
        return e;
    if (2 * (m->len + 1) > m->cap) {
        idmap old = *m;
        m->cap = old.cap ? old.cap * 2 : 16;
        m->s = su_calloc(m->cap, sizeof *m->s);
        m->len = 0;
        for (size_t i = 0; i < old.cap; i++)
            if (old.s[i].key)
                *idmap_slot(m, old.s[i].key - 1) = old.s[i];
        free(old.s);
    }
    size_t i = (id * 2654435761u) & (m->cap - 1);
    while (m->s[i].key)
        i = (i + 1) & (m->cap - 1);
    m->s[i].key = id + 1;
    m->len++;
    return &m->s[i];
}

/* ---- plans: what a function's body references ------------------------------- */

typedef struct plan {
    idmap uses;             /* node id -> references held by the body (count) */
    int nfree;              /* free variables, captured when a closure is made */
    ir_expr **free;
} plan;

struct ir_interp {
    const ir_module *m;
    idmap plans;            /* IR_FUNC id -> plan */
    su_diags *d;            /* the current call's diagnostics */
    int depth, max_depth;
};

static const plan *plan_of(ir_interp *ip, const ir_expr *func);

typedef struct planner {
    ir_interp *ip;
    plan *p;
    idmap bound;            /* variables bound inside: parameters and lets */
    SU_VEC(ir_expr *) vars; /* variables referenced, in first-use order */
} planner;

/* One more reference from inside the body to e. */
static void use(planner *pl, const ir_expr *e)
{
    idmap_slot(&pl->p->uses, e->id)->count++;
}

/* The variables a match pattern binds are bound inside the function. */
static void bind_pattern_vars(planner *pl, const ir_pattern *p)
{
    if (p->kind == IR_PT_VAR)
        idmap_slot(&pl->bound, p->var->id)->count = 1;
    for (int i = 0; i < p->n; i++)
        bind_pattern_vars(pl, &p->subs[i]);
}

/* Counts the references each node holds (a call's op or global callee is
 * no value), and notes the variables: those referenced and those bound. */
static ir_visit_step plan_node(ir_visitor *v, const ir_expr *e)
{
    planner *pl = v->ctx;
    switch (e->kind) {
    case IR_VAR:
        su_vec_push(&pl->vars, (ir_expr *)e);
        return IR_VISIT_SKIP;
    case IR_FUNC: {
        /* a nested function: making its closure reads its free variables */
        const plan *inner = plan_of(pl->ip, e);
        for (int i = 0; i < inner->nfree; i++) {
            use(pl, inner->free[i]);
            ir_visit(v, inner->free[i]);
        }
        return IR_VISIT_SKIP;
    }
    case IR_LET:
        idmap_slot(&pl->bound, e->u.let.var->id)->count = 1;
        break;
    case IR_MATCH:
        for (int i = 0; i < e->u.match.n; i++)
            bind_pattern_vars(pl, &e->u.match.clauses[i].pat);
        break;
    default: break;
    }
    bool callee = e->kind == IR_CALL && e->u.call.fn->kind != IR_OP && e->u.call.fn->kind != IR_GLOBAL;
    for (int i = e->kind == IR_CALL && !callee; i < ir_expr_nchildren(e); i++)
        use(pl, ir_expr_child(e, i));
    return IR_VISIT_DESCEND;
}

static const plan *plan_of(ir_interp *ip, const ir_expr *func)
{
    slot *s = idmap_slot(&ip->plans, func->id);
    if (s->val)
        return s->val;
    plan *p = su_calloc(1, sizeof *p);
    planner pl = {ip, p, {0}, {0}};
    for (int i = 0; i < func->u.func.nparams; i++)
        idmap_slot(&pl.bound, func->u.func.params[i]->id)->count = 1;
    use(&pl, func->u.func.body);
    ir_visitor v;
    ir_visitor_init(&v, plan_node, NULL, &pl);
    ir_visit(&v, func->u.func.body);
    ir_visitor_free(&v);
    for (size_t i = 0; i < pl.vars.len; i++)
        if (!idmap_find(&pl.bound, pl.vars.data[i]->id))
            p->nfree++;
    p->free = su_calloc((size_t)(p->nfree ? p->nfree : 1), sizeof *p->free);
    p->nfree = 0;
    for (size_t i = 0; i < pl.vars.len; i++)
        if (!idmap_find(&pl.bound, pl.vars.data[i]->id))
            p->free[p->nfree++] = pl.vars.data[i];
    free(pl.bound.s);
    su_vec_free(&pl.vars);
    /* the map may have grown while nested plans were made: look again */
    idmap_slot(&ip->plans, func->id)->val = p;
    return p;
}

/* ---- frames ---------------------------------------------------------------- */

typedef struct frame {
    ir_interp *ip;
    const plan *p;
    idmap memo;             /* node id -> value (count: references not yet used) */
} frame;

static int uses_of(const frame *f, const ir_expr *e)
{
    const slot *s = idmap_find(&f->p->uses, e->id);
    return s ? s->count : 0;
}

/* Enters v (a reference the frame takes over) as the value of e. */
static void bind(frame *f, const ir_expr *e, ir_value *v)
{
    slot *s = idmap_slot(&f->memo, e->id);
    ir_value_release(s->val);
    s->val = v;
    s->count = uses_of(f, e);
}

/* One reference to e has been used; the last one releases its value. */
static void consumed(frame *f, const ir_expr *e)
{
    slot *s = idmap_find(&f->memo, e->id);
    if (s && s->val && --s->count == 0) {
        ir_value_release(s->val);
        s->val = NULL;
    }
}

static void frame_free(frame *f)
{
    for (size_t i = 0; i < f->memo.cap; i++)
        ir_value_release(f->memo.s[i].val);
    free(f->memo.s);
}

static ir_value *eval(frame *f, ir_expr *e);

static ir_value *fail(frame *f, const ir_expr *e, const char *fmt, ...) SU_PRINTF(3, 4);
static ir_value *fail(frame *f, const ir_expr *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    su_diag_vadd(f->ip->d, SU_ERROR, e->span, fmt, ap);
    va_end(ap);
    return NULL;
}

/* Calls func with args (borrowed) and the captured values of its free
 * variables (borrowed); returns a new reference or NULL after reporting. */
static ir_value *call_function(ir_interp *ip, const ir_expr *func, ir_value *const *captured,
                               ir_value *const *args)
{
    frame f = {ip, plan_of(ip, func), {0}};
    for (int i = 0; i < func->u.func.nparams; i++)
        bind(&f, func->u.func.params[i], ir_value_retain(args[i]));
    for (int i = 0; i < f.p->nfree; i++)
        bind(&f, f.p->free[i], ir_value_retain(captured[i]));
    ir_value *r = eval(&f, func->u.func.body);
    if (r)
        ir_value_retain(r);
    frame_free(&f);
    return r;
}

/* ---- op calls ---------------------------------------------------------------- */

typedef SU_VEC(ir_tensor *) tensor_vec;
typedef SU_VEC(const ir_tensor *) ctensor_vec;

/* Appends the tensors of type t, allocated; false when one cannot be. */
static bool alloc_results(const ir_type *t, tensor_vec *out)
{
    if (t->kind == IR_TY_TUPLE) {
        for (int i = 0; i < t->nfields; i++)
            if (!alloc_results(t->fields[i], out))
                return false;
        return true;
    }
    ir_tensor *x = t->kind == IR_TY_TENSOR ? ir_tensor_alloc(t->dtype, t->ndim, t->shape) : NULL;
    if (!x)
        return false;
    su_vec_push(out, x);
    return true;
}

/* The value of type t over the tensors res[*at...] (taking them). */
static ir_value *wrap_results(const ir_type *t, ir_tensor **res, size_t *at)
{
    if (t->kind != IR_TY_TUPLE)
        return ir_value_tensor(res[(*at)++], true);
    ir_value **fields = su_calloc((size_t)(t->nfields ? t->nfields : 1), sizeof *fields);
    for (int i = 0; i < t->nfields; i++)
        fields[i] = wrap_results(t->fields[i], res, at);
    ir_value *v = ir_value_tuple(t->nfields, fields);
    free(fields);
    return v;
}

static void flatten_args(const ir_value *v, ctensor_vec *out)
{
    if (v->kind == IR_VAL_TENSOR)
        su_vec_push(out, v->tensor);
    else if (v->kind == IR_VAL_TUPLE)
        for (int i = 0; i < v->n; i++)
            flatten_args(v->items[i], out);
}

static ir_value *eval_op_call(frame *f, ir_expr *e, const ir_op_def *op)
{
    ctensor_vec in = {0};
    tensor_vec out = {0};
    ir_value *result = NULL;
    for (int i = 0; i < e->u.call.nargs; i++) {
        ir_value *a = eval(f, e->u.call.args[i]);
        if (!a)
            goto done;
        flatten_args(a, &in);
    }
    if (!alloc_results(e->type, &out)) {
        su_buf t = {0};
        ir_type_print(&t, e->type);
        fail(f, e, "%s: cannot allocate the result %s (out of memory)", op->name, su_buf_str(&t));
        su_buf_free(&t);
        goto done;
    }
    su_buf why = {0};
    ir_attrs defaults = {op->schema->n, op->defaults};
    const ir_attrs *attrs = e->u.call.attrs ? e->u.call.attrs : &defaults;
    ir_ref_call call = {op, attrs, (int)in.len, in.data, (int)out.len, out.data, &why};
    if (op->ref(&call)) {
        size_t at = 0;
        result = wrap_results(e->type, out.data, &at);
        out.len = 0;
    } else {
        fail(f, e, "%s: %s", op->name, su_buf_str(&why));
    }
    su_buf_free(&why);
    for (int i = 0; i < e->u.call.nargs; i++)
        consumed(f, e->u.call.args[i]);
done:
    for (size_t i = 0; i < out.len; i++)
        ir_tensor_free(out.data[i]);
    su_vec_free(&in);
    su_vec_free(&out);
    return result;
}

/* ---- expressions ------------------------------------------------------------- */

static ir_value *eval_call(frame *f, ir_expr *e)
{
    ir_expr *fn = e->u.call.fn;
    if (fn->kind == IR_OP)
        return eval_op_call(f, e, fn->u.op.def);
    ir_value *callee = NULL;
    const ir_expr *func = NULL;
    if (fn->kind == IR_CTOR) {
        func = NULL;
    } else if (fn->kind == IR_GLOBAL) {
        const ir_global_def *g = ir_module_find(f->ip->m, fn->u.global.name);
        if (!g)
            return fail(f, e, "unknown global function @%s", fn->u.global.name);
        func = g->func;
    } else {
        if (!(callee = eval(f, fn)))
            return NULL;
        if (callee->kind != IR_VAL_CLOSURE)
            return fail(f, e, "called a value that is not a function");
        func = callee->func;
    }
    int n = e->u.call.nargs;
    ir_value **args = su_calloc((size_t)(n ? n : 1), sizeof *args);
    ir_value *r = NULL;
    for (int i = 0; i < n; i++)
        if (!(args[i] = eval(f, e->u.call.args[i])))
            goto done;
    const ir_ctor *ctor = fn->kind == IR_CTOR ? fn->u.ctor.def : callee ? callee->ctor : NULL;
    if (ctor) {
        for (int i = 0; i < n; i++)
            ir_value_retain(args[i]);
        r = adt_new(ctor, n, args);
    } else {
        r = call_function(f->ip, func, callee ? callee->items : NULL, args);
    }
    for (int i = 0; i < n; i++)
        consumed(f, e->u.call.args[i]);
    if (callee)
        consumed(f, fn);
done:
    free(args);
    return r;
}

/* Whether v matches p; the variables p binds are entered into f as it goes
 * (a clause that fails later leaves bindings its body never reads). */
static bool match_pattern(frame *f, const ir_pattern *p, ir_value *v)
{
    switch (p->kind) {
    case IR_PT_WILD:
        return true;
    case IR_PT_VAR:
        bind(f, p->var, ir_value_retain(v));
        return true;
    case IR_PT_CTOR:
        if (v->kind != IR_VAL_ADT || v->ctor != p->ctor)
            return false;
        break;
    case IR_PT_TUPLE:
        if (v->kind != IR_VAL_TUPLE || v->n != p->n)
            return false;
        break;
    }
    for (int i = 0; i < p->n; i++)
        if (!match_pattern(f, &p->subs[i], v->items[i]))
            return false;
    return true;
}

/* Appends v written as a pattern, for the message of a match that fails. */
static void value_text(su_buf *b, const ir_value *v, int depth)
{
    if (depth > 3) {
        su_buf_puts(b, "...");
        return;
    }
    switch (v->kind) {
    case IR_VAL_ADT: case IR_VAL_TUPLE:
        su_buf_puts(b, v->kind == IR_VAL_ADT ? v->ctor->name : "");
        if (v->kind == IR_VAL_TUPLE || v->n)
            for (int i = 0; i <= v->n; i++) {
                su_buf_puts(b, i == 0 ? "(" : "");
                if (i < v->n) {
                    su_buf_puts(b, i ? ", " : "");
                    value_text(b, v->items[i], depth + 1);
                }
            }
        if (v->kind == IR_VAL_TUPLE || v->n)
            su_buf_putc(b, ')');
        return;
    case IR_VAL_TENSOR: ir_tensor_print_type(b, v->tensor); return;
    case IR_VAL_CLOSURE: su_buf_puts(b, "a function"); return;
    case IR_VAL_REF: su_buf_puts(b, "a reference"); return;
    }
}

static ir_value *eval_match(frame *f, ir_expr *e)
{
    ir_value *v = eval(f, e->u.match.data);
    if (!v)
        return NULL;
    ir_value_retain(v);
    consumed(f, e->u.match.data);
    for (int i = 0; i < e->u.match.n; i++) {
        const ir_clause *cl = &e->u.match.clauses[i];
        if (!match_pattern(f, &cl->pat, v))
            continue;
        ir_value_release(v);
        ir_value *r = eval(f, cl->body);
        if (r)
            ir_value_retain(r);
        consumed(f, cl->body);
        return r;
    }
    su_buf t = {0};
    value_text(&t, v, 0);
    ir_value_release(v);
    fail(f, e, "no clause of this %s matches the value %s", e->u.match.partial ? "match?" : "match", su_buf_str(&t));
    su_buf_free(&t);
    return NULL;
}

static ir_value *eval_kind(frame *f, ir_expr *e)
{
    switch (e->kind) {
    case IR_VAR:
        return fail(f, e, "internal error: %%%s has no value here", e->u.var.name);
    case IR_GLOBAL: {
        const ir_global_def *g = ir_module_find(f->ip->m, e->u.global.name);
        return g ? closure_new(g->func, 0) : fail(f, e, "unknown global function @%s", e->u.global.name);
    }
    case IR_CONST:
        return ir_value_tensor((ir_tensor *)e->u.constant.value, false);
    case IR_CALL:
        return eval_call(f, e);
    case IR_LET: {
        ir_value *v = eval(f, e->u.let.value);
        if (!v)
            return NULL;
        bind(f, e->u.let.var, ir_value_retain(v));
        consumed(f, e->u.let.value);
        ir_value *r = eval(f, e->u.let.body);
        if (r)
            ir_value_retain(r);
        consumed(f, e->u.let.body);
        return r;
    }
    case IR_IF: {
        ir_value *c = eval(f, e->u.if_.cond);
        if (!c)
            return NULL;
        bool taken = c->kind == IR_VAL_TENSOR && ir_tensor_get(c->tensor, 0) != 0;
        consumed(f, e->u.if_.cond);
        ir_expr *branch = taken ? e->u.if_.then_branch : e->u.if_.else_branch;
        ir_value *r = eval(f, branch);
        if (r)
            ir_value_retain(r);
        consumed(f, branch);
        return r;
    }
    case IR_TUPLE: {
        int n = e->u.tuple.n;
        ir_value **fields = su_calloc((size_t)(n ? n : 1), sizeof *fields);
        for (int i = 0; i < n; i++) {
            ir_value *v = eval(f, e->u.tuple.fields[i]);
            if (!v) {
                for (int j = 0; j < i; j++)
                    ir_value_release(fields[j]);
                free(fields);
                return NULL;
            }
            fields[i] = ir_value_retain(v);
        }
        ir_value *t = ir_value_tuple(n, fields);
        free(fields);
        for (int i = 0; i < n; i++)
            consumed(f, e->u.tuple.fields[i]);
        return t;
    }
    case IR_PROJ: {
        ir_value *t = eval(f, e->u.proj.tuple);
        if (!t)
            return NULL;
        if (t->kind != IR_VAL_TUPLE || e->u.proj.index >= t->n)
            return fail(f, e, "internal error: projection .%d of a value that has no such field", e->u.proj.index);
        ir_value *v = ir_value_retain(t->items[e->u.proj.index]);
        consumed(f, e->u.proj.tuple);
        return v;
    }
    case IR_FUNC: {
        const plan *p = plan_of(f->ip, e);
        ir_value *c = closure_new(e, p->nfree);
        for (int i = 0; i < p->nfree; i++) {
            slot *s = idmap_find(&f->memo, p->free[i]->id);
            if (!s || !s->val) {
                ir_value_release(c);
                return fail(f, p->free[i], "internal error: captured %%%s has no value", p->free[i]->u.var.name);
            }
            c->items[i] = ir_value_retain(s->val);
        }
        for (int i = 0; i < p->nfree; i++)
            consumed(f, p->free[i]);
        return c;
    }
    case IR_OP:
        return fail(f, e, "operator %s must be called", e->u.op.def->name);
    case IR_CTOR: {
        ir_value *c = closure_new(NULL, 0);
        c->ctor = e->u.ctor.def;
        return c;
    }
    case IR_MATCH:
        return eval_match(f, e);
    case IR_REF_NEW: {
        ir_value *v = eval(f, e->u.ref.value);
        if (!v)
            return NULL;
        ir_value *r = value_new(IR_VAL_REF);
        r->n = 1;
        r->items = su_calloc(1, sizeof *r->items);
        r->items[0] = ir_value_retain(v);
        consumed(f, e->u.ref.value);
        return r;
    }
    case IR_REF_READ: {
        ir_value *r = eval(f, e->u.ref.ref);
        if (!r)
            return NULL;
        if (r->kind != IR_VAL_REF)
            return fail(f, e, "internal error: ref_read of a value that is not a reference");
        ir_value *v = ir_value_retain(r->items[0]);
        consumed(f, e->u.ref.ref);
        return v;
    }
    case IR_REF_WRITE: {
        ir_value *r = eval(f, e->u.ref.ref);
        ir_value *v = r ? eval(f, e->u.ref.value) : NULL;
        if (!v)
            return NULL;
        if (r->kind != IR_VAL_REF)
            return fail(f, e, "internal error: ref_write into a value that is not a reference");
        ir_value *old = r->items[0];
        r->items[0] = ir_value_retain(v);
        ir_value_release(old);
        consumed(f, e->u.ref.ref);
        consumed(f, e->u.ref.value);
        return ir_value_tuple(0, NULL);
    }
    case IR_DEVICE: {
        /* one device here: the annotation is the value itself */
        ir_value *v = eval(f, e->u.device.value);
        if (!v)
            return NULL;
        ir_value_retain(v);
        consumed(f, e->u.device.value);
        return v;
    }
    }
    return NULL;
}

/* The value of e in f, borrowed from the frame (which keeps it until its
 * last reference is used); NULL after an error was reported. */
static ir_value *eval(frame *f, ir_expr *e)
{
    slot *s = idmap_find(&f->memo, e->id);
    if (s && s->val)
        return s->val;
    if (++f->ip->depth > f->ip->max_depth) {
        f->ip->depth--;
        return fail(f, e, "evaluation is nested more than %d levels deep (runaway recursion?)", f->ip->max_depth);
    }
    ir_value *v = eval_kind(f, e);
    f->ip->depth--;
    if (!v)
        return NULL;
    bind(f, e, v);
    return v;
}

/* ---- the public entry points ----------------------------------------------- */

ir_interp *ir_interp_new(const ir_module *m, const ir_interp_opts *opts)
{
    ir_interp *ip = su_calloc(1, sizeof *ip);
    ip->m = m;
    ip->max_depth = opts && opts->max_depth > 0 ? opts->max_depth : 100000;
    return ip;
}

void ir_interp_free(ir_interp *ip)
{
    if (!ip)
        return;
    for (size_t i = 0; i < ip->plans.cap; i++) {
        plan *p = ip->plans.s[i].val;
        if (p) {
            free(p->uses.s);
            free(p->free);
            free(p);
        }
    }
    free(ip->plans.s);
    free(ip);
}

bool ir_interp_call(ir_interp *ip, const char *name, int nargs, ir_value *const *args, ir_value **out,
                    su_diags *d)
{
    *out = NULL;
    su_span nowhere = {NULL, 0, 0};
    const ir_global_def *g = ir_module_find(ip->m, name);
    if (!g) {
        su_error(d, nowhere, "the module has no function @%s", name);
        return false;
    }
    const ir_expr *func = g->func;
    if (!func->type) {
        su_error(d, func->span, "@%s is not type-checked", name);
        return false;
    }
    if (nargs != func->u.func.nparams) {
        su_error(d, func->span, "@%s takes %d argument%s, got %d", name, func->u.func.nparams,
                 func->u.func.nparams == 1 ? "" : "s", nargs);
        return false;
    }
    for (int i = 0; i < nargs; i++) {
        const ir_expr *p = func->u.func.params[i];
        if (!ir_value_has_type(args[i], p->type)) {
            su_buf t = {0};
            ir_type_print(&t, p->type);
            su_error(d, p->span, "argument %%%s of @%s does not have its type %s", p->u.var.name, name, su_buf_str(&t));
            su_buf_free(&t);
            return false;
        }
    }
    ip->d = d;
    ip->depth = 0;
    size_t before = d->errors;
    *out = call_function(ip, func, NULL, args);
    ip->d = NULL;
    return *out != NULL && d->errors == before;
}
