/* xgb_model.c — the cost model: gradient-boosted trees (XGBoost's C API)
 * mapping a config's features to a score, higher for faster configs
 * (AutoTVM's XGBoostCostModel). It is trained from scratch at every fit on
 * what is known: throughput labels (0 for a failed config, the worst),
 * normalized per task so that records of other shapes can share a model.
 * The default objective ranks (rank:pairwise within each task: only the
 * order of configs matters to a tuner); regression on the normalized
 * throughput is the alternative. A fit may start from a prior score per row
 * (XGBoost's base_margin): transfer gives the prior of another model, and
 * the trees learn only what it gets wrong.
 *
 * XGBoost's quirks are kept out: non-finite features become missing
 * values, bad labels become 0, too few rows or labels that cannot be told
 * apart leave the model untrained instead of fitting noise, and every call's
 * return code is checked, its error text (XGBGetLastError) passed on. One
 * thread and a fixed seed make training reproducible. */
#include <math.h>
#include <string.h>

#include <xgboost/c_api.h>

#include "tuner/tuner.h"

/* AutoTVM's XGBoost settings, with a fixed number of rounds in place of its
 * early stopping on a validation metric. */
enum { ROUNDS = 40, MIN_ROWS = 4 };
static const char *const PARAMS[][2] = {
    {"max_depth", "3"}, {"eta", "0.3"}, {"gamma", "0.0001"}, {"min_child_weight", "1"},
    {"subsample", "1.0"}, {"lambda", "1"}, {"alpha", "0"}, {"tree_method", "hist"},
    {"nthread", "1"}, {"verbosity", "0"},
};

struct tun_cost_model {
    tun_objective obj;
    uint64_t seed;
    BoosterHandle booster;  /* NULL while untrained */
};

/* Appends XGBoost's last error to err; returns false. */
static bool xgb_fail(su_buf *err, const char *what)
{
    const char *e = XGBGetLastError();
    su_buf_printf(err, "XGBoost: %s: %s", what, e && *e ? e : "failed");
    return false;
}

tun_cost_model *tun_cost_model_new(tun_objective obj, uint64_t seed)
{
    /* XGBoost warns on stderr by default (deprecations, parameters);
     * failures still reach us as return codes */
    static bool quiet;
    if (!quiet) {
        XGBSetGlobalConfig("{\"verbosity\": 0}");
        quiet = true;
    }
    tun_cost_model *m = su_calloc(1, sizeof *m);
    m->obj = obj;
    m->seed = seed;
    return m;
}

bool tun_cost_model_trained(const tun_cost_model *m)
{
    return m->booster != NULL;
}

void tun_cost_model_free(tun_cost_model *m)
{
    if (!m)
        return;
    if (m->booster)
        XGBoosterFree(m->booster);
    free(m);
}

/* A copy of the rows in perm's order, non-finite values made missing. */
static float *clean_rows(size_t n, const float *x, const size_t *perm)
{
    size_t nf = (size_t)tun_feature_count();
    float *out = su_malloc((n * nf + 1) * sizeof *out);
    for (size_t r = 0; r < n; r++) {
        const float *src = x + (perm ? perm[r] : r) * nf;
        float *dst = out + r * nf;
        for (size_t j = 0; j < nf; j++)
            dst[j] = isfinite(src[j]) ? src[j] : NAN;
    }
    return out;
}

/* The training rows as XGBoost wants them: grouped rows contiguous. */
typedef struct trainset {
    size_t n;
    size_t *perm;           /* row order: by group, then as given */
    float *y;               /* labels in that order, normalized per group */
    float *margin;          /* prior scores in that order (NULL: none) */
    unsigned *sizes;        /* rows per group */
    size_t ngroups;
    bool learnable;         /* some labels differ (within a group, for ranking) */
} trainset;

/* A row with its group, for sorting rows by group (stable by row). */
typedef struct grouped {
    int group;
    size_t row;
} grouped;

static int by_group(const void *a, const void *b)
{
    const grouped *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

static void trainset_make(trainset *t, size_t n, const float *y, const int *group, const float *margin,
                          tun_objective obj)
{
    memset(t, 0, sizeof *t);
    t->n = n;
    t->perm = su_malloc((n + 1) * sizeof *t->perm);
    t->y = su_malloc((n + 1) * sizeof *t->y);
    t->sizes = su_calloc(n + 1, sizeof *t->sizes);
    grouped *rows = su_malloc((n + 1) * sizeof *rows);
    for (size_t i = 0; i < n; i++)
        rows[i] = (grouped){group ? group[i] : 0, i};
    qsort(rows, n, sizeof *rows, by_group);
    for (size_t i = 0; i < n; i++)
        t->perm[i] = rows[i].row;
    free(rows);
    if (margin) {
        t->margin = su_malloc((n + 1) * sizeof *t->margin);
        for (size_t i = 0; i < n; i++)
            t->margin[i] = isfinite(margin[t->perm[i]]) ? margin[t->perm[i]] : 0;
    }
    float first = 0;
    for (size_t s = 0, e; s < n; s = e) {
        int g = group ? group[t->perm[s]] : 0;
        float max = 0, lo = INFINITY, hi = -INFINITY;
        for (e = s; e < n && (group ? group[t->perm[e]] : 0) == g; e++) {
            float v = y[t->perm[e]];
            t->y[e] = isfinite(v) && v > 0 ? v : 0;
            max = t->y[e] > max ? t->y[e] : max;
        }
        for (size_t r = s; r < e; r++) {
            t->y[r] = max > 0 ? t->y[r] / max : 0;
            lo = t->y[r] < lo ? t->y[r] : lo;
            hi = t->y[r] > hi ? t->y[r] : hi;
        }
        if (s == 0)
            first = t->y[0];
        /* ranking needs two different labels in one task; regression
         * anywhere */
        t->learnable |= obj == TUN_OBJ_RANK ? lo < hi : (lo < hi || lo != first);
        t->sizes[t->ngroups++] = (unsigned)(e - s);
    }
}

static void trainset_free(trainset *t)
{
    free(t->perm);
    free(t->y);
    free(t->margin);
    free(t->sizes);
}

/* A booster trained on the set (NULL after a message). */
static BoosterHandle train(const tun_cost_model *m, const trainset *t, const float *x, su_buf *err)
{
    float *rows = clean_rows(t->n, x, t->perm);
    DMatrixHandle dm = NULL;
    BoosterHandle b = NULL;
    char seed[24];
    snprintf(seed, sizeof seed, "%u", (unsigned)(m->seed & 0x7fffffff));
    bool ok = XGDMatrixCreateFromMat_omp(rows, t->n, (bst_ulong)tun_feature_count(), NAN, &dm, 1) == 0 ||
              xgb_fail(err, "creating the training matrix");
    ok = ok && (XGDMatrixSetFloatInfo(dm, "label", t->y, t->n) == 0 || xgb_fail(err, "setting the labels"));
    ok = ok && (m->obj != TUN_OBJ_RANK || XGDMatrixSetUIntInfo(dm, "group", t->sizes, t->ngroups) == 0 ||
                xgb_fail(err, "setting the groups"));
    ok = ok && (!t->margin || XGDMatrixSetFloatInfo(dm, "base_margin", t->margin, t->n) == 0 ||
                xgb_fail(err, "setting the prior scores"));
    ok = ok && (XGBoosterCreate(&dm, 1, &b) == 0 || xgb_fail(err, "creating the booster"));
    const char *obj = m->obj == TUN_OBJ_RANK ? "rank:pairwise" : "reg:squarederror";
    ok = ok && (XGBoosterSetParam(b, "objective", obj) == 0 || xgb_fail(err, "setting the objective"));
    ok = ok && (XGBoosterSetParam(b, "seed", seed) == 0 || xgb_fail(err, "setting the seed"));
    for (size_t i = 0; ok && i < sizeof PARAMS / sizeof *PARAMS; i++)
        ok = XGBoosterSetParam(b, PARAMS[i][0], PARAMS[i][1]) == 0 || xgb_fail(err, "setting a parameter");
    for (int r = 0; ok && r < ROUNDS; r++)
        ok = XGBoosterUpdateOneIter(b, r, dm) == 0 || xgb_fail(err, "training");
    if (dm)
        XGDMatrixFree(dm);
    free(rows);
    if (!ok && b) {
        XGBoosterFree(b);
        b = NULL;
    }
    return b;
}

bool tun_cost_model_fit(tun_cost_model *m, size_t n, const float *x, const float *y, const int *group, su_buf *err)
{
    return tun_cost_model_fit_margin(m, n, x, y, group, NULL, err);
}

bool tun_cost_model_fit_margin(tun_cost_model *m, size_t n, const float *x, const float *y, const int *group,
                               const float *margin, su_buf *err)
{
    trainset t;
    trainset_make(&t, n, y, group, margin, m->obj);
    bool ok = true;
    if (n < MIN_ROWS || !t.learnable) {
        /* nothing to learn: the tuner explores at random meanwhile */
        if (m->booster)
            XGBoosterFree(m->booster);
        m->booster = NULL;
    } else {
        BoosterHandle b = train(m, &t, x, err);
        ok = b != NULL;
        if (ok) {
            if (m->booster)
                XGBoosterFree(m->booster);
            m->booster = b;
        }
    }
    trainset_free(&t);
    return ok;
}

bool tun_cost_model_predict(tun_cost_model *m, size_t n, const float *x, float *out, su_buf *err)
{
    if (!m->booster || !n) {
        for (size_t i = 0; i < n; i++)
            out[i] = 0;
        return true;
    }
    float *rows = clean_rows(n, x, NULL);
    DMatrixHandle dm = NULL;
    bst_ulong len = 0;
    const float *res = NULL;
    bool ok = XGDMatrixCreateFromMat_omp(rows, n, (bst_ulong)tun_feature_count(), NAN, &dm, 1) == 0 ||
              xgb_fail(err, "creating the matrix to score");
    ok = ok && (XGBoosterPredict(m->booster, dm, 0, 0, 0, &len, &res) == 0 || xgb_fail(err, "predicting"));
    if (ok && len != n) {
        su_buf_printf(err, "XGBoost: %llu scores for %zu rows", (unsigned long long)len, n);
        ok = false;
    }
    /* a score that is not a number sorts last */
    for (size_t i = 0; i < n; i++)
        out[i] = ok && isfinite(res[i]) ? res[i] : ok ? -INFINITY : 0;
    if (dm)
        XGDMatrixFree(dm);
    free(rows);
    return ok;
}

double tun_pairwise_accuracy(size_t n, const float *y, const float *score, size_t *pairs)
{
    size_t np = 0;
    double right = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            if (y[i] == y[j])
                continue;
            np++;
            right += score[i] == score[j] ? 0.5 : (y[i] > y[j]) == (score[i] > score[j]);
        }
    if (pairs)
        *pairs = np;
    return np ? right / (double)np : -1;
}
