/* test_kernels.c — numeric checks of generated code: every primitive
 * function of a set of small models (one per op, plus fused conv/dense
 * epilogues, softmax and layer_norm chains), lowered with its template's
 * default config, with hoisted weight packing, and without any schedule,
 * compiled together, run on random inputs and compared with the reference
 * kernels of ir/ref_*.c (max error relative to the output's magnitude below
 * 1e-4). The naive oracle of oracle.c, written apart from both, must agree
 * with the reference kernels too. */
#include <math.h>
#include <string.h>

#include "tests/codegen/harness.h"
#include "tests/tap.h"

#include "tests/codegen/op_models.h"

enum { NMODELS = sizeof models / sizeof *models, MAXK = 256 };

/* The kernels of one model under one way of scheduling. */
typedef struct job {
    int model;
    const char *how;        /* "default", "hoisted", "naive" */
    hx_kernel k;
} job;

int main(void)
{
    hx_temp_cache();
    static job jobs[MAXK];
    int nj = 0;
    ir_module *mods[NMODELS];
    for (int i = 0; i < NMODELS; i++) {
        mods[i] = hx_load(models[i].name, models[i].text);
        const ir_expr **fs;
        size_t nf = hx_primitives(mods[i], &fs);
        for (size_t f = 0; f < nf; f++) {
            static const char *const hows[] = {"default", "hoisted", "naive"};
            for (int h = 0; h < 3 && nj < MAXK; h++) {
                job *j = &jobs[nj];
                j->model = i;
                j->how = hows[h];
                bool okp = hx_prepare(&j->k, fs[f], NULL, NULL, h == 2, h == 1);
                ok(okp, "%s: function %zu lowers (%s)", models[i].name, f, hows[h]);
                if (okp)
                    nj++;
                else
                    hx_kernel_free(&j->k);
            }
        }
        free(fs);
    }
    hx_kernel *ks = malloc((size_t)nj * sizeof *ks);
    for (int i = 0; i < nj; i++)
        ks[i] = jobs[i].k;
    int nlibs = 0;
    tg_lib **lib = hx_build(ks, nj, &nlibs);
    ok(lib != NULL, "%d kernels build", nj);
    for (int i = 0; lib && i < nj; i++) {
        job *j = &jobs[i];
        hx_kernel *k = &ks[i];
        hx_tensor *in[16], *want[8], *got[8];
        int nw, ng;
        hx_random_inputs(k->func, 1234u + (unsigned)i, models[j->model].lo, models[j->model].hi, in);
        nw = hx_ref_run(k->func, in, want);
        if (!strcmp(j->how, "naive")) {
            /* once per function: the two oracles agree */
            hx_tensor *naive[8];
            int nn = hx_oracle_run(k->func, in, naive);
            double e = nn == nw ? 0 : INFINITY;
            for (int o = 0; o < nn && o < nw; o++) {
                double eo = hx_max_rel_err(naive[o], want[o]);
                e = eo > e ? eo : e;
            }
            ok(e < 1e-5, "%s: the naive oracle agrees with the reference kernels (%.2g)", models[j->model].name, e);
            for (int o = 0; o < nn; o++)
                hx_tensor_free(naive[o]);
        }
        int rc = hx_run(k, in, got, &ng);
        double err = ng == nw ? 0 : INFINITY;
        for (int o = 0; o < nw && o < ng; o++) {
            double e = hx_max_rel_err(got[o], want[o]);
            err = e > err ? e : err;
        }
        if (!ok(rc == 0 && err < 1e-4, "%s (%s, %s): error %.2g", models[j->model].name, j->how,
                sch_template_name(k->s), err)) {
            su_buf b = {0};
            sch_trace_print(&b, k->s);
            sch_print_func(&b, k->l->kernel);
            diag("%s", su_buf_str(&b));
            su_buf_free(&b);
        }
        for (int p = 0; p < k->func->u.func.nparams; p++)
            hx_tensor_free(in[p]);
        for (int o = 0; o < nw; o++)
            hx_tensor_free(want[o]);
        for (int o = 0; o < ng; o++)
            hx_tensor_free(got[o]);
    }
    for (int i = 0; i < nj; i++)
        hx_kernel_free(&ks[i]);
    free(ks);
    hx_close(lib, nlibs);
    for (int i = 0; i < NMODELS; i++)
        ir_module_free(mods[i]);
    return tap_done();
}
