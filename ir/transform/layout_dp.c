/* layout_dp.c — the graph-level choice of block factors for alter-layout
 * (`--layout-block N --layout-auto`). TVM's graph tuner chooses each conv's
 * layout with a dynamic program that users find slow on large graphs; this
 * one keeps a state per conv (its output block, at most TR_DP_BLOCKS of
 * them) and visits each edge once, so it costs O(edges × blocks²).
 *
 * The graph it sees: the convs alter-layout rewrites, in topological order
 * (the walk's post order), and two kinds of edges between them. An input
 * edge p → c: the block p writes reaches c's input through ops that run
 * blocked (elementwise, broadcast, pools), and c pays a transform of its
 * input when it reads another block. A side edge p → c: a broadcast op
 * (the residual add) reads both; it runs in its first operand's block and
 * transforms the other, a tensor of the add's size. Kernel time per (input
 * block, output block) comes from o->layout_cost when it knows it (api/
 * fills it from the database's best records) and from an analytic model
 * otherwise; transform time is bytes read and written over a bandwidth.
 *
 * A node shared by two consumers is counted in both (the DP solves the tree
 * that the DAG unfolds into, as TVM's does); the choice is then read back
 * from the last conv to the first, and a conv already fixed by a later
 * consumer keeps its block (its other consumers pay their transform). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/transform/transform.h"

#define TR_DP_BLOCKS 8
/* The analytic model's machine: about one AVX2/AVX-512 core's FP32 FMA peak
 * and the bandwidth a layout_transform streams at; only their ratio matters. */
#define TR_DP_PEAK_FLOPS 50e9
#define TR_DP_BANDWIDTH 10e9

typedef struct dp_edge {
    int from, to;       /* conv indices, from < to */
    bool side;          /* a side edge: the transform is on to's output */
    double bytes;       /* what a transform moves (read + write) */
} dp_edge;

typedef struct dp_conv {
    const ir_expr *e;
    int64_t cin, cout;
    int nin, nout;                  /* candidate input and output blocks */
    int64_t in[TR_DP_BLOCKS], out[TR_DP_BLOCKS];
    double ker[TR_DP_BLOCKS][TR_DP_BLOCKS];
    double cost[TR_DP_BLOCKS];      /* best cost of the convs before it, by output block */
    int fixed;                      /* the chosen output block's index, -1 */
    int ib;                         /* the chosen input block's index */
} dp_conv;

typedef struct dp_ctx {
    const tr_options *o;
    int *src;                       /* node id → the conv whose block it carries, -1 */
    SU_VEC(dp_conv) convs;
    SU_VEC(dp_edge) edges;          /* sorted by to after the walk */
    size_t *first;                  /* conv k's edges: first[k] .. first[k + 1] */
} dp_ctx;

/* The candidate blocks of c channels: the divisors of c that are multiples of
 * lanes, up to 4 × lanes (the register tile still fits for such blocks);
 * else the largest divisor up to lanes (the rule's block, e.g. 3 for RGB). */
static int candidates(int64_t c, int64_t lanes, int64_t *out)
{
    int n = 0;
    for (int64_t b = lanes; b <= 4 * lanes && b <= c && n < TR_DP_BLOCKS; b += lanes)
        if (c % b == 0)
            out[n++] = b;
    if (!n) {
        int64_t b = lanes < c ? lanes : c;
        while (b > 1 && c % b)
            b--;
        out[n++] = b;
    }
    return n;
}

/* The analytic kernel time in seconds: FLOPs over a peak scaled by the
 * fraction of vector lanes the output block fills, less a little for each
 * extra vector of the block (fewer columns fit the register tile) and for an
 * input block that is not a whole vector (a shorter inner reduction). */
static double analytic(const ir_expr *e, int64_t ib, int64_t ob, int64_t lanes)
{
    const ir_type *t = e->type, *w = e->u.call.args[1]->type;
    double flops = 2.0 * (double)ir_type_numel(t) * (double)w->shape[1] * (double)w->shape[2] * (double)w->shape[3];
    int64_t vecs = (ob + lanes - 1) / lanes;
    double fill = (double)ob / (double)(vecs * lanes);
    double regs = 1.0 - 0.05 * (double)(vecs - 1);
    double red = ib % lanes ? 0.8 : 1.0;
    return flops / (TR_DP_PEAK_FLOPS * fill * regs * red);
}

static double transform_s(double bytes, int64_t a, int64_t b)
{
    return a == b ? 0 : bytes / TR_DP_BANDWIDTH;
}

/* The node's block source when it runs blocked (see alter.c's rules). */
static void note(ir_visitor *v, const ir_expr *e)
{
    dp_ctx *cx = v->ctx;
    cx->src[e->id] = -1;
    const ir_op_def *op = ir_call_op(e);
    if (!op || !e->type || e->type->kind != IR_TY_TENSOR || e->type->ndim != 4)
        return;
    if (tr_alter_conv_ok(e)) {
        dp_conv c = {.e = e, .cin = e->u.call.args[0]->type->shape[1], .cout = e->type->shape[1], .fixed = -1};
        int64_t lanes = cx->o->layout_block;
        c.nin = candidates(c.cin, lanes, c.in);
        c.nout = candidates(c.cout, lanes, c.out);
        for (int i = 0; i < c.nin; i++)
            for (int j = 0; j < c.nout; j++) {
                double k = cx->o->layout_cost ? cx->o->layout_cost(cx->o->layout_cost_ctx, e, c.in[i], c.out[j]) : -1;
                c.ker[i][j] = k >= 0 ? k : analytic(e, c.in[i], c.out[j], lanes);
            }
        int p = cx->src[e->u.call.args[0]->id];
        if (p >= 0) {
            double bytes = 2.0 * (double)ir_type_numel(e->u.call.args[0]->type) * ir_dtype_bytes(e->type->dtype);
            su_vec_push(&cx->edges, ((dp_edge){p, (int)cx->convs.len, false, bytes}));
        }
        cx->src[e->id] = (int)cx->convs.len;
        su_vec_push(&cx->convs, c);
        return;
    }
    if (tr_alter_passes_block(e) && e->u.call.nargs == 1) {
        cx->src[e->id] = cx->src[e->u.call.args[0]->id];
    } else if (tr_alter_passes_block(e) && e->u.call.nargs == 2) {
        const ir_expr *a = e->u.call.args[0], *b = e->u.call.args[1];
        int sa = ir_type_equal(a->type, e->type) ? cx->src[a->id] : -1;
        int sb = ir_type_equal(b->type, e->type) ? cx->src[b->id] : -1;
        /* as alter_binary: the other operand is blocked too, of the same type, or a constant */
        const ir_expr *other = sa >= 0 ? b : a;
        if ((sa >= 0 || sb >= 0) && !ir_type_equal(other->type, e->type) && other->kind != IR_CONST)
            return;
        cx->src[e->id] = sa >= 0 ? sa : sb;
        if (sa >= 0 && sb >= 0 && sa != sb) {
            double bytes = 2.0 * (double)ir_type_numel(e->type) * ir_dtype_bytes(e->type->dtype);
            su_vec_push(&cx->edges, ((dp_edge){sa < sb ? sa : sb, sa < sb ? sb : sa, true, bytes}));
        }
    }
}

/* The best of p's states given that the consumer uses block b. */
static int best_from(const dp_conv *p, int64_t b, double bytes, double *cost)
{
    int best = 0;
    double bc = 0;
    for (int q = 0; q < p->nout; q++) {
        double c = (p->fixed >= 0 && p->fixed != q) ? 1e300 : p->cost[q] + transform_s(bytes, p->out[q], b);
        if (q == 0 || c < bc)
            best = q, bc = c;
    }
    *cost = bc;
    return best;
}

/* Conv k's cost for output block j, and its best input block's index. */
static double conv_cost(dp_ctx *cx, int k, int j, int *ib)
{
    dp_conv *c = &cx->convs.data[k];
    double side = 0, best = 0, t;
    for (size_t e = cx->first[k]; e < cx->first[k + 1]; e++)
        if (cx->edges.data[e].side) {
            best_from(&cx->convs.data[cx->edges.data[e].from], c->out[j], cx->edges.data[e].bytes, &t);
            side += t;
        }
    for (int i = 0; i < c->nin; i++) {
        double s = c->ker[i][j];
        for (size_t e = cx->first[k]; e < cx->first[k + 1]; e++)
            if (!cx->edges.data[e].side) {
                best_from(&cx->convs.data[cx->edges.data[e].from], c->in[i], cx->edges.data[e].bytes, &t);
                s += t;
            }
        if (i == 0 || s < best)
            best = s, *ib = i;
    }
    return best + side;
}

static void fix_preds(dp_ctx *cx, int k)
{
    dp_conv *c = &cx->convs.data[k];
    double t;
    for (size_t e = cx->first[k]; e < cx->first[k + 1]; e++) {
        const dp_edge *d = &cx->edges.data[e];
        dp_conv *p = &cx->convs.data[d->from];
        if (p->fixed < 0)
            p->fixed = best_from(p, d->side ? c->out[c->fixed] : c->in[c->ib], d->bytes, &t);
    }
}

/* The program: forward, each conv's cost by output block (its predecessors'
 * already known); backward, the last conv's best state, then each
 * predecessor's given what its consumers fixed. */
static void choose(dp_ctx *cx)
{
    for (size_t k = 0; k < cx->convs.len; k++)
        for (int j = 0; j < cx->convs.data[k].nout; j++) {
            int ib;
            cx->convs.data[k].cost[j] = conv_cost(cx, (int)k, j, &ib);
        }
    for (size_t k = cx->convs.len; k-- > 0;) {
        dp_conv *c = &cx->convs.data[k];
        if (c->fixed < 0)
            for (int j = 0; j < c->nout; j++)
                if (c->fixed < 0 || c->cost[j] < c->cost[c->fixed])
                    c->fixed = j;
        conv_cost(cx, (int)k, c->fixed, &c->ib);
        fix_preds(cx, (int)k);
    }
}

/* Variant f (layout_force): every conv's f-th candidate output block (its
 * last when it has fewer) and its producer's block as input, so that the
 * graph is consistent and its fused functions are the ones a DP choice of
 * those blocks compiles: tuning extracts the tasks of each variant. */
static void force(dp_ctx *cx, int f)
{
    for (size_t k = 0; k < cx->convs.len; k++) {
        dp_conv *c = &cx->convs.data[k];
        c->fixed = (f < c->nout ? f : c->nout) - 1;
        c->ib = (f < c->nin ? f : c->nin) - 1;
        for (size_t e = cx->first[k]; e < cx->first[k + 1]; e++) {
            const dp_edge *d = &cx->edges.data[e];
            const dp_conv *p = &cx->convs.data[d->from];
            for (int i = 0; !d->side && i < c->nin; i++)
                if (c->in[i] == p->out[p->fixed])
                    c->ib = i;
        }
    }
}

static int by_to(const void *a, const void *b)
{
    const dp_edge *x = a, *y = b;
    return x->to != y->to ? (x->to > y->to) - (x->to < y->to) : (x->from > y->from) - (x->from < y->from);
}

void tr_layout_dp(ir_module *m, const tr_options *o, tr_block_choices *out)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    dp_ctx cx = {.o = o, .src = su_calloc(m->next_id + 1, sizeof(int))};
    ir_visitor v;
    ir_visitor_init(&v, NULL, note, &cx);
    for (size_t i = 0; i < m->defs.len; i++)
        ir_visit(&v, m->defs.data[i].func);
    ir_visitor_free(&v);
    if (cx.edges.len)
        qsort(cx.edges.data, cx.edges.len, sizeof *cx.edges.data, by_to);
    cx.first = su_calloc(cx.convs.len + 2, sizeof *cx.first);
    for (size_t e = 0; e < cx.edges.len; e++)
        cx.first[cx.edges.data[e].to + 1]++;
    for (size_t k = 0; k < cx.convs.len; k++)
        cx.first[k + 1] += cx.first[k];
    if (o->layout_force > 0)
        force(&cx, o->layout_force);
    else
        choose(&cx);
    out->n = cx.convs.len;
    out->v = su_calloc(cx.convs.len + 1, sizeof *out->v);
    out->total_s = 0;
    for (size_t k = 0; k < cx.convs.len; k++) {
        const dp_conv *c = &cx.convs.data[k];
        out->v[k] = (tr_block_choice){c->e->id, c->in[c->ib], c->out[c->fixed]};
        out->total_s += c->ker[c->ib][c->fixed];
    }
    out->edges = cx.edges.len;
    su_vec_free(&cx.convs);
    su_vec_free(&cx.edges);
    free(cx.src);
    free(cx.first);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    out->dp_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
}
