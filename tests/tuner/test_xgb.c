/* test_xgb.c — the cost-model tuner without measuring anything: features of
 * real configs (deterministic, different for different loop nests, finite,
 * fast); the XGBoost model on synthetic data (learns a monotone function of
 * one feature, survives 0, 1, 2 rows, equal labels, NaN and inf); and the
 * xgb tuner on two convolutions' spaces driven by a synthetic cost computed
 * from each config's knob values (best inner tiles, vectorized, unrolled):
 * it proposes each config once, never one measured before, exhausts the
 * space, finds the optimum in far fewer trials than the space holds, both
 * scoring the space whole and annealing, reproducibly for a seed, with
 * any number of threads computing features; a plan that reaches only part
 * of the space featurizes no more than it should and still covers it;
 * records of the other convolution, given through transfer, make its very
 * first batch better than random; and transfer is checked: truthful records
 * find the optimum sooner and are kept, records that rank the configs
 * backwards are dropped once the task's own results show it. */
#include <math.h>
#include <omp.h>
#include <string.h>
#include <time.h>

#include "api/api.h"
#include "tests/tap.h"

/* Small convolutions keep the test cheap: driving the tuner through a whole
 * space refits the model after each batch of 16 and rescores what is left,
 * so its cost grows with the square of the space (about 2,000 configs here,
 * against 13,440 for a 28x28 conv with 32 -> 64 channels: 50 times the work).
 * The first conv's space still exceeds what 2 annealing walkers visit (so
 * they anneal; test_tuner checks it), and both convs have tiles of 16 output
 * channels and 7 columns (the synthetic optimum). */
static const char *MODEL =
    "#[version = \"0.0.5\"]\n"
    "def @main(%x: Tensor[(1, 4, 7, 7), float32], %w: Tensor[(16, 4, 3, 3), float32],\n"
    "          %v: Tensor[(16, 16, 3, 3), float32], %d: Tensor[(24, 196), float32]) {\n"
    "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3]);\n"
    "  %1 = nn.relu(%0);\n"
    "  %2 = nn.conv2d(%1, %v, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3]);\n"
    "  %3 = reshape(%2, newshape=[4, 196]);\n"
    "  nn.dense(%3, %d, units=24)\n"
    "}\n";

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- the synthetic cost ---- */

/* Value part p of knob `name` in config idx, or -1 when there is no such knob. */
static int64_t knob(const tun_space *s, int64_t idx, const char *name, int p)
{
    sch_config c;
    tun_config_decode(s, idx, &c);
    int64_t v = -1;
    for (int k = 0; k < c.n; k++) {
        const sch_knob *kb = &s->sp.knobs.data[k];
        if (!strcmp(kb->name, name))
            v = kb->cands[(size_t)c.choice[k] * (size_t)kb->nparts + (size_t)p];
    }
    sch_config_free(&c);
    return v;
}

/* Seconds of a made-up kernel: best with 16 output channels and about 7
 * output columns per tile, vectorized over columns, the kernel's width
 * unrolled, the weights packed and the padding in a buffer; a tile of one
 * output channel fails. The same rule for every conv2d_nchw shape. */
static double cost(const tun_space *s, int64_t idx)
{
    double oc = (double)knob(s, idx, "tile_oc", 1), ow = (double)knob(s, idx, "tile_ow", 1);
    if (oc == 1)
        return INFINITY;
    double pen = (log2(oc) - 4) * (log2(oc) - 4) + (log2(ow) - 2.8) * (log2(ow) - 2.8);
    pen += knob(s, idx, "vec_ow", 0) != 1;
    pen += knob(s, idx, "unroll_kw", 0) != 1;
    pen += knob(s, idx, "pack_weight", 0) != 1;
    pen += knob(s, idx, "pad_inline", 0) != 0;
    return 1e-3 * (1 + pen);
}

static int64_t best_config(const tun_space *s)
{
    int64_t best = 0;
    for (int64_t i = 1; i < s->size; i++)
        if (cost(s, i) < cost(s, best))
            best = i;
    return best;
}

/* ---- features ---- */

static bool any_diff(const float *a, const float *b, const char *prefix, const char *suffix)
{
    for (int i = 0; i < tun_feature_count(); i++) {
        const char *n = tun_feature_name(i);
        size_t ln = strlen(n), ls = strlen(suffix);
        if (!strncmp(n, prefix, strlen(prefix)) && ln >= ls && !strcmp(n + ln - ls, suffix) && a[i] != b[i])
            return true;
    }
    return false;
}

static void test_features(const tun_space *conv, const tun_space *dense)
{
    int nf = tun_feature_count();
    ok(nf > 100 && tun_feature_name(0) && tun_feature_name(nf - 1) && !tun_feature_name(nf) && !tun_feature_name(-1),
       "%d named features", nf);
    bool unique = true;
    for (int i = 0; i < nf && unique; i++)
        for (int j = i + 1; j < nf; j++)
            unique &= strcmp(tun_feature_name(i), tun_feature_name(j)) != 0;
    ok(unique, "feature names are distinct");
    float *a = su_malloc((size_t)nf * sizeof *a), *b = su_malloc((size_t)nf * sizeof *b);
    su_buf err = {0};
    int64_t d = conv->default_index;
    ok(tun_config_features(conv, d, a, &err) && tun_config_features(conv, d, b, &err) &&
           !memcmp(a, b, (size_t)nf * sizeof *a),
       "the same config twice: identical features (%s)", su_buf_str(&err));
    bool finite = true;
    for (int i = 0; i < nf; i++)
        finite &= isfinite(a[i]);
    ok(finite, "every feature is finite");
    /* another tile of output channels: another loop nest */
    sch_config c;
    tun_config_decode(conv, d, &c);
    int k = 0;
    while (strcmp(conv->sp.knobs.data[k].name, "tile_oc") != 0)
        k++;
    /* (a tile the template keeps, test_reject: where the default's way has
     * no other, 16 channels of one 16-lane vector, the other way's) */
    int v = 0;
    while (strcmp(conv->sp.knobs.data[v].name, "vec_ow") != 0)
        v++;
    int64_t other = d, ncand = conv->sp.knobs.data[k].ncand, first = c.choice[k];
    for (int flip = 0; flip < 2 && (other == d || tun_config_rejected(conv, other, NULL)); flip++) {
        c.choice[v] = (c.choice[v] + flip) % conv->sp.knobs.data[v].ncand;
        for (int step = 1; step < ncand && (other == d || tun_config_rejected(conv, other, NULL)); step++) {
            c.choice[k] = (int)((first + step) % ncand);
            other = tun_config_encode(conv, &c);
        }
    }
    sch_config_free(&c);
    ok(tun_config_features(conv, other, b, &err), "features of another tiling");
    ok(any_diff(a, b, "l", ".extent") && any_diff(a, b, "l", ".bytes") && any_diff(a, b, "curve", ""),
       "another tiling: other loop extents, bytes touched and working-set curve");
    ok(tun_config_features(dense, 0, b, &err), "a dense config's features have the same length");
    su_buf_clear(&err);
    ok(!tun_config_features(conv, conv->size, b, &err) && strstr(su_buf_str(&err), "outside"),
       "a config outside the space: an error (%s)", su_buf_str(&err));
    int n = 0;
    double t0 = now(), el;
    while ((el = now() - t0) < 0.3 || n < 20)
        tun_config_features(conv, (n++ * 7) % conv->size, a, &err);
    diag("%.0f features/s (conv2d, %lld configs)", n / el, (long long)conv->size);
    ok(n / el > 100, "extraction is fast enough to anneal with (%.0f configs/s)", n / el);
    su_buf_free(&err);
    free(a);
    free(b);
}

/* ---- the model ---- */

static uint64_t rng = 42;

static float unit(void)
{
    return (float)(ir_splitmix64(&rng) >> 40) / (float)(1 << 24);
}

/* n random rows; label = e^(3 x[5]) (monotone in feature 5), group g. */
static void synth(size_t n, float *x, float *y)
{
    int nf = tun_feature_count();
    for (size_t r = 0; r < n; r++) {
        for (int j = 0; j < nf; j++)
            x[r * (size_t)nf + (size_t)j] = unit();
        y[r] = expf(3 * x[r * (size_t)nf + 5]);
    }
}

/* Share of pairs with different labels that the scores order alike. */
static double pairwise(size_t n, const float *y, const float *s)
{
    double good = 0, all = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (y[i] != y[j]) {
                all++;
                good += (y[i] < y[j]) == (s[i] < s[j]);
            }
    return all ? good / all : 0;
}

static void test_model_learns(tun_objective obj, const char *name)
{
    size_t nf = (size_t)tun_feature_count(), n = 200;
    float *x = su_malloc(2 * n * nf * sizeof *x), *y = su_malloc(2 * n * sizeof *y), *s = su_malloc(n * sizeof *s);
    synth(2 * n, x, y);
    tun_cost_model *m = tun_cost_model_new(obj, 1);
    su_buf err = {0};
    ok(tun_cost_model_fit(m, n, x, y, NULL, &err) && tun_cost_model_trained(m), "%s: trains on %zu rows (%s)", name,
       n, su_buf_str(&err));
    ok(tun_cost_model_predict(m, n, x + n * nf, s, &err), "%s: predicts held-out rows", name);
    double acc = pairwise(n, y + n, s);
    ok(acc > 0.8, "%s: held-out pairwise accuracy %.3f", name, acc);
    /* the same data and seed: the same model */
    tun_cost_model *m2 = tun_cost_model_new(obj, 1);
    float *s2 = su_malloc(n * sizeof *s2);
    ok(tun_cost_model_fit(m2, n, x, y, NULL, &err) && tun_cost_model_predict(m2, n, x + n * nf, s2, &err) &&
           !memcmp(s, s2, n * sizeof *s),
       "%s: training is reproducible", name);
    tun_cost_model_free(m2);
    tun_cost_model_free(m);
    su_buf_free(&err);
    free(x);
    free(y);
    free(s);
    free(s2);
}

static void test_model_quirks(void)
{
    size_t nf = (size_t)tun_feature_count(), n = 60;
    float *x = su_malloc(n * nf * sizeof *x), *y = su_malloc(n * sizeof *y), s[4];
    synth(n, x, y);
    su_buf err = {0};
    tun_cost_model *m = tun_cost_model_new(TUN_OBJ_RANK, 3);
    bool fine = true;
    for (size_t k = 0; k <= 2; k++)
        fine &= tun_cost_model_fit(m, k, x, y, NULL, &err) && !tun_cost_model_trained(m);
    ok(fine, "0, 1 or 2 rows: nothing learnt, no error (%s)", su_buf_str(&err));
    ok(tun_cost_model_predict(m, 2, x, s, &err) && s[0] == 0 && s[1] == 0, "an untrained model scores 0");
    float *same = su_malloc(n * sizeof *same);
    for (size_t i = 0; i < n; i++)
        same[i] = 2.5f;
    ok(tun_cost_model_fit(m, n, x, same, NULL, &err) && !tun_cost_model_trained(m), "equal labels: nothing learnt");
    tun_cost_model *r = tun_cost_model_new(TUN_OBJ_REG, 3);
    ok(tun_cost_model_fit(r, n, x, same, NULL, &err) && !tun_cost_model_trained(r),
       "equal labels, regression: nothing learnt");
    /* groups whose labels are equal within each: nothing to rank */
    int *g = su_malloc(n * sizeof *g);
    for (size_t i = 0; i < n; i++) {
        g[i] = (int)(i % 2);
        same[i] = g[i] ? 1.0f : 3.0f;
    }
    ok(tun_cost_model_fit(m, n, x, same, g, &err) && !tun_cost_model_trained(m),
       "ranking within groups of equal labels: nothing learnt");
    /* NaN, inf and failures (0) among the data */
    x[3] = NAN;
    x[nf + 7] = INFINITY;
    x[2 * nf + 5] = -INFINITY;
    y[4] = NAN;
    y[5] = 0;
    y[6] = -1;
    ok(tun_cost_model_fit(m, n, x, y, g, &err) && tun_cost_model_trained(m), "NaN, inf and 0 in the data: trains (%s)",
       su_buf_str(&err));
    ok(tun_cost_model_predict(m, 3, x, s, &err) && isfinite(s[0]) && isfinite(s[1]) && isfinite(s[2]),
       "rows with NaN and inf get finite scores");
    free(g);
    free(same);
    tun_cost_model_free(m);
    tun_cost_model_free(r);
    su_buf_free(&err);
    free(x);
    free(y);
}

/* ---- the tuner ---- */

/* Drives a tuner with the synthetic cost until the space is exhausted; the
 * trial at which the optimum was proposed goes to *found_at. */
static void drive(const tun_space *s, const tun_tuner_conf *conf, uint64_t seed, const char *what)
{
    tun_tuner *t = tun_tuner_new_conf(&tun_xgb_ops, s, seed, conf);
    int64_t pre = s->default_index, best = best_config(s), buf[16], found_at = -1, total = 0;
    double pre_cost = cost(s, pre);
    tun_update(t, 1, &pre, &pre_cost);
    tun_idxset got = {0};
    bool unique = true, in_space = true;
    int n;
    while ((n = tun_next_batch(t, 16, buf)) > 0) {
        double c[16];
        for (int i = 0; i < n; i++) {
            unique &= buf[i] != pre && tun_idxset_add(&got, buf[i]);
            in_space &= buf[i] >= 0 && buf[i] < s->size;
            c[i] = cost(s, buf[i]);
            if (buf[i] == best)
                found_at = total + i + 1;
        }
        tun_update(t, n, buf, c);
        total += n;
    }
    ok(unique && in_space && total == s->size - 1 - t->rejected,
       "%s: every config the template keeps proposed once, never the one measured before (%lld of %lld, %lld "
       "rejected)", what, (long long)total, (long long)s->size, (long long)t->rejected);
    ok(tun_next_batch(t, 4, buf) == 0 && tun_tuner_exhausted(t), "%s: nothing left after the space", what);
    ok(found_at > 0 && found_at <= s->size / 4, "%s: the optimum found at trial %lld of %lld", what,
       (long long)found_at, (long long)s->size);
    tun_idxset_free(&got);
    tun_tuner_free(t);
}

/* The first `n` proposals of a tuner with the given seed. */
static void first_batches(const tun_space *s, const tun_tuner_conf *conf, uint64_t seed, int n, int64_t *out)
{
    tun_tuner *t = tun_tuner_new_conf(&tun_xgb_ops, s, seed, conf);
    for (int got = 0, k; got < n; got += k) {
        k = tun_next_batch(t, 8 < n - got ? 8 : n - got, out + got);
        double c[8];
        for (int i = 0; i < k; i++)
            c[i] = cost(s, out[got + i]);
        tun_update(t, k, out + got, c);
    }
    tun_tuner_free(t);
}

/* Plans that score a space whole reach plan_new configs further each: the
 * first costs about plan_new feature vectors, and the whole space is still
 * proposed once and searched as well; features computed on one thread or
 * two give the same proposals. */
static void test_plan_new(const tun_space *conv)
{
    tun_tuner_conf conf = tun_tuner_conf_default;
    conf.plan_new = 256;
    ok(conv->size > 4 * conf.plan_new, "the space (%lld configs) takes several plans of %lld new configs",
       (long long)conv->size, (long long)conf.plan_new);
    tun_tuner *t = tun_tuner_new_conf(&tun_xgb_ops, conv, 3, &conf);
    int64_t buf[8];
    double c[8];
    int64_t at[4] = {0};
    for (int round = 0; round < 4; round++) {
        int n = tun_next_batch(t, 8, buf);
        for (int i = 0; i < n; i++)
            c[i] = cost(conv, buf[i]);
        tun_update(t, n, buf, c);
        at[round] = t->featurized;
    }
    /* round 0 is random (no model yet); rounds 1-3 plan: plan_new more each
     * that the template keeps, and the rejected ones met on the way (a
     * template run each, no lowering: test_reject), give or take the 8
     * measured configs of each round (featurized to teach the model, and
     * perhaps already among those a plan reaches) */
    int64_t kept = 0;
    for (int64_t i = 0; i < conv->size; i++)
        kept += !tun_config_rejected(conv, i, NULL);
    double per_kept = (double)conv->size / (double)kept;
    diag("configs featurized after each batch: %lld %lld %lld %lld (%.2f configs a kept one)", (long long)at[0],
         (long long)at[1], (long long)at[2], (long long)at[3], per_kept);
    ok(at[0] <= 8 && at[1] - at[0] >= conf.plan_new - 8 && at[1] - at[0] <= (conf.plan_new + 8) * per_kept * 1.25 &&
           at[3] - at[1] <= 2 * (conf.plan_new + 8) * per_kept * 1.25,
       "each plan featurizes plan_new kept configs more (and the rejected among them, and the batch's own)");
    tun_tuner_free(t);
    drive(conv, &conf, 5, "xgb scoring 256 new configs a plan");
    int64_t one[48], two[48];
    omp_set_num_threads(1);
    first_batches(conv, &conf, 9, 48, one);
    omp_set_num_threads(2);
    first_batches(conv, &conf, 9, 48, two);
    ok(!memcmp(one, two, sizeof one), "features on one thread or two: the same proposals");
}

static void test_tuner(const tun_space *conv)
{
    ok(tun_tuner_find("xgb") == &tun_xgb_ops, "the tuner is registered as xgb");
    tun_tuner_conf conf = tun_tuner_conf_default;
    /* xgb.c scores a space whole up to 2 x walkers x SA_STEPS (100) configs:
     * the default walkers score this one whole, 2 walkers anneal */
    ok(conv->size <= 2 * (int64_t)conf.walkers * 100 && conv->size > 2 * 2 * 100,
       "the space (%lld configs) is scored whole by %d walkers and annealed by 2", (long long)conv->size, conf.walkers);
    drive(conv, &conf, 5, "xgb scoring the space whole");
    conf.walkers = 2;
    drive(conv, &conf, 5, "xgb annealing (2 walkers)");
    int64_t a[48], b[48];
    first_batches(conv, &conf, 9, 48, a);
    first_batches(conv, &conf, 9, 48, b);
    ok(!memcmp(a, b, sizeof a), "the same seed: the same proposals");
    test_plan_new(conv);
}

/* Mean penalty of n configs relative to the space's mean. */
static double relative_cost(const tun_space *s, int n, const int64_t *idx)
{
    double mean = 0, batch = 0;
    int finite = 0;
    for (int64_t i = 0; i < s->size; i++)
        if (isfinite(cost(s, i))) {
            mean += cost(s, i);
            finite++;
        }
    mean /= finite;
    for (int i = 0; i < n; i++)
        batch += isfinite(cost(s, idx[i])) ? cost(s, idx[i]) : 2 * mean;
    return batch / n / mean;
}

static void test_transfer(const tun_space *target, const tun_space *source, const tun_space *dense)
{
    /* the other conv's configs, then a dense's (another template, its own
     * group), then the conv's first config again */
    size_t n = (size_t)source->size + (size_t)dense->size + 1, k = 0;
    tun_transfer_rec *recs = su_malloc(n * sizeof *recs);
    for (int64_t i = 0; i < source->size; i++) {
        double c = cost(source, i);
        recs[k++] = (tun_transfer_rec){source, i, isfinite(c) ? 1e-9 / c : 0};
    }
    for (int64_t i = 0; i < dense->size; i++)
        recs[k++] = (tun_transfer_rec){dense, i, (double)(1 + i % 5)};
    recs[k++] = recs[0];
    int64_t cold[16], warm[16];
    tun_tuner *t = tun_tuner_new(&tun_xgb_ops, target, 3);
    int nc = tun_next_batch(t, 16, cold);
    tun_tuner_free(t);
    t = tun_tuner_new(&tun_xgb_ops, target, 3);
    tun_transfer(t, n, recs);
    int nw = tun_next_batch(t, 16, warm);
    tun_tuner_free(t);
    double rc = relative_cost(target, nc, cold), rw = relative_cost(target, nw, warm);
    ok(nc == 16 && nw == 16 && rw < 0.8 * rc && rw < 0.8,
       "transfer from another conv's records (and a dense's): the first batch costs %.2f of the space's mean "
       "(random: %.2f)",
       rw, rc);
    free(recs);
}

/* Trials until the tuner proposes the optimum (the space's size when it
 * never does), after transfer from recs; *dropped_at: when it dropped them. */
static int64_t trials_to_best(const tun_space *s, const tun_transfer_rec *recs, size_t n, uint64_t seed,
                              int64_t *dropped_at)
{
    tun_tuner *t = tun_tuner_new(&tun_xgb_ops, s, seed);
    if (n)
        tun_transfer(t, n, recs);
    int64_t best = best_config(s), buf[8], total = 0, found = s->size;
    int k;
    while (found == s->size && (k = tun_next_batch(t, 8, buf)) > 0) {
        double c[8];
        for (int i = 0; i < k; i++) {
            c[i] = cost(s, buf[i]);
            if (buf[i] == best && found == s->size)
                found = total + i + 1;
        }
        tun_update(t, k, buf, c);
        total += k;
    }
    *dropped_at = t->transfer_dropped_at;
    tun_tuner_free(t);
    return found;
}

/* Records of another conv whose costs rank its configs backwards: the best
 * configs of the synthetic cost measured slowest. Transfer from them must
 * be dropped once the task's own results show it, and must not cost the
 * search more than a little against no transfer at all; transfer from the
 * truthful records is kept and helps. */
static void test_transfer_checked(const tun_space *target, const tun_space *source)
{
    size_t n = (size_t)source->size;
    tun_transfer_rec *good = su_malloc(n * sizeof *good), *bad = su_malloc(n * sizeof *bad);
    for (size_t i = 0; i < n; i++) {
        double c = cost(source, (int64_t)i);
        good[i] = (tun_transfer_rec){source, (int64_t)i, isfinite(c) ? 1e-9 / c : 0};
        bad[i] = (tun_transfer_rec){source, (int64_t)i, isfinite(c) ? c * 1e6 : 0};
    }
    int64_t cold = 0, warm = 0, wrong = 0, d, dropped_bad = 0, dropped_good = 0;
    enum { SEEDS = 3 };
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        cold += trials_to_best(target, NULL, 0, seed, &d);
        warm += trials_to_best(target, good, n, seed, &d);
        dropped_good += d > 0;
        if (d)
            diag("seed %llu: truthful transfer dropped after %lld own results", (unsigned long long)seed, (long long)d);
        wrong += trials_to_best(target, bad, n, seed, &d);
        dropped_bad += d > 0;
        diag("seed %llu: misleading transfer dropped after %lld own results", (unsigned long long)seed, (long long)d);
    }
    diag("trials to the optimum over %d seeds: cold %lld, truthful transfer %lld, misleading transfer %lld", SEEDS,
         (long long)cold, (long long)warm, (long long)wrong);
    is_int(dropped_bad, SEEDS, "misleading transfer is dropped on held-out results in every run");
    ok(dropped_good <= 1, "truthful transfer is kept (dropped in %lld of %d runs)", (long long)dropped_good, SEEDS);
    ok(warm < cold, "truthful transfer finds the optimum sooner than none (%lld < %lld trials)", (long long)warm,
       (long long)cold);
    /* Before the prior was judged alone on all of the task's first results
     * (issue 17), the 4-fold check dropped it at 16 or 32 and the search took
     * 1.8-2.5x cold (seeds 1-3: 408 against 216); judged on all 120 pairs of
     * 16 results it is dropped at 16 in every run, and the search takes less
     * than cold (143). Allowed: cold + a quarter + 16 a seed. */
    ok(wrong <= cold + cold / 4 + 16 * SEEDS,
       "misleading transfer, once dropped, costs little more than none (%lld trials, none: %lld)", (long long)wrong,
       (long long)cold);
    free(good);
    free(bad);
}

int main(void)
{
    rt_module *m = rt_module_parse("xgb.relay", MODEL, strlen(MODEL), stdout);
    rt_opt_options oo = {.level = 3};
    ok(m && rt_module_bind_random_params(m, 0, 1, stdout) == 3 && rt_module_optimize(m, &oo, stdout) == 0,
       "the model loads with bound weights");
    const rt_task *pub;
    size_t nt;
    rt_module_tasks(m, &pub, &nt);
    is_int(nt, 3, "three tasks: two convolutions and a dense");
    tg_target tg;
    const char *why;
    /* a named machine, so the spaces (and the trials below) are the same on
     * every host: the transfer checks count trials on these spaces */
    tg_target_parse("cpu -mcpu=znver4 -cores=2", &tg, &why);
    tun_space a, b, d;
    su_buf err = {0};
    ok(tun_space_init(&a, &m->tasks.items[0], &tg.hw, &err) && tun_space_init(&b, &m->tasks.items[1], &tg.hw, &err) &&
           tun_space_init(&d, &m->tasks.items[2], &tg.hw, &err),
       "the spaces (%s)", su_buf_str(&err));
    diag("spaces: %lld and %lld conv configs, %lld dense", (long long)a.size, (long long)b.size, (long long)d.size);
    test_features(&a, &d);
    test_model_learns(TUN_OBJ_RANK, "rank:pairwise");
    test_model_learns(TUN_OBJ_REG, "reg:squarederror");
    test_model_quirks();
    test_tuner(&a);
    test_transfer(&a, &b, &d);
    test_transfer_checked(&a, &b);
    tun_space_free(&a);
    tun_space_free(&b);
    tun_space_free(&d);
    su_buf_free(&err);
    rt_module_free(m);
    return tap_done();
}
