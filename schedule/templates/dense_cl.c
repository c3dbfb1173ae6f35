/* dense_cl.c — the device template of nn.dense (data M x K, weight N x K):
 * a GPU GEMM's shape. The output is tiled into blocks of (wg_m * tile_m)
 * rows x (wg_n * tile_n) columns, one block a work-group (work-group axes 1
 * and 0), each of its wg_m x wg_n work-items (work-item axes 1 and 0)
 * computing a tile_m x tile_n register tile (rows unrolled, columns one
 * vector, or vectors of the device's width). Two forms, by the knob
 * local_stage:
 *
 *   off: the product is computed inside the inner work-item loop over the
 *        work-item's tile, accumulating in private registers over the whole
 *        reduction (the CPU template's tile), the weight packed so that a
 *        tile's columns of one k are one vector load; a fused epilogue is
 *        the same launch.
 *   on:  the reduction is blocked by tile_k, the k blocks outside the
 *        work-item loops, and a k block's tiles of both operands are staged
 *        in local memory (sch_tmpl_stage: cache_read at the k-block loop):
 *        the group's work-items copy the (wg_m * tile_m) x tile_k rows of
 *        the data and the tile_k x (wg_n * tile_n) columns of the weight
 *        (stored k-major, so that a work-item's columns are one vector),
 *        wait at a barrier, accumulate into their tiles (promoted to
 *        registers for the block, lower.c; back to the output between
 *        blocks), and wait again before the next block's copy. Each element
 *        then comes from global memory once per work-group instead of once
 *        per work-item row or column that reads it. A fused epilogue reads
 *        the product from a kernel-wide temporary in a launch of its own
 *        (default_cl's schedule, knob wg_items).
 *
 * Knobs: wg_m and wg_n (powers of two within the device's largest
 * work-group and its axes' limits; a config whose product exceeds the
 * group is invalid), tile_m (1 to 8) and tile_n (1 to 32), tile_k (4 to
 * 64) and local_stage (0, 1; a config whose two tiles exceed the device's
 * local memory is invalid). Defaults (docs/opencl.md): tiles of 4 x 4 (a
 * cpu device: 4 x two vectors), groups of 8 x 16 work-items (cpu: 4 x 16),
 * each the largest power of two not above that whose block divides the
 * output; k blocks of 16; staging on where local memory pays (sch_hw.
 * wg_reduce: not a cpu device, whose local memory is its ordinary memory;
 * the target option -local-stage). Dense calls of other ranks take
 * matmul_cl; where an operand is not a parameter, local_stage is no knob. */
#include <string.h>

#include "schedule/schedule.h"

enum { MAX_WG_M = 32, MAX_WG_N = 256, DEFAULT_TILE = 4, DEFAULT_TILE_K = 16 };

sch_tensor *sch_tmpl_stage(sch_tctx *t, sch_tensor *consumer, sch_tensor *p, sch_iter *at, const int *order)
{
    sch_schedule *s = t->s;
    if (t->err)
        return NULL;
    if (t->hw->wg_max <= 0) {
        t->err = sch_fail(s, SCH_E_UNSUPPORTED, "cache_read: %s cannot be staged in shared memory for %s on a "
                          "target without work-groups (C has no __local memory)", p->name, consumer->name);
        return NULL;
    }
    sch_tensor *c = NULL;
    SCH_TRY(t, sch_cache_read(s, consumer, p, SCH_SCOPE_SHARED, &c));
    if (order && !t->err) {
        sch_iter *ord[IR_MAX_DIMS];
        for (int d = 0; d < c->ndim; d++)
            ord[d] = c->leaves.data[order[d]];
        SCH_TRY(t, sch_reorder(s, c, c->ndim, ord));
    }
    SCH_TRY(t, sch_compute_at(s, c, consumer, at));
    return t->err ? NULL : c;
}

int64_t sch_tmpl_cl_axis_cap(const sch_hw *hw, int axis, int64_t cap)
{
    int64_t m = hw->wg_axis_max[axis] > 0 ? hw->wg_axis_max[axis] : hw->wg_max;
    m = m < hw->wg_max ? m : hw->wg_max;
    return m < 1 ? 1 : m < cap ? m : cap;
}

int64_t sch_tmpl_cl_pow2_default(int64_t cap, int64_t dflt, int64_t extent, int64_t tile)
{
    int64_t v = 1;
    while (v * 2 <= cap && v * 2 <= dflt && extent % (v * 2 * tile) == 0)
        v *= 2;
    return v;
}

int64_t sch_tmpl_cl_pow2_knob(sch_tctx *t, const char *name, int64_t cap, int64_t dflt)
{
    int64_t values[16];
    int n = 0;
    for (int64_t v = 1; v <= cap && n < 16; v *= 2)
        values[n++] = v;
    return sch_define_knob(t, name, n, values, dflt);
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* The knobs of g (sch_cl_gemm, schedule.h), checked against the device;
 * false (t->err) for a config the device cannot run. */
bool sch_tmpl_cl_gemm_plan(sch_tctx *t, sch_cl_gemm *p)
{
    static const int64_t tiles[6] = {1, 2, 4, 8, 16, 32}, tks[5] = {4, 8, 16, 32, 64}, off_on[2] = {0, 1};
    const sch_hw *hw = t->hw;
    bool gpu = hw->wg_reduce;
    int64_t M = p->a->shape[p->batch], N = p->a->shape[p->batch + 1];
    /* a cpu device's work-item is a core's loop iteration: two of its
     * vectors a row, as the CPU template's tile */
    int64_t tn0 = sch_tmpl_cl_pow2_default(32, gpu ? DEFAULT_TILE : 2 * hw->lanes, N, 1);
    int64_t tm0 = sch_tmpl_cl_pow2_default(DEFAULT_TILE, DEFAULT_TILE, M, 1);
    p->tm = sch_define_knob(t, "tile_m", 4, tiles, tm0);
    p->tn = sch_define_knob(t, "tile_n", 6, tiles, tn0);
    int64_t cap_m = sch_tmpl_cl_axis_cap(hw, 1, MAX_WG_M), cap_n = sch_tmpl_cl_axis_cap(hw, 0, MAX_WG_N);
    int64_t dm = sch_tmpl_cl_pow2_default(cap_m, gpu ? 8 : 4, M, tm0);
    int64_t dn = sch_tmpl_cl_pow2_default(cap_n, min64(16, hw->wg_max / dm), N, tn0);
    p->wg_m = sch_tmpl_cl_pow2_knob(t, "wg_m", cap_m, dm);
    p->wg_n = sch_tmpl_cl_pow2_knob(t, "wg_n", cap_n, dn);
    /* (unrolled, a k block is tile_k x tile_m x tile_n statements: at most
     * 32 k a block) */
    p->tk = sch_define_knob(t, "tile_k", p->unroll_knob ? 4 : 5, tks, DEFAULT_TILE_K);
    p->unroll = p->unroll_knob ? sch_define_knob(t, "unroll_k", 2, off_on, 0) : 0;
    int64_t stage0 = hw->local_stage ? hw->local_stage - 1 : gpu;
    p->stage = p->can_stage ? sch_define_knob(t, "local_stage", 2, off_on, stage0) : 0;
    if (hw->wg_max > 0 && p->wg_m * p->wg_n > hw->wg_max) {
        t->err = sch_fail(t->s, SCH_E_BAD_CONFIG, "%s: a work-group of %lld x %lld items exceeds the "
                          "device's %lld", p->name, (long long)p->wg_m, (long long)p->wg_n, (long long)hw->wg_max);
        return false;
    }
    int64_t bytes = (p->wg_m * p->tm + p->wg_n * p->tn) * p->tk * 4;
    if (p->stage && hw->l1 > 0 && bytes > hw->l1) {
        t->err = sch_fail(t->s, SCH_E_BAD_CONFIG, "%s: staged tiles of %lld bytes exceed the device's "
                          "%lld bytes of local memory", p->name, (long long)bytes, (long long)hw->l1);
        return false;
    }
    return true;
}

/* Vectorizes leaf it of st (a tile's columns): one vector, or where it is
 * longer than the device's vectors (and 16, OpenCL C's widest) vectors of
 * that width, the loop over them unrolled (as device_cl.c's knob vec). */
static void vector_tile(sch_tctx *t, sch_tensor *st, sch_iter *it)
{
    int64_t w = t->hw->lanes >= 2 && t->hw->lanes < 16 ? t->hw->lanes : 16;
    sch_iter *outer, *inner;
    if (t->err || it->extent < 2)
        return;
    if (it->extent > w && it->extent % w == 0) {
        SCH_TRY(t, sch_split(t->s, st, it, w, &outer, &inner));
        SCH_TRY(t, sch_annotate(t->s, st, outer, SCH_LOOP_UNROLLED));
        it = inner;
    }
    SCH_TRY(t, sch_annotate(t->s, st, it, SCH_LOOP_VECTORIZED));
}

void sch_tmpl_cl_tile3(sch_tctx *t, sch_tensor *a, sch_iter *it, int64_t items, int64_t tile, sch_iter **g, sch_iter **w,
                  sch_iter **r)
{
    sch_iter *rest;
    SCH_TRY(t, sch_split(t->s, a, it, min64(items * tile, it->extent), g, &rest));
    if (!t->err)
        SCH_TRY(t, sch_split(t->s, a, rest, min64(tile, rest->extent), w, r));
}

/* A tile's column leaf: vectors of the device's width where g's template
 * has no knob vec (vector_tile), else one vectorized loop that the knob
 * splits later (sch_tmpl_device_vec). */
static void columns(sch_tctx *t, const sch_cl_gemm *g, sch_tensor *st, sch_iter *it)
{
    if (!g->vec_knob)
        vector_tile(t, st, it);
    else if (it->extent > 1)
        SCH_TRY(t, sch_annotate(t->s, st, it, SCH_LOOP_VECTORIZED));
}

/* Stage st's rows i and columns j as groups x items x tiles, ordered
 * [batch] gi gj mid... wi wj inner... ti tj (mid, inner: nmid and ninner
 * leaves), bound (batch on group axis 2), the tile's rows unrolled and
 * columns vectorized; *wj gets the inner work-item loop. */
static void grid_tile(sch_tctx *t, const sch_cl_gemm *g, sch_tensor *st, sch_iter *i, sch_iter *j, int nmid,
                      sch_iter *const *mid, int ninner, sch_iter *const *inner, sch_iter **wj)
{
    sch_schedule *s = t->s;
    sch_iter *gi, *wi, *ti, *gj, *tj, *order[12];
    sch_tmpl_cl_tile3(t, st, i, g->wg_m, g->tm, &gi, &wi, &ti);
    sch_tmpl_cl_tile3(t, st, j, g->wg_n, g->tn, &gj, wj, &tj);
    if (t->err)
        return;
    int n = 0;
    for (int b = 0; b < g->batch; b++)
        order[n++] = st->leaves.data[b];
    order[n++] = gi;
    order[n++] = gj;
    for (int m = 0; m < nmid; m++)
        order[n++] = mid[m];
    order[n++] = wi;
    order[n++] = *wj;
    for (int m = 0; m < ninner; m++)
        order[n++] = inner[m];
    order[n++] = ti;
    order[n++] = tj;
    SCH_TRY(t, sch_reorder(s, st, n, order));
    if (g->batch)
        SCH_TRY(t, sch_bind(s, st, st->leaves.data[0], 2));
    SCH_TRY(t, sch_bind(s, st, gi, 1));
    SCH_TRY(t, sch_bind(s, st, gj, 0));
    SCH_TRY(t, sch_bind(s, st, wi, 4));
    SCH_TRY(t, sch_bind(s, st, *wj, 3));
    SCH_TRY(t, sch_annotate(s, st, ti, SCH_LOOP_UNROLLED));
    columns(t, g, st, tj);
}

/* local_stage off, where the product has an output stage to be computed
 * at (its epilogue, or a cache_write copy): that stage tiled and bound as
 * above, the product computed inside the inner work-item loop over the
 * work-item's tile, accumulating in private registers over the whole
 * reduction (as the CPU template's tile does; k blocks of tile_k unrolled
 * where unroll_k is), the right operand packed so that a tile's columns of
 * one k are one vector load. */
static void registers(sch_tctx *t, const sch_cl_gemm *g)
{
    sch_schedule *s = t->s;
    sch_tensor *a = g->a, *o = a;
    int b = g->batch;
    if (a->output >= 0) {
        SCH_TRY(t, sch_cache_write(s, o, &a));
    } else {
        o = sch_tmpl_reader(s, a);
    }
    if (t->err)
        return;
    sch_iter *wj, *aio, *aii, *ajo, *aji, *ki = NULL;
    grid_tile(t, g, o, o->leaves.data[b], o->leaves.data[b + 1], 0, NULL, 0, NULL, &wj);
    /* the product over the work-item's tile */
    sch_iter *ai = a->leaves.data[b], *aj = a->leaves.data[b + 1], *k = a->leaves.data[b + 2];
    SCH_TRY(t, sch_split(s, a, ai, min64(g->tm, ai->extent), &aio, &aii));
    SCH_TRY(t, sch_split(s, a, aj, min64(g->tn, aj->extent), &ajo, &aji));
    if (g->unroll && g->tk < k->extent)
        SCH_TRY(t, sch_split(s, a, k, g->tk, &k, &ki));
    if (t->err)
        return;
    sch_iter *aorder[8];
    int n = 0;
    for (int d = 0; d < b; d++)
        aorder[n++] = a->leaves.data[d];
    aorder[n++] = aio;
    aorder[n++] = ajo;
    aorder[n++] = k;
    if (ki)
        aorder[n++] = ki;
    aorder[n++] = aii;
    aorder[n++] = aji;
    SCH_TRY(t, sch_reorder(s, a, n, aorder));
    SCH_TRY(t, sch_annotate(s, a, aii, SCH_LOOP_UNROLLED));
    if (g->unroll)
        SCH_TRY(t, sch_annotate(s, a, ki ? ki : k, SCH_LOOP_UNROLLED));
    columns(t, g, a, aji);
    if (g->pack && g->pack_axis >= 0 && g->tn > 1 && a->shape[b + 1] % g->tn == 0)
        SCH_TRY(t, sch_pack(s, a, g->pack, g->pack_axis, g->tn, NULL));
    SCH_TRY(t, sch_compute_at(s, a, o, wj));
}

/* The k-block form: the product itself on the grid, its k blocks between
 * the group and item loops, the operands' block tiles staged in local
 * memory where local_stage is. */
static void k_blocks(sch_tctx *t, const sch_cl_gemm *g)
{
    sch_schedule *s = t->s;
    sch_tensor *a = g->a;
    int b = g->batch;
    sch_iter *wj, *ko, *ki, *k = a->leaves.data[b + 2];
    SCH_TRY(t, sch_split(s, a, k, min64(g->tk, k->extent), &ko, &ki));
    if (t->err)
        return;
    grid_tile(t, g, a, a->leaves.data[b], a->leaves.data[b + 1], 1, &ko, 1, &ki, &wj);
    if (g->unroll && ki->extent > 1)
        SCH_TRY(t, sch_annotate(s, a, ki, SCH_LOOP_UNROLLED));
    if (g->stage) {
        sch_tmpl_stage(t, a, g->lhs, ko, g->lhs_order);
        sch_tmpl_stage(t, a, g->rhs, ko, g->rhs_order);
    }
}

void sch_tmpl_cl_gemm(sch_tctx *t, const sch_cl_gemm *g)
{
    sch_tensor *a = g->a, *reader = a->output >= 0 ? NULL : sch_tmpl_reader(t->s, a);
    if (t->err)
        return;
    if (!g->stage && (a->output >= 0 || (reader && reader->output >= 0 && reader->ndim == a->ndim)))
        registers(t, g);
    else
        k_blocks(t, g);
    /* the stages left (an epilogue of the k-block form: its own launch over
     * the product's temporary; a packed operand) as default_cl schedules
     * them; on a machine without work-groups (a test's), as the CPU does */
    sch_tmpl_finish(t);
    if (t->hw->wg_max > 0)
        sch_tmpl_device_grid(t);
}

void sch_template_dense_cl(sch_tctx *t)
{
    sch_schedule *s = t->s;
    sch_tensor *a = sch_anchor(s);
    const ir_expr *call = a ? a->call : NULL;
    if (!a || strcmp(a->op, "nn.dense") || a->ndim != 2 || a->nraxes != 1 || !call || call->u.call.nargs < 2) {
        sch_template_matmul_cl(t);
        return;
    }
    static const int k_major[2] = {1, 0};
    sch_tensor *data = sch_param_tensor(s, call->u.call.args[0]), *weight = sch_param_tensor(s, call->u.call.args[1]);
    sch_cl_gemm g = {.name = "dense_cl", .a = a, .lhs = data, .rhs = weight, .rhs_order = k_major,
                     .can_stage = data && weight && data->ndim == 2, .pack = weight, .pack_axis = 0};
    if (sch_tmpl_cl_gemm_plan(t, &g))
        sch_tmpl_cl_gemm(t, &g);
}
