/* conv2d_winograd.c — the template for
 * nn.contrib_conv2d_winograd_without_weight_transform (its stages:
 * schedule/compute_winograd.c), version 2. Nothing is recomputed (the
 * default schedule would compute each transform inside its reader's loops,
 * once per output channel): the matrix tables at the root, the padded data
 * inlined into the input transform's first step (contiguous along the
 * rows, so its bounds check is a masked load: 17% faster at resnet's 56x56
 * layer than a padded copy at the root), the input transform per input
 * channel with its first step and its sums in registers (schedule_input),
 * the batched GEMM in register tiles (schedule_gemm), the output transform
 * per output channel with its first step in L1 (schedule_output), and the
 * output pixels inlined into the epilogue.
 *
 * The batched GEMM M[x, y] = U[x, y] V[x, y] (K x C by C x P, P the tiles of
 * the batch) is tiled as the matmul template tiles a product: per (x, y) —
 * the parallel loop — a tile_k x tile_p block accumulates over c in a
 * register tile, the tile_k rows unrolled and the tile_p tiles vectorized
 * (V's tiles are contiguous), so each step is tile_k broadcast weights times
 * tile_p / lanes vectors. The defaults are the machine rules of machine.c
 * (docs/targets.md): a row spans two vectors (with a tail where no whole
 * number of vectors divides P), and rows x vectors fill the accumulator
 * registers. */
#include <string.h>

#include "schedule/schedule.h"

static bool named(const sch_tensor *st, const char *prefix)
{
    return st->kind == SCH_TENSOR_COMPUTE && !strncmp(st->name, prefix, strlen(prefix));
}

/* The GEMM stage's tiles (its leaves: x, y, k, p, c). cache_write moves
 * the products into a new stage computed at the copy's block loop, so a
 * tile_k x tile_p block accumulates over c in a local tile (registers,
 * once gcc unrolls and vectorizes it) and M is written once; the copy (M
 * itself) walks the same blocks: per (x, y) — the parallel loop — k blocks
 * and tile blocks in order_kp's order. */
static void schedule_gemm(sch_tctx *t, sch_tensor *mm)
{
    sch_schedule *s = t->s;
    int lanes = t->hw->lanes;
    int64_t K = mm->shape[2], P = mm->shape[3];
    int64_t pb0 = sch_tmpl_vector_factor(P, sch_hw_row_lanes(t->hw), lanes);
    /* tiles that no whole number of vectors divides (196 at 56 x 56, 49 at
       28 x 28) take the rule's two vectors and a tail, as matmul's columns */
    if (pb0 % lanes && P > sch_hw_row_lanes(t->hw))
        pb0 = sch_hw_row_lanes(t->hw);
    int64_t kb0 = sch_tmpl_divisor(K, sch_hw_acc_regs(t->hw) / sch_hw_vectors(t->hw, pb0));
    const int64_t dp[2] = {(P + pb0 - 1) / pb0, pb0}, dk[2] = {K / kb0, kb0};
    int64_t ex[4];
    int nx = sch_tmpl_tail_cands(sch_hw_row_lanes(t->hw), lanes, sch_hw_max_cols(t->hw), ex);
    int64_t pb = sch_define_tile_split(t, "tile_p", P, sch_hw_max_cols(t->hw), nx, ex, dp)[1];
    int64_t kb = sch_define_split(t, "tile_k", K, 2, sch_hw_max_rows(t->hw), dk)[1];
    static const char *const loops[2] = {"k", "p"};
    static const int64_t orders[4] = {0, 1, 1, 0};
    bool p_outer = sch_define_reorder(t, "order_kp", 2, loops, 2, orders, 0)[0] == 1;
    sch_tensor *acc = NULL;
    SCH_TRY(t, sch_cache_write(s, mm, &acc));
    sch_iter *at = NULL;
    for (int pass = 0; pass < 2 && !t->err; pass++) {
        sch_tensor *st = pass ? acc : mm;
        sch_iter *l[5], *f, *ko, *ki, *po, *pi;
        for (int i = 0; i < 4 + pass; i++)
            l[i] = st->leaves.data[i];
        SCH_TRY(t, sch_split(s, st, l[2], kb, &ko, &ki));
        SCH_TRY(t, sch_split(s, st, l[3], pb, &po, &pi));
        if (t->err)
            return;
        sch_iter *outer = p_outer ? po : ko, *inner = p_outer ? ko : po;
        /* the products keep c outside the register block */
        sch_iter *copy[6] = {l[0], l[1], outer, inner, ki, pi}, *prod[7] = {l[0], l[1], outer, inner, l[4], ki, pi};
        SCH_TRY(t, sch_reorder(s, st, pass ? 7 : 6, pass ? prod : copy));
        if (!pass) {
            SCH_TRY(t, sch_fuse(s, st, l[0], l[1], &f));
            SCH_TRY(t, sch_annotate(s, st, f, SCH_LOOP_PARALLEL));
            at = inner;
        }
        /* the products' rows unrolled; the copy of the register tile into M
           keeps its rows a loop: unrolled too, gcc 12 kept the accumulators
           in memory on AVX2 (every one of the 4 x 2 ymm of resnet's 28 x 28
           layer reloaded and stored at each step of c: 2.8 against 2.2 ms
           of the direct conv) */
        if (kb > 1)
            SCH_TRY(t, sch_annotate(s, st, ki, pass ? SCH_LOOP_UNROLLED : SCH_LOOP_ROLLED));
        if (pb > 1)
            SCH_TRY(t, sch_annotate(s, st, pi, SCH_LOOP_VECTORIZED));
    }
    SCH_TRY(t, sch_compute_at(s, acc, mm, at));
}

/* The input transform. V (leaves x, y, c, t, tx) is written per x and c —
 * the parallel loop — one tile row t at a time, all alpha rows y of it
 * from a tile of alpha x tw sums that cache_write makes (its loops: y and
 * the taps j unrolled, the row's tiles tx vectorized on their own): each
 * strided load of (B^T d) feeds alpha FMAs and the sums stay in registers.
 * The first step (B^T d for that x, c and row: alpha taps i over the
 * contiguous padded width) is computed at the row too, into a row of
 * registers. The root rule would fuse the short tile row with t, and every
 * lane would then divide its index by the row's length (64-bit divisions,
 * which do not vectorize). */
static void schedule_input(sch_tctx *t, sch_tensor *bd, sch_tensor *v)
{
    sch_schedule *s = t->s;
    sch_tensor *vc = NULL;
    SCH_TRY(t, sch_cache_write(s, v, &vc));
    if (t->err)
        return;
    sch_iter *l[5], *f, *c[6], *b[5];
    for (int i = 0; i < 5; i++)
        l[i] = v->leaves.data[i];
    sch_iter *order[5] = {l[0], l[2], l[3], l[1], l[4]};
    SCH_TRY(t, sch_reorder(s, v, 5, order));
    SCH_TRY(t, sch_fuse(s, v, l[0], l[2], &f));
    SCH_TRY(t, sch_annotate(s, v, f, SCH_LOOP_PARALLEL));
    for (int i = 0; i < 6; i++)
        c[i] = vc->leaves.data[i];
    sch_iter *corder[6] = {c[0], c[2], c[3], c[5], c[1], c[4]};
    SCH_TRY(t, sch_reorder(s, vc, 6, corder));
    SCH_TRY(t, sch_annotate(s, vc, c[5], SCH_LOOP_UNROLLED));
    SCH_TRY(t, sch_annotate(s, vc, c[1], SCH_LOOP_UNROLLED));
    for (int i = 0; i < 5; i++)
        b[i] = bd->leaves.data[i];
    sch_iter *border[5] = {b[0], b[1], b[2], b[4], b[3]};
    SCH_TRY(t, sch_reorder(s, bd, 5, border));
    SCH_TRY(t, sch_annotate(s, bd, b[4], SCH_LOOP_UNROLLED));
    SCH_TRY(t, sch_annotate(s, bd, b[3], SCH_LOOP_VECTORIZED));
    if (v->shape[4] > 1) {
        SCH_TRY(t, sch_annotate(s, v, l[4], SCH_LOOP_VECTORIZED));
        SCH_TRY(t, sch_annotate(s, vc, c[4], SCH_LOOP_VECTORIZED));
    }
    SCH_TRY(t, sch_compute_at(s, vc, v, l[3]));
    SCH_TRY(t, sch_compute_at(s, bd, vc, c[3]));
}

/* The output transform (ay, leaves a, b, k, p, y): k the parallel loop,
 * then a, b, the taps y and the tiles vectorized; its first step (am =
 * A^T M, leaves a, y, k, p, x: m x alpha rows of P sums for that k, 19 KB
 * at 56 x 56) computed at the parallel loop, so that M is read once and
 * the sums stay in L1. (With a and k the parallel loop, am was computed per
 * a and every a read all of M's alpha^2 rows of its k again: M read m
 * times.) */
static void schedule_output(sch_tctx *t, sch_tensor *ay, sch_tensor *am)
{
    sch_schedule *s = t->s;
    sch_iter *y[5], *x[5];
    for (int i = 0; i < 5; i++) {
        y[i] = ay->leaves.data[i];
        x[i] = am->leaves.data[i];
    }
    sch_iter *yorder[5] = {y[2], y[0], y[1], y[4], y[3]}, *xorder[5] = {x[2], x[0], x[1], x[4], x[3]};
    SCH_TRY(t, sch_reorder(s, ay, 5, yorder));
    SCH_TRY(t, sch_annotate(s, ay, y[2], SCH_LOOP_PARALLEL));
    SCH_TRY(t, sch_reorder(s, am, 5, xorder));
    if (ay->shape[3] > 1) {
        SCH_TRY(t, sch_annotate(s, ay, y[3], SCH_LOOP_VECTORIZED));
        SCH_TRY(t, sch_annotate(s, am, x[3], SCH_LOOP_VECTORIZED));
    }
    SCH_TRY(t, sch_compute_at(s, am, ay, y[2]));
}

void sch_template_conv2d_winograd(sch_tctx *t)
{
    sch_schedule *s = t->s;
    sch_tensor *mm = NULL, *v = NULL, *bd = NULL, *am = NULL, *ay = NULL;
    for (size_t i = 0; i < s->tensors.len && !t->err; i++) {
        sch_tensor *st = s->tensors.data[i];
        if (named(st, "winograd_bt") || named(st, "winograd_at"))
            SCH_TRY(t, sch_compute_root(s, st));
        else if (named(st, "batched_gemm"))
            mm = st;
        else if (named(st, "output_transform_rows"))
            am = st;
        else if (named(st, "output_transform"))
            ay = st;
        else if (named(st, "input_transform_rows"))
            bd = st;
        else if (named(st, "input_transform"))
            v = st;
    }
    if (!mm || mm->leaves.len != 5 || !v || v->leaves.len != 6 || !bd || bd->leaves.len != 5 || !am ||
        am->leaves.len != 5 || !ay || ay->leaves.len != 5) {
        sch_template_default(t);
        return;
    }
    schedule_input(t, bd, v);
    schedule_gemm(t, mm);
    schedule_output(t, ay, am);
    sch_tmpl_finish(t);
}
