/* test_passes.c — each pass on small modules: what it must remove, merge or
 * rewrite, that the result type-checks, and that fuse-ops forms the groups
 * TVM's algorithm forms. */
#include <math.h>
#include <string.h>

#include "ir/transform/transform.h"
#include "tests/tap.h"
#include "tests/transform/load.h"

static bool run(ir_module *m, tr_pass_fn fn)
{
    su_diags d = {0};
    tr_options o = {.level = 3};
    bool okk = fn(m, &o, &d) && ir_infer_types(m, &d);
    su_diags_print(stdout, &d);
    su_diags_free(&d);
    return okk;
}

static const char *text(ir_module *m)
{
    static char buf[16384];
    su_buf b = {0};
    ir_print_opts o = {false};
    ir_print_module(&b, m, &o);
    snprintf(buf, sizeof buf, "%s", su_buf_str(&b));
    su_buf_free(&b);
    return buf;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void test_dce(void)
{
    ir_module *m = load("def @main(%x: Tensor[(4), float32]) {\n"
                        "  let %unused = exp(%x);\n  let %y = nn.relu(%x);\n  %y\n}");
    ok(m && run(m, tr_dead_code), "dce: runs");
    const char *t = text(m);
    ok(!strstr(t, "unused") && !strstr(t, "exp(") && strstr(t, "let %y = nn.relu(%x)"), "dce: unused let dropped, used kept");
    ir_module_free(m);
}

static void test_cse(void)
{
    ir_module *m = load("def @main(%x: Tensor[(4), float32]) {\n"
                        "  %0 = nn.relu(%x);\n  %1 = nn.relu(%x);\n  %2 = add(%0, 1f);\n  %3 = add(%1, 1f);\n"
                        "  %4 = add(%0, 2f);\n  (%2, %3, %4)\n}");
    ok(m && run(m, tr_common_subexpr), "cse: runs");
    const char *t = text(m);
    is_int(count(t, "nn.relu("), 1, "cse: two equal relu calls become one");
    is_int(count(t, "add("), 2, "cse: add(., 1f) merged, add(., 2f) kept");
    ir_module_free(m);
}

static void test_simplify_inference(void)
{
    ir_module *m = load("def @main(%x: Tensor[(1, 2, 3, 3), float32], %g: Tensor[(2), float32], %b: Tensor[(2), float32],"
                        " %mu: Tensor[(2), float32], %v: Tensor[(2), float32]) {\n"
                        "  %0 = nn.batch_norm(%x, %g, %b, %mu, %v, epsilon=0.001f);\n  %1 = %0.0;\n"
                        "  %2 = nn.dropout(%1);\n  %3 = %2.0;\n  (%3, %0.1)\n}");
    ok(m && run(m, tr_simplify_inference), "simplify-inference: runs");
    const char *t = text(m);
    ok(!strstr(t, "batch_norm") && !strstr(t, "dropout"), "simplify-inference: batch_norm and dropout are gone");
    ok(strstr(t, "add(%v, 0.001f)") && strstr(t, "rsqrt(") && strstr(t, "expand_dims(") &&
           strstr(t, "axis=1, num_newaxis=2"),
       "simplify-inference: scale = rsqrt(var + eps) * gamma broadcast on axis 1");
    ok(strstr(t, "%mu)") != NULL || strstr(t, ", %mu") != NULL, "simplify-inference: .1 becomes the moving mean");
    ir_module_free(m);
    m = load("def @main(%x: Tensor[(2, 8), float32], %g: Tensor[(8), float32], %b: Tensor[(8), float32]) {\n"
             "  nn.layer_norm(%x, %g, %b)\n}");
    ok(m && run(m, tr_simplify_inference) && strstr(text(m), "nn.layer_norm("), "simplify-inference: layer_norm kept");
    ir_module_free(m);
}

static void test_canonicalize(void)
{
    ir_module *m = load("def @main(%x: Tensor[(1, 4, 5, 5), float32], %b: Tensor[(4), float32], %y: Tensor[(2, 4), float32]) {\n"
                        "  (nn.bias_add(%x, %b), nn.bias_add(%y, %b, axis=-1))\n}");
    ok(m && run(m, tr_canonicalize), "canonicalize: runs");
    const char *t = text(m);
    ok(!strstr(t, "bias_add") && strstr(t, "expand_dims(%b, axis=1, num_newaxis=2)") && strstr(t, "add(%y, %b)"),
       "canonicalize: bias_add becomes add, with expand_dims where the axis is not last (%s)", t);
    ir_module_free(m);
}

static const char *CONV_BLOCK =
    "def @main(%x: Tensor[(1, 4, 8, 8), float32], %w: Tensor[(4, 4, 3, 3), float32], %s: Tensor[(4, 1, 1), float32],\n"
    "          %t: Tensor[(4, 1, 1), float32]) {\n"
    "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);\n  %1 = multiply(%0, %s);\n  %2 = add(%1, %t);\n"
    "  %3 = nn.relu(%2);\n  %4 = add(%3, %x);\n  %5 = nn.relu(%4);\n"
    "  %6 = nn.max_pool2d(%5, pool_size=[2, 2], strides=[2, 2]);\n"
    "  %7 = reshape(%6, newshape=[1, -1]);\n  %8 = transpose(%7, axes=[1, 0]);\n  %9 = exp(%8);\n"
    "  sum(%9, axis=[0])\n}";

static void test_fuse(void)
{
    ir_module *m = load(CONV_BLOCK);
    ok(m && run(m, tr_fuse_ops), "fuse: runs");
    const char *t = text(m);
    is_int(count(t, "Primitive=1"), 4, "fuse: four kernels (conv block, pool, injective chain, exp+sum)");
    ok(strstr(t, "nn.conv2d(%p0, %p1, padding=[1, 1, 1, 1]);\n    %1 = multiply(%0, %p2);\n    %2 = add(%1, %p3);\n"
                 "    %3 = nn.relu(%2);\n    %4 = add(%3, %p0);\n    nn.relu(%4)") != NULL,
       "fuse: conv + scale + shift + relu + residual add + relu in one function (%s)", t);
    ok(strstr(t, "reshape(%p0, newshape=[1, -1]);\n    transpose(%9, axes=[1, 0])") != NULL,
       "fuse: injective ops fuse together");
    /* as in TVM, an elementwise producer joins the reduction, injective ops do not */
    ok(strstr(t, "exp(%p0);\n    sum(%12, axis=[0])") != NULL, "fuse: the reduction takes its elementwise producer");
    /* idempotent: a fused module fuses to itself */
    char before[16384];
    snprintf(before, sizeof before, "%s", t);
    ok(run(m, tr_fuse_ops) && strcmp(before, text(m)) == 0, "fuse: running it again changes nothing");
    /* the printout parses back to the same text */
    ir_module *m2 = load(before);
    ok(m2 && strcmp(text(m2), before) == 0, "fuse: fused module prints and parses as Relay text");
    ir_module_free(m2);
    ir_module_free(m);

    m = load(CONV_BLOCK);
    su_diags d = {0};
    tr_options o = {.level = 3, .max_fuse_depth = 2};
    ok(tr_fuse_ops(m, &o, &d) && ir_infer_types(m, &d), "fuse: with max depth 2");
    t = text(m);
    ok(count(t, "Primitive=1") > 3, "fuse: max depth splits groups (%zu kernels)", count(t, "Primitive=1"));
    su_diags_free(&d);
    ir_module_free(m);
}

static void test_fuse_branches(void)
{
    ir_module *m = load("def @main(%c: bool, %x: Tensor[(1, 4), float32], %w: Tensor[(8, 4), float32]) {\n"
                        "  %0 = nn.dense(%x, %w);\n  %1 = nn.relu(%0);\n"
                        "  if (%c) { %2 = exp(%1); negative(%2) } else { %1 }\n}");
    ok(m && run(m, tr_fuse_ops), "fuse: module with control flow");
    const char *t = text(m);
    ok(strstr(t, "nn.dense(%p0, %p1);\n    nn.relu(%0)") != NULL, "fuse: dense + relu before the if (%s)", t);
    ok(strstr(t, "exp(%p0);\n      negative(") != NULL, "fuse: the branch body is fused on its own");
    ir_module_free(m);
    /* a tuple-returning op keeps its projections outside */
    m = load("def @main(%x: Tensor[(6, 4), float32]) {\n"
             "  %0 = split(%x, indices_or_sections=2);\n  %1 = %0.0;\n  %2 = %0.1;\n  add(%1, %2)\n}");
    ok(m && run(m, tr_fuse_ops), "fuse: split with projections");
    ir_module_free(m);
}

/* conv2d(x, W) * s (+ b * s) with constants of dtype dt, built directly:
 * W = (w0, w1) per output channel, s = (s0, s1) (or s0 alone), b = (1, -1). */
static ir_module *scaled_conv_of(ir_dtype dt, const double w01[2], const double s01[2], bool with_bias,
                                 bool scale_per_channel, int uses_of_conv)
{
    ir_module *m = ir_module_new();
    su_span sp = {0};
    ir_tensor *w = ir_tensor_new(&m->arena, dt, 4, (int64_t[]){2, 1, 1, 1});
    ir_tensor_set(w, 0, w01[0]);
    ir_tensor_set(w, 1, w01[1]);
    ir_tensor *s = scale_per_channel ? ir_tensor_new(&m->arena, dt, 3, (int64_t[]){2, 1, 1})
                                     : ir_tensor_new(&m->arena, dt, 0, NULL);
    ir_tensor_set(s, 0, s01[0]);
    if (scale_per_channel)
        ir_tensor_set(s, 1, s01[1]);
    ir_tensor *b = ir_tensor_new(&m->arena, dt, 3, (int64_t[]){2, 1, 1});
    ir_tensor_set(b, 0, 1);
    ir_tensor_set(b, 1, -1);
    ir_expr *x = ir_var(m, sp, "x", ir_tensor_type(&m->arena, dt, 4, (int64_t[]){1, 1, 2, 2}));
    ir_expr *a[2] = {x, ir_const(m, sp, w)};
    ir_expr *conv = ir_op_call(m, sp, IR_OP_CONV2D, 2, a, NULL), *y = conv;
    if (with_bias) {
        ir_expr *ab[2] = {conv, ir_const(m, sp, b)};
        y = ir_op_call(m, sp, IR_OP_ADD, 2, ab, NULL);
    }
    ir_expr *as[2] = {y, ir_const(m, sp, s)};
    ir_expr *body = ir_op_call(m, sp, IR_OP_MULTIPLY, 2, as, NULL);
    if (uses_of_conv > 1) {
        ir_expr *t[2] = {body, conv};
        body = ir_tuple(m, sp, 2, t);
    }
    ir_module_add(m, "main", ir_global(m, sp, "main"), ir_func(m, sp, 1, &x, NULL, body, 0, NULL));
    su_diags d = {0};
    ir_infer_types(m, &d);
    su_diags_free(&d);
    return m;
}

static ir_module *scaled_conv(bool with_bias, bool scale_per_channel, int uses_of_conv)
{
    static const double w[2] = {2, 3}, s[2] = {10, 100};
    return scaled_conv_of(IR_FLOAT32, w, s, with_bias, scale_per_channel, uses_of_conv);
}

static const float *const_data(const ir_expr *e)
{
    return e->kind == IR_CONST ? e->u.constant.value->data : NULL;
}

/* The constant weight of conv2d call e, or NULL. */
static const ir_tensor *conv_weight(const ir_expr *e)
{
    if (ir_call_op(e) != ir_op_get(IR_OP_CONV2D) || e->u.call.args[1]->kind != IR_CONST)
        return NULL;
    return e->u.call.args[1]->u.constant.value;
}

static void test_fold_scale_axis(void)
{
    ir_module *m = scaled_conv(false, true, 1);
    ok(run(m, tr_fold_scale_axis), "fold-scale-axis: runs");
    const ir_expr *body = m->defs.data[0].func->u.func.body;
    const float *w = ir_call_op(body) == ir_op_get(IR_OP_CONV2D) ? const_data(body->u.call.args[1]) : NULL;
    ok(w && w[0] == 20 && w[1] == 300, "fold-scale-axis: conv2d(x, W) * s becomes conv2d(x, W*s)");
    ir_module_free(m);

    m = scaled_conv(true, true, 1);
    ok(run(m, tr_fold_scale_axis), "fold-scale-axis: through a bias add");
    body = m->defs.data[0].func->u.func.body;
    const ir_expr *conv = ir_call_op(body) == ir_op_get(IR_OP_ADD) ? body->u.call.args[0] : NULL;
    const float *b = ir_call_op(body) == ir_op_get(IR_OP_ADD) ? const_data(body->u.call.args[1]) : NULL;
    w = conv && ir_call_op(conv) == ir_op_get(IR_OP_CONV2D) ? const_data(conv->u.call.args[1]) : NULL;
    ok(w && b && w[0] == 20 && w[1] == 300 && b[0] == 10 && b[1] == -100,
       "fold-scale-axis: (conv + b) * s becomes conv(W*s) + b*s");
    ir_module_free(m);

    m = scaled_conv(false, false, 1);
    ok(run(m, tr_fold_scale_axis), "fold-scale-axis: scalar scale");
    body = m->defs.data[0].func->u.func.body;
    w = ir_call_op(body) == ir_op_get(IR_OP_CONV2D) ? const_data(body->u.call.args[1]) : NULL;
    ok(w && w[0] == 20 && w[1] == 30, "fold-scale-axis: a scalar scale folds into every channel");
    ir_module_free(m);

    m = scaled_conv(false, true, 2);
    ok(run(m, tr_fold_scale_axis), "fold-scale-axis: conv with two users");
    body = m->defs.data[0].func->u.func.body;
    ok(body->kind == IR_TUPLE && ir_call_op(body->u.tuple.fields[0]) == ir_op_get(IR_OP_MULTIPLY),
       "fold-scale-axis: a conv used elsewhere is left alone");
    ir_module_free(m);

    /* float16: W * s computed in float32 and rounded once. 1.5009765625 =
     * 1 + 2^-1 + 2^-10 and 1.0009765625 = 1 + 2^-10 are float16 values whose
     * product needs 21 bits: float16 keeps 11 (rounds to 1.5029296875). */
    static const double w16[2] = {1.5009765625, 3}, s16[2] = {1.0009765625, -0.5};
    m = scaled_conv_of(IR_FLOAT16, w16, s16, true, true, 1);
    ok(run(m, tr_fold_scale_axis), "fold-scale-axis: float16 through a bias add");
    body = m->defs.data[0].func->u.func.body;
    conv = ir_call_op(body) == ir_op_get(IR_OP_ADD) ? body->u.call.args[0] : NULL;
    const ir_tensor *wt = conv ? conv_weight(conv) : NULL;
    const ir_tensor *bt = conv && body->u.call.args[1]->kind == IR_CONST ? body->u.call.args[1]->u.constant.value : NULL;
    _Float16 want0 = (_Float16)((float)w16[0] * (float)s16[0]);
    ok(wt && bt && wt->dtype == IR_FLOAT16 && bt->dtype == IR_FLOAT16 && ir_tensor_get(wt, 0) == (double)want0 &&
           ir_tensor_get(wt, 0) != w16[0] * s16[0] && ir_tensor_get(wt, 1) == -1.5 && ir_tensor_get(bt, 0) == s16[0] &&
           ir_tensor_get(bt, 1) == 0.5,
       "fold-scale-axis: float16 weights and bias, W * s rounded once to float16 (%.10g)",
       wt ? ir_tensor_get(wt, 0) : 0.0);
    ir_module_free(m);
}

static void test_bind_params(void)
{
    ir_module *m = load("def @main(%x: Tensor[(2), float32], %w: Tensor[(2), float32]) { multiply(%x, %w) }");
    su_arena a;
    su_arena_init(&a);
    ir_tensor *w = ir_tensor_new(&a, IR_FLOAT32, 1, (int64_t[]){2});
    const char *names[] = {"w"};
    const ir_tensor *vals[] = {w};
    su_diags d = {0};
    ok(m && tr_bind_params(m, names, vals, 1, &d), "bind-params: binds %%w");
    const char *t = text(m);
    ok(strstr(t, "def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32]") &&
           strstr(t, "multiply(%x, meta[relay.Constant][0])"),
       "bind-params: %%w leaves the signature and becomes a constant (%s)", t);
    ir_module_free(m);
    m = load("def @main(%x: Tensor[(2), float32], %w: Tensor[(3), float32]) { %x }");
    ok(m && !tr_bind_params(m, names, vals, 1, &d) && d.errors &&
           strstr(d.items[d.len - 1].msg, "parameter %w is Tensor[(3), float32], but the value given for it is Tensor[(2), float32]"),
       "bind-params: a shape mismatch names the parameter and both types");
    ir_module_free(m);
    su_diags_free(&d);
    su_arena_free(&a);
}

static void test_fold_constant(void)
{
    ir_module *m = ir_module_new();
    su_span sp = {0};
    ir_tensor *c = ir_tensor_new(&m->arena, IR_FLOAT32, 1, (int64_t[]){4});
    for (int i = 0; i < 4; i++)
        ((float *)c->data)[i] = (float)(i + 1);
    ir_expr *x = ir_var(m, sp, "x", ir_tensor_type(&m->arena, IR_FLOAT32, 1, (int64_t[]){2}));
    /* split(exp(c) * 2, 2).1 + x: everything but the last add is constant */
    ir_expr *k = ir_const(m, sp, c);
    ir_expr *e = ir_op_call(m, sp, IR_OP_EXP, 1, &k, NULL);
    ir_expr *mul[2] = {e, ir_const(m, sp, ir_tensor_scalar(&m->arena, IR_FLOAT32, 2))};
    ir_expr *p = ir_op_call(m, sp, IR_OP_MULTIPLY, 2, mul, NULL);
    const ir_op_def *split = ir_op_get(IR_OP_SPLIT);
    ir_attr_val *vals = su_arena_alloc(&m->arena, sizeof *vals * (size_t)split->schema->n);
    for (int i = 0; i < split->schema->n; i++)
        vals[i] = split->defaults[i];
    vals[ir_op_attr_index(split, "indices_or_sections", 19)] = (ir_attr_val){.kind = IR_AV_INT, .i = 2};
    ir_attrs at = {split->schema->n, vals};
    ir_expr *sp2 = ir_op_call(m, sp, IR_OP_SPLIT, 1, &p, &at);
    ir_expr *add[2] = {ir_proj(m, sp, sp2, 1), x};
    ir_expr *body = ir_op_call(m, sp, IR_OP_ADD, 2, add, NULL);
    ir_module_add(m, "main", ir_global(m, sp, "main"), ir_func(m, sp, 1, &x, NULL, body, 0, NULL));
    su_diags d = {0};
    ok(ir_infer_types(m, &d), "fold-constant: module type-checks");
    ok(run(m, tr_fold_constant), "fold-constant: runs");
    body = m->defs.data[0].func->u.func.body;
    const ir_expr *k2 = body->u.call.args[0];
    const float *v = k2->kind == IR_CONST ? k2->u.constant.value->data : NULL;
    ok(ir_call_op(body) == ir_op_get(IR_OP_ADD) && body->u.call.args[1] == x && v &&
           fabsf(v[0] - 2 * expf(3)) < 1e-4f && fabsf(v[1] - 2 * expf(4)) < 1e-4f,
       "fold-constant: exp, multiply, split and the projection fold into one constant; the add on %%x stays");
    ir_module_free(m);
    su_diags_free(&d);
}

static void test_check_mode(void)
{
    /* "before": relu(x); "now": negative(x) — on random inputs they differ */
    ir_module *m = load("def @main(%x: Tensor[(16), float32]) { nn.relu(%x) }");
    ir_module *m2 = load("def @main(%x: Tensor[(16), float32]) { negative(%x) }");
    ir_global_def before = m->defs.data[0];
    m->defs.data[0].func = m2->defs.data[0].func; /* m2 outlives the check below */
    tr_checker *c = tr_checker_new(1, 0);
    su_buf why = {0};
    ok(!tr_check_interp(c, m, &before, 1, &why) && strstr(su_buf_str(&why), "relative"),
       "check mode: a changed result is caught (%s)", su_buf_str(&why));
    su_buf_clear(&why);
    ok(tr_check_interp(c, m, &m->defs.data[0], 1, &why), "check mode: an unchanged result passes (%s)",
       su_buf_str(&why));
    tr_checker_free(c);
    su_buf_free(&why);
    m->defs.data[0] = before;
    ir_module_free(m);
    ir_module_free(m2);
}

int main(void)
{
    test_dce();
    test_cse();
    test_simplify_inference();
    test_canonicalize();
    test_fuse();
    test_fuse_branches();
    test_fold_scale_axis();
    test_bind_params();
    test_fold_constant();
    test_check_mode();
    return tap_done();
}
