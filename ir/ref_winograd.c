/* ref_winograd.c — the reference kernels of the Winograd ops: the weight
 * transform U = G g G^T, and the conv as the algorithm itself (each m x m
 * output tile from its alpha x alpha input tile: V = B^T d B per input
 * channel, M = sum over C of U ⊙ V per output channel, Y = A^T M A), in
 * double. Running the algorithm rather than a direct conv on an untransformed
 * weight keeps the interpreter honest about the op (U is all it has), and in
 * double its only rounding beyond the direct conv's is U's own float32 one. */
#include <stdlib.h>

#include "ir/ir.h"

typedef double wino_tile[IR_WINO_MAX_ALPHA][IR_WINO_MAX_ALPHA];

/* out = L D L^T, L rows x n (row i at l + i * ld), D n x n: the one form of
 * all three transforms (U = G g G^T, V = B^T d B, Y = A^T M A), computed
 * separably (L D, then (L D) L^T). */
static void sandwich(const double *l, int ld, int rows, int n, wino_tile d, wino_tile out)
{
    wino_tile t;
    for (int x = 0; x < rows; x++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int i = 0; i < n; i++)
                s += l[x * ld + i] * d[i][j];
            t[x][j] = s;
        }
    for (int x = 0; x < rows; x++)
        for (int y = 0; y < rows; y++) {
            double s = 0;
            for (int j = 0; j < n; j++)
                s += t[x][j] * l[y * ld + j];
            out[x][y] = s;
        }
}

bool ir_ref_winograd_weight(const ir_ref_call *c)
{
    ir_winograd wg;
    if (!ir_winograd_get((int)ir_attr_int(c->attrs, 0), &wg)) {
        su_buf_printf(c->err, "tile_size must be 2 or 4");
        return false;
    }
    const ir_tensor *g = c->in[0];
    ir_tensor *u = c->out[0];
    int64_t K = g->shape[0], C = g->shape[1], al = wg.alpha;
    for (int64_t k = 0; k < K; k++)
        for (int64_t ch = 0; ch < C; ch++) {
            const int64_t base = (k * C + ch) * IR_WINO_R * IR_WINO_R;
            wino_tile gt, ut;
            for (int i = 0; i < IR_WINO_R; i++)
                for (int j = 0; j < IR_WINO_R; j++)
                    gt[i][j] = ir_tensor_get(g, base + i * IR_WINO_R + j);
            sandwich(&wg.g[0][0], IR_WINO_R, (int)al, IR_WINO_R, gt, ut);
            for (int x = 0; x < al; x++)
                for (int y = 0; y < al; y++)
                    ir_tensor_set(u, ((x * al + y) * K + k) * C + ch, ut[x][y]);
        }
    return true;
}

bool ir_ref_conv2d_winograd(const ir_ref_call *c)
{
    ir_winograd wg;
    int64_t pad[4];
    if (!ir_winograd_get((int)ir_attr_int(c->attrs, IR_WINO_TILE_SIZE), &wg) || !ir_winograd_window(c->attrs, pad)) {
        su_buf_printf(c->err, "bad attributes");
        return false;
    }
    const ir_tensor *d = c->in[0], *u = c->in[1];
    ir_tensor *o = c->out[0];
    const int64_t N = d->shape[0], C = d->shape[1], H = d->shape[2], W = d->shape[3];
    const int64_t K = o->shape[1], OH = o->shape[2], OW = o->shape[3];
    const int m = wg.m, al = wg.alpha;
    double *v = malloc(sizeof *v * (size_t)(al * al * C)), *mm = malloc(sizeof *mm * (size_t)(al * al * K));
    if (!v || !mm) {
        free(v);
        free(mm);
        su_buf_printf(c->err, "out of memory");
        return false;
    }
    for (int64_t n = 0; n < N; n++)
        for (int64_t ty = 0; ty * m < OH; ty++)
            for (int64_t tx = 0; tx * m < OW; tx++) {
                /* V = B^T d B for each channel; outside the image reads 0 (the padding,
                   and the part of a last tile past the output) */
                for (int64_t ch = 0; ch < C; ch++) {
                    wino_tile dt, vt;
                    for (int i = 0; i < al; i++)
                        for (int j = 0; j < al; j++) {
                            int64_t h = ty * m + i - pad[0], w = tx * m + j - pad[1];
                            dt[i][j] = h >= 0 && h < H && w >= 0 && w < W ? ir_tensor_get(d, ((n * C + ch) * H + h) * W + w) : 0;
                        }
                    sandwich(&wg.bt[0][0], IR_WINO_MAX_ALPHA, al, al, dt, vt);
                    for (int x = 0; x < al; x++)
                        for (int y = 0; y < al; y++)
                            v[(x * al + y) * C + ch] = vt[x][y];
                }
                /* M[x, y, k] = sum over channels of U[x, y, k, c] V[x, y, c] */
                for (int xy = 0; xy < al * al; xy++)
                    for (int64_t k = 0; k < K; k++) {
                        double s = 0;
                        for (int64_t ch = 0; ch < C; ch++)
                            s += ir_tensor_get(u, ((int64_t)xy * K + k) * C + ch) * v[xy * C + ch];
                        mm[xy * K + k] = s;
                    }
                /* Y = A^T M A, the tile's outputs inside the result */
                for (int64_t k = 0; k < K; k++) {
                    wino_tile mt, yt;
                    for (int x = 0; x < al; x++)
                        for (int y = 0; y < al; y++)
                            mt[x][y] = mm[(x * al + y) * K + k];
                    sandwich(&wg.at[0][0], IR_WINO_MAX_ALPHA, m, al, mt, yt);
                    for (int a = 0; a < m; a++)
                        for (int b = 0; b < m; b++) {
                            int64_t oh = ty * m + a, ow = tx * m + b;
                            if (oh < OH && ow < OW)
                                ir_tensor_set(o, ((n * K + k) * OH + oh) * OW + ow, yt[a][b]);
                        }
                }
            }
    free(v);
    free(mm);
    return true;
}
