/* compute_winograd.c — the compute definition of
 * nn.contrib_conv2d_winograd_without_weight_transform (docs/winograd.md),
 * stages over tiles (ty, tx) of m x m outputs:
 *   bt[x, i], at[a, x]         the transform matrices B^T and A^T as tables
 *                              (a select over their entries, computed once)
 *   pad[n, c, h, w]            the data, zero outside the image, as large as
 *                              the tiles reach (th m + 2 x tw m + 2)
 *   bd[x, j, c, n, ty, tx]     = sum over i of B^T[x][i] pad[n, c, ty m + i, tx m + j]
 *   v[x, y, c, n, ty, tx]      = sum over j of B^T[y][j] bd[x, j, c, n, ty, tx]   (V = B^T d B)
 *   mm[x, y, k, n, ty, tx]     = sum over c of U[x, y, k, c] v[x, y, c, n, ty, tx]
 *                              (the alpha^2 GEMMs, K x C by C x tiles: the flops)
 *   am[a, y, k, n, ty, tx]     = sum over x of A^T[a][x] mm[x, y, k, n, ty, tx]
 *   out[n, k, oh, ow]          = sum over y of A^T[ow % m][y] am[oh % m, y, k, n, oh / m, ow / m]
 * The transforms are separable (2 alpha^3 products per tile and channel
 * instead of alpha^4), and tiles are the innermost axes of V and M so that a
 * GEMM's columns are contiguous. The tables are stages rather than constants
 * in the bodies: inlined (the default schedule) they are selects, computed at
 * the root (the template) they are 36 loads from L1. The epilogue (bias,
 * relu, residual) reads out as it reads a conv2d's. */
#include "schedule/schedule.h"

#define VAR(v) sch_varref(a, v)
#define I(v) sch_int(a, v)

/* A rows x cols table of mat as a stage: a select over the nonzero entries. */
static sch_tensor *table(sch_cctx *cx, ir_dtype dt, const char *tag, const double (*mat)[IR_WINO_MAX_ALPHA], int rows,
                         int cols)
{
    su_arena *a = cx->a;
    int64_t shape[2] = {rows, cols};
    cx->tag = tag;
    sch_tensor *t = sch_stage_new(cx, dt, 2, shape, NULL);
    const sch_expr *e = sch_const(a, dt, 0), *r = VAR(t->axes[0]), *c = VAR(t->axes[1]);
    for (int i = rows - 1; i >= 0; i--)
        for (int j = cols - 1; j >= 0; j--)
            if (mat[i][j] != 0)
                e = sch_select(a, sch_and(a, sch_bin(a, SCH_EQ, r, I(i)), sch_bin(a, SCH_EQ, c, I(j))),
                               sch_const(a, dt, mat[i][j]), e);
    t->body = e;
    return t;
}

/* A stage of tag over the six axes names with one reduction axis of extent
 * n (its variable in *r). */
static sch_tensor *stage6(sch_cctx *cx, ir_dtype dt, const char *tag, const int64_t shape[6], const char *const names[6],
                          const char *rname, int64_t n, sch_var **r)
{
    cx->tag = tag;
    sch_tensor *t = sch_stage_new(cx, dt, 6, shape, names);
    *r = sch_stage_raxis(cx, t, rname, n);
    t->reduce = SCH_RED_SUM;
    return t;
}

bool sch_compute_conv2d_winograd(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    const ir_attrs *at = cx->call->u.call.attrs;
    ir_winograd wg;
    int64_t pad[4];
    if (!ir_winograd_get((int)ir_attr_int(at, IR_WINO_TILE_SIZE), &wg) || !ir_winograd_window(at, pad))
        return sch_cctx_error(cx, "the tile or the window is not one Winograd convolution computes");
    sch_tensor *data = in[0], *u = in[1];
    const ir_type *ot = sch_out_type(cx, 0);
    const ir_dtype dt = ot->dtype;
    const int64_t N = data->shape[0], C = data->shape[1], H = data->shape[2], W = data->shape[3];
    const int64_t K = ot->shape[1], m = wg.m, al = wg.alpha;
    const int64_t th = (ot->shape[2] + m - 1) / m, tw = (ot->shape[3] + m - 1) / m;
    /* the padded data */
    int64_t ps[4] = {N, C, th * m + 2, tw * m + 2};
    static const char *const pnames[] = {"n", "c", "h", "w"};
    cx->tag = "pad";
    sch_tensor *p = sch_stage_new(cx, data->dtype, 4, ps, pnames);
    const sch_expr *h = sch_sub(a, VAR(p->axes[2]), I(pad[0])), *w = sch_sub(a, VAR(p->axes[3]), I(pad[1]));
    const sch_expr *inside = sch_and(a, sch_and(a, sch_bin(a, SCH_GE, h, I(0)), sch_bin(a, SCH_LT, h, I(H))),
                                     sch_and(a, sch_bin(a, SCH_GE, w, I(0)), sch_bin(a, SCH_LT, w, I(W))));
    const sch_expr *pix[4] = {VAR(p->axes[0]), VAR(p->axes[1]), h, w};
    p->body = sch_select(a, inside, sch_read(a, data, 4, pix), sch_const(a, data->dtype, 0));
    sch_tensor *bt = table(cx, dt, "winograd_bt", wg.bt, (int)al, (int)al);
    sch_tensor *atab = table(cx, dt, "winograd_at", wg.at, (int)m, (int)al);
    sch_var *r;
    /* B^T d, then (B^T d) B */
    const int64_t vs[6] = {al, al, C, N, th, tw};
    static const char *const bnames[] = {"x", "j", "c", "n", "ty", "tx"}, *const vnames[] = {"x", "y", "c", "n", "ty", "tx"};
    sch_tensor *bd = stage6(cx, dt, "input_transform_rows", vs, bnames, "i", al, &r);
    const sch_expr *dix[4] = {VAR(bd->axes[3]), VAR(bd->axes[2]), sch_add(a, sch_mul(a, VAR(bd->axes[4]), I(m)), VAR(r)),
                              sch_add(a, sch_mul(a, VAR(bd->axes[5]), I(m)), VAR(bd->axes[1]))};
    const sch_expr *bix[2] = {VAR(bd->axes[0]), VAR(r)};
    bd->body = sch_mul(a, sch_read(a, bt, 2, bix), sch_cast(a, dt, sch_read(a, p, 4, dix)));
    sch_tensor *v = stage6(cx, dt, "input_transform", vs, vnames, "j", al, &r);
    const sch_expr *bix2[2] = {VAR(v->axes[1]), VAR(r)};
    const sch_expr *vix[6] = {VAR(v->axes[0]), VAR(r), VAR(v->axes[2]), VAR(v->axes[3]), VAR(v->axes[4]), VAR(v->axes[5])};
    v->body = sch_mul(a, sch_read(a, bt, 2, bix2), sch_read(a, bd, 6, vix));
    /* M = U V: alpha^2 products of (K x C) by (C x tiles) */
    const int64_t ms[6] = {al, al, K, N, th, tw};
    static const char *const mnames[] = {"x", "y", "k", "n", "ty", "tx"}, *const anames[] = {"a", "y", "k", "n", "ty", "tx"};
    sch_tensor *mm = stage6(cx, dt, "batched_gemm", ms, mnames, "c", C, &r);
    const sch_expr *uix[4] = {VAR(mm->axes[0]), VAR(mm->axes[1]), VAR(mm->axes[2]), VAR(r)};
    const sch_expr *mvix[6] = {VAR(mm->axes[0]), VAR(mm->axes[1]), VAR(r), VAR(mm->axes[3]), VAR(mm->axes[4]),
                               VAR(mm->axes[5])};
    mm->body = sch_mul(a, sch_cast(a, dt, sch_read(a, u, 4, uix)), sch_read(a, v, 6, mvix));
    /* A^T M, then (A^T M) A at the output's pixels */
    const int64_t as[6] = {m, al, K, N, th, tw};
    sch_tensor *am = stage6(cx, dt, "output_transform_rows", as, anames, "x", al, &r);
    const sch_expr *aix[2] = {VAR(am->axes[0]), VAR(r)};
    const sch_expr *amix[6] = {VAR(r), VAR(am->axes[1]), VAR(am->axes[2]), VAR(am->axes[3]), VAR(am->axes[4]),
                               VAR(am->axes[5])};
    am->body = sch_mul(a, sch_read(a, atab, 2, aix), sch_read(a, mm, 6, amix));
    static const char *const onames[] = {"n", "oc", "oh", "ow"};
    sch_tensor *t = sch_stage_new(cx, dt, 4, ot->shape, onames);
    sch_var *ry = sch_stage_raxis(cx, t, "y", al);
    const sch_expr *oh = VAR(t->axes[2]), *ow = VAR(t->axes[3]);
    const sch_expr *tix[2] = {sch_mod(a, ow, I(m)), VAR(ry)};
    const sch_expr *oix[6] = {sch_mod(a, oh, I(m)), VAR(ry), VAR(t->axes[1]), VAR(t->axes[0]), sch_div(a, oh, I(m)),
                              sch_div(a, ow, I(m))};
    t->body = sch_mul(a, sch_read(a, atab, 2, tix), sch_read(a, am, 6, oix));
    t->reduce = SCH_RED_SUM;
    out[0] = t;
    *nout = 1;
    return true;
}
