/* dtype.c — element types, generated from the IR_DTYPES table in ir.h. */
#include <string.h>

#include "ir/ir.h"

static const struct { const char *name; int bytes; char cls; } dtypes[] = {
#define X(id, name, bytes, cls) {name, bytes, cls},
    IR_DTYPES(X)
#undef X
};

const char *ir_dtype_name(ir_dtype t) { return dtypes[t].name; }
int ir_dtype_bytes(ir_dtype t) { return dtypes[t].bytes; }
bool ir_dtype_is_float(ir_dtype t) { return dtypes[t].cls == 'f'; }
bool ir_dtype_is_int(ir_dtype t) { return dtypes[t].cls == 'i' || dtypes[t].cls == 'u'; }

bool ir_dtype_parse(const char *s, size_t n, ir_dtype *out)
{
    for (int i = 0; i < IR_DTYPE_COUNT; i++)
        if (strlen(dtypes[i].name) == n && memcmp(dtypes[i].name, s, n) == 0) {
            *out = (ir_dtype)i;
            return true;
        }
    return false;
}
