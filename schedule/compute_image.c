/* compute_image.c — the compute definition of nn.upsampling and
 * image.resize2d. The input coordinate of each output index is the exact
 * fraction of the plan (ir/op_image.c), so the nearest index and the linear
 * taps are integer arithmetic on the loop variables, as in the reference
 * kernel; only the interpolation weights are floats. Cubic interpolation
 * reads 4 x 4 taps with Keys' weights, the same formulas as
 * ir_resize_cubic_weights. */
#include "schedule/schedule.h"

#define VAR(v) sch_varref(a, v)
#define I(v) sch_int(a, v)

static const sch_expr *clamp(su_arena *a, const sch_expr *k, int64_t n)
{
    return sch_max(a, sch_min(a, k, I(n - 1)), I(0));
}

/* The nearest input index on one axis, as ir_resize_round computes it. */
static const sch_expr *nearest(su_arena *a, const ir_resize *r, const ir_resize_axis *ax, const sch_expr *y)
{
    const sch_expr *p = sch_add(a, sch_mul(a, I(ax->a), y), I(ax->b)), *k;
    int64_t d = ax->d;
    switch (r->rounding) {
    case IR_ROUND_FLOOR: k = sch_div(a, p, I(d)); break;
    case IR_ROUND_CEIL: k = sch_sub(a, I(0), sch_div(a, sch_sub(a, I(0), p), I(d))); break;
    case IR_ROUND_PREFER_FLOOR: k = sch_sub(a, I(0), sch_div(a, sch_sub(a, I(d), sch_mul(a, I(2), p)), I(2 * d))); break;
    case IR_ROUND_PREFER_CEIL: k = sch_div(a, sch_add(a, sch_mul(a, I(2), p), I(d)), I(2 * d)); break;
    default: {
        const sch_expr *t = sch_add(a, sch_mul(a, I(2), p), I(d));
        const sch_expr *q = sch_div(a, t, I(2 * d));
        const sch_expr *tie = sch_and(a, sch_bin(a, SCH_EQ, sch_mod(a, t, I(2 * d)), I(0)),
                                      sch_bin(a, SCH_NE, sch_mod(a, q, I(2)), I(0)));
        k = sch_select(a, tie, sch_sub(a, q, I(1)), q);
        break;
    }
    }
    return clamp(a, k, ax->in);
}

/* Linear taps: the clamped first and second index and the weight of the second. */
static void taps(su_arena *a, const ir_resize_axis *ax, const sch_expr *y, ir_dtype dt, const sch_expr **i0,
                 const sch_expr **i1, const sch_expr **frac)
{
    const sch_expr *p = sch_add(a, sch_mul(a, I(ax->a), y), I(ax->b));
    const sch_expr *k = sch_div(a, p, I(ax->d));
    *frac = sch_div(a, sch_cast(a, dt, sch_sub(a, p, sch_mul(a, k, I(ax->d)))), sch_float(a, dt, (double)ax->d));
    *i0 = clamp(a, k, ax->in);
    *i1 = clamp(a, sch_add(a, k, I(1)), ax->in);
}

/* Cubic taps on one axis: the four clamped indices and their weights. */
static void cubic_taps(su_arena *a, const ir_resize *r, const ir_resize_axis *ax, const sch_expr *y, ir_dtype dt,
                       const sch_expr *idx[4], const sch_expr *w[4])
{
    const sch_expr *p = sch_add(a, sch_mul(a, I(ax->a), y), I(ax->b));
    const sch_expr *k = sch_div(a, p, I(ax->d));
    const sch_expr *t = sch_div(a, sch_cast(a, dt, sch_sub(a, p, sch_mul(a, k, I(ax->d)))), sch_float(a, dt, (double)ax->d));
#define F(v) sch_float(a, dt, v)
    double A = r->alpha;
    const sch_expr *one = F(1), *u = sch_sub(a, one, t);
    /* Keys' kernel: a * |d|^3 - 5a * |d|^2 + 8a * |d| - 4a for the outer taps
     * (distance 1 + t and 2 - t), (a + 2) |d|^3 - (a + 3) |d|^2 + 1 for the inner */
    const sch_expr *outer[2] = {sch_add(a, one, t), sch_add(a, one, u)}, *inner[2] = {t, u};
    for (int j = 0; j < 2; j++) {
        const sch_expr *d = outer[j], *e = inner[j];
        w[j ? 3 : 0] = sch_sub(a, sch_mul(a, sch_add(a, sch_mul(a, sch_sub(a, sch_mul(a, F(A), d), F(5 * A)), d), F(8 * A)), d),
                               F(4 * A));
        w[j ? 2 : 1] = sch_add(a, sch_mul(a, sch_mul(a, sch_sub(a, sch_mul(a, F(A + 2), e), F(A + 3)), e), e), one);
    }
#undef F
    const sch_expr *sum = NULL;
    for (int j = 0; j < 4; j++) {
        const sch_expr *i = sch_add(a, k, I(j - 1));
        idx[j] = clamp(a, i, ax->in);
        if (r->exclude) {
            const sch_expr *in = sch_and(a, sch_bin(a, SCH_GE, i, I(0)), sch_bin(a, SCH_LT, i, I(ax->in)));
            w[j] = sch_select(a, in, w[j], sch_float(a, dt, 0));
            sum = sum ? sch_add(a, sum, w[j]) : w[j];
        }
    }
    for (int j = 0; r->exclude && j < 4; j++)
        w[j] = sch_div(a, w[j], sum);
}

/* The sum of the 4 x 4 taps around (y, xx) weighted by both axes' weights. */
static const sch_expr *cubic(su_arena *a, const ir_resize *r, sch_tensor *x, const sch_expr **ix, const sch_expr *y,
                             const sch_expr *xx)
{
    const sch_expr *iy[4], *wy[4], *iw[4], *wx[4], *v = NULL;
    cubic_taps(a, r, &r->h, y, x->dtype, iy, wy);
    cubic_taps(a, r, &r->w, xx, x->dtype, iw, wx);
    for (int j = 0; j < 4; j++) {
        const sch_expr *row = NULL;
        for (int k = 0; k < 4; k++) {
            ix[r->hdim] = iy[j];
            ix[r->hdim + 1] = iw[k];
            const sch_expr *tap = sch_mul(a, wx[k], sch_read(a, x, 4, ix));
            row = row ? sch_add(a, row, tap) : tap;
        }
        v = v ? sch_add(a, v, sch_mul(a, wy[j], row)) : sch_mul(a, wy[j], row);
    }
    return v;
}

bool sch_compute_resize(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *x = in[0];
    ir_resize r;
    const ir_expr *c = cx->call;
    const char *why = ir_resize_plan(ir_call_op(c), c->u.call.attrs, x->ndim, x->shape, &r);
    if (why)
        return sch_cctx_error(cx, "%s", why);
    sch_tensor *t = sch_stage_like(cx, 0, NULL);
    const sch_expr *ix[4];
    for (int i = 0; i < 4; i++)
        ix[i] = VAR(t->axes[i]);
    const sch_expr *y = ix[r.hdim], *xx = ix[r.hdim + 1];
    const sch_expr *v;
    if (r.cubic) {
        v = cubic(a, &r, x, ix, y, xx);
    } else if (!r.linear) {
        ix[r.hdim] = nearest(a, &r, &r.h, y);
        ix[r.hdim + 1] = nearest(a, &r, &r.w, xx);
        v = sch_read(a, x, 4, ix);
    } else {
        ir_dtype dt = x->dtype;
        const sch_expr *y0, *y1, *fy, *x0, *x1, *fx, *p[2][2];
        taps(a, &r.h, y, dt, &y0, &y1, &fy);
        taps(a, &r.w, xx, dt, &x0, &x1, &fx);
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 2; k++) {
                ix[r.hdim] = j ? y1 : y0;
                ix[r.hdim + 1] = k ? x1 : x0;
                p[j][k] = sch_read(a, x, 4, ix);
            }
        const sch_expr *one = sch_float(a, dt, 1);
        const sch_expr *top = sch_add(a, sch_mul(a, p[0][0], sch_sub(a, one, fx)), sch_mul(a, p[0][1], fx));
        const sch_expr *bot = sch_add(a, sch_mul(a, p[1][0], sch_sub(a, one, fx)), sch_mul(a, p[1][1], fx));
        v = sch_add(a, sch_mul(a, top, sch_sub(a, one, fy)), sch_mul(a, bot, fy));
    }
    t->body = v->dtype == t->dtype ? v : sch_cast(a, t->dtype, v);
    out[0] = t;
    *nout = 1;
    return true;
}
