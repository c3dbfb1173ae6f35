/* compute_at.c — compute locations: inline (substitute a stage into its
 * readers), root (its own loop nest, a full buffer) and compute_at (inside
 * one loop of its only reader, over the region that one iteration of that
 * loop reads: the accumulator tile of a conv under its epilogue, a row
 * maximum under a softmax's row loop). Regions are inferred at lowering
 * (bound.c), so the stage's own splits apply to the shrunk region. */
#include "schedule/schedule.h"

/* A stage other than `except` (not inline, not computed at the same loop
 * `it` of except) that reads t, or NULL. */
static sch_tensor *other_reader(const sch_schedule *s, const sch_tensor *t, const sch_tensor *except,
                                const sch_iter *it)
{
    for (size_t i = 0; i < s->tensors.len; i++) {
        sch_tensor *r = s->tensors.data[i];
        if (r == except || r == t || r->kind != SCH_TENSOR_COMPUTE || r->attach == SCH_ATTACH_INLINE)
            continue;
        if (r->attach == SCH_ATTACH_AT && r->attach_to == except && r->attach_iter == it)
            continue;
        if (sch_reads(s, r, t))
            return r;
    }
    return NULL;
}

/* True when some stage is computed at a loop of t. */
static sch_tensor *attached_to(const sch_schedule *s, const sch_tensor *t)
{
    for (size_t i = 0; i < s->tensors.len; i++)
        if (s->tensors.data[i]->attach == SCH_ATTACH_AT && s->tensors.data[i]->attach_to == t)
            return s->tensors.data[i];
    return NULL;
}

sch_err sch_compute_at(sch_schedule *s, sch_tensor *t, sch_tensor *consumer, sch_iter *it)
{
    if (!t || t->kind != SCH_TENSOR_COMPUTE || !consumer || consumer->kind != SCH_TENSOR_COMPUTE)
        return sch_fail(s, SCH_E_NO_STAGE, "compute_at: not a stage");
    if (!it || sch_leaf_pos(consumer, it) < 0)
        return sch_fail(s, SCH_E_NO_ITER, "compute_at: %s is not a loop of stage %s", it ? it->name : "(null)",
                        consumer->name);
    if (t->output >= 0)
        return sch_fail(s, SCH_E_BAD_ATTACH, "compute_at: stage %s is an output", t->name);
    if (consumer == t || consumer->attach == SCH_ATTACH_INLINE)
        return sch_fail(s, SCH_E_BAD_ATTACH, "compute_at: stage %s cannot be computed in %s", t->name,
                        consumer->name);
    for (const sch_tensor *c = consumer; c; c = c->attach == SCH_ATTACH_AT ? c->attach_to : NULL)
        if (c == t)
            return sch_fail(s, SCH_E_BAD_ATTACH, "compute_at: %s is computed inside %s already", consumer->name,
                            t->name);
    bool read = sch_reads(s, consumer, t);
    for (size_t i = 0; i < s->tensors.len && !read; i++) {
        const sch_tensor *r = s->tensors.data[i];
        read = r->attach == SCH_ATTACH_AT && r->attach_to == consumer && r->attach_iter == it && sch_reads(s, r, t);
    }
    if (!read)
        return sch_fail(s, SCH_E_BAD_ATTACH, "compute_at: neither stage %s nor a stage computed at its loop %s "
                        "reads %s", consumer->name, it->name, t->name);
    sch_tensor *o = other_reader(s, t, consumer, it);
    if (o)
        return sch_fail(s, SCH_E_BAD_ATTACH, "compute_at: stage %s is also read by %s (not computed at %s of %s)",
                        t->name, o->name, it->name, consumer->name);
    t->attach = SCH_ATTACH_AT;
    t->attach_to = consumer;
    t->attach_iter = it;
    sch_trace_add(s, SCH_P_COMPUTE_AT, t->name, 1, &it->name, consumer->name, 0, 0);
    return SCH_E_OK;
}

sch_err sch_compute_inline(sch_schedule *s, sch_tensor *t)
{
    if (!t || t->kind != SCH_TENSOR_COMPUTE)
        return sch_fail(s, SCH_E_NO_STAGE, "compute_inline: not a stage");
    if (!t->injective || t->output >= 0)
        return sch_fail(s, SCH_E_BAD_ATTACH, "compute_inline: stage %s is %s", t->name,
                        t->output >= 0 ? "an output" : "a reduction");
    sch_tensor *a = attached_to(s, t);
    if (a)
        return sch_fail(s, SCH_E_BAD_ATTACH, "compute_inline: stage %s is computed at a loop of %s", a->name, t->name);
    t->attach = SCH_ATTACH_INLINE;
    t->attach_to = NULL;
    t->attach_iter = NULL;
    sch_trace_add(s, SCH_P_COMPUTE_INLINE, t->name, 0, NULL, NULL, 0, 0);
    return SCH_E_OK;
}

sch_err sch_compute_root(sch_schedule *s, sch_tensor *t)
{
    if (!t || t->kind != SCH_TENSOR_COMPUTE)
        return sch_fail(s, SCH_E_NO_STAGE, "compute_root: not a stage");
    t->attach = SCH_ATTACH_ROOT;
    t->attach_to = NULL;
    t->attach_iter = NULL;
    sch_trace_add(s, SCH_P_COMPUTE_ROOT, t->name, 0, NULL, NULL, 0, 0);
    return SCH_E_OK;
}
