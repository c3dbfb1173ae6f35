/* tensor.c — constant tensors held by Constant nodes: dense, C order, data
 * 64-byte aligned so that generated kernels may use aligned vector loads. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ir/ir.h"

int64_t ir_tensor_numel(const ir_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= t->shape[i];
    return n;
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
    if (dt == IR_FLOAT32 && v == v && fabs(v) > FLT_MAX) /* round as the conversion would, without UB */
        v = copysign(fabs(v) < 3.4028235677973366e38 ? FLT_MAX : INFINITY, v);
    switch (dt) {
    case IR_FLOAT32: *(float *)t->data = (float)v; break;
    case IR_FLOAT16: *(uint16_t *)t->data = to_half(v); break;
    case IR_FLOAT64: *(double *)t->data = v; break;
    case IR_INT8: *(int8_t *)t->data = (int8_t)clampd(v, -128, 127); break;
    case IR_INT16: *(int16_t *)t->data = (int16_t)clampd(v, -32768, 32767); break;
    case IR_INT32: *(int32_t *)t->data = (int32_t)clampd(v, -2147483648.0, 2147483647.0); break;
    case IR_INT64: *(int64_t *)t->data = (int64_t)clampd(v, -9223372036854775808.0, 9223372036854774784.0); break;
    case IR_UINT8: *(uint8_t *)t->data = (uint8_t)clampd(v, 0, 255); break;
    case IR_BOOL: *(uint8_t *)t->data = v != 0; break;
    case IR_DTYPE_COUNT: su_panic("bad dtype");
    }
    return t;
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
