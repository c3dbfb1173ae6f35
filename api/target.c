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
    su_buf_printf(&b, "\n  cflags: %s\n  runs here: %s\n", t.cflags, tg_target_runnable(&t, &run_why) ? "yes" : "no");
    return su_buf_take(&b);
}

const char *rt_host_isa(void)
{
    return tg_isa_name(tg_host_isa());
}
