/* random.c — the random tuner: configs drawn uniformly from those not yet
 * measured (AutoTVM's RandomTuner). It learns nothing; it is the baseline
 * that every other tuner must beat. */
#include "tuner/tuner.h"

static int random_next(tun_tuner *t, int n, int64_t *out)
{
    int got = 0;
    while (got < n) {
        int64_t i = tun_random_unseen(t);
        if (i < 0)
            break;
        out[got++] = i;
        tun_idxset_add(&t->seen, i);
    }
    return got;
}

const tun_tuner_ops tun_random_ops = {"random", NULL, random_next, NULL, NULL};
