/* layout_cost.c — the kernel times that alter-layout's graph-level choice
 * (`--layout-auto`, ir/transform/layout_dp.c) reads from a tuning database:
 * for a conv and an (input block, output block) pair, the best record's mean
 * cost of the conv2d_nchwc workload that runs that conv in those blocks.
 *
 * The DP asks about the NCHW conv before the pass rewrites it, and a record
 * is of a fused function (the blocked conv and its epilogue), so the two meet
 * on a signature of the anchor alone: the conv's NCHW data and OIHW weight
 * shapes, its strides, padding and dilation, its dtype and the two blocks.
 * Every best record of a conv2d_nchwc workload for the target is read once,
 * its function rebuilt from the text the record stores (tuner/transfer.c's
 * tun_task_from_text: a text whose key does not come out the same is not
 * trusted), and its anchor's signature keeps the least cost met: records of
 * one conv with other epilogues (a residual add or not) differ by the
 * epilogue's elementwise work, the same for every block. A pair without a
 * record answers -1, and the DP then uses its analytic model for it. */
#include <jansson.h>
#include <string.h>

#include "api/api.h"

struct api_layout_costs {
    su_arena a;             /* the signatures (the map's keys) */
    su_map by_sig;          /* signature -> index + 1 into cost */
    SU_VEC(double) cost;    /* seconds */
    size_t records;         /* best records read, and of those */
    size_t used;            /* the ones whose function rebuilt */
};

/* The signature of a conv of NCHW data d[4] and OIHW weight w[4] in blocks
 * (ib, ob), with conv's strides, padding, dilation and result dtype. */
static const char *signature(su_buf *b, const int64_t *d, const int64_t *w, const ir_expr *conv, int64_t ib,
                             int64_t ob)
{
    su_buf_printf(b, "%lldx%lldx%lldx%lld|%lldx%lldx%lldx%lld|", (long long)d[0], (long long)d[1], (long long)d[2],
                  (long long)d[3], (long long)w[0], (long long)w[1], (long long)w[2], (long long)w[3]);
    static const char *const attrs[] = {"strides", "padding", "dilation"};
    for (size_t i = 0; i < sizeof attrs / sizeof *attrs; i++) {
        ir_attr_print(b, ir_call_attr(conv, attrs[i]));
        su_buf_putc(b, '|');
    }
    su_buf_printf(b, "%s|%lld|%lld", ir_dtype_name(conv->type->dtype), (long long)ib, (long long)ob);
    return su_buf_str(b);
}

/* The first nn.contrib_conv2d_NCHWc call of a stored function's body. */
static void find_anchor(ir_visitor *v, const ir_expr *e)
{
    const ir_expr **found = v->ctx;
    if (!*found && ir_call_op(e) == ir_op_get(IR_OP_CONV2D_NCHWC))
        *found = e;
}

static void add_record(api_layout_costs *c, const db_record *r)
{
    json_t *args = json_loads(r->workload.args ? r->workload.args : "{}", 0, NULL);
    const char *text = json_string_value(json_object_get(args, "func"));
    tun_tasks one;
    ir_module *m = text ? tun_task_from_text(text, r->workload.key, (int64_t)r->workload.flops, &one) : NULL;
    json_decref(args);
    if (!m)
        return;
    const ir_expr *conv = NULL;
    ir_visitor v;
    ir_visitor_init(&v, NULL, find_anchor, &conv);
    ir_visit(&v, one.items[0].func);
    ir_visitor_free(&v);
    const ir_type *dt = conv ? conv->u.call.args[0]->type : NULL, *wt = conv ? conv->u.call.args[1]->type : NULL;
    if (dt && wt && dt->ndim == 5 && wt->ndim == 6) {
        int64_t d[4] = {dt->shape[0], dt->shape[1] * dt->shape[4], dt->shape[2], dt->shape[3]};
        int64_t w[4] = {wt->shape[0] * wt->shape[5], wt->shape[1] * wt->shape[4], wt->shape[2], wt->shape[3]};
        su_buf b = {0};
        const char *sig = signature(&b, d, w, conv, dt->shape[4], wt->shape[5]);
        uintptr_t i = (uintptr_t)su_map_get(&c->by_sig, sig);
        if (!i) {
            su_vec_push(&c->cost, r->mean_cost);
            su_map_put(&c->by_sig, su_arena_strdup(&c->a, sig), (void *)(uintptr_t)c->cost.len);
        } else if (r->mean_cost < c->cost.data[i - 1]) {
            c->cost.data[i - 1] = r->mean_cost;
        }
        su_buf_free(&b);
        c->used++;
    }
    tun_tasks_free(&one);
    ir_module_free(m);
}

api_layout_costs *api_layout_costs_load(const char *path, const char *target, FILE *errs)
{
    su_buf err = {0};
    db_open_opts dopts = {DB_OPEN_NO_CREATE | DB_OPEN_READONLY, 0, 0};
    db *d = db_open(path, &dopts, &err);
    if (!d) {
        fprintf(errs, "relay-tune: error: %s\n", su_buf_str(&err));
        su_buf_free(&err);
        return NULL;
    }
    su_buf_free(&err);
    su_arena a;
    su_arena_init(&a);
    db_best_row *rows = NULL;
    size_t n = 0;
    api_layout_costs *c = su_calloc(1, sizeof *c);
    su_arena_init(&c->a);
    if (!db_best_all(d, target ? target : "cpu", &a, &rows, &n)) {
        fprintf(errs, "relay-tune: error: %s: %s\n", path, db_errmsg(d));
        api_layout_costs_free(c);
        c = NULL;
    }
    for (size_t i = 0; c && i < n; i++)
        if (!strncmp(rows[i].best.workload.key, "conv2d_nchwc|", 13) && rows[i].best.error == SU_MERR_NONE) {
            c->records++;
            add_record(c, &rows[i].best);
        }
    su_arena_free(&a);
    db_close(d);
    return c;
}

double api_layout_cost(void *ctx, const ir_expr *conv, int64_t ib, int64_t ob)
{
    api_layout_costs *c = ctx;
    const ir_type *dt = conv->u.call.args[0]->type, *wt = conv->u.call.args[1]->type;
    su_buf b = {0};
    uintptr_t i = (uintptr_t)su_map_get(&c->by_sig, signature(&b, dt->shape, wt->shape, conv, ib, ob));
    su_buf_free(&b);
    return i ? c->cost.data[i - 1] : -1;
}

size_t api_layout_costs_count(const api_layout_costs *c, size_t *records)
{
    if (records)
        *records = c->records;
    return c->cost.len;
}

void api_layout_costs_free(api_layout_costs *c)
{
    if (!c)
        return;
    su_map_free(&c->by_sig);
    su_vec_free(&c->cost);
    su_arena_free(&c->a);
    free(c);
}
