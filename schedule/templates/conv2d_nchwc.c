/* conv2d_nchwc.c — the template for nn.contrib_conv2d_NCHWc (data
 * NCHW[x]c, weights OIHW[x]i[y]o, both packed by the alter-layout pass, the
 * weights at compile time). The output (its epilogue inlined, or a copy
 * made by cache_write) is tiled by output columns: per (n, ocb, oh) and
 * column tile the conv is computed into a register tile of tile_ow columns
 * x the y channels of one block, vectorized over the block (contiguous in
 * both weights and output, so no weight packing is left to do here) and
 * unrolled over the columns: per reduction step tile_ow broadcast inputs
 * times y / lanes weight vectors. The reduction runs icb, kh, kw, ic
 * outside the tile. The batch, channel-block and row loops are fused into
 * the parallel loop. The default column tile is the register rule of
 * machine.c: tile_ow x vectors of a block within the accumulators. */
#include "schedule/schedule.h"

void sch_template_conv2d_nchwc(sch_tctx *t)
{
    sch_schedule *s = t->s;
    sch_tensor *a, *o;
    if (!sch_tmpl_anchor_output(t, 5, 4, &a, &o))
        return;
    int64_t OW = a->shape[3], ob = a->shape[4];
    int64_t vecs = sch_hw_vectors(t->hw, ob);
    int64_t rule = sch_hw_acc_regs(t->hw) / vecs > 0 ? sch_hw_acc_regs(t->hw) / vecs : 1;
    /* a row with few divisors (7, 13, 55) takes the rule's tile and a tail */
    int64_t owb0 = sch_tmpl_tail_tile(OW, rule, sch_tmpl_divisor(OW, rule));
    const int64_t dw[2] = {(OW + owb0 - 1) / owb0, owb0};
    int64_t ew[4];
    int nw = sch_tmpl_tail_cands(rule, 1, sch_hw_max_rows(t->hw), ew);
    ew[nw++] = owb0;
    int64_t owb = sch_define_tile_split(t, "tile_ow", OW, sch_hw_max_rows(t->hw), nw, ew, dw)[1];
    /* the output: (n, ocb, oh) fused and parallel, column tiles, the tile */
    sch_iter *owo, *owi, *f, *ol[5];
    for (int i = 0; i < 5; i++)
        ol[i] = o->leaves.data[i];  /* the leaves change with each primitive */
    SCH_TRY(t, sch_split(s, o, ol[3], owb, &owo, &owi));
    if (t->err)
        return;
    sch_iter *oorder[6] = {ol[0], ol[1], ol[2], owo, owi, ol[4]};
    SCH_TRY(t, sch_reorder(s, o, 6, oorder));
    SCH_TRY(t, sch_fuse(s, o, oorder[0], oorder[1], &f));
    SCH_TRY(t, sch_fuse(s, o, f, oorder[2], &f));
    SCH_TRY(t, sch_annotate(s, o, f, SCH_LOOP_PARALLEL));
    if (ob > 1)
        SCH_TRY(t, sch_annotate(s, o, oorder[5], SCH_LOOP_VECTORIZED));
    if (t->err)
        return;
    /* the conv at the column tile: reduction outside, columns unrolled, block
       vectorized. Its columns are split by the tile too (the outer part has
       one iteration once computed at owo), so that the unrolled loop is the
       tile's, not the whole row, however wide the row. */
    sch_iter *aowo, *aowi, *al[9];
    for (int i = 0; i < 9; i++)
        al[i] = a->leaves.data[i];
    SCH_TRY(t, sch_split(s, a, al[3], owb, &aowo, &aowi));
    if (t->err)
        return;
    sch_iter *aorder[10] = {al[0], al[1], al[2], aowo, al[5], al[6], al[7], al[8], aowi, al[4]};
    SCH_TRY(t, sch_reorder(s, a, 10, aorder));
    if (owb > 1)
        SCH_TRY(t, sch_annotate(s, a, aowi, SCH_LOOP_UNROLLED));
    if (ob > 1)
        SCH_TRY(t, sch_annotate(s, a, al[4], SCH_LOOP_VECTORIZED));
    SCH_TRY(t, sch_compute_at(s, a, o, owo));
    sch_tmpl_finish(t);
}
