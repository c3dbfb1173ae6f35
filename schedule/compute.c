/* compute.c — compute definitions: the table from ops to the functions that
 * define them (in compute_nn.c, compute_tensor.c, compute_transform.c and
 * compute_reduce.c), and the helpers those functions share: making a stage
 * shaped like the call's result, adding reduction axes, reading a tensor with
 * numpy broadcasting, reading attributes by name.
 *
 * A stage is TVM's compute: out[axes] = body, where body reads other
 * tensors at index expressions of the axes; a reduction stage combines
 * body over its reduction axes (sum, max or min). Each op's semantics are
 * exactly its type relation's (ir/op_*.c); shapes come from the call's
 * inferred type, so that definitions only say how values are computed. */
#include <math.h>
#include <string.h>

#include "schedule/schedule.h"

static const sch_compute_fn table[IR_OP_COUNT] = {
    [IR_OP_CONV2D] = sch_compute_conv2d,
    [IR_OP_DENSE] = sch_compute_dense,
    [IR_OP_BATCH_MATMUL] = sch_compute_batch_matmul,
    [IR_OP_MAX_POOL2D] = sch_compute_pool2d,
    [IR_OP_AVG_POOL2D] = sch_compute_pool2d,
    [IR_OP_GLOBAL_AVG_POOL2D] = sch_compute_global_pool2d,
    [IR_OP_ADAPTIVE_AVG_POOL2D] = sch_compute_adaptive_pool2d,
    [IR_OP_SOFTMAX] = sch_compute_softmax,
    [IR_OP_LOG_SOFTMAX] = sch_compute_softmax,
    [IR_OP_LAYER_NORM] = sch_compute_layer_norm,
    [IR_OP_BATCH_NORM] = sch_compute_batch_norm,
    [IR_OP_DROPOUT] = sch_compute_dropout,
    [IR_OP_BIAS_ADD] = sch_compute_bias_add,
    [IR_OP_RELU] = sch_compute_unary,
    [IR_OP_LEAKY_RELU] = sch_compute_unary,
    [IR_OP_BATCH_FLATTEN] = sch_compute_reshape,
    [IR_OP_PAD] = sch_compute_pad,
    [IR_OP_ADD] = sch_compute_binary,
    [IR_OP_SUBTRACT] = sch_compute_binary,
    [IR_OP_MULTIPLY] = sch_compute_binary,
    [IR_OP_DIVIDE] = sch_compute_binary,
    [IR_OP_POWER] = sch_compute_binary,
    [IR_OP_MAXIMUM] = sch_compute_binary,
    [IR_OP_MINIMUM] = sch_compute_binary,
    [IR_OP_NEGATIVE] = sch_compute_unary,
    [IR_OP_ABS] = sch_compute_unary,
    [IR_OP_EXP] = sch_compute_unary,
    [IR_OP_LOG] = sch_compute_unary,
    [IR_OP_SQRT] = sch_compute_unary,
    [IR_OP_RSQRT] = sch_compute_unary,
    [IR_OP_TANH] = sch_compute_unary,
    [IR_OP_SIGMOID] = sch_compute_unary,
    [IR_OP_ERF] = sch_compute_unary,
    [IR_OP_CLIP] = sch_compute_unary,
    [IR_OP_CAST] = sch_compute_unary,
    [IR_OP_COPY] = sch_compute_unary,
    [IR_OP_FLOOR] = sch_compute_unary,
    [IR_OP_CEIL] = sch_compute_unary,
    [IR_OP_EQUAL] = sch_compute_binary,
    [IR_OP_NOT_EQUAL] = sch_compute_binary,
    [IR_OP_LESS] = sch_compute_binary,
    [IR_OP_LESS_EQUAL] = sch_compute_binary,
    [IR_OP_GREATER] = sch_compute_binary,
    [IR_OP_GREATER_EQUAL] = sch_compute_binary,
    [IR_OP_LOGICAL_AND] = sch_compute_binary,
    [IR_OP_LOGICAL_OR] = sch_compute_binary,
    [IR_OP_LOGICAL_NOT] = sch_compute_unary,
    [IR_OP_WHERE] = sch_compute_where,
    [IR_OP_RESHAPE] = sch_compute_reshape,
    [IR_OP_TRANSPOSE] = sch_compute_transpose,
    [IR_OP_SQUEEZE] = sch_compute_reshape,
    [IR_OP_EXPAND_DIMS] = sch_compute_reshape,
    [IR_OP_CONCATENATE] = sch_compute_concatenate,
    [IR_OP_SPLIT] = sch_compute_split,
    [IR_OP_STRIDED_SLICE] = sch_compute_strided_slice,
    [IR_OP_TAKE] = sch_compute_take,
    [IR_OP_SUM] = sch_compute_reduce,
    [IR_OP_MEAN] = sch_compute_reduce,
    [IR_OP_MAX] = sch_compute_reduce,
    [IR_OP_MIN] = sch_compute_reduce,
    [IR_OP_PROD] = sch_compute_reduce,
    [IR_OP_ARGMAX] = sch_compute_argmax,
    [IR_OP_STACK] = sch_compute_stack,
    [IR_OP_LAYOUT_TRANSFORM] = sch_compute_layout_transform,
    [IR_OP_CONV1D] = sch_compute_conv1d,
    [IR_OP_CONV3D] = sch_compute_conv3d,
    [IR_OP_MAX_POOL3D] = sch_compute_pool3d,
    [IR_OP_AVG_POOL3D] = sch_compute_pool3d,
    [IR_OP_CONV2D_TRANSPOSE] = sch_compute_conv_transpose,
    [IR_OP_CONV1D_TRANSPOSE] = sch_compute_conv_transpose,
    [IR_OP_CONV3D_TRANSPOSE] = sch_compute_conv_transpose,
    [IR_OP_UPSAMPLING] = sch_compute_resize,
    [IR_OP_RESIZE2D] = sch_compute_resize,
    [IR_OP_ZEROS_LIKE] = sch_compute_init,
    [IR_OP_ONES_LIKE] = sch_compute_init,
    [IR_OP_FULL] = sch_compute_init,
    [IR_OP_SHAPE_OF] = sch_compute_init,
    [IR_OP_ARANGE] = sch_compute_init,
    [IR_OP_CONV2D_NCHWC] = sch_compute_conv2d_nchwc,
    [IR_OP_CONV2D_WINOGRAD] = sch_compute_conv2d_winograd,
};

sch_compute_fn sch_compute_of(ir_op_id op)
{
    return op < IR_OP_COUNT ? table[op] : NULL;
}

bool sch_cctx_error(sch_cctx *cx, const char *fmt, ...)
{
    va_list ap;
    su_buf b = {0};
    const ir_op_def *op = ir_call_op(cx->call);
    su_buf_printf(&b, "cannot lower %s: ", op ? op->name : "call");
    va_start(ap, fmt);
    su_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    su_error(cx->d, cx->call->span, "%s", su_buf_str(&b));
    su_buf_free(&b);
    return false;
}

/* ---- stages ------------------------------------------------------------- */

sch_iter *sch_iter_new(sch_schedule *s, sch_tensor *t, const char *name, sch_var *var, int64_t extent,
                       bool reduce, int root_dim)
{
    sch_iter *it = su_arena_alloc(&s->arena, sizeof *it);
    it->name = su_arena_strdup(&s->arena, name);
    it->var = var;
    it->extent = extent;
    it->reduce = reduce;
    it->kind = SCH_LOOP_SERIAL;
    it->leaf = true;
    it->root_dim = root_dim;
    su_vec_push(&t->iters, it);
    return it;
}

sch_tensor *sch_tensor_add(sch_schedule *s, sch_tensor_kind kind, const char *name, ir_dtype dt, int ndim,
                           const int64_t *shape)
{
    sch_tensor *t = su_arena_alloc(&s->arena, sizeof *t);
    t->kind = kind;
    t->name = su_arena_strdup(&s->arena, name);
    t->id = (int)s->tensors.len;
    t->dtype = dt;
    t->ndim = ndim;
    t->shape = su_arena_alloc(&s->arena, (size_t)(ndim ? ndim : 1) * sizeof *shape);
    if (ndim)
        memcpy((int64_t *)t->shape, shape, (size_t)ndim * sizeof *shape);
    t->output = -1;
    t->param = -1;
    su_vec_push(&s->tensors, t);
    return t;
}

sch_tensor *sch_stage_new(sch_cctx *cx, ir_dtype dt, int ndim, const int64_t *shape, const char *const *names)
{
    sch_schedule *s = cx->s;
    const ir_op_def *op = ir_call_op(cx->call);
    const char *base = cx->tag ? cx->tag : op ? op->name : "stage";
    if (!strncmp(base, "nn.", 3))
        base += 3;
    char name[64];
    snprintf(name, sizeof name, "%s%d", base, s->next_stage++);
    sch_tensor *t = sch_tensor_add(s, SCH_TENSOR_COMPUTE, name, dt, ndim, shape);
    t->op = op ? op->name : "stage";
    t->call = op ? cx->call : NULL;
    t->axes = su_arena_alloc(&s->arena, (size_t)(ndim ? ndim : 1) * sizeof *t->axes);
    for (int i = 0; i < ndim; i++) {
        char nm[16];
        if (!names || !names[i])
            snprintf(nm, sizeof nm, "ax%d", i);
        t->axes[i] = sch_var_new(&s->arena, &s->next_var, names && names[i] ? names[i] : nm, IR_INT64);
        sch_iter *it = sch_iter_new(s, t, t->axes[i]->name, t->axes[i], shape[i], false, i);
        su_vec_push(&t->leaves, it);
    }
    t->attach = SCH_ATTACH_ROOT;
    t->injective = true;
    cx->tag = NULL;
    return t;
}

sch_var *sch_stage_raxis(sch_cctx *cx, sch_tensor *t, const char *name, int64_t n)
{
    sch_schedule *s = cx->s;
    int k = t->nraxes;
    sch_var **nv = su_arena_alloc(&s->arena, (size_t)(k + 1) * sizeof *nv);
    int64_t *ne = su_arena_alloc(&s->arena, (size_t)(k + 1) * sizeof *ne);
    if (k) {
        memcpy(nv, t->raxes, (size_t)k * sizeof *nv);
        memcpy(ne, t->rext, (size_t)k * sizeof *ne);
    }
    nv[k] = sch_var_new(&s->arena, &s->next_var, name, IR_INT64);
    ne[k] = n;
    t->raxes = nv;
    t->rext = ne;
    t->nraxes = k + 1;
    t->injective = false;
    sch_iter *it = sch_iter_new(s, t, name, nv[k], n, true, t->ndim + k);
    su_vec_push(&t->leaves, it);
    return nv[k];
}

const ir_type *sch_out_type(const sch_cctx *cx, int i)
{
    const ir_type *t = cx->call->type;
    if (t && t->kind == IR_TY_TUPLE)
        return i < t->nfields ? t->fields[i] : NULL;
    return t;
}

sch_tensor *sch_stage_like(sch_cctx *cx, int i, const char *const *names)
{
    const ir_type *t = sch_out_type(cx, i);
    return sch_stage_new(cx, t->dtype, t->ndim, t->shape, names);
}

/* ---- reads ---------------------------------------------------------------- */

const sch_expr *sch_read_bcast(su_arena *a, sch_tensor *t, int n, const sch_expr *const *idx)
{
    const sch_expr *ix[IR_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) {
        int j = n - t->ndim + i;
        ix[i] = t->shape[i] == 1 || j < 0 ? sch_int(a, 0) : idx[j];
    }
    return sch_read(a, t, t->ndim, ix);
}

const sch_expr *sch_read_axes(su_arena *a, sch_tensor *t, sch_tensor *stage)
{
    const sch_expr *ix[IR_MAX_DIMS];
    for (int i = 0; i < stage->ndim; i++)
        ix[i] = sch_varref(a, stage->axes[i]);
    return sch_read_bcast(a, t, stage->ndim, ix);
}

const sch_expr *sch_lowest(su_arena *a, ir_dtype dt)
{
    switch (dt) {
    case IR_FLOAT16: case IR_FLOAT32: case IR_FLOAT64: return sch_float(a, dt, -INFINITY);
    case IR_INT8: return sch_const_int(a, dt, INT8_MIN);
    case IR_INT16: return sch_const_int(a, dt, INT16_MIN);
    case IR_INT32: return sch_const_int(a, dt, INT32_MIN);
    case IR_INT64: return sch_const_int(a, dt, INT64_MIN);
    default: return sch_const_int(a, dt, 0);
    }
}

const sch_expr *sch_highest(su_arena *a, ir_dtype dt)
{
    switch (dt) {
    case IR_FLOAT16: case IR_FLOAT32: case IR_FLOAT64: return sch_float(a, dt, INFINITY);
    case IR_INT8: return sch_const_int(a, dt, INT8_MAX);
    case IR_INT16: return sch_const_int(a, dt, INT16_MAX);
    case IR_INT32: return sch_const_int(a, dt, INT32_MAX);
    case IR_INT64: return sch_const_int(a, dt, INT64_MAX);
    case IR_UINT8: return sch_const_int(a, dt, UINT8_MAX);
    default: return sch_const_int(a, dt, 1);
    }
}

/* ---- attributes ----------------------------------------------------------- */

static const ir_attr_val *attr(const sch_cctx *cx, const char *name)
{
    const ir_attr_val *v = ir_call_attr(cx->call, name);
    if (!v)
        su_panic("op %s has no attribute %s", ir_call_op(cx->call)->name, name);
    return v;
}

int64_t sch_attr_int(const sch_cctx *cx, const char *name)
{
    const ir_attr_val *v = attr(cx, name);
    return v->kind == IR_AV_FLOAT ? (int64_t)v->f : v->i;
}

double sch_attr_float(const sch_cctx *cx, const char *name)
{
    const ir_attr_val *v = attr(cx, name);
    return v->kind == IR_AV_FLOAT ? v->f : (double)v->i;
}

bool sch_attr_bool(const sch_cctx *cx, const char *name)
{
    return attr(cx, name)->i != 0;
}

const char *sch_attr_str(const sch_cctx *cx, const char *name)
{
    const ir_attr_val *v = attr(cx, name);
    return v->kind == IR_AV_STR ? v->s : "";
}

bool sch_attr_is_none(const sch_cctx *cx, const char *name)
{
    return attr(cx, name)->kind == IR_AV_NONE;
}

int sch_attr_ints(const sch_cctx *cx, const char *name, int64_t *out, int max)
{
    const ir_attr_val *v = attr(cx, name);
    return v->kind == IR_AV_NONE ? 0 : ir_attr_val_ints(v, out, max);
}
