/* expr.c — building Relay expressions. Every builder allocates in the module's
 * arena, copies its argument arrays and numbers the node, so that nodes can be
 * shared freely (a graph binding used twice is one node) and never freed alone. */
#include <string.h>

#include "ir/ir.h"

static const char *const kind_names[] = {
#define X(id, name) name,
    IR_EXPR_KINDS(X)
#undef X
};

const char *ir_expr_kind_name(ir_expr_kind k)
{
    return kind_names[k];
}

static ir_expr *node(ir_module *m, ir_expr_kind k, su_span sp)
{
    ir_expr *e = su_arena_alloc(&m->arena, sizeof *e);
    e->kind = k;
    e->span = sp;
    e->id = m->next_id++;
    return e;
}

static ir_expr **dup_exprs(ir_module *m, int n, ir_expr *const *xs)
{
    return n ? su_arena_dup(&m->arena, xs, (size_t)n * sizeof *xs) : NULL;
}

ir_expr *ir_var(ir_module *m, su_span sp, const char *name, const ir_type *annot)
{
    ir_expr *e = node(m, IR_VAR, sp);
    e->u.var.name = su_arena_strdup(&m->arena, name);
    e->u.var.annot = annot;
    return e;
}

ir_expr *ir_global(ir_module *m, su_span sp, const char *name)
{
    ir_expr *e = node(m, IR_GLOBAL, sp);
    e->u.global.name = su_arena_strdup(&m->arena, name);
    return e;
}

ir_expr *ir_const(ir_module *m, su_span sp, const ir_tensor *value)
{
    ir_expr *e = node(m, IR_CONST, sp);
    e->u.constant.value = value;
    return e;
}

ir_expr *ir_call(ir_module *m, su_span sp, ir_expr *fn, int nargs, ir_expr *const *args, const ir_attrs *attrs)
{
    if (!fn)
        su_panic("call without a callee");
    for (int i = 0; i < nargs; i++)
        if (!args[i])
            su_panic("call argument %d is missing", i);
    ir_expr *e = node(m, IR_CALL, sp);
    e->u.call.fn = fn;
    e->u.call.nargs = nargs;
    e->u.call.args = dup_exprs(m, nargs, args);
    e->u.call.attrs = attrs;
    return e;
}

ir_expr *ir_let(ir_module *m, su_span sp, ir_expr *var, ir_expr *value, ir_expr *body)
{
    if (!var || !value || !body)
        su_panic("let with a missing part");
    ir_expr *e = node(m, IR_LET, sp);
    e->u.let.var = var;
    e->u.let.value = value;
    e->u.let.body = body;
    return e;
}

ir_expr *ir_if(ir_module *m, su_span sp, ir_expr *c, ir_expr *t, ir_expr *f)
{
    if (!c || !t || !f)
        su_panic("if with a missing part");
    ir_expr *e = node(m, IR_IF, sp);
    e->u.if_.cond = c;
    e->u.if_.then_branch = t;
    e->u.if_.else_branch = f;
    return e;
}

ir_expr *ir_tuple(ir_module *m, su_span sp, int n, ir_expr *const *fields)
{
    ir_expr *e = node(m, IR_TUPLE, sp);
    e->u.tuple.n = n;
    e->u.tuple.fields = dup_exprs(m, n, fields);
    return e;
}

ir_expr *ir_proj(ir_module *m, su_span sp, ir_expr *tuple, int index)
{
    ir_expr *e = node(m, IR_PROJ, sp);
    e->u.proj.tuple = tuple;
    e->u.proj.index = index;
    return e;
}

ir_expr *ir_func(ir_module *m, su_span sp, int nparams, ir_expr *const *params, const ir_type *ret_annot,
                 ir_expr *body, int nattrs, const ir_attr_kv *attrs)
{
    ir_expr *e = node(m, IR_FUNC, sp);
    e->u.func.nparams = nparams;
    e->u.func.params = dup_exprs(m, nparams, params);
    e->u.func.ret_annot = ret_annot;
    e->u.func.body = body;
    e->u.func.nattrs = nattrs;
    e->u.func.attrs = nattrs ? su_arena_dup(&m->arena, attrs, (size_t)nattrs * sizeof *attrs) : NULL;
    return e;
}

ir_expr *ir_op_ref(ir_module *m, su_span sp, const ir_op_def *def)
{
    ir_expr *e = node(m, IR_OP, sp);
    e->u.op.def = def;
    return e;
}

ir_expr *ir_op_call(ir_module *m, su_span sp, ir_op_id op, int nargs, ir_expr *const *args, const ir_attrs *attrs)
{
    const ir_op_def *def = ir_op_get(op);
    if (!attrs)
        attrs = ir_op_default_attrs(&m->arena, def);
    return ir_call(m, sp, ir_op_ref(m, sp, def), nargs, args, attrs);
}

const ir_op_def *ir_call_op(const ir_expr *e)
{
    if (e->kind != IR_CALL || e->u.call.fn->kind != IR_OP)
        return NULL;
    return e->u.call.fn->u.op.def;
}

bool ir_func_is_primitive(const ir_expr *e)
{
    if (e->kind != IR_FUNC)
        return false;
    for (int i = 0; i < e->u.func.nattrs; i++)
        if (strcmp(e->u.func.attrs[i].name, "Primitive") == 0 && e->u.func.attrs[i].val.i != 0)
            return true;
    return false;
}

const ir_attr_val *ir_call_attr(const ir_expr *call, const char *name)
{
    const ir_op_def *op = ir_call_op(call);
    int i = op && call->u.call.attrs ? ir_op_attr_index(op, name, strlen(name)) : -1;
    return i < 0 ? NULL : &call->u.call.attrs->vals[i];
}

ir_expr *ir_ctor_ref(ir_module *m, su_span sp, const ir_ctor *def)
{
    ir_expr *e = node(m, IR_CTOR, sp);
    e->u.ctor.def = def;
    return e;
}

ir_expr *ir_match(ir_module *m, su_span sp, ir_expr *data, int n, const ir_clause *clauses, bool partial)
{
    if (!data)
        su_panic("match without a scrutinee");
    ir_expr *e = node(m, IR_MATCH, sp);
    e->u.match.data = data;
    e->u.match.n = n;
    e->u.match.clauses = n ? su_arena_dup(&m->arena, clauses, (size_t)n * sizeof *clauses) : NULL;
    e->u.match.partial = partial;
    return e;
}

ir_expr *ir_ref_expr(ir_module *m, su_span sp, ir_expr_kind kind, ir_expr *ref, ir_expr *value)
{
    if ((kind != IR_REF_NEW && !ref) || (kind != IR_REF_READ && !value))
        su_panic("reference expression with a missing part");
    ir_expr *e = node(m, kind, sp);
    e->u.ref.ref = ref;
    e->u.ref.value = value;
    return e;
}

ir_expr *ir_device(ir_module *m, su_span sp, bool copy, ir_expr *value, int nkvs, const ir_attr_kv *kvs)
{
    if (!value)
        su_panic("device annotation without a value");
    ir_expr *e = node(m, IR_DEVICE, sp);
    e->u.device.copy = copy;
    e->u.device.value = value;
    e->u.device.nkvs = nkvs;
    e->u.device.kvs = nkvs ? su_arena_dup(&m->arena, kvs, (size_t)nkvs * sizeof *kvs) : NULL;
    return e;
}
