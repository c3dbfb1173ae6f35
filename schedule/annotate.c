/* annotate.c — loop annotations: parallel (iterations spread over the
 * threads: an OpenMP parallel for in C), vectorized (iterations as SIMD
 * lanes: a loop the C compiler vectorizes), unrolled (the body repeated),
 * rolled (a serial loop the C compiler may not unroll: a register tile's
 * short tap loop, whose unrolled copies would keep more values live than
 * the registers hold) and thread (bound to a work-item axis, for OpenCL: sch_bind). The checks are the
 * ones whose violation would give wrong or absurd code: a reduction loop is
 * never parallel (its iterations depend on each other) and vectorized only
 * as a SIMD reduction — the innermost loop of a sum, max or min, whose
 * lanes accumulate apart and combine at the end (C: an OpenMP simd
 * reduction); unrolling and vectorizing want a small constant extent. */
#include "schedule/schedule.h"

enum { MAX_UNROLL = 64, MAX_VECTOR = 4096 };

sch_err sch_annotate(sch_schedule *s, sch_tensor *t, sch_iter *it, sch_loop_kind k)
{
    if (!t || t->kind != SCH_TENSOR_COMPUTE)
        return sch_fail(s, SCH_E_NO_STAGE, "annotate: not a stage");
    if (!it || sch_leaf_pos(t, it) < 0)
        return sch_fail(s, SCH_E_NO_ITER, "annotate: %s is not a loop of stage %s", it ? it->name : "(null)", t->name);
    if (k >= SCH_LOOP_KIND_COUNT)
        return sch_fail(s, SCH_E_BAD_ANNOTATION, "annotate: unknown loop kind %d", (int)k);
    bool simd_reduction = k == SCH_LOOP_VECTORIZED && t->reduce != SCH_RED_NONE && t->leaves.len &&
                          t->leaves.data[t->leaves.len - 1] == it;
    if (it->reduce && (k == SCH_LOOP_PARALLEL || k == SCH_LOOP_VECTORIZED || k == SCH_LOOP_THREAD) &&
        !simd_reduction)
        return sch_fail(s, SCH_E_BAD_ANNOTATION, "annotate: reduction loop %s of stage %s cannot be %s", it->name,
                        t->name, sch_loop_kind_name(k));
    if (k == SCH_LOOP_UNROLLED && it->extent > MAX_UNROLL)
        return sch_fail(s, SCH_E_BAD_ANNOTATION, "annotate: loop %s of stage %s has extent %lld, too long to unroll "
                        "(at most %d)", it->name, t->name, (long long)it->extent, MAX_UNROLL);
    if (k == SCH_LOOP_VECTORIZED && it->extent > MAX_VECTOR)
        return sch_fail(s, SCH_E_BAD_ANNOTATION, "annotate: loop %s of stage %s has extent %lld, too long to "
                        "vectorize (at most %d)", it->name, t->name, (long long)it->extent, MAX_VECTOR);
    if (k == SCH_LOOP_THREAD)
        return sch_bind(s, t, it, 0);
    it->kind = k;
    sch_trace_add(s, SCH_P_ANNOTATE, t->name, 1, &it->name, NULL, k, 0);
    return SCH_E_OK;
}

sch_err sch_bind(sch_schedule *s, sch_tensor *t, sch_iter *it, int axis)
{
    if (!t || t->kind != SCH_TENSOR_COMPUTE)
        return sch_fail(s, SCH_E_NO_STAGE, "bind: not a stage");
    if (!it || sch_leaf_pos(t, it) < 0)
        return sch_fail(s, SCH_E_NO_ITER, "bind: %s is not a loop of stage %s", it ? it->name : "(null)", t->name);
    if (it->reduce && (axis < 3 || axis > 5))
        return sch_fail(s, SCH_E_BAD_ANNOTATION, "bind: reduction loop %s of stage %s can only be bound to a "
                        "work-item axis of the group (3..5), not %d", it->name, t->name, axis);
    if (axis < 0 || axis > 5)
        return sch_fail(s, SCH_E_BAD_ANNOTATION, "bind: work-item axis %d is not in 0..5", axis);
    for (size_t i = 0; i < t->leaves.len; i++)
        if (t->leaves.data[i] != it && t->leaves.data[i]->kind == SCH_LOOP_THREAD &&
            t->leaves.data[i]->thread_axis == axis)
            return sch_fail(s, SCH_E_BAD_ANNOTATION, "bind: loops %s and %s of stage %s both on work-item axis %d",
                            t->leaves.data[i]->name, it->name, t->name, axis);
    it->kind = SCH_LOOP_THREAD;
    it->thread_axis = axis;
    sch_trace_add(s, SCH_P_ANNOTATE, t->name, 1, &it->name, NULL, SCH_LOOP_THREAD, axis);
    return SCH_E_OK;
}
