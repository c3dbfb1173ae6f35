/* gen_log.c — writes N valid JSON-lines log records for the shell tests:
 *   gen_log N [SEED] [TARGET]
 * Records cover several templates and workloads, a default config for each
 * workload, failures of every kind, a session, and non-ASCII messages. The
 * output depends only on the arguments. */
#include <stdlib.h>

#include "db/db.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: gen_log N [SEED] [TARGET]\n");
        return 2;
    }
    long n = atol(argv[1]), seed = argc > 2 ? atol(argv[2]) : 0;
    const char *target = argc > 3 ? argv[3] : "cpu -mcpu=skylake -cores=4";
    su_arena a;
    su_arena_init(&a);
    su_buf out = {0};
    for (long i = 0; i < n; i++) {
        long w = i % 6, s = seed + i;
        double cs[3];
        for (int j = 0; j < 3; j++)
            cs[j] = 1e-4 * (double)(1 + (s * 7919 + j * 104729) % 97);
        db_record r = {0};
        r.workload.key = su_arena_printf(&a, "%s|float32|data=1x%dx28x28|weight=%dx%dx3x3",
                                         w < 4 ? "conv2d_nchwc" : "dense", 16 << (w % 4), 16 << (w % 4),
                                         16 << (w % 4));
        r.workload.tmpl = w < 4 ? "conv2d_nchwc.x86" : "dense.x86";
        r.workload.args = su_arena_printf(&a, "{\"channels\":%ld,\"kernel\":[3,3]}", 16L << (w % 4));
        r.workload.flops = 2.0 * 28 * 28 * 9 * (double)(int)(16 << (w % 4)) * (double)(int)(16 << (w % 4));
        r.target = (db_target){target, "Intel(R) Xeon(R) Gold 6230", "avx2 avx512f fma", 4, "Linux 6.1"};
        r.config_index = s % 1000;
        r.config = su_arena_printf(&a, "{\"index\":%ld,\"entities\":[[\"tile_oc\",\"sp\",[-1,%ld,4]],"
                                       "[\"unroll\",\"ot\",%ld]]}", s % 1000, 1 + s % 8, s % 2 ? 16L : 0L);
        r.is_default = i < 6;
        r.costs = cs;
        r.ncosts = 3;
        if (s % 7 == 3) {
            r.error = (su_merr)(1 + s % (SU_MERR_COUNT - 1));
            r.error_msg = su_arena_printf(&a, "kernel %ld: «%s» failed\n  at line 3", s, su_merr_name(r.error));
            r.ncosts = 0;
        }
        r.counters = s % 2 ? "{\"cycles\":1000,\"instructions\":2500}" : "{}";
        r.build_time = 0.5 + (double)(s % 10) / 8;
        r.run_time = 0.01 * (double)(s % 5);
        r.tuner = s % 3 ? "xgb" : "random";
        r.session = "2f1c7a6e-8b1d-4c3a-9e5f-0123456789ab";
        r.model = "resnet18.relay";
        r.timestamp = 1700000000.0 + (double)s * 1.25;
        r.host = "builder-1";
        su_buf_clear(&out);
        db_log_format(&r, &out);
        fputs(su_buf_str(&out), stdout);
        su_arena_free(&a);
    }
    su_buf_free(&out);
    return 0;
}
