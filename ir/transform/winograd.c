/* winograd.c — the winograd pass (`--winograd`, TVM's alter_op_layout to
 * contrib_conv2d_winograd_without_weight_transform): each conv2d that
 * F(m x m, 3 x 3) computes — NCHW/OIHW, a constant 3x3 weight, strides 1,
 * dilation 1, groups 1, any padding, float — becomes
 *   nn.contrib_conv2d_winograd_without_weight_transform(x,
 *       nn.contrib_conv2d_winograd_weight_transform(W, tile_size=m), tile_size=m)
 * with the weight transform folded here at once (the weight is constant), so
 * a compiled model reads U = G W G^T and never transforms a weight at
 * inference. Epilogues (bias, relu, residual add) stay as they are and
 * fuse-ops fuses them into the new anchor as into conv2d. A conv whose weight
 * is a parameter is left alone: transforming it on every call costs what the
 * conv saves on small images. m is o->winograd_tile when given, else the
 * rule of ir_winograd_tile_for (docs/winograd.md). The pass runs after
 * fold-scale-axis (batch-norm scales are in W by then) and before
 * alter-layout (which leaves the new op in NCHW). */
#include <string.h>

#include "ir/transform/transform.h"

bool tr_winograd_conv_ok(const ir_expr *e)
{
    int64_t pad[4];
    if (ir_call_op(e) != ir_op_get(IR_OP_CONV2D) || !ir_conv2d_is_nchw(e))
        return false;
    const ir_expr *w = e->u.call.args[1];
    const ir_type *d = e->u.call.args[0]->type, *wt = w->type;
    const char *odt = ir_attr_str(e->u.call.attrs, IR_CONV_OUT_DTYPE);
    return w->kind == IR_CONST && wt && wt->kind == IR_TY_TENSOR && wt->ndim == 4 && wt->shape[2] == IR_WINO_R &&
           wt->shape[3] == IR_WINO_R && d && d->kind == IR_TY_TENSOR && d->ndim == 4 && ir_dtype_is_float(d->dtype) &&
           d->dtype == wt->dtype && (!*odt || !strcmp(odt, ir_dtype_name(d->dtype))) &&
           ir_winograd_window(e->u.call.attrs, pad);
}

/* The rule measured on resnet's layers (docs/winograd.md, "The automatic
 * choice"). Of the tiles whose count P = N ceil(OH/m) ceil(OW/m) fills at
 * least two vectors (the batched GEMM vectorizes along the tiles, a row of
 * its register tile two vectors of them, and each weight of U serves P
 * tiles: F(4x4) at 14 x 14, 16 tiles, read a 9.4 MB U for 16 FMAs a weight
 * and ran slower than the direct conv in the model on 2 threads), the one
 * that cuts the products most,
 * 9 OH OW / (alpha^2 P) (padding tiles included): where that cut is below
 * 2x, the transforms cost about what the GEMM saves (F(2x2) at 7 x 7, a 1.7x
 * cut: 0.97x the direct conv's time on AVX-512, 1.08x on AVX2), so the conv
 * stays direct. The input channels are each tile's GEMM depth: per tile
 * and output channel the output transform costs 240 products at F(4x4),
 * the GEMM 36 C, and the transforms run far from the FMA peak (they are
 * loads and stores as much as products), so below 64 channels they
 * outweigh what the GEMM saves (squeezenet's expand convs, 2 threads: 16
 * channels 0.64-0.86x the direct conv's speed, 32 0.75-0.97x, 48 1.0x, 64
 * 1.12x). Fewer output channels than a vector leave the GEMM's rows idle. */
int tr_winograd_pick(const ir_expr *e, int lanes)
{
    const ir_type *d = e->u.call.args[0]->type, *o = e->type;
    if (lanes <= 0 || d->shape[1] < 64 || o->shape[1] < lanes)
        return 0;
    int best = 0;
    double best_cut = 2.0;
    for (int64_t m = 4; m >= 2; m -= 2) {
        int64_t p = o->shape[0] * ((o->shape[2] + m - 1) / m) * ((o->shape[3] + m - 1) / m);
        double cut = 9.0 * (double)(o->shape[0] * o->shape[2] * o->shape[3]) / ((double)((m + 2) * (m + 2)) * (double)p);
        if (p >= 2 * (int64_t)lanes && cut >= best_cut) {
            best = (int)m;
            best_cut = cut;
        }
    }
    return best;
}

/* A typed call of op on args with attrs; NULL when it does not type-check. */
static ir_expr *typed_call(ir_module *m, su_span sp, ir_op_id op, int n, ir_expr *const *args, const ir_attrs *at)
{
    ir_expr *r = ir_op_call(m, sp, op, n, args, at);
    su_diags d = {0};
    bool typed = ir_infer_expr(m, r, &d);
    su_diags_free(&d);
    return typed ? r : NULL;
}

static ir_expr *rewrite(tr_rewriter *rw, ir_expr *e)
{
    if (!tr_winograd_conv_ok(e))
        return e;
    const tr_options *o = rw->ctx;
    ir_module *m = rw->m;
    /* the tile asked for, else the rule's (auto) or the shape's */
    int64_t tile = o->winograd_tile;
    if (o->winograd == TR_WINOGRAD_AUTO) {
        int64_t pick = tr_winograd_pick(e, o->winograd_lanes);
        if (!pick)
            return e;
        tile = tile ? tile : pick;
    } else if (!tile) {
        tile = ir_winograd_tile_for(e->type->shape[2], e->type->shape[3]);
    }
    ir_attr_val *tv = su_arena_alloc(&m->arena, sizeof *tv);
    *tv = (ir_attr_val){.kind = IR_AV_INT, .i = tile};
    ir_attrs *wat = su_arena_alloc(&m->arena, sizeof *wat);
    *wat = (ir_attrs){1, tv};
    ir_expr *u = typed_call(m, e->span, IR_OP_WINOGRAD_WEIGHT, 1, &e->u.call.args[1], wat);
    if (!u || (u = tr_fold_call(m, u))->kind != IR_CONST)
        return e;
    const ir_attrs *old = e->u.call.attrs;
    ir_attr_val *v = su_arena_alloc(&m->arena, sizeof *v * (size_t)(IR_WINO_TILE_SIZE + 1));
    memcpy(v, old->vals, sizeof *v * (size_t)IR_WINO_TILE_SIZE);
    v[IR_CONV_OUT_LAYOUT].s = "";
    v[IR_WINO_TILE_SIZE] = *tv;
    ir_attrs *at = su_arena_alloc(&m->arena, sizeof *at);
    *at = (ir_attrs){IR_WINO_TILE_SIZE + 1, v};
    ir_expr *args[2] = {e->u.call.args[0], u};
    ir_expr *r = typed_call(m, e->span, IR_OP_CONV2D_WINOGRAD, 2, args, at);
    return r && ir_type_equal(r->type, e->type) ? r : e;
}

bool tr_winograd(ir_module *m, const tr_options *o, su_diags *d)
{
    if (!o->winograd)
        return true;
    return tr_apply(m, rewrite, (void *)o);
}
