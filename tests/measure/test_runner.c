/* test_runner.c — the measurement runner against deliberately good and
 * broken candidates compiled here with the system compiler: a correct
 * kernel is timed; a wrong answer, a crash, a hang, a missing entry and an
 * unloadable object each become their error code; OpenMP works in the child
 * even after the tool itself has used OpenMP; PAPI counters are read where
 * the host has them and reported missing (with the reason) where not. */
#include <omp.h>
#include <string.h>
#include <unistd.h>

#include "measure/measure.h"
#include "tests/tap.h"

static char dir[256];

/* Compiles C source into dir/name.so; false when the compiler failed. */
static bool build(const char *name, const char *src)
{
    char c[512], so[512], cmd[2048];
    snprintf(c, sizeof c, "%s/%s.c", dir, name);
    snprintf(so, sizeof so, "%s/%s.so", dir, name);
    FILE *f = fopen(c, "w");
    if (!f)
        return false;
    fputs(src, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "cc -O2 -fopenmp -shared -fPIC -o %s %s 2>/dev/null", so, c);
    return system(cmd) == 0;
}

static const char *so_path(const char *name)
{
    static char p[512];
    snprintf(p, sizeof p, "%s/%s.so", dir, name);
    return p;
}

static const char *ADD = "int add(void *const *a) { const float *x = a[0], *y = a[1]; float *z = a[2];\n"
                         "  for (int i = 0; i < 4096; i++) z[i] = x[i] + y[i]; return 0; }\n";
static const char *WRONG = "int add(void *const *a) { const float *x = a[0]; float *z = a[2];\n"
                           "  for (int i = 0; i < 4096; i++) z[i] = x[i]; return 0; }\n";
static const char *CRASH = "int add(void *const *a) { volatile int *p = 0; return *p; }\n";
static const char *HANG = "int add(void *const *a) { volatile int x = 1; while (x) {} return 0; }\n";
static const char *WRITES_INPUT = "int add(void *const *a) { float *x = a[0]; x[0] = 1; return 0; }\n";
/* a cold first call (5 ms, as when a wrapper packs weights), then 1 ms a call */
static const char *SLOW_FIRST = "#include <time.h>\n"
                                "static void spin(double ms) { struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);\n"
                                "  do clock_gettime(CLOCK_MONOTONIC, &b);\n"
                                "  while ((b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) * 1e-6 < ms); }\n"
                                "static int calls;\n"
                                "int add(void *const *a) { const float *x = a[0], *y = a[1]; float *z = a[2];\n"
                                "  spin(calls++ ? 1 : 5);\n"
                                "  for (int i = 0; i < 4096; i++) z[i] = x[i] + y[i]; return 0; }\n";
static const char *OMP = "#include <omp.h>\n"
                         "int add(void *const *a) { const float *x = a[0], *y = a[1]; float *z = a[2];\n"
                         "  #pragma omp parallel for\n"
                         "  for (int i = 0; i < 4096; i++) z[i] = x[i] + y[i]; return 0; }\n";

int main(void)
{
    su_buf err = {0};
    ms_runner *r = ms_runner_start(&err);
    ok(r != NULL, "runner starts (%s)", su_buf_str(&err));
    if (!r)
        return tap_done();
    /* the tool may use OpenMP after the runner was forked */
    int threads = 0;
#pragma omp parallel
#pragma omp atomic
    threads++;
    ok(threads >= 1, "the parent ran an OpenMP region (%d threads)", threads);

    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(dir, sizeof dir, "%s/rt-measure-XXXXXX", tmp);
    ok(mkdtemp(dir) != NULL, "temporary directory");
    ok(build("add", ADD) && build("wrong", WRONG) && build("crash", CRASH) && build("hang", HANG) &&
           build("writes_input", WRITES_INPUT) && build("omp", OMP) && build("slow_first", SLOW_FIRST),
       "candidates compile");

    su_arena a;
    su_arena_init(&a);
    int64_t shape[1] = {4096};
    ir_tensor *x = ir_tensor_new(&a, IR_FLOAT32, 1, shape), *y = ir_tensor_new(&a, IR_FLOAT32, 1, shape);
    ir_tensor *z = ir_tensor_new(&a, IR_FLOAT32, 1, shape);
    for (int i = 0; i < 4096; i++) {
        ((float *)x->data)[i] = (float)i * 0.5f;
        ((float *)y->data)[i] = 1.0f - (float)i;
        ((float *)z->data)[i] = ((float *)x->data)[i] + ((float *)y->data)[i];
    }
    const ir_tensor *in[2] = {x, y}, *out[1] = {z};
    ms_task_data *td = ms_task_data_create(NULL, 2, in, 1, out, 1e-5, 1e-6, &err);
    ok(td != NULL, "task data written (%s)", su_buf_str(&err));

    ms_run_options o = ms_run_defaults();
    o.repeat = 5;
    o.min_repeat_ms = 2;
    o.flush_cache = true;
    o.nevents = 2;
    o.events[0] = "PAPI_TOT_CYC";
    o.events[1] = "NOT_AN_EVENT";
    ms_result res;
    ok(ms_runner_measure(r, td, so_path("add"), "add", &o, &res), "measure a correct kernel");
    ok(res.error == SU_MERR_NONE && res.ncosts == 5 && res.mean > 0 && res.number >= 1,
       "correct kernel: 5 costs, mean %.3g s, number %d (%s)", res.mean, res.number, res.msg);
    ok(res.costs[0] * res.number * 1e3 >= 1.0, "min_repeat_ms grows `number` so a repeat lasts ~2 ms");
    ok(res.counters.nmissing >= 1 && !strcmp(res.counters.missing[res.counters.nmissing - 1], "NOT_AN_EVENT") &&
           res.counters.why[0],
       "an unknown counter is reported missing, with the reason: %s", res.counters.why);
    bool has_cycles = res.counters.n == 1 && res.counters.values[0] > 0;
    bool no_cycles = res.counters.nmissing == 2 && !strcmp(res.counters.missing[0], "PAPI_TOT_CYC");
    ok(has_cycles || no_cycles, "PAPI_TOT_CYC is %s", has_cycles ? "counted" : "reported missing on this host");

    ok(ms_runner_measure(r, td, so_path("omp"), "add", &o, &res) && res.error == SU_MERR_NONE,
       "an OpenMP kernel runs in the child after the parent used OpenMP (%s)", res.msg);

    /* passes are sized from a warm call: sized from the cold first call
     * (5 times as long), the first pass would last 4 ms of 20 and be
     * thrown away. Up to 3 tries: a loaded host can stretch the warm call */
    o = ms_run_defaults();
    o.min_repeat_ms = 20;
    bool sized = false, long_enough = true;
    for (int k = 0; k < 3 && !sized; k++) {
        ms_runner_measure(r, td, so_path("slow_first"), "add", &o, &res);
        sized = res.error == SU_MERR_NONE && res.thrown == 0;
        for (int i = 0; i < res.ncosts; i++)
            long_enough &= res.costs[i] * res.number * 1e3 >= 20;
    }
    ok(sized, "a cold first call does not size the passes: none thrown away (number %d, %d thrown)", res.number,
       res.thrown);
    ok(long_enough && res.ncosts == 3, "each of the 3 repeats lasts min_repeat_ms (%d runs of %.3g ms)", res.number,
       res.mean * 1e3);

    o = ms_run_defaults();
    o.timeout_s = 1;
    ms_runner_measure(r, td, so_path("wrong"), "add", &o, &res);
    ok(res.error == SU_MERR_WRONG_ANSWER && strstr(res.msg, "got") && res.ncosts == 0,
       "a wrong answer is an error record: %s", res.msg);
    ms_runner_measure(r, td, so_path("crash"), "add", &o, &res);
    ok(res.error == SU_MERR_RUNTIME_ERROR && strstr(res.msg, "SIGSEGV"), "a crash is an error record: %s", res.msg);
    ms_runner_measure(r, td, so_path("writes_input"), "add", &o, &res);
    ok(res.error == SU_MERR_RUNTIME_ERROR, "a kernel writing its input crashes on read-only data: %s", res.msg);
    int64_t t0 = ms_clock_ns();
    ms_runner_measure(r, td, so_path("hang"), "add", &o, &res);
    double took = (double)(ms_clock_ns() - t0) * 1e-9;
    ok(res.error == SU_MERR_RUN_TIMEOUT && took < 5, "a hang is killed at the time limit (%.2f s): %s", took, res.msg);
    ms_runner_measure(r, td, so_path("add"), "no_such_entry", &o, &res);
    ok(res.error == SU_MERR_COMPILE_ERROR && strstr(res.msg, "no_such_entry"), "a missing entry: %s", res.msg);
    ms_runner_measure(r, td, "/nonexistent/x.so", "add", &o, &res);
    ok(res.error == SU_MERR_COMPILE_ERROR && strstr(res.msg, "cannot load"), "an unloadable object: %s", res.msg);
    ok(ms_runner_measure(r, td, so_path("add"), "add", &o, &res) && res.error == SU_MERR_NONE,
       "the runner still works after all that");

    ms_task_data_free(td);
    ms_runner_stop(r);
    su_arena_free(&a);
    su_buf_free(&err);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ok(system(cmd) == 0, "clean up");
    return tap_done();
}
