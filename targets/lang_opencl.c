/* lang_opencl.c — the OpenCL C languages: the forms through which the
 * shared LoopIR walk (schedule/emit.c) writes a LoopIR function as one
 * `__kernel`. Buffers are `__global` pointers in argument order, followed by
 * one `__global char *scratch` that holds the kernel-wide temporaries (a
 * stack: each temporary takes the next 64-byte-aligned bytes for the extent
 * of its statement); per-iteration locals are private arrays.
 *
 * Two tables share every form but one. The group language runs the kernel
 * as a single work-group: each nest's outermost parallel loop is spread over
 * the work-items (iteration get_local_id(0), stride get_local_size(0)) and
 * followed by a barrier, so the next nest reads what every work-item wrote;
 * nested parallel loops run serially in their work-item. That is only right
 * when every store lies inside such a loop (else all work-items would run
 * it, racing), which tg_cl_groupable checks; other functions get the single
 * language, one work-item running the whole kernel. Spreading nests over
 * many work-groups needs a launch per nest (the device schedule of a later
 * step), not a different table.
 *
 * Math is OpenCL's own overloaded builtins (exp, erf, tanh, pow...); min and
 * max are comparisons as in the C target (the builtins leave NaN open).
 * Names come from counters (i0, v0; buffers keep LoopIR's p0, o0, t0, l0,
 * w0), never from a model. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "targets/targets.h"

static const char *const cltypes[IR_DTYPE_COUNT] = {
    [IR_FLOAT32] = "float", [IR_FLOAT16] = "float", [IR_FLOAT64] = "double",
    [IR_INT8] = "char",     [IR_INT16] = "short",   [IR_INT32] = "int",
    [IR_INT64] = "long",    [IR_UINT8] = "uchar",   [IR_BOOL] = "uchar",
};

/* long literals carry L; narrower types a cast, so the constant has the
 * node's type. */
static void int_lit(su_buf *b, ir_dtype dt, int64_t v)
{
    if (dt != IR_INT64 && dt != IR_INT32 && dt != IR_BOOL)
        su_buf_printf(b, "(%s)", cltypes[dt]);
    if (v == INT64_MIN)
        su_buf_puts(b, "(-9223372036854775807L - 1L)");
    else if (dt == IR_INT64)
        su_buf_printf(b, "%s%lldL%s", v < 0 ? "(" : "", (long long)v, v < 0 ? ")" : "");
    else
        su_buf_printf(b, "%s%lld%s", v < 0 ? "(" : "", (long long)v, v < 0 ? ")" : "");
}

/* Floats round-trip (9 or 17 digits); NAN and INFINITY are OpenCL C's macros. */
static void float_lit(su_buf *b, ir_dtype dt, double v)
{
    bool f32 = dt != IR_FLOAT64;
    if (isnan(v)) {
        su_buf_puts(b, f32 ? "NAN" : "(double)NAN");
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
#define ARGS(input, other) {input, other, other, other}
/* A kernel-wide temporary: the next aligned bytes of scratch. */
#define SCRATCH LINES({0, "{"}, {1, "__global $t *restrict $b = (__global $t *)(scratch + rt_off);"}, \
                      {1, "rt_off += RT_ALIGN($z);"}, {1, "$B"}, {1, "rt_off -= RT_ALIGN($z);"}, {0, "}"})
#define PRIVATE LINES({0, "$t $b[$e];"}, {0, "$B"})

/* Every form of the two languages but the parallel loop's. */
#define CL_FORMS                                                                                              \
    .indent = "    ", .types = cltypes, .int_lit = int_lit, .float_lit = float_lit,                           \
    .ops = {                                                                                                  \
        SCH_INFIX_OPS(3, 4, 5, 6),                                                                            \
        [SCH_NOT] = {"!$0", 7, false},                                                                        \
        [SCH_CAST] = {"($t)$0", 7, false},                                                                    \
        [SCH_SELECT] = {"($0 ? $1 : $2)", 1, false},                                                          \
        [SCH_MIN] = {"rt_min_$t($0, $1)", 0, false},                                                          \
        [SCH_MAX] = {"rt_max_$t($0, $1)", 0, false},                                                          \
        [SCH_CALL] = {"$F($*)", 0, false},                                                                    \
        [SCH_LOAD] = {"$b[$0]", 0, false},                                                                    \
    },                                                                                                        \
    .mixed_prec = 4, .floor_div = {"rt_floordiv($0, $1)", 0, false},                                          \
    .floor_mod = {"rt_floormod($0, $1)", 0, false},                                                           \
    .float_mod = {{"fmod($0, $1)", 0, false}, {"fmod($0, $1)", 0, false}},                                    \
    .loop_var = "i", .let_var = "v", .acc_var = "r",                                                          \
    .store = LINES({0, "$b[$0] = $1;"}),                                                                      \
    .if_then = LINES({0, "if ($0) {"}, {1, "$B"}, {0, "}"}),                                                  \
    .if_else = LINES({0, "if ($0) {"}, {1, "$B"}, {0, "} else {"}, {1, "$O"}, {0, "}"}),                      \
    .let = LINES({0, "const $t $v = $0;"}, {0, "$B"}),                                                        \
    .loop = LINES({0, "$p"}, {0, "for (long $v = 0; $v < $n; $v++) {"}, {1, "$B"}, {0, "}"}),               \
    .mark = {[SCH_MARK_UNROLLED] = "#pragma unroll $N"},                                                      \
    .alloc = {[SCH_SCOPE_INPUT] = SCRATCH, [SCH_SCOPE_OUTPUT] = SCRATCH, [SCH_SCOPE_GLOBAL] = SCRATCH,        \
              [SCH_SCOPE_LOCAL] = PRIVATE},                                                                   \
    .func = LINES({0, ""}, {0, "/* $h */"}, {0, "__kernel void $f($A, __global char *scratch)"}, {0, "{"},    \
                  {1, "long rt_off = 0;"}, {1, "(void)rt_off;"}, {1, "$B"}, {0, "}"}),                        \
    .param = ARGS("__global const $t *restrict $b", "__global $t *restrict $b"),                             \
    .no_params = "__global char *rt_none", .prelude = PRELUDE

#define PRELUDE                                                                      \
    "/* generated by relay-tune: OpenCL C */\n"                                      \
    "#ifdef cl_khr_fp64\n"                                                           \
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"                                \
    "#endif\n"                                                                       \
    "#define RT_ALIGN(n) (((long)(n) + 63L) & ~63L)\n"                               \
    "long rt_floordiv(long a, long b)\n"                                             \
    "{\n"                                                                            \
    "    long q = a / b;\n"                                                          \
    "    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n"                 \
    "}\n"                                                                            \
    "long rt_floormod(long a, long b)\n"                                             \
    "{\n"                                                                            \
    "    long r = a % b;\n"                                                          \
    "    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n"                     \
    "}\n"                                                                            \
    "#define RT_MINMAX(T) \\\n"                                                      \
    "    T rt_min_##T(T a, T b) { return a < b ? a : b; } \\\n"                      \
    "    T rt_max_##T(T a, T b) { return a > b ? a : b; }\n"                         \
    "RT_MINMAX(float)\nRT_MINMAX(char)\nRT_MINMAX(short)\nRT_MINMAX(int)\n"          \
    "RT_MINMAX(long)\nRT_MINMAX(uchar)\n"                                            \
    "#ifdef cl_khr_fp64\n"                                                           \
    "RT_MINMAX(double)\n"                                                            \
    "#endif\n"                                                                       \
    "/* a thread loop's work-item axis: 0..2 work-group x, y, z; 3..5 local */\n"    \
    "#define rt_item(a) ((a) < 3 ? (long)get_group_id(a) : (long)get_local_id((a) - 3))\n"

#define THREAD_LOOP LINES({0, "{"}, {1, "const long $v = rt_item($a);"}, {1, "$B"}, {0, "}"})

const sch_lang tg_lang_cl_group = {
    .name = "OpenCL C (one work-group)",
    CL_FORMS,
    .loops = {
        [SCH_MARK_PARALLEL] = LINES({0, "for (long $v = get_local_id(0); $v < $n; $v += (long)get_local_size(0)) {"},
                                    {1, "$B"}, {0, "}"}, {0, "barrier(CLK_GLOBAL_MEM_FENCE);"}),
        [SCH_MARK_THREAD] = THREAD_LOOP,
    },
};

const sch_lang tg_lang_cl_single = {
    .name = "OpenCL C (one work-item)",
    CL_FORMS,
    .loops = {[SCH_MARK_THREAD] = THREAD_LOOP},
};

/* Whether every store under s lies inside an outermost parallel loop
 * (in_par: s already does), and no kernel-wide temporary is made inside one
 * (all work-items would take the same scratch bytes). */
static bool stores_parallel(const sch_stmt *s, bool in_par)
{
    if (!s)
        return true;
    switch (s->kind) {
    case SCH_S_STORE: return in_par;
    case SCH_S_FOR: return stores_parallel(s->body, in_par || s->loop == SCH_LOOP_PARALLEL);
    case SCH_S_LET: return stores_parallel(s->body, in_par);
    case SCH_S_ALLOC:
        if (in_par && s->buf->scope != SCH_SCOPE_LOCAL)
            return false;
        return stores_parallel(s->body, in_par);
    case SCH_S_IF: return stores_parallel(s->then_s, in_par) && stores_parallel(s->else_s, in_par);
    case SCH_S_SEQ:
        for (int i = 0; i < s->n; i++)
            if (!stores_parallel(s->items[i], in_par))
                return false;
        return true;
    default: return false;
    }
}

bool tg_cl_groupable(const sch_func *f)
{
    return stores_parallel(f->body, false);
}

static int64_t scratch_bytes(const sch_stmt *s)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case SCH_S_FOR:
    case SCH_S_LET: return scratch_bytes(s->body);
    case SCH_S_ALLOC: {
        int64_t own = s->buf->scope == SCH_SCOPE_LOCAL ? 0 : (s->buf->size * ir_dtype_bytes(s->buf->dtype) + 63) & ~63LL;
        return own + scratch_bytes(s->body);
    }
    case SCH_S_IF: return scratch_bytes(s->then_s) + scratch_bytes(s->else_s);
    case SCH_S_SEQ: {
        int64_t sum = 0;
        for (int i = 0; i < s->n; i++)
            sum += scratch_bytes(s->items[i]);
        return sum;
    }
    default: return 0;
    }
}

void tg_cl_func(su_buf *out, const sch_func *f, const char *name, const tg_cl_device *d, tg_cl_launch *l)
{
    bool group = tg_cl_groupable(f);
    sch_emit_func(out, group ? &tg_lang_cl_group : &tg_lang_cl_single, f, name);
    memset(l, 0, sizeof *l);
    l->n = 1;
    l->scratch = scratch_bytes(f->body);
    tg_cl_step *s = &l->step[0];
    snprintf(s->name, sizeof s->name, "%s", name);
    s->dims = 1;
    /* one work-group of the device's size (capped at 256, which every
     * device takes for a kernel this simple), or one work-item */
    int64_t wg = d && d->max_wg > 0 ? (d->max_wg < 256 ? d->max_wg : 256) : 1;
    s->global[0] = s->local[0] = group ? wg : 1;
}
