/* target.c — target descriptions. A cpu target says which ISA the templates
 * plan for (vector lanes and registers), how many FMA pipes and what caches
 * a core has, and how many threads a parallel loop gets; templates derive
 * their defaults and bounds from that description only (docs/targets.md).
 *
 * `cpu` alone is the host: its widest ISA (AVX-512, AVX2, SSE4.2 or plain
 * x86-64), its caches read from sysfs, its online CPUs, compiled with
 * -march=native. `-mcpu=NAME` describes the named CPU instead (ISA, caches
 * and FMA pipes from the table below, or the ISA from the compiler's own
 * predefined macros for names the table lacks) and compiles with
 * -march=NAME; `-isa=`, `-l1=`, `-l2=`, `-l3=`, `-fma=` and `-cores=`
 * override single fields. The host's ISA can be capped with the environment
 * variable RELAY_TUNE_MAX_ISA (as oneDNN's ONEDNN_MAX_CPU_ISA), which lets an
 * AVX-512 machine behave as an AVX2 host in tests.
 *
 * `opencl` is the first device of the first platform, `opencl -platform=N
 * -device=M` another; the device is queried (targets/opencl.c), so its
 * limits and identity are the target's, and templates see them through
 * sch_hw: preferred float vector width as lanes, compute units as cores,
 * local memory as L1, the global memory cache as L2. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "targets/targets.h"

static const char *const isa_names[] = {"x86-64", "sse4.2", "avx2", "avx512"};

const char *tg_isa_name(tg_isa isa)
{
    return isa_names[isa];
}

bool tg_isa_parse(const char *s, tg_isa *out)
{
    for (int i = 0; i <= TG_ISA_AVX512; i++)
        if (!strcmp(s, isa_names[i])) {
            *out = (tg_isa)i;
            return true;
        }
    if (!strcmp(s, "generic") || !strcmp(s, "sse2")) {
        *out = TG_ISA_GENERIC;
        return true;
    }
    return false;
}

/* The host's widest ISA, before the cap. */
static tg_isa host_isa_raw(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return TG_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return TG_ISA_AVX2;
    if (__builtin_cpu_supports("sse4.2"))
        return TG_ISA_SSE42;
#endif
    return TG_ISA_GENERIC;
}

tg_isa tg_host_isa(void)
{
    tg_isa isa = host_isa_raw(), cap;
    const char *env = getenv("RELAY_TUNE_MAX_ISA");
    if (env && *env && tg_isa_parse(env, &cap) && cap < isa)
        isa = cap;
    return isa;
}

/* A CPU the table knows: its ISA, L1d / L2 per core and L3 (bytes), and its
 * FMA pipes (two on every core here: Zen 1's 128-bit and Zen 4's 256-bit
 * pipes take a wider FMA as two halves, so they still need two pipes' worth
 * of independent accumulators). */
typedef struct cpu_desc {
    const char *name;
    tg_isa isa;
    int64_t l1, l2, l3;
    int fma;
} cpu_desc;

#define K_ 1024LL
#define M_ (1024LL * 1024LL)
static const cpu_desc cpus[] = {
    {"x86-64", TG_ISA_GENERIC, 32 * K_, 256 * K_, 8 * M_, 2},
    {"x86-64-v2", TG_ISA_SSE42, 32 * K_, 256 * K_, 8 * M_, 2},
    {"x86-64-v3", TG_ISA_AVX2, 32 * K_, 256 * K_, 8 * M_, 2},
    {"x86-64-v4", TG_ISA_AVX512, 32 * K_, 1 * M_, 16 * M_, 2},
    {"nehalem", TG_ISA_SSE42, 32 * K_, 256 * K_, 8 * M_, 2},
    {"haswell", TG_ISA_AVX2, 32 * K_, 256 * K_, 8 * M_, 2},
    {"broadwell", TG_ISA_AVX2, 32 * K_, 256 * K_, 8 * M_, 2},
    {"skylake", TG_ISA_AVX2, 32 * K_, 256 * K_, 8 * M_, 2},
    {"alderlake", TG_ISA_AVX2, 48 * K_, 1280 * K_, 24 * M_, 2},
    {"skylake-avx512", TG_ISA_AVX512, 32 * K_, 1 * M_, 16 * M_, 2},
    {"cascadelake", TG_ISA_AVX512, 32 * K_, 1 * M_, 16 * M_, 2},
    {"cooperlake", TG_ISA_AVX512, 32 * K_, 1 * M_, 16 * M_, 2},
    {"icelake-server", TG_ISA_AVX512, 48 * K_, 1280 * K_, 32 * M_, 2},
    {"sapphirerapids", TG_ISA_AVX512, 48 * K_, 2 * M_, 64 * M_, 2},
    {"znver1", TG_ISA_AVX2, 32 * K_, 512 * K_, 8 * M_, 2},
    {"znver2", TG_ISA_AVX2, 32 * K_, 512 * K_, 16 * M_, 2},
    {"znver3", TG_ISA_AVX2, 32 * K_, 512 * K_, 32 * M_, 2},
    {"znver4", TG_ISA_AVX512, 32 * K_, 1 * M_, 32 * M_, 2},
    {"znver5", TG_ISA_AVX512, 48 * K_, 1 * M_, 32 * M_, 2},
};

static const cpu_desc *cpu_find(const char *name)
{
    for (size_t i = 0; i < sizeof cpus / sizeof *cpus; i++)
        if (!strcmp(cpus[i].name, name))
            return &cpus[i];
    return NULL;
}

/* The ISA of -march=NAME as the system compiler defines it, for names the
 * table lacks; false when the compiler rejects the name. */
static bool compiler_isa(const char *name, tg_isa *isa)
{
    const char *cc = getenv("RELAY_TUNE_CC");
    char cmd[256];
    /* name is checked to be [a-z0-9_-] by the caller, so it is safe here */
    snprintf(cmd, sizeof cmd, "%s -march=%s -dM -E -x c /dev/null 2>/dev/null", cc && *cc ? cc : "cc", name);
    FILE *p = popen(cmd, "r");
    if (!p)
        return false;
    bool avx512 = false, avx2 = false, fma = false, sse42 = false, any = false;
    char line[256];
    while (fgets(line, sizeof line, p)) {
        any = true;
        avx512 |= !strncmp(line, "#define __AVX512F__ ", 20);
        avx2 |= !strncmp(line, "#define __AVX2__ ", 17);
        fma |= !strncmp(line, "#define __FMA__ ", 16);
        sse42 |= !strncmp(line, "#define __SSE4_2__ ", 19);
    }
    if (pclose(p) != 0 || !any)
        return false;
    *isa = avx512 ? TG_ISA_AVX512 : avx2 && fma ? TG_ISA_AVX2 : sse42 ? TG_ISA_SSE42 : TG_ISA_GENERIC;
    return true;
}

/* A cache size in sysfs's form ("32K", "1024K", "32M"), or -1. */
static int64_t size_value(const char *s)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || v <= 0)
        return -1;
    switch (*end) {
    case 'K': case 'k': v *= K_; end++; break;
    case 'M': case 'm': v *= M_; end++; break;
    case 'G': case 'g': v *= 1024 * M_; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    return *end && *end != '\n' ? -1 : v;
}

/* The host's data caches from sysfs (cpu0), each left as it was when absent. */
static void host_caches(int64_t *l1, int64_t *l2, int64_t *l3)
{
    for (int i = 0; i < 8; i++) {
        char path[96], level[16] = "", type[32] = "", size[32] = "";
        const char *what[3] = {"level", "type", "size"};
        char *into[3] = {level, type, size};
        bool ok = true;
        for (int k = 0; k < 3 && ok; k++) {
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/%s", i, what[k]);
            FILE *f = fopen(path, "r");
            ok = f && fgets(into[k], 16, f);
            if (f)
                fclose(f);
        }
        if (!ok)
            break;
        if (!strncmp(type, "Instruction", 11))
            continue;
        int64_t v = size_value(size);
        if (v <= 0)
            continue;
        int lv = atoi(level);
        if (lv == 1)
            *l1 = v;
        else if (lv == 2)
            *l2 = v;
        else if (lv == 3)
            *l3 = v;
    }
}

/* The host's L1d, L2 and L3 (0 where sysfs does not say), read once. */
static int64_t host_l[3];

static void read_host_caches(void)
{
    host_caches(&host_l[0], &host_l[1], &host_l[2]);
}

static const int isa_lanes[] = {4, 4, 8, 16}, isa_vregs[] = {16, 16, 16, 32};

static void set_hw(tg_target *t)
{
    t->hw.lanes = isa_lanes[t->isa];
    t->hw.vregs = isa_vregs[t->isa];
    t->hw.cores = t->cores;
    t->hw.fma = t->fma;
    t->hw.fused_fma = t->isa >= TG_ISA_AVX2;
    t->hw.l1 = t->l1;
    t->hw.l2 = t->l2;
    t->hw.l3 = t->l3;
}

/* Flags that keep -march=native (or a wider -mcpu) from using more than the
 * planned ISA, and make gcc use the planned vector width. */
static const char *isa_cap_flags(tg_isa isa)
{
    switch (isa) {
    case TG_ISA_AVX512: return " -mprefer-vector-width=512";
    case TG_ISA_AVX2: return " -mno-avx512f -mprefer-vector-width=256";
    case TG_ISA_SSE42: return " -mno-avx";
    default: return " -mno-sse3";
    }
}

/* Reads "-name=value" into a size in bytes; false with a message. */
static bool size_opt(const char *v, size_t n, int64_t *out)
{
    char buf[32];
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, v, n);
    buf[n] = 0;
    int64_t s = size_value(buf);
    if (s < 1024 || s > 64 * 1024 * M_)
        return false;
    *out = s;
    return true;
}

/* One option of a cpu target; false with *why set. mcpu/isa_given record
 * what was said explicitly. */
static bool cpu_option(tg_target *t, const char *p, size_t k, char *mcpu, size_t mcpu_n, bool *isa_given,
                       const char **why)
{
    if (k > 7 && !strncmp(p, "-cores=", 7)) {
        char *end;
        long c = strtol(p + 7, &end, 10);
        if (end != p + k || c < 1 || c > 4096)
            return *why = "-cores needs a number from 1 to 4096", false;
        t->cores = (int)c;
    } else if (k > 6 && !strncmp(p, "-mcpu=", 6)) {
        if (k - 6 >= mcpu_n)
            return *why = "-mcpu takes a CPU name such as znver3", false;
        memcpy(mcpu, p + 6, k - 6);
        mcpu[k - 6] = 0;
        for (char *c = mcpu; *c; c++)
            if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_'))
                return *why = "-mcpu takes a CPU name such as znver3", false;
    } else if (k > 5 && !strncmp(p, "-isa=", 5)) {
        char buf[16];
        if (k - 5 >= sizeof buf)
            return *why = "-isa takes one of x86-64, sse4.2, avx2, avx512", false;
        memcpy(buf, p + 5, k - 5);
        buf[k - 5] = 0;
        if (!tg_isa_parse(buf, &t->isa))
            return *why = "-isa takes one of x86-64, sse4.2, avx2, avx512", false;
        *isa_given = true;
    } else if (k > 4 && p[0] == '-' && p[1] == 'l' && p[2] >= '1' && p[2] <= '3' && p[3] == '=') {
        int64_t *dst = p[2] == '1' ? &t->l1 : p[2] == '2' ? &t->l2 : &t->l3;
        if (!size_opt(p + 4, k - 4, dst))
            return *why = "-l1, -l2 and -l3 take a cache size such as 32K or 1M", false;
        t->cache_given[p[2] - '1'] = true;
    } else if (k == 6 && !strncmp(p, "-fma=", 5)) {
        if (p[5] < '1' || p[5] > '4')
            return *why = "-fma takes the FMA pipes of a core, 1 to 4", false;
        t->fma = p[5] - '0';
        t->fma_given = true;
    } else {
        return *why = "unknown cpu option (known: -mcpu=NAME, -isa=ISA, -cores=N, -l1=, -l2=, -l3=SIZE, -fma=N)",
               false;
    }
    return true;
}

/* Fills in what the options left open from -mcpu (the table, else the
 * compiler) or from the host; false with *why for an unknown -mcpu name or
 * an -isa wider than that CPU has. */
static bool cpu_resolve(tg_target *t, const char *mcpu, bool isa_given, const char **why)
{
    tg_isa isa = TG_ISA_GENERIC;
    int64_t l1 = 32 * K_, l2 = 256 * K_, l3 = 8 * M_;
    int fma = 2;
    bool host = !mcpu[0] || !strcmp(mcpu, "native");
    if (host) {
        isa = tg_host_isa();
        /* sysfs is read once per process: targets are parsed per task */
        static pthread_once_t once = PTHREAD_ONCE_INIT;
        pthread_once(&once, read_host_caches);
        if (host_l[0] > 0)
            l1 = host_l[0];
        if (host_l[1] > 0)
            l2 = host_l[1];
        if (host_l[2] > 0)
            l3 = host_l[2];
    } else {
        const cpu_desc *d = cpu_find(mcpu);
        if (d) {
            isa = d->isa;
            l1 = d->l1, l2 = d->l2, l3 = d->l3, fma = d->fma;
        } else if (!compiler_isa(mcpu, &isa)) {
            return *why = "the system compiler does not know this -mcpu name", false;
        }
    }
    if (isa_given && t->isa > isa && !host)
        return *why = "-isa is wider than this -mcpu has", false;
    if (!isa_given)
        t->isa = isa;
    if (!t->cache_given[0])
        t->l1 = l1;
    if (!t->cache_given[1])
        t->l2 = l2;
    if (!t->cache_given[2])
        t->l3 = l3;
    if (!t->fma_given)
        t->fma = fma;
    t->host = host;
    /* -isa without -mcpu on a host that lacks it: the ISA's x86-64 level */
    static const char *const levels[] = {"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"};
    const char *march = host ? "native" : mcpu;
    if (host && t->isa > tg_host_isa()) {
        march = levels[t->isa];
        t->host = false;
    }
    snprintf(t->march, sizeof t->march, "%s", march);
    return true;
}

/* Reads "-name=N" (a small non-negative index) at p[0..k); false when p is
 * not that option, *bad when its value is not an index. */
static bool index_opt(const char *p, size_t k, const char *name, int *out, bool *bad)
{
    size_t n = strlen(name);
    if (k <= n + 1 || strncmp(p, name, n) || p[n] != '=')
        return false;
    long v = 0;
    for (size_t i = n + 1; i < k; i++) {
        if (p[i] < '0' || p[i] > '9' || v > 1000) {
            *bad = true;
            return true;
        }
        v = v * 10 + (p[i] - '0');
    }
    *out = (int)v;
    return true;
}

/* The options of an opencl target after its name, then its device. */
static bool opencl_parse(const char *p, tg_target *t, const char **why)
{
    int platform = 0, device = 0, wg_reduce = -1, local_stage = -1;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t k = strcspn(p, " ");
        if (!k)
            break;
        bool bad = false;
        if (!index_opt(p, k, "-platform", &platform, &bad) && !index_opt(p, k, "-device", &device, &bad) &&
            !index_opt(p, k, "-wg-reduce", &wg_reduce, &bad) && !index_opt(p, k, "-local-stage", &local_stage, &bad))
            return *why = "unknown opencl option (known: -platform=N -device=M -wg-reduce=0|1 -local-stage=0|1)",
                   false;
        if (bad)
            return *why = "-platform and -device take an index (relay-tune targets lists them)", false;
        if (wg_reduce > 1)
            return *why = "-wg-reduce takes 0 or 1", false;
        if (local_stage > 1)
            return *why = "-local-stage takes 0 or 1", false;
        p += k;
    }
    if (!tg_cl_query(platform, device, &t->cl, why))
        return false;
    const tg_cl_device *d = &t->cl;
    t->kind = TG_OPENCL;
    snprintf(t->name, sizeof t->name, "opencl");
    t->cores = d->compute_units > 0 ? d->compute_units : 1;
    t->fma = 2;
    t->l1 = d->local_mem > 0 ? d->local_mem : 32 * 1024;
    t->l2 = d->global_cache > 0 ? d->global_cache : 256 * 1024;
    t->l3 = t->l2 * 4;
    t->host = false;
    t->hw.lanes = d->vec_float > 1 ? d->vec_float : 1;
    t->hw.vregs = 16;
    t->hw.cores = t->cores;
    t->hw.fma = t->fma;
    t->hw.l1 = t->l1;
    t->hw.l2 = t->l2;
    t->hw.l3 = t->l3;
    t->hw.parallel_min = 1; /* every nest spreads over the work-items */
    t->hw.wg_max = d->max_wg > 0 ? d->max_wg : 1; /* the device templates */
    for (int a = 0; a < 3; a++) /* the 2-D work-groups of dense_cl */
        t->hw.wg_axis_max[a] = d->wg_dims <= 0 ? 0 : a < d->wg_dims ? d->max_items[a] : 1;
    /* work-group reductions: where local memory is on chip; a cpu device's
     * is ordinary memory, and PoCL measured them slower (docs/opencl.md) */
    t->hw.wg_reduce = wg_reduce >= 0 ? wg_reduce == 1 : strcmp(d->type, "cpu") != 0;
    t->hw.local_stage = local_stage + 1; /* dense_cl's default of its knob local_stage */
    snprintf(t->cflags, sizeof t->cflags, "-cl-std=CL1.2");
    return true;
}

bool tg_target_parse(const char *text, tg_target *t, const char **why)
{
    memset(t, 0, sizeof *t);
    while (*text == ' ')
        text++;
    size_t n = strcspn(text, " ");
    if (n == 6 && !strncmp(text, "opencl", 6))
        return opencl_parse(text + n, t, why);
    if (n != 3 || strncmp(text, "cpu", 3)) {
        *why = "unknown target (this build knows: cpu, opencl)";
        return false;
    }
    t->kind = TG_CPU;
    snprintf(t->name, sizeof t->name, "cpu");
    long cpus_online = sysconf(_SC_NPROCESSORS_ONLN);
    t->cores = cpus_online > 0 ? (int)cpus_online : 1;
    char mcpu[48] = "";
    bool isa_given = false;
    for (const char *p = text + n; *p;) {
        while (*p == ' ')
            p++;
        size_t k = strcspn(p, " ");
        if (!k)
            break;
        if (!cpu_option(t, p, k, mcpu, sizeof mcpu, &isa_given, why))
            return false;
        p += k;
    }
    if (!cpu_resolve(t, mcpu, isa_given, why))
        return false;
    snprintf(t->cflags, sizeof t->cflags,
             "-std=c11 -O3 -march=%s%s -fopenmp -ffp-contract=fast -fno-math-errno -fno-trapping-math -fPIC -shared",
             t->march, isa_cap_flags(t->isa));
    set_hw(t);
    return true;
}

bool tg_target_runnable(const tg_target *t, const char **why)
{
    if (t->kind != TG_CPU)
        return true;
    if (t->isa > tg_host_isa()) {
        *why = "the host cannot execute this target's code (its ISA is wider than the host's); "
               "compile for it elsewhere or name a narrower -isa";
        return false;
    }
    return true;
}

void tg_target_features(const tg_target *t, su_buf *b)
{
    if (t->kind == TG_OPENCL) {
        su_buf_printf(b, "device %s; vendor %s; driver %s; %s", t->cl.name, t->cl.vendor, t->cl.driver,
                      t->cl.version);
        return;
    }
    static const char *const feats[] = {"", "sse4.2", "sse4.2 avx avx2 fma",
                                        "sse4.2 avx avx2 fma avx512f avx512bw avx512dq avx512vl"};
    su_buf_puts(b, feats[t->isa]);
}

void tg_target_print(const tg_target *t, su_buf *b)
{
    if (t->kind == TG_OPENCL) {
        const tg_cl_device *d = &t->cl;
        su_buf_printf(b, "device %s (%s, %s) of platform %d (%s): %s, driver %s\n"
                      "  %d compute units, work-groups of up to %lld (%d dims: %lld x %lld x %lld), "
                      "local memory %lldK, global memory %lldM (cache %lldK), float vectors of %d%s",
                      d->name, d->type, d->vendor, d->platform, d->platform_name, d->version, d->driver,
                      d->compute_units, (long long)d->max_wg, d->wg_dims, (long long)d->max_items[0],
                      (long long)d->max_items[1], (long long)d->max_items[2], (long long)(d->local_mem / K_),
                      (long long)(d->global_mem / M_), (long long)(d->global_cache / K_), d->vec_float,
                      d->fp64 ? ", fp64" : "");
        return;
    }
    su_buf_printf(b, "isa %s (%d float32 lanes, %d vector registers), %d FMA pipe%s, "
                  "L1d %lldK, L2 %lldK, L3 %lldK, %d core%s, -march=%s%s",
                  tg_isa_name(t->isa), t->hw.lanes, t->hw.vregs, t->fma, t->fma == 1 ? "" : "s",
                  (long long)(t->l1 / K_), (long long)(t->l2 / K_), (long long)(t->l3 / K_), t->cores,
                  t->cores == 1 ? "" : "s", t->march, t->host ? " (the host)" : "");
}
