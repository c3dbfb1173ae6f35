/* tensor.c — dense tensors: C order, data 64-byte aligned so that generated
 * kernels may use aligned vector loads. Constant nodes hold arena tensors;
 * the interpreter and the .npy/.npz readers make heap tensors, one malloc'd
 * block each (header, shape and data), so that freeing one is one call.
 * Element access by index converts between dtypes with the same rules
 * everywhere: floats to integers truncate and saturate, NaN becomes 0,
 * integers stored into narrower integers wrap, bool is "not zero". */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ir/ir.h"

int64_t ir_tensor_numel(const ir_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] == 0)
            return 0;   /* before multiplying: the other extents may be huge */
    for (int i = 0; i < t->ndim; i++)
        n *= t->shape[i];
    return n;
}

bool ir_shape_numel(int ndim, const int64_t *shape, int elem_bytes, int64_t *numel)
{
    const size_t max_bytes = SIZE_MAX / 2 < (size_t)INT64_MAX ? SIZE_MAX / 2 : (size_t)INT64_MAX;
    int64_t n = 1, limit = (int64_t)max_bytes / (elem_bytes > 0 ? elem_bytes : 1);
    bool fits = true, empty = false;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return false;
        if (shape[i] == 0)
            empty = true;   /* no elements, however large the other extents */
        else if (fits && n > limit / shape[i])
            fits = false;
        else if (fits)
            n *= shape[i];
    }
    if (!fits && !empty)
        return false;
    if (numel)
        *numel = empty ? 0 : n;
    return true;
}

size_t ir_tensor_nbytes(const ir_tensor *t)
{
    return (size_t)ir_tensor_numel(t) * (size_t)ir_dtype_bytes(t->dtype);
}

ir_tensor *ir_tensor_alloc(ir_dtype dt, int ndim, const int64_t *shape)
{
    int64_t n;
    if (ndim < 0 || !ir_shape_numel(ndim, shape, ir_dtype_bytes(dt), &n))
        return NULL;
    size_t head = sizeof(ir_tensor) + (size_t)ndim * sizeof(int64_t);
    size_t bytes = (size_t)n * (size_t)ir_dtype_bytes(dt);
    if (bytes > SIZE_MAX - head - 64)
        return NULL;
    char *block = calloc(1, head + 64 + bytes);
    if (!block)
        return NULL;
    ir_tensor *t = (ir_tensor *)block;
    int64_t *sh = (int64_t *)(block + sizeof(ir_tensor));
    if (ndim)
        memcpy(sh, shape, (size_t)ndim * sizeof *sh);
    t->dtype = dt;
    t->ndim = ndim;
    t->shape = sh;
    uintptr_t d = (uintptr_t)(block + head);
    t->data = (void *)((d + 63) & ~(uintptr_t)63);
    return t;
}

void ir_tensor_free(ir_tensor *t)
{
    free(t);
}

ir_tensor *ir_tensor_clone(const ir_tensor *t)
{
    ir_tensor *c = ir_tensor_alloc(t->dtype, t->ndim, t->shape);
    if (c)
        memcpy(c->data, t->data, ir_tensor_nbytes(t));
    return c;
}

bool ir_tensor_has_shape(const ir_tensor *t, ir_dtype dt, int ndim, const int64_t *shape)
{
    return t->dtype == dt && t->ndim == ndim &&
           (ndim == 0 || memcmp(t->shape, shape, (size_t)ndim * sizeof *shape) == 0);
}

void ir_tensor_print_type(su_buf *b, const ir_tensor *t)
{
    if (t->ndim == 0) {
        su_buf_puts(b, ir_dtype_name(t->dtype));
        return;
    }
    su_buf_puts(b, "Tensor[(");
    for (int i = 0; i < t->ndim; i++)
        su_buf_printf(b, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
    su_buf_printf(b, "), %s]", ir_dtype_name(t->dtype));
}

ir_tensor *ir_tensor_new(su_arena *a, ir_dtype dt, int ndim, const int64_t *shape)
{
    ir_tensor *t = su_arena_alloc(a, sizeof *t);
    t->dtype = dt;
    t->ndim = ndim;
    t->shape = ndim ? su_arena_dup(a, shape, (size_t)ndim * sizeof *shape) : NULL;
    t->data = su_arena_alloc_aligned(a, (size_t)(ir_tensor_numel(t) * ir_dtype_bytes(dt)), 64);
    return t;
}

/* IEEE half from double, round to nearest even (for float16 constants). */
static uint16_t to_half(double d)
{
    float f = (float)(d > 65520.0 ? 65520.0 : d < -65520.0 ? -65520.0 : d); /* beyond: inf */
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff, man = x & 0x7fffff;
    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00);
    if (e <= 0) {
        if (e < -10)
            return (uint16_t)sign;
        man |= 0x800000;
        int shift = 14 - e;
        uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = sign | ((uint32_t)e << 10) | (man >> 13);
    uint32_t rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
        h++;
    return (uint16_t)h;
}

static double from_half(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v;
    if (e == 0)
        v = m * (1.0 / 16777216.0);
    else if (e == 31)
        v = m ? 0.0 / 0.0 : 1.0 / 0.0;
    else
        v = (1024 + m) * (double)((int64_t)1 << e) / (1024.0 * 32768.0);
    return (h & 0x8000) ? -v : v;
}

/* Clamps v into [lo, hi] (NaN becomes 0), so that conversions are defined. */
static double clampd(double v, double lo, double hi)
{
    return v != v ? 0 : v < lo ? lo : v > hi ? hi : v;
}

ir_tensor *ir_tensor_scalar_i64(su_arena *a, int64_t v)
{
    ir_tensor *t = ir_tensor_new(a, IR_INT64, 0, NULL);
    *(int64_t *)t->data = v;
    return t;
}

ir_tensor *ir_tensor_scalar(su_arena *a, ir_dtype dt, double v)
{
    ir_tensor *t = ir_tensor_new(a, dt, 0, NULL);
    ir_tensor_set(t, 0, v);
    return t;
}

void ir_tensor_set(ir_tensor *t, int64_t i, double v)
{
    switch (t->dtype) {
    case IR_FLOAT32:
        if (v == v && fabs(v) > FLT_MAX) /* round as the conversion would, without UB */
            v = copysign(fabs(v) < 3.4028235677973366e38 ? FLT_MAX : INFINITY, v);
        ((float *)t->data)[i] = (float)v;
        break;
    case IR_FLOAT16: ((uint16_t *)t->data)[i] = to_half(v); break;
    case IR_FLOAT64: ((double *)t->data)[i] = v; break;
    case IR_INT8: ((int8_t *)t->data)[i] = (int8_t)clampd(v, -128, 127); break;
    case IR_INT16: ((int16_t *)t->data)[i] = (int16_t)clampd(v, -32768, 32767); break;
    case IR_INT32: ((int32_t *)t->data)[i] = (int32_t)clampd(v, -2147483648.0, 2147483647.0); break;
    case IR_INT64: ((int64_t *)t->data)[i] = (int64_t)clampd(v, -9223372036854775808.0, 9223372036854774784.0); break;
    case IR_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)clampd(v, 0, 255); break;
    case IR_BOOL: ((uint8_t *)t->data)[i] = v != 0; break;
    case IR_DTYPE_COUNT: su_panic("bad dtype");
    }
}

int64_t ir_tensor_get_i64(const ir_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case IR_INT8: return ((const int8_t *)t->data)[i];
    case IR_INT16: return ((const int16_t *)t->data)[i];
    case IR_INT32: return ((const int32_t *)t->data)[i];
    case IR_INT64: return ((const int64_t *)t->data)[i];
    case IR_UINT8: return ((const uint8_t *)t->data)[i];
    case IR_BOOL: return ((const uint8_t *)t->data)[i] != 0;
    default: return (int64_t)clampd(ir_tensor_get(t, i), -9223372036854775808.0, 9223372036854774784.0);
    }
}

void ir_tensor_set_i64(ir_tensor *t, int64_t i, int64_t v)
{
    switch (t->dtype) {
    case IR_INT8: ((int8_t *)t->data)[i] = (int8_t)(uint8_t)v; break;
    case IR_INT16: ((int16_t *)t->data)[i] = (int16_t)(uint16_t)v; break;
    case IR_INT32: ((int32_t *)t->data)[i] = (int32_t)(uint32_t)v; break;
    case IR_INT64: ((int64_t *)t->data)[i] = v; break;
    case IR_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)v; break;
    case IR_BOOL: ((uint8_t *)t->data)[i] = v != 0; break;
    default: ir_tensor_set(t, i, (double)v); break;
    }
}

double ir_tensor_get(const ir_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case IR_FLOAT32: return ((const float *)t->data)[i];
    case IR_FLOAT16: return from_half(((const uint16_t *)t->data)[i]);
    case IR_FLOAT64: return ((const double *)t->data)[i];
    case IR_INT8: return ((const int8_t *)t->data)[i];
    case IR_INT16: return ((const int16_t *)t->data)[i];
    case IR_INT32: return ((const int32_t *)t->data)[i];
    case IR_INT64: return (double)((const int64_t *)t->data)[i];
    case IR_UINT8: return ((const uint8_t *)t->data)[i];
    case IR_BOOL: return ((const uint8_t *)t->data)[i];
    case IR_DTYPE_COUNT: break;
    }
    su_panic("bad dtype");
}
