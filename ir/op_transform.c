/* op_transform.c — shape manipulation: reshape, transpose, squeeze,
 * expand_dims, concatenate, split, strided_slice and take. None of them
 * computes anything (their FLOP count is zero); their relations are where
 * shape errors of imported models surface, so every message names the data's
 * shape and the attribute that does not fit it. */
#include <string.h>

#include "ir/ir.h"

/* ---- schemas ------------------------------------------------------------ */

/* TVM requires newshape; [] (a scalar) stands in as its default. */
const ir_attr_schema ir_schema_reshape = IR_SCHEMA(
    {"newshape", IR_AT_INTS, "[]", true},
    {"allowzero", IR_AT_BOOL, "False"});

const ir_attr_schema ir_schema_transpose = IR_SCHEMA({"axes", IR_AT_INTS_OPT, "None"});

const ir_attr_schema ir_schema_squeeze = IR_SCHEMA({"axis", IR_AT_INTS_OPT, "None"});

const ir_attr_schema ir_schema_expand_dims = IR_SCHEMA(
    {"axis", IR_AT_INT, "0", true},
    {"num_newaxis", IR_AT_INT, "1"});

const ir_attr_schema ir_schema_concatenate = IR_SCHEMA({"axis", IR_AT_INT, "0"});

const ir_attr_schema ir_schema_split = IR_SCHEMA(
    {"indices_or_sections", IR_AT_INT_OR_INTS, "1", true},
    {"axis", IR_AT_INT, "0"});

/* TVM's field order: slice_mode comes before axes. */
const ir_attr_schema ir_schema_strided_slice = IR_SCHEMA(
    {"begin", IR_AT_INTS_OPT, "None", true},
    {"end", IR_AT_INTS_OPT, "None", true},
    {"strides", IR_AT_INTS_OPT, "None"},
    {"slice_mode", IR_AT_STR, "\"end\""},
    {"axes", IR_AT_INTS_OPT, "None"});

const ir_attr_schema ir_schema_take = IR_SCHEMA(
    {"batch_dims", IR_AT_INT, "0"},
    {"axis", IR_AT_INT_OPT, "None"},
    {"mode", IR_AT_STR, "\"clip\""});

/* ---- helpers ------------------------------------------------------------ */

/* "[2, -1, 3]" for messages. */
static const char *ints_str(su_arena *a, int n, const int64_t *v)
{
    su_buf b = {0};
    su_buf_putc(&b, '[');
    for (int i = 0; i < n; i++)
        su_buf_printf(&b, "%s%lld", i ? ", " : "", (long long)v[i]);
    su_buf_putc(&b, ']');
    const char *s = su_arena_strdup(a, su_buf_str(&b));
    su_buf_free(&b);
    return s;
}

/* An optional integer-list attribute: None reads as no entries. */
static bool opt_ints(ir_rel_ctx *cx, const ir_attrs *at, int idx, const char *name, int64_t *out, int *n)
{
    *n = ir_attr_is_none(at, idx) ? 0 : ir_attr_ints(at, idx, out, IR_MAX_DIMS);
    if (*n < 0) {
        ir_rel_error(cx, "%s must be at most %d integers", name, IR_MAX_DIMS);
        return false;
    }
    return true;
}

/* ---- reshape ------------------------------------------------------------ */

/* Decodes newshape against the data's shape. Codes as in TVM: 0 copies the
 * next input axis (or is a real 0 with allowzero), -1 is inferred from the
 * element count, -2 copies all remaining axes, -3 merges the next two axes,
 * -4 a b splits the next axis into a x b (one of them may be -1). */
static bool reshape_decode(ir_rel_ctx *cx, const ir_type *d, const int64_t *ns, int n, bool allowzero,
                           int64_t *out, int *nout, int *infer)
{
    int no = 0, src = 0;
    const char *why = NULL;
    *infer = -1;
    for (int i = 0; i < n && !why; i++) {
        int64_t v = ns[i];
        if (no + (v == -2 ? d->ndim - src : v == -4 ? 2 : 1) > IR_MAX_DIMS) {
            why = "too many dimensions";
            break;
        }
        switch (v) {
        case 0:
            if (allowzero || src < d->ndim)
                out[no++] = allowzero ? 0 : d->shape[src];
            else
                why = "0 copies an axis past the input's last";
            src++;
            break;
        case -1:
            if (*infer >= 0)
                why = "more than one -1";
            *infer = no;
            out[no++] = 1;
            src++;
            break;
        case -2:
            while (src < d->ndim)
                out[no++] = d->shape[src++];
            break;
        case -3:
            if (src + 2 > d->ndim) {
                why = "-3 merges axes past the input's last";
                break;
            }
            out[no++] = d->shape[src] * d->shape[src + 1];
            src += 2;
            break;
        case -4: {
            if (i + 2 >= n || src >= d->ndim) {
                why = "-4 needs two values and an input axis to split";
                break;
            }
            int64_t dim = d->shape[src++], a = ns[i + 1], b = ns[i + 2];
            i += 2;
            a = a == -1 && b > 0 ? dim / b : a;
            b = b == -1 && a > 0 ? dim / a : b;
            if (a <= 0 || b <= 0 || a > dim || b > dim || a * b != dim)
                why = "-4 does not split its axis exactly";
            out[no++] = a;
            out[no++] = b;
            break;
        }
        default:
            if (v < 0)
                why = "unknown code";
            out[no++] = v;
            src++;
        }
    }
    if (why) {
        ir_rel_error(cx, "newshape %s does not apply to data %s: %s", ints_str(cx->arena, n, ns),
                     ir_shape_str(cx->arena, d), why);
        return false;
    }
    *nout = no;
    return true;
}

const ir_type *ir_rel_reshape(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                              const ir_attrs *attrs)
{
    const ir_type *d = ir_rel_tensor(cx, args, 0);
    int64_t ns[2 * IR_MAX_DIMS], out[IR_MAX_DIMS];
    int n, no, infer;
    if (!d)
        return NULL;
    n = ir_attr_ints(attrs, IR_RESHAPE_NEWSHAPE, ns, 2 * IR_MAX_DIMS);
    if (n < 0)
        return ir_rel_error(cx, "newshape must be a list of at most %d integers", 2 * IR_MAX_DIMS);
    if (!reshape_decode(cx, d, ns, n, ir_attr_bool(attrs, IR_RESHAPE_ALLOWZERO), out, &no, &infer))
        return NULL;
    /* The product of the known extents; -1 once it overflows, which cannot
     * match any real element count. */
    int64_t numel = ir_type_numel(d), known = 1;
    for (int i = 0; i < no; i++)
        if (i != infer && known >= 0 && __builtin_mul_overflow(known, out[i], &known))
            known = -1;
    if (infer >= 0 && known > 0)
        out[infer] = numel % known == 0 ? numel / known : -1;
    if (known < 0 || (infer >= 0 && (known == 0 || out[infer] < 0)) || (infer < 0 && known != numel)) {
        const char *why = known < 0 ? "over 2^63 elements"
                          : infer >= 0 ? "no whole extent fits -1"
                          : su_arena_printf(cx->arena, "%lld elements", (long long)known);
        return ir_rel_error(cx, "cannot reshape data %s (%lld elements) to newshape %s (%s)",
                            ir_shape_str(cx->arena, d), (long long)numel, ints_str(cx->arena, n, ns), why);
    }
    return ir_tensor_type(cx->arena, d->dtype, no, out);
}

/* ---- transpose, squeeze, expand_dims ------------------------------------ */

/* axes None (or []) reverses the axes; otherwise a permutation of them. */
const ir_type *ir_rel_transpose(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                                const ir_attrs *attrs)
{
    const ir_type *d = ir_rel_tensor(cx, args, 0);
    int64_t axes[IR_MAX_DIMS], shape[IR_MAX_DIMS];
    int n;
    bool seen[IR_MAX_DIMS] = {false};
    if (!d || !opt_ints(cx, attrs, IR_TRANSPOSE_AXES, "axes", axes, &n))
        return NULL;
    if (n != 0 && n != d->ndim)
        return ir_rel_error(cx, "axes %s must name each of the %d axes of data %s once",
                            ints_str(cx->arena, n, axes), d->ndim, ir_shape_str(cx->arena, d));
    for (int i = 0; i < d->ndim; i++) {
        int ax = d->ndim - 1 - i;
        if (n && !ir_rel_axis(cx, axes[i], d->ndim, &ax))
            return NULL;
        if (seen[ax])
            return ir_rel_error(cx, "axes %s name axis %d twice", ints_str(cx->arena, n, axes), ax);
        seen[ax] = true;
        shape[i] = d->shape[ax];
    }
    return ir_tensor_type(cx->arena, d->dtype, d->ndim, shape);
}

/* axis None drops every axis of extent 1; named axes must have extent 1. */
const ir_type *ir_rel_squeeze(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                              const ir_attrs *attrs)
{
    const ir_type *d = ir_rel_tensor(cx, args, 0);
    int64_t axes[IR_MAX_DIMS], shape[IR_MAX_DIMS];
    bool drop[IR_MAX_DIMS] = {false};
    int n, no = 0;
    if (!d || !opt_ints(cx, attrs, IR_SQUEEZE_AXIS, "axis", axes, &n))
        return NULL;
    for (int i = 0; i < d->ndim; i++)
        drop[i] = ir_attr_is_none(attrs, IR_SQUEEZE_AXIS) && d->shape[i] == 1;
    for (int i = 0; i < n; i++) {
        int ax;
        if (!ir_rel_axis(cx, axes[i], d->ndim, &ax))
            return NULL;
        if (d->shape[ax] != 1)
            return ir_rel_error(cx, "cannot squeeze axis %d of data %s: its extent is %lld, not 1", ax,
                                ir_shape_str(cx->arena, d), (long long)d->shape[ax]);
        drop[ax] = true;
    }
    for (int i = 0; i < d->ndim; i++)
        if (!drop[i])
            shape[no++] = d->shape[i];
    return ir_tensor_type(cx->arena, d->dtype, no, shape);
}

/* Inserts num_newaxis axes of extent 1 before axis (in [-ndim-1, ndim]). */
const ir_type *ir_rel_expand_dims(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                                  const ir_attrs *attrs)
{
    const ir_type *d = ir_rel_tensor(cx, args, 0);
    if (!d)
        return NULL;
    int64_t axis = ir_attr_int(attrs, IR_EXPAND_DIMS_AXIS), k = ir_attr_int(attrs, IR_EXPAND_DIMS_NUM_NEWAXIS);
    if (axis < -d->ndim - 1 || axis > d->ndim)
        return ir_rel_error(cx, "axis %lld is out of range [%d, %d] for data %s", (long long)axis,
                            -d->ndim - 1, d->ndim, ir_shape_str(cx->arena, d));
    int at = (int)(axis < 0 ? axis + d->ndim + 1 : axis);
    if (k < 0 || d->ndim + k > IR_MAX_DIMS)
        return ir_rel_error(cx, "num_newaxis=%lld does not fit data %s (at most rank %d)", (long long)k,
                            ir_shape_str(cx->arena, d), IR_MAX_DIMS);
    int64_t shape[IR_MAX_DIMS];
    int no = 0;
    for (int i = 0; i <= d->ndim; i++) {
        for (int j = 0; i == at && j < k; j++)
            shape[no++] = 1;
        if (i < d->ndim)
            shape[no++] = d->shape[i];
    }
    return ir_tensor_type(cx->arena, d->dtype, no, shape);
}

/* ---- concatenate, split ------------------------------------------------- */

/* The single argument is a tuple of tensors that agree except on axis. */
const ir_type *ir_rel_concatenate(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                                  const ir_attrs *attrs)
{
    const ir_type *t = args[0];
    if (!t || t->kind != IR_TY_TUPLE || t->nfields == 0)
        return ir_rel_error(cx, "expects a non-empty tuple of tensors, got %s", ir_type_str(cx->arena, t));
    for (int i = 0; i < t->nfields; i++)
        if (!t->fields[i] || t->fields[i]->kind != IR_TY_TENSOR)
            return ir_rel_error(cx, "field %d must be a tensor, got %s", i, ir_type_str(cx->arena, t->fields[i]));
    const ir_type *first = t->fields[0];
    int axis;
    if (!first || !ir_rel_axis(cx, ir_attr_int(attrs, IR_CONCAT_AXIS), first->ndim, &axis))
        return NULL;
    int64_t shape[IR_MAX_DIMS];
    memcpy(shape, first->shape, (size_t)first->ndim * sizeof *shape);
    for (int i = 1; i < t->nfields; i++) {
        const ir_type *f = t->fields[i];
        bool same = f->dtype == first->dtype && f->ndim == first->ndim;
        for (int j = 0; same && j < f->ndim; j++)
            same = j == axis || f->shape[j] == first->shape[j];
        if (!same)
            return ir_rel_error(cx, "field %d (%s %s) does not match field 0 (%s %s) off axis %d", i,
                                ir_dtype_name(f->dtype), ir_shape_str(cx->arena, f),
                                ir_dtype_name(first->dtype), ir_shape_str(cx->arena, first), axis);
        shape[axis] += f->shape[axis];
    }
    return ir_tensor_type(cx->arena, first->dtype, first->ndim, shape);
}

/* indices_or_sections: an integer splits axis into that many equal parts
 * (an axis of extent 0 only into one); a list of ascending indices cuts it
 * before each index. */
const ir_type *ir_rel_split(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                            const ir_attrs *attrs)
{
    const ir_type *d = ir_rel_tensor(cx, args, 0);
    int axis;
    if (!d || !ir_rel_axis(cx, ir_attr_int(attrs, IR_SPLIT_AXIS), d->ndim, &axis))
        return NULL;
    const ir_attr_val *ios = ir_attr_get(attrs, IR_SPLIT_INDICES_OR_SECTIONS);
    int64_t dim = d->shape[axis];
    int64_t nparts = ios->kind == IR_AV_INT ? ios->i : ios->n + 1;
    if (ios->kind == IR_AV_INT && (nparts <= 0 || nparts > (dim ? dim : 1) || dim % nparts != 0))
        return ir_rel_error(cx, "cannot split axis %d of data %s (extent %lld) into %lld equal sections",
                            axis, ir_shape_str(cx->arena, d), (long long)dim, (long long)nparts);
    const ir_type **fields = su_arena_alloc(cx->arena, (size_t)nparts * sizeof *fields);
    int64_t shape[IR_MAX_DIMS], begin = 0;
    memcpy(shape, d->shape, (size_t)d->ndim * sizeof *shape);
    for (int64_t i = 0; i < nparts; i++) {
        int64_t end = ios->kind == IR_AV_INT ? begin + dim / nparts : i < ios->n ? ios->items[i].i : dim;
        if (ios->kind == IR_AV_LIST && (end <= begin || end > dim || (i < nparts - 1 && end == dim)))
            return ir_rel_error(cx, "indices_or_sections must ascend strictly inside (0, %lld), the "
                                "extent of axis %d of data %s", (long long)dim, axis,
                                ir_shape_str(cx->arena, d));
        shape[axis] = end - begin;
        fields[i] = ir_tensor_type(cx->arena, d->dtype, d->ndim, shape);
        begin = end;
    }
    return ir_tuple_type(cx->arena, (int)nparts, fields);
}

/* ---- strided_slice ------------------------------------------------------ */

/* Length of the numpy slice b:e:s of an axis of extent n: negative indices
 * count from the end, out-of-range ones are clamped, a negative stride walks
 * backwards (and may stop before index 0, at -1). */
static int64_t slice_len(int64_t n, int64_t b, int64_t e, int64_t s)
{
    int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? n : n - 1;
    /* any step longer than the axis takes one element: cap it so that the
     * arithmetic below cannot overflow */
    s = s > n + 1 ? n + 1 : s < -n - 1 ? -n - 1 : s;
    b = b < 0 ? b + n : b;
    e = e < 0 ? e + n : e;
    b = b < lo ? lo : b > hi ? hi : b;
    e = e < lo ? lo : e > hi ? hi : e;
    if (s > 0)
        return e > b ? (e - b - 1) / s + 1 : 0;
    return b > e ? (b - e - 1) / -s + 1 : 0;
}

/* The begin/end/stride of each axis, from the attributes: with axes, the
 * lists name those axes (same length each, strides None = 1s); without, they
 * cover the leading axes and the rest are whole. */
static bool slice_spec(ir_rel_ctx *cx, const ir_attrs *at, const ir_type *d, int64_t *b, int64_t *e,
                       int64_t *s, bool *sized)
{
    int64_t vb[IR_MAX_DIMS], ve[IR_MAX_DIMS], vs[IR_MAX_DIMS], va[IR_MAX_DIMS];
    int nb, ne, ns, na, nd = d->ndim;
    if (!opt_ints(cx, at, IR_SLICE_BEGIN, "begin", vb, &nb) || !opt_ints(cx, at, IR_SLICE_END, "end", ve, &ne) ||
        !opt_ints(cx, at, IR_SLICE_STRIDES, "strides", vs, &ns) || !opt_ints(cx, at, IR_SLICE_AXES, "axes", va, &na))
        return false;
    bool has_axes = !ir_attr_is_none(at, IR_SLICE_AXES);
    if (has_axes ? nb != na || ne != na || (ns != 0 && ns != na) : nb > nd || ne > nd || ns > nd) {
        ir_rel_error(cx, "begin %s, end %s, strides %s do not fit %s of data %s", ints_str(cx->arena, nb, vb),
                     ints_str(cx->arena, ne, ve), ints_str(cx->arena, ns, vs),
                     has_axes ? ints_str(cx->arena, na, va) : "the axes", ir_shape_str(cx->arena, d));
        return false;
    }
    for (int i = 0; i < nd; i++) {
        b[i] = 0;
        e[i] = INT64_MAX;
        s[i] = 1;
        sized[i] = false;
    }
    for (int j = 0; j < (has_axes ? na : nd); j++) {
        int ax = j;
        if (has_axes && !ir_rel_axis(cx, va[j], nd, &ax))
            return false;
        s[ax] = j < ns ? vs[j] : 1;
        if (s[ax] == 0) {
            ir_rel_error(cx, "strides must not be 0");
            return false;
        }
        b[ax] = j < nb ? vb[j] : s[ax] > 0 ? 0 : INT64_MAX;
        e[ax] = j < ne ? ve[j] : s[ax] > 0 ? INT64_MAX : INT64_MIN;
        sized[ax] = j < ne;
    }
    return true;
}

const ir_type *ir_rel_strided_slice(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                                    const ir_attrs *attrs)
{
    const ir_type *d = ir_rel_tensor(cx, args, 0);
    int64_t b[IR_MAX_DIMS], e[IR_MAX_DIMS], s[IR_MAX_DIMS], shape[IR_MAX_DIMS];
    bool given[IR_MAX_DIMS];
    if (!d || !slice_spec(cx, attrs, d, b, e, s, given))
        return NULL;
    const char *mode = ir_attr_str(attrs, IR_SLICE_MODE);
    bool size_mode = strcmp(mode, "size") == 0;
    if (!size_mode && strcmp(mode, "end") != 0)
        return ir_rel_error(cx, "unknown slice_mode \"%s\" (end or size)", mode);
    for (int i = 0; i < d->ndim; i++) {
        int64_t n = d->shape[i];
        /* size mode: end holds the slice's length (-1: to the end) and the
         * strides are ignored. */
        if (size_mode && given[i]) {
            s[i] = 1;
            b[i] = b[i] < 0 ? b[i] + n : b[i];
            b[i] = b[i] < 0 ? 0 : b[i] > n ? n : b[i];
            e[i] = e[i] < 0 || e[i] > n - b[i] ? n : b[i] + e[i];
        }
        shape[i] = slice_len(n, b[i], e[i], s[i]);
    }
    return ir_tensor_type(cx->arena, d->dtype, d->ndim, shape);
}

/* ---- take --------------------------------------------------------------- */

/* axis None indexes the flattened data: the result has the indices' shape.
 * Otherwise data.shape[:axis] + indices.shape[batch_dims:] +
 * data.shape[axis+1:], the first batch_dims axes shared by both. */
const ir_type *ir_rel_take(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                           const ir_attrs *attrs)
{
    const ir_type *d = ir_rel_tensor(cx, args, 0);
    const ir_type *ix = d ? ir_rel_tensor(cx, args, 1) : NULL;
    if (!ix)
        return NULL;
    if (ix->dtype != IR_INT32 && ix->dtype != IR_INT64)
        return ir_rel_error(cx, "indices must be int32 or int64, got %s", ir_dtype_name(ix->dtype));
    const char *mode = ir_attr_str(attrs, IR_TAKE_MODE);
    if (strcmp(mode, "clip") != 0 && strcmp(mode, "wrap") != 0 && strcmp(mode, "fast") != 0)
        return ir_rel_error(cx, "unknown mode \"%s\" (clip, wrap or fast)", mode);
    if (ir_attr_is_none(attrs, IR_TAKE_AXIS))
        return ir_tensor_type(cx->arena, d->dtype, ix->ndim, ix->shape);
    int axis;
    int64_t bd = ir_attr_int(attrs, IR_TAKE_BATCH_DIMS);
    if (!ir_rel_axis(cx, ir_attr_int(attrs, IR_TAKE_AXIS), d->ndim, &axis))
        return NULL;
    bd = bd < 0 ? bd + ix->ndim : bd;
    bool batch_ok = bd >= 0 && bd <= axis && bd <= ix->ndim;
    for (int i = 0; batch_ok && i < bd; i++)
        batch_ok = d->shape[i] == ix->shape[i];
    if (!batch_ok)
        return ir_rel_error(cx, "batch_dims=%lld does not fit data %s, indices %s and axis %d",
                            (long long)ir_attr_int(attrs, IR_TAKE_BATCH_DIMS), ir_shape_str(cx->arena, d),
                            ir_shape_str(cx->arena, ix), axis);
    int64_t shape[IR_MAX_DIMS];
    int no = 0;
    if (d->ndim - 1 + ix->ndim - bd > IR_MAX_DIMS)
        return ir_rel_error(cx, "result of rank above %d", IR_MAX_DIMS);
    for (int i = 0; i < axis; i++)
        shape[no++] = d->shape[i];
    for (int i = (int)bd; i < ix->ndim; i++)
        shape[no++] = ix->shape[i];
    for (int i = axis + 1; i < d->ndim; i++)
        shape[no++] = d->shape[i];
    return ir_tensor_type(cx->arena, d->dtype, no, shape);
}
