/* expr.c — LoopIR expressions: variables, constants, arithmetic, loads of
 * buffers and (before lowering) reads of tensors. Nodes are immutable and
 * live in an arena; builders fold constants and the trivial identities so
 * that compute definitions and lowering can build naively and stay small.
 * The heavier rewriting (linear forms, division by constants, bounds) is in
 * simplify.c. Integer division and modulo are floor division and floor
 * modulo, as in TVM's floordiv/floormod: index arithmetic never depends on
 * C's truncation. */
#include <math.h>
#include <string.h>

#include "schedule/schedule.h"

static const char *const kind_names[] = {
#define X(id, text) text,
    SCH_EXPR_KINDS(X)
#undef X
};

const char *sch_expr_kind_name(sch_expr_kind k)
{
    return k < SCH_EXPR_KIND_COUNT ? kind_names[k] : "?";
}

static const char *const intrinsic_names[] = {
#define X(id, name) name,
    SCH_INTRINSICS(X)
#undef X
};

const char *sch_intrinsic_name(sch_intrinsic fn)
{
    return intrinsic_names[fn];
}

sch_var *sch_var_new(su_arena *a, uint32_t *counter, const char *name, ir_dtype dt)
{
    sch_var *v = su_arena_alloc(a, sizeof *v);
    v->id = (*counter)++;
    v->name = su_arena_strdup(a, name);
    v->dtype = dt;
    return v;
}

static sch_expr *node(su_arena *a, sch_expr_kind k, ir_dtype dt)
{
    sch_expr *e = su_arena_alloc(a, sizeof *e);
    e->kind = k;
    e->dtype = dt;
    return e;
}

const sch_expr *sch_const_int(su_arena *a, ir_dtype dt, int64_t v)
{
    sch_expr *e = node(a, SCH_INT, dt);
    e->i = dt == IR_BOOL ? v != 0 : v;
    return e;
}

const sch_expr *sch_int(su_arena *a, int64_t v)
{
    return sch_const_int(a, IR_INT64, v);
}

const sch_expr *sch_float(su_arena *a, ir_dtype dt, double v)
{
    sch_expr *e = node(a, SCH_FLOAT, dt);
    e->f = dt == IR_FLOAT32 ? (double)(float)v : v;
    return e;
}

const sch_expr *sch_const(su_arena *a, ir_dtype dt, double v)
{
    return ir_dtype_is_float(dt) ? sch_float(a, dt, v) : sch_const_int(a, dt, (int64_t)v);
}

const sch_expr *sch_varref(su_arena *a, sch_var *v)
{
    sch_expr *e = node(a, SCH_VAR, v->dtype);
    e->var = v;
    return e;
}

bool sch_is_int(const sch_expr *e, int64_t v)
{
    return e && e->kind == SCH_INT && e->i == v;
}

bool sch_is_binary(sch_expr_kind k)
{
    return k >= SCH_ADD && k <= SCH_OR;
}

static bool is_compare(sch_expr_kind k)
{
    return k >= SCH_EQ && k <= SCH_GE;
}

/* Wraps v to the range of integer dtype dt (two's complement). */
static int64_t wrap_int(ir_dtype dt, int64_t v)
{
    switch (dt) {
    case IR_INT8: return (int8_t)v;
    case IR_INT16: return (int16_t)v;
    case IR_INT32: return (int32_t)v;
    case IR_UINT8: return (uint8_t)v;
    case IR_BOOL: return v != 0;
    default: return v;
    }
}

/* Folds an integer binary operation; false when it cannot (division by
 * zero, overflow). */
static bool fold_int(sch_expr_kind k, int64_t x, int64_t y, int64_t *out)
{
    switch (k) {
    case SCH_ADD: return !__builtin_add_overflow(x, y, out);
    case SCH_SUB: return !__builtin_sub_overflow(x, y, out);
    case SCH_MUL: return !__builtin_mul_overflow(x, y, out);
    case SCH_DIV:
        if (y == 0 || (x == INT64_MIN && y == -1))
            return false;
        *out = ir_floordiv(x, y);
        return true;
    case SCH_MOD:
        if (y == 0 || y == -1)
            return y == -1 ? (*out = 0, true) : false;
        *out = ir_floormod(x, y);
        return true;
    case SCH_MIN: *out = x < y ? x : y; return true;
    case SCH_MAX: *out = x > y ? x : y; return true;
    case SCH_EQ: *out = x == y; return true;
    case SCH_NE: *out = x != y; return true;
    case SCH_LT: *out = x < y; return true;
    case SCH_LE: *out = x <= y; return true;
    case SCH_GT: *out = x > y; return true;
    case SCH_GE: *out = x >= y; return true;
    case SCH_AND: *out = x && y; return true;
    case SCH_OR: *out = x || y; return true;
    default: return false;
    }
}

/* Folds a floating binary operation as C would in dtype dt. */
static bool fold_float(sch_expr_kind k, ir_dtype dt, double x, double y, double *out)
{
    bool f32 = dt == IR_FLOAT32;
    switch (k) {
    case SCH_ADD: *out = f32 ? (double)((float)x + (float)y) : x + y; return true;
    case SCH_SUB: *out = f32 ? (double)((float)x - (float)y) : x - y; return true;
    case SCH_MUL: *out = f32 ? (double)((float)x * (float)y) : x * y; return true;
    case SCH_DIV: *out = f32 ? (double)((float)x / (float)y) : x / y; return true;
    case SCH_MIN: *out = ir_min_nan(x, y); return true;
    case SCH_MAX: *out = ir_max_nan(x, y); return true;
    case SCH_EQ: *out = x == y; return true;
    case SCH_NE: *out = x != y; return true;
    case SCH_LT: *out = x < y; return true;
    case SCH_LE: *out = x <= y; return true;
    case SCH_GT: *out = x > y; return true;
    case SCH_GE: *out = x >= y; return true;
    default: return false;
    }
}

const sch_expr *sch_bin(su_arena *a, sch_expr_kind k, const sch_expr *x, const sch_expr *y)
{
    ir_dtype dt = is_compare(k) || k == SCH_AND || k == SCH_OR ? IR_BOOL : x->dtype;
    bool isint = !ir_dtype_is_float(x->dtype);
    if (x->kind == SCH_INT && y->kind == SCH_INT) {
        int64_t v;
        if (fold_int(k, x->i, y->i, &v))
            return sch_const_int(a, dt, dt == IR_BOOL ? v : wrap_int(dt, v));
    }
    if (x->kind == SCH_FLOAT && y->kind == SCH_FLOAT) {
        double v;
        if (fold_float(k, x->dtype, x->f, y->f, &v))
            return dt == IR_BOOL ? sch_const_int(a, IR_BOOL, v != 0) : sch_float(a, dt, v);
    }
    if (isint) {
        switch (k) {
        case SCH_ADD:
            if (sch_is_int(x, 0))
                return y;
            if (sch_is_int(y, 0))
                return x;
            break;
        case SCH_SUB:
            if (sch_is_int(y, 0))
                return x;
            break;
        case SCH_MUL:
            if (sch_is_int(x, 1))
                return y;
            if (sch_is_int(y, 1))
                return x;
            if (sch_is_int(x, 0) || sch_is_int(y, 0))
                return sch_const_int(a, dt, 0);
            break;
        case SCH_DIV:
            if (sch_is_int(y, 1))
                return x;
            break;
        case SCH_MOD:
            if (sch_is_int(y, 1))
                return sch_const_int(a, dt, 0);
            break;
        case SCH_AND:
            if (sch_is_int(x, 1))
                return y;
            if (sch_is_int(y, 1))
                return x;
            if (sch_is_int(x, 0) || sch_is_int(y, 0))
                return sch_const_int(a, IR_BOOL, 0);
            break;
        case SCH_OR:
            if (sch_is_int(x, 0))
                return y;
            if (sch_is_int(y, 0))
                return x;
            if (sch_is_int(x, 1) || sch_is_int(y, 1))
                return sch_const_int(a, IR_BOOL, 1);
            break;
        default: break;
        }
    }
    sch_expr *e = node(a, k, dt);
    e->a = x;
    e->b = y;
    return e;
}

const sch_expr *sch_and(su_arena *a, const sch_expr *x, const sch_expr *y)
{
    if (!x)
        return y;
    if (!y)
        return x;
    return sch_bin(a, SCH_AND, x, y);
}

const sch_expr *sch_not(su_arena *a, const sch_expr *x)
{
    if (x->kind == SCH_INT)
        return sch_const_int(a, IR_BOOL, !x->i);
    if (x->kind == SCH_NOT)
        return x->a;
    sch_expr *e = node(a, SCH_NOT, IR_BOOL);
    e->a = x;
    return e;
}

const sch_expr *sch_select(su_arena *a, const sch_expr *c, const sch_expr *t, const sch_expr *f)
{
    if (c->kind == SCH_INT)
        return c->i ? t : f;
    if (sch_expr_equal(t, f))
        return t;
    sch_expr *e = node(a, SCH_SELECT, t->dtype);
    e->a = c;
    e->b = t;
    e->c = f;
    return e;
}

const sch_expr *sch_cast(su_arena *a, ir_dtype dt, const sch_expr *x)
{
    if (x->dtype == dt)
        return x;
    if (x->kind == SCH_INT)
        return ir_dtype_is_float(dt) ? sch_float(a, dt, (double)x->i) : sch_const_int(a, dt, wrap_int(dt, x->i));
    if (x->kind == SCH_FLOAT && ir_dtype_is_float(dt))
        return sch_float(a, dt, x->f);
    if (x->kind == SCH_FLOAT && dt == IR_BOOL)
        return sch_const_int(a, dt, x->f != 0);
    if (x->kind == SCH_FLOAT && ir_dtype_is_int(dt) && isfinite(x->f) && fabs(x->f) < 9.2e18)
        return sch_const_int(a, dt, wrap_int(dt, (int64_t)x->f));
    sch_expr *e = node(a, SCH_CAST, dt);
    e->a = x;
    return e;
}

const sch_expr *sch_call(su_arena *a, sch_intrinsic fn, ir_dtype dt, int n, const sch_expr *const *args)
{
    sch_expr *e = node(a, SCH_CALL, dt);
    e->fn = fn;
    e->n = n;
    e->args = n ? su_arena_dup(a, args, (size_t)n * sizeof *args) : NULL;
    return e;
}

const sch_expr *sch_call1(su_arena *a, sch_intrinsic fn, const sch_expr *x)
{
    return sch_call(a, fn, x->dtype, 1, &x);
}

const sch_expr *sch_load(su_arena *a, sch_buffer *b, const sch_expr *index)
{
    sch_expr *e = node(a, SCH_LOAD, b->dtype);
    e->buf = b;
    e->a = index;
    return e;
}

const sch_expr *sch_read(su_arena *a, sch_tensor *t, int n, const sch_expr *const *idx)
{
    sch_expr *e = node(a, SCH_READ, t->dtype);
    e->tensor = t;
    e->n = n;
    e->args = n ? su_arena_dup(a, idx, (size_t)n * sizeof *idx) : NULL;
    return e;
}

bool sch_expr_equal(const sch_expr *x, const sch_expr *y)
{
    if (x == y)
        return true;
    if (!x || !y || x->kind != y->kind || x->dtype != y->dtype)
        return false;
    switch (x->kind) {
    case SCH_INT: return x->i == y->i;
    case SCH_FLOAT: return x->f == y->f || (isnan(x->f) && isnan(y->f));
    case SCH_VAR: return x->var == y->var;
    case SCH_LOAD: return x->buf == y->buf && sch_expr_equal(x->a, y->a);
    case SCH_CALL:
    case SCH_READ:
        if (x->n != y->n || x->fn != y->fn || x->tensor != y->tensor)
            return false;
        for (int i = 0; i < x->n; i++)
            if (!sch_expr_equal(x->args[i], y->args[i]))
                return false;
        return true;
    default:
        return sch_expr_equal(x->a, y->a) && sch_expr_equal(x->b, y->b) && sch_expr_equal(x->c, y->c);
    }
}

size_t sch_expr_size(const sch_expr *e)
{
    if (!e)
        return 0;
    size_t n = 1 + sch_expr_size(e->a) + sch_expr_size(e->b) + sch_expr_size(e->c);
    for (int i = 0; i < e->n; i++)
        n += sch_expr_size(e->args[i]);
    return n;
}

bool sch_expr_any(const sch_expr *e, bool (*pred)(const void *ctx, const sch_expr *n), const void *ctx)
{
    if (!e)
        return false;
    if (pred(ctx, e))
        return true;
    if (sch_expr_any(e->a, pred, ctx) || sch_expr_any(e->b, pred, ctx) || sch_expr_any(e->c, pred, ctx))
        return true;
    for (int i = 0; i < e->n; i++)
        if (sch_expr_any(e->args[i], pred, ctx))
            return true;
    return false;
}

static bool is_var(const void *v, const sch_expr *n)
{
    return n->kind == SCH_VAR && n->var == v;
}

bool sch_expr_uses(const sch_expr *e, const sch_var *v)
{
    return sch_expr_any(e, is_var, v);
}

/* Rebuilds e with new operands through the folding builders. */
static const sch_expr *rebuild(su_arena *a, const sch_expr *e, const sch_expr *na, const sch_expr *nb,
                               const sch_expr *nc, const sch_expr *const *nargs)
{
    switch (e->kind) {
    case SCH_INT:
    case SCH_FLOAT:
    case SCH_VAR: return e;
    case SCH_NOT: return sch_not(a, na);
    case SCH_SELECT: return sch_select(a, na, nb, nc);
    case SCH_CAST: return sch_cast(a, e->dtype, na);
    case SCH_CALL: return sch_call(a, e->fn, e->dtype, e->n, nargs);
    case SCH_LOAD: return sch_load(a, e->buf, na);
    case SCH_READ: return sch_read(a, e->tensor, e->n, nargs);
    default: return sch_bin(a, e->kind, na, nb);
    }
}

typedef struct subst {
    int n;
    sch_var *const *vars;
    const sch_expr *const *vals;
    sch_read_fn read_fn;
    void *read_ctx;
} subst;

static const sch_expr *subst_rec(su_arena *a, const sch_expr *e, const subst *s)
{
    if (!e)
        return NULL;
    if (e->kind == SCH_VAR) {
        for (int i = 0; i < s->n; i++)
            if (s->vars[i] == e->var)
                return s->vals[i];
        return e;
    }
    if (e->kind == SCH_INT || e->kind == SCH_FLOAT)
        return e;
    const sch_expr *na = subst_rec(a, e->a, s), *nb = subst_rec(a, e->b, s), *nc = subst_rec(a, e->c, s);
    const sch_expr *buf[8], **nargs = buf;
    bool same = na == e->a && nb == e->b && nc == e->c;
    if (e->n > 8)
        nargs = su_arena_alloc(a, (size_t)e->n * sizeof *nargs);
    for (int i = 0; i < e->n; i++) {
        nargs[i] = subst_rec(a, e->args[i], s);
        same = same && nargs[i] == e->args[i];
    }
    const sch_expr *r = same ? e : rebuild(a, e, na, nb, nc, nargs);
    if (r->kind == SCH_READ && s->read_fn) {
        const sch_expr *m = s->read_fn(s->read_ctx, r);
        if (m)
            return m;
    }
    return r;
}

const sch_expr *sch_substitute(su_arena *a, const sch_expr *e, int n, sch_var *const *vars,
                               const sch_expr *const *vals)
{
    subst s = {n, vars, vals, NULL, NULL};
    return n ? subst_rec(a, e, &s) : e;
}

const sch_expr *sch_map_reads(su_arena *a, const sch_expr *e, sch_read_fn fn, void *ctx)
{
    subst s = {0, NULL, NULL, fn, ctx};
    return subst_rec(a, e, &s);
}
