/* compute_transform.c — compute definitions of the shape ops: reshape (and
 * batch_flatten, squeeze, expand_dims), transpose, concatenate, split,
 * strided_slice and take. All are injective: each output element reads one
 * input element, at an index computed from the output's. A reshape that
 * only adds or drops axes of extent 1 maps axes directly; any other goes
 * through the flat index (the simplifier removes the divisions where the
 * loop bounds allow). */
#include <string.h>

#include "schedule/schedule.h"

#define VAR(v) sch_varref(a, v)
#define I(v) sch_int(a, v)

/* ---- reshape, batch_flatten, squeeze, expand_dims -------------------------- */

bool sch_compute_reshape(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *x = in[0];
    sch_tensor *t = sch_stage_like(cx, 0, NULL);
    const sch_expr *ix[IR_MAX_DIMS];
    /* same shape once axes of extent 1 are dropped: map axes directly */
    int i = 0, j = 0;
    bool direct = true;
    while (direct) {
        while (i < x->ndim && x->shape[i] == 1)
            ix[i++] = I(0);
        while (j < t->ndim && t->shape[j] == 1)
            j++;
        if (i == x->ndim || j == t->ndim) {
            direct = i == x->ndim && j == t->ndim;
            break;
        }
        if (x->shape[i] != t->shape[j])
            direct = false;
        else
            ix[i++] = VAR(t->axes[j++]);
    }
    if (!direct) {
        const sch_expr *flat = I(0);
        for (int k = 0; k < t->ndim; k++)
            flat = sch_add(a, sch_mul(a, flat, I(t->shape[k])), VAR(t->axes[k]));
        int64_t stride = 1;
        for (int k = x->ndim; k-- > 0;) {
            const sch_expr *q = sch_div(a, flat, I(stride));
            ix[k] = k == 0 ? q : sch_mod(a, q, I(x->shape[k]));
            stride *= x->shape[k];
        }
    }
    t->body = sch_read(a, x, x->ndim, ix);
    out[0] = t;
    *nout = 1;
    return true;
}

/* ---- transpose ---------------------------------------------------------------- */

bool sch_compute_transpose(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *x = in[0];
    sch_tensor *t = sch_stage_like(cx, 0, NULL);
    int64_t axes[IR_MAX_DIMS];
    int n = sch_attr_ints(cx, "axes", axes, IR_MAX_DIMS);
    const sch_expr *ix[IR_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) {
        int64_t ax = n > 0 ? axes[i] : t->ndim - 1 - i;
        ax = ax < 0 ? ax + x->ndim : ax;
        ix[ax] = VAR(t->axes[i]);
    }
    t->body = sch_read(a, x, x->ndim, ix);
    out[0] = t;
    *nout = 1;
    return true;
}

/* ---- concatenate, split ------------------------------------------------------ */

bool sch_compute_concatenate(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *t = sch_stage_like(cx, 0, NULL);
    int64_t axis = sch_attr_int(cx, "axis");
    axis = axis < 0 ? axis + t->ndim : axis;
    int64_t *offs = su_arena_alloc(a, (size_t)(nin + 1) * sizeof *offs);
    for (int k = 0; k < nin; k++)
        offs[k + 1] = offs[k] + in[k]->shape[axis];
    const sch_expr *v = NULL;
    for (int k = nin; k-- > 0;) {
        const sch_expr *ix[IR_MAX_DIMS];
        for (int i = 0; i < t->ndim; i++)
            ix[i] = i == axis ? sch_sub(a, VAR(t->axes[i]), I(offs[k])) : VAR(t->axes[i]);
        const sch_expr *r = sch_read(a, in[k], t->ndim, ix);
        v = v ? sch_select(a, sch_bin(a, SCH_LT, VAR(t->axes[axis]), I(offs[k + 1])), r, v) : r;
    }
    t->body = v;
    out[0] = t;
    *nout = 1;
    return true;
}

bool sch_compute_split(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *x = in[0];
    const ir_type *tt = cx->call->type;
    int64_t axis = sch_attr_int(cx, "axis");
    axis = axis < 0 ? axis + x->ndim : axis;
    int64_t begin = 0;
    for (int k = 0; k < tt->nfields; k++) {
        sch_tensor *t = sch_stage_like(cx, k, NULL);
        const sch_expr *ix[IR_MAX_DIMS];
        for (int i = 0; i < t->ndim; i++)
            ix[i] = i == axis ? sch_add(a, VAR(t->axes[i]), I(begin)) : VAR(t->axes[i]);
        t->body = sch_read(a, x, x->ndim, ix);
        begin += t->shape[axis];
        out[k] = t;
    }
    *nout = tt->nfields;
    return true;
}

/* ---- strided_slice --------------------------------------------------------- */

/* First index read on each axis and the step, as the type relation
 * (slice_len in ir/op_transform.c) clamps them. */
static void slice_start(sch_cctx *cx, const sch_tensor *x, int64_t *start, int64_t *step)
{
    int64_t vb[IR_MAX_DIMS], ve[IR_MAX_DIMS], vs[IR_MAX_DIMS], va[IR_MAX_DIMS];
    int nb = sch_attr_ints(cx, "begin", vb, IR_MAX_DIMS), ne = sch_attr_ints(cx, "end", ve, IR_MAX_DIMS);
    int ns = sch_attr_ints(cx, "strides", vs, IR_MAX_DIMS), na = sch_attr_ints(cx, "axes", va, IR_MAX_DIMS);
    bool has_axes = !sch_attr_is_none(cx, "axes");
    bool size_mode = !strcmp(sch_attr_str(cx, "slice_mode"), "size");
    int64_t b[IR_MAX_DIMS];
    bool given[IR_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) {
        b[i] = 0;
        step[i] = 1;
        given[i] = false;
    }
    for (int j = 0; j < (has_axes ? na : x->ndim); j++) {
        int64_t ax = has_axes ? va[j] : j;
        ax = ax < 0 ? ax + x->ndim : ax;
        step[ax] = j < ns ? vs[j] : 1;
        b[ax] = j < nb ? vb[j] : step[ax] > 0 ? 0 : INT64_MAX;
        given[ax] = j < ne;
    }
    for (int i = 0; i < x->ndim; i++) {
        int64_t n = x->shape[i];
        if (size_mode && given[i])
            step[i] = 1;
        int64_t lo = step[i] > 0 ? 0 : -1, hi = step[i] > 0 ? n : n - 1, v = b[i];
        v = v < 0 ? v + n : v;
        start[i] = v < lo ? lo : v > hi ? hi : v;
    }
}

bool sch_compute_strided_slice(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *x = in[0];
    sch_tensor *t = sch_stage_like(cx, 0, NULL);
    int64_t start[IR_MAX_DIMS], step[IR_MAX_DIMS];
    slice_start(cx, x, start, step);
    const sch_expr *ix[IR_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++)
        ix[i] = sch_add(a, I(start[i]), sch_mul(a, VAR(t->axes[i]), I(step[i])));
    t->body = sch_read(a, x, x->ndim, ix);
    out[0] = t;
    *nout = 1;
    return true;
}

/* ---- take --------------------------------------------------------------------- */

bool sch_compute_take(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *x = in[0], *ind = in[1];
    sch_tensor *t = sch_stage_like(cx, 0, NULL);
    const char *mode = sch_attr_str(cx, "mode");
    bool flat = sch_attr_is_none(cx, "axis");
    int64_t axis = flat ? 0 : sch_attr_int(cx, "axis");
    axis = axis < 0 ? axis + x->ndim : axis;
    int64_t bd = sch_attr_int(cx, "batch_dims");
    bd = bd < 0 ? bd + ind->ndim : bd;
    if (flat)
        bd = 0;
    /* the index read: batch axes, then the indices' own axes */
    const sch_expr *ii[IR_MAX_DIMS];
    int ni = 0;
    for (int i = 0; i < bd; i++)
        ii[ni++] = VAR(t->axes[i]);
    for (int i = (int)bd; i < ind->ndim; i++)
        ii[ni++] = VAR(t->axes[flat ? i : axis + i - bd]);
    const sch_expr *v = sch_cast(a, IR_INT64, sch_read(a, ind, ni, ii));
    int64_t n = 1;
    if (flat)
        for (int i = 0; i < x->ndim; i++)
            n *= x->shape[i];
    else
        n = x->shape[axis];
    if (!strcmp(mode, "clip"))
        v = sch_max(a, sch_min(a, v, I(n - 1)), I(0));
    else if (!strcmp(mode, "wrap"))
        v = sch_mod(a, v, I(n));
    const sch_expr *ix[IR_MAX_DIMS];
    if (flat) {
        int64_t stride = 1;
        for (int k = x->ndim; k-- > 0;) {
            const sch_expr *q = sch_div(a, v, I(stride));
            ix[k] = k == 0 ? q : sch_mod(a, q, I(x->shape[k]));
            stride *= x->shape[k];
        }
    } else {
        int k = 0;
        for (int i = 0; i < axis; i++)
            ix[k++] = VAR(t->axes[i]);
        ix[k++] = v;
        for (int i = (int)axis + 1; i < x->ndim; i++)
            ix[k++] = VAR(t->axes[i - 1 + ind->ndim - bd]);
    }
    t->body = sch_read(a, x, x->ndim, ix);
    out[0] = t;
    *nout = 1;
    return true;
}
