/* lang_c.c — the C + OpenMP language: the forms through which the shared
 * LoopIR walk (schedule/emit.c) writes C. The output is plain C11 meant to
 * be read and to be vectorized by gcc -O3 -march=native: buffers are
 * restrict pointers assumed 64-byte aligned (the calling convention
 * requires it), parallel loops carry `#pragma omp parallel for` (only the
 * outermost one of a nest: nested parallel loops run serially in their
 * thread), vectorized loops `#pragma omp simd` (independent iterations, so
 * gcc may vectorize without proving it; a sum, max or min into one element
 * as an OpenMP simd reduction), unrolled loops `#pragma GCC unroll`, and
 * local buffers become aligned arrays on the stack, which gcc keeps in
 * registers once the loops over them are unrolled and vectorized. Integer
 * division and modulo are floor operations; they print as C's / and % where
 * the numerator is provably non-negative (loop bounds) and as helpers
 * otherwise. float32 exp, erf and tanh are inline functions of the prelude
 * (no libm calls), so that the loops using them vectorize too. Names come
 * from counters: loop variables i0, i1, ..., lets v0, ..., accumulators r0,
 * ...; buffers keep their LoopIR names (p0, o0, t0, l0, w0). */
#include <math.h>
#include <string.h>

#include "targets/targets.h"

static const char *const ctypes[IR_DTYPE_COUNT] = {
    [IR_FLOAT32] = "float", [IR_FLOAT16] = "float", [IR_FLOAT64] = "double",
    [IR_INT8] = "int8_t",   [IR_INT16] = "int16_t", [IR_INT32] = "int32_t",
    [IR_INT64] = "int64_t", [IR_UINT8] = "uint8_t", [IR_BOOL] = "uint8_t",
};

/* Integers of a type narrower than int or wider than int32 get a cast or a
 * suffix, so that the constant has the node's type. */
static void int_lit(su_buf *b, ir_dtype dt, int64_t v)
{
    if (dt != IR_INT64 && dt != IR_INT32 && dt != IR_BOOL)
        su_buf_printf(b, "(%s)", ctypes[dt]);
    if (v == INT64_MIN)
        su_buf_puts(b, "INT64_MIN");
    else if (v < INT32_MIN || v > INT32_MAX)
        su_buf_printf(b, "%lldLL", (long long)v);
    else
        su_buf_printf(b, "%lld", (long long)v);
}

/* Floats round-trip (9 or 17 digits), in parentheses where negative. */
static void float_lit(su_buf *b, ir_dtype dt, double v)
{
    bool f32 = dt != IR_FLOAT64;
    if (isnan(v)) {
        su_buf_puts(b, "NAN");
        return;
    }
    if (isinf(v)) {
        su_buf_puts(b, v > 0 ? "INFINITY" : "(-INFINITY)");
        return;
    }
    char t[64];
    snprintf(t, sizeof t, f32 ? "%.9g" : "%.17g", v);
    bool frac = strpbrk(t, ".e") != NULL;
    su_buf_printf(b, "%s%s%s%s%s", v < 0 ? "(" : "", t, frac ? "" : ".0", f32 ? "f" : "", v < 0 ? ")" : "");
}

#define LINES(...) (const sch_lang_line[]){__VA_ARGS__, {0, NULL}}
#define FOR_HEADER "for (int64_t $v = 0; $v < $n; $v++) {"
#define HEAP_OPEN {0, "{"}, {1, "$t *restrict $b = ($t *)rt_alloc($z);"}
#define HEAP_CLOSE {1, "rt_free($b);"}, {0, "}"}
/* A temporary of the kernel: an allocation that fails makes the entry return -1. */
#define HEAP_RC LINES(HEAP_OPEN, {1, "if (!$b) {"}, {2, "rc = -1;"}, {1, "} else {"}, {2, "$B"}, {1, "}"}, HEAP_CLOSE)
#define ARGS(input, other) {input, other, other, other}

/* float16 values are floats (x86 has no float16 arithmetic but AVX512-FP16,
 * which these hosts lack): arguments hold GCC's _Float16; loads widen
 * through the prelude's rt_h2f, stores and casts round to nearest even
 * through rt_f2h and rt_f16_round: integer and float operations that gcc
 * vectorizes, where gcc 12 converts _Float16 one element at a time (a
 * scalar vcvtps2ph per store kept whole loops scalar). */
static const sch_lang_storage cstorage[IR_DTYPE_COUNT] = {
    [IR_FLOAT16] = {"_Float16", 4, {"rt_h2f($b, $0)", 0, false}, {"rt_f16_round($0)", 0, false},
                    LINES({0, "rt_f2h($b, $0, $1);"})},
};

const sch_lang tg_lang_c = {
    .name = "C",
    .indent = "    ",
    .types = ctypes,
    .storage = cstorage,
    .int_lit = int_lit,
    .float_lit = float_lit,
    .ops = {
        SCH_INFIX_OPS(3, 4, 5, 6),
        [SCH_NOT] = {"!$0", 7, false},
        [SCH_CAST] = {"($t)$0", 7, false},
        [SCH_SELECT] = {"($0 ? $1 : $2)", 1, false},
        [SCH_MIN] = {"rt_min_$t($0, $1)", 0, false},
        [SCH_MAX] = {"rt_max_$t($0, $1)", 0, false},
        [SCH_CALL] = {"$F($*)", 0, false},
        [SCH_LOAD] = {"$b[$0]", 0, false},
        /* READ: lowering turns every tensor read into a load */
    },
    /* gcc warns about comparisons inside comparisons or logic without parentheses */
    .mixed_prec = 4,
    .floor_div = {"rt_floordiv($0, $1)", 0, false},
    .floor_mod = {"rt_floormod($0, $1)", 0, false},
    .float_mod = {{"fmodf($0, $1)", 0, false}, {"fmod($0, $1)", 0, false}},
    .intrinsics = {
        [SCH_FN_EXP] = {"rt_expf", "exp"},
        [SCH_FN_LOG] = {"logf", "log"},
        [SCH_FN_SQRT] = {"sqrtf", "sqrt"},
        [SCH_FN_TANH] = {"rt_tanhf", "tanh"},
        [SCH_FN_ERF] = {"rt_erff", "erf"},
        [SCH_FN_FABS] = {"fabsf", "fabs"},
        [SCH_FN_POW] = {"powf", "pow"},
        [SCH_FN_FLOOR] = {"floorf", "floor"},
    },
    .loop_var = "i",
    .let_var = "v",
    .acc_var = "r",
    .store = LINES({0, "$b[$0] = $1;"}),
    .if_then = LINES({0, "if ($0) {"}, {1, "$B"}, {0, "}"}),
    .if_else = LINES({0, "if ($0) {"}, {1, "$B"}, {0, "} else {"}, {1, "$O"}, {0, "}"}),
    .let = LINES({0, "const $t $v = $0;"}, {0, "$B"}),
    .loop = LINES({0, "$p"}, {0, FOR_HEADER}, {1, "$B"}, {0, "}"}),
    .mark = {
        [SCH_MARK_PARALLEL] = "#pragma omp parallel for schedule(static)",
        [SCH_MARK_VECTORIZED] = "#pragma omp simd",
        [SCH_MARK_UNROLLED] = "#pragma GCC unroll $N",
        [SCH_MARK_ROLLED] = "#pragma GCC unroll 1",
    },
    .reduction = {
        .lines = LINES({0, "{"}, {1, "$t $r = $b[$0];"}, {1, "#pragma omp simd reduction($o:$r)"}, {1, FOR_HEADER},
                       {2, "$U"}, {1, "}"}, {1, "$b[$0] = $r;"}, {0, "}"}),
        .update = {"$r = $r + $1;", "$r = rt_max_$t($r, $1);", "$r = rt_min_$t($r, $1);"},
        .op = {"+", "rt_max", "rt_min"},
    },
    .alloc = {
        [SCH_SCOPE_INPUT] = HEAP_RC,
        [SCH_SCOPE_OUTPUT] = HEAP_RC,
        [SCH_SCOPE_GLOBAL] = HEAP_RC,
        /* inside loops (maybe threads) there is no error path: give up */
        [SCH_SCOPE_LOCAL] = LINES(HEAP_OPEN, {1, "if (!$b)"}, {2, "abort();"}, {1, "$B"}, HEAP_CLOSE),
    },
    /* small locals on the stack, where gcc may keep them in registers;
     * used through a restrict pointer, as the heap's are: where a loop read
     * one plain stack array and accumulated in another (the flat depthwise
     * form's padded planes and conv tile), gcc stored the accumulators
     * back after every FMA */
    .alloc_small = LINES({0, "$t $b_s[$e] __attribute__((aligned(64)));"}, {0, "$t *restrict $b = $b_s;"}, {0, "$B"}),
    .small_bytes = 64 * 1024,
    .func = LINES({0, ""}, {0, "/* $h */"}, {0, "static int $f_body($A)"}, {0, "{"}, {1, "int rc = 0;"}, {1, "$P"},
                  {1, "$B"}, {1, "return rc;"}, {0, "}"}, {0, ""}, {0, "int $f(void *const *args)"}, {0, "{"},
                  {1, "return $f_body($W);"}, {0, "}"}),
    .param = ARGS("const $t *restrict $b", "$t *restrict $b"),
    .no_params = "void",
    .param_line = ARGS("$b = (const $t *)__builtin_assume_aligned($b, 64);",
                       "$b = ($t *)__builtin_assume_aligned($b, 64);"),
    .entry_arg = ARGS("(const $t *)args[$i]", "($t *)args[$i]"),
    .prelude =
        "/* generated by relay-tune */\n"
        "#include <math.h>\n"
        "#include <stdatomic.h>\n"
        "#include <stdint.h>\n"
        "#include <stdlib.h>\n"
        "#include <string.h>\n"
        "\n"
        "static inline int64_t rt_floordiv(int64_t a, int64_t b)\n"
        "{\n"
        "    int64_t q = a / b;\n"
        "    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n"
        "}\n"
        "static inline int64_t rt_floormod(int64_t a, int64_t b)\n"
        "{\n"
        "    int64_t r = a % b;\n"
        "    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n"
        "}\n"
        "/* max and min propagate NaN, as PyTorch's do (ir_max_nan in ir/ir.h):\n"
        " * NaN when either operand is, else the larger (smaller), a on a tie.\n"
        " * `b != b` is false for integers, so one form serves every type. The\n"
        " * reductions rt_max and rt_min combine the lanes of a simd reduction\n"
        " * through them too: OpenMP's own max and min drop a NaN lane. Each lane\n"
        " * starts from the accumulator's value, which max and min may see twice.\n"
        " * Written as a select, then the NaN check: with `(a < b || b != b) ? b : a`\n"
        " * gcc 12 made resnet18's padded 3x3 max pool 5x slower than the old\n"
        " * NaN-dropping `a > b ? a : b` (1.0 -> 5.1 ms); this form takes 1.0-1.5 ms.\n"
        " * Neither NaN-aware form vectorizes that guarded loop (relu's does). */\n"
        "#define RT_PRAGMA(x) _Pragma(#x)\n"
        "#define RT_MINMAX(T) \\\n"
        "    static inline T rt_min_##T(T a, T b) { T m = b < a ? b : a; return b != b ? b : m; } \\\n"
        "    static inline T rt_max_##T(T a, T b) { T m = a < b ? b : a; return b != b ? b : m; } \\\n"
        "    RT_PRAGMA(omp declare reduction(rt_max : T : omp_out = rt_max_##T(omp_out, omp_in)) \\\n"
        "              initializer(omp_priv = omp_orig)) \\\n"
        "    RT_PRAGMA(omp declare reduction(rt_min : T : omp_out = rt_min_##T(omp_out, omp_in)) \\\n"
        "              initializer(omp_priv = omp_orig))\n"
        "RT_MINMAX(float)\nRT_MINMAX(double)\nRT_MINMAX(int8_t)\nRT_MINMAX(int16_t)\n"
        "RT_MINMAX(int32_t)\nRT_MINMAX(int64_t)\nRT_MINMAX(uint8_t)\n"
        "/* A kernel's temporaries come from a pool of freed blocks that outlives\n"
        " * the call: glibc gives large blocks back to the system on free (mmap, or\n"
        " * trimming the heap's top), so a kernel with a few hundred KB of\n"
        " * temporaries took a page fault per 4 KB on every call (resnet's 128-channel\n"
        " * 28x28 Winograd conv: 415 faults, 1.9 against 1.2 ms). Blocks of\n"
        " * RT_POOL_MIN bytes and up carry their size in a 64-byte header and go\n"
        " * back to one of RT_POOL slots; a full pool gives the block to free. Slots\n"
        " * are taken and filled by atomic exchange, so concurrent calls (and\n"
        " * temporaries of parallel loops) are safe. Unloading the kernels frees\n"
        " * what the pool holds. */\n"
        "#define RT_POOL 8\n"
        "#define RT_POOL_MIN 16384\n"
        "static void *_Atomic rt_pool[RT_POOL];\n"
        "static inline void *rt_alloc(size_t n)\n"
        "{\n"
        "    n = (n + 63) & ~(size_t)63;\n"
        "    for (int i = 0; n >= RT_POOL_MIN && i < RT_POOL; i++) {\n"
        "        char *b = atomic_exchange(&rt_pool[i], NULL);\n"
        "        if (b && *(size_t *)b >= n)\n"
        "            return b + 64;\n"
        "        void *none = NULL;\n"
        "        if (b && !atomic_compare_exchange_strong(&rt_pool[i], &none, b))\n"
        "            free(b);\n"
        "    }\n"
        "    char *b = aligned_alloc(64, n + 64);\n"
        "    if (!b)\n"
        "        return NULL;\n"
        "    *(size_t *)b = n;\n"
        "    return b + 64;\n"
        "}\n"
        "static inline void rt_free(void *p)\n"
        "{\n"
        "    char *b = p ? (char *)p - 64 : NULL;\n"
        "    for (int i = 0; b && *(size_t *)b >= RT_POOL_MIN && i < RT_POOL; i++) {\n"
        "        void *none = NULL;\n"
        "        if (atomic_compare_exchange_strong(&rt_pool[i], &none, b))\n"
        "            return;\n"
        "    }\n"
        "    free(b);\n"
        "}\n"
        "__attribute__((destructor)) static void rt_pool_drain(void)\n"
        "{\n"
        "    for (int i = 0; i < RT_POOL; i++)\n"
        "        free(atomic_exchange(&rt_pool[i], NULL));\n"
        "}\n"
        "/* float16 bits h as float32, exactly (subnormals, infinities and NaN\n"
        " * included) in integer operations, which gcc vectorizes: the bits\n"
        " * shifted into place and rebiased, subnormals scaled as floats. */\n"
        "static inline float rt_h2f_bits(uint16_t h)\n"
        "{\n"
        "    uint32_t em = (uint32_t)(h & 0x7fff) << 13, s = (uint32_t)(h & 0x8000) << 16;\n"
        "    uint32_t nrm = em + (112u << 23), sub = em + (113u << 23), m;\n"
        "    float f, fs;\n"
        "    memcpy(&f, &nrm, sizeof f);\n"
        "    memcpy(&fs, &sub, sizeof fs);\n"
        "    fs -= 6.103515625e-05f;\n"
        "    f = em < (1u << 23) ? fs : f;\n"
        "    memcpy(&m, &f, sizeof m);\n"
        "    m = (em >= (0x7c00u << 13) ? (em | (0xffu << 23)) : m) | s;\n"
        "    memcpy(&f, &m, sizeof f);\n"
        "    return f;\n"
        "}\n"
        "/* float32 f rounded to float16 bits, to nearest even, as the interpreter\n"
        " * rounds (ir/tensor.c): NaN becomes the quiet NaN 0x7e00 of f's sign,\n"
        " * from 65520 on infinity. Two candidates, the smaller wins: nrm, the\n"
        " * normal result (13 mantissa bits dropped, the rounding increment's carry\n"
        " * running into the rebiased exponent; capped at infinity, and at least\n"
        " * the smallest normal 0x400), and sub, the subnormal one, rounded by a\n"
        " * float addition of 0.5 whose ulp 2^-24 is float16's subnormal step (at\n"
        " * most 0x400 below 2^-14, larger than nrm above). Minimums and no\n"
        " * branches, so that gcc vectorizes it (checked on all 2^32 inputs). */\n"
        "static inline uint16_t rt_f2h_bits(float f)\n"
        "{\n"
        "    uint32_t x, sub;\n"
        "    memcpy(&x, &f, sizeof x);\n"
        "    uint32_t s = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;\n"
        "    uint32_t an = a > (113u << 23) ? a : (113u << 23);\n"
        "    uint32_t nrm = (an + 0xfffu + ((a >> 13) & 1u) - (112u << 23)) >> 13;\n"
        "    float t = fabsf(f) + 0.5f;\n"
        "    memcpy(&sub, &t, sizeof sub);\n"
        "    sub -= 0x3f000000u;\n"
        "    uint32_t h = nrm < 0x7c00u ? nrm : 0x7c00u;\n"
        "    h = sub < h ? sub : h;\n"
        "    return (uint16_t)(h | s | (uint32_t)(a > 0x7f800000u) << 9);\n"
        "}\n"
        "/* element i of p, and storing f rounded into it */\n"
        "static inline float rt_h2f(const _Float16 *p, int64_t i)\n"
        "{\n"
        "    uint16_t h;\n"
        "    memcpy(&h, p + i, sizeof h);\n"
        "    return rt_h2f_bits(h);\n"
        "}\n"
        "static inline void rt_f2h(_Float16 *p, int64_t i, float f)\n"
        "{\n"
        "    uint16_t h = rt_f2h_bits(f);\n"
        "    memcpy(p + i, &h, sizeof h);\n"
        "}\n"
        "/* f rounded to float16, as a float (a cast to float16) */\n"
        "static inline float rt_f16_round(float f) { return rt_h2f_bits(rt_f2h_bits(f)); }\n"
        "/* exp, erf and tanh of float32 without calls, so that loops using them\n"
        " * vectorize: Cephes' exp (range reduction by ln 2, degree-6 polynomial),\n"
        " * Eigen's rational erf on [-4, 4], tanh from exp (a series near 0).\n"
        " * Errors: exp 1e-7 relative, erf 4e-7 absolute, tanh 5e-7 relative. */\n"
        "static inline float rt_expf(float v)\n"
        "{\n"
        "    float x = v > 88.7228f ? 88.7228f : v;\n"
        "    x = x < -87.3365f ? -87.3365f : x;\n"
        "    float n = floorf(x * 1.44269504f + 0.5f);\n"
        "    float r = x - n * 0.693359375f + n * 2.12194440e-4f;\n"
        "    float p = 1.9875691500e-4f;\n"
        "    p = p * r + 1.3981999507e-3f;\n"
        "    p = p * r + 8.3334519073e-3f;\n"
        "    p = p * r + 4.1665795894e-2f;\n"
        "    p = p * r + 1.6666665459e-1f;\n"
        "    p = p * r + 5.0000001201e-1f;\n"
        "    p = p * (r * r) + r + 1.0f;\n"
        "    int32_t k = (int32_t)n, h = k >> 1;\n"
        "    int32_t e1 = (h + 127) << 23, e2 = (k - h + 127) << 23;\n"
        "    float s1, s2;\n"
        "    memcpy(&s1, &e1, sizeof s1);\n"
        "    memcpy(&s2, &e2, sizeof s2);\n"
        "    return v > 88.7228f ? INFINITY : p * s1 * s2;\n"
        "}\n"
        "static inline float rt_erff(float x)\n"
        "{\n"
        "    x = x > 4.0f ? 4.0f : x;\n"
        "    x = x < -4.0f ? -4.0f : x;\n"
        "    float x2 = x * x;\n"
        "    float p = -2.72614225801306e-10f;\n"
        "    p = p * x2 + 2.77068142495902e-08f;\n"
        "    p = p * x2 - 2.10102402082508e-06f;\n"
        "    p = p * x2 - 5.69250639462346e-05f;\n"
        "    p = p * x2 - 7.34990630326855e-04f;\n"
        "    p = p * x2 - 2.95459980854025e-03f;\n"
        "    p = p * x2 - 1.60960333262415e-02f;\n"
        "    float q = -1.45660718464996e-05f;\n"
        "    q = q * x2 - 2.13374055278905e-04f;\n"
        "    q = q * x2 - 1.68282697438203e-03f;\n"
        "    q = q * x2 - 7.37332916720468e-03f;\n"
        "    q = q * x2 - 1.42647390514189e-02f;\n"
        "    return x * p / q;\n"
        "}\n"
        "static inline float rt_tanhf(float x)\n"
        "{\n"
        "    float c = x > 9.0f ? 9.0f : x < -9.0f ? -9.0f : x;\n"
        "    float e = rt_expf(2.0f * c), x2 = x * x;\n"
        "    float small = x * (1.0f - x2 * (0.333333333f - x2 * 0.133333333f));\n"
        "    return (x < 0.0625f && x > -0.0625f) ? small : (e - 1.0f) / (e + 1.0f);\n"
        "}\n",
};

void tg_c_prelude(su_buf *out)
{
    su_buf_puts(out, tg_lang_c.prelude);
}

void tg_c_func(su_buf *out, const sch_func *f, const char *name)
{
    sch_emit_func(out, &tg_lang_c, f, name);
}
