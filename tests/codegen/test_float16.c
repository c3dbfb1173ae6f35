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
 * prelude's float16 widening (rt_h2f) on all 65,536 bit patterns. */
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

int main(void)
{
    hx_temp_cache();
    test_widening();
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
    int nlibs = 0;
    tg_lib **lib = hx_build(ks, nk, &nlibs);
    ok(lib != NULL, "%d float16 kernels build", nk);
    double worst = 0;
    for (int i = 0; lib && i < nk; i++) {
        hx_kernel *k = &ks[i];
        hx_tensor *in[16], *want[8], *got[8];
        int ng;
        const struct op_model *om = &models[from[i]];
        hx_random_inputs(k->func, 4321u + (unsigned)i, om->lo, om->hi, in);
        int nw = hx_ref_run(k->func, in, want);
        int rc = hx_run(k, in, got, &ng);
        double err = ng == nw ? 0 : INFINITY;
        for (int o = 0; o < nw && o < ng; o++) {
            double e = hx_max_rel_err(got[o], want[o]);
            err = e > err ? e : err;
        }
        worst = err > worst ? err : worst;
        ok(rc == 0 && err < TOL, "%s (float16, %s): error %.2g", om->name, sch_template_name(k->s), err);
        for (int p = 0; p < k->func->u.func.nparams; p++)
            hx_tensor_free(in[p]);
        for (int o = 0; o < nw; o++)
            hx_tensor_free(want[o]);
        for (int o = 0; o < ng; o++)
            hx_tensor_free(got[o]);
    }
    diag("largest float16 error: %.2g of the output's magnitude (tolerance %g)", worst, TOL);
    for (int i = 0; i < nk; i++)
        hx_kernel_free(&ks[i]);
    hx_close(lib, nlibs);
    for (int i = 0; i < NMODELS; i++)
        if (mods[i])
            ir_module_free(mods[i]);
    return tap_done();
}
