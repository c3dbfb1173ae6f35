/* conv2d_winograd.c — the template for
 * nn.contrib_conv2d_winograd_without_weight_transform (its stages:
 * schedule/compute_winograd.c). Every stage is computed at the root, in
 * order, so nothing is recomputed (the default schedule computes each
 * transform inside its reader's loops, once per output channel): the
 * matrix tables once, the data's padding inlined into the input transform,
 * the transforms and the output with the root rule of the default template
 * (parallel outer loops, the tiles' axis vectorized innermost).
 *
 * The batched GEMM M[x, y] = U[x, y] V[x, y] (K x C by C x P, P the tiles of
 * the batch) is tiled as the matmul template tiles a product: per (x, y) —
 * the parallel loop — a tile_k x tile_p block of M accumulates over c, the
 * tile_k rows unrolled and the tile_p tiles vectorized (V's tiles are
 * contiguous), so each step is tile_k broadcast weights times tile_p /
 * lanes vectors. The defaults are the machine rules of machine.c: a row
 * spans two vectors when the tiles allow, and rows x vectors fill the
 * accumulator registers. The accumulators live in M itself (a block of it
 * stays in L1 across the c loop). */
#include <string.h>

#include "schedule/schedule.h"

static bool named(const sch_tensor *st, const char *prefix)
{
    return st->kind == SCH_TENSOR_COMPUTE && !strncmp(st->name, prefix, strlen(prefix));
}

/* The GEMM stage's tiles; its leaves are x, y, k, n, ty, tx, c. */
static void schedule_gemm(sch_tctx *t, sch_tensor *mm)
{
    sch_schedule *s = t->s;
    int lanes = t->hw->lanes;
    int64_t K = mm->shape[2], P = mm->shape[3] * mm->shape[4] * mm->shape[5];
    int64_t pb0 = sch_tmpl_vector_factor(P, sch_hw_row_lanes(t->hw), lanes);
    int64_t kb0 = sch_tmpl_divisor(K, sch_hw_acc_regs(t->hw) / ((pb0 + lanes - 1) / lanes));
    const int64_t dp[2] = {P / pb0, pb0}, dk[2] = {K / kb0, kb0};
    int64_t pb = sch_define_split(t, "tile_p", P, 2, sch_hw_max_cols(t->hw), dp)[1];
    int64_t kb = sch_define_split(t, "tile_k", K, 2, sch_hw_max_rows(t->hw), dk)[1];
    static const char *const loops[2] = {"k", "p"};
    static const int64_t orders[4] = {0, 1, 1, 0};
    bool p_outer = sch_define_reorder(t, "order_kp", 2, loops, 2, orders, 0)[0] == 1;
    sch_iter *l[7], *f, *p, *ko, *ki, *po, *pi;
    for (int i = 0; i < 7; i++)
        l[i] = mm->leaves.data[i];
    SCH_TRY(t, sch_fuse(s, mm, l[3], l[4], &p));
    SCH_TRY(t, sch_fuse(s, mm, p, l[5], &p));
    SCH_TRY(t, sch_split(s, mm, l[2], kb, &ko, &ki));
    SCH_TRY(t, sch_split(s, mm, p, pb, &po, &pi));
    if (t->err)
        return;
    sch_iter *order[7] = {l[0], l[1], p_outer ? po : ko, p_outer ? ko : po, l[6], ki, pi};
    SCH_TRY(t, sch_reorder(s, mm, 7, order));
    SCH_TRY(t, sch_fuse(s, mm, l[0], l[1], &f));
    SCH_TRY(t, sch_annotate(s, mm, f, SCH_LOOP_PARALLEL));
    if (kb > 1)
        SCH_TRY(t, sch_annotate(s, mm, ki, SCH_LOOP_UNROLLED));
    if (pb > 1)
        SCH_TRY(t, sch_annotate(s, mm, pi, SCH_LOOP_VECTORIZED));
}

void sch_template_conv2d_winograd(sch_tctx *t)
{
    sch_schedule *s = t->s;
    sch_tensor *mm = NULL;
    for (size_t i = 0; i < s->tensors.len && !t->err; i++) {
        sch_tensor *st = s->tensors.data[i];
        if (named(st, "winograd_bt") || named(st, "winograd_at"))
            SCH_TRY(t, sch_compute_root(s, st));
        else if (named(st, "batched_gemm"))
            mm = st;
    }
    if (!mm || mm->leaves.len != 7) {
        sch_template_default(t);
        return;
    }
    schedule_gemm(t, mm);
    sch_tmpl_finish(t);
}
