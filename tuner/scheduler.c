/* scheduler.c — which task of a model the next batch of trials goes to.
 *
 * The budget (`--trials`) is one pool over the selected tasks; configs
 * already in the database count against it. Two policies:
 *
 *   - gradient (the default; the idea of Ansor's task scheduler, OSDI '20
 *     section 6): a warm-up round gives every task its default config and
 *     one batch, in model order; then each batch goes to the task whose
 *     improvement would cut the model's time the most. The model's time in
 *     a task is calls x best cost; the gain of one more batch is estimated
 *     from the task's recent progress (how much its best cost fell per trial
 *     over its last batches) and from a forward guess, the larger of: the
 *     best cost keeps falling like 1/trials; the task reaches half the best
 *     throughput a similar task (same template) reached. A small
 *     random share of batches goes to any task, so that a wrong estimate
 *     cannot starve one.
 *   - fixed: each task gets a share of the trials by FLOPs x calls
 *     (tun_budgets) and the tasks are tuned one after the other; the trials
 *     a finished task left unused are spread again over the tasks still to
 *     come.
 *
 * With a time budget (`--time-budget`) the gradient policy weighs each
 * task's gain by the time its trials take (compiling and running a big conv
 * costs more than a small dense): the gain per second of measuring, each
 * task's seconds per trial measured as the run goes.
 *
 * A light task (a device's reduction or injective function, tun_task.light:
 * microseconds against the convs' and matmuls' milliseconds) gets batches
 * of at most TUN_SCHED_LIGHT_BATCH configs, its warm-up batch included:
 * its gain is already its calls x cost, its share of the model's time, so
 * after the warm-up gradient returns to it only while that pays, and a
 * small batch keeps the warm-up from spending a full batch on each of a
 * model's many such tasks.
 *
 * A task drops out when it early-stops, exhausts its space or fails; its
 * unused trials stay in the pool for the others. The scheduler only keeps
 * numbers: the loop measures, then tells it each batch's outcome. */
#include <math.h>
#include <string.h>

#include "tuner/tuner.h"

/* Ansor's defaults: the backward gradient counts for 20%, over the last 3
 * batches. */
#define BACKWARD_SHARE 0.2
#define BACKWARD_WINDOW 3
/* A task may reach half the best throughput of a similar task (Ansor's beta). */
#define SIMILAR_SHARE_INV 2.0

bool tun_sched_kind_parse(const char *name, tun_sched_kind *out)
{
    if (!name || !strcmp(name, "gradient"))
        *out = TUN_SCHED_GRADIENT;
    else if (!strcmp(name, "fixed"))
        *out = TUN_SCHED_FIXED;
    else
        return false;
    return true;
}

const char *tun_sched_kind_name(tun_sched_kind k)
{
    return k == TUN_SCHED_FIXED ? "fixed" : "gradient";
}

void tun_sched_init(tun_sched *s, tun_sched_kind kind, size_t n, int64_t trials, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->n = n;
    s->tasks = su_calloc(n + 1, sizeof *s->tasks);
    s->trials = trials;
    s->epsilon = 0.05;
    s->rng = seed ^ 0x5ced5ced5ced5cedULL;
}

void tun_sched_free(tun_sched *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->tasks[i].hist);
        free(s->tasks[i].hist_trials);
    }
    free(s->tasks);
    memset(s, 0, sizeof *s);
}

/* Spreads `trials` over the open tasks (not done) by FLOPs x calls, each at
 * least one, capped at their spaces (tun_budgets). */
static void spread(tun_sched *s, int64_t trials)
{
    size_t n = s->n;
    tun_task *items = su_calloc(n + 1, sizeof *items);
    bool *open = su_calloc(n + 1, sizeof *open);
    int64_t *sizes = su_calloc(n + 1, sizeof *sizes), *budgets = su_calloc(n + 1, sizeof *budgets);
    for (size_t i = 0; i < n; i++) {
        items[i].flops = (int64_t)s->tasks[i].flops;
        items[i].count = s->tasks[i].calls;
        open[i] = !s->tasks[i].done;
        sizes[i] = s->tasks[i].size;
    }
    tun_tasks ts = {items, n, n};
    tun_budgets(&ts, open, sizes, trials, budgets);
    for (size_t i = 0; i < n; i++)
        if (open[i])
            s->tasks[i].budget = budgets[i];
    free(items);
    free(open);
    free(sizes);
    free(budgets);
}

void tun_sched_start(tun_sched *s)
{
    if (s->kind == TUN_SCHED_FIXED)
        spread(s, s->trials);
}

int64_t tun_sched_left(const tun_sched *s)
{
    int64_t used = 0;
    for (size_t i = 0; i < s->n; i++)
        used += s->tasks[i].trials;
    return s->trials - used;
}

int64_t tun_sched_want(const tun_sched *s, size_t i, int batch)
{
    const tun_sched_task *t = &s->tasks[i];
    int64_t w = tun_sched_left(s);
    /* every task measures its default config: keep the others' */
    for (size_t k = 0; k < s->n; k++)
        w -= k != i && s->tasks[k].no_default && !s->tasks[k].done;
    if (s->kind == TUN_SCHED_FIXED && t->budget - t->trials < w)
        w = t->budget - t->trials;
    if (t->size - t->trials < w)
        w = t->size - t->trials;
    if (batch < w)
        w = batch;
    if (t->light && w > TUN_SCHED_LIGHT_BATCH)
        w = TUN_SCHED_LIGHT_BATCH;
    return w > 0 ? w : 0;
}

void tun_sched_update(tun_sched *s, size_t i, int64_t trials, double best)
{
    tun_sched_task *t = &s->tasks[i];
    t->trials = trials;
    t->best = best;
    if (t->nhist == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->hist = su_realloc(t->hist, t->cap * sizeof *t->hist);
        t->hist_trials = su_realloc(t->hist_trials, t->cap * sizeof *t->hist_trials);
    }
    t->hist[t->nhist] = best;
    t->hist_trials[t->nhist++] = trials;
}

void tun_sched_drop(tun_sched *s, size_t i)
{
    tun_sched_task *t = &s->tasks[i];
    if (t->done)
        return;
    t->done = true;
    if (s->kind != TUN_SCHED_FIXED || t->budget <= t->trials)
        return;
    /* its unused trials go to the tasks still open, by their shares */
    int64_t pool = t->budget - t->trials;
    t->budget = t->trials;
    for (size_t k = 0; k < s->n; k++)
        if (!s->tasks[k].done)
            pool += s->tasks[k].budget;
    spread(s, pool);
}

void tun_sched_timed(tun_sched *s, size_t i, int64_t n, double seconds)
{
    s->tasks[i].seconds += seconds > 0 ? seconds : 0;
    s->tasks[i].timed += n > 0 ? n : 0;
}

double tun_sched_trial_seconds(const tun_sched *s, size_t i)
{
    const tun_sched_task *t = &s->tasks[i];
    if (t->timed > 0)
        return t->seconds / (double)t->timed;
    double sec = 0;
    int64_t n = 0;
    for (size_t j = 0; j < s->n; j++)
        sec += s->tasks[j].seconds, n += s->tasks[j].timed;
    return n ? sec / (double)n : 0;
}

/* The task's throughput in FLOP/s (0: nothing succeeded). */
static double speed(const tun_sched_task *t)
{
    return t->best > 0 ? t->flops / t->best : 0;
}

/* How much the model's time would fall if task i got more trials (seconds
 * x calls): Ansor's blend of the backward and forward estimates. */
static double gain(const tun_sched *s, size_t i)
{
    const tun_sched_task *t = &s->tasks[i];
    double cost = t->best;
    if (cost <= 0) {
        /* nothing succeeded yet: assume the mean throughput of the others */
        double sum = 0;
        int k = 0;
        for (size_t j = 0; j < s->n; j++)
            if (speed(&s->tasks[j]) > 0)
                sum += speed(&s->tasks[j]), k++;
        cost = k && t->flops > 0 ? t->flops / (sum / k) : 1;
    }
    /* backward: best cost fallen per trial over the last few batches */
    double back = 0;
    if (t->nhist >= 2) {
        size_t j = t->nhist > BACKWARD_WINDOW ? t->nhist - 1 - BACKWARD_WINDOW : 0;
        int64_t dt = t->hist_trials[t->nhist - 1] - t->hist_trials[j];
        if (t->hist[j] > 0 && dt > 0)
            back = (t->hist[j] - cost) / (double)dt;
    }
    /* forward: the best of two guesses: the cost keeps falling like
     * 1/trials, or the task reaches half the best throughput a similar task
     * reached (evidence that its template can do better on this machine) */
    double fwd = cost / (double)(t->trials > 0 ? t->trials : 1);
    double best_similar = 0;
    for (size_t j = 0; j < s->n; j++)
        if (t->group && s->tasks[j].group && !strcmp(t->group, s->tasks[j].group) &&
            speed(&s->tasks[j]) > best_similar)
            best_similar = speed(&s->tasks[j]);
    if (best_similar > 0 && t->flops > 0) {
        double reach = cost - SIMILAR_SHARE_INV * t->flops / best_similar;
        fwd = reach > fwd ? reach : fwd;
    }
    double g = t->calls * (BACKWARD_SHARE * back + (1 - BACKWARD_SHARE) * fwd);
    double per = s->per_second ? tun_sched_trial_seconds(s, i) : 0;
    return per > 0 ? g / per : g;
}

size_t tun_sched_next(tun_sched *s)
{
    size_t n = s->n;
    if (s->kind == TUN_SCHED_FIXED) {
        for (size_t i = 0; i < n; i++)
            if (!s->tasks[i].done)
                return i;
        return n;
    }
    /* warm-up: every task once, in order */
    while (s->warm < n)
        if (!s->tasks[s->warm++].done)
            return s->warm - 1;
    if (tun_sched_left(s) <= 0)
        return n;
    size_t open = 0, best = n;
    double best_gain = -1;
    for (size_t i = 0; i < n; i++)
        if (!s->tasks[i].done) {
            open++;
            double g = gain(s, i);
            if (g > best_gain)
                best_gain = g, best = i;
        }
    if (!open)
        return n;
    double r = (double)(ir_splitmix64(&s->rng) >> 11) * 0x1p-53;
    if (r < s->epsilon) {
        size_t k = (size_t)(ir_splitmix64(&s->rng) % open);
        for (size_t i = 0; i < n; i++)
            if (!s->tasks[i].done && k-- == 0)
                return i;
    }
    return best;
}
