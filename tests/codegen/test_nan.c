/* test_nan.c — generated kernels agree with the reference kernels (the
 * interpreter's) on NaN, +inf, -inf and -0, which PyTorch propagates:
 * relu(sqrt(x)) of a negative x is NaN, maximum / minimum / clip of NaN are
 * NaN whichever side it is on, a max pool or max reduction over a window
 * holding a NaN is NaN, a softmax row holding one is NaN throughout, and
 * argmax answers the position of the first NaN (as torch.argmax).
 * Each op is checked element by element (NaN where the reference has NaN,
 * the same infinity, the same sign of zero for the ops that only select
 * one of their operands), on inputs whose special values sit where a
 * vector lane, a row and a window all meet them. The rules themselves
 * (ir_max_nan) are checked here, and the reference kernels against
 * PyTorch's answers on such inputs in tests/ref/ops/nonfinite.npz
 * (test_ref_ops), so that the reference cannot drift with the kernels. */
#include <math.h>
#include <string.h>

#include "tests/codegen/harness.h"
#include "tests/tap.h"

#define HDR "#[version = \"0.0.5\"]\n"

static const struct {
    const char *name;
    const char *text;
    bool selects;       /* the result is one of the operands: signs of zero must agree */
    const char *pragma; /* the C of the kernel holds this (a NaN-aware simd reduction), or NULL */
} cases[] = {
    {"relu(sqrt)", HDR "def @main(%x: Tensor[(4, 40), float32]) { nn.relu(sqrt(%x)) }\n", false, NULL},
    {"relu", HDR "def @main(%x: Tensor[(4, 40), float32]) { nn.relu(%x) }\n", true, NULL},
    {"leaky_relu", HDR "def @main(%x: Tensor[(4, 40), float32]) { nn.leaky_relu(%x, alpha=0.1f) }\n", false, NULL},
    {"clip", HDR "def @main(%x: Tensor[(4, 40), float32]) { clip(%x, a_min=-1f, a_max=1f) }\n", true, NULL},
    {"maximum", HDR "def @main(%x: Tensor[(4, 40), float32], %y: Tensor[(4, 40), float32]) { maximum(%x, %y) }\n",
     true, NULL},
    {"minimum", HDR "def @main(%x: Tensor[(4, 40), float32], %y: Tensor[(4, 40), float32]) { minimum(%x, %y) }\n",
     true, NULL},
    {"max_pool2d",
     HDR "def @main(%x: Tensor[(1, 4, 8, 8), float32]) { nn.max_pool2d(%x, pool_size=[3, 3], padding=[1, 1]) }\n",
     true, NULL},
    {"max", HDR "def @main(%x: Tensor[(12, 16), float32]) { max(%x, axis=[1]) }\n", true, NULL},
    {"min", HDR "def @main(%x: Tensor[(12, 16), float32]) { min(%x, axis=[1]) }\n", true, NULL},
    {"max of columns", HDR "def @main(%x: Tensor[(16, 12), float32]) { max(%x, axis=[0]) }\n", true, NULL},
    {"softmax", HDR "def @main(%x: Tensor[(12, 32), float32]) { nn.softmax(%x) }\n", false, "reduction(rt_max:"},
    /* int32 indices: the first NaN of a row holding one, as torch.argmax */
    {"argmax", HDR "def @main(%x: Tensor[(12, 16), float32]) { argmax(%x, axis=[1]) }\n", false, NULL},
    {"argmax last", HDR "def @main(%x: Tensor[(12, 16), float32]) { argmax(%x, axis=[1], select_last_index=True) }\n",
     false, NULL},
};
enum { NCASES = sizeof cases / sizeof *cases };

/* Plants the special values by blocks of 16 elements (a row of the
 * reductions, a vector of AVX-512, two rows of a pooled plane): one block in
 * four holds a NaN, the next +inf and -inf, the next more -0 (which is
 * scattered everywhere too), the last nothing else, each at a position that moves from block
 * to block, so that a NaN meets every lane. The second input's blocks are
 * shifted by one, so each side of a binary op meets a NaN alone. */
static void plant(hx_tensor *t, int which)
{
    for (int64_t j = 0; j < t->n; j++) {
        int64_t b = j / 16 + which, at = j % 16;
        if (b % 4 == 0 && at == (b * 7 + 3) % 16)
            t->v[j] = NAN;
        else if (b % 4 == 1 && at == (b * 5) % 16)
            t->v[j] = INFINITY;
        else if (b % 4 == 1 && at == (b * 5 + 8) % 16)
            t->v[j] = -INFINITY;
        else if (j % 7 == 0 || (b % 4 == 2 && at % 4 == 0))
            t->v[j] = -0.0;
    }
}

/* Element by element: the index of the first disagreement, or -1. */
static int64_t first_mismatch(const hx_tensor *got, const hx_tensor *want, bool signs)
{
    if (got->n != want->n)
        return 0;
    for (int64_t j = 0; j < want->n; j++) {
        double g = got->v[j], w = want->v[j];
        if (isnan(w) || isnan(g)) {
            if (isnan(w) != isnan(g))
                return j;
        } else if (isinf(w) || isinf(g)) {
            if (g != w)
                return j;
        } else if (fabs(g - w) > 1e-5 * fmax(1, fabs(w)) || (signs && signbit(g) != signbit(w))) {
            return j;
        }
    }
    return -1;
}

static int64_t count_nan(const hx_tensor *t)
{
    int64_t n = 0;
    for (int64_t j = 0; j < t->n; j++)
        n += isnan(t->v[j]);
    return n;
}

/* PyTorch's rules, checked on the reference itself: NaN on either side wins,
 * a tie keeps the first operand (max(-0, 0) = -0, max(0, -0) = 0). */
static void test_rules(void)
{
    ok(isnan(ir_max_nan(NAN, 1)) && isnan(ir_max_nan(1, NAN)) && isnan(ir_min_nan(NAN, 1)) &&
           isnan(ir_min_nan(1, NAN)),
       "max and min of NaN and a number are NaN on either side");
    ok(isnan(ir_max_nanf(NAN, 1)) && isnan(ir_max_nanf(1, NAN)) && isnan(ir_min_nanf(NAN, 1)) &&
           isnan(ir_min_nanf(1, NAN)),
       "  and in float32");
    ok(ir_max_nan(-INFINITY, 2) == 2 && ir_min_nan(INFINITY, 2) == 2 && ir_max_nan(INFINITY, 2) == INFINITY,
       "infinities order as numbers");
    ok(signbit(ir_max_nan(-0.0, 0.0)) && !signbit(ir_max_nan(0.0, -0.0)) && signbit(ir_min_nan(-0.0, 0.0)),
       "a tie of zeros keeps the first operand, as torch.maximum does");
}

int main(void)
{
    hx_temp_cache();
    test_rules();
    static hx_kernel ks[NCASES];
    ir_module *mods[NCASES];
    int nk = 0;
    for (int c = 0; c < NCASES; c++) {
        mods[c] = hx_load(cases[c].name, cases[c].text);
        bool ready = hx_prepare(&ks[c], hx_last_primitive(mods[c]), NULL, NULL, false, false);
        ok(ready, "%s: lowers with its default schedule", cases[c].name);
        if (!ready)
            su_panic("%s does not lower", cases[c].name);
        nk++;
        if (cases[c].pragma) {
            su_buf src = {0};
            tg_c_func(&src, ks[c].l->kernel, "k");
            ok(strstr(su_buf_str(&src), cases[c].pragma) != NULL, "%s: its C reduces lanes through %s", cases[c].name,
               cases[c].pragma);
            su_buf_free(&src);
        }
    }
    int nlibs = 0;
    tg_lib **lib = hx_build(ks, nk, &nlibs);
    ok(lib != NULL, "%d kernels build", nk);
    for (int c = 0; lib && c < nk; c++) {
        hx_kernel *k = &ks[c];
        hx_tensor *in[4], *want[2], *got[2];
        int nparams = k->func->u.func.nparams, ng = 0;
        hx_random_inputs(k->func, 7u + (unsigned)c, -2, 2, in);
        for (int p = 0; p < nparams; p++)
            plant(in[p], p);
        int nw = hx_ref_run(k->func, in, want);
        int rc = hx_run(k, in, got, &ng);
        ok(rc == 0 && ng == nw && nw == 1, "%s: runs", cases[c].name);
        if (rc == 0 && ng == nw && nw == 1) {
            int64_t bad = first_mismatch(got[0], want[0], cases[c].selects);
            /* a case that meets no NaN would prove nothing (argmax's indices
             * are never NaN: its input is checked instead) */
            const hx_tensor *seen = ir_dtype_is_float(want[0]->dtype) ? want[0] : in[0];
            ok(bad < 0 && count_nan(seen) > 0 && count_nan(seen) < seen->n,
               "%s: NaN, inf and -0 agree with the reference (%lld of %lld NaN)%s", cases[c].name,
               (long long)count_nan(seen), (long long)seen->n, bad < 0 ? "" : " MISMATCH");
            if (bad >= 0)
                diag("  element %lld: compiled %g, reference %g", (long long)bad, got[0]->v[bad], want[0]->v[bad]);
        }
        for (int p = 0; p < nparams; p++)
            hx_tensor_free(in[p]);
        for (int o = 0; o < nw; o++)
            hx_tensor_free(want[o]);
        for (int o = 0; o < ng; o++)
            hx_tensor_free(got[o]);
    }
    for (int c = 0; c < nk; c++)
        hx_kernel_free(&ks[c]);
    hx_close(lib, nlibs);
    for (int c = 0; c < NCASES; c++)
        ir_module_free(mods[c]);
    return tap_done();
}
