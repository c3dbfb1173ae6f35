/* op_image.c — resizing: nn.upsampling (a scale per axis) and
 * image.resize2d (a target size), both NCHW or NHWC, nearest-neighbour or
 * (bi)linear, in TVM's definition (topi's resize2d, which upsampling calls
 * with the size rounded from the scale and the "asymmetric" or
 * "align_corners" mode). Every coordinate transformation TVM offers except
 * tf_crop_and_resize maps an output index y to the input coordinate
 * (a*y + b) / d with integers a, b, d, so the plan below keeps it as an exact
 * fraction: the nearest index and the linear taps are then the same in the
 * reference kernel and in compiled code, whatever their float precision.
 * Cubic interpolation is Keys' kernel over four taps an axis (taps clamped
 * to the image, or with cubic_exclude dropped and the others renormalized),
 * as topi and ONNX define it. */
#include <math.h>
#include <string.h>

#include "ir/ir.h"

const ir_attr_schema ir_schema_upsampling = IR_SCHEMA(
    {"scale_h", IR_AT_FLOAT, "1f"},
    {"scale_w", IR_AT_FLOAT, "1f"},
    {"layout", IR_AT_STR, "\"NCHW\""},
    {"method", IR_AT_STR, "\"nearest_neighbor\""},
    {"align_corners", IR_AT_BOOL, "False"});

const ir_attr_schema ir_schema_resize2d = IR_SCHEMA(
    {"roi", IR_AT_ANY, "[0f, 0f, 0f, 0f]"},
    {"size", IR_AT_INTS, "[]", true},
    {"layout", IR_AT_STR, "\"NCHW\""},
    {"method", IR_AT_STR, "\"linear\""},
    {"coordinate_transformation_mode", IR_AT_STR, "\"half_pixel\""},
    {"rounding_method", IR_AT_STR, "\"\""},
    {"cubic_alpha", IR_AT_FLOAT, "-0.5f"},
    {"cubic_exclude", IR_AT_INT, "0"},
    {"extrapolation_value", IR_AT_FLOAT, "0f"},
    {"out_dtype", IR_AT_STR, "\"\""});

int64_t ir_floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return q * b != a && (a < 0) != (b < 0) ? q - 1 : q;
}

int64_t ir_floormod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

/* The fraction of one axis for a coordinate transformation mode. */
static const char *axis_plan(const char *mode, int64_t in, int64_t out, ir_resize_axis *ax)
{
    *ax = (ir_resize_axis){0, 0, 1, in, out};
    if (!strcmp(mode, "asymmetric")) {
        *ax = (ir_resize_axis){in, 0, out, in, out};
    } else if (!strcmp(mode, "half_pixel") || (!strcmp(mode, "pytorch_half_pixel") && out > 1)) {
        *ax = (ir_resize_axis){2 * in, in - out, 2 * out, in, out};
    } else if (!strcmp(mode, "align_corners")) {
        if (out > 1)
            *ax = (ir_resize_axis){in - 1, 0, out - 1, in, out};
    } else if (!strcmp(mode, "tf_half_pixel_for_nn")) {
        *ax = (ir_resize_axis){2 * in, in, 2 * out, in, out};
    } else if (strcmp(mode, "pytorch_half_pixel") != 0) {
        return !strcmp(mode, "tf_crop_and_resize") ? "coordinate_transformation_mode \"tf_crop_and_resize\" is not supported"
                                                   : "unknown coordinate_transformation_mode";
    }
    return NULL;
}

const char *ir_resize_plan(const ir_op_def *op, const ir_attrs *at, int ndim, const int64_t *shape, ir_resize *r)
{
    bool up = op->id == IR_OP_UPSAMPLING;
    memset(r, 0, sizeof *r);
    if (ndim != 4)
        return "data must have rank 4";
    const char *layout = ir_attr_str(at, up ? IR_UPS_LAYOUT : IR_RESIZE_LAYOUT);
    if (strcmp(layout, "NCHW") && strcmp(layout, "NHWC"))
        return "only the layouts NCHW and NHWC are supported";
    r->nchw = !strcmp(layout, "NCHW");
    r->hdim = r->nchw ? 2 : 1;
    const char *method = ir_attr_str(at, up ? IR_UPS_METHOD : IR_RESIZE_METHOD);
    r->linear = !strcmp(method, up ? "bilinear" : "linear");
    r->cubic = !strcmp(method, up ? "bicubic" : "cubic");
    if (!r->linear && !r->cubic && strcmp(method, "nearest_neighbor"))
        return "unknown method";
    /* nn.upsampling has no cubic attributes: topi's defaults */
    r->alpha = up ? -0.5 : ir_attr_float(at, IR_RESIZE_CUBIC_ALPHA);
    r->exclude = !up && ir_attr_int(at, IR_RESIZE_CUBIC_EXCLUDE) != 0;
    int64_t in_h = shape[r->hdim], in_w = shape[r->hdim + 1], out_h, out_w;
    const char *mode, *rounding = "";
    if (up) {
        double sh = ir_attr_float(at, IR_UPS_SCALE_H), sw = ir_attr_float(at, IR_UPS_SCALE_W);
        if (!(sh > 0 && sw > 0 && sh * (double)in_h < 1e9 && sw * (double)in_w < 1e9))
            return "scales must be positive (and the result not huge)";
        /* the size as TVM computes it: round(extent * scale), ties to even */
        out_h = (int64_t)nearbyint((double)in_h * sh);
        out_w = (int64_t)nearbyint((double)in_w * sw);
        mode = ir_attr_bool(at, IR_UPS_ALIGN_CORNERS) ? "align_corners" : "asymmetric";
    } else {
        int64_t size[2];
        if (ir_attr_ints(at, IR_RESIZE_SIZE, size, 2) != 2 || size[0] < 0 || size[1] < 0)
            return "size must be two non-negative extents [height, width]";
        out_h = size[0];
        out_w = size[1];
        mode = ir_attr_str(at, IR_RESIZE_COORD_MODE);
        rounding = ir_attr_str(at, IR_RESIZE_ROUNDING);
    }
    static const char *const roundings[] = {"floor", "ceil", "round", "round_prefer_floor", "round_prefer_ceil"};
    r->rounding = !*rounding ? (!strcmp(mode, "align_corners") ? IR_ROUND_NEAREST_EVEN : IR_ROUND_FLOOR) : -1;
    for (int i = 0; i < 5 && *rounding; i++)
        if (!strcmp(rounding, roundings[i]))
            r->rounding = i;
    if (r->rounding < 0)
        return "unknown rounding_method";
    const char *why = axis_plan(mode, in_h, out_h, &r->h);
    return why ? why : axis_plan(mode, in_w, out_w, &r->w);
}

int64_t ir_resize_round(const ir_resize *r, const ir_resize_axis *ax, int64_t y)
{
    int64_t p = ax->a * y + ax->b, d = ax->d, k;
    switch (r->rounding) {
    case IR_ROUND_FLOOR: k = ir_floordiv(p, d); break;
    case IR_ROUND_CEIL: k = -ir_floordiv(-p, d); break;
    case IR_ROUND_PREFER_FLOOR: k = -ir_floordiv(d - 2 * p, 2 * d); break;   /* ceil(x - 1/2) */
    case IR_ROUND_PREFER_CEIL: k = ir_floordiv(2 * p + d, 2 * d); break;     /* floor(x + 1/2) */
    default:                                                                 /* ties to even */
        k = ir_floordiv(2 * p + d, 2 * d);
        if ((2 * p + d) % (2 * d) == 0 && k % 2 != 0)
            k--;
        break;
    }
    return k < 0 ? 0 : k >= ax->in ? ax->in - 1 : k;
}

void ir_resize_taps(const ir_resize_axis *ax, int64_t y, int64_t *i0, int64_t *i1, double *frac)
{
    int64_t p = ax->a * y + ax->b, k = ir_floordiv(p, ax->d);
    *frac = (double)(p - k * ax->d) / (double)ax->d;
    *i0 = k < 0 ? 0 : k >= ax->in ? ax->in - 1 : k;
    *i1 = k + 1 < 0 ? 0 : k + 1 >= ax->in ? ax->in - 1 : k + 1;
}

void ir_resize_cubic_taps(const ir_resize_axis *ax, int64_t y, int64_t idx[4], bool inside[4])
{
    int64_t k = ir_floordiv(ax->a * y + ax->b, ax->d);
    for (int j = 0; j < 4; j++) {
        int64_t i = k - 1 + j;
        inside[j] = i >= 0 && i < ax->in;
        idx[j] = i < 0 ? 0 : i >= ax->in ? ax->in - 1 : i;
    }
}

void ir_resize_cubic_weights(double t, double alpha, bool exclude, const bool inside[4], double w[4])
{
    /* Keys' kernel at the distances 1 + t, t, 1 - t, 2 - t of the taps */
    double A = alpha, d0 = 1 + t, d3 = 2 - t, s = 0;
    w[0] = ((A * d0 - 5 * A) * d0 + 8 * A) * d0 - 4 * A;
    w[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
    w[2] = ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1;
    w[3] = ((A * d3 - 5 * A) * d3 + 8 * A) * d3 - 4 * A;
    if (!exclude)
        return;
    for (int j = 0; j < 4; j++)
        s += w[j] = inside[j] ? w[j] : 0;
    for (int j = 0; j < 4; j++)
        w[j] = s != 0 ? w[j] / s : 0;
}

const ir_type *ir_rel_resize(ir_rel_ctx *cx, const ir_type *const *args, int nargs, const ir_attrs *attrs)
{
    const ir_type *x = ir_rel_tensor(cx, args, 0);
    if (!x)
        return NULL;
    ir_resize r;
    const char *why = ir_resize_plan(cx->op, attrs, x->ndim, x->shape, &r);
    if (why)
        return ir_rel_error(cx, "%s (data %s)", why, ir_type_str(cx->arena, x));
    ir_dtype dt = x->dtype;
    if (cx->op->id == IR_OP_RESIZE2D) {
        const char *od = ir_attr_str(attrs, IR_RESIZE_OUT_DTYPE);
        if (*od && !ir_dtype_parse(od, strlen(od), &dt))
            return ir_rel_error(cx, "unknown out_dtype \"%s\"", od);
    }
    if ((r.linear || r.cubic) && (!ir_dtype_is_float(x->dtype) || !ir_dtype_is_float(dt)))
        return ir_rel_error(cx, "%s interpolation needs float data, not %s", r.cubic ? "cubic" : "linear",
                            ir_dtype_name(x->dtype));
    int64_t shape[4];
    memcpy(shape, x->shape, sizeof shape);
    shape[r.hdim] = r.h.out;
    shape[r.hdim + 1] = r.w.out;
    return ir_tensor_type(cx->arena, dt, 4, shape);
}

int64_t ir_flops_resize(const ir_type *const *args, int nargs, const ir_attrs *attrs, const ir_type *out)
{
    /* linear: three lerps of two multiplies and adds each per output element;
     * cubic: 16 taps of a multiply and an add, and the two axes' weights */
    _Static_assert((int)IR_UPS_METHOD == (int)IR_RESIZE_METHOD, "both ops keep their method at one index");
    bool cubic = strstr(ir_attr_str(attrs, IR_RESIZE_METHOD), "cubic") != NULL;
    return ir_type_numel(out) * (cubic ? 40 : 6);
}
