/* template.c — the template registry and the knob-defining calls templates
 * make. A template is run once per config: each sch_define_* call registers
 * its knob in the space the first time (in the same order every run, so a
 * config is just one index per knob) and returns the value the config
 * chose, or the knob's default, the template's own heuristic for a machine
 * it has not measured. The template family comes from the anchor op, by
 * workload.c's table of op families. */
#include <string.h>

#include "schedule/schedule.h"

const sch_hw sch_hw_default = {
    .lanes = 16, .vregs = 32, .cores = 2, .fma = 2, .l1 = 32 << 10, .l2 = 1 << 20, .l3 = 32 << 20, .fused_fma = true};

/* The registry. `version` says what a config of the template means: bump it
 * when a change makes a stored config schedule differently (a knob that
 * means something else, a candidate list in another order, a different
 * trace for the same choices), so that tuning records of the old meaning
 * stop being used (and say so) instead of silently applying another
 * schedule. New defaults or a faster lowering of the same trace keep it. */
static const struct {
    const char *name;
    sch_template_fn fn;
    int version;
} templates[] = {
    {"conv2d_nchw", sch_template_conv2d, 7}, /* 3: 1x1 convs tiled over fused pixels; 4: tiles with tails; 5: losing channel-vector tiles rejected; 6: taps kept a loop where unrolled ones would not fit the registers; 7: the 1x1 convs' channel tiles of part vectors rejected */
    {"depthwise_conv2d_nchw", sch_template_conv2d, 4}, /* 3: stride 1 in the flat form (conv2d_dw_flat.c); 4: every stride, stages at the channel tile */
    {"group_conv2d_nchw", sch_template_conv2d, 5}, /* 3: tiles with tails; 4: losing channel-vector tiles rejected; 5: taps kept a loop (conv2d_nchw's 6) */
    {"conv2d_nchwc", sch_template_conv2d_nchwc, 2}, /* 2: tiles with tails */
    {"conv2d_winograd", sch_template_conv2d_winograd, 3}, /* 3: the GEMM tile's copy rows rolled; the output transform parallel over k alone */
    {"dense", sch_template_matmul, 3}, /* 3: tiles with tails */
    {"batch_matmul", sch_template_matmul, 3},
    {"default", sch_template_default, 2},
    /* the device templates (templates/device_cl.c), which sch_device_template names */
    {"conv2d_nchw_cl", sch_template_conv2d_nchw_cl, 3}, /* 3: 2-D work-groups, local_stage (conv2d_cl.c) */
    /* 3: conv2d_nchw_cl's form where the conv is direct (grouped; depthwise dilated or with a multiplier);
     * 4: undilated ones direct too on a device that is no cpu or stages (sch_create_for), a GPU's
     * groups spanning channels */
    {"depthwise_conv2d_nchw_cl", sch_template_conv2d_nchw_cl, 4},
    {"group_conv2d_nchw_cl", sch_template_conv2d_nchw_cl, 3},
    {"dense_cl", sch_template_dense_cl, 3}, /* 3: 2-D work-groups, local_stage (dense_cl.c) */
    {"batch_matmul_cl", sch_template_batch_matmul_cl, 3}, /* 3: 2-D work-groups, local_stage (batch_matmul_cl.c) */
    {"default_cl", sch_template_default_cl, 2}, /* 2: the knob vec */
    {"reduce_cl", sch_template_reduce_cl, 2},   /* 2: the knobs wg_rows and vec */
};

#define NTEMPLATES ((int)(sizeof templates / sizeof *templates))

/* Templates registered at run time (a test's deliberately broken one),
 * looked up after the built-in ones. */
enum { MAX_EXTRA = 8 };
static struct {
    const char *name;
    sch_template_fn fn;
    int version;
} extra[MAX_EXTRA];
static int nextra;

/* The registry's entry of a template name: a built-in index, NTEMPLATES +
 * a registered one's index, or -1. */
static int lookup(const char *name)
{
    for (size_t i = 0; name && i < sizeof templates / sizeof *templates; i++)
        if (!strcmp(templates[i].name, name))
            return (int)i;
    for (int i = 0; name && i < nextra; i++)
        if (!strcmp(extra[i].name, name))
            return NTEMPLATES + i;
    return -1;
}

bool sch_template_register(const char *name, sch_template_fn fn, int version)
{
    if (lookup(name) >= 0 || nextra == MAX_EXTRA)
        return false;
    extra[nextra].name = name;
    extra[nextra].fn = fn;
    extra[nextra++].version = version;
    return true;
}

sch_template_fn sch_template_find(const char *name)
{
    int i = lookup(name);
    return i < 0 ? sch_template_default : i >= NTEMPLATES ? extra[i - NTEMPLATES].fn : templates[i].fn;
}

int sch_template_version(const char *name)
{
    int i = lookup(name);
    return i < 0 ? sch_template_version("default") : i >= NTEMPLATES ? extra[i - NTEMPLATES].version
                                                                     : templates[i].version;
}

/* The registry's own copy of a template name (static storage). */
static const char *canonical_name(const char *name)
{
    int i = lookup(name);
    return i < 0 ? "default" : i >= NTEMPLATES ? extra[i - NTEMPLATES].name : templates[i].name;
}

const char *sch_template_name(const sch_schedule *s)
{
    const sch_tensor *a = sch_anchor(s);
    const char *name = a ? sch_call_template(a->call) : NULL;
    return name ? name : "default";
}

static sch_knob *knob_at(sch_tctx *t, const char *name, sch_knob_kind kind)
{
    int idx = t->next_knob++;
    if (idx < (int)t->space->knobs.len) {
        sch_knob *k = &t->space->knobs.data[idx];
        if (strcmp(k->name, name) != 0 || k->kind != kind)
            su_panic("template defines knob %s where it defined %s before", name, k->name);
        return k;
    }
    return NULL;
}

/* The candidate a config (or the default) picks for knob k at index idx. */
static int pick(sch_tctx *t, const sch_knob *k, int idx)
{
    if (!t->cfg)
        return k->dflt;
    if (idx >= t->cfg->n || t->cfg->choice[idx] < 0 || t->cfg->choice[idx] >= k->ncand) {
        if (!t->err)
            t->err = sch_fail(t->s, SCH_E_BAD_CONFIG, "config has no valid choice for knob %s", k->name);
        return k->dflt;
    }
    return t->cfg->choice[idx];
}

typedef SU_VEC(int64_t) i64_vec;

static bool is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

/* Appends every factorization of n into parts factors allowed by policy p
 * to out, each as parts values. */
static void factorize(int64_t n, int parts, const sch_split_policy *p, int64_t *cur, int depth, i64_vec *out)
{
    if (depth == parts - 1) {
        if ((p->max_inner && n > p->max_inner) || (p->pow2 && depth > 0 && !is_pow2(n)) ||
            (p->max_outer && depth == 0 && n > p->max_outer))
            return;
        cur[depth] = n;
        for (int i = 0; i < parts; i++)
            su_vec_push(out, cur[i]);
        return;
    }
    for (int64_t f = 1; f <= n; f++) {
        if (n % f || (p->pow2 && depth > 0 && !is_pow2(f)) || (p->max_outer && depth == 0 && f > p->max_outer))
            continue;
        cur[depth] = f;
        factorize(n / f, parts, p, cur, depth + 1, out);
    }
}

/* Registers a new knob (taking cands and loops) with the default candidate
 * whose values equal dflt (NULL or none: the first). */
static sch_knob *add_knob(sch_tctx *t, const char *name, sch_knob_kind kind, int nparts, int64_t *cands, int ncand,
                          char **loops, const int64_t *dflt)
{
    sch_knob nk = {su_strdup(name), kind, 0, nparts, ncand, cands, 0, loops};
    for (int c = 0; dflt && c < ncand; c++)
        if (!memcmp(&cands[(size_t)c * nparts], dflt, (size_t)nparts * sizeof *dflt)) {
            nk.dflt = c;
            break;
        }
    su_vec_push(&t->space->knobs, nk);
    return &t->space->knobs.data[t->space->knobs.len - 1];
}

const int64_t *sch_define_split_policy(sch_tctx *t, const char *name, int64_t extent, int nparts,
                                       const sch_split_policy *p, const int64_t *dflt)
{
    int idx = t->next_knob;
    sch_knob *k = knob_at(t, name, SCH_KNOB_SPLIT);
    if (!k) {
        i64_vec v = {0};
        int64_t cur[8];
        static const sch_split_policy any = {0};
        if (nparts < 1 || nparts > 8)
            su_panic("split knob %s with %d parts", name, nparts);
        factorize(extent, nparts, p, cur, 0, &v);
        if (!v.len)
            factorize(extent, nparts, &any, cur, 0, &v);
        k = add_knob(t, name, SCH_KNOB_SPLIT, nparts, v.data, (int)(v.len / (size_t)nparts), NULL, dflt);
        k->extent = extent;
    }
    return &k->cands[(size_t)pick(t, k, idx) * k->nparts];
}

const int64_t *sch_define_split(sch_tctx *t, const char *name, int64_t extent, int nparts, int64_t max_inner,
                                const int64_t *dflt)
{
    const sch_split_policy p = {.max_inner = max_inner};
    return sch_define_split_policy(t, name, extent, nparts, &p, dflt);
}

/* The exact factorizations come from factorize; a tile that leaves a tail
 * is the pair (ceil(n / f), f), which lowering partitions into full tiles
 * and a tail (lower.c). Candidates run from the largest inner factor down,
 * as factorize lists them, so that neighbouring candidates are
 * neighbouring tiles. */
const int64_t *sch_define_tile_split(sch_tctx *t, const char *name, int64_t extent, int64_t max_inner, int ntails,
                                     const int64_t *tails, const int64_t *dflt)
{
    int idx = t->next_knob;
    sch_knob *k = knob_at(t, name, SCH_KNOB_SPLIT);
    if (!k) {
        i64_vec exact = {0}, v = {0};
        int64_t cur[2];
        const sch_split_policy p = {.max_inner = max_inner};
        factorize(extent, 2, &p, cur, 0, &exact);
        size_t e = 0;
        for (int64_t f = extent; f >= 1; f--) {
            bool tail = false;
            for (int j = 0; j < ntails && !tail; j++)
                tail = tails[j] == f && extent % f && f < extent && (!max_inner || f <= max_inner);
            if (e < exact.len && exact.data[e + 1] == f) {
                su_vec_push(&v, exact.data[e]);
                su_vec_push(&v, f);
                e += 2;
            } else if (tail) {
                su_vec_push(&v, (extent + f - 1) / f);
                su_vec_push(&v, f);
            }
        }
        su_vec_free(&exact);
        k = add_knob(t, name, SCH_KNOB_SPLIT, 2, v.data, (int)(v.len / 2), NULL, dflt);
        k->extent = extent;
    }
    return &k->cands[(size_t)pick(t, k, idx) * k->nparts];
}

int64_t sch_define_knob(sch_tctx *t, const char *name, int n, const int64_t *values, int64_t dflt)
{
    int idx = t->next_knob;
    sch_knob *k = knob_at(t, name, SCH_KNOB_CHOICE);
    if (!k) {
        int64_t *cands = su_malloc((size_t)n * sizeof *values);
        memcpy(cands, values, (size_t)n * sizeof *values);
        k = add_knob(t, name, SCH_KNOB_CHOICE, 1, cands, n, NULL, &dflt);
    }
    return k->cands[pick(t, k, idx)];
}

/* Defines (once) a knob over named loops whose candidates are given; a
 * template's mistake in them is a bug (panic), not a config's fault. */
static const int64_t *define_over_loops(sch_tctx *t, const char *name, sch_knob_kind kind, int nloops,
                                        const char *const *loops, int ncand, const int64_t *cands, int dflt)
{
    int idx = t->next_knob;
    sch_knob *k = knob_at(t, name, kind);
    if (!k) {
        if (nloops < 1 || ncand < 1 || dflt < 0 || dflt >= ncand)
            su_panic("%s knob %s: %d loops, %d candidates, default %d", sch_knob_kind_name(kind), name, nloops, ncand,
                     dflt);
        for (int c = 0; c < ncand; c++) {
            uint64_t seen = 0;
            for (int j = 0; j < nloops; j++) {
                int64_t v = cands[(size_t)c * nloops + j];
                bool okv = kind == SCH_KNOB_REORDER ? v >= 0 && v < nloops && nloops <= 64 && !(seen >> v & 1)
                                                    : v >= 0 && v < SCH_LOOP_KIND_COUNT;
                if (!okv)
                    su_panic("%s knob %s: candidate %d is not valid", sch_knob_kind_name(kind), name, c);
                if (kind == SCH_KNOB_REORDER)
                    seen |= 1ULL << v;
            }
        }
        int64_t *cv = su_malloc((size_t)ncand * (size_t)nloops * sizeof *cv);
        memcpy(cv, cands, (size_t)ncand * (size_t)nloops * sizeof *cv);
        char **names = su_calloc((size_t)nloops, sizeof *names);
        for (int j = 0; j < nloops; j++)
            names[j] = su_strdup(loops[j]);
        k = add_knob(t, name, kind, nloops, cv, ncand, names, NULL);
        k->dflt = dflt;
    }
    return &k->cands[(size_t)pick(t, k, idx) * k->nparts];
}

const int64_t *sch_define_reorder(sch_tctx *t, const char *name, int nloops, const char *const *loops, int ncand,
                                  const int64_t *orders, int dflt)
{
    return define_over_loops(t, name, SCH_KNOB_REORDER, nloops, loops, ncand, orders, dflt);
}

const int64_t *sch_define_annotate(sch_tctx *t, const char *name, int nloops, const char *const *loops, int ncand,
                                   const int64_t *kinds, int dflt)
{
    return define_over_loops(t, name, SCH_KNOB_ANNOTATE, nloops, loops, ncand, kinds, dflt);
}

sch_err sch_apply_template(sch_schedule *s, const char *name, const sch_hw *hw, const sch_config *cfg,
                           sch_space *space)
{
    sch_space local = {0};
    if (!name)
        name = sch_template_name(s);
    if (hw && hw->wg_max > 0)
        name = sch_device_template_of(s, name, hw);
    sch_tctx t = {s, space ? space : &local, cfg, hw ? hw : &sch_hw_default, 0, SCH_E_OK};
    t.space->template_name = canonical_name(name);
    sch_template_find(name)(&t);
    if (!t.err && cfg && cfg->n != t.next_knob)
        t.err = sch_fail(s, SCH_E_BAD_CONFIG, "config has %d knobs, the template %d", cfg->n, t.next_knob);
    sch_space_free(&local);
    return t.err;
}
