/* module.c — a module: named global functions in definition order, plus the
 * arena that owns all of their nodes. */
#include <string.h>

#include "ir/ir.h"

ir_module *ir_module_new(void)
{
    ir_module *m = su_calloc(1, sizeof *m);
    su_arena_init(&m->arena);
    m->source.name = "<built>";
    m->source.text = "";
    return m;
}

void ir_module_free(ir_module *m)
{
    if (!m)
        return;
    su_vec_free(&m->defs);
    su_vec_free(&m->adts);
    su_map_free(&m->by_name);
    su_arena_free(&m->arena);
    free(m);
}

bool ir_module_add(ir_module *m, const char *name, ir_expr *global, ir_expr *func)
{
    if (su_map_get(&m->by_name, name))
        return false;
    const char *key = su_arena_strdup(&m->arena, name);
    su_vec_push(&m->defs, ((ir_global_def){key, global, func}));
    su_map_put(&m->by_name, key, (void *)(uintptr_t)m->defs.len);
    return true;
}

ir_global_def *ir_module_find(const ir_module *m, const char *name)
{
    uintptr_t i = (uintptr_t)su_map_get(&m->by_name, name);
    return i ? &m->defs.data[i - 1] : NULL;
}
