/* printer.c — modules back to Relay text, in TVM's style: every call, tuple,
 * projection, if and closure that is not the direct result of a body becomes
 * a numbered graph binding `%N = ...;` (printed once however often it is
 * used), op attributes are printed only where they differ from the op's
 * defaults, and `/ * ty=... * /` comments show inferred types. The output is
 * canonical: parsing it and printing again yields the same text.
 *
 * Where a binding goes: a graph has no statement order, so each shared node
 * is placed in the innermost body (function, if branch) that encloses all of
 * its uses, as TVM's A-normal-form conversion does, and bindings of one body
 * come in creation order, which for parsed text is the order it was written. */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

typedef struct node_info {
    const char *name;   /* printed name once bound (nodes) or named (vars) */
    int scope;          /* body whose bindings hold this node; -1 = not placed */
    int chain_scope;    /* for a let printed as `let ...;` in a body: that body */
    int child_a, child_b; /* bodies this node opens: if branches, fn body, let in parens */
    int uses;           /* number of places that refer to it */
    bool inline_ok;     /* printed in place as a body's result or let value */
} node_info;

typedef SU_VEC(const ir_expr *) node_vec;

typedef struct printer {
    const ir_print_opts *opts;
    node_info *info;                /* by node id */
    size_t ninfo;
    SU_VEC(int) scope_parent;       /* body tree of the current def */
    SU_VEC(int) scope_depth;
    SU_VEC(su_buf) bufs;            /* lines of each open body, innermost last */
    SU_VEC(uint32_t) bound;         /* ids bound in open bodies (forgotten on close) */
    SU_VEC(size_t) bound_marks;     /* bound.len when each body opened */
    node_vec roots;                 /* body results and let values (inline candidates) */
    su_map used;                    /* names visible at this point of the def */
    SU_VEC(const char *) used_log;  /* the same names in the order they were taken */
    su_arena strs;                  /* the printed names */
    SU_VEC(const ir_tensor *) consts; /* tensor constants, printed as meta[relay.Constant][i] */
    int next_num;                   /* next graph binding number */
    int depth;                      /* body nesting, for indentation */
} printer;

static void expr_text(printer *p, const ir_expr *e, su_buf *t);
static void print_body(printer *p, const ir_expr *e, int scope, su_buf *t);

static node_info *info(printer *p, const ir_expr *e)
{
    p->info = su_grow_zeroed(p->info, &p->ninfo, e->id, sizeof *p->info);
    return &p->info[e->id];
}

static const char *name_of(printer *p, const ir_expr *e)
{
    return info(p, e)->name;
}

static void indent(printer *p, su_buf *b)
{
    for (int i = 0; i < p->depth; i++)
        su_buf_puts(b, "  ");
}

/* The name a variable prints as: its own, made unique within the def. */
static const char *var_name(printer *p, const ir_expr *v)
{
    const char *n = name_of(p, v);
    if (n)
        return n;
    const char *base = v->u.var.name;
    n = base;
    for (int k = 1; su_map_get(&p->used, n); k++)
        n = su_arena_printf(&p->strs, "%s_%d", base, k);
    n = su_arena_strdup(&p->strs, n);
    su_map_put(&p->used, n, (void *)1);
    su_vec_push(&p->used_log, n);
    info(p, v)->name = n;
    return n;
}

static const char *fresh_number(printer *p)
{
    for (;;) {
        const char *n = su_arena_printf(&p->strs, "%d", p->next_num++);
        if (!su_map_get(&p->used, n)) {
            su_map_put(&p->used, n, (void *)1);
            su_vec_push(&p->used_log, n);
            return n;
        }
    }
}

/* A call of a constructor without fields (Nil): printed as its name, in place. */
static bool is_nullary_ctor_call(const ir_expr *e)
{
    return e->kind == IR_CALL && e->u.call.fn->kind == IR_CTOR && e->u.call.nargs == 0;
}

static bool is_atom(const ir_expr *e)
{
    return e->kind == IR_VAR || e->kind == IR_GLOBAL || e->kind == IR_CONST || e->kind == IR_OP ||
           e->kind == IR_CTOR || is_nullary_ctor_call(e);
}

static void type_comment(printer *p, const ir_expr *e, su_buf *b)
{
    if (p->opts->types && e->type) {
        su_buf_puts(b, " /* ty=");
        ir_type_print(b, e->type);
        su_buf_puts(b, " */");
    }
}

static void print_const(printer *p, su_buf *b, const ir_tensor *v)
{
    if (v->ndim != 0) {
        size_t i = 0;
        while (i < p->consts.len && p->consts.data[i] != v)
            i++;
        if (i == p->consts.len)
            su_vec_push(&p->consts, v);
        su_buf_printf(b, "meta[relay.Constant][%zu]", i);
        return;
    }
    double x = ir_tensor_get(v, 0);
    switch (v->dtype) {
    case IR_FLOAT32: ir_print_float32(b, x); return;
    case IR_FLOAT16: su_buf_printf(b, "%.9gf16", x); return;
    case IR_FLOAT64: su_buf_printf(b, "%.17gf64", x); return;
    case IR_BOOL: su_buf_puts(b, x != 0 ? "True" : "False"); return;
    case IR_INT32: su_buf_printf(b, "%lld", (long long)x); return;
    case IR_INT64: su_buf_printf(b, "%lldi64", (long long)((const int64_t *)v->data)[0]); return;
    default: su_buf_printf(b, "%lld%s", (long long)x, v->dtype == IR_UINT8 ? "u8" : v->dtype == IR_INT8 ? "i8" : "i16"); return;
    }
}

static void print_op_attrs(printer *p, const ir_expr *e, su_buf *t, bool *first)
{
    const ir_attrs *at = e->u.call.attrs;
    const ir_op_def *op = ir_call_op(e);
    if (!at || !op)
        return;
    for (int i = 0; i < at->n; i++) {
        if (!op->schema->defs[i].required && ir_attr_equal(&at->vals[i], &op->defaults[i]))
            continue;
        su_buf_printf(t, "%s%s=", *first ? "" : ", ", op->schema->defs[i].name);
        ir_attr_print(t, &at->vals[i]);
        *first = false;
    }
}

static void print_params(printer *p, const ir_expr *f, su_buf *t)
{
    for (int i = 0; i < f->u.func.ntparams; i++)
        su_buf_printf(t, "%s%s", i ? ", " : "[", f->u.func.tparams[i]->name);
    if (f->u.func.ntparams)
        su_buf_putc(t, ']');
    su_buf_putc(t, '(');
    for (int i = 0; i < f->u.func.nparams; i++) {
        const ir_expr *v = f->u.func.params[i];
        su_buf_printf(t, "%s%%%s", i ? ", " : "", var_name(p, v));
        if (v->u.var.vdev) {
            su_buf_puts(t, " {virtual_device=");
            ir_attr_print(t, v->u.var.vdev);
            su_buf_putc(t, '}');
        }
        const ir_type *ty = v->u.var.annot ? v->u.var.annot : v->type;
        if (ty) {
            su_buf_puts(t, ": ");
            ir_type_print(t, ty);
        }
    }
    for (int i = 0; i < f->u.func.nattrs; i++) {
        su_buf_printf(t, "%s%s=", i || f->u.func.nparams ? ", " : "", f->u.func.attrs[i].name);
        ir_attr_print(t, &f->u.func.attrs[i].val);
    }
    su_buf_putc(t, ')');
    const ir_type *ret = f->type && f->type->kind == IR_TY_FUNC ? f->type->ret : f->u.func.ret_annot;
    if (ret) {
        su_buf_puts(t, " -> ");
        ir_type_print(t, ret);
    }
}


/* ---- placement: which body binds each node ---- */

static int new_scope(printer *p, int parent)
{
    su_vec_push(&p->scope_parent, parent);
    su_vec_push(&p->scope_depth, parent < 0 ? 0 : p->scope_depth.data[parent] + 1);
    return (int)p->scope_parent.len - 1;
}

static int lca(printer *p, int a, int b)
{
    while (a != b) {
        if (p->scope_depth.data[a] >= p->scope_depth.data[b])
            a = p->scope_parent.data[a];
        else
            b = p->scope_parent.data[b];
    }
    return a;
}

static void use(printer *p, const ir_expr *e, int scope)
{
    if (is_atom(e))
        return;
    node_info *in = info(p, e);
    in->scope = in->scope < 0 ? scope : lca(p, in->scope, scope);
    in->uses++;
}

/* A body in scope s: its let chain belongs to s, its result is used there. */
static void mark_body(printer *p, const ir_expr *e, int s)
{
    for (; e->kind == IR_LET; e = e->u.let.body)
        info(p, e)->chain_scope = s;
    use(p, e, s);
    su_vec_push(&p->roots, e);
}

/* Collects the nodes (not atoms) reachable from a def body. */
static ir_visit_step gather_node(ir_visitor *v, const ir_expr *e)
{
    if (is_atom(e))
        return IR_VISIT_SKIP;
    su_vec_push((node_vec *)v->ctx, e);
    return IR_VISIT_DESCEND;
}

static int by_id_desc(const void *a, const void *b)
{
    uint32_t x = (*(const ir_expr *const *)a)->id, y = (*(const ir_expr *const *)b)->id;
    return x > y ? -1 : x < y;
}

/* Places every node reachable from a def's body. Users are always created
 * after their operands, so visiting in decreasing id order sees all uses of
 * a node before the node itself. */
static void place(printer *p, const ir_expr *body)
{
    node_vec all = {0};
    ir_visitor v;
    ir_visitor_init(&v, gather_node, NULL, &all);
    ir_visit(&v, body);
    ir_visitor_free(&v);
    for (size_t i = 0; i < all.len; i++) {
        node_info *in = info(p, all.data[i]);
        in->scope = in->chain_scope = in->child_a = in->child_b = -1;
        in->uses = 0;
        in->inline_ok = false;
    }
    p->scope_parent.len = p->scope_depth.len = p->roots.len = 0;
    mark_body(p, body, new_scope(p, -1));
    if (all.len > 1)
        qsort(all.data, all.len, sizeof *all.data, by_id_desc);
    for (size_t i = 0; i < all.len; i++) {
        const ir_expr *e = all.data[i];
        node_info *in = info(p, e);
        int s = in->scope;
        switch (e->kind) {
        case IR_IF:
            use(p, e->u.if_.cond, s);
            in->child_a = new_scope(p, s);
            in->child_b = new_scope(p, s);
            mark_body(p, e->u.if_.then_branch, in->child_a);
            mark_body(p, e->u.if_.else_branch, in->child_b);
            break;
        case IR_FUNC:
            in->child_a = new_scope(p, s);
            mark_body(p, e->u.func.body, in->child_a);
            break;
        case IR_MATCH: /* like an if: a body per clause, scopes child_a, child_a + 1, ... */
            use(p, e->u.match.data, s);
            for (int k = 0; k < e->u.match.n; k++) {
                int c = new_scope(p, s);
                in->child_a = k ? in->child_a : c;
            }
            for (int k = 0; k < e->u.match.n; k++)
                mark_body(p, e->u.match.clauses[k].body, in->child_a + k);
            break;
        case IR_LET:
            if (in->chain_scope < 0) { /* a let as an operand: printed in parentheses */
                in->child_a = new_scope(p, s);
                mark_body(p, e, in->child_a);
            }
            use(p, e->u.let.value, in->chain_scope);
            su_vec_push(&p->roots, e->u.let.value);
            break;
        default: /* calls, tuples, projections: operands are used where the node is */
            for (int k = 0; k < ir_expr_nchildren(e); k++)
                use(p, ir_expr_child(e, k), s);
            break;
        }
    }
    /* a body's result or let value used nowhere else is printed in place */
    for (size_t i = 0; i < p->roots.len; i++)
        if (!is_atom(p->roots.data[i]))
            info(p, p->roots.data[i])->inline_ok = info(p, p->roots.data[i])->uses == 1;
    su_vec_free(&all);
}

/* Appends "{\n" body lines "}" at the current depth. */
static void braced_body(printer *p, const ir_expr *body, int scope, su_buf *t)
{
    su_buf_puts(t, " {\n");
    p->depth++;
    print_body(p, body, scope, t);
    p->depth--;
    indent(p, t);
    su_buf_putc(t, '}');
}

/* Appends how e is referred to as an operand, printing its binding first. */
static void ref(printer *p, const ir_expr *e, su_buf *t)
{
    switch (e->kind) {
    case IR_VAR: su_buf_printf(t, "%%%s", var_name(p, e)); return;
    case IR_GLOBAL: su_buf_printf(t, "@%s", e->u.global.name); return;
    case IR_CONST: print_const(p, t, e->u.constant.value); return;
    case IR_OP: su_buf_puts(t, e->u.op.def->name); return;
    case IR_CTOR: su_buf_puts(t, e->u.ctor.def->name); return;
    default: break;
    }
    if (is_nullary_ctor_call(e)) {
        su_buf_puts(t, e->u.call.fn->u.ctor.def->name);
        return;
    }
    const char *n = name_of(p, e);
    if (!n) {
        su_buf line = {0};
        expr_text(p, e, &line);
        n = fresh_number(p);
        su_buf *out = &p->bufs.data[p->bufs.len - 1];
        indent(p, out);
        su_buf_printf(out, "%%%s = %s", n, su_buf_str(&line));
        type_comment(p, e, out);
        su_buf_puts(out, ";\n");
        su_buf_free(&line);
        info(p, e)->name = n;
        su_vec_push(&p->bound, e->id);
    }
    su_buf_printf(t, "%%%s", n);
}

/* Appends a match clause's pattern; its variables take their def-unique names. */
static void print_pattern(printer *p, const ir_pattern *pt, su_buf *t)
{
    switch (pt->kind) {
    case IR_PT_WILD: su_buf_putc(t, '_'); return;
    case IR_PT_VAR:
        su_buf_printf(t, "%%%s", var_name(p, pt->var));
        if (pt->var->u.var.annot) {
            su_buf_puts(t, ": ");
            ir_type_print(t, pt->var->u.var.annot);
        }
        return;
    case IR_PT_CTOR: case IR_PT_TUPLE:
        if (pt->kind == IR_PT_CTOR)
            su_buf_puts(t, pt->ctor->name);
        if (pt->kind == IR_PT_TUPLE || pt->n) {
            su_buf_putc(t, '(');
            for (int i = 0; i < pt->n; i++) {
                su_buf_puts(t, i ? ", " : "");
                print_pattern(p, &pt->subs[i], t);
            }
            su_buf_puts(t, pt->kind == IR_PT_TUPLE && pt->n == 1 ? ",)" : ")");
        }
        return;
    }
}

/* Appends the inline text of a non-atomic e; operands are bound first. */
static void expr_text(printer *p, const ir_expr *e, su_buf *t)
{
    node_info *in = info(p, e);
    switch (e->kind) {
    case IR_CALL: {
        su_buf args = {0};
        bool first = true;
        for (int i = 0; i < e->u.call.nargs; i++) {
            su_buf_puts(&args, first ? "" : ", ");
            ref(p, e->u.call.args[i], &args);
            first = false;
        }
        print_op_attrs(p, e, &args, &first);
        for (int i = 0; i < e->u.call.nkvs; i++) {
            su_buf_printf(&args, "%s%s=", first ? "" : ", ", e->u.call.kvs[i].name);
            ir_attr_print(&args, &e->u.call.kvs[i].val);
            first = false;
        }
        ref(p, e->u.call.fn, t);
        su_buf_printf(t, "(%s)", su_buf_str(&args));
        su_buf_free(&args);
        return;
    }
    case IR_TUPLE:
        su_buf_putc(t, '(');
        for (int i = 0; i < e->u.tuple.n; i++) {
            su_buf_puts(t, i ? ", " : "");
            ref(p, e->u.tuple.fields[i], t);
        }
        su_buf_puts(t, e->u.tuple.n == 1 ? ",)" : ")");
        return;
    case IR_PROJ:
        ref(p, e->u.proj.tuple, t);
        su_buf_printf(t, ".%d", e->u.proj.index);
        return;
    case IR_IF:
        su_buf_puts(t, "if (");
        ref(p, e->u.if_.cond, t);
        su_buf_putc(t, ')');
        braced_body(p, e->u.if_.then_branch, in->child_a, t);
        su_buf_puts(t, " else");
        braced_body(p, e->u.if_.else_branch, in->child_b, t);
        return;
    case IR_FUNC: {
        /* parameter names are local to the function: siblings may reuse them */
        size_t mark = p->used_log.len;
        su_buf_puts(t, "fn ");
        print_params(p, e, t);
        braced_body(p, e->u.func.body, in->child_a, t);
        su_map_free(&p->used);
        p->used_log.len = mark;
        for (size_t i = 0; i < mark; i++)
            su_map_put(&p->used, p->used_log.data[i], (void *)1);
        return;
    }
    case IR_MATCH: {
        int first = in->child_a;   /* read now: naming pattern variables may grow the info table */
        su_buf_puts(t, e->u.match.partial ? "match? (" : "match (");
        ref(p, e->u.match.data, t);
        su_buf_puts(t, ") {");
        p->depth++;
        for (int i = 0; i < e->u.match.n; i++) {
            su_buf_putc(t, '\n');
            indent(p, t);
            print_pattern(p, &e->u.match.clauses[i].pat, t);
            su_buf_puts(t, " =>");
            braced_body(p, e->u.match.clauses[i].body, first + i, t);
            su_buf_putc(t, ',');
        }
        p->depth--;
        su_buf_putc(t, '\n');
        indent(p, t);
        su_buf_putc(t, '}');
        return;
    }
    case IR_REF_NEW: case IR_REF_READ: case IR_REF_WRITE:
        su_buf_puts(t, e->kind == IR_REF_NEW ? "ref(" : e->kind == IR_REF_READ ? "ref_read(" : "ref_write(");
        ref(p, e->kind == IR_REF_NEW ? e->u.ref.value : e->u.ref.ref, t);
        if (e->kind == IR_REF_WRITE) {
            su_buf_puts(t, ", ");
            ref(p, e->u.ref.value, t);
        }
        su_buf_putc(t, ')');
        return;
    case IR_DEVICE:
        su_buf_puts(t, e->u.device.copy ? "device_copy(" : "on_device(");
        ref(p, e->u.device.value, t);
        for (int i = 0; i < e->u.device.nkvs; i++) {
            su_buf_printf(t, ", %s=", e->u.device.kvs[i].name);
            ir_attr_print(t, &e->u.device.kvs[i].val);
        }
        su_buf_putc(t, ')');
        return;
    case IR_LET: /* a let in operand position: a parenthesized body */
        su_buf_puts(t, "(\n");
        p->depth++;
        print_body(p, e, in->child_a, t);
        p->depth--;
        indent(p, t);
        su_buf_putc(t, ')');
        return;
    default:
        ref(p, e, t);
        return;
    }
}

typedef struct collector { printer *p; int scope; node_vec *acc; } collector;

/* Collects the unbound nodes placed in the collector's scope: a bound node
 * is printed by its name, so what it needs is bound already. */
static ir_visit_step collect_node(ir_visitor *v, const ir_expr *e)
{
    collector *c = v->ctx;
    if (is_atom(e) || name_of(c->p, e))
        return IR_VISIT_SKIP;
    node_info *in = info(c->p, e);
    if (in->scope == c->scope && !in->inline_ok)
        su_vec_push(c->acc, e);
    return IR_VISIT_DESCEND;
}

/* Binds, in creation order, the nodes of scope s that e needs. */
static void prebind(printer *p, const ir_expr *e, int s)
{
    node_vec acc = {0};
    collector c = {p, s, &acc};
    ir_visitor v;
    ir_visitor_init(&v, collect_node, NULL, &c);
    ir_visit(&v, e);
    ir_visitor_free(&v);
    if (acc.len > 1)
        qsort(acc.data, acc.len, sizeof *acc.data, by_id_desc);
    su_buf scratch = {0};
    for (size_t i = acc.len; i-- > 0;) {
        su_buf_clear(&scratch);
        ref(p, acc.data[i], &scratch);
    }
    su_buf_free(&scratch);
    su_vec_free(&acc);
}

/* The text of a body's result or let value: in place, or its binding's name. */
static void value_text(printer *p, const ir_expr *e, su_buf *t)
{
    if (is_atom(e) || name_of(p, e) || !info(p, e)->inline_ok)
        ref(p, e, t);
    else
        expr_text(p, e, t);
}

/* Appends the lines of a body of scope s (its bindings, lets and result) to t. */
static void print_body(printer *p, const ir_expr *e, int s, su_buf *t)
{
    su_vec_push(&p->bufs, ((su_buf){0}));
    su_vec_push(&p->bound_marks, p->bound.len);
    for (; e->kind == IR_LET; e = e->u.let.body) {
        prebind(p, e->u.let.value, s);
        su_buf val = {0};
        value_text(p, e->u.let.value, &val);
        su_buf *out = &p->bufs.data[p->bufs.len - 1];
        indent(p, out);
        const ir_expr *v = e->u.let.var;
        su_buf_printf(out, "let %%%s", var_name(p, v));
        if (v->u.var.annot) {
            su_buf_puts(out, ": ");
            ir_type_print(out, v->u.var.annot);
        }
        su_buf_printf(out, " = %s;\n", su_buf_str(&val));
        su_buf_free(&val);
    }
    prebind(p, e, s);
    su_buf last = {0};
    bool in_place = !is_atom(e) && !name_of(p, e) && info(p, e)->inline_ok;
    value_text(p, e, &last);
    su_buf *out = &p->bufs.data[p->bufs.len - 1];
    indent(p, out);
    su_buf_puts(out, su_buf_str(&last));
    if (in_place)
        type_comment(p, e, out);
    su_buf_putc(out, '\n');
    su_buf_free(&last);
    /* close the body: its bindings go out of scope, its lines to the caller */
    size_t mark = p->bound_marks.data[--p->bound_marks.len];
    for (size_t i = mark; i < p->bound.len; i++)
        p->info[p->bound.data[i]].name = NULL;
    p->bound.len = mark;
    su_buf lines = p->bufs.data[--p->bufs.len];
    su_buf_puts(t, su_buf_str(&lines));
    su_buf_free(&lines);
}

static void printer_reset_def(printer *p)
{
    su_map_free(&p->used);
    p->used_log.len = 0;
    for (size_t i = 0; i < p->ninfo; i++)
        p->info[i].name = NULL;
    p->next_num = 0;
}

static void printer_free(printer *p)
{
    su_vec_free(&p->bufs);
    su_vec_free(&p->bound);
    su_vec_free(&p->bound_marks);
    su_vec_free(&p->scope_parent);
    su_vec_free(&p->scope_depth);
    su_vec_free(&p->roots);
    free(p->info);
    su_vec_free(&p->consts);
    su_map_free(&p->used);
    su_vec_free(&p->used_log);
    su_arena_free(&p->strs);
}

/* `type List[A] {\n  Cons(A, List[A]),\n  Nil,\n}` or `extern type T[A]`. */
static void print_adt(su_buf *out, const ir_adt *adt)
{
    su_buf_printf(out, "%stype %s", adt->is_extern ? "extern " : "", adt->name);
    for (int i = 0; i < adt->ntparams; i++)
        su_buf_printf(out, "%s%s", i ? ", " : "[", adt->tparams[i]->name);
    if (adt->ntparams)
        su_buf_putc(out, ']');
    if (adt->nctors)
        su_buf_puts(out, " {\n");
    for (int k = 0; k < adt->nctors; k++) {
        const ir_ctor *c = &adt->ctors[k];
        su_buf_printf(out, "  %s", c->name);
        for (int i = 0; i < c->nfields; i++) {
            su_buf_puts(out, i ? ", " : "(");
            ir_type_print(out, c->fields[i]);
        }
        su_buf_puts(out, c->nfields ? "),\n" : ",\n");
    }
    su_buf_puts(out, adt->nctors ? "}\n" : "\n");
}

void ir_print_module(su_buf *out, const ir_module *m, const ir_print_opts *opts)
{
    static const ir_print_opts defaults = {true};
    printer p = {.opts = opts ? opts : &defaults};
    su_buf_puts(out, "#[version = \"0.0.5\"]\n");
    for (size_t i = 0; i < m->adts.len; i++)
        print_adt(out, m->adts.data[i]);
    for (size_t i = 0; i < m->defs.len; i++) {
        const ir_global_def *g = &m->defs.data[i];
        printer_reset_def(&p);
        place(&p, g->func->u.func.body);
        su_buf_printf(out, "def @%s", g->name);
        print_params(&p, g->func, out);
        braced_body(&p, g->func->u.func.body, 0, out);
        su_buf_putc(out, '\n');
    }
    if (p.consts.len)
        ir_metadata_print(out, p.consts.data, p.consts.len);
    printer_free(&p);
}

void ir_print_expr(su_buf *out, const ir_expr *e, const ir_print_opts *opts)
{
    static const ir_print_opts defaults = {true};
    printer p = {.opts = opts ? opts : &defaults};
    place(&p, e);
    print_body(&p, e, 0, out);
    printer_free(&p);
}
