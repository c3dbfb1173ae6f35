/* default.c — the default template, for fused functions without a tunable
 * anchor (elementwise and shape ops, pooling, softmax, layer_norm,
 * reductions), and the helpers the other templates share. Each root stage
 * gets parallel outer loops and a vectorized inner loop; each reduction
 * feeding an elementwise output (the sums of a softmax or a layer_norm, a
 * pooling window's sum) is computed inside the output's loop nest, so the
 * whole function is one pass over its data; a long row of such a reduction
 * runs as a SIMD reduction. The last output's loops are
 * knobs (the vector tile, how many outer loops go parallel, unrolling a
 * pooling window); their defaults are the one shape that serves most of
 * these memory-bound functions. */
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

/* A tail costs one shorter copy of the tile's loop (lower.c partitions
 * it), where a much smaller divisor costs every tile its registers: a 13
 * wide row gets two 6-column tiles and a 1-column tail on AVX2, not 13
 * single columns. */
int64_t sch_tmpl_tail_tile(int64_t n, int64_t rule, int64_t d)
{
    return rule > 1 && rule < n && d * 3 < rule * 2 ? rule : d;
}

int sch_tmpl_tail_cands(int64_t rule, int64_t step, int64_t max, int64_t *out)
{
    int n = 0;
    for (int64_t f = rule - step; f <= rule + step; f += step > 0 ? step : 1)
        if (f >= 2 && f <= max)
            out[n++] = f;
    return n;
}

int64_t sch_tmpl_vector_factor(int64_t n, int64_t max, int lanes)
{
    for (int64_t d = (max < n ? max : n) / lanes * lanes; d >= lanes; d -= lanes)
        if (n % d == 0)
            return d;
    return sch_tmpl_divisor(n, max);
}

bool sch_tmpl_anchor_output(sch_tctx *t, int ndim, int nraxes, sch_tensor **a, sch_tensor **o)
{
    sch_schedule *s = t->s;
    *a = sch_anchor(s);
    if (!*a || (ndim ? (*a)->ndim != ndim : (*a)->ndim < 1) || (*a)->nraxes != nraxes) {
        sch_template_default(t);
        return false;
    }
    if ((*a)->output >= 0) {
        sch_tensor *copy = *a;
        SCH_TRY(t, sch_cache_write(s, copy, a));
        *o = copy;
    } else {
        *o = sch_tmpl_reader(s, *a);
    }
    if (t->err)
        return false;
    if (!*o || (*o)->output < 0 || (*o)->ndim != (*a)->ndim) {
        sch_template_default(t);
        return false;
    }
    return true;
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

sch_tensor *sch_tmpl_call_stage(const sch_schedule *s, const sch_tensor *a, const char *prefix)
{
    size_t n = strlen(prefix);
    for (size_t i = 0; i < s->tensors.len; i++) {
        sch_tensor *p = s->tensors.data[i];
        if (p->kind == SCH_TENSOR_COMPUTE && p != a && !strncmp(p->name, prefix, n) && p->call == a->call)
            return p;
    }
    return NULL;
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

/* The knobs of the stage a default template tunes, decided before its
 * loops change: the vector tile (an inner split of the vector loop), how
 * many outer loops the parallel loop fuses (0: none is parallel), and
 * whether the innermost reduction loop (a pooling window's row) unrolls.
 * Their defaults are what sch_tmpl_root does on its own. */
typedef struct root_knobs {
    int64_t vec;                /* the vector loop's inner extent */
    int64_t par;                /* outer loops fused into the parallel loop */
    sch_loop_kind red;          /* the innermost reduction loop's kind */
} root_knobs;

/* The defaults (the knobs too when tunable) for vector loop v, ns outer
 * spatial loops of total extent outer, and red the innermost reduction
 * loop (or NULL). par counts to max(ns, 1), which means all of them. */
static root_knobs root_defaults(sch_tctx *t, const sch_iter *v, int ns, const sch_iter *red, int64_t work,
                                int64_t outer, bool tunable)
{
    int all = ns > 0 ? ns : 1;
    root_knobs k = {v->extent, 0, SCH_LOOP_SERIAL};
    if (v->extent > MAX_VECTOR_LOOP)
        k.vec = sch_tmpl_vector_factor(v->extent, sch_hw_stream_tile(t->hw), t->hw->lanes);
    k.par = work >= (t->hw->parallel_min > 0 ? t->hw->parallel_min : PARALLEL_MIN) && outer * (v->extent / k.vec) > 1 ? all : 0;
    if (!tunable)
        return k;
    const sch_split_policy vp = {.max_inner = MAX_VECTOR_LOOP};
    const int64_t dv[2] = {v->extent / k.vec, k.vec};
    k.vec = sch_define_split_policy(t, "tile_vec", v->extent, 2, &vp, dv)[1];
    int64_t depths[IR_MAX_DIMS + 2];
    for (int d = 0; d <= all; d++)
        depths[d] = d;
    k.par = sch_define_knob(t, "par_depth", all + 1, depths, k.par);
    if (red && red->extent > 1 && red->extent <= 64) {
        static const int64_t kinds[2] = {SCH_LOOP_SERIAL, SCH_LOOP_UNROLLED};
        k.red = (sch_loop_kind)sch_define_annotate(t, "unroll_red", 1, (const char *const *)&red->name, 2, kinds,
                                                   0)[0];
    }
    return k;
}

/* sch_tmpl_root, with the knobs of root_knobs when tunable. */
static void root_schedule(sch_tctx *t, sch_tensor *st, bool tunable)
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
    if (!ns || work == 0)
        return;     /* no spatial loop, or no work at all (a zero extent): nothing to tile */
    /* the vector loop: the innermost spatial axis, fused outwards while short */
    sch_iter *v = sp[--ns];
    while (ns > 0 && v->extent < t->hw->lanes && v->extent * sp[ns - 1]->extent <= MAX_VECTOR_LOOP && !t->err) {
        SCH_TRY(t, sch_fuse(s, st, sp[ns - 1], v, &v));
        ns--;
    }
    if (t->err)
        return;
    int64_t outer = work / v->extent;
    for (int i = 0; i < nr; i++)
        outer /= rd[i]->extent;
    root_knobs k = root_defaults(t, v, ns, nr ? rd[nr - 1] : NULL, work, outer, tunable);
    /* the loops the parallel loop fuses: all (with the vector tile's outer
     * loop) when the knob says all or none */
    int npar = k.par && k.par < ns ? (int)k.par : -1;
    if (k.vec < v->extent) {
        sch_iter *vo;
        SCH_TRY(t, sch_split(s, st, v, k.vec, &vo, &v));
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
    /* work-items (parallel_min 1) may take the vector loop as the parallel
     * one, decided once the outer loops are */
    bool device = t->hw->parallel_min == 1;
    if (v->extent > 1 && !device)
        SCH_TRY(t, sch_annotate(s, st, v, SCH_LOOP_VECTORIZED));
    if (k.red != SCH_LOOP_SERIAL)
        SCH_TRY(t, sch_annotate(s, st, rd[nr - 1], k.red));
    /* the outer loops: one parallel loop */
    sch_iter *o = ns ? sp[0] : NULL;
    for (int i = 1; i < (npar < 0 ? ns : npar) && !t->err; i++)
        SCH_TRY(t, sch_fuse(s, st, o, sp[i], &o));
    bool outer_par = o && o->extent > 1 && k.par;
    if (outer_par)
        SCH_TRY(t, sch_annotate(s, st, o, SCH_LOOP_PARALLEL));
    /* work-items spread a nest that is one vector loop */
    bool items = !outer_par && !nr && (!o || o->extent == 1);
    if (device && v->extent > 1 && !t->err)
        SCH_TRY(t, sch_annotate(s, st, v, items ? SCH_LOOP_PARALLEL : SCH_LOOP_VECTORIZED));
}

void sch_tmpl_root(sch_tctx *t, sch_tensor *st)
{
    root_schedule(t, st, false);
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

/* Whether reduction loops outer, inner of r (adjacent, inner innermost) walk
 * one contiguous run of r's input when fused, as global pooling's sum over
 * a plane does: r reduces one read (under a cast or a guard) whose last
 * index moves with inner alone, the one before with outer alone, and inner
 * spans the input's whole last extent. (Fusing is correct either way; this
 * decides whether it pays.) */
static bool fused_contiguous(const sch_tensor *r, const sch_iter *outer, const sch_iter *inner)
{
    const sch_expr *e = r->body;
    while (e && (e->kind == SCH_CAST || e->kind == SCH_SELECT))
        e = e->kind == SCH_CAST ? e->a : e->b;
    if (!outer->var || !inner->var || !e || e->kind != SCH_READ || e->n < 2 || !e->tensor)
        return false;
    const sch_expr *hi = e->args[e->n - 2], *lo = e->args[e->n - 1];
    return sch_expr_uses(lo, inner->var) && !sch_expr_uses(lo, outer->var) && sch_expr_uses(hi, outer->var) &&
           !sch_expr_uses(hi, inner->var) && e->tensor->shape[e->n - 1] == inner->extent;
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
        if (ok && c && at) {
            SCH_TRY(t, sch_compute_at(s, r, c, (sch_iter *)at));
            /* a row statistic (softmax's max and sum, layer_norm's moments,
             * global pooling's sum over the rows of a plane, fused into one
             * loop): its innermost loop as a SIMD reduction, lanes summing
             * apart */
            size_t nl = r->leaves.len;
            sch_iter *last = nl ? r->leaves.data[nl - 1] : NULL, *prev = nl >= 2 ? r->leaves.data[nl - 2] : NULL;
            if (!t->err && last && last->reduce && prev && prev->reduce && last->extent < 2 * t->hw->lanes &&
                prev->extent * last->extent >= 2 * t->hw->lanes && prev->extent * last->extent <= MAX_VECTOR_LOOP &&
                fused_contiguous(r, prev, last))
                SCH_TRY(t, sch_fuse(s, r, prev, last, &last));
            if (!t->err && last && last->reduce && last->extent >= 2 * t->hw->lanes)
                SCH_TRY(t, sch_annotate(s, r, last, SCH_LOOP_VECTORIZED));
        } else {
            sch_tmpl_root(t, r);
        }
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

/* A float16 output that is a reduction (max pooling) accumulates in a float
 * tile instead (cache_write): reduced into the output itself, every tap
 * would widen and round the accumulator again (a pool 6x slower than with
 * the tile, measured alone). The tile is one vector row of the output,
 * computed inside the output's loop around its vector loop, with its own
 * vector loop innermost, under the window's loops. */
static void accumulate_wide(sch_tctx *t, sch_tensor *o, bool tunable)
{
    sch_schedule *s = t->s;
    sch_tensor *acc;
    SCH_TRY(t, sch_cache_write(s, o, &acc));
    if (t->err)
        return;
    root_schedule(t, o, tunable);
    size_t nl = o->leaves.len, na = acc->leaves.len;
    /* (a tile needs the output's vector loop inside another, and acc's
     * innermost spatial loop to vectorize) */
    if (t->err || nl < 2 || o->leaves.data[nl - 1]->kind != SCH_LOOP_VECTORIZED || na > 2 * IR_MAX_DIMS + 2 ||
        acc->ndim < 1 || (size_t)acc->ndim > na || acc->leaves.data[acc->ndim - 1]->reduce) {
        sch_tmpl_root(t, acc);
        return;
    }
    SCH_TRY(t, sch_compute_at(s, acc, o, o->leaves.data[nl - 2]));
    /* acc's loops: spatial, then the window's; the last spatial one goes innermost */
    sch_iter *order[2 * IR_MAX_DIMS + 2], *v = acc->leaves.data[acc->ndim - 1];
    int n = 0;
    for (size_t i = 0; i < na; i++)
        if (acc->leaves.data[i] != v)
            order[n++] = acc->leaves.data[i];
    order[n++] = v;
    SCH_TRY(t, sch_reorder(s, acc, n, order));
    SCH_TRY(t, sch_annotate(s, acc, v, SCH_LOOP_VECTORIZED));
}

void sch_template_default(sch_tctx *t)
{
    sch_schedule *s = t->s;
    /* outputs and other stages first: reductions then go inside them; the
     * last output is the one tuned */
    bool tunable = true;
    for (size_t i = s->tensors.len; i-- > 0 && !t->err;) {
        sch_tensor *st = s->tensors.data[i];
        if (st->kind == SCH_TENSOR_COMPUTE && st->attach == SCH_ATTACH_ROOT && st->output >= 0 &&
            st->reduce != SCH_RED_NONE && st->dtype == IR_FLOAT16 && st->nraxes && !st->rels.len) {
            accumulate_wide(t, st, tunable);
            tunable = false;
        } else if (st->kind == SCH_TENSOR_COMPUTE && st->attach == SCH_ATTACH_ROOT &&
                   (st->reduce == SCH_RED_NONE || st->output >= 0)) {
            root_schedule(t, st, tunable);
            tunable = false;
        }
    }
    sch_tmpl_attach_reductions(t);
    sch_tmpl_finish(t);
}
