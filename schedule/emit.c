/* emit.c — the one walk over LoopIR that every printed language shares: the
 * C target (targets/lang_c.c) and the LoopIR printer (print.c) are records
 * of forms (sch_lang in schedule.h), never walks of their own. The walk
 * decides which form a node takes and fills the form's slots: operands in
 * their precedence context, names of variables, the mark of a loop (what it
 * is: the outermost parallel loop of a nest, a vectorized loop with or
 * without a store carried across iterations, ...), the bounds of the loop
 * counters and lets around it (an integer division takes the language's
 * floor form unless its numerator is provably non-negative). A second
 * C-like language is a second record. */
#include <string.h>

#include "schedule/schedule.h"

typedef struct emitter {
    su_buf *b;
    const sch_lang *l;
    int depth;
    bool hints;                     /* names: hints as they are (sch_emit_expr) */
    SU_VEC(const sch_var *) vars;   /* variables named so far */
    SU_VEC(char *) names;           /* their names */
    int next_loop, next_let, next_acc;
    int par_depth;                  /* enclosing parallel loops */
    sch_bounds_ctx bc;              /* bounds of the enclosing loop counters and lets */
    /* a vectorized loop printed as vector types (sch_lang_vector): its
     * counter (NULL outside one), lanes and stored buffer; expressions
     * using the counter print as vectors */
    sch_var *vec_var;
    int vec_lanes;
    su_arena arena;                 /* lane 0's indices of vector accesses */
    bool arena_live;
} emitter;

/* What the slots of one form stand for; unset slots are NULL (or -1). */
typedef struct slots {
    const sch_expr *op[3];          /* $0 $1 $2 */
    int ctx;                        /* their precedence context */
    bool infix;                     /* $1 sits on the right of an infix operator */
    int nargs;                      /* $* (-1: none) */
    const sch_expr *const *args;
    int dtype;                      /* $t (-1: none) */
    const char *buf;                /* $b */
    const sch_buffer *shape;        /* $s $e $z */
    const sch_var *var;             /* $v */
    int64_t extent;                 /* $n $N (-1: none) */
    int axis;                       /* $a (-1: none) */
    const char *fn;                 /* $F */
    int acc;                        /* $r (-1: none) */
    const char *redop;              /* $o */
    const char *mark;               /* $p */
    const char *update;             /* $U */
    const char *entry, *func_name;  /* $f $h */
    int index;                      /* $i (-1: none) */
    const sch_func *func;           /* $A $W $P */
    const sch_stmt *body, *other;   /* $B $O */
    bool stored;                    /* $t, $z: of a buffer that holds the storage type (an argument) */
    int lanes;                      /* $t: a vector of this many (0: a scalar) */
} slots;

#define NO_SLOTS {.nargs = -1, .dtype = -1, .extent = -1, .axis = -1, .acc = -1, .index = -1}

static void expr(emitter *m, const sch_expr *e, int ctx, bool right);
static void stmt(emitter *m, const sch_stmt *s);

/* ---- names --------------------------------------------------------------- */

static const char *var_name(emitter *m, const sch_var *v, bool let)
{
    if (m->hints)
        return v->name;
    for (size_t i = 0; i < m->vars.len; i++)
        if (m->vars.data[i] == v)
            return m->names.data[i];
    su_buf nb = {0};
    const char *prefix = let ? m->l->let_var : m->l->loop_var;
    if (prefix) {
        su_buf_printf(&nb, "%s%d", prefix, let ? m->next_let++ : m->next_loop++);
    } else {
        int dup = 0;
        for (size_t i = 0; i < m->vars.len; i++)
            dup += !strcmp(m->vars.data[i]->name, v->name);
        su_buf_puts(&nb, v->name);
        if (dup)
            su_buf_printf(&nb, "_%d", dup);
    }
    su_vec_push(&m->vars, v);
    su_vec_push(&m->names, su_buf_take(&nb));
    return m->names.data[m->names.len - 1];
}

static const char *type_name(const emitter *m, int dt)
{
    return m->l->types ? m->l->types[dt] : ir_dtype_name((ir_dtype)dt);
}

/* The storage form of dtype dt, or NULL where its values are stored as they are. */
static const sch_lang_storage *storage_of(const emitter *m, int dt)
{
    const sch_lang_storage *st = m->l->storage && dt >= 0 ? &m->l->storage[dt] : NULL;
    return st && st->type ? st : NULL;
}

/* Arguments hold the storage type; temporaries hold values. */
static bool is_stored(const sch_buffer *b)
{
    return b->scope == SCH_SCOPE_INPUT || b->scope == SCH_SCOPE_OUTPUT;
}

/* Bytes of buffer b as the language holds it. */
static int64_t buffer_bytes(const emitter *m, const sch_buffer *b)
{
    const sch_lang_storage *st = storage_of(m, b->dtype);
    return b->size * (st && !is_stored(b) ? st->value_bytes : ir_dtype_bytes(b->dtype));
}

/* ---- patterns ------------------------------------------------------------ */

static void list(emitter *m, const slots *x, const char *const *forms, bool params);

/* Whether slot c has a value in x (a form using one that has none is a bug
 * of its table). */
static bool has_slot(const emitter *m, const slots *x, char c)
{
    switch (c) {
    case '0': case '1': case '2': return x->op[c - '0'] != NULL;
    case '*': return x->nargs >= 0;
    case 't': return x->dtype >= 0;
    case 'b': return x->buf != NULL;
    case 's': case 'e': case 'z': return x->shape != NULL;
    case 'v': return x->var != NULL;
    case 'n': case 'N': return x->extent >= 0;
    case 'a': return x->axis >= 0;
    case 'F': return x->fn != NULL;
    case 'r': return x->acc >= 0 && m->l->acc_var;
    case 'o': return x->redop != NULL;
    case 'f': case 'h': return x->entry != NULL;
    case 'i': return x->index >= 0;
    case 'A': case 'W': return x->func != NULL;
    case 'p': case '$': return true;
    default: su_panic("%s: unknown slot $%c in a form", m->l->name, c ? c : '0');
    }
}

/* Appends pattern p with its slots filled from x. */
static void render(emitter *m, const char *p, const slots *x)
{
    su_buf *b = m->b;
    for (; *p; p++) {
        if (*p != '$') {
            /* the text up to the next slot in one piece */
            size_t n = strcspn(p, "$");
            su_buf_putn(b, p, n);
            p += n - 1;
            continue;
        }
        char c = *++p;
        if (!has_slot(m, x, c))
            su_panic("%s: a form uses $%c where the node has none", m->l->name, c);
        switch (c) {
        case '0': case '1': case '2': expr(m, x->op[c - '0'], x->ctx, x->infix && c == '1'); break;
        case '*':
            for (int i = 0; i < x->nargs; i++) {
                if (i)
                    su_buf_puts(b, ", ");
                expr(m, x->args[i], x->ctx, false);
            }
            break;
        case 't':
            su_buf_puts(b, x->stored && storage_of(m, x->dtype) ? storage_of(m, x->dtype)->type : type_name(m, x->dtype));
            if (x->lanes)
                su_buf_printf(b, "%d", x->lanes);
            break;
        case 'b': su_buf_puts(b, x->buf); break;
        case 's':
            for (int i = 0; i < x->shape->ndim; i++)
                su_buf_printf(b, "%s%lld", i ? ", " : "", (long long)x->shape->shape[i]);
            break;
        case 'e': su_buf_printf(b, "%lld", (long long)x->shape->size); break;
        case 'z': su_buf_printf(b, "%lld", (long long)buffer_bytes(m, x->shape)); break;
        case 'v': su_buf_puts(b, var_name(m, x->var, false)); break;
        case 'n': m->l->int_lit(b, IR_INT64, x->extent); break;
        case 'N': su_buf_printf(b, "%lld", (long long)x->extent); break;
        case 'a': su_buf_printf(b, "%d", x->axis); break;
        case 'F': su_buf_puts(b, x->fn); break;
        case 'r': su_buf_printf(b, "%s%d", m->l->acc_var, x->acc); break;
        case 'o': su_buf_puts(b, x->redop); break;
        case 'p':
            if (x->mark)
                render(m, x->mark, x);
            break;
        case 'f': su_buf_puts(b, x->entry); break;
        case 'h': su_buf_puts(b, x->func_name); break;
        case 'i': su_buf_printf(b, "%d", x->index); break;
        case 'A': list(m, x, m->l->param, true); break;
        case 'W': list(m, x, m->l->entry_arg, false); break;
        default: su_buf_putc(b, '$'); break;   /* $$ */
        }
    }
}

/* The slots of argument i of x->func. */
static slots arg_slots(const slots *x, int i)
{
    const sch_buffer *a = x->func->args[i];
    slots y = *x;
    y.buf = a->name;
    y.dtype = a->dtype;
    y.shape = a;
    y.index = i;
    y.stored = is_stored(a);
    return y;
}

/* $A or $W: one form per argument (by its scope), joined by ", ". */
static void list(emitter *m, const slots *x, const char *const *forms, bool params)
{
    const sch_func *f = x->func;
    if (!f->nargs && params && m->l->no_params)
        su_buf_puts(m->b, m->l->no_params);
    for (int i = 0; i < f->nargs; i++) {
        if (i)
            su_buf_puts(m->b, ", ");
        slots y = arg_slots(x, i);
        if (!forms[f->args[i]->scope])
            su_panic("%s: no form for an argument of scope %d", m->l->name, (int)f->args[i]->scope);
        render(m, forms[f->args[i]->scope], &y);
    }
}

static void indent(emitter *m, int depth)
{
    for (int i = 0; i < depth; i++)
        su_buf_puts(m->b, m->l->indent);
}

static void line(emitter *m, int depth, const char *p, const slots *x)
{
    if (*p)
        indent(m, depth);
    render(m, p, x);
    su_buf_putc(m->b, '\n');
}

/* Entering the body of a loop or a let (its $B, or a reduction's $U): a
 * loop's counter ranges over [0, extent) there, and one more parallel loop
 * encloses it where the loop is parallel; a let's integer variable has the
 * bounds of its value, where they are known. Returns whether bounds were
 * pushed. */
static bool enter(emitter *m, const sch_stmt *s)
{
    if (s->kind == SCH_S_FOR) {
        m->par_depth += s->loop == SCH_LOOP_PARALLEL;
        sch_bounds_push(&m->bc, s->var, 0, s->extent - 1);
        return true;
    }
    int64_t lo, hi;
    bool bounded = !ir_dtype_is_float(s->value->dtype) && sch_bounds(&m->bc, s->value, &lo, &hi);
    if (bounded)
        sch_bounds_push(&m->bc, s->var, lo, hi);
    return bounded;
}

static void leave(emitter *m, const sch_stmt *s, bool pushed)
{
    if (pushed)
        sch_bounds_pop(&m->bc);
    if (s->kind == SCH_S_FOR)
        m->par_depth -= s->loop == SCH_LOOP_PARALLEL;
}

/* A nested statement (at $B or $O) at depth d. */
static void nested(emitter *m, const sch_stmt *s, int d)
{
    int saved = m->depth;
    m->depth = d;
    stmt(m, s);
    m->depth = saved;
}

/* Prints a statement form's lines for the node whose slots are x; scope
 * (NULL for none) is the loop or let whose body $B (or $U) is. */
static void lines(emitter *m, const sch_lang_line *ls, const slots *x, const sch_stmt *scope)
{
    if (!ls)
        su_panic("%s: a statement has no form in this language", m->l->name);
    for (; ls->text; ls++) {
        int d = m->depth + ls->depth;
        const char *t = ls->text;
        if (!strcmp(t, "$O")) {
            nested(m, x->other, d);
        } else if (!strcmp(t, "$B") || !strcmp(t, "$U")) {
            if (t[1] == 'U' && !x->update)
                su_panic("%s: a form uses $U where the node has none", m->l->name);
            bool pushed = scope && enter(m, scope);
            if (t[1] == 'B')
                nested(m, x->body, d);
            else
                line(m, d, x->update, x);
            if (scope)
                leave(m, scope, pushed);
        } else if (!strcmp(t, "$P")) {
            if (!x->func)
                su_panic("%s: a form uses $P where the node has none", m->l->name);
            for (int i = 0; i < x->func->nargs; i++) {
                const char *p = m->l->param_line[x->func->args[i]->scope];
                slots y = arg_slots(x, i);
                if (p)
                    line(m, d, p, &y);
            }
        } else if (!strcmp(t, "$p")) {
            if (x->mark)
                line(m, d, x->mark, x);
        } else {
            line(m, d, t, x);
        }
    }
}

/* ---- expressions ---------------------------------------------------------- */

/* True when integer division of e->a by e->b has no negative operand: the
 * language's plain / and % then agree with floor semantics. */
static bool plain_divmod(const emitter *m, const sch_expr *e)
{
    int64_t lo, hi;
    if (e->b->kind != SCH_INT || e->b->i <= 0)
        return false;
    sch_bounds(&m->bc, e->a, &lo, &hi);
    return lo >= 0;
}

/* The form of e: the kind's, the storage forms of a load from an argument or
 * a cast of a stored dtype, or the floor or float forms of DIV and MOD. */
static const sch_lang_op *op_of(const emitter *m, const sch_expr *e)
{
    const sch_lang *l = m->l;
    const sch_lang_op *o = &l->ops[e->kind];
    const sch_lang_storage *st = storage_of(m, e->dtype);
    if (st && e->kind == SCH_LOAD && is_stored(e->buf) && st->load.form)
        return &st->load;
    if (st && e->kind == SCH_CAST && st->cast.form)
        return &st->cast;
    if (e->kind != SCH_DIV && e->kind != SCH_MOD)
        return o;
    if (ir_dtype_is_float(e->dtype)) {
        const sch_lang_op *f = &l->float_mod[e->dtype == IR_FLOAT64];
        return e->kind == SCH_MOD && f->form ? f : o;
    }
    const sch_lang_op *fl = e->kind == SCH_DIV ? &l->floor_div : &l->floor_mod;
    return fl->form && !plain_divmod(m, e) ? fl : o;
}

static bool needs_paren(const emitter *m, int pr, int ctx, bool right)
{
    int mx = m->l->mixed_prec;
    return pr < ctx || (pr == ctx && right) || (pr <= mx && ctx > 0 && ctx <= mx && pr != ctx);
}

static bool vector_expr(emitter *m, const sch_expr *e, int ctx, bool right);

static void expr(emitter *m, const sch_expr *e, int ctx, bool right)
{
    if (m->vec_var && vector_expr(m, e, ctx, right))
        return;
    switch (e->kind) {
    case SCH_INT: m->l->int_lit(m->b, e->dtype, e->i); return;
    case SCH_FLOAT: m->l->float_lit(m->b, e->dtype, e->f); return;
    case SCH_VAR: su_buf_puts(m->b, var_name(m, e->var, false)); return;
    default: break;
    }
    const sch_lang_op *o = op_of(m, e);
    if (!o->form)
        su_panic("%s: LoopIR's %s has no form (a %s reached printing)", m->l->name, sch_expr_kind_name(e->kind),
                 e->kind == SCH_READ ? "tensor read" : "node");
    slots x = NO_SLOTS;
    x.op[0] = e->a;
    x.op[1] = e->b;
    x.op[2] = e->c;
    x.ctx = o->prec;
    x.infix = o->infix;
    x.dtype = e->dtype;
    x.lanes = m->vec_var ? m->vec_lanes : 0;
    if (e->kind == SCH_CALL || e->kind == SCH_READ) {
        x.nargs = e->n;
        x.args = e->args;
    }
    if (e->kind == SCH_LOAD)
        x.buf = e->buf->name;
    if (e->kind == SCH_READ)
        x.buf = e->tensor->name;
    if (e->kind == SCH_CALL) {
        const char *fn = m->l->intrinsics[e->fn][e->dtype == IR_FLOAT64];
        x.fn = fn ? fn : sch_intrinsic_name(e->fn);
    }
    bool paren = o->infix && needs_paren(m, o->prec, ctx, right);
    if (paren)
        su_buf_putc(m->b, '(');
    render(m, o->form, &x);
    if (paren)
        su_buf_putc(m->b, ')');
}

/* ---- loops ---------------------------------------------------------------- */

static bool is_load_of(const void *b, const sch_expr *n)
{
    return n->kind == SCH_LOAD && n->buf == b;
}

/* For a vectorized loop whose body is `b[i] = b[i] OP e` (OP +, max or min;
 * i and b fixed over the loop): OP's position in sch_lang_reduction (0 +, 1
 * max, 2 min), and e in *rest; -1 otherwise. Such a loop is a reduction
 * vectorized as lanes that accumulate apart (annotate.c). */
static int simd_reduction(const sch_stmt *f, const sch_expr **rest)
{
    const sch_stmt *st = f->body;
    if (!st || st->kind != SCH_S_STORE || sch_expr_uses(st->index, f->var))
        return -1;
    const sch_expr *v = st->value;
    int op = v->kind == SCH_ADD ? 0 : v->kind == SCH_MAX ? 1 : v->kind == SCH_MIN ? 2 : -1;
    if (op < 0)
        return -1;
    for (int side = 0; side < 2; side++) {
        const sch_expr *acc = side ? v->b : v->a, *e = side ? v->a : v->b;
        if (acc->kind == SCH_LOAD && acc->buf == st->buf && sch_expr_equal(acc->a, st->index) &&
            !sch_expr_any(e, is_load_of, st->buf)) {
            *rest = e;
            return op;
        }
    }
    return -1;
}

/* True when a store under s writes one element for every iteration of v
 * (its index does not use v): the iterations of a vectorized loop over v
 * then depend on each other. */
static bool carried_store(const sch_stmt *s, const sch_var *v)
{
    if (!s)
        return false;
    switch (s->kind) {
    case SCH_S_STORE: return !sch_expr_uses(s->index, v);
    case SCH_S_IF: return carried_store(s->then_s, v) || carried_store(s->else_s, v);
    case SCH_S_SEQ:
        for (int i = 0; i < s->n; i++)
            if (carried_store(s->items[i], v))
                return true;
        return false;
    default: return carried_store(s->body, v);
    }
}

/* ---- vector types (sch_lang_vector) ---------------------------------------- */

static su_arena *scratch_arena(emitter *m)
{
    if (!m->arena_live) {
        su_arena_init(&m->arena);
        m->arena_live = true;
    }
    return &m->arena;
}

/* Lane 0's index of an access at `index` in a loop over v, when the lanes
 * are contiguous (index is base + v, base free of v); else NULL. */
static const sch_expr *lane0(emitter *m, const sch_expr *index, sch_var *v)
{
    su_arena *a = scratch_arena(m);
    const sch_expr *zero = sch_int(a, 0);
    const sch_expr *base = sch_simplify(a, &m->bc, sch_substitute(a, index, 1, &v, &zero));
    const sch_expr *d = sch_simplify(a, &m->bc, sch_sub(a, index, base));
    return d->kind == SCH_VAR && d->var == v && !sch_expr_uses(base, v) ? base : NULL;
}

/* Whether e, the value stored into buf[index] in the loop over v, prints as
 * a float32 vector: what does not use v is broadcast (and reads no element
 * the loop writes), loads using v are contiguous (of buf, only the element
 * stored), and every operator using v has a vector form. */
static bool vector_value(emitter *m, const sch_expr *e, sch_var *v, const sch_stmt *st)
{
    if (e->dtype != IR_FLOAT32)
        return false;
    if (!sch_expr_uses(e, v))
        return !sch_expr_any(e, is_load_of, st->buf);
    switch (e->kind) {
    case SCH_LOAD:
        return lane0(m, e->a, v) && !sch_expr_any(e->a, is_load_of, st->buf) &&
               (e->buf != st->buf || sch_expr_equal(e->a, st->index));
    case SCH_ADD: case SCH_SUB: case SCH_MUL: case SCH_DIV: case SCH_MIN: case SCH_MAX:
        return vector_value(m, e->a, v, st) && vector_value(m, e->b, v, st);
    case SCH_CALL:
        for (int i = 0; i < e->n; i++)
            if (!vector_value(m, e->args[i], v, st))
                return false;
        return true;
    default: return false;
    }
}

/* Inside a vector statement (m->vec_var set): prints e where it does not
 * use the counter (a float broadcast to the lanes, anything else, such as
 * an index, as a scalar) or is a contiguous load; false for an operator
 * over vectors, which expr prints with its vector type. */
static bool vector_expr(emitter *m, const sch_expr *e, int ctx, bool right)
{
    const sch_lang_vector *vl = &m->l->vector;
    sch_var *v = m->vec_var;
    bool uses = sch_expr_uses(e, v);
    if (uses && e->kind != SCH_LOAD)
        return false;
    /* the operands within (lane 0's index, the broadcast scalar) are scalars */
    m->vec_var = NULL;
    slots x = NO_SLOTS;
    x.dtype = e->dtype;
    x.lanes = x.extent = m->vec_lanes;
    if (uses) {
        x.buf = e->buf->name;
        x.op[0] = lane0(m, e->a, v);
        x.ctx = vl->load.prec;
        render(m, vl->load.form, &x);
    } else if (e->dtype == IR_FLOAT32) {
        x.op[0] = e;
        x.ctx = vl->broadcast.prec;
        render(m, vl->broadcast.form, &x);
    } else {
        expr(m, e, ctx, right);
    }
    m->vec_var = v;
    return true;
}

/* Prints vectorized loop s as one vector store where the language has
 * vector types of its extent and its body is one contiguous float32 store
 * of a vector value; false (nothing printed) otherwise. */
static bool vector_loop(emitter *m, const sch_stmt *s)
{
    const sch_lang_vector *vl = &m->l->vector;
    const sch_stmt *st = s->body;
    int64_t n = s->extent;
    bool width = n == 2 || n == 3 || n == 4 || n == 8 || n == 16;
    if (!vl->max || s->loop != SCH_LOOP_VECTORIZED || !width || n > vl->max || !st || st->kind != SCH_S_STORE ||
        st->buf->dtype != IR_FLOAT32 || storage_of(m, IR_FLOAT32))
        return false;
    const sch_expr *base = lane0(m, st->index, s->var);
    if (!base || !vector_value(m, st->value, s->var, st))
        return false;
    slots x = NO_SLOTS;
    x.buf = st->buf->name;
    x.op[0] = base;
    x.op[1] = st->value;
    x.ctx = vl->load.prec;
    x.dtype = IR_FLOAT32;
    x.lanes = x.extent = (int)n;
    m->vec_var = s->var;
    m->vec_lanes = (int)n;
    lines(m, vl->store, &x, NULL);
    m->vec_var = NULL;
    return true;
}

static sch_loop_mark loop_mark(const emitter *m, const sch_stmt *s)
{
    switch (s->loop) {
    case SCH_LOOP_PARALLEL: return m->par_depth ? SCH_MARK_PARALLEL_NESTED : SCH_MARK_PARALLEL;
    case SCH_LOOP_VECTORIZED:
        return carried_store(s->body, s->var) ? SCH_MARK_VECTORIZED_CARRIED : SCH_MARK_VECTORIZED;
    case SCH_LOOP_UNROLLED: return SCH_MARK_UNROLLED;
    case SCH_LOOP_THREAD: return SCH_MARK_THREAD;
    case SCH_LOOP_ROLLED: return SCH_MARK_ROLLED;
    default: return SCH_MARK_SERIAL;
    }
}

static void loop(emitter *m, const sch_stmt *s)
{
    const sch_lang *l = m->l;
    slots x = NO_SLOTS;
    x.var = s->var;
    x.extent = s->extent;
    x.axis = s->loop == SCH_LOOP_THREAD ? s->thread_axis : -1;
    const sch_expr *rest;
    int red = l->reduction.lines && s->loop == SCH_LOOP_VECTORIZED ? simd_reduction(s, &rest) : -1;
    if (red >= 0) {
        /* the store's parts: the accumulator's buffer, index and type */
        const sch_stmt *st = s->body;
        x.acc = m->next_acc++;
        x.buf = st->buf->name;
        x.dtype = st->value->dtype;
        x.op[0] = st->index;
        x.op[1] = rest;
        x.update = l->reduction.update[red];
        x.redop = l->reduction.op[red];
        lines(m, l->reduction.lines, &x, s);
        return;
    }
    if (vector_loop(m, s))
        return;
    sch_loop_mark mk = loop_mark(m, s);
    x.mark = l->mark[mk];
    x.body = s->body;
    lines(m, l->loops[mk] ? l->loops[mk] : l->loop, &x, s);
}

/* ---- statements ----------------------------------------------------------- */

static void alloc(emitter *m, const sch_stmt *s)
{
    const sch_lang *l = m->l;
    const sch_buffer *buf = s->buf;
    slots x = NO_SLOTS;
    x.buf = buf->name;
    x.dtype = buf->dtype;
    x.shape = buf;
    x.body = s->body;
    x.stored = is_stored(buf);
    const sch_lang_line *form = l->alloc[buf->scope];
    if (l->alloc_small && buf->scope == SCH_SCOPE_LOCAL && buffer_bytes(m, buf) <= l->small_bytes)
        form = l->alloc_small;
    lines(m, form, &x, NULL);
}

static void stmt(emitter *m, const sch_stmt *s)
{
    const sch_lang *l = m->l;
    if (!s)
        return;
    slots x = NO_SLOTS;
    switch (s->kind) {
    case SCH_S_FOR: loop(m, s); return;
    case SCH_S_STORE: {
        const sch_lang_storage *st = is_stored(s->buf) ? storage_of(m, s->buf->dtype) : NULL;
        x.buf = s->buf->name;
        x.op[0] = s->index;
        x.op[1] = s->value;
        lines(m, st && st->store ? st->store : l->store, &x, NULL);
        return;
    }
    case SCH_S_IF:
        x.op[0] = s->cond;
        x.body = s->then_s;
        x.other = s->else_s;
        lines(m, s->else_s ? l->if_else : l->if_then, &x, NULL);
        return;
    case SCH_S_LET: {
        /* the let's own name first: it is declared before its value prints */
        var_name(m, s->var, true);
        x.var = s->var;
        x.dtype = s->var->dtype;
        x.op[0] = s->value;
        x.body = s->body;
        lines(m, l->let, &x, s);
        return;
    }
    case SCH_S_ALLOC: alloc(m, s); return;
    case SCH_S_BARRIER: lines(m, l->barrier, &x, NULL); return;
    case SCH_S_SEQ:
        for (int i = 0; i < s->n; i++)
            stmt(m, s->items[i]);
        return;
    }
}

/* ---- entry points ----------------------------------------------------------- */

static void emitter_free(emitter *m)
{
    for (size_t i = 0; i < m->names.len; i++)
        free(m->names.data[i]);
    su_vec_free(&m->names);
    su_vec_free(&m->vars);
    sch_bounds_free(&m->bc);
    if (m->arena_live)
        su_arena_free(&m->arena);
}

void sch_emit_expr(su_buf *b, const sch_lang *l, const sch_expr *e)
{
    emitter m = {.b = b, .l = l, .hints = true};
    expr(&m, e, 0, false);
    emitter_free(&m);
}

void sch_emit_stmt(su_buf *b, const sch_lang *l, const sch_stmt *s, int depth)
{
    emitter m = {.b = b, .l = l, .depth = depth};
    stmt(&m, s);
    emitter_free(&m);
}

void sch_emit_func(su_buf *b, const sch_lang *l, const sch_func *f, const char *entry)
{
    emitter m = {.b = b, .l = l};
    slots x = NO_SLOTS;
    x.entry = entry ? entry : f->name;
    x.func_name = f->name;
    x.func = f;
    x.body = f->body;
    lines(&m, l->func, &x, NULL);
    emitter_free(&m);
}
