/* test_tails.c — tiles with remainders (lower.c's partition, the templates'
 * tail tiles): convs, 1x1 convs, NCHWc convs, denses and batched matmuls on
 * widths with few divisors (109, 55, 13, 7, 14, 1; padded at stride 2: 15,
 * 7, and 19 under a 7x7 kernel on 3 channels, as the stem) and prime channel
 * counts, each scheduled for an AVX2 plan and an AVX-512 plan (both run on
 * any x86-64 host: the plan decides tile sizes, the compiler the ISA), by
 * its default config and by random configs of its space, built and run
 * against the reference kernels. Where the machine rule's tile leaves a
 * remainder the default takes it: the test checks that such a default is
 * there and that its lowered kernel has no guard left. */
#include <math.h>
#include <string.h>

#include "targets/targets.h"
#include "tests/codegen/harness.h"
#include "tests/tap.h"

#define HDR "#[version = \"0.0.5\"]\n"

/* tail: the knob whose default leaves a remainder under both plans ("":
 * none is required; the case checks correctness only) */
static const struct { const char *name, *text, *tail; } cases[] = {
    {"conv 3x3 13 wide", HDR "def @main(%x: Tensor[(1, 16, 13, 13), float32], %w: Tensor[(32, 16, 3, 3), float32]) "
                         "{ nn.relu(nn.conv2d(%x, %w, padding=[1, 1])) }", "tile_ow"},
    {"conv 3x3 109 wide", HDR "def @main(%x: Tensor[(1, 3, 109, 109), float32], %w: Tensor[(16, 3, 3, 3), float32]) "
                          "{ nn.conv2d(%x, %w, padding=[1, 1]) }", "tile_ow"},
    {"conv 3x3 55 wide, stride 2", HDR "def @main(%x: Tensor[(1, 8, 109, 109), float32], %w: Tensor[(24, 8, 3, 3), float32]) "
                                   "{ nn.conv2d(%x, %w, strides=[2, 2]) }", ""},
    /* stride-2 3x3 convs and a stem-like 7x7 stride-2 conv, padded, on
     * widths that leave odd outputs (15, 7, 19) */
    {"conv 3x3 15 wide, stride 2, padded", HDR "def @main(%x: Tensor[(1, 12, 29, 29), float32], "
                                           "%w: Tensor[(20, 12, 3, 3), float32]) "
                                           "{ nn.relu(nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1])) }", ""},
    {"conv 3x3 7 wide, stride 2, padded", HDR "def @main(%x: Tensor[(1, 24, 14, 14), float32], "
                                          "%w: Tensor[(40, 24, 3, 3), float32]) "
                                          "{ nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1]) }", ""},
    {"conv 7x7 19 wide, stride 2, 3 channels", HDR "def @main(%x: Tensor[(1, 3, 37, 37), float32], "
                                               "%w: Tensor[(16, 3, 7, 7), float32]) "
                                               "{ nn.relu(nn.conv2d(%x, %w, strides=[2, 2], padding=[3, 3])) }", ""},
    {"conv 3x3 7 wide, 13 -> 17 channels", HDR "def @main(%x: Tensor[(1, 13, 7, 7), float32], "
                                           "%w: Tensor[(17, 13, 3, 3), float32]) { nn.conv2d(%x, %w, padding=[1, 1]) }", ""},
    {"conv 3x3 14 wide, 7 -> 29 channels", HDR "def @main(%x: Tensor[(1, 7, 14, 14), float32], "
                                           "%w: Tensor[(29, 7, 3, 3), float32]) { nn.conv2d(%x, %w, padding=[1, 1]) }", ""},
    {"conv 3x3 1 wide", HDR "def @main(%x: Tensor[(1, 8, 1, 1), float32], %w: Tensor[(16, 8, 3, 3), float32]) "
                        "{ nn.conv2d(%x, %w, padding=[1, 1]) }", ""},
    {"conv 1x1 7x7", HDR "def @main(%x: Tensor[(1, 32, 7, 7), float32], %w: Tensor[(48, 32, 1, 1), float32], "
                     "%b: Tensor[(48, 1, 1), float32]) { nn.relu(add(nn.conv2d(%x, %w), %b)) }", ""},
    {"conv 1x1 13x13", HDR "def @main(%x: Tensor[(1, 16, 13, 13), float32], %w: Tensor[(32, 16, 1, 1), float32]) "
                       "{ nn.conv2d(%x, %w) }", "tile_p"},
    {"conv 1x1 13x13, 13 channels", HDR "def @main(%x: Tensor[(1, 16, 13, 13), float32], "
                                    "%w: Tensor[(13, 16, 1, 1), float32]) { nn.conv2d(%x, %w) }", ""},
    {"conv 1x1 14x14", HDR "def @main(%x: Tensor[(1, 16, 14, 14), float32], %w: Tensor[(40, 16, 1, 1), float32]) "
                       "{ nn.conv2d(%x, %w) }", ""},
    {"conv 1x1 28x28", HDR "def @main(%x: Tensor[(1, 8, 28, 28), float32], %w: Tensor[(24, 8, 1, 1), float32]) "
                       "{ nn.conv2d(%x, %w) }", ""},
    {"conv NCHW8c 29 wide", HDR "def @main(%x: Tensor[(1, 2, 7, 29, 8), float32], %w: Tensor[(2, 2, 3, 3, 8, 8), float32]) "
                           "{ nn.contrib_conv2d_NCHWc(%x, %w, padding=[1, 1], channels=16, kernel_size=[3, 3], "
                           "data_layout=\"NCHW8c\", kernel_layout=\"OIHW8i8o\", out_layout=\"NCHW8c\") }", "tile_ow"},
    {"dense 13 x 109", HDR "def @main(%x: Tensor[(13, 40), float32], %w: Tensor[(109, 40), float32], "
                       "%b: Tensor[(109), float32]) { nn.bias_add(nn.dense(%x, %w), %b) }", "tile_x"},
    {"dense 1 x 1000", HDR "def @main(%x: Tensor[(1, 64), float32], %w: Tensor[(1000, 64), float32]) "
                       "{ nn.dense(%x, %w) }", ""},
    {"batch_matmul 13 x 109", HDR "def @main(%a: Tensor[(2, 13, 24), float32], %b: Tensor[(2, 109, 24), float32]) "
                              "{ nn.batch_matmul(%a, %b) }", "tile_x"},
};
enum { NCASES = sizeof cases / sizeof *cases, NPLANS = 2, PER_PLAN = 6 };
static const char *const plans[NPLANS] = {"cpu -mcpu=haswell", "cpu -mcpu=skylake-avx512"};

/* Whether the default candidate of knob `name` in sp leaves a remainder. */
static bool default_has_tail(const sch_space *sp, const char *name)
{
    const sch_knob *k = sch_space_knob(sp, name);
    if (!k || k->kind != SCH_KNOB_SPLIT || k->nparts != 2)
        return false;
    const int64_t *f = &k->cands[(size_t)k->dflt * 2];
    return f[0] * f[1] != k->extent;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

int main(void)
{
    hx_temp_cache();
    static hx_kernel ks[NCASES * NPLANS * (PER_PLAN + 1)];
    static int owner[NCASES * NPLANS * (PER_PLAN + 1)];
    int nk = 0;
    ir_module *mods[NCASES];
    const ir_expr *funcs[NCASES];
    unsigned seed = 109;
    for (int c = 0; c < NCASES; c++) {
        mods[c] = hx_load(cases[c].name, cases[c].text);
        funcs[c] = hx_last_primitive(mods[c]);
        for (int p = 0; p < NPLANS; p++) {
            tg_target tg;
            const char *why = NULL;
            if (!tg_target_parse(plans[p], &tg, &why))
                su_panic("%s: %s", plans[p], why);
            su_diags d = {0};
            sch_schedule *s = sch_create(funcs[c], &d);
            sch_space sp = {0};
            bool made = s && !sch_apply_template(s, NULL, &tg.hw, NULL, &sp);
            su_diags_free(&d);
            ok(made, "%s (%s): template %s, %lld configs", cases[c].name, plans[p], sp.template_name,
               (long long)sch_space_size(&sp));
            if (cases[c].tail[0]) {
                ok(default_has_tail(&sp, cases[c].tail), "%s (%s): the default %s leaves a tail", cases[c].name,
                   plans[p], cases[c].tail);
                sch_lowered *l = made ? sch_lower(s, NULL) : NULL;
                su_buf b = {0};
                if (l)
                    sch_print_func(&b, l->kernel);
                /* (a parallel loop's tail is its last iteration's branch:
                 * an if with an else; a guard has none) */
                bool guarded = count(su_buf_str(&b), "if (") != count(su_buf_str(&b), "} else {");
                ok(l && !guarded, "%s (%s): its kernel has no guard", cases[c].name, plans[p]);
                if (l && guarded)
                    diag("%s", su_buf_str(&b));
                su_buf_free(&b);
            }
            sch_free(s);
            /* the default, then random configs (tails among their tiles) */
            int lowered = 0;
            for (int r = 0; r <= PER_PLAN; r++) {
                sch_config cfg;
                if (r == 0)
                    sch_config_default(&sp, &cfg);
                else
                    hx_config_random_kept(funcs[c], NULL, &sp, &tg.hw, &seed, &cfg);
                if (hx_prepare_hw(&ks[nk], funcs[c], NULL, &cfg, false, true, &tg.hw)) {
                    owner[nk++] = c;
                    lowered++;
                } else {
                    hx_kernel_free(&ks[nk]);
                }
                sch_config_free(&cfg);
            }
            is_int(lowered, PER_PLAN + 1, "%s (%s): the default and %d random configs lower", cases[c].name,
                   plans[p], PER_PLAN);
            sch_space_free(&sp);
        }
    }
    const char *labels[NCASES];
    for (int c = 0; c < NCASES; c++)
        labels[c] = cases[c].name;
    static double err[NCASES * NPLANS * (PER_PLAN + 1)];
    int bad[NCASES];
    double worst[NCASES];
    hx_cases cs = {.n = NCASES, .funcs = funcs, .owner = owner, .labels = labels, .seed = 13};
    bool built = hx_check_cases(ks, nk, &cs, err, bad, worst);
    ok(built, "%d kernels build", nk);
    for (int c = 0; c < NCASES; c++) {
        ok(built && bad[c] == 0, "%s: every schedule matches the reference kernels (worst error %.2g)", cases[c].name,
           worst[c]);
        ir_module_free(mods[c]);
    }
    for (int i = 0; i < nk; i++)
        hx_kernel_free(&ks[i]);
    return tap_done();
}
