/* adt.c — algebraic data types: the module's `type` definitions and their
 * constructors, the exhaustiveness of match clauses, and the line between
 * what the interpreter runs and what compile and tune take.
 *
 * Exhaustiveness is the usefulness check of pattern-matching compilers
 * (Maranget's "Warnings for pattern matching"): a matrix of pattern rows,
 * split on the first column by the constructors of its type, recursively; a
 * value that no row matches comes back written as a pattern, so that the
 * warning names the missing constructor and where it is missing
 * (`Cons(_, Nil)`). Types without constructors (tensors, extern types,
 * functions, references) are covered only by a wildcard or a variable. */
#include <string.h>

#include "ir/ir.h"

/* ---- the module's type definitions ---- */

ir_adt *ir_module_add_adt(ir_module *m, su_span sp, const char *name, int ntparams, const ir_type *const *tparams)
{
    if (ir_module_find_adt(m, name))
        return NULL;
    ir_adt *adt = su_arena_alloc(&m->arena, sizeof *adt);
    adt->name = su_arena_strdup(&m->arena, name);
    adt->ntparams = ntparams;
    adt->tparams = ntparams && tparams ? su_arena_dup(&m->arena, tparams, (size_t)ntparams * sizeof *tparams) : NULL;
    adt->span = sp;
    su_vec_push(&m->adts, adt);
    return adt;
}

const ir_adt *ir_module_find_adt(const ir_module *m, const char *name)
{
    for (size_t i = 0; i < m->adts.len; i++)
        if (strcmp(m->adts.data[i]->name, name) == 0)
            return m->adts.data[i];
    return NULL;
}

const ir_ctor *ir_module_find_ctor(const ir_module *m, const char *name)
{
    for (size_t i = 0; i < m->adts.len; i++)
        for (int k = 0; k < m->adts.data[i]->nctors; k++)
            if (strcmp(m->adts.data[i]->ctors[k].name, name) == 0)
                return &m->adts.data[i]->ctors[k];
    return NULL;
}

/* t with the type parameters vars[i] replaced by to[i]. */
static const ir_type *subst(su_arena *a, const ir_type *t, int n, const ir_type *const *vars,
                            const ir_type *const *to)
{
    switch (t->kind) {
    case IR_TY_VAR:
        for (int i = 0; i < n; i++)
            if (vars[i] == t)
                return to[i];
        return t;
    case IR_TY_TUPLE: case IR_TY_FUNC: case IR_TY_ADT: case IR_TY_REF: {
        const ir_type **fs = su_arena_alloc(a, sizeof *fs * (size_t)(t->nfields + 1));
        for (int i = 0; i < t->nfields; i++)
            fs[i] = subst(a, t->fields[i], n, vars, to);
        switch (t->kind) {
        case IR_TY_TUPLE: return ir_tuple_type(a, t->nfields, fs);
        case IR_TY_FUNC: return ir_func_type(a, t->nfields, fs, subst(a, t->ret, n, vars, to));
        case IR_TY_ADT: return ir_adt_type(a, t->adt, t->nfields, fs);
        default: return ir_ref_type(a, fs[0]);
        }
    }
    case IR_TY_TENSOR: case IR_TY_META:
        return t;
    }
    return t;
}

const ir_type *ir_ctor_field_type(su_arena *a, const ir_ctor *c, const ir_type *const *args, int field)
{
    return subst(a, c->fields[field], c->adt->ntparams, c->adt->tparams, args);
}

/* ---- exhaustiveness ---- */

typedef const ir_pattern *pat;  /* NULL: a wildcard made while splitting */

static bool is_wild(pat p)
{
    return !p || p->kind == IR_PT_WILD || p->kind == IR_PT_VAR;
}

/* A vector of k values (as pattern text) that no row of the matrix matches,
 * or NULL when every vector of those types is matched. */
static const char **witness(su_arena *a, pat *const *rows, int nrows, int k, const ir_type *const *types)
{
    if (k == 0)
        return nrows == 0 ? su_arena_alloc(a, sizeof(const char *)) : NULL;
    const ir_type *t = types[0];
    bool split = false;
    for (int r = 0; r < nrows && !split; r++)
        split = !is_wild(rows[r][0]);
    int nalts = !split ? 0 : t->kind == IR_TY_ADT ? t->adt->nctors : t->kind == IR_TY_TUPLE ? 1 : 0;
    if (nalts == 0) {
        /* only wildcards can cover the column: the rows with one, less the column */
        pat **def = su_arena_alloc(a, sizeof *def * (size_t)(nrows + 1));
        int nd = 0;
        for (int r = 0; r < nrows; r++)
            if (is_wild(rows[r][0]))
                def[nd++] = (pat *)rows[r] + 1;
        const char **w = witness(a, (pat *const *)def, nd, k - 1, types + 1);
        if (!w)
            return NULL;
        const char **out = su_arena_alloc(a, sizeof *out * (size_t)k);
        out[0] = "_";
        memcpy(out + 1, w, sizeof *w * (size_t)(k - 1));
        return out;
    }
    for (int alt = 0; alt < nalts; alt++) {
        const ir_ctor *c = t->kind == IR_TY_ADT ? &t->adt->ctors[alt] : NULL;
        int arity = c ? c->nfields : t->nfields;
        const ir_type **ft = su_arena_alloc(a, sizeof *ft * (size_t)(arity + k));
        for (int i = 0; i < arity; i++)
            ft[i] = c ? ir_ctor_field_type(a, c, t->fields, i) : t->fields[i];
        memcpy(ft + arity, types + 1, sizeof *types * (size_t)(k - 1));
        pat **spec = su_arena_alloc(a, sizeof *spec * (size_t)(nrows + 1));
        int ns = 0;
        for (int r = 0; r < nrows; r++) {
            pat head = rows[r][0];
            if (!is_wild(head) && c && head->ctor != c)
                continue;
            pat *row = su_arena_alloc(a, sizeof *row * (size_t)(arity + k));
            for (int i = 0; i < arity; i++)
                row[i] = is_wild(head) ? NULL : &head->subs[i];
            memcpy(row + arity, rows[r] + 1, sizeof *row * (size_t)(k - 1));
            spec[ns++] = row;
        }
        const char **w = witness(a, (pat *const *)spec, ns, arity + k - 1, ft);
        if (!w)
            continue;
        su_buf b = {0};
        su_buf_puts(&b, c ? c->name : "");
        if (!c || arity)
            for (int i = 0; i < arity; i++)
                su_buf_printf(&b, "%s%s", i ? ", " : "(", w[i]);
        if (!c || arity)
            su_buf_puts(&b, arity ? ")" : "()");
        const char **out = su_arena_alloc(a, sizeof *out * (size_t)k);
        out[0] = su_arena_strdup(a, su_buf_str(&b));
        su_buf_free(&b);
        memcpy(out + 1, w + arity, sizeof *w * (size_t)(k - 1));
        return out;
    }
    return NULL;
}

const char *ir_match_missing(su_arena *a, const ir_expr *match)
{
    const ir_type *t = match->u.match.data->type;
    if (!t)
        return NULL;
    su_arena tmp;
    su_arena_init(&tmp);
    int n = match->u.match.n;
    pat **rows = su_arena_alloc(&tmp, sizeof *rows * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        rows[i] = su_arena_alloc(&tmp, sizeof **rows);
        rows[i][0] = &match->u.match.clauses[i].pat;
    }
    const char **w = witness(&tmp, (pat *const *)rows, n, 1, &t);
    const char *r = w ? su_arena_strdup(a, w[0]) : NULL;
    su_arena_free(&tmp);
    return r;
}

/* ---- what compile and tune take ---- */

typedef struct fo_walk {
    const ir_module *m;
    su_diags *d;
    bool *reached;          /* per def */
    SU_VEC(size_t) todo;    /* defs reached, not walked yet */
    const char *def;        /* the def being walked */
    bool failed;
} fo_walk;

static const char *construct_name(su_arena *a, const ir_expr *e)
{
    if (e->kind == IR_CALL && e->u.call.fn->kind == IR_CTOR)
        e = e->u.call.fn;
    if (e->kind == IR_CTOR)
        return su_arena_printf(a, "the constructor %s", e->u.ctor.def->name);
    switch (e->kind) {
    case IR_MATCH: return e->u.match.partial ? "`match?`" : "`match`";
    case IR_REF_NEW: return "`ref`";
    case IR_REF_READ: return "`ref_read`";
    case IR_REF_WRITE: return "`ref_write`";
    default: break;
    }
    if (e->type && (e->type->kind == IR_TY_ADT || e->type->kind == IR_TY_REF))
        return su_arena_printf(a, "a value of type %s", ir_type_str(a, e->type));
    return NULL;
}

static ir_visit_step fo_enter(ir_visitor *v, const ir_expr *e)
{
    (void)e;
    return ((fo_walk *)v->ctx)->failed ? IR_VISIT_STOP : IR_VISIT_DESCEND;
}

/* After a node's operands, so that the first construct reported is the
 * innermost, earliest one (a constructor's call before the list it builds). */
static void fo_node(ir_visitor *v, const ir_expr *e)
{
    fo_walk *w = v->ctx;
    if (w->failed)
        return;
    const char *what = construct_name(&((ir_module *)w->m)->arena, e);
    su_buf who = {0};
    if (what || e->kind == IR_DEVICE)
        su_buf_printf(&who, strcmp(w->def, "main") == 0 ? "@main" : "@main calls @%s, which", w->def);
    if (what) {
        su_error(w->d, e->span,
                 "%s uses %s: algebraic data types, match and references run only in the interpreter "
                 "(relay-tune run --target interp); compile and tune take first-order tensor code", su_buf_str(&who), what);
        su_buf_free(&who);
        w->failed = true;
        return;
    }
    if (e->kind == IR_DEVICE) {
        su_error(w->d, e->span,
                 "%s uses %s: device annotations are kept and run in the interpreter (relay-tune run --target "
                 "interp), but compile places everything on its one target; remove the annotation to compile",
                 su_buf_str(&who), e->u.device.copy ? "device_copy" : "on_device");
        su_buf_free(&who);
        w->failed = true;
        return;
    }
    if (e->kind == IR_GLOBAL) {
        ir_global_def *g = ir_module_find(w->m, e->u.global.name);
        size_t i = g ? (size_t)(g - w->m->defs.data) : 0;
        if (g && !w->reached[i]) {
            w->reached[i] = true;
            su_vec_push(&w->todo, i);
        }
    }
}

/* Keeps only the defs marked in keep, in their order. */
static void keep_defs(ir_module *m, const bool *keep)
{
    size_t n = 0;
    for (size_t i = 0; i < m->defs.len; i++)
        if (keep[i])
            m->defs.data[n++] = m->defs.data[i];
    m->defs.len = n;
    su_map_free(&m->by_name);
    memset(&m->by_name, 0, sizeof m->by_name);
    for (size_t i = 0; i < n; i++)
        su_map_put(&m->by_name, m->defs.data[i].name, (void *)(uintptr_t)(i + 1));
}

bool ir_module_first_order(ir_module *m, su_diags *d)
{
    ir_global_def *g = ir_module_find(m, "main");
    if (!g)
        return true;    /* compile says what is missing itself */
    fo_walk w = {m, d, su_calloc(m->defs.len + 1, sizeof(bool)), {0}, NULL, false};
    size_t main_i = (size_t)(g - m->defs.data);
    w.reached[main_i] = true;
    su_vec_push(&w.todo, main_i);
    ir_visitor v;
    ir_visitor_init(&v, fo_enter, fo_node, &w);
    while (w.todo.len && !w.failed) {
        ir_global_def *def = &m->defs.data[w.todo.data[--w.todo.len]];
        w.def = def->name;
        for (int i = 0; i < def->func->u.func.nparams && !w.failed; i++)
            ir_visit(&v, def->func->u.func.params[i]);
        if (!w.failed)
            ir_visit(&v, def->func->u.func.body);
    }
    ir_visitor_free(&v);
    if (!w.failed)
        keep_defs(m, w.reached);
    free(w.reached);
    su_vec_free(&w.todo);
    return !w.failed;
}
