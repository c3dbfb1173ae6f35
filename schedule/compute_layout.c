/* compute_layout.c — compute definitions of layout_transform and stack,
 * both injective. layout_transform reads, for each source axis, the primal
 * coordinate of its letter rebuilt from the output's axes (outer * factor +
 * inner), divided or reduced modulo the source's own split; stack selects
 * the field by the new axis. */
#include <ctype.h>

#include "schedule/schedule.h"

#define VAR(v) sch_varref(a, v)
#define I(v) sch_int(a, v)

bool sch_compute_layout_transform(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    ir_layout src, dst;
    if (ir_layout_parse(sch_attr_str(cx, "src_layout"), &src) || ir_layout_parse(sch_attr_str(cx, "dst_layout"), &dst))
        return sch_cctx_error(cx, "bad layout");
    sch_tensor *t = sch_stage_like(cx, 0, NULL);
    const sch_expr *ix[IR_MAX_DIMS];
    for (int i = 0; i < src.n; i++) {
        char up = (char)toupper((unsigned char)src.axis[i]);
        int d = ir_layout_find(&dst, up), dsub = ir_layout_find(&dst, (char)tolower((unsigned char)up));
        const sch_expr *p = VAR(t->axes[d]);
        if (dsub >= 0)
            p = sch_add(a, sch_mul(a, p, I(dst.factor[dsub])), VAR(t->axes[dsub]));
        int64_t f = ir_layout_factor(&src, up);
        ix[i] = f == 1 ? p : isupper((unsigned char)src.axis[i]) ? sch_div(a, p, I(f)) : sch_mod(a, p, I(f));
    }
    t->body = sch_read(a, in[0], src.n, ix);
    out[0] = t;
    *nout = 1;
    return true;
}

bool sch_compute_stack(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout)
{
    su_arena *a = cx->a;
    sch_tensor *t = sch_stage_like(cx, 0, NULL);
    int64_t axis = sch_attr_int(cx, "axis");
    axis = axis < 0 ? axis + t->ndim : axis;
    const sch_expr *ix[IR_MAX_DIMS], *v = NULL;
    for (int i = 0, j = 0; i < t->ndim; i++)
        if (i != axis)
            ix[j++] = VAR(t->axes[i]);
    for (int k = nin; k-- > 0;) {
        const sch_expr *r = sch_read(a, in[k], t->ndim - 1, ix);
        v = v ? sch_select(a, sch_bin(a, SCH_EQ, VAR(t->axes[axis]), I(k)), r, v) : r;
    }
    t->body = v;
    out[0] = t;
    *nout = 1;
    return true;
}
