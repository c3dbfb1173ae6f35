/* api.c — the public rt_ API over the internal parts. It owns no logic of its
 * own: it turns internal diagnostics into printed messages and internal
 * modules into the opaque rt_module. */
#include <errno.h>
#include <string.h>

#include "api/api.h"
#include "ir/transform/transform.h"
#include "onnx/onnx.h"
#include "targets/targets.h"
#include "tuner/tuner.h"

#include <jansson.h>

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

/* Reports d, then wraps a typed module (NULL stays NULL). */
static rt_module *wrap(ir_module *m, su_diags *d, FILE *errs)
{
    report(d, errs);
    if (!m)
        return NULL;
    rt_module *r = su_calloc(1, sizeof *r);
    r->ir = m;
    return r;
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
    return wrap(m, &d, errs);
}

/* True when path names an ONNX model (by its extension). */
static bool is_onnx(const char *path)
{
    size_t n = strlen(path);
    return n >= 5 && !strcmp(path + n - 5, ".onnx");
}

/* An ONNX model: imported into a typed module, its weights as constants. */
static rt_module *load_onnx(const char *path, FILE *errs)
{
    su_diags d = {0};
    return wrap(ox_import_file(path, &d), &d, errs);
}

rt_module *rt_onnx_import(const char *path, const char *params_out, FILE *errs)
{
    if (!params_out)
        return load_onnx(path, errs);
    su_diags d = {0};
    ox_options o = {.weights_as_params = true};
    rt_module *r = wrap(ox_import_file_opts(path, &o, &d), &d, errs);
    su_buf err = {0};
    if (r && !ir_npz_save(params_out, o.nweights, o.weight_names, (const ir_tensor *const *)o.weights, false, &err)) {
        if (errs)
            fprintf(errs, "%s: error: %s\n", params_out, su_buf_str(&err));
        rt_module_free(r);
        r = NULL;
    }
    su_buf_free(&err);
    free(o.weight_names);
    free(o.weights);
    return r;
}

rt_module *rt_module_load(const char *path, FILE *errs)
{
    if (is_onnx(path))
        return load_onnx(path, errs);
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
    for (int k = 0; k < TR_LAYOUT_VARIANTS; k++)
        free(m->variants[k]);
    tun_tasks_free(&m->tasks);
    free(m->pub);
    free(m->tasks_target);
    free(m);
}

/* The graphs of alter-layout's variants (every conv in its k-th candidate
 * block), kept in m->variants for rt_module_tasks: the pipeline from
 * alter-layout on, once each, on the definitions as they are now (the
 * passes before it run once, by the caller), which the nodes' immutability
 * keeps valid; the definitions are put back after. False after an error in d. */
static bool block_variants(rt_module *m, const tr_options *to, su_diags *d)
{
    ir_module *ir = m->ir;
    size_t n = ir->defs.len;
    ir_global_def *orig = su_malloc(sizeof *orig * (n + 1));
    memcpy(orig, ir->defs.data, sizeof *orig * n);
    tr_options vo = *to;
    vo.print_after = NULL;
    vo.print_after_all = false;
    vo.check = NULL;
    vo.layout_cost = NULL;  /* a forced variant does not search */
    vo.from_pass = "alter-layout";
    bool okk = true;
    for (int k = 0; okk && k < TR_LAYOUT_VARIANTS; k++) {
        vo.layout_force = k + 1;
        okk = tr_optimize(ir, &vo, d);
        if (okk) {
            free(m->variants[k]);
            m->variants[k] = su_malloc(sizeof *orig * (ir->defs.len + 1));
            memcpy(m->variants[k], ir->defs.data, sizeof *orig * ir->defs.len);
            m->nvariant_defs[k] = ir->defs.len;
        }
        /* the pipeline keeps or drops definitions, never moves them: the array holds n */
        memcpy(ir->defs.data, orig, sizeof *orig * n);
        ir->defs.len = n;
    }
    free(orig);
    return okk;
}

/* The vector lanes the automatic Winograd rule plans for: target's (NULL:
 * "cpu"); 0 for a target that is not a cpu (the rule was measured on CPUs)
 * or does not parse (said on err, and the graph keeps its direct convs). */
static int winograd_lanes(const char *target, FILE *err)
{
    tg_target t;
    const char *why = NULL;
    if (target && !strncmp(target, "opencl", 6))
        return 0; /* not parsed: an opencl target queries its device */
    if (!target)
        target = "cpu";
    if (!tg_target_parse(target, &t, &why)) {
        fprintf(err, "warning: the Winograd rule: %s: %s; the convs stay direct\n", target, why);
        return 0;
    }
    return t.kind == TG_CPU ? t.hw.lanes : 0;
}

int rt_module_optimize(rt_module *m, const rt_opt_options *o, FILE *errs)
{
    rt_opt_options none = {0};
    if (!o)
        o = &none;
    FILE *err = errs ? errs : stderr;
    if (o->layout_auto && o->layout_block <= 0) {
        fprintf(err, "error: --layout-auto needs --layout-block N (N: the vector lanes the blocks are multiples of)\n");
        return -1;
    }
    if ((o->layout_tasks || o->layout_db) && !o->layout_auto) {
        fprintf(err, "error: %s needs --layout-auto\n", o->layout_db ? "the layout DP's database" : "the tasks of every block");
        return -1;
    }
    if (o->winograd_tile && o->winograd_tile != 2 && o->winograd_tile != 4) {
        fprintf(err, "error: --winograd-tile %d: the Winograd tile is 2 or 4\n", o->winograd_tile);
        return -1;
    }
    tr_options to = {.level = o->level, .print_after = o->print_after, .print_after_all = o->print_after_all != 0,
                     .print_to = err, .max_fuse_depth = o->max_fuse_depth,
                     .layout_block = o->layout_block, .layout_auto = o->layout_auto != 0,
                     .winograd = o->winograd == RT_WINOGRAD_AUTO ? TR_WINOGRAD_AUTO
                                 : o->winograd || o->winograd_tile ? TR_WINOGRAD_ALL : 0,
                     .winograd_tile = o->winograd_tile};
    /* the automatic choice yields to blocked layouts asked for: a Winograd
       conv stays NCHW, so its blocked neighbours would convert around it */
    if (to.winograd == TR_WINOGRAD_AUTO &&
        (o->layout_block > 0 || !(to.winograd_lanes = winograd_lanes(o->winograd_target, err))))
        to.winograd = 0;
    api_layout_costs *costs = NULL;
    if (o->layout_db && o->level >= 3 && !(costs = api_layout_costs_load(o->layout_db, o->layout_target, err)))
        return -1;
    if (costs) {
        to.layout_cost = api_layout_cost;
        to.layout_cost_ctx = costs;
    }
    tr_checker *checker = o->check ? tr_checker_new(o->check_seed, 0) : NULL;
    if (checker) {
        to.check = tr_check_interp;
        to.check_ctx = checker;
    }
    su_diags d = {0};
    /* the passes and everything after them take first-order tensor code:
       interpreter-only constructs are refused by name, unused ADT code dropped */
    bool okk = ir_module_first_order(m->ir, &d);
    if (okk && o->layout_tasks && o->level >= 3) {
        /* the passes before alter-layout once, then the rest per variant and for the DP's choice */
        tr_options pre = to;
        pre.until_pass = "alter-layout";
        okk = tr_optimize(m->ir, &pre, &d) && block_variants(m, &to, &d);
        to.from_pass = "alter-layout";
    }
    okk = okk && tr_optimize(m->ir, &to, &d);
    tr_checker_free(checker);
    api_layout_costs_free(costs);
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

void rt_module_counts(const rt_module *m, long *ops, long *primitives)
{
    ir_global_def *g = ir_module_find(m->ir, "main");
    *ops = *primitives = -1;
    if (!g)
        return;
    size_t o, p;
    tr_count(g->func->u.func.body, &o, &p);
    *ops = (long)o;
    *primitives = (long)p;
}

/* The tasks of m for machine device (NULL: the cpu's) into m->tasks and m->pub. */
static void extract_tasks(rt_module *m, const sch_hw *device)
{
    tun_tasks_free(&m->tasks);
    free(m->pub);
    tun_extract_tasks_on(m->ir, device, &m->tasks);
    for (int k = 0; k < TR_LAYOUT_VARIANTS; k++)
        if (m->variants[k])
            tun_extract_tasks_add_on(m->variants[k], m->nvariant_defs[k], device, &m->tasks);
    m->pub = su_calloc(m->tasks.len + 1, sizeof *m->pub);
    for (size_t i = 0; i < m->tasks.len; i++) {
        const tun_task *t = &m->tasks.items[i];
        m->pub[i] = (rt_task){t->key, t->hash, t->template_name, t->anchor, t->shapes, (double)t->flops * 1e-9,
                              t->count};
    }
}

void rt_module_tasks(rt_module *m, const rt_task **tasks, size_t *n)
{
    extract_tasks(m, NULL);
    free(m->tasks_target);
    m->tasks_target = NULL;
    *tasks = m->pub;
    *n = m->tasks.len;
}

bool api_module_tasks(rt_module *m, const char *target, FILE *errs)
{
    if (target && !strcmp(target, "cpu"))
        target = NULL;
    if (m->pub && (target ? m->tasks_target && !strcmp(m->tasks_target, target) : !m->tasks_target))
        return true;
    tg_target tg;
    const char *why;
    if (target && !tg_target_parse(target, &tg, &why)) {
        if (errs)
            fprintf(errs, "relay-tune: error: target '%s': %s\n", target, why);
        return false;
    }
    /* a cpu target's functions without an anchor take the default
       template, which has no knobs: only a device adds tasks */
    extract_tasks(m, target && tg.kind == TG_OPENCL ? &tg.hw : NULL);
    free(m->tasks_target);
    m->tasks_target = target ? su_strdup(target) : NULL;
    return true;
}

int rt_module_tasks_on(rt_module *m, const char *target, const rt_task **tasks, size_t *n, FILE *errs)
{
    if (!api_module_tasks(m, target, errs))
        return -1;
    *tasks = m->pub;
    *n = m->tasks.len;
    return 0;
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

int rt_module_bind_params(rt_module *m, const char *npz_path, FILE *errs)
{
    su_buf err = {0};
    ir_npz *z = ir_npz_load(npz_path, &err);
    if (!z) {
        if (errs)
            fprintf(errs, "error: %s\n", su_buf_str(&err));
        su_buf_free(&err);
        return -1;
    }
    ir_global_def *g = ir_module_find(m->ir, "main");
    const char **names = su_calloc((size_t)z->n + 1, sizeof *names);
    const ir_tensor **vals = su_calloc((size_t)z->n + 1, sizeof *vals);
    size_t n = 0;
    for (int i = 0; i < z->n; i++) {
        const ir_tensor *t = z->entries[i].tensor;
        bool is_param = false;
        for (int k = 0; g && k < g->func->u.func.nparams; k++)
            is_param |= strcmp(g->func->u.func.params[k]->u.var.name, z->entries[i].name) == 0;
        if (!is_param) {
            if (errs)
                fprintf(errs, "%s: note: '%s' names no parameter of @main; ignored\n", npz_path, z->entries[i].name);
            continue;
        }
        /* constants live in the module's arena, like every other node */
        ir_tensor *c = ir_tensor_new(&m->ir->arena, t->dtype, t->ndim, t->shape);
        memcpy(c->data, t->data, (size_t)(ir_tensor_numel(t) * ir_dtype_bytes(t->dtype)));
        names[n] = z->entries[i].name;
        vals[n++] = c;
    }
    su_diags d = {0};
    bool okk = tr_bind_params(m->ir, names, vals, n, &d);
    report(&d, errs);
    free(names);
    free(vals);
    ir_npz_free(z);
    su_buf_free(&err);
    return okk ? (int)n : -1;
}

int rt_module_bind_random_params(rt_module *m, unsigned long long seed, int keep, FILE *errs)
{
    ir_global_def *g = ir_module_find(m->ir, "main");
    if (!g) {
        if (errs)
            fprintf(errs, "error: the module has no @main\n");
        return -1;
    }
    const ir_expr *f = g->func;
    int n = f->u.func.nparams;
    const char **names = su_calloc((size_t)n + 1, sizeof *names);
    const ir_tensor **vals = su_calloc((size_t)n + 1, sizeof *vals);
    size_t nb = 0;
    for (int i = keep < 0 ? 0 : keep; i < n; i++) {
        const ir_expr *v = f->u.func.params[i];
        const ir_type *t = v->u.var.annot;
        if (!t || t->kind != IR_TY_TENSOR)
            continue;
        ir_tensor *c = ir_tensor_new(&m->ir->arena, t->dtype, t->ndim, t->shape);
        ir_random_param(f, i, seed, c);
        names[nb] = v->u.var.name;
        vals[nb++] = c;
    }
    su_diags d = {0};
    bool okk = tr_bind_params(m->ir, names, vals, nb, &d);
    report(&d, errs);
    free(names);
    free(vals);
    return okk ? (int)nb : -1;
}
