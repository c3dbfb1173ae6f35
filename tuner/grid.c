/* grid.c — the grid tuner: every config in index order (the first knob
 * varying fastest), skipping those already measured (AutoTVM's
 * GridSearchTuner). Exhaustive on small spaces; on large ones it explores
 * one corner, which is what makes it a useful control. */
#include "tuner/tuner.h"

static void grid_init(tun_tuner *t)
{
    t->state = su_calloc(1, sizeof(int64_t));
}

static int grid_next(tun_tuner *t, int n, int64_t *out)
{
    int64_t *cursor = t->state;
    int got = 0;
    while (got < n && *cursor < t->space->size) {
        int64_t i = (*cursor)++;
        if (!tun_idxset_has(&t->seen, i))
            out[got++] = i;
    }
    return got;
}

static void grid_free(tun_tuner *t)
{
    free(t->state);
}

const tun_tuner_ops tun_grid_ops = {"grid", grid_init, grid_next, NULL, grid_free};
