/* transfer.c — what the database's records of other workloads teach a task
 * (transfer learning): before a task's first measurement, a tuner that
 * transfers (tun_tuner_ops.transfer) learns from the records of the same
 * template on other shapes, and of the same workload on other targets of
 * the same ISA.
 *
 * A record's config is an index into the space of ITS workload, so the
 * tuner needs that space too. Records therefore carry their primitive
 * function: the workload's args (a JSON object) hold "func", the function
 * as Relay text (a module whose @main is the function, printed with the
 * project's printer, which the parser reads back). Here each distinct
 * workload met is parsed once, its task rebuilt (its key must come out the
 * same, or the text is not trusted) and its space made for this target's
 * hardware; the pool keeps them all for the run. Records of workloads
 * without the function (databases older than this field), with a function
 * that does not rebuild, with a config that no longer fits, or whose space
 * has another form than the task's (sch_space_same_form) are skipped and
 * counted. */
#include <jansson.h>
#include <string.h>

#include "tuner/tuner.h"

/* A record's args are at most 64 KiB (db/check.c); leave room for the rest. */
#define MAX_FUNC_TEXT 60000

char *tun_task_text(const tun_task *t)
{
    /* the function as @main of a module of its own (the module borrows it) */
    ir_module *m = ir_module_new();
    su_span nowhere = {0};
    ir_module_add(m, "main", ir_global(m, nowhere, "main"), t->func);
    su_buf text = {0};
    ir_print_module(&text, m, NULL);
    ir_module_free(m);
    return su_buf_take(&text);
}

const char *tun_workload_args(const tun_task *t, su_arena *a)
{
    json_t *o = json_object();
    json_object_set_new(o, "anchor", json_string(t->anchor));
    json_t *inputs = json_array();
    const ir_expr *f = t->func;
    for (int i = 0; i < f->u.func.nparams; i++) {
        const ir_type *ty = f->u.func.params[i]->type ? f->u.func.params[i]->type : f->u.func.params[i]->u.var.annot;
        json_t *dims = json_array();
        for (int k = 0; ty && ty->kind == IR_TY_TENSOR && k < ty->ndim; k++)
            json_array_append_new(dims, json_integer(ty->shape[k]));
        json_array_append_new(inputs, dims);
    }
    json_object_set_new(o, "inputs", inputs);
    char *text = tun_task_text(t);
    if (strlen(text) <= MAX_FUNC_TEXT)
        json_object_set_new(o, "func", json_string(text));
    free(text);
    char *s = json_dumps(o, JSON_COMPACT);
    const char *r = su_arena_strdup(a, s);
    free(s);
    json_decref(o);
    return r;
}

ir_module *tun_task_from_text(const char *text, const char *key, int64_t flops, tun_tasks *out)
{
    memset(out, 0, sizeof *out);
    su_diags d = {0};
    ir_module *m = ir_parse("stored workload", text, strlen(text), &d);
    if (m && !ir_infer_types(m, &d)) {
        ir_module_free(m);
        m = NULL;
    }
    su_diags_free(&d);
    ir_global_def *main = m ? ir_module_find(m, "main") : NULL;
    const char *tmpl = NULL;
    const ir_op_def *anchor = NULL;
    char *k = main ? sch_workload_key(main->func, &tmpl, &anchor) : NULL;
    if (!tmpl || strcmp(k, key) != 0) {
        /* not the workload it claims to be: the text is not trusted */
        free(k);
        ir_module_free(m);
        return NULL;
    }
    tun_task *t = su_calloc(1, sizeof *t);
    t->key = k;
    snprintf(t->hash, sizeof t->hash, "%016llx", (unsigned long long)su_hash_str(t->key));
    t->template_name = su_strdup(tmpl);
    t->anchor = su_strdup(anchor->name);
    t->shapes = su_strdup("");
    t->flops = flops;
    t->count = 1;
    t->func = main->func;
    t->nparams = sch_param_count(main->func);
    t->param_const = su_calloc((size_t)t->nparams + 1, sizeof *t->param_const);
    *out = (tun_tasks){t, 1, 1};
    return m;
}

/* One other workload: its task and space on this target (state > 0), or why
 * it has none. */
typedef struct other {
    char *key;
    int state;              /* 1 usable, -1 no stored function, -2 a function that does not rebuild */
    ir_module *m;           /* the parsed function (the task's func lives in it) */
    tun_tasks task;         /* one task */
    tun_space space;
} other;

struct tun_transfer_pool {
    const sch_hw *hw;
    su_map by_key;          /* workload key -> index + 1 */
    other **items;
    size_t len, cap;
};

tun_transfer_pool *tun_transfer_pool_new(const sch_hw *hw)
{
    tun_transfer_pool *p = su_calloc(1, sizeof *p);
    p->hw = hw;
    return p;
}

void tun_transfer_pool_free(tun_transfer_pool *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->len; i++) {
        other *o = p->items[i];
        if (o->state > 0)
            tun_space_free(&o->space);
        tun_tasks_free(&o->task);
        ir_module_free(o->m);
        free(o->key);
        free(o);
    }
    free(p->items);
    su_map_free(&p->by_key);
    free(p);
}

/* Rebuilds a workload's task and space from its record (once per key). */
static other *find_other(tun_transfer_pool *p, const db_record *r)
{
    uintptr_t k = (uintptr_t)su_map_get(&p->by_key, r->workload.key);
    if (k)
        return p->items[k - 1];
    other *o = su_calloc(1, sizeof *o);
    o->key = su_strdup(r->workload.key);
    json_t *args = json_loads(r->workload.args ? r->workload.args : "{}", 0, NULL);
    const char *text = json_string_value(json_object_get(args, "func"));
    o->state = text ? -2 : -1;
    if (text)
        o->m = tun_task_from_text(text, r->workload.key, (int64_t)r->workload.flops, &o->task);
    json_decref(args);
    if (o->m) {
        su_buf why = {0};
        if (tun_space_init(&o->space, &o->task.items[0], p->hw, &why))
            o->state = 1;
        su_buf_free(&why);
    }
    if (p->len == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 16;
        p->items = su_realloc(p->items, p->cap * sizeof *p->items);
    }
    p->items[p->len++] = o;
    su_map_put(&p->by_key, o->key, (void *)(uintptr_t)p->len);
    return o;
}

bool tun_transfer_gather(tun_transfer_pool *p, db *d, const tun_space *space, const db_target *target,
                         size_t limit, tun_transfer_rec **out, size_t *n, tun_transfer_stats *st, su_buf *err)
{
    const tun_task *task = space->task;
    *out = NULL;
    *n = 0;
    memset(st, 0, sizeof *st);
    su_arena a;
    su_arena_init(&a);
    db_record *recs;
    size_t nr;
    if (!db_similar_records(d, task->template_name, task->key, target->name, target->isa, limit, &a, &recs, &nr)) {
        su_buf_puts(err, db_errmsg(d));
        su_arena_free(&a);
        return false;
    }
    tun_transfer_rec *v = su_calloc(nr + 1, sizeof *v);
    for (size_t i = 0; i < nr; i++) {
        other *o = find_other(p, &recs[i]);
        if (o->state < 0) {
            st->no_func += o->state == -1;
            st->bad_func += o->state == -2;
            continue;
        }
        if (!sch_space_same_form(&o->space.sp, &space->sp)) {
            /* another loop nest under the same template name: its ranking
             * misled the 1x1 convs (docs/tuner-convergence.md) */
            st->other_form++;
            continue;
        }
        sch_config c;
        su_buf why = {0};
        tun_cfg_status cs = tun_config_from_record(&o->space, recs[i].config, &c, &why);
        su_buf_free(&why);
        if (cs != TUN_CFG_OK) {
            st->stale += cs == TUN_CFG_STALE;
            st->invalid += cs == TUN_CFG_INVALID;
            continue;
        }
        tun_transfer_rec *t = &v[(*n)++];
        t->space = &o->space;
        t->index = tun_config_encode(&o->space, &c);
        sch_config_free(&c);
        t->gflops = !recs[i].error && recs[i].mean_cost > 0 ? recs[i].workload.flops / recs[i].mean_cost * 1e-9 : 0;
    }
    st->used = (int64_t)*n;
    *out = v;
    su_arena_free(&a);
    return true;
}
