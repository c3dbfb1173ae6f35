/* oracle.c — a deliberately naive evaluator of primitive functions, the
 * oracle of the code generation tests until the reference interpreter's
 * kernels replace it. It shares nothing with schedule/: every op is written
 * again as direct loops over output positions, in double precision (results
 * rounded to float32 after each op of a float32 result), from the semantics
 * of the type relations in ir/op_*.c. */
#include <math.h>
#include <string.h>

#include "tests/codegen/harness.h"

static int64_t numel(const hx_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= t->shape[i];
    return n;
}

hx_tensor *hx_tensor_new(ir_dtype dt, int ndim, const int64_t *shape)
{
    hx_tensor *t = su_calloc(1, sizeof *t);
    t->dtype = dt;
    t->ndim = ndim;
    if (ndim)
        memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    t->n = numel(t);
    t->v = su_calloc((size_t)(t->n ? t->n : 1), sizeof *t->v);
    return t;
}

void hx_tensor_free(hx_tensor *t)
{
    if (t) {
        free(t->v);
        free(t);
    }
}

void hx_tensors_free(hx_tensor **ts, int n)
{
    for (int i = 0; i < n; i++)
        hx_tensor_free(ts[i]);
}

static hx_tensor *like(const ir_type *ty)
{
    return hx_tensor_new(ty->dtype, ty->ndim, ty->shape);
}

/* Multi-index of flat position f in shape. */
static void unravel(const hx_tensor *t, int64_t f, int64_t *ix)
{
    for (int d = t->ndim; d-- > 0;) {
        ix[d] = f % t->shape[d];
        f /= t->shape[d];
    }
}

static int64_t ravel(const hx_tensor *t, const int64_t *ix)
{
    int64_t f = 0;
    for (int d = 0; d < t->ndim; d++)
        f = f * t->shape[d] + ix[d];
    return f;
}

/* Element of t at the broadcast of output index ix (rank n). */
static double bget(const hx_tensor *t, int n, const int64_t *ix)
{
    int64_t f = 0;
    for (int d = 0; d < t->ndim; d++) {
        int64_t i = t->shape[d] == 1 ? 0 : ix[n - t->ndim + d];
        f = f * t->shape[d] + i;
    }
    return t->v[f];
}

static double round_to(ir_dtype dt, double v)
{
    switch (dt) {
    case IR_FLOAT32: return (double)(float)v;
    case IR_BOOL: return v != 0;
    case IR_INT32: return (double)(int32_t)(int64_t)v;
    case IR_INT64: return (double)(int64_t)v;
    default: return v;
    }
}

/* The letters of a layout ("NCHW8c") with the number before each (0 if
 * none), and for every letter the extent of its sub-axis (1 if none);
 * returns the number of axes. */
static int layout_letters(const char *s, char *letter, int64_t *num, int64_t *split)
{
    int n = 0;
    int64_t v = 0;
    for (int L = 0; L < 26; L++)
        split[L] = 1;
    for (; *s; s++) {
        if (*s >= '0' && *s <= '9') {
            v = v * 10 + (*s - '0');
            continue;
        }
        letter[n] = *s;
        num[n++] = v;
        if (*s >= 'a' && *s <= 'z')
            split[*s - 'a'] = v;
        v = 0;
    }
    return n;
}

static const ir_attr_val *A(const ir_expr *c, const char *n)
{
    return ir_call_attr(c, n);
}

static int ints(const ir_expr *c, const char *n, int64_t *out)
{
    const ir_attr_val *v = A(c, n);
    if (v->kind == IR_AV_INT) {
        out[0] = v->i;
        return 1;
    }
    if (v->kind != IR_AV_LIST)
        return 0;
    for (int i = 0; i < v->n; i++)
        out[i] = v->items[i].i;
    return v->n;
}

static void pair(const ir_expr *c, const char *n, int64_t *o)
{
    int64_t v[2] = {1, 1};
    int k = ints(c, n, v);
    o[0] = v[0];
    o[1] = k == 2 ? v[1] : v[0];
}

static void pad4(const ir_expr *c, int64_t *o)
{
    int64_t v[4] = {0, 0, 0, 0};
    int k = ints(c, "padding", v);
    for (int i = 0; i < 4; i++)
        o[i] = k == 1 ? v[0] : k == 2 ? v[i % 2] : v[i];
}

static double unary(ir_op_id op, const ir_expr *c, double x)
{
    switch (op) {
    case IR_OP_RELU: return x > 0 ? x : 0;
    case IR_OP_LEAKY_RELU: return x > 0 ? x : x * A(c, "alpha")->f;
    case IR_OP_NEGATIVE: return -x;
    case IR_OP_ABS: return fabs(x);
    case IR_OP_EXP: return exp(x);
    case IR_OP_LOG: return log(x);
    case IR_OP_SQRT: return sqrt(x);
    case IR_OP_RSQRT: return 1 / sqrt(x);
    case IR_OP_TANH: return tanh(x);
    case IR_OP_SIGMOID: return 1 / (1 + exp(-x));
    case IR_OP_ERF: return erf(x);
    case IR_OP_FLOOR: return floor(x);
    case IR_OP_CEIL: return ceil(x);
    case IR_OP_CLIP: {
        double lo = A(c, "a_min")->f, hi = A(c, "a_max")->f;
        return x < lo ? lo : x > hi ? hi : x;
    }
    case IR_OP_LOGICAL_NOT: return !x;
    default: return x; /* cast, copy */
    }
}

static double binary(ir_op_id op, double x, double y, bool isint)
{
    switch (op) {
    case IR_OP_ADD: return x + y;
    case IR_OP_SUBTRACT: return x - y;
    case IR_OP_MULTIPLY: return x * y;
    case IR_OP_DIVIDE: return isint ? floor(x / y) : x / y;
    case IR_OP_POWER: return pow(x, y);
    case IR_OP_MAXIMUM: return x > y ? x : y;
    case IR_OP_MINIMUM: return x < y ? x : y;
    case IR_OP_EQUAL: return x == y;
    case IR_OP_NOT_EQUAL: return x != y;
    case IR_OP_LESS: return x < y;
    case IR_OP_LESS_EQUAL: return x <= y;
    case IR_OP_GREATER: return x > y;
    case IR_OP_GREATER_EQUAL: return x >= y;
    case IR_OP_LOGICAL_AND: return x && y;
    case IR_OP_LOGICAL_OR: return x || y;
    default: return NAN;
    }
}

static hx_tensor *conv2d(const ir_expr *c, const hx_tensor *x, const hx_tensor *w, const ir_type *ot)
{
    hx_tensor *o = like(ot);
    int64_t st[2], dil[2], pad[4], g = A(c, "groups")->i;
    pair(c, "strides", st);
    pair(c, "dilation", dil);
    pad4(c, pad);
    int64_t C = x->shape[1], H = x->shape[2], W = x->shape[3], K = w->shape[0], CG = w->shape[1];
    for (int64_t n = 0; n < o->shape[0]; n++)
        for (int64_t k = 0; k < K; k++)
            for (int64_t oh = 0; oh < o->shape[2]; oh++)
                for (int64_t ow = 0; ow < o->shape[3]; ow++) {
                    double acc = 0;
                    int64_t grp = k / (K / g);
                    for (int64_t ic = 0; ic < CG; ic++)
                        for (int64_t kh = 0; kh < w->shape[2]; kh++)
                            for (int64_t kw = 0; kw < w->shape[3]; kw++) {
                                int64_t h = oh * st[0] + kh * dil[0] - pad[0], ww = ow * st[1] + kw * dil[1] - pad[1];
                                if (h < 0 || h >= H || ww < 0 || ww >= W)
                                    continue;
                                acc += x->v[((n * C + grp * CG + ic) * H + h) * W + ww] *
                                       w->v[((k * CG + ic) * w->shape[2] + kh) * w->shape[3] + kw];
                            }
                    o->v[((n * K + k) * o->shape[2] + oh) * o->shape[3] + ow] = acc;
                }
    return o;
}

static hx_tensor *pool(const ir_expr *c, const hx_tensor *x, const ir_type *ot, bool is_max)
{
    hx_tensor *o = like(ot);
    int64_t k[2], st[2], dil[2], pad[4];
    pair(c, "pool_size", k);
    pair(c, "strides", st);
    pair(c, "dilation", dil);
    pad4(c, pad);
    bool incl = !is_max && A(c, "count_include_pad")->i;
    int64_t H = x->shape[2], W = x->shape[3];
    for (int64_t f = 0; f < o->n; f++) {
        int64_t ix[4];
        unravel(o, f, ix);
        double acc = is_max ? -INFINITY : 0;
        int64_t cnt = 0;
        for (int64_t a = 0; a < k[0]; a++)
            for (int64_t b = 0; b < k[1]; b++) {
                int64_t h = ix[2] * st[0] + a * dil[0] - pad[0], w = ix[3] * st[1] + b * dil[1] - pad[1];
                bool in = h >= 0 && h < H && w >= 0 && w < W;
                bool in_pad = h >= -pad[0] && h < H + pad[2] && w >= -pad[1] && w < W + pad[3];
                if (in) {
                    double v = x->v[((ix[0] * x->shape[1] + ix[1]) * H + h) * W + w];
                    acc = is_max ? (v > acc ? v : acc) : acc + v;
                }
                cnt += incl ? in_pad : in;
            }
        o->v[f] = is_max ? acc : acc / (double)(cnt ? cnt : 1);
    }
    return o;
}

/* A 3-D window attribute: one value or three. */
static void triple(const ir_expr *c, const char *n, int64_t *o)
{
    int64_t v[3] = {1, 1, 1};
    int k = ints(c, n, v);
    for (int i = 0; i < 3; i++)
        o[i] = k == 3 ? v[i] : v[0];
}

/* nn.conv3d (w given) or a 3-D pool (w NULL) over NCDHW, one output element
 * at a time: every tap of the window (times every input channel of the
 * group for a convolution). */
static hx_tensor *window3d(const ir_expr *c, const hx_tensor *x, const hx_tensor *w, const ir_type *ot, bool is_max)
{
    hx_tensor *o = like(ot);
    int64_t k[3], st[3], dil[3], pad[6] = {0}, pv[6] = {0}, ix[5], xi[5], wi[5];
    int np = ints(c, "padding", pv);
    for (int i = 0; i < 6; i++)
        pad[i] = np == 1 ? pv[0] : np == 3 ? pv[i % 3] : pv[i];
    if (w)
        memcpy(k, w->shape + 2, sizeof k);
    else
        triple(c, "pool_size", k);
    triple(c, "strides", st);
    triple(c, "dilation", dil);
    bool incl = !w && !is_max && A(c, "count_include_pad")->i;
    int64_t CG = w ? w->shape[1] : 1, g = w ? A(c, "groups")->i : 1;
    for (int64_t f = 0; f < o->n; f++) {
        unravel(o, f, ix);
        double acc = is_max ? -INFINITY : 0;
        int64_t cnt = 0;
        for (int64_t ic = 0; ic < CG; ic++)
            for (int64_t t = 0; t < k[0] * k[1] * k[2]; t++) {
                int64_t kk[3] = {t / (k[1] * k[2]), t / k[2] % k[1], t % k[2]};
                bool in = true, in_pad = true;
                for (int i = 0; i < 3; i++) {
                    int64_t p = ix[2 + i] * st[i] + kk[i] * dil[i] - pad[i];
                    in = in && p >= 0 && p < x->shape[2 + i];
                    in_pad = in_pad && p >= -pad[i] && p < x->shape[2 + i] + pad[3 + i];
                    xi[2 + i] = p;
                    wi[2 + i] = kk[i];
                }
                cnt += incl ? in_pad : in;
                if (!in)
                    continue;
                xi[0] = ix[0];
                xi[1] = w ? ix[1] / (o->shape[1] / g) * CG + ic : ix[1];
                double v = x->v[ravel(x, xi)];
                if (w) {
                    wi[0] = ix[1], wi[1] = ic;
                    acc += v * w->v[ravel(w, wi)];
                } else {
                    acc = is_max ? (v > acc ? v : acc) : acc + v;
                }
            }
        o->v[f] = w || is_max ? acc : acc / (double)(cnt ? cnt : 1);
    }
    return o;
}

static hx_tensor *adaptive_pool(const hx_tensor *x, const ir_type *ot)
{
    hx_tensor *o = like(ot);
    int64_t H = x->shape[2], W = x->shape[3], OH = o->shape[2], OW = o->shape[3];
    for (int64_t f = 0; f < o->n; f++) {
        int64_t ix[4];
        unravel(o, f, ix);
        int64_t h0 = ix[2] * H / OH, h1 = ((ix[2] + 1) * H + OH - 1) / OH;
        int64_t w0 = ix[3] * W / OW, w1 = ((ix[3] + 1) * W + OW - 1) / OW;
        double acc = 0;
        for (int64_t h = h0; h < h1; h++)
            for (int64_t w = w0; w < w1; w++)
                acc += x->v[((ix[0] * x->shape[1] + ix[1]) * H + h) * W + w];
        o->v[f] = acc / (double)((h1 - h0) * (w1 - w0));
    }
    return o;
}

/* Softmax, log_softmax and layer_norm: along one axis. */
static hx_tensor *along_axis(ir_op_id op, const ir_expr *c, hx_tensor *const *in, const ir_type *ot)
{
    const hx_tensor *x = in[0];
    hx_tensor *o = like(ot);
    int64_t axis = A(c, "axis")->i;
    axis = axis < 0 ? axis + x->ndim : axis;
    int64_t n = x->shape[axis], inner = 1;
    for (int d = (int)axis + 1; d < x->ndim; d++)
        inner *= x->shape[d];
    for (int64_t base = 0; base < x->n; base++) {
        if ((base / inner) % n != 0)
            continue;
        /* the row through base along axis */
        double m = -INFINITY, s = 0, mean = 0, var = 0;
        for (int64_t j = 0; j < n; j++) {
            double v = x->v[base + j * inner];
            m = v > m ? v : m;
            mean += v;
        }
        mean /= (double)n;
        for (int64_t j = 0; j < n; j++) {
            double v = x->v[base + j * inner];
            s += exp(v - m);
            var += (v - mean) * (v - mean);
        }
        var /= (double)n;
        for (int64_t j = 0; j < n; j++) {
            double v = x->v[base + j * inner], r;
            if (op == IR_OP_SOFTMAX)
                r = exp(v - m) / s;
            else if (op == IR_OP_LOG_SOFTMAX)
                r = v - m - log(s);
            else {
                r = (v - mean) / sqrt(var + A(c, "epsilon")->f);
                if (A(c, "scale")->i)
                    r *= in[1]->v[j];
                if (A(c, "center")->i)
                    r += in[2]->v[j];
            }
            o->v[base + j * inner] = r;
        }
    }
    return o;
}

static hx_tensor *reduce(ir_op_id op, const ir_expr *c, const hx_tensor *x, const ir_type *ot)
{
    hx_tensor *o = like(ot);
    int64_t axes[IR_MAX_DIMS];
    int na = A(c, "axis")->kind == IR_AV_NONE ? 0 : ints(c, "axis", axes);
    bool exclude = na > 0 && A(c, "exclude")->i, keep = A(c, "keepdims")->i, red[IR_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++)
        red[d] = na == 0 || exclude;
    for (int i = 0; i < na; i++)
        red[axes[i] < 0 ? axes[i] + x->ndim : axes[i]] = !exclude;
    bool last = op == IR_OP_ARGMAX && A(c, "select_last_index")->i;
    double *best = su_calloc((size_t)o->n, sizeof *best);
    int64_t *cnt = su_calloc((size_t)o->n, sizeof *cnt), *arg = su_calloc((size_t)o->n, sizeof *arg);
    for (int64_t f = 0; f < o->n; f++)
        best[f] = op == IR_OP_MIN ? INFINITY : op == IR_OP_MAX || op == IR_OP_ARGMAX ? -INFINITY : op == IR_OP_PROD ? 1 : 0;
    for (int64_t f = 0; f < x->n; f++) {
        int64_t ix[IR_MAX_DIMS], oi[IR_MAX_DIMS], k = 0, rflat = 0;
        unravel(x, f, ix);
        for (int d = 0; d < x->ndim; d++) {
            if (red[d]) {
                rflat = rflat * x->shape[d] + ix[d];
                if (keep)
                    oi[k++] = 0;
            } else {
                oi[k++] = ix[d];
            }
        }
        int64_t of = ravel(o, oi);
        double v = x->v[f];
        switch (op) {
        case IR_OP_MAX: best[of] = v > best[of] ? v : best[of]; break;
        case IR_OP_MIN: best[of] = v < best[of] ? v : best[of]; break;
        case IR_OP_PROD: best[of] *= v; break;
        case IR_OP_ARGMAX:
            if (v > best[of] || (last && v == best[of])) {
                best[of] = v;
                arg[of] = rflat;
            }
            break;
        default: best[of] += v;
        }
        cnt[of]++;
    }
    for (int64_t f = 0; f < o->n; f++)
        o->v[f] = op == IR_OP_MEAN ? best[f] / (double)cnt[f] : op == IR_OP_ARGMAX ? (double)arg[f] : best[f];
    free(best);
    free(cnt);
    free(arg);
    return o;
}

static hx_tensor *eval(hx_oracle *o, const ir_expr *e);

/* The input coordinate of output index y, in double, from topi's formulas
 * rearranged so that one division is the only rounding. */
static double resize_coord(const char *mode, int64_t y, int64_t in, int64_t out)
{
    if (!strcmp(mode, "asymmetric"))
        return (double)(y * in) / (double)out;
    if (!strcmp(mode, "align_corners"))
        return out > 1 ? (double)(y * (in - 1)) / (double)(out - 1) : 0;
    if (!strcmp(mode, "tf_half_pixel_for_nn"))
        return (double)((2 * y + 1) * in) / (double)(2 * out);
    if (!strcmp(mode, "pytorch_half_pixel") && out == 1)
        return 0;
    return (double)((2 * y + 1) * in - out) / (double)(2 * out);   /* half_pixel */
}

static int64_t clampi(double v, int64_t n)
{
    return v < 0 ? 0 : v > (double)(n - 1) ? n - 1 : (int64_t)v;
}

/* Keys' cubic kernel at distance s. */
static double keys(double s, double A)
{
    s = fabs(s);
    return s <= 1 ? ((A + 2) * s - (A + 3)) * s * s + 1 : s < 2 ? ((s - 5) * s + 8) * s * A - 4 * A : 0;
}

/* Cubic interpolation at (cy, cx): taps floor - 1 .. floor + 2 clamped
 * (dropped with exclude, the weights renormalized). */
static double cubic_at(const hx_tensor *x, int64_t *jx, int hd, double cy, double cx, double A, bool exclude)
{
    int64_t ih = x->shape[hd], iw = x->shape[hd + 1];
    double y0 = floor(cy), x0 = floor(cx), acc = 0, wsum_y = 0;
    for (int j = -1; j <= 2; j++) {
        double wy = keys(cy - (y0 + j), A), row = 0, wsum_x = 0;
        if (exclude && (y0 + j < 0 || y0 + j >= (double)ih))
            wy = 0;
        for (int k = -1; k <= 2; k++) {
            double wx = keys(cx - (x0 + k), A);
            if (exclude && (x0 + k < 0 || x0 + k >= (double)iw))
                wx = 0;
            jx[hd] = clampi(y0 + j, ih);
            jx[hd + 1] = clampi(x0 + k, iw);
            row += wx * x->v[ravel(x, jx)];
            wsum_x += wx;
        }
        acc += wy * (exclude ? row / wsum_x : row);
        wsum_y += wy;
    }
    return exclude ? acc / wsum_y : acc;
}

/* nn.upsampling and image.resize2d (NCHW or NHWC; nearest, linear or cubic). */
static hx_tensor *resize(const ir_expr *c, const hx_tensor *x, const ir_type *ot)
{
    hx_tensor *o = like(ot);
    bool up = ir_call_op(c)->id == IR_OP_UPSAMPLING, nchw = !strcmp(A(c, "layout")->s, "NCHW");
    const char *method = A(c, "method")->s;
    bool linear = !strcmp(method, "bilinear") || !strcmp(method, "linear");
    const char *mode = up ? (A(c, "align_corners")->i ? "align_corners" : "asymmetric")
                          : A(c, "coordinate_transformation_mode")->s;
    const char *rounding = up ? "" : A(c, "rounding_method")->s;
    if (!*rounding)
        rounding = !strcmp(mode, "align_corners") ? "round" : "floor";
    int hd = nchw ? 2 : 1, cd = nchw ? 1 : 3;
    int64_t ih = x->shape[hd], iw = x->shape[hd + 1], oh = o->shape[hd], ow = o->shape[hd + 1];
    int64_t ix[4], jx[4];
    for (int64_t f = 0; f < o->n; f++) {
        unravel(o, f, ix);
        double cy = resize_coord(mode, ix[hd], ih, oh), cx = resize_coord(mode, ix[hd + 1], iw, ow);
        jx[0] = ix[0];
        jx[cd] = ix[cd];
        if (strstr(method, "cubic")) {
            o->v[f] = cubic_at(x, jx, hd, cy, cx, up ? -0.5 : A(c, "cubic_alpha")->f, !up && A(c, "cubic_exclude")->i);
            continue;
        }
        if (!linear) {
            double ry, rx;
            if (!strcmp(rounding, "floor"))
                ry = floor(cy), rx = floor(cx);
            else if (!strcmp(rounding, "ceil"))
                ry = ceil(cy), rx = ceil(cx);
            else if (!strcmp(rounding, "round"))
                ry = nearbyint(cy), rx = nearbyint(cx);
            else if (!strcmp(rounding, "round_prefer_floor"))
                ry = ceil(cy - 0.5), rx = ceil(cx - 0.5);
            else
                ry = floor(cy + 0.5), rx = floor(cx + 0.5);
            jx[hd] = clampi(ry, ih);
            jx[hd + 1] = clampi(rx, iw);
            o->v[f] = x->v[ravel(x, jx)];
            continue;
        }
        double y0 = floor(cy), x0 = floor(cx), fy = cy - y0, fx = cx - x0, p[2][2];
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 2; k++) {
                jx[hd] = clampi(y0 + j, ih);
                jx[hd + 1] = clampi(x0 + k, iw);
                p[j][k] = x->v[ravel(x, jx)];
            }
        o->v[f] = (p[0][0] * (1 - fx) + p[0][1] * fx) * (1 - fy) + (p[1][0] * (1 - fx) + p[1][1] * fx) * fy;
    }
    return o;
}

/* Transposed convolution straight from its definition: output y sums the
 * inputs i and taps k with i * stride + k * dilation - pad_lo = y. */
static hx_tensor *conv_transpose(const ir_expr *c, const hx_tensor *x, const hx_tensor *w, const ir_type *ot)
{
    hx_tensor *o = like(ot);
    int ns = x->ndim - 2;
    int64_t st[3], dil[3], pad[6] = {0}, ix[5], xi[5], wi[5];
    const ir_attr_val *sv = A(c, "strides"), *dv = A(c, "dilation"), *pv = A(c, "padding");
    for (int i = 0; i < ns; i++) {
        st[i] = sv->items[sv->n == 1 ? 0 : i].i;
        dil[i] = dv->items[dv->n == 1 ? 0 : i].i;
        pad[i] = pv->items[pv->n == 1 ? 0 : i].i;   /* the leading side: one value, one per axis, or (lo..., hi...) */
    }
    int64_t g = A(c, "groups")->i, OG = w->shape[1], CG = x->shape[1] / g;
    for (int64_t f = 0; f < o->n; f++) {
        unravel(o, f, ix);
        double acc = 0;
        int64_t nk = 1;
        for (int i = 0; i < ns; i++)
            nk *= w->shape[2 + i];
        for (int64_t r = 0; r < CG; r++)
            for (int64_t t = 0; t < nk; t++) {
                int64_t kk[3], rest = t;
                for (int i = ns; i-- > 0;) {
                    kk[i] = rest % w->shape[2 + i];
                    rest /= w->shape[2 + i];
                }
                bool hit = true;
                xi[0] = ix[0];
                xi[1] = ix[1] / OG * CG + r;
                wi[0] = xi[1];
                wi[1] = ix[1] % OG;
                for (int i = 0; i < ns && hit; i++) {
                    int64_t num = ix[2 + i] + pad[i] - kk[i] * dil[i];
                    hit = num >= 0 && num % st[i] == 0 && num / st[i] < x->shape[2 + i];
                    xi[2 + i] = hit ? num / st[i] : 0;
                    wi[2 + i] = kk[i];
                }
                if (hit)
                    acc += x->v[ravel(x, xi)] * w->v[ravel(w, wi)];
            }
        o->v[f] = acc;
    }
    return o;
}

static hx_tensor *eval_nn(const ir_expr *c, hx_tensor *const *in, const ir_type *ot);

/* t with its axes reordered: axis i of the result is axis pos[i] of t (or,
 * back, axis pos[i] of the result is axis i of t). */
static hx_tensor *permuted(const hx_tensor *t, const int pos[4], bool back)
{
    int64_t shape[4], ix[4], jx[4];
    for (int i = 0; i < 4; i++) {
        if (back)
            shape[pos[i]] = t->shape[i];
        else
            shape[i] = t->shape[pos[i]];
    }
    hx_tensor *r = hx_tensor_new(t->dtype, 4, shape);
    for (int64_t f = 0; f < t->n; f++) {
        unravel(t, f, ix);
        for (int i = 0; i < 4; i++) {
            if (back)
                jx[pos[i]] = ix[i];
            else
                jx[i] = ix[pos[i]];
        }
        r->v[ravel(r, jx)] = t->v[f];
    }
    return r;
}

/* Convolution and pooling in a layout other than NCHW/OIHW: the NCHW
 * evaluation of transposed copies, transposed back. False when the call is
 * in NCHW already. */
static bool relaid(const ir_expr *c, const char *data_attr, const char *kernel_attr, hx_tensor *const *in,
                   const ir_type *ot, hx_tensor **o)
{
    static const int ident[4] = {0, 1, 2, 3};
    int dp[4], kp[4], op[4];
    const char *dl = A(c, data_attr)->s, *ol = A(c, "out_layout")->s;
    ir_layout_perm(dl, "NCHW", dp);
    ir_layout_perm(*ol ? ol : dl, "NCHW", op);
    if (kernel_attr)
        ir_layout_perm(A(c, kernel_attr)->s, "OIHW", kp);
    else
        memcpy(kp, ident, sizeof kp);
    if (!memcmp(dp, ident, sizeof dp) && !memcmp(kp, ident, sizeof kp) && !memcmp(op, ident, sizeof op))
        return false;
    hx_tensor *cin[2] = {permuted(in[0], dp, false), kernel_attr ? permuted(in[1], kp, false) : NULL};
    int64_t shape[4];
    for (int i = 0; i < 4; i++)
        shape[i] = ot->shape[op[i]];
    ir_type ct = *ot;
    ct.shape = shape;
    hx_tensor *r = eval_nn(c, cin, &ct);
    *o = permuted(r, op, true);
    hx_tensor_free(r);
    hx_tensor_free(cin[0]);
    hx_tensor_free(cin[1]);
    return true;
}

/* The NCHW evaluation of a convolution or pooling call on canonical inputs. */
static hx_tensor *eval_nn(const ir_expr *c, hx_tensor *const *in, const ir_type *ot)
{
    switch (ir_call_op(c)->id) {
    case IR_OP_CONV2D: return conv2d(c, in[0], in[1], ot);
    case IR_OP_MAX_POOL2D: return pool(c, in[0], ot, true);
    case IR_OP_AVG_POOL2D: return pool(c, in[0], ot, false);
    default: return adaptive_pool(in[0], ot);
    }
}

static hx_tensor *eval_call(hx_oracle *or, const ir_expr *c)
{
    const ir_op_def *op = ir_call_op(c);
    hx_tensor *in[8] = {0};
    int nin = c->u.call.nargs;
    const ir_expr *tuple = NULL;
    if (op->id == IR_OP_CONCATENATE || op->id == IR_OP_STACK) {
        tuple = c->u.call.args[0];
        nin = tuple->u.tuple.n;
        for (int i = 0; i < nin && i < 8; i++)
            in[i] = eval(or, tuple->u.tuple.fields[i]);
    } else {
        for (int i = 0; i < nin && i < 8; i++)
            in[i] = eval(or, c->u.call.args[i]);
    }
    const ir_type *ot = c->type;
    hx_tensor *o = NULL, *x = in[0];
    int64_t ix[IR_MAX_DIMS], jx[IR_MAX_DIMS];
    switch (op->id) {
    case IR_OP_CONV2D:
        if (relaid(c, "data_layout", "kernel_layout", in, ot, &o))
            break;
        o = conv2d(c, x, in[1], ot);
        break;
    case IR_OP_DENSE: {
        o = like(ot);
        int64_t K = in[1]->shape[1], N = in[1]->shape[0];
        for (int64_t f = 0; f < o->n; f++) {
            double acc = 0;
            for (int64_t k = 0; k < K; k++)
                acc += x->v[f / N * K + k] * in[1]->v[f % N * K + k];
            o->v[f] = acc;
        }
        break;
    }
    case IR_OP_BATCH_MATMUL: {
        o = like(ot);
        bool ta = A(c, "transpose_a")->i, tb = A(c, "transpose_b")->i;
        const hx_tensor *y = in[1];
        int64_t K = x->shape[ta ? 1 : 2];
        for (int64_t f = 0; f < o->n; f++) {
            unravel(o, f, ix);
            int64_t bx = x->shape[0] == 1 ? 0 : ix[0], by = y->shape[0] == 1 ? 0 : ix[0];
            double acc = 0;
            for (int64_t k = 0; k < K; k++) {
                int64_t xi[3] = {bx, ta ? k : ix[1], ta ? ix[1] : k}, yi[3] = {by, tb ? ix[2] : k, tb ? k : ix[2]};
                acc += x->v[ravel(x, xi)] * y->v[ravel(y, yi)];
            }
            o->v[f] = acc;
        }
        break;
    }
    case IR_OP_MAX_POOL2D:
    case IR_OP_AVG_POOL2D:
    case IR_OP_GLOBAL_AVG_POOL2D:
    case IR_OP_ADAPTIVE_AVG_POOL2D:
        if (relaid(c, "layout", NULL, in, ot, &o))
            break;
        o = op->id == IR_OP_MAX_POOL2D || op->id == IR_OP_AVG_POOL2D ? pool(c, x, ot, op->id == IR_OP_MAX_POOL2D)
                                                                      : adaptive_pool(x, ot);
        break;
    case IR_OP_SOFTMAX:
    case IR_OP_LOG_SOFTMAX:
    case IR_OP_LAYER_NORM: o = along_axis(op->id, c, in, ot); break;
    case IR_OP_BIAS_ADD: {
        o = like(ot);
        int64_t axis = A(c, "axis")->i;
        axis = axis < 0 ? axis + x->ndim : axis;
        for (int64_t f = 0; f < o->n; f++) {
            unravel(o, f, ix);
            o->v[f] = x->v[f] + in[1]->v[ix[axis]];
        }
        break;
    }
    case IR_OP_RESHAPE:
    case IR_OP_BATCH_FLATTEN:
    case IR_OP_SQUEEZE:
    case IR_OP_EXPAND_DIMS:
        o = like(ot);
        memcpy(o->v, x->v, (size_t)o->n * sizeof *o->v);
        break;
    case IR_OP_TRANSPOSE: {
        o = like(ot);
        int64_t axes[IR_MAX_DIMS];
        int na = A(c, "axes")->kind == IR_AV_NONE ? 0 : ints(c, "axes", axes);
        for (int64_t f = 0; f < o->n; f++) {
            unravel(o, f, ix);
            for (int d = 0; d < o->ndim; d++) {
                int64_t a = na ? axes[d] : o->ndim - 1 - d;
                jx[a < 0 ? a + o->ndim : a] = ix[d];
            }
            o->v[f] = x->v[ravel(x, jx)];
        }
        break;
    }
    case IR_OP_CONCATENATE: {
        o = like(ot);
        int64_t axis = A(c, "axis")->i;
        axis = axis < 0 ? axis + o->ndim : axis;
        for (int64_t f = 0; f < o->n; f++) {
            unravel(o, f, ix);
            int k = 0;
            while (ix[axis] >= in[k]->shape[axis])
                ix[axis] -= in[k++]->shape[axis];
            o->v[f] = in[k]->v[ravel(in[k], ix)];
        }
        break;
    }
    case IR_OP_ZEROS_LIKE:
    case IR_OP_ONES_LIKE:
    case IR_OP_FULL:
        o = like(ot);
        for (int64_t f = 0; f < o->n; f++)
            o->v[f] = op->id == IR_OP_ZEROS_LIKE ? 0 : op->id == IR_OP_ONES_LIKE ? 1 : x->v[0];
        break;
    case IR_OP_ARANGE:
        o = like(ot);
        for (int64_t f = 0; f < o->n; f++)
            o->v[f] = in[0]->v[0] + (double)f * in[2]->v[0];
        break;
    case IR_OP_SHAPE_OF:
        o = like(ot);
        for (int64_t f = 0; f < o->n; f++)
            o->v[f] = (double)x->shape[f];
        break;
    case IR_OP_STACK: {
        o = like(ot);
        int64_t axis = A(c, "axis")->i;
        axis = axis < 0 ? axis + o->ndim : axis;
        for (int64_t f = 0; f < o->n; f++) {
            unravel(o, f, ix);
            for (int d = 0, e = 0; d < o->ndim; d++)
                if (d != axis)
                    jx[e++] = ix[d];
            o->v[f] = in[ix[axis]]->v[ravel(in[ix[axis]], jx)];
        }
        break;
    }
    case IR_OP_LAYOUT_TRANSFORM: {
        /* scatter: each input element to the output position of its primal coordinates */
        o = like(ot);
        char sl[IR_MAX_DIMS], dl[IR_MAX_DIMS];
        int64_t sf[IR_MAX_DIMS], df[IR_MAX_DIMS], ssplit[26], dsplit[26];
        int ns = layout_letters(A(c, "src_layout")->s, sl, sf, ssplit);
        int nd = layout_letters(A(c, "dst_layout")->s, dl, df, dsplit);
        for (int64_t f = 0; f < x->n; f++) {
            unravel(x, f, ix);
            int64_t coord[26] = {0};
            for (int d = 0; d < ns; d++)
                coord[(sl[d] | 0x20) - 'a'] += sl[d] >= 'a' ? ix[d] : ix[d] * ssplit[sl[d] - 'A'];
            for (int d = 0; d < nd; d++) {
                int L = (dl[d] | 0x20) - 'a';
                jx[d] = dl[d] >= 'a' ? coord[L] % dsplit[L] : coord[L] / dsplit[L];
            }
            o->v[ravel(o, jx)] = x->v[f];
        }
        break;
    }
    case IR_OP_CONV1D: {
        o = like(ot);
        const hx_tensor *w = in[1];
        int64_t st = A(c, "strides")->items ? A(c, "strides")->items[0].i : A(c, "strides")->i;
        int64_t dil = A(c, "dilation")->items ? A(c, "dilation")->items[0].i : A(c, "dilation")->i;
        const ir_attr_val *pv = A(c, "padding");
        int64_t pl = pv->kind == IR_AV_LIST ? pv->items[0].i : pv->i, g = A(c, "groups")->i;
        int64_t CG = w->shape[1], K = w->shape[2], O = w->shape[0];
        for (int64_t f = 0; f < o->n; f++) {
            unravel(o, f, ix);
            double acc = 0;
            for (int64_t i = 0; i < CG; i++)
                for (int64_t k = 0; k < K; k++) {
                    int64_t p = ix[2] * st - pl + k * dil;
                    int64_t xi[3] = {ix[0], ix[1] / (O / g) * CG + i, p}, wi[3] = {ix[1], i, k};
                    if (p >= 0 && p < x->shape[2])
                        acc += x->v[ravel(x, xi)] * w->v[ravel(w, wi)];
                }
            o->v[f] = acc;
        }
        break;
    }
    case IR_OP_CONV2D_TRANSPOSE:
    case IR_OP_CONV1D_TRANSPOSE:
    case IR_OP_CONV3D_TRANSPOSE: o = conv_transpose(c, x, in[1], ot); break;
    case IR_OP_CONV3D: o = window3d(c, x, in[1], ot, false); break;
    case IR_OP_MAX_POOL3D:
    case IR_OP_AVG_POOL3D: o = window3d(c, x, NULL, ot, op->id == IR_OP_MAX_POOL3D); break;
    case IR_OP_UPSAMPLING:
    case IR_OP_RESIZE2D: o = resize(c, x, ot); break;
    case IR_OP_STRIDED_SLICE: {
        /* begin/end/strides over the leading axes, no axes attribute, end mode */
        o = like(ot);
        int64_t b[IR_MAX_DIMS], s[IR_MAX_DIMS];
        int nb = ints(c, "begin", b), ns = A(c, "strides")->kind == IR_AV_NONE ? 0 : ints(c, "strides", s);
        for (int64_t f = 0; f < o->n; f++) {
            unravel(o, f, ix);
            for (int d = 0; d < x->ndim; d++) {
                int64_t st = d < ns ? s[d] : 1, bb = d < nb ? b[d] : 0, n = x->shape[d];
                bb = bb < 0 ? bb + n : bb;
                bb = bb < 0 ? 0 : bb > n ? n : bb;
                jx[d] = bb + ix[d] * st;
            }
            o->v[f] = x->v[ravel(x, jx)];
        }
        break;
    }
    case IR_OP_TAKE: {
        /* axis given, batch_dims 0, clip mode */
        o = like(ot);
        int64_t axis = A(c, "axis")->i;
        axis = axis < 0 ? axis + x->ndim : axis;
        const hx_tensor *ind = in[1];
        for (int64_t f = 0; f < o->n; f++) {
            unravel(o, f, ix);
            int64_t ii[IR_MAX_DIMS];
            for (int d = 0; d < ind->ndim; d++)
                ii[d] = ix[axis + d];
            int64_t v = (int64_t)ind->v[ravel(ind, ii)];
            v = v < 0 ? 0 : v >= x->shape[axis] ? x->shape[axis] - 1 : v;
            for (int d = 0; d < x->ndim; d++)
                jx[d] = d < axis ? ix[d] : d == axis ? v : ix[d - 1 + ind->ndim];
            o->v[f] = x->v[ravel(x, jx)];
        }
        break;
    }
    case IR_OP_PAD: {
        /* constant mode */
        o = like(ot);
        const ir_attr_val *pw = A(c, "pad_width");
        double value = nin > 1 ? in[1]->v[0] : 0;
        for (int64_t f = 0; f < o->n; f++) {
            unravel(o, f, ix);
            bool inside = true;
            for (int d = 0; d < x->ndim; d++) {
                jx[d] = ix[d] - pw->items[d].items[0].i;
                inside = inside && jx[d] >= 0 && jx[d] < x->shape[d];
            }
            o->v[f] = inside ? x->v[ravel(x, jx)] : value;
        }
        break;
    }
    case IR_OP_SUM:
    case IR_OP_MEAN:
    case IR_OP_MAX:
    case IR_OP_MIN:
    case IR_OP_PROD:
    case IR_OP_ARGMAX: o = reduce(op->id, c, x, ot); break;
    case IR_OP_WHERE:
        o = like(ot);
        for (int64_t f = 0; f < o->n; f++) {
            unravel(o, f, ix);
            o->v[f] = bget(in[0], o->ndim, ix) ? bget(in[1], o->ndim, ix) : bget(in[2], o->ndim, ix);
        }
        break;
    default:
        if (nin == 1 && op->pattern == IR_PAT_ELEMWISE) {
            o = like(ot);
            for (int64_t f = 0; f < o->n; f++)
                o->v[f] = unary(op->id, c, x->v[f]);
        } else if (nin == 2) {
            o = like(ot);
            bool isint = !ir_dtype_is_float(x->dtype);
            for (int64_t f = 0; f < o->n; f++) {
                unravel(o, f, ix);
                o->v[f] = binary(op->id, bget(in[0], o->ndim, ix), bget(in[1], o->ndim, ix), isint);
            }
        } else {
            su_panic("oracle: no reference for %s", op->name);
        }
    }
    for (int64_t f = 0; f < o->n; f++)
        o->v[f] = round_to(o->dtype, o->v[f]);
    for (int i = 0; i < 8; i++)
        if (in[i] && !in[i]->borrowed)
            hx_tensor_free(in[i]);
    return o;
}

static hx_tensor *eval(hx_oracle *or, const ir_expr *e)
{
    switch (e->kind) {
    case IR_VAR:
        for (int i = 0; i < or->func->u.func.nparams; i++)
            if (or->func->u.func.params[i] == e)
                return or->inputs[i];
        su_panic("oracle: free variable");
    case IR_CONST: {
        const ir_tensor *v = e->u.constant.value;
        hx_tensor *t = hx_tensor_new(v->dtype, v->ndim, v->shape);
        for (int64_t i = 0; i < t->n; i++)
            t->v[i] = ir_tensor_get(v, i);
        return t;
    }
    case IR_CALL: return eval_call(or, e);
    case IR_PROJ: {
        /* split(x).i */
        const ir_expr *c = e->u.proj.tuple;
        if (c->kind != IR_CALL || ir_call_op(c)->id != IR_OP_SPLIT)
            su_panic("oracle: projection of something other than split");
        hx_tensor *x = eval(or, c->u.call.args[0]);
        const ir_type *ft = c->type->fields[e->u.proj.index];
        hx_tensor *o = like(ft);
        int64_t axis = A(c, "axis")->i, begin = 0, ix[IR_MAX_DIMS];
        axis = axis < 0 ? axis + x->ndim : axis;
        for (int i = 0; i < e->u.proj.index; i++)
            begin += c->type->fields[i]->shape[axis];
        for (int64_t f = 0; f < o->n; f++) {
            unravel(o, f, ix);
            ix[axis] += begin;
            o->v[f] = x->v[ravel(x, ix)];
        }
        if (!x->borrowed)
            hx_tensor_free(x);
        return o;
    }
    default: su_panic("oracle: cannot evaluate a %s", ir_expr_kind_name(e->kind));
    }
}

int hx_oracle_run(const ir_expr *func, hx_tensor *const *inputs, hx_tensor **outputs)
{
    hx_oracle or = {func, inputs};
    for (int i = 0; i < func->u.func.nparams; i++)
        inputs[i]->borrowed = true;
    const ir_expr *body = func->u.func.body;
    if (body->kind == IR_TUPLE) {
        for (int i = 0; i < body->u.tuple.n; i++) {
            outputs[i] = eval(&or, body->u.tuple.fields[i]);
            if (outputs[i]->borrowed) {
                hx_tensor *c = hx_tensor_new(outputs[i]->dtype, outputs[i]->ndim, outputs[i]->shape);
                memcpy(c->v, outputs[i]->v, (size_t)c->n * sizeof *c->v);
                outputs[i] = c;
            }
        }
        return body->u.tuple.n;
    }
    outputs[0] = eval(&or, body);
    if (outputs[0]->borrowed) {
        hx_tensor *c = hx_tensor_new(outputs[0]->dtype, outputs[0]->ndim, outputs[0]->shape);
        memcpy(c->v, outputs[0]->v, (size_t)c->n * sizeof *c->v);
        outputs[0] = c;
    }
    return 1;
}
