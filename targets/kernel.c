/* kernel.c — the C of one built kernel, the one place that decides how a
 * kernel, its weight-packing prologues and its measurement wrapper are
 * named and put into a translation unit. A compiled model takes the kernel
 * and, in a unit of its own run at compile time, the prologues; the
 * builder measures all three; `relay-tune lower --emit c` shows the kernel
 * with its prologues. Names: the kernel is NAME, its prologue i NAME_p<i>;
 * with the wrapper the kernel becomes NAME_k and NAME the wrapper. The
 * caller starts each unit with tg_c_prelude. */
#include "targets/targets.h"

/* The kernel's arguments that are the function's parameters: all but the
 * hoisted packed buffers and the outputs. */
static int nparams(const sch_lowered *l)
{
    int n = l->kernel->nargs - l->nprologues;
    for (int i = 0; i < l->kernel->nargs; i++)
        n -= l->kernel->args[i]->scope == SCH_SCOPE_OUTPUT;
    return n;
}

/* The wrapper NAME: on its first call it packs the weights into static
 * buffers (as the compiled model packs them once), then it runs NAME_k on
 * the parameters, the packed buffers and the outputs. The runner's first
 * call (the output check) pays for the packing; the timed calls are the
 * kernel's alone. */
static void wrapper(su_buf *src, const sch_lowered *l, const char *name)
{
    int np = nparams(l), npro = l->nprologues, nargs = l->kernel->nargs;
    su_buf_printf(src, "\n/* %s: weights packed on the first call, as the compiled model packs them once */\n", name);
    su_buf_printf(src, "int %s(void *const *args)\n{\n    static void *w[%d];\n    static int ready;\n", name, npro);
    su_buf_puts(src, "    if (!ready) {\n");
    for (int p = 0; p < npro; p++) {
        const sch_buffer *b = l->prologues[p].packed;
        size_t bytes = (size_t)(b->size ? b->size : 1) * (size_t)ir_dtype_bytes(b->dtype);
        su_buf_printf(src,
                      "        w[%d] = rt_alloc(%zu);\n"
                      "        if (!w[%d])\n            return -1;\n"
                      "        __builtin_memset(w[%d], 0, %zu);\n"
                      "        void *a%d[2] = {args[%d], w[%d]};\n"
                      "        if (%s_p%d(a%d) != 0)\n            return -1;\n",
                      p, bytes, p, p, bytes, p, l->prologues[p].param, p, name, p, p);
    }
    su_buf_puts(src, "        ready = 1;\n    }\n");
    su_buf_printf(src, "    void *a[%d] = {", nargs);
    for (int i = 0; i < nargs; i++) {
        if (i)
            su_buf_puts(src, ", ");
        if (i < np)
            su_buf_printf(src, "args[%d]", i);
        else if (i < np + npro)
            su_buf_printf(src, "w[%d]", i - np);
        else
            su_buf_printf(src, "args[%d]", i - npro);
    }
    su_buf_printf(src, "};\n    return %s_k(a);\n}\n", name);
}

void tg_kernel_c(su_buf *out, const sch_lowered *l, const char *name, unsigned parts)
{
    bool wrap = (parts & TG_KERNEL_WRAPPER) && l->nprologues > 0;
    su_buf fn = {0};
    for (int p = 0; (parts & TG_KERNEL_PROLOGUES || wrap) && p < l->nprologues; p++) {
        su_buf_clear(&fn);
        su_buf_printf(&fn, "%s_p%d", name, p);
        tg_c_func(out, l->prologues[p].fn, su_buf_str(&fn));
    }
    su_buf_clear(&fn);
    su_buf_printf(&fn, wrap ? "%s_k" : "%s", name);
    if (parts & TG_KERNEL_BODY || wrap)
        tg_c_func(out, l->kernel, su_buf_str(&fn));
    su_buf_free(&fn);
    if (wrap)
        wrapper(out, l, name);
}
