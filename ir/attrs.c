/* attrs.c — attribute values of calls (`strides=[2, 2]`, `epsilon=1e-05f`):
 * reading literals, checking them against an op's schema, comparing and
 * printing them as Relay does. Schemas hold their defaults as Relay text so
 * that the op tables read like TVM's documentation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

/* ---- literal reader (schema defaults) ---- */

typedef struct { su_arena *a; const char *p; } lit;

static void skip_ws(lit *l)
{
    while (*l->p == ' ' || *l->p == '\t' || *l->p == '\n')
        l->p++;
}

static bool parse_lit(lit *l, ir_attr_val *out);

static bool parse_list(lit *l, ir_attr_val *out)
{
    SU_VEC(ir_attr_val) items = {0};
    l->p++; /* [ */
    skip_ws(l);
    while (*l->p != ']') {
        ir_attr_val v;
        if (!parse_lit(l, &v))
            goto fail;
        su_vec_push(&items, v);
        skip_ws(l);
        if (*l->p == ',')
            l->p++;
        else if (*l->p != ']')
            goto fail;
        skip_ws(l);
    }
    l->p++;
    out->kind = IR_AV_LIST;
    out->n = (int)items.len;
    out->items = items.len ? su_arena_dup(l->a, items.data, items.len * sizeof *items.data) : NULL;
    su_vec_free(&items);
    return true;
fail:
    su_vec_free(&items);
    return false;
}

static bool parse_lit(lit *l, ir_attr_val *out)
{
    memset(out, 0, sizeof *out);
    skip_ws(l);
    const char *p = l->p;
    if (*p == '[')
        return parse_list(l, out);
    if (*p == '"') {
        const char *e = strchr(p + 1, '"');
        if (!e)
            return false;
        out->kind = IR_AV_STR;
        out->s = su_arena_strndup(l->a, p + 1, (size_t)(e - p - 1));
        l->p = e + 1;
        return true;
    }
    static const struct { const char *w; ir_attr_kind k; int v; } words[] = {
        {"None", IR_AV_NONE, 0}, {"True", IR_AV_BOOL, 1}, {"False", IR_AV_BOOL, 0}};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        size_t n = strlen(words[i].w);
        if (strncmp(p, words[i].w, n) == 0) {
            out->kind = words[i].k;
            out->i = words[i].v;
            l->p = p + n;
            return true;
        }
    }
    char *end;
    double d = strtod(p, &end);
    if (end == p)
        return false;
    bool isfloat = strpbrk(p, ".eE") && (size_t)(strpbrk(p, ".eE") - p) < (size_t)(end - p);
    if (*end == 'f') {
        isfloat = true;
        end++;
        while (*end >= '0' && *end <= '9')
            end++;
    }
    out->kind = isfloat ? IR_AV_FLOAT : IR_AV_INT;
    out->f = d;
    out->i = isfloat ? 0 : strtoll(p, NULL, 10);
    l->p = end;
    return true;
}

bool ir_attr_parse_literal(su_arena *a, const char *text, ir_attr_val *out)
{
    lit l = {a, text};
    if (!parse_lit(&l, out))
        return false;
    skip_ws(&l);
    return *l.p == 0;
}

/* ---- schema checks ---- */

static bool all_ints(const ir_attr_val *v)
{
    for (int i = 0; i < v->n; i++)
        if (v->items[i].kind != IR_AV_INT)
            return false;
    return true;
}

bool ir_attr_coerce(su_arena *a, ir_attr_type t, const ir_attr_val *v, ir_attr_val *out, const char **why)
{
    *out = *v;
    switch (t) {
    case IR_AT_ANY:
        return true;
    case IR_AT_INT_OPT:
        if (v->kind == IR_AV_NONE)
            return true;
        /* fall through */
    case IR_AT_INT:
        if (v->kind == IR_AV_INT)
            return true;
        *why = "an integer";
        return false;
    case IR_AT_FLOAT:
        if (v->kind == IR_AV_FLOAT)
            return true;
        if (v->kind == IR_AV_INT) {
            out->kind = IR_AV_FLOAT;
            out->f = (double)v->i;
            out->i = 0;
            return true;
        }
        *why = "a number";
        return false;
    case IR_AT_BOOL:
        if (v->kind == IR_AV_BOOL || (v->kind == IR_AV_INT && (v->i == 0 || v->i == 1))) {
            out->kind = IR_AV_BOOL;
            return true;
        }
        *why = "True or False";
        return false;
    case IR_AT_STR:
        if (v->kind == IR_AV_STR)
            return true;
        *why = "a string";
        return false;
    case IR_AT_INTS_OPT:
        if (v->kind == IR_AV_NONE)
            return true;
        /* fall through */
    case IR_AT_INTS:
        if (v->kind == IR_AV_LIST && all_ints(v))
            return true;
        if (v->kind == IR_AV_INT) {
            ir_attr_val *one = su_arena_dup(a, v, sizeof *v);
            memset(out, 0, sizeof *out);
            out->kind = IR_AV_LIST;
            out->n = 1;
            out->items = one;
            return true;
        }
        *why = t == IR_AT_INTS ? "a list of integers" : "a list of integers or None";
        return false;
    case IR_AT_INT_OR_INTS:
        if (v->kind == IR_AV_INT || (v->kind == IR_AV_LIST && all_ints(v)))
            return true;
        *why = "an integer or a list of integers";
        return false;
    case IR_AT_INTS2:
        if (v->kind == IR_AV_LIST) {
            bool okk = true;
            for (int i = 0; i < v->n; i++)
                okk = okk && v->items[i].kind == IR_AV_LIST && all_ints(&v->items[i]);
            if (okk)
                return true;
        }
        *why = "a list of lists of integers";
        return false;
    }
    *why = "a valid value";
    return false;
}

bool ir_attr_equal(const ir_attr_val *a, const ir_attr_val *b)
{
    if ((a->kind == IR_AV_INT || a->kind == IR_AV_FLOAT) && (b->kind == IR_AV_INT || b->kind == IR_AV_FLOAT)) {
        double x = a->kind == IR_AV_INT ? (double)a->i : a->f;
        double y = b->kind == IR_AV_INT ? (double)b->i : b->f;
        return x == y;
    }
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case IR_AV_NONE: return true;
    case IR_AV_BOOL: return (a->i != 0) == (b->i != 0);
    case IR_AV_STR: case IR_AV_RAW: return strcmp(a->s, b->s) == 0;
    case IR_AV_LIST:
        if (a->n != b->n)
            return false;
        for (int i = 0; i < a->n; i++)
            if (!ir_attr_equal(&a->items[i], &b->items[i]))
                return false;
        return true;
    default: return false;
    }
}

/* ---- printing ---- */

void ir_print_float32(su_buf *b, double v)
{
    float f = (float)v;
    if (isnan(f)) {
        su_buf_puts(b, "nanf");
        return;
    }
    if (isinf(f)) {
        su_buf_puts(b, f < 0 ? "-inff" : "inff");
        return;
    }
    char s[64];
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(s, sizeof s, "%.*g", prec, (double)f);
        if (strtof(s, NULL) == f)
            break;
    }
    su_buf_puts(b, s);
    su_buf_putc(b, 'f');
}

static void print_string(su_buf *b, const char *s)
{
    su_buf_putc(b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            su_buf_printf(b, "\\%c", c);
        else if (c == '\n')
            su_buf_puts(b, "\\n");
        else if (c == '\t')
            su_buf_puts(b, "\\t");
        else if (c < 0x20 || c == 0x7f)
            su_buf_printf(b, "\\x%02x", c);
        else
            su_buf_putc(b, (char)c);
    }
    su_buf_putc(b, '"');
}

void ir_attr_print(su_buf *b, const ir_attr_val *v)
{
    switch (v->kind) {
    case IR_AV_NONE: su_buf_puts(b, "None"); return;
    case IR_AV_INT: su_buf_printf(b, "%lld", (long long)v->i); return;
    case IR_AV_FLOAT: ir_print_float32(b, v->f); return;
    case IR_AV_BOOL: su_buf_puts(b, v->i ? "True" : "False"); return;
    case IR_AV_STR: print_string(b, v->s); return;
    case IR_AV_RAW: su_buf_puts(b, v->s); return;
    case IR_AV_LIST:
        su_buf_putc(b, '[');
        for (int i = 0; i < v->n; i++) {
            if (i)
                su_buf_puts(b, ", ");
            ir_attr_print(b, &v->items[i]);
        }
        su_buf_putc(b, ']');
        return;
    }
}

/* ---- accessors ---- */

const ir_attr_val *ir_attr_get(const ir_attrs *at, int idx)
{
    if (!at || idx < 0 || idx >= at->n)
        su_panic("attribute index %d out of range", idx);
    return &at->vals[idx];
}

int64_t ir_attr_int(const ir_attrs *at, int idx)
{
    const ir_attr_val *v = ir_attr_get(at, idx);
    return v->kind == IR_AV_FLOAT ? (int64_t)v->f : v->i;
}

double ir_attr_float(const ir_attrs *at, int idx)
{
    const ir_attr_val *v = ir_attr_get(at, idx);
    return v->kind == IR_AV_FLOAT ? v->f : (double)v->i;
}

bool ir_attr_bool(const ir_attrs *at, int idx)
{
    return ir_attr_get(at, idx)->i != 0;
}

const char *ir_attr_str(const ir_attrs *at, int idx)
{
    const ir_attr_val *v = ir_attr_get(at, idx);
    return v->kind == IR_AV_STR ? v->s : "";
}

bool ir_attr_is_none(const ir_attrs *at, int idx)
{
    return ir_attr_get(at, idx)->kind == IR_AV_NONE;
}

int ir_attr_ints(const ir_attrs *at, int idx, int64_t *out, int max)
{
    return ir_attr_val_ints(ir_attr_get(at, idx), out, max);
}

int ir_attr_val_ints(const ir_attr_val *v, int64_t *out, int max)
{
    if (v->kind == IR_AV_INT) {
        if (max < 1)
            return -1;
        out[0] = v->i;
        return 1;
    }
    if (v->kind != IR_AV_LIST || v->n > max)
        return -1;
    for (int i = 0; i < v->n; i++) {
        if (v->items[i].kind != IR_AV_INT)
            return -1;
        out[i] = v->items[i].i;
    }
    return v->n;
}
