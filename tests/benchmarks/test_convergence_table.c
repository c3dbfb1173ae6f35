/* test_convergence_table.c — the convergence benchmark's measurement table
 * on a tiny dense task: configs missing from the table are measured once
 * and stored; asking again measures nothing and gives the same costs; a
 * fresh table read from the database holds the same rows; and the records
 * are ordinary tuning records that the tuning loop resumes from. */
#include <math.h>
#include <string.h>

#include "api/api.h"
#include "benchmarks/convergence.h"
#include "tests/codegen/harness.h"
#include "tests/tap.h"

static const char *MODEL = "#[version = \"0.0.5\"]\n"
                           "def @main(%x: Tensor[(8, 64), float32], %w: Tensor[(32, 64), float32]) {\n"
                           "  nn.dense(%x, %w, units=32)\n"
                           "}\n";

/* The first n configs of the space, the default among them. */
static int pick(const tun_space *s, int64_t *idx, int n)
{
    int k = 0;
    idx[k++] = s->default_index;
    for (int64_t i = 0; i < s->size && k < n; i++)
        if (i != s->default_index)
            idx[k++] = i;
    return k;
}

static void test_table(cv_bench *b, const tun_task *task, const tg_target *tg)
{
    su_buf err = {0};
    cv_task t = {.name = "tiny-dense", .task = task};
    ok(tun_space_init(&t.space, task, &tg->hw, &err), "the dense task's space (%s)", su_buf_str(&err));
    ok(cv_table_load(b, &t, &err) && t.nrows == 0, "an empty database gives an empty table");
    int64_t idx[4];
    int n = pick(&t.space, idx, 4);
    ok(cv_table_find(&t, idx[0]) == NULL, "a config never measured has no row");
    double c1[4], c2[4];
    ok(cv_table_costs(b, &t, n, idx, "random", c1, &err), "a batch of %d configs is measured (%s)", n,
       su_buf_str(&err));
    is_int(b->measured, n, "each missing config was measured once");
    bool finite = true;
    for (int i = 0; i < n; i++)
        finite &= isfinite(c1[i]) && c1[i] > 0;
    ok(finite, "every config of the tiny dense ran");
    ok(cv_table_costs(b, &t, n, idx, "ga", c2, &err) && b->measured == n && !memcmp(c1, c2, sizeof c1[0] * n),
       "asking again measures nothing and gives the same costs");
    ok(cv_gflops(&t, c1[0]) > 0 && cv_gflops(&t, INFINITY) == 0, "throughput of a cost; 0 for a failure");

    cv_task again = {.name = "tiny-dense", .task = task};
    tun_space_init(&again.space, task, &tg->hw, &err);
    ok(cv_table_load(b, &again, &err) && again.nrows == (size_t)n && again.loaded == n,
       "a fresh table reads the %d stored rows back", n);
    bool same = true;
    for (int i = 0; i < n; i++)
        same &= cv_table_find(&again, idx[i]) && cv_table_find(&again, idx[i])->cost == c1[i];
    ok(same, "with the same costs");
    double c3[4];
    ok(cv_table_costs(b, &again, n, idx, "xgb", c3, &err) && b->measured == n, "and needs no measurement");
    cv_task_free(&again);
    cv_task_free(&t);
    su_buf_free(&err);
}

/* The tuning loop on the same database finds the benchmark's records. */
static void test_loop_resumes(cv_bench *b, const rt_module *m, int stored)
{
    tun_options o = {0};
    o.tuner = &tun_random_ops;
    o.trials = stored;
    o.measurer = b->m;
    o.target = &b->target;
    o.model = "tiny";
    o.command = "test";
    tun_report rep;
    su_buf err = {0};
    ok(tun_tune(&m->tasks, NULL, b->d, &o, &rep, &err), "the tuning loop runs on the table's database (%s)",
       su_buf_str(&err));
    ok(rep.n == 1 && rep.tasks[0].trials == stored && rep.measured == 0 && rep.tasks[0].invalid == 0,
       "it counts the benchmark's %d records as its trials and measures nothing", stored);
    tun_report_free(&rep);
    su_buf_free(&err);
}

int main(void)
{
    su_buf err = {0};
    ms_runner *r = ms_runner_start(&err);
    ok(r != NULL, "runner starts (%s)", su_buf_str(&err));
    hx_temp_cache(); /* the table's database goes there too */
    char path[512];
    snprintf(path, sizeof path, "%s/table.db", getenv("RELAY_TUNE_CACHE"));
    rt_module *m = rt_module_parse("tiny.relay", MODEL, strlen(MODEL), stdout);
    rt_opt_options oo = {.level = 3};
    const rt_task *pub;
    size_t nt = 0;
    if (m && rt_module_bind_random_params(m, 0, 1, stdout) == 1 && rt_module_optimize(m, &oo, stdout) == 0)
        rt_module_tasks(m, &pub, &nt);
    is_int(nt, 1, "the tiny model has one task");
    tg_target tg;
    const char *why;
    tg_target_parse("cpu -cores=2", &tg, &why);
    cv_bench b = {0};
    su_arena_init(&b.arena);
    tun_target_describe(&tg, "cpu -cores=2", &b.arena, &b.target);
    b.m = (tun_measurer){r, &tg, {2, 0, 60}, ms_run_defaults()};
    b.d = db_open(path, NULL, &err);
    ok(b.d && db_session_begin(b.d, "tiny", b.target.name, "test", b.session), "a database and a session");
    if (nt == 1 && b.d) {
        test_table(&b, &m->tasks.items[0], &tg);
        test_loop_resumes(&b, m, (int)b.measured);
    }
    db_close(b.d);
    su_arena_free(&b.arena);
    rt_module_free(m);
    ms_runner_stop(r);
    su_buf_free(&err);
    return tap_done();
}
