/* loop.c — the tuning loop. The trial budget is spread over the selected
 * tasks by their share of the model's work (FLOPs x calls); then each task
 * in turn:
 *   - its records on this target are read back: configs already measured
 *     (under the template's current version) count toward its budget, are
 *     never measured again, and seed the tuner (the best so far is where a
 *     genetic search starts);
 *   - its default config is measured first, unless it was before: it is the
 *     baseline of every speedup;
 *   - the tuner proposes batches; each batch is built, run, and stored in
 *     the database in one transaction (so a killed run loses at most the
 *     batch in flight), and the tuner learns from it;
 *   - it stops at its budget, when the space is exhausted, after
 *     `early_stopping` trials without improvement, or when the stop flag is
 *     set (a signal): the batch in flight is finished and stored first.
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

/* The workload's args for records: the anchor and the input shapes. */
static const char *workload_args(const tun_task *t, su_arena *a)
{
    su_buf b = {0};
    su_buf_printf(&b, "{\"anchor\":\"%s\",\"inputs\":[", t->anchor);
    const ir_expr *f = t->func;
    for (int i = 0; i < f->u.func.nparams; i++) {
        const ir_type *ty = f->u.func.params[i]->type ? f->u.func.params[i]->type : f->u.func.params[i]->u.var.annot;
        su_buf_puts(&b, i ? ",[" : "[");
        for (int k = 0; ty && ty->kind == IR_TY_TENSOR && k < ty->ndim; k++)
            su_buf_printf(&b, "%s%lld", k ? "," : "", (long long)ty->shape[k]);
        su_buf_putc(&b, ']');
    }
    su_buf_puts(&b, "]}");
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
    rec->target = *o->target;
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
    rec->host = tun_host_name();
}

/* ---- one task ---- */

typedef struct run {
    const tun_options *o;
    db *d;
    tun_report *rep;
    su_buf *err;
    double t0;
    int64_t done, todo;
    size_t pos, npos;
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

/* Reads the task's records on this target back into the tuner; true when
 * the default config is among them. */
static bool load_existing(run *R, const tun_space *s, tun_tuner *tu, tun_task_report *tr, bool *ok)
{
    su_arena a;
    su_arena_init(&a);
    db_record *recs;
    size_t n;
    bool have_default = false;
    *ok = db_workload_records(R->d, s->task->key, R->o->target->name, &a, &recs, &n);
    if (!*ok) {
        su_buf_puts(R->err, db_errmsg(R->d));
        su_arena_free(&a);
        return false;
    }
    int64_t *idx = su_calloc(n + 1, sizeof *idx);
    double *cost = su_calloc(n + 1, sizeof *cost);
    size_t m = 0;
    tun_idxset seen = {0};
    int64_t since = 0;
    for (size_t i = 0; i < n; i++) {
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
        have_default |= k == s->default_index;
        account(tr, s, k, recs[i].error, recs[i].mean_cost, &since);
        idx[m] = k;
        cost[m++] = recs[i].error ? INFINITY : recs[i].mean_cost;
    }
    if (m)
        tun_update(tu, (int)m, idx, cost);
    tun_idxset_free(&seen);
    free(idx);
    free(cost);
    su_arena_free(&a);
    return have_default;
}

static void progress(run *R, tun_event ev, const tun_task *t, const tun_task_report *tr, int batch, int errors)
{
    if (!R->o->progress)
        return;
    double el = mono_now() - R->t0;
    tun_progress p = {ev, R->pos, R->npos, t, tr, batch, errors, R->done, R->todo, el,
                      R->done ? el / (double)R->done * (double)(R->todo - R->done) : -1};
    R->o->progress(R->o->progress_ctx, &p);
}

/* Measures and stores one batch; false on a database or runner failure. */
static bool batch(run *R, const tun_space *s, tun_tuner *tu, const tun_task_data *td, const int64_t *idx, int n,
                  tun_task_report *tr, int64_t *since_best)
{
    const tun_options *o = R->o;
    sch_config *cfgs = su_calloc((size_t)n + 1, sizeof *cfgs);
    tun_result *res = su_calloc((size_t)n + 1, sizeof *res);
    for (int i = 0; i < n; i++)
        tun_config_decode(s, idx[i], &cfgs[i]);
    bool alive = tun_measure(&o->measurer, s, td, n, cfgs, res);
    su_arena a;
    su_arena_init(&a);
    const char *args = workload_args(s->task, &a);
    db_record *recs = su_arena_alloc(&a, (size_t)n * sizeof *recs);
    for (int i = 0; i < n; i++)
        make_record(o, s, args, R->rep->session, &cfgs[i], &res[i], &a, &recs[i]);
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
            account(tr, s, idx[i], res[i].error, res[i].mean, since_best);
        }
        tun_update(tu, n, idx, cost);
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
        progress(R, TUN_EV_BATCH, s->task, tr, n, errors);
    return ok;
}

typedef struct plan {
    tun_space space;
    bool space_ok;
    tun_tuner *tuner;
    bool have_default;
} plan;

static bool tune_task(run *R, plan *p, tun_task_report *tr)
{
    const tun_options *o = R->o;
    const tun_space *s = &p->space;
    int jobs = o->measurer.build.jobs > 0 ? o->measurer.build.jobs : 1;
    int bsize = o->batch > 0 ? o->batch : (4 * jobs > 8 ? 4 * jobs : 8);
    int64_t *idx = su_calloc((size_t)bsize + 1, sizeof *idx);
    tun_task_data *td = NULL;
    int64_t since_best = 0;
    bool ok = true;
    progress(R, TUN_EV_TASK_BEGIN, s->task, tr, 0, 0);
    for (;;) {
        int64_t left = tr->budget - tr->trials;
        if (p->have_default && left <= 0)
            break;
        if (o->early_stopping > 0 && tr->measured > 0 && since_best >= o->early_stopping) {
            tr->early_stopped = true;
            break;
        }
        if (o->stop && *o->stop) {
            R->rep->interrupted = true;
            break;
        }
        int k = 0;
        if (!p->have_default) {
            idx[k++] = s->default_index;
            tun_idxset_add(&p->tuner->seen, s->default_index);
            p->have_default = true;
        }
        int want = left < bsize ? (int)(left > 0 ? left : 0) : bsize;
        if (want > k)
            k += tun_next_batch(p->tuner, want - k, idx + k);
        if (!k)
            break;
        if (!td) {
            su_buf why = {0};
            td = tun_task_data_new(s->task, o->seed, &why);
            if (!td) {
                tr->failure = su_buf_take(&why);
                su_buf_free(&why);
                break;
            }
            su_buf_free(&why);
        }
        if (!(ok = batch(R, s, p->tuner, td, idx, k, tr, &since_best)))
            break;
    }
    tr->exhausted = tr->trials >= s->size;
    tun_task_data_free(td);
    free(idx);
    progress(R, TUN_EV_TASK_END, s->task, tr, 0, 0);
    return ok;
}

bool tun_tune(const tun_tasks *tasks, const bool *selected, db *d, const tun_options *o, tun_report *rep, su_buf *err)
{
    memset(rep, 0, sizeof *rep);
    size_t n = tasks->len;
    run R = {o, d, rep, err, mono_now(), 0, 0, 0, 0};
    plan *plans = su_calloc(n + 1, sizeof *plans);
    int64_t *sizes = su_calloc(n + 1, sizeof *sizes), *budgets = su_calloc(n + 1, sizeof *budgets);
    bool *sel = su_calloc(n + 1, sizeof *sel);
    rep->tasks = su_calloc(n + 1, sizeof *rep->tasks);
    bool ok = true;
    /* spaces, and what the database holds already */
    for (size_t i = 0; i < n && ok; i++) {
        if (selected && !selected[i])
            continue;
        sel[i] = true;
        tun_task_report *tr = &rep->tasks[rep->n++];
        tr->task = i;
        tr->best_index = -1;
        plan *p = &plans[i];
        su_buf why = {0};
        p->space_ok = tun_space_init(&p->space, &tasks->items[i], &o->measurer.target->hw, &why);
        if (!p->space_ok) {
            tr->failure = su_buf_take(&why);
            su_buf_free(&why);
            continue;
        }
        su_buf_free(&why);
        sizes[i] = tr->space = p->space.size;
        p->tuner = tun_tuner_new_conf(o->tuner, &p->space, o->seed + i, o->conf);
        p->have_default = load_existing(&R, &p->space, p->tuner, tr, &ok);
    }
    if (ok) {
        tun_budgets(tasks, sel, sizes, o->trials, budgets);
        for (size_t r = 0; r < rep->n; r++) {
            tun_task_report *tr = &rep->tasks[r];
            plan *p = &plans[tr->task];
            tr->budget = budgets[tr->task];
            if (!p->space_ok)
                continue;
            int64_t todo = tr->budget - tr->trials;
            todo = todo < 0 ? 0 : todo;
            if (todo > tr->space - tr->trials)
                todo = tr->space - tr->trials;
            R.todo += todo + (!p->have_default && todo == 0);
        }
        ok = db_session_begin(d, o->model, o->target->name, o->command, rep->session);
        if (!ok)
            su_buf_puts(err, db_errmsg(d));
    }
    R.npos = rep->n;
    for (size_t r = 0; r < rep->n && ok; r++) {
        tun_task_report *tr = &rep->tasks[r];
        plan *p = &plans[tr->task];
        R.pos = r;
        if (!p->space_ok)
            continue;
        if (o->stop && *o->stop) {
            rep->interrupted = true;
            break;
        }
        ok = tune_task(&R, p, tr);
    }
    if (rep->session[0] && !db_session_end(d, rep->session, rep->measured) && ok) {
        su_buf_puts(err, db_errmsg(d));
        ok = false;
    }
    rep->seconds = mono_now() - R.t0;
    for (size_t i = 0; i < n; i++) {
        tun_tuner_free(plans[i].tuner);
        if (plans[i].space_ok)
            tun_space_free(&plans[i].space);
    }
    free(plans);
    free(sizes);
    free(budgets);
    free(sel);
    return ok;
}

void tun_report_free(tun_report *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->tasks[i].failure);
    free(r->tasks);
    memset(r, 0, sizeof *r);
}
