/* api.c — the public rt_ API over the internal parts. It owns no logic of its
 * own: it turns internal diagnostics into printed messages and internal
 * modules into the opaque rt_module. */
#include <errno.h>
#include <string.h>

#include "config.h"
#include "include/relaytune.h"
#include "ir/ir.h"
#include "ir/transform/transform.h"
#include "schedule/schedule.h"
#include "targets/targets.h"
#include "tuner/tuner.h"

#include <jansson.h>

struct rt_module {
    ir_module *ir;
    tun_tasks tasks;        /* filled by rt_module_tasks */
    rt_task *pub;           /* the same, as the public struct */
};

const char *rt_version(void)
{
    return PACKAGE_VERSION;
}

static void report(su_diags *d, FILE *errs)
{
    if (errs)
        su_diags_print(errs, d);
    su_diags_free(d);
}

rt_module *rt_module_parse(const char *name, const char *text, size_t len, FILE *errs)
{
    su_diags d = {0};
    ir_module *m = ir_parse(name, text, len, &d);
    if (m && !ir_infer_types(m, &d)) {
        report(&d, errs);
        ir_module_free(m);
        return NULL;
    }
    report(&d, errs);
    if (!m)
        return NULL;
    rt_module *r = su_calloc(1, sizeof *r);
    r->ir = m;
    return r;
}

rt_module *rt_module_load(const char *path, FILE *errs)
{
    size_t len;
    char *text = su_read_file(path, &len);
    if (!text) {
        if (errs)
            fprintf(errs, "%s: error: cannot read: %s\n", path, strerror(errno));
        return NULL;
    }
    rt_module *m = rt_module_parse(path, text, len, errs);
    free(text);
    return m;
}

char *rt_module_to_text(const rt_module *m, int flags)
{
    su_buf b = {0};
    ir_print_opts o = {(flags & RT_PRINT_TYPES) != 0};
    ir_print_module(&b, m->ir, &o);
    return su_buf_take(&b);
}

size_t rt_module_num_functions(const rt_module *m)
{
    return m->ir->defs.len;
}

void rt_module_free(rt_module *m)
{
    if (!m)
        return;
    ir_module_free(m->ir);
    tun_tasks_free(&m->tasks);
    free(m->pub);
    free(m);
}

int rt_module_optimize(rt_module *m, const rt_opt_options *o, FILE *errs)
{
    rt_opt_options none = {0};
    if (!o)
        o = &none;
    tr_options to = {.level = o->level, .print_after = o->print_after, .print_after_all = o->print_after_all != 0,
                     .print_to = errs ? errs : stderr, .max_fuse_depth = o->max_fuse_depth};
    su_diags d = {0};
    bool okk = tr_optimize(m->ir, &to, &d);
    report(&d, errs);
    return okk ? 0 : -1;
}

void rt_list_passes(FILE *out)
{
    size_t n;
    const tr_pass *p = tr_passes(&n);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "  %-20s -O%d  %s\n", p[i].name, p[i].level, p[i].help);
}

/* Counts primitive functions called from e (each call node once). */
static long count_primitive_calls(const ir_expr *e, su_map *seen)
{
    char key[24];
    snprintf(key, sizeof key, "%u", e->id);
    if (e->kind != IR_CALL && e->kind != IR_TUPLE && e->kind != IR_PROJ && e->kind != IR_LET && e->kind != IR_IF)
        return 0;
    if (su_map_get(seen, key))
        return 0;
    su_map_put(seen, su_strdup(key), (void *)1);
    long n = 0;
    switch (e->kind) {
    case IR_CALL:
        n = tr_is_primitive(e->u.call.fn);
        for (int i = 0; i < e->u.call.nargs; i++)
            n += count_primitive_calls(e->u.call.args[i], seen);
        return n;
    case IR_TUPLE:
        for (int i = 0; i < e->u.tuple.n; i++)
            n += count_primitive_calls(e->u.tuple.fields[i], seen);
        return n;
    case IR_PROJ: return count_primitive_calls(e->u.proj.tuple, seen);
    case IR_LET: return count_primitive_calls(e->u.let.value, seen) + count_primitive_calls(e->u.let.body, seen);
    case IR_IF:
        return count_primitive_calls(e->u.if_.cond, seen) + count_primitive_calls(e->u.if_.then_branch, seen) +
               count_primitive_calls(e->u.if_.else_branch, seen);
    default: return 0;
    }
}

void rt_module_counts(const rt_module *m, long *ops, long *primitives)
{
    ir_global_def *g = ir_module_find(m->ir, "main");
    *ops = *primitives = -1;
    if (!g)
        return;
    *ops = (long)tr_count_calls(g->func->u.func.body);
    su_map seen = {0};
    *primitives = count_primitive_calls(g->func->u.func.body, &seen);
    for (size_t i = 0; i < seen.cap; i++)
        free((void *)seen.slots[i].key);
    su_map_free(&seen);
}

void rt_module_tasks(rt_module *m, const rt_task **tasks, size_t *n)
{
    tun_tasks_free(&m->tasks);
    free(m->pub);
    tun_extract_tasks(m->ir, &m->tasks);
    m->pub = su_calloc(m->tasks.len + 1, sizeof *m->pub);
    for (size_t i = 0; i < m->tasks.len; i++) {
        const tun_task *t = &m->tasks.items[i];
        m->pub[i] = (rt_task){t->key, t->hash, t->template_name, t->anchor, t->shapes, (double)t->flops * 1e-9,
                              t->count};
    }
    *tasks = m->pub;
    *n = m->tasks.len;
}

char *rt_tasks_json(const rt_task *tasks, size_t n)
{
    json_t *arr = json_array();
    double total = 0;
    for (size_t i = 0; i < n; i++) {
        const rt_task *t = &tasks[i];
        json_array_append_new(arr, json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:f, s:i}", "index", (int)i, "hash",
                                             t->hash, "key", t->key, "template", t->template_name, "anchor", t->anchor,
                                             "shapes", t->shapes, "gflop", t->gflop, "count", t->count));
        total += t->gflop * t->count;
    }
    json_t *doc = json_pack("{s:o, s:f}", "tasks", arr, "total_gflop", total);
    char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    return s;
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
