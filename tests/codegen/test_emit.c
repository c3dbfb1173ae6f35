/* test_emit.c — the LoopIR walk and its two languages on one hand-built
 * function that takes every form the zoo's kernels do not: lets (bounded
 * and not), floor division and modulo of negative numbers beside plain ones,
 * float modulo of both widths, casts, not, mixed comparisons and logic,
 * selects, every literal kind (narrow integers, large ones, INT64_MIN, bools,
 * negative, infinite and NaN floats, float64), min and max, intrinsics of
 * both widths, nested parallel loops, SIMD sum and max reductions, a carried
 * vectorized store, unrolled and thread loops, if/else, stack, heap-local and
 * kernel-wide allocations. The text of both languages is compared with
 * golden files (tests/codegen/golden/emit_*.txt, written by the emitters
 * before the walk was shared: regenerate with RT_UPDATE_GOLDEN=1), the
 * walk's entry points for expressions and statements are checked against
 * the function's text, a third table (a sketch of OpenCL C kept here) must
 * print the function with its own forms and nothing of C's, and the C is
 * built and run: its integer results must follow floor semantics and its
 * float results the same formulas computed here. */
#include <math.h>
#include <string.h>

#include "targets/targets.h"
#include "tests/codegen/harness.h"
#include "tests/tap.h"

static su_arena A;
static uint32_t ids;

enum { N = 8 };

static const sch_expr *V(sch_var *v) { return sch_varref(&A, v); }
static const sch_expr *I(int64_t v) { return sch_int(&A, v); }
static const sch_expr *F(double v) { return sch_float(&A, IR_FLOAT32, v); }
static const sch_expr *bin(sch_expr_kind k, const sch_expr *x, const sch_expr *y) { return sch_bin(&A, k, x, y); }
static const sch_expr *ld(sch_buffer *b, const sch_expr *i) { return sch_load(&A, b, i); }
static const sch_stmt *st(sch_buffer *b, const sch_expr *i, const sch_expr *v) { return sch_store(&A, b, i, v); }
static sch_var *var(const char *name, ir_dtype dt) { return sch_var_new(&A, &ids, name, dt); }

static sch_buffer *buf(const char *name, ir_dtype dt, int64_t n, sch_scope scope)
{
    return sch_buffer_new(&A, name, dt, 1, &n, scope);
}

/* Literals of every kind, each beside a counter z that is 0 (so that the
 * builders cannot fold them away): o3[0..8). */
static const sch_stmt *literals(sch_buffer *o3)
{
    sch_var *z = var("z", IR_INT64);
    const sch_expr *zf = sch_cast(&A, IR_FLOAT32, V(z));
    const sch_expr *vals[] = {
        bin(SCH_ADD, sch_cast(&A, IR_INT8, V(z)), sch_const_int(&A, IR_INT8, -3)),
        bin(SCH_ADD, sch_cast(&A, IR_UINT8, V(z)), sch_const_int(&A, IR_UINT8, 200)),
        bin(SCH_ADD, V(z), I(5000000000LL)),
        bin(SCH_MAX, I(INT64_MIN), bin(SCH_SUB, V(z), I(1))),
        bin(SCH_NE, bin(SCH_LT, V(z), I(0)), sch_const_int(&A, IR_BOOL, 1)),
        bin(SCH_ADD, sch_cast(&A, IR_FLOAT64, V(z)), sch_float(&A, IR_FLOAT64, 2.5)),
        bin(SCH_MIN, bin(SCH_ADD, zf, F(INFINITY)), F(-7.0)),
        sch_select(&A, bin(SCH_NE, zf, F(NAN)), F(-0.25), F(1e10)),
    };
    const sch_stmt *s[8];
    for (int k = 0; k < 8; k++)
        s[k] = st(o3, I(k), sch_cast(&A, IR_INT64, vals[k]));
    return sch_for(&A, z, 1, SCH_LOOP_SERIAL, sch_seq(&A, 8, s));
}

/* The function: o1[i] (int64) floor arithmetic of i - 4, o0[i] (float32) a
 * select over casts, float modulo and intrinsics, o2[0] and o2[1] the sum and
 * the max of p1 by SIMD reductions, o3 the literals, and loops of every
 * kind over temporaries. */
static sch_func *build(void)
{
    sch_buffer *p0 = buf("p0", IR_INT64, N, SCH_SCOPE_INPUT), *p1 = buf("p1", IR_FLOAT32, N, SCH_SCOPE_INPUT);
    sch_buffer *o0 = buf("o0", IR_FLOAT32, N, SCH_SCOPE_OUTPUT), *o1 = buf("o1", IR_INT64, N, SCH_SCOPE_OUTPUT);
    sch_buffer *o2 = buf("o2", IR_FLOAT32, 2, SCH_SCOPE_OUTPUT), *o3 = buf("o3", IR_INT64, 8, SCH_SCOPE_OUTPUT);
    sch_buffer *t0 = buf("t0", IR_FLOAT64, N, SCH_SCOPE_GLOBAL);
    sch_buffer *l0 = buf("l0", IR_FLOAT32, 20000, SCH_SCOPE_LOCAL), *l1 = buf("l1", IR_FLOAT32, 4, SCH_SCOPE_LOCAL);
    sch_var *i = var("i", IR_INT64), *a = var("a", IR_INT64), *u = var("u", IR_INT64);
    sch_var *j = var("i", IR_INT64), *k = var("k", IR_INT64), *r = var("r", IR_INT64), *q = var("q", IR_INT64);
    sch_var *x = var("x", IR_FLOAT32);
    /* o1[i] = (a / 3) + (a % 3) * 100 + i / 2 + u % 4, a = i - 4 bounded, u = p0[i] not */
    const sch_expr *ints = bin(SCH_ADD, bin(SCH_DIV, V(a), I(3)), bin(SCH_MUL, bin(SCH_MOD, V(a), I(3)), I(100)));
    ints = bin(SCH_ADD, bin(SCH_ADD, ints, bin(SCH_DIV, V(i), I(2))), bin(SCH_MOD, V(u), I(4)));
    /* o0[i] = !(a < 0 || a >= 2) && i != 5 ? fmod(p1[i], 1.5) : float32(p0[i]) + exp(x) - float32(sqrt(t0[i])) */
    const sch_expr *cond = sch_not(&A, bin(SCH_OR, bin(SCH_LT, V(a), I(0)), bin(SCH_GE, V(a), I(2))));
    cond = bin(SCH_AND, cond, bin(SCH_NE, V(i), I(5)));
    const sch_expr *t0i = ld(t0, V(i));
    const sch_expr *other = bin(SCH_ADD, sch_cast(&A, IR_FLOAT32, ld(p0, V(i))), sch_call1(&A, SCH_FN_EXP, V(x)));
    other = bin(SCH_SUB, other, sch_cast(&A, IR_FLOAT32, sch_call1(&A, SCH_FN_SQRT, t0i)));
    const sch_expr *fl = bin(SCH_MOD, ld(p1, V(i)), F(1.5));
    const sch_stmt *row[] = {
        st(t0, V(i), bin(SCH_MOD, sch_cast(&A, IR_FLOAT64, bin(SCH_MUL, V(i), I(3))),
                         sch_float(&A, IR_FLOAT64, 4.0))),
        st(o1, V(i), ints),
        sch_let(&A, x, bin(SCH_MUL, ld(p1, V(i)), F(-0.5)), st(o0, V(i), sch_select(&A, cond, fl, other))),
    };
    const sch_stmt *first =
        sch_for(&A, i, N, SCH_LOOP_PARALLEL,
                sch_let(&A, a, bin(SCH_SUB, V(i), I(4)), sch_let(&A, u, ld(p0, V(i)), sch_seq(&A, 3, row))));
    /* nested parallel loops and an unrolled one over a heap local, guards with else */
    const sch_stmt *ifs = sch_if(&A, bin(SCH_LE, V(k), I(1)), st(l0, bin(SCH_ADD, bin(SCH_MUL, V(j), I(4)), V(k)), F(1)),
                                 st(l0, V(k), sch_call1(&A, SCH_FN_TANH, F(0.5))));
    const sch_stmt *second = sch_for(
        &A, j, 2, SCH_LOOP_PARALLEL,
        sch_alloc(&A, l0, sch_for(&A, k, 4, SCH_LOOP_PARALLEL, sch_for(&A, q, 3, SCH_LOOP_UNROLLED, ifs))));
    /* SIMD reductions (sum, max), a carried vectorized store, a thread loop over a stack local */
    const sch_stmt *reds[] = {
        st(o2, I(0), F(0)),
        sch_for(&A, r, N, SCH_LOOP_VECTORIZED, st(o2, I(0), bin(SCH_ADD, ld(o2, I(0)), ld(p1, V(r))))),
        st(o2, I(1), sch_lowest(&A, IR_FLOAT32)),
        sch_for(&A, r, N, SCH_LOOP_VECTORIZED, st(o2, I(1), bin(SCH_MAX, ld(p1, V(r)), ld(o2, I(1))))),
        sch_alloc(&A, l1,
                  sch_seq2(&A, sch_for(&A, q, 4, SCH_LOOP_THREAD, st(l1, V(q), F(2))),
                           sch_for(&A, q, 4, SCH_LOOP_VECTORIZED, st(l1, I(0), bin(SCH_MUL, ld(l1, I(0)), F(2)))))),
        literals(o3),
    };
    ((sch_stmt *)reds[4]->body->items[0])->thread_axis = 1;
    const sch_stmt *parts[] = {first, second, sch_seq(&A, 6, reds)};
    sch_buffer **args = su_arena_alloc(&A, 6 * sizeof *args);
    sch_buffer *list[] = {p0, p1, o0, o1, o2, o3};
    memcpy(args, list, sizeof list);
    sch_func *f = su_arena_alloc(&A, sizeof *f);
    *f = (sch_func){"every_form", 6, args, sch_alloc(&A, t0, sch_seq(&A, 3, parts))};
    return f;
}

static char *golden_path(const char *name)
{
    const char *dir = getenv("top_srcdir");
    su_buf p = {0};
    su_buf_printf(&p, "%s/tests/codegen/golden/%s", dir ? dir : ".", name);
    return su_buf_take(&p);
}

static void check_golden(const char *name, const char *got)
{
    char *path = golden_path(name);
    if (getenv("RT_UPDATE_GOLDEN")) {
        FILE *fp = fopen(path, "w");
        if (fp) {
            fputs(got, fp);
            fclose(fp);
        }
    }
    size_t n;
    char *want = su_read_file(path, &n);
    is_str(got, want ? want : "(missing golden file)", "golden %s", name);
    free(want);
    free(path);
}

static int64_t floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t floormod(int64_t a, int64_t b)
{
    return a - floordiv(a, b) * b;
}

/* Builds the C and checks what it computes. */
static void run(const char *src)
{
    tg_target t;
    const char *why;
    if (!tg_target_parse("cpu", &t, &why)) {
        ok(0, "target: %s", why);
        return;
    }
    tg_lib *lib = NULL;
    char *log = NULL;
    tg_err e = tg_build(src, &t, &lib, &log);
    ok(e == TG_E_OK, "the C builds");
    if (e) {
        diag("%s", log ? log : tg_err_name(e));
        free(log);
        return;
    }
    free(log);
    tg_entry_fn fn = (tg_entry_fn)tg_lib_sym(lib, "every_form");
    /* the calling convention: 64-byte aligned buffers */
    _Alignas(64) int64_t p0[N];
    _Alignas(64) int64_t o1[N];
    _Alignas(64) int64_t o3[8];
    _Alignas(64) float p1[N];
    _Alignas(64) float o0[N];
    _Alignas(64) float o2[2];
    for (int i = 0; i < N; i++) {
        p0[i] = 3 * i - 10;
        p1[i] = 0.75f * (float)i - 2.0f;
    }
    void *args[] = {p0, p1, o0, o1, o2, o3};
    is_int(fn(args), 0, "the kernel returns 0");
    int bad_int = 0, bad_float = 0;
    float sum = 0, max = -INFINITY;
    for (int i = 0; i < N; i++) {
        int64_t a = i - 4;
        int64_t want = floordiv(a, 3) + floormod(a, 3) * 100 + i / 2 + floormod(p0[i], 4);
        bad_int += o1[i] != want;
        float x = p1[i] * -0.5f;
        double t0 = fmod((double)(i * 3), 4.0);
        float w = !(a < 0 || a >= 2) && i != 5 ? fmodf(p1[i], 1.5f) : (float)p0[i] + expf(x) - (float)sqrt(t0);
        bad_float += fabsf(o0[i] - w) > 1e-5f * fmaxf(1.0f, fabsf(w));
        sum += p1[i];
        max = fmaxf(max, p1[i]);
    }
    is_int(bad_int, 0, "integer division and modulo are floor operations, plain ones exact");
    is_int(bad_float, 0, "selects, casts, float modulo and intrinsics compute their formulas");
    ok(fabsf(o2[0] - sum) < 1e-5f && o2[1] == max, "SIMD sum %g and max %g (want %g, %g)", o2[0], o2[1], sum, max);
    int64_t lits[] = {-3, 200, 5000000000LL, -1, 1, 2, -7, 0};
    ok(!memcmp(o3, lits, sizeof lits), "literals keep their values (%lld %lld %lld %lld %lld %lld %lld %lld)",
       (long long)o3[0], (long long)o3[1], (long long)o3[2], (long long)o3[3], (long long)o3[4],
       (long long)o3[5], (long long)o3[6], (long long)o3[7]);
    tg_lib_close(lib);
}

/* A second C-like language, a sketch of OpenCL C written only to show that
 * a language is a table: work-item indices for thread loops, local memory,
 * address-space qualifiers, overloaded math (no intrinsic names), its own
 * types and literals. Nothing of the C table may show through. */
static const char *const cl_types[IR_DTYPE_COUNT] = {
    [IR_FLOAT32] = "float", [IR_FLOAT16] = "half", [IR_FLOAT64] = "double", [IR_INT8] = "char",
    [IR_INT16] = "short",   [IR_INT32] = "int",    [IR_INT64] = "long",     [IR_UINT8] = "uchar",
    [IR_BOOL] = "uchar",
};

static void cl_int(su_buf *b, ir_dtype dt, int64_t v)
{
    if (dt == IR_INT64)
        su_buf_printf(b, "%lldL", (long long)v);
    else
        su_buf_printf(b, "(%s)%lld", cl_types[dt], (long long)v);
}

static void cl_float(su_buf *b, ir_dtype dt, double v)
{
    if (!isfinite(v)) {
        su_buf_puts(b, isnan(v) ? "NAN" : v > 0 ? "INFINITY" : "-INFINITY");
        return;
    }
    char t[64];
    snprintf(t, sizeof t, dt == IR_FLOAT64 ? "%.17g" : "%.9g", v);
    su_buf_printf(b, "%s%s%s", t, strpbrk(t, ".e") ? "" : ".0", dt == IR_FLOAT64 ? "" : "f");
}

#define CL(...) (const sch_lang_line[]){__VA_ARGS__, {0, NULL}}
#define CL_ARGS(input, other) {input, other, other, other}

static const sch_lang opencl_sketch = {
    .name = "OpenCL C (sketch)",
    .indent = "\t",
    .types = cl_types,
    .int_lit = cl_int,
    .float_lit = cl_float,
    .ops = {
        SCH_INFIX_OPS(3, 4, 5, 6),
        [SCH_NOT] = {"!$0", 7, false},
        [SCH_CAST] = {"convert_$t($0)", 0, false},
        [SCH_SELECT] = {"select($2, $1, $0)", 0, false},
        [SCH_MIN] = {"min($0, $1)", 0, false},
        [SCH_MAX] = {"max($0, $1)", 0, false},
        [SCH_CALL] = {"$F($*)", 0, false},
        [SCH_LOAD] = {"$b[$0]", 0, false},
    },
    .mixed_prec = 4,
    .floor_div = {"floor_div($0, $1)", 0, false},
    .floor_mod = {"floor_mod($0, $1)", 0, false},
    .float_mod = {{"fmod($0, $1)", 0, false}, {"fmod($0, $1)", 0, false}},
    .loop_var = "x",
    .let_var = "y",
    .store = CL({0, "$b[$0] = $1;"}),
    .if_then = CL({0, "if ($0) {"}, {1, "$B"}, {0, "}"}),
    .if_else = CL({0, "if ($0) {"}, {1, "$B"}, {0, "} else {"}, {1, "$O"}, {0, "}"}),
    .let = CL({0, "$t $v = $0;"}, {0, "$B"}),
    .loop = CL({0, "$p"}, {0, "for (long $v = 0; $v < $n; $v++) {"}, {1, "$B"}, {0, "}"}),
    .mark = {[SCH_MARK_UNROLLED] = "__attribute__((opencl_unroll_hint($N)))"},
    .loops = {[SCH_MARK_THREAD] = CL({0, "{"}, {1, "const long $v = get_local_id($a);"}, {1, "$B"}, {0, "}"})},
    .alloc = {
        [SCH_SCOPE_GLOBAL] = CL({0, "__global $t *$b = scratch;"}, {0, "$B"}),
        [SCH_SCOPE_LOCAL] = CL({0, "__local $t $b[$e];"}, {0, "$B"}),
    },
    .func = CL({0, "__kernel void $f($A, __global double *scratch)"}, {0, "{"}, {1, "$B"}, {0, "}"}),
    .param = CL_ARGS("__global const $t *$b", "__global $t *$b"),
};

/* The sketch prints the function without a trace of the C table. */
static void second_language(const sch_func *f)
{
    su_buf b = {0};
    sch_emit_func(&b, &opencl_sketch, f, "every_form");
    const char *t = su_buf_str(&b);
    if (getenv("RT_SHOW"))
        fputs(t, stderr);
    static const char *const want[][2] = {
        {"the kernel's signature", "__kernel void every_form(__global const long *p0, __global const float *p1, "
                                   "__global float *o0, __global long *o1, __global float *o2, __global long *o3, "
                                   "__global double *scratch)\n{\n"},
        {"a thread loop is a work-item index", "\t{\n\t\tconst long x3 = get_local_id(1);\n\t\tl1[x3] = 2.0f;\n\t}\n"},
        {"local memory", "\t__local float l1[4];\n"},
        {"a kernel-wide temporary", "\t__global double *t0 = scratch;\n"},
        {"floor forms and plain division", "floor_div(y0, 3L) + floor_mod(y0, 3L) * 100L + x0 / 2L"},
        {"its select, casts, overloaded math",
         "select(convert_float(p0[x0]) + exp(y2) - convert_float(sqrt(t0[x0])), fmod(p1[x0], 1.5f)"},
        {"an unroll hint", "\t\t\t__attribute__((opencl_unroll_hint(3)))\n\t\t\tfor (long x3 = 0; x3 < 3L; x3++) {\n"},
        {"its literals", "convert_long(convert_char(x5) + (char)-3)"},
        {"its INT64_MIN", "max(-9223372036854775808L, x5 - 1L)"},
        {"its NaN", "select(1e+10f, -0.25f, convert_float(x5) != NAN)"},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        ok(strstr(t, want[i][1]) != NULL, "second language: %s", want[i][0]);
    static const char *const c_only[] = {"#pragma", "rt_floor", "rt_min", "rt_max", "rt_exp", "restrict", "int64_t", "args[", "rc = ", "    "};
    int seen = 0;
    for (size_t i = 0; i < sizeof c_only / sizeof *c_only; i++)
        seen += strstr(t, c_only[i]) != NULL;
    is_int(seen, 0, "second language: nothing of the C table shows through");
    su_buf_free(&b);
}

int main(void)
{
    su_arena_init(&A);
    hx_temp_cache();
    sch_func *f = build();
    su_buf ir = {0}, c = {0};
    sch_print_func(&ir, f);
    tg_c_prelude(&c);
    size_t pre = c.len;
    tg_c_func(&c, f, "every_form");
    check_golden("emit_loopir.txt", su_buf_str(&ir));
    check_golden("emit_c.txt", su_buf_str(&c) + pre);
    /* the walk's other entry points print the same text as the function */
    su_buf b = {0};
    sch_print_stmt(&b, f->body, 1);
    ok(strstr(su_buf_str(&ir), su_buf_str(&b)) != NULL, "a statement prints as inside its function");
    su_buf_clear(&b);
    sch_print_expr(&b, f->body->body->items[0]->body->value);
    is_str(su_buf_str(&b), "i - 4", "an expression prints with its hints");
    second_language(f);
    /* a new intrinsic needs its C names (else C would call the double one on floats) */
    int unnamed = 0;
    for (int fn = 0; fn < SCH_FN_COUNT; fn++)
        unnamed += !tg_lang_c.intrinsics[fn][0] || !tg_lang_c.intrinsics[fn][1];
    is_int(unnamed, 0, "the C table names every intrinsic for float32 and float64");
    run(su_buf_str(&c));
    su_buf_free(&b);
    su_buf_free(&ir);
    su_buf_free(&c);
    su_arena_free(&A);
    return tap_done();
}
