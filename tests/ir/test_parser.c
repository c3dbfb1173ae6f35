/* test_parser.c — the parser, type inference and printer on small programs:
 * structure of parsed nodes, spans, scoping, forward references between defs,
 * recursion, closures, if, let, tuples, number suffixes, comments, and that
 * printed text parses back to the same text. */
#include <string.h>

#include "ir/ir.h"
#include "tests/ir/roundtrip.h"
#include "tests/tap.h"

static ir_module *parse(const char *text, su_diags *d)
{
    return ir_parse("t.relay", text, strlen(text), d);
}

static void test_structure(void)
{
    su_diags d = {0};
    ir_module *m = parse("#[version = \"0.0.5\"]\n"
                         "def @main(%x: Tensor[(1, 8), float32], %w: Tensor[(4, 8), float32]) {\n"
                         "  %0 = nn.dense(%x, %w, units=4);\n"
                         "  nn.relu(%0)\n"
                         "}\n", &d);
    ok(m != NULL, "parse: a small module");
    if (!m)
        return;
    is_int(m->defs.len, 1, "parse: one def");
    ir_expr *f = m->defs.data[0].func;
    is_int(f->u.func.nparams, 2, "parse: two params");
    ir_expr *body = f->u.func.body;
    ok(ir_call_op(body) == ir_op_get(IR_OP_RELU), "parse: body is a relu call");
    ir_expr *dense = body->u.call.args[0];
    ok(ir_call_op(dense) == ir_op_get(IR_OP_DENSE), "parse: graph binding resolves to its call node");
    ok(dense->u.call.args[0] == f->u.func.params[0], "parse: %x refers to the parameter node");
    int line, col;
    su_source_linecol(dense->span.src, dense->span.begin, &line, &col);
    ok(line == 3 && col == 8, "parse: span of the dense call is 3:8 (got %d:%d)", line, col);
    ok(ir_infer_types(m, &d), "typeinfer: succeeds");
    is_str(ir_type_str(&m->arena, body->type), "Tensor[(1, 4), float32]", "typeinfer: relu(dense) type");
    is_str(ir_type_str(&m->arena, f->type), "fn (Tensor[(1, 8), float32], Tensor[(4, 8), float32]) -> Tensor[(1, 4), float32]",
           "typeinfer: function type");
    ir_module_free(m);
    su_diags_free(&d);
}

static void test_print(void)
{
    is_str(roundtrip("def @main(%x: Tensor[(2, 3), float32]) { add(%x, 1f) }", true),
           "#[version = \"0.0.5\"]\n"
           "def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n"
           "  add(%x, 1f) /* ty=Tensor[(2, 3), float32] */\n"
           "}\n",
           "print: inferred return type and ty comment");
    is_str(roundtrip("def @main(%x: Tensor[(2, 3), float32]) {\n"
                     "  %0 = nn.relu(%x);\n  %1 = (%0, %0);\n  %2 = %1.1;\n  concatenate((%2, %x), axis=0)\n}",
                     false),
           "#[version = \"0.0.5\"]\n"
           "def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(4, 3), float32] {\n"
           "  %0 = nn.relu(%x);\n  %1 = (%0, %0);\n  %2 = %1.1;\n  %3 = (%2, %x);\n  concatenate(%3)\n}\n",
           "print: tuples and projections become bindings, default attrs dropped");
    is_str(roundtrip("def @main(%x: Tensor[(1, 4, 8, 8), float32], %w: Tensor[(4, 4, 3, 3), float32]) {\n"
                     "  nn.conv2d(%x, %w, strides=[1, 1], padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3])\n}",
                     false),
           "#[version = \"0.0.5\"]\n"
           "def @main(%x: Tensor[(1, 4, 8, 8), float32], %w: Tensor[(4, 4, 3, 3), float32]) -> Tensor[(1, 4, 8, 8), float32] {\n"
           "  nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3])\n}\n",
           "print: non-default attrs only, in schema order");
    is_str(roundtrip("def @main(%c: bool, %x: float32) {\n"
                     "  if (%c) { %0 = add(%x, 1f); multiply(%0, %0) } else { let %y = negative(%x); %y }\n}", false),
           "#[version = \"0.0.5\"]\n"
           "def @main(%c: bool, %x: float32) -> float32 {\n"
           "  if (%c) {\n    %0 = add(%x, 1f);\n    multiply(%0, %0)\n  } else {\n    let %y = negative(%x);\n    %y\n  }\n}\n",
           "print: if with scoped bindings and let");
    is_str(roundtrip("def @main(%x: float32) {\n"
                     "  %0 = add(%x, 1f);\n  %1 = if (True) { multiply(%0, 2f) } else { %0 };\n  add(%1, %0)\n}", false),
           "#[version = \"0.0.5\"]\n"
           "def @main(%x: float32) -> float32 {\n"
           "  %0 = add(%x, 1f);\n  %1 = if (True) {\n    multiply(%0, 2f)\n  } else {\n    %0\n  };\n  add(%1, %0)\n}\n",
           "print: binding made outside an if is visible inside it");
}

static void test_functions(void)
{
    const char *t = roundtrip("def @main(%x: Tensor[(3), float32]) { @f(%x, 2i64) }\n"
                              "def @f(%a: Tensor[(3), float32], %n: int64) { nn.relu(%a) }", false);
    ok(strstr(t, "def @f(%a: Tensor[(3), float32], %n: int64) -> Tensor[(3), float32]") != NULL,
       "functions: forward reference to a later def");
    t = roundtrip("def @loop(%i: int32, %x: float32) -> float32 {\n"
                  "  %0 = less(%i, 10);\n"
                  "  if (%0) { %1 = add(%i, 1); @loop(%1, %x) } else { %x }\n}", false);
    ok(strncmp(t, "ERROR", 5) != 0, "functions: recursion with a declared return type (%s)", t);
    t = roundtrip("def @loop(%i: int32) { @loop(%i) }", false);
    ok(strstr(t, "needs a return type") != NULL, "functions: recursion without a return type is an error");
    t = roundtrip("def @main(%x: float32) {\n"
                  "  let %f = fn (%y: float32) { multiply(%y, %x) };\n"
                  "  %f(%f(%x))\n}", false);
    ok(strstr(t, "let %f = fn (%y: float32) -> float32 {\n    multiply(%y, %x)\n  };\n  %0 = %f(%x);\n  %f(%0)") != NULL,
       "functions: closure capturing %%x, stored and called (%s)", t);
    t = roundtrip("def @main(%x: float32) { %0 = fn (%y: float32, Primitive=1) { negative(%y) }; %0(%x) }", false);
    ok(strstr(t, "fn (%y: float32, Primitive=1) -> float32") != NULL, "functions: function attributes print among params");
}

static void test_lexical(void)
{
    const char *t = roundtrip("// leading comment\n#[version = \"0.0.5\"]\n/* a /* nested */ comment */\n"
                              "def @main(%x: float16, %y: int64, %b: bool) {\n"
                              "  %0 = add(%x, 3f16) /* ty=float16 */;\n"
                              "  %1 = add(%y, 2i64);\n"
                              "  %2 = logical_and(%b, True);\n"
                              "  (%0, %1, %2, -1.5f, 7)\n}", false);
    ok(strstr(t, "add(%x, 3f16)") && strstr(t, "add(%y, 2i64)") && strstr(t, "logical_and(%b, True)") &&
           strstr(t, "(%0, %1, %2, -1.5f, 7)"),
       "lexical: comments, number suffixes, booleans (%s)", t);
    t = roundtrip("def @main(%t: (float32, (int32, bool))) { %t.1.0 }", false);
    ok(strstr(t, "-> int32") && strstr(t, "%0 = %t.1;\n  %0.0"), "lexical: nested projections %%t.1.0 (%s)", t);
    t = roundtrip("def @main() { (1,) }", false);
    ok(strstr(t, "-> (int32,)") != NULL && strstr(t, "(1,)") != NULL, "lexical: one-tuple");
    t = roundtrip("def @main(%x: Tensor[(4,), float32]) { %x }", false);
    ok(strstr(t, "Tensor[(4), float32]") != NULL, "lexical: shape with trailing comma");
}

static void test_scoping(void)
{
    const char *t = roundtrip("def @main(%x: float32) { if (True) { %0 = negative(%x); %0 } else { %0 } }", false);
    ok(strstr(t, "unknown variable %0") != NULL, "scope: if-branch binding is not visible in the other branch");
    t = roundtrip("def @main(%x: float32) { let %x = negative(%x); %x }", false);
    ok(strstr(t, "let %x_1 = negative(%x);\n  %x_1") != NULL, "scope: shadowing let prints with a fresh name (%s)", t);
    t = roundtrip("def @main(%x: float32) { %0 = negative(%x); %0 = negative(%0); %0 }", false);
    ok(strstr(t, "already defined") != NULL, "scope: duplicate graph binding is an error");
}

static void test_limits(void)
{
    const char *t = roundtrip("def @main(%x: float32) { (3.4028235e+38f, -3.4028235e+38f, 65504f16, 2147483647) }", false);
    ok(strstr(t, "(3.4028235e+38f, -3.4028235e+38f, 65504f16, 2147483647)") != NULL,
       "limits: the largest float32, float16 and int32 round-trip (%s)", t);
    t = roundtrip("def @main() { 3.5e38f }", false);
    ok(strstr(t, "does not fit in float32") != NULL, "limits: float32 overflow is an error");
    t = roundtrip("def @main() { 70000f16 }", false);
    ok(strstr(t, "does not fit in float16") != NULL, "limits: float16 overflow is an error");
    t = roundtrip("def @main() { 2147483648i32 }", false);
    ok(strstr(t, "does not fit in int32") != NULL, "limits: int32 overflow of a suffixed literal is an error");
    t = roundtrip("def @main() { 9223372036854775807i64 }", false);
    ok(strstr(t, "9223372036854775807i64") != NULL, "limits: int64 keeps all 64 bits (%s)", t);
    t = roundtrip("def @main() { 99999999999999999999i64 }", false);
    ok(strstr(t, "out of range") != NULL, "limits: integer beyond int64 is an error");
    t = roundtrip("def @main(%x: Tensor[(2), float32]) { clip(%x, a_max=1f) }", false);
    ok(strstr(t, "clip: attribute 'a_min' is required") != NULL, "attrs: a required attribute must be given (%s)", t);
    t = roundtrip("def @main(%x: Tensor[(2), float32]) { clip(%x, a_min=0f, a_max=1f) }", false);
    ok(strstr(t, "clip(%x, a_min=0f, a_max=1f)") != NULL, "attrs: required attributes print even at their default");
}

static void test_metadata(void)
{
    /* a module with a tensor constant prints a #[metadata] section in TVM's
     * layout and reads back with the same values */
    ir_module *m = ir_module_new();
    ir_tensor *w = ir_tensor_new(&m->arena, IR_FLOAT32, 2, (int64_t[]){2, 3});
    for (int i = 0; i < 6; i++)
        ((float *)w->data)[i] = 0.5f * (float)i - 1.0f;
    ir_expr *x = ir_var(m, (su_span){0}, "x", ir_tensor_type(&m->arena, IR_FLOAT32, 2, (int64_t[]){2, 3}));
    ir_expr *args[2] = {x, ir_const(m, (su_span){0}, w)};
    ir_expr *body = ir_op_call(m, (su_span){0}, IR_OP_ADD, 2, args, NULL);
    ir_expr *f = ir_func(m, (su_span){0}, 1, &x, NULL, body, 0, NULL);
    ir_module_add(m, "main", ir_global(m, (su_span){0}, "main"), f);
    su_diags d = {0};
    ok(ir_infer_types(m, &d), "metadata: module with a tensor constant type-checks");
    su_buf b = {0};
    ir_print_opts o = {false};
    ir_print_module(&b, m, &o);
    const char *t = su_buf_str(&b);
    ok(strstr(t, "add(%x, meta[relay.Constant][0])") && strstr(t, "#[metadata]") && strstr(t, "\"b64ndarrays\""),
       "metadata: constant printed as meta[relay.Constant][0] with a metadata section");
    ir_module *m2 = ir_parse("meta.relay", t, b.len, &d);
    bool typed = m2 && ir_infer_types(m2, &d);
    ok(typed, "metadata: the printout parses back");
    if (typed) {
        const ir_expr *c = m2->defs.data[0].func->u.func.body->u.call.args[1];
        const ir_tensor *v = c->kind == IR_CONST ? c->u.constant.value : NULL;
        ok(v && v->ndim == 2 && v->shape[0] == 2 && v->shape[1] == 3 && memcmp(v->data, w->data, 24) == 0,
           "metadata: shape and data survive the round trip");
        su_buf b2 = {0};
        ir_print_module(&b2, m2, &o);
        is_str(su_buf_str(&b2), t, "metadata: printing is a fixed point");
        su_buf_free(&b2);
    }
    /* corrupted sections are errors, not crashes */
    const char *bad[] = {"not json", "{\"root\": 1}",
                         "{\"root\": 1, \"nodes\": [{}, {\"type_key\": \"Map\", \"keys\": [\"relay.Constant\"], "
                         "\"data\": [2]}, {\"type_key\": \"Array\", \"data\": [3]}, {\"type_key\": \"relay.Constant\", "
                         "\"attrs\": {\"data\": \"0\"}}], \"b64ndarrays\": [\"AAAA\"]}"};
    for (int i = 0; i < 3; i++) {
        su_buf src = {0};
        su_buf_printf(&src, "def @main(%%x: float32) { %%x }\n#[metadata]\n%s\n", bad[i]);
        su_diags d2 = {0};
        ir_module *m3 = ir_parse("bad.relay", su_buf_str(&src), src.len, &d2);
        ok(!m3 && d2.errors == 1 && strstr(d2.items[0].msg, "metadata"), "metadata: corrupt section %d is an error (%s)", i,
           d2.len ? d2.items[0].msg : "");
        ir_module_free(m3);
        su_diags_free(&d2);
        su_buf_free(&src);
    }
    ir_module_free(m2);
    ir_module_free(m);
    su_buf_free(&b);
    su_diags_free(&d);
}

int main(void)
{
    test_structure();
    test_print();
    test_functions();
    test_lexical();
    test_scoping();
    test_limits();
    test_metadata();
    return tap_done();
}
