/* fold_scale_axis.c — folds a per-output-channel scale into the weights of
 * the layer that produces it, as TVM's BackwardFoldScaleAxis does:
 *   multiply(conv2d(x, W), s)          → conv2d(x, W')        W'[k] = W[k] * s[k]
 *   multiply(add(conv2d(x, W), b), s)  → add(conv2d(x, W'), b * s)
 * and the same for nn.dense (a scale per output unit). W, s and b must be
 * constants (weights bound with --params; batch-norm scales after constant
 * folding), s and b must vary only along the output channel, and the conv
 * (and add) must have no other user, since they change value. After
 * simplify-inference and fold-constant this turns conv + batch-norm into a
 * conv with folded weights plus a bias add.
 *
 * float16 layers fold too (W, s and b all of the layer's dtype): each folded
 * value is computed in float32 and rounded once to float16, as TVM's
 * fold-constant evaluates multiply(W, s) on a CPU (float16 legalized to
 * float32 and back) and as the interpreter's multiply rounds. The product of
 * two float16 values is exact in float32 (11 + 11 significant bits), so W' is
 * W * s correctly rounded: the rewritten graph differs from the original
 * only in where the float16 roundings fall (once on W * s instead of once on
 * the conv's output and once on the product). */
#include <string.h>

#include "ir/transform/transform.h"

typedef struct folder {
    uint32_t *uses;     /* users of each original node, by id */
    size_t cap;
} folder;

/* Counts the users of each operand (a call's callee is not a use: only
 * values are folded). */
static ir_visit_step count_operands(ir_visitor *v, const ir_expr *e)
{
    folder *f = v->ctx;
    for (int i = e->kind == IR_CALL; i < ir_expr_nchildren(e); i++) {
        const ir_expr *x = ir_expr_child(e, i);
        f->uses = su_grow_zeroed(f->uses, &f->cap, x->id, sizeof *f->uses);
        f->uses[x->id]++;
    }
    return IR_VISIT_DESCEND;
}

static uint32_t uses_of(const folder *f, const ir_expr *e)
{
    return e->id < f->cap ? f->uses[e->id] : 0;
}

/* A constant of dtype dt (float32 or float16, the layer's), else NULL. */
static const ir_tensor *const_of(const ir_expr *e, ir_dtype dt)
{
    return e->kind == IR_CONST && e->u.constant.value->dtype == dt ? e->u.constant.value : NULL;
}

/* True when constant c broadcast against an output of rank `rank` varies at
 * most along axis `axis` of extent k; *stride gets 1 when it does, 0 when
 * c is a single value. */
static bool per_channel(const ir_tensor *c, int rank, int axis, int64_t k, int *stride)
{
    if (c->ndim > rank)
        return false;
    *stride = 0;
    for (int i = 0; i < c->ndim; i++) {
        int out_axis = rank - c->ndim + i;
        if (c->shape[i] == 1)
            continue;
        if (out_axis != axis || c->shape[i] != k)
            return false;
        *stride = 1;
    }
    return true;
}

/* The producer of a scaled output and what it needs: the layer (conv2d or
 * dense) with constant weights, and optionally a constant bias add. */
typedef struct site {
    const ir_expr *layer, *add;     /* originals */
    const ir_tensor *w, *s, *b;
    int axis, s_stride, b_stride;
    int64_t k;
} site;

static bool match_layer(const folder *f, const ir_expr *x, site *st)
{
    const ir_op_def *op = ir_call_op(x);
    if (!op || (op->id != IR_OP_CONV2D && op->id != IR_OP_DENSE) || uses_of(f, x) != 1)
        return false;
    /* the fold scales the weight's first axis as the output's axis 1: NCHW/OIHW only */
    if (op->id == IR_OP_CONV2D && !ir_conv2d_is_nchw(x))
        return false;
    if (!x->type || x->type->kind != IR_TY_TENSOR ||
        (x->type->dtype != IR_FLOAT32 && x->type->dtype != IR_FLOAT16))
        return false;
    st->w = const_of(x->u.call.args[1], x->type->dtype);
    if (!st->w)
        return false;
    st->layer = x;
    st->axis = op->id == IR_OP_CONV2D ? 1 : x->type->ndim - 1;
    st->k = x->type->shape[st->axis];
    return st->w->shape[0] == st->k;
}

static bool match(const folder *f, const ir_expr *mul, site *st)
{
    if (ir_call_op(mul) != ir_op_get(IR_OP_MULTIPLY))
        return false;
    memset(st, 0, sizeof *st);
    if (!mul->type || mul->type->kind != IR_TY_TENSOR)
        return false;
    ir_dtype dt = mul->type->dtype;
    for (int side = 0; side < 2; side++) {
        const ir_expr *x = mul->u.call.args[side], *sc = mul->u.call.args[1 - side];
        if (!(st->s = const_of(sc, dt)))
            continue;
        if (ir_call_op(x) == ir_op_get(IR_OP_ADD) && uses_of(f, x) == 1) {
            for (int bs = 0; bs < 2; bs++) {
                const ir_tensor *b = const_of(x->u.call.args[1 - bs], dt);
                if (b && match_layer(f, x->u.call.args[bs], st)) {
                    st->add = x;
                    st->b = b;
                    break;
                }
            }
        } else {
            match_layer(f, x, st);
        }
        int rank = st->layer ? st->layer->type->ndim : 0;
        if (st->layer && per_channel(st->s, rank, st->axis, st->k, &st->s_stride) &&
            (!st->b || (per_channel(st->b, rank, st->axis, st->k, &st->b_stride) &&
                        (st->b_stride || !st->s_stride))) && /* b*s must keep b's shape */
            ir_type_equal(st->layer->type, mul->type))
            return true;
        memset(st, 0, sizeof *st);
    }
    return false;
}

/* x[i] * s[j] computed in float32 (ir_tensor_set then rounds it once to a
 * float16 tensor's dtype, to nearest even). */
static double scaled(const ir_tensor *x, int64_t i, const ir_tensor *s, int64_t j)
{
    return (double)((float)ir_tensor_get(x, i) * (float)ir_tensor_get(s, j));
}

static ir_expr *fold(tr_rewriter *rw, ir_expr *e)
{
    folder *f = rw->ctx;
    site st;
    if (!match(f, rw->orig, &st))
        return e;
    ir_module *m = rw->m;
    ir_dtype dt = st.w->dtype;
    ir_tensor *w = ir_tensor_new(&m->arena, dt, st.w->ndim, st.w->shape);
    int64_t per = ir_tensor_numel(st.w) / st.k;
    for (int64_t k = 0; k < st.k; k++)
        for (int64_t i = 0; i < per; i++)
            ir_tensor_set(w, k * per + i, scaled(st.w, k * per + i, st.s, k * st.s_stride));
    /* the layer as rewritten so far (its data input may have changed) */
    ir_expr *layer = tr_rewrite(rw, (ir_expr *)st.layer);
    ir_expr *args[2] = {layer->u.call.args[0], ir_const(m, st.layer->span, w)};
    ir_expr *r = ir_call(m, layer->span, layer->u.call.fn, 2, args, layer->u.call.attrs);
    if (st.add) {
        ir_tensor *b = ir_tensor_new(&m->arena, dt, st.b->ndim, st.b->shape);
        for (int64_t i = 0, n = ir_tensor_numel(st.b); i < n; i++)
            ir_tensor_set(b, i, scaled(st.b, i, st.s, st.s_stride ? i % st.k : 0));
        ir_expr *a2[2] = {r, ir_const(m, st.add->span, b)};
        r = ir_op_call(m, st.add->span, IR_OP_ADD, 2, a2, NULL);
    }
    return r;
}

bool tr_fold_scale_axis(ir_module *m, const tr_options *o, su_diags *d)
{
    folder f = {0};
    ir_visitor v;
    ir_visitor_init(&v, count_operands, NULL, &f);
    for (size_t i = 0; i < m->defs.len; i++)
        ir_visit(&v, m->defs.data[i].func);
    ir_visitor_free(&v);
    bool okk = tr_apply(m, fold, &f);
    free(f.uses);
    return okk;
}
