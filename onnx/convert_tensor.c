/* convert_tensor.c — ONNX's shape and layout ops and its constants. Shapes
 * are static, so every shape an op computes (Reshape's 0 and -1, Squeeze
 * and Unsqueeze in their attribute and input forms, Flatten) is resolved
 * here into an explicit reshape; Shape and Size become constants; the
 * inputs that ONNX lets be tensors (Reshape's shape, Slice's starts, Pad's
 * pads, ...) must be constants by the time they are read, which folding
 * makes them for shape arithmetic. Slice's negative steps become a take of
 * the indices they select. */
#include <math.h>
#include <string.h>

#include "onnx/onnx.h"

bool ox_conv_identity(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    out[0] = in[0];
    return true;
}

bool ox_conv_constant(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    const Onnx__AttributeProto *a;
    su_buf err = {0};
    if ((a = ox_attr(n, "value")) && a->t) {
        ir_tensor *t = ox_tensor(&cx->m->arena, a->t, NULL, nout > 0 && n->output[0] ? n->output[0] : "value", true, &err);
        if (!t) {
            ox_fail(cx, "%s", su_buf_str(&err));
            su_buf_free(&err);
            return false;
        }
        out[0] = ox_const(cx, t);
    } else if ((a = ox_attr(n, "value_float")) && a->has_f) {
        out[0] = ox_scalar(cx, IR_FLOAT32, a->f);
    } else if ((a = ox_attr(n, "value_int")) && a->has_i) {
        out[0] = ox_const(cx, ir_tensor_scalar_i64(&cx->m->arena, a->i));
    } else if ((a = ox_attr(n, "value_ints"))) {
        out[0] = ox_ints_const(cx, (int)a->n_ints, a->ints);
    } else if ((a = ox_attr(n, "value_floats"))) {
        int64_t s[1] = {(int64_t)a->n_floats};
        ir_tensor *t = ir_tensor_new(&cx->m->arena, IR_FLOAT32, 1, s);
        if (a->n_floats)
            memcpy(t->data, a->floats, a->n_floats * sizeof(float));
        out[0] = ox_const(cx, t);
    } else {
        return ox_fail(cx, "only tensor, float and int constants are supported (not sparse or string ones)");
    }
    return out[0] != NULL;
}

bool ox_conv_constant_of_shape(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out,
                               int nout)
{
    int64_t shape[IR_MAX_DIMS];
    int nd = ox_const_ints(cx, in[0], "shape", shape, IR_MAX_DIMS);
    if (nd < 0)
        return false;
    ir_dtype dt = IR_FLOAT32;
    double v = 0;
    const Onnx__AttributeProto *a = ox_attr(n, "value");
    if (a && a->t) {
        su_buf err = {0};
        ir_tensor *t = ox_tensor(NULL, a->t, NULL, "value", false, &err);
        if (!t || ir_tensor_numel(t) != 1) {
            ox_fail(cx, "value must be a one-element tensor%s%s", t ? "" : ": ", su_buf_str(&err));
            ir_tensor_free(t);
            su_buf_free(&err);
            return false;
        }
        dt = t->dtype;
        v = ir_tensor_get(t, 0);
        ir_tensor_free(t);
    }
    out[0] = ox_filled(cx, dt, nd, shape, v);
    return out[0] != NULL;
}

/* Shape (with opset 15's start and end) and Size, as constants. */
bool ox_conv_shape(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    const ir_type *t = ox_type(in[0]);
    if (!strcmp(n->op_type, "Size")) {
        out[0] = ox_const(cx, ir_tensor_scalar_i64(&cx->m->arena, ir_type_numel(t)));
        return out[0] != NULL;
    }
    int64_t nd = t->ndim, b = ox_attr_int(n, "start", 0), e = ox_attr_int(n, "end", nd);
    b = b < 0 ? b + nd : b, e = e < 0 ? e + nd : e;
    b = b < 0 ? 0 : b > nd ? nd : b, e = e < 0 ? 0 : e > nd ? nd : e;
    out[0] = ox_ints_const(cx, e > b ? (int)(e - b) : 0, t->shape + b);
    return out[0] != NULL;
}

bool ox_conv_flatten(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    const ir_type *t = ox_type(in[0]);
    int64_t axis = ox_attr_int(n, "axis", 1);
    if (axis < -t->ndim || axis > t->ndim)
        return ox_fail(cx, "axis %lld is out of range for rank %d", (long long)axis, t->ndim);
    if (axis < 0)
        axis += t->ndim;
    int64_t s[2] = {1, 1};
    for (int i = 0; i < t->ndim; i++)
        s[i >= axis] *= t->shape[i];
    out[0] = ox_reshape(cx, in[0], 2, s);
    return out[0] != NULL;
}

bool ox_conv_reshape(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    const ir_type *t = ox_type(in[0]);
    int64_t s[IR_MAX_DIMS];
    int nd = nin > 1 ? ox_const_ints(cx, in[1], "shape", s, IR_MAX_DIMS) : -1;
    if (nd < 0)
        return nin > 1 ? false : ox_fail(cx, "Reshape needs its shape input");
    bool allowzero = ox_attr_int(n, "allowzero", 0) != 0;
    int infer = -1;
    int64_t known = 1;
    for (int i = 0; i < nd; i++) {
        if (s[i] == 0 && !allowzero) {
            if (i >= t->ndim)
                return ox_fail(cx, "shape[%d] = 0 copies a dim the input (rank %d) lacks", i, t->ndim);
            s[i] = t->shape[i];
        }
        if (s[i] == -1) {
            if (infer >= 0)
                return ox_fail(cx, "shape has more than one -1");
            infer = i;
        } else if (s[i] < 0) {
            return ox_fail(cx, "shape[%d] = %lld is negative", i, (long long)s[i]);
        } else if (s[i] && known > OX_MAX_ELEMS / s[i]) {
            return ox_fail(cx, "the shape has more than 2^40 elements");
        } else {
            known *= s[i];
        }
    }
    int64_t total = ir_type_numel(t);
    if (infer >= 0) {
        if (known == 0 || total % known)
            return ox_fail(cx, "cannot infer the -1 of the shape for %lld elements", (long long)total);
        s[infer] = total / known;
    }
    out[0] = ox_reshape(cx, in[0], nd, s);
    return out[0] != NULL;
}

bool ox_conv_transpose(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    int nd = ox_type(in[0])->ndim;
    int64_t perm[IR_MAX_DIMS];
    int np = ox_attr_ints(cx, n, "perm", perm, IR_MAX_DIMS);
    if (np < 0) {   /* the default reverses the axes */
        for (int i = 0; i < nd; i++)
            perm[i] = nd - 1 - i;
        np = nd;
    }
    out[0] = ox_transpose(cx, in[0], np, perm);
    return out[0] != NULL;
}

/* concatenate((items), axis) */
static ir_expr *concat(ox_ctx *cx, int n, ir_expr *const *items, int axis)
{
    for (int i = 0; i < n; i++)
        if (!items[i])
            return NULL;
    if (n == 1)
        return items[0];
    su_span none = {0};
    ir_expr *tup = ir_tuple(cx->m, none, n, items);
    if (!ir_infer_expr(cx->m, tup, cx->d))
        return NULL;
    ox_attrs at = ox_attrs_new(cx, IR_OP_CONCATENATE);
    ox_set_int(&at, IR_CONCAT_AXIS, axis);
    return ox_call(cx, IR_OP_CONCATENATE, 1, &tup, &at);
}

bool ox_conv_concat(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    if (nin < 1 || !ox_attr(n, "axis"))
        return ox_fail(cx, "Concat needs inputs and an axis");
    int axis;
    if (!ox_axis(cx, ox_attr_int(n, "axis", 0), ox_type(in[0])->ndim, &axis))
        return false;
    out[0] = concat(cx, nin, in, axis);
    return out[0] != NULL;
}

bool ox_conv_split(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    const ir_type *t = ox_type(in[0]);
    int axis;
    if (!ox_axis(cx, ox_attr_int(n, "axis", 0), t->ndim, &axis))
        return false;
    if (nout < 1 || nout > IR_MAX_DIMS * 64)
        return ox_fail(cx, "Split has %d outputs", nout);
    int64_t sizes[IR_MAX_DIMS * 64];
    int ns = cx->opset >= 13 ? (nin > 1 && in[1] ? ox_const_ints(cx, in[1], "split", sizes, nout) : -1)
                             : ox_attr_ints(cx, n, "split", sizes, nout);
    if (ns < 0 && cx->opset >= 13 && nin > 1 && in[1])
        return false;
    int64_t dim = t->shape[axis];
    if (ns < 0) {   /* equal parts */
        if (dim % nout)
            return ox_fail(cx, "axis %d of extent %lld does not split into %d equal parts", axis, (long long)dim, nout);
        for (int i = 0; i < nout; i++)
            sizes[i] = dim / nout;
        ns = nout;
    }
    if (ns != nout)
        return ox_fail(cx, "split has %d sizes for %d outputs", ns, nout);
    int64_t idx[IR_MAX_DIMS * 64], sum = 0;
    for (int i = 0; i < ns; i++) {
        if (sizes[i] < 0 || sizes[i] > dim)
            return ox_fail(cx, "split size %lld is negative or past the extent %lld", (long long)sizes[i],
                           (long long)dim);
        sum += sizes[i];
        idx[i] = sum;
    }
    if (sum != dim)
        return ox_fail(cx, "split sizes add up to %lld, not the extent %lld", (long long)sum, (long long)dim);
    if (nout == 1) {
        out[0] = in[0];
        return true;
    }
    bool empty = false;
    for (int i = 0; i < ns; i++)
        empty |= sizes[i] == 0;
    if (empty) {    /* Relay's split has no empty parts: slice each one */
        for (int i = 0; i < nout; i++) {
            int64_t b[IR_MAX_DIMS], e[IR_MAX_DIMS];
            for (int j = 0; j < t->ndim; j++)
                b[j] = 0, e[j] = t->shape[j];
            b[axis] = idx[i] - sizes[i], e[axis] = idx[i];
            ox_attrs sa = ox_attrs_new(cx, IR_OP_STRIDED_SLICE);
            ox_set_ints(cx, &sa, IR_SLICE_BEGIN, t->ndim, b);
            ox_set_ints(cx, &sa, IR_SLICE_END, t->ndim, e);
            if (!(out[i] = ox_call(cx, IR_OP_STRIDED_SLICE, 1, in, &sa)))
                return false;
        }
        return true;
    }
    ox_attrs at = ox_attrs_new(cx, IR_OP_SPLIT);
    ox_set_ints(cx, &at, IR_SPLIT_INDICES_OR_SECTIONS, nout - 1, idx);
    ox_set_int(&at, IR_SPLIT_AXIS, axis);
    ir_expr *tup = ox_call(cx, IR_OP_SPLIT, 1, in, &at);
    for (int i = 0; i < nout; i++)
        if (!(out[i] = ox_proj(cx, tup, i)))
            return false;
    return true;
}

/* take(e, indices, axis) with indices known to be in range. */
static ir_expr *take_axis(ox_ctx *cx, ir_expr *e, int n, const int64_t *idx, int axis)
{
    ox_attrs at = ox_attrs_new(cx, IR_OP_TAKE);
    ox_set_int(&at, IR_TAKE_AXIS, axis);
    ox_set_str(&at, IR_TAKE_MODE, "fast");
    ir_expr *args[2] = {e, ox_ints_const(cx, n, idx)};
    return ox_call(cx, IR_OP_TAKE, 2, args, &at);
}

bool ox_conv_slice(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    const ir_type *t = ox_type(in[0]);
    int nd = t->ndim;
    int64_t starts[IR_MAX_DIMS], ends[IR_MAX_DIMS], axes[IR_MAX_DIMS], steps[IR_MAX_DIMS];
    int ns, ne, na = -1, nst = -1;
    if (cx->opset < 10) {
        ns = ox_attr_ints(cx, n, "starts", starts, IR_MAX_DIMS);
        ne = ox_attr_ints(cx, n, "ends", ends, IR_MAX_DIMS);
        na = ox_attr_ints(cx, n, "axes", axes, IR_MAX_DIMS);
    } else {
        if (nin < 3)
            return ox_fail(cx, "Slice needs data, starts and ends");
        if ((ns = ox_const_ints(cx, in[1], "starts", starts, IR_MAX_DIMS)) < 0 ||
            (ne = ox_const_ints(cx, in[2], "ends", ends, IR_MAX_DIMS)) < 0)
            return false;
        if (nin > 3 && in[3] && (na = ox_const_ints(cx, in[3], "axes", axes, IR_MAX_DIMS)) < 0)
            return false;
        if (nin > 4 && in[4] && (nst = ox_const_ints(cx, in[4], "steps", steps, IR_MAX_DIMS)) < 0)
            return false;
    }
    if (ns < 0 || ns != ne || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
        return ox_fail(cx, "starts, ends, axes and steps must have the same length");
    /* per axis: begin, end, stride of the positive-step slice; negative steps
     * pick their indices with take */
    int64_t b[IR_MAX_DIMS], e[IR_MAX_DIMS], st[IR_MAX_DIMS];
    bool seen[IR_MAX_DIMS] = {0}, backwards[IR_MAX_DIMS] = {0};
    for (int i = 0; i < nd; i++)
        b[i] = 0, e[i] = t->shape[i], st[i] = 1;
    for (int i = 0; i < ns; i++) {
        int a;
        if (!ox_axis(cx, na >= 0 ? axes[i] : i, nd, &a))
            return false;
        if (seen[a])
            return ox_fail(cx, "axis %d is sliced twice", a);
        seen[a] = true;
        int64_t dim = t->shape[a], s = starts[i], en = ends[i], step = nst >= 0 ? steps[i] : 1;
        if (step == 0)
            return ox_fail(cx, "a step of 0");
        /* a step past the extent selects one element, whatever its size */
        step = step > OX_MAX_ELEMS ? OX_MAX_ELEMS : step < -OX_MAX_ELEMS ? -OX_MAX_ELEMS : step;
        if (s < 0)
            s += dim;
        if (en < 0)
            en += dim;
        if (step > 0) {
            s = s < 0 ? 0 : s > dim ? dim : s;
            en = en < 0 ? 0 : en > dim ? dim : en;
            b[a] = s, e[a] = en < s ? s : en, st[a] = step;
        } else {
            s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
            en = en < -1 ? -1 : en > dim - 1 ? dim - 1 : en;
            b[a] = s, e[a] = en, st[a] = step, backwards[a] = true;
        }
    }
    ir_expr *y = in[0];
    bool forward = false;
    for (int i = 0; i < nd; i++)
        forward |= !backwards[i] && (b[i] != 0 || e[i] != t->shape[i] || st[i] != 1);
    if (forward) {
        int64_t fb[IR_MAX_DIMS], fe[IR_MAX_DIMS], fs[IR_MAX_DIMS];
        for (int i = 0; i < nd; i++) {
            fb[i] = backwards[i] ? 0 : b[i];
            fe[i] = backwards[i] ? t->shape[i] : e[i];
            fs[i] = backwards[i] ? 1 : st[i];
        }
        ox_attrs at = ox_attrs_new(cx, IR_OP_STRIDED_SLICE);
        ox_set_ints(cx, &at, IR_SLICE_BEGIN, nd, fb);
        ox_set_ints(cx, &at, IR_SLICE_END, nd, fe);
        ox_set_ints(cx, &at, IR_SLICE_STRIDES, nd, fs);
        y = ox_call(cx, IR_OP_STRIDED_SLICE, 1, &y, &at);
    }
    for (int i = 0; y && i < nd; i++) {
        if (!backwards[i])
            continue;
        int64_t cnt = b[i] > e[i] ? (b[i] - e[i] - 1) / -st[i] + 1 : 0;
        int64_t *idx = su_malloc(sizeof *idx * (size_t)(cnt ? cnt : 1));
        for (int64_t j = 0; j < cnt; j++)
            idx[j] = b[i] + j * st[i];
        y = take_axis(cx, y, (int)cnt, idx, i);
        free(idx);
    }
    out[0] = y;
    return y != NULL;
}

/* The axes of Squeeze/Unsqueeze: the attribute before opset 13, the
 * optional input from it; -1 after reporting, *n = 0 when absent. */
static bool squeeze_axes(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, int64_t *axes, int *na)
{
    if (cx->opset >= 13) {
        *na = nin > 1 && in[1] ? ox_const_ints(cx, in[1], "axes", axes, IR_MAX_DIMS) : 0;
        return *na >= 0;
    }
    *na = ox_attr_ints(cx, n, "axes", axes, IR_MAX_DIMS);
    if (*na < 0)
        *na = 0;
    return true;
}

bool ox_conv_squeeze(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    const ir_type *t = ox_type(in[0]);
    int64_t axes[IR_MAX_DIMS], s[IR_MAX_DIMS];
    int na, ns = 0;
    if (!squeeze_axes(cx, n, in, nin, axes, &na))
        return false;
    bool drop[IR_MAX_DIMS] = {0};
    for (int i = 0; i < na; i++) {
        int a;
        if (!ox_axis(cx, axes[i], t->ndim, &a))
            return false;
        if (t->shape[a] != 1)
            return ox_fail(cx, "axis %d has extent %lld, not 1", a, (long long)t->shape[a]);
        drop[a] = true;
    }
    for (int i = 0; i < t->ndim; i++)
        if (!(na ? drop[i] : t->shape[i] == 1))
            s[ns++] = t->shape[i];
    out[0] = ox_reshape(cx, in[0], ns, s);
    return out[0] != NULL;
}

bool ox_conv_unsqueeze(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    const ir_type *t = ox_type(in[0]);
    int64_t axes[IR_MAX_DIMS], s[IR_MAX_DIMS];
    int na;
    if (!squeeze_axes(cx, n, in, nin, axes, &na))
        return false;
    if (na == 0)
        return ox_fail(cx, "Unsqueeze needs axes");
    int nd = t->ndim + na;
    if (nd > IR_MAX_DIMS)
        return ox_fail(cx, "result of rank %d (at most %d is supported)", nd, IR_MAX_DIMS);
    bool added[IR_MAX_DIMS] = {0};
    for (int i = 0; i < na; i++) {
        int a;
        if (!ox_axis(cx, axes[i], nd, &a))
            return false;
        if (added[a])
            return ox_fail(cx, "axis %d is given twice", a);
        added[a] = true;
    }
    for (int i = 0, k = 0; i < nd; i++)
        s[i] = added[i] ? 1 : t->shape[k++];
    out[0] = ox_reshape(cx, in[0], nd, s);
    return out[0] != NULL;
}

bool ox_conv_gather(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    const ir_type *t = ox_type(in[0]);
    int axis;
    if (nin != 2 || !in[1])
        return ox_fail(cx, "Gather needs data and indices");
    if (!ox_axis(cx, ox_attr_int(n, "axis", 0), t->ndim, &axis))
        return false;
    ir_expr *idx = in[1];
    const char *mode = "wrap";  /* ONNX's negative indices count from the end, as wrap does */
    const ir_tensor *iv = ox_value(idx);
    if (iv) {
        /* constant indices: checked here, so that a bad one is an import error */
        ir_tensor *c = ir_tensor_new(&cx->m->arena, IR_INT64, iv->ndim, iv->shape);
        int64_t dim = t->shape[axis];
        for (int64_t i = 0; i < ir_tensor_numel(iv); i++) {
            int64_t v = ir_tensor_get_i64(iv, i);
            if (v < -dim || v >= dim)
                return ox_fail(cx, "index %lld is out of range for axis %d of extent %lld", (long long)v, axis,
                               (long long)dim);
            ir_tensor_set_i64(c, i, v < 0 ? v + dim : v);
        }
        idx = ox_const(cx, c);
        mode = "fast";
    }
    ox_attrs at = ox_attrs_new(cx, IR_OP_TAKE);
    ox_set_int(&at, IR_TAKE_AXIS, axis);
    ox_set_str(&at, IR_TAKE_MODE, mode);
    ir_expr *args[2] = {in[0], idx};
    out[0] = ox_call(cx, IR_OP_TAKE, 2, args, &at);
    return out[0] != NULL;
}

bool ox_conv_expand(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    const ir_type *t = ox_type(in[0]);
    int64_t s[IR_MAX_DIMS], r[IR_MAX_DIMS];
    int ns = nin > 1 ? ox_const_ints(cx, in[1], "shape", s, IR_MAX_DIMS) : -1;
    if (ns < 0)
        return false;
    /* bidirectional broadcast of the input's shape and the given one */
    int nd = ns > t->ndim ? ns : t->ndim;
    for (int i = 0; i < nd; i++) {
        int it = i - (nd - t->ndim), is = i - (nd - ns);
        int64_t a = it >= 0 ? t->shape[it] : 1, b = is >= 0 ? s[is] : 1;
        if (a != b && a != 1 && b != 1)
            return ox_fail(cx, "shape %lld does not broadcast with the input's %lld at axis %d", (long long)b,
                           (long long)a, i);
        if (b < 0)
            return ox_fail(cx, "negative shape value %lld", (long long)b);
        r[i] = a == 1 ? b : a;
    }
    if (!ox_check_shape(cx, nd, r, "the expanded shape"))
        return false;
    out[0] = ox_broadcast_to(cx, in[0], nd, r);
    return out[0] != NULL;
}

bool ox_conv_tile(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    const ir_type *t = ox_type(in[0]);
    int64_t reps[IR_MAX_DIMS];
    int nr = nin > 1 ? ox_const_ints(cx, in[1], "repeats", reps, IR_MAX_DIMS) : -1;
    if (nr < 0)
        return false;
    if (nr != t->ndim)
        return ox_fail(cx, "repeats has %d values for rank %d", nr, t->ndim);
    ir_expr *y = in[0];
    for (int i = 0; y && i < nr; i++) {
        if (reps[i] < 1 || reps[i] > 4096)
            return ox_fail(cx, "repeat %lld is not in [1, 4096]", (long long)reps[i]);
        ir_expr **copies = su_malloc(sizeof *copies * (size_t)reps[i]);
        for (int64_t j = 0; j < reps[i]; j++)
            copies[j] = y;
        y = concat(cx, (int)reps[i], copies, i);
        free(copies);
    }
    out[0] = y;
    return y != NULL;
}

bool ox_conv_pad(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    const ir_type *t = ox_type(in[0]);
    int64_t pads[2 * IR_MAX_DIMS];
    double value = 0;
    int np;
    if (cx->opset < 11) {
        np = ox_attr_ints(cx, n, "pads", pads, 2 * IR_MAX_DIMS);
        value = ox_attr_float(n, "value", 0);
    } else {
        np = nin > 1 ? ox_const_ints(cx, in[1], "pads", pads, 2 * IR_MAX_DIMS) : -1;
        if (np < 0)
            return nin > 1 ? false : ox_fail(cx, "Pad needs pads");
        if (nin > 2 && in[2] && !ox_const_scalar(cx, in[2], "constant_value", &value))
            return false;
        if (nin > 3 && in[3])
            return ox_fail(cx, "the axes input is not supported");
    }
    if (np != 2 * t->ndim)
        return ox_fail(cx, "pads has %d values for rank %d", np, t->ndim);
    const char *mode = ox_attr_str(cx, n, "mode", "constant");
    if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge"))
        return ox_fail(cx, "pad mode '%s' is not supported", mode);
    ir_attr_val *rows = su_arena_alloc(&cx->m->arena, sizeof *rows * (size_t)(t->ndim ? t->ndim : 1));
    ox_attrs at = ox_attrs_new(cx, IR_OP_PAD);
    for (int i = 0; i < t->ndim; i++) {
        if (pads[i] < 0 || pads[i + t->ndim] < 0)
            return ox_fail(cx, "negative pads (cropping) are not supported");
        ox_set_ints(cx, &at, IR_PAD_WIDTH, 2, (int64_t[2]){pads[i], pads[i + t->ndim]});
        rows[i] = at.v[IR_PAD_WIDTH];
    }
    at.v[IR_PAD_WIDTH] = (ir_attr_val){.kind = IR_AV_LIST, .n = t->ndim, .items = rows};
    ox_set_str(&at, IR_PAD_MODE, mode);
    ir_expr *args[2] = {in[0], ox_scalar(cx, t->dtype, value)};
    out[0] = ox_call(cx, IR_OP_PAD, 2, args, &at);
    return out[0] != NULL;
}

/* reshape → transpose → reshape, the form both ops take. */
static ir_expr *shuffle(ox_ctx *cx, ir_expr *x, const int64_t s6[6], const int64_t perm[6], const int64_t s4[4])
{
    return ox_reshape(cx, ox_transpose(cx, ox_reshape(cx, x, 6, s6), 6, perm), 4, s4);
}

bool ox_conv_depth_to_space(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out,
                            int nout)
{
    const ir_type *t = ox_type(in[0]);
    int64_t b = ox_attr_int(n, "blocksize", 0);
    if (t->ndim != 4 || b < 1 || t->shape[1] % (b * b))
        return ox_fail(cx, "needs a rank-4 input whose channels divide by blocksize^2");
    int64_t N = t->shape[0], C = t->shape[1] / (b * b), H = t->shape[2], W = t->shape[3];
    int64_t s4[4] = {N, C, H * b, W * b};
    bool crd = !strcmp(ox_attr_str(cx, n, "mode", "DCR"), "CRD");
    int64_t dcr6[6] = {N, b, b, C, H, W}, dcrp[6] = {0, 3, 4, 1, 5, 2};
    int64_t crd6[6] = {N, C, b, b, H, W}, crdp[6] = {0, 1, 4, 2, 5, 3};
    out[0] = crd ? shuffle(cx, in[0], crd6, crdp, s4) : shuffle(cx, in[0], dcr6, dcrp, s4);
    return out[0] != NULL;
}

bool ox_conv_space_to_depth(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out,
                            int nout)
{
    const ir_type *t = ox_type(in[0]);
    int64_t b = ox_attr_int(n, "blocksize", 0);
    if (t->ndim != 4 || b < 1 || t->shape[2] % b || t->shape[3] % b)
        return ox_fail(cx, "needs a rank-4 input whose height and width divide by blocksize");
    int64_t N = t->shape[0], C = t->shape[1], H = t->shape[2] / b, W = t->shape[3] / b;
    int64_t s6[6] = {N, C, H, b, W, b}, p[6] = {0, 3, 5, 1, 2, 4}, s4[4] = {N, C * b * b, H, W};
    out[0] = shuffle(cx, in[0], s6, p, s4);
    return out[0] != NULL;
}

bool ox_conv_eye_like(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    const ir_type *t = ox_type(in[0]);
    if (t->ndim != 2)
        return ox_fail(cx, "input of rank %d (EyeLike takes a matrix)", t->ndim);
    ir_dtype dt = t->dtype;
    const Onnx__AttributeProto *a = ox_attr(n, "dtype");
    if (a && a->has_i && !ox_dtype((int32_t)a->i, &dt))
        return ox_fail(cx, "dtype %lld is not supported", (long long)a->i);
    int64_t k = ox_attr_int(n, "k", 0);
    if (ir_type_numel(t) > OX_MAX_CONST)
        return ox_fail(cx, "a %lld x %lld matrix is too large to build", (long long)t->shape[0], (long long)t->shape[1]);
    ir_tensor *e = ir_tensor_new(&cx->m->arena, dt, 2, t->shape);
    for (int64_t i = 0; i < t->shape[0]; i++)
        if (i + k >= 0 && i + k < t->shape[1])
            ir_tensor_set(e, i * t->shape[1] + i + k, 1);
    out[0] = ox_const(cx, e);
    return out[0] != NULL;
}

/* where(mask, x, 0) with the triangle of the last two axes as a constant mask. */
bool ox_conv_trilu(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    const ir_type *t = ox_type(in[0]);
    if (t->ndim < 2)
        return ox_fail(cx, "input of rank %d (at least 2 is needed)", t->ndim);
    double kd = 0;
    if (nin > 1 && in[1] && !ox_const_scalar(cx, in[1], "k", &kd))
        return false;
    int64_t k = (int64_t)kd, r = t->shape[t->ndim - 2], c = t->shape[t->ndim - 1];
    if (r * c > OX_MAX_CONST)
        return ox_fail(cx, "a %lld x %lld mask is too large to build", (long long)r, (long long)c);
    bool upper = ox_attr_int(n, "upper", 1) != 0;
    int64_t s[2] = {r, c};
    ir_tensor *mask = ir_tensor_new(&cx->m->arena, IR_BOOL, 2, s);
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++)
            ((uint8_t *)mask->data)[i * c + j] = upper ? j - i >= k : j - i <= k;
    ir_expr *args[3] = {ox_const(cx, mask), in[0], ox_scalar(cx, t->dtype, 0)};
    out[0] = ox_call(cx, IR_OP_WHERE, 3, args, NULL);
    return out[0] != NULL;
}

/* Range of constant scalars, computed here. */
bool ox_conv_range(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out, int nout)
{
    double v[3];
    static const char *names[3] = {"start", "limit", "delta"};
    for (int i = 0; i < 3; i++)
        if (nin <= i || !in[i] || !ox_const_scalar(cx, in[i], names[i], &v[i]))
            return nin <= i || !in[i] ? ox_fail(cx, "Range needs start, limit and delta") : false;
    if (v[2] == 0)
        return ox_fail(cx, "delta is 0");
    double cnt = ceil((v[1] - v[0]) / v[2]);
    if (!(cnt < (double)OX_MAX_CONST))
        return ox_fail(cx, "the range has too many elements");
    int64_t len = cnt > 0 ? (int64_t)cnt : 0;
    ir_dtype dt = ox_type(in[0])->dtype;
    ir_tensor *t = ir_tensor_new(&cx->m->arena, dt, 1, &len);
    for (int64_t i = 0; i < len; i++) {
        if (ir_dtype_is_int(dt))
            ir_tensor_set_i64(t, i, ir_tensor_get_i64(ox_value(in[0]), 0) + i * ir_tensor_get_i64(ox_value(in[2]), 0));
        else
            ir_tensor_set(t, i, v[0] + (double)i * v[2]);
    }
    out[0] = ox_const(cx, t);
    return out[0] != NULL;
}
