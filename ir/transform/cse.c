/* cse.c — common-subexpression elimination by hash-consing: after its
 * operands are merged, an operator call, tuple or projection whose canonical
 * text (operator, attributes, operand identities) was seen before is replaced
 * by the earlier node. Only operator calls are merged among calls: a call of
 * a function may recurse, and merging must never move such a call. */
#include "ir/transform/transform.h"

typedef struct {
    su_map seen;        /* canonical text → node */
    su_arena keys;      /* the texts */
} cse_state;

static ir_expr *hashcons(tr_rewriter *rw, ir_expr *e)
{
    cse_state *st = rw->ctx;
    su_buf k = {0};
    const ir_op_def *op = ir_call_op(e);
    if (op) {
        su_buf_printf(&k, "C|%s|", op->name);
        for (int i = 0; i < e->u.call.attrs->n; i++) {
            ir_attr_print(&k, &e->u.call.attrs->vals[i]);
            su_buf_putc(&k, ';');
        }
        for (int i = 0; i < e->u.call.nargs; i++) {
            const ir_expr *a = e->u.call.args[i];
            if (a->kind == IR_CONST && a->u.constant.value->ndim == 0) {
                su_buf_printf(&k, "|k%s:", ir_dtype_name(a->u.constant.value->dtype));
                su_buf_printf(&k, "%.17g", ir_tensor_get(a->u.constant.value, 0));
            } else {
                su_buf_printf(&k, "|%u", a->id);
            }
        }
    } else if (e->kind == IR_TUPLE) {
        su_buf_puts(&k, "T");
        for (int i = 0; i < e->u.tuple.n; i++)
            su_buf_printf(&k, "|%u", e->u.tuple.fields[i]->id);
    } else if (e->kind == IR_PROJ) {
        su_buf_printf(&k, "P|%u|%d", e->u.proj.tuple->id, e->u.proj.index);
    } else {
        return e;
    }
    ir_expr *prev = su_map_get(&st->seen, su_buf_str(&k));
    if (!prev)
        su_map_put(&st->seen, su_arena_strdup(&st->keys, su_buf_str(&k)), e);
    su_buf_free(&k);
    return prev ? prev : e;
}

bool tr_common_subexpr(ir_module *m, const tr_options *o, su_diags *d)
{
    cse_state st = {0};
    su_arena_init(&st.keys);
    bool okk = tr_apply(m, hashcons, &st);
    su_map_free(&st.seen);
    su_arena_free(&st.keys);
    return okk;
}
