/* best.c — the config a task is compiled with: the best successful record
 * for the task's workload key, measured on this target (exact target
 * string and the same ISA features: `cpu` on another host is another
 * machine) or else on a target with the same ISA features, whose config
 * still fits the task's space. Records made under another version of the
 * template (stale) and configs that no longer fit the space (invalid) are
 * skipped and listed, so that a user sees why an old database stopped
 * helping, instead of a schedule silently applied with another meaning.
 * Without any, the task falls back to the template's default config.
 *
 * On the exact target, the latest confirmation (the task's best configs
 * re-measured side by side when its tuning ended, db/confirmations.c) is
 * trusted over single records: its winner by median is used, unless a
 * record made after it beats that median (a later session found better and
 * did not get to confirm it). */
#include <string.h>

#include "tuner/tuner.h"

/* The first record of recs[0..n) that fits the space, or -1; skipped ones
 * are described in notes. */
static int first_valid(const tun_space *s, const db_record *recs, size_t n, sch_config *cfg, su_buf *notes)
{
    for (size_t i = 0; i < n; i++) {
        su_buf why = {0};
        tun_cfg_status st = tun_config_from_record(s, recs[i].config, cfg, &why);
        if (st == TUN_CFG_OK) {
            su_buf_free(&why);
            return (int)i;
        }
        su_buf_printf(notes, "skipped %s record %lld (config %lld, %s): %s\n", st == TUN_CFG_STALE ? "stale" : "invalid",
                      (long long)recs[i].id, (long long)recs[i].config_index, recs[i].target.name, su_buf_str(&why));
        su_buf_free(&why);
    }
    return -1;
}

/* The first config of the latest confirmation on t that fits the space:
 * its index into *cf (or -1), the configs skipped described in notes. */
static int confirmed(db *d, const tun_space *s, const db_target *t, su_arena *a, db_confirmed **cf,
                     sch_config *cfg, su_buf *notes, su_buf *err)
{
    size_t n;
    if (!db_confirmed_latest(d, s->task->key, t, a, cf, &n)) {
        su_buf_puts(err, db_errmsg(d));
        return -2;
    }
    for (size_t i = 0; i < n; i++) {
        su_buf why = {0};
        tun_cfg_status st = tun_config_from_record(s, (*cf)[i].config, cfg, &why);
        if (st == TUN_CFG_OK) {
            su_buf_free(&why);
            return (int)i;
        }
        su_buf_printf(notes, "skipped a %s confirmed config (%lld): %s\n", st == TUN_CFG_STALE ? "stale" : "invalid",
                      (long long)(*cf)[i].config_index, su_buf_str(&why));
        su_buf_free(&why);
    }
    return -1;
}

bool tun_best_config(db *d, const tun_space *s, const db_target *t, tun_best *out, su_buf *err)
{
    memset(out, 0, sizeof *out);
    out->index = s->default_index;
    su_arena a;
    su_arena_init(&a);
    su_buf notes = {0};
    const char *key = s->task->key;
    db_confirmed *cf = NULL;
    sch_config ccfg = {0};
    int ci = confirmed(d, s, t, &a, &cf, &ccfg, &notes, err);
    bool ok = ci > -2;
    double rec_time = 0;
    /* the exact target, then the same ISA; a page of records first, all of
     * them when the page held nothing usable */
    for (int pass = 0; pass < 2 && ok && out->kind == TUN_BEST_NONE; pass++) {
        if (pass == 1 && (!t->isa || !t->isa[0]))
            break;
        su_buf page_notes = {0};
        for (size_t k = 256;; k = SIZE_MAX) {
            db_record *recs;
            size_t got, n;
            ok = pass == 0 ? db_top_k(d, key, t->name, k, &a, &recs, &got)
                           : db_top_k_isa(d, key, t->isa, k, &a, &recs, &got);
            if (!ok) {
                su_buf_puts(err, db_errmsg(d));
                break;
            }
            n = got;
            if (pass == 0 && t->isa && t->isa[0]) {
                /* "cpu" names the host: a record of the same string made on a
                 * host of other ISA features was planned for other vectors */
                n = 0;
                for (size_t i = 0; i < got; i++)
                    if (!recs[i].target.isa || !recs[i].target.isa[0] || !strcmp(recs[i].target.isa, t->isa))
                        recs[n++] = recs[i];
            } else if (pass == 1) {
                /* the exact target's records were looked at already */
                n = 0;
                for (size_t i = 0; i < got; i++)
                    if (strcmp(recs[i].target.name, t->name) != 0)
                        recs[n++] = recs[i];
            }
            su_buf_clear(&page_notes);
            int i = first_valid(s, recs, n, &out->cfg, &page_notes);
            if (i >= 0) {
                out->kind = pass == 0 ? TUN_BEST_EXACT : TUN_BEST_ISA;
                out->index = tun_config_encode(s, &out->cfg);
                out->cost = recs[i].mean_cost;
                out->target = su_strdup(recs[i].target.name);
                rec_time = recs[i].timestamp;
                break;
            }
            if (k == SIZE_MAX || got < k)
                break;
        }
        su_buf_puts(&notes, su_buf_str(&page_notes));
        su_buf_free(&page_notes);
    }
    if (ok && ci >= 0 &&
        (out->kind != TUN_BEST_EXACT || rec_time <= cf[ci].timestamp || out->cost >= cf[ci].median)) {
        if (out->kind != TUN_BEST_NONE)
            sch_config_free(&out->cfg);
        free(out->target);
        out->cfg = ccfg;
        ccfg = (sch_config){0};
        out->kind = TUN_BEST_EXACT;
        out->confirmed = true;
        out->index = tun_config_encode(s, &out->cfg);
        out->cost = cf[ci].median;
        out->target = su_strdup(t->name);
    }
    if (ci >= 0)
        sch_config_free(&ccfg);
    if (out->kind == TUN_BEST_NONE)
        tun_config_decode(s, s->default_index, &out->cfg);
    out->notes = notes.len ? su_buf_take(&notes) : NULL;
    su_buf_free(&notes);
    su_arena_free(&a);
    return ok;
}

void tun_best_free(tun_best *b)
{
    sch_config_free(&b->cfg);
    free(b->target);
    free(b->notes);
    memset(b, 0, sizeof *b);
}

bool tun_task_best(db *d, const tun_task *task, const tg_target *tg, const char *target, tun_space *sp,
                   tun_best *out, su_buf *err)
{
    memset(out, 0, sizeof *out);
    su_arena a;
    su_arena_init(&a);
    db_target dt;
    tun_target_describe(tg, target, &a, &dt);
    bool ok = tun_space_init(sp, task, &tg->hw, err);
    if (ok && !tun_best_config(d, sp, &dt, out, err)) {
        tun_best_free(out);
        tun_space_free(sp);
        ok = false;
    }
    su_arena_free(&a);
    return ok;
}
