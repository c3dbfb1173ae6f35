/* tuner.c — what every tuner shares: the interface (a tuner proposes a batch
 * of configs and learns from their results, AutoTVM's next_batch/update),
 * the set of configs already proposed or measured (which no tuner proposes
 * again: configs measured in an earlier session come in through update
 * before the first batch), and the registry of tuners by name. */
#include <math.h>
#include <string.h>

#include "tuner/tuner.h"

/* ---- a set of config indices (open addressing; -1 marks an empty slot) ---- */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

bool tun_idxset_has(const tun_idxset *s, int64_t v)
{
    if (!s->cap)
        return false;
    for (size_t i = mix((uint64_t)v) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (s->slots[i] == v)
            return true;
        if (s->slots[i] < 0)
            return false;
    }
}

bool tun_idxset_add(tun_idxset *s, int64_t v)
{
    if (tun_idxset_has(s, v))
        return false;
    if ((s->len + 1) * 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        int64_t *old = s->slots;
        size_t oldcap = s->cap;
        s->slots = su_malloc(cap * sizeof *s->slots);
        for (size_t i = 0; i < cap; i++)
            s->slots[i] = -1;
        s->cap = cap;
        s->len = 0;
        for (size_t i = 0; i < oldcap; i++)
            if (old[i] >= 0)
                tun_idxset_add(s, old[i]);
        free(old);
    }
    size_t i = mix((uint64_t)v) & (s->cap - 1);
    while (s->slots[i] >= 0)
        i = (i + 1) & (s->cap - 1);
    s->slots[i] = v;
    s->len++;
    return true;
}

void tun_idxset_free(tun_idxset *s)
{
    free(s->slots);
    memset(s, 0, sizeof *s);
}

/* ---- the interface ---- */

static const struct {
    const char *name;
    const tun_tuner_ops *ops;
} registry[] = {
    {"random", &tun_random_ops},
    {"grid", &tun_grid_ops},
    {"ga", &tun_ga_ops},
    {"xgb", &tun_xgb_ops},
};

const tun_tuner_ops *tun_tuner_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof registry / sizeof *registry; i++)
        if (!strcmp(registry[i].name, name))
            return registry[i].ops;
    return NULL;
}

/* AutoTVM's XGBTuner plans from 64 configs with 5% random ones; 128
 * annealing walkers; 2,048 new configs scored a plan (docs/tuning.md,
 * *Faster trials*). */
const tun_tuner_conf tun_tuner_conf_default = {
    .plan_size = 64,
    .epsilon = 0.05,
    .objective = TUN_OBJ_RANK,
    .walkers = 128,
    .plan_new = 2048,
};

tun_tuner *tun_tuner_new_conf(const tun_tuner_ops *ops, const tun_space *space, uint64_t seed,
                              const tun_tuner_conf *conf)
{
    tun_tuner *t = su_calloc(1, sizeof *t);
    t->ops = ops;
    t->space = space;
    t->rng = seed ^ 0x2545f4914f6cdd1dULL;
    t->conf = conf ? *conf : tun_tuner_conf_default;
    if (ops->init)
        ops->init(t);
    return t;
}

tun_tuner *tun_tuner_new(const tun_tuner_ops *ops, const tun_space *space, uint64_t seed)
{
    return tun_tuner_new_conf(ops, space, seed, NULL);
}

void tun_transfer(tun_tuner *t, size_t n, const tun_transfer_rec *recs)
{
    if (n && t->ops->transfer)
        t->ops->transfer(t, n, recs);
}

void tun_tuner_free(tun_tuner *t)
{
    if (!t)
        return;
    if (t->ops->free)
        t->ops->free(t);
    tun_idxset_free(&t->seen);
    free(t);
}

bool tun_tuner_exhausted(const tun_tuner *t)
{
    return (int64_t)t->seen.len >= t->space->size;
}

/* The tuner proposes until n configs pass the template or the space runs
 * out: a rejected config is marked seen and dropped, never compiled. The
 * tuners are not told (it would cost the model a refit per round, and a
 * rejected config has no features: xgb never plans one); each round marks
 * at least one config seen, so a space full of rejected points ends. */
int tun_next_batch(tun_tuner *t, int n, int64_t *out)
{
    int got = 0;
    while (got < n && !tun_tuner_exhausted(t)) {
        int k = t->ops->next_batch(t, n - got, out + got), kept = 0;
        if (k <= 0)
            break;
        for (int i = 0; i < k; i++) {
            int64_t idx = out[got + i];
            tun_idxset_add(&t->seen, idx);
            if (tun_config_rejected(t->space, idx, NULL))
                t->rejected++;
            else
                out[got + kept++] = idx;
        }
        got += kept;
    }
    return got;
}

void tun_update(tun_tuner *t, int n, const int64_t *idx, const double *cost)
{
    for (int i = 0; i < n; i++)
        tun_idxset_add(&t->seen, idx[i]);
    if (t->ops->update)
        t->ops->update(t, n, idx, cost);
}

uint64_t tun_rand(tun_tuner *t)
{
    return ir_splitmix64(&t->rng);
}

int64_t tun_rand_below(tun_tuner *t, int64_t n)
{
    return n > 0 ? (int64_t)(tun_rand(t) % (uint64_t)n) : 0;
}

double tun_rand_unit(tun_tuner *t)
{
    return (double)(tun_rand(t) >> 11) * (1.0 / 9007199254740992.0);
}

int64_t tun_random_unseen(tun_tuner *t)
{
    int64_t size = t->space->size;
    if (tun_tuner_exhausted(t))
        return -1;
    /* a few draws find one while the space is mostly unexplored; past that,
     * walk from a random start to the next unseen index */
    for (int tries = 0; tries < 32; tries++) {
        int64_t i = tun_rand_below(t, size);
        if (!tun_idxset_has(&t->seen, i))
            return i;
    }
    int64_t start = tun_rand_below(t, size);
    for (int64_t k = 0; k < size; k++) {
        int64_t i = (start + k) % size;
        if (!tun_idxset_has(&t->seen, i))
            return i;
    }
    return -1;
}
