/* test_random_configs.c — the property that every valid schedule computes
 * the same function: for a few zoo tasks of different templates (a conv
 * with a residual epilogue, a 1x1 conv with many input channels, one
 * whose 144 pixels tile in vectors and a stride-2 one whose subsampled 64
 * pixels do (conv2d_1x1.c: copied or read in place), depthwise convs in
 * the flat form (conv2d_dw_flat.c: tiles of 1, 2 or 4 x 16 positions of up
 * to 8 channels; mobilenet's strided one and a 15x15 one over de-interleaved
 * phases, an 11x11 one at stride 1), two Winograd convs
 * (conv2d_winograd.c), a dense with bias, a batched matmul) and small functions
 * of the default template (pooling, softmax, layer_norm, a mean, an
 * elementwise sum), random configs of each space (split, choice, reorder
 * and annotate knobs alike) are applied, lowered (weights packed by
 * prologues), built side by side, run on the same random inputs and
 * compared with the reference kernels. (Layers with narrow rows keep the
 * compile time of the kernels down: the unrolled tiles stay short.) */
#include <math.h>
#include <string.h>

#include "tests/codegen/harness.h"
#include "tests/tap.h"
#include "tuner/tuner.h"

#define HDR "#[version = \"0.0.5\"]\n"

/* A zoo model's task, or (model NULL) the one primitive function of text. */
static const struct { const char *model; int task; const char *name, *text; } cases[] = {
    {"resnet18", 9, NULL, NULL},      /* conv2d 3x3 + scale + shift + residual + relu, 14x14 */
    {"resnet50", 22, NULL, NULL},     /* conv2d 1x1, 2048 -> 512 channels, 7x7 */
    {"mobilenet_v2", 23, NULL, NULL}, /* depthwise conv2d, stride 2, + scale + shift + clip */
    {"bert_layer", 0, NULL, NULL},    /* dense + bias */
    {"bert_layer", 1, NULL, NULL},    /* batch_matmul / 8 */
    {NULL, 0, "conv2d 1x1 12x12", HDR "def @main(%x: Tensor[(1, 16, 12, 12), float32], %w: Tensor[(24, 16, 1, 1), float32], "
                                  "%b: Tensor[(24, 1, 1), float32]) { nn.relu(add(nn.conv2d(%x, %w), %b)) }"},
    {NULL, 0, "depthwise flat 11x11", HDR "def @main(%x: Tensor[(1, 12, 11, 11), float32], %w: Tensor[(12, 1, 3, 3), float32], "
                                      "%b: Tensor[(12, 1, 1), float32]) { clip(add(nn.conv2d(%x, %w, padding=[1, 1], groups=12), %b), a_min=0f, a_max=6f) }"},
    {NULL, 0, "depthwise flat stride 2 15x15", HDR "def @main(%x: Tensor[(1, 6, 15, 15), float32], %w: Tensor[(6, 1, 3, 3), float32], "
                                               "%b: Tensor[(6, 1, 1), float32]) { clip(add(nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1], groups=6), %b), a_min=0f, a_max=6f) }"},
    {NULL, 0, "conv2d 1x1 stride 2 16x16", HDR "def @main(%x: Tensor[(1, 12, 16, 16), float32], %w: Tensor[(20, 12, 1, 1), float32], "
                                           "%b: Tensor[(20, 1, 1), float32]) { nn.relu(add(nn.conv2d(%x, %w, strides=[2, 2]), %b)) }"},
    {NULL, 0, "max_pool2d", HDR "def @main(%x: Tensor[(1, 8, 12, 12), float32]) "
                            "{ nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1]) }"},
    {NULL, 0, "avg_pool2d", HDR "def @main(%x: Tensor[(2, 3, 9, 9), float32]) "
                            "{ nn.avg_pool2d(%x, pool_size=[3, 3], strides=[1, 1], padding=[1, 1]) }"},
    {NULL, 0, "softmax", HDR "def @main(%x: Tensor[(4, 3, 37), float32]) { nn.softmax(%x) }"},
    {NULL, 0, "layer_norm", HDR "def @main(%x: Tensor[(6, 40), float32], %g: Tensor[(40), float32], "
                            "%b: Tensor[(40), float32]) { nn.layer_norm(%x, %g, %b, epsilon=1e-5f) }"},
    {NULL, 0, "mean", HDR "def @main(%x: Tensor[(2, 6, 5, 7), float32]) { mean(%x, axis=[2, 3], keepdims=True) }"},
    {NULL, 0, "winograd F(4x4) 13x13 + bias + relu",
     HDR "def @main(%x: Tensor[(2, 5, 13, 13), float32], %u: Tensor[(6, 6, 8, 5), float32], %b: Tensor[(8, 1, 1), float32]) "
         "{ nn.relu(add(nn.contrib_conv2d_winograd_without_weight_transform(%x, %u, padding=[1, 1], tile_size=4), %b)) }"},
    {NULL, 0, "winograd F(2x2) 7x7 + residual",
     HDR "def @main(%x: Tensor[(1, 3, 7, 7), float32], %u: Tensor[(4, 4, 17, 3), float32], %r: Tensor[(1, 17, 5, 5), float32]) "
         "{ add(nn.contrib_conv2d_winograd_without_weight_transform(%x, %u, tile_size=2), %r) }"},
    {NULL, 0, "add relu", HDR "def @main(%x: Tensor[(2, 6, 40, 36), float32], %y: Tensor[(2, 6, 40, 36), float32]) "
                          "{ nn.relu(add(%x, %y)) }"},
};
enum { NCASES = sizeof cases / sizeof *cases, PER_TASK = 30 };

/* The function case c tests, from its model (kept in *mod, *tasks). */
static const ir_expr *case_func(int c, ir_module **mod, tun_tasks *tasks, const char **tmpl)
{
    memset(tasks, 0, sizeof *tasks);
    if (!cases[c].model) {
        *mod = hx_load(cases[c].name, cases[c].text);
        const ir_expr **fs;
        size_t nf = hx_primitives(*mod, &fs);
        if (nf != 1)
            su_panic("%s: %zu primitive functions", cases[c].name, nf);
        const ir_expr *f = fs[0];
        free(fs);
        *tmpl = NULL;
        return f;
    }
    const char *dir = getenv("top_srcdir");
    su_buf p = {0};
    su_buf_printf(&p, "%s/benchmarks/models/%s.relay", dir ? dir : ".", cases[c].model);
    size_t len;
    char *text = su_read_file(su_buf_str(&p), &len);
    if (!text)
        su_panic("cannot read %s", su_buf_str(&p));
    *mod = hx_load(cases[c].model, text);
    free(text);
    su_buf_free(&p);
    tun_extract_tasks(*mod, tasks);
    if (cases[c].task >= (int)tasks->len)
        su_panic("%s has %zu tasks", cases[c].model, tasks->len);
    *tmpl = tasks->items[cases[c].task].template_name;
    return tasks->items[cases[c].task].func;
}

int main(void)
{
    hx_temp_cache();
    static hx_kernel ks[NCASES * PER_TASK];
    static int owner[NCASES * PER_TASK];
    int nk = 0;
    ir_module *mods[NCASES];
    tun_tasks tasks[NCASES];
    const ir_expr *funcs[NCASES];
    char label[NCASES][64];
    unsigned seed = 2024;
    for (int c = 0; c < NCASES; c++) {
        const char *tmpl;
        funcs[c] = case_func(c, &mods[c], &tasks[c], &tmpl);
        if (cases[c].model)
            snprintf(label[c], sizeof label[c], "%s task %d", cases[c].model, cases[c].task);
        else
            snprintf(label[c], sizeof label[c], "%s", cases[c].name);
        /* the space, from one run of the template */
        su_diags d = {0};
        sch_schedule *s = sch_create(funcs[c], &d);
        sch_space sp = {0};
        bool made = s && !sch_apply_template(s, tmpl, NULL, NULL, &sp);
        ok(made && sp.knobs.len >= 2, "%s (%s): a space of %zu knobs, %lld configs", label[c], sp.template_name,
           sp.knobs.len, (long long)sch_space_size(&sp));
        sch_free(s);
        su_diags_free(&d);
        int lowered = 0;
        for (int r = 0; r < PER_TASK; r++) {
            sch_config cfg;
            hx_config_random_kept(funcs[c], tmpl, &sp, NULL, &seed, &cfg);
            if (hx_prepare(&ks[nk], funcs[c], tmpl, &cfg, false, true)) {
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
        is_int(lowered, PER_TASK, "%s: %d random configs lower", label[c], PER_TASK);
        sch_space_free(&sp);
    }
    const char *labels[NCASES];
    for (int c = 0; c < NCASES; c++)
        labels[c] = label[c];
    static double err[NCASES * PER_TASK];
    int bad[NCASES];
    double worst[NCASES];
    hx_cases cs = {.n = NCASES, .funcs = funcs, .owner = owner, .labels = labels, .seed = 7};
    bool built = hx_check_cases(ks, nk, &cs, err, bad, worst);
    ok(built, "%d kernels build", nk);
    for (int c = 0; c < NCASES; c++)
        ok(built && bad[c] == 0, "%s: all random schedules match the reference kernels (worst error %.2g)", label[c],
           worst[c]);
    for (int i = 0; i < nk; i++)
        hx_kernel_free(&ks[i]);
    for (int c = 0; c < NCASES; c++) {
        tun_tasks_free(&tasks[c]);
        ir_module_free(mods[c]);
    }
    return tap_done();
}
