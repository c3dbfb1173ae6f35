/* bind_params.c — binds parameters of @main to constant tensors (the weights
 * a user gives with --params), so that constant folding and fold-scale-axis
 * can work on them and the compiled model can pack them ahead of time. The
 * bound parameters disappear from @main's signature. */
#include <string.h>

#include "ir/transform/transform.h"

typedef struct binder {
    const ir_expr *const *vars;     /* the bound parameters */
    ir_expr **consts;               /* their constants */
    size_t n;
} binder;

static ir_expr *substitute(tr_rewriter *rw, ir_expr *e)
{
    binder *b = rw->ctx;
    if (e->kind == IR_VAR)
        for (size_t i = 0; i < b->n; i++)
            if (b->vars[i] == e)
                return b->consts[i];
    return e;
}

/* The walk ends at a mention of @main. */
static ir_visit_step find_main(ir_visitor *v, const ir_expr *e)
{
    (void)v;
    return e->kind == IR_GLOBAL && strcmp(e->u.global.name, "main") == 0 ? IR_VISIT_STOP : IR_VISIT_DESCEND;
}

bool tr_bind_params(ir_module *m, const char *const *names, const ir_tensor *const *values, size_t n, su_diags *d)
{
    ir_global_def *g = ir_module_find(m, "main");
    if (!g) {
        su_error(d, (su_span){0}, "the module has no @main to bind parameters of");
        return false;
    }
    /* a call of @main elsewhere would still pass the bound arguments */
    ir_visitor walk;
    ir_visitor_init(&walk, find_main, NULL, NULL);
    for (size_t i = 0; i < m->defs.len; i++)
        if (!ir_visit(&walk, m->defs.data[i].func->u.func.body)) {
            ir_visitor_free(&walk);
            su_error(d, m->defs.data[i].global->span, "cannot bind parameters of @main: @%s calls it",
                     m->defs.data[i].name);
            return false;
        }
    ir_visitor_free(&walk);
    ir_expr *f = g->func;
    int np = f->u.func.nparams;
    const ir_expr **vars = su_calloc(n + 1, sizeof *vars);
    ir_expr **consts = su_calloc(n + 1, sizeof *consts);
    ir_expr **keep = su_calloc((size_t)np + 1, sizeof *keep);
    int nkeep = 0;
    size_t nb = 0;
    bool okk = true;
    for (int i = 0; i < np && okk; i++) {
        ir_expr *v = f->u.func.params[i];
        size_t k = 0;
        while (k < n && strcmp(names[k], v->u.var.name) != 0)
            k++;
        if (k == n) {
            keep[nkeep++] = v;
            continue;
        }
        const ir_tensor *t = values[k];
        const ir_type *want = v->u.var.annot;
        const ir_type *got = ir_tensor_type(&m->arena, t->dtype, t->ndim, t->shape);
        if (!ir_type_equal(want, got)) {
            su_error(d, v->span, "parameter %%%s is %s, but the value given for it is %s", v->u.var.name,
                     ir_type_str(&m->arena, want), ir_type_str(&m->arena, got));
            okk = false;
            break;
        }
        vars[nb] = v;
        consts[nb++] = ir_const(m, v->span, t);
    }
    if (okk && nb) {
        binder b = {vars, consts, nb};
        tr_rewriter rw;
        tr_rewriter_init(&rw, m, substitute, &b);
        ir_expr *body = tr_rewrite(&rw, f->u.func.body);
        okk = !rw.failed;
        tr_rewriter_free(&rw);
        g->func = ir_func(m, f->span, nkeep, keep, f->u.func.ret_annot, body, f->u.func.nattrs, f->u.func.attrs);
        g->global->type = NULL;
    }
    free(vars);
    free(consts);
    free(keep);
    return okk && ir_infer_types(m, d);
}
