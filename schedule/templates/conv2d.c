/* conv2d.c — the template for nn.conv2d (NCHW data, OIHW weights): plain,
 * depthwise and grouped. The output (the epilogue: scale, shift, relu,
 * residual add, all inlined into it; or a copy made by cache_write) is
 * tiled by output channels and output columns; the conv is computed at the
 * column-tile loop into an accumulator tile of tile_oc x tile_ow values that
 * stays in registers: per reduction step, tile_ow broadcast inputs times
 * tile_oc / lanes weight vectors. The weights are packed to OIHW[tile_oc]o
 * so that a vector of output channels is contiguous (done once at compile
 * time for constant weights). The padded input is materialized at the root
 * (knob pad_inline: or read through guards). The tile may vectorize along
 * the output row instead (knob vec_ow; always for depthwise convs), where
 * the inputs are contiguous and the epilogue reads the tile in order.
 * Parallelism: the batch, channel-tile and row loops, fused (knob
 * order_outer: rows outside channel tiles). Knob tile_ic blocks the input
 * channels; order_ic moves the blocks outside the row's column tiles, where
 * the conv is computed per row into a buffer of the row's accumulators. */
#include <string.h>

#include "schedule/schedule.h"

/* The parameter stage a reads as its weight (rank 4, K rows), or NULL. */
static sch_tensor *weight_of(const sch_schedule *s, const sch_tensor *a)
{
    const ir_type *wt = a->call ? a->call->u.call.args[1]->type : NULL;
    sch_tensor *p = wt ? sch_param_tensor(s, a->call->u.call.args[1]) : NULL;
    return p && p->ndim == 4 && p->shape[0] == wt->shape[0] && p->shape[1] == wt->shape[1] ? p : NULL;
}

/* The stage a reads as its (padded) input, if it is a stage. */
static sch_tensor *pad_of(const sch_schedule *s, const sch_tensor *a)
{
    return sch_tmpl_call_stage(s, a, "pad");
}

/* A register tile when the usual one degenerates (widths with few divisors:
 * 13, 109): kb channels (dividing K, at most 64) by owb columns (any width
 * up to the registers: the last tile of a row may be a shorter tail, which
 * lowering gives its own loop), their owb * ceil(kb / lanes) accumulators
 * within regs, scored by useful lane-FMAs over the steps of a whole row: a
 * step's cost is what bounds it, the FMAs, the loads (kb / lanes weight
 * vectors and owb broadcasts) or the accumulators the FMA pipes need in
 * flight (sch_hw_min_acc), so a 1-column tail costs a full step. */
static int64_t step_cost(int64_t vecs, int64_t w, int64_t min_acc)
{
    int64_t fmas = vecs * w, loads = vecs + w, bound = fmas > loads ? fmas : loads;
    return bound > min_acc ? bound : min_acc;
}

/* Useful lane-FMAs per unit of step cost of a k x w tile over a row of OW. */
static double tile_score(int64_t OW, const sch_hw *hw, int64_t k, int64_t w)
{
    int64_t vecs = sch_hw_vectors(hw, k), min_acc = sch_hw_min_acc(hw);
    int64_t cost = OW / w * step_cost(vecs, w, min_acc) + (OW % w ? step_cost(vecs, OW % w, min_acc) : 0);
    return (double)(k * OW) / (double)cost;
}

void sch_tmpl_fallback_tile(int64_t K, int64_t OW, const sch_hw *hw, int64_t *kb, int64_t *owb)
{
    int regs = sch_hw_acc_regs(hw);
    int64_t max_k = sch_hw_max_cols(hw), max_w = hw->vregs;
    double best = -1;
    for (int64_t k = 1; k <= max_k && k <= K; k++) {
        if (K % k)
            continue;
        int64_t vecs = sch_hw_vectors(hw, k);
        for (int64_t w = 1; w <= max_w && w <= OW; w++) {
            if (vecs * w > regs)
                continue;
            double score = tile_score(OW, hw, k, w);
            /* on a tie a divisor beats a tile with a tail */
            if (score > best || (score == best && OW % w == 0 && OW % *owb != 0)) {
                best = score;
                *kb = k;
                *owb = w;
            }
        }
    }
}

/* What the knobs decided for one conv. */
typedef struct conv_plan {
    bool depthwise;
    int64_t vec_ow;             /* the register tile vectorizes along the output row */
    int64_t kb, owb;            /* the register tile: output channels x output columns */
    int64_t IC, icb;            /* input channels and their cache block */
    sch_tensor *pad;            /* the padded input's stage, or NULL */
    int64_t pad_inline;         /* read through guards instead of materialized */
    sch_loop_kind kw_kind;      /* how the kw loop runs */
    int64_t pack;               /* the weights packed to OIHW[kb]o */
    const int64_t *ord;         /* order_outer: the order of (oc, oh) tiles */
    bool ic_outside;            /* input-channel blocks outside the row's column tiles */
    bool along_tile;            /* the epilogue walks the tile in its own layout */
} conv_plan;

/* The conv stage a and the output stage o it is computed into (a copy made
 * by cache_write when the conv is itself the output); false when the
 * template does not apply (then the default one ran) or a primitive failed. */
static bool conv_stages(sch_tctx *t, sch_tensor **a, sch_tensor **o)
{
    return sch_tmpl_anchor_output(t, 4, 3, a, o);
}

/* The register tile's default: vectorized along the row (or pixels) where
 * they make whole vectors (a row of two vectors, as many channel rows as
 * the accumulators allow), else along the channels with as many columns as
 * the accumulators allow (the fallback where only a tiny divisor of the
 * columns fits, or one far below that rule's tile: 13, 55, 109 wide). */
void sch_tmpl_register_tile(const sch_hw *hw, int64_t K, int64_t W, bool vec_w, int64_t *kb, int64_t *wb)
{
    int lanes = hw->lanes;
    int64_t acc = sch_hw_acc_regs(hw), max_rows = sch_hw_max_rows(hw);
    if (vec_w) {
        *wb = sch_tmpl_vector_factor(W, sch_hw_row_lanes(hw), lanes);
        int64_t regs = acc / sch_hw_vectors(hw, *wb);
        *kb = sch_tmpl_divisor(K, regs < max_rows ? regs : max_rows);
    } else {
        *kb = sch_tmpl_vector_factor(K, sch_hw_row_lanes(hw), lanes);
        int64_t vecs = sch_hw_vectors(hw, *kb), rule = acc / vecs;
        *wb = sch_tmpl_divisor(W, rule);
        /* a divisor whose tile is short of accumulators yields to the
         * rule's tile and a tail, as matmul's rows do (AVX2's 28-wide 3x3
         * convs: 4 columns x 2 vectors ran at 0.84x 6 and a tail of 4), but
         * not to a tail of one column, whose accumulators gcc kept on the
         * stack (docs/targets.md) */
        if (*wb >= 4 && *wb < rule && rule < W && W % rule != 1 && sch_hw_short_of_acc(hw, *wb * vecs))
            *wb = rule;
        /* where only a tiny divisor fits, the fallback's tile (tails and
         * all) replaces it where it scores better. Not where the divisor
         * is merely below the rule's tile: the score counts loads and FMAs
         * alike and prefers wide channel tiles of few pixels, which read
         * the input a few floats a cache line (squeezenet's 729-pixel 1x1
         * convs: 48 x 3 ran at 0.6x the divisor's 16 x 9, AVX-512) */
        int64_t k = *kb, w = *wb;
        if (w < 4)
            sch_tmpl_fallback_tile(K, W, hw, &k, &w);
        if (*wb < 4 || tile_score(W, hw, k, w) > tile_score(W, hw, *kb, *wb)) {
            *kb = k;
            *wb = w;
        }
    }
}

bool sch_tmpl_rows_short(const sch_hw *hw, int64_t K, int64_t W)
{
    int64_t kr, wr, kc, wc;
    sch_tmpl_register_tile(hw, K, W, true, &kr, &wr);
    sch_tmpl_register_tile(hw, K, W, false, &kc, &wc);
    return sch_hw_short_of_acc(hw, kr * sch_hw_vectors(hw, wr)) && !sch_hw_short_of_acc(hw, wc * sch_hw_vectors(hw, kc));
}

/* The register tile: which way it vectorizes (knob vec_ow) and its default
 * size in channels (kb0) by columns (owb0). */
static void register_tile(sch_tctx *t, const sch_tensor *a, conv_plan *p, int64_t *kb0, int64_t *owb0)
{
    int lanes = t->hw->lanes;
    int64_t OW = a->shape[3];
    const ir_attr_val *strides = ir_call_attr(a->call, "strides");
    int64_t sw = strides->kind == IR_AV_LIST ? strides->items[strides->n - 1].i : strides->i;
    /* Which way the register tile vectorizes: along output channels (the
     * weights packed so a vector of channels is contiguous; the epilogue
     * reads the tile transposed) or along the output row (inputs contiguous
     * at stride 1; weights broadcast). Rows win where the row is a whole
     * number of vectors, or where the reduction is too short for the
     * transposed epilogue to be hidden; depthwise convs always use rows. */
    static const int64_t off_on[2] = {0, 1};
    bool row_default = p->depthwise || (sw == 1 && OW % lanes == 0 && !sch_tmpl_rows_short(t->hw, a->shape[1], OW));
    p->vec_ow = p->depthwise ? 1 : sch_define_knob(t, "vec_ow", 2, off_on, row_default);
    sch_tmpl_register_tile(t->hw, a->shape[1], OW, p->vec_ow, kb0, owb0);
}

/* The tiles beside the divisors: both ways' defaults, the neighbours of
 * the unrolled dimension's default (the columns of the channel-vector way,
 * the rows of the row-vector way) and two vectors; a knob's candidates may
 * not depend on the value of the knob that picks the way. */
int sch_tmpl_tile_cands(const sch_hw *hw, int64_t K, int64_t W, bool cols, int64_t max, int64_t *out)
{
    int64_t kb[2], wb[2];
    sch_tmpl_register_tile(hw, K, W, false, &kb[0], &wb[0]);
    sch_tmpl_register_tile(hw, K, W, true, &kb[1], &wb[1]);
    int n = sch_tmpl_tail_cands(cols ? wb[0] : kb[1], 1, max, out);
    out[n++] = sch_hw_row_lanes(hw);
    out[n++] = cols ? wb[0] : kb[0];
    out[n++] = cols ? wb[1] : kb[1];
    return n;
}

/* Rejects, with SCH_E_BAD_CONFIG, the channel-vector tiles (vec_ow 0) that
 * cannot win, as AutoTVM's templates raise an instantiation error: the
 * tuners skip such a config before compiling it (tun_next_batch). Where the
 * channels are whole vectors, a tile_oc that is not wastes lanes in every
 * FMA (the row way's rows +-1, 7, 9, 15, 17, read as channels); a tile
 * whose accumulators and one step's weight vectors exceed the vector
 * registers spills every step (the broadcast input can be an FMA's memory
 * operand): on resnet18 such tiles, 32 columns of one vector on AVX-512,
 * ran 2-41x their task's best and cost gcc 0.4-4.3 s each (docs/tuning.md,
 * fourth and fifth rounds). The defaults always fit: at most
 * sch_hw_acc_regs accumulators and 4 vectors. Devices keep every tile. */
bool sch_tmpl_reject_part_vectors(sch_tctx *t, const char *what, const char *vec_knob, int64_t K, int64_t kb)
{
    int64_t lanes = t->hw->lanes;
    if (t->hw->wg_max > 0 || lanes < 2 || t->err || K % lanes || kb % lanes == 0)
        return false;
    t->err = sch_fail(t->s, SCH_E_BAD_CONFIG, "%s: tile_oc %lld is not a whole number of %lld-lane vectors (%s 0, "
                      "%lld channels)", what, (long long)kb, (long long)lanes, vec_knob, (long long)K);
    return true;
}

static void reject_losing_tile(sch_tctx *t, const conv_plan *p, int64_t K)
{
    const sch_hw *hw = t->hw;
    int64_t lanes = hw->lanes, vecs = sch_hw_vectors(hw, p->kb), acc = vecs * p->owb;
    if (p->depthwise || p->vec_ow || hw->wg_max > 0 || lanes < 2 || t->err)
        return;
    if (sch_tmpl_reject_part_vectors(t, "conv2d", "vec_ow", K, p->kb))
        return;
    if (acc + vecs > hw->vregs)
        t->err = sch_fail(t->s, SCH_E_BAD_CONFIG, "conv2d: a tile of %lld columns x %lld channel vectors needs "
                          "%lld accumulators + %lld weight vectors, over the %d vector registers (vec_ow 0)",
                          (long long)p->owb, (long long)vecs, (long long)acc, (long long)vecs, hw->vregs);
}

/* How the kw loop runs when the knob unroll_kw leaves it to the compiler: a
 * loop the compiler may not unroll where the register tile (accumulators,
 * a step's weight or input vectors and the broadcast) leaves fewer
 * registers than its unrolled taps keep (sch_hw_tap_regs): AVX2's 16
 * channels x 6 columns, whose unrolled taps spilled every step, else
 * unchanged (docs/targets.md). Devices and ISAs without fused multiply-adds
 * keep the compiler's choice. */
static sch_loop_kind serial_kw(const sch_tctx *t, const conv_plan *p, int64_t kw)
{
    const sch_hw *hw = t->hw;
    int64_t vecs = sch_hw_vectors(hw, p->vec_ow ? p->owb : p->kb);
    int64_t regs = vecs * (p->vec_ow ? p->kb : p->owb) + vecs + 1;
    return hw->fused_fma && regs + sch_hw_tap_regs(kw) > hw->vregs ? SCH_LOOP_ROLLED : SCH_LOOP_SERIAL;
}

/* Every knob of the conv, in the order the template defines them. */
static void conv_knobs(sch_tctx *t, sch_tensor *a, conv_plan *p)
{
    int64_t K = a->shape[1], OW = a->shape[3], kb0, owb0;
    register_tile(t, a, p, &kb0, &owb0);
    const int64_t dk[2] = {(K + kb0 - 1) / kb0, kb0}, dw[2] = {(OW + owb0 - 1) / owb0, owb0};
    /* the unrolled dimension of the register tile stays within what the
     * vector registers can hold (depthwise: channels; see below for rows) */
    int64_t max_k = p->depthwise ? sch_hw_max_rows(t->hw) : sch_hw_max_cols(t->hw);
    if (p->depthwise) {
        p->kb = sch_define_split(t, "tile_oc", K, 2, max_k, dk)[1];
        p->owb = sch_define_split(t, "tile_ow", OW, 2, t->hw->vregs, dw)[1];
    } else {
        int64_t ek[6], ew[6];
        int nk = sch_tmpl_tile_cands(t->hw, K, OW, false, max_k, ek);
        int nw = sch_tmpl_tile_cands(t->hw, K, OW, true, t->hw->vregs, ew);
        p->kb = sch_define_tile_split(t, "tile_oc", K, max_k, nk, ek, dk)[1];
        p->owb = sch_define_tile_split(t, "tile_ow", OW, t->hw->vregs, nw, ew, dw)[1];
    }
    /* Cache blocking of the input channels: the weights of one block of
     * tile_ic channels stay in cache while the tile loops reuse them; by
     * default the largest block whose weight panel (kb channels) fits L2. */
    p->IC = a->rext[0];
    p->icb = p->IC;
    if (p->IC > 1) {
        const sch_split_policy ip = {.max_outer = 16};
        int64_t icb0 = sch_hw_l2_block(t->hw, p->IC, p->kb * a->rext[1] * a->rext[2] * 4, ip.max_outer);
        const int64_t di[2] = {p->IC / icb0, icb0};
        p->icb = sch_define_split_policy(t, "tile_ic", p->IC, 2, &ip, di)[1];
    }
    static const int64_t off_on[2] = {0, 1};
    p->pad = pad_of(t->s, a);
    p->pad_inline = p->pad ? sch_define_knob(t, "pad_inline", 2, off_on, 0) : 0;
    static const char *const kw_loop[1] = {"kw"};
    static const int64_t kw_kinds[2] = {SCH_LOOP_SERIAL, SCH_LOOP_UNROLLED};
    p->kw_kind = a->rext[2] > 1 ? (sch_loop_kind)sch_define_annotate(t, "unroll_kw", 1, kw_loop, 2, kw_kinds, 0)[0]
                                : SCH_LOOP_SERIAL;
    if (p->kw_kind == SCH_LOOP_SERIAL)
        p->kw_kind = serial_kw(t, p, a->rext[2]);
    p->pack = p->depthwise ? 0 : sch_define_knob(t, "pack_weight", 2, off_on, 1);
    /* The order of the parallel tile loops: channel tiles outside rows (a
     * weight panel reused down the image) or rows outside channel tiles (an
     * input row reused across the channels). */
    static const char *const outer_loops[2] = {"oc", "oh"};
    static const int64_t outer_orders[4] = {0, 1, 1, 0};
    p->ord = sch_define_reorder(t, "order_outer", 2, outer_loops, 2, outer_orders, 0);
    /* Where the input-channel blocks sit: inside the column tile (the tile
     * accumulates in registers over all of them) or outside the row's
     * column tiles (a block of weights reused along the whole row, the row's
     * accumulators kept in a buffer between blocks). */
    static const char *const ic_loops[2] = {"ow", "ic"};
    p->ic_outside = p->IC > 1 && sch_define_reorder(t, "order_ic", 2, ic_loops, 2, outer_orders, 0)[0] == 1;
    if (p->vec_ow && a->dtype != IR_FLOAT16)
        p->pack = 0; /* a broadcast weight needs no layout (but float16 weights, widened once: pack.c) */
    /* The epilogue stores along rows (contiguous) unless the reduction is
     * short: then reading a channel-major tile across rows costs as much as
     * the reduction itself, and it walks the tile in the tile's own layout
     * (strided stores) instead. */
    p->along_tile = p->vec_ow || a->rext[0] * a->rext[1] * a->rext[2] <= 256;
    reject_losing_tile(t, p, K);
}

/* The output: tiles of kb channels x owb columns, the tile loops fused and
 * parallel; *f gets the fused loop and *owo the column-tile loop. */
static void schedule_output(sch_tctx *t, sch_tensor *o, const conv_plan *p, sch_iter **f, sch_iter **owo)
{
    sch_schedule *s = t->s;
    sch_iter *n = o->leaves.data[0], *oc = o->leaves.data[1], *oh = o->leaves.data[2], *ow = o->leaves.data[3];
    sch_iter *oco, *oci, *owi;
    SCH_TRY(t, sch_split(s, o, oc, p->kb, &oco, &oci));
    SCH_TRY(t, sch_split(s, o, ow, p->owb, owo, &owi));
    if (t->err)
        return;
    sch_iter *ovec = p->along_tile && !p->vec_ow ? oci : owi, *oreg = ovec == oci ? owi : oci;
    sch_iter *outer[2] = {oco, oh};
    sch_iter *oorder[6] = {n, outer[p->ord[0]], outer[p->ord[1]], *owo, oreg, ovec};
    sch_tmpl_conv_output(t, o, 6, oorder, f);
}

void sch_tmpl_conv_output(sch_tctx *t, sch_tensor *o, int n, sch_iter *const *order, sch_iter **f)
{
    sch_schedule *s = t->s;
    SCH_TRY(t, sch_reorder(s, o, n, order));
    SCH_TRY(t, sch_fuse(s, o, order[0], order[1], f));
    SCH_TRY(t, sch_fuse(s, o, *f, order[2], f));
    SCH_TRY(t, sch_annotate(s, o, *f, SCH_LOOP_PARALLEL));
    if (order[n - 1]->extent > 1)
        SCH_TRY(t, sch_annotate(s, o, order[n - 1], SCH_LOOP_VECTORIZED));
}

/* The conv: the same tiles, reductions outside the register block, computed
 * at the output's loop `at`; false when its splits failed (the template
 * then stops short of finishing). */
static bool schedule_conv(sch_tctx *t, sch_tensor *a, sch_tensor *o, const conv_plan *p, sch_iter *at)
{
    sch_schedule *s = t->s;
    sch_iter *an = a->leaves.data[0], *aoc = a->leaves.data[1], *aoh = a->leaves.data[2], *aow = a->leaves.data[3];
    sch_iter *ic = a->leaves.data[4], *kh = a->leaves.data[5], *kw = a->leaves.data[6];
    sch_iter *aoco, *aoci, *aowo, *aowi, *ici = NULL;
    SCH_TRY(t, sch_split(s, a, aoc, p->kb, &aoco, &aoci));
    SCH_TRY(t, sch_split(s, a, aow, p->owb, &aowo, &aowi));
    if (p->icb < p->IC)
        SCH_TRY(t, sch_split(s, a, ic, p->icb, &ic, &ici));
    if (t->err)
        return false;
    sch_iter *vec = p->vec_ow ? aowi : aoci, *reg = p->vec_ow ? aoci : aowi;
    sch_iter *aorder[10] = {an, aoco, aoh, aowo, ic, kh, kw};
    int na = 7;
    if (p->ic_outside) {
        aorder[3] = ic;
        aorder[4] = aowo;
    }
    if (ici)
        aorder[na++] = ici;
    aorder[na++] = reg;
    aorder[na++] = vec;
    SCH_TRY(t, sch_reorder(s, a, na, aorder));
    /* unrolled channels beyond half the registers would not fit them (and
     * take the compiler long): the loop then stays a loop */
    if (reg->extent > 1 && (!p->vec_ow || reg->extent <= sch_hw_max_rows(t->hw)))
        SCH_TRY(t, sch_annotate(s, a, reg, SCH_LOOP_UNROLLED));
    if (vec->extent > 1)
        SCH_TRY(t, sch_annotate(s, a, vec, SCH_LOOP_VECTORIZED));
    if (p->kw_kind != SCH_LOOP_SERIAL)
        SCH_TRY(t, sch_annotate(s, a, kw, p->kw_kind));
    SCH_TRY(t, sch_compute_at(s, a, o, at));
    return true;
}

void sch_template_conv2d(sch_tctx *t)
{
    sch_schedule *s = t->s;
    sch_tensor *a = sch_anchor(s), *o;
    if (a && a->ndim == 3 && !strcmp(a->op, "nn.conv2d")) {
        sch_template_conv2d_1x1(t); /* compute_nn.c's pixel-fused form of a 1x1 conv */
        return;
    }
    if (a && a->ndim == 4 && a->nraxes == 2 && !strcmp(a->op, "nn.conv2d")) {
        sch_template_dw_flat(t); /* compute_nn.c's flat form of a depthwise conv */
        return;
    }
    if (!conv_stages(t, &a, &o))
        return;
    conv_plan p = {0};
    p.depthwise = !strcmp(t->space->template_name, "depthwise_conv2d_nchw");
    conv_knobs(t, a, &p);
    if (t->err)
        return;
    if (p.pad && !p.pad_inline)
        SCH_TRY(t, sch_compute_root(s, p.pad));
    sch_tensor *w = weight_of(s, a);
    if (p.pack && w)
        SCH_TRY(t, sch_pack(s, a, w, 0, p.kb, NULL));
    if (t->err)
        return;
    sch_iter *f = NULL, *owo = NULL;
    schedule_output(t, o, &p, &f, &owo);
    if (t->err)
        return;
    if (schedule_conv(t, a, o, &p, p.ic_outside ? f : owo))
        sch_tmpl_finish(t);
}
