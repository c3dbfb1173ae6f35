/* test_ops.c — the operator table: every op's schema (names and defaults as
 * TVM writes them), its type relation on typical and edge-case arguments,
 * the errors it reports (which must name the op and the shapes involved) and
 * its FLOP count. Relations are called directly through an ir_rel_ctx, with
 * attrs built from the op's defaults plus overrides written as Relay text. */
#include <string.h>

#include "ir/ir.h"
#include "tests/tap.h"

static su_arena A;
static su_diags D;
static bool exercised[IR_OP_COUNT];    /* ops whose relation some check ran */

#define F32 IR_FLOAT32

/* ---- helpers ------------------------------------------------------------ */

/* TEN(dtype, d0, d1, ...): a tensor type. */
#define TEN(dt, ...) \
    ir_tensor_type(&A, dt, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})
#define SCALAR(dt) ir_scalar_type(&A, dt)
/* TUP(t0, t1, ...): a tuple type. */
#define TUP(...) \
    ir_tuple_type(&A, (int)(sizeof((const ir_type *[]){__VA_ARGS__}) / sizeof(ir_type *)), \
                  (const ir_type *[]){__VA_ARGS__})

/* The op's default attrs with overrides: AT(op, "name", "relay text", ...,
 * NULL). Each override is parsed and coerced as the parser would. */
static const ir_attrs *AT(ir_op_id id, ...)
{
    const ir_op_def *op = ir_op_get(id);
    const ir_attrs *def = ir_op_default_attrs(&A, op);
    ir_attr_val *vals = su_arena_alloc(&A, (size_t)(def->n + 1) * sizeof *vals);
    memcpy(vals, def->vals, (size_t)def->n * sizeof *vals);
    va_list ap;
    va_start(ap, id);
    for (const char *name; (name = va_arg(ap, const char *));) {
        const char *text = va_arg(ap, const char *), *why = "";
        int idx = ir_op_attr_index(op, name, strlen(name));
        ir_attr_val raw;
        if (idx < 0 || !ir_attr_parse_literal(&A, text, &raw) ||
            !ir_attr_coerce(&A, op->schema->defs[idx].type, &raw, &vals[idx], &why)) {
            ok(0, "%s: attribute %s=%s is accepted (%s)", op->name, name, text, why);
            break;
        }
    }
    va_end(ap);
    ir_attrs *at = su_arena_alloc(&A, sizeof *at);
    at->n = def->n;
    at->vals = vals;
    return at;
}

/* Runs op's relation on nargs argument types (attrs NULL: defaults). */
static const ir_type *rel(ir_op_id id, const ir_attrs *at, int nargs, ...)
{
    const ir_op_def *op = ir_op_get(id);
    const ir_type *args[8];
    va_list ap;
    va_start(ap, nargs);
    for (int i = 0; i < nargs; i++)
        args[i] = va_arg(ap, const ir_type *);
    va_end(ap);
    ir_rel_ctx cx = {&A, &D, {NULL, 0, 0}, op};
    exercised[id] = true;
    return op->rel(&cx, args, nargs, at ? at : ir_op_default_attrs(&A, op));
}

/* The type as Relay prints it, or the last error when there is none. */
static const char *show(const ir_type *t)
{
    if (t)
        return ir_type_str(&A, t);
    return D.len ? su_arena_printf(&A, "error: %s", D.items[D.len - 1].msg) : "(null, no error)";
}

#define TYPE_IS(got, want, ...) is_str(show(got), want, __VA_ARGS__)

/* Checks that got is NULL and that exactly one new error starts with
 * "OPNAME: " and contains every one of the NULL-terminated strings. */
static void error_has(int line, const ir_type *got, size_t before, ir_op_id id, const char *what, ...)
{
    const char *msg = D.len > before ? D.items[D.len - 1].msg : "";
    const char *name = ir_op_get(id)->name;
    bool good = !got && D.len == before + 1 && strncmp(msg, name, strlen(name)) == 0 &&
                strncmp(msg + strlen(name), ": ", 2) == 0;
    va_list ap;
    va_start(ap, what);
    for (const char *s; (s = va_arg(ap, const char *));)
        good = good && strstr(msg, s);
    va_end(ap);
    if (!tap_ok_at(good, __FILE__, line, "%s: error for %s", name, what))
        diag("got %s", got ? show(got) : su_arena_printf(&A, "message \"%s\"", msg));
}

/* ERR(op, "what", call, "substring", ...): call must fail with such an error. */
#define ERR(id, what, call, ...) do { \
        size_t before_ = D.len; \
        const ir_type *got_ = (call); \
        error_has(__LINE__, got_, before_, id, what, __VA_ARGS__, (const char *)NULL); \
    } while (0)

static int64_t flops(ir_op_id id, const ir_attrs *at, const ir_type *out, int nargs, const ir_type *a0,
                     const ir_type *a1)
{
    const ir_op_def *op = ir_op_get(id);
    const ir_type *args[2] = {a0, a1};
    return op->flops(args, nargs, at ? at : ir_op_default_attrs(&A, op), out);
}

/* ---- schemas ------------------------------------------------------------ */

/* "name=default, ..." of an op's schema, from the default texts. */
static const char *schema_text(ir_op_id id)
{
    const ir_attr_schema *s = ir_op_get(id)->schema;
    su_buf b = {0};
    for (int i = 0; i < s->n; i++)
        su_buf_printf(&b, "%s%s=%s", i ? ", " : "", s->defs[i].name, s->defs[i].default_text);
    const char *r = su_arena_strdup(&A, su_buf_str(&b));
    su_buf_free(&b);
    return r;
}

static void test_schemas(void)
{
    static const struct { ir_op_id id; const char *text; } want[] = {
        {IR_OP_CONV2D, "strides=[1, 1], padding=[0, 0], dilation=[1, 1], groups=1, channels=None, "
                       "kernel_size=None, data_layout=\"NCHW\", kernel_layout=\"OIHW\", out_layout=\"\", "
                       "out_dtype=\"\""},
        {IR_OP_DENSE, "units=None, out_dtype=\"\""},
        {IR_OP_BATCH_MATMUL, "out_dtype=\"\", transpose_a=False, transpose_b=True"},
        {IR_OP_MAX_POOL2D, "pool_size=[1, 1], strides=[1, 1], dilation=[1, 1], padding=[0, 0], "
                           "layout=\"NCHW\", out_layout=\"\", ceil_mode=False"},
        {IR_OP_AVG_POOL2D, "pool_size=[1, 1], strides=[1, 1], dilation=[1, 1], padding=[0, 0], "
                           "layout=\"NCHW\", out_layout=\"\", ceil_mode=False, count_include_pad=False"},
        {IR_OP_GLOBAL_AVG_POOL2D, "layout=\"NCHW\", out_layout=\"\""},
        {IR_OP_CONV3D, "strides=[1, 1, 1], padding=[0, 0, 0], dilation=[1, 1, 1], groups=1, channels=None, "
                       "kernel_size=None, data_layout=\"NCDHW\", kernel_layout=\"OIDHW\", out_layout=\"\", "
                       "out_dtype=\"\""},
        {IR_OP_AVG_POOL3D, "pool_size=[1, 1, 1], strides=[1, 1, 1], dilation=[1, 1, 1], padding=[0, 0, 0], "
                           "layout=\"NCDHW\", out_layout=\"\", ceil_mode=False, count_include_pad=False"},
        {IR_OP_ADAPTIVE_AVG_POOL2D, "output_size=None, layout=\"NCHW\", out_layout=\"\""},
        {IR_OP_SOFTMAX, "axis=-1"},
        {IR_OP_LOG_SOFTMAX, "axis=-1"},
        {IR_OP_LAYER_NORM, "axis=-1, epsilon=1e-05f, center=True, scale=True"},
        {IR_OP_BATCH_NORM, "axis=1, epsilon=1e-05f, center=True, scale=True"},
        {IR_OP_DROPOUT, "rate=0.5f"},
        {IR_OP_BIAS_ADD, "axis=1"},
        {IR_OP_LEAKY_RELU, "alpha=0.25f"},
        {IR_OP_PAD, "pad_width=[], pad_mode=\"constant\""},
        {IR_OP_CLIP, "a_min=0f, a_max=0f"},
        {IR_OP_CAST, "dtype=\"\""},
        {IR_OP_RESHAPE, "newshape=[], allowzero=False"},
        {IR_OP_TRANSPOSE, "axes=None"},
        {IR_OP_SQUEEZE, "axis=None"},
        {IR_OP_EXPAND_DIMS, "axis=0, num_newaxis=1"},
        {IR_OP_CONCATENATE, "axis=0"},
        {IR_OP_SPLIT, "indices_or_sections=1, axis=0"},
        {IR_OP_STRIDED_SLICE, "begin=None, end=None, strides=None, slice_mode=\"end\", axes=None"},
        {IR_OP_TAKE, "batch_dims=0, axis=None, mode=\"clip\""},
        {IR_OP_SUM, "axis=None, keepdims=False, exclude=False"},
        {IR_OP_ARGMAX, "axis=None, keepdims=False, select_last_index=False, exclude=False"},
        {IR_OP_ADD, ""},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        is_str(schema_text(want[i].id), want[i].text, "schema: %s", ir_op_get(want[i].id)->name);
    /* every default reads as Relay text and fits its own declared type */
    for (int id = 0; id < IR_OP_COUNT; id++) {
        const ir_op_def *op = ir_op_get((ir_op_id)id);
        bool good = true;
        for (int j = 0; j < op->schema->n; j++) {
            ir_attr_val raw, v;
            const char *why = NULL;
            good = good && ir_attr_parse_literal(&A, op->schema->defs[j].default_text, &raw) &&
                   ir_attr_coerce(&A, op->schema->defs[j].type, &raw, &v, &why);
        }
        ok(good, "schema: defaults of %s parse and coerce", op->name);
    }
}

/* ---- nn ------------------------------------------------------------------ */

static void test_conv2d(void)
{
    const ir_op_id C = IR_OP_CONV2D;
    const ir_attrs *r50 = AT(C, "strides", "[2, 2]", "padding", "[3, 3]", "channels", "64",
                             "kernel_size", "[7, 7]", NULL);
    const ir_type *d = TEN(F32, 1, 3, 224, 224), *w = TEN(F32, 64, 3, 7, 7);
    const ir_type *out = rel(C, r50, 2, d, w);
    TYPE_IS(out, "Tensor[(1, 64, 112, 112), float32]", "conv2d: 7x7/2 stem, padding [h, w]");
    is_int(flops(C, r50, out, 2, d, w), 2LL * 64 * 112 * 112 * 3 * 7 * 7, "conv2d: flops of the stem");
    TYPE_IS(rel(C, NULL, 2, TEN(F32, 1, 3, 8, 8), TEN(F32, 4, 3, 3, 3)), "Tensor[(1, 4, 6, 6), float32]",
            "conv2d: defaults (no padding, stride 1)");
    TYPE_IS(rel(C, AT(C, "padding", "[1]", NULL), 2, TEN(F32, 1, 64, 56, 56), TEN(F32, 64, 64, 3, 3)),
            "Tensor[(1, 64, 56, 56), float32]", "conv2d: padding with 1 value");
    TYPE_IS(rel(C, AT(C, "padding", "[1, 0, 2, 1]", NULL), 2, TEN(F32, 1, 8, 10, 12), TEN(F32, 16, 8, 3, 3)),
            "Tensor[(1, 16, 11, 11), float32]", "conv2d: padding [top, left, bottom, right]");
    TYPE_IS(rel(C, AT(C, "strides", "2", "padding", "[1, 1]", NULL), 2, TEN(F32, 1, 8, 9, 9),
                TEN(F32, 8, 8, 3, 3)),
            "Tensor[(1, 8, 5, 5), float32]", "conv2d: strides as one integer");
    TYPE_IS(rel(C, AT(C, "strides", "[2, 1]", NULL), 2, TEN(F32, 1, 8, 9, 9), TEN(F32, 8, 8, 3, 3)),
            "Tensor[(1, 8, 4, 7), float32]", "conv2d: different strides per axis");
    TYPE_IS(rel(C, AT(C, "dilation", "[2, 2]", NULL), 2, TEN(F32, 1, 8, 10, 10), TEN(F32, 4, 8, 3, 3)),
            "Tensor[(1, 4, 6, 6), float32]", "conv2d: dilation 2 widens a 3x3 kernel to 5x5");
    const ir_attrs *g2 = AT(C, "groups", "2", NULL);
    d = TEN(F32, 1, 8, 10, 10), w = TEN(F32, 6, 4, 3, 3);
    out = rel(C, g2, 2, d, w);
    TYPE_IS(out, "Tensor[(1, 6, 8, 8), float32]", "conv2d: groups=2");
    is_int(flops(C, g2, out, 2, d, w), 2LL * 6 * 8 * 8 * 4 * 3 * 3, "conv2d: flops with groups count C/groups");
    const ir_attrs *dw = AT(C, "padding", "[1, 1]", "groups", "32", "channels", "32", "kernel_size", "[3, 3]", NULL);
    d = TEN(F32, 1, 32, 112, 112), w = TEN(F32, 32, 1, 3, 3);
    out = rel(C, dw, 2, d, w);
    TYPE_IS(out, "Tensor[(1, 32, 112, 112), float32]", "conv2d: depthwise (groups = channels)");
    is_int(flops(C, dw, out, 2, d, w), 2LL * 32 * 112 * 112 * 9, "conv2d: depthwise flops");
    TYPE_IS(rel(C, AT(C, "out_dtype", "\"int32\"", NULL), 2, TEN(IR_INT8, 1, 3, 8, 8), TEN(IR_INT8, 4, 3, 1, 1)),
            "Tensor[(1, 4, 8, 8), int32]", "conv2d: out_dtype");
    TYPE_IS(rel(C, AT(C, "out_layout", "\"NCHW\"", NULL), 2, TEN(F32, 2, 3, 5, 5), TEN(F32, 4, 3, 5, 5)),
            "Tensor[(2, 4, 1, 1), float32]", "conv2d: kernel as large as the input");

    /* attrs assembled from values, as a pass that rewrites calls does */
    const ir_op_def *op = ir_op_get(C);
    const ir_attrs *def = ir_op_default_attrs(&A, op);
    ir_attr_val vals[16], two[2] = {{.kind = IR_AV_INT, .i = 2}, {.kind = IR_AV_INT, .i = 2}};
    memcpy(vals, def->vals, (size_t)def->n * sizeof *vals);
    vals[ir_op_attr_index(op, "strides", 7)] = (ir_attr_val){.kind = IR_AV_LIST, .n = 2, .items = two};
    vals[ir_op_attr_index(op, "groups", 6)] = (ir_attr_val){.kind = IR_AV_INT, .i = 2};
    ir_attrs byhand = {def->n, vals};
    TYPE_IS(rel(C, &byhand, 2, TEN(F32, 1, 4, 9, 9), TEN(F32, 8, 2, 3, 3)), "Tensor[(1, 8, 4, 4), float32]",
            "conv2d: attrs built by hand (strides 2, groups 2)");
}

static void test_conv2d_errors(void)
{
    const ir_op_id C = IR_OP_CONV2D;
    ERR(C, "channel mismatch", rel(C, NULL, 2, TEN(F32, 1, 3, 224, 224), TEN(F32, 64, 4, 3, 3)),
        "(1, 3, 224, 224)", "(64, 4, 3, 3)");
    ERR(C, "channels not divisible by groups", rel(C, AT(C, "groups", "4", NULL), 2, TEN(F32, 1, 6, 8, 8),
                                                   TEN(F32, 4, 3, 3, 3)), "(1, 6, 8, 8)", "groups=4");
    ERR(C, "output channels not divisible by groups", rel(C, AT(C, "groups", "2", NULL), 2,
                                                          TEN(F32, 1, 4, 8, 8), TEN(F32, 3, 2, 3, 3)),
        "(3, 2, 3, 3)");
    TYPE_IS(rel(C, AT(C, "data_layout", "\"NHWC\"", NULL), 2, TEN(F32, 1, 8, 8, 3), TEN(F32, 4, 3, 3, 3)),
            "Tensor[(1, 6, 6, 4), float32]", "conv2d: NHWC data, OIHW weight, NHWC result");
    TYPE_IS(rel(C, AT(C, "data_layout", "\"NHWC\"", "kernel_layout", "\"HWIO\"", "padding", "[1, 1]", NULL), 2,
                TEN(F32, 2, 8, 8, 3), TEN(F32, 3, 3, 3, 16)),
            "Tensor[(2, 8, 8, 16), float32]", "conv2d: NHWC/HWIO");
    TYPE_IS(rel(C, AT(C, "kernel_layout", "\"HWIO\"", "out_layout", "\"NHWC\"", NULL), 2, TEN(F32, 1, 3, 8, 8),
                TEN(F32, 3, 3, 3, 4)),
            "Tensor[(1, 6, 6, 4), float32]", "conv2d: NCHW data, HWIO weight, NHWC result");
    TYPE_IS(rel(C, AT(C, "data_layout", "\"NHWC\"", "kernel_layout", "\"HWOI\"", "groups", "3", NULL), 2,
                TEN(F32, 1, 8, 8, 3), TEN(F32, 3, 3, 3, 1)),
            "Tensor[(1, 6, 6, 3), float32]", "conv2d: depthwise NHWC/HWOI");
    ERR(C, "channels that do not match in NHWC", rel(C, AT(C, "data_layout", "\"NHWC\"", NULL), 2,
                                                   TEN(F32, 1, 3, 8, 8), TEN(F32, 4, 3, 3, 3)), "channel");
    ERR(C, "a blocked layout", rel(C, AT(C, "data_layout", "\"NCHW8c\"", NULL), 2, TEN(F32, 1, 8, 8, 3),
                                   TEN(F32, 4, 3, 3, 3)), "NCHW8c", "not blocked");
    ERR(C, "a kernel layout of other letters", rel(C, AT(C, "kernel_layout", "\"HWCN\"", NULL), 2,
                                                   TEN(F32, 1, 3, 8, 8), TEN(F32, 4, 3, 3, 3)), "HWCN");
    is_int(flops(C, AT(C, "kernel_layout", "\"HWIO\"", NULL), TEN(F32, 1, 4, 6, 6), 2, TEN(F32, 1, 3, 8, 8),
                 TEN(F32, 3, 3, 3, 4)), 2 * 144 * 27, "conv2d: FLOPs with an HWIO weight");
    ERR(C, "kernel larger than the padded input", rel(C, NULL, 2, TEN(F32, 1, 3, 2, 2), TEN(F32, 4, 3, 3, 3)),
        "(1, 3, 2, 2)", "(4, 3, 3, 3)");
    ERR(C, "channels attribute disagrees with weight", rel(C, AT(C, "channels", "32", NULL), 2,
                                                           TEN(F32, 1, 3, 8, 8), TEN(F32, 64, 3, 3, 3)),
        "channels=32", "(64, 3, 3, 3)");
    ERR(C, "kernel_size disagrees with weight", rel(C, AT(C, "kernel_size", "[5, 5]", NULL), 2,
                                                    TEN(F32, 1, 3, 8, 8), TEN(F32, 64, 3, 3, 3)),
        "kernel_size", "(64, 3, 3, 3)");
    ERR(C, "rank-3 data", rel(C, NULL, 2, TEN(F32, 3, 224, 224), TEN(F32, 64, 3, 3, 3)), "(3, 224, 224)");
    ERR(C, "padding with 3 values", rel(C, AT(C, "padding", "[1, 1, 1]", NULL), 2, TEN(F32, 1, 3, 8, 8),
                                        TEN(F32, 4, 3, 3, 3)), "padding");
    ERR(C, "zero stride", rel(C, AT(C, "strides", "[0, 1]", NULL), 2, TEN(F32, 1, 3, 8, 8),
                              TEN(F32, 4, 3, 3, 3)), "strides");
    ERR(C, "unknown out_dtype", rel(C, AT(C, "out_dtype", "\"int33\"", NULL), 2, TEN(F32, 1, 3, 8, 8),
                                    TEN(F32, 4, 3, 3, 3)), "int33");
    ERR(C, "weight given as a tuple", rel(C, NULL, 2, TEN(F32, 1, 3, 8, 8), TUP(TEN(F32, 4, 3, 3, 3))),
        "argument 1");
}

static void test_dense_matmul(void)
{
    const ir_op_id DN = IR_OP_DENSE, BM = IR_OP_BATCH_MATMUL;
    const ir_type *d = TEN(F32, 4, 8), *w = TEN(F32, 16, 8);
    const ir_type *out = rel(DN, NULL, 2, d, w);
    TYPE_IS(out, "Tensor[(4, 16), float32]", "dense: (M, K) x (N, K)");
    is_int(flops(DN, NULL, out, 2, d, w), 2 * 4 * 16 * 8, "dense: flops 2*M*N*K");
    TYPE_IS(rel(DN, AT(DN, "units", "16", NULL), 2, TEN(F32, 2, 4, 8), w), "Tensor[(2, 4, 16), float32]",
            "dense: batched data keeps leading dims; units agrees");
    TYPE_IS(rel(DN, AT(DN, "out_dtype", "\"int32\"", NULL), 2, TEN(IR_INT8, 4, 8), TEN(IR_INT8, 16, 8)),
            "Tensor[(4, 16), int32]", "dense: out_dtype");
    ERR(DN, "reduction dims differ", rel(DN, NULL, 2, TEN(F32, 4, 8), TEN(F32, 16, 9)), "(4, 8)", "(16, 9)");
    ERR(DN, "units disagrees", rel(DN, AT(DN, "units", "10", NULL), 2, d, w), "units=10", "(16, 8)");
    ERR(DN, "rank-3 weight", rel(DN, NULL, 2, d, TEN(F32, 1, 16, 8)), "(4, 8)", "(1, 16, 8)");

    const ir_type *a = TEN(F32, 2, 3, 4), *b = TEN(F32, 2, 5, 4);
    out = rel(BM, NULL, 2, a, b);
    TYPE_IS(out, "Tensor[(2, 3, 5), float32]", "batch_matmul: transpose_b by default");
    is_int(flops(BM, NULL, out, 2, a, b), 2 * 2 * 3 * 5 * 4, "batch_matmul: flops 2*B*M*N*K");
    TYPE_IS(rel(BM, AT(BM, "transpose_b", "False", NULL), 2, a, TEN(F32, 2, 4, 5)), "Tensor[(2, 3, 5), float32]",
            "batch_matmul: transpose_b=False");
    const ir_attrs *tt = AT(BM, "transpose_a", "True", NULL);
    a = TEN(F32, 2, 4, 3);
    out = rel(BM, tt, 2, a, b);
    TYPE_IS(out, "Tensor[(2, 3, 5), float32]", "batch_matmul: transpose_a=True");
    is_int(flops(BM, tt, out, 2, a, b), 2 * 2 * 3 * 5 * 4, "batch_matmul: flops with transpose_a");
    TYPE_IS(rel(BM, AT(BM, "transpose_a", "1", "transpose_b", "0", NULL), 2, TEN(F32, 1, 4, 3), TEN(F32, 1, 4, 5)),
            "Tensor[(1, 3, 5), float32]", "batch_matmul: both flags flipped (0/1 as bools)");
    TYPE_IS(rel(BM, NULL, 2, TEN(F32, 1, 3, 4), TEN(F32, 6, 5, 4)), "Tensor[(6, 3, 5), float32]",
            "batch_matmul: batch of 1 broadcasts");
    ERR(BM, "reduction dims differ", rel(BM, NULL, 2, TEN(F32, 2, 3, 4), TEN(F32, 2, 5, 6)), "(2, 3, 4)",
        "(2, 5, 6)");
    ERR(BM, "batch dims differ", rel(BM, NULL, 2, TEN(F32, 2, 3, 4), TEN(F32, 3, 5, 4)), "(2, 3, 4)", "(3, 5, 4)");
}

static void test_pools(void)
{
    const ir_op_id MP = IR_OP_MAX_POOL2D, AP = IR_OP_AVG_POOL2D;
    const ir_attrs *r50 = AT(MP, "pool_size", "[3, 3]", "strides", "[2, 2]", "padding", "[1, 1]", NULL);
    const ir_type *d = TEN(F32, 1, 64, 112, 112), *out = rel(MP, r50, 1, d);
    TYPE_IS(out, "Tensor[(1, 64, 56, 56), float32]", "max_pool2d: 3x3/2 with padding 1");
    is_int(flops(MP, r50, out, 1, d, NULL), 64LL * 56 * 56 * 9, "max_pool2d: flops = out elems * window");
    TYPE_IS(rel(MP, AT(MP, "pool_size", "[3, 3]", "strides", "[2, 2]", NULL), 1, TEN(F32, 1, 1, 6, 6)),
            "Tensor[(1, 1, 2, 2), float32]", "max_pool2d: floor mode drops the partial window");
    TYPE_IS(rel(MP, AT(MP, "pool_size", "[3, 3]", "strides", "[2, 2]", "ceil_mode", "True", NULL), 1,
                TEN(F32, 1, 1, 6, 6)),
            "Tensor[(1, 1, 3, 3), float32]", "max_pool2d: ceil_mode keeps the partial window");
    TYPE_IS(rel(MP, AT(MP, "pool_size", "[2, 2]", "strides", "[2, 2]", "padding", "[1, 1]", "ceil_mode", "True",
                       NULL), 1, TEN(F32, 1, 1, 5, 5)),
            "Tensor[(1, 1, 3, 3), float32]", "max_pool2d: ceil_mode drops a window starting in the padding");
    TYPE_IS(rel(AP, AT(AP, "pool_size", "[2, 2]", "dilation", "[2, 2]", "count_include_pad", "True", NULL), 1,
                TEN(F32, 1, 1, 7, 7)),
            "Tensor[(1, 1, 5, 5), float32]", "avg_pool2d: dilation");
    TYPE_IS(rel(AP, AT(AP, "pool_size", "[3, 2]", "padding", "[1, 0, 0, 1]", NULL), 1, TEN(F32, 2, 3, 8, 8)),
            "Tensor[(2, 3, 7, 8), float32]", "avg_pool2d: asymmetric window and padding");
    TYPE_IS(rel(AP, AT(AP, "pool_size", "[7, 7]", "ceil_mode", "True", NULL), 1, TEN(F32, 1, 2048, 7, 7)),
            "Tensor[(1, 2048, 1, 1), float32]", "avg_pool2d: window as large as the input");
    ERR(MP, "window larger than input", rel(MP, AT(MP, "pool_size", "[3, 3]", NULL), 1, TEN(F32, 1, 1, 2, 2)),
        "(1, 1, 2, 2)");
    TYPE_IS(rel(AP, AT(AP, "layout", "\"NHWC\"", "pool_size", "[2, 2]", "strides", "[2, 2]", NULL), 1,
                TEN(F32, 1, 8, 6, 3)), "Tensor[(1, 4, 3, 3), float32]", "avg_pool2d: NHWC");
    TYPE_IS(rel(MP, AT(MP, "layout", "\"NHWC\"", "out_layout", "\"NCHW\"", "pool_size", "[2, 2]", NULL), 1,
                TEN(F32, 1, 8, 6, 3)), "Tensor[(1, 3, 7, 5), float32]", "max_pool2d: NHWC in, NCHW out");
    ERR(AP, "a blocked layout", rel(AP, AT(AP, "layout", "\"NCHW4c\"", NULL), 1, TEN(F32, 1, 8, 8, 3)), "NCHW4c");

    const ir_op_id GP = IR_OP_GLOBAL_AVG_POOL2D, ADP = IR_OP_ADAPTIVE_AVG_POOL2D;
    d = TEN(F32, 1, 2048, 7, 7);
    out = rel(GP, NULL, 1, d);
    TYPE_IS(out, "Tensor[(1, 2048, 1, 1), float32]", "global_avg_pool2d");
    is_int(flops(GP, NULL, out, 1, d, NULL), 2048 * 49, "global_avg_pool2d: flops = input elems");
    ERR(GP, "rank-2 data", rel(GP, NULL, 1, TEN(F32, 1, 2048)), "(1, 2048)");
    TYPE_IS(rel(ADP, NULL, 1, TEN(F32, 1, 8, 7, 9)), "Tensor[(1, 8, 7, 9), float32]",
            "adaptive_avg_pool2d: output_size None keeps H, W");
    TYPE_IS(rel(ADP, AT(ADP, "output_size", "[1]", NULL), 1, TEN(F32, 1, 8, 7, 9)), "Tensor[(1, 8, 1, 1), float32]",
            "adaptive_avg_pool2d: one size for both axes");
    TYPE_IS(rel(ADP, AT(ADP, "output_size", "[2, 3]", NULL), 1, TEN(F32, 1, 8, 7, 9)),
            "Tensor[(1, 8, 2, 3), float32]", "adaptive_avg_pool2d: two sizes");
    TYPE_IS(rel(GP, AT(GP, "layout", "\"NHWC\"", NULL), 1, TEN(F32, 1, 7, 7, 2048)), "Tensor[(1, 1, 1, 2048), float32]",
            "global_avg_pool2d: NHWC");
    TYPE_IS(rel(ADP, AT(ADP, "layout", "\"NHWC\"", "output_size", "[2, 3]", NULL), 1, TEN(F32, 1, 7, 9, 8)),
            "Tensor[(1, 2, 3, 8), float32]", "adaptive_avg_pool2d: NHWC");
}

static void test_norms(void)
{
    const ir_op_id SM = IR_OP_SOFTMAX, LN = IR_OP_LAYER_NORM, BN = IR_OP_BATCH_NORM;
    const ir_type *d = TEN(F32, 2, 10), *out = rel(SM, NULL, 1, d);
    TYPE_IS(out, "Tensor[(2, 10), float32]", "softmax: default axis -1");
    is_int(flops(SM, NULL, out, 1, d, NULL), 4 * 20, "softmax: 4 flops per element");
    TYPE_IS(rel(IR_OP_LOG_SOFTMAX, AT(IR_OP_LOG_SOFTMAX, "axis", "0", NULL), 1, d), "Tensor[(2, 10), float32]",
            "log_softmax: axis 0");
    ERR(SM, "axis out of range", rel(SM, AT(SM, "axis", "2", NULL), 1, d), "axis 2");

    d = TEN(F32, 2, 5, 8);
    out = rel(LN, NULL, 3, d, TEN(F32, 8), TEN(F32, 8));
    TYPE_IS(out, "Tensor[(2, 5, 8), float32]", "layer_norm: gamma, beta on the last axis");
    is_int(flops(LN, NULL, out, 3, d, NULL), 8 * 80, "layer_norm: 8 flops per element");
    TYPE_IS(rel(LN, AT(LN, "axis", "1", "epsilon", "1e-12f", NULL), 3, d, TEN(F32, 5), TEN(F32, 5)),
            "Tensor[(2, 5, 8), float32]", "layer_norm: axis 1");
    ERR(LN, "gamma of the wrong size", rel(LN, NULL, 3, d, TEN(F32, 7), TEN(F32, 8)), "gamma", "(2, 5, 8)", "(7)");

    const ir_type *v = TEN(F32, 16);
    d = TEN(F32, 1, 16, 8, 8);
    out = rel(BN, NULL, 5, d, v, v, v, v);
    TYPE_IS(out, "(Tensor[(1, 16, 8, 8), float32], Tensor[(16), float32], Tensor[(16), float32])",
            "batch_norm: a 3-tuple");
    is_int(flops(BN, NULL, out, 5, d, v), 2 * 1024, "batch_norm: 2 flops per element");
    TYPE_IS(rel(BN, AT(BN, "axis", "-1", NULL), 5, d, TEN(F32, 8), TEN(F32, 8), TEN(F32, 8), TEN(F32, 8)),
            "(Tensor[(1, 16, 8, 8), float32], Tensor[(8), float32], Tensor[(8), float32])",
            "batch_norm: axis -1");
    ERR(BN, "moving_var of the wrong size", rel(BN, NULL, 5, d, v, v, v, TEN(F32, 15)), "moving_var", "(1, 16, 8, 8)");
    ERR(BN, "gamma of another dtype", rel(BN, NULL, 5, d, TEN(IR_FLOAT16, 16), v, v, v), "float16");
}

static void test_nn_misc(void)
{
    const ir_op_id DR = IR_OP_DROPOUT, BA = IR_OP_BIAS_ADD, PD = IR_OP_PAD;
    const ir_type *d = TEN(F32, 2, 3), *out = rel(DR, NULL, 1, d);
    TYPE_IS(out, "(Tensor[(2, 3), float32], Tensor[(2, 3), float32])", "dropout: a 2-tuple");
    is_int(flops(DR, NULL, out, 1, d, NULL), 0, "dropout: no flops");
    ERR(DR, "rate 1.5", rel(DR, AT(DR, "rate", "1.5f", NULL), 1, d), "rate");

    d = TEN(F32, 1, 16, 8, 8);
    out = rel(BA, NULL, 2, d, TEN(F32, 16));
    TYPE_IS(out, "Tensor[(1, 16, 8, 8), float32]", "bias_add: channel axis 1");
    is_int(flops(BA, NULL, out, 2, d, NULL), 1024, "bias_add: one flop per element");
    TYPE_IS(rel(BA, AT(BA, "axis", "-1", NULL), 2, d, TEN(F32, 8)), "Tensor[(1, 16, 8, 8), float32]",
            "bias_add: axis -1");
    ERR(BA, "bias of the wrong size", rel(BA, NULL, 2, d, TEN(F32, 8)), "(1, 16, 8, 8)", "(8)");

    TYPE_IS(rel(IR_OP_BATCH_FLATTEN, NULL, 1, TEN(F32, 2, 3, 4, 5)), "Tensor[(2, 60), float32]", "batch_flatten");
    TYPE_IS(rel(IR_OP_BATCH_FLATTEN, NULL, 1, TEN(F32, 7)), "Tensor[(7, 1), float32]", "batch_flatten: rank 1");

    const ir_attrs *pw = AT(PD, "pad_width", "[[0, 0], [0, 0], [1, 1], [2, 3]]", NULL);
    d = TEN(F32, 1, 3, 4, 4);
    TYPE_IS(rel(PD, pw, 1, d), "Tensor[(1, 3, 6, 9), float32]", "pad: one argument");
    TYPE_IS(rel(PD, AT(PD, "pad_width", "[[1, 0], [0, 2]]", "pad_mode", "\"reflect\"", NULL), 2, TEN(F32, 3, 3),
                SCALAR(F32)),
            "Tensor[(4, 5), float32]", "pad: pad value as second argument, reflect mode");
    ERR(PD, "pad_width with 3 rows for rank 4", rel(PD, AT(PD, "pad_width", "[[0, 0], [1, 1], [1, 1]]", NULL), 1, d),
        "pad_width", "(1, 3, 4, 4)");
    ERR(PD, "negative pad", rel(PD, AT(PD, "pad_width", "[[0, -1]]", NULL), 1, TEN(F32, 4)), "pad_width");
    ERR(PD, "unknown pad_mode", rel(PD, AT(PD, "pad_width", "[[0, 1]]", "pad_mode", "\"wrap\"", NULL), 1,
                                    TEN(F32, 4)), "wrap");
    ERR(PD, "non-scalar pad value", rel(PD, AT(PD, "pad_width", "[[0, 1]]", NULL), 2, TEN(F32, 4), TEN(F32, 1)),
        "(1)");
}

/* ---- elementwise ---------------------------------------------------------- */

static void test_unary(void)
{
    static const ir_op_id unary[] = {
        IR_OP_RELU, IR_OP_LEAKY_RELU, IR_OP_NEGATIVE, IR_OP_ABS, IR_OP_EXP, IR_OP_LOG, IR_OP_SQRT,
        IR_OP_RSQRT, IR_OP_TANH, IR_OP_SIGMOID, IR_OP_ERF, IR_OP_CLIP, IR_OP_COPY, IR_OP_FLOOR, IR_OP_CEIL};
    const ir_type *d = TEN(F32, 2, 3);
    for (size_t i = 0; i < sizeof unary / sizeof *unary; i++) {
        const ir_type *out = rel(unary[i], NULL, 1, d);
        TYPE_IS(out, "Tensor[(2, 3), float32]", "%s: keeps the type", ir_op_get(unary[i])->name);
    }
    is_int(flops(IR_OP_EXP, NULL, d, 1, d, NULL), 6, "exp: one flop per element");
    is_int(flops(IR_OP_COPY, NULL, d, 1, d, NULL), 0, "copy: no flops");
    const ir_attrs *clip = AT(IR_OP_CLIP, "a_min", "0f", "a_max", "6", NULL);
    ok(ir_attr_float(clip, 1) == 6.0, "clip: a_max given as an integer reads as a float");
    TYPE_IS(rel(IR_OP_CLIP, clip, 1, SCALAR(IR_FLOAT16)), "float16", "clip: scalar");
    ok(ir_attr_float(ir_op_default_attrs(&A, ir_op_get(IR_OP_LEAKY_RELU)), 0) == 0.25,
       "leaky_relu: alpha defaults to TVM's 0.25");
    ERR(IR_OP_RELU, "tuple argument", rel(IR_OP_RELU, NULL, 1, TUP(d, d)), "argument 0", "Tensor[(2, 3), float32]");

    const ir_op_id CA = IR_OP_CAST;
    TYPE_IS(rel(CA, AT(CA, "dtype", "\"int32\"", NULL), 1, d), "Tensor[(2, 3), int32]", "cast: to int32");
    TYPE_IS(rel(CA, AT(CA, "dtype", "\"float16\"", NULL), 1, TEN(IR_BOOL, 4)), "Tensor[(4), float16]",
            "cast: bool to float16");
    ERR(CA, "no dtype", rel(CA, NULL, 1, d), "dtype");
    ERR(CA, "unknown dtype", rel(CA, AT(CA, "dtype", "\"foo32\"", NULL), 1, d), "foo32");
}

static void test_binary(void)
{
    static const ir_op_id arith[] = {IR_OP_ADD, IR_OP_SUBTRACT, IR_OP_MULTIPLY, IR_OP_DIVIDE,
                                     IR_OP_POWER, IR_OP_MAXIMUM, IR_OP_MINIMUM};
    static const ir_op_id cmp[] = {IR_OP_EQUAL, IR_OP_NOT_EQUAL, IR_OP_LESS, IR_OP_LESS_EQUAL,
                                   IR_OP_GREATER, IR_OP_GREATER_EQUAL};
    for (size_t i = 0; i < sizeof arith / sizeof *arith; i++)
        TYPE_IS(rel(arith[i], NULL, 2, TEN(F32, 3, 1), TEN(F32, 1, 4)), "Tensor[(3, 4), float32]",
                "%s: (3, 1) with (1, 4)", ir_op_get(arith[i])->name);
    for (size_t i = 0; i < sizeof cmp / sizeof *cmp; i++)
        TYPE_IS(rel(cmp[i], NULL, 2, TEN(IR_INT32, 3, 1), TEN(IR_INT32, 4)), "Tensor[(3, 4), bool]",
                "%s: bool result", ir_op_get(cmp[i])->name);
    const ir_op_id ADD = IR_OP_ADD;
    const ir_type *a = TEN(F32, 1, 3, 1), *b = TEN(F32, 4, 1, 5), *out = rel(ADD, NULL, 2, a, b);
    TYPE_IS(out, "Tensor[(4, 3, 5), float32]", "add: (1, 3, 1) + (4, 1, 5)");
    is_int(flops(ADD, NULL, out, 2, a, b), 60, "add: one flop per output element");
    TYPE_IS(rel(ADD, NULL, 2, SCALAR(F32), TEN(F32, 2, 3)), "Tensor[(2, 3), float32]", "add: scalar + tensor");
    TYPE_IS(rel(ADD, NULL, 2, TEN(F32, 5, 1, 3), TEN(F32, 0, 1)), "Tensor[(5, 0, 3), float32]",
            "add: 1 broadcasts to 0");
    size_t before = D.len;
    ok(!rel(ADD, NULL, 2, TEN(F32, 1, 3), TEN(F32, 4, 5)) && D.len == before + 1, "add: (1, 3) + (4, 5) fails");
    is_str(D.len ? D.items[D.len - 1].msg : "", "add: cannot broadcast shapes (1, 3) and (4, 5)",
           "add: the message names the op and both shapes");
    ERR(IR_OP_MULTIPLY, "dtypes differ", rel(IR_OP_MULTIPLY, NULL, 2, TEN(F32, 2), TEN(IR_INT32, 2)), "float32",
        "int32");

    const ir_type *bt = TEN(IR_BOOL, 2, 1), *bu = TEN(IR_BOOL, 3);
    TYPE_IS(rel(IR_OP_LOGICAL_AND, NULL, 2, bt, bu), "Tensor[(2, 3), bool]", "logical_and");
    TYPE_IS(rel(IR_OP_LOGICAL_OR, NULL, 2, bt, bu), "Tensor[(2, 3), bool]", "logical_or");
    TYPE_IS(rel(IR_OP_LOGICAL_NOT, NULL, 1, bt), "Tensor[(2, 1), bool]", "logical_not");
    ERR(IR_OP_LOGICAL_OR, "float operand", rel(IR_OP_LOGICAL_OR, NULL, 2, bt, TEN(F32, 3)), "bool", "float32");
    ERR(IR_OP_LOGICAL_NOT, "int operand", rel(IR_OP_LOGICAL_NOT, NULL, 1, TEN(IR_INT32, 3)), "int32");

    const ir_op_id W = IR_OP_WHERE;
    TYPE_IS(rel(W, NULL, 3, TEN(IR_BOOL, 3, 1), TEN(F32, 1, 4), TEN(F32, 2, 1, 1)), "Tensor[(2, 3, 4), float32]",
            "where: three-way broadcast");
    ERR(W, "x and y dtypes differ", rel(W, NULL, 3, TEN(IR_BOOL, 3), TEN(F32, 3), TEN(IR_INT32, 3)), "float32",
        "int32");
    ERR(W, "cond not bool", rel(W, NULL, 3, TEN(F32, 3), TEN(F32, 3), TEN(F32, 3)), "bool");
    ERR(W, "cond does not broadcast", rel(W, NULL, 3, TEN(IR_BOOL, 2, 2), TEN(F32, 3, 1), TEN(F32, 3, 1)),
        "(2, 2)", "(3, 1)");
}

/* ---- shape manipulation ------------------------------------------------- */

static void test_reshape(void)
{
    const ir_op_id R = IR_OP_RESHAPE;
    const ir_type *d = TEN(F32, 2, 3, 4);
#define RESHAPE(ns, want) TYPE_IS(rel(R, AT(R, "newshape", ns, NULL), 1, d), want, "reshape: newshape " ns)
    RESHAPE("[6, 4]", "Tensor[(6, 4), float32]");
    RESHAPE("[0, -1]", "Tensor[(2, 12), float32]");
    RESHAPE("[-1]", "Tensor[(24), float32]");
    RESHAPE("[4, 0, -1]", "Tensor[(4, 3, 2), float32]");
    RESHAPE("[2, -2]", "Tensor[(2, 3, 4), float32]");
    RESHAPE("[-3, 4]", "Tensor[(6, 4), float32]");
    RESHAPE("[-4, 1, 2, -2]", "Tensor[(1, 2, 3, 4), float32]");
    RESHAPE("[-4, -1, 1, 3, 4]", "Tensor[(2, 1, 3, 4), float32]");
#undef RESHAPE
    TYPE_IS(rel(R, AT(R, "newshape", "24", NULL), 1, d), "Tensor[(24), float32]", "reshape: newshape as an integer");
    TYPE_IS(rel(R, AT(R, "newshape", "[0, 3]", "allowzero", "1", NULL), 1, TEN(F32, 0, 3)), "Tensor[(0, 3), float32]",
            "reshape: allowzero keeps a real 0");
    TYPE_IS(rel(R, NULL, 1, TEN(F32, 1, 1)), "float32", "reshape: [] makes a scalar of one element");
    is_int(flops(R, NULL, d, 1, d, NULL), 0, "reshape: no flops");
    ERR(R, "wrong element count", rel(R, AT(R, "newshape", "[4, 2]", NULL), 1, TEN(F32, 2, 3)), "(2, 3)", "[4, 2]",
        "6 elements", "8 elements");
    ERR(R, "-1 that does not divide", rel(R, AT(R, "newshape", "[-1, 5]", NULL), 1, TEN(F32, 2, 3)), "(2, 3)",
        "[-1, 5]");
    ERR(R, "two -1", rel(R, AT(R, "newshape", "[-1, -1]", NULL), 1, d), "(2, 3, 4)", "[-1, -1]");
    ERR(R, "0 past the last axis", rel(R, AT(R, "newshape", "[0, 0, 0, 0]", NULL), 1, d), "(2, 3, 4)");
    ERR(R, "extents whose product overflows",
        rel(R, AT(R, "newshape", "[4294967296, 4294967296, 4294967296]", NULL), 1, d), "(2, 3, 4)", "4294967296");
}

static void test_transpose_squeeze(void)
{
    const ir_op_id T = IR_OP_TRANSPOSE, S = IR_OP_SQUEEZE, E = IR_OP_EXPAND_DIMS;
    const ir_type *d = TEN(F32, 2, 3, 4);
    TYPE_IS(rel(T, NULL, 1, d), "Tensor[(4, 3, 2), float32]", "transpose: axes None reverses");
    TYPE_IS(rel(T, AT(T, "axes", "[0, 2, 1]", NULL), 1, d), "Tensor[(2, 4, 3), float32]", "transpose: [0, 2, 1]");
    TYPE_IS(rel(T, AT(T, "axes", "[-1, 0, 1]", NULL), 1, d), "Tensor[(4, 2, 3), float32]",
            "transpose: negative axes");
    ERR(T, "repeated axis", rel(T, AT(T, "axes", "[0, 0, 1]", NULL), 1, d), "[0, 0, 1]");
    ERR(T, "too few axes", rel(T, AT(T, "axes", "[0, 1]", NULL), 1, d), "[0, 1]", "(2, 3, 4)");

    d = TEN(F32, 1, 3, 1, 4);
    TYPE_IS(rel(S, NULL, 1, d), "Tensor[(3, 4), float32]", "squeeze: axis None drops every 1");
    TYPE_IS(rel(S, AT(S, "axis", "[0]", NULL), 1, d), "Tensor[(3, 1, 4), float32]", "squeeze: axis [0]");
    TYPE_IS(rel(S, AT(S, "axis", "[-2]", NULL), 1, d), "Tensor[(1, 3, 4), float32]", "squeeze: axis [-2]");
    TYPE_IS(rel(S, AT(S, "axis", "[]", NULL), 1, d), "Tensor[(1, 3, 1, 4), float32]", "squeeze: axis [] drops none");
    ERR(S, "axis of extent 3", rel(S, AT(S, "axis", "[1]", NULL), 1, d), "(1, 3, 1, 4)", "axis 1");
    ERR(S, "axis out of range", rel(S, AT(S, "axis", "[4]", NULL), 1, d), "axis 4");

    d = TEN(F32, 2, 3);
    TYPE_IS(rel(E, NULL, 1, d), "Tensor[(1, 2, 3), float32]", "expand_dims: axis 0");
    TYPE_IS(rel(E, AT(E, "axis", "-1", NULL), 1, d), "Tensor[(2, 3, 1), float32]", "expand_dims: axis -1");
    TYPE_IS(rel(E, AT(E, "axis", "1", "num_newaxis", "2", NULL), 1, d), "Tensor[(2, 1, 1, 3), float32]",
            "expand_dims: num_newaxis 2");
    TYPE_IS(rel(E, AT(E, "axis", "0", NULL), 1, SCALAR(F32)), "Tensor[(1), float32]", "expand_dims: of a scalar");
    ERR(E, "axis out of range", rel(E, AT(E, "axis", "3", NULL), 1, d), "axis 3");
}

static void test_concat_split(void)
{
    const ir_op_id C = IR_OP_CONCATENATE, S = IR_OP_SPLIT;
    TYPE_IS(rel(C, NULL, 1, TUP(TEN(F32, 2, 3), TEN(F32, 4, 3), TEN(F32, 1, 3))), "Tensor[(7, 3), float32]",
            "concatenate: three tensors on axis 0");
    TYPE_IS(rel(C, AT(C, "axis", "-1", NULL), 1, TUP(TEN(F32, 2, 3), TEN(F32, 2, 5))), "Tensor[(2, 8), float32]",
            "concatenate: axis -1");
    TYPE_IS(rel(C, NULL, 1, TUP(TEN(F32, 2, 3))), "Tensor[(2, 3), float32]", "concatenate: a 1-tuple");
    ERR(C, "other dims differ", rel(C, NULL, 1, TUP(TEN(F32, 2, 3), TEN(F32, 4, 4))), "(2, 3)", "(4, 4)");
    ERR(C, "dtypes differ", rel(C, NULL, 1, TUP(TEN(F32, 2, 3), TEN(IR_INT32, 2, 3))), "float32", "int32");
    ERR(C, "a tensor instead of a tuple", rel(C, NULL, 1, TEN(F32, 2, 3)), "tuple", "Tensor[(2, 3), float32]");

    const ir_type *d = TEN(F32, 6, 4);
    TYPE_IS(rel(S, AT(S, "indices_or_sections", "3", NULL), 1, d),
            "(Tensor[(2, 4), float32], Tensor[(2, 4), float32], Tensor[(2, 4), float32])", "split: 3 sections");
    TYPE_IS(rel(S, NULL, 1, d), "(Tensor[(6, 4), float32],)", "split: default is one section");
    TYPE_IS(rel(S, AT(S, "indices_or_sections", "[1, 4]", NULL), 1, d),
            "(Tensor[(1, 4), float32], Tensor[(3, 4), float32], Tensor[(2, 4), float32])", "split: indices [1, 4]");
    TYPE_IS(rel(S, AT(S, "indices_or_sections", "[1]", "axis", "-1", NULL), 1, d),
            "(Tensor[(6, 1), float32], Tensor[(6, 3), float32])", "split: indices on axis -1");
    ERR(S, "sections that do not divide", rel(S, AT(S, "indices_or_sections", "4", NULL), 1, d), "(6, 4)", "4");
    ERR(S, "descending indices", rel(S, AT(S, "indices_or_sections", "[4, 1]", NULL), 1, d), "(6, 4)");
    ERR(S, "index past the end", rel(S, AT(S, "indices_or_sections", "[2, 6]", NULL), 1, d), "(6, 4)");
    TYPE_IS(rel(S, NULL, 1, TEN(F32, 0, 4)), "(Tensor[(0, 4), float32],)", "split: an empty axis into 1");
    ERR(S, "an empty axis into 3", rel(S, AT(S, "indices_or_sections", "3", NULL), 1, TEN(F32, 0, 4)), "(0, 4)");
}

static void test_strided_slice(void)
{
    const ir_op_id SS = IR_OP_STRIDED_SLICE;
    const ir_type *d = TEN(F32, 10, 8);
#define SLICE(want, ...) TYPE_IS(rel(SS, AT(SS, __VA_ARGS__, NULL), 1, d), want, "strided_slice: " #__VA_ARGS__)
    SLICE("Tensor[(5, 8), float32]", "begin", "[2]", "end", "[7]");
    SLICE("Tensor[(4, 3), float32]", "begin", "[1, 0]", "end", "[9, 8]", "strides", "[2, 3]");
    SLICE("Tensor[(2, 8), float32]", "begin", "[-3]", "end", "[-1]");
    SLICE("Tensor[(3, 8), float32]", "begin", "[8]", "end", "[2]", "strides", "[-2]");
    SLICE("Tensor[(10, 8), float32]", "begin", "[-1]", "end", "[-11]", "strides", "[-1]");
    SLICE("Tensor[(9, 8), float32]", "begin", "[9]", "end", "[0]", "strides", "[-1]");
    SLICE("Tensor[(10, 8), float32]", "begin", "[0]", "end", "[100]");
    SLICE("Tensor[(3, 8), float32]", "begin", "[-100]", "end", "[3]");
    SLICE("Tensor[(0, 8), float32]", "begin", "[5]", "end", "[2]");
    SLICE("Tensor[(10, 4), float32]", "begin", "[2]", "end", "[6]", "axes", "[1]");
    SLICE("Tensor[(10, 4), float32]", "begin", "[0]", "end", "[8]", "strides", "[2]", "axes", "[-1]");
    SLICE("Tensor[(3, 2), float32]", "begin", "[0, 1]", "end", "[3, 7]", "strides", "[1, 3]", "axes", "[0, 1]");
    SLICE("Tensor[(3, 6), float32]", "begin", "[1, 2]", "end", "[3, -1]", "slice_mode", "\"size\"");
    SLICE("Tensor[(2, 8), float32]", "begin", "[-2]", "end", "[5]", "slice_mode", "\"size\"");
    SLICE("Tensor[(1, 8), float32]", "begin", "[3]", "end", "[9223372036854775807]", "strides",
          "[9223372036854775807]");
    SLICE("Tensor[(1, 8), float32]", "begin", "[-1]", "end", "[-9223372036854775807]", "strides",
          "[-9223372036854775807]");
#undef SLICE
    ERR(SS, "zero stride", rel(SS, AT(SS, "begin", "[0]", "end", "[2]", "strides", "[0]", NULL), 1, d), "strides");
    ERR(SS, "more begins than axes", rel(SS, AT(SS, "begin", "[0, 0, 0]", "end", "[1, 1, 1]", NULL), 1, d),
        "(10, 8)", "[0, 0, 0]");
    ERR(SS, "axes and begin of different lengths",
        rel(SS, AT(SS, "begin", "[0, 0]", "end", "[1, 1]", "axes", "[1]", NULL), 1, d), "(10, 8)");
    ERR(SS, "unknown slice_mode", rel(SS, AT(SS, "begin", "[0]", "end", "[1]", "slice_mode", "\"step\"", NULL), 1,
                                      d), "step");
}

/* zeros_like, ones_like, full, shape_of */
static void test_init(void)
{
    const ir_op_id F = IR_OP_FULL, SO = IR_OP_SHAPE_OF;
    TYPE_IS(rel(IR_OP_ZEROS_LIKE, NULL, 1, TEN(IR_INT8, 2, 5)), "Tensor[(2, 5), int8]", "zeros_like: the argument's type");
    TYPE_IS(rel(IR_OP_ONES_LIKE, NULL, 1, TEN(F32, 7)), "Tensor[(7), float32]", "ones_like: the argument's type");
    ERR(IR_OP_ONES_LIKE, "a tuple", rel(IR_OP_ONES_LIKE, NULL, 1, TUP(TEN(F32, 7))), "tensor");
    TYPE_IS(rel(F, AT(F, "shape", "[2, 3]", "dtype", "\"int64\"", NULL), 1, SCALAR(F32)), "Tensor[(2, 3), int64]",
            "full: shape and dtype from the attributes");
    TYPE_IS(rel(F, AT(F, "shape", "[4]", NULL), 1, SCALAR(IR_INT32)), "Tensor[(4), int32]",
            "full: dtype \"\" is the fill value's");
    TYPE_IS(rel(F, AT(F, "shape", "[]", NULL), 1, SCALAR(F32)), "float32", "full: an empty shape is a scalar");
    ERR(F, "no shape", rel(F, NULL, 1, SCALAR(F32)), "shape attribute is required");
    ERR(F, "a tensor fill value", rel(F, AT(F, "shape", "[2]", NULL), 1, TEN(F32, 2)), "scalar", "Tensor[(2), float32]");
    ERR(F, "a negative extent", rel(F, AT(F, "shape", "[2, -1]", NULL), 1, SCALAR(F32)), "-1");
    ERR(F, "an unknown dtype", rel(F, AT(F, "shape", "[2]", "dtype", "\"float8\"", NULL), 1, SCALAR(F32)), "float8");
    TYPE_IS(rel(SO, NULL, 1, TEN(F32, 1, 3, 224, 224)), "Tensor[(4), int32]", "shape_of: the rank, int32");
    TYPE_IS(rel(SO, AT(SO, "dtype", "\"int64\"", NULL), 1, SCALAR(F32)), "Tensor[(0), int64]", "shape_of: a scalar's");
    ERR(SO, "a float dtype", rel(SO, AT(SO, "dtype", "\"float32\"", NULL), 1, TEN(F32, 2)), "integer", "float32");
    is_int(flops(IR_OP_FULL, AT(F, "shape", "[2]", NULL), TEN(F32, 2), 1, SCALAR(F32), NULL), 0, "full: no FLOPs");
}

/* layout strings, layout_transform, stack */
static void test_layouts(void)
{
    ir_layout l;
    ok(!ir_layout_parse("NCHW16c", &l) && l.n == 5 && l.axis[4] == 'c' && l.factor[4] == 16 && l.factor[1] == 0 &&
           ir_layout_factor(&l, 'C') == 16 && ir_layout_factor(&l, 'H') == 1,
       "layout: NCHW16c is five axes, c of 16 split off C");
    static const char *const bad[] = {"", "NCHWc", "N3CHW", "NCHWW", "NCHW4d", "NC-HW"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ok(ir_layout_parse(bad[i], &l) != NULL, "layout: \"%s\" is refused", bad[i]);
    const ir_op_id LT = IR_OP_LAYOUT_TRANSFORM, S = IR_OP_STACK;
#define LAY(src, dst) AT(LT, "src_layout", "\"" src "\"", "dst_layout", "\"" dst "\"", NULL)
    const ir_type *x = TEN(F32, 1, 32, 7, 9);
    TYPE_IS(rel(LT, LAY("NCHW", "NHWC"), 1, x), "Tensor[(1, 7, 9, 32), float32]", "layout_transform: NCHW to NHWC");
    TYPE_IS(rel(LT, LAY("NCHW", "NCHW8c"), 1, x), "Tensor[(1, 4, 7, 9, 8), float32]", "layout_transform: to NCHW8c");
    TYPE_IS(rel(LT, LAY("NCHW8c", "NHWC16c"), 1, TEN(F32, 1, 4, 7, 9, 8)), "Tensor[(1, 7, 9, 2, 16), float32]",
            "layout_transform: between two blockings");
    ERR(LT, "a rank that differs", rel(LT, LAY("NCHW", "NHWC"), 1, TEN(F32, 2, 3)), "rank 2", "4 axes");
    ERR(LT, "a block that does not divide", rel(LT, LAY("NCHW", "NCHW5c"), 1, x), "32", "5");
    ERR(LT, "a sub-axis extent that differs", rel(LT, LAY("NCHW8c", "NCHW"), 1, TEN(F32, 1, 4, 7, 9, 4)), "8");
    ERR(LT, "a missing axis", rel(LT, LAY("NCHW", "NCH"), 1, x), "W");
    ERR(LT, "a malformed layout", rel(LT, LAY("NCHW", "NC4HW"), 1, x), "NC4HW");
#undef LAY
    const ir_type *a = TEN(F32, 2, 3);
    TYPE_IS(rel(S, NULL, 1, TUP(a, a, a)), "Tensor[(3, 2, 3), float32]", "stack: a new axis 0");
    TYPE_IS(rel(S, AT(S, "axis", "-1", NULL), 1, TUP(a, a)), "Tensor[(2, 3, 2), float32]", "stack: axis -1 is new last");
    TYPE_IS(rel(S, AT(S, "axis", "2", NULL), 1, TUP(a)), "Tensor[(2, 3, 1), float32]", "stack: axis = rank");
    ERR(S, "shapes that differ", rel(S, NULL, 1, TUP(a, TEN(F32, 3, 2))), "(2, 3)", "(3, 2)");
    ERR(S, "an axis out of range", rel(S, AT(S, "axis", "3", NULL), 1, TUP(a, a)), "3");
    ERR(S, "a tensor instead of a tuple", rel(S, NULL, 1, a), "tuple");
}

/* nn.contrib_conv2d_NCHWc: conv2d's relation on the tensors it blocks */
static void test_conv2d_nchwc(void)
{
    const ir_op_id K = IR_OP_CONV2D_NCHWC;
#define NCHWC(d, k, o) AT(K, "data_layout", "\"" d "\"", "kernel_layout", "\"" k "\"", "out_layout", "\"" o "\"", \
                          "padding", "[1, 1]", NULL)
    const ir_type *x = TEN(F32, 1, 4, 7, 9, 8), *w = TEN(F32, 2, 4, 3, 3, 8, 16);
    TYPE_IS(rel(K, NCHWC("NCHW8c", "OIHW8i16o", ""), 2, x, w), "Tensor[(1, 2, 7, 9, 16), float32]",
            "contrib_conv2d_NCHWc: 32 to 32 channels, 8c in, 16c out");
    TYPE_IS(rel(K, NCHWC("NCHW3c", "OIHW3i4o", "NCHW4c"), 2, TEN(F32, 1, 1, 5, 5, 3), TEN(F32, 2, 1, 3, 3, 3, 4)),
            "Tensor[(1, 2, 5, 5, 4), float32]", "contrib_conv2d_NCHWc: a stem of 3 channels in one block");
    ERR(K, "plain layouts", rel(K, NULL, 2, x, w), "NCHW[x]c");
    ERR(K, "a weight block that differs from the data's", rel(K, NCHWC("NCHW8c", "OIHW4i16o", ""), 2, x, w), "8c");
    ERR(K, "an out_layout block that differs from the weight's", rel(K, NCHWC("NCHW8c", "OIHW8i16o", "NCHW8c"), 2, x, w),
        "16o");
    ERR(K, "groups", rel(K, AT(K, "data_layout", "\"NCHW8c\"", "kernel_layout", "\"OIHW8i16o\"", "groups", "2", NULL), 2, x,
                         w), "groups=2");
    ERR(K, "data whose last axis is not the block", rel(K, NCHWC("NCHW8c", "OIHW8i16o", ""), 2, TEN(F32, 1, 4, 7, 9, 4), w),
        "rank 5");
    ERR(K, "a weight of the wrong blocks", rel(K, NCHWC("NCHW8c", "OIHW8i16o", ""), 2, x, TEN(F32, 2, 4, 3, 3, 8, 8)),
        "rank 6");
    ERR(K, "channels that do not match (conv2d's check)", rel(K, NCHWC("NCHW8c", "OIHW8i16o", ""), 2, x,
                                                              TEN(F32, 2, 2, 3, 3, 8, 16)), "channel mismatch");
    is_int(flops(K, NCHWC("NCHW8c", "OIHW8i16o", ""), TEN(F32, 1, 2, 7, 9, 16), 2, x, w), 2LL * 32 * 63 * 32 * 9,
           "contrib_conv2d_NCHWc: FLOPs as conv2d's (2 N K OH OW C KH KW)");
#undef NCHWC
    /* pools on blocked data: the plain relation on the tensor they block */
    const ir_op_id MP = IR_OP_MAX_POOL2D, GP = IR_OP_GLOBAL_AVG_POOL2D, AP = IR_OP_ADAPTIVE_AVG_POOL2D;
    TYPE_IS(rel(MP, AT(MP, "pool_size", "[3, 3]", "strides", "[2, 2]", "padding", "[1, 1]", "layout", "\"NCHW8c\"", NULL),
                1, x), "Tensor[(1, 4, 4, 5, 8), float32]", "max_pool2d: NCHW8c");
    TYPE_IS(rel(GP, AT(GP, "layout", "\"NCHW8c\"", NULL), 1, x), "Tensor[(1, 4, 1, 1, 8), float32]",
            "global_avg_pool2d: NCHW8c");
    TYPE_IS(rel(AP, AT(AP, "output_size", "[2, 3]", "layout", "\"NCHW8c\"", "out_layout", "\"NCHW8c\"", NULL), 1, x),
            "Tensor[(1, 4, 2, 3, 8), float32]", "adaptive_avg_pool2d: NCHW8c");
    ERR(MP, "rank-4 data in a blocked layout", rel(MP, AT(MP, "layout", "\"NCHW8c\"", NULL), 1, TEN(F32, 1, 32, 7, 9)),
        "NCHW8c", "rank 5");
    ERR(MP, "an out_layout of another block", rel(MP, AT(MP, "layout", "\"NCHW8c\"", "out_layout", "\"NCHW4c\"", NULL), 1,
                                                  x), "unsupported layout");
}

/* nn.upsampling, image.resize2d */
static void test_image(void)
{
    const ir_op_id U = IR_OP_UPSAMPLING, R = IR_OP_RESIZE2D;
    const ir_type *x = TEN(F32, 1, 3, 5, 7);
    TYPE_IS(rel(U, AT(U, "scale_h", "2f", "scale_w", "3f", NULL), 1, x), "Tensor[(1, 3, 10, 21), float32]",
            "upsampling: integer scales");
    TYPE_IS(rel(U, AT(U, "scale_h", "1.5f", "scale_w", "2.5f", NULL), 1, x), "Tensor[(1, 3, 8, 18), float32]",
            "upsampling: extents rounded as TVM rounds them (7.5 to 8, 17.5 to 18: ties to even)");
    TYPE_IS(rel(U, AT(U, "scale_h", "2f", "layout", "\"NHWC\"", NULL), 1, TEN(F32, 1, 5, 7, 3)),
            "Tensor[(1, 10, 7, 3), float32]", "upsampling: NHWC");
    TYPE_IS(rel(U, AT(U, "method", "\"bicubic\"", NULL), 1, x), "Tensor[(1, 3, 5, 7), float32]", "upsampling: bicubic");
    ERR(U, "bicubic on integers", rel(U, AT(U, "method", "\"bicubic\"", NULL), 1, TEN(IR_INT32, 1, 3, 5, 7)),
        "cubic interpolation needs float data", "int32");
    ERR(U, "an unknown method", rel(U, AT(U, "method", "\"area\"", NULL), 1, x), "unknown method");
    ERR(U, "another layout", rel(U, AT(U, "layout", "\"NCHW4c\"", NULL), 1, x), "NCHW and NHWC");
    ERR(U, "rank 3", rel(U, NULL, 1, TEN(F32, 3, 5, 7)), "rank 4");
    ERR(U, "a zero scale", rel(U, AT(U, "scale_h", "0f", NULL), 1, x), "positive");
    ERR(U, "bilinear on integers", rel(U, AT(U, "method", "\"bilinear\"", NULL), 1, TEN(IR_INT32, 1, 3, 5, 7)),
        "float", "int32");
    TYPE_IS(rel(R, AT(R, "size", "[9, 4]", NULL), 1, x), "Tensor[(1, 3, 9, 4), float32]", "resize2d: size");
    TYPE_IS(rel(R, AT(R, "size", "[2, 2]", "out_dtype", "\"float64\"", NULL), 1, x), "Tensor[(1, 3, 2, 2), float64]",
            "resize2d: out_dtype");
    ERR(R, "tf_crop_and_resize",
        rel(R, AT(R, "size", "[2, 2]", "coordinate_transformation_mode", "\"tf_crop_and_resize\"", NULL), 1, x),
        "tf_crop_and_resize");
    ERR(R, "an unknown rounding", rel(R, AT(R, "size", "[2, 2]", "rounding_method", "\"up\"", NULL), 1, x),
        "rounding_method");
    ERR(R, "a one-extent size", rel(R, AT(R, "size", "[2]", NULL), 1, x), "two");
    is_int(flops(R, AT(R, "size", "[2, 2]", NULL), TEN(F32, 1, 3, 2, 2), 1, x, NULL), 72, "resize2d: 6 FLOPs an element");
    TYPE_IS(rel(R, AT(R, "size", "[4, 4]", "method", "\"cubic\"", "cubic_exclude", "1", NULL), 1, x),
            "Tensor[(1, 3, 4, 4), float32]", "resize2d: cubic with exclude");
    is_int(flops(R, AT(R, "size", "[2, 2]", "method", "\"cubic\"", NULL), TEN(F32, 1, 3, 2, 2), 1, x, NULL), 480,
           "resize2d: cubic, 40 FLOPs an element");
}

static void test_conv1d(void)
{
    const ir_op_id C = IR_OP_CONV1D;
    const ir_type *x = TEN(F32, 2, 4, 17), *w = TEN(F32, 6, 4, 3);
    TYPE_IS(rel(C, NULL, 2, x, w), "Tensor[(2, 6, 15), float32]", "conv1d: no padding");
    TYPE_IS(rel(C, AT(C, "strides", "[2]", "padding", "[2, 1]", "dilation", "[2]", NULL), 2, x, w),
            "Tensor[(2, 6, 8), float32]", "conv1d: stride, dilation, asymmetric padding");
    TYPE_IS(rel(C, AT(C, "padding", "[1]", "groups", "2", NULL), 2, x, TEN(F32, 6, 2, 3)), "Tensor[(2, 6, 17), float32]",
            "conv1d: one padding value, groups");
    ERR(C, "channel mismatch", rel(C, NULL, 2, x, TEN(F32, 6, 3, 3)), "(2, 4, 17)", "(6, 3, 3)");
    ERR(C, "rank 4 data", rel(C, NULL, 2, TEN(F32, 1, 4, 8, 8), w), "rank 3");
    ERR(C, "NWC layout", rel(C, AT(C, "data_layout", "\"NWC\"", NULL), 2, x, w), "NWC", "only NCW/OIW");
    ERR(C, "two strides", rel(C, AT(C, "strides", "[1, 1]", NULL), 2, x, w), "strides");
    ERR(C, "kernel_size that differs", rel(C, AT(C, "kernel_size", "[5]", NULL), 2, x, w), "kernel_size=[5]");
    ERR(C, "a kernel past the data", rel(C, NULL, 2, TEN(F32, 1, 4, 2), w), "does not fit");
    is_int(flops(C, NULL, TEN(F32, 2, 6, 15), 2, x, w), 2 * 180 * 12, "conv1d: 2 * out * I * K FLOPs");
}

static void test_conv_transpose(void)
{
    const ir_op_id T2 = IR_OP_CONV2D_TRANSPOSE, T1 = IR_OP_CONV1D_TRANSPOSE;
    const ir_type *x = TEN(F32, 2, 4, 5, 6), *w = TEN(F32, 4, 3, 3, 3);
    TYPE_IS(rel(T2, NULL, 2, x, w), "Tensor[(2, 3, 7, 8), float32]", "conv2d_transpose: (H - 1) + K");
    TYPE_IS(rel(T2, AT(T2, "strides", "[2, 2]", "padding", "[1, 1]", "output_padding", "[1, 1]", NULL), 2, x, w),
            "Tensor[(2, 3, 10, 12), float32]", "conv2d_transpose: stride 2, padding, output_padding");
    TYPE_IS(rel(T2, AT(T2, "groups", "2", "padding", "[0, 1, 1, 0]", NULL), 2, x, w), "Tensor[(2, 6, 6, 7), float32]",
            "conv2d_transpose: groups multiply the output channels; four paddings");
    ERR(T2, "channel mismatch", rel(T2, NULL, 2, x, TEN(F32, 3, 3, 3, 3)), "(2, 4, 5, 6)", "(3, 3, 3, 3)");
    ERR(T2, "output_padding as large as the stride", rel(T2, AT(T2, "output_padding", "[1, 1]", NULL), 2, x, w),
        "output_padding");
    ERR(T2, "OIHW kernel layout", rel(T2, AT(T2, "kernel_layout", "\"OIHW\"", NULL), 2, x, w), "OIHW", "IOHW");
    ERR(T2, "channels that disagree", rel(T2, AT(T2, "channels", "4", NULL), 2, x, w), "channels=4");
    TYPE_IS(rel(T1, AT(T1, "strides", "[3]", "padding", "[1, 2]", "output_padding", "[2]", NULL), 2, TEN(F32, 2, 4, 9),
                TEN(F32, 4, 2, 4)), "Tensor[(2, 2, 27), float32]", "conv1d_transpose");
    ERR(T1, "rank 4 data", rel(T1, NULL, 2, x, w), "rank 3");
    is_int(flops(T2, NULL, TEN(F32, 2, 3, 7, 8), 2, x, w), 2 * 240 * 27, "conv2d_transpose: 2 * in * taps per channel");
    const ir_op_id T3 = IR_OP_CONV3D_TRANSPOSE;
    const ir_type *x3 = TEN(F32, 1, 4, 3, 4, 5), *w3 = TEN(F32, 4, 2, 3, 3, 2);
    TYPE_IS(rel(T3, NULL, 2, x3, w3), "Tensor[(1, 2, 5, 6, 6), float32]", "conv3d_transpose: (D - 1) + K");
    TYPE_IS(rel(T3, AT(T3, "strides", "[2, 1, 2]", "padding", "[1, 0, 1, 0, 1, 0]", "output_padding", "[1, 0, 1]",
                     "groups", "2", NULL), 2, x3, w3),
            "Tensor[(1, 4, 7, 5, 10), float32]", "conv3d_transpose: strides, six paddings, output_padding, groups");
    ERR(T3, "two strides", rel(T3, AT(T3, "strides", "[2, 2]", NULL), 2, x3, w3), "1 or 3 values");
    ERR(T3, "OIDHW kernel layout", rel(T3, AT(T3, "kernel_layout", "\"OIDHW\"", NULL), 2, x3, w3), "OIDHW", "IODHW");
    ERR(T3, "rank 4 data", rel(T3, NULL, 2, x, w), "rank 5");
}

/* The type of @main's body in text, or the first error. */
static const char *typed_text(const char *text)
{
    su_diags d = {0};
    ir_module *m = ir_parse("t.relay", text, strlen(text), &d);
    const char *r = m && ir_infer_types(m, &d) ? ir_type_str(&A, m->defs.data[0].func->u.func.body->type)
                                               : su_arena_printf(&A, "error: %s", d.len ? d.items[0].msg : "?");
    ir_module_free(m);
    su_diags_free(&d);
    return r;
}

static void test_arange(void)
{
    const ir_op_id AR = IR_OP_ARANGE;
    is_str(typed_text("def @main() { arange(0f, 5f, 1f) }"), "Tensor[(5), float32]", "arange: default dtype float32");
    is_str(typed_text("def @main() { arange(1, 10, 3, dtype=\"int32\") }"), "Tensor[(3), int32]",
           "arange: ceil((10 - 1) / 3)");
    is_str(typed_text("def @main() { arange(2.5f, -1f, -0.75f) }"), "Tensor[(5), float32]", "arange: a negative step");
    is_str(typed_text("def @main() { arange(3f, 1f, 1f) }"), "Tensor[(0), float32]", "arange: an empty range");
    is_str(typed_text("def @main() { arange(0f, 1f, 0f) }"), "error: arange: step must be non-zero and the bounds finite",
           "arange: a zero step");
    ERR(AR, "bounds that are not constants", rel(AR, NULL, 3, SCALAR(F32), SCALAR(F32), SCALAR(F32)), "constants",
        "dynamic shape");
    ERR(AR, "a tensor bound", rel(AR, NULL, 3, TEN(F32, 2), SCALAR(F32), SCALAR(F32)), "scalars");
}

static void test_conv3d(void)
{
    const ir_op_id C = IR_OP_CONV3D, MP = IR_OP_MAX_POOL3D, AP = IR_OP_AVG_POOL3D;
    const ir_type *x = TEN(F32, 1, 4, 5, 6, 7), *w = TEN(F32, 6, 2, 3, 3, 2);
    TYPE_IS(rel(C, AT(C, "groups", "2", NULL), 2, x, w), "Tensor[(1, 6, 3, 4, 6), float32]", "conv3d: no padding, groups");
    TYPE_IS(rel(C, AT(C, "strides", "[1, 2, 1]", "padding", "[1, 0, 1, 0, 1, 1]", "dilation", "[1, 1, 2]", "groups", "2",
                     NULL), 2, x, w),
            "Tensor[(1, 6, 4, 3, 7), float32]", "conv3d: strides, dilation, padding front/top/left then back/bottom/right");
    TYPE_IS(rel(C, AT(C, "padding", "[1]", "strides", "2", NULL), 2, x, TEN(F32, 6, 4, 3, 3, 3)),
            "Tensor[(1, 6, 3, 3, 4), float32]", "conv3d: one padding value, strides as one integer");
    TYPE_IS(rel(C, AT(C, "out_dtype", "\"float64\"", NULL), 2, x, TEN(F32, 6, 4, 1, 1, 1)),
            "Tensor[(1, 6, 5, 6, 7), float64]", "conv3d: out_dtype");
    ERR(C, "channel mismatch", rel(C, NULL, 2, x, w), "channel mismatch", "(1, 4, 5, 6, 7)", "(6, 2, 3, 3, 2)");
    ERR(C, "rank 4 data", rel(C, NULL, 2, TEN(F32, 1, 4, 8, 8), TEN(F32, 6, 4, 3, 3)), "rank 5");
    ERR(C, "NDHWC layout", rel(C, AT(C, "data_layout", "\"NDHWC\"", NULL), 2, x, w), "NDHWC", "only NCDHW/OIDHW");
    ERR(C, "two strides", rel(C, AT(C, "strides", "[1, 1]", "groups", "2", NULL), 2, x, w), "1 or 3 values");
    ERR(C, "four padding values", rel(C, AT(C, "padding", "[1, 1, 1, 1]", "groups", "2", NULL), 2, x, w), "padding 1, 3 or 6");
    ERR(C, "zero dilation", rel(C, AT(C, "dilation", "[1, 0, 1]", "groups", "2", NULL), 2, x, w), "out of range");
    ERR(C, "kernel_size that differs", rel(C, AT(C, "kernel_size", "[3, 3, 3]", "groups", "2", NULL), 2, x, w),
        "kernel_size", "(6, 2, 3, 3, 2)");
    ERR(C, "a kernel past the data", rel(C, AT(C, "groups", "2", NULL), 2, TEN(F32, 1, 4, 2, 6, 7), w), "does not fit");
    ERR(C, "channels that differ", rel(C, AT(C, "channels", "8", "groups", "2", NULL), 2, x, w), "channels=8");
    is_int(flops(C, AT(C, "groups", "2", NULL), TEN(F32, 1, 6, 3, 4, 6), 2, x, w), 2LL * 6 * 72 * 2 * 18,
           "conv3d: 2 * out * I/g * KD * KH * KW FLOPs");
    TYPE_IS(rel(MP, AT(MP, "pool_size", "[2, 2, 2]", "strides", "[2, 2, 2]", "ceil_mode", "True", NULL), 1, x),
            "Tensor[(1, 4, 3, 3, 4), float32]", "max_pool3d: ceil_mode counts a last partial window");
    TYPE_IS(rel(AP, AT(AP, "pool_size", "[3]", "padding", "[1, 1, 1]", "count_include_pad", "True", NULL), 1, x),
            "Tensor[(1, 4, 5, 6, 7), float32]", "avg_pool3d: one pool_size value, same padding");
    ERR(MP, "rank 4 data", rel(MP, AT(MP, "pool_size", "[2, 2, 2]", NULL), 1, TEN(F32, 1, 4, 8, 8)), "rank 5");
    ERR(AP, "NDHWC layout", rel(AP, AT(AP, "layout", "\"NDHWC\"", NULL), 1, x), "NDHWC", "only NCDHW");
    ERR(MP, "a window past the data", rel(MP, AT(MP, "pool_size", "[6, 2, 2]", NULL), 1, x), "does not fit");
    ERR(AP, "two pool_size values", rel(AP, AT(AP, "pool_size", "[2, 2]", NULL), 1, x), "pool_size, strides");
    is_int(flops(MP, AT(MP, "pool_size", "[2, 2, 2]", NULL), TEN(F32, 1, 4, 4, 5, 6), 1, x, NULL), 120 * 4 * 8,
           "max_pool3d: one max per tap per output element");
}

static void test_take(void)
{
    const ir_op_id T = IR_OP_TAKE;
    const ir_type *d = TEN(F32, 5, 4);
    TYPE_IS(rel(T, NULL, 2, d, TEN(IR_INT32, 2, 3)), "Tensor[(2, 3), float32]", "take: axis None flattens");
    TYPE_IS(rel(T, AT(T, "axis", "0", NULL), 2, d, TEN(IR_INT32, 2, 3)), "Tensor[(2, 3, 4), float32]",
            "take: axis 0");
    TYPE_IS(rel(T, AT(T, "axis", "-1", "mode", "\"wrap\"", NULL), 2, d, TEN(IR_INT64, 7)),
            "Tensor[(5, 7), float32]", "take: axis -1, int64 indices");
    TYPE_IS(rel(T, AT(T, "axis", "1", NULL), 2, d, SCALAR(IR_INT32)), "Tensor[(5), float32]",
            "take: scalar index drops the axis");
    TYPE_IS(rel(T, AT(T, "axis", "1", "batch_dims", "1", NULL), 2, TEN(F32, 2, 5, 4), TEN(IR_INT64, 2, 3)),
            "Tensor[(2, 3, 4), float32]", "take: batch_dims 1");
    ERR(T, "float indices", rel(T, NULL, 2, d, TEN(F32, 3)), "float32");
    ERR(T, "axis out of range", rel(T, AT(T, "axis", "2", NULL), 2, d, TEN(IR_INT32, 3)), "axis 2");
    ERR(T, "batch dims differ", rel(T, AT(T, "axis", "1", "batch_dims", "1", NULL), 2, TEN(F32, 2, 5, 4),
                                    TEN(IR_INT64, 3, 3)), "(2, 5, 4)", "(3, 3)");
}

/* ---- reductions ------------------------------------------------------------ */

static void test_reduce(void)
{
    static const ir_op_id red[] = {IR_OP_SUM, IR_OP_MEAN, IR_OP_MAX, IR_OP_MIN, IR_OP_PROD};
    const ir_type *d = TEN(F32, 2, 3, 4);
    for (size_t i = 0; i < sizeof red / sizeof *red; i++) {
        ir_op_id R = red[i];
        const char *nm = ir_op_get(R)->name;
        TYPE_IS(rel(R, NULL, 1, d), "float32", "%s: axis None reduces to a scalar", nm);
        TYPE_IS(rel(R, AT(R, "axis", "[1]", NULL), 1, d), "Tensor[(2, 4), float32]", "%s: axis [1]", nm);
    }
    const ir_op_id S = IR_OP_SUM;
    const ir_type *out = rel(S, AT(S, "axis", "[-1]", "keepdims", "True", NULL), 1, d);
    TYPE_IS(out, "Tensor[(2, 3, 1), float32]", "sum: negative axis, keepdims");
    is_int(flops(S, NULL, out, 1, d, NULL), 24, "sum: flops = input elements");
    TYPE_IS(rel(S, AT(S, "axis", "1", NULL), 1, d), "Tensor[(2, 4), float32]", "sum: axis as one integer");
    TYPE_IS(rel(S, AT(S, "axis", "[0, 2]", NULL), 1, d), "Tensor[(3), float32]", "sum: two axes");
    TYPE_IS(rel(S, AT(S, "axis", "[1]", "exclude", "True", NULL), 1, d), "Tensor[(3), float32]",
            "sum: exclude reduces the other axes");
    TYPE_IS(rel(S, AT(S, "axis", "[1]", "exclude", "True", "keepdims", "True", NULL), 1, d),
            "Tensor[(1, 3, 1), float32]", "sum: exclude with keepdims");
    TYPE_IS(rel(S, AT(S, "keepdims", "True", NULL), 1, d), "Tensor[(1, 1, 1), float32]", "sum: all axes, keepdims");
    TYPE_IS(rel(IR_OP_MEAN, NULL, 1, TEN(IR_INT32, 5)), "int32", "mean: keeps the dtype");
    ERR(S, "axis out of range", rel(S, AT(S, "axis", "[3]", NULL), 1, d), "axis 3");

    const ir_op_id AM = IR_OP_ARGMAX;
    TYPE_IS(rel(AM, AT(AM, "axis", "[1]", NULL), 1, d), "Tensor[(2, 4), int32]", "argmax: int32 indices");
    TYPE_IS(rel(AM, NULL, 1, d), "int32", "argmax: axis None");
    TYPE_IS(rel(AM, AT(AM, "axis", "[-1]", "keepdims", "True", "select_last_index", "True", NULL), 1, d),
            "Tensor[(2, 3, 1), int32]", "argmax: keepdims, select_last_index");
    TYPE_IS(rel(AM, AT(AM, "axis", "[0]", "exclude", "True", NULL), 1, d), "Tensor[(2), int32]", "argmax: exclude");
    ERR(AM, "axis out of range", rel(AM, AT(AM, "axis", "[-4]", NULL), 1, d), "axis -4");
}

/* Every attribute index enum of ir.h names the attribute at that position of
 * the op's schema, and covers the whole schema. */
static void test_attr_indices(void)
{
    static const struct { ir_op_id op; int idx; const char *name; } idx[] = {
#define I(op, e, name) {IR_OP_##op, e, name}
        I(CONV2D, IR_CONV_STRIDES, "strides"), I(CONV2D, IR_CONV_PADDING, "padding"),
        I(CONV2D, IR_CONV_DILATION, "dilation"), I(CONV2D, IR_CONV_GROUPS, "groups"),
        I(CONV2D, IR_CONV_CHANNELS, "channels"), I(CONV2D, IR_CONV_KERNEL_SIZE, "kernel_size"),
        I(CONV2D, IR_CONV_DATA_LAYOUT, "data_layout"), I(CONV2D, IR_CONV_KERNEL_LAYOUT, "kernel_layout"),
        I(CONV2D, IR_CONV_OUT_LAYOUT, "out_layout"), I(CONV2D, IR_CONV_OUT_DTYPE, "out_dtype"),
        I(DENSE, IR_DENSE_UNITS, "units"), I(DENSE, IR_DENSE_OUT_DTYPE, "out_dtype"),
        I(BATCH_MATMUL, IR_BMM_OUT_DTYPE, "out_dtype"), I(BATCH_MATMUL, IR_BMM_TRANSPOSE_A, "transpose_a"),
        I(BATCH_MATMUL, IR_BMM_TRANSPOSE_B, "transpose_b"),
        I(AVG_POOL2D, IR_POOL_SIZE, "pool_size"), I(AVG_POOL2D, IR_POOL_STRIDES, "strides"),
        I(AVG_POOL2D, IR_POOL_DILATION, "dilation"), I(AVG_POOL2D, IR_POOL_PADDING, "padding"),
        I(AVG_POOL2D, IR_POOL_LAYOUT, "layout"), I(AVG_POOL2D, IR_POOL_OUT_LAYOUT, "out_layout"),
        I(AVG_POOL2D, IR_POOL_CEIL_MODE, "ceil_mode"),
        I(AVG_POOL2D, IR_POOL_COUNT_INCLUDE_PAD, "count_include_pad"),
        I(MAX_POOL2D, IR_POOL_SIZE, "pool_size"), I(MAX_POOL2D, IR_POOL_CEIL_MODE, "ceil_mode"),
        I(GLOBAL_AVG_POOL2D, IR_GPOOL_LAYOUT, "layout"), I(GLOBAL_AVG_POOL2D, IR_GPOOL_OUT_LAYOUT, "out_layout"),
        I(ADAPTIVE_AVG_POOL2D, IR_APOOL_OUTPUT_SIZE, "output_size"),
        I(ADAPTIVE_AVG_POOL2D, IR_APOOL_LAYOUT, "layout"), I(ADAPTIVE_AVG_POOL2D, IR_APOOL_OUT_LAYOUT, "out_layout"),
        I(SOFTMAX, IR_SOFTMAX_AXIS, "axis"), I(LOG_SOFTMAX, IR_SOFTMAX_AXIS, "axis"),
        I(LAYER_NORM, IR_NORM_AXIS, "axis"), I(LAYER_NORM, IR_NORM_EPSILON, "epsilon"),
        I(LAYER_NORM, IR_NORM_CENTER, "center"), I(LAYER_NORM, IR_NORM_SCALE, "scale"),
        I(BATCH_NORM, IR_NORM_AXIS, "axis"), I(BATCH_NORM, IR_NORM_EPSILON, "epsilon"),
        I(BATCH_NORM, IR_NORM_CENTER, "center"), I(BATCH_NORM, IR_NORM_SCALE, "scale"),
        I(DROPOUT, IR_DROPOUT_RATE, "rate"), I(BIAS_ADD, IR_BIAS_ADD_AXIS, "axis"),
        I(LEAKY_RELU, IR_LEAKY_RELU_ALPHA, "alpha"), I(PAD, IR_PAD_WIDTH, "pad_width"),
        I(PAD, IR_PAD_MODE, "pad_mode"), I(CLIP, IR_CLIP_A_MIN, "a_min"), I(CLIP, IR_CLIP_A_MAX, "a_max"),
        I(CAST, IR_CAST_DTYPE, "dtype"), I(RESHAPE, IR_RESHAPE_NEWSHAPE, "newshape"),
        I(RESHAPE, IR_RESHAPE_ALLOWZERO, "allowzero"), I(TRANSPOSE, IR_TRANSPOSE_AXES, "axes"),
        I(SQUEEZE, IR_SQUEEZE_AXIS, "axis"), I(EXPAND_DIMS, IR_EXPAND_DIMS_AXIS, "axis"),
        I(EXPAND_DIMS, IR_EXPAND_DIMS_NUM_NEWAXIS, "num_newaxis"), I(CONCATENATE, IR_CONCAT_AXIS, "axis"),
        I(SPLIT, IR_SPLIT_INDICES_OR_SECTIONS, "indices_or_sections"), I(SPLIT, IR_SPLIT_AXIS, "axis"),
        I(STRIDED_SLICE, IR_SLICE_BEGIN, "begin"), I(STRIDED_SLICE, IR_SLICE_END, "end"),
        I(STRIDED_SLICE, IR_SLICE_STRIDES, "strides"), I(STRIDED_SLICE, IR_SLICE_MODE, "slice_mode"),
        I(STRIDED_SLICE, IR_SLICE_AXES, "axes"), I(TAKE, IR_TAKE_BATCH_DIMS, "batch_dims"),
        I(TAKE, IR_TAKE_AXIS, "axis"), I(TAKE, IR_TAKE_MODE, "mode"),
        I(SUM, IR_REDUCE_AXIS, "axis"), I(SUM, IR_REDUCE_KEEPDIMS, "keepdims"), I(SUM, IR_REDUCE_EXCLUDE, "exclude"),
        I(MEAN, IR_REDUCE_EXCLUDE, "exclude"), I(MAX, IR_REDUCE_EXCLUDE, "exclude"), I(MIN, IR_REDUCE_EXCLUDE, "exclude"),
        I(ARGMAX, IR_ARGREDUCE_AXIS, "axis"), I(ARGMAX, IR_ARGREDUCE_KEEPDIMS, "keepdims"),
        I(ARGMAX, IR_ARGREDUCE_SELECT_LAST_INDEX, "select_last_index"),
        I(ARGMAX, IR_ARGREDUCE_EXCLUDE, "exclude"),
        I(FULL, IR_FULL_SHAPE, "shape"),
        I(FULL, IR_FULL_DTYPE, "dtype"),
        I(SHAPE_OF, IR_SHAPE_OF_DTYPE, "dtype"),
        I(STACK, IR_STACK_AXIS, "axis"),
        I(ARANGE, IR_ARANGE_START, "start"),
        I(ARANGE, IR_ARANGE_STOP, "stop"),
        I(ARANGE, IR_ARANGE_STEP, "step"),
        I(ARANGE, IR_ARANGE_DTYPE, "dtype"),
        I(CONV2D_TRANSPOSE, IR_CONVT_CHANNELS, "channels"),
        I(CONV2D_TRANSPOSE, IR_CONVT_KERNEL_SIZE, "kernel_size"),
        I(CONV2D_TRANSPOSE, IR_CONVT_STRIDES, "strides"),
        I(CONV2D_TRANSPOSE, IR_CONVT_PADDING, "padding"),
        I(CONV2D_TRANSPOSE, IR_CONVT_OUTPUT_PADDING, "output_padding"),
        I(CONV2D_TRANSPOSE, IR_CONVT_DILATION, "dilation"),
        I(CONV2D_TRANSPOSE, IR_CONVT_GROUPS, "groups"),
        I(CONV2D_TRANSPOSE, IR_CONVT_DATA_LAYOUT, "data_layout"),
        I(CONV2D_TRANSPOSE, IR_CONVT_KERNEL_LAYOUT, "kernel_layout"),
        I(CONV2D_TRANSPOSE, IR_CONVT_OUT_LAYOUT, "out_layout"),
        I(CONV2D_TRANSPOSE, IR_CONVT_OUT_DTYPE, "out_dtype"),
        I(CONV3D_TRANSPOSE, IR_CONVT_CHANNELS, "channels"), I(CONV3D_TRANSPOSE, IR_CONVT_PADDING, "padding"),
        I(CONV3D_TRANSPOSE, IR_CONVT_OUTPUT_PADDING, "output_padding"), I(CONV3D_TRANSPOSE, IR_CONVT_OUT_DTYPE, "out_dtype"),
        I(CONV1D, IR_CONV_STRIDES, "strides"),
        I(CONV1D, IR_CONV_PADDING, "padding"),
        I(CONV1D, IR_CONV_DILATION, "dilation"),
        I(CONV1D, IR_CONV_GROUPS, "groups"),
        I(CONV1D, IR_CONV_CHANNELS, "channels"),
        I(CONV1D, IR_CONV_KERNEL_SIZE, "kernel_size"),
        I(CONV1D, IR_CONV_DATA_LAYOUT, "data_layout"),
        I(CONV1D, IR_CONV_KERNEL_LAYOUT, "kernel_layout"),
        I(CONV1D, IR_CONV_OUT_LAYOUT, "out_layout"),
        I(CONV1D, IR_CONV_OUT_DTYPE, "out_dtype"),
        I(CONV3D, IR_CONV_STRIDES, "strides"), I(CONV3D, IR_CONV_PADDING, "padding"),
        I(CONV3D, IR_CONV_DILATION, "dilation"), I(CONV3D, IR_CONV_GROUPS, "groups"),
        I(CONV3D, IR_CONV_CHANNELS, "channels"), I(CONV3D, IR_CONV_KERNEL_SIZE, "kernel_size"),
        I(CONV3D, IR_CONV_DATA_LAYOUT, "data_layout"), I(CONV3D, IR_CONV_KERNEL_LAYOUT, "kernel_layout"),
        I(CONV3D, IR_CONV_OUT_LAYOUT, "out_layout"), I(CONV3D, IR_CONV_OUT_DTYPE, "out_dtype"),
        I(AVG_POOL3D, IR_POOL_SIZE, "pool_size"), I(AVG_POOL3D, IR_POOL_STRIDES, "strides"),
        I(AVG_POOL3D, IR_POOL_DILATION, "dilation"), I(AVG_POOL3D, IR_POOL_PADDING, "padding"),
        I(AVG_POOL3D, IR_POOL_LAYOUT, "layout"), I(AVG_POOL3D, IR_POOL_OUT_LAYOUT, "out_layout"),
        I(AVG_POOL3D, IR_POOL_CEIL_MODE, "ceil_mode"), I(AVG_POOL3D, IR_POOL_COUNT_INCLUDE_PAD, "count_include_pad"),
        I(MAX_POOL3D, IR_POOL_SIZE, "pool_size"), I(MAX_POOL3D, IR_POOL_CEIL_MODE, "ceil_mode"),
        I(UPSAMPLING, IR_UPS_SCALE_H, "scale_h"),
        I(UPSAMPLING, IR_UPS_SCALE_W, "scale_w"),
        I(UPSAMPLING, IR_UPS_LAYOUT, "layout"),
        I(UPSAMPLING, IR_UPS_METHOD, "method"),
        I(UPSAMPLING, IR_UPS_ALIGN_CORNERS, "align_corners"),
        I(RESIZE2D, IR_RESIZE_ROI, "roi"),
        I(RESIZE2D, IR_RESIZE_SIZE, "size"),
        I(RESIZE2D, IR_RESIZE_LAYOUT, "layout"),
        I(RESIZE2D, IR_RESIZE_METHOD, "method"),
        I(RESIZE2D, IR_RESIZE_COORD_MODE, "coordinate_transformation_mode"),
        I(RESIZE2D, IR_RESIZE_ROUNDING, "rounding_method"),
        I(RESIZE2D, IR_RESIZE_CUBIC_ALPHA, "cubic_alpha"),
        I(RESIZE2D, IR_RESIZE_CUBIC_EXCLUDE, "cubic_exclude"),
        I(RESIZE2D, IR_RESIZE_EXTRAPOLATION, "extrapolation_value"),
        I(RESIZE2D, IR_RESIZE_OUT_DTYPE, "out_dtype"),
        I(LAYOUT_TRANSFORM, IR_LT_SRC_LAYOUT, "src_layout"),
        I(LAYOUT_TRANSFORM, IR_LT_DST_LAYOUT, "dst_layout"),
        I(CONV2D_WINOGRAD, IR_CONV_STRIDES, "strides"), I(CONV2D_WINOGRAD, IR_CONV_PADDING, "padding"),
        I(CONV2D_WINOGRAD, IR_CONV_DILATION, "dilation"), I(CONV2D_WINOGRAD, IR_CONV_GROUPS, "groups"),
        I(CONV2D_WINOGRAD, IR_CONV_CHANNELS, "channels"), I(CONV2D_WINOGRAD, IR_CONV_KERNEL_SIZE, "kernel_size"),
        I(CONV2D_WINOGRAD, IR_CONV_DATA_LAYOUT, "data_layout"), I(CONV2D_WINOGRAD, IR_CONV_KERNEL_LAYOUT, "kernel_layout"),
        I(CONV2D_WINOGRAD, IR_CONV_OUT_LAYOUT, "out_layout"), I(CONV2D_WINOGRAD, IR_CONV_OUT_DTYPE, "out_dtype"),
        I(CONV2D_WINOGRAD, IR_WINO_TILE_SIZE, "tile_size"),
#undef I
    };
    int covered[IR_OP_COUNT] = {0}, bad = 0;
    for (size_t i = 0; i < sizeof idx / sizeof *idx; i++) {
        const ir_op_def *op = ir_op_get(idx[i].op);
        if (ir_op_attr_index(op, idx[i].name, strlen(idx[i].name)) != idx[i].idx) {
            ok(0, "attr index: %s.%s is at %d", op->name, idx[i].name, idx[i].idx);
            bad++;
        }
        covered[idx[i].op]++;
    }
    ok(bad == 0, "attr indices of ir.h match the schemas' names");
    /* ops whose every attribute is listed above */
    static const ir_op_id whole[] = {IR_OP_CONV2D, IR_OP_DENSE, IR_OP_BATCH_MATMUL, IR_OP_AVG_POOL2D,
                                     IR_OP_LAYER_NORM, IR_OP_BATCH_NORM, IR_OP_STRIDED_SLICE, IR_OP_TAKE,
                                     IR_OP_ARGMAX, IR_OP_SUM, IR_OP_SPLIT, IR_OP_PAD, IR_OP_RESHAPE,
                                     IR_OP_FULL, IR_OP_SHAPE_OF, IR_OP_STACK, IR_OP_LAYOUT_TRANSFORM,
                                     IR_OP_UPSAMPLING, IR_OP_RESIZE2D, IR_OP_ARANGE, IR_OP_CONV2D_TRANSPOSE,
                                     IR_OP_CONV1D, IR_OP_CONV2D_WINOGRAD};
    for (size_t i = 0; i < sizeof whole / sizeof *whole; i++)
        is_int(covered[whole[i]], ir_op_get(whole[i])->schema->n, "attr indices cover all of %s",
               ir_op_get(whole[i])->name);
}

/* the Winograd ops: the weight transform's shape, the conv as conv2d on the weight U stands for */
static void test_winograd(void)
{
    const ir_op_id T = IR_OP_WINOGRAD_WEIGHT, K = IR_OP_CONV2D_WINOGRAD;
    const ir_type *w = TEN(F32, 16, 8, 3, 3), *x = TEN(F32, 2, 8, 13, 14);
    TYPE_IS(rel(T, AT(T, "tile_size", "4", NULL), 1, w), "Tensor[(6, 6, 16, 8), float32]",
            "winograd_weight_transform: F(4x4) gives 6x6 x K x C");
    TYPE_IS(rel(T, AT(T, "tile_size", "2", NULL), 1, w), "Tensor[(4, 4, 16, 8), float32]",
            "winograd_weight_transform: F(2x2) gives 4x4 x K x C");
    ERR(T, "tile 3", rel(T, AT(T, "tile_size", "3", NULL), 1, w), "tile_size=3");
    ERR(T, "a 5x5 weight", rel(T, AT(T, "tile_size", "4", NULL), 1, TEN(F32, 16, 8, 5, 5)), "(K, C, 3, 3)");
    const ir_type *u = TEN(F32, 6, 6, 16, 8);
    TYPE_IS(rel(K, AT(K, "padding", "[1, 1]", "tile_size", "4", NULL), 2, x, u), "Tensor[(2, 16, 13, 14), float32]",
            "winograd conv: padding 1 keeps 13x14");
    TYPE_IS(rel(K, AT(K, "tile_size", "4", NULL), 2, x, u), "Tensor[(2, 16, 11, 12), float32]",
            "winograd conv: no padding");
    ERR(K, "stride 2", rel(K, AT(K, "strides", "[2, 2]", "tile_size", "4", NULL), 2, x, u), "strides [1, 1]");
    ERR(K, "groups", rel(K, AT(K, "groups", "2", "tile_size", "4", NULL), 2, x, u), "groups=1");
    ERR(K, "NHWC data", rel(K, AT(K, "data_layout", "\"NHWC\"", "tile_size", "4", NULL), 2, x, u), "expects NCHW");
    ERR(K, "U of the other tile", rel(K, AT(K, "tile_size", "2", NULL), 2, x, u), "(4, 4, K, C)");
    ERR(K, "channels that do not match (conv2d's check)", rel(K, AT(K, "tile_size", "4", NULL), 2, x,
                                                              TEN(F32, 6, 6, 16, 4)), "channel mismatch");
    ERR(K, "tile 8", rel(K, AT(K, "tile_size", "8", NULL), 2, x, u), "tile_size=8");
    is_int(flops(K, AT(K, "padding", "[1, 1]", "tile_size", "4", NULL), TEN(F32, 2, 16, 13, 14), 2, x, u),
           2LL * 2 * 16 * 13 * 14 * 8 * 9, "winograd conv: FLOPs are the direct conv's (2 N K OH OW C 9)");
    is_int(flops(T, AT(T, "tile_size", "4", NULL), u, 1, w, NULL), 2LL * 16 * 8 * (9 * 6 + 3 * 36),
           "winograd_weight_transform: FLOPs of G g G^T");
}

int main(void)
{
    su_arena_init(&A);
    D.max_errors = 1000;    /* every error case below must be recorded */
    test_schemas();
    test_attr_indices();
    test_conv2d();
    test_conv2d_errors();
    test_dense_matmul();
    test_pools();
    test_norms();
    test_nn_misc();
    test_unary();
    test_binary();
    test_reshape();
    test_transpose_squeeze();
    test_concat_split();
    test_strided_slice();
    test_take();
    test_init();
    test_layouts();
    test_conv2d_nchwc();
    test_winograd();
    test_image();
    test_conv1d();
    test_conv3d();
    test_conv_transpose();
    test_arange();
    test_reduce();
    for (int id = 0; id < IR_OP_COUNT; id++)
        ok(exercised[id], "coverage: %s has relation checks", ir_op_get((ir_op_id)id)->name);
    su_diags_free(&D);
    su_arena_free(&A);
    return tap_done();
}
