/* loop.c — the tuning loop. Every selected task gets its space and tuner
 * up front, and its records on this target are read back: configs already
 * measured (under the template's current version) count toward the budget,
 * are never measured again, and seed the tuner (the best so far is where a
 * genetic search starts). Then the scheduler (scheduler.c) hands out
 * batches until the budget is spent or every task is done; for each batch:
 *   - the first time a task gets one, its tuner learns what the records of
 *     similar workloads teach (transfer.c), then its own records;
 *   - its default config is measured first, unless it was before: it is the
 *     baseline of every speedup;
 *   - the tuner proposes the batch; it is built and run (here, or dealt
 *     out to MPI ranks by the batch measurer of tun_options), and stored in the
 *     database in one transaction (so a killed run loses at most the batch
 *     in flight), and the tuner learns from it;
 *   - a task drops out when its space is exhausted, after `early_stopping`
 *     trials without improvement, or when it cannot be measured; the stop
 *     flag (a signal) ends the run after the batch in flight.
 * Progress goes to a callback after every batch. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "tuner/tuner.h"

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- budgets ---- */

void tun_budgets(const tun_tasks *tasks, const bool *selected, const int64_t *sizes, int64_t trials, int64_t *budgets)
{
    size_t n = tasks->len;
    int64_t left = trials;
    for (size_t i = 0; i < n; i++) {
        bool sel = !selected || selected[i];
        budgets[i] = sel && sizes[i] > 0 ? 1 : 0;
        left -= budgets[i];
    }
    double *frac = su_calloc(n + 1, sizeof *frac);
    /* each round gives everything left by largest remainders; a task that
     * reaches its space's size is capped and the surplus goes round again */
    while (left > 0) {
        double total = 0;
        size_t open = 0;
        for (size_t i = 0; i < n; i++)
            if (budgets[i] && budgets[i] < sizes[i]) {
                double w = (double)tasks->items[i].flops * tasks->items[i].count;
                total += w > 1 ? w : 1;
                open++;
            }
        if (!open)
            break;
        int64_t given = 0;
        for (size_t i = 0; i < n; i++) {
            frac[i] = -1;
            if (!budgets[i] || budgets[i] >= sizes[i])
                continue;
            double w = (double)tasks->items[i].flops * tasks->items[i].count;
            double exact = (double)left * (w > 1 ? w : 1) / total;
            int64_t whole = (int64_t)floor(exact);
            frac[i] = exact - (double)whole;
            budgets[i] += whole;
            given += whole;
        }
        for (int64_t r = given; r < left; r++) {
            size_t best = n;
            for (size_t i = 0; i < n; i++)
                if (frac[i] >= 0 && (best == n || frac[i] > frac[best]))
                    best = i;
            if (best == n)
                break;
            budgets[best]++;
            frac[best] = -1;
            given++;
        }
        left -= given;
        for (size_t i = 0; i < n; i++)
            if (budgets[i] > sizes[i]) {
                left += budgets[i] - sizes[i];
                budgets[i] = sizes[i];
            }
        if (!given)
            break;
    }
    free(frac);
}

/* ---- records ---- */

/* Text safe for a record's message: valid UTF-8, no control characters but
 * newline and tab (compiler logs may hold anything). */
static const char *clean_text(su_arena *a, const char *s)
{
    su_buf b = {0};
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        int len = *p < 0x80 ? 1 : (*p >> 5) == 6 ? 2 : (*p >> 4) == 14 ? 3 : (*p >> 3) == 30 ? 4 : 0;
        bool ok = len > 0;
        for (int k = 1; ok && k < len; k++)
            ok = (p[k] & 0xc0) == 0x80;
        if (ok && len == 1 && *p < 0x20 && *p != '\n' && *p != '\t')
            ok = false;
        if (!ok) {
            su_buf_putc(&b, '?');
            p++;
            continue;
        }
        su_buf_putn(&b, (const char *)p, (size_t)len);
        p += len;
    }
    const char *r = su_arena_strdup(a, su_buf_str(&b));
    su_buf_free(&b);
    return r;
}

static void make_record(const tun_options *o, const tun_space *s, const char *args, const char *session,
                        const sch_config *cfg, const tun_result *r, su_arena *a, db_record *rec)
{
    const tun_task *t = s->task;
    memset(rec, 0, sizeof *rec);
    rec->workload = (db_workload){t->key, t->template_name, args, (double)t->flops};
    rec->target = r->where ? *r->where : *o->target;
    rec->config_index = r->index >= 0 ? r->index : 0;
    char *cj = tun_config_record_json(s, cfg);
    rec->config = su_arena_strdup(a, cj);
    free(cj);
    rec->is_default = r->index == s->default_index;
    double *costs = su_arena_alloc(a, (size_t)(r->ncosts + 1) * sizeof *costs);
    for (int i = 0; i < r->ncosts; i++)
        costs[i] = r->costs[i] > 1e-12 ? r->costs[i] : 1e-12; /* a record's costs are positive */
    rec->costs = costs;
    rec->ncosts = r->error ? 0 : (size_t)r->ncosts;
    rec->error = r->error;
    su_buf msg = {0};
    su_buf_puts(&msg, r->msg ? r->msg : "");
    if (r->counters.nmissing) {
        /* the record says which counters this host could not give */
        su_buf_printf(&msg, "%scounters unavailable:", msg.len ? "\n" : "");
        for (int i = 0; i < r->counters.nmissing; i++)
            su_buf_printf(&msg, " %s", r->counters.missing[i]);
        if (r->counters.why[0])
            su_buf_printf(&msg, " (%s)", r->counters.why);
    }
    rec->error_msg = clean_text(a, su_buf_str(&msg));
    su_buf_clear(&msg);
    su_buf_putc(&msg, '{');
    for (int i = 0; i < r->counters.n; i++)
        su_buf_printf(&msg, "%s\"%s\":%lld", i ? "," : "", r->counters.names[i], r->counters.values[i]);
    su_buf_putc(&msg, '}');
    rec->counters = su_arena_strdup(a, su_buf_str(&msg));
    su_buf_free(&msg);
    rec->build_time = r->build_time;
    rec->run_time = r->run_time;
    rec->tuner = o->tuner->name;
    rec->session = session[0] ? session : NULL;
    rec->timestamp = r->timestamp;
    rec->host = r->host ? r->host : tun_host_name();
}

/* ---- the run ---- */

/* One selected task's state during the run. */
typedef struct plan {
    tun_space space;
    bool space_ok;
    tun_tuner *tuner;
    bool have_default;      /* its default config is measured */
    bool begun, ended;      /* it got its first batch; it dropped out */
    int64_t since_best;     /* trials since its best improved */
    tun_task_data *td;      /* its inputs and expected outputs (from its first batch on) */
    const char *args;       /* its workload's args for records (merged with the stored ones) */
    int64_t *old_idx;       /* its records on this target, for the tuner once it begins (malloc'd) */
    double *old_cost;
    int nold;
} plan;

typedef struct run {
    const tun_options *o;
    db *d;
    tun_report *rep;
    su_buf *err;
    double t0;
    int64_t done, todo;
    int bsize;              /* configs per batch */
    plan *plans;            /* per selected task, in the report's order */
    tun_sched sched;
    tun_transfer_pool *pool;
    su_arena a;             /* args */
} run;

/* Folds a measured config into the task's numbers. */
static void account(tun_task_report *tr, const tun_space *s, int64_t idx, su_merr e, double mean, int64_t *since_best)
{
    tr->trials++;
    if (e) {
        tr->errors++;
        (*since_best)++;
        return;
    }
    if (idx == s->default_index && (!tr->default_cost || mean < tr->default_cost))
        tr->default_cost = mean;
    if (!tr->best_cost || mean < tr->best_cost) {
        tr->best_cost = mean;
        tr->best_index = idx;
        *since_best = 0;
    } else {
        (*since_best)++;
    }
}

/* Reads the task's records back: those on this target are its trials (kept
 * for its tuner); the args its records are written with. */
static bool load_existing(run *R, plan *p, tun_task_report *tr)
{
    const tun_space *s = &p->space;
    su_arena a;
    su_arena_init(&a);
    db_record *recs;
    size_t n;
    if (!db_workload_records(R->d, s->task->key, NULL, &a, &recs, &n)) {
        su_buf_puts(R->err, db_errmsg(R->d));
        su_arena_free(&a);
        return false;
    }
    p->args = tun_workload_args(s->task, &R->a);
    if (n) {
        /* a workload first stored by an older writer gains the function;
         * args that disagree keep the stored ones (the database would
         * reject the batch) */
        const char *merged = db_args_merge(recs[0].workload.args, p->args, &R->a);
        p->args = merged ? merged : su_arena_strdup(&R->a, recs[0].workload.args);
    }
    p->old_idx = su_calloc(n + 1, sizeof *p->old_idx);
    p->old_cost = su_calloc(n + 1, sizeof *p->old_cost);
    tun_idxset seen = {0};
    int64_t since = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(recs[i].target.name, R->o->target->name) != 0)
            continue;
        sch_config c;
        su_buf why = {0};
        tun_cfg_status st = tun_config_from_record(s, recs[i].config, &c, &why);
        su_buf_free(&why);
        if (st != TUN_CFG_OK) {
            tr->stale += st == TUN_CFG_STALE;
            tr->invalid += st == TUN_CFG_INVALID;
            continue;
        }
        int64_t k = tun_config_encode(s, &c);
        sch_config_free(&c);
        if (!tun_idxset_add(&seen, k))
            continue; /* measured twice (merged databases): counted once */
        p->have_default |= k == s->default_index;
        account(tr, s, k, recs[i].error, recs[i].mean_cost, &since);
        p->old_idx[p->nold] = k;
        p->old_cost[p->nold++] = recs[i].error ? INFINITY : recs[i].mean_cost;
    }
    tun_idxset_free(&seen);
    su_arena_free(&a);
    return true;
}

static void progress(run *R, size_t pos, tun_event ev, int batch, int errors)
{
    if (!R->o->progress)
        return;
    tun_task_report *tr = &R->rep->tasks[pos];
    tr->budget = R->sched.kind == TUN_SCHED_FIXED ? R->sched.tasks[pos].budget : 0;
    double el = mono_now() - R->t0;
    tun_progress p = {ev,    pos, R->rep->n, R->plans[pos].space.task, tr, batch, errors, R->done, R->todo, el,
                      R->done ? el / (double)R->done * (double)(R->todo - R->done) : -1};
    R->o->progress(R->o->progress_ctx, &p);
}

/* Measures and stores one batch; false on a database or runner failure. */
static bool batch(run *R, size_t pos, const int64_t *idx, int n)
{
    const tun_options *o = R->o;
    plan *p = &R->plans[pos];
    const tun_space *s = &p->space;
    tun_task_report *tr = &R->rep->tasks[pos];
    sch_config *cfgs = su_calloc((size_t)n + 1, sizeof *cfgs);
    tun_result *res = su_calloc((size_t)n + 1, sizeof *res);
    for (int i = 0; i < n; i++)
        tun_config_decode(s, idx[i], &cfgs[i]);
    const tun_batch_measurer *bm = &o->batch_measurer;
    bool alive = bm->measure ? bm->measure(bm->ctx, s, p->td, o->seed, n, cfgs, res)
                             : tun_measure(&o->measurer, s, p->td, n, cfgs, res);
    su_arena a;
    su_arena_init(&a);
    db_record *recs = su_arena_alloc(&a, (size_t)n * sizeof *recs);
    for (int i = 0; i < n; i++)
        make_record(o, s, p->args, R->rep->session, &cfgs[i], &res[i], &a, &recs[i]);
    db_counts counts = {0};
    bool ok = db_add_records(R->d, recs, (size_t)n, &counts, NULL, NULL);
    if (!ok)
        su_buf_printf(R->err, "cannot store the batch: %s", db_errmsg(R->d));
    int errors = 0;
    if (ok) {
        double *cost = su_calloc((size_t)n + 1, sizeof *cost);
        for (int i = 0; i < n; i++) {
            cost[i] = res[i].error ? INFINITY : res[i].mean;
            errors += res[i].error != SU_MERR_NONE;
            account(tr, s, idx[i], res[i].error, res[i].mean, &p->since_best);
        }
        tun_update(p->tuner, n, idx, cost);
        free(cost);
        tr->measured += n;
        R->rep->measured += n;
        R->done += n;
    }
    if (ok && !alive) {
        su_buf_puts(R->err, "the measurement runner process died");
        ok = false;
    }
    for (int i = 0; i < n; i++) {
        sch_config_free(&cfgs[i]);
        tun_result_free(&res[i]);
    }
    free(cfgs);
    free(res);
    su_arena_free(&a);
    if (ok)
        progress(R, pos, TUN_EV_BATCH, n, errors);
    return ok;
}

/* The task's first batch: its tuner learns from similar workloads' records
 * (when it can), then from its own. */
static bool begin(run *R, size_t pos)
{
    plan *p = &R->plans[pos];
    tun_task_report *tr = &R->rep->tasks[pos];
    p->begun = true;
    progress(R, pos, TUN_EV_TASK_BEGIN, 0, 0);
    if (R->o->transfer && p->tuner->ops->transfer) {
        if (!R->pool)
            R->pool = tun_transfer_pool_new(&R->o->measurer.target->hw);
        tun_transfer_rec *recs;
        size_t n;
        if (!tun_transfer_gather(R->pool, R->d, p->space.task, R->o->target, TUN_TRANSFER_LIMIT, &recs, &n,
                                 &tr->transfer, R->err))
            return false;
        tun_transfer(p->tuner, n, recs);
        free(recs);
    }
    tun_update(p->tuner, p->nold, p->old_idx, p->old_cost);
    free(p->old_idx);
    free(p->old_cost);
    p->old_idx = NULL;
    p->old_cost = NULL;
    return true;
}

/* The task drops out; its unused trials go to the others. */
static void finish(run *R, size_t pos)
{
    plan *p = &R->plans[pos];
    tun_task_report *tr = &R->rep->tasks[pos];
    p->ended = true;
    tr->exhausted = tr->trials >= p->space.size;
    tun_task_data_free(p->td);
    p->td = NULL;
    tun_sched_drop(&R->sched, pos);
    progress(R, pos, TUN_EV_TASK_END, 0, 0);
}

/* Gives the task its next batch (its default config first); false on a
 * database or runner failure. */
static bool step(run *R, size_t pos)
{
    const tun_options *o = R->o;
    plan *p = &R->plans[pos];
    tun_task_report *tr = &R->rep->tasks[pos];
    const tun_space *s = &p->space;
    int64_t want = tun_sched_want(&R->sched, pos, R->bsize);
    if (p->have_default && want == 0) {
        /* nothing left for it (a resumed run): no transfer, no batch */
        finish(R, pos);
        return true;
    }
    if (!p->begun && !begin(R, pos))
        return false;
    int64_t *idx = su_calloc((size_t)R->bsize + 2, sizeof *idx);
    int k = 0;
    if (!p->have_default) {
        idx[k++] = s->default_index;
        tun_idxset_add(&p->tuner->seen, s->default_index);
        p->have_default = true;
        R->sched.tasks[pos].no_default = false;
    }
    if (want > k)
        k += tun_next_batch(p->tuner, (int)want - k, idx + k);
    bool ok = true;
    if (k && !p->td) {
        su_buf why = {0};
        if (!(p->td = tun_task_data_new(s->task, o->seed, &why)))
            tr->failure = su_buf_take(&why);
        su_buf_free(&why);
    }
    if (k && p->td) {
        ok = batch(R, pos, idx, k);
        tun_sched_update(&R->sched, pos, tr->trials, tr->best_cost);
    }
    free(idx);
    if (!ok)
        return false;
    if (o->early_stopping > 0 && tr->measured > 0 && p->since_best >= o->early_stopping)
        tr->early_stopped = true;
    /* done: nothing was proposed, it failed, stopped early, its space is
     * exhausted, or (fixed) its share is spent */
    if (!k || !p->td || tr->early_stopped || tun_tuner_exhausted(p->tuner) ||
        (R->sched.kind == TUN_SCHED_FIXED && tun_sched_want(&R->sched, pos, 1) == 0))
        finish(R, pos);
    return true;
}

/* Spaces, tuners and what the database holds for every selected task;
 * false on a database error. */
static bool prepare(run *R, const tun_tasks *tasks, const bool *selected)
{
    const tun_options *o = R->o;
    tun_report *rep = R->rep;
    for (size_t i = 0; i < tasks->len; i++)
        if (!selected || selected[i])
            rep->n++;
    rep->tasks = su_calloc(rep->n + 1, sizeof *rep->tasks);
    R->plans = su_calloc(rep->n + 1, sizeof *R->plans);
    tun_sched_init(&R->sched, o->scheduler, rep->n, o->trials, o->seed);
    size_t r = 0;
    for (size_t i = 0; i < tasks->len; i++) {
        if (selected && !selected[i])
            continue;
        tun_task_report *tr = &rep->tasks[r];
        plan *p = &R->plans[r];
        tun_sched_task *st = &R->sched.tasks[r++];
        const tun_task *t = &tasks->items[i];
        tr->task = i;
        tr->best_index = -1;
        p->space.task = t;
        st->group = t->template_name;
        st->flops = (double)t->flops;
        st->calls = t->count;
        su_buf why = {0};
        p->space_ok = tun_space_init(&p->space, t, &o->measurer.target->hw, &why);
        if (!p->space_ok) {
            tr->failure = su_buf_take(&why);
            su_buf_free(&why);
            p->space.task = t;
            p->ended = st->done = true;
            continue;
        }
        su_buf_free(&why);
        st->size = tr->space = p->space.size;
        p->tuner = tun_tuner_new_conf(o->tuner, &p->space, o->seed + i, o->tuner_conf);
        if (!load_existing(R, p, tr))
            return false;
        st->trials = tr->trials;
        st->best = tr->best_cost;
        st->no_default = !p->have_default;
    }
    tun_sched_start(&R->sched);
    /* what this run should measure: the pool left, and any missing default */
    int64_t room = 0, missing = 0;
    for (size_t k = 0; k < rep->n; k++) {
        room += R->sched.tasks[k].size - R->sched.tasks[k].trials;
        missing += R->plans[k].space_ok && !R->plans[k].have_default;
    }
    int64_t left = tun_sched_left(&R->sched);
    R->todo = left > missing ? left : missing;
    R->todo = R->todo < room ? R->todo : room;
    return true;
}

bool tun_tune(const tun_tasks *tasks, const bool *selected, db *d, const tun_options *o, tun_report *rep, su_buf *err)
{
    memset(rep, 0, sizeof *rep);
    run R = {0};
    R.o = o, R.d = d, R.rep = rep, R.err = err, R.t0 = mono_now();
    su_arena_init(&R.a);
    int jobs = o->measurer.build.jobs > 0 ? o->measurer.build.jobs : 1;
    /* a batch keeps every measurer busy: ranks measure their shares side by side */
    int width = o->batch_measurer.width > 1 ? o->batch_measurer.width : 1;
    R.bsize = o->batch > 0 ? o->batch : (4 * jobs > 8 ? 4 * jobs : 8) * width;
    bool ok = prepare(&R, tasks, selected);
    if (ok && !(ok = db_session_begin(d, o->model, o->target->name, o->command, rep->session)))
        su_buf_puts(err, db_errmsg(d));
    if (ok) {
        /* the calls of each task, for the model's estimated latency (dashboard) */
        const char **hashes = su_arena_alloc(&R.a, (rep->n + 1) * sizeof *hashes);
        int *calls = su_arena_alloc(&R.a, (rep->n + 1) * sizeof *calls);
        for (size_t k = 0; k < rep->n; k++) {
            const tun_task *t = &tasks->items[rep->tasks[k].task];
            hashes[k] = t->hash;
            calls[k] = t->count;
        }
        if (!(ok = db_session_set_tasks(d, rep->session, rep->n, hashes, calls)))
            su_buf_puts(err, db_errmsg(d));
    }
    while (ok) {
        if (o->stop && *o->stop) {
            rep->interrupted = true;
            break;
        }
        size_t pos = tun_sched_next(&R.sched);
        if (pos >= rep->n)
            break;
        ok = step(&R, pos);
    }
    for (size_t k = 0; k < rep->n; k++) {
        if (R.plans[k].begun && !R.plans[k].ended)
            finish(&R, k);
        rep->tasks[k].budget = o->scheduler == TUN_SCHED_FIXED ? R.sched.tasks[k].budget : rep->tasks[k].trials;
    }
    if (rep->session[0] && !db_session_end(d, rep->session, rep->measured) && ok) {
        su_buf_puts(err, db_errmsg(d));
        ok = false;
    }
    rep->seconds = mono_now() - R.t0;
    /* the tuners first: they may point at the pool's spaces */
    for (size_t k = 0; k < rep->n; k++) {
        plan *p = &R.plans[k];
        tun_tuner_free(p->tuner);
        tun_task_data_free(p->td);
        free(p->old_idx);
        free(p->old_cost);
        if (p->space_ok)
            tun_space_free(&p->space);
    }
    tun_transfer_pool_free(R.pool);
    tun_sched_free(&R.sched);
    free(R.plans);
    su_arena_free(&R.a);
    return ok;
}

void tun_report_free(tun_report *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->tasks[i].failure);
    free(r->tasks);
    memset(r, 0, sizeof *r);
}
