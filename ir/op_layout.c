/* op_layout.c — data layouts and the ops that move whole axes: layout
 * strings as TVM writes them ("NCHW", "NHWC", "NCHW16c", "OIHW4i4o"),
 * layout_transform between two layouts of the same axes, and stack (tensors
 * of one shape joined along a new axis). A layout names each axis with a
 * letter: an upper-case letter is a primal axis, a number and a lower-case
 * letter a sub-axis of that extent split off the primal axis of the same
 * letter (the inner part: primal index = outer * factor + inner). */
#include <ctype.h>
#include <string.h>

#include "ir/ir.h"

const ir_attr_schema ir_schema_layout_transform = IR_SCHEMA(
    {"src_layout", IR_AT_STR, "\"\"", true},
    {"dst_layout", IR_AT_STR, "\"\"", true});

const ir_attr_schema ir_schema_stack = IR_SCHEMA({"axis", IR_AT_INT, "0"});

/* ---- layouts ------------------------------------------------------------ */

const char *ir_layout_parse(const char *s, ir_layout *out)
{
    memset(out, 0, sizeof *out);
    if (!*s)
        return "an empty layout";
    for (const char *p = s; *p;) {
        int64_t factor = 0;
        while (isdigit((unsigned char)*p) && factor < 1000000)
            factor = factor * 10 + (*p++ - '0');
        char c = *p;
        if (!isalpha((unsigned char)c))
            return "a layout is letters, each lower-case one after its extent (NCHW16c)";
        if (isupper((unsigned char)c) ? factor != 0 : factor <= 0)
            return isupper((unsigned char)c) ? "a primal (upper-case) axis takes no extent"
                                             : "a sub-axis (lower-case) needs its extent before it (16c)";
        if (ir_layout_find(out, c) >= 0)
            return "an axis appears twice";
        if (out->n == IR_MAX_DIMS)
            return "too many axes";
        out->axis[out->n] = c;
        out->factor[out->n++] = factor;
        p++;
    }
    for (int i = 0; i < out->n; i++)
        if (islower((unsigned char)out->axis[i]) && ir_layout_find(out, (char)toupper((unsigned char)out->axis[i])) < 0)
            return "a sub-axis without its primal axis";
    return NULL;
}

int ir_layout_find(const ir_layout *l, char c)
{
    for (int i = 0; i < l->n; i++)
        if (l->axis[i] == c)
            return i;
    return -1;
}

int64_t ir_layout_factor(const ir_layout *l, char primal)
{
    int i = ir_layout_find(l, (char)tolower((unsigned char)primal));
    return i < 0 ? 1 : l->factor[i];
}

bool ir_layout_perm(const char *l, const char *canon, int pos[4])
{
    if (strlen(l) != 4)
        return false;
    for (int i = 0; i < 4; i++) {
        const char *at = strchr(l, canon[i]);
        if (!at)
            return false;
        pos[i] = (int)(at - l);
    }
    return true;
}

/* ---- layout_transform --------------------------------------------------- */

const ir_type *ir_rel_layout_transform(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                                       const ir_attrs *attrs)
{
    const ir_type *t = ir_rel_tensor(cx, args, 0);
    if (!t)
        return NULL;
    ir_layout src, dst;
    const char *why, *ss = ir_attr_str(attrs, IR_LT_SRC_LAYOUT), *ds = ir_attr_str(attrs, IR_LT_DST_LAYOUT);
    if ((why = ir_layout_parse(ss, &src)))
        return ir_rel_error(cx, "src_layout \"%s\": %s", ss, why);
    if ((why = ir_layout_parse(ds, &dst)))
        return ir_rel_error(cx, "dst_layout \"%s\": %s", ds, why);
    if (t->ndim != src.n)
        return ir_rel_error(cx, "data %s has rank %d, but src_layout \"%s\" has %d axes", ir_shape_str(cx->arena, t),
                            t->ndim, ss, src.n);
    int64_t primal[128] = {0};   /* extent of each primal axis, by letter */
    for (int i = 0; i < src.n; i++) {
        char c = src.axis[i];
        if (islower((unsigned char)c) && t->shape[i] != src.factor[i])
            return ir_rel_error(cx, "data %s has extent %lld on axis %d, but src_layout \"%s\" makes it %lld",
                                ir_shape_str(cx->arena, t), (long long)t->shape[i], i, ss, (long long)src.factor[i]);
        if (isupper((unsigned char)c))
            primal[(int)c] = t->shape[i] * ir_layout_factor(&src, c);
    }
    int64_t shape[IR_MAX_DIMS];
    for (int i = 0; i < dst.n; i++) {
        char c = dst.axis[i], up = (char)toupper((unsigned char)c);
        if (ir_layout_find(&src, up) < 0)
            return ir_rel_error(cx, "dst_layout \"%s\" has axis %c, which src_layout \"%s\" lacks", ds, up, ss);
        int64_t f = ir_layout_factor(&dst, up);
        if (primal[(int)up] % f)
            return ir_rel_error(cx, "axis %c of extent %lld does not split into parts of %lld (data %s)", up,
                                (long long)primal[(int)up], (long long)f, ir_shape_str(cx->arena, t));
        shape[i] = islower((unsigned char)c) ? f : primal[(int)up] / f;
    }
    for (int i = 0; i < src.n; i++)
        if (isupper((unsigned char)src.axis[i]) && ir_layout_find(&dst, src.axis[i]) < 0)
            return ir_rel_error(cx, "src_layout \"%s\" has axis %c, which dst_layout \"%s\" lacks", ss, src.axis[i], ds);
    return ir_tensor_type(cx->arena, t->dtype, dst.n, shape);
}

/* ---- stack -------------------------------------------------------------- */

/* A tuple of tensors of one type; the result has a new axis of their count. */
const ir_type *ir_rel_stack(ir_rel_ctx *cx, const ir_type *const *args, int nargs, const ir_attrs *attrs)
{
    const ir_type *t = args[0];
    if (!t || t->kind != IR_TY_TUPLE || t->nfields == 0)
        return ir_rel_error(cx, "expects a non-empty tuple of tensors, got %s", ir_type_str(cx->arena, t));
    const ir_type *first = t->fields[0];
    for (int i = 0; i < t->nfields; i++) {
        const ir_type *f = t->fields[i];
        if (!f || f->kind != IR_TY_TENSOR)
            return ir_rel_error(cx, "field %d must be a tensor, got %s", i, ir_type_str(cx->arena, f));
        if (!ir_type_equal(f, first))
            return ir_rel_error(cx, "field %d (%s) differs from field 0 (%s): stacked tensors have one type", i,
                                ir_type_str(cx->arena, f), ir_type_str(cx->arena, first));
    }
    if (first->ndim + 1 > IR_MAX_DIMS)
        return ir_rel_error(cx, "the result would pass %d dimensions", IR_MAX_DIMS);
    int axis;
    if (!ir_rel_axis(cx, ir_attr_int(attrs, IR_STACK_AXIS), first->ndim + 1, &axis))
        return NULL;
    int64_t shape[IR_MAX_DIMS];
    for (int i = 0, j = 0; i <= first->ndim; i++)
        shape[i] = i == axis ? t->nfields : first->shape[j++];
    return ir_tensor_type(cx->arena, first->dtype, first->ndim + 1, shape);
}
