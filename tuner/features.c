/* features.c — what the cost model sees of a config: a fixed-length vector
 * computed from the config's lowered LoopIR, without compiling it (AutoTVM's
 * itervar features, in spirit). The config is scheduled with its template
 * and lowered as the builder would; then one walk over the kernel finds the
 * hottest store (executions x loads), and the features describe:
 *
 *   loop levels   the loops around the hottest store, outermost first (the
 *                 innermost FT_DEPTH when deeper), zero-padded: extent,
 *                 kind, iterations outside and inside, whether the store's
 *                 index ignores the loop (a reduction), and per buffer (the
 *                 stored one, then up to three loaded ones in order of first
 *                 appearance) the bytes one execution of the loop touches,
 *                 their reuse and the buffer's stride along the loop
 *   buffers       per buffer slot: size and where it lives
 *   knobs         the config's knob values (split factors, choices), log2
 *   curve         working-set bytes against iterations inside, sampled at
 *                 fixed points: the same length for any depth
 *   kernel        totals over the whole kernel: stores and arithmetic
 *                 executed, nests, temporaries, parallel and vector shape
 *
 * Numbers are log2(1 + x). Every template and task gives the same length, so
 * that records of other shapes train the same model (transfer). The groups
 * are documented in docs/cost-model.md. */
#include <math.h>
#include <string.h>

#include "tuner/tuner.h"

enum {
    FT_DEPTH = 12,      /* loop levels described */
    FT_BUFS = 4,        /* buffer slots: the stored buffer, then three loaded ones */
    FT_KNOBS = 16,      /* knob values */
    FT_CURVE = 16,      /* samples of the working-set curve */
    MAX_STACK = 64,     /* loops and lets remembered around a store */
    MAX_BUFS = 8,       /* buffers of the hottest store the curve sums over */
};

/* Per-level features, then per-level per-buffer ones. */
#define LEVEL_FEATS(X) X(present) X(extent) X(serial) X(parallel) X(vectorized) X(unrolled) \
    X(outer_iters) X(inner_iters) X(reduction)
#define LEVEL_BUF_FEATS(X) X(bytes) X(reuse) X(stride)
#define BUF_FEATS(X) X(present) X(size) X(input) X(output) X(global) X(local)
/* Whole-kernel features. */
#define KERNEL_FEATS(X)                                                          \
    X(stores)           /* store executions of the kernel */                     \
    X(arith)            /* arithmetic operations executed */                     \
    X(hot_stores)       /* executions of the hottest store */                    \
    X(hot_share)        /* its share of all store executions (0..1) */           \
    X(nests)            /* top-level loop nests */                               \
    X(global_bytes)     /* temporaries of the whole kernel */                    \
    X(local_bytes)      /* temporaries local to a loop iteration */              \
    X(parallel_iters)   /* product of the hot nest's parallel extents */         \
    X(parallel_balance) /* rounds of `cores` threads over the work: 1 = even */  \
    X(vector_extent)    /* the innermost vectorized loop of the hot nest */      \
    X(vector_tail)      /* its extent modulo the vector lanes, in lanes */       \
    X(unrolled_iters)   /* product of the hot nest's unrolled extents */         \
    X(depth)            /* loops around the hottest store (not log-scaled) */    \
    X(prologues)        /* hoisted weight packs */                               \
    X(loads)            /* distinct buffers the hottest store reads */           \
    X(store_arith)      /* arithmetic per execution of the hottest store */

#define COUNT(name) +1
enum {
    N_LEVEL = 0 LEVEL_FEATS(COUNT) + FT_BUFS * (0 LEVEL_BUF_FEATS(COUNT)),
    N_BUF = 0 BUF_FEATS(COUNT),
    N_KERNEL = 0 KERNEL_FEATS(COUNT),
    OFF_LEVELS = 0,
    OFF_BUFS = OFF_LEVELS + FT_DEPTH * N_LEVEL,
    OFF_KNOBS = OFF_BUFS + FT_BUFS * N_BUF,
    OFF_CURVE = OFF_KNOBS + FT_KNOBS,
    OFF_KERNEL = OFF_CURVE + FT_CURVE,
    N_FEATURES = OFF_KERNEL + N_KERNEL,
};
#undef COUNT

#define L_IDX(name) L_##name,
#define LB_IDX(name) LB_##name,
#define B_IDX(name) B_##name,
#define K_IDX(name) K_##name,
enum { LEVEL_FEATS(L_IDX) N_LEVEL_OWN };
enum { LEVEL_BUF_FEATS(LB_IDX) N_LEVEL_BUF };
enum { BUF_FEATS(B_IDX) N_BUF_OWN };
enum { KERNEL_FEATS(K_IDX) N_KERNEL_OWN };

int tun_feature_count(void)
{
    return N_FEATURES;
}

/* ---- names ---- */

static char names[N_FEATURES][28];

static void name_all(void)
{
#define STR(name) #name,
    static const char *const level[] = {LEVEL_FEATS(STR)}, *const lbuf[] = {LEVEL_BUF_FEATS(STR)},
                             *const buf[] = {BUF_FEATS(STR)}, *const kernel[] = {KERNEL_FEATS(STR)};
#undef STR
    for (int l = 0; l < FT_DEPTH; l++) {
        for (int k = 0; k < N_LEVEL_OWN; k++)
            snprintf(names[OFF_LEVELS + l * N_LEVEL + k], sizeof names[0], "l%d.%s", l, level[k]);
        for (int b = 0; b < FT_BUFS; b++)
            for (int k = 0; k < N_LEVEL_BUF; k++)
                snprintf(names[OFF_LEVELS + l * N_LEVEL + N_LEVEL_OWN + b * N_LEVEL_BUF + k], sizeof names[0],
                         "l%d.b%d.%s", l, b, lbuf[k]);
    }
    for (int b = 0; b < FT_BUFS; b++)
        for (int k = 0; k < N_BUF_OWN; k++)
            snprintf(names[OFF_BUFS + b * N_BUF + k], sizeof names[0], "b%d.%s", b, buf[k]);
    for (int k = 0; k < FT_KNOBS; k++)
        snprintf(names[OFF_KNOBS + k], sizeof names[0], "knob%d", k);
    for (int k = 0; k < FT_CURVE; k++)
        snprintf(names[OFF_CURVE + k], sizeof names[0], "curve.iters2^%d", 2 * k);
    for (int k = 0; k < N_KERNEL_OWN; k++)
        snprintf(names[OFF_KERNEL + k], sizeof names[0], "kernel.%s", kernel[k]);
}

const char *tun_feature_name(int i)
{
    if (i < 0 || i >= N_FEATURES)
        return NULL;
    if (!names[0][0])
        name_all();
    return names[i];
}

/* ---- the walk: the hottest store and kernel totals ---- */

/* The loops and lets around a store. */
typedef struct nest {
    const sch_stmt *loops[MAX_STACK];
    int depth;
    const sch_stmt *lets[MAX_STACK];
    int nlets;
} nest;

typedef struct walk {
    nest cur;               /* around the statement being walked */
    nest hot;               /* around the hottest store */
    const sch_stmt *store;  /* the hottest store */
    double hot_weight;      /* its executions x (1 + loads) */
    double hot_execs;
    double stores, arith;   /* executions over the kernel */
    double global_bytes, local_bytes;
    int nests;
} walk;

static double lg(double x)
{
    return x > 0 ? log2(1 + x) : 0;
}

/* Arithmetic nodes of a value (indices of loads not counted). */
static int arith_nodes(const sch_expr *e)
{
    if (!e || e->kind == SCH_INT || e->kind == SCH_FLOAT || e->kind == SCH_VAR || e->kind == SCH_LOAD)
        return 0;
    int n = 1 + arith_nodes(e->a) + arith_nodes(e->b) + arith_nodes(e->c);
    for (int i = 0; e->kind == SCH_CALL && i < e->n; i++)
        n += arith_nodes(e->args[i]);
    return n;
}

/* The buffers an expression loads, each with the index of its first load. */
typedef struct loads {
    sch_buffer *buf[MAX_BUFS];
    const sch_expr *index[MAX_BUFS];
    int n;
} loads;

static void collect_loads(const sch_expr *e, loads *l)
{
    if (!e)
        return;
    if (e->kind == SCH_LOAD) {
        int i = 0;
        while (i < l->n && l->buf[i] != e->buf)
            i++;
        if (i == l->n && l->n < MAX_BUFS) {
            l->buf[l->n] = e->buf;
            l->index[l->n++] = e->a;
        }
    }
    collect_loads(e->a, l);
    collect_loads(e->b, l);
    collect_loads(e->c, l);
    for (int i = 0; (e->kind == SCH_CALL || e->kind == SCH_READ) && i < e->n; i++)
        collect_loads(e->args[i], l);
}

static void walk_stmt(walk *w, const sch_stmt *s, double execs)
{
    if (!s)
        return;
    switch (s->kind) {
    case SCH_S_FOR:
        w->nests += w->cur.depth == 0;
        if (w->cur.depth < MAX_STACK)
            w->cur.loops[w->cur.depth] = s;
        w->cur.depth++;
        walk_stmt(w, s->body, execs * (double)s->extent);
        w->cur.depth--;
        return;
    case SCH_S_STORE: {
        loads l = {0};
        collect_loads(s->value, &l);
        w->stores += execs;
        w->arith += execs * arith_nodes(s->value);
        double weight = execs * (1 + l.n);
        if (weight > w->hot_weight) {
            w->hot_weight = weight;
            w->hot_execs = execs;
            w->store = s;
            w->hot = w->cur;
        }
        return;
    }
    case SCH_S_IF:
        walk_stmt(w, s->then_s, execs);
        walk_stmt(w, s->else_s, execs);
        return;
    case SCH_S_LET:
        if (w->cur.nlets < MAX_STACK)
            w->cur.lets[w->cur.nlets] = s;
        w->cur.nlets++;
        walk_stmt(w, s->body, execs);
        w->cur.nlets--;
        return;
    case SCH_S_ALLOC: {
        double bytes = (double)s->buf->size * ir_dtype_bytes(s->buf->dtype);
        if (s->buf->scope == SCH_SCOPE_LOCAL || s->buf->scope == SCH_SCOPE_SHARED)
            w->local_bytes += bytes;
        else
            w->global_bytes += bytes;
        walk_stmt(w, s->body, execs);
        return;
    }
    case SCH_S_SEQ:
        for (int i = 0; i < s->n; i++)
            walk_stmt(w, s->items[i], execs);
        return;
    case SCH_S_BARRIER: return;
    }
}

/* ---- the hottest nest's features ---- */

/* An integer index with the nest's loop variables set (others 0); loads and
 * floats count as 0. Floor division and modulo, as LoopIR means them. */
static int64_t eval(const sch_expr *e, const sch_var *const *vars, const int64_t *vals, int n)
{
    if (!e || ir_dtype_is_float(e->dtype))
        return 0;
    int64_t a, b;
    switch (e->kind) {
    case SCH_INT: return e->i;
    case SCH_VAR:
        for (int i = 0; i < n; i++)
            if (vars[i] == e->var)
                return vals[i];
        return 0;
    case SCH_SELECT: return eval(e->a, vars, vals, n) ? eval(e->b, vars, vals, n) : eval(e->c, vars, vals, n);
    case SCH_CAST: return eval(e->a, vars, vals, n);
    case SCH_NOT: return !eval(e->a, vars, vals, n);
    default: break;
    }
    if (!sch_is_binary(e->kind))
        return 0;
    a = eval(e->a, vars, vals, n);
    b = eval(e->b, vars, vals, n);
    switch (e->kind) {
    case SCH_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
    case SCH_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
    case SCH_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    case SCH_DIV:
        if (b == -1)
            return (int64_t)(0 - (uint64_t)a);
        return b ? (a / b - ((a % b != 0) && ((a < 0) != (b < 0)))) : 0;
    case SCH_MOD: return b && b != -1 ? ((a % b + b) % b) : 0;
    case SCH_MIN: return a < b ? a : b;
    case SCH_MAX: return a > b ? a : b;
    case SCH_EQ: return a == b;
    case SCH_NE: return a != b;
    case SCH_LT: return a < b;
    case SCH_LE: return a <= b;
    case SCH_GT: return a > b;
    case SCH_GE: return a >= b;
    case SCH_AND: return a && b;
    case SCH_OR: return a || b;
    default: return 0;
    }
}

/* What the hottest nest's features are computed from. */
typedef struct hotnest {
    int depth;                          /* loops (at most MAX_STACK) */
    const sch_stmt *loop[MAX_STACK];
    const sch_var *var[MAX_STACK];
    double inner[MAX_STACK + 1];        /* iterations of levels i.. (inner[depth] = 1) */
    int nbufs;                          /* the stored buffer, then the loaded ones */
    sch_buffer *buf[MAX_BUFS];
    const sch_expr *index[MAX_BUFS];    /* lets substituted */
} hotnest;

/* Elements of buffer b touched by one execution of level i (the loops
 * inside it iterating, the outer ones fixed): the smaller of the product of
 * the extents the index depends on and the index's range. */
static double touched(const hotnest *h, int b, int i, sch_bounds_ctx *bc)
{
    double prod = 1;
    for (int j = i; j < h->depth; j++)
        if (sch_expr_uses(h->index[b], h->var[j]))
            prod *= (double)h->loop[j]->extent;
    bc->r.len = 0;
    for (int j = 0; j < h->depth; j++)
        sch_bounds_push(bc, h->var[j], 0, j < i ? 0 : h->loop[j]->extent - 1);
    int64_t lo, hi;
    if (sch_bounds(bc, h->index[b], &lo, &hi) && (double)hi - (double)lo + 1 < prod)
        prod = (double)hi - (double)lo + 1;
    double size = (double)(h->buf[b]->size > 0 ? h->buf[b]->size : 1);
    return prod < size ? (prod > 1 ? prod : 1) : size;
}

static int64_t stride(const hotnest *h, int b, int i)
{
    int64_t zero[MAX_STACK] = {0}, one[MAX_STACK] = {0};
    one[i] = 1;
    int64_t d = eval(h->index[b], h->var, one, h->depth) - eval(h->index[b], h->var, zero, h->depth);
    return d < 0 ? -d : d;
}

static void level_features(const hotnest *h, float *out)
{
    int first = h->depth > FT_DEPTH ? h->depth - FT_DEPTH : 0;
    sch_bounds_ctx bc = {0};
    for (int i = first; i < h->depth; i++) {
        float *f = out + OFF_LEVELS + (i - first) * N_LEVEL;
        const sch_stmt *L = h->loop[i];
        sch_loop_kind k = L->loop == SCH_LOOP_THREAD ? SCH_LOOP_PARALLEL : L->loop;
        f[L_present] = 1;
        f[L_extent] = (float)lg((double)L->extent);
        f[L_serial] = k == SCH_LOOP_SERIAL || k == SCH_LOOP_ROLLED;
        f[L_parallel] = k == SCH_LOOP_PARALLEL;
        f[L_vectorized] = k == SCH_LOOP_VECTORIZED;
        f[L_unrolled] = k == SCH_LOOP_UNROLLED;
        f[L_outer_iters] = (float)lg(h->inner[0] / h->inner[i + 1]);
        f[L_inner_iters] = (float)lg(h->inner[i]);
        f[L_reduction] = !sch_expr_uses(h->index[0], h->var[i]);
        for (int b = 0; b < h->nbufs && b < FT_BUFS; b++) {
            float *g = f + N_LEVEL_OWN + b * N_LEVEL_BUF;
            double elems = touched(h, b, i, &bc);
            g[LB_bytes] = (float)lg(elems * ir_dtype_bytes(h->buf[b]->dtype));
            g[LB_reuse] = (float)lg(h->inner[i] / elems);
            g[LB_stride] = (float)lg((double)stride(h, b, i));
        }
    }
    sch_bounds_free(&bc);
}

/* Working-set bytes (all buffers of the store) against iterations inside,
 * both log2, sampled at 0, 2, 4, ... by linear interpolation; past the
 * outermost level the curve stays flat. */
static void curve_features(const hotnest *h, float *out)
{
    double x[MAX_STACK + 1], y[MAX_STACK + 1];
    int n = 0;
    sch_bounds_ctx bc = {0};
    for (int i = h->depth; i >= 0; i--) {
        double bytes = 0;
        for (int b = 0; b < h->nbufs; b++)
            bytes += (i == h->depth ? 1 : touched(h, b, i, &bc)) * ir_dtype_bytes(h->buf[b]->dtype);
        x[n] = log2(h->inner[i]);
        y[n++] = lg(bytes);
    }
    sch_bounds_free(&bc);
    for (int k = 0; k < FT_CURVE; k++) {
        double at = 2.0 * k, v = y[n - 1];
        for (int j = 1; j < n; j++)
            if (at <= x[j]) {
                double span = x[j] - x[j - 1];
                v = span > 0 ? y[j - 1] + (y[j] - y[j - 1]) * (at - x[j - 1]) / span : y[j];
                break;
            }
        out[OFF_CURVE + k] = (float)v;
    }
}

static void buffer_features(const hotnest *h, float *out)
{
    for (int b = 0; b < h->nbufs && b < FT_BUFS; b++) {
        float *f = out + OFF_BUFS + b * N_BUF;
        const sch_buffer *B = h->buf[b];
        f[B_present] = 1;
        f[B_size] = (float)lg((double)B->size * ir_dtype_bytes(B->dtype));
        f[B_input] = B->scope == SCH_SCOPE_INPUT;
        f[B_output] = B->scope == SCH_SCOPE_OUTPUT;
        f[B_global] = B->scope == SCH_SCOPE_GLOBAL;
        f[B_local] = B->scope == SCH_SCOPE_LOCAL;
    }
}

static void kernel_features(const walk *w, const hotnest *h, int nprologues, const sch_hw *hw, float *out)
{
    float *f = out + OFF_KERNEL;
    double par = 1, unrolled = 1;
    int64_t vec = 0;
    bool any_par = false;
    for (int i = 0; i < h->depth; i++) {
        const sch_stmt *L = h->loop[i];
        if (L->loop == SCH_LOOP_PARALLEL || L->loop == SCH_LOOP_THREAD) {
            par *= (double)L->extent;
            any_par = true;
        }
        if (L->loop == SCH_LOOP_UNROLLED)
            unrolled *= (double)L->extent;
        if (L->loop == SCH_LOOP_VECTORIZED)
            vec = L->extent;
    }
    int cores = hw->cores > 0 ? hw->cores : 1, lanes = hw->lanes > 0 ? hw->lanes : 1;
    f[K_stores] = (float)lg(w->stores);
    f[K_arith] = (float)lg(w->arith);
    f[K_hot_stores] = (float)lg(w->hot_execs);
    f[K_hot_share] = w->stores > 0 ? (float)(w->hot_execs / w->stores) : 0;
    f[K_nests] = (float)w->nests;
    f[K_global_bytes] = (float)lg(w->global_bytes);
    f[K_local_bytes] = (float)lg(w->local_bytes);
    f[K_parallel_iters] = any_par ? (float)lg(par) : 0;
    f[K_parallel_balance] = any_par ? (float)(ceil(par / cores) * cores / par) : 0;
    f[K_vector_extent] = (float)lg((double)vec);
    f[K_vector_tail] = (float)(vec % lanes) / (float)lanes;
    f[K_unrolled_iters] = (float)lg(unrolled);
    f[K_depth] = (float)h->depth;
    f[K_prologues] = (float)nprologues;
    f[K_loads] = h->nbufs > 1 ? (float)(h->nbufs - 1) : 0;
    f[K_store_arith] = w->store ? (float)arith_nodes(w->store->value) : 0;
}

/* The hottest nest with its lets substituted into the indices. */
static void hot_nest(const walk *w, su_arena *a, hotnest *h)
{
    memset(h, 0, sizeof *h);
    if (!w->store)
        return;
    h->depth = w->hot.depth < MAX_STACK ? w->hot.depth : MAX_STACK;
    h->inner[h->depth] = 1;
    for (int i = h->depth; i-- > 0;) {
        h->loop[i] = w->hot.loops[i];
        h->var[i] = h->loop[i]->var;
        h->inner[i] = h->inner[i + 1] * (double)h->loop[i]->extent;
    }
    loads l = {0};
    collect_loads(w->store->value, &l);
    h->buf[0] = w->store->buf;
    h->index[0] = w->store->index;
    h->nbufs = 1;
    for (int i = 0; i < l.n && h->nbufs < MAX_BUFS; i++)
        if (l.buf[i] != w->store->buf) {
            h->buf[h->nbufs] = l.buf[i];
            h->index[h->nbufs++] = l.index[i];
        }
    /* innermost let first: its value may use the outer ones */
    int nlets = w->hot.nlets < MAX_STACK ? w->hot.nlets : MAX_STACK;
    for (int k = nlets; k-- > 0;) {
        const sch_stmt *L = w->hot.lets[k];
        for (int b = 0; b < h->nbufs; b++)
            h->index[b] = sch_substitute(a, h->index[b], 1, &L->var, &L->value);
    }
}

static void knob_features(const tun_space *s, const sch_config *c, float *out)
{
    int k = 0;
    for (size_t i = 0; i < s->sp.knobs.len && k < FT_KNOBS; i++) {
        const sch_knob *kb = &s->sp.knobs.data[i];
        const int64_t *v = kb->cands + (size_t)c->choice[i] * (size_t)kb->nparts;
        for (int p = 0; p < kb->nparts && k < FT_KNOBS; p++)
            out[OFF_KNOBS + k++] = (float)copysign(lg(fabs((double)v[p])), (double)v[p]);
    }
}

bool tun_config_features(const tun_space *s, int64_t index, float *out, su_buf *err)
{
    memset(out, 0, N_FEATURES * sizeof *out);
    if (index < 0 || index >= s->size) {
        su_buf_printf(err, "config %lld is outside the space (%lld configs)", (long long)index, (long long)s->size);
        return false;
    }
    const tun_task *task = s->task;
    sch_config c;
    tun_config_decode(s, index, &c);
    const sch_hw *hw = s->hw.lanes > 0 ? &s->hw : &sch_hw_default;
    sch_build_opts bo = {.template_name = task->template_name, .hw = hw, .cfg = &c, .param_const = task->param_const};
    sch_kernel k;
    bool ok = sch_build(task->func, &bo, &k);
    if (!ok && k.failed == SCH_BUILD_CREATE) {
        su_buf_printf(err, "task %s cannot be scheduled", task->hash);
    } else if (!ok) {
        su_buf_printf(err, "config %lld: %s: %s", (long long)index, sch_err_name(k.err), k.why);
    } else {
        walk w = {0};
        walk_stmt(&w, k.l->kernel->body, 1);
        hotnest h;
        hot_nest(&w, &k.s->arena, &h);
        level_features(&h, out);
        buffer_features(&h, out);
        knob_features(s, &c, out);
        curve_features(&h, out);
        kernel_features(&w, &h, k.l->nprologues, hw, out);
    }
    sch_config_free(&c);
    sch_kernel_free(&k);
    return ok;
}
