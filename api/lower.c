/* lower.c — rt_task_lower: one task of an optimized module, built with its
 * template and a config (checked against the template's space) by
 * sch_build, as LoopIR, C (targets/kernel.c's kernel and prologues), the
 * schedule's trace, the config space or the config. */
#include <string.h>

#include "api/api.h"
#include "schedule/schedule.h"
#include "targets/targets.h"

static void report(su_diags *d, FILE *errs)
{
    if (errs)
        su_diags_print(errs, d);
    su_diags_free(d);
}

char *rt_task_lower(rt_module *m, size_t index, const char *config_json, const char *target, int what, FILE *errs)
{
    if (!api_module_tasks(m, target, errs))
        return NULL;
    if (index >= m->tasks.len) {
        if (errs)
            fprintf(errs, "relay-tune: error: no task %zu (the model has %zu)\n", index, m->tasks.len);
        return NULL;
    }
    tg_target tg;
    const char *why;
    if (!tg_target_parse(target ? target : "cpu", &tg, &why)) {
        if (errs)
            fprintf(errs, "relay-tune: error: target '%s': %s\n", target, why);
        return NULL;
    }
    const tun_task *task = &m->tasks.items[index];
    /* a dense or conv task: every parameter taken as a weight, so that the
     * packing a compiled model hoists shows as a prologue */
    bool *consts = su_calloc((size_t)task->nparams + 1, sizeof *consts);
    bool weights = !strcmp(task->template_name, "dense") || !strncmp(task->template_name, "conv2d", 6) ||
                   strstr(task->template_name, "conv2d") != NULL;
    for (int i = 0; i < task->nparams; i++)
        consts[i] = weights;
    sch_build_opts bo = {.template_name = task->template_name, .hw = &tg.hw, .cfg_json = config_json,
                         .param_const = consts};
    sch_kernel k;
    bool built = sch_build(task->func, &bo, &k);
    free(consts);
    report(&k.diags, errs);
    char *out = NULL;
    if (!built) {
        /* (a function that cannot be scheduled said why in its diagnostics) */
        if (errs && k.failed == SCH_BUILD_TEMPLATE)
            fprintf(errs, "relay-tune: error: schedule: %s: %s\n", sch_err_name(k.err), k.why);
        else if (errs && k.failed != SCH_BUILD_CREATE)
            fprintf(errs, "relay-tune: error: %s: %s\n", k.failed == SCH_BUILD_CONFIG ? "config" : "lower", k.why);
        goto done;
    }
    const sch_lowered *l = k.l;
    su_buf b = {0};
    switch (what) {
    case RT_LOWER_C: {
        char name[48];
        snprintf(name, sizeof name, "kernel_%s", task->hash);
        if (tg.kind == TG_OPENCL) {
            /* the kernel and its packing prologues as OpenCL C kernels */
            tg_cl_launch launch;
            su_buf_puts(&b, tg_lang_cl_group.prelude);
            for (int i = 0; i < l->nprologues; i++) {
                char pn[64];
                snprintf(pn, sizeof pn, "%s_p%d", name, i);
                tg_cl_func(&b, l->prologues[i].fn, pn, &tg.cl, &launch);
            }
            tg_cl_func(&b, l->kernel, name, &tg.cl, &launch);
            break;
        }
        tg_c_prelude(&b);
        tg_kernel_c(&b, l, name, TG_KERNEL_BODY | TG_KERNEL_PROLOGUES);
        break;
    }
    case RT_LOWER_TRACE: sch_trace_print(&b, k.s); break;
    case RT_LOWER_SPACE: sch_space_print(&b, &k.space); break;
    case RT_LOWER_CONFIG: {
        char *j = sch_config_json(&k.space, &k.cfg);
        su_buf_printf(&b, "%s\n", j);
        free(j);
        break;
    }
    default:
        for (int i = 0; i < l->nprologues; i++)
            sch_print_func(&b, l->prologues[i].fn);
        sch_print_func(&b, l->kernel);
    }
    out = su_buf_take(&b);
done:
    sch_kernel_free(&k);
    return out;
}
