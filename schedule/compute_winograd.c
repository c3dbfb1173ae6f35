/* compute_winograd.c — the compute definition of
 * nn.contrib_conv2d_winograd_without_weight_transform (docs/winograd.md),
 * stages over tiles of m x m outputs: tile rows t = n th + ty (th, tw tiles
 * down and across), columns tx, and p = t tw + tx flattened:
 *   bt[x, i], at[a, x]     the transform matrices B^T and A^T as tables
 *                          (a select over their entries, computed once)
 *   pad[n, c, h, w]        the data, zero outside the image, as large as
 *                          the tiles reach (th m + 2 x tw m + 2)
 *   bd[x, c, t, w]         = sum over i of B^T[x][i] pad[n, c, ty m + i, w]
 *                          (along the padded rows' contiguous width)
 *   v[x, y, c, t, tx]      = sum over j of B^T[y][j] bd[x, c, t, tx m + j]   (V = B^T d B)
 *   mm[x, y, k, p]         = sum over c of U[x, y, k, c] v[x, y, c, p / tw, p % tw]
 *                          (the alpha^2 GEMMs, K x C by C x P: the flops; v's
 *                          index flattens back to p)
 *   am[a, y, k, p]         = sum over x of A^T[a][x] mm[x, y, k, p]
 *   ay[a, b, k, p]         = sum over y of A^T[b][y] am[a, y, k, p]       (Y = A^T M A)
 *   out[n, k, oh, ow]      = ay[oh % m, ow % m, k, (n th + oh / m) tw + ow / m]
 * The transforms are separable (2 alpha^3 products per tile and channel
 * instead of alpha^4); the tiles are the innermost axis of V, M and the
 * output transform, so that a GEMM's columns and both output steps are
 * contiguous, and the output pixels are one read each (injective, inlined
 * into the epilogue: bias, relu, residual read out as they read a conv2d's).
 * The tables are stages rather than constants in the bodies: inlined (the
 * default schedule) they are selects, computed at the root (the template)
 * they are 36 loads from L1. */
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

/* A stage of tag over the nd axes names with one reduction axis of extent
 * n (its variable in *r). */
static sch_tensor *stage(sch_cctx *cx, ir_dtype dt, const char *tag, int nd, const int64_t *shape, const char *const *names,
                         const char *rname, int64_t n, sch_var **r)
{
    cx->tag = tag;
    sch_tensor *t = sch_stage_new(cx, dt, nd, shape, names);
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
    /* tiles: rows T = n th + ty, columns tx; P = N th tw of them */
    const int64_t T = N * th, P = T * tw, PW = tw * m + 2;
    /* B^T d along the padded rows, vectorized along their contiguous width */
    const int64_t bs[4] = {al, C, T, PW};
    static const char *const bnames[] = {"x", "c", "t", "w"};
    sch_tensor *bd = stage(cx, dt, "input_transform_rows", 4, bs, bnames, "i", al, &r);
    const sch_expr *row = VAR(bd->axes[2]);
    const sch_expr *dix[4] = {sch_div(a, row, I(th)), VAR(bd->axes[1]),
                              sch_add(a, sch_mul(a, sch_mod(a, row, I(th)), I(m)), VAR(r)), VAR(bd->axes[3])};
    const sch_expr *bix[2] = {VAR(bd->axes[0]), VAR(r)};
    bd->body = sch_mul(a, sch_read(a, bt, 2, bix), sch_cast(a, dt, sch_read(a, p, 4, dix)));
    /* (B^T d) B at each tile (t, tx) */
    const int64_t vs[5] = {al, al, C, T, tw};
    static const char *const vnames[] = {"x", "y", "c", "t", "tx"};
    sch_tensor *v = stage(cx, dt, "input_transform", 5, vs, vnames, "j", al, &r);
    const sch_expr *bix2[2] = {VAR(v->axes[1]), VAR(r)};
    const sch_expr *vix[4] = {VAR(v->axes[0]), VAR(v->axes[2]), VAR(v->axes[3]),
                              sch_add(a, sch_mul(a, VAR(v->axes[4]), I(m)), VAR(r))};
    v->body = sch_mul(a, sch_read(a, bt, 2, bix2), sch_read(a, bd, 4, vix));
    /* M = U V: alpha^2 products of (K x C) by (C x tiles) */
    const int64_t ms[4] = {al, al, K, P};
    static const char *const mnames[] = {"x", "y", "k", "p"}, *const anames[] = {"a", "y", "k", "p"};
    sch_tensor *mm = stage(cx, dt, "batched_gemm", 4, ms, mnames, "c", C, &r);
    const sch_expr *uix[4] = {VAR(mm->axes[0]), VAR(mm->axes[1]), VAR(mm->axes[2]), VAR(r)};
    /* the tile p is (p / tw, p % tw) of V, the same element once flattened */
    const sch_expr *mp = VAR(mm->axes[3]);
    const sch_expr *mvix[5] = {VAR(mm->axes[0]), VAR(mm->axes[1]), VAR(r), sch_div(a, mp, I(tw)), sch_mod(a, mp, I(tw))};
    mm->body = sch_mul(a, sch_cast(a, dt, sch_read(a, u, 4, uix)), sch_read(a, v, 5, mvix));
    /* A^T M, then (A^T M) A, both along the contiguous tiles */
    const int64_t as[4] = {m, al, K, P}, ys[4] = {m, m, K, P};
    sch_tensor *am = stage(cx, dt, "output_transform_rows", 4, as, anames, "x", al, &r);
    const sch_expr *aix[2] = {VAR(am->axes[0]), VAR(r)};
    const sch_expr *amix[4] = {VAR(r), VAR(am->axes[1]), VAR(am->axes[2]), VAR(am->axes[3])};
    am->body = sch_mul(a, sch_read(a, atab, 2, aix), sch_read(a, mm, 4, amix));
    static const char *const ynames[] = {"a", "b", "k", "p"};
    sch_tensor *ay = stage(cx, dt, "output_transform", 4, ys, ynames, "y", al, &r);
    const sch_expr *yix[2] = {VAR(ay->axes[1]), VAR(r)};
    const sch_expr *ayix[4] = {VAR(ay->axes[0]), VAR(r), VAR(ay->axes[2]), VAR(ay->axes[3])};
    ay->body = sch_mul(a, sch_read(a, atab, 2, yix), sch_read(a, am, 4, ayix));
    /* the output pixels: one element of Y each (inlined into the epilogue) */
    static const char *const onames[] = {"n", "oc", "oh", "ow"};
    sch_tensor *t = sch_stage_new(cx, dt, 4, ot->shape, onames);
    const sch_expr *oh = VAR(t->axes[2]), *ow = VAR(t->axes[3]);
    const sch_expr *tile = sch_add(a, sch_mul(a, sch_add(a, sch_mul(a, VAR(t->axes[0]), I(th)), sch_div(a, oh, I(m))), I(tw)),
                                   sch_div(a, ow, I(m)));
    const sch_expr *oix[4] = {sch_mod(a, oh, I(m)), sch_mod(a, ow, I(m)), VAR(t->axes[1]), tile};
    t->body = sch_read(a, ay, 4, oix);
    out[0] = t;
    *nout = 1;
    return true;
}
