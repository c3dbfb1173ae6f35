/* test_peak.c — the FMA peak probe (benchmarks/bench_peak.c): the ISA it
 * picks is the one the kernel's CPU flags (/proc/cpuinfo) say is the
 * widest, every ISA the host runs gives a positive, finite peak on one and
 * on two threads, and the ones it cannot run, unknown names and bad thread
 * counts are refused with a reason. Timings are never compared with a
 * threshold: a busy machine is slow, not wrong. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/bench_util.h"
#include "tests/tap.h"

/* Whether the first "flags" line of /proc/cpuinfo has the flag; -1 when
 * the file cannot be read. */
static int cpu_flag(const char *flag)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return -1;
    char line[8192];
    int found = -1;
    while (found < 0 && fgets(line, sizeof line, f))
        if (!strncmp(line, "flags", 5)) {
            found = 0;
            for (char *t = strtok(strchr(line, ':') + 1, " \t\n"); t && !found; t = strtok(NULL, " \t\n"))
                found = !strcmp(t, flag);
        }
    fclose(f);
    return found;
}

/* The ISA the flags say the probe should pick. */
static const char *expected_isa(void)
{
    if (cpu_flag("avx512f") == 1)
        return "avx512";
    return cpu_flag("avx2") == 1 && cpu_flag("fma") == 1 ? "avx2" : "sse";
}

static int lanes_of(const char *isa)
{
    return !strcmp(isa, "avx512") ? 16 : !strcmp(isa, "avx2") ? 8 : 4;
}

int main(void)
{
    char why[160] = "";
    bench_peak p;
    if (cpu_flag("sse2") < 0) {
        printf("1..0 # SKIP /proc/cpuinfo cannot be read: nothing to compare the probe's ISA with\n");
        return 0;
    }
    const char *want = expected_isa();
    is_str(bench_peak_isa(), want, "the widest ISA is the one /proc/cpuinfo's flags say");

    ok(bench_peak_measure(1, 0.02, &p, why, sizeof why), "one thread: measured (%s)", why);
    is_str(p.isa, want, "one thread: the peak is of the widest ISA");
    ok(p.gflops1 > 0 && isfinite(p.gflops1) && p.gflops == p.gflops1 && p.threads == 1,
       "one thread: a positive peak (%.1f GFLOP/s)", p.gflops1);
    is_int(p.lanes, lanes_of(want), "one thread: the ISA's vector width");
    ok(p.chains >= 12, "at least 12 independent chains (%d)", p.chains);

    ok(bench_peak_measure(2, 0.02, &p, why, sizeof why), "two threads: measured (%s)", why);
    ok(p.gflops1 > 0 && p.gflops > 0 && isfinite(p.gflops) && p.threads == 2,
       "two threads: positive peaks (%.1f on 1, %.1f on 2 GFLOP/s)", p.gflops1, p.gflops);
    ok(p.share > 0 && p.share <= 1, "two threads: the share of time on a CPU is a fraction (%.2f)", p.share);
    char line[256];
    bench_peak_describe(&p, line, sizeof line);
    ok(strstr(line, want) && strstr(line, "GFLOP/s"), "the header line names the ISA and the peak: %s", line);

    /* every ISA: the ones the flags allow run, the others are refused */
    const char *isas[] = {"avx512", "avx2", "sse"};
    int allowed[] = {cpu_flag("avx512f") == 1, cpu_flag("avx2") == 1 && cpu_flag("fma") == 1, 1};
    for (int i = 0; i < 3; i++) {
        bool got = bench_peak_measure_isa(isas[i], 1, 0.02, &p, why, sizeof why);
        if (allowed[i])
            ok(got && p.gflops1 > 0 && !strcmp(p.isa, isas[i]) && p.lanes == lanes_of(isas[i]),
               "%s: the host runs it, a positive peak (%.1f GFLOP/s)", isas[i], got ? p.gflops1 : 0.0);
        else
            ok(!got && strstr(why, "cannot run"), "%s: the host cannot run it, refused (%s)", isas[i], why);
    }
    ok(!bench_peak_measure_isa("neon", 1, 0.02, &p, why, sizeof why) && strstr(why, "unknown ISA"),
       "an unknown ISA is refused (%s)", why);
    ok(!bench_peak_measure(0, 0.02, &p, why, sizeof why) && strstr(why, "threads"), "0 threads are refused (%s)",
       why);
    ok(!bench_peak_measure(1, 0, &p, why, sizeof why), "0 seconds are refused");
    return tap_done();
}
