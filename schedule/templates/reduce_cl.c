/* reduce_cl.c — the device template of work-group reductions: softmax,
 * log_softmax and layer_norm rows, global pooling, sum/mean/max/min/prod
 * and argmax, for targets with work-groups (sch_hw.wg_max > 0). Where the
 * default family's device template (default_cl) would give each row's
 * reduction to one work-item, this one gives it to a work-group: the
 * group's work-items stride over the reduced axis (consecutive items read
 * consecutive elements), and lowering combines their partial results in a
 * tree in local memory with barriers (lower.c: a reduction leaf bound to a
 * work-item axis of the group).
 *
 * Two forms, by the function:
 *
 *   rows: the output is softmax's, log_softmax's or layer_norm's own stage
 *         over the last axis (rank 2 or more): one work-group a row (the
 *         leading axes fused, bound to work-group axis 0); the row's
 *         statistics are computed inside the row loop, each a work-group
 *         reduction into the work-items' private copies, and the row's
 *         elements are shared out over the same work-items. One launch.
 *   reductions: every other function with reductions: each reduction stage
 *         is a nest of its own, one work-group per element of its result
 *         (its spatial axes fused, bound to axis 0; its reduced axes fused
 *         and shared out), the result stored by the group's first item; the
 *         remaining stages (a mean's division, global pooling's, a fused
 *         epilogue) are scheduled as default_cl schedules them.
 *
 * The knob wg_reduce is the work-group size: powers of two from 2 up to the
 * device's largest work-group (at most 1024) whose local arrays (one per
 * reduction, one element per work-item) fit the device's local memory; a
 * reduction of n elements takes min(wg_reduce, n) work-items. Default: the
 * largest candidate not above 64 nor the reduced extent (docs/opencl.md
 * says why 64 on PoCL). Functions whose reductions have fewer than two
 * elements, accumulate in a wider type (float16) or pool windows stay with
 * default_cl, and so does every function on a device without wg_reduce (a
 * cpu device: its local memory is ordinary memory, and PoCL ran these
 * slower than default_cl's one work-item a row; docs/opencl.md). */
#include <string.h>

#include "schedule/schedule.h"

enum { MAX_ITEMS = 1024, DEFAULT_ITEMS = 64, MAX_REDUCTIONS = 16, MAX_ROWS = 8 };

/* The elements one element of reduction stage t combines. */
static int64_t reduced_extent(const sch_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->nraxes; i++)
        n *= t->rext[i];
    return n;
}

/* Whether reduction stage t is a pooling window's (a few elements each,
 * which one work-item sums faster than a group), not a global pool's (an
 * adaptive pool to 1 x 1, resnet's head as the ONNX zoo writes it, is one). */
static bool window_pool(const sch_tensor *t)
{
    const ir_op_def *op = t->call ? ir_call_op(t->call) : NULL;
    if (!op || !strstr(op->name, "pool") || strstr(op->name, "global_"))
        return false;
    bool to_one = strstr(op->name, "adaptive_") && t->ndim >= 2;
    for (int i = t->ndim - 2; to_one && i < t->ndim; i++)
        to_one = t->shape[i] == 1;
    return !to_one;
}

/* The reduction stages of s (computed, not inline) in r[0..), or -1 when
 * one of them cannot be a work-group reduction (or there are too many). */
static int reductions(const sch_schedule *s, sch_tensor **r)
{
    int n = 0;
    for (size_t i = 0; i < s->tensors.len; i++) {
        sch_tensor *t = s->tensors.data[i];
        if (t->kind != SCH_TENSOR_COMPUTE || t->attach == SCH_ATTACH_INLINE || t->reduce == SCH_RED_NONE)
            continue;
        if (n == MAX_REDUCTIONS || t->dtype == IR_FLOAT16 || t->nraxes < 1 || reduced_extent(t) < 2 ||
            window_pool(t))
            return -1;
        r[n++] = t;
    }
    return n;
}

/* Whether the function is the rows form: its one output is the stage of a
 * softmax, log_softmax or layer_norm over its last axis, rank 2 or more,
 * and every reduction is one of that call's row statistics. */
static bool rows_form(const sch_schedule *s, sch_tensor *const *r, int n)
{
    const sch_tensor *o = s->noutputs == 1 ? s->outputs[0] : NULL;
    if (!o || o->kind != SCH_TENSOR_COMPUTE || o->reduce != SCH_RED_NONE || !o->call || o->ndim < 2)
        return false;
    const ir_op_def *op = ir_call_op(o->call);
    if (!op || (op->id != IR_OP_SOFTMAX && op->id != IR_OP_LOG_SOFTMAX && op->id != IR_OP_LAYER_NORM))
        return false;
    int64_t axis = ir_call_attr(o->call, "axis")->i;
    if ((axis < 0 ? axis + o->ndim : axis) != o->ndim - 1)
        return false;
    for (int i = 0; i < n; i++)
        if (r[i]->call != o->call || r[i]->ndim != o->ndim - 1 || r[i]->nraxes != 1 ||
            r[i]->rext[0] != o->shape[o->ndim - 1])
            return false;
    return true;
}

bool sch_reduce_cl_fits(const sch_schedule *s, const sch_hw *hw)
{
    sch_tensor *r[MAX_REDUCTIONS];
    return hw && hw->wg_max >= 2 && hw->wg_reduce && reductions(s, r) > 0;
}

/* Defines wg_reduce over reductions r[0..n) (the largest reduced extent
 * bounds the default). */
static int64_t define_items(sch_tctx *t, sch_tensor *const *r, int n)
{
    int64_t widest = 1, bytes = 0;
    for (int i = 0; i < n; i++) {
        widest = reduced_extent(r[i]) > widest ? reduced_extent(r[i]) : widest;
        bytes += ir_dtype_bytes(r[i]->dtype);
    }
    int64_t cap = t->hw->wg_max < MAX_ITEMS ? t->hw->wg_max : MAX_ITEMS;
    int64_t values[16];
    int nv = 0, dflt = 0;
    for (int64_t v = 2; v <= cap && nv < 16 && (t->hw->l1 <= 0 || v * bytes <= t->hw->l1); v *= 2) {
        if (v <= DEFAULT_ITEMS && (v <= widest || nv == 0))
            dflt = nv;
        values[nv++] = v;
    }
    if (nv == 0)
        values[nv++] = 2;
    return sch_define_knob(t, "wg_reduce", nv, values, values[dflt]);
}

/* Fuses stage st's leaves [from, from + count) into one; returns it (NULL
 * when count is 0). */
static sch_iter *fuse_leaves(sch_tctx *t, sch_tensor *st, int from, int count)
{
    if (count < 1 || t->err)
        return NULL;
    sch_iter *f = st->leaves.data[from];
    for (int i = 1; i < count && !t->err; i++)
        SCH_TRY(t, sch_fuse(t->s, st, f, st->leaves.data[from + 1], &f));
    return t->err ? NULL : f;
}

/* Defines wg_rows, the rows (rows form) or result elements (reductions
 * form) one work-group takes one after the other, over `rows` of them:
 * powers of two up to MAX_ROWS and rows; default 1, one a group. */
static int64_t define_rows(sch_tctx *t, int64_t rows)
{
    int64_t values[8];
    int nv = 0;
    for (int64_t v = 1; v <= MAX_ROWS && (v == 1 || v <= rows); v *= 2)
        values[nv++] = v;
    return sch_define_knob(t, "wg_rows", nv, values, 1);
}

/* The work-group loop of stage st over its fused loop `el`, `per` of its
 * iterations a group (a divisor: no tail): el split, the outer part bound
 * to work-group axis 0; returns the loop the group's iterations run in
 * (el itself where per is 1). */
static sch_iter *group_loop(sch_tctx *t, sch_tensor *st, sch_iter *el, int64_t per)
{
    sch_iter *g = el, *in = el;
    if (per > 1 && el->extent > 1)
        SCH_TRY(t, sch_split(t->s, st, el, sch_tmpl_divisor(el->extent, per), &g, &in));
    SCH_TRY(t, sch_bind(t->s, st, g, 0));
    return t->err ? NULL : in;
}

/* Shares loop it of stage st out over `items` work-items of the group:
 * split, the items' loop outside the rest, bound to local axis 0. */
static void share_out(sch_tctx *t, sch_tensor *st, sch_iter *it, int64_t items)
{
    sch_iter *outer, *inner;
    SCH_TRY(t, sch_split(t->s, st, it, items < it->extent ? items : it->extent, &outer, &inner));
    if (t->err)
        return;
    sch_iter *order[2] = {inner, outer};
    SCH_TRY(t, sch_reorder(t->s, st, 2, order));
    SCH_TRY(t, sch_bind(t->s, st, inner, 3));
}

/* A reduction stage's reduced axes fused and shared out (its spatial
 * leaves come first and are left as they are). */
static void reduce_over_items(sch_tctx *t, sch_tensor *r, int64_t items)
{
    sch_iter *red = fuse_leaves(t, r, (int)r->leaves.len - r->nraxes, r->nraxes);
    if (red)
        share_out(t, r, red, items);
}

/* The row's elements of output o (its last leaf) over the items, in
 * vectors of (at most) vec where the row has such a divisor: the vector
 * loop innermost, so that each store is one floatN (lang_opencl.c). A
 * group's item loops must all have one extent (lang_opencl.c's group_body),
 * so the group shrinks to the row's vectors where they are fewer than its
 * items; returns the items the group has. */
static int64_t row_elements(sch_tctx *t, sch_tensor *o, int64_t items, int64_t vec)
{
    sch_iter *last = o->leaves.data[o->leaves.len - 1], *rest, *lanes;
    int64_t f = sch_tmpl_pow2_divisor(last->extent, vec);
    if (f >= 2 && f < last->extent) {
        SCH_TRY(t, sch_split(t->s, o, last, f, &rest, &lanes));
        SCH_TRY(t, sch_annotate(t->s, o, lanes, SCH_LOOP_VECTORIZED));
        last = rest;
    }
    items = items < last->extent ? items : last->extent;
    if (!t->err)
        share_out(t, o, last, items);
    return items;
}

/* The rows form: `per` rows of the output o a work-group. */
static void rows(sch_tctx *t, sch_tensor *const *r, int n, int64_t items, int64_t per, int64_t vec)
{
    sch_tensor *o = t->s->outputs[0];
    sch_iter *el = fuse_leaves(t, o, 0, o->ndim - 1);
    sch_iter *row = el ? group_loop(t, o, el, per) : NULL;
    if (!row)
        return;
    items = row_elements(t, o, items, vec);
    /* readers before what they read: a statistic computed at the row loop
     * must have all its readers there already */
    for (int i = n; i-- > 0 && !t->err;) {
        SCH_TRY(t, sch_compute_at(t->s, r[i], o, row));
        reduce_over_items(t, r[i], items);
    }
}

/* The reductions form: each reduction a nest of `per` elements a
 * work-group; the other stages as default_cl schedules them. */
static void each_reduction(sch_tctx *t, sch_tensor *const *r, int n, int64_t items, int64_t per, int64_t vec)
{
    for (int i = 0; i < n && !t->err; i++) {
        if (r[i]->attach != SCH_ATTACH_ROOT)
            SCH_TRY(t, sch_compute_root(t->s, r[i]));
        sch_iter *el = fuse_leaves(t, r[i], 0, r[i]->ndim);
        if (el)
            group_loop(t, r[i], el, per);
        reduce_over_items(t, r[i], items);
    }
    sch_tmpl_finish(t);
    sch_tmpl_device_grid(t);
    sch_tmpl_device_vectorize(t, vec);
}

/* The iterations of the work-group loop: the output's rows (rows form), or
 * the most result elements of a reduction. */
static int64_t group_extent(const sch_schedule *s, sch_tensor *const *r, int n, bool rows)
{
    int64_t m = 1;
    const sch_tensor *o = s->outputs[0];
    for (int i = 0; rows && i < o->ndim - 1; i++)
        m *= o->shape[i];
    for (int i = 0; !rows && i < n; i++) {
        int64_t e = 1;
        for (int j = 0; j < r[i]->ndim; j++)
            e *= r[i]->shape[j];
        m = e > m ? e : m;
    }
    return m;
}

void sch_template_reduce_cl(sch_tctx *t)
{
    sch_tensor *r[MAX_REDUCTIONS];
    int n = reductions(t->s, r);
    if (n <= 0) {
        /* (sch_device_template_of picks this template only where n > 0) */
        t->err = sch_fail(t->s, SCH_E_UNSUPPORTED, "reduce_cl: the function has no work-group reduction");
        return;
    }
    /* the knobs in one order whatever the form (a config is one index a knob) */
    bool by_rows = rows_form(t->s, r, n);
    int64_t items = define_items(t, r, n);
    int64_t per = define_rows(t, group_extent(t->s, r, n, by_rows));
    int64_t vec = sch_tmpl_device_vec_knob(t);
    if (by_rows)
        rows(t, r, n, items, per, vec);
    else
        each_reduction(t, r, n, items, per, vec);
}
