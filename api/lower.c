/* lower.c — rt_task_lower: one task of an optimized module, scheduled with
 * its template and a config (checked against the template's space), as
 * LoopIR, C, the schedule's trace, the config space or the config. */
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
    if (!m->pub) {
        const rt_task *t;
        size_t n;
        rt_module_tasks(m, &t, &n);
    }
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
    su_diags d = {0};
    sch_schedule *s = sch_create(task->func, &d);
    report(&d, errs);
    if (!s)
        return NULL;
    sch_space sp = {0};
    sch_config cfg = {0};
    char *out = NULL, *bad = NULL;
    sch_err e = sch_apply_template(s, task->template_name, &tg.hw, NULL, &sp);
    if (!e && config_json) {
        /* the space is known now: check the config against it, then apply it
         * to a fresh schedule */
        if (!sch_config_parse(&sp, config_json, &cfg, &bad)) {
            if (errs)
                fprintf(errs, "relay-tune: error: config: %s\n", bad);
            free(bad);
            goto done;
        }
        sch_free(s);
        s = sch_create(task->func, &d);
        e = sch_apply_template(s, task->template_name, &tg.hw, &cfg, NULL);
    } else if (!e) {
        sch_config_default(&sp, &cfg);
    }
    if (e) {
        if (errs)
            fprintf(errs, "relay-tune: error: schedule: %s: %s\n", sch_err_name(e), s->err_msg ? s->err_msg : "");
        goto done;
    }
    bool *consts = su_calloc((size_t)s->nparams + 1, sizeof *consts);
    bool weights = !strcmp(task->template_name, "dense") || !strncmp(task->template_name, "conv2d", 6) ||
                   strstr(task->template_name, "conv2d") != NULL;
    for (int i = 0; i < s->nparams; i++)
        consts[i] = weights;
    sch_lower_opts lo = {consts, true, false};
    sch_lowered *l = sch_lower(s, &lo);
    free(consts);
    if (!l) {
        if (errs)
            fprintf(errs, "relay-tune: error: lower: %s\n", s->err_msg ? s->err_msg : "");
        goto done;
    }
    su_buf b = {0};
    switch (what) {
    case RT_LOWER_C: {
        tg_c_prelude(&b);
        char name[40];
        for (int i = 0; i < l->nprologues; i++) {
            snprintf(name, sizeof name, "pack_%s_%d", task->hash, l->prologues[i].param);
            tg_c_func(&b, l->prologues[i].fn, name);
        }
        snprintf(name, sizeof name, "kernel_%s", task->hash);
        tg_c_func(&b, l->kernel, name);
        break;
    }
    case RT_LOWER_TRACE: sch_trace_print(&b, s); break;
    case RT_LOWER_SPACE: sch_space_print(&b, &sp); break;
    case RT_LOWER_CONFIG: {
        char *j = sch_config_json(&sp, &cfg);
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
    sch_config_free(&cfg);
    sch_space_free(&sp);
    sch_free(s);
    return out;
}
