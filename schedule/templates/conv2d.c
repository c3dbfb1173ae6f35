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
    for (size_t i = 0; i < (size_t)s->nparams; i++) {
        sch_tensor *p = s->tensors.data[i];
        const ir_type *wt = a->call ? a->call->u.call.args[1]->type : NULL;
        if (p->ndim == 4 && wt && p->shape[0] == wt->shape[0] && p->shape[1] == wt->shape[1] &&
            a->call->u.call.args[1]->kind == IR_VAR && s->func->u.func.params[i] == a->call->u.call.args[1])
            return p;
    }
    return NULL;
}

/* The stage a reads as its (padded) input, if it is a stage. */
static sch_tensor *pad_of(const sch_schedule *s, const sch_tensor *a)
{
    for (size_t i = 0; i < s->tensors.len; i++) {
        sch_tensor *p = s->tensors.data[i];
        if (p->kind == SCH_TENSOR_COMPUTE && p != a && !strncmp(p->name, "pad", 3) && p->call == a->call)
            return p;
    }
    return NULL;
}

/* A register tile when the usual one degenerates (widths with few divisors:
 * 13, 109): kb channels (dividing K, at most 64) by owb columns (dividing OW,
 * at most 32), their owb * ceil(kb / lanes) accumulators within regs, scored
 * by useful lane-FMAs per reduction step over what bounds the step: the
 * FMAs, the loads (kb / lanes weight vectors and owb broadcasts) or the
 * accumulators the FMA pipes need in flight (sch_hw_min_acc). */
static void fallback_tile(int64_t K, int64_t OW, const sch_hw *hw, int64_t *kb, int64_t *owb)
{
    int lanes = hw->lanes, regs = sch_hw_acc_regs(hw), min_acc = sch_hw_min_acc(hw);
    int64_t max_k = sch_hw_max_cols(hw), max_w = hw->vregs;
    double best = -1;
    for (int64_t k = 1; k <= max_k && k <= K; k++) {
        if (K % k)
            continue;
        int64_t vecs = (k + lanes - 1) / lanes;
        for (int64_t w = 1; w <= max_w && w <= OW; w++) {
            if (OW % w || vecs * w > regs)
                continue;
            int64_t fmas = vecs * w, loads = vecs + w, bound = fmas > loads ? fmas : loads;
            double score = (double)(k * w) / (double)(bound > min_acc ? bound : min_acc);
            if (score > best) {
                best = score;
                *kb = k;
                *owb = w;
            }
        }
    }
}

void sch_template_conv2d(sch_tctx *t)
{
    sch_schedule *s = t->s;
    int lanes = t->hw->lanes;
    sch_tensor *a = sch_anchor(s);
    if (!a || a->ndim != 4 || a->nraxes != 3) {
        sch_template_default(t);
        return;
    }
    bool depthwise = !strcmp(t->space->template_name, "depthwise_conv2d_nchw");
    sch_tensor *o;
    if (a->output >= 0) {
        sch_tensor *copy = a;
        SCH_TRY(t, sch_cache_write(s, copy, &a));
        o = copy;
    } else {
        o = sch_tmpl_reader(s, a);
    }
    if (t->err)
        return;
    if (!o || o->output < 0 || o->ndim != 4) {
        sch_template_default(t);
        return;
    }
    int64_t K = a->shape[1], OW = a->shape[3];
    int64_t red = a->rext[0] * a->rext[1] * a->rext[2];
    const ir_attr_val *strides = ir_call_attr(a->call, "strides");
    int64_t sw = strides->kind == IR_AV_LIST ? strides->items[strides->n - 1].i : strides->i;
    /* Which way the register tile vectorizes: along output channels (the
     * weights packed so a vector of channels is contiguous; the epilogue
     * reads the tile transposed) or along the output row (inputs contiguous
     * at stride 1; weights broadcast). Rows win where the row is a whole
     * number of vectors, or where the reduction is too short for the
     * transposed epilogue to be hidden; depthwise convs always use rows. */
    static const int64_t off_on[2] = {0, 1};
    bool row_default = depthwise || (sw == 1 && OW % lanes == 0);
    int64_t vec_ow = depthwise ? 1 : sch_define_knob(t, "vec_ow", 2, off_on, row_default);
    int64_t kb0, owb0, acc = sch_hw_acc_regs(t->hw), max_rows = sch_hw_max_rows(t->hw);
    if (vec_ow) {
        owb0 = sch_tmpl_vector_factor(OW, sch_hw_row_lanes(t->hw), lanes);
        int64_t regs = acc / ((owb0 + lanes - 1) / lanes);
        kb0 = sch_tmpl_divisor(K, regs < max_rows ? regs : max_rows);
    } else {
        kb0 = sch_tmpl_vector_factor(K, sch_hw_row_lanes(t->hw), lanes);
        owb0 = sch_tmpl_divisor(OW, acc / ((kb0 + lanes - 1) / lanes));
        if (owb0 < 4)
            fallback_tile(K, OW, t->hw, &kb0, &owb0);
    }
    const int64_t dk[2] = {K / kb0, kb0}, dw[2] = {OW / owb0, owb0};
    /* the unrolled dimension of the register tile stays within what the
     * vector registers can hold (depthwise: channels; see below for rows) */
    const int64_t *tk = sch_define_split(t, "tile_oc", K, 2, depthwise ? max_rows : sch_hw_max_cols(t->hw), dk);
    const int64_t *tw = sch_define_split(t, "tile_ow", OW, 2, t->hw->vregs, dw);
    int64_t kb = tk[1], owb = tw[1];
    /* Cache blocking of the input channels: the weights of one block of
     * tile_ic channels stay in cache while the tile loops reuse them; by
     * default the largest block whose weight panel (kb channels) fits L2. */
    int64_t IC = a->rext[0], icb = IC;
    if (IC > 1) {
        const sch_split_policy ip = {.max_outer = 16};
        int64_t icb0 = sch_hw_l2_block(t->hw, IC, kb * a->rext[1] * a->rext[2] * 4, ip.max_outer);
        const int64_t di[2] = {IC / icb0, icb0};
        icb = sch_define_split_policy(t, "tile_ic", IC, 2, &ip, di)[1];
    }
    sch_tensor *pad = pad_of(s, a);
    int64_t pad_inline = pad ? sch_define_knob(t, "pad_inline", 2, off_on, 0) : 0;
    static const char *const kw_loop[1] = {"kw"};
    static const int64_t kw_kinds[2] = {SCH_LOOP_SERIAL, SCH_LOOP_UNROLLED};
    sch_loop_kind kw_kind = a->rext[2] > 1 ? (sch_loop_kind)sch_define_annotate(t, "unroll_kw", 1, kw_loop, 2,
                                                                                 kw_kinds, 0)[0]
                                           : SCH_LOOP_SERIAL;
    int64_t pack = depthwise ? 0 : sch_define_knob(t, "pack_weight", 2, off_on, 1);
    /* The order of the parallel tile loops: channel tiles outside rows (a
     * weight panel reused down the image) or rows outside channel tiles (an
     * input row reused across the channels). */
    static const char *const outer_loops[2] = {"oc", "oh"};
    static const int64_t outer_orders[4] = {0, 1, 1, 0};
    const int64_t *ord = sch_define_reorder(t, "order_outer", 2, outer_loops, 2, outer_orders, 0);
    /* Where the input-channel blocks sit: inside the column tile (the tile
     * accumulates in registers over all of them) or outside the row's
     * column tiles (a block of weights reused along the whole row, the row's
     * accumulators kept in a buffer between blocks). */
    static const char *const ic_loops[2] = {"ow", "ic"};
    bool ic_outside = IC > 1 && sch_define_reorder(t, "order_ic", 2, ic_loops, 2, outer_orders, 0)[0] == 1;
    if (vec_ow)
        pack = 0; /* a broadcast weight needs no layout */
    if (pad && !pad_inline)
        SCH_TRY(t, sch_compute_root(s, pad));
    sch_tensor *w = weight_of(s, a);
    if (pack && w)
        SCH_TRY(t, sch_pack(s, a, w, 0, kb, NULL));
    if (t->err)
        return;
    /* the output: tiles of kb channels x owb columns */
    sch_iter *n = o->leaves.data[0], *oc = o->leaves.data[1], *oh = o->leaves.data[2], *ow = o->leaves.data[3];
    sch_iter *oco, *oci, *owo, *owi, *f;
    SCH_TRY(t, sch_split(s, o, oc, kb, &oco, &oci));
    SCH_TRY(t, sch_split(s, o, ow, owb, &owo, &owi));
    if (t->err)
        return;
    /* The epilogue stores along rows (contiguous) unless the reduction is
     * short: then reading a channel-major tile across rows costs as much as
     * the reduction itself, and it walks the tile in the tile's own layout
     * (strided stores) instead. */
    bool along_tile = vec_ow || red <= 256;
    sch_iter *ovec = along_tile && !vec_ow ? oci : owi, *oreg = ovec == oci ? owi : oci;
    sch_iter *outer[2] = {oco, oh};
    sch_iter *oorder[6] = {n, outer[ord[0]], outer[ord[1]], owo, oreg, ovec};
    SCH_TRY(t, sch_reorder(s, o, 6, oorder));
    SCH_TRY(t, sch_fuse(s, o, n, oorder[1], &f));
    SCH_TRY(t, sch_fuse(s, o, f, oorder[2], &f));
    SCH_TRY(t, sch_annotate(s, o, f, SCH_LOOP_PARALLEL));
    if (ovec->extent > 1)
        SCH_TRY(t, sch_annotate(s, o, ovec, SCH_LOOP_VECTORIZED));
    /* the conv: the same tiles, reductions outside the register block */
    sch_iter *an = a->leaves.data[0], *aoc = a->leaves.data[1], *aoh = a->leaves.data[2], *aow = a->leaves.data[3];
    sch_iter *ic = a->leaves.data[4], *kh = a->leaves.data[5], *kw = a->leaves.data[6];
    sch_iter *aoco, *aoci, *aowo, *aowi, *ici = NULL;
    SCH_TRY(t, sch_split(s, a, aoc, kb, &aoco, &aoci));
    SCH_TRY(t, sch_split(s, a, aow, owb, &aowo, &aowi));
    if (icb < IC)
        SCH_TRY(t, sch_split(s, a, ic, icb, &ic, &ici));
    if (t->err)
        return;
    sch_iter *vec = vec_ow ? aowi : aoci, *reg = vec_ow ? aoci : aowi;
    sch_iter *aorder[10] = {an, aoco, aoh, aowo, ic, kh, kw};
    int na = 7;
    if (ic_outside) {
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
    if (reg->extent > 1 && (!vec_ow || reg->extent <= max_rows))
        SCH_TRY(t, sch_annotate(s, a, reg, SCH_LOOP_UNROLLED));
    if (vec->extent > 1)
        SCH_TRY(t, sch_annotate(s, a, vec, SCH_LOOP_VECTORIZED));
    if (kw_kind != SCH_LOOP_SERIAL)
        SCH_TRY(t, sch_annotate(s, a, kw, kw_kind));
    SCH_TRY(t, sch_compute_at(s, a, o, ic_outside ? f : owo));
    sch_tmpl_finish(t);
}
