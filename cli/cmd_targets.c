/* cmd_targets.c — relay-tune targets [TARGET ...]: what this host can run
 * and what a target string describes (the ISA and caches templates plan
 * for, the compiler flags), so that a user sees which plan a string gets
 * before tuning with it. Exit 0, or 1 for a bad target string. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: relay-tune targets [TARGET ...]\n"
               "  Lists the targets of this host (cpu and its OpenCL devices) and\n"
               "  describes each TARGET string given, e.g. 'cpu -mcpu=znver3 -cores=2':\n"
               "  -mcpu=NAME (a CPU the system compiler knows), -isa=x86-64|sse4.2|avx2|avx512,\n"
               "  -cores=N, -l1=SIZE -l2=SIZE -l3=SIZE (32K, 1M), -fma=N (FMA pipes of a core);\n"
               "  'opencl' (the first device) or 'opencl -platform=N -device=M': its limits.\n"
               "  RELAY_TUNE_MAX_ISA=avx2 makes the host behave as one without AVX-512.\n");
}

static int describe(const char *target)
{
    char *d = rt_target_describe(target, stderr);
    if (!d)
        return 1;
    printf("%s:\n  %s", target, d);
    free(d);
    return 0;
}

int cli_cmd_targets(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-') {
            cli_error("targets: unknown option '%s'", argv[i]);
            usage(stderr);
            return 2;
        }
    if (argc > 1) {
        int rc = 0;
        for (int i = 1; i < argc; i++)
            rc |= describe(argv[i]);
        return rc;
    }
    printf("host ISA: %s\n", rt_host_isa());
    int rc = describe("cpu");
    char *cl = rt_opencl_devices(NULL);
    fputs(cl, stdout);
    free(cl);
    return rc;
}
