/* target.c — target strings at the public API: checking one before a run
 * (the host must execute the code; compiling for any target stays allowed)
 * and describing what the targets/ part makes of one. */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "targets/targets.h"

bool api_target_runnable(const tg_target *t, const char *text, FILE *errs)
{
    const char *why;
    /* an opencl target names a device of this host (it was queried when
     * the string was parsed), so its models run here */
    if (t->kind == TG_OPENCL)
        return true;
    if (tg_target_runnable(t, &why))
        return true;
    if (errs)
        fprintf(errs, "relay-tune: error: target '%s' plans for %s but this host has %s: %s\n", text,
                tg_isa_name(t->isa), tg_isa_name(tg_host_isa()), why);
    return false;
}

int rt_target_check(const char *target, int run, FILE *errs)
{
    const char *text = target ? target : "cpu", *why;
    tg_target t;
    if (!tg_target_parse(text, &t, &why)) {
        if (errs)
            fprintf(errs, "relay-tune: error: target '%s': %s\n", text, why);
        return -1;
    }
    return run && !api_target_runnable(&t, text, errs) ? -1 : 0;
}

char *rt_target_describe(const char *target, FILE *errs)
{
    const char *text = target ? target : "cpu", *why;
    tg_target t;
    if (!tg_target_parse(text, &t, &why)) {
        if (errs)
            fprintf(errs, "relay-tune: error: target '%s': %s\n", text, why);
        return NULL;
    }
    su_buf b = {0};
    tg_target_print(&t, &b);
    const char *run_why;
    if (t.kind == TG_OPENCL) {
        su_buf_printf(&b, "\n  build options: %s\n  identity in records: ", t.cflags);
        tg_target_features(&t, &b);
        su_buf_puts(&b, "\n");
    } else {
        su_buf_printf(&b, "\n  cflags: %s\n  runs here: %s\n", t.cflags, tg_target_runnable(&t, &run_why) ? "yes" : "no");
    }
    return su_buf_take(&b);
}

const char *rt_host_isa(void)
{
    return tg_isa_name(tg_host_isa());
}

char *rt_opencl_devices(int *count)
{
    su_buf b = {0};
    int n = tg_cl_list(&b);
    if (count)
        *count = n;
    return su_buf_take(&b);
}
