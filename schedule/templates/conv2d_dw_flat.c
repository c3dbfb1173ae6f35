/* conv2d_dw_flat.c — the template for depthwise convs (any stride, no
 * dilation) in compute_nn.c's flat form: each channel's padded plane (at a
 * stride: each phase of it, de-interleaved) laid out flat, the conv a 1-D
 * conv over it with one constant offset per tap, computed in tiles (r, q)
 * of 16 flat positions. Whatever the image width, the register tile is
 * then whole vectors: the row form's tile of a 28-, 14- or 7-wide row was
 * masked vectors, which gcc kept on the stack, and its strided rows
 * gathered (docs/targets.md). The output (the view back to NCHW and its
 * epilogue, inlined) is tiled by tile_c channels, the batch and
 * channel-tile loops fused and parallel; every stage is computed there,
 * for the tile's channels: the padded planes, their phases, the conv into
 * a buffer the epilogue reads back (the valid columns only), so that no
 * pass goes through a root buffer of the whole image. The conv's register
 * tile is tile_c channels x tile_r tiles of 16 positions, with the taps
 * (kh, kw) outside it (knob unroll_taps): per tap one load of the input
 * and one broadcast weight per vector of accumulators. */
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
 * registers for the loads, and whose channels' planes (`plane` bytes a
 * channel: padded, de-interleaved, conv) fit L2, where the channel tile
 * computes them one after another (docs/targets.md). */
static void default_tile(const sch_hw *hw, int64_t C, int64_t taps, int64_t plane, int64_t *cb, int64_t *rb)
{
    int64_t best = -1, vecs = 16 / hw->lanes > 0 ? 16 / hw->lanes : 1;
    *cb = 1;
    *rb = 1;
    for (int64_t c = 1; c <= 4 && c <= C; c++) {
        if (C % c || (c > 1 && c * plane > hw->l2))
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

/* Bytes of one channel's planes in a channel tile's buffers. */
static int64_t plane_bytes(const sch_tensor *x)
{
    int64_t n = 1;
    for (int d = 2; x && d < x->ndim; d++)
        n *= x->shape[d];
    return x ? n * 4 : 0;
}

static void dw_knobs(sch_tctx *t, const sch_tensor *a, const sch_tensor *pd, const sch_tensor *ph, dw_plan *p)
{
    int64_t C = a->shape[1], R = a->shape[2], cb0, rb0;
    int64_t plane = plane_bytes(a) + plane_bytes(pd) + plane_bytes(ph);
    default_tile(t->hw, C, a->rext[0] * a->rext[1], plane, &cb0, &rb0);
    const int64_t dc[2] = {C / cb0, cb0}, dr[2] = {R / rb0, rb0};
    p->cb = sch_define_split(t, "tile_c", C, 2, 8, dc)[1];
    /* up to 4 tiles, dividing the plane's (a multiple of 4: compute_nn.c) */
    p->rb = sch_define_split(t, "tile_r", R, 2, 4, dr)[1];
    static const char *const tap_loops[1] = {"taps"};
    static const int64_t tap_kinds[2] = {SCH_LOOP_UNROLLED, SCH_LOOP_SERIAL};
    /* unrolled taps keep every tap's weight in a register (gcc hoists them
     * out of the tile loop); by default only where the tile's accumulators
     * and weights leave four registers for the loads and the zeroed tile:
     * on AVX2's 16, 4 + 9 left three and gcc spilled six weights, while the
     * taps as loops load one weight a tap (docs/targets.md) */
    int64_t taps_default = tile_regs(t->hw, cb0, rb0, a->rext[0] * a->rext[1]) <= t->hw->vregs - 4 ? 0 : 1;
    p->taps = (sch_loop_kind)sch_define_annotate(t, "unroll_taps", 1, tap_loops, 2, tap_kinds, taps_default)[0];
}

/* The padded input of a channel tile, and at a stride its phases (the
 * padded plane de-interleaved), each computed at the output's channel-tile
 * loop `at`, so that the tile's planes live in L1/L2 between the pad and
 * the conv instead of in root buffers of the whole image: each row a vector
 * loop, the phases unrolled (their row and column offsets then constants).
 * The phases first: the pad is then read by a stage computed at that loop. */
static void dw_stage_at(sch_tctx *t, sch_tensor *x, sch_tensor *o, sch_iter *at)
{
    sch_schedule *s = t->s;
    SCH_TRY(t, sch_compute_root(s, x)); /* not inlined: a stage of its own */
    if (x->ndim == 5 && x->leaves.data[2]->extent > 1)
        SCH_TRY(t, sch_annotate(s, x, x->leaves.data[2], SCH_LOOP_UNROLLED));
    SCH_TRY(t, sch_annotate(s, x, x->leaves.data[x->ndim - 1], SCH_LOOP_VECTORIZED));
    SCH_TRY(t, sch_compute_at(s, x, o, at));
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

/* The conv, computed at the output's channel-tile loop `at` over the
 * tile's planes (cb channels, the positions the view reads: whole tiles of
 * rb x 16 and a tail), with the taps outside the tile's unrolled channels
 * and rows and its vector of 16 positions; its buffer is the tile's, in
 * L1/L2. Once the taps are unrolled the tile's values are loaded once and
 * stored once: gcc keeps them in registers across the taps (a tile of its
 * own made by cache_write was worse: its copy into the conv's buffer went
 * through the stack). */
static void dw_conv(sch_tctx *t, sch_tensor *a, const dw_plan *p, sch_tensor *o, sch_iter *at)
{
    sch_schedule *s = t->s;
    sch_iter *co, *ci, *ro, *ri;
    dw_blocks(t, a, p, &co, &ci, &ro, &ri);
    if (t->err)
        return;
    sch_iter *n = a->leaves.data[0], *q = a->leaves.data[5], *kh = a->leaves.data[6], *kw = a->leaves.data[7];
    sch_iter *order[8] = {n, co, ro, kh, kw, ci, ri, q};
    SCH_TRY(t, sch_reorder(s, a, 8, order));
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
    SCH_TRY(t, sch_compute_at(s, a, o, at));
}

void sch_template_dw_flat(sch_tctx *t)
{
    sch_schedule *s = t->s;
    sch_tensor *a = sch_anchor(s), *o = a ? sch_tmpl_reader(s, a) : NULL;
    sch_tensor *pd = a ? sch_tmpl_call_stage(s, a, "pad") : NULL, *ph = a ? sch_tmpl_call_stage(s, a, "phase") : NULL;
    if (!o || !pd || a->ndim != 4 || a->nraxes != 2 || o->output < 0 || o->ndim != 4) {
        sch_template_default(t);
        return;
    }
    dw_plan p = {0};
    dw_knobs(t, a, pd, ph, &p);
    sch_iter *f = NULL;
    dw_output(t, o, &p, &f);
    dw_conv(t, a, &p, o, f);
    if (ph)
        dw_stage_at(t, ph, o, f);
    dw_stage_at(t, pd, o, f);
    if (!t->err)
        sch_tmpl_finish(t);
}
