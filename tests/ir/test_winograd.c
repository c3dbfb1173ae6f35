/* test_winograd.c — the math of ir/winograd.c and the Winograd reference
 * kernels: the 1-D identity A^T [(G g) ⊙ (B^T d)] = correlation checked on
 * every pair of unit vectors (so the matrices are right, whatever their
 * signs); the float32 error of F(2x2) and F(4x4) against a double direct conv
 * at resnet's channel counts (the numbers docs/winograd.md quotes); and the
 * interpreter's kernels (weight transform, then the conv on U) against
 * conv2d's direct kernel on odd sizes, paddings, batch 2. */
#include <math.h>
#include <stdlib.h>

#include "ir/ir.h"
#include "tests/tap.h"

static uint64_t rng = 88172645463325252ULL;

static double urand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / (double)(1ULL << 53) * 2 - 1;
}

static const int64_t pts2[][2] = {{0, 1}, {1, 1}, {-1, 1}};
static const int64_t pts4_half[][2] = {{0, 1}, {1, 1}, {-1, 1}, {1, 2}, {-1, 2}};
static const int64_t pts4_two[][2] = {{0, 1}, {1, 1}, {-1, 1}, {2, 1}, {-2, 1}};

/* y_i = sum_t A^T[i][t] (G e_j)_t (B^T e_k)_t must be [k == i + j]. */
static void test_identity(int m, const int64_t (*pts)[2], const char *name)
{
    ir_winograd w;
    ok(ir_winograd_from_points(m, pts, &w), "F(%d,3) %s: matrices built", m, name);
    double worst = 0;
    for (int j = 0; j < IR_WINO_R; j++)
        for (int k = 0; k < w.alpha; k++)
            for (int i = 0; i < m; i++) {
                double y = 0;
                for (int t = 0; t < w.alpha; t++)
                    y += w.at[i][t] * w.g[t][j] * w.bt[t][k];
                worst = fmax(worst, fabs(y - (k == i + j)));
            }
    ok(worst < 1e-12, "F(%d,3) %s: A^T[(G g) . (B^T d)] is the correlation (worst %.1e)", m, name, worst);
}

static void test_matrices(void)
{
    test_identity(2, pts2, "0, +-1");
    test_identity(4, pts4_half, "0, +-1, +-1/2");
    test_identity(4, pts4_two, "0, +-1, +-2");
    ir_winograd w;
    bool unit = ir_winograd_get(2, &w) && w.alpha == 4;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            unit = unit && (w.bt[i][j] == 0 || fabs(w.bt[i][j]) == 1);
    ok(unit, "F(2,3): B^T of 0, -1, 1 and 0 entries only, as Lavin's (the scales are in G)");
    bool integral = ir_winograd_get(4, &w);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            integral = integral && w.bt[i][j] == round(w.bt[i][j]);
    ok(integral, "F(4,3), points 0, +-1, +-2: B^T integral");
    ok(ir_winograd_get(4, &w) && w.alpha == 6, "F(4,3): 6x6 tiles");
    ok(!ir_winograd_get(3, &w) && !ir_winograd_get(6, &w), "other tiles refused (6: 8x8 exceeds the maximum)");
    static const int64_t twice[][2] = {{0, 1}, {1, 1}, {1, 1}};
    ok(!ir_winograd_from_points(2, twice, &w), "a repeated point is refused");
}

/* F(m) in float32 end to end (U, V, M, Y all float) on one image of c
 * channels (h x h, padding 1, 4 outputs), against the direct conv in
 * double; max |error| / max |y|. */
static double f32_error(int m, const int64_t (*pts)[2], int64_t c, int64_t h)
{
    ir_winograd w;
    ir_winograd_from_points(m, pts, &w);
    const int64_t K = 4, al = w.alpha;
    float *x = malloc(sizeof *x * (size_t)(c * h * h)), *g = malloc(sizeof *g * (size_t)(K * c * 9));
    float *u = malloc(sizeof *u * (size_t)(al * al * K * c)), *v = malloc(sizeof *v * (size_t)(al * al * c));
    for (int64_t i = 0; i < c * h * h; i++)
        x[i] = (float)urand();
    for (int64_t i = 0; i < K * c * 9; i++)
        g[i] = (float)(urand() / sqrt((double)c * 9));
    for (int64_t k = 0; k < K; k++)
        for (int64_t ch = 0; ch < c; ch++)
            for (int a = 0; a < al; a++)
                for (int b = 0; b < al; b++) {
                    float s = 0;
                    for (int i = 0; i < 3; i++)
                        for (int j = 0; j < 3; j++)
                            s += (float)w.g[a][i] * g[(k * c + ch) * 9 + i * 3 + j] * (float)w.g[b][j];
                    u[((a * al + b) * K + k) * c + ch] = s;
                }
    double err = 0, top = 0;
    for (int64_t ty = 0; ty * m < h; ty++)
        for (int64_t tx = 0; tx * m < h; tx++) {
            for (int64_t ch = 0; ch < c; ch++)
                for (int a = 0; a < al; a++)
                    for (int b = 0; b < al; b++) {
                        float s = 0;
                        for (int i = 0; i < al; i++)
                            for (int j = 0; j < al; j++) {
                                int64_t r = ty * m + i - 1, q = tx * m + j - 1;
                                float d = r >= 0 && r < h && q >= 0 && q < h ? x[(ch * h + r) * h + q] : 0;
                                s += (float)w.bt[a][i] * d * (float)w.bt[b][j];
                            }
                        v[(a * al + b) * c + ch] = s;
                    }
            for (int64_t k = 0; k < K; k++) {
                float mm[IR_WINO_MAX_ALPHA * IR_WINO_MAX_ALPHA];
                for (int ab = 0; ab < al * al; ab++) {
                    float s = 0;
                    for (int64_t ch = 0; ch < c; ch++)
                        s += u[(ab * K + k) * c + ch] * v[ab * c + ch];
                    mm[ab] = s;
                }
                for (int i = 0; i < m; i++)
                    for (int j = 0; j < m; j++) {
                        int64_t oy = ty * m + i, ox = tx * m + j;
                        if (oy >= h || ox >= h)
                            continue;
                        float y = 0;
                        for (int a = 0; a < al; a++)
                            for (int b = 0; b < al; b++)
                                y += (float)w.at[i][a] * mm[a * al + b] * (float)w.at[j][b];
                        double ref = 0;
                        for (int64_t ch = 0; ch < c; ch++)
                            for (int p = 0; p < 3; p++)
                                for (int q = 0; q < 3; q++) {
                                    int64_t r = oy + p - 1, s2 = ox + q - 1;
                                    if (r >= 0 && r < h && s2 >= 0 && s2 < h)
                                        ref += (double)x[(ch * h + r) * h + s2] * g[(k * c + ch) * 9 + p * 3 + q];
                                }
                        err = fmax(err, fabs(y - ref));
                        top = fmax(top, fabs(ref));
                    }
            }
        }
    free(x), free(g), free(u), free(v);
    return err / top;
}

static void test_float32_error(void)
{
    static const int64_t chans[] = {64, 256, 512};
    double e2[3], eh[3], et[3];
    for (int i = 0; i < 3; i++) {
        e2[i] = f32_error(2, pts2, chans[i], 14);
        eh[i] = f32_error(4, pts4_half, chans[i], 14);
        et[i] = f32_error(4, pts4_two, chans[i], 14);
        diag("float32 relative error, C=%lld, 14x14: F(2,3) %.2e, F(4,3) +-1/2 %.2e, F(4,3) +-2 %.2e",
             (long long)chans[i], e2[i], eh[i], et[i]);
        ok(e2[i] < 1e-4 && et[i] < 1e-4, "C=%lld: F(2,3) and F(4,3) (the project's points, +-2) within 1e-4 relative",
           (long long)chans[i]);
    }
}

/* Runs kernel fn of op on ins (one output of shape os) into a heap tensor. */
static ir_tensor *run(ir_op_id id, const ir_attrs *at, int nin, const ir_tensor *const *ins, int ndim, const int64_t *os)
{
    ir_tensor *o = ir_tensor_alloc(IR_FLOAT32, ndim, os);
    su_buf err = {0};
    ir_ref_call c = {ir_op_get(id), at, nin, ins, 1, &o, &err};
    bool good = ir_op_get(id)->ref(&c);
    if (!good)
        diag("%s: %s", ir_op_get(id)->name, su_buf_str(&err));
    su_buf_free(&err);
    return o;
}

/* The reference Winograd pipeline against the direct conv on one shape. */
static void test_kernel(su_arena *a, int m, int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t pad)
{
    const ir_op_def *conv = ir_op_get(IR_OP_CONV2D), *wino = ir_op_get(IR_OP_CONV2D_WINOGRAD);
    int64_t xs[4] = {n, c, h, w}, ws[4] = {k, c, 3, 3}, us[4] = {m + 2, m + 2, k, c};
    int64_t os[4] = {n, k, h + 2 * pad - 2, w + 2 * pad - 2};
    ir_tensor *x = ir_tensor_alloc(IR_FLOAT32, 4, xs), *g = ir_tensor_alloc(IR_FLOAT32, 4, ws);
    for (int64_t i = 0; i < ir_tensor_numel(x); i++)
        ir_tensor_set(x, i, urand());
    for (int64_t i = 0; i < ir_tensor_numel(g); i++)
        ir_tensor_set(g, i, urand());
    /* attrs: conv2d's defaults with the padding, and tile_size after them */
    ir_attr_val *pv = su_arena_alloc(a, sizeof *pv * 2), *cv = su_arena_alloc(a, sizeof *cv * (IR_WINO_TILE_SIZE + 1));
    pv[0] = pv[1] = (ir_attr_val){.kind = IR_AV_INT, .i = pad};
    memcpy(cv, ir_op_default_attrs(a, wino)->vals, sizeof *cv * (IR_WINO_TILE_SIZE + 1));
    cv[IR_CONV_PADDING] = (ir_attr_val){.kind = IR_AV_LIST, .n = 2, .items = pv};
    cv[IR_WINO_TILE_SIZE] = (ir_attr_val){.kind = IR_AV_INT, .i = m};
    ir_attrs cat = {conv->schema->n, cv}, wat = {IR_WINO_TILE_SIZE + 1, cv}, tat = {1, &cv[IR_WINO_TILE_SIZE]};
    const ir_tensor *din[2] = {x, g};
    ir_tensor *ref = run(IR_OP_CONV2D, &cat, 2, din, 4, os);
    ir_tensor *u = run(IR_OP_WINOGRAD_WEIGHT, &tat, 1, (const ir_tensor *const[]){g}, 4, us);
    const ir_tensor *win[2] = {x, u};
    ir_tensor *got = run(IR_OP_CONV2D_WINOGRAD, &wat, 2, win, 4, os);
    double err = 0, top = 1;
    for (int64_t i = 0; i < ir_tensor_numel(ref); i++) {
        err = fmax(err, fabs(ir_tensor_get(got, i) - ir_tensor_get(ref, i)));
        top = fmax(top, fabs(ir_tensor_get(ref, i)));
    }
    ok(err / top < 1e-5, "F(%d,3) reference, %lldx%lldx%lldx%lld -> %lld channels, padding %lld: matches conv2d (%.1e)", m,
       (long long)n, (long long)c, (long long)h, (long long)w, (long long)k, (long long)pad, err / top);
    ir_tensor_free(x), ir_tensor_free(g), ir_tensor_free(u), ir_tensor_free(ref), ir_tensor_free(got);
}

int main(void)
{
    su_arena a;
    su_arena_init(&a);
    test_matrices();
    test_float32_error();
    for (int m = 2; m <= 4; m += 2) {
        test_kernel(&a, m, 2, 1, 7, 7, 3, 1);
        test_kernel(&a, m, 2, 3, 13, 13, 17, 0);
        test_kernel(&a, m, 1, 17, 14, 14, 5, 1);
        test_kernel(&a, m, 1, 64, 13, 9, 4, 1);
        test_kernel(&a, m, 2, 3, 3, 5, 2, 0);   /* a 1x3 output: one partial tile */
    }
    su_arena_free(&a);
    return tap_done();
}
