/* default.c — the default template, for fused functions without a tunable
 * anchor (elementwise and shape ops, pooling, softmax, layer_norm,
 * reductions), and the helpers the other templates share. No knobs: these
 * functions are memory-bound and one good shape serves them all. Each root
 * stage gets parallel outer loops and a vectorized inner loop; each
 * reduction feeding an elementwise output (the sums of a softmax or a
 * layer_norm, a pooling window's sum) is computed inside the output's loop
 * nest, so the whole function is one pass over its data. */
#include <string.h>

#include "schedule/schedule.h"

/* Work below this many elements runs on one thread: an OpenMP fork costs
 * about as much as that many simple element updates. */
enum { PARALLEL_MIN = 16384, MAX_VECTOR_LOOP = 2048 };

int64_t sch_tmpl_divisor(int64_t n, int64_t max)
{
    for (int64_t d = max < n ? max : n; d > 1; d--)
        if (n % d == 0)
            return d;
    return 1;
}

int64_t sch_tmpl_vector_factor(int64_t n, int64_t max, int lanes)
{
    for (int64_t d = (max < n ? max : n) / lanes * lanes; d >= lanes; d -= lanes)
        if (n % d == 0)
            return d;
    return sch_tmpl_divisor(n, max);
}

sch_tensor *sch_tmpl_reader(const sch_schedule *s, const sch_tensor *t)
{
    sch_tensor *found = NULL;
    for (size_t i = 0; i < s->tensors.len; i++) {
        sch_tensor *r = s->tensors.data[i];
        if (r == t || r->kind != SCH_TENSOR_COMPUTE || r->attach == SCH_ATTACH_INLINE || !sch_reads(s, r, t))
            continue;
        if (found)
            return NULL;
        found = r;
    }
    return found;
}

uint64_t sch_leaf_roots(const sch_tensor *t, const sch_iter *it)
{
    if (it->var)
        return it->root_dim < 64 ? 1ULL << it->root_dim : 0;
    for (size_t r = 0; r < t->rels.len; r++) {
        const sch_rel *rel = &t->rels.data[r];
        if (rel->fuse && rel->parent == it)
            return sch_leaf_roots(t, rel->outer) | sch_leaf_roots(t, rel->inner);
        if (!rel->fuse && (rel->outer == it || rel->inner == it))
            return sch_leaf_roots(t, rel->parent);
    }
    return 0;
}

void sch_tmpl_root(sch_tctx *t, sch_tensor *st)
{
    sch_schedule *s = t->s;
    if (st->kind != SCH_TENSOR_COMPUTE || st->attach == SCH_ATTACH_INLINE || st->rels.len)
        return;
    for (size_t i = 0; i < st->leaves.len; i++)
        if (st->leaves.data[i]->kind != SCH_LOOP_SERIAL)
            return;
    sch_iter *sp[IR_MAX_DIMS + 1], *rd[IR_MAX_DIMS + 1];
    int ns = 0, nr = 0;
    int64_t work = 1;
    for (size_t i = 0; i < st->leaves.len; i++) {
        sch_iter *it = st->leaves.data[i];
        if (it->reduce)
            rd[nr++] = it;
        else
            sp[ns++] = it;
        work *= it->extent;
    }
    if (!ns)
        return;
    /* the vector loop: the innermost spatial axis, fused outwards while short */
    sch_iter *v = sp[--ns];
    while (ns > 0 && v->extent < t->hw->lanes && v->extent * sp[ns - 1]->extent <= MAX_VECTOR_LOOP && !t->err) {
        SCH_TRY(t, sch_fuse(s, st, sp[ns - 1], v, &v));
        ns--;
    }
    if (t->err)
        return;
    if (v->extent > MAX_VECTOR_LOOP) {
        sch_iter *vo;
        SCH_TRY(t, sch_split(s, st, v, sch_tmpl_vector_factor(v->extent, 512, t->hw->lanes), &vo, &v));
        if (t->err)
            return;
        sp[ns++] = vo;
    }
    if (nr) {
        sch_iter *order[2 * IR_MAX_DIMS + 2];
        int n = 0;
        for (int i = 0; i < ns; i++)
            order[n++] = sp[i];
        for (int i = 0; i < nr; i++)
            order[n++] = rd[i];
        order[n++] = v;
        SCH_TRY(t, sch_reorder(s, st, n, order));
    }
    if (v->extent > 1)
        SCH_TRY(t, sch_annotate(s, st, v, SCH_LOOP_VECTORIZED));
    /* the outer loops: one parallel loop */
    sch_iter *o = ns ? sp[0] : NULL;
    for (int i = 1; i < ns && !t->err; i++)
        SCH_TRY(t, sch_fuse(s, st, o, sp[i], &o));
    if (o && o->extent > 1 && work >= PARALLEL_MIN)
        SCH_TRY(t, sch_annotate(s, st, o, SCH_LOOP_PARALLEL));
}

/* Bit d set for each axis of c (spatial, then reduction) that c's reads of
 * r depend on. */
static uint64_t dims_read(sch_schedule *s, const sch_tensor *c, const sch_tensor *r, const sch_expr *e)
{
    if (!e)
        return 0;
    uint64_t m = 0;
    if (e->kind == SCH_READ && e->tensor == r) {
        for (int i = 0; i < e->n; i++) {
            for (int d = 0; d < c->ndim && d < 64; d++)
                if (c->shape[d] > 1 && sch_expr_uses(e->args[i], c->axes[d]))
                    m |= 1ULL << d;
            for (int d = 0; d < c->nraxes && c->ndim + d < 64; d++)
                if (sch_expr_uses(e->args[i], c->raxes[d]))
                    m |= 1ULL << (c->ndim + d);
        }
    }
    m |= dims_read(s, c, r, e->a) | dims_read(s, c, r, e->b) | dims_read(s, c, r, e->c);
    for (int i = 0; i < e->n; i++)
        m |= dims_read(s, c, r, e->args[i]);
    return m;
}

void sch_tmpl_attach_reductions(sch_tctx *t)
{
    sch_schedule *s = t->s;
    for (size_t i = s->tensors.len; i-- > 0 && !t->err;) {
        sch_tensor *r = s->tensors.data[i];
        if (r->kind != SCH_TENSOR_COMPUTE || r->reduce == SCH_RED_NONE || r->output >= 0 ||
            r->attach != SCH_ATTACH_ROOT || r->rels.len)
            continue;
        /* the reader computed at the root, and the loop of it to use: its
         * other readers must be computed at that same loop already */
        sch_tensor *c = NULL;
        const sch_iter *at = NULL;
        bool ok = true;
        for (size_t j = 0; j < s->tensors.len && ok; j++) {
            sch_tensor *q = s->tensors.data[j];
            if (q == r || q->kind != SCH_TENSOR_COMPUTE || q->attach == SCH_ATTACH_INLINE || !sch_reads(s, q, r))
                continue;
            if (q->attach == SCH_ATTACH_AT) {
                ok = (!at || at == q->attach_iter) && (!c || c == q->attach_to);
                at = q->attach_iter;
                c = q->attach_to;
            } else {
                ok = !c || c == q;
                c = q;
            }
        }
        if (ok && c && !at) {
            uint64_t used = dims_read(s, c, r, sch_inlined_body(s, c));
            for (size_t l = 0; l < c->leaves.len; l++)
                if (sch_leaf_roots(c, c->leaves.data[l]) & used)
                    at = c->leaves.data[l];
        }
        if (ok && c && at)
            SCH_TRY(t, sch_compute_at(s, r, c, (sch_iter *)at));
        else
            sch_tmpl_root(t, r);
    }
}

void sch_tmpl_finish(sch_tctx *t)
{
    sch_schedule *s = t->s;
    for (size_t i = s->tensors.len; i-- > 0 && !t->err;) {
        sch_tensor *st = s->tensors.data[i];
        if (st->kind == SCH_TENSOR_COMPUTE && st->attach == SCH_ATTACH_ROOT)
            sch_tmpl_root(t, st);
    }
}

void sch_template_default(sch_tctx *t)
{
    sch_schedule *s = t->s;
    /* outputs and other stages first: reductions then go inside them */
    for (size_t i = s->tensors.len; i-- > 0 && !t->err;) {
        sch_tensor *st = s->tensors.data[i];
        if (st->kind == SCH_TENSOR_COMPUTE && st->attach == SCH_ATTACH_ROOT &&
            (st->reduce == SCH_RED_NONE || st->output >= 0))
            sch_tmpl_root(t, st);
    }
    sch_tmpl_attach_reductions(t);
    sch_tmpl_finish(t);
}
