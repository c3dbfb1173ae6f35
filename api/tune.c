/* tune.c — the public tuning API over tuner/: the runner, rt_tune (options
 * checked and turned into the tuner's, the task selection parsed, progress
 * and the report translated to public structs, the end-of-run table) and
 * rt_task_best_config, the lookup that compiling uses. */
#include <math.h>
#include <string.h>

#include "api/api.h"

static void fail(FILE *errs, const char *fmt, ...) SU_PRINTF(2, 3);
static void fail(FILE *errs, const char *fmt, ...)
{
    if (!errs)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("relay-tune: error: ", errs);
    vfprintf(errs, fmt, ap);
    fputc('\n', errs);
    va_end(ap);
}

rt_runner *rt_runner_start(FILE *errs)
{
    su_buf err = {0};
    ms_runner *r = ms_runner_start(&err);
    if (!r) {
        fail(errs, "%s", su_buf_str(&err));
        su_buf_free(&err);
        return NULL;
    }
    su_buf_free(&err);
    rt_runner *h = su_calloc(1, sizeof *h);
    h->r = r;
    return h;
}

void rt_runner_stop(rt_runner *r)
{
    if (!r)
        return;
    ms_runner_stop(r->r);
    free(r);
}

/* Parses a task selection ("0,3-5,e6a6": indices, ranges, hash prefixes of
 * at least 4 hex digits) into sel[]; false after a message. */
static bool parse_selection(const rt_module *m, const char *text, bool *sel, FILE *errs)
{
    size_t n = m->tasks.len;
    const char *p = text;
    while (*p) {
        size_t k = strcspn(p, ",");
        char item[64];
        if (k == 0 || k >= sizeof item) {
            fail(errs, "--tasks: bad item in '%s'", text);
            return false;
        }
        memcpy(item, p, k);
        item[k] = 0;
        char *end;
        unsigned long a = strtoul(item, &end, 10), b = a;
        bool number = end != item && (*end == 0 || *end == '-');
        if (number && *end == '-')
            b = strtoul(end + 1, &end, 10);
        number = number && *end == 0 && item[0] != '-' && item[k - 1] != '-';
        /* digits only may still be the start of a hash */
        if (number && (a > b || b >= n) && k >= 4 && !strchr(item, '-'))
            number = false;
        if (number) {
            if (a > b || b >= n) {
                fail(errs, "--tasks: '%s' is out of range (the model has %zu tasks, 0 to %zu)", item, n,
                     n ? n - 1 : 0);
                return false;
            }
            for (unsigned long i = a; i <= b; i++)
                sel[i] = true;
        } else {
            size_t hits = 0;
            for (size_t i = 0; k >= 4 && i < n; i++)
                if (!strncmp(m->tasks.items[i].hash, item, k)) {
                    sel[i] = true;
                    hits++;
                }
            if (!hits) {
                fail(errs, "--tasks: '%s' is neither a task index nor the start of a task's hash", item);
                return false;
            }
        }
        p += k;
        if (*p == ',')
            p++;
    }
    return true;
}

typedef struct relay {
    const rt_tune_options *o;
    rt_module *m;
    const char *const *tnames;  /* the run's target strings, by tun_task_report.target */
    int nt;
} relay;

static double gflops(const tun_task *t, double cost)
{
    return cost > 0 ? (double)t->flops / cost * 1e-9 : 0;
}

static void on_progress(void *ctx, const tun_progress *p)
{
    relay *r = ctx;
    const tun_task_report *tr = p->rep;
    rt_tune_progress q = {0};
    q.event = p->event == TUN_EV_TASK_BEGIN ? RT_TUNE_TASK_BEGIN : p->event == TUN_EV_BATCH ? RT_TUNE_BATCH
                                                                                            : RT_TUNE_TASK_END;
    q.pos = p->pos;
    q.npos = p->npos;
    q.task = tr->task;
    q.info = &r->m->pub[tr->task];
    q.trials = tr->trials;
    q.budget = tr->budget;
    q.errors = tr->errors;
    q.default_gflops = gflops(p->task, tr->default_cost);
    q.best_gflops = gflops(p->task, tr->best_cost);
    q.batch = p->batch;
    q.batch_errors = p->batch_errors;
    q.done = p->done;
    q.todo = p->todo;
    q.elapsed = p->elapsed_s;
    q.left = p->left_s;
    q.early_stopped = tr->early_stopped;
    q.failure = tr->failure;
    q.target = r->tnames[tr->target];
    q.ntargets = r->nt;
    r->o->progress(r->o->progress_ctx, &q);
}

/* The run options: AutoTVM's defaults scaled to kernels of a millisecond. */
static bool run_options(const rt_tune_options *o, ms_run_options *run, su_arena *a, FILE *errs)
{
    *run = ms_run_defaults();
    run->repeat = o->repeat > 0 ? o->repeat : 3;
    if (run->repeat > MS_MAX_REPEAT) {
        fail(errs, "--repeat: at most %d", MS_MAX_REPEAT);
        return false;
    }
    run->min_repeat_ms = o->min_repeat_ms > 0 ? o->min_repeat_ms : o->min_repeat_ms < 0 ? 0 : 10;
    run->timeout_s = o->run_timeout > 0 ? o->run_timeout : 10;
    run->flush_cache = o->flush_cache != 0;
    for (const char *p = o->papi_events; p && *p;) {
        size_t k = strcspn(p, ",");
        if (k == 0 || k >= MS_NAME || run->nevents >= MS_MAX_EVENTS) {
            fail(errs, "--papi-events: at most %d names of fewer than %d characters, comma-separated", MS_MAX_EVENTS,
                 MS_NAME);
            return false;
        }
        run->events[run->nevents++] = su_arena_strndup(a, p, k);
        p += k + (p[k] == ',');
    }
    return true;
}

/* The model-based tuner's settings from the options; false after a message. */
static bool tuner_conf(const rt_tune_options *o, tun_tuner_conf *c, FILE *errs)
{
    if (o->plan_size < 0 || o->epsilon > 1) {
        fail(errs, "the plan size cannot be negative, and epsilon is a share (at most 1)");
        return false;
    }
    if (o->plan_size > 0)
        c->plan_size = o->plan_size;
    if (o->epsilon != 0)
        c->epsilon = o->epsilon < 0 ? 0 : o->epsilon;
    if (o->objective && !strcmp(o->objective, "reg")) {
        c->objective = TUN_OBJ_REG;
    } else if (o->objective && strcmp(o->objective, "rank") != 0) {
        fail(errs, "unknown objective '%s' (known: rank, reg)", o->objective);
        return false;
    }
    return true;
}

/* One target of a run: its string, what it describes, and that as records name it. */
typedef struct tune_target {
    const char *name;
    tg_target tg;
    db_target dt;
} tune_target;

/* The checked settings of a run: targets, tuner, its settings, scheduler. */
typedef struct tune_setup {
    tune_target *t;         /* the targets (one, or --target given several times) */
    const char **names;     /* their strings */
    int nt;
    int here;               /* under MPI: the one rank 0 measures for (--rank-target) */
    const tun_tuner_ops *tuner;
    tun_tuner_conf conf;
    tun_sched_kind sched;
} tune_setup;

/* Checks one target string into tg; run: this process measures for it, so
 * this host must run it. False after a message. */
static bool check_target(const char *tname, tg_target *tg, bool run, FILE *errs)
{
    const char *why;
    if (!tg_target_parse(tname, tg, &why))
        return fail(errs, "target '%s': %s", tname, why), false;
    /* measuring runs the candidates here */
    if (run && !api_target_runnable(tg, tname, errs))
        return false;
    return true;
}

/* The run's targets into u (strings in a); false after a message. Without
 * MPI this process measures every target; under MPI rank 0 measures only
 * its own (rank_target), the others' ranks theirs. */
static bool check_targets(const rt_tune_options *o, tune_setup *u, su_arena *a, FILE *errs)
{
    static const char *const one_cpu[] = {"cpu"};
    const char *const *names = o->ntargets > 0 ? o->targets : o->target ? &o->target : one_cpu;
    u->nt = o->ntargets > 0 ? o->ntargets : 1;
    u->t = su_arena_alloc(a, (size_t)u->nt * sizeof *u->t);
    u->names = su_arena_alloc(a, (size_t)u->nt * sizeof *u->names);
    u->here = -1;
    for (int k = 0; k < u->nt; k++) {
        u->t[k].name = u->names[k] = names[k];
        for (int j = 0; j < k; j++)
            if (!strcmp(names[j], names[k]))
                return fail(errs, "target '%s' is given twice", names[k]), false;
        if (o->rank_target ? !strcmp(o->rank_target, names[k]) : k == 0)
            u->here = k;
    }
    if (u->here < 0)
        return fail(errs, "--rank-target '%s' is not one of the run's targets (--target)", o->rank_target), false;
    for (int k = 0; k < u->nt; k++) {
        if (!check_target(names[k], &u->t[k].tg, !o->mpi || k == u->here, errs))
            return false;
        tun_target_describe(&u->t[k].tg, names[k], a, &u->t[k].dt);
    }
    return true;
}

/* The target whose tasks a run tunes: a device's (its functions without an
 * anchor are tasks there, tun_extract_tasks_on) when every target of the
 * run is a device, the first one's; else the cpu's (NULL), so that no cpu
 * target is handed a device template. */
static const char *tasks_target(const tune_setup *u)
{
    for (int k = 0; k < u->nt; k++)
        if (u->t[k].tg.kind != TG_OPENCL)
            return NULL;
    return u->names[0];
}

/* Checks the options; false after a message. */
static bool check_options(const rt_tune_options *o, tune_setup *u, su_arena *a, FILE *errs)
{
    if (!check_targets(o, u, a, errs))
        return false;
    if (!(u->tuner = tun_tuner_find(o->tuner ? o->tuner : "xgb")))
        return fail(errs, "unknown tuner '%s' (known: xgb, ga, random, grid)", o->tuner), false;
    u->conf = tun_tuner_conf_default;
    if (!tuner_conf(o, &u->conf, errs))
        return false;
    if (!tun_sched_kind_parse(o->scheduler, &u->sched))
        return fail(errs, "unknown scheduler '%s' (known: gradient, fixed)", o->scheduler), false;
    if (o->trials < 0 || o->early_stopping < 0 || o->jobs < 0 || o->batch < 0 || o->per_unit < 0 ||
        o->compile_timeout < 0 || o->run_timeout < 0 || o->confirm_rounds < 0 || !(o->time_budget >= 0))
        return fail(errs, "trials, early stopping, jobs, batch, confirmation rounds and time limits cannot be "
                          "negative"), false;
    return true;
}

/* The loop's options from the public ones (the defaults filled in), for target k. */
static void loop_options(const rt_tune_options *o, tune_setup *u, int k, rt_runner *r, relay *rl, tun_profile *prof,
                         tun_options *to)
{
    const tg_target *tg = &u->t[k].tg;
    to->tuner = u->tuner;
    to->tuner_conf = &u->conf;
    to->scheduler = u->sched;
    to->transfer = !o->no_transfer;
    to->trials = o->trials;
    to->time_budget = o->time_budget;
    to->cutoff = o->cutoff < 0 ? 0 : o->cutoff > 0 ? o->cutoff : 2;
    if (o->profile)
        to->profile = to->measurer.profile = prof;
    to->early_stopping = o->early_stopping;
    to->seed = o->seed;
    to->batch = o->batch;
    to->confirm_top = o->confirm < 0 ? 0 : o->confirm > 0 ? o->confirm : 3;
    to->confirm_rounds = o->confirm_rounds;
    to->measurer.runner = r->r;
    to->measurer.target = tg;
    to->measurer.build = (ms_build_options){o->jobs > 0 ? o->jobs : tg->cores, o->per_unit,
                                            o->compile_timeout > 0 ? o->compile_timeout : 60};
    to->target = &u->t[k].dt;
    to->model = o->model ? o->model : "";
    to->command = o->command ? o->command : "";
    to->stop = o->stop;
    to->progress = o->progress ? on_progress : NULL;
    to->progress_ctx = rl;
}

/* One task's row of the report, with what compiling would use. */
static void report_row(rt_module *m, rt_db *h, const tune_setup *u, const tun_task_report *tr, rt_tune_row *row)
{
    const tun_task *t = &m->tasks.items[tr->task];
    const tune_target *tt = &u->t[tr->target];
    row->task = tr->task;
    row->info = &m->pub[tr->task];
    row->target = su_strdup(tt->name);
    row->budget = tr->budget;
    row->trials = tr->trials;
    row->measured = tr->measured;
    row->errors = tr->errors;
    row->stale = tr->stale;
    row->invalid = tr->invalid;
    row->space = tr->space;
    row->default_gflops = gflops(t, tr->default_cost);
    row->best_gflops = gflops(t, tr->best_cost);
    row->speedup = tr->default_cost > 0 && tr->best_cost > 0 ? tr->default_cost / tr->best_cost : 0;
    row->early_stopped = tr->early_stopped;
    row->exhausted = tr->exhausted;
    row->transferred = tr->transfer.used;
    row->transfer_skipped = tr->transfer.no_func + tr->transfer.bad_func + tr->transfer.stale + tr->transfer.invalid +
                            tr->transfer.other_form;
    row->transfer_dropped_at = tr->transfer.dropped_at;
    row->transfer_weight = tr->transfer.weight;
    row->confirmed = tr->confirmed;
    row->confirmed_index = tr->confirmed_index;
    row->confirmed_gflops = gflops(t, tr->confirmed_cost);
    row->failure = tr->failure ? su_strdup(tr->failure) : NULL;
    row->fallback = 1;
    tun_space sp;
    tun_best b;
    su_buf e2 = {0};
    if (tun_task_best(h->d, t, &tt->tg, tt->name, &sp, &b, &e2)) {
        row->fallback = b.kind == TUN_BEST_NONE;
        tun_best_free(&b);
        tun_space_free(&sp);
    }
    su_buf_free(&e2);
}

/* The public report of a run. */
static rt_tune_report *make_report(rt_module *m, rt_db *h, const tune_setup *u, const tun_report *rep,
                                   const tun_profile *prof, bool profiled)
{
    rt_tune_report *pr = su_calloc(1, sizeof *pr);
    pr->rows = su_calloc(rep->n + 1, sizeof *pr->rows);
    pr->n = rep->n;
    pr->measured = rep->measured;
    pr->interrupted = rep->interrupted;
    pr->out_of_time = rep->out_of_time;
    pr->seconds = rep->seconds;
    pr->confirm_seconds = rep->confirm_seconds;
    pr->estimate = rep->estimate;
    pr->improved_at = rep->improved_at;
    pr->improved_after = rep->improved_after;
    pr->profiled = profiled;
    _Static_assert(RT_TUNE_PHASES == TUN_PH_COUNT, "the public phases are the tuner's");
    for (int k = 0; k < TUN_PH_COUNT; k++)
        pr->phase_seconds[k] = prof->seconds[k];
    memcpy(pr->session, rep->session, sizeof pr->session);
    pr->scheduler = tun_sched_kind_name(u->sched);
    pr->ntargets = u->nt;
    for (size_t i = 0; i < rep->n; i++)
        report_row(m, h, u, &rep->tasks[i], &pr->rows[i]);
    return pr;
}

#ifdef HAVE_MPI
/* Rank 0 of an MPI job: each target's batches are dealt out to the ranks
 * of that target (rank 0 measuring a share of its own target's); NULL
 * after a message when a target has no rank to measure it. */
static dist_dealer *deal_out(const rt_tune_options *o, tune_setup *u, tun_options *to, FILE *errs)
{
    db_target *ts = su_calloc((size_t)u->nt + 1, sizeof *ts);
    for (int k = 0; k < u->nt; k++)
        ts[k] = u->t[k].dt;
    dist_dealer *d = dist_dealer_new(o->mpi->c, &to[u->here].measurer, ts, (size_t)u->nt, (size_t)u->here, errs);
    free(ts);
    for (int k = 0; k < u->nt; k++) {
        to[k].batch_measurer = dist_dealer_measurer(d, (size_t)k);
        if (to[k].batch_measurer.width == 0) {
            fail(errs, "target '%s': no rank of the MPI job measures for it (give a rank --target '%s', or "
                       "--rank-target; docs/distributed.md)", u->t[k].name, u->t[k].name);
            dist_dealer_free(d);
            return NULL;
        }
    }
    return d;
}
#endif

int rt_tune(rt_module *m, rt_runner *r, rt_db *h, const rt_tune_options *o, rt_tune_report **out, FILE *errs)
{
    if (out)
        *out = NULL;
    su_arena a;
    su_arena_init(&a);
    tune_setup u;
    bool *sel = NULL;
    ms_run_options run;
    bool checked = check_options(o, &u, &a, errs) && api_module_tasks(m, tasks_target(&u), errs);
    if (checked)
        sel = su_calloc(m->tasks.len + 1, sizeof *sel);
    if (!checked || (o->tasks && !parse_selection(m, o->tasks, sel, errs)) || !run_options(o, &run, &a, errs)) {
        free(sel);
        su_arena_free(&a);
        return -1;
    }
    relay rl = {o, m, u.names, u.nt};
    tun_profile prof = {{0}};
    tun_options *to = su_calloc((size_t)u.nt + 1, sizeof *to);
    for (int k = 0; k < u.nt; k++) {
        loop_options(o, &u, k, r, &rl, &prof, &to[k]);
        to[k].measurer.run = run;
    }
#ifdef HAVE_MPI
    dist_dealer *dealer = o->mpi ? deal_out(o, &u, to, errs) : NULL;
    if (o->mpi && !dealer) {
        free(to);
        free(sel);
        su_arena_free(&a);
        return -1;
    }
#endif
    tun_report rep;
    su_buf err = {0};
    bool ok = tun_tune_targets(&m->tasks, o->tasks ? sel : NULL, h->d, to, (size_t)u.nt, &rep, &err);
    if (!ok)
        fail(errs, "%s", su_buf_str(&err));
#ifdef HAVE_MPI
    dist_dealer_free(dealer);
#endif
    su_buf_free(&err);
    rt_tune_report *pr = make_report(m, h, &u, &rep, &prof, o->profile != 0);
    tun_report_free(&rep);
    free(to);
    free(sel);
    su_arena_free(&a);
    if (out)
        *out = pr;
    else
        rt_tune_report_free(pr);
    return ok ? 0 : -1;
}

void rt_tune_report_free(rt_tune_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        free((char *)r->rows[i].failure);
        free((char *)r->rows[i].target);
    }
    free(r->rows);
    free(r);
}

static void put_gflops(su_buf *b, double g)
{
    if (g > 0)
        su_buf_printf(b, " %9.1f", g);
    else
        su_buf_printf(b, " %9s", "-");
}

static void put_duration(su_buf *b, double s)
{
    if (s < 60)
        su_buf_printf(b, "%.1f s", s);
    else if (s < 3600)
        su_buf_printf(b, "%dm%02ds", (int)s / 60, (int)s % 60);
    else
        su_buf_printf(b, "%dh%02dm", (int)s / 3600, (int)s % 3600 / 60);
}

const char *rt_tune_phase_name(int i)
{
    return i >= 0 && i < TUN_PH_COUNT ? tun_phase_name((tun_phase)i) : NULL;
}

/* Where the run's time went: each phase's seconds, share and time per
 * measurement, the rest as "other" (loading the model, the scheduler, progress). */
static void put_profile(su_buf *b, const rt_tune_report *r)
{
    double sum = 0, total = r->seconds > 0 ? r->seconds : 1;
    long long n = r->measured > 0 ? r->measured : 1;
    su_buf_printf(b, "where the run's %.1f s went (%lld measurements, %.2f a second):\n", r->seconds, r->measured,
                  r->seconds > 0 ? (double)r->measured / r->seconds : 0);
    su_buf_printf(b, "  %-10s %9s %6s %12s\n", "phase", "seconds", "share", "ms/trial");
    for (int k = 0; k <= RT_TUNE_PHASES; k++) {
        double v = k < RT_TUNE_PHASES ? r->phase_seconds[k] : total - sum;
        if (k < RT_TUNE_PHASES)
            sum += v;
        su_buf_printf(b, "  %-10s %9.2f %5.1f%% %12.2f\n", k < RT_TUNE_PHASES ? rt_tune_phase_name(k) : "other",
                      v < 0 ? 0 : v, 100 * (v < 0 ? 0 : v) / total, 1e3 * (v < 0 ? 0 : v) / (double)n);
    }
}

/* "task 3", or "task 3 on 'cpu -cores=1'" in a run of several targets. */
static const char *task_label(const rt_tune_report *r, size_t i, char *buf, size_t size)
{
    if (r->ntargets > 1)
        snprintf(buf, size, "task %zu on '%s'", r->rows[i].task, r->rows[i].target);
    else
        snprintf(buf, size, "task %zu", r->rows[i].task);
    return buf;
}

/* The tasks that fall back to the default config, a line per target. */
static void put_fallbacks(su_buf *b, const rt_tune_report *r)
{
    for (size_t i = 0; i < r->n; i++) {
        if (i > 0 && !strcmp(r->rows[i].target, r->rows[i - 1].target))
            continue;
        su_buf_puts(b, "tasks that fall back to the default config");
        if (r->ntargets > 1)
            su_buf_printf(b, " on '%s'", r->rows[i].target);
        su_buf_putc(b, ':');
        size_t nf = 0;
        for (size_t j = i; j < r->n && !strcmp(r->rows[j].target, r->rows[i].target); j++)
            if (r->rows[j].fallback) {
                su_buf_printf(b, " %zu", r->rows[j].task);
                nf++;
            }
        su_buf_puts(b, nf ? " (no successful record of theirs fits their space)\n" : " none\n");
    }
    if (!r->n)
        su_buf_puts(b, "tasks that fall back to the default config: none\n");
}

char *rt_tune_report_text(const rt_tune_report *r)
{
    char lb[320];
    su_buf b = {0};
    su_buf_printf(&b, "%-3s %-16s %-22s %5s %9s %9s %8s %7s %5s %6s\n", "#", "hash", "template", "calls", "default",
                  "best", "speedup", "trials", "new", "errors");
    su_buf_printf(&b, "%-3s %-16s %-22s %5s %9s %9s %8s %7s %5s %6s\n", "", "", "", "", "GFLOP/s", "GFLOP/s", "", "", "",
                  "");
    double tdef = 0, tbest = 0;
    bool all = true;
    for (size_t i = 0; i < r->n; i++) {
        const rt_tune_row *w = &r->rows[i];
        if (r->ntargets > 1 && (i == 0 || strcmp(w->target, r->rows[i - 1].target) != 0))
            su_buf_printf(&b, "target '%s':\n", w->target);
        su_buf_printf(&b, "%-3zu %-16s %-22s %5d", w->task, w->info->hash, w->info->template_name, w->info->count);
        put_gflops(&b, w->default_gflops);
        put_gflops(&b, w->best_gflops);
        if (w->speedup > 0)
            su_buf_printf(&b, " %7.2fx", w->speedup);
        else
            su_buf_printf(&b, " %8s", "-");
        su_buf_printf(&b, " %7lld %5lld %6lld", w->trials, w->measured, w->errors);
        if (w->failure)
            su_buf_printf(&b, "  (not tuned: %s)", w->failure);
        else if (w->early_stopped)
            su_buf_puts(&b, "  (early stop)");
        else if (w->exhausted)
            su_buf_puts(&b, "  (space done)");
        su_buf_putc(&b, '\n');
        /* the model's time in these tasks: calls x GFLOP / speed */
        double work = w->info->gflop * w->info->count;
        if (w->default_gflops > 0 && w->best_gflops > 0) {
            tdef += work / w->default_gflops;
            tbest += work / w->best_gflops;
        } else {
            all = false;
        }
        /* a run of several targets: the model's time on each */
        bool last = i + 1 == r->n || strcmp(w->target, r->rows[i + 1].target) != 0;
        if (last && tbest > 0)
            su_buf_printf(&b, "time in these tasks%s%s%s: default %.3f ms, tuned %.3f ms (%.2fx)%s\n",
                          r->ntargets > 1 ? " on '" : "", r->ntargets > 1 ? w->target : "", r->ntargets > 1 ? "'" : "",
                          tdef * 1e3, tbest * 1e3, tdef / tbest, all ? "" : ", over the tasks measured");
        if (last)
            tdef = tbest = 0, all = true;
    }
    put_fallbacks(&b, r);
    for (size_t i = 0; i < r->n; i++)
        if (r->rows[i].stale || r->rows[i].invalid)
            su_buf_printf(&b, "%s: %lld stale and %lld invalid records ignored (docs/tuning.md)\n",
                          task_label(r, i, lb, sizeof lb), r->rows[i].stale, r->rows[i].invalid);
    for (size_t i = 0; i < r->n; i++)
        if (r->rows[i].transferred || r->rows[i].transfer_skipped) {
            su_buf_printf(&b, "%s: learnt from %lld records of similar workloads (%lld skipped)",
                          task_label(r, i, lb, sizeof lb), r->rows[i].transferred, r->rows[i].transfer_skipped);
            if (r->rows[i].transfer_dropped_at)
                su_buf_printf(&b, "; dropped them after %lld of its own, which ranked better alone",
                              r->rows[i].transfer_dropped_at);
            else if (r->rows[i].transferred && r->rows[i].transfer_weight > 0 && r->rows[i].transfer_weight < 1)
                su_buf_printf(&b, "; weighed them %g, its own results ranking better with less of them",
                              r->rows[i].transfer_weight);
            su_buf_putc(&b, '\n');
        }
    for (size_t i = 0; i < r->n; i++)
        if (r->rows[i].confirmed)
            su_buf_printf(&b, "%s: %d configs (its best and the default) re-measured side by side: config %lld wins at %.1f GFLOP/s "
                              "(median), which compiling uses\n",
                          task_label(r, i, lb, sizeof lb), r->rows[i].confirmed, r->rows[i].confirmed_index,
                          r->rows[i].confirmed_gflops);
    if (r->estimate > 0 && r->improved_at >= 0) {
        su_buf_puts(&b, "the model's tuned time last fell by more than 1% after ");
        put_duration(&b, r->improved_at);
        su_buf_printf(&b, " (%lld measurements into the run)\n", r->improved_after);
    } else if (r->estimate > 0 && r->measured > 0) {
        su_buf_puts(&b, "the model's tuned time did not fall by more than 1% in this run\n");
    }
    if (r->out_of_time)
        su_buf_puts(&b, "stopped: the time budget is spent\n");
    if (r->profiled)
        put_profile(&b, r);
    su_buf_printf(&b, "%s: %lld measurements in ", r->interrupted ? "interrupted" : "done", r->measured);
    put_duration(&b, r->seconds);
    if (r->confirm_seconds > 0 && r->seconds > 0)
        su_buf_printf(&b, " (confirmations %.1f s, %.0f%%)", r->confirm_seconds, 100 * r->confirm_seconds / r->seconds);
    su_buf_printf(&b, ", session %s, scheduler %s\n", r->session[0] ? r->session : "-",
                  r->scheduler ? r->scheduler : "-");
    return su_buf_take(&b);
}

/* The best config of task `index` on target as schedule JSON (malloc'd), or
 * NULL for the default; kind gets 1 exact, 2 same ISA, 0 default, -1 error. */
static char *best_json(rt_module *m, size_t index, db *d, const char *tname, int *kind, char **notes, FILE *errs)
{
    *kind = -1;
    tg_target tg;
    const char *why;
    if (!tg_target_parse(tname, &tg, &why)) {
        fail(errs, "target '%s': %s", tname, why);
        return NULL;
    }
    tun_space sp;
    tun_best b;
    su_buf err = {0};
    char *json = NULL;
    if (!tun_task_best(d, &m->tasks.items[index], &tg, tname, &sp, &b, &err)) {
        fail(errs, "%s", su_buf_str(&err));
    } else {
        *kind = b.kind == TUN_BEST_EXACT ? 1 : b.kind == TUN_BEST_ISA ? 2 : 0;
        if (*kind)
            json = tun_config_sch_json(&sp, &b.cfg);
        if (notes) {
            *notes = b.notes;
            b.notes = NULL;
        }
        tun_best_free(&b);
        tun_space_free(&sp);
    }
    su_buf_free(&err);
    return json;
}

int rt_task_best_config(rt_module *m, size_t index, rt_db *h, const char *target, char **config_json, char **notes,
                        FILE *errs)
{
    *config_json = NULL;
    if (notes)
        *notes = NULL;
    if (!api_module_tasks(m, target, errs))
        return -1;
    if (index >= m->tasks.len) {
        fail(errs, "no task %zu (the model has %zu)", index, m->tasks.len);
        return -1;
    }
    int kind;
    *config_json = best_json(m, index, h->d, target ? target : "cpu", &kind, notes, errs);
    return kind;
}
