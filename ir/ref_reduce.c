/* ref_reduce.c — reference kernels of the reductions (op_reduce.c's family):
 * sum, mean, max, min and argmax.
 *
 * The axes that go away are decided exactly as the relation decides them
 * (axis None or [] reduces every axis; exclude reduces the others). Each
 * output element then combines the elements of its "reduced sub-array",
 * visited in C order through a table of their offsets, so one loop handles
 * any set of axes, and argmax's answer is naturally the position in that
 * sub-array (the flattened index over the reduced axes, as TVM returns).
 *
 * float32 sums accumulate in double (so the result is the correctly rounded
 * sum for any practical size); integer sums wrap at 64 bits before they are
 * stored; means of integers truncate. Reducing zero elements gives the
 * identity: 0 for sum, NaN (floats) or 0 (integers) for mean, the dtype's
 * lowest value for max and its highest for min, and index 0 for argmax. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ir/ir.h"

#define PAR_MIN (1 << 15)

/* The reduced axes, and for the output: the offsets (in input elements) of
 * the first element of every output position's sub-array, and of every
 * element of a sub-array relative to its first. */
typedef struct plan {
    int64_t nout, nred;     /* output elements; elements reduced into each */
    int64_t *kept_off;      /* nout offsets */
    int64_t *red_off;       /* nred offsets */
} plan;

/* Offsets of all positions of the axes selected by `take` (C order). */
static int64_t *offsets(const ir_tensor *a, const bool *take, int64_t count)
{
    int64_t st[IR_MAX_DIMS], s = 1, idx[IR_MAX_DIMS] = {0}, off = 0;
    for (int i = a->ndim - 1; i >= 0; i--) {
        st[i] = s;
        s *= a->shape[i];
    }
    int64_t *out = su_malloc((size_t)(count ? count : 1) * sizeof *out);
    for (int64_t k = 0; k < count; k++) {
        out[k] = off;
        for (int i = a->ndim - 1; i >= 0; i--) {
            if (!take[i])
                continue;
            off += st[i];
            if (++idx[i] < a->shape[i])
                break;
            off -= st[i] * a->shape[i];
            idx[i] = 0;
        }
    }
    return out;
}

static void plan_init(plan *p, const ir_tensor *a, const ir_attrs *at, int axis_idx, int excl_idx)
{
    int64_t axes[IR_MAX_DIMS];
    int n = ir_attr_is_none(at, axis_idx) ? 0 : ir_attr_ints(at, axis_idx, axes, IR_MAX_DIMS);
    bool exclude = n > 0 && ir_attr_bool(at, excl_idx), red[IR_MAX_DIMS], kept[IR_MAX_DIMS];
    for (int i = 0; i < a->ndim; i++)
        red[i] = n == 0 || exclude;
    for (int i = 0; i < n; i++)
        red[axes[i] < 0 ? axes[i] + a->ndim : axes[i]] = !exclude;
    p->nout = p->nred = 1;
    for (int i = 0; i < a->ndim; i++) {
        kept[i] = !red[i];
        *(red[i] ? &p->nred : &p->nout) *= a->shape[i];
    }
    p->kept_off = offsets(a, kept, p->nout);
    p->red_off = offsets(a, red, p->nred);
}

static void plan_free(plan *p)
{
    free(p->kept_off);
    free(p->red_off);
}

/* sum, mean, max, min. */
bool ir_ref_reduce(const ir_ref_call *c)
{
    const ir_tensor *a = c->in[0];
    ir_tensor *o = c->out[0];
    ir_op_id op = c->op->id;
    plan p;
    plan_init(&p, a, c->attrs, IR_REDUCE_AXIS, IR_REDUCE_EXCLUDE);
    bool is_float = ir_dtype_is_float(a->dtype);
    if (a->dtype == IR_FLOAT32) {
        const float *x = a->data;
        float *y = o->data;
#pragma omp parallel for if (p.nout * p.nred > PAR_MIN && p.nout > 1)
        for (int64_t k = 0; k < p.nout; k++) {
            const float *base = x + p.kept_off[k];
            double acc = op == IR_OP_MAX ? -INFINITY : op == IR_OP_MIN ? INFINITY : op == IR_OP_PROD ? 1 : 0;
            for (int64_t r = 0; r < p.nred; r++) {
                double v = base[p.red_off[r]];
                acc = op == IR_OP_MAX ? ir_max_nan(acc, v) : op == IR_OP_MIN ? ir_min_nan(acc, v)
                    : op == IR_OP_PROD ? acc * v : acc + v;
            }
            y[k] = (float)(op == IR_OP_MEAN ? acc / (double)p.nred : acc);
        }
    } else if (is_float) {
        for (int64_t k = 0; k < p.nout; k++) {
            double acc = op == IR_OP_MAX ? -INFINITY : op == IR_OP_MIN ? INFINITY : op == IR_OP_PROD ? 1 : 0;
            for (int64_t r = 0; r < p.nred; r++) {
                double v = ir_tensor_get(a, p.kept_off[k] + p.red_off[r]);
                acc = op == IR_OP_MAX ? ir_max_nan(acc, v) : op == IR_OP_MIN ? ir_min_nan(acc, v)
                    : op == IR_OP_PROD ? acc * v : acc + v;
            }
            ir_tensor_set(o, k, op == IR_OP_MEAN ? acc / (double)p.nred : acc);
        }
    } else {
        for (int64_t k = 0; k < p.nout; k++) {
            uint64_t sum = op == IR_OP_PROD;   /* products wrap as sums do */
            int64_t best = op == IR_OP_MAX ? INT64_MIN : INT64_MAX;
            for (int64_t r = 0; r < p.nred; r++) {
                int64_t v = ir_tensor_get_i64(a, p.kept_off[k] + p.red_off[r]);
                sum = op == IR_OP_PROD ? sum * (uint64_t)v : sum + (uint64_t)v;
                best = op == IR_OP_MAX ? (v > best ? v : best) : (v < best ? v : best);
            }
            int64_t s = (int64_t)sum;
            if (op == IR_OP_MAX || op == IR_OP_MIN) {
                if (p.nred == 0)    /* the dtype's lowest (max) or highest (min) value */
                    ir_tensor_set(o, k, op == IR_OP_MAX ? -INFINITY : INFINITY);
                else
                    ir_tensor_set_i64(o, k, best);
            } else {
                ir_tensor_set_i64(o, k, op == IR_OP_MEAN ? (p.nred ? s / p.nred : 0) : s);
            }
        }
    }
    plan_free(&p);
    return true;
}

/* argmax: the position of the largest element in each sub-array (the first
 * one on ties, or the last with select_last_index); NaN counts as largest. */
bool ir_ref_argreduce(const ir_ref_call *c)
{
    const ir_tensor *a = c->in[0];
    int32_t *y = c->out[0]->data;
    plan p;
    plan_init(&p, a, c->attrs, IR_ARGREDUCE_AXIS, IR_ARGREDUCE_EXCLUDE);
    bool last = ir_attr_bool(c->attrs, IR_ARGREDUCE_SELECT_LAST_INDEX), is_float = ir_dtype_is_float(a->dtype);
    for (int64_t k = 0; k < p.nout; k++) {
        int64_t at = 0;
        double best = -INFINITY;
        int64_t ibest = INT64_MIN;
        for (int64_t r = 0; r < p.nred; r++) {
            int64_t off = p.kept_off[k] + p.red_off[r];
            bool better;
            if (is_float) {
                /* NaN is the largest, as in torch.argmax: the first one wins
                 * (the last with select_last_index) */
                double v = ir_tensor_get(a, off);
                bool vn = isnan(v), bn = isnan(best);
                better = r == 0 || (bn ? last && vn : vn || (last ? v >= best : v > best));
                best = better ? v : best;
            } else {
                int64_t v = ir_tensor_get_i64(a, off);
                better = r == 0 || (last ? v >= ibest : v > ibest);
                ibest = better ? v : ibest;
            }
            at = better ? r : at;
        }
        y[k] = (int32_t)at;
    }
    plan_free(&p);
    return true;
}
