/* config.c — a task's config space as the tuner sees it: configs as indices
 * (mixed radix over the knobs, the first knob varying fastest, as AutoTVM
 * numbers them) and as the config JSON of tuning records:
 *
 *   {"entities":[["template_version","ot",1],["vec_ow","ot",0],
 *                ["tile_oc","sp",[2,32]], ...],"index":57}
 *
 * Splits are "sp" entities with their factors, choices "ot" entities with
 * their value, reorders "re" entities with their loop order, annotations
 * "an" entities with a name per loop, so a record reads without the code. The first entity is the
 * template's version: a record made under another version is stale (the
 * template's code changed what a config means) and is never applied. A
 * record is read back by the knobs' values, not by its index, so that a
 * space whose candidate lists grew still finds the configs it had. */
#include <string.h>

#include <jansson.h>

#include "tuner/tuner.h"

/* The name of the version entity (no template defines a knob of this name). */
#define VERSION_ENTITY "template_version"

bool tun_space_init(tun_space *s, const tun_task *task, const sch_hw *hw, su_buf *err)
{
    memset(s, 0, sizeof *s);
    s->task = task;
    s->hw = hw ? *hw : sch_hw_default;
    sch_build_opts bo = {.template_name = task->template_name, .hw = hw, .space_only = true};
    sch_kernel k;
    if (!sch_build(task->func, &bo, &k)) {
        if (k.failed == SCH_BUILD_CREATE) {
            su_buf_printf(err, "task %s cannot be scheduled", task->hash);
            for (size_t i = 0; i < k.diags.len; i++)
                su_buf_printf(err, ": %s", k.diags.items[i].msg);
        } else {
            su_buf_printf(err, "task %s: the template %s fails on its defaults: %s: %s", task->hash,
                          task->template_name, sch_err_name(k.err), k.why);
        }
        sch_kernel_free(&k);
        return false;
    }
    s->sp = k.space;
    k.space = (sch_space){0};
    sch_kernel_free(&k);
    /* the version of the template that made the space: a device template
     * (conv2d_nchw_cl) has its own, not the cpu family's */
    s->version = sch_template_version(s->sp.template_name ? s->sp.template_name : task->template_name);
    s->size = sch_space_size(&s->sp);
    if (s->size > ((int64_t)1 << 53)) {
        su_buf_printf(err, "task %s: the space of %s has more than 2^53 configs", task->hash, task->template_name);
        sch_space_free(&s->sp);
        return false;
    }
    sch_config c;
    sch_config_default(&s->sp, &c);
    s->default_index = tun_config_encode(s, &c);
    sch_config_free(&c);
    return true;
}

bool tun_config_rejected(const tun_space *s, int64_t index, su_buf *why)
{
    sch_config c;
    tun_config_decode(s, index, &c);
    /* the template alone, not the lowering: a fraction of a feature
     * vector's cost, and the template is where such a config fails */
    sch_build_opts bo = {.template_name = s->task->template_name, .hw = &s->hw, .cfg = &c, .space_only = true};
    sch_kernel k;
    bool rejected = !sch_build(s->task->func, &bo, &k) && k.failed == SCH_BUILD_TEMPLATE && k.err == SCH_E_BAD_CONFIG;
    if (rejected && why)
        su_buf_printf(why, "%s", k.why ? k.why : "");
    sch_kernel_free(&k);
    sch_config_free(&c);
    return rejected;
}

void tun_space_free(tun_space *s)
{
    sch_space_free(&s->sp);
    memset(s, 0, sizeof *s);
}

void tun_config_decode(const tun_space *s, int64_t index, sch_config *c)
{
    c->n = (int)s->sp.knobs.len;
    c->choice = su_calloc((size_t)c->n + 1, sizeof *c->choice);
    for (int i = 0; i < c->n; i++) {
        int64_t k = s->sp.knobs.data[i].ncand;
        c->choice[i] = (int)(index % k);
        index /= k;
    }
}

int64_t tun_config_encode(const tun_space *s, const sch_config *c)
{
    int64_t index = 0, scale = 1;
    for (int i = 0; i < c->n && i < (int)s->sp.knobs.len; i++) {
        const sch_knob *k = &s->sp.knobs.data[i];
        if (c->choice[i] < 0 || c->choice[i] >= k->ncand)
            return -1;
        index += scale * c->choice[i];
        scale *= k->ncand;
    }
    return c->n == (int)s->sp.knobs.len ? index : -1;
}

char *tun_config_record_json(const tun_space *s, const sch_config *c)
{
    su_buf b = {0};
    su_buf_printf(&b, "{\"entities\":[[\"" VERSION_ENTITY "\",\"ot\",%d]", s->version);
    for (size_t i = 0; i < s->sp.knobs.len; i++) {
        const sch_knob *k = &s->sp.knobs.data[i];
        su_buf_printf(&b, ",[\"%s\",", k->name);
        int ch = (int)i < c->n ? c->choice[i] : -1;
        if (ch < 0 || ch >= k->ncand) {
            /* an invalid config is recorded too, as what it asked for */
            su_buf_printf(&b, "\"ot\",\"candidate %d of %d\"]", ch, k->ncand);
            continue;
        }
        json_t *v = sch_knob_value(k, ch);
        char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        su_buf_printf(&b, "\"%s\",%s]", sch_knob_kind_tag(k->kind), text);
        free(text);
        json_decref(v);
    }
    int64_t index = tun_config_encode(s, c);
    su_buf_printf(&b, "],\"index\":%lld}", (long long)(index < 0 ? 0 : index));
    return su_buf_take(&b);
}

/* The candidate of knob k whose value is the JSON v, or -1. */
static int candidate_of(const sch_knob *k, json_t *kind, json_t *v)
{
    const char *kd = json_string_value(kind);
    if (!kd || strcmp(kd, sch_knob_kind_tag(k->kind)) != 0)
        return -1;
    return sch_knob_candidate(k, v);
}

tun_cfg_status tun_config_from_record(const tun_space *s, const char *text, sch_config *c, su_buf *why)
{
    json_error_t jerr;
    json_t *o = json_loads(text, 0, &jerr);
    json_t *ents = o ? json_object_get(o, "entities") : NULL;
    tun_cfg_status st = TUN_CFG_OK;
    c->n = 0;
    c->choice = NULL;
    if (!json_is_array(ents)) {
        su_buf_puts(why, "the config has no entities");
        json_decref(o);
        return TUN_CFG_INVALID;
    }
    /* the version first: a record of another version is stale, whatever
     * its knobs look like */
    json_int_t version = 0;
    size_t i;
    json_t *e;
    json_array_foreach(ents, i, e) {
        const char *nm = json_string_value(json_array_get(e, 0));
        if (nm && !strcmp(nm, VERSION_ENTITY) && json_is_integer(json_array_get(e, 2)))
            version = json_integer_value(json_array_get(e, 2));
    }
    if (version != s->version) {
        su_buf_printf(why, "made by version %lld of template %s, which is at version %d now", (long long)version,
                      s->sp.template_name, s->version);
        json_decref(o);
        return TUN_CFG_STALE;
    }
    c->n = (int)s->sp.knobs.len;
    c->choice = su_calloc((size_t)c->n + 1, sizeof *c->choice);
    for (int k = 0; k < c->n && st == TUN_CFG_OK; k++)
        c->choice[k] = -1;
    json_array_foreach(ents, i, e) {
        const char *nm = json_string_value(json_array_get(e, 0));
        if (!nm || !strcmp(nm, VERSION_ENTITY))
            continue;
        int k = 0;
        while (k < c->n && strcmp(s->sp.knobs.data[k].name, nm) != 0)
            k++;
        if (k == c->n) {
            su_buf_printf(why, "knob %s is not in the space of template %s", nm, s->sp.template_name);
            st = TUN_CFG_INVALID;
            break;
        }
        c->choice[k] = candidate_of(&s->sp.knobs.data[k], json_array_get(e, 1), json_array_get(e, 2));
        if (c->choice[k] < 0) {
            su_buf_printf(why, "knob %s has a value outside its candidates", nm);
            st = TUN_CFG_INVALID;
            break;
        }
    }
    for (int k = 0; k < c->n && st == TUN_CFG_OK; k++)
        if (c->choice[k] < 0) {
            su_buf_printf(why, "knob %s is missing", s->sp.knobs.data[k].name);
            st = TUN_CFG_INVALID;
        }
    if (st != TUN_CFG_OK)
        sch_config_free(c);
    json_decref(o);
    return st;
}

char *tun_config_sch_json(const tun_space *s, const sch_config *c)
{
    return sch_config_json(&s->sp, c);
}
