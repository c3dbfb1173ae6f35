/* random.c — seeded values for the parameters of a function, for running a
 * model without its weights (`relay-tune run --random-params SEED`) and for
 * tests that compare with PyTorch on the same weights without storing them:
 * tests/gen/make_model_refs.py computes exactly the same numbers in Python.
 *
 * The stream: parameter %NAME with seed S draws from splitmix64 started at
 * state fnv1a64(NAME) ^ (S * 0x9e3779b97f4a7c15) (64-bit wrapping
 * arithmetic); element i of the tensor (C order) takes the (i+1)-th output x,
 * u = (x >> 40) / 2^24 in [0, 1), and a float gets lo + (hi - lo) * u
 * computed in double and rounded to the dtype, an integer gets lo + x mod
 * (hi - lo), a bool gets u < 0.5.
 *
 * The range depends on how the function uses the parameter (the first op
 * call, in creation order, that takes it as an argument), chosen so that
 * activations stay of order one through deep networks:
 *   conv2d weight       U(-a, a), a = sqrt(6 / fan_in), fan_in = (C/groups) KH KW
 *   dense weight        U(-a, a), a = sqrt(6 / K)  (He-uniform, as for ReLU)
 *   batch_norm moving_var                                   U(1, 3)
 *   batch_norm / layer_norm gamma                           U(0.5, 1.5)
 *   beta, bias_add's bias, batch_norm moving_mean           U(-0.1, 0.1)
 *   take's indices      integers in [0, extent of the indexed axis)
 *   anything else       U(-1, 1); integers in [0, 10); bool with p = 1/2
 * He-uniform weights keep the variance of activations through conv + relu;
 * a moving variance around 2 then halves it at each batch_norm, which stops
 * residual blocks from doubling it block after block: resnet50's logits stay
 * within +-20 (with unit variances they reach 1e5), and plain networks such
 * as squeezenet (no batch_norm) keep their scale too. */
#include <math.h>
#include <string.h>

#include "ir/ir.h"

#define GOLDEN 0x9e3779b97f4a7c15ULL

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t ir_splitmix64(uint64_t *state)
{
    *state += GOLDEN;
    return mix(*state);
}

/* The search for the op call with the smallest id that passes param. */
typedef struct first_use {
    const ir_expr *param;
    const ir_expr *call;    /* the call found so far, or NULL */
    int arg;                /* the argument of call that param is */
} first_use;

static ir_visit_step note_use(ir_visitor *v, const ir_expr *e)
{
    first_use *u = v->ctx;
    if (e->kind != IR_CALL || e->u.call.fn->kind != IR_OP || (u->call && e->id >= u->call->id))
        return IR_VISIT_DESCEND;
    for (int i = 0; i < e->u.call.nargs; i++)
        if (e->u.call.args[i] == u->param) {
            u->call = e;
            u->arg = i;
            break;
        }
    return IR_VISIT_DESCEND;
}

/* The range [lo, hi) for the parameter from its first use. */
static void range_of(const ir_expr *call, int arg, const ir_tensor *t, double *lo, double *hi)
{
    *lo = ir_dtype_is_float(t->dtype) ? -1 : 0;
    *hi = ir_dtype_is_float(t->dtype) ? 1 : 10;
    const ir_op_def *op = call ? ir_call_op(call) : NULL;
    if (!op)
        return;
    switch (op->id) {
    case IR_OP_CONV2D:
    case IR_OP_DENSE:
        if (arg == 1 && t->ndim >= 2) {
            double fan_in = 1;
            for (int i = 1; i < t->ndim; i++)
                fan_in *= (double)t->shape[i];
            *hi = sqrt(6.0 / (fan_in > 0 ? fan_in : 1));
            *lo = -*hi;
        }
        break;
    case IR_OP_BATCH_NORM:
        if (arg == 1)
            *lo = 0.5, *hi = 1.5;
        else if (arg == 4)
            *lo = 1, *hi = 3;
        else if (arg == 2 || arg == 3)
            *lo = -0.1, *hi = 0.1;
        break;
    case IR_OP_LAYER_NORM:
        if (arg == 1)
            *lo = 0.5, *hi = 1.5;
        else if (arg == 2)
            *lo = -0.1, *hi = 0.1;
        break;
    case IR_OP_BIAS_ADD:
        if (arg == 1)
            *lo = -0.1, *hi = 0.1;
        break;
    case IR_OP_TAKE: {
        const ir_type *d = call->u.call.args[0]->type;
        if (arg == 1 && d && d->kind == IR_TY_TENSOR && call->u.call.attrs) {
            int64_t n = ir_type_numel(d);
            if (!ir_attr_is_none(call->u.call.attrs, IR_TAKE_AXIS)) {
                int64_t ax = ir_attr_int(call->u.call.attrs, IR_TAKE_AXIS);
                n = d->shape[ax < 0 ? ax + d->ndim : ax];
            }
            *lo = 0, *hi = (double)(n > 0 ? n : 1);
        }
        break;
    }
    default:
        break;
    }
}

void ir_random_fill(ir_tensor *t, const char *name, uint64_t seed, double lo, double hi)
{
    uint64_t state = su_hash_str(name) ^ (seed * GOLDEN);
    int64_t n = ir_tensor_numel(t);
    bool is_float = ir_dtype_is_float(t->dtype);
    uint64_t span = hi > lo ? (uint64_t)(hi - lo) : 1;
    for (int64_t i = 0; i < n; i++) {
        uint64_t x = ir_splitmix64(&state);
        double u = (double)(x >> 40) * (1.0 / 16777216.0);
        if (t->dtype == IR_BOOL)
            ir_tensor_set_i64(t, i, u < 0.5);
        else if (t->dtype == IR_FLOAT32)
            ((float *)t->data)[i] = (float)(lo + (hi - lo) * u);
        else if (is_float)
            ir_tensor_set(t, i, lo + (hi - lo) * u);
        else
            ir_tensor_set_i64(t, i, (int64_t)lo + (int64_t)(x % span));
    }
}

void ir_random_param(const ir_expr *func, int index, uint64_t seed, ir_tensor *t)
{
    const ir_expr *param = func->u.func.params[index];
    first_use u = {param, NULL, -1};
    ir_visitor v;
    ir_visitor_init(&v, note_use, NULL, &u);
    ir_visit(&v, func->u.func.body);
    ir_visitor_free(&v);
    double lo, hi;
    range_of(u.call, u.arg, t, &lo, &hi);
    ir_random_fill(t, param->u.var.name, seed, lo, hi);
}
