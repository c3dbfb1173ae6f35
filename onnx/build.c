/* build.c — what every converter shares: reading ONNX attributes, building
 * normalized Relay attrs, and building calls that are typed at once (so the
 * next converter can read static shapes) and folded when their arguments
 * are constants (so Shape → Gather → Concat → Reshape chains become the
 * constant shapes Relay's reshape needs). Errors name the file and node. */
#include <stdarg.h>
#include <string.h>

#include "ir/transform/transform.h"
#include "onnx/onnx.h"

bool ox_fail(ox_ctx *cx, const char *fmt, ...)
{
    su_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    su_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    const Onnx__NodeProto *n = cx->node;
    su_span none = {0};
    if (n)
        su_error(cx->d, none, "%s: node '%s' (%s): %s", cx->file, n->name ? n->name : "",
                 n->op_type ? n->op_type : "", su_buf_str(&b));
    else
        su_error(cx->d, none, "%s: %s", cx->file, su_buf_str(&b));
    su_buf_free(&b);
    return false;
}

/* ---- ONNX attributes ---------------------------------------------------- */

const Onnx__AttributeProto *ox_attr(const Onnx__NodeProto *n, const char *name)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (n->attribute[i]->name && !strcmp(n->attribute[i]->name, name))
            return n->attribute[i];
    return NULL;
}

int64_t ox_attr_int(const Onnx__NodeProto *n, const char *name, int64_t def)
{
    const Onnx__AttributeProto *a = ox_attr(n, name);
    return a && a->has_i ? a->i : def;
}

double ox_attr_float(const Onnx__NodeProto *n, const char *name, double def)
{
    const Onnx__AttributeProto *a = ox_attr(n, name);
    return a && a->has_f ? a->f : def;
}

const char *ox_attr_str(ox_ctx *cx, const Onnx__NodeProto *n, const char *name, const char *def)
{
    const Onnx__AttributeProto *a = ox_attr(n, name);
    if (!a || !a->has_s)
        return def;
    return su_arena_strndup(&cx->m->arena, (const char *)a->s.data, a->s.len);
}

int ox_attr_ints(ox_ctx *cx, const Onnx__NodeProto *n, const char *name, int64_t *out, int max)
{
    const Onnx__AttributeProto *a = ox_attr(n, name);
    if (!a)
        return -1;
    if (a->n_ints > (size_t)max) {
        ox_fail(cx, "attribute %s has %zu values (at most %d are supported)", name, a->n_ints, max);
        return -1;
    }
    if (a->n_ints)
        memcpy(out, a->ints, a->n_ints * sizeof *out);
    return (int)a->n_ints;
}

/* ---- relay attributes --------------------------------------------------- */

ox_attrs ox_attrs_new(ox_ctx *cx, ir_op_id op)
{
    const ir_op_def *def = ir_op_get(op);
    const ir_attrs *d = ir_op_default_attrs(&cx->m->arena, def);
    ox_attrs at;
    at.v = su_arena_dup(&cx->m->arena, d->vals, (size_t)d->n * sizeof *d->vals);
    at.a.n = d->n;
    at.a.vals = at.v;
    return at;
}

void ox_set_int(ox_attrs *at, int idx, int64_t v)
{
    at->v[idx] = (ir_attr_val){.kind = IR_AV_INT, .i = v};
}

void ox_set_float(ox_attrs *at, int idx, double v)
{
    at->v[idx] = (ir_attr_val){.kind = IR_AV_FLOAT, .f = v};
}

void ox_set_bool(ox_attrs *at, int idx, bool v)
{
    at->v[idx] = (ir_attr_val){.kind = IR_AV_BOOL, .i = v};
}

void ox_set_str(ox_attrs *at, int idx, const char *s)
{
    at->v[idx] = (ir_attr_val){.kind = IR_AV_STR, .s = s};
}

void ox_set_none(ox_attrs *at, int idx)
{
    at->v[idx] = (ir_attr_val){.kind = IR_AV_NONE};
}

void ox_set_ints(ox_ctx *cx, ox_attrs *at, int idx, int n, const int64_t *v)
{
    ir_attr_val *items = su_arena_alloc(&cx->m->arena, sizeof *items * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++)
        items[i] = (ir_attr_val){.kind = IR_AV_INT, .i = v[i]};
    at->v[idx] = (ir_attr_val){.kind = IR_AV_LIST, .n = n, .items = items};
}

/* ---- expressions -------------------------------------------------------- */

/* Types e; type errors are re-reported at the current node. */
static bool type_it(ox_ctx *cx, ir_expr *e)
{
    su_diags tmp = {0};
    bool ok = ir_infer_expr(cx->m, e, &tmp);
    for (size_t i = 0; i < tmp.len; i++)
        if (tmp.items[i].sev == SU_ERROR)
            ox_fail(cx, "%s", tmp.items[i].msg);
    if (!ok && !tmp.errors)
        ox_fail(cx, "the converted call does not type-check");
    su_diags_free(&tmp);
    return ok;
}

/* Elements of a (tuple of) tensor type(s). */
static int64_t type_elems(const ir_type *t)
{
    if (t->kind == IR_TY_TENSOR)
        return ir_type_numel(t);
    int64_t n = 0;
    for (int i = 0; t->kind == IR_TY_TUPLE && i < t->nfields; i++)
        n += type_elems(t->fields[i]);
    return n;
}

bool ox_check_shape(ox_ctx *cx, int nd, const int64_t *shape, const char *what)
{
    int64_t n = 1;
    for (int i = 0; i < nd; i++) {
        if (shape[i] < 0)
            return ox_fail(cx, "%s has a negative extent %lld", what, (long long)shape[i]);
        if (shape[i] && n > OX_MAX_ELEMS / shape[i])
            return ox_fail(cx, "%s has more than 2^40 elements", what);
        n *= shape[i] ? shape[i] : 1;
    }
    return true;
}

/* The FLOP count of a typed call of at most 2^24 result elements (0 where
 * an operand is not a tensor); operands above OX_MAX_CONST elements count as
 * too costly, which keeps the ops' counts far from overflow. */
static int64_t fold_flops(const ir_expr *e)
{
    const ir_type *args[8];
    int n = e->u.call.nargs;
    if (n > 8 || e->type->kind != IR_TY_TENSOR)
        return 0;
    for (int i = 0; i < n; i++) {
        if (!(args[i] = e->u.call.args[i]->type) || args[i]->kind != IR_TY_TENSOR)
            return 0;
        if (type_elems(args[i]) > OX_MAX_CONST)
            return INT64_MAX;
    }
    return ir_call_op(e)->flops(args, n, e->u.call.attrs, e->type);
}

ir_expr *ox_call(ox_ctx *cx, ir_op_id op, int nargs, ir_expr *const *args, const ox_attrs *at)
{
    for (int i = 0; i < nargs; i++)
        if (!args[i])
            return NULL;    /* an operand that already failed */
    su_span none = {0};
    /* calls keep a pointer to their attrs, so they move into the arena */
    const ir_attrs *a = at ? su_arena_dup(&cx->m->arena, &at->a, sizeof at->a) : NULL;
    ir_expr *e = ir_op_call(cx->m, none, op, nargs, args, a);
    if (!type_it(cx, e))
        return NULL;
    if (!ox_check_shape(cx, e->type->kind == IR_TY_TENSOR ? e->type->ndim : 0, e->type->shape, "the result"))
        return NULL;
    if (type_elems(e->type) > OX_MAX_FOLD || fold_flops(e) > OX_MAX_FOLD_FLOPS)
        return e;   /* too large to hold as a constant, or to compute while importing: computed when run */
    ir_expr *f = tr_fold_call(cx->m, e);
    if (f != e && !type_it(cx, f))
        return NULL;
    return f;
}

ir_expr *ox_call1(ox_ctx *cx, ir_op_id op, ir_expr *a)
{
    return ox_call(cx, op, 1, &a, NULL);
}

ir_expr *ox_call2(ox_ctx *cx, ir_op_id op, ir_expr *a, ir_expr *b)
{
    ir_expr *args[2] = {a, b};
    return ox_call(cx, op, 2, args, NULL);
}

ir_expr *ox_proj(ox_ctx *cx, ir_expr *tuple, int i)
{
    if (!tuple)
        return NULL;
    if (tuple->kind == IR_TUPLE)
        return tuple->u.tuple.fields[i];
    su_span none = {0};
    ir_expr *e = ir_proj(cx->m, none, tuple, i);
    return type_it(cx, e) ? e : NULL;
}

ir_expr *ox_const(ox_ctx *cx, const ir_tensor *t)
{
    su_span none = {0};
    ir_expr *e = ir_const(cx->m, none, t);
    return type_it(cx, e) ? e : NULL;
}

ir_expr *ox_scalar(ox_ctx *cx, ir_dtype dt, double v)
{
    return ox_const(cx, ir_tensor_scalar(&cx->m->arena, dt, v));
}

ir_expr *ox_filled(ox_ctx *cx, ir_dtype dt, int ndim, const int64_t *shape, double v)
{
    if (!ox_check_shape(cx, ndim, shape, "a constant"))
        return NULL;
    int64_t n0 = 1;
    for (int i = 0; i < ndim; i++)
        n0 *= shape[i];
    if (n0 > OX_MAX_CONST) {
        ox_fail(cx, "a constant of %lld elements is too large to build", (long long)n0);
        return NULL;
    }
    ir_tensor *t = ir_tensor_new(&cx->m->arena, dt, ndim, shape);
    int64_t n = ir_tensor_numel(t);
    for (int64_t i = 0; i < n; i++)
        ir_tensor_set(t, i, v);
    return ox_const(cx, t);
}

ir_expr *ox_ints_const(ox_ctx *cx, int n, const int64_t *v)
{
    int64_t shape[1] = {n};
    ir_tensor *t = ir_tensor_new(&cx->m->arena, IR_INT64, 1, shape);
    if (n)
        memcpy(t->data, v, (size_t)n * sizeof *v);
    return ox_const(cx, t);
}

const ir_tensor *ox_value(const ir_expr *e)
{
    return e && e->kind == IR_CONST ? e->u.constant.value : NULL;
}

int ox_const_ints(ox_ctx *cx, const ir_expr *e, const char *what, int64_t *out, int max)
{
    const ir_tensor *t = ox_value(e);
    if (!t) {
        ox_fail(cx, "input %s is computed at run time; only constant (static) values are supported", what);
        return -1;
    }
    if (!ir_dtype_is_int(t->dtype) || t->ndim > 1) {
        ox_fail(cx, "input %s must be a 0-d or 1-d integer tensor", what);
        return -1;
    }
    int64_t n = ir_tensor_numel(t);
    if (n > max) {
        ox_fail(cx, "input %s has %lld values (at most %d are supported)", what, (long long)n, max);
        return -1;
    }
    for (int64_t i = 0; i < n; i++)
        out[i] = ir_tensor_get_i64(t, i);
    return (int)n;
}

bool ox_const_scalar(ox_ctx *cx, const ir_expr *e, const char *what, double *out)
{
    const ir_tensor *t = ox_value(e);
    if (!t || ir_tensor_numel(t) != 1)
        return ox_fail(cx, "input %s must be a constant scalar", what);
    *out = ir_tensor_get(t, 0);
    return true;
}

const ir_type *ox_type(const ir_expr *e)
{
    return e->type;
}

bool ox_axis(ox_ctx *cx, int64_t axis, int ndim, int *out)
{
    if (axis < -ndim || axis >= ndim)
        return ox_fail(cx, "axis %lld is out of range for rank %d", (long long)axis, ndim);
    *out = (int)(axis < 0 ? axis + ndim : axis);
    return true;
}

ir_expr *ox_reshape(ox_ctx *cx, ir_expr *e, int ndim, const int64_t *shape)
{
    if (!e)
        return NULL;
    /* the shape is explicit, so a reshape of a reshape is one reshape, and a
     * reshape to the same shape is none */
    const ir_op_def *op = ir_call_op(e);
    if (op && op->id == IR_OP_RESHAPE)
        e = e->u.call.args[0];
    const ir_type *t = ox_type(e);
    if (t->ndim == ndim && (!ndim || !memcmp(t->shape, shape, (size_t)ndim * sizeof *shape)))
        return e;
    ox_attrs at = ox_attrs_new(cx, IR_OP_RESHAPE);
    ox_set_ints(cx, &at, IR_RESHAPE_NEWSHAPE, ndim, shape);
    ox_set_bool(&at, IR_RESHAPE_ALLOWZERO, true);  /* the shape is explicit: a 0 is a 0 */
    return ox_call(cx, IR_OP_RESHAPE, 1, &e, &at);
}

ir_expr *ox_transpose(ox_ctx *cx, ir_expr *e, int ndim, const int64_t *perm)
{
    /* a transpose of a transpose is one transpose (or none): exporters write
     * MatMul(x, Transpose(W)), which becomes dense(x, W) with W used as is */
    const ir_op_def *op = e ? ir_call_op(e) : NULL;
    if (op && op->id == IR_OP_TRANSPOSE && ndim <= IR_MAX_DIMS) {
        int64_t inner[IR_MAX_DIMS], comp[IR_MAX_DIMS];
        int ni = ir_attr_ints(e->u.call.attrs, IR_TRANSPOSE_AXES, inner, IR_MAX_DIMS);
        if (ni < 0)
            for (ni = 0; ni < ndim; ni++)
                inner[ni] = ndim - 1 - ni;
        bool identity = ni == ndim;
        for (int i = 0; identity && i < ndim; i++) {
            if (perm[i] < 0 || perm[i] >= ndim) {
                identity = false;
                break;
            }
            comp[i] = inner[perm[i]];
            identity = comp[i] == i;
        }
        if (identity)
            return e->u.call.args[0];
    }
    ox_attrs at = ox_attrs_new(cx, IR_OP_TRANSPOSE);
    ox_set_ints(cx, &at, IR_TRANSPOSE_AXES, ndim, perm);
    return ox_call(cx, IR_OP_TRANSPOSE, 1, &e, &at);
}

ir_expr *ox_cast(ox_ctx *cx, ir_expr *e, ir_dtype dt)
{
    if (!e || ox_type(e)->dtype == dt)
        return e;
    ox_attrs at = ox_attrs_new(cx, IR_OP_CAST);
    ox_set_str(&at, IR_CAST_DTYPE, ir_dtype_name(dt));
    return ox_call(cx, IR_OP_CAST, 1, &e, &at);
}

/* e broadcast to shape (where with a true condition of that shape: exact
 * for every dtype). */
ir_expr *ox_broadcast_to(ox_ctx *cx, ir_expr *e, int nd, const int64_t *shape)
{
    const ir_type *t = ox_type(e);
    if (t->ndim == nd && (!nd || !memcmp(t->shape, shape, (size_t)nd * sizeof *shape)))
        return e;
    ir_expr *args[3] = {ox_filled(cx, IR_BOOL, nd, shape, 1), e, e};
    return ox_call(cx, IR_OP_WHERE, 3, args, NULL);
}

/* A product whose vector addend is a bias: dense or batch_matmul, possibly
 * reshaped (MatMul of a 3-D input is a reshaped dense). */
static bool is_product(const ir_expr *e)
{
    const ir_op_def *op = ir_call_op(e);
    if (op && op->id == IR_OP_RESHAPE)
        op = ir_call_op(e->u.call.args[0]);
    return op && (op->id == IR_OP_DENSE || op->id == IR_OP_BATCH_MATMUL);
}

ir_expr *ox_add(ox_ctx *cx, ir_expr *a, ir_expr *b)
{
    if (!a || !b)
        return NULL;
    if (is_product(b) && !is_product(a)) {  /* Add(bias, MatMul(...)) */
        ir_expr *t = a;
        a = b, b = t;
    }
    const ir_type *at = ox_type(a), *bt = ox_type(b);
    if (is_product(a) && bt->ndim == 1 && at->ndim >= 1 && bt->shape[0] == at->shape[at->ndim - 1] &&
        bt->dtype == at->dtype) {
        ox_attrs ba = ox_attrs_new(cx, IR_OP_BIAS_ADD);
        ox_set_int(&ba, IR_BIAS_ADD_AXIS, -1);
        ir_expr *args[2] = {a, b};
        return ox_call(cx, IR_OP_BIAS_ADD, 2, args, &ba);
    }
    return ox_call2(cx, IR_OP_ADD, a, b);
}
