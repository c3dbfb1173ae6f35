/* target.c — target descriptions. `cpu` is the host: its ISA (AVX-512 or
 * AVX2, detected with the compiler's cpu builtins) decides the vector width
 * templates plan for, and its online CPUs the threads; `-cores=N` and
 * `-mcpu=NAME` override them (the latter compiles for NAME instead of
 * -march=native). The OpenCL target is a later step and is refused here by
 * name. */
#include <string.h>
#include <unistd.h>

#include "targets/targets.h"

static void set_hw(tg_target *t)
{
    t->hw.lanes = t->avx512 ? 16 : t->avx2 ? 8 : 4;
    t->hw.vregs = t->avx512 ? 32 : 16;
    t->hw.cores = t->cores;
}

bool tg_target_parse(const char *text, tg_target *t, const char **why)
{
    memset(t, 0, sizeof *t);
    while (*text == ' ')
        text++;
    size_t n = strcspn(text, " ");
    if (n == 6 && !strncmp(text, "opencl", 6)) {
        *why = "the opencl target is not built yet";
        return false;
    }
    if (n != 3 || strncmp(text, "cpu", 3)) {
        *why = "unknown target (this build knows: cpu)";
        return false;
    }
    t->kind = TG_CPU;
    snprintf(t->name, sizeof t->name, "cpu");
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    t->cores = cpus > 0 ? (int)cpus : 1;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    t->avx512 = __builtin_cpu_supports("avx512f");
    t->avx2 = __builtin_cpu_supports("avx2");
#endif
    const char *march = "native";
    char mcpu[48] = "";
    for (const char *p = text + n; *p;) {
        while (*p == ' ')
            p++;
        size_t k = strcspn(p, " ");
        if (!k)
            break;
        if (k > 7 && !strncmp(p, "-cores=", 7)) {
            char *end;
            long c = strtol(p + 7, &end, 10);
            if (end != p + k || c < 1 || c > 4096) {
                *why = "-cores needs a number from 1 to 4096";
                return false;
            }
            t->cores = (int)c;
        } else if (k > 6 && k < 6 + sizeof mcpu && !strncmp(p, "-mcpu=", 6)) {
            memcpy(mcpu, p + 6, k - 6);
            mcpu[k - 6] = 0;
            for (char *c = mcpu; *c; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_')) {
                    *why = "-mcpu takes a CPU name such as znver4";
                    return false;
                }
            march = mcpu;
        } else {
            *why = "unknown cpu option (known: -cores=N, -mcpu=NAME)";
            return false;
        }
        p += k;
    }
    snprintf(t->cflags, sizeof t->cflags,
             "-std=c11 -O3 -march=%s -fopenmp -ffp-contract=fast -fno-math-errno -fno-trapping-math -fPIC -shared",
             march);
    set_hw(t);
    return true;
}
