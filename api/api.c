/* api.c — the public rt_ API over the internal parts. It owns no logic of its
 * own: it turns internal diagnostics into printed messages and internal
 * modules into the opaque rt_module. */
#include <errno.h>
#include <string.h>

#include "api/api.h"

const char *rt_version(void)
{
    return PACKAGE_VERSION;
}

static void report(su_diags *d, FILE *errs)
{
    if (errs)
        su_diags_print(errs, d);
    su_diags_free(d);
}

rt_module *rt_module_parse(const char *name, const char *text, size_t len, FILE *errs)
{
    su_diags d = {0};
    ir_module *m = ir_parse(name, text, len, &d);
    if (m && !ir_infer_types(m, &d)) {
        report(&d, errs);
        ir_module_free(m);
        return NULL;
    }
    report(&d, errs);
    if (!m)
        return NULL;
    rt_module *r = su_calloc(1, sizeof *r);
    r->ir = m;
    return r;
}

rt_module *rt_module_load(const char *path, FILE *errs)
{
    size_t len;
    char *text = su_read_file(path, &len);
    if (!text) {
        if (errs)
            fprintf(errs, "%s: error: cannot read: %s\n", path, strerror(errno));
        return NULL;
    }
    rt_module *m = rt_module_parse(path, text, len, errs);
    free(text);
    return m;
}

char *rt_module_to_text(const rt_module *m, int flags)
{
    su_buf b = {0};
    ir_print_opts o = {(flags & RT_PRINT_TYPES) != 0};
    ir_print_module(&b, m->ir, &o);
    return su_buf_take(&b);
}

size_t rt_module_num_functions(const rt_module *m)
{
    return m->ir->defs.len;
}

void rt_module_free(rt_module *m)
{
    if (!m)
        return;
    ir_module_free(m->ir);
    free(m);
}
