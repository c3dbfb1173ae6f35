/* stage.c — schedules: the stages of one primitive function and their loop
 * structure. sch_create walks the function's body once, calling each op's
 * compute definition, and decides the starting compute locations: stages
 * that are injective and not outputs are inlined into their readers (which
 * is how elementwise producers and epilogue ops end up in one loop nest),
 * except where a stage that is read many times would blow up its readers'
 * expressions. Every other stage starts at the root with its axes as loops,
 * spatial axes first and reduction axes inside. Also: lookups by name (for
 * traces), typed errors and the inlined view of a stage's body. */
#include <string.h>

#include "schedule/schedule.h"

static const char *const err_names[] = {
#define X(id, name) name,
    SCH_ERRORS(X)
#undef X
};

const char *sch_err_name(sch_err e)
{
    return err_names[e];
}

sch_err sch_fail(sch_schedule *s, sch_err err, const char *fmt, ...)
{
    va_list ap;
    su_buf b = {0};
    va_start(ap, fmt);
    su_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    free(s->err_msg);
    s->err_msg = su_buf_take(&b);
    s->err = err;
    return err;
}

/* ---- building ------------------------------------------------------------ */

typedef struct val {
    int n;
    sch_tensor **t;
} val;

typedef struct builder {
    sch_schedule *s;
    su_diags *d;
    const int *first;   /* by parameter of the function: its first tensor (a tuple's fields are one each) */
    val *memo;          /* by node id */
    bool *done;
    uint32_t cap;
} builder;

static ir_visit_step note_id(ir_visitor *v, const ir_expr *e)
{
    uint32_t *m = v->ctx;
    *m = e->id > *m ? e->id : *m;
    return IR_VISIT_DESCEND;
}

/* The largest node id in e: the builder's memo is indexed by id. */
static uint32_t max_id(const ir_expr *e)
{
    uint32_t m = 0;
    ir_visitor v;
    ir_visitor_init(&v, note_id, NULL, &m);
    ir_visit(&v, e);
    ir_visitor_free(&v);
    return m;
}

/* Every dtype has its compute definitions; float16 is computed in the
 * language's wider type (sch_lang_storage). */
static bool supported_dtype(ir_dtype dt)
{
    return dt < IR_DTYPE_COUNT;
}

static bool build(builder *b, const ir_expr *e, val *out);

static bool build_call(builder *b, const ir_expr *e, val *out)
{
    sch_schedule *s = b->s;
    const ir_op_def *op = ir_call_op(e);
    if (!op) {
        su_error(b->d, e->span, "cannot lower a call of a function inside a primitive function");
        return false;
    }
    sch_compute_fn fn = sch_compute_of(op->id);
    if (!fn) {
        su_error(b->d, e->span, "cannot lower %s: no compute definition", op->name);
        return false;
    }
    SU_VEC(sch_tensor *) args = {0};
    for (int i = 0; i < e->u.call.nargs; i++) {
        val v;
        if (!build(b, e->u.call.args[i], &v)) {
            su_vec_free(&args);
            return false;
        }
        for (int j = 0; j < v.n; j++)
            su_vec_push(&args, v.t[j]);
    }
    const ir_type *rt = e->type;
    int nres = rt && rt->kind == IR_TY_TUPLE ? rt->nfields : 1;
    for (int i = 0; i < (rt && rt->kind == IR_TY_TUPLE ? rt->nfields : 1); i++) {
        const ir_type *ft = rt && rt->kind == IR_TY_TUPLE ? rt->fields[i] : rt;
        if (!ft || ft->kind != IR_TY_TENSOR || !supported_dtype(ft->dtype)) {
            su_vec_free(&args);
            su_error(b->d, e->span, "cannot lower %s: result type %s is not supported", op->name,
                     ft ? ir_type_str(&s->arena, ft) : "(untyped)");
            return false;
        }
    }
    sch_cctx cx = {s, &s->arena, e, b->d, NULL};
    out->t = su_arena_alloc(&s->arena, (size_t)(nres + 3) * sizeof *out->t);
    bool ok = fn(&cx, args.data, (int)args.len, out->t, &out->n);
    su_vec_free(&args);
    return ok;
}

static bool build(builder *b, const ir_expr *e, val *out)
{
    sch_schedule *s = b->s;
    if (e->id < b->cap && b->done[e->id]) {
        *out = b->memo[e->id];
        return true;
    }
    bool ok = true;
    switch (e->kind) {
    case IR_VAR: {
        const ir_expr *f = s->func;
        out->n = 0;
        for (int i = 0; i < f->u.func.nparams; i++)
            if (f->u.func.params[i] == e) {
                out->n = b->first[i + 1] - b->first[i];
                out->t = su_arena_alloc(&s->arena, (size_t)out->n * sizeof *out->t);
                for (int j = 0; j < out->n; j++)
                    out->t[j] = s->tensors.data[b->first[i] + j];
            }
        if (!out->n) {
            su_error(b->d, e->span, "cannot lower a free variable inside a primitive function");
            return false;
        }
        break;
    }
    case IR_CONST: {
        const ir_tensor *v = e->u.constant.value;
        if (v->ndim != 0 || !supported_dtype(v->dtype)) {
            su_error(b->d, e->span, "cannot lower a non-scalar constant inside a primitive function");
            return false;
        }
        char name[32];
        snprintf(name, sizeof name, "const%d", s->next_stage++);
        sch_tensor *t = sch_tensor_add(s, SCH_TENSOR_COMPUTE, name, v->dtype, 0, NULL);
        t->op = "const";
        t->injective = true;
        t->attach = SCH_ATTACH_ROOT;
        t->body = v->dtype == IR_INT64 ? sch_const_int(&s->arena, IR_INT64, ((const int64_t *)v->data)[0])
                                       : sch_const(&s->arena, v->dtype, ir_tensor_get(v, 0));
        out->n = 1;
        out->t = su_arena_alloc(&s->arena, sizeof *out->t);
        out->t[0] = t;
        break;
    }
    case IR_CALL: ok = build_call(b, e, out); break;
    case IR_TUPLE: {
        SU_VEC(sch_tensor *) all = {0};
        for (int i = 0; i < e->u.tuple.n && ok; i++) {
            val v;
            ok = build(b, e->u.tuple.fields[i], &v);
            if (ok && e->u.tuple.fields[i]->type && e->u.tuple.fields[i]->type->kind == IR_TY_TUPLE) {
                su_error(b->d, e->span, "cannot lower nested tuples");
                ok = false;
            }
            for (int j = 0; ok && j < v.n; j++)
                su_vec_push(&all, v.t[j]);
        }
        out->n = (int)all.len;
        out->t = su_arena_alloc(&s->arena, (all.len + 1) * sizeof *out->t);
        if (all.len)
            memcpy(out->t, all.data, all.len * sizeof *out->t);
        su_vec_free(&all);
        break;
    }
    case IR_PROJ: {
        val v;
        ok = build(b, e->u.proj.tuple, &v);
        if (ok && (e->u.proj.index < 0 || e->u.proj.index >= v.n)) {
            su_error(b->d, e->span, "tuple index out of range");
            ok = false;
        }
        if (ok) {
            out->n = 1;
            out->t = su_arena_alloc(&s->arena, sizeof *out->t);
            out->t[0] = v.t[e->u.proj.index];
        }
        break;
    }
    default:
        su_error(b->d, e->span, "cannot lower a %s inside a primitive function", ir_expr_kind_name(e->kind));
        ok = false;
    }
    if (ok && e->id < b->cap) {
        b->memo[e->id] = *out;
        b->done[e->id] = true;
    }
    return ok;
}

/* Counts the reads of each tensor in every stage's body. */
static void count_reads(const sch_expr *e, int *counts)
{
    if (!e)
        return;
    if (e->kind == SCH_READ)
        counts[e->tensor->id]++;
    count_reads(e->a, counts);
    count_reads(e->b, counts);
    count_reads(e->c, counts);
    for (int i = 0; i < e->n; i++)
        count_reads(e->args[i], counts);
}

/* A stage read more than once is inlined only while its (inlined) body is
 * this small, so that chains such as x1 = x0 * x0, x2 = x1 * x1 stay linear. */
enum { MAX_SHARED_INLINE = 24 };

static const ir_type *param_type(const ir_expr *p)
{
    return p->type ? p->type : p->u.var.annot;
}

/* One parameter tensor per tensor parameter of s->func and per field of a
 * tuple parameter (TVM's fused concatenate takes its inputs as one tuple):
 * the kernel's arguments are tensors, a tuple's fields in order, and
 * first[i] is parameter i's first tensor (first[nparams]: their number).
 * Templates find a weight among them with sch_param_tensor. */
static bool tensor_params(sch_schedule *s, int *first, su_diags *d)
{
    const ir_expr *func = s->func;
    int n = 0;
    for (int i = 0; i < func->u.func.nparams; i++) {
        const ir_expr *p = func->u.func.params[i];
        const ir_type *t = param_type(p);
        bool tuple = t && t->kind == IR_TY_TUPLE;
        int nf = tuple ? t->nfields : 1;
        first[i] = n;
        for (int j = 0; j < nf; j++) {
            const ir_type *ft = tuple ? t->fields[j] : t;
            if (!ft || ft->kind != IR_TY_TENSOR || !supported_dtype(ft->dtype)) {
                su_error(d, p->span, "cannot lower a parameter of type %s%s",
                         t ? ir_type_str(&s->arena, t) : "(unknown)", tuple ? " (a tuple of tensors only)" : "");
                return false;
            }
            char name[16];
            snprintf(name, sizeof name, "p%d", n);
            sch_tensor *pt = sch_tensor_add(s, SCH_TENSOR_PARAM, name, ft->dtype, ft->ndim, ft->shape);
            pt->param = n++;
        }
    }
    first[func->u.func.nparams] = n;
    s->nparams = n;
    return true;
}

int sch_param_count(const ir_expr *func)
{
    int n = 0;
    for (int i = 0; i < func->u.func.nparams; i++) {
        const ir_type *t = param_type(func->u.func.params[i]);
        n += t && t->kind == IR_TY_TUPLE ? t->nfields : 1;
    }
    return n;
}

sch_tensor *sch_param_tensor(const sch_schedule *s, const ir_expr *e)
{
    int field = -1;
    if (e->kind == IR_PROJ) {
        field = e->u.proj.index;
        e = e->u.proj.tuple;
    }
    const ir_expr *f = s->func;
    for (int i = 0, n = 0; i < f->u.func.nparams; i++) {
        const ir_type *t = param_type(f->u.func.params[i]);
        bool tuple = t && t->kind == IR_TY_TUPLE;
        int nf = tuple ? t->nfields : 1;
        if (f->u.func.params[i] == e && tuple == (field >= 0) && field < nf)
            return s->tensors.data[n + (tuple ? field : 0)];
        n += nf;
    }
    return NULL;
}

sch_schedule *sch_create(const ir_expr *func, su_diags *d)
{
    return sch_create_for(func, NULL, d);
}

/* Whether machine hw takes depthwise convs in the direct form: a device
 * that is not a cpu (work-group reductions on: a GPU's defaults, as in
 * conv2d_cl.c) or stages (-local-stage=1). A cpu device (PoCL) that does
 * not stage keeps the flat form, which ran mobilenet_v2's depthwise convs
 * there faster than the direct one or about as fast (docs/opencl.md); so
 * does a CPU. */
static bool dw_direct(const sch_hw *hw)
{
    return hw && hw->wg_max > 0 && (hw->wg_reduce || hw->local_stage == 2);
}

sch_schedule *sch_create_for(const ir_expr *func, const sch_hw *hw, su_diags *d)
{
    if (!func || func->kind != IR_FUNC || !func->u.func.body->type) {
        su_error(d, func ? func->span : (su_span){0}, "cannot lower: not a typed function");
        return NULL;
    }
    sch_schedule *s = su_calloc(1, sizeof *s);
    su_arena_init(&s->arena);
    s->func = func;
    s->dw_direct = dw_direct(hw);
    int np = func->u.func.nparams;
    int *first = su_calloc((size_t)np + 1, sizeof *first);
    if (!tensor_params(s, first, d)) {
        free(first);
        sch_free(s);
        return NULL;
    }
    builder b = {s, d, first, NULL, NULL, max_id(func->u.func.body) + 1};
    b.memo = su_calloc(b.cap, sizeof *b.memo);
    b.done = su_calloc(b.cap, sizeof *b.done);
    val res;
    bool ok = build(&b, func->u.func.body, &res);
    free(b.memo);
    free(b.done);
    free(first);
    if (!ok) {
        sch_free(s);
        return NULL;
    }
    /* outputs: a parameter, a constant or a tensor returned twice gets a copy */
    s->noutputs = res.n;
    s->outputs = su_arena_alloc(&s->arena, (size_t)(res.n ? res.n : 1) * sizeof *s->outputs);
    for (int i = 0; i < res.n; i++) {
        sch_tensor *t = res.t[i];
        if (t->kind == SCH_TENSOR_PARAM || t->output >= 0 || !strcmp(t->op, "const")) {
            sch_cctx cx = {s, &s->arena, func->u.func.body, d, "copy"};
            sch_tensor *c = sch_stage_new(&cx, t->dtype, t->ndim, t->shape, NULL);
            c->op = "copy";
            c->body = sch_read_axes(&s->arena, t, c);
            t = c;
        }
        t->output = i;
        s->outputs[i] = t;
    }
    /* starting compute locations */
    int *counts = su_calloc(s->tensors.len, sizeof *counts);
    for (size_t i = 0; i < s->tensors.len; i++)
        count_reads(s->tensors.data[i]->body, counts);
    for (size_t i = 0; i < s->tensors.len; i++) {
        sch_tensor *t = s->tensors.data[i];
        if (t->kind != SCH_TENSOR_COMPUTE || !t->injective || t->output >= 0)
            continue;
        t->attach = SCH_ATTACH_INLINE;
        if (counts[t->id] > 1 && sch_expr_size(sch_inlined_body(s, t)) > MAX_SHARED_INLINE)
            t->attach = SCH_ATTACH_ROOT;
    }
    free(counts);
    return s;
}

void sch_free(sch_schedule *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->tensors.len; i++) {
        sch_tensor *t = s->tensors.data[i];
        su_vec_free(&t->iters);
        su_vec_free(&t->leaves);
        su_vec_free(&t->rels);
    }
    su_vec_free(&s->tensors);
    su_vec_free(&s->trace);
    free(s->err_msg);
    su_arena_free(&s->arena);
    free(s);
}

/* ---- lookups ------------------------------------------------------------- */

sch_tensor *sch_find_tensor(const sch_schedule *s, const char *name)
{
    for (size_t i = 0; i < s->tensors.len; i++)
        if (!strcmp(s->tensors.data[i]->name, name))
            return s->tensors.data[i];
    return NULL;
}

sch_iter *sch_find_iter(const sch_tensor *t, const char *name)
{
    for (size_t i = 0; i < t->iters.len; i++)
        if (!strcmp(t->iters.data[i]->name, name))
            return t->iters.data[i];
    return NULL;
}

int sch_leaf_pos(const sch_tensor *t, const sch_iter *it)
{
    for (size_t i = 0; i < t->leaves.len; i++)
        if (t->leaves.data[i] == it)
            return (int)i;
    return -1;
}

sch_tensor *sch_anchor(const sch_schedule *s)
{
    sch_tensor *first = NULL;
    for (size_t i = 0; i < s->tensors.len; i++) {
        sch_tensor *t = s->tensors.data[i];
        if (t->kind != SCH_TENSOR_COMPUTE || t->reduce == SCH_RED_NONE || !t->op)
            continue;
        if (!strcmp(t->op, "nn.conv2d") || !strcmp(t->op, "nn.dense") || !strcmp(t->op, "nn.batch_matmul"))
            return t;
        if (!first)
            first = t;
    }
    return first;
}

/* ---- the inlined view ---------------------------------------------------- */

typedef struct inl {
    sch_schedule *s;
    const sch_expr **memo;  /* inlined body by tensor id */
} inl;

static const sch_expr *inlined(inl *c, const sch_tensor *t);

static const sch_expr *inline_read(void *ctx, const sch_expr *r)
{
    inl *c = ctx;
    sch_tensor *u = r->tensor;
    if (u->kind != SCH_TENSOR_COMPUTE || u->attach != SCH_ATTACH_INLINE)
        return NULL;
    return sch_substitute(&c->s->arena, inlined(c, u), u->ndim, u->axes, r->args);
}

static const sch_expr *inlined(inl *c, const sch_tensor *t)
{
    if (!c->memo[t->id])
        c->memo[t->id] = sch_map_reads(&c->s->arena, t->body, inline_read, c);
    return c->memo[t->id];
}

const sch_expr *sch_inlined_body(sch_schedule *s, const sch_tensor *t)
{
    if (!t->body)
        return NULL;
    inl c = {s, su_calloc(s->tensors.len, sizeof *c.memo)};
    const sch_expr *e = inlined(&c, t);
    free(c.memo);
    return e;
}

static bool has_read(const sch_expr *e, const sch_tensor *t)
{
    if (!e)
        return false;
    if (e->kind == SCH_READ && e->tensor == t)
        return true;
    if (has_read(e->a, t) || has_read(e->b, t) || has_read(e->c, t))
        return true;
    for (int i = 0; i < e->n; i++)
        if (has_read(e->args[i], t))
            return true;
    return false;
}

bool sch_reads(const sch_schedule *s, const sch_tensor *r, const sch_tensor *t)
{
    if (r->kind != SCH_TENSOR_COMPUTE)
        return false;
    return has_read(sch_inlined_body((sch_schedule *)s, r), t);
}
