/* xgb.c — the model-based tuner (AutoTVM's XGBTuner): a cost model
 * (xgb_model.c) trained on the configs measured so far, refit after every
 * batch, scores configs from their features (features.c); the next batch is
 * the best-scored configs not yet measured nor proposed, with an epsilon
 * share of random ones so that the model keeps seeing the whole space.
 *
 * Finding the best-scored configs: spaces of at most 2 x the annealing's
 * visit budget are scored whole (every unseen config, features cached),
 * plan_new configs further into a fixed random order at each plan;
 * larger ones are searched by simulated annealing: `walkers` walkers, each
 * step moving every walker to a neighbour (one knob changed to another
 * candidate), accepted when better or with probability exp(delta / T), T
 * falling linearly from the spread of the walkers' scores to 0 over at most
 * SA_STEPS steps (stopping after SA_EARLY_STOP steps that do not change the
 * plan); the walkers keep their positions from one plan to the next. The
 * plan is the top plan_size unseen configs met.
 *
 * Until the model is trained (the first batch, or a space whose configs all
 * measure the same) configs are random. Records of other tasks given
 * through transfer (their features computed in their own spaces) train a
 * prior model of their own, each task a group (AutoTVM's transfer, and the
 * warm start of TVM's MetaSchedule): the first batch already comes from it,
 * and every fit of the task's model starts from the prior's scores (XGBoost's
 * base_margin), so the task's own results decide wherever they disagree with
 * it and the trees never train on the other tasks' rows. Transfer must keep
 * earning its place: when the task has CHECK_FIRST results, and again at each
 * doubling, a prior that alone orders the task's results worse than a coin
 * is dropped for good, and from CV_FIRST results FOLDS-fold cross-validation
 * on them weighs it: the task's model fitted with the prior's scores times
 * each of prior_weights (0: without it) scores the held-out folds, and the
 * weight moves to the best when that is better by more than the noise (0
 * drops the prior for good). Everything random comes from the tuner's seed,
 * so a run is reproducible. */
#include <math.h>
#include <string.h>

#include "tuner/tuner.h"

enum {
    SA_STEPS = 100,         /* annealing steps per plan at most */
    SA_EARLY_STOP = 20,     /* steps without a change to the plan that end it */
    SCORE_CHUNK = 512,      /* configs scored per prediction when scoring a space whole */
    CACHE_MAX = 32768,      /* feature vectors cached (then the cache starts over) */
    CHECK_FIRST = 8,        /* own results at which transfer is first checked */
    CV_FIRST = 16,          /* own results from which the check cross-validates the prior's weight */
    FOLDS = 4,              /* folds of that check */
    MIN_PAIRS = 16,         /* own pairs before the prior alone is judged against chance */
};

/* The prior's weights the check chooses from (0: dropped), lightest first:
 * on a tie the lighter weight wins, so the task's own results outweigh. */
static const float prior_weights[] = {0, 0.25f, 0.5f, 1};
enum { NWEIGHTS = sizeof prior_weights / sizeof prior_weights[0] };

/* Feature vectors by config index (open addressing; key -1 is empty). */
typedef struct fcache {
    int64_t *keys;
    uint32_t *slot;
    size_t cap;
    float *rows;            /* len x nf */
    uint8_t *ok;            /* the config could be instantiated */
    size_t len, rows_cap;
} fcache;

/* A config of the plan with its score. */
typedef struct scored {
    float score;
    int64_t index;
} scored;

typedef struct xgb_state {
    int nf;                     /* features per row */
    tun_cost_model *model;
    fcache cache;
    bool model_changed;         /* refit since the plan was made */
    /* training rows: this task's measured configs */
    SU_VEC(float) x;            /* own rows x nf */
    SU_VEC(float) y;            /* throughput (1 / cost; 0 for a failure) */
    SU_VEC(float) margin;       /* the prior's score of each own row (unweighted) */
    /* transfer: other tasks' rows and the prior model fitted on them */
    SU_VEC(float) tx;           /* transferred rows x nf */
    SU_VEC(float) ty;           /* their throughput */
    SU_VEC(int) tgroup;         /* their task (1, 2, ...) */
    int ngroups;                /* tasks transferred from so far */
    tun_cost_model *prior;      /* NULL: no transfer, or dropped; its weight in every score and fit
                                   is t->transfer_weight, one of prior_weights */
    size_t next_check;          /* own results at which transfer is checked next */
    /* the search */
    int64_t *walker;            /* the walkers' configs */
    float *wscore;
    scored *plan;               /* the best unseen configs, best first */
    int nplan, plan_pos;
    tun_idxset inplan;          /* configs in the plan being built */
    int64_t *order;             /* a small space in the order plans score it (NULL until the first) */
    int64_t reach;              /* how far into order plans have scored */
    su_buf err;                 /* the last XGBoost error (the tuner falls back to random) */
} xgb_state;

/* ---- the feature cache ---- */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x9e3779b97f4a7c15ULL;
    x ^= x >> 29;
    return x;
}

static void cache_reset(fcache *c, size_t cap)
{
    free(c->keys);
    free(c->slot);
    c->cap = cap;
    c->keys = su_malloc(cap * sizeof *c->keys);
    c->slot = su_malloc(cap * sizeof *c->slot);
    for (size_t i = 0; i < cap; i++)
        c->keys[i] = -1;
    c->len = 0;
}

static void cache_free(fcache *c)
{
    free(c->keys);
    free(c->slot);
    free(c->rows);
    free(c->ok);
}

/* The cache slot of config idx, or -1. */
static long cache_find(const fcache *c, int64_t idx)
{
    for (size_t h = mix((uint64_t)idx) & (c->cap - 1); c->keys[h] >= 0; h = (h + 1) & (c->cap - 1))
        if (c->keys[h] == idx)
            return (long)c->slot[h];
    return -1;
}

/* Caches config idx's features f (ok: it could be instantiated). */
static void cache_put(fcache *c, size_t nf, int64_t idx, const float *f, bool ok)
{
    if (c->len >= CACHE_MAX)
        cache_reset(c, c->cap);
    size_t h = mix((uint64_t)idx) & (c->cap - 1);
    while (c->keys[h] >= 0)
        h = (h + 1) & (c->cap - 1);
    if (c->len == c->rows_cap) {
        c->rows_cap = c->rows_cap ? c->rows_cap * 2 : 256;
        c->rows = su_realloc(c->rows, c->rows_cap * nf * sizeof *c->rows);
        c->ok = su_realloc(c->ok, c->rows_cap * sizeof *c->ok);
    }
    memcpy(c->rows + c->len * nf, f, nf * sizeof *f);
    c->ok[c->len] = ok;
    c->keys[h] = idx;
    c->slot[h] = (uint32_t)c->len++;
}

/* Computes and caches the features of the configs of idx[0..n) not cached
 * yet. Each config is scheduled and lowered on its own (tun_config_features
 * reads the space and the task, writes only its row), so the configs are
 * spread over the host's threads: a proposal runs while nothing else does
 * (the batch before it is stored, the next is not yet built), and
 * featurizing is most of its time. The rows are cached in idx's order, so
 * the cache, and everything after it, is the same with any thread count. */
static void featurize(tun_tuner *t, int n, const int64_t *idx)
{
    xgb_state *x = t->state;
    size_t nf = (size_t)x->nf;
    int64_t *miss = su_malloc(((size_t)n + 1) * sizeof *miss);
    int nmiss = 0;
    for (int i = 0; i < n; i++) {
        if (cache_find(&x->cache, idx[i]) < 0)
            miss[nmiss++] = idx[i];   /* (a config twice in idx is computed twice, cached once) */
    }
    float *rows = su_malloc(((size_t)nmiss * nf + 1) * sizeof *rows);
    uint8_t *ok = su_malloc((size_t)nmiss + 1);
    const tun_space *space = t->space;
#pragma omp parallel for schedule(dynamic, 4) if (nmiss >= 16)
    for (int i = 0; i < nmiss; i++) {
        su_buf why = {0};  /* a config that cannot be instantiated scores -inf; why is not needed */
        ok[i] = tun_config_features(space, miss[i], rows + (size_t)i * nf, &why);
        su_buf_free(&why);
    }
    for (int i = 0; i < nmiss; i++)
        if (cache_find(&x->cache, miss[i]) < 0)
            cache_put(&x->cache, nf, miss[i], rows + (size_t)i * nf, ok[i]);
    t->featurized += nmiss;
    free(miss);
    free(rows);
    free(ok);
}

/* Copies config idx's features into out; false when it cannot be
 * instantiated (out is zeros). Computed once, then cached. */
static bool features(tun_tuner *t, int64_t idx, float *out)
{
    xgb_state *x = t->state;
    size_t nf = (size_t)x->nf;
    long slot = cache_find(&x->cache, idx);
    if (slot < 0) {
        featurize(t, 1, &idx);
        slot = cache_find(&x->cache, idx);
    }
    memcpy(out, x->cache.rows + (size_t)slot * nf, nf * sizeof *out);
    return x->cache.ok[slot];
}

/* Adds w x the prior's scores of n rows to out (nothing when it fails: the
 * task's own model still ranks). */
static void add_prior(xgb_state *x, size_t n, const float *rows, float w, float *out)
{
    float *p = su_malloc((n + 1) * sizeof *p);
    su_buf err = {0};
    if (tun_cost_model_predict(x->prior, n, rows, p, &err))
        for (size_t i = 0; i < n; i++)
            out[i] += w * p[i];
    su_buf_free(&err);
    free(p);
}

/* Model scores of n configs; configs that cannot be instantiated score
 * -inf. False (scores all 0) when the model failed. */
static bool score(tun_tuner *t, int n, const int64_t *idx, float *out, float *rows)
{
    xgb_state *x = t->state;
    bool *bad = su_calloc((size_t)n + 1, sizeof *bad);
    featurize(t, n, idx);
    for (int i = 0; i < n; i++)
        bad[i] = !features(t, idx[i], rows + (size_t)i * (size_t)x->nf);
    su_buf_clear(&x->err);
    bool ok = tun_cost_model_predict(x->model, (size_t)n, rows, out, &x->err);
    if (ok && x->prior)
        add_prior(x, (size_t)n, rows, (float)t->transfer_weight, out);
    for (int i = 0; i < n; i++)
        if (bad[i])
            out[i] = -INFINITY;
    free(bad);
    return ok;
}

/* ---- the plan: the best unseen configs ---- */

/* Offers a config to the plan being built (at most plan_size, the lowest
 * replaced); true when the plan changed. */
static bool offer(tun_tuner *t, int64_t idx, float s)
{
    xgb_state *x = t->state;
    /* -inf: no features, the config cannot be instantiated (or the template
     * rejects it): never planned, only met at random */
    if (s == -INFINITY || tun_idxset_has(&t->seen, idx) || tun_idxset_has(&x->inplan, idx))
        return false;
    if (x->nplan < t->conf.plan_size) {
        x->plan[x->nplan++] = (scored){s, idx};
        tun_idxset_add(&x->inplan, idx);
        return true;
    }
    int lo = 0;
    for (int i = 1; i < x->nplan; i++)
        if (x->plan[i].score < x->plan[lo].score)
            lo = i;
    if (!(s > x->plan[lo].score))
        return false;
    x->plan[lo] = (scored){s, idx};
    tun_idxset_add(&x->inplan, idx);    /* the replaced one stays marked: it was worse */
    return true;
}

/* Scores the unseen configs of a small space that earlier plans reached,
 * and plan_new more: the space is visited in a random order fixed at the
 * first plan, each plan reaching plan_new configs further into it. A task's
 * first plans then cost plan_new feature vectors each, not the whole
 * space's (on resnet18, whole spaces of 1,000-16,000 configs were 90% of
 * proposing in a 200-trial run, where a task gets one or two plans), and
 * after size / plan_new plans every config is scored, as before. */
static void plan_whole(tun_tuner *t)
{
    xgb_state *x = t->state;
    int64_t size = t->space->size;
    if (!x->order) {
        x->order = su_malloc((size_t)size * sizeof *x->order);
        for (int64_t i = 0; i < size; i++)
            x->order[i] = i;
        /* shuffled where one plan does not reach the end (a space that one
         * plan scores whole keeps index order); by a generator of its own,
         * seeded from the tuner's state without advancing it, so that the
         * tuner's own random choices are those it made before */
        uint64_t r = t->rng ^ 0x6a09e667f3bcc909ULL;
        for (int64_t i = size - 1; size > t->conf.plan_new && i > 0; i--) {
            r = mix(r + 0x9e3779b97f4a7c15ULL);
            int64_t j = (int64_t)(r % (uint64_t)(i + 1)), v = x->order[i];
            x->order[i] = x->order[j];
            x->order[j] = v;
        }
    }
    /* past the last plan's reach, positions count towards plan_new unless
     * their config scores -inf (the template rejects it: its features cost
     * a template run, not a lowering), so a plan reaches plan_new configs
     * that can be planned however many of the space are rejected */
    int64_t from = x->reach, fresh = 0, i = 0, idx[SCORE_CHUNK];
    float s[SCORE_CHUNK];
    float *rows = su_malloc((size_t)SCORE_CHUNK * (size_t)x->nf * sizeof *rows);
    while (i < size && (i < from || fresh < t->conf.plan_new)) {
        int64_t start = i, end = i < from ? from : i + t->conf.plan_new - fresh;
        int n = 0, dead = 0;
        for (; i < end && i < size && n < SCORE_CHUNK; i++)
            if (!tun_idxset_has(&t->seen, x->order[i]))
                idx[n++] = x->order[i];
        if (n && !score(t, n, idx, s, rows))
            break;
        for (int k = 0; k < n; k++) {
            offer(t, idx[k], s[k]);
            dead += s[k] == -INFINITY;
        }
        if (start >= from)
            fresh += i - start - dead;
    }
    x->reach = i > x->reach ? i : x->reach;
    free(rows);
}

/* A neighbour of config idx: one knob (with a choice to make) changed to
 * another of its candidates. */
static int64_t neighbour(tun_tuner *t, int64_t idx)
{
    const tun_space *s = t->space;
    sch_config c;
    tun_config_decode(s, idx, &c);
    int movable = 0;
    for (int k = 0; k < c.n; k++)
        movable += s->sp.knobs.data[k].ncand > 1;
    if (movable) {
        int pick = (int)tun_rand_below(t, movable), k = 0;
        for (;; k++)
            if (s->sp.knobs.data[k].ncand > 1 && pick-- == 0)
                break;
        int ncand = s->sp.knobs.data[k].ncand;
        c.choice[k] = (c.choice[k] + 1 + (int)tun_rand_below(t, ncand - 1)) % ncand;
        idx = tun_config_encode(s, &c);
    }
    sch_config_free(&c);
    return idx;
}

/* Simulated annealing from the walkers' positions (kept for the next plan). */
static void plan_anneal(tun_tuner *t)
{
    xgb_state *x = t->state;
    int w = t->conf.walkers;
    int64_t *next = su_malloc((size_t)w * sizeof *next);
    float *ns = su_malloc((size_t)w * sizeof *ns);
    float *rows = su_malloc((size_t)w * (size_t)x->nf * sizeof *rows);
    bool ok = score(t, w, x->walker, x->wscore, rows);
    /* the starting temperature: the spread of the walkers' scores */
    double mean = 0, var = 0;
    for (int i = 0; i < w; i++)
        mean += isfinite(x->wscore[i]) ? x->wscore[i] : 0;
    mean /= w;
    for (int i = 0; i < w; i++) {
        double d = (isfinite(x->wscore[i]) ? x->wscore[i] : 0) - mean;
        var += d * d;
        offer(t, x->walker[i], x->wscore[i]);
    }
    double t0 = sqrt(var / w) > 1e-6 ? sqrt(var / w) : 1e-6;
    for (int step = 0, quiet = 0; ok && step < SA_STEPS && quiet < SA_EARLY_STOP; step++) {
        double temp = t0 * (1 - (double)step / SA_STEPS);
        for (int i = 0; i < w; i++)
            next[i] = neighbour(t, x->walker[i]);
        if (!(ok = score(t, w, next, ns, rows)))
            break;
        bool changed = false;
        for (int i = 0; i < w; i++) {
            changed |= offer(t, next[i], ns[i]);
            double d = (double)ns[i] - (double)x->wscore[i];
            if (d >= 0 || (isfinite(d) && tun_rand_unit(t) < exp(d / temp))) {
                x->walker[i] = next[i];
                x->wscore[i] = ns[i];
            }
        }
        quiet = changed ? 0 : quiet + 1;
    }
    free(next);
    free(ns);
    free(rows);
}

static int by_score(const void *a, const void *b)
{
    const scored *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Scores a space of at most this many configs whole: twice what annealing
 * would visit, as long as the features of all of them stay cached. */
static int64_t whole_limit(const tun_tuner *t)
{
    int64_t visits = (int64_t)t->conf.walkers * SA_STEPS;
    return 2 * visits < CACHE_MAX ? 2 * visits : CACHE_MAX;
}

static void make_plan(tun_tuner *t)
{
    xgb_state *x = t->state;
    x->nplan = x->plan_pos = 0;
    tun_idxset_free(&x->inplan);
    if (t->space->size <= whole_limit(t))
        plan_whole(t);
    else
        plan_anneal(t);
    qsort(x->plan, (size_t)x->nplan, sizeof *x->plan, by_score);
    x->model_changed = false;
}

/* The next planned config not seen since the plan was made, or -1. */
static int64_t from_plan(tun_tuner *t)
{
    xgb_state *x = t->state;
    while (x->plan_pos < x->nplan) {
        int64_t i = x->plan[x->plan_pos++].index;
        if (!tun_idxset_has(&t->seen, i))
            return i;
    }
    return -1;
}

static int xgb_next(tun_tuner *t, int n, int64_t *out)
{
    xgb_state *x = t->state;
    bool trained = tun_cost_model_trained(x->model) || x->prior;
    if (trained && x->model_changed)
        make_plan(t);
    bool replanned = false;
    int got = 0;
    while (got < n) {
        int64_t i = -1;
        if (trained && tun_rand_unit(t) >= t->conf.epsilon) {
            i = from_plan(t);
            if (i < 0 && !replanned) {
                /* a batch larger than what is left of the plan */
                make_plan(t);
                replanned = true;
                i = from_plan(t);
            }
        }
        if (i < 0)
            i = tun_random_unseen(t);
        if (i < 0)
            break;
        out[got++] = i;
        tun_idxset_add(&t->seen, i);
    }
    return got;
}

/* ---- learning ---- */

/* The n prior scores m weighted by w, into out. */
static void weigh(size_t n, const float *m, float w, float *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = w * m[i];
}

/* Refits the task's model on its own rows, from the prior's weighted scores. */
static void refit(tun_tuner *t)
{
    xgb_state *x = t->state;
    size_t n = x->y.len;
    float *m = x->prior ? su_malloc((n + 1) * sizeof *m) : NULL;
    if (m)
        weigh(n, x->margin.data, (float)t->transfer_weight, m);
    su_buf_clear(&x->err);
    /* on an XGBoost error the previous model stays (x->err says why) */
    tun_cost_model_fit_margin(x->model, n, x->x.data, x->y.data, NULL, m, &x->err);
    free(m);
    x->model_changed = true;
}

/* Appends n own rows (n x nf features f) with their labels and prior scores. */
static void push_rows(xgb_state *x, size_t n, const float *f, const float *y)
{
    size_t nf = (size_t)x->nf;
    float *p = su_calloc(n + 1, sizeof *p);
    if (x->prior)
        add_prior(x, n, f, 1, p);
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < nf; k++)
            su_vec_push(&x->x, f[i * nf + k]);
        su_vec_push(&x->y, y[i]);
        su_vec_push(&x->margin, p[i]);
    }
    free(p);
}

static void drop_prior(tun_tuner *t)
{
    xgb_state *x = t->state;
    tun_cost_model_free(x->prior);
    x->prior = NULL;
    t->transfer_weight = 0;
    su_vec_free(&x->tx);
    su_vec_free(&x->ty);
    su_vec_free(&x->tgroup);
    t->transfer_dropped_at = (int64_t)x->y.len;
}

/* Rows of fold `fold` (held) or of the others (!held), with labels and priors. */
static size_t fold_rows(const xgb_state *x, int fold, bool held, float *fx, float *fy, float *fm)
{
    size_t nf = (size_t)x->nf, k = 0;
    for (size_t i = 0; i < x->y.len; i++)
        if (((int)(i % FOLDS) == fold) == held) {
            memcpy(fx + k * nf, x->x.data + i * nf, nf * sizeof *fx);
            fy[k] = x->y.data[i];
            fm[k++] = x->margin.data[i];
        }
    return k;
}

/* Right-ordered pairs (ties half) of the task's model fitted with each of
 * the prior's weights, over the held-out folds of the task's own results;
 * *pairs gets the pairs counted. */
static void cross_validate(tun_tuner *t, double right[NWEIGHTS], size_t *pairs)
{
    xgb_state *x = t->state;
    size_t n = x->y.len, nf = (size_t)x->nf;
    float *tx = su_malloc((n * nf + 1) * sizeof *tx), *ty = su_malloc((n + 1) * sizeof *ty),
          *tm = su_malloc((n + 1) * sizeof *tm), *wm = su_malloc((n + 1) * sizeof *wm),
          *hx = su_malloc((n * nf + 1) * sizeof *hx), *hy = su_malloc((n + 1) * sizeof *hy),
          *hm = su_malloc((n + 1) * sizeof *hm), *s = su_malloc((n + 1) * sizeof *s);
    su_buf err = {0};
    *pairs = 0;
    for (int fold = 0; fold < FOLDS; fold++) {
        size_t nt = fold_rows(x, fold, false, tx, ty, tm), nh = fold_rows(x, fold, true, hx, hy, hm), np = 0;
        for (int w = 0; w < NWEIGHTS; w++) {
            float a = prior_weights[w];
            weigh(nt, tm, a, wm);
            /* a fixed seed: the check must not move the tuner's own random stream */
            tun_cost_model *m = tun_cost_model_new(t->conf.objective, 1);
            bool ok = tun_cost_model_fit_margin(m, nt, tx, ty, NULL, a > 0 ? wm : NULL, &err) &&
                      tun_cost_model_predict(m, nh, hx, s, &err);
            for (size_t i = 0; i < nh; i++)
                s[i] = (ok ? s[i] : 0) + a * hm[i];
            double acc = tun_pairwise_accuracy(nh, hy, s, &np);
            right[w] += acc > 0 ? acc * (double)np : 0;
            tun_cost_model_free(m);
        }
        *pairs += np;
    }
    su_buf_free(&err);
    free(tx), free(ty), free(tm), free(wm), free(hx), free(hy), free(hm), free(s);
}

/* Weighs the prior against the task's own results. It is dropped when it
 * alone orders them worse than a coin by more than the noise of so few
 * pairs (the prior never saw them, so every pair counts). From CV_FIRST
 * results its weight moves to the one whose model orders the held-out pairs
 * best (the lightest of equals), when that orders more of them than the
 * current weight by more than the noise: one standard deviation of a count
 * of coin flips, sqrt(pairs) / 2, so that a few lucky pairs of a small fold
 * neither drop a prior that ranks well nor keep one that does not. Weight
 * 0 drops it. An untrained model scores all alike: chance, half of the
 * pairs. */
static void check_prior(tun_tuner *t)
{
    xgb_state *x = t->state;
    size_t pairs = 0;
    double alone = tun_pairwise_accuracy(x->y.len, x->y.data, x->margin.data, &pairs);
    if (pairs >= MIN_PAIRS && alone >= 0 && alone < 0.5 - 1 / sqrt((double)pairs)) {
        drop_prior(t);
        return;
    }
    if (x->y.len < CV_FIRST)
        return;
    double right[NWEIGHTS] = {0};
    cross_validate(t, right, &pairs);
    int best = 0, now = 0;
    for (int w = 1; w < NWEIGHTS; w++) {
        if (right[w] > right[best])
            best = w;
        if (prior_weights[w] == (float)t->transfer_weight)
            now = w;
    }
    if (!pairs || right[best] - right[now] <= sqrt((double)pairs) / 2)
        return;
    if (best == 0)
        drop_prior(t);
    else
        t->transfer_weight = prior_weights[best];
}

static void xgb_update(tun_tuner *t, int n, const int64_t *idx, const double *cost)
{
    xgb_state *x = t->state;
    if (n <= 0)
        return;
    size_t nf = (size_t)x->nf, k = 0;
    float *f = su_malloc(((size_t)n * nf + 1) * sizeof *f), *y = su_malloc(((size_t)n + 1) * sizeof *y);
    for (int i = 0; i < n; i++)
        /* a config that cannot be instantiated teaches nothing about the others */
        if (features(t, idx[i], f + k * nf))
            y[k++] = isfinite(cost[i]) && cost[i] > 0 ? (float)(1.0 / cost[i]) : 0;
    push_rows(x, k, f, y);
    free(f);
    free(y);
    if (x->prior && x->y.len >= x->next_check) {
        check_prior(t);
        while (x->next_check <= x->y.len)
            x->next_check *= 2;
    }
    refit(t);
}

/* Fits the prior on the transferred rows, and gives the task's rows its scores. */
static void fit_prior(tun_tuner *t)
{
    xgb_state *x = t->state;
    if (!x->prior)
        x->prior = tun_cost_model_new(t->conf.objective, tun_rand(t));
    su_buf_clear(&x->err);
    if (!tun_cost_model_fit(x->prior, x->ty.len, x->tx.data, x->ty.data, x->tgroup.data, &x->err) ||
        !tun_cost_model_trained(x->prior)) {
        /* nothing learnt (too few rows, all alike) or XGBoost failed: no prior */
        tun_cost_model_free(x->prior);
        x->prior = NULL;
    }
    t->transfer_weight = x->prior ? 1 : 0;
    x->margin.len = 0;
    float *p = su_calloc(x->y.len + 1, sizeof *p);
    if (x->prior)
        add_prior(x, x->y.len, x->x.data, 1, p);
    for (size_t i = 0; i < x->y.len; i++)
        su_vec_push(&x->margin, p[i]);
    free(p);
}

static void xgb_transfer(tun_tuner *t, size_t n, const tun_transfer_rec *recs)
{
    xgb_state *x = t->state;
    float *f = su_malloc((size_t)x->nf * sizeof *f);
    const tun_space **spaces = su_calloc(n + 1, sizeof *spaces);
    /* groups number on from those of earlier transfers */
    int nspaces = 0;
    su_buf why = {0};
    for (size_t i = 0; i < n; i++) {
        int j = 0;
        while (j < nspaces && spaces[j] != recs[i].space)
            j++;
        if (j == nspaces)
            spaces[nspaces++] = recs[i].space;
        su_buf_clear(&why);
        double y = isfinite(recs[i].gflops) && recs[i].gflops > 0 ? recs[i].gflops : 0;
        if (tun_config_features(recs[i].space, recs[i].index, f, &why)) {
            for (int k = 0; k < x->nf; k++)
                su_vec_push(&x->tx, f[k]);
            su_vec_push(&x->ty, (float)y);
            su_vec_push(&x->tgroup, x->ngroups + 1 + j);
        }
    }
    x->ngroups += nspaces;
    su_buf_free(&why);
    free(spaces);
    free(f);
    fit_prior(t);
    refit(t);
}

static void xgb_init(tun_tuner *t)
{
    xgb_state *x = su_calloc(1, sizeof *x);
    t->state = x;
    tun_tuner_conf *c = &t->conf;
    c->plan_size = c->plan_size > 0 ? c->plan_size : tun_tuner_conf_default.plan_size;
    c->walkers = c->walkers > 0 ? c->walkers : tun_tuner_conf_default.walkers;
    c->plan_new = c->plan_new > 0 ? c->plan_new : tun_tuner_conf_default.plan_new;
    c->epsilon = c->epsilon >= 0 && c->epsilon <= 1 ? c->epsilon : tun_tuner_conf_default.epsilon;
    x->nf = tun_feature_count();
    x->next_check = CHECK_FIRST;
    x->model = tun_cost_model_new(c->objective, tun_rand(t));
    cache_reset(&x->cache, 2 * CACHE_MAX);
    x->plan = su_malloc((size_t)c->plan_size * sizeof *x->plan);
    x->walker = su_malloc((size_t)c->walkers * sizeof *x->walker);
    x->wscore = su_calloc((size_t)c->walkers, sizeof *x->wscore);
    for (int i = 0; i < c->walkers; i++)
        x->walker[i] = tun_rand_below(t, t->space->size);
}

static void xgb_free(tun_tuner *t)
{
    xgb_state *x = t->state;
    tun_cost_model_free(x->model);
    tun_cost_model_free(x->prior);
    cache_free(&x->cache);
    su_vec_free(&x->x);
    su_vec_free(&x->y);
    su_vec_free(&x->margin);
    su_vec_free(&x->tx);
    su_vec_free(&x->ty);
    su_vec_free(&x->tgroup);
    free(x->walker);
    free(x->wscore);
    free(x->plan);
    free(x->order);
    tun_idxset_free(&x->inplan);
    su_buf_free(&x->err);
    free(x);
}

const tun_tuner_ops tun_xgb_ops = {"xgb", xgb_init, xgb_next, xgb_update, xgb_free, xgb_transfer};
