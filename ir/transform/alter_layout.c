/* alter_layout.c — blocked layouts through the graph (TVM's AlterOpLayout):
 * each conv2d (NCHW/OIHW, groups=1) becomes nn.contrib_conv2d_NCHWc on data
 * in NCHW[x]c with its weight in OIHW[x]i[y]o, and the elementwise and
 * broadcast ops after it run on the blocked tensor too, so that a chain of
 * convs passes blocked activations from one to the next. A layout_transform
 * back to NCHW is left after every rewritten node, and a consumer that
 * reads the blocked value takes the node under it instead, so transforms
 * survive only at the graph's edges and before the ops that need NCHW
 * (dense, reshape, pooling, softmax...); the unused ones are dropped with
 * the old graph. A constant weight's transform is folded here, so no weight
 * is repacked at inference.
 *
 * The block: a conv's input block is its producer's (no transform between
 * them), or the largest divisor of its channels up to options->layout_block
 * at a graph input; its output block is the largest divisor of its output
 * channels up to layout_block. With layout_auto both come from layout_dp.c's
 * graph-level choice instead (or its forced variant layout_force, the
 * graph whose tasks are those of one candidate block). The pass runs only when layout_block > 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/transform/transform.h"

/* The pass's state: the block bound, and the blocked copies made of plain
 * nodes, so that a node read blocked by two consumers is transformed once. */
typedef struct blocked_copy {
    uint32_t id;        /* the plain node */
    int64_t b;
    ir_expr *node;
} blocked_copy;

typedef struct alter_ctx {
    int64_t most;
    SU_VEC(blocked_copy) copies;
    const tr_block_choices *chosen;   /* --layout-auto: layout_dp.c's blocks (NULL: the rule) */
    size_t nconv;                     /* the convs rewritten so far */
} alter_ctx;

/* The largest divisor of n that is at most most. */
static int64_t block_for(int64_t n, int64_t most)
{
    for (int64_t b = most < n ? most : n; b > 1; b--)
        if (n % b == 0)
            return b;
    return 1;
}

static const char *layout_str(ir_module *m, const char *fmt, int64_t x, int64_t y)
{
    char buf[64];
    snprintf(buf, sizeof buf, fmt, (long long)x, (long long)y);
    return su_arena_strdup(&m->arena, buf);
}

/* The block b of e when e is layout_transform(y, "NCHW[b]c" -> "NCHW"), with
 * y in *under; 0 otherwise. */
static int64_t blocked_under(const ir_expr *e, ir_expr **under)
{
    int64_t b;
    if (ir_call_op(e) != ir_op_get(IR_OP_LAYOUT_TRANSFORM) || strcmp(ir_call_attr(e, "dst_layout")->s, "NCHW"))
        return 0;
    const char *src = ir_call_attr(e, "src_layout")->s;
    char tail[4];
    if (sscanf(src, "NCHW%lld%3s", (long long *)&b, tail) != 2 || strcmp(tail, "c") || b <= 0)
        return 0;
    *under = e->u.call.args[0];
    return b;
}

/* A typed layout_transform of x from src to dst, folded when x is constant. */
static ir_expr *relayout(tr_rewriter *rw, ir_expr *x, const char *src, const char *dst)
{
    ir_module *m = rw->m;
    const ir_op_def *op = ir_op_get(IR_OP_LAYOUT_TRANSFORM);
    ir_attr_val *v = su_arena_alloc(&m->arena, sizeof *v * 2);
    v[0] = (ir_attr_val){.kind = IR_AV_STR, .s = src};
    v[1] = (ir_attr_val){.kind = IR_AV_STR, .s = dst};
    ir_attrs *at = su_arena_alloc(&m->arena, sizeof *at);
    at->n = op->schema->n;
    at->vals = v;
    ir_expr *r = ir_op_call(m, x->span, IR_OP_LAYOUT_TRANSFORM, 1, &x, at);
    su_diags d = {0};
    bool typed = ir_infer_expr(m, r, &d);
    su_diags_free(&d);
    return typed && x->kind == IR_CONST ? tr_fold_call(m, r) : r;
}

/* x (NCHW, or a blocked node under a transform back to NCHW) in NCHW[b]c. */
static ir_expr *to_blocked(tr_rewriter *rw, ir_expr *x, int64_t b)
{
    ir_expr *under;
    int64_t have = blocked_under(x, &under);
    if (have == b)
        return under;
    alter_ctx *cx = rw->ctx;
    for (size_t i = 0; i < cx->copies.len; i++)
        if (cx->copies.data[i].id == x->id && cx->copies.data[i].b == b)
            return cx->copies.data[i].node;
    const char *dst = layout_str(rw->m, "NCHW%lldc", b, 0);
    ir_expr *r = have ? relayout(rw, under, layout_str(rw->m, "NCHW%lldc", have, 0), dst) : relayout(rw, x, "NCHW", dst);
    su_vec_push(&cx->copies, ((blocked_copy){x->id, b, r}));
    return r;
}

static ir_expr *unblocked(tr_rewriter *rw, ir_expr *y, int64_t b)
{
    return relayout(rw, y, layout_str(rw->m, "NCHW%lldc", b, 0), "NCHW");
}

static bool is_rank4_float(const ir_type *t)
{
    return t && t->kind == IR_TY_TENSOR && t->ndim == 4 && ir_dtype_is_float(t->dtype);
}

bool tr_alter_conv_ok(const ir_expr *e)
{
    if (ir_call_op(e) != ir_op_get(IR_OP_CONV2D))
        return false;
    const ir_type *wt = e->u.call.args[1]->type;
    return ir_conv2d_is_nchw(e) && ir_call_attr(e, "groups")->i == 1 && is_rank4_float(e->type) &&
           is_rank4_float(e->u.call.args[0]->type) && wt && wt->kind == IR_TY_TENSOR;
}

/* The DP's blocks for the k-th conv the rewrite meets. The rewriter hands
 * the rule a rebuilt node (a new id), but it meets nodes in the same post
 * order as the DP's walk, so the k-th conv here is the DP's k-th; the
 * channels are checked all the same. False without a choice. */
static bool chosen_blocks(const tr_block_choices *c, size_t k, const ir_expr *e, int64_t *ib, int64_t *ob)
{
    if (!c || k >= c->n || e->u.call.args[0]->type->shape[1] % c->v[k].ib || e->type->shape[1] % c->v[k].ob)
        return false;
    *ib = c->v[k].ib, *ob = c->v[k].ob;
    return true;
}

static ir_expr *alter_conv(tr_rewriter *rw, ir_expr *e, int64_t most)
{
    if (!tr_alter_conv_ok(e))
        return e;
    ir_expr *under;
    alter_ctx *cx = rw->ctx;
    int64_t ib = blocked_under(e->u.call.args[0], &under), ob;
    if (!chosen_blocks(cx->chosen, cx->nconv++, e, &ib, &ob)) {
        if (!ib)
            ib = block_for(e->u.call.args[0]->type->shape[1], most);
        ob = block_for(e->type->shape[1], most);
    }
    ir_module *m = rw->m;
    ir_expr *args[2] = {to_blocked(rw, e->u.call.args[0], ib),
                        relayout(rw, e->u.call.args[1], "OIHW", layout_str(m, "OIHW%lldi%lldo", ib, ob))};
    const ir_attrs *old = e->u.call.attrs;
    ir_attr_val *v = su_arena_alloc(&m->arena, sizeof *v * (size_t)old->n);
    memcpy(v, old->vals, sizeof *v * (size_t)old->n);
    v[IR_CONV_DATA_LAYOUT].s = layout_str(m, "NCHW%lldc", ib, 0);
    v[IR_CONV_KERNEL_LAYOUT].s = layout_str(m, "OIHW%lldi%lldo", ib, ob);
    v[IR_CONV_OUT_LAYOUT].s = "";
    ir_attrs *at = su_arena_alloc(&m->arena, sizeof *at);
    at->n = old->n;
    at->vals = v;
    return unblocked(rw, ir_op_call(m, e->span, IR_OP_CONV2D_NCHWC, 2, args, at), ob);
}

/* A constant that broadcasts against NCHW data of c channels as one value
 * per channel (shape (c, 1, 1) or (1, c, 1, 1)) or as one value (all extents
 * 1), as the constant against NCHW[b]c data; NULL for any other. */
static ir_expr *blocked_const(tr_rewriter *rw, const ir_expr *k, int64_t c, int64_t b)
{
    const ir_tensor *t = k->kind == IR_CONST ? k->u.constant.value : NULL;
    if (!t || t->ndim > 4)
        return NULL;
    int64_t n = ir_tensor_numel(t);
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] != 1 && (t->shape[i] != c || t->ndim - i != 3))
            return NULL;
    if (n == 1)
        return (ir_expr *)k;
    int64_t shape[5] = {1, c / b, 1, 1, b};
    /* element cb*b + j of the channel vector lands at [0, cb, 0, 0, j]: the same order */
    ir_tensor *r = ir_tensor_new(&rw->m->arena, t->dtype, 5, shape);
    memcpy(r->data, t->data, (size_t)n * (size_t)ir_dtype_bytes(t->dtype));
    return ir_const(rw->m, k->span, r);
}

static ir_expr *alter_binary(tr_rewriter *rw, ir_expr *e)
{
    ir_expr *a = e->u.call.args[0], *b = e->u.call.args[1], *ua, *ub;
    int64_t ba = blocked_under(a, &ua), bb = blocked_under(b, &ub);
    int side = ba ? 0 : 1;
    int64_t blk = ba ? ba : bb;
    if (!blk || !ir_type_equal(e->type, e->u.call.args[side]->type))
        return e;
    ir_expr *other = e->u.call.args[1 - side], *args[2];
    args[side] = side ? ub : ua;
    if (ir_type_equal(other->type, e->type))
        args[1 - side] = to_blocked(rw, other, blk);
    else if (!(args[1 - side] = blocked_const(rw, other, e->type->shape[1], blk)))
        return e;
    return unblocked(rw, ir_op_call(rw->m, e->span, ir_call_op(e)->id, 2, args, e->u.call.attrs), blk);
}

/* A pool (max, avg, global, adaptive) in NCHW of blocked data: the same
 * pool with layout NCHW[b]c (the relations, kernels and computes take it). */
static ir_expr *alter_pool(tr_rewriter *rw, ir_expr *e)
{
    const ir_op_def *op = ir_call_op(e);
    int idx = ir_op_attr_index(op, "layout", 6), oidx = ir_op_attr_index(op, "out_layout", 10);
    ir_expr *under;
    int64_t b = blocked_under(e->u.call.args[0], &under);
    const ir_attrs *old = e->u.call.attrs;
    if (!b || idx < 0 || oidx < 0 || strcmp(old->vals[idx].s, "NCHW") || *old->vals[oidx].s)
        return e;
    ir_module *m = rw->m;
    ir_attr_val *v = su_arena_alloc(&m->arena, sizeof *v * (size_t)old->n);
    memcpy(v, old->vals, sizeof *v * (size_t)old->n);
    v[idx].s = layout_str(m, "NCHW%lldc", b, 0);
    ir_attrs *at = su_arena_alloc(&m->arena, sizeof *at);
    at->n = old->n;
    at->vals = v;
    return unblocked(rw, ir_op_call(m, e->span, op->id, 1, &under, at), b);
}

bool tr_alter_passes_block(const ir_expr *e)
{
    const ir_op_def *op = ir_call_op(e);
    if (!op || !is_rank4_float(e->type))
        return false;
    if (op->id == IR_OP_MAX_POOL2D || op->id == IR_OP_AVG_POOL2D || op->id == IR_OP_GLOBAL_AVG_POOL2D ||
        op->id == IR_OP_ADAPTIVE_AVG_POOL2D) {
        int idx = ir_op_attr_index(op, "layout", 6), oidx = ir_op_attr_index(op, "out_layout", 10);
        return idx >= 0 && oidx >= 0 && !strcmp(e->u.call.attrs->vals[idx].s, "NCHW") && !*e->u.call.attrs->vals[oidx].s;
    }
    return (op->pattern == IR_PAT_ELEMWISE && e->u.call.nargs == 1 && op->id != IR_OP_FULL) ||
           (op->pattern == IR_PAT_BROADCAST && e->u.call.nargs == 2 && op->schema->n == 0);
}

static ir_expr *alter(tr_rewriter *rw, ir_expr *e)
{
    const ir_op_def *op = ir_call_op(e);
    const alter_ctx *cx = rw->ctx;
    if (!op || !is_rank4_float(e->type))
        return e;
    if (op->id == IR_OP_CONV2D)
        return alter_conv(rw, e, cx->most);
    if (op->id == IR_OP_MAX_POOL2D || op->id == IR_OP_AVG_POOL2D || op->id == IR_OP_GLOBAL_AVG_POOL2D ||
        op->id == IR_OP_ADAPTIVE_AVG_POOL2D)
        return alter_pool(rw, e);
    ir_expr *under;
    int64_t b;
    if (op->pattern == IR_PAT_ELEMWISE && e->u.call.nargs == 1 && op->id != IR_OP_FULL &&
        (b = blocked_under(e->u.call.args[0], &under)))
        return unblocked(rw, ir_op_call(rw->m, e->span, op->id, 1, &under, e->u.call.attrs), b);
    if (op->pattern == IR_PAT_BROADCAST && e->u.call.nargs == 2 && op->schema->n == 0)
        return alter_binary(rw, e);
    return e;
}

bool tr_alter_layout(ir_module *m, const tr_options *o, su_diags *d)
{
    if (o->layout_block <= 0)
        return true;
    alter_ctx cx = {.most = o->layout_block};
    tr_block_choices chosen = {0};
    if (o->layout_auto) {
        tr_layout_dp(m, o, &chosen);
        cx.chosen = &chosen;
    }
    bool okk = tr_apply(m, alter, &cx);
    su_vec_free(&cx.copies);
    free(chosen.v);
    return okk;
}
