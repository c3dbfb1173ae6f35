/* fold_constant.c — constant folding: an operator call whose arguments are
 * all constants (a tuple argument counts when its fields are) is evaluated
 * once with the op's reference kernel, the same code the interpreter runs,
 * and replaced by its value; a projection of a tuple of known fields is
 * replaced by the field. With weights bound (--params), this computes the
 * batch-norm scales and shifts that simplify-inference wrote as arithmetic,
 * so that fold-scale-axis can push them into the conv weights. */
#include <string.h>

#include "ir/transform/transform.h"

typedef SU_VEC(const ir_tensor *) tensor_vec;
typedef SU_VEC(ir_tensor *) out_vec;

/* Appends the tensors of constant argument a (a constant, or a tuple of
 * constants) to in; false when a is not constant. */
static bool const_args(const ir_expr *a, tensor_vec *in)
{
    if (a->kind == IR_CONST) {
        su_vec_push(in, a->u.constant.value);
        return true;
    }
    if (a->kind != IR_TUPLE)
        return false;
    for (int i = 0; i < a->u.tuple.n; i++)
        if (a->u.tuple.fields[i]->kind != IR_CONST)
            return false;
    for (int i = 0; i < a->u.tuple.n; i++)
        su_vec_push(in, a->u.tuple.fields[i]->u.constant.value);
    return true;
}

ir_expr *tr_fold_call(ir_module *m, ir_expr *e)
{
    const ir_op_def *op = ir_call_op(e);
    if (!op || !op->ref || !e->type)
        return e;
    tensor_vec in = {0};
    for (int i = 0; i < e->u.call.nargs; i++)
        if (!const_args(e->u.call.args[i], &in)) {
            su_vec_free(&in);
            return e;
        }
    const ir_type *t = e->type;
    out_vec out = {0};
    int nres = t->kind == IR_TY_TUPLE ? t->nfields : 1;
    for (int i = 0; i < nres; i++) {
        const ir_type *ft = t->kind == IR_TY_TUPLE ? t->fields[i] : t;
        if (ft->kind != IR_TY_TENSOR) {
            su_vec_free(&in);
            su_vec_free(&out);
            return e;
        }
        su_vec_push(&out, ir_tensor_new(&m->arena, ft->dtype, ft->ndim, ft->shape));
    }
    su_buf why = {0};
    ir_ref_call call = {op, e->u.call.attrs, (int)in.len, in.data, (int)out.len, out.data, &why};
    ir_expr *r = e;
    /* a kernel that fails on these values (say, an index out of range) is
     * left to fail where it runs, with its message there */
    if (op->ref(&call)) {
        if (t->kind == IR_TY_TUPLE) {
            ir_expr **fs = su_malloc(sizeof *fs * (size_t)nres);
            for (int i = 0; i < nres; i++)
                fs[i] = ir_const(m, e->span, out.data[i]);
            r = ir_tuple(m, e->span, nres, fs);
            free(fs);
        } else {
            r = ir_const(m, e->span, out.data[0]);
        }
    }
    su_buf_free(&why);
    su_vec_free(&in);
    su_vec_free(&out);
    return r;
}

static ir_expr *fold(tr_rewriter *rw, ir_expr *e)
{
    if (ir_call_op(e))
        return tr_fold_call(rw->m, e);
    if (e->kind == IR_PROJ && e->u.proj.tuple->kind == IR_TUPLE)
        return e->u.proj.tuple->u.tuple.fields[e->u.proj.index];
    return e;
}

bool tr_fold_constant(ir_module *m, const tr_options *o, su_diags *d)
{
    return tr_apply(m, fold, NULL);
}
