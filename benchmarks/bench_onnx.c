/* bench_onnx.c — how long importing an ONNX model takes (issue 15's target
 * for resnet50, a ~100 MB file: under 1 s): the whole import (read the file,
 * unpack the protobuf, convert the tensors and nodes, type-check) repeated,
 * with the median and the minimum reported.
 *   usage: bench_onnx MODEL.onnx [REPEATS]   (make bench-onnx ONNX_MODEL=...) */
#include <stdlib.h>
#include <time.h>

#include "onnx/onnx.h"
#include "benchmarks/bench_util.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_onnx MODEL.onnx [REPEATS]\n");
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (reps < 1)
        reps = 1;
    double *t = malloc(sizeof *t * (size_t)reps);
    for (int r = 0; r < reps; r++) {
        su_diags d = {0};
        double t0 = bench_now();
        ir_module *m = ox_import_file(argv[1], &d);
        t[r] = bench_now() - t0;
        if (!m) {
            su_diags_print(stderr, &d);
            return 1;
        }
        ir_module_free(m);
        su_diags_free(&d);
    }
    qsort(t, (size_t)reps, sizeof *t, bench_cmp_double);
    printf("%s: import median %.3f s, min %.3f s over %d runs\n", argv[1], t[reps / 2], t[0], reps);
    free(t);
    return 0;
}
