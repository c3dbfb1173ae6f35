/* test_conv1x1_stride.c — strided 1x1 convs as GEMMs (compute_nn.c's
 * stride stage, conv2d_1x1.c): odd planes (7x7, 13x13, 55x55) at strides
 * 2, 3 and (1, 2), a batch of 2, bias, scale and shift, residual and relu
 * epilogues, each lowered under its default config, under every pairing of
 * the two knobs that decide how the subsampled input is read (vec_p: the
 * pixels or the channels vectorized; copy_input: copied once into a
 * contiguous buffer or read in place, gathers included) and with no
 * schedule at all, built side by side, run on random inputs and compared
 * with the reference kernels. The schedules are checked too: the stride
 * stage is at the root exactly when copy_input says so, stride-1 and padded
 * 1x1 convs keep the spaces they had (no copy_input; the row template). */
#include <string.h>

#include "tests/codegen/harness.h"
#include "tests/tap.h"

#define HDR "#[version = \"0.0.5\"]\n"

static const struct {
    const char *name, *text;
} cases[] = {
    {"7x7 s2 + bias + relu", HDR "def @main(%x: Tensor[(1, 12, 7, 7), float32], %w: Tensor[(20, 12, 1, 1), float32], "
                             "%b: Tensor[(20), float32]) { nn.relu(nn.bias_add(nn.conv2d(%x, %w, strides=[2, 2]), %b)) }"},
    {"13x13 s2 batch 2 + residual", HDR "def @main(%x: Tensor[(2, 9, 13, 13), float32], %w: Tensor[(16, 9, 1, 1), float32], "
                                    "%r: Tensor[(2, 16, 7, 7), float32]) { add(nn.conv2d(%x, %w, strides=[2, 2]), %r) }"},
    {"13x13 s3 batch 2 dilated", HDR "def @main(%x: Tensor[(2, 5, 13, 13), float32], %w: Tensor[(7, 5, 1, 1), float32]) "
                                 "{ nn.conv2d(%x, %w, strides=[3, 3], dilation=[2, 2]) }"},
    {"55x55 s2 (784 pixels) scale shift residual relu",
     HDR "def @main(%x: Tensor[(1, 6, 55, 55), float32], %w: Tensor[(32, 6, 1, 1), float32], "
     "%s: Tensor[(32, 1, 1), float32], %t: Tensor[(32, 1, 1), float32], %r: Tensor[(1, 32, 28, 28), float32]) "
     "{ nn.relu(add(add(multiply(nn.conv2d(%x, %w, strides=[2, 2]), %s), %t), %r)) }"},
    {"55x55 s3 + bias", HDR "def @main(%x: Tensor[(1, 8, 55, 55), float32], %w: Tensor[(24, 8, 1, 1), float32], "
                        "%b: Tensor[(24), float32]) { nn.bias_add(nn.conv2d(%x, %w, strides=[3, 3]), %b) }"},
    {"7x13 strides (1, 2)", HDR "def @main(%x: Tensor[(1, 4, 7, 13), float32], %w: Tensor[(16, 4, 1, 1), float32]) "
                            "{ nn.conv2d(%x, %w, strides=[1, 2]) }"},
};
enum { NCASES = sizeof cases / sizeof *cases, NVARIANTS = 6, MAXK = NCASES * NVARIANTS };

/* The variants of a case: the default config, the four (vec_p, copy_input)
 * pairs over the other knobs' defaults, and no schedule. */
static const char *const variant_names[NVARIANTS] = {"default", "channels, in place", "channels, copied",
                                                     "pixels, in place", "pixels, copied", "naive"};

/* The knob's index in the space, or -1. */
static int knob_index(const sch_space *sp, const char *name)
{
    const sch_knob *k = sch_space_knob(sp, name);
    return k ? (int)(k - sp->knobs.data) : -1;
}

/* The stride stage of a schedule, or NULL. */
static const sch_tensor *stride_stage(const sch_schedule *s)
{
    for (size_t i = 0; i < s->tensors.len; i++)
        if (!strncmp(s->tensors.data[i]->name, "stride", 6))
            return s->tensors.data[i];
    return NULL;
}

/* The space of f's template under the defaults (sp to sch_space_free). */
static bool space_of(const ir_expr *f, sch_space *sp)
{
    su_diags d = {0};
    sch_schedule *s = sch_create(f, &d);
    bool made = s && !sch_apply_template(s, NULL, NULL, NULL, sp);
    sch_free(s);
    su_diags_free(&d);
    return made;
}

/* The primitive function of a model's text with the conv (the last one:
 * a bias is reshaped before it); *mod to free. */
static const ir_expr *conv_function(const char *name, const char *text, ir_module **mod)
{
    *mod = hx_load(name, text);
    const ir_expr *f = hx_last_primitive(*mod);
    if (!f)
        su_panic("%s: no primitive function", name);
    return f;
}

/* Spaces that must not change: a stride-1 1x1 conv has no copy_input, a
 * padded strided one stays in the row template (vec_ow). */
static void check_unchanged_spaces(void)
{
    static const char *const s1 = HDR "def @main(%x: Tensor[(1, 8, 9, 9), float32], %w: Tensor[(16, 8, 1, 1), float32]) "
                                      "{ nn.conv2d(%x, %w) }";
    static const char *const padded = HDR "def @main(%x: Tensor[(1, 8, 9, 9), float32], %w: Tensor[(16, 8, 1, 1), float32]) "
                                          "{ nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1]) }";
    ir_module *m;
    sch_space sp = {0};
    const ir_expr *f = conv_function("stride 1", s1, &m);
    ok(space_of(f, &sp) && knob_index(&sp, "vec_p") >= 0 && knob_index(&sp, "copy_input") < 0,
       "a stride-1 1x1 conv: the GEMM template, no copy_input knob");
    sch_space_free(&sp);
    ir_module_free(m);
    f = conv_function("padded", padded, &m);
    sp = (sch_space){0};
    ok(space_of(f, &sp) && knob_index(&sp, "vec_ow") >= 0 && knob_index(&sp, "copy_input") < 0,
       "a padded strided 1x1 conv: the row template");
    sch_space_free(&sp);
    ir_module_free(m);
}

/* Prepares variant v of function f (space sp) into k; false if it does not
 * lower. Checks that the stride stage is at the root exactly when copied. */
static bool prepare_variant(hx_kernel *k, const ir_expr *f, const sch_space *sp, int v, const char *label)
{
    if (v == NVARIANTS - 1)
        return hx_prepare(k, f, NULL, NULL, true, true);
    sch_config cfg;
    sch_config_default(sp, &cfg);
    int iv = knob_index(sp, "vec_p"), ic = knob_index(sp, "copy_input");
    if (v > 0) {
        /* choice knobs over {0, 1}: the candidate index is the value */
        cfg.choice[iv] = v >= 3;
        cfg.choice[ic] = v % 2 == 0;
    }
    bool made = hx_prepare(k, f, NULL, &cfg, false, true);
    const sch_tensor *st = made ? stride_stage(k->s) : NULL;
    if (made)
        ok(st && (st->attach == SCH_ATTACH_ROOT) == (sp->knobs.data[ic].cands[cfg.choice[ic]] == 1),
           "%s (%s): the stride stage is %s", label, variant_names[v],
           sp->knobs.data[ic].cands[cfg.choice[ic]] ? "at the root" : "inlined");
    sch_config_free(&cfg);
    return made;
}

int main(void)
{
    hx_temp_cache();
    check_unchanged_spaces();
    static hx_kernel ks[MAXK];
    static int owner[MAXK], variant[MAXK];
    int nk = 0;
    ir_module *mods[NCASES];
    const ir_expr *funcs[NCASES];
    for (int c = 0; c < NCASES; c++) {
        funcs[c] = conv_function(cases[c].name, cases[c].text, &mods[c]);
        sch_space sp = {0};
        bool made = space_of(funcs[c], &sp);
        ok(made && knob_index(&sp, "vec_p") >= 0 && knob_index(&sp, "copy_input") >= 0,
           "%s: the GEMM template's space with copy_input (%zu knobs)", cases[c].name, sp.knobs.len);
        for (int v = 0; made && v < NVARIANTS; v++) {
            if (prepare_variant(&ks[nk], funcs[c], &sp, v, cases[c].name)) {
                owner[nk] = c;
                variant[nk++] = v;
            } else {
                ok(0, "%s (%s) lowers", cases[c].name, variant_names[v]);
                hx_kernel_free(&ks[nk]);
            }
        }
        sch_space_free(&sp);
    }
    const char *labels[NCASES];
    for (int c = 0; c < NCASES; c++)
        labels[c] = cases[c].name;
    static double err[MAXK];
    hx_cases cs = {.n = NCASES, .funcs = funcs, .owner = owner, .labels = labels, .seed = 11};
    bool built = hx_check_cases(ks, nk, &cs, err, NULL, NULL);
    ok(built, "%d kernels build", nk);
    for (int i = 0; built && i < nk; i++)
        ok(err[i] < 1e-4, "%s (%s): matches the reference kernels (error %.2g)", cases[owner[i]].name,
           variant_names[variant[i]], err[i]);
    for (int i = 0; i < nk; i++)
        hx_kernel_free(&ks[i]);
    for (int c = 0; c < NCASES; c++)
        ir_module_free(mods[c]);
    return tap_done();
}
