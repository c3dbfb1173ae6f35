/* conv2d_cl.c — the device template of nn.conv2d: plain (groups 1), in
 * both of compute_nn.c's forms below, and grouped (group_conv2d_nchw_cl,
 * depthwise_conv2d_nchw_cl where the conv is direct: input channel
 * (oc / KG) * IC + ic) in the direct one. The forms: the direct one (out[n, oc, oh, ow] over ic,
 * kh, kw, reading the padded input) and the 1x1 unpadded one (out[n, oc, p]
 * over ic on the fused pixels p = oh * OW + ow, a GEMM per image). The
 * output is tiled on a 2-D work-group: wg_oc x wg_px work-items (work-item
 * axes 1 and 0), each a register tile of tile_oc output channels x tile_px
 * pixels (columns of one row in the direct form, fused pixels in the 1x1
 * one), one block of (wg_oc * tile_oc) x (wg_px * tile_px) a work-group
 * (group axes 1 and 0), the batch and (direct form) the rows on group axis
 * 2. A work-item's tile accumulates its channels as vectors (knob vec) and
 * its pixels unrolled; the input channels are blocked by tile_ic. Two
 * forms, by the knob local_stage:
 *
 *   off: the conv is computed inside the inner work-item loop over the
 *        work-item's tile, accumulating in private registers over the whole
 *        reduction, the weights packed to OIHW[tile_oc]o so that a tile's
 *        channels of one tap are one vector load; the epilogue (bias,
 *        relu, residual add) and the conv are one launch.
 *   on:  the input-channel blocks lie outside the work-item loops, and at
 *        each block the group's work-items copy the block's input patch
 *        (tile_ic channels x the rows and columns the group's pixels read,
 *        halo included; the padding's guard in the copy) and its weights
 *        (tile_ic x KH x KW x the group's channels, channels innermost so
 *        that a work-item's channels are one vector) into __local arrays
 *        (sch_tmpl_stage: cache_read at the block loop), wait at a barrier,
 *        accumulate the block, and wait again before the next block's copy.
 *        The tiles go back to the conv's buffer between blocks (as dense_cl's
 *        k blocks), so an epilogue reads it in a launch of its own
 *        (default_cl's schedule, knob wg_items).
 *
 * Knobs: tile_oc and tile_px (powers of two up to 32 and 16, and the CPU
 * rule's tile where it is none), wg_oc and wg_px (powers of two within the
 * device's axes, at most 32 and 256; a config whose group exceeds the
 * device's largest is invalid), tile_ic (powers of two below the input
 * channels up to 64, and all of them), unroll_kw (the taps along a row
 * unrolled), local_stage (a config whose staged tiles exceed the device's
 * local memory is invalid), then wg_items (an epilogue's or a padded
 * input's grid) and vec (the work-items' vector width). Defaults
 * (docs/opencl.md): on a cpu device (a work-item is a core's loop
 * iteration) the CPU template's register tile, groups of a row's pixel
 * tiles (fewer where a compute unit would get under four groups), all
 * input channels in one block, no staging; elsewhere tiles of 4 x 4,
 * groups of up to 8 x 16 covering the channel and pixel tiles, blocks of 8
 * input channels (fewer where local memory holds no such block), staging
 * on (sch_hw.wg_reduce, or the target option -local-stage); a grouped
 * conv's channel tiles within one group, and its groups too but for a
 * depthwise conv's (one input channel a group: a block of channels stages
 * as many patches as a plain conv's). Depthwise convs in the flat form
 * (on a cpu device that does not stage: sch_create_for),
 * and the rare plain conv compute_nn.c gives it (one channel in and out),
 * keep device_cl.c's form. */
#include <string.h>

#include "schedule/schedule.h"

enum {
    MAX_WG_OC = 32, MAX_WG_PX = 256, MAX_TILE_IC = 64, GPU_TILE = 4, GPU_WG_OC = 8, GPU_WG_PX = 16, GPU_TILE_IC = 8
};

/* What the knobs decided, and the conv's shape they were checked against. */
typedef struct cl_plan {
    bool direct;                /* the direct form (else the 1x1 one) */
    int64_t toc, tpx, woc, wpx, tic, unroll, stage;
    int64_t K, P, IC, KH, KW;   /* channels out, pixels a row (direct) or image, channels in (a group's), taps */
    int64_t groups, KG;         /* groups, and output channels a group */
    int64_t st[2], dil[2];      /* strides, dilations */
} cl_plan;

/* Attribute `name` of a's call as two integers (a list's last two). */
static void attr_pair(const sch_tensor *a, const char *name, int64_t *v)
{
    const ir_attr_val *x = ir_call_attr(a->call, name);
    v[0] = v[1] = 1;
    if (x && x->kind == IR_AV_LIST && x->n >= 2) {
        v[0] = x->items[x->n - 2].i;
        v[1] = x->items[x->n - 1].i;
    } else if (x && x->kind == IR_AV_INT) {
        v[0] = v[1] = x->i;
    }
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* The powers of two up to cap (and extent), with extra where it is none of
 * them, in *out; their number. */
static int pow2_cands(int64_t cap, int64_t extent, int64_t extra, int64_t *out)
{
    int n = 0;
    bool seen = false;
    for (int64_t v = 1; v <= cap && (v <= extent || v == 1); v *= 2) {
        seen = seen || v == extra;
        out[n++] = v;
    }
    if (!seen && extra > 1) {
        int i = n++;
        while (i > 0 && out[i - 1] > extra) {
            out[i] = out[i - 1];
            i--;
        }
        out[i] = extra;
    }
    return n;
}

/* The bytes of __local memory a group's staged block takes: the input
 * patch its pixels read (halo included) and the block's weights. */
static int64_t staged_bytes(const cl_plan *p)
{
    int64_t ch = min64(p->tic, p->IC), px = min64(p->wpx * p->tpx, p->P), oc = min64(p->woc * p->toc, p->K);
    /* a grouped conv's block of output channels reads the input channels
     * of each group it reaches (input channel (oc / KG) * IC + ic) */
    if (p->groups > 1) {
        int64_t span = p->KG % oc == 0 ? 1 : oc % p->KG == 0 ? oc / p->KG : min64(p->groups, (oc - 1) / p->KG + 2);
        ch += (span - 1) * p->IC;
    }
    int64_t patch;
    if (p->direct) {
        int64_t rows = (p->KH - 1) * p->dil[0] + 1, cols = (px - 1) * p->st[1] + (p->KW - 1) * p->dil[1] + 1;
        patch = rows * cols;
    } else {
        /* the region of a run of fused pixels p (rows p / OW, columns
         * p % OW) is bounded by the whole plane (bound.c) */
        patch = p->P;
    }
    /* (the weights: the block's output channels x its tile_ic channels of
     * their own group x the taps, whatever groups it spans) */
    return (ch * patch + oc * min64(p->tic, p->IC) * p->KH * p->KW) * 4;
}

/* The least power of two of items that covers extent in tiles of tile,
 * at most cap. */
static int64_t cover(int64_t extent, int64_t tile, int64_t cap)
{
    int64_t v = 1, tiles = (extent + tile - 1) / tile;
    while (v < tiles && v * 2 <= cap)
        v *= 2;
    return v;
}

/* Every knob of the conv, checked against the device; false (t->err) for a
 * config the device cannot run. */
static bool plan(sch_tctx *t, const sch_tensor *a, cl_plan *p)
{
    static const int64_t off_on[2] = {0, 1};
    const sch_hw *hw = t->hw;
    bool gpu = hw->wg_reduce;
    p->K = a->shape[1];
    p->groups = ir_call_attr(a->call, "groups")->i;
    p->KG = p->K / p->groups;
    p->P = a->shape[a->ndim - 1];
    p->IC = a->rext[0];
    p->KH = p->direct ? a->rext[1] : 1;
    p->KW = p->direct ? a->rext[2] : 1;
    attr_pair(a, "strides", p->st);
    attr_pair(a, "dilation", p->dil);
    /* a cpu device's work-item is a core's loop iteration: the CPU rule's
     * tile; a GPU's many small ones */
    int64_t kb = 1, wb = 1;
    sch_tmpl_register_tile(hw, p->K, p->P, false, &kb, &wb);
    /* (a grouped conv's channel tiles within a group: a tile across two
     * reads two groups' inputs, a staged block both groups' patches) */
    if (p->groups > 1)
        kb = sch_tmpl_cl_pow2_default(kb, kb, p->KG, 1);
    int64_t toc0 = gpu ? sch_tmpl_cl_pow2_default(GPU_TILE, GPU_TILE, p->KG, 1) : kb;
    int64_t tpx0 = gpu ? sch_tmpl_cl_pow2_default(GPU_TILE, GPU_TILE, p->P, 1) : wb;
    int64_t oc_c[8], px_c[8], ic_c[8];
    int noc = pow2_cands(32, p->K, kb, oc_c), npx = pow2_cands(16, p->P, wb, px_c);
    p->toc = sch_define_knob(t, "tile_oc", noc, oc_c, toc0);
    p->tpx = sch_define_knob(t, "tile_px", npx, px_c, tpx0);
    int64_t cap_oc = sch_tmpl_cl_axis_cap(hw, 1, MAX_WG_OC), cap_px = sch_tmpl_cl_axis_cap(hw, 0, MAX_WG_PX);
    /* a GPU's group covers up to 8 channel tiles x 16 pixel tiles: a
     * conv's tiles rarely make a power of two (27 channels; rows of 7, 14,
     * 28, 56 pixels), so its last items may idle, clamped to the tiles
     * there are (a GPU's work-items are scalar lanes, so the guard costs no
     * vectors) */
    /* a cpu device (PoCL) pays for each work-group (the stem's 112 x 112
     * pixels in groups of one item: 6272 groups, 3.6x main's 1-D groups),
     * so its group is a row's tiles, one channel tile, but no more than
     * leave every compute unit four groups */
    int64_t tiles = a->shape[0] * (p->direct ? a->shape[2] : 1) * ((p->K + toc0 - 1) / toc0) *
                    ((p->P + tpx0 - 1) / tpx0);
    int64_t cpu_px = min64(min64(cap_px, hw->wg_max), tiles / (4 * (hw->cores > 0 ? hw->cores : 1)));
    /* (a depthwise conv's group spans channels: one input channel a group,
     * so its block stages as many channels' patches as a plain conv's) */
    bool dw = p->groups > 1 && p->IC == 1;
    int64_t woc0 = gpu ? cover(dw ? p->K : p->KG, toc0, min64(GPU_WG_OC, cap_oc)) : 1;
    if (gpu && p->groups > 1 && !dw)
        woc0 = sch_tmpl_cl_pow2_default(woc0, woc0, p->KG, toc0);
    int64_t wpx0 = cover(p->P, tpx0, gpu ? min64(min64(GPU_WG_PX, cap_px), hw->wg_max / woc0) : cpu_px);
    /* (short of the row, a cpu device's groups divide it: a tail's guard
     * would keep the tile's channel vectors scalar) */
    if (!gpu && wpx0 * tpx0 < p->P)
        wpx0 = sch_tmpl_cl_pow2_default(cpu_px, cpu_px, p->P, tpx0);
    p->woc = sch_tmpl_cl_pow2_knob(t, "wg_oc", cap_oc, woc0);
    p->wpx = sch_tmpl_cl_pow2_knob(t, "wg_px", cap_px, wpx0);
    int nic = pow2_cands(MAX_TILE_IC, p->IC - 1, p->IC, ic_c);
    /* staged by default: blocks of 8 channels, fewer where the device's
     * local memory holds no such block (a 1x1 conv stages whole planes),
     * none where it holds no block of one (the default stays valid) */
    int64_t stage0 = hw->local_stage ? hw->local_stage - 1 : gpu;
    cl_plan d = *p;
    d.toc = toc0, d.tpx = tpx0, d.woc = woc0, d.wpx = wpx0, d.tic = min64(GPU_TILE_IC, p->IC);
    while (stage0 && hw->l1 > 0 && staged_bytes(&d) > hw->l1 && d.tic > 1) {
        int64_t v = 1;
        while (v * 2 < d.tic)
            v *= 2;
        d.tic = v;
    }
    stage0 = stage0 && (hw->l1 <= 0 || staged_bytes(&d) <= hw->l1);
    p->tic = sch_define_knob(t, "tile_ic", nic, ic_c, stage0 ? d.tic : p->IC);
    p->unroll = p->KW > 1 ? sch_define_knob(t, "unroll_kw", 2, off_on, 1) : 0;
    p->stage = sch_define_knob(t, "local_stage", 2, off_on, stage0);
    if (hw->wg_max > 0 && p->woc * p->wpx > hw->wg_max) {
        t->err = sch_fail(t->s, SCH_E_BAD_CONFIG, "conv2d_cl: a work-group of %lld x %lld items exceeds the "
                          "device's %lld", (long long)p->woc, (long long)p->wpx, (long long)hw->wg_max);
        return false;
    }
    int64_t bytes = staged_bytes(p);
    if (p->stage && hw->l1 > 0 && bytes > hw->l1) {
        t->err = sch_fail(t->s, SCH_E_BAD_CONFIG, "conv2d_cl: staged blocks of %lld bytes exceed the device's "
                          "%lld bytes of local memory", (long long)bytes, (long long)hw->l1);
        return false;
    }
    return true;
}

/* A register tile's loops: its pixels unrolled, its channels one vector
 * loop (split into vectors by the knob vec). */
static void tile_loops(sch_tctx *t, sch_tensor *st, sch_iter *px, sch_iter *oc)
{
    if (px->extent > 1)
        SCH_TRY(t, sch_annotate(t->s, st, px, SCH_LOOP_UNROLLED));
    if (oc->extent > 1)
        SCH_TRY(t, sch_annotate(t->s, st, oc, SCH_LOOP_VECTORIZED));
}

/* The output's or the conv's leaves as the grid wants them: the batch (and
 * the rows) fused onto group axis 2, channel and pixel blocks on group axes
 * 1 and 0, their work-items on local axes 4 and 3, then `mid` (NULL: none;
 * the staged form's input-channel blocks, placed between the group and
 * item loops) and the tile's pixels (unrolled) and channels (vectorized).
 * px is the pixel leaf; rows the direct form's row leaf (else NULL). *wpx
 * gets the inner work-item loop. */
static void grid_tile(sch_tctx *t, sch_tensor *st, const cl_plan *p, sch_iter *px, sch_iter *rows, int nmid,
                      sch_iter *const *mid, sch_iter **wpx)
{
    sch_schedule *s = t->s;
    sch_iter *n = st->leaves.data[0], *oc = st->leaves.data[1], *goc, *woc, *toc, *gpx, *tpx, *g2 = n;
    sch_tmpl_cl_tile3(t, st, oc, p->woc, p->toc, &goc, &woc, &toc);
    sch_tmpl_cl_tile3(t, st, px, p->wpx, p->tpx, &gpx, wpx, &tpx);
    if (t->err)
        return;
    sch_iter *order[16];
    int no = 0;
    order[no++] = n;
    if (rows)
        order[no++] = rows;
    order[no++] = goc;
    order[no++] = gpx;
    for (int i = 0; i < nmid; i++)
        order[no++] = mid[i];
    order[no++] = woc;
    order[no++] = *wpx;
    /* the reduction leaves the caller did not place, in their order */
    for (size_t i = 0; i < st->leaves.len; i++) {
        sch_iter *it = st->leaves.data[i];
        bool placed = it == toc || it == tpx;
        for (int j = 0; j < no && !placed; j++)
            placed = order[j] == it;
        if (!placed)
            order[no++] = it;
    }
    order[no++] = tpx;
    order[no++] = toc;
    SCH_TRY(t, sch_reorder(s, st, no, order));
    if (rows)
        SCH_TRY(t, sch_fuse(s, st, n, rows, &g2));
    SCH_TRY(t, sch_bind(s, st, g2, 2));
    SCH_TRY(t, sch_bind(s, st, goc, 1));
    SCH_TRY(t, sch_bind(s, st, gpx, 0));
    SCH_TRY(t, sch_bind(s, st, woc, 4));
    SCH_TRY(t, sch_bind(s, st, *wpx, 3));
    tile_loops(t, st, tpx, toc);
}

/* The conv stage's pixel leaf and (direct form) row leaf; the 1x1 form's
 * output fuses its rows and columns into one pixel leaf first. */
static void pixel_leaves(sch_tctx *t, sch_tensor *st, bool fuse_rows, sch_iter **px, sch_iter **rows)
{
    *rows = NULL;
    if (fuse_rows) {
        SCH_TRY(t, sch_fuse(t->s, st, st->leaves.data[2], st->leaves.data[3], px));
    } else if (st->ndim == 4) {
        *rows = st->leaves.data[2];
        *px = st->leaves.data[3];
    } else {
        *px = st->leaves.data[2];
    }
}

/* local_stage off: the output stage o tiled and bound, the conv computed
 * inside its inner work-item loop over the work-item's tile: the input
 * channels in blocks of tile_ic outside the taps, the tile's pixels
 * unrolled and its channels vectorized innermost, the weights packed. */
static void registers(sch_tctx *t, sch_tensor *a, sch_tensor *o, sch_tensor *weight, const cl_plan *p)
{
    sch_schedule *s = t->s;
    sch_iter *px, *rows, *wpx;
    pixel_leaves(t, o, !p->direct, &px, &rows);
    if (t->err)
        return;
    grid_tile(t, o, p, px, rows, 0, NULL, &wpx);
    if (t->err)
        return;
    sch_iter *an = a->leaves.data[0], *aoc = a->leaves.data[1], *apx = a->leaves.data[a->ndim - 1];
    sch_iter *ic = a->leaves.data[a->ndim], *aoco, *aoci, *apxo, *apxi, *ici = NULL;
    sch_iter *aoh = p->direct ? a->leaves.data[2] : NULL, *kh = p->direct ? a->leaves.data[a->ndim + 1] : NULL;
    sch_iter *kw = p->direct ? a->leaves.data[a->ndim + 2] : NULL;
    SCH_TRY(t, sch_split(s, a, aoc, min64(p->toc, aoc->extent), &aoco, &aoci));
    SCH_TRY(t, sch_split(s, a, apx, min64(p->tpx, apx->extent), &apxo, &apxi));
    if (p->tic < p->IC)
        SCH_TRY(t, sch_split(s, a, ic, p->tic, &ic, &ici));
    if (t->err)
        return;
    sch_iter *order[12];
    int no = 0;
    order[no++] = an;
    order[no++] = aoco;
    if (aoh)
        order[no++] = aoh;
    order[no++] = apxo;
    order[no++] = ic;
    if (p->direct) {
        order[no++] = kh;
        order[no++] = kw;
    }
    if (ici)
        order[no++] = ici;
    order[no++] = apxi;
    order[no++] = aoci;
    SCH_TRY(t, sch_reorder(s, a, no, order));
    tile_loops(t, a, apxi, aoci);
    if (p->unroll && kw)
        SCH_TRY(t, sch_annotate(s, a, kw, SCH_LOOP_UNROLLED));
    if (weight && p->toc > 1 && p->K % p->toc == 0)
        SCH_TRY(t, sch_pack(s, a, weight, 0, p->toc, NULL));
    SCH_TRY(t, sch_compute_at(s, a, o, wpx));
}

/* local_stage on: the conv stage a itself on the grid, its input-channel
 * blocks between the group and item loops, the input it reads (the padded
 * input's or strided pixels' stage, inlined into the copy, or the data)
 * and the weights staged in __local memory at each block. */
static void staged(sch_tctx *t, sch_tensor *a, sch_tensor *weight, const cl_plan *p)
{
    sch_schedule *s = t->s;
    sch_iter *ic = a->leaves.data[a->ndim], *ico = ic, *ici = NULL, *px, *rows, *wpx;
    sch_iter *kh = p->direct ? a->leaves.data[a->ndim + 1] : NULL, *kw = p->direct ? a->leaves.data[a->ndim + 2] : NULL;
    SCH_TRY(t, sch_split(s, a, ic, min64(p->tic, p->IC), &ico, &ici));
    pixel_leaves(t, a, false, &px, &rows);
    if (t->err)
        return;
    grid_tile(t, a, p, px, rows, 1, &ico, &wpx);
    /* the block's channels and taps as one loop, so that lowering keeps
     * the tile in registers over the whole block (tile_promotion: around
     * the innermost reduction loop), not over one tap row */
    sch_iter *r;
    if (kh && !t->err) {
        SCH_TRY(t, sch_fuse(s, a, ici, kh, &r));
        SCH_TRY(t, sch_fuse(s, a, r, kw, &r));
    }
    sch_tensor *in = sch_tmpl_call_stage(s, a, p->direct ? "pad" : "stride");
    if (!in)
        in = sch_param_tensor(s, a->call->u.call.args[0]);
    static const int taps_major[4] = {1, 2, 3, 0};
    if (in)
        sch_tmpl_stage(t, a, in, ico, NULL);
    if (weight)
        sch_tmpl_stage(t, a, weight, ico, taps_major);
}

/* The stages left (a padded input, an epilogue of the staged form) as
 * default_cl schedules them; on a machine without work-groups (a test's),
 * as the CPU does. Then the vector width of every work-item. */
static void finish(sch_tctx *t)
{
    sch_tmpl_finish(t);
    if (t->hw->wg_max > 0)
        sch_tmpl_device_grid(t);
    sch_tmpl_device_vec(t);
}

void sch_template_conv2d_nchw_cl(sch_tctx *t)
{
    sch_schedule *s = t->s;
    sch_tensor *a = sch_anchor(s);
    const ir_expr *call = a ? a->call : NULL;
    bool direct = a && a->ndim == 4 && a->nraxes == 3, px = a && a->ndim == 3 && a->nraxes == 1;
    if (!a || strcmp(a->op, "nn.conv2d") || !(direct || px) || !call || call->u.call.nargs < 2) {
        sch_template_conv2d_cl(t);
        return;
    }
    /* the stage the conv's tiles go to: itself, or the epilogue that
     * inlines it (the 1x1 form's view back to four axes and all) */
    sch_tensor *o = a->output >= 0 ? a : sch_tmpl_reader(s, a);
    if (!o || o->output < 0 || o->ndim != 4) {
        sch_template_conv2d_cl(t);
        return;
    }
    cl_plan p = {.direct = direct};
    if (!plan(t, a, &p))
        return;
    sch_tensor *w = sch_param_tensor(s, call->u.call.args[1]);
    if (w && w->ndim != 4)
        w = NULL;
    if (!p.stage) {
        if (a->output >= 0)
            SCH_TRY(t, sch_cache_write(s, o, &a));
        if (t->err)
            return;
        sch_tensor *pad = direct ? sch_tmpl_call_stage(s, a, "pad") : NULL;
        if (pad)
            SCH_TRY(t, sch_compute_root(s, pad));
        registers(t, a, o, w, &p);
    } else {
        staged(t, a, w, &p);
    }
    finish(t);
}
