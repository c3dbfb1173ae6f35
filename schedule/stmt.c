/* stmt.c — LoopIR statements, buffers and functions. A kernel body is a
 * tree of loops (serial, parallel, vectorized, unrolled or bound to a
 * work-item axis), stores into flat buffers, conditionals, scalar lets,
 * allocations of temporaries and, for devices, work-group barriers. Like expressions, statements are immutable
 * arena nodes; passes (simplification, substitution) build new ones and
 * share what they do not change. */
#include <string.h>

#include "schedule/schedule.h"

static const char *const loop_names[] = {
#define X(id, name) name,
    SCH_LOOP_KINDS(X)
#undef X
};

const char *sch_loop_kind_name(sch_loop_kind k)
{
    return k < SCH_LOOP_KIND_COUNT ? loop_names[k] : "?";
}

sch_buffer *sch_buffer_new(su_arena *a, const char *name, ir_dtype dt, int ndim, const int64_t *shape,
                           sch_scope scope)
{
    sch_buffer *b = su_arena_alloc(a, sizeof *b);
    b->name = su_arena_strdup(a, name);
    b->dtype = dt;
    b->ndim = ndim;
    b->shape = su_arena_alloc(a, (size_t)(ndim ? ndim : 1) * sizeof *shape);
    if (ndim)
        memcpy((int64_t *)b->shape, shape, (size_t)ndim * sizeof *shape);
    b->size = 1;
    for (int i = 0; i < ndim; i++)
        b->size *= shape[i];
    b->scope = scope;
    return b;
}

static sch_stmt *snode(su_arena *a, sch_stmt_kind k)
{
    sch_stmt *s = su_arena_alloc(a, sizeof *s);
    s->kind = k;
    return s;
}

const sch_stmt *sch_for(su_arena *a, sch_var *v, int64_t extent, sch_loop_kind k, const sch_stmt *body)
{
    if (!body)
        return NULL;
    sch_stmt *s = snode(a, SCH_S_FOR);
    s->var = v;
    s->extent = extent;
    s->loop = k;
    s->body = body;
    return s;
}

const sch_stmt *sch_store(su_arena *a, sch_buffer *b, const sch_expr *index, const sch_expr *value)
{
    sch_stmt *s = snode(a, SCH_S_STORE);
    s->buf = b;
    s->index = index;
    s->value = value;
    return s;
}

const sch_stmt *sch_if(su_arena *a, const sch_expr *cond, const sch_stmt *then_s, const sch_stmt *else_s)
{
    if (!cond || sch_is_int(cond, 1))
        return then_s;
    if (sch_is_int(cond, 0))
        return else_s;
    if (!then_s && !else_s)
        return NULL;
    if (!then_s) {
        cond = sch_not(a, cond);
        then_s = else_s;
        else_s = NULL;
    }
    sch_stmt *s = snode(a, SCH_S_IF);
    s->cond = cond;
    s->then_s = then_s;
    s->else_s = else_s;
    return s;
}

const sch_stmt *sch_let(su_arena *a, sch_var *v, const sch_expr *value, const sch_stmt *body)
{
    if (!body)
        return NULL;
    sch_stmt *s = snode(a, SCH_S_LET);
    s->var = v;
    s->value = value;
    s->body = body;
    return s;
}

const sch_stmt *sch_alloc(su_arena *a, sch_buffer *b, const sch_stmt *body)
{
    if (!body)
        return NULL;
    sch_stmt *s = snode(a, SCH_S_ALLOC);
    s->buf = b;
    s->body = body;
    return s;
}

const sch_stmt *sch_seq(su_arena *a, int n, const sch_stmt *const *items)
{
    int count = 0;
    for (int i = 0; i < n; i++)
        if (items[i])
            count += items[i]->kind == SCH_S_SEQ ? items[i]->n : 1;
    if (count == 0)
        return NULL;
    const sch_stmt **out = su_arena_alloc(a, (size_t)count * sizeof *out);
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!items[i])
            continue;
        if (items[i]->kind == SCH_S_SEQ)
            for (int j = 0; j < items[i]->n; j++)
                out[k++] = items[i]->items[j];
        else
            out[k++] = items[i];
    }
    if (count == 1)
        return out[0];
    sch_stmt *s = snode(a, SCH_S_SEQ);
    s->n = count;
    s->items = out;
    return s;
}

const sch_stmt *sch_seq2(su_arena *a, const sch_stmt *x, const sch_stmt *y)
{
    const sch_stmt *items[2] = {x, y};
    return sch_seq(a, 2, items);
}

const sch_stmt *sch_barrier(su_arena *a)
{
    return snode(a, SCH_S_BARRIER);
}

void sch_stmt_visit_exprs(const sch_stmt *s, void (*fn)(void *ctx, const sch_expr *e), void *ctx)
{
    if (!s)
        return;
    switch (s->kind) {
    case SCH_S_FOR: sch_stmt_visit_exprs(s->body, fn, ctx); break;
    case SCH_S_STORE:
        fn(ctx, s->index);
        fn(ctx, s->value);
        break;
    case SCH_S_IF:
        fn(ctx, s->cond);
        sch_stmt_visit_exprs(s->then_s, fn, ctx);
        sch_stmt_visit_exprs(s->else_s, fn, ctx);
        break;
    case SCH_S_LET:
        fn(ctx, s->value);
        sch_stmt_visit_exprs(s->body, fn, ctx);
        break;
    case SCH_S_ALLOC: sch_stmt_visit_exprs(s->body, fn, ctx); break;
    case SCH_S_SEQ:
        for (int i = 0; i < s->n; i++)
            sch_stmt_visit_exprs(s->items[i], fn, ctx);
        break;
    case SCH_S_BARRIER: break;
    }
}

bool sch_stmt_any(const sch_stmt *s, bool (*pred)(const void *ctx, const sch_stmt *n), const void *ctx)
{
    if (!s)
        return false;
    if (pred(ctx, s))
        return true;
    switch (s->kind) {
    case SCH_S_FOR:
    case SCH_S_LET:
    case SCH_S_ALLOC: return sch_stmt_any(s->body, pred, ctx);
    case SCH_S_IF: return sch_stmt_any(s->then_s, pred, ctx) || sch_stmt_any(s->else_s, pred, ctx);
    case SCH_S_SEQ:
        for (int i = 0; i < s->n; i++)
            if (sch_stmt_any(s->items[i], pred, ctx))
                return true;
        return false;
    case SCH_S_STORE:
    case SCH_S_BARRIER: return false;
    }
    return false;
}

static bool loads_buf(const void *b, const sch_expr *n)
{
    return n->kind == SCH_LOAD && n->buf == b;
}

typedef struct reads_ctx {
    const sch_buffer *b;
    bool found;
} reads_ctx;

static void note_reads(void *ctx, const sch_expr *e)
{
    reads_ctx *r = ctx;
    r->found = r->found || sch_expr_any(e, loads_buf, r->b);
}

bool sch_stmt_reads(const sch_stmt *s, const sch_buffer *b)
{
    reads_ctx r = {b, false};
    sch_stmt_visit_exprs(s, note_reads, &r);
    return r.found;
}

const sch_stmt *sch_stmt_map(su_arena *a, const sch_stmt *s, sch_expr_map_fn fe, sch_stmt_map_fn fs, void *ctx)
{
    if (!s)
        return NULL;
#define E(x) (fe && (x) ? fe(ctx, x) : (x))
#define S(x) (fs && (x) ? fs(ctx, x) : (x))
    switch (s->kind) {
    case SCH_S_FOR: {
        const sch_stmt *body = S(s->body);
        if (body == s->body)
            return s;
        const sch_stmt *f = sch_for(a, s->var, s->extent, s->loop, body);
        if (f)
            ((sch_stmt *)f)->thread_axis = s->thread_axis;
        return f;
    }
    /* the operands last to first: the order of the walks this one replaced
     * (GCC evaluated their constructors' arguments right to left), which
     * numbers the buffers and counters that a walk makes (lower.c's tails) */
    case SCH_S_STORE: {
        const sch_expr *value = E(s->value), *index = E(s->index);
        return index == s->index && value == s->value ? s : sch_store(a, s->buf, index, value);
    }
    case SCH_S_IF: {
        const sch_stmt *else_s = S(s->else_s), *then_s = S(s->then_s);
        const sch_expr *cond = E(s->cond);
        if (cond == s->cond && then_s == s->then_s && else_s == s->else_s)
            return s;
        return sch_if(a, cond, then_s, else_s);
    }
    case SCH_S_LET: {
        const sch_stmt *body = S(s->body);
        const sch_expr *value = E(s->value);
        return value == s->value && body == s->body ? s : sch_let(a, s->var, value, body);
    }
    case SCH_S_ALLOC: {
        const sch_stmt *body = S(s->body);
        return body == s->body ? s : sch_alloc(a, s->buf, body);
    }
    case SCH_S_SEQ: {
        const sch_stmt **items = NULL;  /* made at the first item that changes */
        for (int i = 0; i < s->n; i++) {
            const sch_stmt *x = S(s->items[i]);
            if (!items && x != s->items[i]) {
                items = su_arena_alloc(a, (size_t)s->n * sizeof *items);
                memcpy(items, s->items, (size_t)i * sizeof *items);
            }
            if (items)
                items[i] = x;
        }
        return items ? sch_seq(a, s->n, items) : s;
    }
    case SCH_S_BARRIER: return s;
    }
#undef E
#undef S
    return s;
}

typedef struct subst {
    su_arena *a;
    int n;
    sch_var *const *vars;
    const sch_expr *const *vals;
} subst;

static const sch_expr *subst_expr(void *ctx, const sch_expr *e)
{
    const subst *c = ctx;
    return sch_substitute(c->a, e, c->n, c->vars, c->vals);
}

static const sch_stmt *subst_stmt(void *ctx, const sch_stmt *s)
{
    return sch_stmt_map(((const subst *)ctx)->a, s, subst_expr, subst_stmt, ctx);
}

const sch_stmt *sch_stmt_substitute(su_arena *a, const sch_stmt *s, int n, sch_var *const *vars,
                                    const sch_expr *const *vals)
{
    subst c = {a, n, vars, vals};
    return subst_stmt(&c, s);
}
