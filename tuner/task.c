/* task.c — task extraction. Each distinct primitive function that contains a
 * tunable anchor (conv2d, dense, batch_matmul) becomes one task, identified by
 * its workload key (schedule/workload.c, which also names its template: the
 * compiler names kernels by the same key). */
#include <string.h>

#include "tuner/tuner.h"

typedef struct extractor {
    tun_tasks *out;
    su_map by_key;      /* key → task index + 1 */
    size_t known;       /* out's tasks before this extraction: another graph's, whose calls it does not count */
} extractor;

/* The kernel parameters of call's function, as the schedule flattens them
 * (a tuple parameter's fields one each), and in consts (unless NULL)
 * whether each is a constant: a constant argument, or a constant field of
 * a tuple literal. */
static int mark_consts(const ir_expr *call, bool *consts)
{
    const ir_expr *f = call->u.call.fn;
    int n = 0;
    for (int i = 0; i < f->u.func.nparams; i++) {
        const ir_expr *p = f->u.func.params[i], *arg = i < call->u.call.nargs ? call->u.call.args[i] : NULL;
        const ir_type *t = p->type ? p->type : p->u.var.annot;
        bool tuple = t && t->kind == IR_TY_TUPLE;
        int nf = tuple ? t->nfields : 1;
        for (int j = 0; j < nf; j++, n++) {
            const ir_expr *a = !tuple ? arg : arg && arg->kind == IR_TUPLE && j < arg->u.tuple.n ? arg->u.tuple.fields[j]
                                                                                               : NULL;
            if (consts)
                consts[n] = a && a->kind == IR_CONST;
        }
    }
    return n;
}

static void add_call(extractor *x, const ir_expr *call)
{
    const ir_expr *f = call->u.call.fn;
    const char *tmpl;
    const ir_op_def *anchor;
    char *key = sch_workload_key(f, &tmpl, &anchor);
    if (!tmpl) {
        free(key);
        return;
    }
    uintptr_t idx = (uintptr_t)su_map_get(&x->by_key, key);
    if (idx) {
        if (idx > x->known)
            x->out->items[idx - 1].count++;
        free(key);
        return;
    }
    tun_tasks *t = x->out;
    if (t->len == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->items = su_realloc(t->items, t->cap * sizeof *t->items);
    }
    tun_task *task = &t->items[t->len++];
    memset(task, 0, sizeof *task);
    task->key = key;
    snprintf(task->hash, sizeof task->hash, "%016llx", (unsigned long long)su_hash_str(key));
    task->template_name = su_strdup(tmpl);
    task->anchor = su_strdup(anchor->name);
    su_buf sh = {0};
    for (int i = 0; i < f->u.func.nparams; i++) {
        if (i)
            su_buf_puts(&sh, ", ");
        sch_shape_text(&sh, f->u.func.params[i]->type ? f->u.func.params[i]->type : f->u.func.params[i]->u.var.annot);
    }
    task->shapes = su_buf_take(&sh);
    task->flops = sch_workload_flops(f);
    task->count = 1;
    task->func = (ir_expr *)f;
    /* a constant argument is a weight: the compiled model packs it once */
    task->nparams = mark_consts(call, NULL);
    task->param_const = su_calloc((size_t)task->nparams + 1, sizeof *task->param_const);
    mark_consts(call, task->param_const);
    su_map_put(&x->by_key, task->key, (void *)(uintptr_t)t->len);
}

/* A primitive function's body is one kernel: not walked into. */
static ir_visit_step pre(ir_visitor *v, const ir_expr *e)
{
    (void)v;
    return ir_func_is_primitive(e) ? IR_VISIT_SKIP : IR_VISIT_DESCEND;
}

/* After its arguments: a call of a primitive function is a task's call. */
static void post(ir_visitor *v, const ir_expr *e)
{
    if (e->kind == IR_CALL && ir_func_is_primitive(e->u.call.fn))
        add_call(v->ctx, e);
}

static void task_free(tun_task *t)
{
    free(t->key);
    free(t->template_name);
    free(t->anchor);
    free(t->shapes);
    free(t->param_const);
}

/* Appends the tasks of defs[0..n) whose keys out lacks; calls of the tasks
 * out had are not counted (they are another graph's). */
static void extract(const ir_global_def *defs, size_t n, tun_tasks *out)
{
    extractor x = {out, {0}, out->len};
    for (size_t i = 0; i < out->len; i++)
        su_map_put(&x.by_key, out->items[i].key, (void *)(uintptr_t)(i + 1));
    ir_visitor v;
    ir_visitor_init(&v, pre, post, &x);
    for (size_t i = 0; i < n; i++)
        ir_visit(&v, defs[i].func->u.func.body);
    ir_visitor_free(&v);
    su_map_free(&x.by_key);
}

void tun_extract_tasks(const ir_module *m, tun_tasks *out)
{
    memset(out, 0, sizeof *out);
    extract(m->defs.data, m->defs.len, out);
}

void tun_extract_tasks_add(const ir_global_def *defs, size_t n, tun_tasks *out)
{
    /* another graph of the same model: its tasks that out has are the same
       kernels, not more calls of them, so only new keys are added (with the
       calls that graph makes) */
    extract(defs, n, out);
}

void tun_tasks_free(tun_tasks *t)
{
    for (size_t i = 0; i < t->len; i++)
        task_free(&t->items[i]);
    free(t->items);
    memset(t, 0, sizeof *t);
}
