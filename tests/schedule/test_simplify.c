/* test_simplify.c — the arithmetic simplifier: constant folding, linear
 * forms, division and modulo by constants with and without bounds, the
 * split/fuse identity, comparisons, min/max and guards decided from loop
 * bounds, and the statement simplifier (unit loops, dead guards). Each check
 * prints the simplified expression and compares its text. Last, sch_stmt_map,
 * the rebuild that the simplifier and the other statement walks share. */
#include <string.h>

#include "schedule/schedule.h"
#include "tests/tap.h"

static su_arena A;
static uint32_t ids;
static sch_bounds_ctx C;

static const sch_expr *V(sch_var *v) { return sch_varref(&A, v); }
static const sch_expr *I(int64_t v) { return sch_int(&A, v); }
static const sch_expr *add(const sch_expr *x, const sch_expr *y) { return sch_add(&A, x, y); }
static const sch_expr *sub(const sch_expr *x, const sch_expr *y) { return sch_sub(&A, x, y); }
static const sch_expr *mul(const sch_expr *x, const sch_expr *y) { return sch_mul(&A, x, y); }
static const sch_expr *dv(const sch_expr *x, const sch_expr *y) { return sch_div(&A, x, y); }
static const sch_expr *md(const sch_expr *x, const sch_expr *y) { return sch_mod(&A, x, y); }
static const sch_expr *cmp(sch_expr_kind k, const sch_expr *x, const sch_expr *y) { return sch_bin(&A, k, x, y); }

/* The simplified text of e. */
static const char *S(const sch_expr *e)
{
    su_buf b = {0};
    sch_print_expr(&b, sch_simplify(&A, &C, e));
    const char *t = su_arena_strdup(&A, su_buf_str(&b));
    su_buf_free(&b);
    return t;
}

/* sch_stmt_map's walk for the checks: stores of 1f become stores of 5f,
 * stores of 2f go, every other store stays; the values met are noted in
 * order (seen). */
typedef struct map_walk {
    char seen[16];
    int n;
} map_walk;

static const sch_stmt *map_stores(void *ctx, const sch_stmt *s)
{
    map_walk *w = ctx;
    if (s->kind != SCH_S_STORE)
        return sch_stmt_map(&A, s, NULL, map_stores, ctx);
    if (w->n < 15)
        w->seen[w->n++] = (char)('0' + (int)s->value->f);
    if (s->value->f == 1)
        return sch_store(&A, s->buf, s->index, sch_float(&A, IR_FLOAT32, 5));
    return s->value->f == 2 ? NULL : s;
}

/* An integer constant doubled, and the bound of a comparison x < c. */
static const sch_expr *double_ints(void *ctx, const sch_expr *e)
{
    (void)ctx;
    if (e->kind == SCH_LT && e->b->kind == SCH_INT)
        return cmp(SCH_LT, e->a, I(e->b->i * 2));
    return e->kind == SCH_INT ? I(e->i * 2) : e;
}

static void check_stmt_map(void)
{
    sch_buffer *o = sch_buffer_new(&A, "o0", IR_FLOAT32, 1, (int64_t[]){64}, SCH_SCOPE_OUTPUT);
    sch_buffer *t = sch_buffer_new(&A, "t0", IR_FLOAT32, 1, (int64_t[]){4}, SCH_SCOPE_LOCAL);
    sch_var *i = sch_var_new(&A, &ids, "i", IR_INT64), *x = sch_var_new(&A, &ids, "x", IR_INT64);
    const sch_stmt *keep = sch_store(&A, o, V(i), sch_float(&A, IR_FLOAT32, 3));
    const sch_stmt *one = sch_store(&A, o, I(1), sch_float(&A, IR_FLOAT32, 1));
    const sch_stmt *two = sch_store(&A, o, I(2), sch_float(&A, IR_FLOAT32, 2));
    const sch_stmt *four = sch_store(&A, o, I(4), sch_float(&A, IR_FLOAT32, 4));
    const sch_stmt *cond = sch_if(&A, cmp(SCH_LT, V(i), I(7)), one, four);
    const sch_stmt *items[] = {keep, cond, sch_if(&A, cmp(SCH_LT, V(i), I(3)), two, NULL)};
    const sch_stmt *seq = sch_seq(&A, 3, items);
    const sch_stmt *loop = sch_for(&A, i, 8, SCH_LOOP_THREAD, sch_alloc(&A, t, sch_let(&A, x, I(2), seq)));
    ((sch_stmt *)loop)->thread_axis = 1;

    ok(sch_stmt_map(&A, loop, NULL, NULL, NULL) == loop, "sch_stmt_map without hooks: the statement itself");
    map_walk w = {{0}, 0};
    const sch_stmt *same = map_stores(&w, keep);
    const sch_stmt *unchanged = sch_stmt_map(&A, sch_seq2(&A, keep, four), NULL, map_stores, &w);
    ok(same == keep && unchanged->kind == SCH_S_SEQ && unchanged->items[0] == keep && unchanged->items[1] == four,
       "sch_stmt_map: a node whose children do not change is not rebuilt");
    w = (map_walk){{0}, 0};
    const sch_stmt *m = map_stores(&w, loop);
    su_buf b = {0};
    sch_print_stmt(&b, m, 0);
    is_str(su_buf_str(&b),
           "thread (axis 1) for i in 0..8 {\n  alloc t0: float32[4] local\n  let x = 2\n  o0[i] = 3f\n  if (i < 7) {\n"
           "    o0[1] = 5f\n  } else {\n    o0[4] = 4f\n  }\n}\n",
           "sch_stmt_map: a store replaced, a store dropped with the if it leaves empty");
    su_buf_free(&b);
    const sch_stmt *ms = m->body->body->body;
    ok(m != loop && m->thread_axis == 1 && ms->kind == SCH_S_SEQ && ms->n == 2 && ms->items[0] == keep,
       "sch_stmt_map: the rebuilt loop keeps its work-item axis, the unchanged store is shared");
    is_str(w.seen, "3412", "sch_stmt_map: the children last to first (an if's else part before its then part)");
    const sch_stmt *dm = sch_stmt_map(&A, cond, double_ints, NULL, NULL);
    sch_print_stmt(&b, dm, 0);
    is_str(su_buf_str(&b), "if (i < 14) {\n  o0[1] = 1f\n} else {\n  o0[4] = 4f\n}\n",
           "sch_stmt_map: an expression hook on the node's own expressions only");
    su_buf_free(&b);
}

int main(void)
{
    su_arena_init(&A);
    sch_var *i = sch_var_new(&A, &ids, "i", IR_INT64), *j = sch_var_new(&A, &ids, "j", IR_INT64);
    sch_var *k = sch_var_new(&A, &ids, "k", IR_INT64), *f = sch_var_new(&A, &ids, "f", IR_INT64);
    sch_var *x = sch_var_new(&A, &ids, "x", IR_INT64);   /* unbounded */

    /* constant folding, including floor division of negatives */
    is_str(S(add(mul(I(3), I(4)), I(5))), "17", "fold 3 * 4 + 5");
    is_str(S(dv(I(-7), I(2))), "-4", "floor division of a negative");
    is_str(S(md(I(-7), I(2))), "1", "floor modulo of a negative");
    is_str(S(md(I(7), I(-2))), "-1", "floor modulo by a negative");
    is_str(S(cmp(SCH_LT, I(3), I(4))), "True", "fold a comparison");
    is_str(S(sch_float(&A, IR_FLOAT32, 0.5)), "0.5f", "float constants print as Relay does");
    is_str(S(sch_bin(&A, SCH_MUL, sch_float(&A, IR_FLOAT32, 1.5), sch_float(&A, IR_FLOAT32, 2))), "3f",
           "fold float arithmetic");

    /* linear forms */
    is_str(S(add(mul(V(i), I(4)), sub(V(j), mul(V(i), I(4))))), "j", "i*4 + (j - i*4) = j");
    is_str(S(add(add(V(i), V(i)), mul(I(3), V(i)))), "i * 5", "like terms merge");
    is_str(S(sub(I(0), V(j))), "j * -1", "a lone negative term");
    is_str(S(sub(add(V(i), I(10)), I(3))), "i + 7", "constants gather at the end");
    is_str(S(sub(V(i), add(V(j), I(1)))), "i - j - 1", "negative terms are subtracted");

    /* division and modulo without bounds: only exact parts leave */
    is_str(S(dv(add(mul(V(x), I(8)), I(3)), I(8))), "x", "(x*8 + 3) / 8 = x");
    is_str(S(md(add(mul(V(x), I(8)), I(3)), I(8))), "3", "(x*8 + 3) %% 8 = 3");
    is_str(S(dv(add(mul(V(x), I(8)), V(i)), I(8))), "x + i / 8", "(x*8 + i) / 8 without bounds on i");
    is_str(S(dv(dv(V(x), I(4)), I(3))), "x / 12", "(x / 4) / 3 = x / 12");
    is_str(S(md(md(V(x), I(12)), I(4))), "x % 4", "(x %% 12) %% 4 = x %% 4");

    /* with loop bounds: i in [0, 8), j in [0, 16), k in [0, 3) */
    sch_bounds_push(&C, i, 0, 7);
    sch_bounds_push(&C, j, 0, 15);
    sch_bounds_push(&C, k, 0, 2);
    is_str(S(dv(add(mul(V(i), I(16)), V(j)), I(16))), "i", "(i*16 + j) / 16 = i when j < 16");
    is_str(S(md(add(mul(V(i), I(16)), V(j)), I(16))), "j", "(i*16 + j) %% 16 = j when j < 16");
    is_str(S(dv(V(j), I(16))), "0", "j / 16 = 0 when j < 16");
    is_str(S(md(add(V(j), I(16)), I(16))), "j", "(j + 16) %% 16 = j");
    is_str(S(dv(add(mul(V(i), I(16)), add(V(j), I(32))), I(16))), "i + 2", "(i*16 + j + 32) / 16 = i + 2");
    is_str(S(dv(add(mul(V(i), I(8)), V(j)), I(16))), "(i * 8 + j) / 16", "an undecidable division stays");

    /* split then fuse: i = f / 16, j = f % 16 gives back f */
    sch_bounds_push(&C, f, 0, 127);
    is_str(S(add(mul(dv(V(f), I(16)), I(16)), md(V(f), I(16)))), "f", "(f/16)*16 + f%%16 = f");
    is_str(S(add(mul(dv(V(f), I(16)), I(32)), mul(md(V(f), I(16)), I(2)))), "f * 2", "scaled split/fuse identity");
    is_str(S(dv(V(f), I(128))), "0", "f / 128 = 0 for f < 128");

    /* comparisons, min, max, select from bounds */
    is_str(S(cmp(SCH_LT, add(mul(V(i), I(16)), V(j)), I(128))), "True", "i*16 + j < 128 always");
    is_str(S(cmp(SCH_LT, add(mul(V(i), I(16)), V(j)), I(100))), "i * 16 + j < 100", "i*16 + j < 100 undecided");
    is_str(S(cmp(SCH_GE, sub(add(V(k), V(i)), I(1)), I(0))), "k + i - 1 >= 0", "a guard that may fail stays");
    is_str(S(cmp(SCH_GE, add(V(k), V(i)), I(0))), "True", "a guard that always holds goes");
    is_str(S(cmp(SCH_EQ, sub(V(i), V(i)), I(0))), "True", "i - i == 0");
    is_str(S(sch_min(&A, V(k), I(5))), "k", "min(k, 5) = k when k < 3");
    is_str(S(sch_max(&A, V(k), I(5))), "5", "max(k, 5) = 5 when k < 3");
    is_str(S(sch_select(&A, cmp(SCH_LT, V(k), I(3)), V(i), V(j))), "i", "a select decided by bounds");

    int64_t lo, hi;
    ok(sch_bounds(&C, add(mul(V(i), I(16)), V(j)), &lo, &hi) && lo == 0 && hi == 127, "bounds of i*16 + j");
    ok(sch_bounds(&C, md(V(x), I(5)), &lo, &hi) && lo == 0 && hi == 4, "bounds of x %% 5");
    ok(!sch_bounds(&C, V(x), &lo, &hi), "an unbounded variable");
    ok(sch_bounds(&C, sub(I(10), mul(V(k), I(3))), &lo, &hi) && lo == 4 && hi == 10, "bounds of 10 - k*3");
    sch_bounds_free(&C);

    /* statements: unit loops disappear, guards that hold go */
    sch_buffer *buf = sch_buffer_new(&A, "o0", IR_FLOAT32, 1, (int64_t[]){64}, SCH_SCOPE_OUTPUT);
    sch_var *u = sch_var_new(&A, &ids, "u", IR_INT64);
    const sch_stmt *st = sch_for(&A, i, 8, SCH_LOOP_SERIAL,
        sch_for(&A, u, 1, SCH_LOOP_SERIAL,
            sch_if(&A, cmp(SCH_LT, add(mul(V(i), I(8)), V(u)), I(64)),
                   sch_store(&A, buf, add(mul(V(i), I(8)), V(u)), sch_float(&A, IR_FLOAT32, 1)), NULL)));
    sch_bounds_ctx c2 = {0};
    su_buf b = {0};
    sch_print_stmt(&b, sch_simplify_stmt(&A, &c2, st), 0);
    is_str(su_buf_str(&b), "for i in 0..8 {\n  o0[i * 8] = 1f\n}\n", "a unit loop and a true guard vanish");
    su_buf_free(&b);
    st = sch_for(&A, i, 8, SCH_LOOP_VECTORIZED,
                 sch_if(&A, cmp(SCH_LT, V(i), I(5)), sch_store(&A, buf, V(i), sch_float(&A, IR_FLOAT32, 2)), NULL));
    sch_print_stmt(&b, sch_simplify_stmt(&A, &c2, st), 0);
    is_str(su_buf_str(&b), "vectorized for i in 0..8 {\n  if (i < 5) {\n    o0[i] = 2f\n  }\n}\n",
           "a guard that can fail stays");
    su_buf_free(&b);
    sch_bounds_free(&c2);
    check_stmt_map();
    su_arena_free(&A);
    return tap_done();
}
