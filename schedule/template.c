/* template.c — the template registry and the knob-defining calls templates
 * make. A template is run once per config: each sch_define_* call registers
 * its knob in the space the first time (in the same order every run, so a
 * config is just one index per knob) and returns the value the config
 * chose, or the knob's default, the template's own heuristic for a machine
 * it has not measured. The template family comes from the anchor op, as the
 * tuner's task extraction names it. */
#include <string.h>

#include "schedule/schedule.h"

const sch_hw sch_hw_default = {16, 32, 2};

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
    {"conv2d_nchw", sch_template_conv2d, 1},
    {"depthwise_conv2d_nchw", sch_template_conv2d, 1},
    {"group_conv2d_nchw", sch_template_conv2d, 1},
    {"dense", sch_template_matmul, 1},
    {"batch_matmul", sch_template_matmul, 1},
    {"default", sch_template_default, 1},
};

sch_template_fn sch_template_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof templates / sizeof *templates; i++)
        if (!strcmp(templates[i].name, name))
            return templates[i].fn;
    return sch_template_default;
}

int sch_template_version(const char *name)
{
    for (size_t i = 0; name && i < sizeof templates / sizeof *templates; i++)
        if (!strcmp(templates[i].name, name))
            return templates[i].version;
    return templates[sizeof templates / sizeof *templates - 1].version;
}

/* The registry's own copy of a template name (static storage). */
static const char *canonical_name(const char *name)
{
    for (size_t i = 0; name && i < sizeof templates / sizeof *templates; i++)
        if (!strcmp(templates[i].name, name))
            return templates[i].name;
    return "default";
}

const char *sch_template_name(const sch_schedule *s)
{
    const sch_tensor *a = sch_anchor(s);
    if (!a || !a->op)
        return "default";
    if (!strcmp(a->op, "nn.dense"))
        return "dense";
    if (!strcmp(a->op, "nn.batch_matmul"))
        return "batch_matmul";
    if (strcmp(a->op, "nn.conv2d") != 0)
        return "default";
    /* as the tuner's task extraction: groups and the weight's shape decide */
    const ir_expr *call = a->call;
    int64_t groups = call ? ir_call_attr(call, "groups")->i : 1;
    const ir_type *w = call ? call->u.call.args[1]->type : NULL;
    if (groups == 1)
        return "conv2d_nchw";
    if (w && w->ndim == 4 && w->shape[1] == 1 && groups == w->shape[0])
        return "depthwise_conv2d_nchw";
    return "group_conv2d_nchw";
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

/* Appends every factorization of n into parts factors (the last at most
 * max_inner) to out, each as parts values. */
static void factorize(int64_t n, int parts, int64_t max_inner, int64_t *cur, int depth, i64_vec *out)
{
    if (depth == parts - 1) {
        if (max_inner && n > max_inner)
            return;
        cur[depth] = n;
        for (int i = 0; i < parts; i++)
            su_vec_push(out, cur[i]);
        return;
    }
    for (int64_t f = 1; f <= n; f++) {
        if (n % f)
            continue;
        cur[depth] = f;
        factorize(n / f, parts, max_inner, cur, depth + 1, out);
    }
}

const int64_t *sch_define_split(sch_tctx *t, const char *name, int64_t extent, int nparts, int64_t max_inner,
                                const int64_t *dflt)
{
    int idx = t->next_knob;
    sch_knob *k = knob_at(t, name, SCH_KNOB_SPLIT);
    if (!k) {
        i64_vec v = {0};
        int64_t cur[8];
        if (nparts < 1 || nparts > 8)
            su_panic("split knob %s with %d parts", name, nparts);
        factorize(extent, nparts, max_inner, cur, 0, &v);
        if (!v.len)
            factorize(extent, nparts, 0, cur, 0, &v);
        sch_knob nk = {su_strdup(name), SCH_KNOB_SPLIT, extent, nparts, (int)(v.len / (size_t)nparts), v.data, 0};
        for (int c = 0; dflt && c < nk.ncand; c++)
            if (!memcmp(&nk.cands[(size_t)c * nparts], dflt, (size_t)nparts * sizeof *dflt))
                nk.dflt = c;
        su_vec_push(&t->space->knobs, nk);
        k = &t->space->knobs.data[t->space->knobs.len - 1];
    }
    return &k->cands[(size_t)pick(t, k, idx) * k->nparts];
}

int64_t sch_define_knob(sch_tctx *t, const char *name, int n, const int64_t *values, int64_t dflt)
{
    int idx = t->next_knob;
    sch_knob *k = knob_at(t, name, SCH_KNOB_CHOICE);
    if (!k) {
        sch_knob nk = {su_strdup(name), SCH_KNOB_CHOICE, 0, 1, n, su_malloc((size_t)n * sizeof *values), 0};
        memcpy(nk.cands, values, (size_t)n * sizeof *values);
        for (int c = 0; c < n; c++)
            if (values[c] == dflt)
                nk.dflt = c;
        su_vec_push(&t->space->knobs, nk);
        k = &t->space->knobs.data[t->space->knobs.len - 1];
    }
    return k->cands[pick(t, k, idx)];
}

sch_err sch_apply_template(sch_schedule *s, const char *name, const sch_hw *hw, const sch_config *cfg,
                           sch_space *space)
{
    sch_space local = {0};
    if (!name)
        name = sch_template_name(s);
    sch_tctx t = {s, space ? space : &local, cfg, hw ? hw : &sch_hw_default, 0, SCH_E_OK};
    t.space->template_name = canonical_name(name);
    sch_template_find(name)(&t);
    if (!t.err && cfg && cfg->n != t.next_knob)
        t.err = sch_fail(s, SCH_E_BAD_CONFIG, "config has %d knobs, the template %d", cfg->n, t.next_knob);
    sch_space_free(&local);
    return t.err;
}
