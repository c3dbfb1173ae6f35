/* test_reject.c — the conv templates' rejected configs (issue 17, fifth
 * round, docs/tuning.md) on targets named AVX-512 and AVX2: a channel-vector
 * tile (vec_ow 0) whose tile_oc is not whole vectors, or whose accumulators
 * and weight vectors exceed the target's vector registers, fails with
 * SCH_E_BAD_CONFIG naming the bound it broke, exactly where the rule says
 * (every config of the space checked against the rule computed here from
 * its knobs), never the default; and each tuner over such a space ends,
 * proposing every config that passes once and none that does not. */
#include <math.h>
#include <string.h>

#include "tests/codegen/harness.h"
#include "tests/tap.h"
#include "tuner/tuner.h"

/* 32 output channels over a 32-wide row: tile_oc and tile_ow both offer
 * 32, so both rules bite on both targets; one input channel and a 3x1
 * kernel without padding keep the space small (tile_ic, order_ic,
 * pad_inline and unroll_kw are not defined). */
static const char *CONV = "#[version = \"0.0.5\"]\n"
    "def @main(%x: Tensor[(1, 1, 10, 32), float32], %w: Tensor[(32, 1, 3, 1), float32]) {\n"
    "  nn.conv2d(%x, %w, channels=32, kernel_size=[3, 1])\n"
    "}\n";

/* The inner factor of split knob `name` in config c, or choice knob `name`'s value. */
static int64_t knob(const tun_space *s, const sch_config *c, const char *name)
{
    for (int i = 0; i < c->n; i++) {
        const sch_knob *k = &s->sp.knobs.data[i];
        if (!strcmp(k->name, name))
            return k->kind == SCH_KNOB_SPLIT ? k->cands[k->nparts * c->choice[i] + k->nparts - 1]
                                             : k->cands[c->choice[i]];
    }
    return -1;
}

typedef struct counts { int64_t lanes, regs, none; } counts;

/* Every config of s against the rule; the messages of the first of each kind. */
static counts check_space(const tun_space *s, const char *name)
{
    const sch_hw *hw = &s->hw;
    counts n = {0, 0, 0};
    bool agree = true;
    char *first[2] = {NULL, NULL};
    for (int64_t i = 0; i < s->size; i++) {
        sch_config c;
        tun_config_decode(s, i, &c);
        int64_t kb = knob(s, &c, "tile_oc"), owb = knob(s, &c, "tile_ow"), vec_ow = knob(s, &c, "vec_ow");
        int64_t vecs = (kb + hw->lanes - 1) / hw->lanes;
        int kind = vec_ow ? -1 : kb % hw->lanes ? 0 : vecs * owb + vecs > hw->vregs ? 1 : -1;
        su_buf why = {0};
        bool rejected = tun_config_rejected(s, i, &why);
        agree &= rejected == (kind >= 0);
        if (kind >= 0 && rejected && !first[kind])
            first[kind] = su_buf_take(&why);
        n.lanes += kind == 0, n.regs += kind == 1, n.none += kind < 0;
        su_buf_free(&why);
        sch_config_free(&c);
    }
    ok(agree, "%s: rejected exactly where the rule says (%lld not whole vectors, %lld over the registers, %lld kept "
       "of %lld)", name, (long long)n.lanes, (long long)n.regs, (long long)n.none, (long long)s->size);
    char lanes[64], regs[64];
    snprintf(lanes, sizeof lanes, "not a whole number of %d-lane vectors", hw->lanes);
    snprintf(regs, sizeof regs, "over the %d vector registers", hw->vregs);
    ok(first[0] && strstr(first[0], lanes), "%s: %s", name, first[0] ? first[0] : "(none rejected for its lanes)");
    ok(first[1] && strstr(first[1], regs), "%s: %s", name, first[1] ? first[1] : "(none rejected for registers)");
    ok(!tun_config_rejected(s, s->default_index, NULL), "%s: the default config is kept", name);
    free(first[0]);
    free(first[1]);
    return n;
}

/* The same through sch_build: the template's error is SCH_E_BAD_CONFIG. */
static void check_build(const tun_space *s, const char *name)
{
    int64_t bad = -1;
    for (int64_t i = 0; i < s->size && bad < 0; i++)
        if (tun_config_rejected(s, i, NULL))
            bad = i;
    sch_config c;
    tun_config_decode(s, bad, &c);
    sch_build_opts bo = {.template_name = s->task->template_name, .hw = &s->hw, .cfg = &c};
    sch_kernel k;
    bool built = sch_build(s->task->func, &bo, &k);
    ok(!built && k.failed == SCH_BUILD_TEMPLATE && k.err == SCH_E_BAD_CONFIG,
       "%s: building a rejected config stops at the template with SCH_E_BAD_CONFIG (%s)", name, k.why ? k.why : "");
    sch_kernel_free(&k);
    sch_config_free(&c);
}

/* Each tuner over s until it proposes nothing: none rejected, every kept
 * config once, the rest counted as rejected. */
static void check_tuners(const tun_space *s, int64_t kept)
{
    const char *names[] = {"random", "grid", "ga", "xgb"};
    for (int k = 0; k < 4; k++) {
        tun_tuner *t = tun_tuner_new(tun_tuner_find(names[k]), s, 11);
        tun_idxset got = {0};
        bool fresh = true, valid = true;
        int64_t total = 0, buf[16];
        int n;
        while ((n = tun_next_batch(t, 16, buf)) > 0) {
            double cost[16];
            for (int i = 0; i < n; i++) {
                fresh &= tun_idxset_add(&got, buf[i]);
                valid &= !tun_config_rejected(s, buf[i], NULL);
                cost[i] = 1e-3 * (double)(1 + buf[i] % 7); /* something for xgb's model to learn */
            }
            tun_update(t, n, buf, cost);
            total += n;
        }
        ok(fresh && valid && total == kept && t->rejected == s->size - kept && tun_tuner_exhausted(t),
           "%s tuner: ends, proposing the %lld kept configs once and none of the %lld rejected (%lld, %lld)",
           names[k], (long long)kept, (long long)(s->size - kept), (long long)total, (long long)t->rejected);
        tun_idxset_free(&got);
        tun_tuner_free(t);
    }
}

/* A 1x1 conv of 32 channels over 7x7 pixels (conv2d_1x1.c): a channel-
 * vector tile (vec_p 0) whose tile_oc is not whole vectors is rejected,
 * exactly there; a tile over the registers is kept (its pixel loop stays a
 * loop), and so is the default. */
static const char *CONV1X1 = "#[version = \"0.0.5\"]\n"
    "def @main(%x: Tensor[(1, 8, 7, 7), float32], %w: Tensor[(32, 8, 1, 1), float32]) {\n"
    "  nn.conv2d(%x, %w, channels=32, kernel_size=[1, 1])\n"
    "}\n";

static void check_1x1(const char *target)
{
    ir_module *m = hx_load("conv1x1", CONV1X1);
    tun_tasks tasks = {0};
    tun_extract_tasks(m, &tasks);
    tg_target tg;
    const char *why = NULL;
    su_buf err = {0};
    tun_space s;
    if (ok(tasks.len == 1 && tg_target_parse(target, &tg, &why) && tun_space_init(&s, &tasks.items[0], &tg.hw, &err),
           "1x1 %s: its space (%s%s)", target, why ? why : "", su_buf_str(&err))) {
        bool agree = true;
        int64_t rejected_n = 0, kept_over = 0;
        for (int64_t i = 0; i < s.size; i++) {
            sch_config c;
            tun_config_decode(&s, i, &c);
            int64_t kb = knob(&s, &c, "tile_oc"), pb = knob(&s, &c, "tile_p"), vec_p = knob(&s, &c, "vec_p");
            bool rule = !vec_p && kb % s.hw.lanes, rejected = tun_config_rejected(&s, i, NULL);
            agree &= rejected == rule;
            rejected_n += rejected;
            kept_over += !rejected && !vec_p && ((kb + s.hw.lanes - 1) / s.hw.lanes) * (pb + 1) > s.hw.vregs;
            sch_config_free(&c);
        }
        ok(agree && rejected_n > 0, "1x1 %s: rejected exactly the channel tiles of part vectors (%lld of %lld)", target,
           (long long)rejected_n, (long long)s.size);
        ok(kept_over > 0, "1x1 %s: tiles over the registers kept (%lld)", target, (long long)kept_over);
        ok(!tun_config_rejected(&s, s.default_index, NULL), "1x1 %s: the default config is kept", target);
        tun_space_free(&s);
    }
    su_buf_free(&err);
    tun_tasks_free(&tasks);
    ir_module_free(m);
}

int main(void)
{
    ir_module *m = hx_load("conv", CONV);
    tun_tasks tasks = {0};
    tun_extract_tasks(m, &tasks);
    is_int(tasks.len, 1, "one task: the conv");
    static const char *const targets[2] = {"cpu -mcpu=skylake-avx512", "cpu -mcpu=haswell"};
    static const int lanes[2] = {16, 8}, vregs[2] = {32, 16};
    for (int ti = 0; ti < 2 && tasks.len == 1; ti++) {
        tg_target tg;
        const char *why = NULL;
        su_buf err = {0};
        tun_space s;
        if (!ok(tg_target_parse(targets[ti], &tg, &why) && tg.hw.lanes == lanes[ti] && tg.hw.vregs == vregs[ti] &&
                    tun_space_init(&s, &tasks.items[0], &tg.hw, &err),
                "%s: %d lanes, %d registers, its space (%s%s)", targets[ti], lanes[ti], vregs[ti], why ? why : "",
                su_buf_str(&err)))
            continue;
        counts n = check_space(&s, targets[ti]);
        check_build(&s, targets[ti]);
        if (ti == 0)
            check_tuners(&s, n.none);
        tun_space_free(&s);
        su_buf_free(&err);
    }
    tun_tasks_free(&tasks);
    ir_module_free(m);
    check_1x1("cpu -mcpu=skylake-avx512");
    check_1x1("cpu -mcpu=haswell");
    return tap_done();
}
