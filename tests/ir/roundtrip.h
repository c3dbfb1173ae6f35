/* roundtrip.h — the parse, type-check and print step that the parser tests
 * share: a program's canonical text, or its first error. */
#ifndef RT_TESTS_IR_ROUNDTRIP_H
#define RT_TESTS_IR_ROUNDTRIP_H

#include <stdio.h>
#include <string.h>

#include "ir/ir.h"

/* Parses and type-checks text; returns the printed text (static buffer, with
 * type comments when types) or "ERROR " and the first error. */
static inline const char *roundtrip(const char *text, bool types)
{
    static char out[8192];
    su_diags d = {0};
    ir_module *m = ir_parse("t.relay", text, strlen(text), &d);
    if (m && ir_infer_types(m, &d)) {
        su_buf b = {0};
        ir_print_opts o = {types};
        ir_print_module(&b, m, &o);
        snprintf(out, sizeof out, "%s", su_buf_str(&b));
        su_buf_free(&b);
    } else {
        snprintf(out, sizeof out, "ERROR %s", d.len ? d.items[0].msg : "(none)");
    }
    ir_module_free(m);
    su_diags_free(&d);
    return out;
}

#endif
