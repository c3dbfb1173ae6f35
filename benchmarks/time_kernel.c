/* time_kernel.c — times one generated kernel on random buffers, for the
 * per-layer comparisons of docs/winograd.md: built together with the C that
 * `relay-tune lower MODEL --task N --emit c` prints, its entry point named by
 * -DKERNEL=kernel_<hash>:
 *
 *   cc $(target's cflags) -DKERNEL=kernel_ab12... time_kernel.c k.c -o k -lm
 *   ./k CALLS FLOATS0 FLOATS1 ...     (one size per argument, outputs last)
 *
 * Prints the fastest and the median of CALLS calls after three warm-up calls
 * (the fastest is the steadier reading on a shared host). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int KERNEL(void *const *args);

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int calls = argc > 1 ? atoi(argv[1]) : 0, nargs = argc - 2;
    if (calls < 1 || calls > 100000 || nargs < 1 || nargs > 32) {
        fprintf(stderr, "usage: %s CALLS FLOATS0 FLOATS1 ... (1 to 32 buffers)\n", argv[0]);
        return 2;
    }
    void *args[32];
    for (int i = 0; i < nargs; i++) {
        long n = atol(argv[i + 2]);
        float *p = aligned_alloc(64, ((size_t)(n > 0 ? n : 1) * sizeof *p + 63) / 64 * 64);
        if (!p)
            return 1;
        for (long j = 0; j < n; j++)
            p[j] = (float)rand() / (float)RAND_MAX - 0.5f;
        args[i] = p;
    }
    double *t = malloc(sizeof *t * (size_t)calls);
    for (int i = 0; i < 3; i++)
        if (KERNEL(args) != 0)
            return 1;
    for (int i = 0; i < calls; i++) {
        double a = now();
        KERNEL(args);
        t[i] = now() - a;
    }
    qsort(t, (size_t)calls, sizeof *t, by_value);
    printf("min %.3f ms  median %.3f ms\n", t[0] * 1e3, t[calls / 2] * 1e3);
    free(t);
    for (int i = 0; i < nargs; i++)
        free(args[i]);
    return 0;
}
