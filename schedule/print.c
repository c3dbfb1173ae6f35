/* print.c — LoopIR as text, for `relay-tune lower`, golden tests and error
 * messages: the LoopIR language's forms, printed by the walk every language
 * shares (emit.c). Loops read `parallel for k.o in 0..4 {`, stores
 * `o0[i] = v`, allocations `alloc l0: float32[8, 32] local` (the buffer
 * lives until the end of the enclosing block). Variables print as their name
 * hints, with a suffix where two different variables of one function share a
 * hint. Operators bind as in C, but comparisons share one level. */
#include "schedule/schedule.h"

static void int_lit(su_buf *b, ir_dtype dt, int64_t v)
{
    if (dt == IR_BOOL)
        su_buf_puts(b, v ? "True" : "False");
    else
        su_buf_printf(b, "%lld", (long long)v);
}

static void float_lit(su_buf *b, ir_dtype dt, double v)
{
    if (dt == IR_FLOAT32)
        ir_print_float32(b, v);
    else
        su_buf_printf(b, "%.17gf64", v);
}

#define ALLOC(scope) (const sch_lang_line[]){{0, "alloc $b: $t[$s] " scope}, {0, "$B"}, {0, NULL}}
#define PARAM "$b: $t[$s]"

static const sch_lang loopir = {
    .name = "LoopIR",
    .indent = "  ",
    .int_lit = int_lit,
    .float_lit = float_lit,
    .ops = {
        /* comparisons share one level */
        SCH_INFIX_OPS(3, 3, 4, 5),
        [SCH_NOT] = {"!$0", 6, false},
        [SCH_MIN] = {"min($0, $1)", 0, false},
        [SCH_MAX] = {"max($0, $1)", 0, false},
        [SCH_SELECT] = {"select($0, $1, $2)", 0, false},
        [SCH_CAST] = {"$t($0)", 0, false},
        [SCH_CALL] = {"$F($*)", 0, false},
        [SCH_LOAD] = {"$b[$0]", 0, false},
        [SCH_READ] = {"$b[$*]", 0, false},
    },
    .store = (const sch_lang_line[]){{0, "$b[$0] = $1"}, {0, NULL}},
    .if_then = (const sch_lang_line[]){{0, "if ($0) {"}, {1, "$B"}, {0, "}"}, {0, NULL}},
    .if_else = (const sch_lang_line[]){{0, "if ($0) {"}, {1, "$B"}, {0, "} else {"}, {1, "$O"}, {0, "}"}, {0, NULL}},
    .let = (const sch_lang_line[]){{0, "let $v = $0"}, {0, "$B"}, {0, NULL}},
    .loop = (const sch_lang_line[]){{0, "$pfor $v in 0..$N {"}, {1, "$B"}, {0, "}"}, {0, NULL}},
    .mark = {
        [SCH_MARK_PARALLEL] = "parallel ",
        [SCH_MARK_PARALLEL_NESTED] = "parallel ",
        [SCH_MARK_VECTORIZED] = "vectorized ",
        [SCH_MARK_VECTORIZED_CARRIED] = "vectorized ",
        [SCH_MARK_UNROLLED] = "unrolled ",
        [SCH_MARK_THREAD] = "thread (axis $a) ",
        [SCH_MARK_ROLLED] = "rolled ",
    },
    .alloc = {
        [SCH_SCOPE_INPUT] = ALLOC("input"),
        [SCH_SCOPE_OUTPUT] = ALLOC("output"),
        [SCH_SCOPE_GLOBAL] = ALLOC("global"),
        [SCH_SCOPE_LOCAL] = ALLOC("local"),
        [SCH_SCOPE_SHARED] = ALLOC("shared"),
    },
    .barrier = (const sch_lang_line[]){{0, "barrier"}, {0, NULL}},
    .func = (const sch_lang_line[]){{0, "func $h($A) {"}, {1, "$B"}, {0, "}"}, {0, NULL}},
    .param = {PARAM, PARAM " out", PARAM, PARAM},
};

void sch_print_expr(su_buf *b, const sch_expr *e)
{
    sch_emit_expr(b, &loopir, e);
}

void sch_print_stmt(su_buf *b, const sch_stmt *s, int indent)
{
    sch_emit_stmt(b, &loopir, s, indent);
}

void sch_print_func(su_buf *b, const sch_func *f)
{
    sch_emit_func(b, &loopir, f, NULL);
}
