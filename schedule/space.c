/* space.c — config spaces: the knobs a template defines (split knobs: the
 * factorizations of a loop's extent into a fixed number of factors, all of
 * them or powers of two, AutoTVM's "factors" and "power2" policies; choice
 * knobs: one of a list of values; reorder knobs: one of a listed set of
 * orders of some loops; annotate knobs: a loop kind per loop, from a list),
 * configs (one candidate per knob), their JSON form and its checking. A config is read
 * back only through the space it belongs to, so that a config from another
 * machine or an older version cannot reach a template unchecked. */
#include <string.h>

#include <jansson.h>

#include "schedule/schedule.h"

void sch_space_free(sch_space *sp)
{
    for (size_t i = 0; i < sp->knobs.len; i++) {
        sch_knob *k = &sp->knobs.data[i];
        free((void *)k->name);
        free(k->cands);
        for (int j = 0; k->loops && j < k->nparts; j++)
            free(k->loops[j]);
        free(k->loops);
    }
    su_vec_free(&sp->knobs);
}

void sch_config_free(sch_config *c)
{
    free(c->choice);
    c->choice = NULL;
    c->n = 0;
}

int64_t sch_space_size(const sch_space *sp)
{
    int64_t n = 1;
    for (size_t i = 0; i < sp->knobs.len; i++)
        if (__builtin_mul_overflow(n, (int64_t)sp->knobs.data[i].ncand, &n))
            return INT64_MAX;
    return n;
}

const sch_knob *sch_space_knob(const sch_space *sp, const char *name)
{
    for (size_t i = 0; i < sp->knobs.len; i++)
        if (!strcmp(sp->knobs.data[i].name, name))
            return &sp->knobs.data[i];
    return NULL;
}

/* True when every knob of a is also a knob of b (same name and kind). */
static bool knobs_within(const sch_space *a, const sch_space *b)
{
    for (size_t i = 0; i < a->knobs.len; i++) {
        const sch_knob *k = sch_space_knob(b, a->knobs.data[i].name);
        if (!k || k->kind != a->knobs.data[i].kind)
            return false;
    }
    return true;
}

bool sch_space_same_form(const sch_space *a, const sch_space *b)
{
    /* a knob a workload needs and another lacks (copy_input at a stride,
     * pad_inline with padding) keeps the form; knobs on both sides that the
     * other lacks mean another loop nest (conv2d_nchw's 1x1 nest, with
     * vec_p and tile_p, against its general one, with vec_ow and tile_ow) */
    return knobs_within(a, b) || knobs_within(b, a);
}

void sch_config_default(const sch_space *sp, sch_config *c)
{
    c->n = (int)sp->knobs.len;
    c->choice = su_calloc((size_t)(c->n ? c->n : 1), sizeof *c->choice);
    for (int i = 0; i < c->n; i++)
        c->choice[i] = sp->knobs.data[i].dflt;
}

void sch_config_random(const sch_space *sp, unsigned *seed, sch_config *c)
{
    c->n = (int)sp->knobs.len;
    c->choice = su_calloc((size_t)(c->n ? c->n : 1), sizeof *c->choice);
    for (int i = 0; i < c->n; i++)
        c->choice[i] = rand_r(seed) % sp->knobs.data[i].ncand;
}

static const struct {
    const char *name, *tag;
} knob_kinds[] = {
#define X(id, name, tag) {name, tag},
    SCH_KNOB_KINDS(X)
#undef X
};

const char *sch_knob_kind_name(sch_knob_kind k)
{
    return (unsigned)k < sizeof knob_kinds / sizeof *knob_kinds ? knob_kinds[k].name : "?";
}

const char *sch_knob_kind_tag(sch_knob_kind k)
{
    return (unsigned)k < sizeof knob_kinds / sizeof *knob_kinds ? knob_kinds[k].tag : "?";
}

const char *sch_annotation_name(sch_loop_kind k)
{
    switch (k) {
    case SCH_LOOP_SERIAL: return "none";
    case SCH_LOOP_PARALLEL: return "parallel";
    case SCH_LOOP_VECTORIZED: return "vec";
    case SCH_LOOP_UNROLLED: return "unroll";
    case SCH_LOOP_THREAD: return "thread";
    case SCH_LOOP_ROLLED: return "rolled";
    case SCH_LOOP_KIND_COUNT: break;
    }
    return "?";
}

json_t *sch_knob_value(const sch_knob *k, int choice)
{
    const int64_t *v = &k->cands[(size_t)choice * k->nparts];
    if (k->kind == SCH_KNOB_CHOICE)
        return json_integer(v[0]);
    json_t *a = json_array();
    for (int j = 0; j < k->nparts; j++)
        json_array_append_new(a, k->kind == SCH_KNOB_ANNOTATE ? json_string(sch_annotation_name((sch_loop_kind)v[j]))
                                                              : json_integer(v[j]));
    return a;
}

char *sch_config_json(const sch_space *sp, const sch_config *c)
{
    json_t *knobs = json_object();
    for (size_t i = 0; i < sp->knobs.len && (int)i < c->n; i++)
        json_object_set_new(knobs, sp->knobs.data[i].name, sch_knob_value(&sp->knobs.data[i], c->choice[i]));
    json_t *o = json_pack("{s:s, s:o}", "template", sp->template_name ? sp->template_name : "", "knobs", knobs);
    char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return text;
}

int sch_knob_candidate(const sch_knob *k, json_t *v)
{
    for (int c = 0; v && c < k->ncand; c++) {
        json_t *cv = sch_knob_value(k, c);
        bool same = json_equal(cv, v);
        json_decref(cv);
        if (same)
            return c;
    }
    return -1;
}

static bool fail(char **why, const char *fmt, const char *arg)
{
    su_buf b = {0};
    su_buf_printf(&b, fmt, arg);
    *why = su_buf_take(&b);
    return false;
}

bool sch_config_parse(const sch_space *sp, const char *text, sch_config *c, char **why)
{
    json_error_t jerr;
    json_t *o = json_loads(text, 0, &jerr);
    c->n = 0;
    c->choice = NULL;
    if (!o || !json_is_object(o)) {
        json_decref(o);
        return fail(why, "config is not a JSON object%s", o ? "" : ": malformed JSON");
    }
    const char *tmpl = json_string_value(json_object_get(o, "template"));
    json_t *knobs = json_object_get(o, "knobs");
    bool ok = true;
    if (tmpl && sp->template_name && strcmp(tmpl, sp->template_name) != 0)
        ok = fail(why, "config is for template %s", tmpl);
    else if (!json_is_object(knobs))
        ok = fail(why, "config has no \"knobs\" object%s", "");
    if (ok) {
        /* what is given first (unknown knobs, values outside the
         * candidates), then what is missing */
        const char *key;
        json_t *v;
        json_object_foreach(knobs, key, v) {
            const sch_knob *k = sch_space_knob(sp, key);
            if (!k) {
                ok = fail(why, "unknown knob %s", key);
                break;
            }
            if (sch_knob_candidate(k, v) < 0) {
                ok = fail(why, "knob %s has a value outside its candidates", key);
                break;
            }
        }
    }
    if (ok) {
        c->n = (int)sp->knobs.len;
        c->choice = su_calloc((size_t)(c->n ? c->n : 1), sizeof *c->choice);
        for (int i = 0; i < c->n && ok; i++) {
            const sch_knob *k = &sp->knobs.data[i];
            json_t *v = json_object_get(knobs, k->name);
            if (!v)
                ok = fail(why, "knob %s is missing", k->name);
            else if ((c->choice[i] = sch_knob_candidate(k, v)) < 0)
                ok = fail(why, "knob %s has a value outside its candidates", k->name);
        }
        if (!ok)
            sch_config_free(c);
    }
    json_decref(o);
    return ok;
}

/* Appends candidate c of k as the space prints it: [2,32], 1, [oh,oc], unroll. */
static void print_candidate(su_buf *b, const sch_knob *k, int c)
{
    const int64_t *v = &k->cands[(size_t)c * k->nparts];
    if (k->kind == SCH_KNOB_CHOICE) {
        su_buf_printf(b, "%lld", (long long)v[0]);
        return;
    }
    if (k->kind == SCH_KNOB_ANNOTATE && k->nparts == 1) {
        su_buf_puts(b, sch_annotation_name((sch_loop_kind)v[0]));
        return;
    }
    su_buf_putc(b, '[');
    for (int j = 0; j < k->nparts; j++) {
        if (j)
            su_buf_putc(b, ',');
        if (k->kind == SCH_KNOB_SPLIT)
            su_buf_printf(b, "%lld", (long long)v[j]);
        else if (k->kind == SCH_KNOB_REORDER)
            su_buf_puts(b, k->loops[v[j]]);
        else
            su_buf_puts(b, sch_annotation_name((sch_loop_kind)v[j]));
    }
    su_buf_putc(b, ']');
}

void sch_space_print(su_buf *b, const sch_space *sp)
{
    su_buf_printf(b, "template %s (version %d): %lld configs\n", sp->template_name ? sp->template_name : "?",
                  sch_template_version(sp->template_name), (long long)sch_space_size(sp));
    for (size_t i = 0; i < sp->knobs.len; i++) {
        const sch_knob *k = &sp->knobs.data[i];
        su_buf_printf(b, "  %s: %s", k->name, sch_knob_kind_name(k->kind));
        if (k->kind == SCH_KNOB_SPLIT)
            su_buf_printf(b, " %lld into %d", (long long)k->extent, k->nparts);
        for (int j = 0; k->loops && j < k->nparts; j++)
            su_buf_printf(b, "%s%s", j ? "," : " ", k->loops[j]);
        su_buf_putc(b, ':');
        for (int c = 0; c < k->ncand; c++) {
            su_buf_puts(b, c == k->dflt ? " *" : " ");
            print_candidate(b, k, c);
        }
        su_buf_putc(b, '\n');
    }
}
