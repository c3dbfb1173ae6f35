/* host.c — where a record is measured: the target string as the user wrote
 * it (spaces collapsed; lookups match on it), the host's CPU model, its ISA
 * features (the fallback for a target string never tuned: records of
 * another target with the same features; a -mcpu target's are its ISA's)
 * and the OS. An OpenCL target's features are its device's identity (name,
 * vendor, driver and OpenCL versions), so records of one device never apply
 * to another. */
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "tuner/tuner.h"

/* The CPU model from /proc/cpuinfo ("" when unknown). */
static void cpu_model(char *out, size_t n)
{
    out[0] = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        const char *v = strchr(line, ':');
        if (!v)
            break;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        snprintf(out, n, "%s", v);
        out[strcspn(out, "\n")] = 0;
        break;
    }
    fclose(f);
}

/* The host's ISA features templates and the compiler care about, lowercase,
 * those beyond the target's ISA left out (a target capped at AVX2 on an
 * AVX-512 host uses none of AVX-512). */
static void isa_features(const tg_target *t, su_buf *b)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    /* __builtin_cpu_supports takes a string literal only, hence the pairs */
    const struct {
        const char *name;
        bool has;
    } feats[] = {
        {"sse4.2", __builtin_cpu_supports("sse4.2")},     {"avx", __builtin_cpu_supports("avx")},
        {"avx2", __builtin_cpu_supports("avx2")},         {"fma", __builtin_cpu_supports("fma")},
        {"avx512f", __builtin_cpu_supports("avx512f")},   {"avx512bw", __builtin_cpu_supports("avx512bw")},
        {"avx512dq", __builtin_cpu_supports("avx512dq")}, {"avx512vl", __builtin_cpu_supports("avx512vl")},
        {"avx512vnni", __builtin_cpu_supports("avx512vnni")},
    };
    for (size_t i = 0; i < sizeof feats / sizeof *feats; i++) {
        const char *f = feats[i].name;
        tg_isa need = !strncmp(f, "avx512", 6) ? TG_ISA_AVX512
                      : !strcmp(f, "sse4.2") ? TG_ISA_SSE42 : TG_ISA_AVX2;
        if (feats[i].has && need <= t->isa)
            su_buf_printf(b, "%s%s", b->len ? " " : "", feats[i].name);
    }
#else
    (void)t;
    (void)b;
#endif
}

/* An OpenCL device's identity (tg_target_features: "device NAME; vendor V;
 * driver D; VERSION") as the database's features, lowercase tokens of
 * [a-z0-9_.+-] separated by single spaces: a field per token, the rest of
 * each character as '-' ("device-pthread-skylake-avx512-amd-epyc"). */
static void device_tokens(const tg_target *t, su_buf *out)
{
    su_buf id = {0};
    tg_target_features(t, &id);
    for (const char *p = su_buf_str(&id); *p; p++) {
        char c = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
        if (c == ';' && p[1] == ' ') {
            p++;
            if (out->len && out->data[out->len - 1] != ' ')
                su_buf_putc(out, ' ');
        } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || strchr("_.+-", c)) {
            su_buf_putc(out, c);
        } else if (out->len && out->data[out->len - 1] != ' ' && out->data[out->len - 1] != '-') {
            su_buf_putc(out, '-');
        }
    }
    while (out->len && (out->data[out->len - 1] == ' ' || out->data[out->len - 1] == '-'))
        out->data[--out->len] = 0;
    su_buf_free(&id);
}

const char *tun_host_name(void)
{
    static char host[256];
    if (!host[0] && gethostname(host, sizeof host) != 0)
        host[0] = 0;
    host[sizeof host - 1] = 0;
    return host;
}

void tun_target_describe(const tg_target *t, const char *name, su_arena *a, db_target *out)
{
    su_buf b = {0};
    for (const char *p = name; *p;) {
        while (*p == ' ' || *p == '\t')
            p++;
        size_t k = strcspn(p, " \t");
        if (!k)
            break;
        su_buf_printf(&b, "%s%.*s", b.len ? " " : "", (int)k, p);
        p += k;
    }
    out->name = su_arena_strdup(a, b.len ? su_buf_str(&b) : t->name);
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    out->cpu = su_arena_strdup(a, cpu);
    su_buf_clear(&b);
    /* a named CPU's features are its own, not the host's */
    if (t->kind == TG_OPENCL)
        device_tokens(t, &b);
    else if (t->host)
        isa_features(t, &b);
    else
        tg_target_features(t, &b);
    out->isa = su_arena_strdup(a, su_buf_str(&b));
    out->cores = t->cores;
    struct utsname u;
    su_buf_clear(&b);
    if (uname(&u) == 0)
        su_buf_printf(&b, "%s %s", u.sysname, u.release);
    out->os = su_arena_strdup(a, su_buf_str(&b));
    su_buf_free(&b);
}
