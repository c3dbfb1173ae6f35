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

/* Once per function (its naive job's inputs): the two oracles agree. */
static void check_naive(void *ctx, int c, hx_tensor *const *in, hx_tensor *const *want, int nw)
{
    const job *j = &((const job *)ctx)[c];
    if (strcmp(j->how, "naive"))
        return;
    hx_tensor *naive[8];
    int nn = hx_oracle_run(j->k.func, in, naive);
    double e = nn == nw ? 0 : INFINITY;
    for (int o = 0; o < nn && o < nw; o++) {
        double eo = hx_max_rel_err(naive[o], want[o]);
        e = eo > e ? eo : e;
    }
    ok(e < 1e-5, "%s: the naive oracle agrees with the reference kernels (%.2g)", models[j->model].name, e);
    hx_tensors_free(naive, nn);
}

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
    double *err = malloc((size_t)nj * sizeof *err), *lo = malloc((size_t)nj * sizeof *lo),
           *hi = malloc((size_t)nj * sizeof *hi);
    for (int i = 0; i < nj; i++) {
        lo[i] = models[jobs[i].model].lo;
        hi[i] = models[jobs[i].model].hi;
    }
    hx_cases cs = {.n = nj, .seed = 1234, .lo = lo, .hi = hi, .on_case = check_naive, .ctx = jobs};
    bool built = hx_check_cases(ks, nj, &cs, err, NULL, NULL);
    ok(built, "%d kernels build", nj);
    for (int i = 0; built && i < nj; i++) {
        job *j = &jobs[i];
        hx_kernel *k = &ks[i];
        if (!ok(err[i] < 1e-4, "%s (%s, %s): error %.2g", models[j->model].name, j->how, sch_template_name(k->s),
                err[i])) {
            su_buf b = {0};
            sch_print_func(&b, k->l->kernel);
            diag("%s", su_buf_str(&b));
            su_buf_free(&b);
        }
    }
    free(err);
    free(lo);
    free(hi);
    for (int i = 0; i < nj; i++)
        hx_kernel_free(&ks[i]);
    free(ks);
    for (int i = 0; i < NMODELS; i++)
        ir_module_free(mods[i]);
    return tap_done();
}
