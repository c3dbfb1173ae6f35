/* print.c — LoopIR as text, for `relay-tune lower`, golden tests and error
 * messages. Loops read `parallel for k.o in 0..4 {`, stores `o0[i] = v`,
 * allocations `alloc l0: float32[8, 32] local` (the buffer lives until the
 * end of the enclosing block). Variables print as their name hints, with a
 * suffix where two different variables of one function share a hint. */
#include <string.h>

#include "schedule/schedule.h"

typedef struct pnames {
    SU_VEC(const sch_var *) vars;   /* variables named so far */
    SU_VEC(char *) names;           /* their printed names */
} pnames;

typedef struct printer {
    su_buf *b;
    pnames *pn;         /* NULL: print hints as they are */
} printer;

static const char *var_name(printer *p, const sch_var *v)
{
    if (!p->pn)
        return v->name;
    pnames *pn = p->pn;
    for (size_t i = 0; i < pn->vars.len; i++)
        if (pn->vars.data[i] == v)
            return pn->names.data[i];
    int dup = 0;
    for (size_t i = 0; i < pn->vars.len; i++)
        if (!strcmp(pn->vars.data[i]->name, v->name))
            dup++;
    su_buf nb = {0};
    su_buf_puts(&nb, v->name);
    if (dup)
        su_buf_printf(&nb, "_%d", dup);
    su_vec_push(&pn->vars, v);
    su_vec_push(&pn->names, su_buf_take(&nb));
    return pn->names.data[pn->names.len - 1];
}

static int prec(sch_expr_kind k)
{
    switch (k) {
    case SCH_OR: return 1;
    case SCH_AND: return 2;
    case SCH_EQ: case SCH_NE: case SCH_LT: case SCH_LE: case SCH_GT: case SCH_GE: return 3;
    case SCH_ADD: case SCH_SUB: return 4;
    case SCH_MUL: case SCH_DIV: case SCH_MOD: return 5;
    case SCH_NOT: return 6;
    default: return 7;
    }
}

static void pexpr(printer *p, const sch_expr *e, int ctx_prec, bool right);

static void pargs(printer *p, int n, const sch_expr *const *args)
{
    for (int i = 0; i < n; i++) {
        if (i)
            su_buf_puts(p->b, ", ");
        pexpr(p, args[i], 0, false);
    }
}

static void pexpr(printer *p, const sch_expr *e, int ctx_prec, bool right)
{
    su_buf *b = p->b;
    int pr = prec(e->kind);
    bool infix = sch_is_binary(e->kind) && e->kind != SCH_MIN && e->kind != SCH_MAX;
    bool paren = infix && (pr < ctx_prec || (pr == ctx_prec && right));
    if (paren)
        su_buf_putc(b, '(');
    switch (e->kind) {
    case SCH_INT:
        if (e->dtype == IR_BOOL)
            su_buf_puts(b, e->i ? "True" : "False");
        else
            su_buf_printf(b, "%lld", (long long)e->i);
        break;
    case SCH_FLOAT:
        if (e->dtype == IR_FLOAT32)
            ir_print_float32(b, e->f);
        else
            su_buf_printf(b, "%.17gf64", e->f);
        break;
    case SCH_VAR: su_buf_puts(b, var_name(p, e->var)); break;
    case SCH_MIN:
    case SCH_MAX:
        su_buf_printf(b, "%s(", sch_expr_kind_name(e->kind));
        pexpr(p, e->a, 0, false);
        su_buf_puts(b, ", ");
        pexpr(p, e->b, 0, false);
        su_buf_putc(b, ')');
        break;
    case SCH_NOT:
        su_buf_putc(b, '!');
        pexpr(p, e->a, pr, false);
        break;
    case SCH_SELECT:
        su_buf_puts(b, "select(");
        pexpr(p, e->a, 0, false);
        su_buf_puts(b, ", ");
        pexpr(p, e->b, 0, false);
        su_buf_puts(b, ", ");
        pexpr(p, e->c, 0, false);
        su_buf_putc(b, ')');
        break;
    case SCH_CAST:
        su_buf_printf(b, "%s(", ir_dtype_name(e->dtype));
        pexpr(p, e->a, 0, false);
        su_buf_putc(b, ')');
        break;
    case SCH_CALL:
        su_buf_printf(b, "%s(", sch_intrinsic_name(e->fn));
        pargs(p, e->n, e->args);
        su_buf_putc(b, ')');
        break;
    case SCH_LOAD:
        su_buf_printf(b, "%s[", e->buf->name);
        pexpr(p, e->a, 0, false);
        su_buf_putc(b, ']');
        break;
    case SCH_READ:
        su_buf_printf(b, "%s[", e->tensor->name);
        pargs(p, e->n, e->args);
        su_buf_putc(b, ']');
        break;
    default:
        pexpr(p, e->a, pr, false);
        su_buf_printf(b, " %s ", sch_expr_kind_name(e->kind));
        pexpr(p, e->b, pr, true);
        break;
    }
    if (paren)
        su_buf_putc(b, ')');
}

void sch_print_expr(su_buf *b, const sch_expr *e)
{
    printer p = {b, NULL};
    pexpr(&p, e, 0, false);
}

static const char *scope_name(sch_scope s)
{
    static const char *const n[] = {"input", "output", "global", "local"};
    return n[s];
}

static void pshape(su_buf *b, const sch_buffer *buf)
{
    su_buf_printf(b, "%s[", ir_dtype_name(buf->dtype));
    for (int i = 0; i < buf->ndim; i++)
        su_buf_printf(b, "%s%lld", i ? ", " : "", (long long)buf->shape[i]);
    su_buf_putc(b, ']');
}

static void indent_to(su_buf *b, int n)
{
    for (int i = 0; i < n; i++)
        su_buf_puts(b, "  ");
}

static void pstmt(printer *p, const sch_stmt *s, int ind)
{
    su_buf *b = p->b;
    if (!s)
        return;
    switch (s->kind) {
    case SCH_S_FOR:
        indent_to(b, ind);
        if (s->loop != SCH_LOOP_SERIAL)
            su_buf_printf(b, "%s ", sch_loop_kind_name(s->loop));
        if (s->loop == SCH_LOOP_THREAD)
            su_buf_printf(b, "(axis %d) ", s->thread_axis);
        su_buf_printf(b, "for %s in 0..%lld {\n", var_name(p, s->var), (long long)s->extent);
        pstmt(p, s->body, ind + 1);
        indent_to(b, ind);
        su_buf_puts(b, "}\n");
        break;
    case SCH_S_STORE:
        indent_to(b, ind);
        su_buf_printf(b, "%s[", s->buf->name);
        pexpr(p, s->index, 0, false);
        su_buf_puts(b, "] = ");
        pexpr(p, s->value, 0, false);
        su_buf_putc(b, '\n');
        break;
    case SCH_S_IF:
        indent_to(b, ind);
        su_buf_puts(b, "if (");
        pexpr(p, s->cond, 0, false);
        su_buf_puts(b, ") {\n");
        pstmt(p, s->then_s, ind + 1);
        indent_to(b, ind);
        if (s->else_s) {
            su_buf_puts(b, "} else {\n");
            pstmt(p, s->else_s, ind + 1);
            indent_to(b, ind);
        }
        su_buf_puts(b, "}\n");
        break;
    case SCH_S_LET:
        indent_to(b, ind);
        su_buf_printf(b, "let %s = ", var_name(p, s->var));
        pexpr(p, s->value, 0, false);
        su_buf_putc(b, '\n');
        pstmt(p, s->body, ind);
        break;
    case SCH_S_ALLOC:
        indent_to(b, ind);
        su_buf_printf(b, "alloc %s: ", s->buf->name);
        pshape(b, s->buf);
        su_buf_printf(b, " %s\n", scope_name(s->buf->scope));
        pstmt(p, s->body, ind);
        break;
    case SCH_S_SEQ:
        for (int i = 0; i < s->n; i++)
            pstmt(p, s->items[i], ind);
        break;
    }
}

static void pnames_free(pnames *pn)
{
    for (size_t i = 0; i < pn->names.len; i++)
        free(pn->names.data[i]);
    su_vec_free(&pn->names);
    su_vec_free(&pn->vars);
}

void sch_print_stmt(su_buf *b, const sch_stmt *s, int indent)
{
    pnames pn = {0};
    printer p = {b, &pn};
    pstmt(&p, s, indent);
    pnames_free(&pn);
}

void sch_print_func(su_buf *b, const sch_func *f)
{
    pnames pn = {0};
    printer p = {b, &pn};
    su_buf_printf(b, "func %s(", f->name);
    for (int i = 0; i < f->nargs; i++) {
        if (i)
            su_buf_puts(b, ", ");
        su_buf_printf(b, "%s: ", f->args[i]->name);
        pshape(b, f->args[i]);
        if (f->args[i]->scope == SCH_SCOPE_OUTPUT)
            su_buf_puts(b, " out");
    }
    su_buf_puts(b, ") {\n");
    pstmt(&p, f->body, 1);
    su_buf_puts(b, "}\n");
    pnames_free(&pn);
}
