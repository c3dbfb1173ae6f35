/* pack.c — layout packing of a parameter as one stage reads it: axis
 * `axis` of extent n splits into ceil(n/f) blocks of f, and the block's
 * inner index becomes the innermost axis (OIHW -> OIHW[f]o, (N, K) ->
 * (N/f, K, f), NCHW -> NCHW[f]c). The reader then finds the f values its
 * vectorized loop wants next to each other. Rows past n are zero, so a
 * kernel may compute whole blocks and drop the extra results. The pack stage
 * is a stage like any other (root by default); when its parameter is a
 * constant weight, lowering can hoist it into a prologue run once.
 * A float16 parameter is packed widened to float32: its values are floats
 * wherever they are computed with (float16 is computed in float32), so the
 * reader loads floats instead of converting the same weight at every use,
 * and a hoisted pack converts each weight once, ahead of time. The widening
 * is exact, so the reader sees the values it read before. */
#include <string.h>

#include "schedule/schedule.h"

typedef struct repack {
    su_arena *a;
    const sch_tensor *p;
    sch_tensor *pk;
    int n;                  /* blocked axes */
    const int *axes;
    const int64_t *f;
} repack;

static const sch_expr *repack_read(void *ctx, const sch_expr *r)
{
    repack *c = ctx;
    if (r->tensor != c->p)
        return NULL;
    const sch_expr *ix[2 * IR_MAX_DIMS];
    for (int i = 0; i < r->n; i++)
        ix[i] = r->args[i];
    for (int j = 0; j < c->n; j++) {
        const sch_expr *x = r->args[c->axes[j]];
        ix[c->axes[j]] = sch_div(c->a, x, sch_int(c->a, c->f[j]));
        ix[r->n + j] = sch_mod(c->a, x, sch_int(c->a, c->f[j]));
    }
    return sch_read(c->a, c->pk, r->n + c->n, ix);
}

static bool reads_directly(const sch_expr *e, const sch_tensor *p)
{
    if (!e)
        return false;
    if (e->kind == SCH_READ && e->tensor == p)
        return true;
    if (reads_directly(e->a, p) || reads_directly(e->b, p) || reads_directly(e->c, p))
        return true;
    for (int i = 0; i < e->n; i++)
        if (reads_directly(e->args[i], p))
            return true;
    return false;
}

sch_err sch_pack_axes(sch_schedule *s, sch_tensor *t, sch_tensor *p, int n, const int *axes, const int64_t *factors,
                      sch_tensor **packed)
{
    su_arena *a = &s->arena;
    if (!t || t->kind != SCH_TENSOR_COMPUTE)
        return sch_fail(s, SCH_E_NO_STAGE, "pack: not a stage");
    if (!p || p->kind != SCH_TENSOR_PARAM)
        return sch_fail(s, SCH_E_NO_STAGE, "pack: not a parameter");
    if (!reads_directly(t->body, p))
        return sch_fail(s, SCH_E_BAD_ATTACH, "pack: stage %s does not read %s", t->name, p->name);
    if (n < 1 || p->ndim + n > IR_MAX_DIMS)
        return sch_fail(s, SCH_E_BAD_FACTOR, "pack: %d blocked axes do not fit %s", n, p->name);
    for (int j = 0; j < n; j++) {
        if (axes[j] < 0 || axes[j] >= p->ndim)
            return sch_fail(s, SCH_E_BAD_FACTOR, "pack: %s has no axis %d", p->name, axes[j]);
        for (int k = 0; k < j; k++)
            if (axes[k] == axes[j])
                return sch_fail(s, SCH_E_BAD_FACTOR, "pack: axis %d of %s blocked twice", axes[j], p->name);
        if (factors[j] < 1 || factors[j] > p->shape[axes[j]])
            return sch_fail(s, SCH_E_BAD_FACTOR, "pack: factor %lld does not fit axis %d of %s (extent %lld)",
                            (long long)factors[j], axes[j], p->name, (long long)p->shape[axes[j]]);
    }
    int nd = p->ndim + n;
    int64_t shape[2 * IR_MAX_DIMS];
    for (int i = 0; i < p->ndim; i++)
        shape[i] = p->shape[i];
    for (int j = 0; j < n; j++) {
        shape[axes[j]] = (p->shape[axes[j]] + factors[j] - 1) / factors[j];
        shape[p->ndim + j] = factors[j];
    }
    char name[32];
    snprintf(name, sizeof name, "pack%d", s->next_stage++);
    ir_dtype dt = p->dtype == IR_FLOAT16 ? IR_FLOAT32 : p->dtype;
    sch_tensor *pk = sch_tensor_add(s, SCH_TENSOR_COMPUTE, name, dt, nd, shape);
    pk->op = "pack";
    pk->pack_of = p;
    pk->injective = true;
    pk->attach = SCH_ATTACH_ROOT;
    pk->axes = su_arena_alloc(a, (size_t)nd * sizeof *pk->axes);
    for (int i = 0; i < nd; i++) {
        char nm[16];
        if (i < p->ndim)
            snprintf(nm, sizeof nm, "ax%d", i);
        else
            snprintf(nm, sizeof nm, n == 1 ? "b" : "b%d", i - p->ndim);
        pk->axes[i] = sch_var_new(a, &s->next_var, nm, IR_INT64);
        su_vec_push(&pk->leaves, sch_iter_new(s, pk, nm, pk->axes[i], shape[i], false, i));
    }
    const sch_expr *ix[IR_MAX_DIMS], *ok = NULL;
    for (int i = 0; i < p->ndim; i++)
        ix[i] = sch_varref(a, pk->axes[i]);
    for (int j = 0; j < n; j++) {
        int ax = axes[j];
        ix[ax] = sch_add(a, sch_mul(a, sch_varref(a, pk->axes[ax]), sch_int(a, factors[j])),
                         sch_varref(a, pk->axes[p->ndim + j]));
        if (p->shape[ax] % factors[j])
            ok = sch_and(a, ok, sch_bin(a, SCH_LT, ix[ax], sch_int(a, p->shape[ax])));
    }
    const sch_expr *v = sch_cast(a, dt, sch_read(a, p, p->ndim, ix));
    pk->body = ok ? sch_select(a, ok, v, sch_const(a, dt, 0)) : v;
    repack c = {a, p, pk, n, axes, factors};
    t->body = sch_map_reads(a, t->body, repack_read, &c);
    sch_trace_pack(s, t->name, p->name, n, axes, factors);
    if (packed)
        *packed = pk;
    return SCH_E_OK;
}

sch_err sch_pack(sch_schedule *s, sch_tensor *t, sch_tensor *p, int axis, int64_t factor, sch_tensor **packed)
{
    return sch_pack_axes(s, t, p, 1, &axis, &factor, packed);
}
