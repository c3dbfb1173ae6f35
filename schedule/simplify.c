/* simplify.c — the arithmetic simplifier for index expressions and the
 * bounds analysis it rests on.
 *
 * Integer sums of products are put into a linear form: a list of terms
 * (any non-linear subexpression: a variable, x / c, x % c, min, a load)
 * with integer coefficients, plus a constant. Like terms merge, and the pair
 * (x / c) * c + (x % c) becomes x again, which is what makes split-then-fuse
 * round-trip. Division and modulo by a positive constant c split the linear
 * form into the part whose coefficients c divides (it leaves the division
 * exactly) and a remainder; when the remainder's bounds fit inside one
 * multiple of c the division is decided. Comparisons, min and max are
 * decided from the bounds of (a - b); loop counters get their bounds from
 * their loop's extent, so guards that always hold disappear.
 *
 * Bounds are intervals over int64; INT64_MIN / INT64_MAX stand for unknown
 * and every operation saturates into them rather than overflowing. */
#include <string.h>

#include "schedule/schedule.h"

#define NEG_INF INT64_MIN
#define POS_INF INT64_MAX

void sch_bounds_push(sch_bounds_ctx *c, const sch_var *v, int64_t lo, int64_t hi)
{
    sch_range r = {v, lo, hi};
    su_vec_push(&c->r, r);
}

bool sch_bounds_push_value(sch_bounds_ctx *c, const sch_var *v, const sch_expr *value)
{
    int64_t lo, hi;
    if (ir_dtype_is_float(value->dtype) || !sch_bounds(c, value, &lo, &hi))
        return false;
    sch_bounds_push(c, v, lo, hi);
    return true;
}

void sch_bounds_pop(sch_bounds_ctx *c)
{
    if (c->r.len)
        c->r.len--;
}

void sch_bounds_free(sch_bounds_ctx *c)
{
    su_vec_free(&c->r);
}

/* ---- interval arithmetic ------------------------------------------------ */

static bool known(int64_t lo, int64_t hi)
{
    return lo != NEG_INF && hi != POS_INF;
}

/* Saturating add of two interval ends (an infinite end stays infinite). */
static int64_t sat_add(int64_t x, int64_t y, int64_t inf)
{
    int64_t r;
    if (x == NEG_INF || x == POS_INF || y == NEG_INF || y == POS_INF || __builtin_add_overflow(x, y, &r))
        return inf;
    return r;
}

/* Scales [lo, hi] by constant k. */
static void scale(int64_t k, int64_t *lo, int64_t *hi)
{
    int64_t a, b;
    bool ok = known(*lo, *hi) && !__builtin_mul_overflow(*lo, k, &a) && !__builtin_mul_overflow(*hi, k, &b);
    if (!ok) {
        if (k == 0) {
            *lo = *hi = 0;
            return;
        }
        int64_t l = *lo, h = *hi;
        /* one known end may survive */
        if (k > 0) {
            *lo = l == NEG_INF || __builtin_mul_overflow(l, k, &a) ? NEG_INF : a;
            *hi = h == POS_INF || __builtin_mul_overflow(h, k, &b) ? POS_INF : b;
        } else {
            *lo = h == POS_INF || __builtin_mul_overflow(h, k, &a) ? NEG_INF : a;
            *hi = l == NEG_INF || __builtin_mul_overflow(l, k, &b) ? POS_INF : b;
        }
        return;
    }
    *lo = k >= 0 ? a : b;
    *hi = k >= 0 ? b : a;
}

/* ---- linear forms ------------------------------------------------------- */

enum { MAX_TERMS = 48 };

typedef struct term { const sch_expr *e; int64_t c; } term;

typedef struct lin {
    term t[MAX_TERMS];
    int n;
    int64_t k;          /* the constant */
    bool ok;            /* false after an overflow or too many terms */
} lin;

static bool is_index_int(const sch_expr *e)
{
    return e->dtype == IR_INT64 || e->dtype == IR_INT32;
}

static void lin_add_term(lin *l, const sch_expr *e, int64_t c)
{
    if (c == 0)
        return;
    for (int i = 0; i < l->n; i++) {
        if (sch_expr_equal(l->t[i].e, e)) {
            if (__builtin_add_overflow(l->t[i].c, c, &l->t[i].c))
                l->ok = false;
            if (l->t[i].c == 0) {
                memmove(&l->t[i], &l->t[i + 1], (size_t)(l->n - i - 1) * sizeof *l->t);
                l->n--;
            }
            return;
        }
    }
    if (l->n == MAX_TERMS) {
        l->ok = false;
        return;
    }
    l->t[l->n].e = e;
    l->t[l->n].c = c;
    l->n++;
}

/* Adds c * e to l, expanding sums, differences and products by constants. */
static void lin_add(lin *l, const sch_expr *e, int64_t c)
{
    int64_t v;
    switch (e->kind) {
    case SCH_INT:
        if (__builtin_mul_overflow(e->i, c, &v) || __builtin_add_overflow(l->k, v, &l->k))
            l->ok = false;
        return;
    case SCH_ADD:
        lin_add(l, e->a, c);
        lin_add(l, e->b, c);
        return;
    case SCH_SUB:
        if (c == INT64_MIN) {
            l->ok = false;
            return;
        }
        lin_add(l, e->a, c);
        lin_add(l, e->b, -c);
        return;
    case SCH_MUL:
        if (e->b->kind == SCH_INT || e->a->kind == SCH_INT) {
            const sch_expr *k = e->b->kind == SCH_INT ? e->b : e->a, *x = k == e->b ? e->a : e->b;
            if (__builtin_mul_overflow(k->i, c, &v))
                l->ok = false;
            else
                lin_add(l, x, v);
            return;
        }
        break;
    default: break;
    }
    lin_add_term(l, e, c);
}

/* Replaces (x / c) * (b * c) + (x % c) * b by x * b, repeatedly. */
static void lin_merge_divmod(lin *l)
{
    bool changed = true;
    while (changed && l->ok) {
        changed = false;
        for (int i = 0; i < l->n && !changed; i++) {
            const sch_expr *d = l->t[i].e;
            if (d->kind != SCH_DIV || d->b->kind != SCH_INT || d->b->i <= 0)
                continue;
            for (int j = 0; j < l->n && !changed; j++) {
                const sch_expr *m = l->t[j].e;
                int64_t prod;
                if (m->kind != SCH_MOD || !sch_expr_equal(m->a, d->a) || !sch_expr_equal(m->b, d->b) ||
                    __builtin_mul_overflow(l->t[j].c, d->b->i, &prod) || prod != l->t[i].c)
                    continue;
                int64_t b = l->t[j].c;
                const sch_expr *x = d->a;
                /* remove both terms, then add x * b */
                int hi = i > j ? i : j, lo = i > j ? j : i;
                memmove(&l->t[hi], &l->t[hi + 1], (size_t)(l->n - hi - 1) * sizeof *l->t);
                l->n--;
                memmove(&l->t[lo], &l->t[lo + 1], (size_t)(l->n - lo - 1) * sizeof *l->t);
                l->n--;
                lin_add(l, x, b);
                changed = true;
            }
        }
    }
}

static void lin_of(lin *l, const sch_expr *e)
{
    l->n = 0;
    l->k = 0;
    l->ok = true;
    lin_add(l, e, 1);
    lin_merge_divmod(l);
}

/* Builds c * e. */
static const sch_expr *scaled(su_arena *a, const sch_expr *e, int64_t c, ir_dtype dt)
{
    return c == 1 ? e : sch_mul(a, e, sch_const_int(a, dt, c));
}

/* The expression of a linear form: positive terms first (in order), then
 * negative ones subtracted, then the constant. */
static const sch_expr *lin_expr(su_arena *a, const lin *l, ir_dtype dt)
{
    const sch_expr *acc = NULL;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < l->n; i++) {
            int64_t c = l->t[i].c;
            if ((pass == 0) != (c > 0))
                continue;
            if (pass == 0)
                acc = acc ? sch_add(a, acc, scaled(a, l->t[i].e, c, dt)) : scaled(a, l->t[i].e, c, dt);
            else if (acc && c != INT64_MIN)
                acc = sch_sub(a, acc, scaled(a, l->t[i].e, -c, dt));
            else
                acc = acc ? sch_add(a, acc, scaled(a, l->t[i].e, c, dt)) : scaled(a, l->t[i].e, c, dt);
        }
    }
    if (!acc)
        return sch_const_int(a, dt, l->k);
    if (l->k > 0)
        return sch_add(a, acc, sch_const_int(a, dt, l->k));
    if (l->k < 0 && l->k != INT64_MIN)
        return sch_sub(a, acc, sch_const_int(a, dt, -l->k));
    if (l->k < 0)
        return sch_add(a, acc, sch_const_int(a, dt, l->k));
    return acc;
}

/* ---- bounds ------------------------------------------------------------- */

static void bounds_rec(const sch_bounds_ctx *c, const sch_expr *e, int64_t *lo, int64_t *hi);

static void lin_bounds(const sch_bounds_ctx *c, const lin *l, int64_t *lo, int64_t *hi)
{
    int64_t L = l->k, H = l->k;
    for (int i = 0; i < l->n; i++) {
        int64_t tl, th;
        bounds_rec(c, l->t[i].e, &tl, &th);
        scale(l->t[i].c, &tl, &th);
        L = sat_add(L, tl, NEG_INF);
        H = sat_add(H, th, POS_INF);
    }
    *lo = L;
    *hi = H;
}

static void bounds_rec(const sch_bounds_ctx *c, const sch_expr *e, int64_t *lo, int64_t *hi)
{
    int64_t al, ah, bl, bh;
    *lo = NEG_INF;
    *hi = POS_INF;
    if (ir_dtype_is_float(e->dtype))
        return;
    if (e->dtype == IR_BOOL) {
        *lo = 0;
        *hi = 1;
        if (e->kind == SCH_INT)
            *lo = *hi = e->i;
        return;
    }
    switch (e->kind) {
    case SCH_INT: *lo = *hi = e->i; return;
    case SCH_VAR:
        for (size_t i = c ? c->r.len : 0; i-- > 0;)
            if (c->r.data[i].var == e->var) {
                *lo = c->r.data[i].lo;
                *hi = c->r.data[i].hi;
                return;
            }
        return;
    case SCH_ADD:
    case SCH_SUB: {
        lin l;
        lin_of(&l, e);
        if (l.ok)
            lin_bounds(c, &l, lo, hi);
        return;
    }
    case SCH_MUL:
        if (e->b->kind == SCH_INT || e->a->kind == SCH_INT) {
            const sch_expr *k = e->b->kind == SCH_INT ? e->b : e->a;
            bounds_rec(c, k == e->b ? e->a : e->b, lo, hi);
            scale(k->i, lo, hi);
            return;
        }
        bounds_rec(c, e->a, &al, &ah);
        bounds_rec(c, e->b, &bl, &bh);
        if (known(al, ah) && known(bl, bh)) {
            int64_t p[4];
            if (__builtin_mul_overflow(al, bl, &p[0]) || __builtin_mul_overflow(al, bh, &p[1]) ||
                __builtin_mul_overflow(ah, bl, &p[2]) || __builtin_mul_overflow(ah, bh, &p[3]))
                return;
            *lo = *hi = p[0];
            for (int i = 1; i < 4; i++) {
                *lo = p[i] < *lo ? p[i] : *lo;
                *hi = p[i] > *hi ? p[i] : *hi;
            }
        }
        return;
    case SCH_DIV:
        if (e->b->kind == SCH_INT && e->b->i > 0) {
            bounds_rec(c, e->a, &al, &ah);
            *lo = al == NEG_INF ? NEG_INF : ir_floordiv(al, e->b->i);
            *hi = ah == POS_INF ? POS_INF : ir_floordiv(ah, e->b->i);
        }
        return;
    case SCH_MOD:
        if (e->b->kind == SCH_INT && e->b->i > 0) {
            int64_t m = e->b->i;
            bounds_rec(c, e->a, &al, &ah);
            if (known(al, ah) && ir_floordiv(al, m) == ir_floordiv(ah, m)) {
                *lo = ir_floormod(al, m);
                *hi = ir_floormod(ah, m);
            } else {
                *lo = 0;
                *hi = m - 1;
            }
        }
        return;
    case SCH_MIN:
    case SCH_MAX:
        bounds_rec(c, e->a, &al, &ah);
        bounds_rec(c, e->b, &bl, &bh);
        if (e->kind == SCH_MIN) {
            *lo = al < bl ? al : bl;
            *hi = ah < bh ? ah : bh;
        } else {
            *lo = al > bl ? al : bl;
            *hi = ah > bh ? ah : bh;
        }
        return;
    case SCH_SELECT:
        bounds_rec(c, e->b, &al, &ah);
        bounds_rec(c, e->c, &bl, &bh);
        *lo = al < bl ? al : bl;
        *hi = ah > bh ? ah : bh;
        return;
    case SCH_CAST:
        if (!ir_dtype_is_float(e->a->dtype) && ir_dtype_bytes(e->dtype) >= ir_dtype_bytes(e->a->dtype))
            bounds_rec(c, e->a, lo, hi);
        return;
    default: return;
    }
}

bool sch_bounds(const sch_bounds_ctx *c, const sch_expr *e, int64_t *lo, int64_t *hi)
{
    bounds_rec(c, e, lo, hi);
    return known(*lo, *hi);
}

/* ---- simplification ------------------------------------------------------ */

typedef struct simp {
    su_arena *a;
    const sch_bounds_ctx *c;
} simp;

static const sch_expr *simp_rec(simp *s, const sch_expr *e);

/* A linear form, simplified (also used for plain sums). */
static const sch_expr *simp_linear(simp *s, const sch_expr *e)
{
    lin l;
    lin_of(&l, e);
    if (!l.ok)
        return e;
    return lin_expr(s->a, &l, e->dtype);
}

/* x / m and x % m for a constant m > 0 (x simplified already). */
static const sch_expr *simp_divmod(simp *s, sch_expr_kind k, const sch_expr *x, int64_t m, ir_dtype dt)
{
    su_arena *a = s->a;
    lin l, q, r;
    lin_of(&l, x);
    if (!l.ok)
        return sch_bin(a, k, x, sch_const_int(a, dt, m));
    q.n = r.n = 0;
    q.ok = r.ok = true;
    q.k = ir_floordiv(l.k, m);
    r.k = ir_floormod(l.k, m);
    for (int i = 0; i < l.n; i++) {
        if (l.t[i].c % m == 0)
            lin_add_term(&q, l.t[i].e, l.t[i].c / m);
        else
            lin_add_term(&r, l.t[i].e, l.t[i].c);
    }
    int64_t lo, hi;
    lin_bounds(s->c, &r, &lo, &hi);
    bool decided = known(lo, hi) && ir_floordiv(lo, m) == ir_floordiv(hi, m);
    if (k == SCH_MOD) {
        if (decided) {
            r.k -= ir_floordiv(lo, m) * m;
            return lin_expr(a, &r, dt);
        }
        /* (y % (m * j)) % m = y % m */
        if (r.n == 1 && r.k == 0 && r.t[0].c == 1 && r.t[0].e->kind == SCH_MOD && r.t[0].e->b->kind == SCH_INT &&
            r.t[0].e->b->i > 0 && r.t[0].e->b->i % m == 0)
            return sch_bin(a, SCH_MOD, r.t[0].e->a, sch_const_int(a, dt, m));
        return sch_bin(a, SCH_MOD, lin_expr(a, &r, dt), sch_const_int(a, dt, m));
    }
    const sch_expr *rest;
    if (decided) {
        rest = sch_const_int(a, dt, ir_floordiv(lo, m));
    } else if (r.n == 1 && r.k == 0 && r.t[0].c == 1 && r.t[0].e->kind == SCH_DIV && r.t[0].e->b->kind == SCH_INT &&
               r.t[0].e->b->i > 0 && r.t[0].e->b->i <= INT64_MAX / m) {
        /* (y / j) / m = y / (j * m) */
        rest = sch_bin(a, SCH_DIV, r.t[0].e->a, sch_const_int(a, dt, r.t[0].e->b->i * m));
    } else {
        rest = sch_bin(a, SCH_DIV, lin_expr(a, &r, dt), sch_const_int(a, dt, m));
    }
    lin_add(&q, rest, 1);
    if (!q.ok)
        return sch_bin(a, k, x, sch_const_int(a, dt, m));
    return lin_expr(a, &q, dt);
}

/* Decides an integer comparison from the bounds of x - y, or returns NULL. */
static const sch_expr *decide_compare(simp *s, sch_expr_kind k, const sch_expr *x, const sch_expr *y)
{
    lin l;
    lin_of(&l, sch_sub(s->a, x, y));
    if (!l.ok)
        return NULL;
    int64_t lo, hi;
    lin_bounds(s->c, &l, &lo, &hi);
    int r = -1;
    switch (k) {
    case SCH_LT: r = hi != POS_INF && hi < 0 ? 1 : lo != NEG_INF && lo >= 0 ? 0 : -1; break;
    case SCH_LE: r = hi != POS_INF && hi <= 0 ? 1 : lo != NEG_INF && lo > 0 ? 0 : -1; break;
    case SCH_GT: r = lo != NEG_INF && lo > 0 ? 1 : hi != POS_INF && hi <= 0 ? 0 : -1; break;
    case SCH_GE: r = lo != NEG_INF && lo >= 0 ? 1 : hi != POS_INF && hi < 0 ? 0 : -1; break;
    case SCH_EQ: r = lo == 0 && hi == 0 ? 1 : (lo != NEG_INF && lo > 0) || (hi != POS_INF && hi < 0) ? 0 : -1; break;
    case SCH_NE: r = lo == 0 && hi == 0 ? 0 : (lo != NEG_INF && lo > 0) || (hi != POS_INF && hi < 0) ? 1 : -1; break;
    default: break;
    }
    return r < 0 ? NULL : sch_const_int(s->a, IR_BOOL, r);
}

static const sch_expr *simp_rec(simp *s, const sch_expr *e)
{
    su_arena *a = s->a;
    if (!e)
        return NULL;
    switch (e->kind) {
    case SCH_INT:
    case SCH_FLOAT:
    case SCH_VAR: return e;
    default: break;
    }
    const sch_expr *x = simp_rec(s, e->a), *y = simp_rec(s, e->b), *z = simp_rec(s, e->c);
    bool isint = sch_is_binary(e->kind) && x && is_index_int(x);
    switch (e->kind) {
    case SCH_ADD:
    case SCH_SUB:
    case SCH_MUL: {
        const sch_expr *r = sch_bin(a, e->kind, x, y);
        return isint && r->kind != SCH_INT ? simp_linear(s, r) : r;
    }
    case SCH_DIV:
    case SCH_MOD:
        if (isint && y->kind == SCH_INT && y->i > 0)
            return simp_divmod(s, e->kind, x, y->i, e->dtype);
        return sch_bin(a, e->kind, x, y);
    case SCH_MIN:
    case SCH_MAX:
        if (isint) {
            const sch_expr *le = decide_compare(s, SCH_LE, x, y);
            if (le)
                return (le->i != 0) == (e->kind == SCH_MIN) ? x : y;
        }
        return sch_bin(a, e->kind, x, y);
    case SCH_EQ: case SCH_NE: case SCH_LT: case SCH_LE: case SCH_GT: case SCH_GE:
        if (isint) {
            const sch_expr *d = decide_compare(s, e->kind, x, y);
            if (d)
                return d;
        }
        return sch_bin(a, e->kind, x, y);
    case SCH_AND:
    case SCH_OR: return sch_bin(a, e->kind, x, y);
    case SCH_NOT: return sch_not(a, x);
    case SCH_SELECT: return sch_select(a, x, y, z);
    case SCH_CAST: return sch_cast(a, e->dtype, x);
    case SCH_LOAD: return sch_load(a, e->buf, x);
    case SCH_CALL:
    case SCH_READ: {
        const sch_expr **args = su_arena_alloc(a, (size_t)(e->n ? e->n : 1) * sizeof *args);
        for (int i = 0; i < e->n; i++)
            args[i] = simp_rec(s, e->args[i]);
        return e->kind == SCH_CALL ? sch_call(a, e->fn, e->dtype, e->n, args) : sch_read(a, e->tensor, e->n, args);
    }
    default: return e;
    }
}

const sch_expr *sch_simplify(su_arena *a, const sch_bounds_ctx *c, const sch_expr *e)
{
    simp s = {a, c};
    return simp_rec(&s, e);
}

typedef struct simp_walk {
    su_arena *a;
    sch_bounds_ctx *c;
} simp_walk;

static const sch_expr *simp_operand(void *ctx, const sch_expr *e)
{
    const simp_walk *w = ctx;
    return sch_simplify(w->a, w->c, e);
}

static const sch_stmt *simp_stmt(void *ctx, const sch_stmt *st)
{
    simp_walk *w = ctx;
    su_arena *a = w->a;
    sch_bounds_ctx *c = w->c;
    switch (st->kind) {
    case SCH_S_FOR: {
        if (st->extent <= 0)
            return NULL;
        if (st->extent == 1) {
            const sch_expr *zero = sch_int(a, 0);
            sch_var *v = st->var;
            return sch_simplify_stmt(a, c, sch_stmt_substitute(a, st->body, 1, &v, &zero));
        }
        sch_bounds_push(c, st->var, 0, st->extent - 1);
        const sch_stmt *f = sch_stmt_map(a, st, NULL, simp_stmt, w);
        sch_bounds_pop(c);
        return f;
    }
    case SCH_S_LET: {
        /* the body under the bounds of the simplified value */
        const sch_expr *v = sch_simplify(a, c, st->value);
        bool b = sch_bounds_push_value(c, st->var, v);
        const sch_stmt *body = simp_stmt(w, st->body);
        if (b)
            sch_bounds_pop(c);
        return sch_let(a, st->var, v, body);
    }
    default: return sch_stmt_map(a, st, simp_operand, simp_stmt, w);
    }
}

const sch_stmt *sch_simplify_stmt(su_arena *a, sch_bounds_ctx *c, const sch_stmt *st)
{
    simp_walk w = {a, c};
    return st ? simp_stmt(&w, st) : NULL;
}
