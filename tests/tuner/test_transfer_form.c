/* test_transfer_form.c — which workloads' spaces transfer learning pairs
 * (sch_space_same_form, docs/tuning.md): conv2d_nchw's general loop nest
 * transfers between kernel sizes, strides and paddings (a knob one lacks,
 * as pad_inline without padding, keeps the form), its 1x1 form only with
 * other 1x1 convs, at any stride; dense and batch_matmul (one template's
 * code) share a form. Checked on a target named AVX-512 and one named AVX2. */
#include <string.h>

#include "tests/codegen/harness.h"
#include "tests/tap.h"
#include "tuner/tuner.h"

/* Seven tasks: a 3x3 padded conv, a 3x1 stride-2 unpadded one, a 7x7 stride-2
 * stem, a 1x1, a 1x1 at stride 2, a dense and a batch_matmul. */
static const char *MODEL = "#[version = \"0.0.5\"]\n"
    "def @main(%x: Tensor[(1, 8, 16, 16), float32], %w3: Tensor[(16, 8, 3, 3), float32],\n"
    "          %w31: Tensor[(16, 8, 3, 1), float32], %w7: Tensor[(16, 8, 7, 7), float32],\n"
    "          %w1: Tensor[(32, 8, 1, 1), float32], %w1s: Tensor[(24, 8, 1, 1), float32],\n"
    "          %a: Tensor[(16, 64), float32], %b: Tensor[(32, 64), float32],\n"
    "          %p: Tensor[(2, 16, 32), float32], %q: Tensor[(2, 24, 32), float32]) {\n"
    "  %0 = nn.conv2d(%x, %w3, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3]);\n"
    "  %1 = nn.conv2d(%x, %w31, strides=[2, 2], channels=16, kernel_size=[3, 1]);\n"
    "  %2 = nn.conv2d(%x, %w7, strides=[2, 2], padding=[3, 3, 3, 3], channels=16, kernel_size=[7, 7]);\n"
    "  %3 = nn.conv2d(%x, %w1, channels=32, kernel_size=[1, 1]);\n"
    "  %4 = nn.conv2d(%x, %w1s, strides=[2, 2], channels=24, kernel_size=[1, 1]);\n"
    "  %5 = nn.dense(%a, %b);\n"
    "  %6 = nn.batch_matmul(%p, %q);\n"
    "  (%0, %1, %2, %3, %4, %5, %6)\n"
    "}\n";

enum { NT = 7 };

/* The task whose weight (second input) has these output channels and kernel rows x cols. */
static int find_task(const tun_tasks *ts, const char *tmpl, int64_t oc, int64_t kh, int64_t kw)
{
    for (size_t i = 0; i < ts->len; i++) {
        const ir_expr *f = ts->items[i].func;
        const ir_type *w = f->u.func.nparams > 1 ? f->u.func.params[1]->type : NULL;
        if (strcmp(ts->items[i].template_name, tmpl))
            continue;
        if (!kh || (w && w->ndim == 4 && w->shape[0] == oc && w->shape[2] == kh && w->shape[3] == kw))
            return (int)i;
    }
    return -1;
}

static void check_target(const tun_tasks *ts, const char *target)
{
    tg_target tg;
    const char *why = NULL;
    if (!ok(tg_target_parse(target, &tg, &why), "%s parses (%s)", target, why ? why : ""))
        return;
    static const char *const name[NT] = {"3x3", "3x1 s2", "7x7 s2", "1x1", "1x1 s2", "dense", "batch_matmul"};
    int at[NT] = {find_task(ts, "conv2d_nchw", 16, 3, 3),  find_task(ts, "conv2d_nchw", 16, 3, 1),
                  find_task(ts, "conv2d_nchw", 16, 7, 7),  find_task(ts, "conv2d_nchw", 32, 1, 1),
                  find_task(ts, "conv2d_nchw", 24, 1, 1),  find_task(ts, "dense", 0, 0, 0),
                  find_task(ts, "batch_matmul", 0, 0, 0)};
    /* the form each belongs to: general conv, 1x1 conv, matmul */
    static const int form[NT] = {0, 0, 0, 1, 1, 2, 2};
    tun_space s[NT];
    bool made = true;
    for (int i = 0; i < NT; i++) {
        su_buf err = {0};
        made &= at[i] >= 0 && tun_space_init(&s[i], &ts->items[at[i]], &tg.hw, &err);
        if (!made) {
            ok(false, "%s: the %s task and its space (%s)", target, name[i], su_buf_str(&err));
            su_buf_free(&err);
            for (int k = 0; k < i; k++)
                tun_space_free(&s[k]);
            return;
        }
        su_buf_free(&err);
    }
    /* the padded 3x3 has knobs the unpadded 3x1 lacks: the test means something */
    ok(sch_space_knob(&s[0].sp, "pad_inline") && !sch_space_knob(&s[1].sp, "pad_inline"),
       "%s: the padded 3x3 has pad_inline, the unpadded 3x1 does not", target);
    for (int i = 0; i < NT; i++)
        for (int j = 0; j < NT; j++) {
            bool same = sch_space_same_form(&s[i].sp, &s[j].sp);
            ok(same == (form[i] == form[j]), "%s: %s and %s are %s", target, name[i], name[j],
               form[i] == form[j] ? "one form" : "different forms");
        }
    for (int i = 0; i < NT; i++)
        tun_space_free(&s[i]);
}

int main(void)
{
    ir_module *m = hx_load("forms", MODEL);
    tun_tasks ts = {0};
    tun_extract_tasks(m, &ts);
    if (ok(ts.len == NT, "seven tasks (%zu)", ts.len)) {
        check_target(&ts, "cpu -mcpu=skylake-avx512");
        check_target(&ts, "cpu -mcpu=haswell");
    }
    tun_tasks_free(&ts);
    ir_module_free(m);
    return tap_done();
}
