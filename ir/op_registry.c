/* op_registry.c — the operator table, generated from ops.def. Schema defaults
 * are written as Relay text in the op files and parsed once, on first use. */
#include <string.h>
#include <threads.h>

#include "ir/ir.h"

static ir_op_def ops[IR_OP_COUNT] = {
#define OP(id, nm, lo, hi, pat, schema, rel, flops, ref) \
    {IR_OP_##id, nm, lo, hi, IR_PAT_##pat, &ir_schema_##schema, ir_rel_##rel, ir_flops_##flops, ir_ref_##ref, NULL},
#include "ir/ops.def"
#undef OP
};

static su_arena defaults_arena;
static once_flag defaults_once = ONCE_FLAG_INIT;

static void parse_defaults(void)
{
    for (int i = 0; i < IR_OP_COUNT; i++) {
        const ir_attr_schema *s = ops[i].schema;
        ir_attr_val *vals = su_arena_alloc(&defaults_arena, (size_t)(s->n ? s->n : 1) * sizeof *vals);
        for (int j = 0; j < s->n; j++) {
            ir_attr_val raw;
            const char *why = NULL;
            if (!ir_attr_parse_literal(&defaults_arena, s->defs[j].default_text, &raw))
                su_panic("%s: bad default \"%s\" for %s", ops[i].name, s->defs[j].default_text, s->defs[j].name);
            if (raw.kind == IR_AV_NONE || !ir_attr_coerce(&defaults_arena, s->defs[j].type, &raw, &vals[j], &why))
                vals[j] = raw;
        }
        ops[i].defaults = vals;
    }
}

static void ensure_defaults(void)
{
    call_once(&defaults_once, parse_defaults);
}

const ir_op_def *ir_op_get(ir_op_id id)
{
    ensure_defaults();
    return &ops[id];
}

const ir_op_def *ir_op_lookup(const char *name, size_t n)
{
    ensure_defaults();
    for (int i = 0; i < IR_OP_COUNT; i++)
        if (strlen(ops[i].name) == n && memcmp(ops[i].name, name, n) == 0)
            return &ops[i];
    return NULL;
}

int ir_op_attr_index(const ir_op_def *op, const char *name, size_t n)
{
    for (int i = 0; i < op->schema->n; i++)
        if (strlen(op->schema->defs[i].name) == n && memcmp(op->schema->defs[i].name, name, n) == 0)
            return i;
    return -1;
}

const char *ir_pattern_name(ir_op_pattern p)
{
    switch (p) {
    case IR_PAT_ELEMWISE: return "elemwise";
    case IR_PAT_BROADCAST: return "broadcast";
    case IR_PAT_INJECTIVE: return "injective";
    case IR_PAT_COMM_REDUCE: return "comm-reduce";
    case IR_PAT_OUT_EWISE_FUSABLE: return "out-elemwise-fusable";
    case IR_PAT_TUPLE: return "tuple";
    case IR_PAT_OPAQUE: return "opaque";
    }
    return "?";
}

const ir_attrs *ir_op_default_attrs(su_arena *a, const ir_op_def *op)
{
    ensure_defaults();
    ir_attrs *at = su_arena_alloc(a, sizeof *at);
    at->n = op->schema->n;
    at->vals = op->defaults;
    return at;
}
