/* test_tune.c — the tuner on a tiny model (a conv2d + relu and a dense):
 * budgets over tasks; configs as indices and as record JSON (stale and
 * invalid ones recognized); the random, grid and genetic tuners propose
 * each config once; a batch through the tuner's measurement path where
 * deliberately broken candidates (an invalid config, a config a test
 * template cannot instantiate, a compile error, a compile that hangs, a
 * wrong answer) each become their error and never
 * sink their neighbours; the tuning loop storing every result, resuming
 * without measuring again, and never choosing a wrong answer; and the
 * best-config lookup compiling uses (exact target, same ISA, stale records
 * skipped); the task scheduler on synthetic costs (the budget spent whole,
 * the heavier task favoured, the same choices for a seed) and in the loop;
 * transfer: a tuner taught the records of a similar workload, with their
 * spaces, indices and throughputs. */
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "tests/tap.h"
#include "tests/tuner/tiny.h"

static void test_budgets(void)
{
    tun_task items[3] = {0};
    items[0].flops = 1000, items[0].count = 1;
    items[1].flops = 3000, items[1].count = 2;
    items[2].flops = 10, items[2].count = 1;
    tun_tasks ts = {items, 3, 3};
    int64_t sizes[3] = {100, 100, 100}, b[3];
    tun_budgets(&ts, NULL, sizes, 71, b);
    is_int(b[0] + b[1] + b[2], 71, "budgets add up to the trials");
    ok(b[1] > b[0] && b[0] > b[2] && b[2] >= 1, "budgets follow FLOPs x calls, each task at least 1 (%lld %lld %lld)",
       (long long)b[0], (long long)b[1], (long long)b[2]);
    int64_t small[3] = {5, 100, 100};
    tun_budgets(&ts, NULL, small, 71, b);
    ok(b[0] == 5 && b[0] + b[1] + b[2] == 71, "a task's budget stops at its space's size, the rest goes to others");
    tun_budgets(&ts, NULL, sizes, 2, b);
    ok(b[0] == 1 && b[1] == 1 && b[2] == 1, "fewer trials than tasks: each task still gets its default");
    bool sel[3] = {false, true, false};
    tun_budgets(&ts, sel, sizes, 10, b);
    ok(b[0] == 0 && b[1] == 10 && b[2] == 0, "only selected tasks get trials");
}

static void test_configs(const tun_space *s)
{
    bool round = true;
    for (int64_t i = 0; i < s->size; i++) {
        sch_config c;
        tun_config_decode(s, i, &c);
        round &= tun_config_encode(s, &c) == i;
        sch_config_free(&c);
    }
    ok(round, "config index -> choices -> index over the whole space (%lld configs)", (long long)s->size);
    sch_config c, back;
    tun_config_decode(s, s->size - 1, &c);
    char *j = tun_config_record_json(s, &c);
    su_buf why = {0};
    ok(tun_config_from_record(s, j, &back, &why) == TUN_CFG_OK && tun_config_encode(s, &back) == s->size - 1,
       "a record's config reads back as the same config (%s)", j);
    char version[64];
    snprintf(version, sizeof version, "[\"template_version\",\"ot\",%d]", s->version);
    ok(strstr(j, version) != NULL, "the record's config carries the template version (%d)", s->version);
    sch_config_free(&back);
    /* the same config under the next version number, whatever the current one is */
    char other[64], other_msg[32];
    snprintf(other, sizeof other, "[\"template_version\",\"ot\",%d]", s->version + 1);
    snprintf(other_msg, sizeof other_msg, "version %d", s->version + 1);
    const char *v = strstr(j, version);
    su_buf sb = {0};
    su_buf_printf(&sb, "%.*s%s%s", (int)(v - j), j, other, v + strlen(version));
    char *stale = su_buf_take(&sb);
    su_buf_clear(&why);
    ok(tun_config_from_record(s, stale, &back, &why) == TUN_CFG_STALE && strstr(su_buf_str(&why), other_msg),
       "a config of another template version is stale (%s)", su_buf_str(&why));
    su_buf_clear(&why);
    char unknown[128];
    snprintf(unknown, sizeof unknown, "{\"entities\":[%s,[\"nope\",\"ot\",1]],\"index\":0}", version);
    ok(tun_config_from_record(s, unknown, &back, &why) == TUN_CFG_INVALID, "an unknown knob is invalid (%s)",
       su_buf_str(&why));
    su_buf_clear(&why);
    char *bad = su_strdup(j);
    char *sp = strstr(bad, "\"sp\",[");
    sp[6] = '9';
    ok(tun_config_from_record(s, bad, &back, &why) == TUN_CFG_INVALID, "a value outside the candidates is invalid (%s)",
       su_buf_str(&why));
    su_buf_free(&why);
    free(bad);
    free(stale);
    free(j);
    sch_config_free(&c);
}

static void test_tuners(const tun_space *s)
{
    const char *names[] = {"random", "grid", "ga"};
    for (int k = 0; k < 3; k++) {
        const tun_tuner_ops *ops = tun_tuner_find(names[k]);
        tun_tuner *t = tun_tuner_new(ops, s, 7);
        tun_update(t, 0, NULL, NULL); /* nothing measured before: fine */
        /* one config measured before: never proposed */
        int64_t pre = 1;
        double pre_cost = 1e-3;
        tun_update(t, 1, &pre, &pre_cost);
        tun_idxset got = {0};
        bool unique = true, ordered = true, in_space = true;
        int64_t last = -1, buf[5];
        int n, total = 0;
        while ((n = tun_next_batch(t, 5, buf)) > 0) {
            double cost[5];
            for (int i = 0; i < n; i++) {
                unique &= buf[i] != pre && tun_idxset_add(&got, buf[i]);
                in_space &= buf[i] >= 0 && buf[i] < s->size;
                ordered &= buf[i] > last;
                last = buf[i];
                cost[i] = buf[i] % 3 ? 1e-3 / (double)(buf[i] + 1) : INFINITY;
            }
            tun_update(t, n, buf, cost);
            total += n;
        }
        ok(unique && in_space && total == s->size - 1,
           "%s tuner: proposes every config of the space once, never one measured before (%d of %lld)", names[k], total,
           (long long)s->size);
        if (!strcmp(names[k], "grid"))
            ok(ordered, "grid tuner: in index order");
        ok(tun_next_batch(t, 5, buf) == 0 && tun_tuner_exhausted(t), "%s tuner: nothing left after the space",
           names[k]);
        tun_idxset_free(&got);
        tun_tuner_free(t);
    }
}

static tun_measurer measurer(ms_runner *r, const tg_target *tg, int per_unit, double compile_timeout)
{
    tun_measurer m = {0};
    m.runner = r;
    m.target = tg;
    m.build = (ms_build_options){2, per_unit, compile_timeout};
    m.run = ms_run_defaults();
    m.run.repeat = 2;
    m.run.min_repeat_ms = 1;
    return m;
}

/* Deliberately broken candidates through the tuner's measurement path. */
/* The conv's config that answers wrongly (BREAK_WRONG, set by test_errors,
 * read by test_loop). */
static int64_t wrong_index = -1;

static void test_errors(ms_runner *r, const tg_target *tg, const tun_space *s)
{
    char cc[512], pat[64];
    snprintf(cc, sizeof cc, "%s/tests/tuner/breaking-cc.sh", getenv("top_srcdir") ? getenv("top_srcdir") : ".");
    setenv("RELAY_TUNE_CC", cc, 1);
    /* the first 5 configs the template keeps (it rejects some, test_reject):
     * the second breaks the compiler, the third hangs it, the fourth answers
     * wrongly (none of them is the default, which the loop test measures) */
    int64_t good[5];
    for (int64_t i = 0, n = 0; n < 5 && i < s->size; i++)
        if (!tun_config_rejected(s, i, NULL))
            good[n++] = i;
    ok(s->default_index > good[4], "the conv's default config is not among the first 5 kept (%lld)",
       (long long)s->default_index);
    snprintf(pat, sizeof pat, "k_%s_%lld", s->task->hash, (long long)good[1]);
    setenv("BREAK_COMPILE", pat, 1);
    snprintf(pat, sizeof pat, "k_%s_%lld", s->task->hash, (long long)good[2]);
    setenv("BREAK_SLOW", pat, 1);
    snprintf(pat, sizeof pat, "k_%s_%lld", s->task->hash, (long long)good[3]);
    setenv("BREAK_WRONG", pat, 1);
    wrong_index = good[3];
    su_buf err = {0};
    tun_task_data *td = tun_task_data_new(s->task, 1, &err);
    ok(td != NULL, "task data: random inputs and the interpreter's output (%s)", su_buf_str(&err));
    sch_config cfgs[6];
    for (int i = 0; i < 5; i++)
        tun_config_decode(s, good[i], &cfgs[i]);
    /* an invalid config: a choice outside its knob's candidates */
    tun_config_decode(s, good[0], &cfgs[5]);
    cfgs[5].choice[0] = 99;
    tun_result res[6];
    /* two per unit: the compile error shares its unit with config 4, the
     * wrong answer with config 0; the hanging compile is alone */
    tun_measurer m = measurer(r, tg, 2, 5);
    ok(tun_measure(&m, s, td, 6, cfgs, res), "a batch with broken candidates is measured");
    is_str(su_merr_name(res[0].error), "none", "config 0: measured (%s)", res[0].msg);
    is_str(su_merr_name(res[1].error), "compile_error", "config 1: compile error");
    ok(res[1].msg && strstr(res[1].msg, "deliberately broken"), "the compile error keeps the compiler's message");
    is_str(su_merr_name(res[2].error), "compile_timeout", "config 2: compile timeout (%s)", res[2].msg);
    is_str(su_merr_name(res[3].error), "wrong_answer", "config 3: wrong answer (%s)", res[3].msg);
    is_str(su_merr_name(res[4].error), "none", "config 4, compiled in a unit with a broken one: measured (%s)",
           res[4].msg);
    is_str(su_merr_name(res[5].error), "invalid_config", "an out-of-range choice: invalid config (%s)", res[5].msg);
    ok(res[0].ncosts == 2 && res[0].mean > 0 && res[0].build_time > 0, "costs and build time of a good candidate");
    char *j = tun_config_record_json(s, &cfgs[5]);
    ok(strstr(j, "candidate 99 of") != NULL, "an invalid config is recorded as what it asked for");
    free(j);
    for (int i = 0; i < 6; i++) {
        sch_config_free(&cfgs[i]);
        tun_result_free(&res[i]);
    }
    tun_task_data_free(td);
    su_buf_free(&err);
    unsetenv("BREAK_COMPILE");
    unsetenv("BREAK_SLOW");
}

/* A template with a knob whose "on" value asks a primitive for what it
 * rejects: unrolling the anchor's reduction loop (256 iterations) beyond
 * annotate's limit. The rest is the default template. */
static void broken_template(sch_tctx *t)
{
    static const int64_t off_on[2] = {0, 1};
    int64_t unroll = sch_define_knob(t, "unroll_k", 2, off_on, 0);
    sch_tensor *a = sch_anchor(t->s);
    if (unroll && a)
        SCH_TRY(t, sch_annotate(t->s, a, a->leaves.data[a->leaves.len - 1], SCH_LOOP_UNROLLED));
    sch_template_default(t);
}

/* A candidate the template cannot instantiate, through the tuner's
 * measurement path: its own error, with the primitive's message, and its
 * neighbour in the batch measured. */
static void test_instantiation(ms_runner *r, const tg_target *tg, const tun_task *dense)
{
    ok(sch_template_register("test_broken", broken_template, 1), "a test template registers");
    ok(!sch_template_register("dense", broken_template, 1), "a built-in name cannot be taken");
    tun_task bt = *dense;
    bt.template_name = (char *)"test_broken";
    tun_space s;
    su_buf err = {0};
    ok(tun_space_init(&s, &bt, &tg->hw, &err) && sch_space_knob(&s.sp, "unroll_k"),
       "the broken template's space (its defaults instantiate) (%s)", su_buf_str(&err));
    tun_task_data *td = tun_task_data_new(&bt, 1, &err);
    sch_config cfgs[2];
    for (int i = 0; i < 2; i++) {
        sch_config_default(&s.sp, &cfgs[i]);
        cfgs[i].choice[0] = i; /* unroll_k off, on */
    }
    tun_result res[2];
    tun_measurer m = measurer(r, tg, 2, 30);
    ok(td && tun_measure(&m, &s, td, 2, cfgs, res), "a batch with an uninstantiable candidate is measured");
    is_str(su_merr_name(res[0].error), "none", "its neighbour: measured (%s)", res[0].msg);
    is_str(su_merr_name(res[1].error), "instantiation", "unroll_k on: instantiation error (%s)", res[1].msg);
    ok(res[1].msg && strstr(res[1].msg, "annotate:") && strstr(res[1].msg, "too long to unroll"),
       "the message names the primitive and why");
    for (int i = 0; i < 2; i++) {
        sch_config_free(&cfgs[i]);
        tun_result_free(&res[i]);
    }
    tun_task_data_free(td);
    tun_space_free(&s);
    su_buf_free(&err);
}

/* A measurer that keeps its built candidates: a config given twice in a
 * batch is built once, a later batch loads what an earlier one built, and
 * one whose object is gone is built again (a build time is 0 exactly when
 * nothing was scheduled, written or compiled for the candidate). */
static void test_reuse(ms_runner *r, const tg_target *tg, const tun_space *s)
{
    su_buf err = {0};
    tun_task_data *td = tun_task_data_new(s->task, 1, &err);
    su_map built = {0};
    tun_measurer m = measurer(r, tg, 2, 30);
    m.built = &built;
    sch_config cfgs[3];
    tun_config_decode(s, 1, &cfgs[0]);
    tun_config_decode(s, 2, &cfgs[1]);
    tun_config_decode(s, 1, &cfgs[2]);
    tun_result res[3];
    ok(td && tun_measure(&m, s, td, 3, cfgs, res), "a batch holding one config twice is measured");
    ok(!res[0].error && !res[1].error && !res[2].error && res[2].mean > 0, "all three measured (%s)", res[2].msg ? res[2].msg : "");
    ok(res[0].build_time > 0 && res[2].build_time == 0, "the second copy is not built again (%g s)", res[2].build_time);
    is_int(built.len, 2, "the map holds the batch's two entries");
    char sym[64];
    snprintf(sym, sizeof sym, "k_%s_1", s->task->hash);
    const char *path = su_map_get(&built, sym);
    ok(path && access(path, R_OK) == 0, "config 1's object is in the map and on disk");
    for (int i = 0; i < 3; i++)
        tun_result_free(&res[i]);
    ok(tun_measure(&m, s, td, 1, cfgs, res) && !res[0].error && res[0].build_time == 0,
       "a later batch loads config 1 from the object it was built into (%s)", res[0].msg ? res[0].msg : "");
    tun_result_free(&res[0]);
    if (path)
        unlink(path);
    ok(tun_measure(&m, s, td, 1, cfgs, res) && !res[0].error && res[0].build_time > 0,
       "its object removed, config 1 is built again (%s)", res[0].msg ? res[0].msg : "");
    tun_result_free(&res[0]);
    is_int(built.len, 2, "... under the same entry");
    for (int i = 0; i < 3; i++)
        sch_config_free(&cfgs[i]);
    tun_built_free(&built);
    tun_task_data_free(td);
    su_buf_free(&err);
}

static int64_t count_records(db *d, const char *key, const char *target, int64_t *wrong)
{
    su_arena a;
    su_arena_init(&a);
    db_record *recs;
    size_t n = 0;
    db_workload_records(d, key, target, &a, &recs, &n);
    *wrong = 0;
    for (size_t i = 0; i < n; i++)
        *wrong += recs[i].error == SU_MERR_WRONG_ANSWER;
    su_arena_free(&a);
    return (int64_t)n;
}

static void test_loop(ms_runner *r, const tg_target *tg, rt_module *m)
{
    char path[300];
    snprintf(path, sizeof path, "%s/t.db", dir);
    su_buf err = {0};
    db *d = db_open(path, NULL, &err);
    ok(d != NULL, "database opens (%s)", su_buf_str(&err));
    su_arena a;
    su_arena_init(&a);
    db_target dt;
    tun_target_describe(tg, "cpu  -cores=2", &a, &dt);
    is_str(dt.name, "cpu -cores=2", "the target's name is the target string, spaces collapsed");
    const tun_task *conv = &m->tasks.items[0], *dense = &m->tasks.items[1];
    /* grid order: the fourth config kept of the conv answers wrongly, and
     * faster than any */
    tun_options o = {0};
    o.tuner = &tun_grid_ops;
    o.scheduler = TUN_SCHED_FIXED; /* shares by FLOPs: the conv gets to that config */
    o.trials = 12;
    o.batch = 4;
    o.measurer = measurer(r, tg, 4, 60);
    o.target = &dt;
    o.model = "tiny";
    tun_report rep;
    ok(tun_tune(&m->tasks, NULL, d, &o, &rep, &err), "tuning runs (%s)", su_buf_str(&err));
    unsetenv("BREAK_WRONG");
    unsetenv("RELAY_TUNE_CC");
    int64_t budget = 0, trials = 0;
    for (size_t i = 0; i < rep.n; i++) {
        budget += rep.tasks[i].budget;
        trials += rep.tasks[i].trials;
    }
    is_int(budget, 12, "the budget is the trials");
    is_int(rep.measured, 12, "every trial measured");
    is_int(trials, 12, "every trial counted");
    int64_t wrong, n = count_records(d, conv->key, dt.name, &wrong) + count_records(d, dense->key, dt.name, &wrong);
    is_int(n, 12, "every measurement is a record");
    count_records(d, conv->key, dt.name, &wrong);
    is_int(wrong, 1, "the wrong answer is a record");
    const tun_task_report *cr = &rep.tasks[0];
    ok(cr->default_cost > 0 && cr->best_cost > 0 && cr->best_cost <= cr->default_cost,
       "the default config is measured and is the baseline of the best");
    ok(cr->best_index != wrong_index, "the best is never the wrong answer (best %lld, wrong %lld)",
       (long long)cr->best_index, (long long)wrong_index);
    tun_space s;
    ok(tun_space_init(&s, conv, &tg->hw, &err), "the conv's space");
    tun_best b;
    ok(tun_best_config(d, &s, &dt, &b, &err) && b.kind == TUN_BEST_EXACT && b.index == cr->best_index &&
           b.cost == cr->best_cost,
       "the best config for compiling is the tuned best");
    tun_best_free(&b);
    /* what compiling a whole model resolves up front: each task's best as a
     * parsed config in the task's space */
    tun_space s2;
    ok(tun_task_best(d, conv, tg, dt.name, &s2, &b, &err) && b.kind == TUN_BEST_EXACT &&
           tun_config_encode(&s2, &b.cfg) == cr->best_index,
       "tun_task_best: the tuned best, as a config of the task's space");
    tun_best_free(&b);
    tun_space_free(&s2);
    ok(tun_task_best(d, conv, tg, "cpu -cores=3", &s2, &b, &err) && b.kind == TUN_BEST_ISA &&
           tun_config_encode(&s2, &b.cfg) == cr->best_index,
       "tun_task_best: another target string of the same ISA takes its records");
    tun_best_free(&b);
    tun_space_free(&s2);
    tun_report_free(&rep);

    /* again: nothing is measured twice */
    ok(tun_tune(&m->tasks, NULL, d, &o, &rep, &err), "tuning again runs");
    is_int(rep.measured, 0, "tuning again measures nothing");
    n = count_records(d, conv->key, dt.name, &wrong) + count_records(d, dense->key, dt.name, &wrong);
    is_int(n, 12, "and adds no record");
    tun_report_free(&rep);
    /* more trials: only the new ones are measured, the tuner starts from what is there */
    o.trials = 16;
    o.tuner = &tun_ga_ops;
    ok(tun_tune(&m->tasks, NULL, d, &o, &rep, &err), "tuning with a larger budget runs");
    is_int(rep.measured, 4, "a larger budget measures only the difference");
    tun_report_free(&rep);

    /* a stale record faster than everything is skipped, and said so */
    db_record *recs;
    size_t nr;
    db_top_k(d, conv->key, dt.name, 1, &a, &recs, &nr);
    db_record fake = recs[0];
    char *cj = su_strdup(fake.config);
    char *v = strstr(cj, "\"template_version\",\"ot\",");
    v[strlen("\"template_version\",\"ot\",")] = '0'; /* version 0: never a template's */
    double fast = fake.mean_cost / 10;
    fake.config = cj;
    fake.costs = &fast;
    fake.ncosts = 1;
    fake.session = NULL;
    fake.timestamp += 1;
    ok(db_add_records(d, &fake, 1, NULL, NULL, NULL), "a stale record is stored");
    ok(tun_best_config(d, &s, &dt, &b, &err) && b.kind == TUN_BEST_EXACT && b.cost > fast && b.notes &&
           strstr(b.notes, "stale"),
       "the best config skips a stale record and says so (%s)", b.notes ? b.notes : "");
    tun_best_free(&b);
    free(cj);
    /* another target string of the same ISA: the fallback */
    db_target other = dt;
    other.name = "cpu -cores=1";
    ok(tun_best_config(d, &s, &other, &b, &err) && b.kind == TUN_BEST_ISA && !strcmp(b.target, dt.name),
       "a target never tuned uses the records of the same ISA");
    tun_best_free(&b);
    other.isa = "sse2";
    ok(tun_best_config(d, &s, &other, &b, &err) && b.kind == TUN_BEST_NONE && b.index == s.default_index,
       "another ISA falls back to the default config");
    tun_best_free(&b);
    tun_space_free(&s);
    su_arena_free(&a);
    su_buf_free(&err);
    db_close(d);
}

/* A new database dir/name (NULL with err set), the arena a initialized and
 * dt the target "cpu -cores=2" described in it. */
static db *open_db(const char *name, const tg_target *tg, su_arena *a, db_target *dt, su_buf *err)
{
    char path[300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    su_arena_init(a);
    tun_target_describe(tg, "cpu -cores=2", a, dt);
    return db_open(path, NULL, err);
}

/* A task's end re-measures its best configs side by side: a confirmation
 * ranked by median, which compiling prefers to the single best record
 * unless a later record beats it; no record and no trial is added. */
static void test_confirm(ms_runner *r, const tg_target *tg, rt_module *m)
{
    su_buf err = {0};
    su_arena a;
    db_target dt;
    db *d = open_db("c.db", tg, &a, &dt, &err);
    const tun_task *conv = &m->tasks.items[0];
    bool sel[2] = {true, false};
    tun_options o = {0};
    o.tuner = &tun_random_ops;
    o.trials = 8;
    o.batch = 4;
    o.confirm_top = 3;
    o.confirm_rounds = 2;
    o.measurer = measurer(r, tg, 4, 60);
    o.target = &dt;
    o.model = "tiny";
    tun_report rep;
    ok(d && tun_tune(&m->tasks, sel, d, &o, &rep, &err), "tuning with confirmation runs (%s)", su_buf_str(&err));
    int64_t wrong;
    is_int(rep.measured, 8, "confirmation measures outside the budget");
    is_int(count_records(d, conv->key, dt.name, &wrong), 8, "and adds no record");
    db_confirmed *cf;
    size_t n;
    tun_space s;
    bool spaced = tun_space_init(&s, conv, &tg->hw, &err);
    /* the best 3 records' configs, and the default config beside them
     * unless it is one of them */
    bool has_default = false;
    bool listed = db_confirmed_latest(d, conv->key, &dt, &a, &cf, &n);
    for (size_t i = 0; listed && spaced && i < n; i++)
        has_default |= cf[i].config_index == s.default_index;
    ok(listed && (n == 3 || n == 4) && has_default, "the best 3 configs and the default are confirmed (%zu rows)", n);
    bool sorted = n >= 3, shape = n >= 3;
    for (size_t i = 0; i < n; i++) {
        shape &= cf[i].ncosts == 2 && cf[i].median == 0.5 * (cf[i].costs[0] + cf[i].costs[1]);
        sorted &= i == 0 || cf[i - 1].median <= cf[i].median;
    }
    ok(shape && sorted, "each with its 2 rounds and their median, ranked by median");
    ok(n >= 3 && rep.tasks[0].confirmed == (int)n && rep.tasks[0].confirmed_index == cf[0].config_index &&
           rep.tasks[0].confirmed_cost == cf[0].median,
       "the report names the winner and its median");
    tun_best b;
    ok(spaced && tun_best_config(d, &s, &dt, &b, &err) && n >= 3 && b.confirmed &&
           b.index == cf[0].config_index && b.cost == cf[0].median,
       "compiling takes the confirmed winner");
    tun_best_free(&b);
    /* a record made after the confirmation and faster than its median
     * wins (faster than every record too: on a busy machine a single
     * measurement of a tiny kernel can be far below any median) */
    db_record *recs;
    size_t nr;
    db_top_k(d, conv->key, dt.name, 8, &a, &recs, &nr);
    db_record fake = recs[nr - 1];
    double fast = (n && cf[0].median < recs[0].mean_cost ? cf[0].median : recs[0].mean_cost) / 10;
    fake.costs = &fast;
    fake.ncosts = 1;
    fake.session = NULL;
    fake.timestamp = db_now() + 10;
    ok(db_add_records(d, &fake, 1, NULL, NULL, NULL), "a later, faster record is stored");
    bool got = tun_best_config(d, &s, &dt, &b, &err);
    ok(got && !b.confirmed && b.index == fake.config_index && b.cost == fast,
       "a record after the confirmation that beats its median wins (%s: config %lld at %g s; the record: %lld at %g)",
       b.confirmed ? "confirmed" : "record", (long long)b.index, b.cost, (long long)fake.config_index, fast);
    tun_best_free(&b);
    db_confirmed bad = {1, "{\"index\":1", &fast, 1, fast, 0};
    ok(!db_add_confirmation(d, conv->key, &dt, NULL, &bad, 1) && strstr(db_errmsg(d), "confirmation row 0"),
       "a malformed confirmation is refused (%s)", db_errmsg(d));
    tun_space_free(&s);
    tun_report_free(&rep);
    su_arena_free(&a);
    su_buf_free(&err);
    db_close(d);
}

/* ---- the scheduler on synthetic costs ---- */

/* A task's best cost after t trials: it falls like 1/t towards floor. */
static double synthetic_best(double floor, int64_t t)
{
    return floor * (1 + 4.0 / (double)(t > 0 ? t : 1));
}

/* Runs the scheduler as the loop does, with batches of 8; returns the
 * trials spent and writes the sequence of tasks chosen (up to cap). */
static bool stop_early;

static int64_t simulate(tun_sched *s, const double *floors, size_t *seq, size_t cap, size_t *nseq)
{
    *nseq = 0;
    size_t i;
    while ((i = tun_sched_next(s)) < s->n) {
        if (*nseq < cap)
            seq[(*nseq)++] = i;
        tun_sched_task *t = &s->tasks[i];
        int64_t want = tun_sched_want(s, i, 8);
        if (want > 0)
            tun_sched_update(s, i, t->trials + want, synthetic_best(floors[i], t->trials + want));
        /* task 1 stops early after 8 trials when stop_early is set */
        if (want == 0 || t->trials >= t->size || (stop_early && i == 1 && t->trials >= 8))
            tun_sched_drop(s, i);
    }
    int64_t spent = 0;
    for (size_t k = 0; k < s->n; k++)
        spent += s->tasks[k].trials;
    return spent;
}

static void describe(tun_sched *s, size_t i, const char *group, double flops, int calls, int64_t size)
{
    s->tasks[i].group = group;
    s->tasks[i].flops = flops;
    s->tasks[i].calls = calls;
    s->tasks[i].size = size;
}

static void test_scheduler(void)
{
    tun_sched_kind k;
    ok(tun_sched_kind_parse(NULL, &k) && k == TUN_SCHED_GRADIENT && tun_sched_kind_parse("fixed", &k) &&
           k == TUN_SCHED_FIXED && !tun_sched_kind_parse("bogus", &k),
       "scheduler names: gradient (the default), fixed");
    double floors[3] = {1e-3, 1e-3, 1e-3};
    size_t seq[256], nseq;
    /* (a) a task with a small space, or one that stops early: its trials go
     * to the others */
    for (int kind = 0; kind < 4; kind++) {
        stop_early = kind >= 2;
        tun_sched s;
        tun_sched_init(&s, kind % 2 ? TUN_SCHED_FIXED : TUN_SCHED_GRADIENT, 3, 100, 1);
        describe(&s, 0, "a", 1e6, 1, 100);
        describe(&s, 1, "b", 1e6, 1, stop_early ? 100 : 5);
        describe(&s, 2, "c", 1e6, 1, 100);
        tun_sched_start(&s);
        int64_t spent = simulate(&s, floors, seq, 256, &nseq);
        ok(spent == 100 && s.tasks[1].trials == (stop_early ? 8 : 5),
           "%s: the whole budget is spent though a task %s (%lld; %lld %lld %lld)", tun_sched_kind_name(s.kind),
           stop_early ? "stops early" : "exhausts its space", (long long)spent, (long long)s.tasks[0].trials,
           (long long)s.tasks[1].trials, (long long)s.tasks[2].trials);
        if (kind % 2)
            ok(nseq >= 2 && seq[0] == 0 && seq[nseq - 1] == 2, "fixed: the tasks one after the other");
        tun_sched_free(&s);
    }
    stop_early = false;
    /* (b) the same curve, ten times the calls: the heavier task gets more */
    tun_sched s;
    tun_sched_init(&s, TUN_SCHED_GRADIENT, 2, 200, 1);
    describe(&s, 0, "a", 1e6, 1, 1000);
    describe(&s, 1, "b", 1e6, 10, 1000);
    tun_sched_start(&s);
    int64_t spent = simulate(&s, floors, seq, 256, &nseq);
    ok(spent == 200 && seq[0] == 0 && seq[1] == 1, "gradient: a warm-up round in model order, then the budget");
    ok(s.tasks[1].trials > 2 * s.tasks[0].trials && s.tasks[0].trials >= 8,
       "gradient: the task with ten times the calls gets most trials (%lld vs %lld)", (long long)s.tasks[1].trials,
       (long long)s.tasks[0].trials);
    tun_sched_free(&s);
    /* a task far behind a similar one's throughput gains more than one
     * with the same curve and no similar task to compare with */
    double far[3] = {1e-3, 1e-4, 1e-3};
    tun_sched_init(&s, TUN_SCHED_GRADIENT, 3, 400, 1);
    s.epsilon = 0;
    describe(&s, 0, "dense", 1e6, 1, 1000);
    describe(&s, 1, "conv", 1e6, 1, 1000);
    describe(&s, 2, "conv", 1e6, 1, 1000);
    tun_sched_start(&s);
    simulate(&s, far, seq, 256, &nseq);
    ok(s.tasks[2].trials > 2 * s.tasks[0].trials,
       "gradient: a task far behind a similar task's throughput gets more (%lld vs %lld)",
       (long long)s.tasks[2].trials, (long long)s.tasks[0].trials);
    tun_sched_free(&s);
    /* (c) the same seed, the same choices */
    size_t seq2[256], nseq2;
    for (int run = 0; run < 2; run++) {
        tun_sched_init(&s, TUN_SCHED_GRADIENT, 3, 300, 42);
        describe(&s, 0, "a", 1e6, 1, 1000);
        describe(&s, 1, "b", 2e6, 3, 1000);
        describe(&s, 2, "a", 5e5, 2, 1000);
        tun_sched_start(&s);
        simulate(&s, floors, run ? seq2 : seq, 256, run ? &nseq2 : &nseq);
        tun_sched_free(&s);
    }
    ok(nseq == nseq2 && !memcmp(seq, seq2, nseq * sizeof *seq), "gradient: the same seed makes the same choices");
}

/* ---- transfer: a tuner that records what it is taught ---- */

typedef struct taught {
    char key[256];
    int64_t index, size;
    double gflops;
} taught;
static taught lessons[256];
static size_t nlessons, ncalls;

static void record_transfer(tun_tuner *t, size_t n, const tun_transfer_rec *recs)
{
    (void)t;
    ncalls++;
    for (size_t i = 0; i < n && nlessons < 256; i++) {
        taught *l = &lessons[nlessons++];
        snprintf(l->key, sizeof l->key, "%s", recs[i].space->task->key);
        l->index = recs[i].index;
        l->size = recs[i].space->size;
        l->gflops = recs[i].gflops;
    }
}

static int random_batch(tun_tuner *t, int n, int64_t *out)
{
    return tun_random_ops.next_batch(t, n, out);
}

static const tun_tuner_ops recording_ops = {"recording", NULL, random_batch, NULL, NULL, record_transfer};

static const char *MODEL2 = "#[version = \"0.0.5\"]\n"
                            "def @main(%x: Tensor[(1, 128), float32], %d: Tensor[(8, 128), float32]) {\n"
                            "  nn.dense(%x, %d, units=8)\n"
                            "}\n";

static tun_report tune_db(db *d, const tun_tasks *tasks, const tun_options *o, const char *what)
{
    tun_report rep;
    su_buf err = {0};
    ok(tun_tune(tasks, NULL, d, o, &rep, &err), "%s (%s)", what, su_buf_str(&err));
    su_buf_free(&err);
    return rep;
}

static void test_transfer(ms_runner *r, const tg_target *tg, rt_module *m)
{
    su_buf err = {0};
    su_arena a;
    db_target dt;
    db *d = open_db("x.db", tg, &a, &dt, &err);
    tun_options o = {0};
    o.tuner = &tun_grid_ops;
    o.trials = 24;
    o.batch = 4;
    o.measurer = measurer(r, tg, 4, 60);
    o.target = &dt;
    o.model = "tiny";
    o.transfer = true;
    /* task A: the tiny model's dense, whose space (S configs) runs out */
    const tun_task *A = &m->tasks.items[1];
    tun_space sa;
    tun_space_init(&sa, A, &tg->hw, &err);
    const int64_t S = sa.size;
    o.trials = S + 14;
    bool dense_only[2] = {false, true};
    tun_report rep;
    ok(tun_tune(&m->tasks, dense_only, d, &o, &rep, &err) && rep.measured == S && rep.tasks[0].exhausted,
       "the dense alone: its %lld configs, then its space is exhausted (%s)", (long long)S, su_buf_str(&err));
    tun_report_free(&rep);
    /* both tasks, 24 more trials than the dense's space: all go to the conv */
    o.trials = S + 24;
    rep = tune_db(d, &m->tasks, &o, "tuning both tasks (gradient scheduler)");
    ok(rep.measured == 24 && rep.tasks[0].trials == 24 && rep.tasks[1].trials == S,
       "gradient: the whole budget is measured, the exhausted task's share by the other (%lld, conv %lld)",
       (long long)rep.measured, (long long)rep.tasks[0].trials);
    tun_report_free(&rep);
    /* task B: a dense of another shape, with the recording tuner */
    rt_module *m2 = rt_module_parse("dense2.relay", MODEL2, strlen(MODEL2), stdout);
    rt_opt_options oo = {.level = 3};
    ok(m2 && rt_module_bind_random_params(m2, 0, 1, stdout) == 1 && rt_module_optimize(m2, &oo, stdout) == 0,
       "a second model: a dense of another shape");
    const rt_task *pub;
    size_t nt;
    rt_module_tasks(m2, &pub, &nt);
    o.tuner = &recording_ops;
    o.trials = 1;
    nlessons = ncalls = 0;
    rep = tune_db(d, &m2->tasks, &o, "tuning B with transfer");
    db_record *recs;
    size_t nr;
    db_workload_records(d, A->key, dt.name, &a, &recs, &nr);
    bool right = (int64_t)nlessons == S && (int64_t)nr == S && ncalls == 1;
    for (size_t i = 0; right && i < nlessons; i++) {
        /* the most recent first */
        const db_record *x = &recs[nr - 1 - i];
        double g = x->error ? 0 : (double)A->flops / x->mean_cost * 1e-9;
        right = !strcmp(lessons[i].key, A->key) && lessons[i].size == sa.size &&
                lessons[i].index == x->config_index && fabs(lessons[i].gflops - g) <= 1e-9 * g;
    }
    ok(right, "B's tuner learns A's %lld records: A's space, their indices and GFLOP/s (%zu)", (long long)S, nlessons);
    is_int(rep.tasks[0].transfer.used, S, "the report counts the records learnt from");
    tun_report_free(&rep);
    /* an older database's record: no stored function, skipped and counted */
    db_record old = recs[0];
    old.workload.key = "dense|float32|in=1x64,16x64|old";
    old.workload.args = "{\"anchor\":\"nn.dense\"}";
    old.session = NULL;
    ok(db_add_records(d, &old, 1, NULL, NULL, NULL), "a record without a stored function is stored");
    nlessons = ncalls = 0;
    o.trials = 2;
    rep = tune_db(d, &m2->tasks, &o, "tuning B again");
    ok((int64_t)nlessons == S && rep.tasks[0].transfer.no_func == 1,
       "the record without a stored function is skipped and counted (%zu learnt, %lld skipped)", nlessons,
       (long long)rep.tasks[0].transfer.no_func);
    tun_report_free(&rep);
    /* B measured on another target of the same ISA: learnt too */
    const tun_task *B = &m2->tasks.items[0];
    db_workload_records(d, B->key, dt.name, &a, &recs, &nr);
    db_record moved = recs[0];
    moved.target.name = "cpu -cores=1";
    moved.session = NULL;
    ok(nr == 2 && db_add_records(d, &moved, 1, NULL, NULL, NULL), "B's record on another target of the ISA");
    nlessons = ncalls = 0;
    o.trials = 3;
    rep = tune_db(d, &m2->tasks, &o, "tuning B a third time");
    ok((int64_t)nlessons == S + 1 && !strcmp(lessons[0].key, B->key), "the same workload on another target is learnt (%zu)",
       nlessons);
    tun_report_free(&rep);
    /* --no-transfer */
    nlessons = ncalls = 0;
    o.transfer = false;
    o.trials = 4;
    rep = tune_db(d, &m2->tasks, &o, "tuning B without transfer");
    ok(ncalls == 0 && nlessons == 0 && rep.measured == 1, "without transfer the tuner is taught nothing");
    tun_report_free(&rep);
    /* a database written before args held the function: tuning there
     * again stores its records, and the workload gains its function */
    char path[300];
    snprintf(path, sizeof path, "%s/old.db", dir);
    db *od = db_open(path, NULL, &err);
    db_workload_records(d, A->key, dt.name, &a, &recs, &nr);
    db_record before = recs[0];
    before.workload.args = su_arena_printf(&a, "{\"anchor\":\"nn.dense\",\"inputs\":[[1,256],[4,256]]}");
    before.session = NULL;
    ok(od && db_add_records(od, &before, 1, NULL, NULL, NULL), "an older database's record, args without the function");
    bool dense_sel[2] = {false, true};
    o.tuner = &tun_random_ops;
    o.trials = 3;
    ok(tun_tune(&m->tasks, dense_sel, od, &o, &rep, &err) && rep.measured == 2, "tuning there again (%s)",
       su_buf_str(&err));
    tun_report_free(&rep);
    db_workload_records(od, A->key, dt.name, &a, &recs, &nr);
    ok(nr == 3 && strstr(recs[0].workload.args, "\"func\"") && strstr(recs[0].workload.args, "\"inputs\""),
       "the workload's args gain the function");
    db_close(od);
    tun_space_free(&sa);
    rt_module_free(m2);
    su_arena_free(&a);
    su_buf_free(&err);
    db_close(d);
}

/* A 3x3 conv feeding a 1x1 conv (both conv2d_nchw, in its general nest and
 * its 1x1 nest), and a 1x1 conv of another shape. */
static const char *FORMS = "#[version = \"0.0.5\"]\n"
                           "def @main(%x: Tensor[(1, 8, 8, 8), float32], %w3: Tensor[(8, 8, 3, 3), float32],\n"
                           "          %w1: Tensor[(8, 8, 1, 1), float32]) {\n"
                           "  %0 = nn.conv2d(%x, %w3, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3]);\n"
                           "  nn.conv2d(%0, %w1, channels=8, kernel_size=[1, 1])\n"
                           "}\n";
static const char *FORMS2 = "#[version = \"0.0.5\"]\n"
                            "def @main(%x: Tensor[(1, 8, 8, 8), float32], %w: Tensor[(16, 8, 1, 1), float32]) {\n"
                            "  nn.conv2d(%x, %w, channels=16, kernel_size=[1, 1])\n"
                            "}\n";

static rt_module *forms_model(const char *name, const char *text, int nparams)
{
    rt_module *m = rt_module_parse(name, text, strlen(text), stdout);
    rt_opt_options oo = {.level = 3};
    ok(m && rt_module_bind_random_params(m, 0, 1, stdout) == nparams && rt_module_optimize(m, &oo, stdout) == 0,
       "%s loads with bound weights", name);
    const rt_task *pub;
    size_t nt;
    if (m)
        rt_module_tasks(m, &pub, &nt); /* extracts m->tasks */
    return m;
}

/* Transfer through the loop from a real database that holds a 3x3 conv's
 * records and a 1x1 conv's: a new 1x1 conv learns from the 1x1's alone and
 * counts the 3x3's as of another form (sch_space_same_form). */
static void test_transfer_forms(ms_runner *r, const tg_target *tg)
{
    su_buf err = {0};
    su_arena a;
    db_target dt;
    db *d = open_db("forms.db", tg, &a, &dt, &err);
    rt_module *m = forms_model("forms.relay", FORMS, 2), *m2 = forms_model("forms2.relay", FORMS2, 1);
    if (!d || !m || !m2 || m->tasks.len != 2 || m2->tasks.len != 1) {
        ok(false, "a database and the two models' tasks (%s)", su_buf_str(&err));
        goto out;
    }
    tun_options o = {.tuner = &tun_random_ops, .trials = 6, .batch = 3, .measurer = measurer(r, tg, 4, 60),
                     .target = &dt, .model = "forms"};
    tun_report rep = tune_db(d, &m->tasks, &o, "tuning the 3x3 and the 1x1 conv without transfer");
    tun_report_free(&rep);
    const tun_task *c3 = &m->tasks.items[0], *c1 = &m->tasks.items[1];
    if (c3->func->u.func.params[1]->type->shape[2] == 1)
        c3 = &m->tasks.items[1], c1 = &m->tasks.items[0];
    db_record *recs;
    size_t n3 = 0, n1 = 0;
    db_workload_records(d, c3->key, dt.name, &a, &recs, &n3);
    db_workload_records(d, c1->key, dt.name, &a, &recs, &n1);
    ok(n3 > 0 && n1 > 0 && !strcmp(c3->template_name, "conv2d_nchw") && !strcmp(c1->template_name, "conv2d_nchw"),
       "the database holds records of both convs, one template (%zu 3x3, %zu 1x1)", n3, n1);
    o.tuner = &recording_ops;
    o.trials = 1;
    o.transfer = true;
    o.model = "forms2";
    nlessons = ncalls = 0;
    rep = tune_db(d, &m2->tasks, &o, "tuning another 1x1 conv with transfer");
    bool only_1x1 = nlessons == n1;
    for (size_t i = 0; i < nlessons; i++)
        only_1x1 = only_1x1 && !strcmp(lessons[i].key, c1->key);
    ok(only_1x1, "the new 1x1 conv learns the 1x1's %zu records and none of the 3x3's (%zu learnt)", n1, nlessons);
    is_int(rep.tasks[0].transfer.other_form, (int64_t)n3, "the 3x3's records are counted as of another form");
    is_int(rep.tasks[0].transfer.used, (int64_t)n1, "the 1x1's are counted as used");
    tun_report_free(&rep);
out:
    rt_module_free(m);
    rt_module_free(m2);
    su_arena_free(&a);
    su_buf_free(&err);
    if (d)
        db_close(d);
}

int main(void)
{
    /* the runner first: binding and folding the weights runs OpenMP kernels */
    su_buf err = {0};
    ms_runner *r = ms_runner_start(&err);
    ok(r != NULL, "runner starts (%s)", su_buf_str(&err));
    tiny_dir("rt-tune");
    rt_module *m = rt_module_parse("tiny.relay", MODEL, strlen(MODEL), stdout);
    rt_opt_options oo = {.level = 3};
    ok(m && rt_module_bind_random_params(m, 0, 1, stdout) == 2 && rt_module_optimize(m, &oo, stdout) == 0,
       "the tiny model loads with bound weights");
    const rt_task *pub;
    size_t nt;
    rt_module_tasks(m, &pub, &nt);
    is_int(nt, 2, "two tasks: the conv and the dense");
    ok(m->tasks.items[0].param_const && !m->tasks.items[0].param_const[0] && m->tasks.items[0].param_const[1],
       "the conv's weight is a constant parameter, its data is not");
    tg_target tg;
    const char *why;
    tg_target_parse("cpu -cores=2", &tg, &why);
    test_budgets();
    tun_space conv, dense;
    ok(tun_space_init(&conv, &m->tasks.items[0], &tg.hw, &err) && tun_space_init(&dense, &m->tasks.items[1], &tg.hw, &err),
       "spaces of both tasks (%s)", su_buf_str(&err));
    ok(conv.default_index >= 0 && conv.default_index < conv.size, "the default config is in the space");
    test_configs(&conv);
    test_tuners(&dense);
    test_errors(r, &tg, &conv);
    test_instantiation(r, &tg, &m->tasks.items[1]);
    test_reuse(r, &tg, &dense);
    test_loop(r, &tg, m);
    test_confirm(r, &tg, m);
    test_scheduler();
    test_transfer(r, &tg, m);
    test_transfer_forms(r, &tg);
    tun_space_free(&conv);
    tun_space_free(&dense);
    rt_module_free(m);
    ms_runner_stop(r);
    su_buf_free(&err);
    return tap_done();
}
