/* test_interp.c — the interpreter beyond single ops: graph bindings shared
 * (evaluated once), let, if (both ways), closures that capture, functions
 * passed as values, global calls with recursion, tuples in and out, and the
 * errors a run can meet (an argument of the wrong type, a kernel's run-time
 * error at its source location, runaway recursion). Under ASan the leak
 * checker also proves that every value is released. */
#include <math.h>
#include <string.h>

#include "ir/ir.h"
#include "tests/tap.h"

/* Parses and type-checks text; NULL after printing why. */
static ir_module *load(const char *name, const char *text)
{
    su_diags d = {0};
    ir_module *m = ir_parse(name, text, strlen(text), &d);
    if (m && !ir_infer_types(m, &d)) {
        ir_module_free(m);
        m = NULL;
    }
    if (!m)
        su_diags_print(stdout, &d);
    su_diags_free(&d);
    return m;
}

static ir_value *vec(int n, const float *v)
{
    int64_t shape[1] = {n};
    ir_tensor *t = ir_tensor_alloc(IR_FLOAT32, 1, shape);
    memcpy(t->data, v, (size_t)n * sizeof *v);
    return ir_value_tensor(t, true);
}

static ir_value *scalar_i32(int v)
{
    ir_tensor *t = ir_tensor_alloc(IR_INT32, 0, NULL);
    *(int32_t *)t->data = v;
    return ir_value_tensor(t, true);
}

/* Runs @main; returns the result (NULL on error, with the messages in *msg). */
static ir_value *run(ir_module *m, int n, ir_value **args, int max_depth, char **msg)
{
    su_diags d = {0};
    ir_interp_opts o = {max_depth};
    ir_interp *ip = ir_interp_new(m, &o);
    ir_value *out = NULL;
    bool okk = ir_interp_call(ip, "main", n, args, &out, &d);
    if (msg) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        su_diags_print(f, &d);
        fclose(f);
        *msg = buf;
    }
    ir_interp_free(ip);
    su_diags_free(&d);
    if (!okk) {
        ir_value_release(out);
        return NULL;
    }
    return out;
}

static bool close_to(const ir_value *v, int n, const double *want)
{
    if (!v || v->kind != IR_VAL_TENSOR || ir_tensor_numel(v->tensor) != n)
        return false;
    for (int i = 0; i < n; i++)
        if (fabs(ir_tensor_get(v->tensor, i) - want[i]) > 1e-5 * fmax(1, fabs(want[i])))
            return false;
    return true;
}

static void release_all(int n, ir_value **v)
{
    for (int i = 0; i < n; i++)
        ir_value_release(v[i]);
}

/* The golden control-flow program: defs calling each other, recursion, a
 * capturing closure, let, if and tuples. */
static void test_control_flow(void)
{
    const char *srcdir = getenv("top_srcdir");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/ir/golden/control_flow.relay", srcdir ? srcdir : ".");
    size_t len;
    char *text = su_read_file(path, &len);
    ir_module *m = text ? load("control_flow.relay", text) : NULL;
    free(text);
    if (!ok(m != NULL, "control_flow.relay loads"))
        return;
    const float x[4] = {0.5f, -1, 2, 0.25f};
    for (int n = 0; n <= 3; n += 3) {
        ir_value *args[2] = {vec(4, x), scalar_i32(n)};
        ir_value *out = run(m, 2, args, 0, NULL);
        /* @repeat applies tanh n times; %scale multiplies by %x; when n > 0
         * the sum of the vector is added to each element */
        double r[4], sum = 0, want[4];
        for (int i = 0; i < 4; i++) {
            double t = x[i];
            for (int k = 0; k < n; k++)
                t = tanh(t);
            r[i] = t * x[i];
            sum += r[i];
        }
        for (int i = 0; i < 4; i++)
            want[i] = n > 0 ? r[i] + sum : r[i];
        ok(close_to(out, 4, want), "control flow with n=%d (%s branch)", n, n > 0 ? "then" : "else");
        ir_value_release(out);
        release_all(2, args);
    }
    ir_module_free(m);
}

static void test_closures(void)
{
    ir_module *m = load("closures.relay",
        "#[version = \"0.0.5\"]\n"
        "def @twice(%f: fn (Tensor[(3), float32]) -> Tensor[(3), float32], %v: Tensor[(3), float32]) {\n"
        "  %0 = %f(%v);\n"
        "  %f(%0)\n"
        "}\n"
        "def @main(%x: Tensor[(3), float32], %k: float32) {\n"
        "  let %scale = fn (%y: Tensor[(3), float32]) { multiply(%y, %k) };\n"
        "  let %shift = fn (%y: Tensor[(3), float32]) {\n"
        "    let %inner = fn (%z: Tensor[(3), float32]) { add(%z, %x) };\n"
        "    %inner(%y)\n"
        "  };\n"
        "  %1 = @twice(%scale, %x);\n"
        "  %2 = @twice(%shift, %1);\n"
        "  let %g = @neg;\n"
        "  %g(%2)\n"
        "}\n"
        "def @neg(%a: Tensor[(3), float32]) { negative(%a) }\n");
    if (!ok(m != NULL, "closures: module loads"))
        return;
    const float x[3] = {1, -2, 3}, k = 1.5f;
    ir_tensor *kt = ir_tensor_alloc(IR_FLOAT32, 0, NULL);
    *(float *)kt->data = k;
    ir_value *args[2] = {vec(3, x), ir_value_tensor(kt, true)};
    ir_value *out = run(m, 2, args, 0, NULL);
    double want[3];
    for (int i = 0; i < 3; i++)
        want[i] = -(x[i] * k * k + 2 * x[i]);
    ok(close_to(out, 3, want), "closures capture %%k and %%x, nest, and pass as arguments; a global is a value");
    ir_value_release(out);
    release_all(2, args);
    ir_module_free(m);
}

static void test_recursion(void)
{
    ir_module *m = load("fact.relay",
        "#[version = \"0.0.5\"]\n"
        "def @fact(%n: int64) -> int64 {\n"
        "  if (less_equal(%n, 1i64)) { 1i64 } else { multiply(%n, @fact(subtract(%n, 1i64))) }\n"
        "}\n"
        "def @count(%n: int32, %acc: int32) -> int32 {\n"
        "  if (equal(%n, 0)) { %acc } else { @count(subtract(%n, 1), add(%acc, 2)) }\n"
        "}\n"
        "def @main(%n: int32) { (@fact(20i64), @count(%n, 0)) }\n");
    if (!ok(m != NULL, "recursion: module loads"))
        return;
    ir_value *args[1] = {scalar_i32(2000)};
    ir_value *out = run(m, 1, args, 0, NULL);
    ok(out && out->kind == IR_VAL_TUPLE && out->n == 2, "recursion: the result is a pair");
    if (out && out->kind == IR_VAL_TUPLE) {
        is_int(ir_tensor_get_i64(out->items[0]->tensor, 0), 2432902008176640000LL, "20! in int64 (exact)");
        is_int(ir_tensor_get_i64(out->items[1]->tensor, 0), 4000, "2000 nested calls");
    }
    ir_value_release(out);
    char *msg = NULL;
    out = run(m, 1, args, 500, &msg);
    ok(!out && msg && strstr(msg, "nested more than 500 levels deep"), "runaway recursion is an error, not a crash");
    if (!out && msg && !strstr(msg, "fact.relay:"))
        diag("message: %s", msg);
    ir_value_release(out);
    free(msg);
    release_all(1, args);
    ir_module_free(m);
}

static void test_sharing_and_tuples(void)
{
    ir_module *m = load("share.relay",
        "#[version = \"0.0.5\"]\n"
        "def @main(%x: Tensor[(2), float32]) {\n"
        "  %0 = add(%x, 1f);\n"
        "  %1 = (%0, %x);\n"
        "  %2 = (%1, %0);\n"
        "  %3 = %2.0;\n"
        "  (%3.0, %2.1, %3)\n"
        "}\n");
    if (!ok(m != NULL, "sharing: module loads"))
        return;
    const float x[2] = {1, 2};
    ir_value *args[1] = {vec(2, x)};
    ir_value *out = run(m, 1, args, 0, NULL);
    bool shape = out && out->kind == IR_VAL_TUPLE && out->n == 3 && out->items[2]->kind == IR_VAL_TUPLE;
    ok(shape, "nested tuples come back as nested values");
    if (shape) {
        ok(out->items[0] == out->items[1], "a graph binding used twice is one value (evaluated once)");
        ok(out->items[2]->items[1] == args[0], "a parameter passes through without a copy");
        double want[2] = {2, 3};
        ok(close_to(out->items[0], 2, want), "tuple field values");
    }
    ir_value_release(out);
    release_all(1, args);
    ir_module_free(m);
}

static void test_errors(void)
{
    ir_module *m = load("errors.relay",
        "#[version = \"0.0.5\"]\n"
        "def @main(%d: Tensor[(5), float32], %i: Tensor[(2), int32], %a: int32) {\n"
        "  %0 = take(%d, %i, axis=0, mode=\"fast\");\n"
        "  %1 = divide(10, %a);\n"
        "  (%0, %1)\n"
        "}\n");
    if (!ok(m != NULL, "errors: module loads"))
        return;
    const float d[5] = {1, 2, 3, 4, 5};
    int64_t two[1] = {2};
    ir_tensor *idx = ir_tensor_alloc(IR_INT32, 1, two);
    ((int32_t *)idx->data)[0] = 1;
    ((int32_t *)idx->data)[1] = 7;
    ir_value *args[3] = {vec(5, d), ir_value_tensor(idx, true), scalar_i32(0)};
    char *msg = NULL;
    ir_value *out = run(m, 3, args, 0, &msg);
    ok(!out && msg && strstr(msg, "errors.relay:3:8: error: take: index 7 is out of range for the axis of extent 5"),
       "take mode=fast: an index out of range is an error at the call");
    if (out || !msg || !strstr(msg, "errors.relay:3:8"))
        diag("message: %s", msg ? msg : "(none)");
    free(msg);
    ((int32_t *)idx->data)[1] = 4;
    out = run(m, 3, args, 0, &msg);
    ok(!out && msg && strstr(msg, "errors.relay:4:8: error: divide: integer division by zero"),
       "integer division by zero is an error at the call");
    free(msg);
    ir_value_release(args[2]);
    args[2] = vec(1, d);
    out = run(m, 3, args, 0, &msg);
    ok(!out && msg && strstr(msg, "argument %a of @main does not have its type int32"), "an argument of the wrong type");
    free(msg);
    release_all(3, args);
    ir_module_free(m);
}

static void test_random_params(void)
{
    ir_module *m = load("rand.relay",
        "#[version = \"0.0.5\"]\n"
        "def @main(%data: Tensor[(1, 4, 5, 5), float32], %w: Tensor[(8, 4, 3, 3), float32],\n"
        "          %g: Tensor[(8), float32], %b: Tensor[(8), float32], %mean: Tensor[(8), float32],\n"
        "          %var: Tensor[(8), float32], %idx: Tensor[(6), int64], %flag: Tensor[(64), bool]) {\n"
        "  %0 = nn.conv2d(%data, %w);\n"
        "  %1 = nn.batch_norm(%0, %g, %b, %mean, %var);\n"
        "  %2 = take(%data, %idx, axis=1);\n"
        "  (%1.0, %2, %flag)\n"
        "}\n");
    if (!ok(m != NULL, "random params: module loads"))
        return;
    const ir_expr *f = ir_module_find(m, "main")->func;
    double lo[8], hi[8];
    ir_tensor *t[8];
    for (int i = 0; i < 8; i++) {
        const ir_type *ty = f->u.func.params[i]->type;
        t[i] = ir_tensor_alloc(ty->dtype, ty->ndim, ty->shape);
        ir_random_param(f, i, 7, t[i]);
        lo[i] = INFINITY, hi[i] = -INFINITY;
        for (int64_t k = 0; k < ir_tensor_numel(t[i]); k++) {
            lo[i] = fmin(lo[i], ir_tensor_get(t[i], k));
            hi[i] = fmax(hi[i], ir_tensor_get(t[i], k));
        }
    }
    double a = sqrt(6.0 / 36);
    ok(lo[0] >= -1 && hi[0] < 1 && hi[0] - lo[0] > 1.5, "data: U(-1, 1)");
    ok(lo[1] >= -a && hi[1] < a && hi[1] - lo[1] > a, "conv2d weight: U(-a, a), a = sqrt(6 / fan_in)");
    ok(lo[2] >= 0.5 && hi[2] < 1.5, "batch_norm gamma: U(0.5, 1.5)");
    ok(lo[3] >= -0.1 && hi[3] < 0.1, "batch_norm beta: U(-0.1, 0.1)");
    ok(lo[4] >= -0.1 && hi[4] < 0.1, "batch_norm moving_mean: U(-0.1, 0.1)");
    ok(lo[5] >= 1 && hi[5] < 3, "batch_norm moving_var: U(1, 3)");
    ok(lo[6] >= 0 && hi[6] <= 3, "take indices: within the indexed axis");
    ok(lo[7] == 0 && hi[7] == 1, "bool: both values");
    ir_tensor *again = ir_tensor_alloc(IR_FLOAT32, t[1]->ndim, t[1]->shape);
    ir_random_param(f, 1, 7, again);
    ok(!memcmp(again->data, t[1]->data, ir_tensor_nbytes(again)), "the same seed gives the same values");
    ir_random_param(f, 1, 8, again);
    ok(memcmp(again->data, t[1]->data, ir_tensor_nbytes(again)), "another seed gives other values");
    /* the first values of %w's stream with seed 7, as tests/gen/seeded.py computes them */
    uint64_t state = su_hash_str("w") ^ (7 * 0x9e3779b97f4a7c15ULL);
    uint64_t x0 = ir_splitmix64(&state);
    float w0 = (float)(-a + (2 * a) * ((double)(x0 >> 40) / 16777216.0));
    ok(((float *)t[1]->data)[0] == w0, "element 0 follows the documented stream");
    ir_tensor_free(again);
    for (int i = 0; i < 8; i++)
        ir_tensor_free(t[i]);
    ir_module_free(m);
}

int main(void)
{
    test_control_flow();
    test_closures();
    test_recursion();
    test_sharing_and_tuples();
    test_errors();
    test_random_params();
    return tap_done();
}
