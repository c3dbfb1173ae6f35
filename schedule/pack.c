/* pack.c — layout packing of a parameter as one stage reads it: axis
 * `axis` of extent n splits into ceil(n/f) blocks of f, and the block's
 * inner index becomes the innermost axis (OIHW -> OIHW[f]o, (N, K) ->
 * (N/f, K, f), NCHW -> NCHW[f]c). The reader then finds the f values its
 * vectorized loop wants next to each other. Rows past n are zero, so a
 * kernel may compute whole blocks and drop the extra results. The pack stage
 * is a stage like any other (root by default); when its parameter is a
 * constant weight, lowering can hoist it into a prologue run once. */
#include <string.h>

#include "schedule/schedule.h"

typedef struct repack {
    su_arena *a;
    const sch_tensor *p;
    sch_tensor *pk;
    int axis;
    int64_t f;
} repack;

static const sch_expr *repack_read(void *ctx, const sch_expr *r)
{
    repack *c = ctx;
    if (r->tensor != c->p)
        return NULL;
    const sch_expr *ix[IR_MAX_DIMS + 1];
    for (int i = 0; i < r->n; i++)
        ix[i] = i == c->axis ? sch_div(c->a, r->args[i], sch_int(c->a, c->f)) : r->args[i];
    ix[r->n] = sch_mod(c->a, r->args[c->axis], sch_int(c->a, c->f));
    return sch_read(c->a, c->pk, r->n + 1, ix);
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

sch_err sch_pack(sch_schedule *s, sch_tensor *t, sch_tensor *p, int axis, int64_t factor, sch_tensor **packed)
{
    su_arena *a = &s->arena;
    if (!t || t->kind != SCH_TENSOR_COMPUTE)
        return sch_fail(s, SCH_E_NO_STAGE, "pack: not a stage");
    if (!p || p->kind != SCH_TENSOR_PARAM)
        return sch_fail(s, SCH_E_NO_STAGE, "pack: not a parameter");
    if (!reads_directly(t->body, p))
        return sch_fail(s, SCH_E_BAD_ATTACH, "pack: stage %s does not read %s", t->name, p->name);
    if (axis < 0 || axis >= p->ndim || p->ndim + 1 > IR_MAX_DIMS)
        return sch_fail(s, SCH_E_BAD_FACTOR, "pack: %s has no axis %d", p->name, axis);
    if (factor < 1 || factor > p->shape[axis])
        return sch_fail(s, SCH_E_BAD_FACTOR, "pack: factor %lld does not fit axis %d of %s (extent %lld)",
                        (long long)factor, axis, p->name, (long long)p->shape[axis]);
    int64_t shape[IR_MAX_DIMS + 1];
    for (int i = 0; i < p->ndim; i++)
        shape[i] = i == axis ? (p->shape[i] + factor - 1) / factor : p->shape[i];
    shape[p->ndim] = factor;
    char name[32];
    snprintf(name, sizeof name, "pack%d", s->next_stage++);
    sch_tensor *pk = sch_tensor_add(s, SCH_TENSOR_COMPUTE, name, p->dtype, p->ndim + 1, shape);
    pk->op = "pack";
    pk->pack_of = p;
    pk->injective = true;
    pk->attach = SCH_ATTACH_ROOT;
    pk->axes = su_arena_alloc(a, (size_t)(p->ndim + 1) * sizeof *pk->axes);
    for (int i = 0; i <= p->ndim; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, i == p->ndim ? "b" : "ax%d", i);
        pk->axes[i] = sch_var_new(a, &s->next_var, nm, IR_INT64);
        su_vec_push(&pk->leaves, sch_iter_new(s, pk, nm, pk->axes[i], shape[i], false, i));
    }
    const sch_expr *ix[IR_MAX_DIMS];
    const sch_expr *orig = sch_add(a, sch_mul(a, sch_varref(a, pk->axes[axis]), sch_int(a, factor)),
                                   sch_varref(a, pk->axes[p->ndim]));
    for (int i = 0; i < p->ndim; i++)
        ix[i] = i == axis ? orig : sch_varref(a, pk->axes[i]);
    const sch_expr *v = sch_read(a, p, p->ndim, ix);
    if (p->shape[axis] % factor)
        v = sch_select(a, sch_bin(a, SCH_LT, orig, sch_int(a, p->shape[axis])), v, sch_const(a, p->dtype, 0));
    pk->body = v;
    repack c = {a, p, pk, axis, factor};
    t->body = sch_map_reads(a, t->body, repack_read, &c);
    sch_trace_add(s, SCH_P_PACK, t->name, 0, NULL, p->name, axis, factor);
    if (packed)
        *packed = pk;
    return SCH_E_OK;
}
