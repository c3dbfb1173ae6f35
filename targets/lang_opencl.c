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
/* A work-group's shared array: lowering allocates these around the whole
 * body, so the declaration lands at kernel function scope, the only place
 * OpenCL C allows __local variables. */
#define WG_LOCAL LINES({0, "__local $t $b[$e];"}, {0, "$B"})

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
              [SCH_SCOPE_LOCAL] = PRIVATE, [SCH_SCOPE_SHARED] = WG_LOCAL},                                    \
    .barrier = LINES({0, "barrier(CLK_LOCAL_MEM_FENCE);"}),                                                   \
    .func = LINES({0, ""}, {0, "/* $h */"}, {0, "__kernel void $f($A, __global char *scratch)"}, {0, "{"},    \
                  {1, "long rt_off = 0;"}, {1, "(void)rt_off;"}, {1, "$B"}, {0, "}"}),                        \
    .param = ARGS("__global const $t *restrict $b", "__global $t *restrict $b"),                             \
    .no_params = "__global char *rt_none", .prelude = PRELUDE PRELUDE_VECTOR, .vector = VECTOR_FORMS

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

/* Vector types for vectorized loops (sch_lang_vector). A vector's lanes
 * may start at any float (a tile's row in a private array, scratch, an
 * argument), so accesses must not assume vector alignment. vloadN/vstoreN
 * say exactly that, but PoCL builds them from 4-lane pieces (vinsertf128
 * chains where one unaligned load would do); clang (PoCL's compiler)
 * takes a vector type of float alignment instead, loaded and stored
 * through overloaded functions per address space. Other compilers (and
 * a program that defines RT_VLOADN) get vloadN/vstoreN, and so do 3 lanes
 * everywhere: a float3 is four floats in memory, so a float3 store through
 * a pointer would write the element after its lanes. Operands are at + precedence in the address. Lanes are at
 * most 16, OpenCL C's widest vector; a template that wants narrower vectors
 * splits its loop (device_cl.c's knob vec). */
#define VECTOR_FORMS                                                                           \
    {.max = 16, .load = {"rt_vload$N($b + $0)", 5, false}, .broadcast = {"(($t)($0))", 0, false}, \
     .store = LINES({0, "rt_vstore$N($1, $b + $0);"})}

/* The loads and stores of vector forms, and min and max of float vectors
 * as the scalar ones compare (a < b ? a : b, lane by lane: select takes b
 * where the comparison's lane is false). */
#define PRELUDE_VECTOR                                                                                   \
    "#if defined(__clang__) && !defined(RT_VLOADN)\n"                                                   \
    "#define RT_VMEM(N, AS) \\\n"                                                                       \
    "    float##N __attribute__((overloadable)) rt_vload##N(const AS float *p) \\\n"                     \
    "    { return *(const AS rt_float##N##u *)p; } \\\n"                                                 \
    "    void __attribute__((overloadable)) rt_vstore##N(float##N v, AS float *p) \\\n"                  \
    "    { *(AS rt_float##N##u *)p = v; }\n"                                                             \
    "#define RT_VACCESS(N) typedef float##N rt_float##N##u __attribute__((aligned(4))); \\\n"           \
    "    RT_VMEM(N, __global) RT_VMEM(N, __local) RT_VMEM(N, __private)\n"                               \
    "#else\n"                                                                                            \
    "#define RT_VACCESS(N)\n"                                                                            \
    "#define rt_vload2(p) vload2(0, p)\n#define rt_vload4(p) vload4(0, p)\n"                             \
    "#define rt_vload8(p) vload8(0, p)\n#define rt_vload16(p) vload16(0, p)\n"                          \
    "#define rt_vstore2(v, p) vstore2(v, 0, p)\n"                                                        \
    "#define rt_vstore4(v, p) vstore4(v, 0, p)\n#define rt_vstore8(v, p) vstore8(v, 0, p)\n"              \
    "#define rt_vstore16(v, p) vstore16(v, 0, p)\n"                                                      \
    "#endif\n"                                                                                           \
    "#define rt_vload3(p) vload3(0, p)\n#define rt_vstore3(v, p) vstore3(v, 0, p)\n"                     \
    "#define RT_VMINMAX(N) \\\n"                                                                        \
    "    float##N rt_min_float##N(float##N a, float##N b) { return select(b, a, a < b); } \\\n"          \
    "    float##N rt_max_float##N(float##N a, float##N b) { return select(b, a, a > b); }\n"             \
    "RT_VACCESS(2)\nRT_VACCESS(4)\nRT_VACCESS(8)\nRT_VACCESS(16)\n"                                   \
    "RT_VMINMAX(2)\nRT_VMINMAX(3)\nRT_VMINMAX(4)\nRT_VMINMAX(8)\nRT_VMINMAX(16)\n"

/* A loop bound to a work-item axis (sch_bind): its counter is that axis's
 * index, so the launch's NDRange (tg_cl_func) must give the axis exactly
 * the loop's extent. Only the grid language binds: the one-work-group and
 * one-work-item forms run such loops serially (they are the fallback for
 * nests whose bound loops do not form a grid). */
#define THREAD_LOOP LINES({0, "{"}, {1, "const long $v = rt_item($a);"}, {1, "$B"}, {0, "}"})

const sch_lang tg_lang_cl_group = {
    .name = "OpenCL C (one work-group)",
    CL_FORMS,
    .loops = {
        [SCH_MARK_PARALLEL] = LINES({0, "for (long $v = get_local_id(0); $v < $n; $v += (long)get_local_size(0)) {"},
                                    {1, "$B"}, {0, "}"}, {0, "barrier(CLK_GLOBAL_MEM_FENCE);"}),
    },
};

const sch_lang tg_lang_cl_single = {
    .name = "OpenCL C (one work-item)",
    CL_FORMS,
};

/* One nest per launch over many work-groups: the outermost parallel loop is
 * the global index (the NDRange is rounded up to whole work-groups, hence
 * the test), and bound loops are their work-group and work-item indices. */
const sch_lang tg_lang_cl_grid = {
    .name = "OpenCL C (a grid of work-groups)",
    CL_FORMS,
    .loops = {
        [SCH_MARK_PARALLEL] = LINES({0, "{"}, {1, "const long $v = (long)get_global_id(0);"},
                                    {1, "if ($v < $n) {"}, {2, "$B"}, {1, "}"}, {0, "}"}),
        [SCH_MARK_THREAD] = THREAD_LOOP,
    },
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
    /* a barrier inside a loop shared out over the work-items would be
     * reached by some of them only */
    case SCH_S_BARRIER: return !in_par;
    default: return false;
    }
}

bool tg_cl_groupable(const sch_func *f)
{
    return stores_parallel(f->body, false);
}

/* Bytes of the arrays allocated in s: the kernel-wide temporaries in the
 * scratch buffer (each 64-byte aligned), or (shared) the SHARED (__local)
 * ones. */
static int64_t alloc_bytes(const sch_stmt *s, bool shared)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case SCH_S_FOR:
    case SCH_S_LET: return alloc_bytes(s->body, shared);
    case SCH_S_ALLOC: {
        sch_scope sc = s->buf->scope;
        int64_t bytes = s->buf->size * ir_dtype_bytes(s->buf->dtype), own = 0;
        if (shared && sc == SCH_SCOPE_SHARED)
            own = bytes;
        else if (!shared && sc != SCH_SCOPE_LOCAL && sc != SCH_SCOPE_SHARED)
            own = (bytes + 63) & ~63LL;
        return own + alloc_bytes(s->body, shared);
    }
    case SCH_S_IF: return alloc_bytes(s->then_s, shared) + alloc_bytes(s->else_s, shared);
    case SCH_S_SEQ: {
        int64_t sum = 0;
        for (int i = 0; i < s->n; i++)
            sum += alloc_bytes(s->items[i], shared);
        return sum;
    }
    default: return 0;
    }
}

/* ---- launches: how a function runs ---------------------------------------- */

/* A top-level nest of a function: the statement and the kernel-wide
 * temporaries and lets around it (outermost first), which its own kernel
 * repeats so that every kernel finds each temporary at the same scratch
 * offset (the stack discipline gives the same offsets on the same path). */
typedef struct nest {
    const sch_stmt *s;
    int nwrap;
    const sch_stmt *wrap[16];
} nest;

typedef struct nests {
    int n;
    bool over;                  /* more nests (or deeper wrappers) than a launch holds */
    nest item[TG_CL_MAX_STEPS];
} nests;

/* Whether sequence s has a barrier among its items: a work-group's steps
 * (dense_cl's staged tiles where the group loops had one iteration and
 * the simplifier dropped them), which one launch must keep together. */
static bool barrier_in(const sch_stmt *s)
{
    for (int i = 0; i < s->n; i++)
        if (s->items[i]->kind == SCH_S_BARRIER)
            return true;
    return false;
}

/* A store into a SHARED array that another item of sequence seq (not
 * item self) reads. */
typedef struct shared_use {
    const sch_stmt *seq;
    int self;
} shared_use;

static bool shared_read_elsewhere(const void *ctx, const sch_stmt *n)
{
    const shared_use *u = ctx;
    if (n->kind != SCH_S_STORE || n->buf->scope != SCH_SCOPE_SHARED)
        return false;
    for (int k = 0; k < u->seq->n; k++)
        if (k != u->self && sch_stmt_reads(u->seq->items[k], n->buf))
            return true;
    return false;
}

/* Whether an item of sequence s stores into a SHARED (__local) array that
 * another item reads: a staged copy and its use (conv2d_cl's staged blocks
 * where the group had one work-item and needed no barrier), which one
 * launch must keep together, __local memory living for one launch only. */
static bool shared_across(const sch_stmt *s)
{
    for (int i = 0; i < s->n; i++) {
        shared_use u = {s, i};
        if (sch_stmt_any(s->items[i], shared_read_elsewhere, &u))
            return true;
    }
    return false;
}

/* Collects the nests under s (wrapped in w[0..nw)): the leaves of the tree
 * of sequences, lets and kernel-wide temporaries. A per-iteration (private)
 * array around several nests cannot span launches, so it stays one nest,
 * and so does a sequence with barriers or stores into __local arrays. */
static void collect(const sch_stmt *s, const sch_stmt **w, int nw, nests *out)
{
    if (!s || out->over)
        return;
    bool wrapper = s->kind == SCH_S_LET || (s->kind == SCH_S_ALLOC && s->buf->scope != SCH_SCOPE_LOCAL);
    if (wrapper && nw < 16) {
        w[nw] = s;
        collect(s->body, w, nw + 1, out);
        return;
    }
    if (s->kind == SCH_S_SEQ && !barrier_in(s) && !shared_across(s)) {
        for (int i = 0; i < s->n; i++)
            collect(s->items[i], w, nw, out);
        return;
    }
    if (out->n == TG_CL_MAX_STEPS || wrapper) {
        out->over = true;
        return;
    }
    nest *n = &out->item[out->n++];
    n->s = s;
    n->nwrap = nw;
    memcpy(n->wrap, w, (size_t)nw * sizeof *w);
}

static bool is_thread_loop(const void *ctx, const sch_stmt *n)
{
    (void)ctx;
    return n->kind == SCH_S_FOR && n->loop == SCH_LOOP_THREAD;
}

static bool has_thread(const sch_stmt *s)
{
    return sch_stmt_any(s, is_thread_loop, NULL);
}

/* The body of a work-group nest below its leading work-group loops (a
 * work-group reduction, dense_cl's staged k blocks; lower.c): loops over
 * the group's work-items (axes 3..5, one extent per axis, which *items
 * gets; a loop of one axis may hold one of another: a 2-D group) hold
 * every store, inside loops of every axis the group has (need: their
 * mask, 0 while *items is being found), so that no two work-items store
 * the same element; what lies outside them (serial loops, lets, private
 * arrays, barriers) every work-item runs alike, so a barrier there is
 * reached by all of them (none under a condition, none inside an item
 * loop). False for anything else. */
static bool group_body(const sch_stmt *s, unsigned in_items, bool in_if, int64_t *items, unsigned need)
{
    if (!s)
        return true;
    switch (s->kind) {
    case SCH_S_STORE: return need ? in_items == need : in_items != 0;
    case SCH_S_BARRIER: return !in_items && !in_if;
    case SCH_S_FOR:
        if (s->loop == SCH_LOOP_PARALLEL)
            return false;
        if (s->loop == SCH_LOOP_THREAD) {
            if (s->thread_axis < 3 || (in_items & (1u << (s->thread_axis - 3))))
                return false;
            int64_t *n = &items[s->thread_axis - 3];
            if (*n && *n != s->extent)
                return false;
            *n = s->extent;
            return group_body(s->body, in_items | 1u << (s->thread_axis - 3), in_if, items, need);
        }
        return group_body(s->body, in_items, in_if, items, need);
    case SCH_S_LET: return group_body(s->body, in_items, in_if, items, need);
    case SCH_S_ALLOC: return s->buf->scope == SCH_SCOPE_LOCAL && group_body(s->body, in_items, in_if, items, need);
    case SCH_S_IF:
        return group_body(s->then_s, in_items, true, items, need) && group_body(s->else_s, in_items, true, items, need);
    case SCH_S_SEQ:
        for (int i = 0; i < s->n; i++)
            if (!group_body(s->items[i], in_items, in_if, items, need))
                return false;
        return true;
    }
    return false;
}

/* group_body's two walks: the group's extents, then every store inside
 * loops of all its axes. */
static bool group_nest(const sch_stmt *s, int64_t *items)
{
    if (!group_body(s, 0, false, items, 0))
        return false;
    unsigned need = 0;
    for (int a = 0; a < 3; a++)
        need |= items[a] ? 1u << a : 0;
    return group_body(s, 0, false, items, need);
}

/* The power of two work-items of a work-group for a parallel loop of n
 * iterations on device d: a quarter of the iterations per compute unit at
 * most (so that every unit gets several groups to balance), at most 256
 * and the device's largest group. */
static int64_t group_items(int64_t n, const tg_cl_device *d)
{
    int64_t cap = d->max_wg < 256 ? d->max_wg : 256;
    int64_t share = n / (4 * (d->compute_units > 0 ? d->compute_units : 1));
    int64_t g = 1;
    while (g * 2 <= cap && g * 2 <= share)
        g *= 2;
    return g;
}

/* Nest s as a grid over the work-items of device d, in *st: its outermost
 * parallel loop (under lets only) spread over the global index, when every
 * store lies inside it; or its leading bound loops (under lets only; none
 * below them) as work-group and work-item indices, within the device's
 * limits. False when it is neither: the nest then runs as one work-item. */
static bool grid_of(const sch_stmt *s, const tg_cl_device *d, tg_cl_step *st)
{
    int64_t groups[3] = {1, 1, 1}, items[3] = {1, 1, 1};
    int dims = 0;
    bool bound = has_thread(s);
    while (s && (s->kind == SCH_S_LET || (s->kind == SCH_S_FOR && s->loop == SCH_LOOP_THREAD))) {
        if (s->kind == SCH_S_FOR) {
            int a = s->thread_axis % 3;
            *(s->thread_axis < 3 ? &groups[a] : &items[a]) = s->extent;
            dims = a + 1 > dims ? a + 1 : dims;
        }
        s = s->body;
    }
    if (!s)
        return false;
    if (!bound) {
        if (s->kind != SCH_S_FOR || s->loop != SCH_LOOP_PARALLEL || !stores_parallel(s, false))
            return false;
        st->dims = 1;
        st->local[0] = group_items(s->extent, d);
        st->global[0] = (s->extent + st->local[0] - 1) / st->local[0] * st->local[0];
        return true;
    }
    if (has_thread(s)) {
        /* a work-group nest: the group's work-items are its item loops' */
        int64_t below[3] = {0, 0, 0};
        if (items[0] * items[1] * items[2] != 1 || !group_nest(s, below))
            return false;
        for (int a = 0; a < 3; a++)
            if (below[a]) {
                items[a] = below[a];
                dims = a + 1 > dims ? a + 1 : dims;
            }
    } else if (!dims || !stores_parallel(s, true)) {
        /* (bound: every statement below the bound loops is one work-item's own) */
        return false;
    }
    if (items[0] * items[1] * items[2] > d->max_wg)
        return false;
    for (int a = 0; a < dims; a++) {
        if (d->wg_dims > 0 && (a >= d->wg_dims || items[a] > d->max_items[a]))
            return false;
        st->global[a] = groups[a] * items[a];
        st->local[a] = items[a];
    }
    st->dims = dims;
    return true;
}

static bool stores_to(const sch_stmt *s, const sch_buffer *b)
{
    if (!s)
        return false;
    switch (s->kind) {
    case SCH_S_STORE: return s->buf == b;
    case SCH_S_IF: return stores_to(s->then_s, b) || stores_to(s->else_s, b);
    case SCH_S_SEQ:
        for (int i = 0; i < s->n; i++)
            if (stores_to(s->items[i], b))
                return true;
        return false;
    case SCH_S_BARRIER: return false;
    default: return stores_to(s->body, b);
    }
}

/* Whether s reads or writes buffer b. */
static bool uses_buf(const sch_stmt *s, const sch_buffer *b)
{
    return sch_stmt_reads(s, b) || stores_to(s, b);
}

/* Nest n with its wrappers, rebuilt as a function body (arena a); of the
 * SHARED arrays (lowering allocates a function's around its whole body)
 * only those the nest uses, so that an entry declares the __local memory
 * its launch needs. */
static const sch_stmt *wrapped(su_arena *a, const nest *n)
{
    const sch_stmt *s = n->s;
    for (int i = n->nwrap; i-- > 0;) {
        const sch_stmt *w = n->wrap[i];
        if (w->kind == SCH_S_ALLOC && w->buf->scope == SCH_SCOPE_SHARED && !uses_buf(n->s, w->buf))
            continue;
        s = w->kind == SCH_S_LET ? sch_let(a, w->var, w->value, s) : sch_alloc(a, w->buf, s);
    }
    return s;
}

static void size_text(su_buf *b, int dims, const int64_t *v)
{
    for (int i = 0; i < dims; i++)
        su_buf_printf(b, "%s%lld", i ? "x" : "", (long long)v[i]);
}

/* Appends f's body as entry st->name in language l, with st's launch as a
 * comment above it. */
static void write_entry(su_buf *out, const sch_lang *l, const sch_func *f, const tg_cl_step *st)
{
    su_buf k = {0};
    sch_emit_func(&k, l, f, st->name);
    const char *text = su_buf_str(&k);
    /* the form starts with an empty line; the comment goes under it */
    if (*text == '\n')
        su_buf_putc(out, *text++);
    su_buf_printf(out, "/* launch %s: global ", st->name);
    size_text(out, st->dims, st->global);
    su_buf_puts(out, " local ");
    if (st->local[0])
        size_text(out, st->dims, st->local);
    else
        su_buf_puts(out, "(the driver's)");
    if (st->local_mem)
        su_buf_printf(out, ", __local %lld bytes", (long long)st->local_mem);
    su_buf_printf(out, " */\n%s", text);
    su_buf_free(&k);
}

/* The first slices' form, for a function whose nests do not fit the
 * launches: one entry, one work-group (or one work-item when the nests'
 * stores are not all inside parallel loops). */
static void one_entry(su_buf *out, const sch_func *f, const char *name, const tg_cl_device *d, tg_cl_launch *l)
{
    bool group = tg_cl_groupable(f);
    tg_cl_step *s = &l->step[0];
    l->n = 1;
    snprintf(s->name, sizeof s->name, "%s", name);
    s->dims = 1;
    /* one work-group of the device's size (capped at 256, which every
     * device takes for a kernel this simple), or one work-item */
    int64_t wg = d && d->max_wg > 0 ? (d->max_wg < 256 ? d->max_wg : 256) : 1;
    s->global[0] = s->local[0] = group ? wg : 1;
    s->local_mem = alloc_bytes(f->body, true);
    write_entry(out, group ? &tg_lang_cl_group : &tg_lang_cl_single, f, s);
}

void tg_cl_func(su_buf *out, const sch_func *f, const char *name, const tg_cl_device *d, tg_cl_launch *l)
{
    memset(l, 0, sizeof *l);
    l->scratch = alloc_bytes(f->body, false);
    nests ns = {0};
    const sch_stmt *w[16];
    collect(f->body, w, 0, &ns);
    if (!d || ns.over || ns.n == 0) {
        one_entry(out, f, name, d, l);
        return;
    }
    /* one launch per nest, in order: the in-order queue puts each launch's
     * writes before the next one's reads, where one work-group needed a
     * barrier */
    su_arena a;
    su_arena_init(&a);
    l->n = ns.n;
    for (int i = 0; i < ns.n; i++) {
        tg_cl_step *st = &l->step[i];
        if (i)
            snprintf(st->name, sizeof st->name, "%s_%d", name, i);
        else
            snprintf(st->name, sizeof st->name, "%s", name);
        bool grid = grid_of(ns.item[i].s, d, st);
        if (!grid) {
            st->dims = 1;
            st->global[0] = st->local[0] = 1;
        }
        sch_func g = *f;
        g.body = wrapped(&a, &ns.item[i]);
        st->local_mem = alloc_bytes(g.body, true);
        write_entry(out, grid ? &tg_lang_cl_grid : &tg_lang_cl_single, &g, st);
    }
    su_arena_free(&a);
}
