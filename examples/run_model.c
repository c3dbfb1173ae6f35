/* run_model.c — an example of the compiled-model ABI (relaytune_model.h):
 * links a model compiled by `relay-tune compile`, lists its inputs and
 * outputs, fills every float32 input with a ramp, runs the model and prints
 * the first values of each output and the time of a run.
 *
 *   relay-tune compile benchmarks/models/mlp.relay --random-params 1 -o mlp.so
 *   cc -Iinclude examples/run_model.c ./mlp.so -Wl,-rpath,'$ORIGIN' -o run_model
 *   ./run_model */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "relaytune_model.h"

static void print_shape(int ndim, const int64_t *shape)
{
    printf("(");
    for (int d = 0; d < ndim; d++)
        printf("%s%lld", d ? ", " : "", (long long)shape[d]);
    printf(")");
}

int main(void)
{
    if (rtm_abi_version() != RELAYTUNE_MODEL_ABI) {
        fprintf(stderr, "run_model: the model has ABI %d, this program %d\n", rtm_abi_version(), RELAYTUNE_MODEL_ABI);
        return 1;
    }
    rtm_model *m = rtm_create();
    if (!m) {
        fprintf(stderr, "run_model: out of memory\n");
        return 1;
    }
    for (int i = 0; i < rtm_num_inputs(); i++) {
        printf("input %d: %s %s ", i, rtm_input_name(i), rtm_input_dtype(i));
        print_shape(rtm_input_ndim(i), rtm_input_shape(i));
        printf("\n");
        if (!strcmp(rtm_input_dtype(i), "float32")) {
            float *x = rtm_input(m, i);
            size_t n = rtm_input_nbytes(i) / sizeof *x;
            for (size_t k = 0; k < n; k++)
                x[k] = (float)(k % 100) / 100.0f;
        }
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (rtm_run(m) != 0) {
        fprintf(stderr, "run_model: the model failed\n");
        rtm_destroy(m);
        return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    for (int i = 0; i < rtm_num_outputs(); i++) {
        printf("output %s: %s ", rtm_output_name(i), rtm_output_dtype(i));
        print_shape(rtm_output_ndim(i), rtm_output_shape(i));
        if (!strcmp(rtm_output_dtype(i), "float32")) {
            const float *y = rtm_output(m, i);
            size_t n = rtm_output_nbytes(i) / sizeof *y;
            printf(" =");
            for (size_t k = 0; k < n && k < 5; k++)
                printf(" %.6g", y[k]);
            if (n > 5)
                printf(" ...");
        }
        printf("\n");
    }
    printf("ran in %.3f ms; intermediates in %zu bytes\n",
           (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6, rtm_arena_bytes());
    rtm_destroy(m);
    return 0;
}
