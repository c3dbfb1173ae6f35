/* matmul.c — the template for nn.dense and nn.batch_matmul. The output
 * (epilogue or cache_write copy) is tiled into tile_y rows x tile_x columns;
 * the product is computed at the tile loop into an accumulator tile kept in
 * registers: per k, tile_y broadcast elements of the left operand times
 * tile_x / lanes vectors of the right one. The right operand is packed so
 * that tile_x consecutive columns of one k are contiguous: (N, K) ->
 * (N/x, K, x) for a dense weight (once, at compile time, when it is a
 * constant), (B, N, K) -> (B, N/x, K, x) for batch_matmul's second operand
 * (each call). The column-tile loop is outermost of the parallel loops, so
 * that a thread keeps its weight panels in its cache while it walks the
 * rows. Knobs tile_k and order_k block the reduction for the cache. */
#include <string.h>

#include "schedule/schedule.h"

/* The parameter (or tuple parameter's field) read as argument i of a's call, or NULL. */
static sch_tensor *param_arg(const sch_schedule *s, const sch_tensor *a, int i)
{
    return a->call && a->call->u.call.nargs > i ? sch_param_tensor(s, a->call->u.call.args[i]) : NULL;
}

void sch_template_matmul(sch_tctx *t)
{
    sch_schedule *s = t->s;
    int lanes = t->hw->lanes;
    sch_tensor *a, *o;
    if (!sch_tmpl_anchor_output(t, 0, 1, &a, &o))
        return;
    bool bmm = !strcmp(a->op, "nn.batch_matmul");
    int nd = a->ndim;
    int64_t N = a->shape[nd - 1], M = nd >= 2 ? a->shape[nd - 2] : 1;
    int64_t nb0 = sch_tmpl_vector_factor(N, sch_hw_row_lanes(t->hw), lanes);
    /* columns that no whole number of vectors divides (109, 1000 on
     * AVX-512) take the rule's two vectors and a tail */
    if (nb0 % lanes && N > sch_hw_row_lanes(t->hw))
        nb0 = sch_hw_row_lanes(t->hw);
    /* rows with few divisors (13, 109) take the rule's rows and a tail; so
     * do rows whose largest divisor under the rule leaves a tile short of
     * accumulators (sch_hw_short_of_acc): AVX2's 1024
     * rows as 4 x 2 vectors (8, the bare minimum) ran dense 1024^3 at 86
     * GFLOP/s on a Zen 3 where the rule's 6 rows and a tail ran 147 */
    int64_t vecs = sch_hw_vectors(t->hw, nb0);
    int64_t rows = sch_hw_acc_regs(t->hw) / vecs;
    int64_t rd = sch_tmpl_divisor(M, rows);
    int64_t mb0 = rd < rows && rows < M && sch_hw_short_of_acc(t->hw, rd * vecs)
                      ? rows
                      : sch_tmpl_tail_tile(M, rows, rd);
    const int64_t dx[2] = {(N + nb0 - 1) / nb0, nb0}, dy[2] = {(M + mb0 - 1) / mb0, mb0};
    /* beside the divisors: the rules' tiles and their neighbours, tails and all */
    int64_t ex[4], ey[4];
    int nx = sch_tmpl_tail_cands(sch_hw_row_lanes(t->hw), lanes, sch_hw_max_cols(t->hw), ex);
    int ny = sch_tmpl_tail_cands(rows, 1, sch_hw_max_rows(t->hw), ey);
    ey[ny++] = mb0;
    const int64_t *tx = sch_define_tile_split(t, "tile_x", N, sch_hw_max_cols(t->hw), nx, ex, dx);
    const int64_t *ty = sch_define_tile_split(t, "tile_y", M, sch_hw_max_rows(t->hw), ny, ey, dy);
    int64_t nb = tx[1], mb = ty[1];
    static const int64_t off_on[2] = {0, 1};
    /* the operand whose columns the vector loop walks, if it is stored
     * with k innermost (dense weights; batch_matmul with transpose_b) */
    sch_tensor *w = NULL;
    int waxis = 0;
    if (!bmm) {
        w = param_arg(s, a, 1);
    } else if (ir_call_attr(a->call, "transpose_b")->i) {
        w = param_arg(s, a, 1);
        waxis = 1;
    }
    int64_t pack = w ? sch_define_knob(t, "pack_weight", 2, off_on, 1) : 0;
    /* Cache blocking of the reduction: tile_k splits k; order_k puts the
     * k blocks inside the row tile (the tile accumulates in registers over
     * all of them) or outside the column panel's row tiles (a block of the
     * panel's weights reused by every row, the panel's accumulators kept in
     * a buffer between blocks). */
    int64_t K = a->rext[0];
    const sch_split_policy kp = {.max_outer = 16};
    /* by default the longest k block whose panel (nb columns) fits L2 */
    int64_t kb0 = sch_hw_l2_block(t->hw, K, nb * 4, kp.max_outer);
    const int64_t dk[2] = {K / kb0, kb0};
    int64_t kb = sch_define_split_policy(t, "tile_k", K, 2, &kp, dk)[1];
    static const char *const k_loops[2] = {"row", "k"};
    static const int64_t k_orders[4] = {0, 1, 1, 0};
    bool k_outside = nd >= 2 && sch_define_reorder(t, "order_k", 2, k_loops, 2, k_orders, 0)[0] == 1;
    if (pack)
        SCH_TRY(t, sch_pack(s, a, w, waxis, nb, NULL));
    if (t->err)
        return;
    /* the output: batch axes, then tiles of rows and columns */
    sch_iter *oi = nd >= 2 ? o->leaves.data[nd - 2] : NULL, *oj = o->leaves.data[nd - 1];
    sch_iter *oio = NULL, *oii = NULL, *ojo, *oji, *f = NULL;
    if (oi)
        SCH_TRY(t, sch_split(s, o, oi, mb, &oio, &oii));
    SCH_TRY(t, sch_split(s, o, oj, nb, &ojo, &oji));
    if (t->err)
        return;
    sch_iter *order[IR_MAX_DIMS + 4];
    int n = 0;
    for (int d = 0; d < nd - 2; d++)
        order[n++] = o->leaves.data[d];
    order[n++] = ojo;
    if (oi) {
        order[n++] = oio;
        order[n++] = oii;
    }
    order[n++] = oji;
    SCH_TRY(t, sch_reorder(s, o, n, order));
    int nouter = n - (oi ? 2 : 1) - (k_outside ? 1 : 0);
    /* A tile loop with a tail stays a loop of its own (lowering splits off
     * its last iteration, lower.c; a fused loop's last iteration is not
     * the tail's): row tiles with a tail are not fused, column tiles with
     * one are the parallel loop alone (or a loop inside the batch's), and
     * the product is computed at the row-tile loop (k blocks outside the
     * rows: at the column tile's). */
    bool col_tail = N % nb != 0, row_tail = oi && !k_outside && M % mb != 0, tail = col_tail || row_tail;
    if (col_tail)
        nouter = nd - 2 > 0 ? nd - 2 : 1;
    else if (row_tail)
        nouter--;
    f = order[0];
    for (int i = 1; i < nouter && !t->err; i++)
        SCH_TRY(t, sch_fuse(s, o, f, order[i], &f));
    SCH_TRY(t, sch_annotate(s, o, f, SCH_LOOP_PARALLEL));
    sch_iter *at = !tail ? f : oio && !k_outside ? oio : ojo;
    if (nb > 1)
        SCH_TRY(t, sch_annotate(s, o, oji, SCH_LOOP_VECTORIZED));
    /* the product: the same tiles; k outside the register block */
    sch_iter *ai = nd >= 2 ? a->leaves.data[nd - 2] : NULL, *aj = a->leaves.data[nd - 1], *k = a->leaves.data[nd];
    sch_iter *aio = NULL, *aii = NULL, *ajo, *aji, *ki = NULL;
    if (ai)
        SCH_TRY(t, sch_split(s, a, ai, mb, &aio, &aii));
    SCH_TRY(t, sch_split(s, a, aj, nb, &ajo, &aji));
    if (kb < K)
        SCH_TRY(t, sch_split(s, a, k, kb, &k, &ki));
    if (t->err)
        return;
    n = 0;
    for (int d = 0; d < nd - 2; d++)
        order[n++] = a->leaves.data[d];
    if (ai && !k_outside)
        order[n++] = aio;
    order[n++] = ajo;
    order[n++] = k;
    if (ai && k_outside)
        order[n++] = aio;
    if (ki)
        order[n++] = ki;
    if (ai)
        order[n++] = aii;
    order[n++] = aji;
    SCH_TRY(t, sch_reorder(s, a, n, order));
    if (aii && mb > 1)
        SCH_TRY(t, sch_annotate(s, a, aii, SCH_LOOP_UNROLLED));
    if (nb > 1)
        SCH_TRY(t, sch_annotate(s, a, aji, SCH_LOOP_VECTORIZED));
    SCH_TRY(t, sch_compute_at(s, a, o, at));
    sch_tmpl_finish(t);
}
