/* bench_parse.c — how long parsing and type-checking a model takes (target for
 * resnet50: under 20 ms). Runs the whole front end (read, lex, parse, infer)
 * repeatedly and reports the median and the minimum, plus printing time.
 *   usage: bench_parse MODEL.relay [REPEATS] */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/ir.h"
#include "benchmarks/bench_util.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_parse MODEL.relay [REPEATS]\n");
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 50;
    if (reps < 1)
        reps = 1;
    double *parse_t = malloc(sizeof(double) * (size_t)reps), *print_t = malloc(sizeof(double) * (size_t)reps);
    size_t nodes = 0, bytes = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        size_t len;
        char *text = su_read_file(argv[1], &len);
        if (!text) {
            perror(argv[1]);
            return 1;
        }
        su_diags d = {0};
        ir_module *m = ir_parse(argv[1], text, len, &d);
        if (!m || !ir_infer_types(m, &d)) {
            su_diags_print(stderr, &d);
            return 1;
        }
        double t1 = bench_now();
        su_buf b = {0};
        ir_print_module(&b, m, NULL);
        double t2 = bench_now();
        parse_t[r] = t1 - t0;
        print_t[r] = t2 - t1;
        nodes = m->next_id;
        bytes = len;
        su_buf_free(&b);
        ir_module_free(m);
        su_diags_free(&d);
        free(text);
    }
    qsort(parse_t, (size_t)reps, sizeof *parse_t, bench_cmp_double);
    qsort(print_t, (size_t)reps, sizeof *print_t, bench_cmp_double);
    printf("model: %s (%zu bytes, %zu nodes), %d runs\n", argv[1], bytes, nodes, reps);
    printf("read+parse+typecheck: median %.3f ms, min %.3f ms (target < 20 ms)\n", parse_t[reps / 2] * 1e3,
           parse_t[0] * 1e3);
    printf("print: median %.3f ms\n", print_t[reps / 2] * 1e3);
    free(parse_t);
    free(print_t);
    return 0;
}
