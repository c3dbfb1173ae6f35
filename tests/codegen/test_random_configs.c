/* test_random_configs.c — the property that every valid schedule computes
 * the same function: for a few zoo tasks of different templates (a conv
 * with a residual epilogue, a strided depthwise conv, a dense with bias, a
 * batched matmul), 50 random configs of each task's space are applied,
 * lowered (weights packed by prologues), built side by side, run on the same
 * random inputs and compared with the reference kernels. (Layers with narrow rows keep
 * the compile time of 200 kernels down: the unrolled tiles stay short.) */
#include <math.h>
#include <string.h>

#include "tests/codegen/harness.h"
#include "tests/tap.h"
#include "tuner/tuner.h"

static const struct { const char *model; int task; } cases[] = {
    {"resnet18", 9},      /* conv2d 3x3 + scale + shift + residual + relu, 14x14 */
    {"mobilenet_v2", 23}, /* depthwise conv2d, stride 2, + scale + shift + clip */
    {"bert_layer", 0},    /* dense + bias */
    {"bert_layer", 1},    /* batch_matmul / 8 */
};
enum { NCASES = sizeof cases / sizeof *cases, PER_TASK = 50 };

int main(void)
{
    hx_temp_cache();
    const char *dir = getenv("top_srcdir");
    static hx_kernel ks[NCASES * PER_TASK];
    static int owner[NCASES * PER_TASK];
    int nk = 0;
    ir_module *mods[NCASES];
    tun_tasks tasks[NCASES];
    unsigned seed = 2024;
    for (int c = 0; c < NCASES; c++) {
        su_buf p = {0};
        su_buf_printf(&p, "%s/benchmarks/models/%s.relay", dir ? dir : ".", cases[c].model);
        size_t len;
        char *text = su_read_file(su_buf_str(&p), &len);
        if (!text)
            su_panic("cannot read %s", su_buf_str(&p));
        mods[c] = hx_load(cases[c].model, text);
        free(text);
        su_buf_free(&p);
        memset(&tasks[c], 0, sizeof tasks[c]);
        tun_extract_tasks(mods[c], &tasks[c]);
        const tun_task *t = &tasks[c].items[cases[c].task];
        /* the space, from one run of the template */
        su_diags d = {0};
        sch_schedule *s = sch_create(t->func, &d);
        sch_space sp = {0};
        bool made = s && !sch_apply_template(s, t->template_name, NULL, NULL, &sp);
        ok(made, "%s task %d (%s): a space of %lld configs", cases[c].model, cases[c].task, t->template_name,
           (long long)sch_space_size(&sp));
        sch_free(s);
        su_diags_free(&d);
        int lowered = 0;
        for (int r = 0; r < PER_TASK; r++) {
            sch_config cfg;
            sch_config_random(&sp, &seed, &cfg);
            if (hx_prepare(&ks[nk], t->func, t->template_name, &cfg, false, true)) {
                owner[nk++] = c;
                lowered++;
            } else {
                char *j = sch_config_json(&sp, &cfg);
                diag("config %s does not lower", j);
                free(j);
                hx_kernel_free(&ks[nk]);
            }
            sch_config_free(&cfg);
        }
        is_int(lowered, PER_TASK, "%s task %d: %d random configs lower", cases[c].model, cases[c].task, PER_TASK);
        sch_space_free(&sp);
    }
    int nlibs = 0;
    tg_lib **lib = hx_build(ks, nk, &nlibs);
    ok(lib != NULL, "%d kernels build", nk);
    hx_tensor *in[NCASES][16], *want[NCASES][4];
    for (int c = 0; c < NCASES; c++) {
        const ir_expr *f = tasks[c].items[cases[c].task].func;
        hx_random_inputs(f, 7u + (unsigned)c, -1, 1, in[c]);
        hx_ref_run(f, in[c], want[c]);
    }
    int bad[NCASES] = {0};
    double worst[NCASES] = {0};
    for (int i = 0; lib && i < nk; i++) {
        int c = owner[i], ng;
        hx_tensor *got[4];
        int rc = hx_run(&ks[i], in[c], got, &ng);
        double err = rc == 0 && ng == 1 ? hx_max_rel_err(got[0], want[c][0]) : INFINITY;
        worst[c] = err > worst[c] ? err : worst[c];
        if (!(err < 1e-4)) {
            su_buf b = {0};
            sch_trace_print(&b, ks[i].s);
            diag("%s task %d: error %.2g with the schedule\n%s", cases[c].model, cases[c].task, err, su_buf_str(&b));
            su_buf_free(&b);
            bad[c]++;
        }
        for (int o = 0; o < ng; o++)
            hx_tensor_free(got[o]);
    }
    for (int c = 0; c < NCASES; c++) {
        ok(lib && bad[c] == 0, "%s task %d: all random schedules match the reference kernels (worst error %.2g)", cases[c].model,
           cases[c].task, worst[c]);
        const ir_expr *f = tasks[c].items[cases[c].task].func;
        for (int p = 0; p < f->u.func.nparams; p++)
            hx_tensor_free(in[c][p]);
        hx_tensor_free(want[c][0]);
    }
    for (int i = 0; i < nk; i++)
        hx_kernel_free(&ks[i]);
    hx_close(lib, nlibs);
    for (int c = 0; c < NCASES; c++) {
        tun_tasks_free(&tasks[c]);
        ir_module_free(mods[c]);
    }
    return tap_done();
}
