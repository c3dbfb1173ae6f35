/* lower.c — a schedule becomes one LoopIR function.
 *
 * Stages at the root are emitted in dependency order, each as its loop nest
 * over its whole domain, into an output argument or a kernel-wide temporary.
 * A stage's nest has one loop per leaf iteration (outermost first, with the
 * leaf's annotation); the values of its axes come back from the leaves
 * through the split and fuse relations, and a split whose factor does not
 * divide adds a guard. Inlined stages are already substituted into the body
 * (stage.c); reads of other stages become loads of their buffers.
 *
 * A reduction stores init at the place of its outermost reduction loop
 * (looping over the spatial loops inside it) and then combines into the same
 * element inside all its loops. A blocked reduction (spatial loops between
 * its reduction loops) with a register tile inside its innermost reduction
 * loop accumulates that tile in a local of its own around that loop.
 *
 * A stage computed at loop L of a consumer is emitted inside L, before the
 * consumer's inner loops, over the region one iteration of L reads
 * (bound.c), into a buffer local to L. The local buffer's axes are ordered by
 * where each axis' innermost loop sits in the stage's own loop order, so
 * that its innermost (vectorized) loop walks the buffer contiguously; this
 * is what turns a conv's tile into an accumulator block in registers.
 *
 * Pack stages of constant parameters may be hoisted into prologues: the
 * kernel then takes the packed buffer as an extra input. Finally the
 * simplifier runs over the whole body with every loop's bounds. */
#include <string.h>

#include "schedule/schedule.h"

/* Where a tensor's values live while lowering. */
struct sch_lowering {
    sch_buffer *buf;            /* NULL until emitted (or for inline stages) */
    const sch_expr **mins;      /* region minimum per axis (indices are relative to it) */
    int64_t *ext;               /* region extent per axis */
    int64_t *strides;           /* flat stride per axis in buf */
    int topo;                   /* dependency order rank */
};

typedef struct lower {
    sch_schedule *s;
    su_arena *a;
    const sch_lower_opts *o;
    const sch_expr **inl;       /* inlined body by tensor id */
    int ntemp, nlocal;          /* buffer name counters */
    SU_VEC(sch_buffer *) globals;
    bool failed;
} lower;

static struct sch_lowering *lw_new(su_arena *a, int ndim)
{
    struct sch_lowering *w = su_arena_alloc(a, sizeof *w);
    int n = ndim ? ndim : 1;
    w->mins = su_arena_alloc(a, (size_t)n * sizeof *w->mins);
    w->ext = su_arena_alloc(a, (size_t)n * sizeof *w->ext);
    w->strides = su_arena_alloc(a, (size_t)n * sizeof *w->strides);
    return w;
}

/* The whole domain in row-major order. */
static void set_full(lower *L, sch_tensor *t, sch_buffer *b)
{
    struct sch_lowering *w = t->lw;
    w->buf = b;
    int64_t stride = 1;
    for (int d = t->ndim; d-- > 0;) {
        w->mins[d] = sch_int(L->a, 0);
        w->ext[d] = t->shape[d];
        w->strides[d] = stride;
        stride *= t->shape[d];
    }
}

static const sch_expr *flat_index(su_arena *a, const struct sch_lowering *w, int n, const sch_expr *const *idx)
{
    const sch_expr *f = sch_int(a, 0);
    for (int d = 0; d < n; d++)
        f = sch_add(a, f, sch_mul(a, sch_sub(a, idx[d], w->mins[d]), sch_int(a, w->strides[d])));
    return f;
}

/* READ -> LOAD of the tensor's buffer. */
static const sch_expr *read_to_load(void *ctx, const sch_expr *r)
{
    lower *L = ctx;
    struct sch_lowering *w = r->tensor->lw;
    if (!w || !w->buf) {
        L->failed = true;
        sch_fail(L->s, SCH_E_BAD_ATTACH, "lower: %s is read before it is computed", r->tensor->name);
        return sch_const(L->a, r->dtype, 0);
    }
    return sch_load(L->a, w->buf, flat_index(L->a, w, r->n, r->args));
}

/* ---- dependency order ---------------------------------------------------- */

typedef SU_VEC(sch_tensor *) tensor_vec;

static void collect_reads(const sch_expr *e, tensor_vec *out)
{
    if (!e)
        return;
    if (e->kind == SCH_READ)
        su_vec_push(out, e->tensor);
    collect_reads(e->a, out);
    collect_reads(e->b, out);
    collect_reads(e->c, out);
    for (int i = 0; i < e->n; i++)
        collect_reads(e->args[i], out);
}

/* Post-order ranks: a tensor's rank is above those of everything it (or a
 * stage computed inside it) reads. */
static void rank(lower *L, sch_tensor *t, int *next, bool *seen)
{
    if (seen[t->id])
        return;
    seen[t->id] = true;
    if (t->kind == SCH_TENSOR_COMPUTE && L->inl[t->id]) {
        tensor_vec deps = {0};
        collect_reads(L->inl[t->id], &deps);
        for (size_t i = 0; i < deps.len; i++)
            rank(L, deps.data[i], next, seen);
        su_vec_free(&deps);
    }
    for (size_t i = 0; i < L->s->tensors.len; i++) {
        sch_tensor *c = L->s->tensors.data[i];
        if (c->attach == SCH_ATTACH_AT && c->attach_to == t)
            rank(L, c, next, seen);
    }
    t->lw->topo = (*next)++;
}

/* ---- one stage's loop nest ------------------------------------------------ */

static int iter_index(const sch_tensor *t, const sch_iter *it)
{
    for (size_t i = 0; i < t->iters.len; i++)
        if (t->iters.data[i] == it)
            return (int)i;
    return -1;
}

/* Positions of the leaves derived from each root axis; key[d] is the
 * largest (the axis' innermost loop). */
static void innermost_leaf(const sch_tensor *t, int *key)
{
    int ni = (int)t->iters.len;
    /* roots of each iter as a bitmask over root axes (at most 64) */
    uint64_t *roots = su_calloc((size_t)ni, sizeof *roots);
    for (int i = 0; i < ni; i++)
        if (t->iters.data[i]->var && t->iters.data[i]->root_dim >= 0 && t->iters.data[i]->root_dim < 64)
            roots[i] = 1ULL << t->iters.data[i]->root_dim;
    for (size_t r = 0; r < t->rels.len; r++) {
        const sch_rel *rel = &t->rels.data[r];
        int p = iter_index(t, rel->parent), o = iter_index(t, rel->outer), in = iter_index(t, rel->inner);
        if (rel->fuse)
            roots[p] = roots[o] | roots[in];
        else
            roots[o] = roots[in] = roots[p];
    }
    for (int d = 0; d < t->ndim; d++)
        key[d] = -1;
    for (size_t l = 0; l < t->leaves.len; l++) {
        uint64_t m = roots[iter_index(t, t->leaves.data[l])];
        for (int d = 0; d < t->ndim && d < 64; d++)
            if (m & (1ULL << d))
                key[d] = (int)l;
    }
    free(roots);
}

static const sch_stmt *emit(lower *L, sch_tensor *t);

/* The region and local buffer of child c from the expressions that read it
 * (ne of them) with the inner variables ranging over their extents. */
static void place_child(lower *L, sch_tensor *c, int ne, const sch_expr *const *e, int ninner, sch_var *const *inner,
                        const int64_t *iext)
{
    su_arena *a = L->a;
    struct sch_lowering *w = c->lw;
    sch_region(a, ne, e, c, ninner, inner, iext, w->mins, w->ext);
    /* local layout: axes ordered by their innermost loop in c */
    int key[IR_MAX_DIMS + 1], order[IR_MAX_DIMS + 1];
    innermost_leaf(c, key);
    for (int d = 0; d < c->ndim; d++)
        order[d] = d;
    for (int i = 1; i < c->ndim; i++)
        for (int j = i; j > 0 && key[order[j - 1]] > key[order[j]]; j--) {
            int x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    int64_t shape[IR_MAX_DIMS + 1], stride = 1;
    for (int i = c->ndim; i-- > 0;) {
        w->strides[order[i]] = stride;
        stride *= w->ext[order[i]];
        shape[i] = w->ext[order[i]];
    }
    char name[16];
    snprintf(name, sizeof name, "l%d", L->nlocal++);
    w->buf = sch_buffer_new(a, name, c->dtype, c->ndim, shape, SCH_SCOPE_LOCAL);
}

/* Places the children computed at t's loops. Regions go consumers first:
 * a child's region covers what t reads of it and what its siblings at the
 * same loop (placed already) read of it, their own loops ranging too. */
static void place_children(lower *L, sch_tensor *t, sch_tensor **kids, size_t nk, const sch_expr *value,
                           sch_var **lvars, const int64_t *lext)
{
    su_arena *a = L->a;
    int nl = (int)t->leaves.len;
    for (size_t i = nk; i-- > 0;) {
        sch_tensor *c = kids[i];
        int p = sch_leaf_pos(t, c->attach_iter);
        SU_VEC(const sch_expr *) ex = {0};
        SU_VEC(sch_var *) vars = {0};
        SU_VEC(int64_t) ext = {0};
        su_vec_push(&ex, value);
        for (int l = p + 1; l < nl; l++) {
            su_vec_push(&vars, lvars[l]);
            su_vec_push(&ext, lext[l]);
        }
        for (size_t j = i + 1; j < nk; j++) {
            sch_tensor *q = kids[j];
            if (sch_leaf_pos(t, q->attach_iter) != p || !sch_reads(L->s, q, c))
                continue;
            const sch_expr **to = su_arena_alloc(a, (size_t)(q->ndim ? q->ndim : 1) * sizeof *to);
            for (int d = 0; d < q->ndim; d++) {
                sch_var *u = sch_var_new(a, &L->s->next_var, q->axes[d]->name, IR_INT64);
                to[d] = sch_add(a, q->lw->mins[d], sch_varref(a, u));
                su_vec_push(&vars, u);
                su_vec_push(&ext, q->lw->ext[d]);
            }
            for (int r = 0; r < q->nraxes; r++) {
                su_vec_push(&vars, q->raxes[r]);
                su_vec_push(&ext, q->rext[r]);
            }
            su_vec_push(&ex, sch_substitute(a, L->inl[q->id], q->ndim, q->axes, to));
        }
        place_child(L, c, (int)ex.len, ex.data, (int)vars.len, vars.data, ext.data);
        su_vec_free(&ex);
        su_vec_free(&vars);
        su_vec_free(&ext);
    }
}

static const sch_expr *combine(su_arena *a, sch_reduce r, const sch_expr *acc, const sch_expr *v)
{
    switch (r) {
    case SCH_RED_SUM: return sch_add(a, acc, v);
    case SCH_RED_MAX: return sch_max(a, acc, v);
    case SCH_RED_MIN: return sch_min(a, acc, v);
    case SCH_RED_PROD: return sch_mul(a, acc, v);
    default: return v;
    }
}

static const sch_expr *reduce_init(su_arena *a, sch_reduce r, ir_dtype dt)
{
    switch (r) {
    case SCH_RED_MAX: return sch_lowest(a, dt);
    case SCH_RED_MIN: return sch_highest(a, dt);
    case SCH_RED_PROD: return sch_const(a, dt, 1);
    default: return sch_const(a, dt, 0);
    }
}

/* Where t's accumulator tile is kept in a tile-sized local around the
 * innermost reduction loop: when a spatial loop sits between t's reduction
 * loops (a blocked reduction, its k blocks outside the row tiles: the
 * stage's buffer then holds many tiles, which gcc keeps in memory), and the
 * loops inside the innermost reduction loop are a register tile (unrolled
 * or vectorized spatial loops, at most MAX_TILE elements, nothing computed
 * at them). Returns that loop's position, or -1. */
enum { MAX_TILE = 1024 };
static int tile_promotion(const sch_tensor *t, int first_red, const sch_stmt *const *at, const int64_t *lext)
{
    int nl = (int)t->leaves.len, inner = -1;
    bool between = false;
    for (int l = 0; l < nl; l++)
        if (t->leaves.data[l]->reduce)
            inner = l;
    for (int l = first_red + 1; first_red >= 0 && l < inner; l++)
        between |= !t->leaves.data[l]->reduce;
    if (!between || inner == nl - 1 || at[inner])
        return -1;
    int64_t size = 1;
    for (int l = inner + 1; l < nl; l++) {
        sch_loop_kind k = t->leaves.data[l]->kind;
        if (t->leaves.data[l]->reduce || (k != SCH_LOOP_UNROLLED && k != SCH_LOOP_VECTORIZED) || at[l])
            return -1;
        size *= lext[l];
    }
    return size <= MAX_TILE ? inner : -1;
}

static const sch_stmt *emit(lower *L, sch_tensor *t)
{
    su_arena *a = L->a;
    struct sch_lowering *w = t->lw;
    int ni = (int)t->iters.len, nl = (int)t->leaves.len;
    int64_t *ext = su_arena_alloc(a, (size_t)ni * sizeof *ext);
    const sch_expr **val = su_arena_alloc(a, (size_t)ni * sizeof *val);
    /* extents from the region, through the relations */
    int nv = t->ndim + t->nraxes;
    for (int i = 0; i < ni; i++) {
        const sch_iter *it = t->iters.data[i];
        /* (a stage turned into a copy by cache_write keeps its old
         * reduction iters, no longer axes: skip them) */
        if (it->var && it->root_dim < nv)
            ext[i] = it->root_dim < t->ndim ? w->ext[it->root_dim] : t->rext[it->root_dim - t->ndim];
    }
    for (size_t r = 0; r < t->rels.len; r++) {
        const sch_rel *rel = &t->rels.data[r];
        int p = iter_index(t, rel->parent), o = iter_index(t, rel->outer), in = iter_index(t, rel->inner);
        if (rel->fuse) {
            ext[p] = ext[o] * ext[in];
        } else {
            ext[in] = rel->factor < ext[p] ? rel->factor : ext[p];
            ext[o] = (ext[p] + ext[in] - 1) / ext[in];
        }
    }
    /* leaf variables, then every iter's value */
    sch_var **lvars = su_arena_alloc(a, (size_t)(nl ? nl : 1) * sizeof *lvars);
    int64_t *lext = su_arena_alloc(a, (size_t)(nl ? nl : 1) * sizeof *lext);
    for (int l = 0; l < nl; l++) {
        int i = iter_index(t, t->leaves.data[l]);
        lvars[l] = sch_var_new(a, &L->s->next_var, t->leaves.data[l]->name, IR_INT64);
        lext[l] = ext[i];
        val[i] = sch_varref(a, lvars[l]);
    }
    const sch_expr *guard = NULL, *sguard = NULL;  /* all guards; those of spatial loops */
    for (size_t r = t->rels.len; r-- > 0;) {
        const sch_rel *rel = &t->rels.data[r];
        int p = iter_index(t, rel->parent), o = iter_index(t, rel->outer), in = iter_index(t, rel->inner);
        if (rel->fuse) {
            val[o] = sch_div(a, val[p], sch_int(a, ext[in]));
            val[in] = sch_mod(a, val[p], sch_int(a, ext[in]));
        } else {
            val[p] = sch_add(a, sch_mul(a, val[o], sch_int(a, ext[in])), val[in]);
            if (ext[o] * ext[in] != ext[p]) {
                const sch_expr *g = sch_bin(a, SCH_LT, val[p], sch_int(a, ext[p]));
                guard = sch_and(a, guard, g);
                if (!rel->parent->reduce)
                    sguard = sch_and(a, sguard, g);
            }
        }
    }
    /* axis values: region minimum + local position */
    sch_var **from = su_arena_alloc(a, (size_t)(nv ? nv : 1) * sizeof *from);
    const sch_expr **to = su_arena_alloc(a, (size_t)(nv ? nv : 1) * sizeof *to);
    const sch_expr **local = su_arena_alloc(a, (size_t)(t->ndim ? t->ndim : 1) * sizeof *local);
    for (int i = 0; i < ni; i++) {
        const sch_iter *it = t->iters.data[i];
        if (!it->var || it->root_dim >= nv)
            continue;
        int d = it->root_dim;
        from[d] = it->var;
        if (d < t->ndim) {
            local[d] = val[i];
            to[d] = sch_add(a, w->mins[d], val[i]);
            if (w->ext[d] != t->shape[d]) {
                /* a region may reach past the domain: compute only inside it */
                const sch_expr *g = sch_and(a, sch_bin(a, SCH_GE, to[d], sch_int(a, 0)),
                                            sch_bin(a, SCH_LT, to[d], sch_int(a, t->shape[d])));
                guard = sch_and(a, guard, g);
                sguard = sch_and(a, sguard, g);
            }
        } else {
            to[d] = val[i];
        }
    }
    const sch_expr *value = sch_substitute(a, L->inl[t->id], nv, from, to);
    /* children, at each leaf position, in dependency order */
    const sch_stmt **at = su_arena_alloc(a, (size_t)(nl ? nl : 1) * sizeof *at);
    SU_VEC(sch_tensor *) kids = {0};
    for (size_t i = 0; i < L->s->tensors.len; i++) {
        sch_tensor *c = L->s->tensors.data[i];
        if (c->attach == SCH_ATTACH_AT && c->attach_to == t)
            su_vec_push(&kids, c);
    }
    for (size_t i = 1; i < kids.len; i++)
        for (size_t j = i; j > 0 && kids.data[j - 1]->lw->topo > kids.data[j]->lw->topo; j--) {
            sch_tensor *x = kids.data[j];
            kids.data[j] = kids.data[j - 1];
            kids.data[j - 1] = x;
        }
    for (size_t i = 0; i < kids.len; i++) {
        sch_tensor *c = kids.data[i];
        if (sch_leaf_pos(t, c->attach_iter) < 0) {
            su_vec_free(&kids);
            L->failed = true;
            sch_fail(L->s, SCH_E_BAD_ATTACH, "lower: %s is computed at %s, no longer a loop of %s", c->name,
                     c->attach_iter->name, t->name);
            return NULL;
        }
    }
    place_children(L, t, kids.data, kids.len, value, lvars, lext);
    for (size_t i = 0; i < kids.len; i++) {
        sch_tensor *c = kids.data[i];
        int p = sch_leaf_pos(t, c->attach_iter);
        at[p] = sch_seq2(a, at[p], emit(L, c));
    }
    /* the store (and the reduction's init) */
    const sch_expr *loaded = sch_map_reads(a, value, read_to_load, L);
    const sch_expr *lidx = sch_int(a, 0);
    for (int d = 0; d < t->ndim; d++)
        lidx = sch_add(a, lidx, sch_mul(a, local[d], sch_int(a, w->strides[d])));
    const sch_stmt *body;
    int first_red = -1;
    if (t->reduce != SCH_RED_NONE) {
        body = sch_store(a, w->buf, lidx, combine(a, t->reduce, sch_load(a, w->buf, lidx), loaded));
        for (int l = 0; l < nl && first_red < 0; l++)
            if (t->leaves.data[l]->reduce)
                first_red = l;
    } else {
        body = sch_store(a, w->buf, lidx, loaded);
    }
    body = sch_if(a, guard, body, NULL);
    const sch_stmt *init = NULL;
    if (first_red >= 0) {
        init = sch_if(a, sguard, sch_store(a, w->buf, lidx, reduce_init(a, t->reduce, t->dtype)), NULL);
        for (int l = nl; l-- > first_red + 1;)
            if (!t->leaves.data[l]->reduce)
                init = sch_for(a, lvars[l], lext[l], t->leaves.data[l]->kind, init);
    } else if (t->reduce != SCH_RED_NONE) {
        /* no reduction loop left (all of extent 1?): init before the store */
        body = sch_seq2(a, sch_if(a, sguard, sch_store(a, w->buf, lidx, reduce_init(a, t->reduce, t->dtype)), NULL),
                        body);
    }
    /* a blocked reduction's tile: loaded into a local before the innermost
     * reduction loop, accumulated there, stored back after it */
    int tp = tile_promotion(t, first_red, at, lext);
    const sch_stmt *tile_in = NULL, *tile_out = NULL;
    sch_buffer *tile = NULL;
    if (tp >= 0) {
        int64_t shape[2 * IR_MAX_DIMS + 2], stride = 1;
        const sch_expr *tidx = sch_int(a, 0);
        for (int l = nl; l-- > tp + 1;) {
            shape[l - tp - 1] = lext[l];
            tidx = sch_add(a, tidx, sch_mul(a, sch_varref(a, lvars[l]), sch_int(a, stride)));
            stride *= lext[l];
        }
        char name[16];
        snprintf(name, sizeof name, "l%d", L->nlocal++);
        tile = sch_buffer_new(a, name, t->dtype, nl - tp - 1, shape, SCH_SCOPE_LOCAL);
        body = sch_if(a, guard, sch_store(a, tile, tidx, combine(a, t->reduce, sch_load(a, tile, tidx), loaded)),
                      NULL);
        /* the copies run outside the reduction loops: spatial guards only */
        tile_in = sch_if(a, sguard, sch_store(a, tile, tidx, sch_load(a, w->buf, lidx)), NULL);
        tile_out = sch_if(a, sguard, sch_store(a, w->buf, lidx, sch_load(a, tile, tidx)), NULL);
        for (int l = nl; l-- > tp + 1;) {
            tile_in = sch_for(a, lvars[l], lext[l], t->leaves.data[l]->kind, tile_in);
            tile_out = sch_for(a, lvars[l], lext[l], t->leaves.data[l]->kind, tile_out);
        }
    }
    for (int l = nl; l-- > 0;) {
        const sch_stmt *items[3] = {at[l], first_red == l + 1 ? init : NULL, body};
        const sch_stmt *inner = sch_seq(a, 3, items);
        /* the children's buffers live for one iteration of this loop */
        for (size_t i = kids.len; i-- > 0;)
            if (sch_leaf_pos(t, kids.data[i]->attach_iter) == l)
                inner = sch_alloc(a, kids.data[i]->lw->buf, inner);
        body = sch_for(a, lvars[l], lext[l], t->leaves.data[l]->kind, inner);
        if (body && t->leaves.data[l]->kind == SCH_LOOP_THREAD)
            ((sch_stmt *)body)->thread_axis = t->leaves.data[l]->thread_axis;
        if (l == tp) {
            const sch_stmt *steps[3] = {tile_in, body, tile_out};
            body = sch_alloc(a, tile, sch_seq(a, 3, steps));
        }
    }
    if (first_red == 0)
        body = sch_seq2(a, init, body);
    su_vec_free(&kids);
    return body;
}

/* ---- the function -------------------------------------------------------- */

static sch_buffer *arg_buffer(su_arena *a, const char *prefix, int i, const sch_tensor *t, sch_scope scope)
{
    char name[16];
    snprintf(name, sizeof name, "%s%d", prefix, i);
    return sch_buffer_new(a, name, t->dtype, t->ndim, t->shape, scope);
}

static const sch_stmt *finish(lower *L, const sch_stmt *body)
{
    if (!L->o || !L->o->no_simplify) {
        sch_bounds_ctx c = {0};
        body = sch_simplify_stmt(L->a, &c, body);
        sch_bounds_free(&c);
    }
    return body;
}

sch_lowered *sch_lower(sch_schedule *s, const sch_lower_opts *o)
{
    su_arena *a = &s->arena;
    sch_lower_opts none = {0};
    lower L = {s, a, o ? o : &none, NULL, 0, 0, {0}, false};
    size_t nt = s->tensors.len;
    L.inl = su_arena_alloc(a, nt * sizeof *L.inl);
    for (size_t i = 0; i < nt; i++) {
        sch_tensor *t = s->tensors.data[i];
        t->lw = lw_new(a, t->ndim);
        if (t->kind == SCH_TENSOR_COMPUTE && t->attach != SCH_ATTACH_INLINE)
            L.inl[i] = sch_inlined_body(s, t);
    }
    /* dependency ranks */
    bool *seen = su_calloc(nt, sizeof *seen);
    int next = 0;
    for (int i = 0; i < s->noutputs; i++)
        rank(&L, s->outputs[i], &next, seen);
    for (size_t i = 0; i < nt; i++)
        if (!seen[i])
            rank(&L, s->tensors.data[i], &next, seen);
    free(seen);
    /* arguments */
    SU_VEC(sch_buffer *) args = {0};
    for (int i = 0; i < s->nparams; i++) {
        sch_tensor *p = s->tensors.data[i];
        set_full(&L, p, arg_buffer(a, "p", i, p, SCH_SCOPE_INPUT));
        su_vec_push(&args, p->lw->buf);
    }
    sch_lowered *res = su_arena_alloc(a, sizeof *res);
    SU_VEC(sch_prologue) pro = {0};
    for (size_t i = 0; i < nt; i++) {
        sch_tensor *t = s->tensors.data[i];
        if (!t->pack_of || t->attach != SCH_ATTACH_ROOT || !L.o->hoist_packs || !L.o->param_const ||
            !L.o->param_const[t->pack_of->param])
            continue;
        sch_prologue pr = {t->pack_of->param, NULL, su_arena_alloc(a, sizeof(sch_func))};
        sch_buffer *in = arg_buffer(a, "p", 0, t->pack_of, SCH_SCOPE_INPUT);
        char name[24];
        snprintf(name, sizeof name, "w%d", (int)pro.len);
        sch_buffer *outb = sch_buffer_new(a, name, t->dtype, t->ndim, t->shape, SCH_SCOPE_OUTPUT);
        /* the prologue reads the parameter as its first argument */
        sch_buffer *saved = t->pack_of->lw->buf;
        t->pack_of->lw->buf = in;
        set_full(&L, t, outb);
        const sch_stmt *pb = emit(&L, t);
        t->pack_of->lw->buf = saved;
        sch_buffer **pargs = su_arena_alloc(a, 2 * sizeof *pargs);
        pargs[0] = in;
        pargs[1] = outb;
        *pr.fn = (sch_func){su_arena_printf(a, "pack_p%d", pr.param), 2, pargs, finish(&L, pb)};
        pr.packed = sch_buffer_new(a, name, t->dtype, t->ndim, t->shape, SCH_SCOPE_INPUT);
        t->lw->buf = pr.packed;
        su_vec_push(&pro, pr);
        su_vec_push(&args, pr.packed);
    }
    for (int i = 0; i < s->noutputs; i++) {
        sch_tensor *t = s->outputs[i];
        set_full(&L, t, arg_buffer(a, "o", i, t, SCH_SCOPE_OUTPUT));
        su_vec_push(&args, t->lw->buf);
    }
    /* root stages in dependency order */
    SU_VEC(sch_tensor *) roots = {0};
    for (size_t i = 0; i < nt; i++) {
        sch_tensor *t = s->tensors.data[i];
        if (t->kind == SCH_TENSOR_COMPUTE && t->attach == SCH_ATTACH_ROOT && !(t->lw->buf && t->pack_of))
            su_vec_push(&roots, t);
    }
    for (size_t i = 1; i < roots.len; i++)
        for (size_t j = i; j > 0 && roots.data[j - 1]->lw->topo > roots.data[j]->lw->topo; j--) {
            sch_tensor *x = roots.data[j];
            roots.data[j] = roots.data[j - 1];
            roots.data[j - 1] = x;
        }
    const sch_stmt *body = NULL;
    for (size_t i = 0; i < roots.len && !L.failed; i++) {
        sch_tensor *t = roots.data[i];
        if (t->output < 0) {
            char name[16];
            snprintf(name, sizeof name, "t%d", L.ntemp++);
            set_full(&L, t, sch_buffer_new(a, name, t->dtype, t->ndim, t->shape, SCH_SCOPE_GLOBAL));
            su_vec_push(&L.globals, t->lw->buf);
        }
        body = sch_seq2(a, body, emit(&L, t));
    }
    su_vec_free(&roots);
    for (size_t i = L.globals.len; i-- > 0;)
        body = sch_alloc(a, L.globals.data[i], body);
    su_vec_free(&L.globals);
    if (L.failed) {
        su_vec_free(&args);
        su_vec_free(&pro);
        return NULL;
    }
    res->kernel = su_arena_alloc(a, sizeof *res->kernel);
    res->kernel->name = "kernel";
    res->kernel->nargs = (int)args.len;
    res->kernel->args = su_arena_dup(a, args.data, args.len * sizeof *args.data);
    res->kernel->body = finish(&L, body);
    res->nprologues = (int)pro.len;
    res->prologues = pro.len ? su_arena_dup(a, pro.data, pro.len * sizeof *pro.data) : NULL;
    su_vec_free(&args);
    su_vec_free(&pro);
    return res;
}
