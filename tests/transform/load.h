/* load.h — the step the transform tests share: a typed module from Relay
 * text, or NULL with its errors printed as TAP comments' context. */
#ifndef RT_TESTS_TRANSFORM_LOAD_H
#define RT_TESTS_TRANSFORM_LOAD_H

#include <stdio.h>
#include <string.h>

#include "ir/ir.h"

/* Parses and type-checks text; NULL after printing its errors. */
static inline ir_module *load(const char *text)
{
    su_diags d = {0};
    ir_module *m = ir_parse("t.relay", text, strlen(text), &d);
    if (!m || !ir_infer_types(m, &d)) {
        su_diags_print(stdout, &d);
        ir_module_free(m);
        m = NULL;
    }
    su_diags_free(&d);
    return m;
}

#endif
