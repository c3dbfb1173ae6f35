/* check.c — check mode of the pass manager: after each pass, run @main in
 * the reference interpreter on seeded random inputs and compare with the
 * result before the pass, so that the first pass that changes what the
 * model computes is named (with the size of the difference). The result
 * before a pass is the result after the previous one, so each pass costs
 * one run. */
#include <math.h>
#include <string.h>

#include "ir/transform/transform.h"

struct tr_checker {
    uint64_t seed;
    double tol;             /* allowed max |after - before| / max |before| */
    ir_value *last;         /* result after the latest pass, or NULL */
    ir_value **args;        /* @main's inputs, made once from the module before the first pass
                               (the seeded values depend on each parameter's use, which passes change) */
    int nargs;
};

tr_checker *tr_checker_new(uint64_t seed, double tol)
{
    tr_checker *c = su_calloc(1, sizeof *c);
    c->seed = seed;
    c->tol = tol > 0 ? tol : 1e-4;
    return c;
}

void tr_checker_free(tr_checker *c)
{
    if (!c)
        return;
    ir_value_release(c->last);
    for (int i = 0; i < c->nargs; i++)
        ir_value_release(c->args[i]);
    free(c->args);
    free(c);
}

/* Makes @main's seeded inputs from m (once); false with the reason in why. */
static bool make_args(tr_checker *c, const ir_module *m, su_buf *why)
{
    ir_global_def *g = ir_module_find(m, "main");
    if (!g) {
        su_buf_puts(why, "the module has no @main");
        return false;
    }
    const ir_expr *f = g->func;
    c->nargs = f->u.func.nparams;
    c->args = su_calloc((size_t)c->nargs + 1, sizeof *c->args);
    for (int i = 0; i < c->nargs; i++) {
        const ir_type *t = f->u.func.params[i]->u.var.annot;
        if (!t || t->kind != IR_TY_TENSOR) {
            su_buf_printf(why, "parameter %%%s is not a tensor", f->u.func.params[i]->u.var.name);
            return false;
        }
        ir_tensor *x = ir_tensor_alloc(t->dtype, t->ndim, t->shape);
        ir_random_param(f, i, c->seed, x);
        c->args[i] = ir_value_tensor(x, true);
    }
    return true;
}

/* Runs @main of m on the inputs; NULL with the reason in why. */
static ir_value *run_main(const tr_checker *c, const ir_module *m, su_buf *why)
{
    ir_value *out = NULL;
    ir_interp *ip = ir_interp_new(m, NULL);
    su_diags d = {0};
    if (!ir_interp_call(ip, "main", c->nargs, c->args, &out, &d))
        su_buf_printf(why, "the interpreter failed: %s", d.len ? d.items[0].msg : "?");
    su_diags_free(&d);
    ir_interp_free(ip);
    return out;
}

/* Largest |a - b| and |b| over two values of the same shape; false when the
 * shapes differ. */
static bool diff(const ir_value *a, const ir_value *b, double *err, double *mag)
{
    if (a->kind != b->kind)
        return false;
    if (a->kind == IR_VAL_TUPLE) {
        if (a->n != b->n)
            return false;
        for (int i = 0; i < a->n; i++)
            if (!diff(a->items[i], b->items[i], err, mag))
                return false;
        return true;
    }
    if (a->kind != IR_VAL_TENSOR)
        return true; /* closures: nothing to compare */
    const ir_tensor *x = a->tensor, *y = b->tensor;
    if (x->ndim != y->ndim || ir_tensor_numel(x) != ir_tensor_numel(y))
        return false;
    for (int64_t i = 0, n = ir_tensor_numel(x); i < n; i++) {
        double p = ir_tensor_get(x, i), q = ir_tensor_get(y, i);
        double e = fabs(p - q);
        if (e > *err || (e != e && *err == *err))
            *err = e;
        if (fabs(q) > *mag)
            *mag = fabs(q);
    }
    return true;
}

bool tr_check_interp(void *ctx, ir_module *m, const ir_global_def *before, size_t nbefore, su_buf *why)
{
    tr_checker *c = ctx;
    if (!c->last) {
        /* the module as it was: the defs of before, in place for one run */
        ir_global_def *now = m->defs.data;
        size_t nnow = m->defs.len;
        m->defs.data = (ir_global_def *)before;
        m->defs.len = nbefore;
        c->last = make_args(c, m, why) ? run_main(c, m, why) : NULL;
        m->defs.data = now;
        m->defs.len = nnow;
        if (!c->last)
            return false;
    }
    ir_value *after = run_main(c, m, why);
    if (!after)
        return false;
    double err = 0, mag = 0;
    bool same_shape = diff(after, c->last, &err, &mag);
    double rel = err / (mag > 1 ? mag : 1);
    bool okk = same_shape && rel <= c->tol;
    if (!same_shape)
        su_buf_puts(why, "the result's shape changed");
    else if (!okk)
        su_buf_printf(why, "max |difference| %.3g against a largest magnitude of %.3g (relative %.3g > %.3g)", err,
                      mag, rel, c->tol);
    ir_value_release(c->last);
    c->last = after;
    return okk;
}
