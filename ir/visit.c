/* visit.c — the read-only traversal, twin of the rebuilding one in
 * ir/transform/rewrite.c (TVM's ExprVisitor beside its ExprMutator): the
 * operands of each expression kind are listed here once, and a walk visits
 * every node reachable from a root once, depth first, calling the caller's
 * hooks before and after a node's operands. It lives in ir/ because ir/
 * itself walks graphs (the printer, the interpreter's plans, seeded
 * parameters); ir/transform/ and the parts above use it too. */
#include <string.h>

#include "ir/ir.h"

int ir_expr_nchildren(const ir_expr *e)
{
    switch (e->kind) {
    case IR_CALL: return 1 + e->u.call.nargs;
    case IR_TUPLE: return e->u.tuple.n;
    case IR_PROJ: return 1;
    case IR_LET: return 2;
    case IR_IF: return 3;
    case IR_FUNC: return 1;
    case IR_MATCH: return 1 + e->u.match.n;
    case IR_REF_NEW: case IR_REF_READ: case IR_DEVICE: return 1;
    case IR_REF_WRITE: return 2;
    case IR_VAR: case IR_GLOBAL: case IR_CONST: case IR_OP: case IR_CTOR: return 0;
    }
    return 0;
}

ir_expr *ir_expr_child(const ir_expr *e, int i)
{
    switch (e->kind) {
    case IR_CALL: return i == 0 ? e->u.call.fn : e->u.call.args[i - 1];
    case IR_TUPLE: return e->u.tuple.fields[i];
    case IR_PROJ: return e->u.proj.tuple;
    case IR_LET: return i == 0 ? e->u.let.value : e->u.let.body;
    case IR_IF: return i == 0 ? e->u.if_.cond : i == 1 ? e->u.if_.then_branch : e->u.if_.else_branch;
    case IR_FUNC: return e->u.func.body;
    case IR_MATCH: return i == 0 ? e->u.match.data : e->u.match.clauses[i - 1].body;
    case IR_REF_NEW: return e->u.ref.value;
    case IR_REF_READ: return e->u.ref.ref;
    case IR_REF_WRITE: return i == 0 ? e->u.ref.ref : e->u.ref.value;
    case IR_DEVICE: return e->u.device.value;
    case IR_VAR: case IR_GLOBAL: case IR_CONST: case IR_OP: case IR_CTOR: break;
    }
    return NULL;
}

void ir_visitor_init(ir_visitor *v, ir_visit_pre_fn pre, ir_visit_post_fn post, void *ctx)
{
    memset(v, 0, sizeof *v);
    v->pre = pre;
    v->post = post;
    v->ctx = ctx;
}

void ir_visitor_free(ir_visitor *v)
{
    free(v->seen);
    v->seen = NULL;
    v->cap = v->len = 0;
}

void ir_visitor_reset(ir_visitor *v)
{
    if (v->cap)
        memset(v->seen, 0, sizeof *v->seen * v->cap);
    v->len = 0;
    v->stopped = false;
}

/* The visited set is open addressing over id + 1 (0: an empty slot) rather
 * than an array by id: the interpreter plans each function on its own, and
 * an array as long as the largest id per function would cost the module's
 * size for every small fused function. */
static size_t slot_of(const ir_visitor *v, uint32_t id)
{
    size_t i = (id * 2654435761u) & (v->cap - 1);
    while (v->seen[i] && v->seen[i] != id + 1)
        i = (i + 1) & (v->cap - 1);
    return i;
}

bool ir_visited(const ir_visitor *v, const ir_expr *e)
{
    return v->cap && v->seen[slot_of(v, e->id)] == e->id + 1;
}

/* Marks e visited; false when it already was. */
static bool mark(ir_visitor *v, const ir_expr *e)
{
    if (2 * (v->len + 1) > v->cap) {
        uint32_t *old = v->seen;
        size_t ocap = v->cap;
        v->cap = ocap ? ocap * 2 : 64;
        v->seen = su_calloc(v->cap, sizeof *v->seen);
        for (size_t i = 0; i < ocap; i++)
            if (old[i])
                v->seen[slot_of(v, old[i] - 1)] = old[i];
        free(old);
    }
    size_t i = slot_of(v, e->id);
    if (v->seen[i])
        return false;
    v->seen[i] = e->id + 1;
    v->len++;
    return true;
}

typedef struct frame {
    const ir_expr *e;
    int next, n;        /* the next operand to visit; the number of operands */
} frame;

typedef SU_VEC(frame) frame_vec;

/* Enters e: marks it, asks pre, and pushes it when its operands are wanted;
 * a skipped node is finished at once. */
static void enter(ir_visitor *v, frame_vec *stack, const ir_expr *e)
{
    if (!mark(v, e))
        return;
    ir_visit_step step = v->pre ? v->pre(v, e) : IR_VISIT_DESCEND;
    if (step == IR_VISIT_STOP) {
        v->stopped = true;
        return;
    }
    if (step == IR_VISIT_SKIP) {
        if (v->post)
            v->post(v, e);
        return;
    }
    frame f = {e, 0, ir_expr_nchildren(e)};
    su_vec_push(stack, f);
}

/* An explicit stack instead of recursion: graphs nest as deep as a model is
 * long, and a walk must not be the thing that limits how deep. */
bool ir_visit(ir_visitor *v, const ir_expr *e)
{
    if (v->stopped)
        return false;
    frame_vec stack = {0};
    enter(v, &stack, e);
    while (stack.len && !v->stopped) {
        frame *top = &stack.data[stack.len - 1];
        if (top->next < top->n) {
            ir_expr *c = ir_expr_child(top->e, top->next++);
            enter(v, &stack, c);
            continue;
        }
        const ir_expr *done = top->e;
        stack.len--;
        if (v->post)
            v->post(v, done);
    }
    su_vec_free(&stack);
    return !v->stopped;
}
