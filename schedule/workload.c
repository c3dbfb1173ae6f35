/* workload.c — what a primitive (fused) function is, as the tuner and the
 * compiler must agree on it: its tunable anchor, the template family that
 * schedules it (one table, op family → template), its workload key and its
 * FLOPs. The key is canonical text of the template, dtype, input shapes,
 * the anchor's attributes and the structure of the whole fused body
 * (operands written as parameter positions and node positions, never as
 * names or pointers). The same layer in two models or on two machines
 * therefore has the same key, and logs meet. It lives here, beside the
 * templates, because tuning (tuner/) and compiling (targets/) both name
 * kernels by it, and targets/ sits below tuner/. */
#include <string.h>

#include "schedule/schedule.h"

/* conv2d's family: the conv2d templates are written for NCHW/OIHW (other
 * layouts get the default schedule); groups and the weight's shape decide
 * between plain, depthwise and grouped. */
static const char *conv2d_family(const ir_expr *call)
{
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

/* The tunable op families. A new template for an op is a row here and a
 * row in template.c's registry. */
static const struct {
    ir_op_id op;
    const char *template_name;                  /* the family's template, or NULL: */
    const char *(*choose)(const ir_expr *call); /* the call decides (NULL: not tunable) */
} families[] = {
    {IR_OP_CONV2D, NULL, conv2d_family},
    {IR_OP_CONV2D_NCHWC, "conv2d_nchwc", NULL},
    {IR_OP_CONV2D_WINOGRAD, "conv2d_winograd", NULL},
    {IR_OP_DENSE, "dense", NULL},
    {IR_OP_BATCH_MATMUL, "batch_matmul", NULL},
};

const char *sch_call_template(const ir_expr *call)
{
    const ir_op_def *op = call ? ir_call_op(call) : NULL;
    for (size_t i = 0; op && i < sizeof families / sizeof *families; i++)
        if (families[i].op == op->id)
            return families[i].template_name ? families[i].template_name : families[i].choose(call);
    return NULL;
}

/* The device templates of the families that have one (templates/device_cl.c):
 * names of their own, so that a device's configs never read as a CPU's. */
static const char *const device_templates[][2] = {
    {"conv2d_nchw", "conv2d_nchw_cl"},
    {"depthwise_conv2d_nchw", "depthwise_conv2d_nchw_cl"},
    {"group_conv2d_nchw", "group_conv2d_nchw_cl"},
    {"dense", "dense_cl"},
    {"batch_matmul", "batch_matmul_cl"},
    {"default", "default_cl"},
};

const char *sch_device_template(const char *name)
{
    for (size_t i = 0; name && i < sizeof device_templates / sizeof *device_templates; i++)
        if (!strcmp(device_templates[i][0], name))
            return device_templates[i][1];
    return name;
}

const char *sch_device_template_of(const sch_schedule *s, const char *name, const sch_hw *hw)
{
    const char *d = sch_device_template(name);
    return d && !strcmp(d, "default_cl") && sch_reduce_cl_fits(s, hw) ? "reduce_cl" : d;
}

void sch_shape_text(su_buf *b, const ir_type *t)
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

typedef struct keyer {
    su_buf *b;
    SU_VEC(const ir_expr *) nodes;   /* body nodes in post order */
    SU_VEC(const ir_expr *) params;  /* parameters in order of first use: the
                                        key must not depend on parameter order */
    const ir_expr *anchor;           /* the first node with a template family */
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
            sch_shape_text(k->b, x->type);
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
    if (!k->anchor && e->kind == IR_CALL && sch_call_template(e))
        k->anchor = e;
}

static void keyer_free(keyer *k)
{
    su_vec_free(&k->nodes);
    su_vec_free(&k->params);
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

char *sch_workload_key(const ir_expr *f, const char **template_name, const ir_op_def **anchor)
{
    su_buf b = {0}, body = {0};
    keyer k = {&body, {0}, {0}, NULL};
    walk(&k, f->u.func.body);
    for (size_t i = 0; i < k.nodes.len; i++) {
        if (i)
            su_buf_putc(&body, ';');
        node_text(&k, k.nodes.data[i]);
    }
    if (f->u.func.body->kind == IR_VAR) /* an identity function */
        operand(&k, f->u.func.body);
    const char *tmpl = k.anchor ? sch_call_template(k.anchor) : NULL;
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
        sch_shape_text(&b, t);
    }
    su_buf_printf(&b, "|body=%s", su_buf_str(&body));
    su_buf_free(&body);
    keyer_free(&k);
    return su_buf_take(&b);
}

int64_t sch_workload_flops(const ir_expr *f)
{
    keyer k = {NULL, {0}, {0}, NULL};
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
    keyer_free(&k);
    return total;
}
