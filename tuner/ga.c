/* ga.c — the genetic tuner (AutoTVM's GATuner). Genes are configs as knob
 * choices; fitness is speed (1 / cost; 0 for a failed config). The
 * population is the best POP configs measured so far, in this session or
 * an earlier one, so the best (the elite) always stay parents; until POP
 * configs are known, proposals are random. A child takes the knobs of one
 * parent up to a random crossover point and the rest from the other
 * (parents drawn in proportion to their fitness), then each knob mutates to
 * a random candidate with probability MUTATE. A child already measured or
 * proposed is bred again a few times, then replaced by a random config, so
 * every proposal is new. */
#include <math.h>
#include <string.h>

#include "tuner/tuner.h"

enum { POP = 16, RETRIES = 16 };
#define MUTATE 0.1

typedef struct gene {
    int64_t index;
    double fitness;
} gene;

typedef struct ga_state {
    SU_VEC(gene) measured;      /* every measured config with its fitness */
    gene pop[POP];              /* the best ones (descending fitness) */
    int npop;
} ga_state;

static void ga_init(tun_tuner *t)
{
    t->state = su_calloc(1, sizeof(ga_state));
}

static void ga_free(tun_tuner *t)
{
    ga_state *g = t->state;
    su_vec_free(&g->measured);
    free(g);
}

static int by_fitness(const void *a, const void *b)
{
    const gene *x = a, *y = b;
    if (x->fitness != y->fitness)
        return x->fitness > y->fitness ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static void ga_update(tun_tuner *t, int n, const int64_t *idx, const double *cost)
{
    ga_state *g = t->state;
    if (n <= 0)
        return;
    for (int i = 0; i < n; i++) {
        gene e = {idx[i], isfinite(cost[i]) && cost[i] > 0 ? 1.0 / cost[i] : 0};
        su_vec_push(&g->measured, e);
    }
    /* the population: the POP fittest measured configs that work */
    gene *all = su_malloc((g->measured.len + 1) * sizeof *all);
    memcpy(all, g->measured.data, g->measured.len * sizeof *all);
    qsort(all, g->measured.len, sizeof *all, by_fitness);
    g->npop = 0;
    for (size_t i = 0; i < g->measured.len && g->npop < POP; i++)
        if (all[i].fitness > 0)
            g->pop[g->npop++] = all[i];
    free(all);
}

/* A parent drawn in proportion to its fitness. */
static const gene *select_parent(tun_tuner *t, const ga_state *g)
{
    double sum = 0;
    for (int i = 0; i < g->npop; i++)
        sum += g->pop[i].fitness;
    double r = tun_rand_unit(t) * sum;
    for (int i = 0; i < g->npop; i++) {
        r -= g->pop[i].fitness;
        if (r <= 0)
            return &g->pop[i];
    }
    return &g->pop[g->npop - 1];
}

/* A child of two parents, crossed over and mutated. */
static int64_t breed(tun_tuner *t, const ga_state *g)
{
    const tun_space *s = t->space;
    sch_config a, b;
    tun_config_decode(s, select_parent(t, g)->index, &a);
    tun_config_decode(s, select_parent(t, g)->index, &b);
    int point = a.n ? (int)tun_rand_below(t, a.n) : 0;
    for (int k = point; k < a.n; k++)
        a.choice[k] = b.choice[k];
    for (int k = 0; k < a.n; k++)
        if (tun_rand_unit(t) < MUTATE)
            a.choice[k] = (int)tun_rand_below(t, s->sp.knobs.data[k].ncand);
    int64_t child = tun_config_encode(s, &a);
    sch_config_free(&a);
    sch_config_free(&b);
    return child;
}

static int ga_next(tun_tuner *t, int n, int64_t *out)
{
    ga_state *g = t->state;
    int got = 0;
    while (got < n) {
        int64_t child = -1;
        if (g->npop >= 2 && (int)g->measured.len >= POP)
            for (int r = 0; r < RETRIES && child < 0; r++) {
                child = breed(t, g);
                if (child >= 0 && tun_idxset_has(&t->seen, child))
                    child = -1;
            }
        if (child < 0)
            child = tun_random_unseen(t);
        if (child < 0)
            break;
        out[got++] = child;
        tun_idxset_add(&t->seen, child);
    }
    return got;
}

const tun_tuner_ops tun_ga_ops = {"ga", ga_init, ga_next, ga_update, ga_free};
