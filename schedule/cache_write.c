/* cache_write.c — cache_write: a new stage computes what stage t computed
 * (same body and reduction, fresh axes), and t becomes an elementwise copy
 * of it. With compute_at of the new stage under a tile loop of t, the
 * reduction accumulates in a tile local to that loop (registers, once the C
 * compiler unrolls and vectorizes it) and t writes each output element once.
 * An anchor that already has an epilogue (conv + bias + relu) needs no
 * cache_write: the epilogue is the copy. */
#include <string.h>

#include "schedule/schedule.h"

sch_err sch_cache_write(sch_schedule *s, sch_tensor *t, sch_tensor **cache)
{
    su_arena *a = &s->arena;
    if (!t || t->kind != SCH_TENSOR_COMPUTE)
        return sch_fail(s, SCH_E_NO_STAGE, "cache_write: not a stage");
    if (t->attach == SCH_ATTACH_INLINE)
        return sch_fail(s, SCH_E_BAD_ATTACH, "cache_write: stage %s is inlined", t->name);
    if (t->rels.len)
        return sch_fail(s, SCH_E_BAD_ATTACH, "cache_write: stage %s has split or fused loops already", t->name);
    char name[80];
    snprintf(name, sizeof name, "%s.c", t->name);
    const char *axis_names[IR_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++)
        axis_names[i] = t->axes[i]->name;
    sch_tensor *c = sch_tensor_add(s, SCH_TENSOR_COMPUTE, name, t->dtype, t->ndim, t->shape);
    c->op = t->op;
    c->call = t->call;
    c->axes = su_arena_alloc(a, (size_t)(t->ndim ? t->ndim : 1) * sizeof *c->axes);
    for (int i = 0; i < t->ndim; i++) {
        c->axes[i] = sch_var_new(a, &s->next_var, axis_names[i], IR_INT64);
        su_vec_push(&c->leaves, sch_iter_new(s, c, axis_names[i], c->axes[i], t->shape[i], false, i));
    }
    c->nraxes = t->nraxes;
    c->raxes = su_arena_alloc(a, (size_t)(t->nraxes ? t->nraxes : 1) * sizeof *c->raxes);
    c->rext = su_arena_alloc(a, (size_t)(t->nraxes ? t->nraxes : 1) * sizeof *c->rext);
    if (t->nraxes)
        memcpy(c->rext, t->rext, (size_t)t->nraxes * sizeof *c->rext);
    for (int i = 0; i < t->nraxes; i++) {
        c->raxes[i] = sch_var_new(a, &s->next_var, t->raxes[i]->name, IR_INT64);
        su_vec_push(&c->leaves, sch_iter_new(s, c, t->raxes[i]->name, c->raxes[i], t->rext[i], true, t->ndim + i));
    }
    /* the body over the new variables */
    int nv = t->ndim + t->nraxes;
    sch_var **from = su_arena_alloc(a, (size_t)nv * sizeof *from);
    const sch_expr **to = su_arena_alloc(a, (size_t)nv * sizeof *to);
    for (int i = 0; i < t->ndim; i++) {
        from[i] = t->axes[i];
        to[i] = sch_varref(a, c->axes[i]);
    }
    for (int i = 0; i < t->nraxes; i++) {
        from[t->ndim + i] = t->raxes[i];
        to[t->ndim + i] = sch_varref(a, c->raxes[i]);
    }
    c->body = sch_substitute(a, t->body, nv, from, to);
    c->reduce = t->reduce;
    c->injective = t->injective;
    c->attach = SCH_ATTACH_ROOT;
    /* t copies c */
    t->body = sch_read_axes(a, c, t);
    t->reduce = SCH_RED_NONE;
    t->injective = true;
    t->nraxes = 0;
    size_t k = 0;
    for (size_t i = 0; i < t->leaves.len; i++)
        if (!t->leaves.data[i]->reduce)
            t->leaves.data[k++] = t->leaves.data[i];
    t->leaves.len = k;
    sch_trace_add(s, SCH_P_CACHE_WRITE, t->name, 0, NULL, NULL, 0, 0);
    if (cache)
        *cache = c;
    return SCH_E_OK;
}
