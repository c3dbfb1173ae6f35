/* type.c — Relay types: tensors (with static shapes), tuples, functions,
 * type parameters, algebraic data types applied to arguments and references. Types are plain immutable values in an arena, compared
 * structurally; a type parameter is equal only to itself, because two defs
 * that both write `[A]` mean two different parameters. */
#include <string.h>

#include "ir/ir.h"

const ir_type *ir_tensor_type(su_arena *a, ir_dtype dt, int ndim, const int64_t *shape)
{
    ir_type *t = su_arena_alloc(a, sizeof *t);
    t->kind = IR_TY_TENSOR;
    t->dtype = dt;
    t->ndim = ndim;
    t->shape = ndim ? su_arena_dup(a, shape, (size_t)ndim * sizeof *shape) : NULL;
    return t;
}

const ir_type *ir_scalar_type(su_arena *a, ir_dtype dt)
{
    return ir_tensor_type(a, dt, 0, NULL);
}

const ir_type *ir_tuple_type(su_arena *a, int n, const ir_type *const *fields)
{
    ir_type *t = su_arena_alloc(a, sizeof *t);
    t->kind = IR_TY_TUPLE;
    t->nfields = n;
    t->fields = n ? su_arena_dup(a, fields, (size_t)n * sizeof *fields) : NULL;
    return t;
}

const ir_type *ir_func_type(su_arena *a, int n, const ir_type *const *params, const ir_type *ret)
{
    ir_type *t = (ir_type *)ir_tuple_type(a, n, params);
    t->kind = IR_TY_FUNC;
    t->ret = ret;
    return t;
}

const ir_type *ir_type_var(su_arena *a, const char *name)
{
    ir_type *t = su_arena_alloc(a, sizeof *t);
    t->kind = IR_TY_VAR;
    t->name = su_arena_strdup(a, name);
    return t;
}

const ir_type *ir_adt_type(su_arena *a, const ir_adt *adt, int n, const ir_type *const *args)
{
    ir_type *t = (ir_type *)ir_tuple_type(a, n, args);
    t->kind = IR_TY_ADT;
    t->adt = adt;
    t->name = adt->name;
    return t;
}

const ir_type *ir_ref_type(su_arena *a, const ir_type *of)
{
    ir_type *t = (ir_type *)ir_tuple_type(a, 1, &of);
    t->kind = IR_TY_REF;
    return t;
}

bool ir_type_has_var(const ir_type *t)
{
    if (!t)
        return false;
    switch (t->kind) {
    case IR_TY_VAR:
        return true;
    case IR_TY_FUNC:
        if (ir_type_has_var(t->ret))
            return true;
        /* fall through */
    case IR_TY_TUPLE: case IR_TY_ADT: case IR_TY_REF:
        for (int i = 0; i < t->nfields; i++)
            if (ir_type_has_var(t->fields[i]))
                return true;
        return false;
    case IR_TY_TENSOR: case IR_TY_META:
        return false;
    }
    return false;
}

bool ir_type_has_meta(const ir_type *t)
{
    if (!t)
        return false;
    if (t->kind == IR_TY_META)
        return true;
    if (t->kind == IR_TY_FUNC && ir_type_has_meta(t->ret))
        return true;
    if (t->kind != IR_TY_TENSOR && t->kind != IR_TY_VAR)
        for (int i = 0; i < t->nfields; i++)
            if (ir_type_has_meta(t->fields[i]))
                return true;
    return false;
}

bool ir_type_equal(const ir_type *a, const ir_type *b)
{
    if (a == b)
        return true;
    if (!a || !b || a->kind != b->kind)
        return false;
    switch (a->kind) {
    case IR_TY_TENSOR:
        return a->dtype == b->dtype && a->ndim == b->ndim &&
               (a->ndim == 0 || memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof *a->shape) == 0);
    case IR_TY_FUNC:
        if (!ir_type_equal(a->ret, b->ret))
            return false;
        /* fall through */
    case IR_TY_ADT:
        if (a->adt != b->adt)
            return false;
        /* fall through */
    case IR_TY_TUPLE: case IR_TY_REF:
        if (a->nfields != b->nfields)
            return false;
        for (int i = 0; i < a->nfields; i++)
            if (!ir_type_equal(a->fields[i], b->fields[i]))
                return false;
        return true;
    case IR_TY_VAR: case IR_TY_META:
        return false;   /* a == b was checked above */
    }
    return false;
}

int64_t ir_type_numel(const ir_type *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= t->shape[i];
    return n;
}

static void print_shape(su_buf *b, const ir_type *t)
{
    su_buf_putc(b, '(');
    for (int i = 0; i < t->ndim; i++)
        su_buf_printf(b, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
    su_buf_putc(b, ')');
}

void ir_type_print(su_buf *b, const ir_type *t)
{
    if (!t) {
        su_buf_puts(b, "?");
        return;
    }
    switch (t->kind) {
    case IR_TY_TENSOR:
        if (t->ndim == 0) {
            su_buf_puts(b, ir_dtype_name(t->dtype));
            return;
        }
        su_buf_puts(b, "Tensor[");
        print_shape(b, t);
        su_buf_printf(b, ", %s]", ir_dtype_name(t->dtype));
        return;
    case IR_TY_TUPLE:
        su_buf_putc(b, '(');
        for (int i = 0; i < t->nfields; i++) {
            if (i)
                su_buf_puts(b, ", ");
            ir_type_print(b, t->fields[i]);
        }
        su_buf_puts(b, t->nfields == 1 ? ",)" : ")");
        return;
    case IR_TY_FUNC:
        su_buf_puts(b, "fn (");
        for (int i = 0; i < t->nfields; i++) {
            if (i)
                su_buf_puts(b, ", ");
            ir_type_print(b, t->fields[i]);
        }
        su_buf_puts(b, ") -> ");
        ir_type_print(b, t->ret);
        return;
    case IR_TY_VAR:
        su_buf_puts(b, t->name);
        return;
    case IR_TY_ADT:
        su_buf_puts(b, t->name);
        for (int i = 0; i < t->nfields; i++) {
            su_buf_puts(b, i ? ", " : "[");
            ir_type_print(b, t->fields[i]);
        }
        if (t->nfields)
            su_buf_putc(b, ']');
        return;
    case IR_TY_REF:
        su_buf_puts(b, "ref(");
        ir_type_print(b, t->fields[0]);
        su_buf_putc(b, ')');
        return;
    case IR_TY_META:
        su_buf_puts(b, "_");    /* not known yet: TVM's incomplete type */
        return;
    }
}

const char *ir_type_str(su_arena *a, const ir_type *t)
{
    su_buf b = {0};
    ir_type_print(&b, t);
    char *s = su_arena_strdup(a, su_buf_str(&b));
    su_buf_free(&b);
    return s;
}

const char *ir_shape_str(su_arena *a, const ir_type *t)
{
    if (!t || t->kind != IR_TY_TENSOR)
        return ir_type_str(a, t);
    su_buf b = {0};
    print_shape(&b, t);
    char *s = su_arena_strdup(a, su_buf_str(&b));
    su_buf_free(&b);
    return s;
}
