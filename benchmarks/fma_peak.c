/* fma_peak.c — prints the host's FP32 FMA peak (bench_peak.c) for people or,
 * with --json, as one object for scripts: bench_e2e.py records it with its
 * results, so that every stored benchmark says what the host could do.
 *
 *   benchmarks/fma_peak [--threads T] [--seconds S] [--isa avx512|avx2|sse] [--json]
 *
 * Defaults: 2 threads (the benchmarks' count), 0.2 s a run, the widest ISA. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/bench_util.h"

static int usage(void)
{
    fprintf(stderr, "usage: fma_peak [--threads T] [--seconds S] [--isa avx512|avx2|sse] [--json]\n");
    return 2;
}

int main(int argc, char **argv)
{
    int threads = 2;
    double seconds = 0.2;
    const char *isa = bench_peak_isa();
    bool json = false;
    for (int i = 1; i < argc; i++) {
        bool v = i + 1 < argc;
        if (!strcmp(argv[i], "--threads") && v)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && v)
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--isa") && v)
            isa = argv[++i];
        else if (!strcmp(argv[i], "--json"))
            json = true;
        else
            return usage();
    }
    bench_peak p;
    char why[160];
    if (!bench_peak_measure_isa(isa, threads, seconds, &p, why, sizeof why)) {
        fprintf(stderr, "fma_peak: %s\n", why);
        return 1;
    }
    if (json) {
        printf("{\"isa\": \"%s\", \"lanes\": %d, \"chains\": %d, \"threads\": %d, \"gflops1\": %.3f, "
               "\"gflops\": %.3f, \"share\": %.3f}\n", p.isa, p.lanes, p.chains, p.threads, p.gflops1, p.gflops,
               p.share);
    } else {
        char line[256];
        bench_peak_describe(&p, line, sizeof line);
        printf("%s\n", line);
    }
    return 0;
}
