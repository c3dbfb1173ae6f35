/* conv2d_1x1.c — the template for 1x1 unpadded convs of any stride
 * (resnet's projections and downsamples, mobilenet's pointwise convs),
 * which compute_nn.c defines as a matrix product over the fused pixel
 * axis: out[n, oc, p] = sum_ic w[oc, ic] x[n, ic, p], p = oh * OW + ow
 * (x subsampled at a stride above 1). Tiling p rather than a row means
 * a 7x7 image is 49 columns and a 56x56 one 3136, a whole number of vectors,
 * where a row of 56 is not. The output (the conv's view and its epilogue,
 * inlined) is tiled into tile_oc channels x tile_p pixels, the tile loops
 * fused and parallel (order_outer: which of them is outside); the product
 * is computed at that loop into a register tile, either vectorized along
 * the pixels (knob vec_p: loads of x contiguous, the weights broadcast,
 * stores along the image) or along the channels (the weight vectors
 * contiguous, the pixels broadcast) where the pixels make no whole vector.
 * The weights are packed to OIHW[tile_oc]o (knob pack_weight), once at
 * compile time for constants: a tile's channels of one ic are then one
 * contiguous run, whichever way it vectorizes. A strided conv's product
 * reads the input's subsampled pixels (compute_nn.c's stride stage): copied
 * once into a contiguous [n, ic, oh, ow] buffer at the root (knob
 * copy_input; 1/stride^2 of the input, parallel and vectorized like any
 * root stage), or read in place. */
#include <string.h>

#include "schedule/schedule.h"

/* What the knobs decided. */
typedef struct px_plan {
    int64_t vec_p;              /* the register tile vectorizes along the pixels */
    int64_t kb, pb;             /* the register tile: output channels x pixels */
    int64_t pack;               /* the weights packed to OIHW[kb]o */
    const int64_t *ord;         /* order_outer: the order of the (oc, p) tile loops */
    sch_tensor *sub;            /* a strided conv's subsampled input stage, else NULL */
    int64_t copy;               /* sub computed at the root (a contiguous copy), else inlined */
} px_plan;

static void px_knobs(sch_tctx *t, const sch_tensor *a, px_plan *p)
{
    const sch_hw *hw = t->hw;
    int64_t K = a->shape[1], P = a->shape[2], IC = a->rext[0], kb0, pb0;
    static const int64_t off_on[2] = {0, 1};
    p->vec_p = sch_define_knob(t, "vec_p", 2, off_on, P % hw->lanes == 0 && !sch_tmpl_rows_short(hw, K, P));
    sch_tmpl_register_tile(hw, K, P, p->vec_p, &kb0, &pb0);
    const int64_t dk[2] = {(K + kb0 - 1) / kb0, kb0}, dp[2] = {(P + pb0 - 1) / pb0, pb0};
    /* both within four vectors (machine.c): the candidates of a knob may
     * not depend on another knob's value (vec_p), so the unrolled one is
     * bounded where it is unrolled (px_product) */
    int64_t ek[6], ep[6];
    int nk = sch_tmpl_tile_cands(hw, K, P, false, sch_hw_max_cols(hw), ek);
    int np = sch_tmpl_tile_cands(hw, K, P, true, sch_hw_max_cols(hw), ep);
    p->kb = sch_define_tile_split(t, "tile_oc", K, sch_hw_max_cols(hw), nk, ek, dk)[1];
    p->pb = sch_define_tile_split(t, "tile_p", P, sch_hw_max_cols(hw), np, ep, dp)[1];
    p->pack = sch_define_knob(t, "pack_weight", 2, off_on, 1);
    /* The tile loops' order moves the least data from beyond L2: channel
     * tiles outside read each weight panel once and the input once per
     * channel tile (once in all where it fits L2); pixel tiles outside read
     * the input once and the whole weight once per pixel tile (once where
     * it fits). On a tie channel tiles go outside, so that the output's
     * stores run along the image: pixel tiles outside win where the input
     * outgrows L2 (resnet50's 256 x 56 x 56 inputs), channel tiles where
     * the input is small (mobilenet's 16 x 112 x 112). A strided conv's
     * subsampled input is copied where the tile loads it as vectors of
     * pixels (in place they would be strided: gathers); a tile that
     * broadcasts its pixels reads them in place, each load one scalar
     * wherever it lies, and saves the copy's pass over the input. A copy
     * breaks the tie the other way: with pixel tiles outside, each thread
     * reads the rows of the copy it wrote itself (stride_copy), where
     * channel tiles outside would have every thread read the other
     * threads' rows from their caches. */
    p->sub = sch_tmpl_call_stage(t->s, a, "stride"); /* compute_nn.c's, at a stride above 1 */
    bool copy0 = p->sub && p->vec_p;
    static const char *const outer_loops[2] = {"oc", "p"};
    static const int64_t outer_orders[4] = {0, 1, 1, 0};
    int64_t l2 = hw->l2 > 0 ? hw->l2 : 1 << 20, x = IC * P * 4, w = K * IC * 4;
    int64_t oc_outside = w + (x <= l2 ? x : x * (K / p->kb)), p_outside = x + (w <= l2 ? w : w * (P / p->pb));
    bool p_first = copy0 ? p_outside <= oc_outside : p_outside < oc_outside;
    p->ord = sch_define_reorder(t, "order_outer", 2, outer_loops, 2, outer_orders, p_first);
    p->copy = p->sub ? sch_define_knob(t, "copy_input", 2, off_on, copy0) : 0;
    /* A channel-vector tile (vec_p 0) whose tile_oc is not whole vectors
     * where the channels are wastes lanes in every FMA: rejected before it
     * is compiled, as conv2d.c's are (tun_next_batch skips it). In
     * session 8's 3,996 records of the zoo (AVX-512) such tiles were 142 of
     * the 1,512 1x1 records, ran at 1.18-580x (median 17x) their task's
     * best and took 53 s of compiling. Unlike conv2d.c this template keeps
     * tiles over the registers: its pixel loop stays a loop there, and such
     * tiles were the best of 19 tasks. Devices keep every tile. */
    if (!p->vec_p)
        sch_tmpl_reject_part_vectors(t, "conv2d (1x1)", "vec_p", K, p->kb);
}

/* The copy of a strided conv's subsampled input, [n, ic, oh, ow]: rows
 * outside channels, the batch and rows fused and parallel, so that the
 * threads split it by pixels as the product's pixel tiles split (a static
 * schedule gives each thread one range of each); each row a vector loop. */
static void stride_copy(sch_tctx *t, sch_tensor *sub)
{
    sch_schedule *s = t->s;
    sch_iter *n = sub->leaves.data[0], *c = sub->leaves.data[1], *h = sub->leaves.data[2], *w = sub->leaves.data[3];
    sch_iter *order[4] = {n, h, c, w}, *f;
    SCH_TRY(t, sch_compute_root(s, sub));
    SCH_TRY(t, sch_reorder(s, sub, 4, order));
    SCH_TRY(t, sch_fuse(s, sub, n, h, &f));
    if (t->err)
        return;
    if (f->extent > 1)
        SCH_TRY(t, sch_annotate(s, sub, f, SCH_LOOP_PARALLEL));
    if (w->extent > 1)
        SCH_TRY(t, sch_annotate(s, sub, w, SCH_LOOP_VECTORIZED));
}

/* The output: the pixel axis fused, tiles of kb channels x pb pixels, the
 * tile loops fused and parallel into *f. */
static void px_output(sch_tctx *t, sch_tensor *o, const px_plan *p, sch_iter **f)
{
    sch_schedule *s = t->s;
    sch_iter *n = o->leaves.data[0], *oc = o->leaves.data[1], *px, *oco, *oci, *po, *pi;
    SCH_TRY(t, sch_fuse(s, o, o->leaves.data[2], o->leaves.data[3], &px));
    if (t->err)
        return;
    SCH_TRY(t, sch_split(s, o, oc, p->kb, &oco, &oci));
    SCH_TRY(t, sch_split(s, o, px, p->pb, &po, &pi));
    if (t->err)
        return;
    sch_iter *outer[2] = {oco, po}, *vec = p->vec_p ? pi : oci, *reg = p->vec_p ? oci : pi;
    sch_iter *order[5] = {n, outer[p->ord[0]], outer[p->ord[1]], reg, vec};
    if (o->shape[2] * o->shape[3] % p->pb == 0) {
        sch_tmpl_conv_output(t, o, 5, order, f);
        return;
    }
    /* Pixel tiles with a tail: their loop stays a loop of its own inside
     * the parallel channel tiles, the product computed at it, so that
     * lowering can split off the last tile (lower.c: a tail is the last
     * iteration of a loop, not of a fused one) */
    sch_iter *tail_order[5] = {n, oco, po, reg, vec}, *par;
    SCH_TRY(t, sch_reorder(s, o, 5, tail_order));
    SCH_TRY(t, sch_fuse(s, o, n, oco, &par));
    SCH_TRY(t, sch_annotate(s, o, par, SCH_LOOP_PARALLEL));
    if (vec->extent > 1)
        SCH_TRY(t, sch_annotate(s, o, vec, SCH_LOOP_VECTORIZED));
    *f = po;
}

/* The product at the output's tile loop at: ic outside the register tile. */
static void px_product(sch_tctx *t, sch_tensor *a, sch_tensor *o, const px_plan *p, sch_iter *at)
{
    sch_schedule *s = t->s;
    sch_iter *n = a->leaves.data[0], *oc = a->leaves.data[1], *px = a->leaves.data[2], *ic = a->leaves.data[3];
    sch_iter *oco, *oci, *po, *pi;
    SCH_TRY(t, sch_split(s, a, oc, p->kb, &oco, &oci));
    SCH_TRY(t, sch_split(s, a, px, p->pb, &po, &pi));
    if (t->err)
        return;
    sch_iter *vec = p->vec_p ? pi : oci, *reg = p->vec_p ? oci : pi;
    sch_iter *order[6] = {n, oco, po, ic, reg, vec};
    SCH_TRY(t, sch_reorder(s, a, 6, order));
    /* an unrolled dimension beyond what the registers hold stays a loop:
     * channel rows beyond the accumulators, pixels beyond the registers */
    if (reg->extent > 1 && reg->extent <= (p->vec_p ? sch_hw_max_rows(t->hw) : t->hw->vregs))
        SCH_TRY(t, sch_annotate(s, a, reg, SCH_LOOP_UNROLLED));
    if (vec->extent > 1)
        SCH_TRY(t, sch_annotate(s, a, vec, SCH_LOOP_VECTORIZED));
    SCH_TRY(t, sch_compute_at(s, a, o, at));
}

void sch_template_conv2d_1x1(sch_tctx *t)
{
    sch_schedule *s = t->s;
    sch_tensor *a = sch_anchor(s), *o = a ? sch_tmpl_reader(s, a) : NULL;
    if (!o || a->ndim != 3 || a->nraxes != 1 || o->output < 0 || o->ndim != 4) {
        sch_template_default(t);
        return;
    }
    px_plan p = {0};
    px_knobs(t, a, &p);
    if (t->err)
        return;
    sch_tensor *w = a->call ? sch_param_tensor(s, a->call->u.call.args[1]) : NULL;
    if (p.pack && w && w->ndim == 4)
        SCH_TRY(t, sch_pack(s, a, w, 0, p.kb, NULL));
    if (p.copy)
        stride_copy(t, p.sub);
    sch_iter *f = NULL;
    px_output(t, o, &p, &f);
    if (t->err)
        return;
    px_product(t, a, o, &p, f);
    if (!t->err)
        sch_tmpl_finish(t);
}
