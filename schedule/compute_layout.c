/* compute_layout.c — compute definitions of layout_transform and stack,
 * both injective, and the wrapper that defines convolution and pooling in
 * NHWC (or any order of the letters) through their NCHW definitions.
 * layout_transform reads, for each source axis, the primal coordinate of its
 * letter rebuilt from the output's axes (outer * factor + inner), divided or
 * reduced modulo the source's own split; stack selects the field by the new
 * axis. The wrapper's transposing stages are injective, so lowering inlines
 * them into the loads of the NCHW stages: no copy is made at run time. */
#include <ctype.h>
#include <string.h>

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

bool sch_layout_permuted(const sch_cctx *cx, const char *name, const char *dflt, const char *canon, int pos[4])
{
    const char *l = sch_attr_str(cx, name);
    if (cx->canonical || !ir_layout_perm(*l ? l : sch_attr_str(cx, dflt), canon, pos))
        return false;   /* the relation accepted it: not a permutation only inside the wrapper */
    return pos[0] != 0 || pos[1] != 1 || pos[2] != 2 || pos[3] != 3;
}

sch_cctx sch_cctx_canonical(const sch_cctx *cx, const ir_type *result)
{
    ir_expr *view = su_arena_alloc(cx->a, sizeof *view);
    *view = *cx->call;
    view->type = result;
    sch_cctx inner = *cx;
    inner.call = view;
    inner.canonical = true;
    inner.tag = NULL;
    return inner;
}

bool sch_compute_in_layouts(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout,
                            const int *const *in_pos, const int *out_pos, sch_compute_fn fn)
{
    su_arena *a = cx->a;
    sch_tensor *cin[8];
    if (nin > 8)
        return sch_cctx_error(cx, "too many inputs");
    for (int i = 0; i < nin; i++) {
        cin[i] = in[i];
        if (!in_pos[i])
            continue;
        int64_t shape[4];
        for (int j = 0; j < 4; j++)
            shape[j] = in[i]->shape[in_pos[i][j]];
        cx->tag = "to_canonical";
        sch_tensor *t = sch_stage_new(cx, in[i]->dtype, 4, shape, NULL);
        const sch_expr *ix[4];
        for (int j = 0; j < 4; j++)
            ix[in_pos[i][j]] = VAR(t->axes[j]);
        t->body = sch_read(a, in[i], 4, ix);
        cin[i] = t;
    }
    /* the call as the canonical definition sees it: the same op and
     * attributes, its result in canonical order */
    const ir_type *ot = sch_out_type(cx, 0);
    int64_t shape[4];
    for (int j = 0; j < 4; j++)
        shape[j] = ot->shape[out_pos[j]];
    sch_cctx inner = sch_cctx_canonical(cx, ir_tensor_type(a, ot->dtype, 4, shape));
    sch_tensor *res[2];
    int nres = 0;
    if (!fn(&inner, cin, nin, res, &nres))
        return false;
    sch_tensor *t = sch_stage_like(cx, 0, NULL);
    const sch_expr *ix[4];
    for (int j = 0; j < 4; j++)
        ix[j] = VAR(t->axes[out_pos[j]]);
    t->body = sch_read(a, res[0], 4, ix);
    out[0] = t;
    *nout = 1;
    return true;
}
