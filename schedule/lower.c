/* lower.c — a schedule becomes one LoopIR function.
 *
 * Stages at the root are emitted in dependency order, each as its loop nest
 * over its whole domain, into an output argument or a kernel-wide temporary.
 * A stage's nest has one loop per leaf iteration (outermost first, with the
 * leaf's annotation); the values of its axes come back from the leaves
 * through the split and fuse relations, and a split whose factor does not
 * divide adds a guard, or, inside a register tile, becomes full tiles and a
 * tail (partition). Inlined stages are already substituted into the body
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
 * A reduction whose loop is bound to a work-item axis of the group (sch_bind
 * on a reduction leaf: what the device template reduce_cl makes) is a
 * work-group reduction: each work-item combines its share of the reduced
 * elements in a private accumulator, the partial results meet in a SHARED
 * buffer and are combined in a tree of halving steps, each step a loop over
 * the group's work-items between barriers; then the result is stored (by
 * every work-item into its own copy of a per-iteration buffer, by the first
 * one into a kernel-wide or output buffer). Run serially (one work-item, or
 * a C target) the same statements compute the same result, since each step
 * only combines elements that step does not write. SHARED buffers are
 * allocated around the whole body, at the kernel's top, where OpenCL C
 * wants __local declarations.
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
    int ntemp, nlocal, nshared; /* buffer name counters */
    SU_VEC(sch_buffer *) globals;
    SU_VEC(sch_buffer *) shared;    /* SHARED buffers of work-group reductions */
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

static const sch_stmt *stage_nest(lower *L, sch_tensor *t);

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
    if (c->shared) {
        /* a staged tile (cache_read): __local, allocated at the kernel's top */
        snprintf(name, sizeof name, "s%d", L->nshared++);
        w->buf = sch_buffer_new(a, name, c->dtype, c->ndim, shape, SCH_SCOPE_SHARED);
        su_vec_push(&L->shared, w->buf);
        return;
    }
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

/* One stage's loop nest while its phases build it (stage_nest). */
typedef struct nest {
    sch_tensor *t;
    int ni, nl, nv;             /* iters, leaves (loops), axes (spatial and reduction) */
    int64_t *ext;               /* per iter: its extent */
    const sch_expr **val;       /* per iter: its value from the leaves' variables */
    sch_var **lvars;            /* per leaf: its loop variable */
    int64_t *lext;              /* per leaf: its extent */
    const sch_expr *guard;      /* all guards (NULL: none) */
    const sch_expr *sguard;     /* the guards of spatial loops (what an init or a copy needs) */
    const sch_expr **local;     /* per spatial axis: the position in the stage's region */
    const sch_expr *value;      /* the stage's body over the leaves' variables */
    const sch_expr *loaded;     /* the value with its reads turned into loads */
    const sch_expr *lidx;       /* the element of the stage's buffer that one iteration writes */
    const sch_stmt **at;        /* per leaf: the children computed at that loop */
    const sch_stmt **after;     /* per leaf: what follows the body inside that loop (the barrier
                                   after a staged tile's use, before the next copy); may be NULL */
    SU_VEC(sch_tensor *) kids;  /* the children computed at t's loops, in dependency order */
    int first_red;              /* the outermost reduction leaf (-1: none) */
    const sch_stmt *body;       /* the innermost statement, then the nest around it */
    const sch_stmt *init;       /* the reduction's init, above its outermost reduction loop */
    int tp;                     /* the leaf of tile promotion (-1: none) */
    sch_buffer *tile;
    const sch_stmt *tile_in, *tile_out;
} nest;

static const sch_stmt *stage_nest(lower *L, sch_tensor *t);

/* Insertion sort by dependency rank (stable: creation order among equals). */
static void sort_by_rank(sch_tensor **v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && v[j - 1]->lw->topo > v[j]->lw->topo; j--) {
            sch_tensor *x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
}

/* Extents of every iter: the roots' from the region (or the reduction's
 * extents), the others through the split and fuse relations. */
static void iter_extents(lower *L, nest *n)
{
    sch_tensor *t = n->t;
    struct sch_lowering *w = t->lw;
    n->ext = su_arena_alloc(L->a, (size_t)n->ni * sizeof *n->ext);
    for (int i = 0; i < n->ni; i++) {
        const sch_iter *it = t->iters.data[i];
        /* (a stage turned into a copy by cache_write keeps its old
         * reduction iters, no longer axes: skip them) */
        if (it->var && it->root_dim < n->nv)
            n->ext[i] = it->root_dim < t->ndim ? w->ext[it->root_dim] : t->rext[it->root_dim - t->ndim];
    }
    for (size_t r = 0; r < t->rels.len; r++) {
        const sch_rel *rel = &t->rels.data[r];
        int p = iter_index(t, rel->parent), o = iter_index(t, rel->outer), in = iter_index(t, rel->inner);
        if (rel->fuse) {
            n->ext[p] = n->ext[o] * n->ext[in];
        } else {
            n->ext[in] = rel->factor < n->ext[p] ? rel->factor : n->ext[p];
            n->ext[o] = (n->ext[p] + n->ext[in] - 1) / n->ext[in];
        }
    }
}

/* A variable per leaf loop, then every iter's value back through the
 * relations; a split whose factor does not divide guards its parent. */
static void leaf_values(lower *L, nest *n)
{
    su_arena *a = L->a;
    sch_tensor *t = n->t;
    int nl = n->nl;
    n->val = su_arena_alloc(a, (size_t)n->ni * sizeof *n->val);
    n->lvars = su_arena_alloc(a, (size_t)(nl ? nl : 1) * sizeof *n->lvars);
    n->lext = su_arena_alloc(a, (size_t)(nl ? nl : 1) * sizeof *n->lext);
    for (int l = 0; l < nl; l++) {
        int i = iter_index(t, t->leaves.data[l]);
        n->lvars[l] = sch_var_new(a, &L->s->next_var, t->leaves.data[l]->name, IR_INT64);
        n->lext[l] = n->ext[i];
        n->val[i] = sch_varref(a, n->lvars[l]);
    }
    for (size_t r = t->rels.len; r-- > 0;) {
        const sch_rel *rel = &t->rels.data[r];
        int p = iter_index(t, rel->parent), o = iter_index(t, rel->outer), in = iter_index(t, rel->inner);
        const int64_t *ext = n->ext;
        if (rel->fuse) {
            n->val[o] = sch_div(a, n->val[p], sch_int(a, ext[in]));
            n->val[in] = sch_mod(a, n->val[p], sch_int(a, ext[in]));
        } else {
            n->val[p] = sch_add(a, sch_mul(a, n->val[o], sch_int(a, ext[in])), n->val[in]);
            if (ext[o] * ext[in] != ext[p]) {
                const sch_expr *g = sch_bin(a, SCH_LT, n->val[p], sch_int(a, ext[p]));
                n->guard = sch_and(a, n->guard, g);
                if (!rel->parent->reduce)
                    n->sguard = sch_and(a, n->sguard, g);
            }
        }
    }
}

/* The stage's body over the leaves: each axis is the region's minimum plus
 * its local position; a region reaching past the domain guards it. */
static void stage_value(lower *L, nest *n)
{
    su_arena *a = L->a;
    sch_tensor *t = n->t;
    struct sch_lowering *w = t->lw;
    int nv = n->nv;
    sch_var **from = su_arena_alloc(a, (size_t)(nv ? nv : 1) * sizeof *from);
    const sch_expr **to = su_arena_alloc(a, (size_t)(nv ? nv : 1) * sizeof *to);
    n->local = su_arena_alloc(a, (size_t)(t->ndim ? t->ndim : 1) * sizeof *n->local);
    for (int i = 0; i < n->ni; i++) {
        const sch_iter *it = t->iters.data[i];
        if (!it->var || it->root_dim >= nv)
            continue;
        int d = it->root_dim;
        from[d] = it->var;
        if (d >= t->ndim) {
            to[d] = n->val[i];
            continue;
        }
        n->local[d] = n->val[i];
        to[d] = sch_add(a, w->mins[d], n->val[i]);
        if (w->ext[d] != t->shape[d]) {
            /* a region may reach past the domain: compute only inside it */
            const sch_expr *g = sch_and(a, sch_bin(a, SCH_GE, to[d], sch_int(a, 0)),
                                        sch_bin(a, SCH_LT, to[d], sch_int(a, t->shape[d])));
            n->guard = sch_and(a, n->guard, g);
            n->sguard = sch_and(a, n->sguard, g);
        }
    }
    n->value = sch_substitute(a, L->inl[t->id], nv, from, to);
}

static const sch_stmt *shared_copy(lower *L, const nest *n, sch_tensor *c, int p);
static void shared_barriers(lower *L, nest *n);

/* The children computed at t's loops, in dependency order, placed (their
 * regions and buffers) and lowered into n->at; false when one is attached
 * to a loop t no longer has. */
static bool children(lower *L, nest *n)
{
    sch_tensor *t = n->t;
    n->at = su_arena_alloc(L->a, (size_t)(n->nl ? n->nl : 1) * sizeof *n->at);
    for (size_t i = 0; i < L->s->tensors.len; i++) {
        sch_tensor *c = L->s->tensors.data[i];
        if (c->attach == SCH_ATTACH_AT && c->attach_to == t)
            su_vec_push(&n->kids, c);
    }
    sort_by_rank(n->kids.data, n->kids.len);
    for (size_t i = 0; i < n->kids.len; i++) {
        sch_tensor *c = n->kids.data[i];
        if (sch_leaf_pos(t, c->attach_iter) < 0) {
            L->failed = true;
            sch_fail(L->s, SCH_E_BAD_ATTACH, "lower: %s is computed at %s, no longer a loop of %s", c->name,
                     c->attach_iter->name, t->name);
            return false;
        }
    }
    place_children(L, t, n->kids.data, n->kids.len, n->value, n->lvars, n->lext);
    for (size_t i = 0; i < n->kids.len; i++) {
        sch_tensor *c = n->kids.data[i];
        int p = sch_leaf_pos(t, c->attach_iter);
        n->at[p] = sch_seq2(L->a, n->at[p], c->shared ? shared_copy(L, n, c, p) : stage_nest(L, c));
    }
    shared_barriers(L, n);
    return !L->failed;
}

/* The store into the stage's buffer (a reduction combines into it) and a
 * reduction's init. */
static void store_and_init(lower *L, nest *n)
{
    su_arena *a = L->a;
    sch_tensor *t = n->t;
    sch_buffer *buf = t->lw->buf;
    const sch_expr *loaded = n->loaded = sch_map_reads(a, n->value, read_to_load, L);
    const sch_expr *lidx = sch_int(a, 0);
    for (int d = 0; d < t->ndim; d++)
        lidx = sch_add(a, lidx, sch_mul(a, n->local[d], sch_int(a, t->lw->strides[d])));
    n->lidx = lidx;
    n->first_red = -1;
    if (t->reduce == SCH_RED_NONE) {
        n->body = sch_if(a, n->guard, sch_store(a, buf, lidx, loaded), NULL);
        return;
    }
    n->body = sch_if(a, n->guard, sch_store(a, buf, lidx, combine(a, t->reduce, sch_load(a, buf, lidx), loaded)), NULL);
    for (int l = 0; l < n->nl && n->first_red < 0; l++)
        if (t->leaves.data[l]->reduce)
            n->first_red = l;
    const sch_stmt *init = sch_if(a, n->sguard, sch_store(a, buf, lidx, reduce_init(a, t->reduce, t->dtype)), NULL);
    if (n->first_red < 0) {
        /* no reduction loop left (all of extent 1?): init before the store */
        n->body = sch_seq2(a, init, n->body);
        return;
    }
    /* over the spatial loops inside the outermost reduction loop */
    for (int l = n->nl; l-- > n->first_red + 1;)
        if (!t->leaves.data[l]->reduce) {
            init = sch_for(a, n->lvars[l], n->lext[l], t->leaves.data[l]->kind, init);
            /* (a work-item loop inside the reduction's: dense_cl's, its k blocks staged) */
            if (init && t->leaves.data[l]->kind == SCH_LOOP_THREAD)
                ((sch_stmt *)init)->thread_axis = t->leaves.data[l]->thread_axis;
        }
    n->init = init;
}

/* A blocked reduction's tile (tile_promotion): loaded into a local before
 * the innermost reduction loop, accumulated there, stored back after it. */
static void promote_tile(lower *L, nest *n)
{
    su_arena *a = L->a;
    sch_tensor *t = n->t;
    n->tp = tile_promotion(t, n->first_red, n->at, n->lext);
    if (n->tp < 0)
        return;
    int tp = n->tp, nl = n->nl;
    int64_t shape[2 * IR_MAX_DIMS + 2], stride = 1;
    const sch_expr *tidx = sch_int(a, 0);
    for (int l = nl; l-- > tp + 1;) {
        shape[l - tp - 1] = n->lext[l];
        tidx = sch_add(a, tidx, sch_mul(a, sch_varref(a, n->lvars[l]), sch_int(a, stride)));
        stride *= n->lext[l];
    }
    char name[16];
    snprintf(name, sizeof name, "l%d", L->nlocal++);
    sch_buffer *tile = n->tile = sch_buffer_new(a, name, t->dtype, nl - tp - 1, shape, SCH_SCOPE_LOCAL);
    const sch_expr *loaded = n->loaded, *lidx = n->lidx;
    n->body = sch_if(a, n->guard, sch_store(a, tile, tidx, combine(a, t->reduce, sch_load(a, tile, tidx), loaded)),
                     NULL);
    /* the copies run outside the reduction loops: spatial guards only */
    n->tile_in = sch_if(a, n->sguard, sch_store(a, tile, tidx, sch_load(a, t->lw->buf, lidx)), NULL);
    n->tile_out = sch_if(a, n->sguard, sch_store(a, t->lw->buf, lidx, sch_load(a, tile, tidx)), NULL);
    for (int l = nl; l-- > tp + 1;) {
        n->tile_in = sch_for(a, n->lvars[l], n->lext[l], t->leaves.data[l]->kind, n->tile_in);
        n->tile_out = sch_for(a, n->lvars[l], n->lext[l], t->leaves.data[l]->kind, n->tile_out);
    }
}

/* Leaf l's loop around inner, with the buffers of the children computed
 * at it (they live for one iteration). */
static const sch_stmt *leaf_loop(lower *L, const nest *n, int l, const sch_stmt *inner)
{
    const sch_tensor *t = n->t;
    for (size_t i = n->kids.len; i-- > 0;)
        if (sch_leaf_pos(t, n->kids.data[i]->attach_iter) == l && !n->kids.data[i]->shared)
            inner = sch_alloc(L->a, n->kids.data[i]->lw->buf, inner);
    const sch_stmt *body = sch_for(L->a, n->lvars[l], n->lext[l], t->leaves.data[l]->kind, inner);
    if (body && t->leaves.data[l]->kind == SCH_LOOP_THREAD)
        ((sch_stmt *)body)->thread_axis = t->leaves.data[l]->thread_axis;
    return body;
}

/* The loops around the body, innermost first: at each, the children
 * computed there (their buffers live for one iteration), the init at the
 * outermost reduction loop, the tile's copies around the promoted one. */
static const sch_stmt *wrap_loops(lower *L, nest *n)
{
    su_arena *a = L->a;
    const sch_stmt *body = n->body;
    for (int l = n->nl; l-- > 0;) {
        const sch_stmt *items[4] = {n->at[l], n->first_red == l + 1 ? n->init : NULL, body,
                                    n->after ? n->after[l] : NULL};
        body = leaf_loop(L, n, l, sch_seq(a, 4, items));
        if (l == n->tp) {
            const sch_stmt *steps[3] = {n->tile_in, body, n->tile_out};
            body = sch_alloc(a, n->tile, sch_seq(a, 3, steps));
        }
    }
    if (n->first_red == 0)
        body = sch_seq2(a, n->init, body);
    return body;
}

/* ---- work-group reductions ------------------------------------------------ */

/* The position of t's reduction leaf bound to a work-item axis, or -1. */
static int bound_reduction(const sch_tensor *t)
{
    for (size_t l = 0; l < t->leaves.len; l++)
        if (t->leaves.data[l]->reduce && t->leaves.data[l]->kind == SCH_LOOP_THREAD)
            return (int)l;
    return -1;
}

/* A loop over the work-items of a group on axis `axis` (3..5). */
static const sch_stmt *items_loop(lower *L, sch_var *v, int64_t n, int axis, const sch_stmt *body)
{
    const sch_stmt *f = sch_for(L->a, v, n, SCH_LOOP_THREAD, body);
    if (f)
        ((sch_stmt *)f)->thread_axis = axis;
    return f;
}

/* Whether t's loops make a work-group reduction lowering can build: the
 * bound leaf b is the outermost reduction leaf, only (unbound) reduction
 * leaves follow it, and nothing is computed at b or inside it. */
static bool wg_reduction_ok(lower *L, const nest *n, int b)
{
    const sch_tensor *t = n->t;
    bool ok = t->reduce != SCH_RED_NONE;
    for (int l = 0; l < n->nl && ok; l++) {
        const sch_iter *it = t->leaves.data[l];
        ok = l < b ? !it->reduce : l == b || (it->reduce && it->kind != SCH_LOOP_THREAD);
        ok = ok && (l < b || !n->at[l]);
    }
    if (!ok) {
        L->failed = true;
        sch_fail(L->s, SCH_E_BAD_ATTACH, "lower: the work-group reduction of %s needs its bound loop %s outside "
                 "its other reduction loops, inside its spatial ones, with nothing computed inside it", t->name,
                 t->leaves.data[b]->name);
    }
    return ok;
}

/* The reduction's statements for one element (bound leaf b over W work-items):
 * partial results, the tree in the SHARED buffer, the result's store. */
static const sch_stmt *wg_combine(lower *L, nest *n, int b)
{
    su_arena *a = L->a;
    sch_tensor *t = n->t;
    int64_t W = n->lext[b];
    int axis = t->leaves.data[b]->thread_axis;
    const sch_expr *loaded = sch_map_reads(a, n->value, read_to_load, L);
    const sch_expr *lidx = sch_int(a, 0), *zero = sch_int(a, 0);
    for (int d = 0; d < t->ndim; d++)
        lidx = sch_add(a, lidx, sch_mul(a, n->local[d], sch_int(a, t->lw->strides[d])));
    char name[16];
    snprintf(name, sizeof name, "l%d", L->nlocal++);
    int64_t one = 1;
    sch_buffer *acc = sch_buffer_new(a, name, t->dtype, 1, &one, SCH_SCOPE_LOCAL);
    snprintf(name, sizeof name, "s%d", L->nshared++);
    sch_buffer *sh = sch_buffer_new(a, name, t->dtype, 1, &W, SCH_SCOPE_SHARED);
    su_vec_push(&L->shared, sh);
    /* each work-item's share: the loops inside b, accumulating privately */
    const sch_stmt *part =
        sch_if(a, n->guard, sch_store(a, acc, zero, combine(a, t->reduce, sch_load(a, acc, zero), loaded)), NULL);
    for (int l = n->nl; l-- > b + 1;)
        part = sch_for(a, n->lvars[l], n->lext[l], t->leaves.data[l]->kind, part);
    sch_var *li = n->lvars[b];
    const sch_stmt *share[3] = {sch_store(a, acc, zero, reduce_init(a, t->reduce, t->dtype)), part,
                                sch_store(a, sh, sch_varref(a, li), sch_load(a, acc, zero))};
    SU_VEC(const sch_stmt *) steps = {0};
    su_vec_push(&steps, items_loop(L, li, W, axis, sch_seq(a, 3, share)));
    su_vec_push(&steps, sch_barrier(a));
    /* halving steps: the first folds [h, W) onto [0, W - h) */
    int64_t h = 1;
    while (h * 2 < W)
        h *= 2;
    for (; h >= 1 && W > 1; h /= 2) {
        sch_var *v = sch_var_new(a, &L->s->next_var, li->name, IR_INT64);
        const sch_expr *vi = sch_varref(a, v), *vh = sch_add(a, vi, sch_int(a, h));
        const sch_expr *in = sch_and(a, sch_bin(a, SCH_LT, vi, sch_int(a, h)), sch_bin(a, SCH_LT, vh, sch_int(a, W)));
        const sch_stmt *st = sch_store(a, sh, vi, combine(a, t->reduce, sch_load(a, sh, vi), sch_load(a, sh, vh)));
        su_vec_push(&steps, items_loop(L, v, W, axis, sch_if(a, in, st, NULL)));
        su_vec_push(&steps, sch_barrier(a));
    }
    /* the result: into every work-item's own copy of a per-iteration
     * buffer, or by the first work-item into a shared one; the barrier
     * after it lets the next element reuse the SHARED buffer */
    sch_var *v = sch_var_new(a, &L->s->next_var, li->name, IR_INT64);
    const sch_expr *cond = n->sguard;
    if (t->lw->buf->scope != SCH_SCOPE_LOCAL)
        cond = sch_and(a, cond, sch_bin(a, SCH_EQ, sch_varref(a, v), zero));
    const sch_stmt *result = sch_store(a, t->lw->buf, lidx, sch_load(a, sh, zero));
    su_vec_push(&steps, items_loop(L, v, W, axis, sch_if(a, cond, result, NULL)));
    su_vec_push(&steps, sch_barrier(a));
    /* the accumulator's array around the whole sequence, so that a launch
     * per nest keeps the steps together */
    const sch_stmt *body = sch_alloc(a, acc, sch_seq(a, (int)steps.len, steps.data));
    su_vec_free(&steps);
    return body;
}

/* The loops outside the bound leaf b around the reduction's statements,
 * with the children computed at them. */
static const sch_stmt *wg_reduction(lower *L, nest *n, int b)
{
    if (!wg_reduction_ok(L, n, b))
        return NULL;
    const sch_stmt *body = wg_combine(L, n, b);
    for (int l = b; l-- > 0;)
        body = leaf_loop(L, n, l, sch_seq2(L->a, n->at[l], body));
    return body;
}

/* ---- loop partitioning: tails without guards ----------------------------- */

/* A split whose factor f does not divide its extent n guards its parent
 * (leaf_values), and a guard inside a vectorized or unrolled loop is what
 * keeps gcc from vectorizing it. Such a split's outer loop (over ceil(n/f)
 * tiles) is partitioned instead: the full tiles, a loop over floor(n/f) of
 * them in which the simplifier proves every guard of the split true, then
 * the tail, the same body with the outer variable fixed at the last tile,
 * whose loops are shortened to the iterations that can still store
 * (tighten: the inner loop's constant extent becomes n mod f, a local tile's
 * copies likewise). Both parts have constant trip counts (TVM's loop
 * partition; Halide's tails other than GuardWithIf), decided statically
 * since every extent is a constant here. A parallel loop keeps its
 * iterations, each branching to a full tile or the tail (split_last).
 *
 * Code grows by one copy of the outer loop's body per partition, so only
 * splits whose inner part is (or holds) a vectorized or unrolled loop, or
 * is the loop right around such loops (the register tile), are partitioned,
 * at most MAX_PARTITIONS of them per stage (four parts for two axes); the
 * others keep their guard. Loops bound to work-items keep theirs too: a
 * work-item is not a loop that can be split in two. */
enum { MAX_PARTITIONS = 2 };

/* Whether some store (or barrier) of s may run under the bounds in c: an if
 * whose condition the bounds decide false cannot run its then part. */
static bool may_store(su_arena *a, sch_bounds_ctx *c, const sch_stmt *s)
{
    if (!s)
        return false;
    switch (s->kind) {
    case SCH_S_STORE:
    case SCH_S_BARRIER: return true;
    case SCH_S_FOR: {
        if (s->extent <= 0)
            return false;
        sch_bounds_push(c, s->var, 0, s->extent - 1);
        bool r = may_store(a, c, s->body);
        sch_bounds_pop(c);
        return r;
    }
    case SCH_S_IF:
        return (!sch_is_int(sch_simplify(a, c, s->cond), 0) && may_store(a, c, s->then_s)) ||
               may_store(a, c, s->else_s);
    case SCH_S_LET: {
        bool b = sch_bounds_push_value(c, s->var, s->value);
        bool r = may_store(a, c, s->body);
        if (b)
            sch_bounds_pop(c);
        return r;
    }
    case SCH_S_ALLOC: return may_store(a, c, s->body);
    case SCH_S_SEQ:
        for (int i = 0; i < s->n; i++)
            if (may_store(a, c, s->items[i]))
                return true;
        return false;
    }
    return true;
}

/* tighten's bounds and arena, for its walk */
typedef struct tighten_walk {
    su_arena *a;
    sch_bounds_ctx *c;
} tighten_walk;

/* s with each loop cut after its last iteration that may store: the
 * smallest k such that no store runs with the counter in [k, extent), by
 * bisection (the interval analysis is monotone in k). A work-item loop
 * keeps its extent (its work-items are a launch's, not a loop's). */
static const sch_stmt *tighten_stmt(void *ctx, const sch_stmt *s)
{
    tighten_walk *w = ctx;
    su_arena *a = w->a;
    sch_bounds_ctx *c = w->c;
    switch (s->kind) {
    case SCH_S_FOR: {
        int64_t lo = 0, hi = s->extent;
        while (s->loop != SCH_LOOP_THREAD && lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            sch_bounds_push(c, s->var, mid, s->extent - 1);
            bool r = may_store(a, c, s->body);
            sch_bounds_pop(c);
            if (r)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (s->loop == SCH_LOOP_THREAD)
            hi = s->extent;
        if (hi <= 0)
            return NULL;
        sch_bounds_push(c, s->var, 0, hi - 1);
        const sch_stmt *body = tighten_stmt(w, s->body);
        sch_bounds_pop(c);
        const sch_stmt *f = sch_for(a, s->var, hi, s->loop, body);
        if (f)
            ((sch_stmt *)f)->thread_axis = s->thread_axis;
        return f;
    }
    case SCH_S_LET: {
        bool b = sch_bounds_push_value(c, s->var, s->value);
        const sch_stmt *r = sch_stmt_map(a, s, NULL, tighten_stmt, w);
        if (b)
            sch_bounds_pop(c);
        return r;
    }
    default: return sch_stmt_map(a, s, NULL, tighten_stmt, w);
    }
}

static const sch_stmt *tighten(su_arena *a, sch_bounds_ctx *c, const sch_stmt *s)
{
    tighten_walk w = {a, c};
    return s ? tighten_stmt(&w, s) : NULL;
}

/* The tail's own names for the local buffers it allocates: the full part
 * allocates the same ones, and where its loop has one iteration left the
 * simplifier drops the loop, so that both allocations would land in one
 * block of the emitted code. */
typedef struct renames {
    lower *L;
    SU_VEC(sch_buffer *) from;
    SU_VEC(sch_buffer *) to;
} renames;

/* b's name in the tail: the innermost allocation's that renamed it. */
static sch_buffer *renamed_buf(const renames *r, sch_buffer *b)
{
    for (size_t i = r->from.len; i-- > 0;)
        if (r->from.data[i] == b)
            return r->to.data[i];
    return b;
}

static const sch_expr *renamed_expr(su_arena *a, const sch_expr *e, const renames *r)
{
    if (!e)
        return NULL;
    const sch_expr *x = renamed_expr(a, e->a, r), *y = renamed_expr(a, e->b, r), *z = renamed_expr(a, e->c, r);
    sch_buffer *b = e->kind == SCH_LOAD ? renamed_buf(r, e->buf) : e->buf;
    bool same = x == e->a && y == e->b && z == e->c && b == e->buf;
    const sch_expr **args = NULL;
    if (e->n > 0 && e->args) {
        args = su_arena_alloc(a, (size_t)e->n * sizeof *args);
        for (int i = 0; i < e->n; i++) {
            args[i] = renamed_expr(a, e->args[i], r);
            same = same && args[i] == e->args[i];
        }
    }
    if (same)
        return e;
    sch_expr *c = su_arena_alloc(a, sizeof *c);
    *c = *e;
    c->a = x;
    c->b = y;
    c->c = z;
    c->buf = b;
    if (args)
        c->args = args;
    return c;
}

static const sch_expr *renamed_operand(void *ctx, const sch_expr *e)
{
    const renames *r = ctx;
    return renamed_expr(r->L->a, e, r);
}

static const sch_stmt *renamed_stmt(void *ctx, const sch_stmt *s)
{
    renames *r = ctx;
    lower *L = r->L;
    su_arena *a = L->a;
    if (s->kind == SCH_S_ALLOC && s->buf->scope == SCH_SCOPE_LOCAL) {
        char name[16];
        snprintf(name, sizeof name, "l%d", L->nlocal++);
        sch_buffer *b = sch_buffer_new(a, name, s->buf->dtype, s->buf->ndim, s->buf->shape, s->buf->scope);
        su_vec_push(&r->from, s->buf);
        su_vec_push(&r->to, b);
        const sch_stmt *body = renamed_stmt(r, s->body);
        r->from.len--;
        r->to.len--;
        return sch_alloc(a, b, body);
    }
    const sch_stmt *m = sch_stmt_map(a, s, renamed_operand, renamed_stmt, r);
    sch_buffer *b = s->kind == SCH_S_STORE ? renamed_buf(r, s->buf) : s->buf;
    return b != s->buf ? sch_store(a, b, m->index, m->value) : m;
}

/* Loop s over v (extent C) as its full iterations and its last one, the
 * tail tightened. A serial loop becomes a loop over C - 1 iterations and
 * the tail after it. A parallel loop keeps its C iterations, so that the
 * tail runs beside the full tiles rather than after them on one thread:
 * each iteration branches once, to the tail or to the full body over
 * v' = min(v, C - 2), whose bounds tell the simplifier it is a full tile. */
static const sch_stmt *split_last(lower *L, const sch_stmt *s, sch_var *v, const sch_stmt *body)
{
    su_arena *a = L->a;
    int64_t C = s->extent;
    const sch_expr *last = sch_int(a, C - 1);
    sch_bounds_ctx c = {0};
    const sch_stmt *tail = tighten(a, &c, sch_stmt_substitute(a, body, 1, &v, &last));
    sch_bounds_free(&c);
    if (s->loop != SCH_LOOP_PARALLEL) {
        renames r = {L, {0}, {0}};
        tail = tail ? renamed_stmt(&r, tail) : NULL;
        su_vec_free(&r.from);
        su_vec_free(&r.to);
        return sch_seq2(a, sch_for(a, v, C - 1, s->loop, body), tail);
    }
    sch_var *u = sch_var_new(a, &L->s->next_var, v->name, IR_INT64);
    const sch_expr *vu = sch_varref(a, u), *vv = sch_varref(a, v);
    const sch_stmt *full = sch_let(a, u, sch_min(a, vv, sch_int(a, C - 2)), sch_stmt_substitute(a, body, 1, &v, &vu));
    return sch_for(a, v, C, s->loop, sch_if(a, sch_bin(a, SCH_LT, vv, last), full, tail));
}

/* Whether statement n synchronizes a work-group (a barrier, or a loop over work-items,
 * which may hold one): such a loop is not partitioned, since its tail would
 * put the barriers under a branch, which OpenCL forbids and PoCL's region
 * builder asserts on; it keeps its guards. */
static bool is_sync(const void *ctx, const sch_stmt *n)
{
    (void)ctx;
    return n->kind == SCH_S_BARRIER || (n->kind == SCH_S_FOR && n->loop == SCH_LOOP_THREAD);
}

typedef struct partition_walk {
    lower *L;
    sch_var *v;
} partition_walk;

static const sch_stmt *partition_stmt(void *ctx, const sch_stmt *s)
{
    const partition_walk *w = ctx;
    const sch_stmt *m = sch_stmt_map(w->L->a, s, NULL, partition_stmt, ctx);
    if (s->kind == SCH_S_FOR && s->var == w->v && s->extent >= 2 && m && !sch_stmt_any(m->body, is_sync, NULL))
        return split_last(w->L, s, w->v, m->body);
    return m;
}

/* s with every loop over v (the nest's loop and the init's or the tile
 * copies' loops over the same counter) split into its full iterations and
 * its last one (split_last). */
static const sch_stmt *partition_loop(lower *L, const sch_stmt *s, sch_var *v)
{
    partition_walk w = {L, v};
    return s ? partition_stmt(&w, s) : NULL;
}

static bool tile_kind(sch_loop_kind k)
{
    return k == SCH_LOOP_VECTORIZED || k == SCH_LOOP_UNROLLED;
}

/* Whether split rel of t is worth a partition: its outer part is a loop not
 * bound to a work-item, and its inner part is, or holds, a vectorized or
 * unrolled loop, or is a loop whose inner loops all are. Returns the outer
 * loop's position, or -1. */
static int partition_leaf(const nest *n, const sch_rel *rel)
{
    const sch_tensor *t = n->t;
    int lo = sch_leaf_pos(t, rel->outer);
    if (lo < 0 || rel->outer->kind == SCH_LOOP_THREAD)
        return -1;
    /* the iters derived from the inner part (relations come in order) */
    bool *from = su_calloc((size_t)n->ni, sizeof *from);
    from[iter_index(t, rel->inner)] = true;
    for (size_t r = 0; r < t->rels.len; r++) {
        const sch_rel *q = &t->rels.data[r];
        int p = iter_index(t, q->parent), o = iter_index(t, q->outer), in = iter_index(t, q->inner);
        if (q->fuse)
            from[p] = from[p] || from[o] || from[in];
        else if (from[p])
            from[o] = from[in] = true;
    }
    bool worth = false;
    for (int l = lo + 1; l < n->nl && !worth; l++) {
        const sch_iter *it = t->leaves.data[l];
        if (!from[iter_index(t, it)])
            continue;
        if (it->kind == SCH_LOOP_THREAD)
            break;
        worth = tile_kind(it->kind);
        for (int m = l + 1; m < n->nl && !worth; m++) {
            if (!tile_kind(t->leaves.data[m]->kind))
                break;
            worth = m == n->nl - 1;
        }
    }
    free(from);
    return worth ? lo : -1;
}

/* The stage's nest with its worthwhile non-dividing splits partitioned. */
static const sch_stmt *partition(lower *L, const nest *n, const sch_stmt *body)
{
    const sch_tensor *t = n->t;
    int done = 0;
    for (size_t r = 0; r < t->rels.len && done < MAX_PARTITIONS; r++) {
        const sch_rel *rel = &t->rels.data[r];
        int p = iter_index(t, rel->parent), o = iter_index(t, rel->outer), in = iter_index(t, rel->inner);
        if (rel->fuse || n->ext[o] * n->ext[in] == n->ext[p])
            continue;
        int lo = partition_leaf(n, rel);
        if (lo < 0)
            continue;
        body = partition_loop(L, body, n->lvars[lo]);
        done++;
    }
    return body;
}

/* Stage t's loop nest, with the children computed inside it. */
static const sch_stmt *stage_nest(lower *L, sch_tensor *t)
{
    nest n = {.t = t, .ni = (int)t->iters.len, .nl = (int)t->leaves.len, .nv = t->ndim + t->nraxes, .tp = -1};
    iter_extents(L, &n);
    leaf_values(L, &n);
    stage_value(L, &n);
    const sch_stmt *body = NULL;
    int b = bound_reduction(t);
    if (b >= 0 && children(L, &n)) {
        body = wg_reduction(L, &n, b);
    } else if (b < 0 && children(L, &n)) {
        store_and_init(L, &n);
        promote_tile(L, &n);
        body = partition(L, &n, wrap_loops(L, &n));
    }
    su_vec_free(&n.kids);
    return body;
}

/* ---- staged tiles (cache_read) -------------------------------------------- */

/* The copy of SHARED stage c (computed at t's leaf p) into its buffer: the
 * region's elements in the producer's row-major order shared out over the
 * work-items of t's item loops inside p (the same axes and extents, so the
 * launch's group is the consumer's), work-item i of W copying elements i,
 * i + W, ...: consecutive work-items read consecutive elements. */
static const sch_stmt *shared_copy(lower *L, const nest *n, sch_tensor *c, int p)
{
    su_arena *a = L->a;
    sch_tensor *t = n->t;
    struct sch_lowering *w = c->lw;
    int items[3], ni = 0;
    for (int l = 0; l < n->nl; l++) {
        const sch_iter *it = t->leaves.data[l];
        if (it->kind != SCH_LOOP_THREAD || it->thread_axis < 3)
            continue;
        if (l <= p || ni == 3) {
            L->failed = true;
            sch_fail(L->s, SCH_E_BAD_ATTACH, "lower: the shared stage %s is computed at %s of %s, inside its "
                     "work-item loop %s", c->name, c->attach_iter->name, t->name, it->name);
            return NULL;
        }
        items[ni++] = l;
    }
    if (!ni) {
        L->failed = true;
        sch_fail(L->s, SCH_E_BAD_ATTACH, "lower: the shared stage %s is computed at %s of %s, which has no "
                 "work-item loops inside it to share the copy", c->name, c->attach_iter->name, t->name);
        return NULL;
    }
    /* the work-item's position in its group, W work-items in all */
    sch_var *iv[3];
    const sch_expr *item = sch_int(a, 0);
    int64_t W = 1, R = 1;
    for (int k = ni; k-- > 0;) {
        iv[k] = sch_var_new(a, &L->s->next_var, t->leaves.data[items[k]]->name, IR_INT64);
        item = sch_add(a, item, sch_mul(a, sch_varref(a, iv[k]), sch_int(a, W)));
        W *= n->lext[items[k]];
    }
    for (int d = 0; d < c->ndim; d++)
        R *= w->ext[d];
    sch_var *fo = sch_var_new(a, &L->s->next_var, "f", IR_INT64);
    const sch_expr *f = sch_add(a, sch_mul(a, sch_varref(a, fo), sch_int(a, W)), item);
    const sch_expr *guard = R % W ? sch_bin(a, SCH_LT, f, sch_int(a, R)) : NULL;
    /* f's position in the region, row-major, and in the producer */
    const sch_expr *idx[IR_MAX_DIMS + 1], *bidx = sch_int(a, 0);
    int64_t inner = 1;
    for (int d = c->ndim; d-- > 0;) {
        const sch_expr *pos = sch_mod(a, sch_div(a, f, sch_int(a, inner)), sch_int(a, w->ext[d]));
        inner *= w->ext[d];
        idx[d] = sch_add(a, w->mins[d], pos);
        bidx = sch_add(a, bidx, sch_mul(a, pos, sch_int(a, w->strides[d])));
        if (w->ext[d] != c->shape[d]) /* a tile may reach past the domain's edge */
            guard = sch_and(a, guard, sch_and(a, sch_bin(a, SCH_GE, idx[d], sch_int(a, 0)),
                                              sch_bin(a, SCH_LT, idx[d], sch_int(a, c->shape[d]))));
    }
    const sch_expr *value = sch_map_reads(a, sch_substitute(a, L->inl[c->id], c->ndim, c->axes, idx), read_to_load, L);
    const sch_stmt *copy = sch_for(a, fo, (R + W - 1) / W, SCH_LOOP_SERIAL,
                                   sch_if(a, guard, sch_store(a, w->buf, bidx, value), NULL));
    for (int k = ni; k-- > 0;) {
        const sch_iter *it = t->leaves.data[items[k]];
        copy = items_loop(L, iv[k], n->lext[items[k]], it->thread_axis, copy);
    }
    return copy;
}

/* Where a loop of t has SHARED children: a barrier after their copies, so
 * that the consumer's loops see whole tiles, and one after the body in that
 * loop, so that no work-item's next copy overwrites a tile another one
 * still reads. A group of one work-item (its item loops of extent 1) reads
 * only its own copies and needs none (and PoCL's compiler asserted on such
 * a kernel). */
static void shared_barriers(lower *L, nest *n)
{
    for (size_t i = 0; i < n->kids.len; i++) {
        int p = sch_leaf_pos(n->t, n->kids.data[i]->attach_iter);
        int64_t items = 1;
        for (int l = p + 1; l < n->nl; l++)
            if (n->t->leaves.data[l]->kind == SCH_LOOP_THREAD && n->t->leaves.data[l]->thread_axis >= 3)
                items *= n->lext[l];
        if (!n->kids.data[i]->shared || items == 1 || (n->after && n->after[p]))
            continue;
        if (!n->after)
            n->after = su_arena_alloc(L->a, (size_t)n->nl * sizeof *n->after);
        n->after[p] = sch_barrier(L->a);
        n->at[p] = sch_seq2(L->a, n->at[p], sch_barrier(L->a));
    }
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

/* Every tensor's lowering state, inlined bodies, dependency ranks. */
static void prepare(lower *L)
{
    sch_schedule *s = L->s;
    size_t nt = s->tensors.len;
    L->inl = su_arena_alloc(L->a, nt * sizeof *L->inl);
    for (size_t i = 0; i < nt; i++) {
        sch_tensor *t = s->tensors.data[i];
        t->lw = lw_new(L->a, t->ndim);
        if (t->kind == SCH_TENSOR_COMPUTE && t->attach != SCH_ATTACH_INLINE)
            L->inl[i] = sch_inlined_body(s, t);
    }
    bool *seen = su_calloc(nt, sizeof *seen);
    int next = 0;
    for (int i = 0; i < s->noutputs; i++)
        rank(L, s->outputs[i], &next, seen);
    for (size_t i = 0; i < nt; i++)
        if (!seen[i])
            rank(L, s->tensors.data[i], &next, seen);
    free(seen);
}

/* Whether pack stage t is hoisted into a prologue: a root pack of a
 * constant parameter, when the options hoist packs. */
static bool hoisted(const lower *L, const sch_tensor *t)
{
    return t->pack_of && t->attach == SCH_ATTACH_ROOT && L->o->hoist_packs && L->o->param_const &&
           L->o->param_const[t->pack_of->param];
}

/* The prologue that computes pack stage t (the k-th) from its parameter:
 * `pack_pN(p0 in, wK out)`; the kernel then reads wK as an input. */
static sch_prologue prologue(lower *L, sch_tensor *t, int k)
{
    su_arena *a = L->a;
    sch_prologue pr = {t->pack_of->param, NULL, su_arena_alloc(a, sizeof(sch_func))};
    sch_buffer *in = arg_buffer(a, "p", 0, t->pack_of, SCH_SCOPE_INPUT);
    char name[24];
    snprintf(name, sizeof name, "w%d", k);
    sch_buffer *outb = sch_buffer_new(a, name, t->dtype, t->ndim, t->shape, SCH_SCOPE_OUTPUT);
    /* the prologue reads the parameter as its first argument */
    sch_buffer *saved = t->pack_of->lw->buf;
    t->pack_of->lw->buf = in;
    set_full(L, t, outb);
    const sch_stmt *pb = stage_nest(L, t);
    t->pack_of->lw->buf = saved;
    sch_buffer **pargs = su_arena_alloc(a, 2 * sizeof *pargs);
    pargs[0] = in;
    pargs[1] = outb;
    *pr.fn = (sch_func){su_arena_printf(a, "pack_p%d", pr.param), 2, pargs, finish(L, pb)};
    pr.packed = sch_buffer_new(a, name, t->dtype, t->ndim, t->shape, SCH_SCOPE_INPUT);
    t->lw->buf = pr.packed;
    return pr;
}

/* The stages at the root in dependency order, each into its output or a
 * kernel-wide temporary allocated around the whole body. */
static const sch_stmt *root_stages(lower *L)
{
    sch_schedule *s = L->s;
    SU_VEC(sch_tensor *) roots = {0};
    for (size_t i = 0; i < s->tensors.len; i++) {
        sch_tensor *t = s->tensors.data[i];
        if (t->kind == SCH_TENSOR_COMPUTE && t->attach == SCH_ATTACH_ROOT && !(t->lw->buf && t->pack_of))
            su_vec_push(&roots, t);
    }
    sort_by_rank(roots.data, roots.len);
    const sch_stmt *body = NULL;
    for (size_t i = 0; i < roots.len && !L->failed; i++) {
        sch_tensor *t = roots.data[i];
        if (t->output < 0) {
            char name[16];
            snprintf(name, sizeof name, "t%d", L->ntemp++);
            set_full(L, t, sch_buffer_new(L->a, name, t->dtype, t->ndim, t->shape, SCH_SCOPE_GLOBAL));
            su_vec_push(&L->globals, t->lw->buf);
        }
        body = sch_seq2(L->a, body, stage_nest(L, t));
    }
    su_vec_free(&roots);
    for (size_t i = L->globals.len; i-- > 0;)
        body = sch_alloc(L->a, L->globals.data[i], body);
    su_vec_free(&L->globals);
    return body;
}

sch_lowered *sch_lower(sch_schedule *s, const sch_lower_opts *o)
{
    su_arena *a = &s->arena;
    sch_lower_opts none = {0};
    lower L = {s, a, o ? o : &none, NULL, 0, 0, 0, {0}, {0}, false};
    prepare(&L);
    /* arguments: the parameters, the packed constants, the outputs */
    SU_VEC(sch_buffer *) args = {0};
    for (int i = 0; i < s->nparams; i++) {
        sch_tensor *p = s->tensors.data[i];
        set_full(&L, p, arg_buffer(a, "p", i, p, SCH_SCOPE_INPUT));
        su_vec_push(&args, p->lw->buf);
    }
    SU_VEC(sch_prologue) pro = {0};
    for (size_t i = 0; i < s->tensors.len; i++) {
        sch_tensor *t = s->tensors.data[i];
        if (!hoisted(&L, t))
            continue;
        sch_prologue pr = prologue(&L, t, (int)pro.len);
        su_vec_push(&pro, pr);
        su_vec_push(&args, pr.packed);
    }
    for (int i = 0; i < s->noutputs; i++) {
        sch_tensor *t = s->outputs[i];
        set_full(&L, t, arg_buffer(a, "o", i, t, SCH_SCOPE_OUTPUT));
        su_vec_push(&args, t->lw->buf);
    }
    const sch_stmt *body = root_stages(&L);
    for (size_t i = L.shared.len; i-- > 0;)
        body = sch_alloc(a, L.shared.data[i], body);
    su_vec_free(&L.shared);
    sch_lowered *res = NULL;
    if (!L.failed) {
        res = su_arena_alloc(a, sizeof *res);
        res->kernel = su_arena_alloc(a, sizeof *res->kernel);
        *res->kernel = (sch_func){"kernel", (int)args.len, su_arena_dup(a, args.data, args.len * sizeof *args.data),
                                  finish(&L, body)};
        res->nprologues = (int)pro.len;
        res->prologues = pro.len ? su_arena_dup(a, pro.data, pro.len * sizeof *pro.data) : NULL;
    }
    su_vec_free(&args);
    su_vec_free(&pro);
    return res;
}
