/* winograd.c — the transforms of Winograd's minimal filtering F(m x m, 3 x 3)
 * (Lavin & Gray 2015), built by the Cook-Toom construction from interpolation
 * points rather than copied as tables, so that another m or another set of
 * points is one argument away and a test can check the identity itself.
 *
 * With alpha = m + 2 and points p_0 .. p_{alpha-2} plus the point at
 * infinity, a correlation of a 3-tap filter g with alpha inputs d is
 *   y = A^T [(G g) ⊙ (B^T d)]
 * where (transposing the linear convolution s = V^-1 [(Gv g) ⊙ (Av x)], V
 * the Vandermonde matrix of the points):
 *   A^T[i][t] = p_t^i,   G[t][k] = p_t^k / f_t,   B^T[t][n] = f_t V^-1[n][t],
 * f_t = prod_{u != t} (p_t - p_u) over the finite points (the scale moved
 * from B^T into G, which makes B^T integral for integer points); the row of
 * infinity picks the leading coefficient. The 2-D form nests it:
 *   Y = A^T [(G g G^T) ⊙ (B^T d B)] A.
 * Everything is computed in exact fractions (int64 numerator/denominator;
 * alpha <= 6 keeps them small) and only then rounded to double. */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

typedef struct frac {
    int64_t n, d;   /* value n / d, d > 0, lowest terms */
} frac;

static int64_t gcd64(int64_t a, int64_t b)
{
    a = llabs(a), b = llabs(b);
    while (b) {
        int64_t t = a % b;
        a = b, b = t;
    }
    return a ? a : 1;
}

static frac fr(int64_t n, int64_t d)
{
    if (d < 0)
        n = -n, d = -d;
    int64_t g = gcd64(n, d);
    return (frac){n / g, d / g};
}

static frac fr_sub(frac a, frac b) { return fr(a.n * b.d - b.n * a.d, a.d * b.d); }
static frac fr_mul(frac a, frac b) { return fr(a.n * b.n, a.d * b.d); }
static frac fr_div(frac a, frac b) { return fr(a.n * b.d, a.d * b.n); }
static double fr_val(frac a) { return (double)a.n / (double)a.d; }

static frac fr_pow(frac p, int e)
{
    frac r = {1, 1};
    for (int i = 0; i < e; i++)
        r = fr_mul(r, p);
    return r;
}

/* m = 2: 0, 1, -1; m = 4: 0, 1, -1, 2, -2 (Lavin's). +-1/2 instead of +-2
 * measured a larger float32 error at m = 4 on resnet's channel counts
 * (tests/ir/test_winograd prints both; docs/winograd.md). */
static const int64_t points2[][2] = {{0, 1}, {1, 1}, {-1, 1}};
static const int64_t points4[][2] = {{0, 1}, {1, 1}, {-1, 1}, {2, 1}, {-2, 1}};

bool ir_winograd_from_points(int m, const int64_t (*pts)[2], ir_winograd *w)
{
    int alpha = m + IR_WINO_R - 1, nf = alpha - 1;
    if (m < 1 || alpha > IR_WINO_MAX_ALPHA)
        return false;
    memset(w, 0, sizeof *w);
    w->m = m, w->alpha = alpha;
    frac p[IR_WINO_MAX_ALPHA], f[IR_WINO_MAX_ALPHA];
    for (int t = 0; t < nf; t++) {
        if (pts[t][1] == 0)
            return false;
        p[t] = fr(pts[t][0], pts[t][1]);
    }
    /* the scales f_t; a repeated point makes one zero */
    for (int t = 0; t < nf; t++) {
        f[t] = (frac){1, 1};
        for (int u = 0; u < nf; u++)
            if (u != t)
                f[t] = fr_mul(f[t], fr_sub(p[t], p[u]));
        if (f[t].n == 0)
            return false;
    }
    f[nf] = (frac){1, 1};
    /* V (alpha x alpha) beside the identity, Gauss-Jordan to [I | V^-1] */
    frac v[IR_WINO_MAX_ALPHA][2 * IR_WINO_MAX_ALPHA];
    for (int t = 0; t < alpha; t++)
        for (int j = 0; j < 2 * alpha; j++) {
            if (j >= alpha)
                v[t][j] = (frac){j - alpha == t, 1};
            else if (t < nf)
                v[t][j] = fr_pow(p[t], j);
            else
                v[t][j] = (frac){j == alpha - 1, 1};
        }
    for (int col = 0; col < alpha; col++) {
        int piv = col;
        while (piv < alpha && v[piv][col].n == 0)
            piv++;
        if (piv == alpha)
            return false;
        for (int j = 0; j < 2 * alpha; j++) {
            frac x = v[col][j];
            v[col][j] = v[piv][j];
            v[piv][j] = x;
        }
        frac inv = fr_div((frac){1, 1}, v[col][col]);
        for (int j = 0; j < 2 * alpha; j++)
            v[col][j] = fr_mul(v[col][j], inv);
        for (int r = 0; r < alpha; r++) {
            frac k = v[r][col];
            if (r == col || k.n == 0)
                continue;
            for (int j = 0; j < 2 * alpha; j++)
                v[r][j] = fr_sub(v[r][j], fr_mul(k, v[col][j]));
        }
    }
    for (int t = 0; t < alpha; t++) {
        for (int i = 0; i < m; i++)
            w->at[i][t] = t < nf ? fr_val(fr_pow(p[t], i)) : (i == m - 1);
        for (int k = 0; k < IR_WINO_R; k++)
            w->g[t][k] = t < nf ? fr_val(fr_div(fr_pow(p[t], k), f[t])) : (k == IR_WINO_R - 1);
        for (int n = 0; n < alpha; n++)
            w->bt[t][n] = fr_val(fr_mul(f[t], v[n][alpha + t]));
    }
    return true;
}

bool ir_winograd_get(int m, ir_winograd *w)
{
    if (m == 2)
        return ir_winograd_from_points(2, points2, w);
    if (m == 4)
        return ir_winograd_from_points(4, points4, w);
    return false;
}

bool ir_winograd_window(const ir_attrs *at, int64_t pad[4])
{
    int64_t v[4];
    int n = ir_attr_ints(at, IR_CONV_STRIDES, v, 2);
    for (int i = 0; i < n; i++)
        if (v[i] != 1)
            return false;
    n = ir_attr_ints(at, IR_CONV_DILATION, v, 2);
    for (int i = 0; i < n; i++)
        if (v[i] != 1)
            return false;
    n = ir_attr_ints(at, IR_CONV_PADDING, v, 4);
    if (n != 1 && n != 2 && n != 4)
        return false;
    for (int i = 0; i < 4; i++)
        pad[i] = v[n == 4 ? i : i % n];
    return ir_attr_int(at, IR_CONV_GROUPS) == 1;
}

int ir_winograd_tile_for(int64_t oh, int64_t ow)
{
    /* F(4x4): 36 products per 16 outputs (4x fewer than direct); F(2x2): 16
       per 4 (2.25x). The larger tile wins where the output holds a few of
       them: narrower than 8, F(4x4)'s tiles are mostly padding (7 x 7: 2 x
       2 tiles over 8 x 8) and too few for a vector of them in the GEMM (4
       against F(2x2)'s 16), and F(2x2) measured 1.6x faster there
       (docs/winograd.md). */
    return oh >= 8 && ow >= 8 ? 4 : 2;
}
