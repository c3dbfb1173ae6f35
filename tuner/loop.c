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
 *   - the tuner proposes the batch and the batch is claimed in the database
 *     (db/claims.c): a config another tune process on the same file has
 *     measured or is measuring is dropped and the tuner proposes again, so
 *     two processes sharing a file never measure one config twice;
 *   - the batch is built and run (here, or dealt out to MPI ranks by the
 *     batch measurer of tun_options), stored in the database in one
 *     transaction (so a killed run loses at most the batch in flight), its
 *     claims are released, and the tuner learns from it;
 *   - a task drops out when its space is exhausted, after `early_stopping`
 *     trials without improvement, or when it cannot be measured; the stop
 *     flag (a signal) ends the run after the batch in flight, and so does a
 *     time budget, early enough that the tasks' confirmations still fit;
 *   - the model's estimated time in its tasks (calls x best cost) is kept
 *     after every batch, with when it last fell by more than 1%;
 *   - when a task that measured something ends, its best few configs are
 *     re-measured interleaved (A B C A B C ...) and ranked by median: a
 *     confirmation, which compiling prefers to the single best record.
 * Progress goes to a callback after every batch. One run can tune for
 * several targets at once (tun_tune_targets): each selected task is then a
 * task per target, with its own space, tuner, records and confirmation,
 * and the scheduler spends the one budget over all of them. */
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

/* Adds the time since t0 to phase ph of the run's profile (when kept). */
static void spent(const tun_options *o, tun_phase ph, double t0)
{
    if (o->profile)
        o->profile->seconds[ph] += mono_now() - t0;
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
    size_t ti;              /* its target: the run's options os[ti] (tun_tune_targets) */
    const tun_options *o;   /* those options: its measurer, batch measurer and target */
    double run_s;           /* seconds its runner spent on this run's good trials (load, check, time) */
    int64_t runs;           /* those trials */
} plan;

typedef struct run {
    const tun_options *o;
    db *d;
    tun_report *rep;
    su_buf *err;
    double t0;
    int64_t done, todo;
    int bsize;              /* configs per batch */
    plan *plans;            /* per selected task and target, in the report's order */
    tun_sched sched;
    tun_transfer_pool **pools; /* per target: spaces of similar workloads on its hardware */
    const tun_options *os;  /* per target: its options (os[0]: the run's own settings) */
    size_t nt;
    char owner[400];        /* this run's name on its claims ("" before the session) */
    bool failed;            /* a database or runner failure ends the run: no more measuring */
    double est_ref;         /* the model's estimate at its last fall of more than 1% */
    su_map *built;          /* per target: the candidates built so far (tun_measurer.built) */
    double confirm_s;       /* wall seconds of the confirmations so far */
    double confirm_guess;   /* what confirm_cost guessed for them */
    su_arena a;             /* args */
} run;

/* How long a claim holds if its owner neither stores nor releases it (a hung
 * process of another host; claims of exited processes of this host are void
 * at once), and how often a task proposes again when others hold its picks. */
#define CLAIM_TTL_S 1800.0
#define CLAIM_ROUNDS 8

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
        if (strcmp(recs[i].target.name, p->o->target->name) != 0)
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
    double el = mono_now() - R->t0, budget = R->o->time_budget;
    double eta = budget > 0 ? (budget > el ? budget - el : 0)
                            : R->done ? el / (double)R->done * (double)(R->todo - R->done) : -1;
    tun_progress p = {ev, pos, R->rep->n, R->plans[pos].space.task, tr, batch, errors, R->done, R->todo, el, eta};
    R->o->progress(R->o->progress_ctx, &p);
}

/* The model's estimated time in its tasks after task pos's best went from
 * `was` to its report's best: calls x best cost over the tasks with a best
 * (a task's first best joins the reference too, so that only falls count). */
static void estimate(run *R, size_t pos, double was)
{
    tun_report *rep = R->rep;
    const tun_task_report *tr = &rep->tasks[pos];
    double calls = R->plans[pos].space.task->count, now = tr->best_cost;
    if (now <= 0 || now == was)
        return;
    if (was <= 0) {
        rep->estimate += calls * now;
        R->est_ref += calls * now;
        return;
    }
    rep->estimate -= calls * (was - now);
    if (rep->estimate < 0.99 * R->est_ref) {
        R->est_ref = rep->estimate;
        rep->improved_at = mono_now() - R->t0;
        rep->improved_after = rep->measured;
    }
}

/* Task p's measurer: its target's, keeping the candidates it builds in
 * the run's map of that target, so that its confirmation compiles nothing
 * its batches built. */
static tun_measurer measurer_of(run *R, const plan *p)
{
    tun_measurer m = p->o->measurer;
    m.built = &R->built[p->ti];
    return m;
}

/* Measures and stores one batch; false on a database or runner failure. */
static bool batch(run *R, size_t pos, const int64_t *idx, int n)
{
    plan *p = &R->plans[pos];
    const tun_options *o = p->o;
    const tun_space *s = &p->space;
    tun_task_report *tr = &R->rep->tasks[pos];
    sch_config *cfgs = su_calloc((size_t)n + 1, sizeof *cfgs);
    tun_result *res = su_calloc((size_t)n + 1, sizeof *res);
    for (int i = 0; i < n; i++)
        tun_config_decode(s, idx[i], &cfgs[i]);
    const tun_batch_measurer *bm = &o->batch_measurer;
    tun_measurer m = measurer_of(R, p);
    bool alive = bm->measure ? bm->measure(bm->ctx, s, p->td, o->seed, n, cfgs, res)
                             : tun_measure(&m, s, p->td, n, cfgs, res);
    su_arena a;
    su_arena_init(&a);
    db_record *recs = su_arena_alloc(&a, (size_t)n * sizeof *recs);
    for (int i = 0; i < n; i++)
        make_record(o, s, p->args, R->rep->session, &cfgs[i], &res[i], &a, &recs[i]);
    db_counts counts = {0};
    double t_store = mono_now();
    bool ok = db_add_records(R->d, recs, (size_t)n, &counts, NULL, NULL);
    if (!ok)
        su_buf_printf(R->err, "cannot store the batch: %s", db_errmsg(R->d));
    /* stored: the records now keep others off these configs (a failed
     * release only leaves claims that expire) */
    if (ok && R->owner[0])
        db_release_claims(R->d, R->owner);
    spent(o, TUN_PH_STORE, t_store);
    int errors = 0;
    if (ok) {
        double *cost = su_calloc((size_t)n + 1, sizeof *cost);
        for (int i = 0; i < n; i++) {
            cost[i] = res[i].error ? INFINITY : res[i].mean;
            errors += res[i].error != SU_MERR_NONE;
            account(tr, s, idx[i], res[i].error, res[i].mean, &p->since_best);
            if (!res[i].error && res[i].run_time > 0)
                p->run_s += res[i].run_time, p->runs++;
        }
        double t_learn = mono_now();
        tun_update(p->tuner, n, idx, cost);
        spent(o, TUN_PH_LEARN, t_learn);
        tr->transfer.dropped_at = p->tuner->transfer_dropped_at;
        tr->transfer.weight = p->tuner->transfer_weight;
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
    double t0 = mono_now();
    if (R->o->transfer && p->tuner->ops->transfer) {
        if (!R->pools[p->ti])
            R->pools[p->ti] = tun_transfer_pool_new(&p->o->measurer.target->hw);
        tun_transfer_rec *recs;
        size_t n;
        if (!tun_transfer_gather(R->pools[p->ti], R->d, &p->space, p->o->target, TUN_TRANSFER_LIMIT, &recs, &n,
                                 &tr->transfer, R->err))
            return false;
        tun_transfer(p->tuner, n, recs);
        free(recs);
    }
    spent(R->o, TUN_PH_TRANSFER, t0);
    t0 = mono_now();
    tun_update(p->tuner, p->nold, p->old_idx, p->old_cost);
    spent(R->o, TUN_PH_LEARN, t0);
    free(p->old_idx);
    free(p->old_cost);
    p->old_idx = NULL;
    p->old_cost = NULL;
    return true;
}

/* The task's best distinct configs of this template version on this target
 * and ISA, best first: at most k of them into idx; how many (-1 on a
 * database error). */
static int best_configs(run *R, size_t pos, int k, int64_t *idx)
{
    const tun_space *s = &R->plans[pos].space;
    const db_target *t = R->plans[pos].o->target;
    su_arena a;
    su_arena_init(&a);
    db_record *recs;
    size_t got;
    int n = 0;
    if (!db_top_k(R->d, s->task->key, t->name, (size_t)k * 8, &a, &recs, &got)) {
        su_buf_puts(R->err, db_errmsg(R->d));
        n = -1;
    }
    for (size_t i = 0; n >= 0 && i < got && n < k; i++) {
        if (t->isa && recs[i].target.isa && strcmp(t->isa, recs[i].target.isa) != 0)
            continue;
        sch_config c;
        su_buf why = {0};
        tun_cfg_status st = tun_config_from_record(s, recs[i].config, &c, &why);
        su_buf_free(&why);
        if (st != TUN_CFG_OK)
            continue;
        int64_t x = tun_config_encode(s, &c);
        sch_config_free(&c);
        bool dup = false;
        for (int j = 0; j < n; j++)
            dup |= idx[j] == x;
        if (!dup)
            idx[n++] = x;
    }
    su_arena_free(&a);
    return n;
}

/* Measures n configs in order on one measurer, so that they are timed side
 * by side on one host: here, or on one rank of the task's target when the
 * batch measurer can send it there (a target this process does not measure
 * under MPI); false when the runner died. */
static bool measure_together(run *R, const plan *p, int n, const sch_config *cfgs, tun_result *res)
{
    const tun_options *o = p->o;
    const tun_batch_measurer *bm = &o->batch_measurer;
    tun_measurer m = measurer_of(R, p);
    return bm->together ? bm->together(bm->ctx, &p->space, p->td, o->seed, n, cfgs, res)
                        : tun_measure(&m, &p->space, p->td, n, cfgs, res);
}

/* What confirming task pos should cost, before it is corrected by what the
 * run's confirmations so far cost against this guess: its best configs and
 * its default, each run `rounds` times as long as the task's trials ran
 * (load, check, time), plus a compile at the task's trial cost for a config
 * this run has not built (confirming reuses the batches' objects). */
static double confirm_cost(run *R, size_t pos)
{
    const plan *p = &R->plans[pos];
    const tun_options *o = p->o;
    const tun_task_report *tr = &R->rep->tasks[pos];
    /* its best configs and, unless among them, its default */
    int64_t k = tr->trials < o->confirm_top + 1 ? tr->trials : o->confirm_top + 1;
    if (k < 2)
        return 0;
    double rounds = o->confirm_rounds > 0 ? o->confirm_rounds : 3;
    double trial = tun_sched_trial_seconds(&R->sched, pos);
    double each = p->runs ? p->run_s / (double)p->runs : trial;
    /* configs of earlier sessions among the best are not built in this run */
    double unbuilt = tr->trials > tr->measured ? (double)k * (double)(tr->trials - tr->measured) / (double)tr->trials : 0;
    return (double)k * rounds * each + unbuilt * trial;
}

static int by_median(const void *a, const void *b)
{
    const db_confirmed *x = a, *y = b;
    return x->median < y->median ? -1 : x->median > y->median;
}

/* Re-measures the task's best configs and its default config side by side,
 * rounds times each in turn, so that a config lucky in its one measurement
 * does not win, and stores their ranking by median (a config that fails a
 * round is left out); false on a database or runner failure. */
static bool confirm(run *R, size_t pos)
{
    plan *p = &R->plans[pos];
    const tun_options *o = p->o;
    const tun_space *s = &p->space;
    tun_task_report *tr = &R->rep->tasks[pos];
    int rounds = o->confirm_rounds > 0 ? o->confirm_rounds : 3;
    int64_t *idx = su_calloc((size_t)o->confirm_top + 2, sizeof *idx);
    int k = best_configs(R, pos, o->confirm_top, idx);
    /* the default config (what an untuned compile uses) runs beside the
     * best ones, so that a tuned choice is never one the untuned model beats
     * side by side: a best picked on one lucky measurement loses to it */
    bool has_default = false;
    for (int i = 0; i < k; i++)
        has_default |= idx[i] == s->default_index;
    if (k > 0 && !has_default)
        idx[k++] = s->default_index;
    if (k < 2) {
        free(idx);
        return k >= 0;
    }
    int n = k * rounds;
    sch_config *cfgs = su_calloc((size_t)n + 1, sizeof *cfgs);
    tun_result *res = su_calloc((size_t)n + 1, sizeof *res);
    for (int i = 0; i < n; i++)
        tun_config_decode(s, idx[i % k], &cfgs[i]);
    bool ok = measure_together(R, p, n, cfgs, res);
    if (!ok)
        su_buf_puts(R->err, "the measurement runner process died");
    su_arena a;
    su_arena_init(&a);
    db_confirmed *rows = su_arena_alloc(&a, (size_t)k * sizeof *rows);
    int m = 0;
    for (int c = 0; ok && c < k; c++) {
        double *costs = su_arena_alloc(&a, (size_t)rounds * sizeof *costs);
        bool good = true;
        for (int r = 0; r < rounds; r++) {
            const tun_result *x = &res[r * k + c];
            good &= !x->error && x->mean > 0;
            costs[r] = x->mean;
        }
        if (!good)
            continue;
        char *cj = tun_config_record_json(s, &cfgs[c]);
        rows[m++] = (db_confirmed){idx[c], su_arena_strdup(&a, cj), costs, (size_t)rounds, db_median(costs, (size_t)rounds), 0};
        free(cj);
    }
    qsort(rows, (size_t)m, sizeof *rows, by_median);
    if (ok && m && !(ok = db_add_confirmation(R->d, s->task->key, o->target, R->rep->session, rows, (size_t)m)))
        su_buf_printf(R->err, "cannot store the confirmation: %s", db_errmsg(R->d));
    if (ok && m) {
        tr->confirmed = m;
        tr->confirmed_index = rows[0].config_index;
        tr->confirmed_cost = rows[0].median;
    }
    for (int i = 0; i < n; i++) {
        sch_config_free(&cfgs[i]);
        tun_result_free(&res[i]);
    }
    free(cfgs);
    free(res);
    free(idx);
    su_arena_free(&a);
    return ok;
}

/* The task drops out; its unused trials go to the others. A task that
 * measured something is confirmed first (unless the run is stopping). */
static bool finish(run *R, size_t pos)
{
    plan *p = &R->plans[pos];
    tun_task_report *tr = &R->rep->tasks[pos];
    const tun_options *o = R->o;
    bool ok = true;
    if (o->confirm_top >= 2 && p->td && tr->measured > 0 && !R->failed && !(o->stop && *o->stop)) {
        /* its measuring counts as confirmation, not as the phases of a trial */
        tun_profile before = o->profile ? *o->profile : (tun_profile){{0}};
        double t0 = mono_now();
        tun_task_data_set_cutoff(p->td, 0); /* every round of every config, in full */
        double guess = confirm_cost(R, pos);
        ok = confirm(R, pos);
        R->confirm_guess += guess;
        R->confirm_s += mono_now() - t0;
        R->rep->confirm_seconds = R->confirm_s;
        if (o->profile) {
            for (int ph = TUN_PH_CODEGEN; ph <= TUN_PH_TIME; ph++)
                o->profile->seconds[ph] = before.seconds[ph];
            spent(o, TUN_PH_CONFIRM, t0);
        }
    }
    p->ended = true;
    tr->rejected = p->tuner ? p->tuner->rejected : 0;
    tr->exhausted = tr->trials >= p->space.size || (p->tuner && tun_tuner_exhausted(p->tuner));
    tun_task_data_free(p->td);
    p->td = NULL;
    tun_sched_drop(&R->sched, pos);
    progress(R, pos, TUN_EV_TASK_END, 0, 0);
    return ok;
}

/* Claims configs idx[0..n) of the task for this run and keeps, in order, those
 * no other tune process on the file has measured or holds; how many, or -1
 * on a database error. */
static int claim(run *R, size_t pos, int64_t *idx, int n)
{
    if (!R->owner[0] || n == 0)
        return n;
    const tun_space *s = &R->plans[pos].space;
    char **text = su_calloc((size_t)n + 1, sizeof *text);
    int *state = su_calloc((size_t)n + 1, sizeof *state);
    for (int i = 0; i < n; i++) {
        sch_config c;
        tun_config_decode(s, idx[i], &c);
        text[i] = tun_config_record_json(s, &c);
        sch_config_free(&c);
    }
    double now = db_now();
    int kept = -1;
    const char *target = R->plans[pos].o->target->name;
    if (db_claim(R->d, s->task->key, target, (const char *const *)text, (size_t)n, R->owner, now, now + CLAIM_TTL_S,
                 state)) {
        kept = 0;
        for (int i = 0; i < n; i++)
            if (state[i] == DB_CLAIM_OURS)
                idx[kept++] = idx[i];
    } else {
        su_buf_printf(R->err, "cannot claim the batch: %s", db_errmsg(R->d));
    }
    for (int i = 0; i < n; i++)
        free(text[i]);
    free(text);
    free(state);
    return kept;
}

/* The task's next batch, claimed (its default config first when it has not
 * been measured): proposes again while other processes hold the picks; the
 * number of configs, or -1 on a database error. */
static int propose(run *R, size_t pos, int64_t want, int64_t *idx)
{
    plan *p = &R->plans[pos];
    const tun_space *s = &p->space;
    int k = 0, n = 0;
    if (!p->have_default) {
        idx[n++] = s->default_index;
        tun_idxset_add(&p->tuner->seen, s->default_index);
        p->have_default = true;
        R->sched.tasks[pos].no_default = false;
    }
    for (int round = 0; round < CLAIM_ROUNDS; round++) {
        if (want > n)
            n += tun_next_batch(p->tuner, (int)want - n, idx + n);
        if (n == k)
            break; /* nothing new to propose */
        int kept = claim(R, pos, idx + k, n - k);
        if (kept < 0)
            return -1;
        n = k += kept;
        if (k >= want)
            break;
    }
    return k;
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
        return finish(R, pos);
    }
    if (!p->begun && !begin(R, pos))
        return false;
    int64_t *idx = su_calloc((size_t)(want > R->bsize ? want : R->bsize) + 2, sizeof *idx);
    double t0 = mono_now();
    int k = propose(R, pos, want, idx);
    spent(o, TUN_PH_PROPOSE, t0);
    if (k < 0) {
        free(idx);
        return false;
    }
    bool ok = true;
    if (k && !p->td) {
        su_buf why = {0};
        double t_data = mono_now();
        if (!(p->td = tun_task_data_new(s->task, o->seed, &why)))
            tr->failure = su_buf_take(&why);
        spent(o, TUN_PH_DATA, t_data);
        su_buf_free(&why);
    }
    if (k && p->td) {
        double t_batch = mono_now(), was = tr->best_cost;
        ok = batch(R, pos, idx, k);
        tun_sched_timed(&R->sched, pos, k, mono_now() - t_batch);
        tun_sched_update(&R->sched, pos, tr->trials, tr->best_cost);
        estimate(R, pos, was);
        /* plainly slower candidates need not be timed to the last repeat */
        if (p->td && o->cutoff >= 1 && tr->best_cost > 0)
            tun_task_data_set_cutoff(p->td, o->cutoff * tr->best_cost);
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
        return finish(R, pos);
    return true;
}

/* Plan r: task t (index i in the model) on target ti, its space, its tuner
 * and what the database holds for it; false on a database error. */
static bool prepare_plan(run *R, size_t r, const tun_task *t, size_t i, size_t ti)
{
    const tun_options *o = R->o;
    tun_task_report *tr = &R->rep->tasks[r];
    plan *p = &R->plans[r];
    tun_sched_task *st = &R->sched.tasks[r];
    tr->task = i;
    tr->target = ti;
    tr->best_index = -1;
    tr->confirmed_index = -1;
    p->ti = ti;
    p->o = &R->os[ti];
    p->space.task = t;
    /* a task's speed on one target says nothing of its speed on another */
    st->group = R->nt > 1 ? su_arena_printf(&R->a, "%s on %s", t->template_name, p->o->target->name)
                          : t->template_name;
    st->flops = (double)t->flops;
    st->calls = t->count;
    st->light = t->light;
    su_buf why = {0};
    p->space_ok = tun_space_init(&p->space, t, &p->o->measurer.target->hw, &why);
    if (!p->space_ok) {
        tr->failure = su_buf_take(&why);
        su_buf_free(&why);
        p->space.task = t;
        p->ended = st->done = true;
        return true;
    }
    su_buf_free(&why);
    st->size = tr->space = p->space.size;
    p->tuner = tun_tuner_new_conf(o->tuner, &p->space, o->seed + i, o->tuner_conf);
    if (!load_existing(R, p, tr))
        return false;
    st->trials = tr->trials;
    st->best = tr->best_cost;
    st->no_default = !p->have_default;
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
            rep->n += R->nt;
    rep->tasks = su_calloc(rep->n + 1, sizeof *rep->tasks);
    R->plans = su_calloc(rep->n + 1, sizeof *R->plans);
    /* a time budget alone: the spaces bound the trials */
    int64_t trials = o->trials > 0 || o->time_budget <= 0 ? o->trials : INT64_MAX / 4;
    tun_sched_init(&R->sched, o->scheduler, rep->n, trials, o->seed);
    R->sched.per_second = o->time_budget > 0;
    size_t r = 0;
    /* target by target, each with every selected task */
    for (size_t ti = 0; ti < R->nt; ti++)
        for (size_t i = 0; i < tasks->len; i++)
            if ((!selected || selected[i]) && !prepare_plan(R, r++, &tasks->items[i], i, ti))
                return false;
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
    /* the estimate starts from what the database holds */
    rep->improved_at = -1;
    for (size_t k = 0; k < rep->n; k++)
        if (rep->tasks[k].best_cost > 0)
            rep->estimate += R->plans[k].space.task->count * rep->tasks[k].best_cost;
    R->est_ref = rep->estimate;
    return true;
}

/* True when the time budget leaves no room for another batch: what is
 * left would not cover one more batch of the slowest-so-far kind plus the
 * confirmations of the tasks still open, at what confirmations have cost
 * so far against their guess (confirm_cost; the guess itself until one
 * has run). The old reserve, each confirmed config as `rounds` whole
 * trials, compile included, stopped runs at half their budget. */
static bool out_of_time(run *R)
{
    const tun_options *o = R->o;
    if (o->time_budget <= 0)
        return false;
    double left = o->time_budget - (mono_now() - R->t0), trial = 0, confirm = 0;
    for (size_t k = 0; k < R->rep->n; k++) {
        double t = tun_sched_trial_seconds(&R->sched, k);
        trial = t > trial ? t : trial;
        if (R->plans[k].begun && !R->plans[k].ended && R->rep->tasks[k].measured > 0 && o->confirm_top >= 2)
            confirm += confirm_cost(R, k);
    }
    double scale = R->confirm_guess > 0 ? R->confirm_s / R->confirm_guess : 1;
    scale = scale < 0.5 ? 0.5 : scale > 4 ? 4 : scale;
    return left < trial * R->bsize + confirm * scale;
}

bool tun_tune(const tun_tasks *tasks, const bool *selected, db *d, const tun_options *o, tun_report *rep, su_buf *err)
{
    return tun_tune_targets(tasks, selected, d, o, 1, rep, err);
}

/* The session's target: the run's one target, or its targets joined. */
static const char *session_target(run *R)
{
    if (R->nt == 1)
        return R->os[0].target->name;
    su_buf b = {0};
    for (size_t ti = 0; ti < R->nt; ti++)
        su_buf_printf(&b, "%s%s", ti ? " + " : "", R->os[ti].target->name);
    const char *t = su_arena_strdup(&R->a, su_buf_str(&b));
    su_buf_free(&b);
    return t;
}

/* Configs per batch: --batch, or enough to keep every measurer busy (ranks
 * measure their shares side by side), for the widest target. */
static int batch_size(const run *R)
{
    const tun_options *o = R->o;
    int jobs = o->measurer.build.jobs > 0 ? o->measurer.build.jobs : 1, width = 1;
    for (size_t ti = 0; ti < R->nt; ti++)
        width = R->os[ti].batch_measurer.width > width ? R->os[ti].batch_measurer.width : width;
    return o->batch > 0 ? o->batch : (4 * jobs > 8 ? 4 * jobs : 8) * width;
}

bool tun_tune_targets(const tun_tasks *tasks, const bool *selected, db *d, const tun_options *os, size_t nt,
                      tun_report *rep, su_buf *err)
{
    memset(rep, 0, sizeof *rep);
    run R = {0};
    const tun_options *o = os;
    R.o = o, R.os = os, R.nt = nt > 0 ? nt : 1, R.d = d, R.rep = rep, R.err = err, R.t0 = mono_now();
    R.pools = su_calloc(R.nt + 1, sizeof *R.pools);
    R.built = su_calloc(R.nt + 1, sizeof *R.built);
    su_arena_init(&R.a);
    R.bsize = batch_size(&R);
    bool ok = prepare(&R, tasks, selected);
    if (ok && !(ok = db_session_begin(d, o->model, session_target(&R), o->command, rep->session)))
        su_buf_puts(err, db_errmsg(d));
    if (ok) {
        /* the calls of each task, for the model's estimated latency (dashboard):
         * the tasks of the first target (every target has the same) */
        size_t ntasks = rep->n / R.nt;
        const char **hashes = su_arena_alloc(&R.a, (rep->n + 1) * sizeof *hashes);
        int *calls = su_arena_alloc(&R.a, (rep->n + 1) * sizeof *calls);
        for (size_t k = 0; k < ntasks; k++) {
            const tun_task *t = &tasks->items[rep->tasks[k].task];
            hashes[k] = t->hash;
            calls[k] = t->count;
        }
        if (!(ok = db_session_set_tasks(d, rep->session, ntasks, hashes, calls)))
            su_buf_puts(err, db_errmsg(d));
        db_claim_owner(rep->session, R.owner, sizeof R.owner);
    }
    while (ok) {
        if (o->stop && *o->stop) {
            rep->interrupted = true;
            break;
        }
        if (out_of_time(&R)) {
            rep->out_of_time = true;
            break;
        }
        size_t pos = tun_sched_next(&R.sched);
        if (pos >= rep->n)
            break;
        ok = step(&R, pos);
    }
    R.failed = !ok;
    for (size_t k = 0; k < rep->n; k++) {
        if (R.plans[k].begun && !R.plans[k].ended && !finish(&R, k))
            ok = false, R.failed = true;
        rep->tasks[k].budget = o->scheduler == TUN_SCHED_FIXED ? R.sched.tasks[k].budget : rep->tasks[k].trials;
    }
    if (R.owner[0] && !db_release_claims(d, R.owner) && ok) {
        su_buf_puts(err, db_errmsg(d));
        ok = false;
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
    for (size_t ti = 0; ti < R.nt; ti++) {
        tun_transfer_pool_free(R.pools[ti]);
        tun_built_free(&R.built[ti]);
    }
    free(R.pools);
    free(R.built);
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
