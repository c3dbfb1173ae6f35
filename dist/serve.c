/* serve.c — a rank other than 0: it says hello with its target (the target
 * string of its own command line, described on its own host), then builds
 * and measures each share rank 0 sends with its own compilers and runner,
 * exactly as a single-process run would (tun_measure), and sends the
 * results back. The task comes as its function's text the first time, is
 * rebuilt here (its workload key must come out the same) and kept with its
 * space and its task data for the shares that follow; configs come as
 * record JSON and are read against this rank's space by their knobs, so a
 * config that does not fit here is an invalid_config result, not a wrong
 * measurement. The rank leaves when rank 0 says stop, or when rank 0's
 * heartbeats stop (it died: the job is over). */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dist/dist.h"

/* A task this rank was sent. */
typedef struct wtask {
    char *key;
    ir_module *m;           /* owns the task's function */
    tun_tasks tasks;        /* the one task */
    tun_space space;
    bool space_ok;
    char *failure;          /* why it cannot be measured here (malloc'd), or NULL */
    tun_task_data *td;      /* its inputs and expected outputs for `seed` */
    uint64_t seed;
} wtask;

typedef struct server {
    dist_comm *c;
    ms_runner *runner;
    tg_target tg;
    int jobs;
    su_map tasks;           /* key -> wtask */
    wtask **all;
    size_t n, cap;
    bool runner_died;
} server;

static wtask *find_task(server *sv, const dist_work *w)
{
    wtask *t = su_map_get(&sv->tasks, w->key);
    if (t || !w->func)
        return t;
    t = su_calloc(1, sizeof *t);
    t->key = su_strdup(w->key);
    t->m = tun_task_from_text(w->func, w->key, w->flops, &t->tasks);
    su_buf why = {0};
    if (!t->m) {
        t->failure = su_strdup("its function does not rebuild here into the same workload");
    } else if (t->tasks.items[0].nparams != w->nparams) {
        t->failure = su_strdup("its function's parameters differ from rank 0's");
    } else {
        memcpy(t->tasks.items[0].param_const, w->param_const, (size_t)w->nparams * sizeof *w->param_const);
        if (!(t->space_ok = tun_space_init(&t->space, &t->tasks.items[0], &sv->tg.hw, &why)))
            t->failure = su_buf_take(&why);
    }
    su_buf_free(&why);
    if (sv->n == sv->cap) {
        sv->cap = sv->cap ? 2 * sv->cap : 8;
        sv->all = su_realloc(sv->all, sv->cap * sizeof *sv->all);
    }
    sv->all[sv->n++] = t;
    su_map_put(&sv->tasks, t->key, t);
    return t;
}

static void free_task(wtask *t)
{
    if (t->space_ok)
        tun_space_free(&t->space);
    tun_task_data_free(t->td);
    tun_tasks_free(&t->tasks);
    ir_module_free(t->m);
    free(t->failure);
    free(t->key);
    free(t);
}

static void fail_all(tun_result *res, int n, su_merr e, const char *msg)
{
    for (int i = 0; i < n; i++) {
        res[i].error = e;
        res[i].msg = su_strdup(msg);
        res[i].index = -1;
    }
}

/* Measures one share into res[w->n]. */
static void measure(server *sv, const dist_work *w, tun_result *res)
{
    wtask *t = find_task(sv, w);
    if (t && !t->failure && (!t->td || t->seed != w->seed)) {
        su_buf why = {0};
        tun_task_data_free(t->td);
        t->seed = w->seed;
        if (!(t->td = tun_task_data_new(&t->tasks.items[0], w->seed, &why)))
            t->failure = su_buf_take(&why);
        su_buf_free(&why);
    }
    if (!t || t->failure) {
        char msg[512];
        snprintf(msg, sizeof msg, "rank %d on %s cannot measure the task: %s", dist_comm_rank(sv->c), tun_host_name(),
                 t ? t->failure : "it was never sent the task's function");
        fail_all(res, w->n, SU_MERR_UNKNOWN, msg);
        return;
    }
    /* the configs that fit this rank's space are measured together */
    sch_config *cf = su_calloc((size_t)w->n + 1, sizeof *cf);
    int *pos = su_calloc((size_t)w->n + 1, sizeof *pos);
    int k = 0;
    for (int i = 0; i < w->n; i++) {
        su_buf why = {0};
        if (tun_config_from_record(&t->space, w->configs[i], &cf[k], &why) == TUN_CFG_OK) {
            pos[k++] = i;
        } else {
            res[i].error = SU_MERR_INVALID_CONFIG;
            res[i].msg = su_buf_take(&why);
            res[i].index = -1;
        }
        su_buf_free(&why);
    }
    tun_measurer m = {sv->runner, &sv->tg, w->build, w->run};
    if (m.build.jobs <= 0)
        m.build.jobs = sv->jobs > 0 ? sv->jobs : sv->tg.cores;
    tun_result *mr = su_calloc((size_t)k + 1, sizeof *mr);
    if (k && !tun_measure(&m, &t->space, t->td, k, cf, mr))
        sv->runner_died = true;
    for (int i = 0; i < k; i++) {
        res[pos[i]] = mr[i];
        sch_config_free(&cf[i]);
    }
    free(mr);
    free(cf);
    free(pos);
}

static void serve_work(server *sv, const char *text)
{
    su_arena a;
    su_arena_init(&a);
    dist_work w;
    su_buf err = {0};
    if (dist_work_parse(text, &a, &w, &err)) {
        tun_result *res = su_calloc((size_t)w.n + 1, sizeof *res);
        measure(sv, &w, res);
        char *out = dist_results_json(w.job, w.n, res);
        dist_comm_send(sv->c, 0, DIST_TAG_RESULTS, out);
        free(out);
        for (int i = 0; i < w.n; i++)
            tun_result_free(&res[i]);
        free(res);
    } else {
        /* a share that does not read has no job to answer: rank 0's
         * deadline for it runs out and the share goes elsewhere */
        fprintf(stderr, "relay-tune: mpi: rank %d: %s\n", dist_comm_rank(sv->c), su_buf_str(&err));
    }
    su_buf_free(&err);
    su_arena_free(&a);
}

bool dist_serve(dist_comm *c, ms_runner *r, const char *target, int jobs, su_buf *err)
{
    server sv = {c, r, {0}, jobs};
    su_arena a;
    su_arena_init(&a);
    dist_hello h = {tun_host_name(), (long)getpid(), {0}, NULL};
    const char *why = NULL;
    if (!tg_target_parse(target, &sv.tg, &why)) {
        h.error = su_arena_printf(&a, "target '%s': %s", target, why);
        h.target = (db_target){target, "", "", 0, ""};
    } else {
        tun_target_describe(&sv.tg, target, &a, &h.target);
        if (!tg_target_runnable(&sv.tg, &why))
            h.error = su_arena_printf(&a, "this host cannot run target '%s': %s", target, why);
    }
    char *text = dist_hello_json(&h);
    dist_comm_send(c, 0, DIST_TAG_HELLO, text);
    free(text);
    bool ok = true;
    for (;;) {
        int src, tag;
        char *m = dist_comm_poll(c, 0, &src, &tag);
        if (m) {
            bool stop = tag == DIST_TAG_STOP;
            if (tag == DIST_TAG_WORK && !h.error)
                serve_work(&sv, m);
            free(m);
            if (stop)
                break;
            if (sv.runner_died) {
                su_buf_puts(err, "the measurement runner process died");
                ok = false;
                break;
            }
            continue;
        }
        if (dist_comm_silence(c, 0) > DIST_SILENCE_S) {
            su_buf_printf(err, "rank 0 sent no heartbeat for %.0f s: leaving", DIST_SILENCE_S);
            ok = false;
            break;
        }
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    for (size_t i = 0; i < sv.n; i++)
        free_task(sv.all[i]);
    free(sv.all);
    su_map_free(&sv.tasks);
    su_arena_free(&a);
    return ok;
}
