/* ref_image.c — the reference kernel of nn.upsampling and image.resize2d:
 * for each output pixel the plan of op_image.c gives the nearest source
 * index, or the two taps and the fraction of a linear interpolation on each
 * axis (taps clamped to the image, as topi's resize clamps them), or the
 * four taps and weights of a cubic one. Interpolation runs in double and
 * rounds once into the result. */
#include "ir/ir.h"

/* Element offset of (n, c, y, x) of x in the plan's layout. */
static int64_t offset(const ir_tensor *x, const ir_resize *r, int64_t n, int64_t ch, int64_t y, int64_t xx)
{
    int64_t nc = x->shape[r->nchw ? 1 : 3], h = r->h.in, w = r->w.in;
    return r->nchw ? ((n * nc + ch) * h + y) * w + xx : ((n * h + y) * w + xx) * nc + ch;
}

/* The cubic interpolation at output pixel (y, xx) of plane (n, ch). */
static double cubic_at(const ir_tensor *x, const ir_resize *r, int64_t n, int64_t ch, int64_t y, int64_t xx)
{
    int64_t iy[4], ix[4];
    bool in_y[4], in_x[4];
    double wy[4], wx[4], acc = 0;
    const ir_resize_axis *ax[2] = {&r->h, &r->w};
    int64_t at[2] = {y, xx}, *idx[2] = {iy, ix};
    bool *inside[2] = {in_y, in_x};
    double *w[2] = {wy, wx};
    for (int i = 0; i < 2; i++) {
        int64_t p = ax[i]->a * at[i] + ax[i]->b;
        double t = (double)(p - ir_floordiv(p, ax[i]->d) * ax[i]->d) / (double)ax[i]->d;
        ir_resize_cubic_taps(ax[i], at[i], idx[i], inside[i]);
        ir_resize_cubic_weights(t, r->alpha, r->exclude, inside[i], w[i]);
    }
    for (int j = 0; j < 4; j++) {
        double row = 0;
        for (int k = 0; k < 4; k++)
            row += wx[k] * ir_tensor_get(x, offset(x, r, n, ch, iy[j], ix[k]));
        acc += wy[j] * row;
    }
    return acc;
}

bool ir_ref_resize(const ir_ref_call *c)
{
    const ir_tensor *x = c->in[0];
    ir_tensor *o = c->out[0];
    ir_resize r;
    const char *why = ir_resize_plan(c->op, c->attrs, x->ndim, x->shape, &r);
    if (why) {
        su_buf_printf(c->err, "%s", why);
        return false;
    }
    int64_t nb = x->shape[0], nc = x->shape[r.nchw ? 1 : 3], ih = r.h.in, iw = r.w.in;
    int64_t oh = r.h.out, ow = r.w.out;
    /* element offsets of (n, c, y, x) in either layout */
#define AT(t, h, w, n, ch, y, xx) \
    (r.nchw ? (((n) * nc + (ch)) * (h) + (y)) * (w) + (xx) : (((n) * (h) + (y)) * (w) + (xx)) * nc + (ch))
    for (int64_t n = 0; n < nb; n++)
        for (int64_t y = 0; y < oh; y++) {
            int64_t y0, y1;
            double fy;
            ir_resize_taps(&r.h, y, &y0, &y1, &fy);
            int64_t yn = ir_resize_round(&r, &r.h, y);
            for (int64_t xx = 0; xx < ow; xx++) {
                int64_t x0, x1;
                double fx;
                ir_resize_taps(&r.w, xx, &x0, &x1, &fx);
                int64_t xn = ir_resize_round(&r, &r.w, xx);
                for (int64_t ch = 0; ch < nc; ch++) {
                    int64_t to = AT(o, oh, ow, n, ch, y, xx);
                    if (r.cubic) {
                        ir_tensor_set(o, to, cubic_at(x, &r, n, ch, y, xx));
                        continue;
                    }
                    if (!r.linear) {
                        ir_tensor_set(o, to, ir_tensor_get(x, AT(x, ih, iw, n, ch, yn, xn)));
                        continue;
                    }
                    double p00 = ir_tensor_get(x, AT(x, ih, iw, n, ch, y0, x0));
                    double p01 = ir_tensor_get(x, AT(x, ih, iw, n, ch, y0, x1));
                    double p10 = ir_tensor_get(x, AT(x, ih, iw, n, ch, y1, x0));
                    double p11 = ir_tensor_get(x, AT(x, ih, iw, n, ch, y1, x1));
                    double top = p00 * (1 - fx) + p01 * fx, bottom = p10 * (1 - fx) + p11 * fx;
                    ir_tensor_set(o, to, top * (1 - fy) + bottom * fy);
                }
            }
        }
#undef AT
    return true;
}
