/* pass_manager.c — the optimization pipeline as a table: each pass has a name,
 * a function and the lowest -O level at which it runs. After each pass the
 * module is type-checked again (new nodes only), may be printed
 * (--print-after, --print-after-all), and in check mode is run against the
 * module as it was before the pass, so that the first pass that changes the
 * result is named. */
#include <string.h>

#include "ir/transform/transform.h"

static const tr_pass passes[] = {
    {"simplify-inference", tr_simplify_inference, 1, "batch_norm into scale and shift, dropout to identity"},
    {"canonicalize", tr_canonicalize, 1, "bias_add into a broadcast add"},
    {"dead-code", tr_dead_code, 1, "drop let bindings that are never used"},
    {"common-subexpr", tr_common_subexpr, 2, "merge structurally equal computations"},
    {"fold-constant", tr_fold_constant, 2, "evaluate operators on constants (weights bound with --params)"},
    {"fold-scale-axis", tr_fold_scale_axis, 3, "fold per-channel scales into constant conv/dense weights"},
    {"winograd", tr_winograd, 3, "3x3 stride-1 convs with constant weights as Winograd convs (only with --winograd)"},
    {"alter-layout", tr_alter_layout, 3, "conv2d and the ops between convs in NCHW[x]c (only with --layout-block N)"},
    {"fuse-ops", tr_fuse_ops, 1, "group operators into primitive functions (kernels)"},
};

const tr_pass *tr_passes(size_t *n)
{
    *n = sizeof passes / sizeof *passes;
    return passes;
}

const tr_pass *tr_pass_find(const char *name)
{
    for (size_t i = 0; i < sizeof passes / sizeof *passes; i++)
        if (strcmp(passes[i].name, name) == 0)
            return &passes[i];
    return NULL;
}

static void print_module(const tr_options *o, const ir_module *m, const char *after)
{
    FILE *f = o->print_to ? o->print_to : stderr;
    su_buf b = {0};
    ir_print_module(&b, m, NULL);
    fprintf(f, "// ---- after %s ----\n%s", after, su_buf_str(&b));
    su_buf_free(&b);
}

bool tr_optimize(ir_module *m, const tr_options *o, su_diags *d)
{
    if (!ir_infer_types(m, d))
        return false;
    bool started = !o->from_pass;
    for (size_t i = 0; i < sizeof passes / sizeof *passes; i++) {
        const tr_pass *p = &passes[i];
        started = started || strcmp(p->name, o->from_pass) == 0;
        if (o->until_pass && strcmp(p->name, o->until_pass) == 0)
            break;
        if (p->level > o->level || !started)
            continue;
        ir_global_def *before = NULL;
        size_t nbefore = m->defs.len;
        if (o->check) {
            before = su_malloc(sizeof *before * (nbefore + 1));
            memcpy(before, m->defs.data, sizeof *before * nbefore);
        }
        bool okk = p->fn(m, o, d) && ir_infer_types(m, d);
        if (!okk)
            su_error(d, (su_span){0}, "pass %s failed", p->name);
        if (okk && (o->print_after_all || (o->print_after && strcmp(o->print_after, p->name) == 0)))
            print_module(o, m, p->name);
        if (okk && o->check) {
            su_buf why = {0};
            if (!o->check(o->check_ctx, m, before, nbefore, &why)) {
                su_error(d, (su_span){0}, "check mode: pass %s changes the result: %s", p->name, su_buf_str(&why));
                okk = false;
            }
            su_buf_free(&why);
        }
        free(before);
        if (!okk)
            return false;
    }
    return true;
}
