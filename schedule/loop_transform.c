/* loop_transform.c — the loop-structure primitives: split, fuse and
 * reorder. They change a stage's list of leaf iterations (its loops) and
 * record how new iterations derive from old ones; lowering turns the
 * relations back into index expressions (split: parent = outer * factor +
 * inner, guarded when the factor does not divide; fuse: outer = f / n_inner,
 * inner = f % n_inner). Errors name the stage and loops involved. */
#include <string.h>

#include "schedule/schedule.h"

static sch_err check_leaf(sch_schedule *s, sch_tensor *t, sch_iter *it, const char *prim)
{
    if (!t || t->kind != SCH_TENSOR_COMPUTE)
        return sch_fail(s, SCH_E_NO_STAGE, "%s: not a stage", prim);
    if (!it || sch_leaf_pos(t, it) < 0)
        return sch_fail(s, SCH_E_NO_ITER, "%s: %s is not a loop of stage %s", prim, it ? it->name : "(null)",
                        t->name);
    return SCH_E_OK;
}

/* A fresh iter name: base, or base' with a counter when taken. */
static const char *fresh_name(sch_schedule *s, sch_tensor *t, const char *base)
{
    if (!sch_find_iter(t, base))
        return base;
    for (int i = 1;; i++) {
        const char *n = su_arena_printf(&s->arena, "%s%d", base, i);
        if (!sch_find_iter(t, n))
            return n;
    }
}

sch_err sch_split(sch_schedule *s, sch_tensor *t, sch_iter *it, int64_t factor, sch_iter **outer, sch_iter **inner)
{
    sch_err e = check_leaf(s, t, it, "split");
    if (e)
        return e;
    if (factor < 1 || factor > it->extent)
        return sch_fail(s, SCH_E_BAD_FACTOR, "split: factor %lld of loop %s (extent %lld) of stage %s is out of "
                        "range", (long long)factor, it->name, (long long)it->extent, t->name);
    int pos = sch_leaf_pos(t, it);
    const char *on = fresh_name(s, t, su_arena_printf(&s->arena, "%s.o", it->name));
    sch_iter *o = sch_iter_new(s, t, on, NULL, (it->extent + factor - 1) / factor, it->reduce, -1);
    const char *in = fresh_name(s, t, su_arena_printf(&s->arena, "%s.i", it->name));
    sch_iter *i = sch_iter_new(s, t, in, NULL, factor, it->reduce, -1);
    it->leaf = false;
    t->leaves.data[pos] = o;
    su_vec_push(&t->leaves, i);
    memmove(&t->leaves.data[pos + 2], &t->leaves.data[pos + 1], (t->leaves.len - pos - 2) * sizeof *t->leaves.data);
    t->leaves.data[pos + 1] = i;
    sch_rel r = {false, it, o, i, factor};
    su_vec_push(&t->rels, r);
    sch_trace_add(s, SCH_P_SPLIT, t->name, 1, &it->name, NULL, factor, 0);
    if (outer)
        *outer = o;
    if (inner)
        *inner = i;
    return SCH_E_OK;
}

sch_err sch_fuse(sch_schedule *s, sch_tensor *t, sch_iter *outer, sch_iter *inner, sch_iter **fused)
{
    sch_err e = check_leaf(s, t, outer, "fuse");
    if (!e)
        e = check_leaf(s, t, inner, "fuse");
    if (e)
        return e;
    int po = sch_leaf_pos(t, outer), pi = sch_leaf_pos(t, inner);
    if (pi != po + 1)
        return sch_fail(s, SCH_E_NOT_ADJACENT, "fuse: loop %s is not directly inside loop %s in stage %s", inner->name,
                        outer->name, t->name);
    if (outer->reduce != inner->reduce)
        return sch_fail(s, SCH_E_MIXED_REDUCE, "fuse: loops %s and %s of stage %s mix a spatial and a reduction "
                        "loop", outer->name, inner->name, t->name);
    int64_t ext;
    if (__builtin_mul_overflow(outer->extent, inner->extent, &ext))
        return sch_fail(s, SCH_E_BAD_FACTOR, "fuse: extent overflow");
    const char *fn = fresh_name(s, t, su_arena_printf(&s->arena, "%s.%s.f", outer->name, inner->name));
    sch_iter *f = sch_iter_new(s, t, fn, NULL, ext, outer->reduce, -1);
    outer->leaf = inner->leaf = false;
    t->leaves.data[po] = f;
    memmove(&t->leaves.data[pi], &t->leaves.data[pi + 1], (t->leaves.len - pi - 1) * sizeof *t->leaves.data);
    t->leaves.len--;
    sch_rel r = {true, f, outer, inner, 0};
    su_vec_push(&t->rels, r);
    const char *names[2] = {outer->name, inner->name};
    sch_trace_add(s, SCH_P_FUSE, t->name, 2, names, NULL, 0, 0);
    if (fused)
        *fused = f;
    return SCH_E_OK;
}

sch_err sch_reorder(sch_schedule *s, sch_tensor *t, int n, sch_iter *const *order)
{
    int pos[64];
    if (n > 64)
        return sch_fail(s, SCH_E_NO_ITER, "reorder: too many loops");
    for (int i = 0; i < n; i++) {
        sch_err e = check_leaf(s, t, order[i], "reorder");
        if (e)
            return e;
        pos[i] = sch_leaf_pos(t, order[i]);
        for (int j = 0; j < i; j++)
            if (order[j] == order[i])
                return sch_fail(s, SCH_E_NO_ITER, "reorder: loop %s of stage %s named twice", order[i]->name,
                                t->name);
    }
    /* the positions they occupy, in increasing order */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && pos[j - 1] > pos[j]; j--) {
            int x = pos[j];
            pos[j] = pos[j - 1];
            pos[j - 1] = x;
        }
    for (int i = 0; i < n; i++)
        t->leaves.data[pos[i]] = order[i];
    const char **names = su_arena_alloc(&s->arena, (size_t)(n ? n : 1) * sizeof *names);
    for (int i = 0; i < n; i++)
        names[i] = order[i]->name;
    sch_trace_add(s, SCH_P_REORDER, t->name, n, names, NULL, 0, 0);
    return SCH_E_OK;
}
