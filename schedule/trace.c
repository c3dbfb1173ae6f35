/* trace.c — a schedule as a trace: every primitive applied is recorded with
 * the names of the stage and loops it acted on and its parameters, so that a
 * schedule can be printed, stored as JSON and replayed on a fresh schedule of
 * the same function (stage and loop names come from counters and op names,
 * so they are the same every time the function is scheduled). The random
 * decisions of a tuner live apart, in configs (space.c): a template maps a
 * config to a trace. */
#include <string.h>

#include <jansson.h>

#include "schedule/schedule.h"

static const char *const prim_names[] = {
#define X(id, name) name,
    SCH_PRIMS(X)
#undef X
};

void sch_trace_add(sch_schedule *s, sch_prim p, const char *stage, int n, const char *const *iters,
                   const char *other, int64_t value, int64_t value2)
{
    su_arena *a = &s->arena;
    sch_step st = {p, su_arena_strdup(a, stage), n, NULL, other ? su_arena_strdup(a, other) : NULL, value, value2};
    if (n) {
        st.iters = su_arena_alloc(a, (size_t)n * sizeof *st.iters);
        for (int i = 0; i < n; i++)
            st.iters[i] = su_arena_strdup(a, iters[i]);
    }
    su_vec_push(&s->trace, st);
}

void sch_trace_pack(sch_schedule *s, const char *stage, const char *param, int n, const int *axes,
                    const int64_t *factors)
{
    sch_trace_add(s, SCH_P_PACK, stage, 0, NULL, param, axes[0], factors[0]);
    sch_step *st = &s->trace.data[s->trace.len - 1];
    int64_t *v = su_arena_alloc(&s->arena, (size_t)(2 * n) * sizeof *v);
    for (int j = 0; j < n; j++) {
        v[2 * j] = axes[j];
        v[2 * j + 1] = factors[j];
    }
    st->npack = n;
    st->pack = v;
}

void sch_trace_print(su_buf *b, const sch_schedule *s)
{
    for (size_t i = 0; i < s->trace.len; i++) {
        const sch_step *st = &s->trace.data[i];
        su_buf_printf(b, "%s(%s", prim_names[st->prim], st->stage);
        if (st->prim == SCH_P_COMPUTE_AT || st->prim == SCH_P_CACHE_READ)
            su_buf_printf(b, ", %s", st->other);
        for (int j = 0; j < st->n; j++)
            su_buf_printf(b, ", %s", st->iters[j]);
        switch (st->prim) {
        case SCH_P_SPLIT: su_buf_printf(b, ", %lld", (long long)st->value); break;
        case SCH_P_ANNOTATE:
            su_buf_printf(b, ", %s", sch_loop_kind_name((sch_loop_kind)st->value));
            if (st->value == SCH_LOOP_THREAD)
                su_buf_printf(b, " %lld", (long long)st->value2);
            break;
        case SCH_P_PACK:
            if (st->npack <= 1) {
                su_buf_printf(b, ", %s, axis=%lld, factor=%lld", st->other, (long long)st->value,
                              (long long)st->value2);
                break;
            }
            su_buf_printf(b, ", %s, axes=[", st->other);
            for (int j = 0; j < st->npack; j++)
                su_buf_printf(b, "%s%lld", j ? ", " : "", (long long)st->pack[2 * j]);
            su_buf_puts(b, "], factors=[");
            for (int j = 0; j < st->npack; j++)
                su_buf_printf(b, "%s%lld", j ? ", " : "", (long long)st->pack[2 * j + 1]);
            su_buf_putc(b, ']');
            break;
        default: break;
        }
        su_buf_puts(b, ")\n");
    }
}

char *sch_trace_json(const sch_schedule *s)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < s->trace.len; i++) {
        const sch_step *st = &s->trace.data[i];
        json_t *o = json_object();
        json_object_set_new(o, "p", json_string(prim_names[st->prim]));
        json_object_set_new(o, "stage", json_string(st->stage));
        if (st->n) {
            json_t *its = json_array();
            for (int j = 0; j < st->n; j++)
                json_array_append_new(its, json_string(st->iters[j]));
            json_object_set_new(o, "loops", its);
        }
        if (st->other)
            json_object_set_new(o, "other", json_string(st->other));
        if (st->prim == SCH_P_SPLIT)
            json_object_set_new(o, "value", json_integer(st->value));
        if (st->prim == SCH_P_ANNOTATE)
            json_object_set_new(o, "kind", json_string(sch_loop_kind_name((sch_loop_kind)st->value)));
        if (st->prim == SCH_P_ANNOTATE && st->value == SCH_LOOP_THREAD)
            json_object_set_new(o, "axis", json_integer(st->value2));
        if (st->prim == SCH_P_PACK) {
            json_t *ax = json_array(), *fs = json_array();
            for (int j = 0; j < (st->npack ? st->npack : 1); j++) {
                json_array_append_new(ax, json_integer(st->npack ? st->pack[2 * j] : st->value));
                json_array_append_new(fs, json_integer(st->npack ? st->pack[2 * j + 1] : st->value2));
            }
            json_object_set_new(o, "axes", ax);
            json_object_set_new(o, "factors", fs);
        }
        json_array_append_new(arr, o);
    }
    char *text = json_dumps(arr, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(arr);
    return text;
}

/* Looks up a leaf/iter of stage t named by JSON string j. */
static sch_iter *iter_of(const sch_tensor *t, json_t *j)
{
    return t && json_is_string(j) ? sch_find_iter(t, json_string_value(j)) : NULL;
}

static sch_err replay_step(sch_schedule *s, json_t *o)
{
    const char *p = json_string_value(json_object_get(o, "p"));
    const char *stage = json_string_value(json_object_get(o, "stage"));
    json_t *loops = json_object_get(o, "loops");
    const char *other = json_string_value(json_object_get(o, "other"));
    json_t *value = json_object_get(o, "value");
    if (!p || !stage)
        return sch_fail(s, SCH_E_BAD_TRACE, "trace: a step needs \"p\" and \"stage\"");
    sch_tensor *t = sch_find_tensor(s, stage);
    if (!t)
        return sch_fail(s, SCH_E_BAD_TRACE, "trace: no stage %s", stage);
    size_t nl = json_is_array(loops) ? json_array_size(loops) : 0;
    if (!strcmp(p, "split")) {
        if (nl != 1 || !json_is_integer(value))
            return sch_fail(s, SCH_E_BAD_TRACE, "trace: split needs one loop and a value");
        return sch_split(s, t, iter_of(t, json_array_get(loops, 0)), json_integer_value(value), NULL, NULL);
    }
    if (!strcmp(p, "fuse")) {
        if (nl != 2)
            return sch_fail(s, SCH_E_BAD_TRACE, "trace: fuse needs two loops");
        return sch_fuse(s, t, iter_of(t, json_array_get(loops, 0)), iter_of(t, json_array_get(loops, 1)), NULL);
    }
    if (!strcmp(p, "reorder")) {
        sch_iter *order[64];
        if (nl > 64)
            return sch_fail(s, SCH_E_BAD_TRACE, "trace: reorder of too many loops");
        for (size_t i = 0; i < nl; i++)
            order[i] = iter_of(t, json_array_get(loops, i));
        return sch_reorder(s, t, (int)nl, order);
    }
    if (!strcmp(p, "annotate")) {
        const char *kind = json_string_value(json_object_get(o, "kind"));
        json_t *axis = json_object_get(o, "axis");
        if (kind && !strcmp(kind, "thread"))
            return sch_bind(s, t, iter_of(t, json_array_get(loops, 0)),
                            json_is_integer(axis) ? (int)json_integer_value(axis) : 0);
        for (int k = 0; kind && k < SCH_LOOP_KIND_COUNT; k++)
            if (!strcmp(kind, sch_loop_kind_name((sch_loop_kind)k)))
                return sch_annotate(s, t, iter_of(t, json_array_get(loops, 0)), (sch_loop_kind)k);
        return sch_fail(s, SCH_E_BAD_TRACE, "trace: annotate needs a known kind");
    }
    if (!strcmp(p, "compute_at")) {
        sch_tensor *c = other ? sch_find_tensor(s, other) : NULL;
        if (!c || nl != 1)
            return sch_fail(s, SCH_E_BAD_TRACE, "trace: compute_at needs a consumer stage and one loop");
        return sch_compute_at(s, t, c, iter_of(c, json_array_get(loops, 0)));
    }
    if (!strcmp(p, "compute_inline"))
        return sch_compute_inline(s, t);
    if (!strcmp(p, "compute_root"))
        return sch_compute_root(s, t);
    if (!strcmp(p, "cache_write"))
        return sch_cache_write(s, t, NULL);
    if (!strcmp(p, "cache_read")) {
        /* (the scope is the one cache_read builds: shared) */
        sch_tensor *prm = other ? sch_find_tensor(s, other) : NULL;
        if (!prm)
            return sch_fail(s, SCH_E_BAD_TRACE, "trace: cache_read needs the tensor it stages");
        return sch_cache_read(s, t, prm, SCH_SCOPE_SHARED, NULL);
    }
    if (!strcmp(p, "pack")) {
        sch_tensor *prm = other ? sch_find_tensor(s, other) : NULL;
        json_t *ax = json_object_get(o, "axes"), *fs = json_object_get(o, "factors");
        size_t n = json_is_array(ax) ? json_array_size(ax) : 0;
        if (!prm || !n || n > IR_MAX_DIMS || !json_is_array(fs) || json_array_size(fs) != n)
            return sch_fail(s, SCH_E_BAD_TRACE, "trace: pack needs a parameter, axes and as many factors");
        int axes[IR_MAX_DIMS];
        int64_t factors[IR_MAX_DIMS];
        for (size_t j = 0; j < n; j++) {
            if (!json_is_integer(json_array_get(ax, j)) || !json_is_integer(json_array_get(fs, j)))
                return sch_fail(s, SCH_E_BAD_TRACE, "trace: pack axes and factors are integers");
            axes[j] = (int)json_integer_value(json_array_get(ax, j));
            factors[j] = json_integer_value(json_array_get(fs, j));
        }
        return sch_pack_axes(s, t, prm, (int)n, axes, factors, NULL);
    }
    return sch_fail(s, SCH_E_BAD_TRACE, "trace: unknown primitive %s", p);
}

sch_err sch_trace_replay_json(sch_schedule *s, const char *text)
{
    json_error_t jerr;
    json_t *arr = json_loads(text, 0, &jerr);
    if (!arr || !json_is_array(arr)) {
        json_decref(arr);
        return sch_fail(s, SCH_E_BAD_TRACE, "trace: not a JSON array: %s", arr ? "" : jerr.text);
    }
    sch_err e = SCH_E_OK;
    for (size_t i = 0; i < json_array_size(arr) && !e; i++) {
        json_t *o = json_array_get(arr, i);
        e = json_is_object(o) ? replay_step(s, o) : sch_fail(s, SCH_E_BAD_TRACE, "trace: step %zu is not an object", i);
    }
    json_decref(arr);
    return e;
}
