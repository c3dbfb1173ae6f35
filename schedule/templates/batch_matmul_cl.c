/* batch_matmul_cl.c — the device template of nn.batch_matmul (x B x M x K,
 * or B x K x M with transpose_a; y B x K x N, or B x N x K with
 * transpose_b; a batch of 1 broadcast): dense_cl's GEMM (dense_cl.c,
 * sch_tmpl_cl_gemm) for each batch element, the batch on work-group axis
 * 2. The output is tiled into blocks of (wg_m * tile_m) rows x (wg_n *
 * tile_n) columns, one block of one batch element a work-group, each of its
 * wg_m x wg_n work-items a tile_m x tile_n register tile. Two forms, by the
 * knob local_stage:
 *
 *   off: the product inside the inner work-item loop, accumulating in
 *        private registers over the whole reduction; y packed (a launch of
 *        its own, each call: it is no constant) where it is stored k
 *        innermost (transpose_b, bert's scores), so that a tile's columns
 *        of one k are one vector load; a fused epilogue (bert's division by
 *        the head size's root) is the same launch.
 *   on:  k blocked by tile_k outside the work-item loops; at each block the
 *        group's work-items copy the block's tiles of x ((wg_m * tile_m)
 *        rows x tile_k) and of y (tile_k x (wg_n * tile_n) columns, stored
 *        k-major) into __local arrays, wait at a barrier, accumulate the
 *        block, and wait again before the next block's copy; an epilogue
 *        reads the product from a temporary in a launch of its own.
 *
 * Knobs: dense_cl's (tile_m, tile_n, wg_m, wg_n, tile_k up to 32,
 * local_stage) and unroll_k (each k block's loop unrolled), then wg_items
 * (an epilogue's or a pack's grid) and vec (the tile's columns as vectors
 * of that width, device_cl.c). Defaults as dense_cl's (staging off on a
 * cpu device, on elsewhere or as -local-stage says), unroll_k off, vec the
 * device's preferred width (docs/opencl.md). */
#include <string.h>

#include "schedule/schedule.h"

void sch_template_batch_matmul_cl(sch_tctx *t)
{
    sch_schedule *s = t->s;
    sch_tensor *a = sch_anchor(s);
    const ir_expr *call = a ? a->call : NULL;
    if (!a || strcmp(a->op, "nn.batch_matmul") || a->ndim != 3 || a->nraxes != 1 || !call || call->u.call.nargs < 2) {
        sch_template_matmul_cl(t);
        return;
    }
    /* y's staged tile k-major, so that a work-item's columns are one vector */
    static const int k_major[3] = {0, 2, 1};
    bool tb = ir_call_attr(call, "transpose_b")->i;
    sch_tensor *x = sch_param_tensor(s, call->u.call.args[0]), *y = sch_param_tensor(s, call->u.call.args[1]);
    sch_cl_gemm g = {.name = "batch_matmul_cl", .a = a, .batch = 1, .lhs = x, .rhs = y,
                     .rhs_order = tb ? k_major : NULL, .can_stage = x && y && x->ndim == 3 && y->ndim == 3,
                     .pack = tb ? y : NULL, .pack_axis = 1, .unroll_knob = true, .vec_knob = true};
    if (sch_tmpl_cl_gemm_plan(t, &g))
        sch_tmpl_cl_gemm(t, &g);
    sch_tmpl_device_vec(t);
}
