/* task.c — task extraction. Each distinct primitive function that contains a
 * tunable anchor (conv2d, dense, batch_matmul) becomes one task, identified by
 * its workload key (schedule/workload.c, which also names its template: the
 * compiler names kernels by the same key). On a device (an opencl target)
 * the functions without an anchor become tasks too where their device
 * template (reduce_cl's work-group reductions, default_cl's injective and
 * pooling functions) has more than one config: they come after the anchored
 * tasks, so that those keep their numbers, and are named by that template.
 * On the cpu such functions take the default template, which has no knobs. */
#include <string.h>

#include "tuner/tuner.h"

typedef struct extractor {
    tun_tasks *out;
    su_map by_key;      /* key → task index + 1 */
    size_t known;       /* out's tasks before this extraction: another graph's, whose calls it does not count */
    const sch_hw *device; /* the device pass: functions without an anchor, scheduled for this machine;
                             NULL: the anchored pass */
    su_map untuned;     /* device pass: keys whose space has one config (no task) */
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

static void task_free(tun_task *t)
{
    free(t->key);
    free(t->template_name);
    free(t->anchor);
    free(t->shapes);
    free(t->param_const);
}

/* The op of a function's output (its body's call, or a tuple's first call),
 * which names a task without an anchor. */
static const char *output_op(const ir_expr *f)
{
    const ir_expr *e = f->u.func.body;
    while (e->kind == IR_TUPLE && e->u.tuple.n > 0)
        e = e->u.tuple.fields[0];
    const ir_op_def *op = e->kind == IR_CALL ? ir_call_op(e) : NULL;
    return op ? op->name : "none";
}

/* A device task: its template (the device template that schedules it on
 * hw) when its space there has more than one config; false when it has one
 * or cannot be scheduled (then it is no task: compiling builds it with the
 * defaults and says so if that fails). */
static bool device_template(tun_task *task, const sch_hw *hw)
{
    tun_space sp;
    su_buf err = {0};
    bool made = tun_space_init(&sp, task, hw, &err), ok = made && sp.size > 1;
    if (ok) {
        free(task->template_name);
        task->template_name = su_strdup(sp.sp.template_name);
    }
    if (made)
        tun_space_free(&sp);
    su_buf_free(&err);
    return ok;
}

static void add_call(extractor *x, const ir_expr *call)
{
    const ir_expr *f = call->u.call.fn;
    const char *tmpl;
    const ir_op_def *anchor;
    char *key = sch_workload_key(f, &tmpl, &anchor);
    if (x->device ? tmpl != NULL || su_map_get(&x->untuned, key) : !tmpl) {
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
    task->template_name = su_strdup(tmpl ? tmpl : "default");
    task->anchor = su_strdup(anchor ? anchor->name : output_op(f));
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
    if (x->device && !device_template(task, x->device)) {
        /* one config only: no task; the key kept (the map's, freed with it) */
        su_map_put(&x->untuned, task->key, (void *)1);
        task->key = NULL;
        task_free(task);
        t->len--;
        return;
    }
    task->light = x->device != NULL;
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

/* Appends the tasks of defs[0..n) whose keys out lacks (of the functions
 * with an anchor, or with device: of those without); calls of the tasks
 * out had are not counted (they are another graph's). */
static void extract(const ir_global_def *defs, size_t n, const sch_hw *device, tun_tasks *out)
{
    extractor x = {out, {0}, out->len, device, {0}};
    for (size_t i = 0; i < out->len; i++)
        su_map_put(&x.by_key, out->items[i].key, (void *)(uintptr_t)(i + 1));
    ir_visitor v;
    ir_visitor_init(&v, pre, post, &x);
    for (size_t i = 0; i < n; i++)
        ir_visit(&v, defs[i].func->u.func.body);
    ir_visitor_free(&v);
    su_map_free(&x.by_key);
    for (size_t i = 0; i < x.untuned.cap; i++)
        free((char *)x.untuned.slots[i].key);
    su_map_free(&x.untuned);
}

/* The anchored pass, then on a device the functions without an anchor. */
static void extract_all(const ir_global_def *defs, size_t n, const sch_hw *device, tun_tasks *out)
{
    extract(defs, n, NULL, out);
    if (device && device->wg_max > 0)
        extract(defs, n, device, out);
}

void tun_extract_tasks(const ir_module *m, tun_tasks *out)
{
    tun_extract_tasks_on(m, NULL, out);
}

void tun_extract_tasks_on(const ir_module *m, const sch_hw *device, tun_tasks *out)
{
    memset(out, 0, sizeof *out);
    extract_all(m->defs.data, m->defs.len, device, out);
}

void tun_extract_tasks_add(const ir_global_def *defs, size_t n, tun_tasks *out)
{
    tun_extract_tasks_add_on(defs, n, NULL, out);
}

void tun_extract_tasks_add_on(const ir_global_def *defs, size_t n, const sch_hw *device, tun_tasks *out)
{
    /* another graph of the same model: its tasks that out has are the same
       kernels, not more calls of them, so only new keys are added (with the
       calls that graph makes) */
    extract_all(defs, n, device, out);
}

void tun_tasks_free(tun_tasks *t)
{
    for (size_t i = 0; i < t->len; i++)
        task_free(&t->items[i]);
    free(t->items);
    memset(t, 0, sizeof *t);
}
