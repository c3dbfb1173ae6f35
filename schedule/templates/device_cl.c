/* device_cl.c — the device templates that are a CPU template re-gridded:
 * the default family (injective, pooling, reductions, softmax,
 * layer_norm), depthwise convs in the flat form and dense calls of other
 * ranks, for targets with work-groups (an OpenCL device: sch_hw.wg_max > 0;
 * workload.c's sch_device_template picks them). dense_cl, batch_matmul_cl,
 * conv2d_nchw_cl (and its grouped kin) and reduce_cl are templates of
 * their own, which end with this file's steps.
 *
 * Each is its family's CPU template planned with the device's description
 * (its tiles become one work-item's tile: outputs per work-item, unrolled
 * rows, the loop the OpenCL compiler vectorizes), followed by one step of
 * its own: the outermost parallel loop of every root stage becomes a grid,
 * split into work-groups (bound to work-group axis 0) of wg_items
 * work-items (bound to work-item axis 0; the knob wg_items). Stages
 * computed at that loop (a
 * conv's accumulator tile, a softmax's row statistics) move into the
 * work-item loop, so each work-item computes what one iteration did. The
 * launch (targets/lang_opencl.c) reads the grid off the bound loops.
 *
 * wg_items is a choice among powers of two up to the device's largest
 * work-group (at most 1024); a stage takes the largest divisor of its
 * parallel extent not above it, so no tail guard is ever needed (a guard
 * below a stage computed at the loop would not cover that stage's reads).
 * One knob serves every stage (the number of root stages depends on the
 * CPU knobs: a packed weight or not), and it is defined for every function
 * whatever the CPU knobs chose, so that a config is one index per knob in
 * every run; where no stage's loop is parallel it has no effect. Its
 * default gives every compute unit at least four work-groups of the last
 * output, at most 256 work-items each (docs/opencl.md). */
#include "schedule/schedule.h"

enum { MAX_ITEMS = 1024, DEFAULT_MAX_ITEMS = 256, GROUPS_PER_UNIT = 4, MAX_UNROLLED_VECTORS = 4 };

/* The first parallel leaf of root stage st when every leaf before it has
 * extent 1 (so its iterations are all the stage's outer work), else NULL. */
static sch_iter *outer_parallel(const sch_tensor *st)
{
    if (st->kind != SCH_TENSOR_COMPUTE || st->attach != SCH_ATTACH_ROOT)
        return NULL;
    for (size_t i = 0; i < st->leaves.len; i++) {
        sch_iter *it = st->leaves.data[i];
        if (it->kind == SCH_LOOP_PARALLEL)
            return it->extent > 1 ? it : NULL;
        if (it->extent > 1)
            return NULL;
    }
    return NULL;
}

/* Defines wg_items; its default from the parallel loop of the function's
 * last output as the CPU template left it (the stage the CPU knobs tune),
 * else from the widest one. */
static int64_t define_items(sch_tctx *t)
{
    int64_t cap = t->hw->wg_max < MAX_ITEMS ? t->hw->wg_max : MAX_ITEMS, extent = 1;
    bool output = false;
    for (size_t i = 0; i < t->s->tensors.len; i++) {
        const sch_tensor *st = t->s->tensors.data[i];
        const sch_iter *p = outer_parallel(st);
        if (p && (st->output >= 0 || (!output && p->extent > extent)))
            extent = p->extent;
        output = output || (p && st->output >= 0);
    }
    int64_t share = extent / (GROUPS_PER_UNIT * (t->hw->cores > 0 ? t->hw->cores : 1));
    int64_t values[16];
    int n = 0, dflt = 0;
    for (int64_t v = 1; v <= cap && n < 16; v *= 2) {
        if (v <= DEFAULT_MAX_ITEMS && v <= share)
            dflt = n;
        values[n++] = v;
    }
    return sch_define_knob(t, "wg_items", n, values, values[dflt]);
}

/* Stage st's parallel loop p as work-groups of (a divisor of) items
 * work-items; the stages computed at p move to the work-item loop, readers
 * before what they read (a stage may only be computed at a loop where no
 * other stage elsewhere reads it). */
static void grid(sch_tctx *t, sch_tensor *st, sch_iter *p, int64_t items)
{
    sch_schedule *s = t->s;
    sch_iter *g, *l;
    SCH_TRY(t, sch_split(s, st, p, sch_tmpl_divisor(p->extent, items), &g, &l));
    SCH_TRY(t, sch_bind(s, st, g, 0));
    SCH_TRY(t, sch_bind(s, st, l, 3));
    for (size_t i = s->tensors.len; i-- > 0 && !t->err;) {
        sch_tensor *r = s->tensors.data[i];
        if (r->attach == SCH_ATTACH_AT && r->attach_to == st && r->attach_iter == p)
            SCH_TRY(t, sch_compute_at(s, r, st, l));
    }
}

/* The device step after a CPU template: every root stage's parallel loop
 * as a grid. */
static void to_grid(sch_tctx *t)
{
    if (t->err)
        return;
    int64_t items = define_items(t);
    for (size_t i = 0; i < t->s->tensors.len && !t->err; i++) {
        sch_tensor *st = t->s->tensors.data[i];
        sch_iter *p = outer_parallel(st);
        if (p)
            grid(t, st, p, items);
    }
}

void sch_tmpl_device_grid(sch_tctx *t)
{
    to_grid(t);
}

int64_t sch_tmpl_pow2_divisor(int64_t n, int64_t w)
{
    int64_t f = 1;
    while (f * 2 <= w && f * 2 <= 16 && n % (f * 2) == 0)
        f *= 2;
    return f;
}

/* The knob vec: the vector width of every work-item's vectorized loops.
 * 1 makes them serial (scalar work-items, which PoCL vectorizes across
 * work-items along dimension 0); N splits each into vectors of the largest
 * power of two at most N dividing its extent, the vector loop innermost
 * and the loop over vectors unrolled, so that the vector prints as an
 * OpenCL vector type (targets/lang_opencl.c) and the tile's accumulators
 * stay vector registers (up to MAX_UNROLLED_VECTORS: a tile of 64 channels
 * in float8 times 14 unrolled columns, 112 vectors, spills and takes PoCL
 * over 10 s to compile; such a loop over vectors stays a loop). A loop whose extent has no such divisor stays
 * serial. Candidates: 1 and the powers of two from 4 up to the device's
 * preferred float vector width (sch_hw.lanes; 2 where that is 2 or 3);
 * default: that width (docs/opencl.md). */
static int64_t define_vec(sch_tctx *t)
{
    int64_t values[4], lanes = t->hw->lanes < 16 ? t->hw->lanes : 16;
    int n = 0;
    values[n++] = 1;
    for (int64_t v = lanes >= 4 ? 4 : 2; v <= lanes; v *= 2)
        values[n++] = v;
    return sch_define_knob(t, "vec", n, values, values[n - 1]);
}

/* Whether some stage of s is computed at loop it (which then cannot be
 * split: the default template computes a pool's sums or a row's maximum
 * at its consumer's vector loop). */
static bool attach_point(const sch_schedule *s, const sch_iter *it)
{
    for (size_t i = 0; i < s->tensors.len; i++)
        if (s->tensors.data[i]->attach == SCH_ATTACH_AT && s->tensors.data[i]->attach_iter == it)
            return true;
    return false;
}

/* Every work-item's vectorized loops in vectors of (at most) w, as above;
 * a loop other stages are computed at stays as it is. */
static void vectorize(sch_tctx *t, int64_t w)
{
    sch_schedule *s = t->s;
    for (size_t i = 0; i < s->tensors.len && !t->err; i++) {
        sch_tensor *st = s->tensors.data[i];
        for (size_t j = 0; st->kind == SCH_TENSOR_COMPUTE && j < st->leaves.len && !t->err; j++) {
            sch_iter *it = st->leaves.data[j], *outer, *inner;
            if (it->kind != SCH_LOOP_VECTORIZED || it->reduce || attach_point(s, it))
                continue;
            int64_t f = sch_tmpl_pow2_divisor(it->extent, w);
            if (f < 2) {
                SCH_TRY(t, sch_annotate(s, st, it, SCH_LOOP_SERIAL));
            } else if (f < it->extent) {
                SCH_TRY(t, sch_split(s, st, it, f, &outer, &inner));
                SCH_TRY(t, sch_annotate(s, st, inner, SCH_LOOP_VECTORIZED));
                if (outer && outer->extent <= MAX_UNROLLED_VECTORS)
                    SCH_TRY(t, sch_annotate(s, st, outer, SCH_LOOP_UNROLLED));
            }
        }
    }
}

static void vector_width(sch_tctx *t)
{
    if (!t->err)
        vectorize(t, define_vec(t));
}

void sch_template_conv2d_cl(sch_tctx *t)
{
    sch_template_conv2d(t);
    to_grid(t);
    vector_width(t);
}

void sch_template_matmul_cl(sch_tctx *t)
{
    sch_template_matmul(t);
    to_grid(t);
    vector_width(t);
}

/* The default family's CPU template, its parallel loops as a grid
 * (wg_items) and its contiguous vectorized loops in vectors (vec): the
 * injective functions, window pooling, the reductions reduce_cl does not
 * take. */
void sch_template_default_cl(sch_tctx *t)
{
    sch_template_default(t);
    to_grid(t);
    vector_width(t);
}

void sch_tmpl_device_vec(sch_tctx *t)
{
    vector_width(t);
}

int64_t sch_tmpl_device_vec_knob(sch_tctx *t)
{
    return define_vec(t);
}

void sch_tmpl_device_vectorize(sch_tctx *t, int64_t w)
{
    if (!t->err)
        vectorize(t, w);
}
