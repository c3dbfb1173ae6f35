/* bench_db.c — the tuning database at scale (targets: >= 100,000 records/s
 * inserted in batches; best-config lookup < 1 ms with 1,000,000 records).
 * Fills a fresh file with RECORDS records (1,000 workloads, 2 targets,
 * realistic configs, 3 repeats, ~5% failures) in batches of BATCH, timing each
 * batch; reopens it (timing the open, quick_check included); then times
 * best-config lookups and top-10 lookups for random workloads. Reports
 * medians (and p99 for lookups).
 *
 * By default every record of a batch belongs to a random workload: the worst
 * case for the indexes, since each record lands on another page. With
 * --clustered a batch holds 1,000 consecutive measurements of each of a few
 * workloads, the way a tuner produces them (it tunes one task at a time).
 *   usage: bench_db [--clustered] [RECORDS [BATCH [FILE]]]   (default 1000000 10000, a temp file) */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

#define WORKLOADS 1000

static void key_of(int w, char *out, size_t n)
{
    snprintf(out, n, "conv2d_nchwc|float32|data=1x%dx%dx%d|weight=%dx%dx3x3|strides=1,1|padding=1,1,1,1", 16 + w % 50 * 16,
             7 << (w / 50 % 4), 7 << (w / 50 % 4), 16 + w / 200 * 16, 16 + w % 50 * 16);
}

int main(int argc, char **argv)
{
    bool clustered = argc > 1 && !strcmp(argv[1], "--clustered");
    if (clustered) {
        argc--;
        argv++;
    }
    long total = argc > 1 ? atol(argv[1]) : 1000000;
    long batch = argc > 2 ? atol(argv[2]) : 10000;
    char path[256];
    bool temp = argc <= 3;
    if (temp)
        snprintf(path, sizeof path, "/tmp/bench_db-%d.db", (int)getpid());
    else
        snprintf(path, sizeof path, "%s", argv[3]);
    if (total < 1 || batch < 1) {
        fprintf(stderr, "usage: bench_db [RECORDS [BATCH [FILE]]]\n");
        return 2;
    }
    su_buf err = {0};
    db *d = db_open(path, NULL, &err);
    if (!d) {
        fprintf(stderr, "%s\n", su_buf_str(&err));
        return 1;
    }
    char (*keys)[160] = malloc(WORKLOADS * sizeof *keys);
    for (int w = 0; w < WORKLOADS; w++)
        key_of(w, keys[w], sizeof keys[w]);
    static const db_target targets[2] = {
        {"cpu -mcpu=skylake-avx512 -cores=8", "Intel(R) Xeon(R) Gold 6230", "avx2 avx512f fma", 8, "Linux 6.1"},
        {"cpu -mcpu=znver3 -cores=16", "AMD EPYC 7763", "avx2 fma", 16, "Linux 6.1"},
    };
    db_record *recs = malloc((size_t)batch * sizeof *recs);
    double *costs = malloc((size_t)batch * 3 * sizeof *costs);
    long nbatches = (total + batch - 1) / batch;
    double *rates = malloc((size_t)nbatches * sizeof *rates), *cpu_rates = malloc((size_t)nbatches * sizeof *rates);
    su_arena a;
    su_arena_init(&a);
    double t_start = now();
    long done = 0;
    for (long b = 0; b < nbatches; b++) {
        long n = total - done < batch ? total - done : batch;
        for (long i = 0; i < n; i++) {
            long id = done + i;
            int w = clustered ? (int)(id / 1000 % WORKLOADS) : (int)(next() % WORKLOADS);
            db_record *r = &recs[i];
            memset(r, 0, sizeof *r);
            r->workload = (db_workload){keys[w], "conv2d_nchwc.x86", "{\"kernel\":[3,3]}", 1e9 + w * 1e6};
            r->target = targets[id % 2];
            r->config_index = (int64_t)(next() % 1000000);
            r->config = su_arena_printf(&a,
                                        "{\"index\":%lld,\"entities\":[[\"tile_ic\",\"sp\",[-1,%d]],"
                                        "[\"tile_oc\",\"sp\",[-1,%d]],[\"tile_ow\",\"sp\",[-1,%d]],"
                                        "[\"unroll_kw\",\"ot\",%s]]}",
                                        (long long)r->config_index, 1 << (int)(next() % 5), 1 << (int)(next() % 5),
                                        1 + (int)(next() % 8), next() % 2 ? "true" : "false");
            r->is_default = r->config_index == 0;
            double base = 1e-4 * (double)(1 + next() % 1000);
            for (int j = 0; j < 3; j++)
                costs[i * 3 + j] = base * (1 + (double)(next() % 100) * 1e-4);
            r->costs = &costs[i * 3];
            r->ncosts = 3;
            if (next() % 20 == 0) {
                r->error = SU_MERR_COMPILE_ERROR;
                r->error_msg = "error: expected ';'";
                r->ncosts = 0;
            }
            r->counters = "{}";
            r->build_time = 0.3;
            r->run_time = 0.01;
            r->tuner = "xgb";
            r->timestamp = 1700000000.0 + (double)id * 0.01;
            r->host = "bench";
        }
        double t0 = now(), c0 = cpu();
        db_counts c = {0};
        if (!db_add_records(d, recs, (size_t)n, &c, NULL, NULL)) {
            fprintf(stderr, "%s\n", db_errmsg(d));
            return 1;
        }
        rates[b] = (double)n / (now() - t0);
        cpu_rates[b] = (double)n / (cpu() - c0);
        done += n;
        su_arena_free(&a);
    }
    double fill = now() - t_start;
    db_close(d);
    double t0 = now();
    d = db_open(path, NULL, &err);
    double open_time = now() - t0;
    if (!d) {
        fprintf(stderr, "%s\n", su_buf_str(&err));
        return 1;
    }
    const int lookups = 10000;
    double *lat = malloc(lookups * sizeof *lat), *lat10 = malloc(lookups * sizeof *lat10);
    int found = 0;
    for (int i = 0; i < lookups; i++) {
        int w = (int)(next() % WORKLOADS);
        db_record best;
        double s = now();
        int rc = db_best(d, keys[w], targets[i % 2].name, &a, &best);
        lat[i] = now() - s;
        found += rc == 1;
        db_record *top;
        size_t n;
        s = now();
        db_top_k(d, keys[w], targets[i % 2].name, 10, &a, &top, &n);
        lat10[i] = now() - s;
        su_arena_free(&a);
    }
    qsort(rates, (size_t)nbatches, sizeof *rates, cmp);
    qsort(cpu_rates, (size_t)nbatches, sizeof *rates, cmp);
    qsort(lat, lookups, sizeof *lat, cmp);
    qsort(lat10, lookups, sizeof *lat10, cmp);
    db_stats st;
    db_stats_get(d, &st);
    printf("scenario: %s\n", clustered ? "clustered (1000 consecutive records per workload, as a tuner writes)"
                                        : "random (each record of a batch of another workload: worst case)");
    printf("database: %s, %lld records (%lld workloads, %lld targets), %.1f MiB\n", path, (long long)st.records,
           (long long)st.workloads, (long long)st.targets, (double)st.file_bytes / (1 << 20));
    printf("insert: %ld batches of %ld: median %.0f records/s (min %.0f, max %.0f); whole fill %.1f s = %.0f "
           "records/s (target >= 100000)\n",
           nbatches, batch, rates[nbatches / 2], rates[0], rates[nbatches - 1], fill, (double)total / fill);
    printf("insert, per CPU second of this process (what the rate is on an idle core): median %.0f records/s\n",
           cpu_rates[nbatches / 2]);
    printf("open with quick_check: %.3f s\n", open_time);
    printf("best lookup: %d lookups (%d found): median %.1f us, p99 %.1f us (target < 1 ms)\n", lookups, found,
           lat[lookups / 2] * 1e6, lat[lookups * 99 / 100] * 1e6);
    printf("top-10 lookup: median %.1f us, p99 %.1f us\n", lat10[lookups / 2] * 1e6, lat10[lookups * 99 / 100] * 1e6);
    db_close(d);
    if (temp) {
        char side[300];
        unlink(path);
        snprintf(side, sizeof side, "%s-wal", path);
        unlink(side);
        snprintf(side, sizeof side, "%s-shm", path);
        unlink(side);
    }
    free(keys);
    free(recs);
    free(costs);
    free(rates);
    free(cpu_rates);
    free(lat);
    free(lat10);
    su_buf_free(&err);
    return 0;
}
