/* test_wire.c — the messages of tuning on MPI (dist/wire.c), without MPI:
 * a task's function as text rebuilds the same task (and a text claiming
 * another workload is refused); a hello, a share and its results read back
 * field for field, costs exact to the bit, a uint64 seed whole, a failed
 * measurement's NaN as 0; malformed messages are refused with a reason,
 * never half read. */
#include <math.h>
#include <string.h>

#include "api/api.h"
#include "tests/tap.h"

/* one conv2d: a task with a data input and a weight */
static const char *MODEL = "#[version = \"0.0.5\"]\n"
                           "def @main(%x: Tensor[(1, 4, 4, 4), float32], %w: Tensor[(8, 4, 3, 3), float32]) {\n"
                           "  nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3])\n"
                           "}\n";

static void test_task_text(const tun_task *t)
{
    char *text = tun_task_text(t);
    tun_tasks back;
    ir_module *m = tun_task_from_text(text, t->key, t->flops, &back);
    ok(m && back.len == 1, "a task's function as text rebuilds one task");
    if (m) {
        is_str(back.items[0].key, t->key, "with the same workload key");
        is_str(back.items[0].hash, t->hash, "and hash");
        is_int(back.items[0].nparams, t->nparams, "and parameters");
        is_int(back.items[0].flops, t->flops, "and the FLOPs given");
        tun_tasks_free(&back);
        ir_module_free(m);
    }
    ok(!tun_task_from_text(text, "conv2d_nchw|float32|another", t->flops, &back) && back.len == 0,
       "a text claiming another workload key is refused");
    ok(!tun_task_from_text("def @main(", t->key, t->flops, &back), "a text that does not parse is refused");
    free(text);
}

static void test_hello(void)
{
    dist_hello h = {"node7", 4242, {"cpu -cores=2", "AMD EPYC", "avx2 fma", 2, "Linux 6"}, NULL};
    char *text = dist_hello_json(&h);
    su_arena a;
    su_arena_init(&a);
    su_buf err = {0};
    dist_hello b;
    bool read = dist_hello_parse(text, &a, &b, &err);
    ok(read, "a hello reads back (%s)", su_buf_str(&err));
    is_str(b.host, "node7", "its host");
    is_int(b.pid, 4242, "its pid");
    ok(!strcmp(b.target.name, "cpu -cores=2") && !strcmp(b.target.isa, "avx2 fma") && b.target.cores == 2 &&
           !strcmp(b.target.cpu, "AMD EPYC") && !strcmp(b.target.os, "Linux 6") && !b.error,
       "its target's description, and no error");
    free(text);
    h.error = "this host cannot run target 'cpu -isa=avx512'";
    text = dist_hello_json(&h);
    ok(dist_hello_parse(text, &a, &b, &err) && b.error && strstr(b.error, "cannot run"), "a hello with its error");
    free(text);
    su_buf_clear(&err);
    read = dist_hello_parse("{\"host\":\"x\",\"pid\":1}", &a, &b, &err);
    ok(!read && strstr(su_buf_str(&err), "target"), "a hello without a target is refused: %s", su_buf_str(&err));
    su_buf_clear(&err);
    read = dist_hello_parse("[1,2]", &a, &b, &err);
    ok(!read && strstr(su_buf_str(&err), "not a JSON object"), "a hello that is not an object is refused: %s",
       su_buf_str(&err));
    su_buf_free(&err);
    su_arena_free(&a);
}

static void test_work(const tun_space *s)
{
    sch_config c[2];
    tun_config_decode(s, s->default_index, &c[0]);
    tun_config_decode(s, s->size - 1, &c[1]);
    char *j0 = tun_config_record_json(s, &c[0]), *j1 = tun_config_record_json(s, &c[1]);
    const char *cfgs[2] = {j0, j1};
    char *func = tun_task_text(s->task);
    ms_run_options run = ms_run_defaults();
    run.repeat = 5, run.min_repeat_ms = 7, run.timeout_s = 2.5, run.flush_cache = true;
    run.events[run.nevents++] = "PAPI_TOT_CYC";
    dist_work w = {77, s->task->key, func, s->task->flops, s->task->nparams, s->task->param_const,
                   UINT64_C(0x8000000000000005), 2, cfgs, {0, 3, 60}, run};
    char *text = dist_work_json(&w);
    su_arena a;
    su_arena_init(&a);
    su_buf err = {0};
    dist_work b;
    bool read = dist_work_parse(text, &a, &b, &err);
    ok(read, "a share reads back (%s)", su_buf_str(&err));
    is_int(b.job, 77, "its job");
    is_str(b.key, s->task->key, "its task's key");
    is_str(b.func, func, "its task's function");
    ok(b.seed == UINT64_C(0x8000000000000005), "its seed, all 64 bits");
    ok(b.nparams == s->task->nparams && !b.param_const[0] && b.param_const[1], "which parameters are weights");
    ok(b.n == 2 && !strcmp(b.configs[0], j0) && !strcmp(b.configs[1], j1), "its configs as record JSON");
    ok(b.run.repeat == 5 && b.run.min_repeat_ms == 7 && b.run.timeout_s == 2.5 && b.run.flush_cache &&
           b.run.nevents == 1 && !strcmp(b.run.events[0], "PAPI_TOT_CYC") && b.build.per_unit == 3 &&
           b.build.timeout_s == 60 && b.build.jobs == 0,
       "its run and build options");
    sch_config back;
    su_buf why = {0};
    ok(tun_config_from_record(s, b.configs[1], &back, &why) == TUN_CFG_OK && tun_config_encode(s, &back) == s->size - 1,
       "a config read back against the space is the same index");
    sch_config_free(&back);
    su_buf_free(&why);
    free(text);
    w.func = NULL;
    text = dist_work_json(&w);
    ok(dist_work_parse(text, &a, &b, &err) && !b.func, "a share to a rank that has the task carries no function");
    free(text);
    w.run.repeat = MS_MAX_REPEAT + 1;
    text = dist_work_json(&w);
    su_buf_clear(&err);
    read = dist_work_parse(text, &a, &b, &err);
    ok(!read && strstr(su_buf_str(&err), "out of range"), "a share asking for too many repeats is refused: %s",
       su_buf_str(&err));
    free(text);
    su_buf_clear(&err);
    read = dist_work_parse("{\"job\":1}", &a, &b, &err);
    ok(!read && err.len, "a share without its task is refused: %s", su_buf_str(&err));
    su_buf_free(&err);
    su_arena_free(&a);
    free(func);
    free(j0);
    free(j1);
    sch_config_free(&c[0]);
    sch_config_free(&c[1]);
}

static void test_results(void)
{
    tun_result r[2] = {0};
    r[0].index = 12;
    r[0].ncosts = 3;
    r[0].costs[0] = 1.2345678901234567e-5, r[0].costs[1] = 0.1 + 0.2, r[0].costs[2] = 3e-9;
    r[0].mean = (r[0].costs[0] + r[0].costs[1] + r[0].costs[2]) / 3;
    r[0].msg = su_strdup("counters unavailable: \"quoted\"\nline two \xc3\xa9");
    r[0].counters.n = 1;
    snprintf(r[0].counters.names[0], MS_NAME, "PAPI_TOT_CYC");
    r[0].counters.values[0] = 123456789012LL;
    r[0].counters.nmissing = 1;
    snprintf(r[0].counters.missing[0], MS_NAME, "PAPI_L1_DCM");
    snprintf(r[0].counters.why, MS_MSG, "no such event here");
    r[0].build_time = 0.25, r[0].run_time = 1.5, r[0].timestamp = 1764590000.123456;
    r[1].index = 13;
    r[1].error = SU_MERR_COMPILE_ERROR;
    r[1].msg = su_strdup("t.c:1: error: deliberately broken");
    r[1].mean = NAN;
    char *text = dist_results_json(9, 2, r);
    is_int(dist_results_job(text), 9, "the job a results message answers");
    tun_result b[3]; /* room for the 3 a wrong-sized read is asked for */
    su_buf err = {0};
    bool read = dist_results_parse(text, 2, b, &err);
    ok(read, "results read back (%s)", su_buf_str(&err));
    ok(b[0].index == 12 && b[0].ncosts == 3 && b[0].costs[0] == r[0].costs[0] && b[0].costs[1] == r[0].costs[1] &&
           b[0].costs[2] == r[0].costs[2] && b[0].mean == r[0].mean,
       "costs and their mean exact to the bit");
    is_str(b[0].msg, r[0].msg, "a message with quotes, a newline and UTF-8");
    ok(b[0].counters.n == 1 && !strcmp(b[0].counters.names[0], "PAPI_TOT_CYC") &&
           b[0].counters.values[0] == 123456789012LL && b[0].counters.nmissing == 1 &&
           !strcmp(b[0].counters.missing[0], "PAPI_L1_DCM") && !strcmp(b[0].counters.why, "no such event here"),
       "counters read, and those missing with the reason");
    ok(b[0].build_time == 0.25 && b[0].run_time == 1.5 && b[0].timestamp == r[0].timestamp && !b[0].host &&
           !b[0].where,
       "build and run time, when it was measured");
    ok(b[1].error == SU_MERR_COMPILE_ERROR && b[1].ncosts == 0 && b[1].mean == 0, "an error by name, its NaN as 0");
    for (int i = 0; i < 2; i++)
        tun_result_free(&b[i]);
    su_buf_clear(&err);
    read = dist_results_parse(text, 3, b, &err);
    ok(!read && strstr(su_buf_str(&err), "not an array of 3"), "results of another share's size are refused: %s",
       su_buf_str(&err));
    free(text);
    su_buf_clear(&err);
    const char *bad = "{\"job\":1,\"results\":[{\"index\":1,\"error\":\"exploded\",\"msg\":\"\",\"why\":\"\"}]}";
    read = dist_results_parse(bad, 1, b, &err);
    ok(!read && strstr(su_buf_str(&err), "known 'error'") && !b[0].msg, "an error outside the closed set is refused: %s",
       su_buf_str(&err));
    is_int(dist_results_job("{\"job\":3}"), -1, "a text without results answers no job");
    is_int(dist_results_job("not json"), -1, "nor does a text that is not JSON");
    su_buf_free(&err);
    for (int i = 0; i < 2; i++)
        tun_result_free(&r[i]);
}

int main(void)
{
    rt_module *m = rt_module_parse("tiny.relay", MODEL, strlen(MODEL), stdout);
    rt_opt_options oo = {.level = 3};
    ok(m && rt_module_bind_random_params(m, 0, 1, stdout) == 1 && rt_module_optimize(m, &oo, stdout) == 0,
       "the model loads with its weight bound");
    const rt_task *pub;
    size_t nt;
    rt_module_tasks(m, &pub, &nt);
    tg_target tg;
    const char *why;
    tg_target_parse("cpu -cores=2", &tg, &why);
    tun_space conv;
    su_buf err = {0};
    bool made = nt == 1 && tun_space_init(&conv, &m->tasks.items[0], &tg.hw, &err);
    ok(made, "the conv's space (%s)", su_buf_str(&err));
    su_buf_free(&err);
    test_task_text(&m->tasks.items[0]);
    test_hello();
    test_work(&conv);
    test_results();
    tun_space_free(&conv);
    rt_module_free(m);
    return tap_done();
}
