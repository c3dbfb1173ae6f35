/* test_float16.c — the op oracle in float16: every small model of
 * op_models.h rewritten to float16 (its tensor types and float literals),
 * each primitive function lowered with its template's defaults, compiled
 * for this CPU and checked against the reference kernels (the
 * interpreter's) on the same float16 inputs.
 *
 * How the two compute: a reference kernel reads float16 as float32,
 * computes in float32 or float64 and rounds each op's result to float16; a
 * generated kernel holds its float16 arguments as _Float16, computes in
 * float32 (x86 has no float16 arithmetic but AVX512-FP16) and rounds only
 * at its stores, so a fused chain is rounded once where the reference
 * rounds it op by op. The tolerance, 5e-3 of the output's largest value,
 * allows ten roundings of float16 (unit roundoff 2^-11 = 4.9e-4); the
 * largest error measured is printed at the end. Skipped: arange, whose
 * float32 dtype attribute does not follow the rewrite. First, the C
 * prelude's float16 widening (rt_h2f) on all 65,536 bit patterns, and its
 * rounding (rt_f2h) where rounding can go wrong. */
#include <math.h>
#include <string.h>

#include "tests/codegen/harness.h"
#include "tests/tap.h"

#include "tests/codegen/op_models.h"

enum { NMODELS = sizeof models / sizeof *models, MAXK = 128 };
#define TOL 5e-3

/* text with float32 → float16 and each float literal `1.5f` → `1.5f16`. */
static char *to_float16(const char *text)
{
    su_buf b = {0};
    for (const char *p = text; *p; p++) {
        if (!strncmp(p, "float32", 7)) {
            su_buf_puts(&b, "float16");
            p += 6;
        } else if (*p == 'f' && p > text && p[-1] >= '0' && p[-1] <= '9' &&
                   !(p[1] >= '0' && p[1] <= '9') && !(p[1] >= 'a' && p[1] <= 'z')) {
            su_buf_puts(&b, "f16");
        } else {
            su_buf_putc(&b, *p);
        }
    }
    return su_buf_take(&b);
}

/* The C prelude widens float16 loads by integer operations (rt_h2f, which
 * gcc vectorizes): a cast of every float16 bit pattern to float32, compiled,
 * against C's own conversion; NaN stays NaN, signs of zero stay. */
static void test_widening(void)
{
    ir_module *m = hx_load("widen", HDR "def @main(%x: Tensor[(65536), float16]) { cast(%x, dtype=\"float32\") }");
    hx_kernel k = {0};
    bool prepared = hx_prepare(&k, hx_last_primitive(m), NULL, NULL, false, false);
    int nlibs = 0;
    tg_lib **lib = prepared ? hx_build(&k, 1, &nlibs) : NULL;
    ok(lib != NULL, "a cast of float16 to float32 builds");
    if (lib) {
        int64_t shape[1] = {65536};
        hx_tensor *x = hx_tensor_new(IR_FLOAT16, 1, shape), *got[2];
        for (int64_t b = 0; b < 65536; b++) {
            uint16_t bits = (uint16_t)b;
            _Float16 h;
            memcpy(&h, &bits, sizeof h);
            x->v[b] = (double)h;
        }
        int ng = 0, bad = 0;
        int rc = hx_run(&k, &x, got, &ng);
        for (int64_t b = 0; rc == 0 && ng == 1 && b < 65536; b++) {
            double w = x->v[b], g = got[0]->v[b];
            bad += isnan(w) ? !isnan(g) : (g != w || signbit(g) != signbit(w));
        }
        ok(rc == 0 && ng == 1 && bad == 0, "all 65536 float16 values widen exactly (%d wrong)", bad);
        hx_tensor_free(x);
        for (int o = 0; o < ng; o++)
            hx_tensor_free(got[o]);
        hx_close(lib, nlibs);
    }
    hx_kernel_free(&k);
    ir_module_free(m);
}

/* Float32 inputs around every float16 value h (>= 0; the sign is tested
 * by the negated copies): h itself, the floats next to it, the midpoint to
 * the next float16 value and the floats next to that (where ties round to
 * even), and the specials: infinities, NaN of both signs, the overflow
 * threshold 65520 and what lies next to it, float subnormals. */
static int64_t rounding_inputs(float *x)
{
    int64_t n = 0;
    for (uint32_t h = 0; h < 0x7c00; h++) {
        uint16_t b = (uint16_t)h, b1 = (uint16_t)(h + 1);
        _Float16 lo, hi;
        memcpy(&lo, &b, sizeof lo);
        memcpy(&hi, &b1, sizeof hi);
        float f = (float)lo, mid = ((float)lo + (float)hi) / 2;
        const float v[6] = {f, nextafterf(f, 0), nextafterf(f, INFINITY), mid, nextafterf(mid, 0),
                            nextafterf(mid, INFINITY)};
        for (int i = 0; i < 6; i++)
            x[n++] = v[i];
    }
    const float sp[] = {INFINITY, NAN, 65520.0f, nextafterf(65520.0f, 0), nextafterf(65520.0f, INFINITY), 1e30f,
                        1e-40f, 1.4e-45f, 2.9802322e-08f, nextafterf(2.9802322e-08f, 1)};
    for (size_t i = 0; i < sizeof sp / sizeof *sp; i++)
        x[n++] = sp[i];
    for (int64_t i = 0, m = n; i < m; i++)
        x[n++] = -x[i];
    return n;
}

/* The C prelude rounds float16 stores and casts by integer and float
 * operations (rt_f2h, which gcc vectorizes): a cast of float32 to float16,
 * compiled, against the interpreter's rounding (ir_tensor_set, to nearest
 * even) on the inputs where rounding can go wrong, bit for bit: NaN is the
 * quiet NaN 0x7e00 with its sign, signs of zero stay. */
static void test_rounding(void)
{
    enum { N = 0x7c00 * 6 * 2 + 32 };
    static float x[N];
    int64_t n = rounding_inputs(x);
    char text[256];
    snprintf(text, sizeof text, HDR "def @main(%%x: Tensor[(%lld), float32]) { cast(%%x, dtype=\"float16\") }",
             (long long)n);
    ir_module *m = hx_load("round", text);
    hx_kernel k = {0};
    bool prepared = hx_prepare(&k, hx_last_primitive(m), NULL, NULL, false, false);
    int nlibs = 0;
    tg_lib **lib = prepared ? hx_build(&k, 1, &nlibs) : NULL;
    ok(lib != NULL, "a cast of float32 to float16 builds");
    if (lib) {
        int64_t shape[1] = {n};
        hx_tensor *in = hx_tensor_new(IR_FLOAT32, 1, shape), *got[2];
        ir_tensor *want = ir_tensor_alloc(IR_FLOAT16, 1, shape);
        for (int64_t i = 0; i < n; i++) {
            in->v[i] = x[i];
            ir_tensor_set(want, i, x[i]);
        }
        int ng = 0, bad = 0;
        int rc = hx_run(&k, &in, got, &ng);
        for (int64_t i = 0; rc == 0 && ng == 1 && i < n; i++) {
            /* bits: NaN's sign and quiet bit too (the kernel's output as
             * read back is exact, so it converts back to its own bits) */
            uint16_t w = ((const uint16_t *)want->data)[i], g;
            _Float16 h = (_Float16)got[0]->v[i];
            memcpy(&g, &h, sizeof g);
            if (g != w && bad++ < 5)
                diag("%a rounds to 0x%04x, the interpreter's 0x%04x", (double)x[i], g, w);
        }
        ok(rc == 0 && ng == 1 && bad == 0, "%lld float32 values round to float16 as the interpreter rounds (%d wrong)",
           (long long)n, bad);
        hx_tensor_free(in);
        ir_tensor_free(want);
        for (int o = 0; o < ng; o++)
            hx_tensor_free(got[o]);
        hx_close(lib, nlibs);
    }
    hx_kernel_free(&k);
    ir_module_free(m);
}

int main(void)
{
    hx_temp_cache();
    test_widening();
    test_rounding();
    static hx_kernel ks[MAXK];
    static int from[MAXK];
    ir_module *mods[NMODELS] = {0};
    int nk = 0;
    char *t = to_float16("%x: Tensor[(2), float32], 0.5f, 1f) 2f16 elf");
    is_str(t, "%x: Tensor[(2), float16], 0.5f16, 1f16) 2f16 elf", "the rewrite of types and literals");
    free(t);
    for (int i = 0; i < NMODELS; i++) {
        if (!strcmp(models[i].name, "arange"))
            continue;
        char *text = to_float16(models[i].text);
        mods[i] = hx_load(models[i].name, text);
        free(text);
        const ir_expr **fs;
        size_t nf = hx_primitives(mods[i], &fs);
        for (size_t f = 0; f < nf && nk < MAXK; f++) {
            bool okp = hx_prepare(&ks[nk], fs[f], NULL, NULL, false, true);
            ok(okp, "%s: float16 function %zu lowers", models[i].name, f);
            if (okp)
                from[nk++] = i;
            else
                hx_kernel_free(&ks[nk]);
        }
        free(fs);
    }
    static double err[MAXK], lo[MAXK], hi[MAXK];
    for (int i = 0; i < nk; i++) {
        lo[i] = models[from[i]].lo;
        hi[i] = models[from[i]].hi;
    }
    hx_cases cs = {.n = nk, .seed = 4321, .lo = lo, .hi = hi, .tol = TOL};
    bool built = hx_check_cases(ks, nk, &cs, err, NULL, NULL);
    ok(built, "%d float16 kernels build", nk);
    double worst = 0;
    for (int i = 0; built && i < nk; i++) {
        worst = err[i] > worst ? err[i] : worst;
        ok(err[i] < TOL, "%s (float16, %s): error %.2g", models[from[i]].name, sch_template_name(ks[i].s), err[i]);
    }
    diag("largest float16 error: %.2g of the output's magnitude (tolerance %g)", worst, TOL);
    for (int i = 0; i < nk; i++)
        hx_kernel_free(&ks[i]);
    for (int i = 0; i < NMODELS; i++)
        if (mods[i])
            ir_module_free(mods[i]);
    return tap_done();
}
