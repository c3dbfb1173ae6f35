/* cache_read.c — cache_read: a producer's values staged in a buffer of
 * another scope before a consumer reads them (TVM's cache_read). A new
 * stage copies the producer elementwise and the consumer's own body reads
 * the copy instead. Computed at a loop of the consumer (sch_compute_at),
 * the copy covers the region one iteration of that loop reads (bound.c),
 * which lowering sizes.
 *
 * The one scope built is SHARED (an OpenCL work-group's __local memory): a
 * GEMM's k-block tiles of both operands, read by every work-item of the
 * group many times, are read from global memory once per group. Lowering
 * (lower.c: shared_copy) shares the copy out over the work-items of the
 * consumer's loops inside the attach loop, each copying a strided share
 * (consecutive work-items consecutive elements of the producer), then a
 * barrier, the consumer's use, and a barrier before the next iteration's
 * copy overwrites the tile. A target without work-groups has no such
 * memory, so templates stage only on devices (sch_tmpl_stage). */
#include "schedule/schedule.h"

typedef struct swap {
    su_arena *a;
    const sch_tensor *from;
    sch_tensor *to;
} swap;

static bool reads_p(const void *ctx, const sch_expr *e)
{
    return e->kind == SCH_READ && e->tensor == ctx;
}

/* A read of swap.from becomes the same read of swap.to. */
static const sch_expr *reread(void *ctx, const sch_expr *r)
{
    swap *w = ctx;
    if (r->tensor != w->from)
        return NULL;
    return sch_read(w->a, w->to, r->n, r->args);
}

sch_err sch_cache_read(sch_schedule *s, sch_tensor *consumer, sch_tensor *p, sch_scope scope, sch_tensor **cache)
{
    su_arena *a = &s->arena;
    if (!consumer || consumer->kind != SCH_TENSOR_COMPUTE || !p)
        return sch_fail(s, SCH_E_NO_STAGE, "cache_read: not a stage and a tensor");
    if (consumer->attach == SCH_ATTACH_INLINE)
        return sch_fail(s, SCH_E_BAD_ATTACH, "cache_read: stage %s is inlined", consumer->name);
    if (scope != SCH_SCOPE_SHARED)
        return sch_fail(s, SCH_E_UNSUPPORTED, "cache_read: only the shared scope is built (asked for scope %d)",
                        (int)scope);
    if (!sch_expr_any(consumer->body, reads_p, p))
        return sch_fail(s, SCH_E_BAD_ATTACH, "cache_read: stage %s does not read %s itself", consumer->name, p->name);
    char name[80];
    snprintf(name, sizeof name, "%s.shared", p->name);
    const char *axis_names[IR_MAX_DIMS];
    sch_tensor *c = sch_tensor_add(s, SCH_TENSOR_COMPUTE, name, p->dtype, p->ndim, p->shape);
    c->op = "copy";
    c->axes = su_arena_alloc(a, (size_t)(p->ndim ? p->ndim : 1) * sizeof *c->axes);
    for (int i = 0; i < p->ndim; i++) {
        axis_names[i] = su_arena_printf(a, "ax%d", i);
        c->axes[i] = sch_var_new(a, &s->next_var, axis_names[i], IR_INT64);
        su_vec_push(&c->leaves, sch_iter_new(s, c, axis_names[i], c->axes[i], p->shape[i], false, i));
    }
    c->body = sch_read_axes(a, p, c);
    c->injective = true;
    c->attach = SCH_ATTACH_ROOT;
    c->shared = true;
    swap w = {a, p, c};
    consumer->body = sch_map_reads(a, consumer->body, reread, &w);
    sch_trace_add(s, SCH_P_CACHE_READ, consumer->name, 0, NULL, p->name, scope, 0);
    if (cache)
        *cache = c;
    return SCH_E_OK;
}
