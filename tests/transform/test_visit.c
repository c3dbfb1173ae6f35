/* test_visit.c — the read-only walk (ir/visit.c) and the one rebuild
 * (tr_rebuild in ir/transform/rewrite.c): operands of every kind in their
 * order, each shared node once, the hooks' order, skip and stop, rounds,
 * reentrant hooks, graphs deeper than recursion allows, and rebuilding a
 * node of each kind over new operands with what is not an operand kept. */
#include <string.h>

#include "ir/transform/transform.h"
#include "tests/tap.h"
#include "tests/transform/load.h"

static ir_expr *body_of(ir_module *m, const char *def)
{
    return ir_module_find(m, def)->func->u.func.body;
}

/* What a walk saw: a letter per kind, pre (upper case) and post (lower). */
typedef struct trace {
    char s[256];
    int n;
    const ir_expr *skip;    /* pre answers SKIP here */
    const ir_expr *stop;    /* pre answers STOP here */
    int visits[64];         /* pre calls by node id */
} trace;

static char letter(const ir_expr *e)
{
    static const char k[] = "vgkclitpfo"; /* IR_VAR .. IR_OP */
    return k[e->kind];
}

static ir_visit_step pre(ir_visitor *v, const ir_expr *e)
{
    trace *t = v->ctx;
    if (t->n < 255)
        t->s[t->n++] = (char)(letter(e) - 'a' + 'A');
    if (e->id < 64)
        t->visits[e->id]++;
    return e == t->stop ? IR_VISIT_STOP : e == t->skip ? IR_VISIT_SKIP : IR_VISIT_DESCEND;
}

static void post(ir_visitor *v, const ir_expr *e)
{
    trace *t = v->ctx;
    if (t->n < 255)
        t->s[t->n++] = letter(e);
}

static const char *walk(const ir_expr *root, trace *t)
{
    ir_visitor v;
    ir_visitor_init(&v, pre, post, t);
    ir_visit(&v, root);
    ir_visitor_free(&v);
    t->s[t->n] = 0;
    return t->s;
}

static void test_operands(void)
{
    ir_module *m = load("def @main(%x: Tensor[(2), float32], %c: bool) {\n"
                        "  let %t = (%x, nn.relu(%x));\n"
                        "  if (%c) { %t.1 } else { (fn (%y: Tensor[(2), float32]) { %y })(%x) }\n"
                        "}\n");
    if (!ok(m != NULL, "a module of every kind parses"))
        return;
    ir_expr *let = body_of(m, "main");
    is_int(ir_expr_nchildren(let), 2, "a let has two operands (its variable is bound, not an operand)");
    ir_expr *tuple = ir_expr_child(let, 0), *iff = ir_expr_child(let, 1);
    ok(tuple->kind == IR_TUPLE && iff->kind == IR_IF, "a let's value, then its body");
    is_int(ir_expr_nchildren(tuple), 2, "a tuple's operands are its fields");
    ir_expr *relu = ir_expr_child(tuple, 1);
    is_int(ir_expr_nchildren(relu), 2, "a call's operands: its callee and its argument");
    ok(ir_expr_child(relu, 0)->kind == IR_OP && ir_expr_child(relu, 1) == ir_expr_child(tuple, 0),
       "the callee comes first");
    is_int(ir_expr_nchildren(iff), 3, "an if has three operands");
    ok(ir_expr_child(iff, 0)->kind == IR_VAR && ir_expr_child(iff, 1)->kind == IR_PROJ &&
           ir_expr_child(iff, 2)->kind == IR_CALL,
       "an if's condition, then its branches");
    ir_expr *fn = ir_expr_child(ir_expr_child(iff, 2), 0);
    ok(fn->kind == IR_FUNC && ir_expr_nchildren(fn) == 1 && ir_expr_child(fn, 0)->kind == IR_VAR,
       "a function's one operand is its body");
    is_int(ir_expr_nchildren(ir_expr_child(iff, 0)), 0, "a variable has no operands");
    is_int(ir_expr_nchildren(ir_expr_child(relu, 0)), 0, "an op has no operands");

    trace t = {0};
    is_str(walk(let, &t), "LTVvCOoctIVvPVvpCFVvfcil",
           "depth first, operands in order, each node once, post after its operands");
    ir_expr *x = ir_expr_child(tuple, 0);
    is_int(t.visits[x->id], 1, "a variable used three times is visited once");
    ir_module_free(m);
}

static void test_skip_stop_rounds(void)
{
    ir_module *m = load("def @main(%x: Tensor[(2), float32]) {\n"
                        "  %0 = add(%x, %x);\n"
                        "  %1 = multiply(%0, %0);\n"
                        "  (%1, nn.relu(%0))\n"
                        "}\n");
    if (!ok(m != NULL, "a shared graph parses"))
        return;
    ir_expr *tuple = body_of(m, "main");
    ir_expr *mul = ir_expr_child(tuple, 0), *add = ir_expr_child(mul, 1);
    trace t = {0};
    walk(tuple, &t);
    is_int(t.visits[add->id], 1, "a node used three times is visited once");

    trace sk = {.skip = mul};
    is_str(walk(tuple, &sk), "TCcCOoCOoVvcct", "a skipped node's operands wait for another path (post still runs)");
    is_int(sk.visits[add->id], 1, "the skipped node's operand is reached through the other use");

    trace st = {.stop = add};
    ir_visitor v;
    ir_visitor_init(&v, pre, post, &st);
    ok(!ir_visit(&v, tuple), "a stopped walk answers false");
    st.s[st.n] = 0;
    is_str(st.s, "TCOoC", "nothing is visited after the stop, nor finished");
    ok(!ir_visit(&v, mul), "a stopped visitor stays stopped");
    ir_visitor_reset(&v);
    st.stop = NULL;
    st.n = 0;
    ok(ir_visit(&v, add), "after a reset the walk runs again");
    ok(ir_visited(&v, add) && !ir_visited(&v, mul), "ir_visited knows this round's nodes");
    st.n = 0;
    ir_visit(&v, tuple);
    st.s[st.n] = 0;
    is_str(st.s, "TCOocCOoct", "a later call of the same round skips what was visited");
    ir_visitor_free(&v);
    ir_module_free(m);
}

/* A hook that walks a call's arguments itself and never its callee. */
static ir_visit_step args_only(ir_visitor *v, const ir_expr *e)
{
    trace *t = v->ctx;
    t->n++;
    if (e->kind == IR_OP)
        t->visits[0]++;
    if (e->kind != IR_CALL)
        return IR_VISIT_DESCEND;
    for (int i = 0; i < e->u.call.nargs; i++)
        ir_visit(v, e->u.call.args[i]);
    return IR_VISIT_SKIP;
}

static void test_reentrant(void)
{
    ir_module *m = load("def @main(%x: Tensor[(2), float32]) { nn.relu(add(%x, %x)) }\n");
    if (!ok(m != NULL, "a chain parses"))
        return;
    trace t = {0};
    ir_visitor v;
    ir_visitor_init(&v, args_only, NULL, &t);
    ok(ir_visit(&v, body_of(m, "main")), "a hook may walk on from inside the walk");
    is_int(t.n, 3, "the two calls and the variable, once each");
    is_int(t.visits[0], 0, "and no callee");
    ir_visitor_free(&v);
    ir_module_free(m);
}

static ir_visit_step count(ir_visitor *v, const ir_expr *e)
{
    (void)e;
    (*(size_t *)v->ctx)++;
    return IR_VISIT_DESCEND;
}

static void test_deep(void)
{
    /* deeper than a recursive walk survives on an ordinary 8 MiB stack */
    enum { DEPTH = 300000 };
    ir_module *m = ir_module_new();
    ir_expr *e = ir_var(m, (su_span){0}, "x", NULL);
    for (int i = 0; i < DEPTH; i++)
        e = ir_op_call(m, (su_span){0}, IR_OP_RELU, 1, &e, NULL);
    size_t n = 0;
    ir_visitor v;
    ir_visitor_init(&v, count, NULL, &n);
    ok(ir_visit(&v, e), "a chain of %d calls is walked", DEPTH);
    is_int(n, 2 * DEPTH + 1, "every call, its op and the variable, once each");
    ir_visitor_free(&v);
    ir_module_free(m);
}

/* Replaces the operand numbered ctx->at by ctx->with. */
typedef struct swap { int at; ir_expr *with; int asked; } swap;

static ir_expr *swap_operand(void *ctx, const ir_expr *e, int i, ir_expr *x)
{
    (void)e;
    swap *s = ctx;
    s->asked++;
    return i == s->at ? s->with : x;
}

static void test_rebuild(void)
{
    ir_module *m = load("def @main(%x: Tensor[(2, 3), float32], %c: bool) {\n"
                        "  let %t = (nn.softmax(%x, axis=0), %x);\n"
                        "  if (%c) { %t.0 } else { %x }\n"
                        "}\n");
    if (!ok(m != NULL, "a module to rebuild parses"))
        return;
    ir_expr *let = body_of(m, "main"), *tuple = ir_expr_child(let, 0), *iff = ir_expr_child(let, 1);
    ir_expr *softmax = ir_expr_child(tuple, 0), *x = ir_expr_child(tuple, 1);
    ir_expr *y = ir_var(m, (su_span){0}, "y", NULL);

    swap same = {-1, NULL, 0};
    ok(tr_rebuild(m, let, swap_operand, &same) == let, "unchanged operands: the node itself");
    is_int(same.asked, 2, "every operand is asked for once");
    ok(tr_rebuild(m, x, swap_operand, &same) == x, "a variable has nothing to rebuild");

    swap s = {1, y, 0};
    ir_expr *r = tr_rebuild(m, softmax, swap_operand, &s);
    ok(r != softmax && r->kind == IR_CALL && r->u.call.fn == softmax->u.call.fn && r->u.call.args[0] == y,
       "a call over a new argument");
    ok(r->u.call.attrs == softmax->u.call.attrs && r->type == NULL && r->span.begin == softmax->span.begin,
       "keeps its attributes and span, and is not typed yet");
    s = (swap){0, y, 0};
    r = tr_rebuild(m, tuple, swap_operand, &s);
    ok(r->kind == IR_TUPLE && r->u.tuple.n == 2 && r->u.tuple.fields[0] == y && r->u.tuple.fields[1] == x,
       "a tuple over a new field");
    ir_expr *proj = ir_expr_child(iff, 1);
    s = (swap){0, y, 0};
    r = tr_rebuild(m, proj, swap_operand, &s);
    ok(r->kind == IR_PROJ && r->u.proj.tuple == y && r->u.proj.index == 0, "a projection keeps its index");
    s = (swap){1, y, 0};
    r = tr_rebuild(m, let, swap_operand, &s);
    ok(r->kind == IR_LET && r->u.let.var == let->u.let.var && r->u.let.value == tuple && r->u.let.body == y,
       "a let keeps its variable");
    s = (swap){2, y, 0};
    r = tr_rebuild(m, iff, swap_operand, &s);
    ok(r->kind == IR_IF && r->u.if_.cond == iff->u.if_.cond && r->u.if_.else_branch == y, "an if over a new branch");
    ir_expr *fn = ir_module_find(m, "main")->func;
    s = (swap){0, y, 0};
    r = tr_rebuild(m, fn, swap_operand, &s);
    ok(r->kind == IR_FUNC && r->u.func.body == y && r->u.func.nparams == 2 && r->u.func.params[0] == fn->u.func.params[0],
       "a function keeps its parameters");
    ir_module_free(m);
}

int main(void)
{
    test_operands();
    test_skip_stop_rounds();
    test_reentrant();
    test_deep();
    test_rebuild();
    return tap_done();
}
