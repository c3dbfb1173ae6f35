/* test_zoo.c — every distinct fused function of the zoo models (resnet18,
 * mobilenet_v2, squeezenet1_0, the BERT layer, the MLP), lowered with its
 * template's default schedule and hoisted weight packing, built in one
 * shared object and checked against the reference kernels on random inputs (max error
 * relative to the output's magnitude below 1e-4). Functions are distinct by
 * workload key, so each shape is checked once. */
#include <math.h>
#include <string.h>

#include "tests/codegen/harness.h"
#include "tests/tap.h"
#include "tuner/tuner.h"

static const char *const zoo[] = {"resnet18", "mobilenet_v2", "squeezenet1_0", "bert_layer", "mlp"};
enum { NZOO = sizeof zoo / sizeof *zoo, MAXK = 512 };

int main(void)
{
    hx_temp_cache();
    const char *dir = getenv("top_srcdir");
    static hx_kernel ks[MAXK];
    static const char *from[MAXK];
    int nk = 0;
    ir_module *mods[NZOO];
    su_map seen = {0};
    SU_VEC(char *) keys = {0};
    for (int z = 0; z < NZOO; z++) {
        su_buf p = {0};
        su_buf_printf(&p, "%s/benchmarks/models/%s.relay", dir ? dir : ".", zoo[z]);
        size_t len;
        char *text = su_read_file(su_buf_str(&p), &len);
        if (!text)
            su_panic("cannot read %s", su_buf_str(&p));
        mods[z] = hx_load(zoo[z], text);
        free(text);
        su_buf_free(&p);
        const ir_expr **fs;
        size_t nf = hx_primitives(mods[z], &fs);
        int distinct = 0, lowered = 0;
        for (size_t f = 0; f < nf && nk < MAXK; f++) {
            char *key = sch_workload_key(fs[f], NULL, NULL);
            if (su_map_get(&seen, key)) {
                free(key);
                continue;
            }
            su_map_put(&seen, key, (void *)1);
            su_vec_push(&keys, key);
            distinct++;
            if (hx_prepare(&ks[nk], fs[f], NULL, NULL, false, true)) {
                from[nk++] = zoo[z];
                lowered++;
            } else {
                hx_kernel_free(&ks[nk]);
            }
        }
        is_int(lowered, distinct, "%s: all %d distinct fused functions lower", zoo[z], distinct);
        free(fs);
    }
    static double err[MAXK];
    hx_cases cs = {.n = nk, .seed = 99};
    bool built = hx_check_cases(ks, nk, &cs, err, NULL, NULL);
    ok(built, "%d kernels build", nk);
    for (int i = 0; built && i < nk; i++) {
        hx_kernel *k = &ks[i];
        const sch_buffer *ob = k->l->kernel->args[k->l->kernel->nargs - 1];
        su_buf shape = {0};
        for (int d = 0; d < ob->ndim; d++)
            su_buf_printf(&shape, "%s%lld", d ? "x" : "", (long long)ob->shape[d]);
        ok(err[i] < 1e-4, "%s: %s -> %s: error %.2g", from[i], sch_template_name(k->s), su_buf_str(&shape), err[i]);
        su_buf_free(&shape);
    }
    for (int i = 0; i < nk; i++)
        hx_kernel_free(&ks[i]);
    for (size_t i = 0; i < keys.len; i++)
        free(keys.data[i]);
    su_vec_free(&keys);
    su_map_free(&seen);
    for (int z = 0; z < NZOO; z++)
        ir_module_free(mods[z]);
    return tap_done();
}
