/* build.c — the one road from a primitive function and a config to LoopIR:
 * compute definitions (sch_create), the template run under the config
 * (sch_apply_template) and the lowering with the packs of constant
 * parameters hoisted into prologues (sch_lower). Tuning (the space, the
 * cost model's features, the builder's candidates), compiling a model, the
 * `lower` command and the benchmarks all build kernels through it, so a
 * kernel measured is the kernel compiled.
 *
 * A config arrives as a value (sch_config, one candidate per knob). Only
 * the command line has configs as text: cfg_json is read in the space the
 * template defines with its defaults, then the template runs again under
 * the parsed config — the one case that runs a template twice. */
#include <string.h>

#include "schedule/schedule.h"

/* Fails the build at `step` with a reason (taken, malloc'd). */
static bool stop(sch_kernel *k, sch_build_step step, sch_err e, char *why)
{
    k->failed = step;
    k->err = e;
    k->why = why;
    return false;
}

/* The schedule's own error message, copied. */
static char *schedule_why(const sch_schedule *s)
{
    return su_strdup(s->err_msg ? s->err_msg : "");
}

/* A fresh schedule of fn into k->s, in the compute forms of the build's
 * machine (sch_create_for); false with CREATE when fn cannot be scheduled
 * (its diagnostics kept in k->diags and joined in k->why). */
static bool create(const ir_expr *fn, const sch_build_opts *o, sch_kernel *k)
{
    k->s = sch_create_for(fn, o->hw, &k->diags);
    if (k->s)
        return true;
    su_buf why = {0};
    for (size_t i = 0; i < k->diags.len; i++)
        su_buf_printf(&why, "%s%s", i ? "; " : "", k->diags.items[i].msg);
    return stop(k, SCH_BUILD_CREATE, SCH_E_UNSUPPORTED, su_buf_take(&why));
}

/* Reads the command line's config text in the space of the defaults' run
 * and schedules fn afresh under it. */
static bool apply_json(const ir_expr *fn, const sch_build_opts *o, const sch_hw *hw, sch_kernel *k)
{
    char *bad = NULL;
    if (!sch_config_parse(&k->space, o->cfg_json, &k->cfg, &bad))
        return stop(k, SCH_BUILD_CONFIG, SCH_E_BAD_CONFIG, bad ? bad : su_strdup("?"));
    sch_free(k->s);
    if (!create(fn, o, k))
        return false;
    sch_err e = sch_apply_template(k->s, o->template_name, hw, &k->cfg, NULL);
    return e ? stop(k, SCH_BUILD_TEMPLATE, e, schedule_why(k->s)) : true;
}

/* The template under the config (or its defaults, or the config text). */
static bool apply(const ir_expr *fn, const sch_build_opts *o, sch_kernel *k)
{
    const sch_hw *hw = o->hw ? o->hw : &sch_hw_default;
    const sch_config *cfg = o->cfg_json ? NULL : o->cfg;
    sch_err e = sch_apply_template(k->s, o->template_name, hw, cfg, &k->space);
    if (e)
        return stop(k, SCH_BUILD_TEMPLATE, e, schedule_why(k->s));
    if (o->cfg_json)
        return apply_json(fn, o, hw, k);
    if (cfg) {
        k->cfg.n = cfg->n;
        k->cfg.choice = su_calloc((size_t)cfg->n + 1, sizeof *k->cfg.choice);
        memcpy(k->cfg.choice, cfg->choice, (size_t)cfg->n * sizeof *cfg->choice);
    } else {
        sch_config_default(&k->space, &k->cfg);
    }
    return true;
}

bool sch_build(const ir_expr *fn, const sch_build_opts *o, sch_kernel *k)
{
    memset(k, 0, sizeof *k);
    if (!create(fn, o, k) || !apply(fn, o, k))
        return false;
    if (o->space_only)
        return true;
    sch_lower_opts lo = {o->param_const, true, false};
    k->l = sch_lower(k->s, &lo);
    return k->l ? true : stop(k, SCH_BUILD_LOWER, k->s->err, schedule_why(k->s));
}

void sch_kernel_free(sch_kernel *k)
{
    free(k->why);
    sch_free(k->s);
    sch_space_free(&k->space);
    sch_config_free(&k->cfg);
    su_diags_free(&k->diags);
    memset(k, 0, sizeof *k);
}
