/* conv2d_dw_flat.c — the template for stride-1 depthwise convs in
 * compute_nn.c's flat form: each channel's padded plane laid out flat, the
 * conv a 1-D conv over it with one constant offset per tap, computed in
 * tiles (r, q) of 16 flat positions. Whatever the image width, the
 * register tile is then whole vectors: the row form's tile of a 28-, 14-
 * or 7-wide row was masked vectors, which gcc kept on the stack
 * (docs/targets.md). The output (the view back to NCHW and its epilogue,
 * inlined) is tiled by tile_c channels, the batch and channel-tile loops
 * fused and parallel; the conv is computed there, for the tile's channels'
 * whole planes, into a scratch buffer the epilogue reads back (the valid
 * columns only). Its register tile is tile_c channels x tile_r tiles of 16
 * positions, with the taps (kh, kw) outside it and unrolled (knob
 * unroll_taps): per tap one load of the input and one broadcast weight per
 * vector of accumulators. The padded input is materialized once at the
 * root, a vector loop along each padded row. */
#include <string.h>

#include "schedule/schedule.h"

/* What the knobs decided. */
typedef struct dw_plan {
    int64_t cb;                 /* channels of the register tile */
    int64_t rb;                 /* tiles of 16 positions of the register tile */
    sch_loop_kind taps;         /* how the kh and kw loops run */
} dw_plan;

/* Registers a tile of cb channels x rb tiles of 16 positions takes: its
 * accumulators (16 / lanes vectors a tile) and each channel's taps'
 * weights, broadcast once and kept. */
static int64_t tile_regs(const sch_hw *hw, int64_t cb, int64_t rb, int64_t taps)
{
    int64_t vecs = 16 / hw->lanes > 0 ? 16 / hw->lanes : 1;
    return cb * rb * vecs + cb * taps;
}

/* The default register tile: the most accumulators, up to what the FMA
 * pipes need in flight, whose weights and accumulators leave two
 * registers for the loads (docs/targets.md). */
static void default_tile(const sch_hw *hw, int64_t C, int64_t taps, int64_t *cb, int64_t *rb)
{
    int64_t best = -1, vecs = 16 / hw->lanes > 0 ? 16 / hw->lanes : 1;
    *cb = 1;
    *rb = 1;
    for (int64_t c = 1; c <= 4 && c <= C; c++) {
        if (C % c)
            continue;
        for (int64_t r = 1; r <= 4; r *= 2) {
            int64_t acc = c * r * vecs, useful = acc < sch_hw_min_acc(hw) ? acc : sch_hw_min_acc(hw);
            if (tile_regs(hw, c, r, taps) > hw->vregs - 2 || useful * 16 - c <= best)
                continue;
            best = useful * 16 - c; /* fewer channels (their weights) on a tie */
            *cb = c;
            *rb = r;
        }
    }
}

static void dw_knobs(sch_tctx *t, const sch_tensor *a, dw_plan *p)
{
    int64_t C = a->shape[1], R = a->shape[2], cb0, rb0;
    default_tile(t->hw, C, a->rext[0] * a->rext[1], &cb0, &rb0);
    const int64_t dc[2] = {C / cb0, cb0}, dr[2] = {R / rb0, rb0};
    p->cb = sch_define_split(t, "tile_c", C, 2, 8, dc)[1];
    /* up to 4 tiles, dividing the plane's (a multiple of 4: compute_nn.c) */
    p->rb = sch_define_split(t, "tile_r", R, 2, 4, dr)[1];
    static const char *const tap_loops[1] = {"taps"};
    static const int64_t tap_kinds[2] = {SCH_LOOP_UNROLLED, SCH_LOOP_SERIAL};
    p->taps = (sch_loop_kind)sch_define_annotate(t, "unroll_taps", 1, tap_loops, 2, tap_kinds, 0)[0];
}

/* The padded input at the root: its rows fused with the batch and the
 * channels and parallel, each row a vector loop. */
static void dw_pad(sch_tctx *t, sch_tensor *pd)
{
    sch_schedule *s = t->s;
    sch_iter *n = pd->leaves.data[0], *c = pd->leaves.data[1], *h = pd->leaves.data[2], *w = pd->leaves.data[3], *f;
    SCH_TRY(t, sch_compute_root(s, pd));
    SCH_TRY(t, sch_fuse(s, pd, n, c, &f));
    SCH_TRY(t, sch_fuse(s, pd, f, h, &f));
    SCH_TRY(t, sch_annotate(s, pd, f, SCH_LOOP_PARALLEL));
    SCH_TRY(t, sch_annotate(s, pd, w, SCH_LOOP_VECTORIZED));
}

/* The output: channel tiles, fused with the batch and parallel into *f;
 * the columns a vector loop. */
static void dw_output(sch_tctx *t, sch_tensor *o, const dw_plan *p, sch_iter **f)
{
    sch_schedule *s = t->s;
    sch_iter *n = o->leaves.data[0], *oc = o->leaves.data[1], *oh = o->leaves.data[2], *ow = o->leaves.data[3];
    sch_iter *oco, *oci;
    SCH_TRY(t, sch_split(s, o, oc, p->cb, &oco, &oci));
    if (t->err)
        return;
    sch_iter *order[5] = {n, oco, oci, oh, ow};
    SCH_TRY(t, sch_reorder(s, o, 5, order));
    SCH_TRY(t, sch_fuse(s, o, n, oco, f));
    SCH_TRY(t, sch_annotate(s, o, *f, SCH_LOOP_PARALLEL));
    if (ow->extent > 1)
        SCH_TRY(t, sch_annotate(s, o, ow, SCH_LOOP_VECTORIZED));
}

/* Splits a stage of the conv's shape into the register tile's blocks:
 * channels by cb (*co, *ci), tiles of positions by rb (*ro, *ri). */
static void dw_blocks(sch_tctx *t, sch_tensor *x, const dw_plan *p, sch_iter **co, sch_iter **ci, sch_iter **ro,
                      sch_iter **ri)
{
    SCH_TRY(t, sch_split(t->s, x, x->leaves.data[1], p->cb, co, ci));
    SCH_TRY(t, sch_split(t->s, x, x->leaves.data[3], p->rb, ro, ri));
}

/* The conv, whole at the root (its planes' tiles are rounded up past what
 * the view reads, which a region would cut off): the batch and channel
 * tiles fused and parallel, over the tiles of rb x 16 positions of cb
 * channels, with the taps outside the tile's unrolled channels and rows
 * and its vector of 16 positions. Once the taps are unrolled the tile's
 * values are loaded once and stored once: gcc keeps them in registers
 * across the taps (a tile of its own made by cache_write was worse: its
 * copy into the conv's buffer went through the stack). */
static void dw_conv(sch_tctx *t, sch_tensor *a, const dw_plan *p)
{
    sch_schedule *s = t->s;
    sch_iter *co, *ci, *ro, *ri, *f;
    dw_blocks(t, a, p, &co, &ci, &ro, &ri);
    if (t->err)
        return;
    sch_iter *n = a->leaves.data[0], *q = a->leaves.data[5], *kh = a->leaves.data[6], *kw = a->leaves.data[7];
    sch_iter *order[8] = {n, co, ro, kh, kw, ci, ri, q};
    SCH_TRY(t, sch_reorder(s, a, 8, order));
    SCH_TRY(t, sch_fuse(s, a, n, co, &f));
    SCH_TRY(t, sch_annotate(s, a, f, SCH_LOOP_PARALLEL));
    /* the tile's channels and rows unrolled while they fit the accumulators
     * (knob bounds may not depend on one another, so the product is
     * checked here) */
    if (tile_regs(t->hw, p->cb, p->rb, 0) <= sch_hw_acc_regs(t->hw)) {
        if (ci->extent > 1)
            SCH_TRY(t, sch_annotate(s, a, ci, SCH_LOOP_UNROLLED));
        if (ri->extent > 1)
            SCH_TRY(t, sch_annotate(s, a, ri, SCH_LOOP_UNROLLED));
    }
    SCH_TRY(t, sch_annotate(s, a, q, SCH_LOOP_VECTORIZED));
    if (p->taps != SCH_LOOP_SERIAL) {
        SCH_TRY(t, sch_annotate(s, a, kh, p->taps));
        SCH_TRY(t, sch_annotate(s, a, kw, p->taps));
    }
    SCH_TRY(t, sch_compute_root(s, a));
}

void sch_template_dw_flat(sch_tctx *t)
{
    sch_schedule *s = t->s;
    sch_tensor *a = sch_anchor(s), *o = a ? sch_tmpl_reader(s, a) : NULL;
    sch_tensor *pd = NULL;
    for (size_t i = 0; a && i < s->tensors.len; i++) {
        sch_tensor *x = s->tensors.data[i];
        if (x->kind == SCH_TENSOR_COMPUTE && x != a && x->ndim == 4 && x->call == a->call && !strncmp(x->name, "pad", 3))
            pd = x;
    }
    if (!o || !pd || a->ndim != 4 || a->nraxes != 2 || o->output < 0 || o->ndim != 4) {
        sch_template_default(t);
        return;
    }
    dw_plan p = {0};
    dw_knobs(t, a, &p);
    dw_pad(t, pd);
    sch_iter *f = NULL;
    dw_output(t, o, &p, &f);
    dw_conv(t, a, &p);
    if (!t->err)
        sch_tmpl_finish(t);
}
