/* task.c — task extraction. Each distinct primitive function that contains a
 * tunable anchor (conv2d, dense, batch_matmul) becomes one task, identified by
 * a workload key: canonical text of the template, dtype, input shapes, the
 * anchor's attributes and the structure of the whole fused body (operands
 * written as parameter positions and node positions, never as names or
 * pointers). The same layer in two models or on two machines therefore has
 * the same key, and logs meet. */
#include <string.h>

#include "tuner/tuner.h"

static void shape_text(su_buf *b, const ir_type *t)
{
    if (!t || t->kind != IR_TY_TENSOR) {
        ir_type_print(b, t);
        return;
    }
    if (t->ndim == 0)
        su_buf_puts(b, "scalar");
    for (int i = 0; i < t->ndim; i++)
        su_buf_printf(b, "%s%lld", i ? "x" : "", (long long)t->shape[i]);
}

/* Template family of an anchor call, or NULL when it is not tunable. */
static const char *template_of(const ir_expr *call)
{
    const ir_op_def *op = ir_call_op(call);
    if (!op)
        return NULL;
    switch (op->id) {
    case IR_OP_CONV2D: {
        /* the conv2d templates are written for NCHW/OIHW; other layouts get the default schedule */
        if (!ir_conv2d_is_nchw(call))
            return NULL;
        int64_t groups = ir_call_attr(call, "groups")->i;
        const ir_type *w = call->u.call.args[1]->type;
        if (groups == 1)
            return "conv2d_nchw";
        if (w && w->ndim == 4 && w->shape[1] == 1 && groups == w->shape[0])
            return "depthwise_conv2d_nchw";
        return "group_conv2d_nchw";
    }
    case IR_OP_DENSE: return "dense";
    case IR_OP_BATCH_MATMUL: return "batch_matmul";
    default: return NULL;
    }
}

typedef struct keyer {
    const ir_expr *f;
    su_buf *b;
    SU_VEC(const ir_expr *) nodes;   /* body nodes in post order */
    SU_VEC(const ir_expr *) params;  /* parameters in order of first use: the
                                        key must not depend on parameter order */
    const ir_expr *anchor;
} keyer;

static int param_index(keyer *k, const ir_expr *v)
{
    for (size_t i = 0; i < k->params.len; i++)
        if (k->params.data[i] == v)
            return (int)i;
    su_vec_push(&k->params, v);
    return (int)k->params.len - 1;
}

static int node_index(const keyer *k, const ir_expr *e)
{
    for (size_t i = 0; i < k->nodes.len; i++)
        if (k->nodes.data[i] == e)
            return (int)i;
    return -1;
}

static void operand(keyer *k, const ir_expr *x)
{
    if (x->kind == IR_VAR)
        su_buf_printf(k->b, "p%d", param_index(k, x));
    else if (x->kind == IR_CONST) {
        const ir_tensor *t = x->u.constant.value;
        su_buf_printf(k->b, "%s:", ir_dtype_name(t->dtype));
        if (t->ndim == 0)
            su_buf_printf(k->b, "%.9g", ir_tensor_get(t, 0));
        else
            shape_text(k->b, x->type);
    } else
        su_buf_printf(k->b, "#%d", node_index(k, x));
}

/* Post-order walk of the body; each node once. */
static void walk(keyer *k, const ir_expr *e)
{
    if (e->kind != IR_CALL && e->kind != IR_TUPLE && e->kind != IR_PROJ)
        return;
    if (node_index(k, e) >= 0)
        return;
    if (e->kind == IR_CALL)
        for (int i = 0; i < e->u.call.nargs; i++)
            walk(k, e->u.call.args[i]);
    else if (e->kind == IR_TUPLE)
        for (int i = 0; i < e->u.tuple.n; i++)
            walk(k, e->u.tuple.fields[i]);
    else
        walk(k, e->u.proj.tuple);
    su_vec_push(&k->nodes, e);
    if (!k->anchor && template_of(e))
        k->anchor = e;
}

static void node_text(keyer *k, const ir_expr *e)
{
    const ir_op_def *op = ir_call_op(e);
    if (e->kind == IR_PROJ) {
        operand(k, e->u.proj.tuple);
        su_buf_printf(k->b, ".%d", e->u.proj.index);
        return;
    }
    su_buf_puts(k->b, op ? op->name : "tuple");
    su_buf_putc(k->b, '(');
    int n = e->kind == IR_CALL ? e->u.call.nargs : e->u.tuple.n;
    for (int i = 0; i < n; i++) {
        if (i)
            su_buf_putc(k->b, ',');
        operand(k, e->kind == IR_CALL ? e->u.call.args[i] : e->u.tuple.fields[i]);
    }
    if (op) {
        /* attributes that differ from the defaults, in schema order */
        for (int i = 0; i < e->u.call.attrs->n; i++) {
            if (ir_attr_equal(&e->u.call.attrs->vals[i], &op->defaults[i]))
                continue;
            su_buf_printf(k->b, ",%s=", op->schema->defs[i].name);
            ir_attr_print(k->b, &e->u.call.attrs->vals[i]);
        }
    }
    su_buf_putc(k->b, ')');
}

char *tun_workload_key(const ir_expr *f, const char **template_name, const ir_op_def **anchor)
{
    su_buf b = {0}, body = {0};
    keyer k = {f, &body, {0}, {0}, NULL};
    walk(&k, f->u.func.body);
    for (size_t i = 0; i < k.nodes.len; i++) {
        if (i)
            su_buf_putc(&body, ';');
        node_text(&k, k.nodes.data[i]);
    }
    if (f->u.func.body->kind == IR_VAR) /* an identity function */
        operand(&k, f->u.func.body);
    const char *tmpl = k.anchor ? template_of(k.anchor) : NULL;
    if (template_name)
        *template_name = tmpl;
    if (anchor)
        *anchor = k.anchor ? ir_call_op(k.anchor) : NULL;
    const ir_type *rt = f->u.func.body->type;
    su_buf_printf(&b, "%s|%s|in=", tmpl ? tmpl : "none",
                  rt && rt->kind == IR_TY_TENSOR ? ir_dtype_name(rt->dtype) : "tuple");
    for (size_t i = 0; i < k.params.len; i++) {
        if (i)
            su_buf_putc(&b, ',');
        const ir_type *t = k.params.data[i]->type ? k.params.data[i]->type : k.params.data[i]->u.var.annot;
        if (t && t->kind == IR_TY_TENSOR && rt && rt->kind == IR_TY_TENSOR && t->dtype != rt->dtype)
            su_buf_printf(&b, "%s:", ir_dtype_name(t->dtype));
        shape_text(&b, t);
    }
    su_buf_printf(&b, "|body=%s", su_buf_str(&body));
    su_buf_free(&body);
    su_vec_free(&k.nodes);
    su_vec_free(&k.params);
    return su_buf_take(&b);
}

static int64_t func_flops(const ir_expr *f)
{
    keyer k = {f, NULL, {0}, {0}, NULL};
    walk(&k, f->u.func.body);
    int64_t total = 0;
    for (size_t i = 0; i < k.nodes.len; i++) {
        const ir_expr *e = k.nodes.data[i];
        const ir_op_def *op = ir_call_op(e);
        if (!op || !e->type)
            continue;
        const ir_type *argt[8];
        int n = e->u.call.nargs < 8 ? e->u.call.nargs : 8;
        for (int j = 0; j < n; j++)
            argt[j] = e->u.call.args[j]->type;
        total += op->flops(argt, n, e->u.call.attrs, e->type);
    }
    su_vec_free(&k.nodes);
    su_vec_free(&k.params);
    return total;
}

typedef struct extractor {
    tun_tasks *out;
    su_map by_key;      /* key → task index + 1 */
    uint8_t *seen;      /* visited, by node id */
    size_t cap;
} extractor;

static void add_call(extractor *x, const ir_expr *call)
{
    const ir_expr *f = call->u.call.fn;
    const char *tmpl;
    const ir_op_def *anchor;
    char *key = tun_workload_key(f, &tmpl, &anchor);
    if (!tmpl) {
        free(key);
        return;
    }
    uintptr_t idx = (uintptr_t)su_map_get(&x->by_key, key);
    if (idx) {
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
        shape_text(&sh, f->u.func.params[i]->type ? f->u.func.params[i]->type : f->u.func.params[i]->u.var.annot);
    }
    task->shapes = su_buf_take(&sh);
    task->flops = func_flops(f);
    task->count = 1;
    task->func = (ir_expr *)f;
    /* a constant argument is a weight: the compiled model packs it once */
    task->nparams = f->u.func.nparams;
    task->param_const = su_calloc((size_t)task->nparams + 1, sizeof *task->param_const);
    for (int i = 0; i < task->nparams && i < call->u.call.nargs; i++)
        task->param_const[i] = call->u.call.args[i]->kind == IR_CONST;
    su_map_put(&x->by_key, task->key, (void *)(uintptr_t)t->len);
}

static void visit(extractor *x, const ir_expr *e)
{
    if (e->kind != IR_CALL && e->kind != IR_TUPLE && e->kind != IR_PROJ && e->kind != IR_LET && e->kind != IR_IF &&
        e->kind != IR_FUNC)
        return;
    x->seen = su_grow_zeroed(x->seen, &x->cap, e->id, 1);
    if (x->seen[e->id])
        return;
    x->seen[e->id] = 1;
    switch (e->kind) {
    case IR_CALL:
        for (int i = 0; i < e->u.call.nargs; i++)
            visit(x, e->u.call.args[i]);
        if (tr_is_primitive(e->u.call.fn))
            add_call(x, e);
        else
            visit(x, e->u.call.fn);
        break;
    case IR_TUPLE:
        for (int i = 0; i < e->u.tuple.n; i++)
            visit(x, e->u.tuple.fields[i]);
        break;
    case IR_PROJ: visit(x, e->u.proj.tuple); break;
    case IR_LET:
        visit(x, e->u.let.value);
        visit(x, e->u.let.body);
        break;
    case IR_IF:
        visit(x, e->u.if_.cond);
        visit(x, e->u.if_.then_branch);
        visit(x, e->u.if_.else_branch);
        break;
    case IR_FUNC:
        if (!tr_is_primitive(e))
            visit(x, e->u.func.body);
        break;
    default: break;
    }
}

void tun_extract_tasks(const ir_module *m, tun_tasks *out)
{
    extractor x = {out, {0}, NULL, 0};
    for (size_t i = 0; i < m->defs.len; i++)
        visit(&x, m->defs.data[i].func->u.func.body);
    su_map_free(&x.by_key);
    free(x.seen);
}

void tun_tasks_free(tun_tasks *t)
{
    for (size_t i = 0; i < t->len; i++) {
        free(t->items[i].key);
        free(t->items[i].template_name);
        free(t->items[i].anchor);
        free(t->items[i].shapes);
        free(t->items[i].param_const);
    }
    free(t->items);
    memset(t, 0, sizeof *t);
}
