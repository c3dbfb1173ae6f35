/* ref_tensor.c — reference kernels of the elementwise ops (op_tensor.c's
 * family): unary math and activations (relu and leaky_relu too), clip,
 * broadcasting arithmetic, comparisons, logic, where and cast.
 *
 * Every kernel has a float32 path written so that the compiler vectorizes it
 * (contiguous rows, no calls in the hot loop where avoidable) and a generic
 * path for every other dtype that computes in double for floating-point
 * dtypes and in int64 for integers and bool. Integer arithmetic wraps at the
 * dtype's width (as C and TVM's generated code do for unsigned arithmetic,
 * without C's undefined signed overflow), integer division truncates toward
 * zero (TVM's `divide` on integers), and a division by zero is an error
 * rather than a trap. Conversions follow ir_tensor_set: floats saturate when
 * stored into integers and NaN becomes 0.
 *
 * Broadcasting follows numpy: shapes align at their last axis; an operand of
 * extent 1 (or a missing leading axis) repeats. The output is walked as rows
 * after merging adjacent axes that every operand walks contiguously, so the
 * usual cases — equal shapes, a scalar, a per-channel vector — are long
 * contiguous loops. */
#include <math.h>
#include <string.h>

#include "ir/ir.h"

/* Below this many elements a kernel runs on one thread. */
#define PAR_MIN (1 << 15)

/* ---- broadcasting --------------------------------------------------------- */

/* Up to three operands laid over the output: the output is rows x len after
 * merging axes, and operand k starts row r at bcast_row's offset and steps
 * st[k][nd - 1] elements along the row. */
typedef struct bcast {
    int nd;                         /* merged rank, at least 1 */
    int64_t shape[IR_MAX_DIMS];     /* merged extents */
    int n;                          /* operands */
    int64_t st[3][IR_MAX_DIMS];     /* element strides per operand, 0 along repeated axes */
    int64_t rows, len;              /* the output as rows of len elements */
} bcast;

static void bcast_init(bcast *b, const ir_tensor *out, int n, const ir_tensor *const *ops)
{
    int nd = out->ndim;
    memset(b, 0, sizeof *b);
    b->n = n;
    int64_t st[3][IR_MAX_DIMS];
    for (int k = 0; k < n; k++) {
        const ir_tensor *t = ops[k];
        int64_t s = 1;
        for (int i = nd - 1; i >= 0; i--) {
            int j = i - (nd - t->ndim);
            int64_t ext = j >= 0 ? t->shape[j] : 1;
            st[k][i] = ext == 1 ? 0 : s;
            s *= ext;
        }
    }
    /* drop axes of extent 1 and merge neighbours that every operand walks
     * contiguously (or repeats along both) */
    for (int i = 0; i < nd; i++) {
        if (out->shape[i] == 1)
            continue;
        bool merge = b->nd > 0;
        for (int k = 0; merge && k < n; k++)
            merge = b->st[k][b->nd - 1] == st[k][i] * out->shape[i];
        if (merge) {
            b->shape[b->nd - 1] *= out->shape[i];
            for (int k = 0; k < n; k++)
                b->st[k][b->nd - 1] = st[k][i];
        } else {
            b->shape[b->nd] = out->shape[i];
            for (int k = 0; k < n; k++)
                b->st[k][b->nd] = st[k][i];
            b->nd++;
        }
    }
    if (b->nd == 0) {
        b->nd = 1;
        b->shape[0] = 1;
    }
    b->len = b->shape[b->nd - 1];
    b->rows = ir_tensor_numel(out) / (b->len ? b->len : 1);
    if (ir_tensor_numel(out) == 0)
        b->rows = b->len = 0;
}

/* Offsets of row r's first element in each operand. */
static void bcast_row(const bcast *b, int64_t r, int64_t *off)
{
    for (int k = 0; k < b->n; k++)
        off[k] = 0;
    for (int i = b->nd - 2; i >= 0; i--) {
        int64_t idx = r % b->shape[i];
        r /= b->shape[i];
        for (int k = 0; k < b->n; k++)
            off[k] += idx * b->st[k][i];
    }
}

/* ---- unary ops ------------------------------------------------------------ */

/* float32 math of one unary op (alpha: leaky_relu's slope; lo, hi: clip's bounds). */
static void unary_f32(ir_op_id op, const float *a, float *o, int64_t n, float alpha, float lo, float hi)
{
#define UNARY(expr)                                                    \
    do {                                                               \
        _Pragma("omp parallel for simd if (n > PAR_MIN)")              \
        for (int64_t i = 0; i < n; i++) {                              \
            float x = a[i];                                            \
            o[i] = (expr);                                             \
        }                                                              \
    } while (0)
    switch (op) {
    case IR_OP_RELU: UNARY(x < 0 ? 0.0f : x); break;
    case IR_OP_LEAKY_RELU: UNARY(x < 0 ? alpha * x : x); break;
    case IR_OP_CLIP: UNARY(x < lo ? lo : x > hi ? hi : x); break;
    case IR_OP_NEGATIVE: UNARY(-x); break;
    case IR_OP_ABS: UNARY(fabsf(x)); break;
    case IR_OP_EXP: UNARY(expf(x)); break;
    case IR_OP_LOG: UNARY(logf(x)); break;
    case IR_OP_SQRT: UNARY(sqrtf(x)); break;
    case IR_OP_RSQRT: UNARY(1.0f / sqrtf(x)); break;
    case IR_OP_TANH: UNARY(tanhf(x)); break;
    case IR_OP_SIGMOID: UNARY(1.0f / (1.0f + expf(-x))); break;
    case IR_OP_ERF: UNARY(erff(x)); break;
    case IR_OP_FLOOR: UNARY(floorf(x)); break;
    case IR_OP_CEIL: UNARY(ceilf(x)); break;
    default: su_panic("%s is not a unary op", ir_op_get(op)->name);
    }
#undef UNARY
}

static double unary_double(ir_op_id op, double x, double alpha, double lo, double hi)
{
    switch (op) {
    case IR_OP_RELU: return x < 0 ? 0 : x;
    case IR_OP_LEAKY_RELU: return x < 0 ? alpha * x : x;
    case IR_OP_CLIP: return x < lo ? lo : x > hi ? hi : x;
    case IR_OP_NEGATIVE: return -x;
    case IR_OP_ABS: return fabs(x);
    case IR_OP_EXP: return exp(x);
    case IR_OP_LOG: return log(x);
    case IR_OP_SQRT: return sqrt(x);
    case IR_OP_RSQRT: return 1.0 / sqrt(x);
    case IR_OP_TANH: return tanh(x);
    case IR_OP_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case IR_OP_ERF: return erf(x);
    case IR_OP_FLOOR: return floor(x);
    case IR_OP_CEIL: return ceil(x);
    case IR_OP_LOGICAL_NOT: return x == 0;
    default: su_panic("%s is not a unary op", ir_op_get(op)->name);
    }
}

/* Integer forms of the ops that have one; false for the others, which
 * integers reach through double (exp of an int32 is computed and saturated). */
static bool unary_int(ir_op_id op, int64_t x, int64_t *out)
{
    switch (op) {
    case IR_OP_RELU: *out = x < 0 ? 0 : x; return true;
    case IR_OP_NEGATIVE: *out = (int64_t)(0 - (uint64_t)x); return true;
    case IR_OP_ABS: *out = x < 0 ? (int64_t)(0 - (uint64_t)x) : x; return true;
    case IR_OP_LOGICAL_NOT: *out = x == 0; return true;
    case IR_OP_FLOOR: case IR_OP_CEIL: *out = x; return true;
    default: return false;
    }
}

bool ir_ref_unary(const ir_ref_call *c)
{
    const ir_tensor *a = c->in[0];
    ir_tensor *o = c->out[0];
    ir_op_id op = c->op->id;
    int64_t n = ir_tensor_numel(o);
    double alpha = op == IR_OP_LEAKY_RELU ? ir_attr_float(c->attrs, IR_LEAKY_RELU_ALPHA) : 0;
    double lo = op == IR_OP_CLIP ? ir_attr_float(c->attrs, IR_CLIP_A_MIN) : 0;
    double hi = op == IR_OP_CLIP ? ir_attr_float(c->attrs, IR_CLIP_A_MAX) : 0;
    if (a->dtype == IR_FLOAT32 && op != IR_OP_LOGICAL_NOT) {
        unary_f32(op, a->data, o->data, n, (float)alpha, (float)lo, (float)hi);
        return true;
    }
    bool is_float = ir_dtype_is_float(a->dtype);
    for (int64_t i = 0; i < n; i++) {
        int64_t r;
        if (!is_float && op != IR_OP_CLIP && op != IR_OP_LEAKY_RELU && unary_int(op, ir_tensor_get_i64(a, i), &r))
            ir_tensor_set_i64(o, i, r);
        else
            ir_tensor_set(o, i, unary_double(op, ir_tensor_get(a, i), alpha, lo, hi));
    }
    return true;
}

/* ---- binary arithmetic, logic and comparisons ----------------------------- */

/* One row of a float32 binary op; sa and sb are the operands' steps. */
static void binary_f32_row(ir_op_id op, const float *a, int64_t sa, const float *b, int64_t sb, float *o,
                           int64_t n)
{
#define ROW(expr)                                                                       \
    do {                                                                                \
        if (sa == 1 && sb == 1) {                                                       \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++) {                       \
                float x = a[j], y = b[j];                                               \
                o[j] = (expr);                                                          \
            }                                                                           \
        } else if (sa == 1 && sb == 0) {                                                \
            const float y = b[0];                                                       \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++) {                       \
                float x = a[j];                                                         \
                o[j] = (expr);                                                          \
            }                                                                           \
        } else if (sa == 0 && sb == 1) {                                                \
            const float x = a[0];                                                       \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++) {                       \
                float y = b[j];                                                         \
                o[j] = (expr);                                                          \
            }                                                                           \
        } else {                                                                        \
            for (int64_t j = 0; j < n; j++) {                                           \
                float x = a[j * sa], y = b[j * sb];                                     \
                o[j] = (expr);                                                          \
            }                                                                           \
        }                                                                               \
    } while (0)
    switch (op) {
    case IR_OP_ADD: ROW(x + y); break;
    case IR_OP_SUBTRACT: ROW(x - y); break;
    case IR_OP_MULTIPLY: ROW(x * y); break;
    case IR_OP_DIVIDE: ROW(x / y); break;
    case IR_OP_POWER: ROW(powf(x, y)); break;
    case IR_OP_MAXIMUM: ROW(ir_max_nanf(x, y)); break;
    case IR_OP_MINIMUM: ROW(ir_min_nanf(x, y)); break;
    default: su_panic("%s is not a float binary op", ir_op_get(op)->name);
    }
#undef ROW
}

static double binary_double(ir_op_id op, double x, double y)
{
    switch (op) {
    case IR_OP_ADD: return x + y;
    case IR_OP_SUBTRACT: return x - y;
    case IR_OP_MULTIPLY: return x * y;
    case IR_OP_DIVIDE: return x / y;
    case IR_OP_POWER: return pow(x, y);
    case IR_OP_MAXIMUM: return ir_max_nan(x, y);
    case IR_OP_MINIMUM: return ir_min_nan(x, y);
    case IR_OP_LOGICAL_AND: return x != 0 && y != 0;
    case IR_OP_LOGICAL_OR: return x != 0 || y != 0;
    default: su_panic("%s is not a binary op", ir_op_get(op)->name);
    }
}

/* x to the power y in wrapping integer arithmetic; false for 0 to a negative power. */
static bool int_power(int64_t x, int64_t y, int64_t *out)
{
    if (y < 0) {
        if (x == 0)
            return false;
        *out = x == 1 ? 1 : x == -1 ? (y % 2 ? -1 : 1) : 0;
        return true;
    }
    uint64_t r = 1, b = (uint64_t)x;
    for (uint64_t e = (uint64_t)y; e; e >>= 1, b *= b)
        if (e & 1)
            r *= b;
    *out = (int64_t)r;
    return true;
}

/* Integer op; false after writing err for a division by zero. */
static bool binary_int(ir_op_id op, int64_t x, int64_t y, int64_t *out, su_buf *err)
{
    switch (op) {
    case IR_OP_ADD: *out = (int64_t)((uint64_t)x + (uint64_t)y); return true;
    case IR_OP_SUBTRACT: *out = (int64_t)((uint64_t)x - (uint64_t)y); return true;
    case IR_OP_MULTIPLY: *out = (int64_t)((uint64_t)x * (uint64_t)y); return true;
    case IR_OP_DIVIDE:
        if (y == 0) {
            su_buf_printf(err, "integer division by zero (%lld / 0)", (long long)x);
            return false;
        }
        *out = y == -1 ? (int64_t)(0 - (uint64_t)x) : x / y;
        return true;
    case IR_OP_POWER:
        if (!int_power(x, y, out)) {
            su_buf_printf(err, "integer zero raised to the negative power %lld", (long long)y);
            return false;
        }
        return true;
    case IR_OP_MAXIMUM: *out = x < y ? y : x; return true;
    case IR_OP_MINIMUM: *out = y < x ? y : x; return true;
    case IR_OP_LOGICAL_AND: *out = x && y; return true;
    case IR_OP_LOGICAL_OR: *out = x || y; return true;
    default: su_panic("%s is not a binary op", ir_op_get(op)->name);
    }
}

bool ir_ref_binary(const ir_ref_call *c)
{
    const ir_tensor *a = c->in[0], *b = c->in[1];
    ir_tensor *o = c->out[0];
    ir_op_id op = c->op->id;
    bcast bc;
    bcast_init(&bc, o, 2, c->in);
    int64_t sa = bc.st[0][bc.nd - 1], sb = bc.st[1][bc.nd - 1];
    if (a->dtype == IR_FLOAT32) {
        /* rows are cut into chunks so that one long row (equal shapes) runs
         * on every thread too */
        const float *pa = a->data, *pb = b->data;
        float *po = o->data;
        const int64_t chunk = 8192, per_row = bc.len ? (bc.len + chunk - 1) / chunk : 0;
#pragma omp parallel for if (bc.rows * bc.len > PAR_MIN)
        for (int64_t k = 0; k < bc.rows * per_row; k++) {
            int64_t r = k / per_row, j = k % per_row * chunk, off[2];
            int64_t n = bc.len - j < chunk ? bc.len - j : chunk;
            bcast_row(&bc, r, off);
            binary_f32_row(op, pa + off[0] + j * sa, sa, pb + off[1] + j * sb, sb, po + r * bc.len + j, n);
        }
        return true;
    }
    bool is_float = ir_dtype_is_float(a->dtype);
    for (int64_t r = 0; r < bc.rows; r++) {
        int64_t off[2];
        bcast_row(&bc, r, off);
        for (int64_t j = 0; j < bc.len; j++) {
            int64_t ia = off[0] + j * sa, ib = off[1] + j * sb, io = r * bc.len + j, v;
            if (is_float) {
                ir_tensor_set(o, io, binary_double(op, ir_tensor_get(a, ia), ir_tensor_get(b, ib)));
            } else {
                if (!binary_int(op, ir_tensor_get_i64(a, ia), ir_tensor_get_i64(b, ib), &v, c->err))
                    return false;
                ir_tensor_set_i64(o, io, v);
            }
        }
    }
    return true;
}

static bool compare(ir_op_id op, int cmp)
{
    switch (op) {
    case IR_OP_EQUAL: return cmp == 0;
    case IR_OP_NOT_EQUAL: return cmp != 0;
    case IR_OP_LESS: return cmp < 0;
    case IR_OP_LESS_EQUAL: return cmp <= 0;
    case IR_OP_GREATER: return cmp > 0;
    case IR_OP_GREATER_EQUAL: return cmp >= 0;
    default: su_panic("%s is not a comparison", ir_op_get(op)->name);
    }
}

bool ir_ref_compare(const ir_ref_call *c)
{
    const ir_tensor *a = c->in[0], *b = c->in[1];
    ir_tensor *o = c->out[0];
    ir_op_id op = c->op->id;
    bcast bc;
    bcast_init(&bc, o, 2, c->in);
    int64_t sa = bc.st[0][bc.nd - 1], sb = bc.st[1][bc.nd - 1];
    bool is_float = ir_dtype_is_float(a->dtype);
    uint8_t *po = o->data;
    for (int64_t r = 0; r < bc.rows; r++) {
        int64_t off[2];
        bcast_row(&bc, r, off);
        for (int64_t j = 0; j < bc.len; j++) {
            int64_t ia = off[0] + j * sa, ib = off[1] + j * sb;
            bool v;
            if (is_float) {
                /* NaN compares unequal to everything (only not_equal holds) */
                double x = ir_tensor_get(a, ia), y = ir_tensor_get(b, ib);
                v = x != x || y != y ? op == IR_OP_NOT_EQUAL : compare(op, (x > y) - (x < y));
            } else {
                int64_t x = ir_tensor_get_i64(a, ia), y = ir_tensor_get_i64(b, ib);
                v = compare(op, (x > y) - (x < y));
            }
            po[r * bc.len + j] = v;
        }
    }
    return true;
}

/* where(cond, x, y): copies whole elements, so one loop serves every dtype. */
bool ir_ref_where(const ir_ref_call *c)
{
    ir_tensor *o = c->out[0];
    bcast bc;
    bcast_init(&bc, o, 3, c->in);
    const uint8_t *cond = c->in[0]->data, *x = c->in[1]->data, *y = c->in[2]->data;
    uint8_t *out = o->data;
    size_t es = (size_t)ir_dtype_bytes(o->dtype);
    int64_t sc = bc.st[0][bc.nd - 1], sx = bc.st[1][bc.nd - 1], sy = bc.st[2][bc.nd - 1];
    for (int64_t r = 0; r < bc.rows; r++) {
        int64_t off[3];
        bcast_row(&bc, r, off);
        for (int64_t j = 0; j < bc.len; j++) {
            const uint8_t *src = cond[off[0] + j * sc] ? x + (off[1] + j * sx) * (int64_t)es
                                                       : y + (off[2] + j * sy) * (int64_t)es;
            memcpy(out + (r * bc.len + j) * (int64_t)es, src, es);
        }
    }
    return true;
}

/* ---- cast ----------------------------------------------------------------- */

bool ir_ref_cast(const ir_ref_call *c)
{
    const ir_tensor *a = c->in[0];
    ir_tensor *o = c->out[0];
    int64_t n = ir_tensor_numel(o);
    if (a->dtype == o->dtype) {
        memcpy(o->data, a->data, ir_tensor_nbytes(o));
        return true;
    }
    if (a->dtype == IR_FLOAT32 && o->dtype == IR_FLOAT64) {
        const float *s = a->data;
        double *d = o->data;
        for (int64_t i = 0; i < n; i++)
            d[i] = s[i];
        return true;
    }
    /* integers to integers (or bool) wrap; anything involving a float goes
     * through double, which saturates into integers and is exact elsewhere */
    bool ints = !ir_dtype_is_float(a->dtype) && !ir_dtype_is_float(o->dtype);
    for (int64_t i = 0; i < n; i++) {
        if (ints)
            ir_tensor_set_i64(o, i, ir_tensor_get_i64(a, i));
        else
            ir_tensor_set(o, i, ir_tensor_get(a, i));
    }
    return true;
}
