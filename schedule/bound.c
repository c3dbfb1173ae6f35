/* bound.c — regions for compute_at: which part of a producer one iteration
 * of a consumer's loop reads. Each index the consumer reads the producer at
 * is split into the terms that mention the loops inside the attach point
 * (they range over their extents: an interval of constants) and the terms
 * that do not (fixed during the iteration: the region's symbolic minimum).
 * conv's read of its padded input at oh * 2 + kh, with kh inside, gives
 * min = oh * 2 and extent = KH. An axis whose reads cannot be split this way,
 * or whose reads disagree on the fixed part, gets the whole axis: always
 * correct, merely larger. */
#include <string.h>

#include "schedule/schedule.h"

typedef struct tterm { const sch_expr *e; int sign; } tterm;

/* Flattens the top-level sum of e into signed terms. */
static int terms_of(const sch_expr *e, int sign, tterm *out, int n, int max)
{
    if (n < 0)
        return n;
    if (e->kind == SCH_ADD) {
        n = terms_of(e->a, sign, out, n, max);
        return terms_of(e->b, sign, out, n, max);
    }
    if (e->kind == SCH_SUB) {
        n = terms_of(e->a, sign, out, n, max);
        return terms_of(e->b, -sign, out, n, max);
    }
    if (n == max)
        return -1;
    out[n].e = e;
    out[n].sign = sign;
    return n + 1;
}

static bool uses_any(const sch_expr *e, int n, sch_var *const *vars)
{
    for (int i = 0; i < n; i++)
        if (sch_expr_uses(e, vars[i]))
            return true;
    return false;
}

typedef struct reads { SU_VEC(const sch_expr *) v; } reads;

static void collect(const sch_expr *e, const sch_tensor *p, reads *r)
{
    if (!e)
        return;
    if (e->kind == SCH_READ && e->tensor == p)
        su_vec_push(&r->v, e);
    collect(e->a, p, r);
    collect(e->b, p, r);
    collect(e->c, p, r);
    for (int i = 0; i < e->n; i++)
        collect(e->args[i], p, r);
}

/* The fixed part and inner interval of one index; false when the index
 * mixes inner and fixed variables inside one non-linear term. */
static bool split_index(su_arena *a, const sch_bounds_ctx *c, const sch_expr *idx, int ninner,
                        sch_var *const *inner, const sch_expr **fixed, int64_t *lo, int64_t *hi)
{
    enum { MAXT = 64 };
    tterm t[MAXT];
    idx = sch_simplify(a, NULL, idx);
    int n = terms_of(idx, 1, t, 0, MAXT);
    if (n < 0)
        return false;
    const sch_expr *fx = sch_int(a, 0), *in = sch_int(a, 0);
    for (int i = 0; i < n; i++) {
        bool uses = uses_any(t[i].e, ninner, inner);
        const sch_expr **acc = uses ? &in : &fx;
        *acc = t[i].sign > 0 ? sch_add(a, *acc, t[i].e) : sch_sub(a, *acc, t[i].e);
    }
    if (!sch_bounds(c, in, lo, hi))
        return false;
    *fixed = sch_simplify(a, NULL, fx);
    return true;
}

void sch_region(su_arena *a, int ne, const sch_expr *const *e, const sch_tensor *p, int ninner,
                sch_var *const *inner, const int64_t *ext, const sch_expr **mins, int64_t *extents)
{
    reads r = {0};
    for (int i = 0; i < ne; i++)
        collect(e[i], p, &r);
    sch_bounds_ctx c = {0};
    for (int i = 0; i < ninner; i++)
        sch_bounds_push(&c, inner[i], 0, ext[i] - 1);
    for (int d = 0; d < p->ndim; d++) {
        const sch_expr *fixed = NULL;
        int64_t lo = 0, hi = -1;
        bool ok = r.v.len > 0;
        for (size_t k = 0; k < r.v.len && ok; k++) {
            const sch_expr *f;
            int64_t l, h;
            ok = split_index(a, &c, r.v.data[k]->args[d], ninner, inner, &f, &l, &h);
            if (!ok)
                break;
            if (!fixed) {
                fixed = f;
                lo = l;
                hi = h;
            } else if (sch_expr_equal(fixed, f)) {
                lo = l < lo ? l : lo;
                hi = h > hi ? h : hi;
            } else {
                ok = false;
            }
        }
        if (ok && hi - lo + 1 <= p->shape[d]) {
            mins[d] = sch_simplify(a, NULL, sch_add(a, fixed, sch_int(a, lo)));
            extents[d] = hi - lo + 1;
        } else {
            mins[d] = sch_int(a, 0);
            extents[d] = p->shape[d];
        }
    }
    sch_bounds_free(&c);
    su_vec_free(&r.v);
}
