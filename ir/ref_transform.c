/* ref_transform.c — reference kernels of the data-movement ops
 * (op_transform.c's family, plus nn.pad and nn.batch_flatten): reshape-like
 * copies, transpose, concatenate, split, strided_slice, take and pad.
 *
 * None of them computes: they move whole elements, so every kernel works on
 * bytes and serves every dtype at once. Shapes were checked by the type
 * relations; the kernels re-derive what they need from the attributes with
 * the same rules (negative axes count from the end, slices clamp as numpy
 * does) and check only values: an index out of range in take's "fast" mode
 * is an error here, where TVM would read out of bounds. */
#include <string.h>

#include "ir/ir.h"

#define PAR_MIN_BYTES (1 << 20)

/* Copies one element of es bytes (the common sizes as typed moves). */
static inline void move(uint8_t *d, const uint8_t *s, size_t es)
{
    switch (es) {
    case 1: *d = *s; break;
    case 2: memcpy(d, s, 2); break;
    case 4: memcpy(d, s, 4); break;
    case 8: memcpy(d, s, 8); break;
    default: memcpy(d, s, es);
    }
}

/* Contiguous element strides of a tensor. */
static void strides_of(const ir_tensor *t, int64_t *st)
{
    int64_t s = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        st[i] = s;
        s *= t->shape[i];
    }
}

static int norm_axis(int64_t axis, int ndim)
{
    return (int)(axis < 0 ? axis + ndim : axis);
}

/* Fills o in C order from src, where output index (i0, i1, ...) reads the
 * element at base + sum(ik * st[k]) (in elements). Transpose and
 * strided_slice are both this walk. */
static void gather(ir_tensor *o, const uint8_t *src, int64_t base, const int64_t *st)
{
    int nd = o->ndim;
    size_t es = (size_t)ir_dtype_bytes(o->dtype);
    int64_t n = ir_tensor_numel(o);
    if (n == 0)
        return;
    if (nd == 0) {
        move(o->data, src + base * (int64_t)es, es);
        return;
    }
    int64_t len = o->shape[nd - 1], rows = n / len, inner = st[nd - 1];
    uint8_t *dst = o->data;
#pragma omp parallel for if ((size_t)n * es > PAR_MIN_BYTES)
    for (int64_t r = 0; r < rows; r++) {
        int64_t off = base, rest = r;
        for (int i = nd - 2; i >= 0; i--) {
            off += rest % o->shape[i] * st[i];
            rest /= o->shape[i];
        }
        uint8_t *d = dst + r * len * (int64_t)es;
        if (inner == 1) {
            memcpy(d, src + off * (int64_t)es, (size_t)len * es);
            continue;
        }
        for (int64_t j = 0; j < len; j++)
            move(d + j * (int64_t)es, src + (off + j * inner) * (int64_t)es, es);
    }
}

/* reshape, squeeze, expand_dims, nn.batch_flatten, copy: the data in C
 * order is unchanged, only the shape differs. */
bool ir_ref_copy(const ir_ref_call *c)
{
    memcpy(c->out[0]->data, c->in[0]->data, ir_tensor_nbytes(c->out[0]));
    return true;
}

/* axes None reverses the axes; output axis i is input axis axes[i]. */
bool ir_ref_transpose(const ir_ref_call *c)
{
    const ir_tensor *a = c->in[0];
    int64_t axes[IR_MAX_DIMS], ist[IR_MAX_DIMS], st[IR_MAX_DIMS];
    int n = ir_attr_is_none(c->attrs, IR_TRANSPOSE_AXES) ? 0
                                                          : ir_attr_ints(c->attrs, IR_TRANSPOSE_AXES, axes, IR_MAX_DIMS);
    strides_of(a, ist);
    for (int i = 0; i < a->ndim; i++)
        st[i] = ist[n ? norm_axis(axes[i], a->ndim) : a->ndim - 1 - i];
    gather(c->out[0], a->data, 0, st);
    return true;
}

/* Bytes of one "slab" below axis: the product of the extents after it. */
static int64_t slab_bytes(const ir_tensor *t, int axis)
{
    int64_t n = ir_dtype_bytes(t->dtype);
    for (int i = axis + 1; i < t->ndim; i++)
        n *= t->shape[i];
    return n;
}

static int64_t outer_count(const ir_tensor *t, int axis)
{
    int64_t n = 1;
    for (int i = 0; i < axis; i++)
        n *= t->shape[i];
    return n;
}

/* The argument is a tuple, flattened: nin tensors joined along axis. */
bool ir_ref_concatenate(const ir_ref_call *c)
{
    ir_tensor *o = c->out[0];
    int axis = norm_axis(ir_attr_int(c->attrs, IR_CONCAT_AXIS), o->ndim);
    int64_t outer = outer_count(o, axis), slab = slab_bytes(o, axis), row = o->shape[axis] * slab;
    uint8_t *dst = o->data;
    int64_t at = 0;
    for (int k = 0; k < c->nin; k++) {
        const ir_tensor *t = c->in[k];
        int64_t part = t->shape[axis] * slab;
        for (int64_t i = 0; i < outer && part; i++)
            memcpy(dst + i * row + at, (const uint8_t *)t->data + i * part, (size_t)part);
        at += part;
    }
    return true;
}

/* The result is a tuple, flattened: nout tensors cut along axis. */
bool ir_ref_split(const ir_ref_call *c)
{
    const ir_tensor *a = c->in[0];
    int axis = norm_axis(ir_attr_int(c->attrs, IR_SPLIT_AXIS), a->ndim);
    int64_t outer = outer_count(a, axis), slab = slab_bytes(a, axis), row = a->shape[axis] * slab;
    const uint8_t *src = a->data;
    int64_t at = 0;
    for (int k = 0; k < c->nout; k++) {
        ir_tensor *t = c->out[k];
        int64_t part = t->shape[axis] * slab;
        for (int64_t i = 0; i < outer && part; i++)
            memcpy((uint8_t *)t->data + i * part, src + i * row + at, (size_t)part);
        at += part;
    }
    return true;
}

/* begin/end/strides (optionally for the listed axes) as numpy slices; in
 * "size" mode end is a length and strides are 1. The output's extents are
 * the relation's; only where each axis starts and how it steps matter. */
bool ir_ref_strided_slice(const ir_ref_call *c)
{
    const ir_tensor *a = c->in[0];
    int nd = a->ndim;
    int64_t vb[IR_MAX_DIMS], vs[IR_MAX_DIMS], va[IR_MAX_DIMS], ve[IR_MAX_DIMS];
    const ir_attrs *at = c->attrs;
    int nb = ir_attr_is_none(at, IR_SLICE_BEGIN) ? 0 : ir_attr_ints(at, IR_SLICE_BEGIN, vb, IR_MAX_DIMS);
    int ne = ir_attr_is_none(at, IR_SLICE_END) ? 0 : ir_attr_ints(at, IR_SLICE_END, ve, IR_MAX_DIMS);
    int ns = ir_attr_is_none(at, IR_SLICE_STRIDES) ? 0 : ir_attr_ints(at, IR_SLICE_STRIDES, vs, IR_MAX_DIMS);
    bool has_axes = !ir_attr_is_none(at, IR_SLICE_AXES);
    int na = has_axes ? ir_attr_ints(at, IR_SLICE_AXES, va, IR_MAX_DIMS) : nd;
    bool size_mode = strcmp(ir_attr_str(at, IR_SLICE_MODE), "size") == 0;
    int64_t b[IR_MAX_DIMS], s[IR_MAX_DIMS], ist[IR_MAX_DIMS], st[IR_MAX_DIMS], base = 0;
    for (int i = 0; i < nd; i++)
        b[i] = 0, s[i] = 1;
    for (int j = 0; j < na; j++) {
        int ax = has_axes ? norm_axis(va[j], nd) : j;
        s[ax] = j < ns ? vs[j] : 1;
        if (size_mode && j < ne)
            s[ax] = 1;
        b[ax] = j < nb ? vb[j] : s[ax] > 0 ? 0 : INT64_MAX;
    }
    strides_of(a, ist);
    for (int i = 0; i < nd; i++) {
        int64_t n = a->shape[i], lo = s[i] > 0 ? 0 : -1, hi = s[i] > 0 ? n : n - 1;
        b[i] = b[i] < 0 ? b[i] + n : b[i];
        b[i] = b[i] < lo ? lo : b[i] > hi ? hi : b[i];
        base += b[i] * ist[i];
        st[i] = s[i] * ist[i];
    }
    gather(c->out[0], a->data, base, st);
    return true;
}

/* take(data, indices): axis None indexes the flattened data. Otherwise the
 * result is data.shape[:axis] + indices.shape[batch_dims:] +
 * data.shape[axis+1:], where the first batch_dims axes of data and indices
 * go together. Indices are clipped (mode "clip", TVM's default: negative ones
 * become 0), wrapped (mode "wrap", as Python's %), or must be in range
 * (mode "fast"). */
bool ir_ref_take(const ir_ref_call *c)
{
    const ir_tensor *d = c->in[0], *ix = c->in[1];
    ir_tensor *o = c->out[0];
    const char *mode = ir_attr_str(c->attrs, IR_TAKE_MODE);
    bool clip = strcmp(mode, "clip") == 0, wrap = strcmp(mode, "wrap") == 0;
    bool flat = ir_attr_is_none(c->attrs, IR_TAKE_AXIS);
    int axis = flat ? 0 : norm_axis(ir_attr_int(c->attrs, IR_TAKE_AXIS), d->ndim);
    int64_t bd = flat ? 0 : ir_attr_int(c->attrs, IR_TAKE_BATCH_DIMS);
    bd = bd < 0 ? bd + ix->ndim : bd;
    size_t es = (size_t)ir_dtype_bytes(d->dtype);
    /* batch B, before P, index I, extent N and slab Q (bytes) */
    int64_t B = 1, P = 1, I = 1, N = flat ? ir_tensor_numel(d) : d->shape[axis], Q = flat ? (int64_t)es : slab_bytes(d, axis);
    for (int i = 0; !flat && i < axis; i++)
        *(i < bd ? &B : &P) *= d->shape[i];
    for (int i = (int)bd; i < ix->ndim; i++)
        I *= ix->shape[i];
    if (ir_tensor_numel(o) == 0)
        return true;
    if (N == 0) {
        su_buf_printf(c->err, "cannot take from %s of extent 0", flat ? "flattened data" : "an axis");
        return false;
    }
    const uint8_t *src = d->data;
    uint8_t *dst = o->data;
    for (int64_t bi = 0; bi < B; bi++)
        for (int64_t i = 0; i < I; i++) {
            int64_t k = ir_tensor_get_i64(ix, bi * I + i);
            if (clip)
                k = k < 0 ? 0 : k >= N ? N - 1 : k;
            else if (wrap)
                k = (k % N + N) % N;
            else if (k < 0 || k >= N) {
                su_buf_printf(c->err, "index %lld is out of range for %s of extent %lld (mode=\"fast\" does not "
                              "clip)", (long long)k, flat ? "the flattened data" : "the axis", (long long)N);
                return false;
            }
            for (int64_t p = 0; p < P; p++)
                memcpy(dst + ((bi * P + p) * I + i) * Q, src + ((bi * P + p) * N + k) * Q, (size_t)Q);
        }
    return true;
}

/* Source index along an axis of extent n for padded index i (may lie
 * outside [0, n)); -1 means "the pad value". */
static int64_t pad_source(int64_t i, int64_t n, int mode)
{
    if (i >= 0 && i < n)
        return i;
    if (mode == 0)
        return -1;
    if (mode == 1)
        return i < 0 ? 0 : n - 1;
    if (n == 1)
        return 0;
    int64_t period = 2 * (n - 1), m = i % period;
    m = m < 0 ? m + period : m;
    return m < n ? m : period - m;
}

/* nn.pad: constant (with the optional scalar argument, else 0), edge
 * (repeat the border) or reflect (mirror without repeating the border, as
 * numpy's "reflect"). */
bool ir_ref_pad(const ir_ref_call *c)
{
    const ir_tensor *a = c->in[0];
    ir_tensor *o = c->out[0];
    const char *ms = ir_attr_str(c->attrs, IR_PAD_MODE);
    int mode = strcmp(ms, "edge") == 0 ? 1 : strcmp(ms, "reflect") == 0 ? 2 : 0;
    const ir_attr_val *pw = ir_attr_get(c->attrs, IR_PAD_WIDTH);
    int nd = a->ndim;
    int64_t before[IR_MAX_DIMS], ist[IR_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        before[i] = pw->items[i].items[0].i;
        if (mode && a->shape[i] == 0 && o->shape[i] > 0) {
            su_buf_printf(c->err, "cannot pad axis %d of extent 0 in %s mode", i, ms);
            return false;
        }
    }
    size_t es = (size_t)ir_dtype_bytes(o->dtype);
    _Alignas(8) uint8_t value[8] = {0};
    if (c->nin > 1) {
        ir_tensor tmp = {o->dtype, 0, NULL, value};
        ir_tensor_set(&tmp, 0, ir_tensor_get(c->in[1], 0));
    }
    strides_of(a, ist);
    int64_t n = ir_tensor_numel(o);
    if (n == 0)
        return true;
    if (nd == 0) {
        memcpy(o->data, a->data, es);
        return true;
    }
    int64_t len = o->shape[nd - 1], rows = n / len;
    const uint8_t *src = a->data;
    uint8_t *dst = o->data;
    for (int64_t r = 0; r < rows; r++) {
        int64_t off = 0, rest = r;
        bool outside = false;
        for (int i = nd - 2; i >= 0; i--) {
            int64_t k = pad_source(rest % o->shape[i] - before[i], a->shape[i], mode);
            rest /= o->shape[i];
            outside = outside || k < 0;
            off += k * ist[i];
        }
        uint8_t *d = dst + r * len * (int64_t)es;
        for (int64_t j = 0; j < len; j++) {
            int64_t k = outside ? -1 : pad_source(j - before[nd - 1], a->shape[nd - 1], mode);
            move(d + j * (int64_t)es, k < 0 ? value : src + (off + k) * (int64_t)es, es);
        }
    }
    return true;
}
