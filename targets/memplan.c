/* memplan.c — the static memory plan of a compiled model. Every
 * intermediate tensor is live from the call that writes it to the last call
 * that reads it; tensors whose lifetimes do not overlap may share bytes.
 * The plan is the greedy "largest first, lowest fitting offset" placement
 * (TFLite's and TVM's): each item, in order of decreasing size, goes to the
 * lowest aligned offset not used by an already placed item that is live at
 * the same time. It is within a few percent of the lower bound (the most
 * bytes live at once) on the zoo models. */
#include <stdlib.h>

#include "targets/targets.h"

typedef struct order {
    int64_t bytes;
    int first, index;
} order;

static int by_size(const void *a, const void *b)
{
    const order *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->index - y->index;
}

static int by_offset(const void *a, const void *b)
{
    const tg_mem_item *x = *(tg_mem_item *const *)a, *y = *(tg_mem_item *const *)b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int64_t round_up(int64_t v, int64_t align)
{
    return (v + align - 1) / align * align;
}

tg_mem_stats tg_memplan(tg_mem_item *items, int n, int64_t align)
{
    tg_mem_stats st = {0, 0, 0};
    if (align < 1)
        align = 1;
    order *ord = su_calloc((size_t)n + 1, sizeof *ord);
    tg_mem_item **placed = su_calloc((size_t)n + 1, sizeof *placed);
    int last_step = 0;
    for (int i = 0; i < n; i++) {
        ord[i] = (order){items[i].bytes, items[i].first, i};
        st.sum += items[i].bytes;
        last_step = items[i].last > last_step ? items[i].last : last_step;
    }
    qsort(ord, (size_t)n, sizeof *ord, by_size);
    int nplaced = 0;
    tg_mem_item **live = su_calloc((size_t)n + 1, sizeof *live);
    for (int k = 0; k < n; k++) {
        tg_mem_item *it = &items[ord[k].index];
        int nl = 0;
        for (int j = 0; j < nplaced; j++)
            if (placed[j]->first <= it->last && it->first <= placed[j]->last)
                live[nl++] = placed[j];
        qsort(live, (size_t)nl, sizeof *live, by_offset);
        int64_t at = 0;
        for (int j = 0; j < nl; j++) {
            if (live[j]->offset >= at + it->bytes)
                break;
            int64_t end = round_up(live[j]->offset + live[j]->bytes, align);
            at = end > at ? end : at;
        }
        it->offset = at;
        placed[nplaced++] = it;
        st.peak = at + it->bytes > st.peak ? at + it->bytes : st.peak;
    }
    for (int s = 0; s <= last_step; s++) {
        int64_t b = 0;
        for (int i = 0; i < n; i++)
            if (items[i].first <= s && s <= items[i].last)
                b += items[i].bytes;
        st.live = b > st.live ? b : st.live;
    }
    free(live);
    free(placed);
    free(ord);
    return st;
}
