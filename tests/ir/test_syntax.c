/* test_syntax.c — the parts of Relay's expression language beyond what TVM
 * prints: infix and unary operators (the same calls as add, less...; TVM's
 * precedence and left associativity), the sequencing sugar `e1; e2`,
 * attributes on calls of functions, TVM's numeric literal forms and their
 * range checks, the scalar type names `int` and `float`, the incomplete type
 * `_`, and type parameters (unification at calls, the errors that name the
 * two types, and running a polymorphic def in the interpreter). */
#include <math.h>
#include <string.h>

#include "ir/ir.h"
#include "tests/ir/roundtrip.h"
#include "tests/tap.h"

/* The canonical text of a program without type comments, or "ERROR msg". */
static const char *print_of(const char *text)
{
    return roundtrip(text, false);
}

/* print_of(a) and print_of(b) are the same text (a copy, as print_of reuses its buffer). */
static bool same_print(const char *a, const char *b)
{
    char first[8192];
    snprintf(first, sizeof first, "%s", print_of(a));
    return strcmp(first, print_of(b)) == 0 && strncmp(first, "ERROR", 5) != 0;
}

static void test_operators(void)
{
    const char *h = "def @main(%a: Tensor[(2), float32], %b: Tensor[(2), float32], %c: Tensor[(2), float32]) ";
    char x[512], y[512];
#define BOTH(infix, calls) (snprintf(x, sizeof x, "%s{ %s }", h, infix), snprintf(y, sizeof y, "%s{ %s }", h, calls), \
                            same_print(x, y))
    ok(BOTH("%a + %b", "add(%a, %b)"), "infix: + is add");
    ok(BOTH("%a - %b", "subtract(%a, %b)"), "infix: - is subtract");
    ok(BOTH("%a * %b", "multiply(%a, %b)"), "infix: * is multiply");
    ok(BOTH("%a / %b", "divide(%a, %b)"), "infix: / is divide");
    ok(BOTH("%a < %b", "less(%a, %b)"), "infix: < is less");
    ok(BOTH("%a <= %b", "less_equal(%a, %b)"), "infix: <= is less_equal");
    ok(BOTH("%a > %b", "greater(%a, %b)"), "infix: > is greater");
    ok(BOTH("%a >= %b", "greater_equal(%a, %b)"), "infix: >= is greater_equal");
    ok(BOTH("%a == %b", "equal(%a, %b)"), "infix: == is equal");
    ok(BOTH("%a != %b", "not_equal(%a, %b)"), "infix: != is not_equal");
    ok(BOTH("-%a", "negative(%a)"), "unary: -x is negative(x)");
    ok(BOTH("- -%a", "negative(negative(%a))"), "unary: nests");
    ok(BOTH("%a + %b * %c", "add(%a, multiply(%b, %c))"), "precedence: * before +");
    ok(BOTH("%a - %b - %c", "subtract(subtract(%a, %b), %c)"), "associativity: left");
    ok(BOTH("%a / %b * %c", "multiply(divide(%a, %b), %c)"), "associativity: * and / left to right");
    ok(BOTH("(%a + %b) * %c", "multiply(add(%a, %b), %c)"), "parentheses group");
    ok(BOTH("-%a * %b", "multiply(negative(%a), %b)"), "unary binds tighter than *");
    ok(BOTH("%a-1f", "subtract(%a, 1f)"), "a '-' after an operand is subtraction even before a digit");
    ok(BOTH("nn.relu(%a) - (%b, %c).1", "subtract(nn.relu(%a), (%b, %c).1)"), "calls and projections bind tighter");
    ok(same_print("def @main() { 1 * 1 + 1 < 1 == True }", "def @main() { equal(less(add(multiply(1, 1), 1), 1), True) }"),
       "precedence: the issue's 1 * 1 + 1 < 1 == 1 chain (== below <, below +, below *)");
    ok(same_print("def @main(%a: float32) { %a < 2f != %a >= 3f }",
                  "def @main(%a: float32) { not_equal(less(%a, 2f), greater_equal(%a, 3f)) }"),
       "precedence: comparisons above equalities");
    ok(same_print("def @main(%x: Tensor[(2), float32]) { nn.softmax(%x, axis=-1) }",
                  "def @main(%x: Tensor[(2), float32]) { nn.softmax(%x, axis=-1) }"),
       "a '-' after '=' is still a negative number");
    const char *t = print_of("def @f(%n: int32, %x: float32) -> float32 {\n"
                             "  if (%n < 1) { %x } else { @f(%n - 1, log(%x)) }\n}");
    ok(strstr(t, "subtract(%n, 1)") && strstr(t, "less(%n, 1)"), "infix in call arguments and conditions (%s)", t);
    t = print_of("def @main(%a: Tensor[(2), float32], %b: Tensor[(2), int32]) { %a + %b }");
    ok(strstr(t, "ERROR add: operand dtypes differ") != NULL, "infix calls are type-checked as the op (%s)", t);
#undef BOTH
}

static void test_sequencing_and_call_attrs(void)
{
    const char *t = print_of("def @main(%x: float32) { log(%x); exp(%x) }");
    ok(strstr(t, "let %_ = log(%x);\n  exp(%x)") != NULL, "sequencing: e1; e2 is a let of an unnamed variable (%s)", t);
    ok(same_print("def @main(%x: float32) { log(%x); exp(%x); %x }",
                  "def @main(%x: float32) { let %_ = log(%x); let %__1 = exp(%x); %x }"),
       "sequencing: chains, and its print parses back");
    t = print_of("def @main(%x: float32) { add((log(%x); exp(%x)), %x) }");
    ok(strstr(t, "let %_ = log(%x);") && strstr(t, "exp(%x)"), "sequencing: inside parentheses (%s)", t);
    t = print_of("def @main(%x: float32) { log(%x); }");
    ok(strstr(t, "ERROR unexpected ';'") != NULL, "sequencing: a trailing ';' is still an error (%s)", t);
    t = print_of("def @main(%x: float32) {\n  let %f = fn (%y: float32) { %y };\n  %f(%x, hint=\"a\", n=[1, 2])\n}");
    ok(strstr(t, "%f(%x, hint=\"a\", n=[1, 2])") != NULL, "attributes on a call of a local function print back (%s)", t);
    ok(same_print("def @g(%y: float32) { %y }\ndef @main(%x: float32) { @g(%x, s=\"a\\x04b\") }",
                  "def @g(%y: float32) { %y }\ndef @main(%x: float32) { @g(%x, s=\"a\x04" "b\") }"),
       "a string's \\xHH escape reads back as the character the printer escaped (found by the fuzzer)");
    t = print_of("def @g(%y: float32) { %y }\ndef @main(%x: float32) { @g(%x, k=1) }");
    ok(strstr(t, "@g(%x, k=1)") != NULL, "attributes on a call of a global function (%s)", t);
}

/* The constant that @main returns, with its dtype. */
static bool constant_of(const char *text, ir_dtype *dt, double *v)
{
    su_diags d = {0};
    ir_module *m = ir_parse("t.relay", text, strlen(text), &d);
    bool found = m && m->defs.data[0].func->u.func.body->kind == IR_CONST;
    if (found) {
        const ir_tensor *c = m->defs.data[0].func->u.func.body->u.constant.value;
        *dt = c->dtype;
        *v = c->dtype == IR_INT64 ? (double)((const int64_t *)c->data)[0] : ir_tensor_get(c, 0);
    }
    ir_module_free(m);
    su_diags_free(&d);
    return found;
}

static void test_literals(void)
{
    ir_dtype dt = IR_BOOL;
    double v = 0;
    ok(constant_of("def @main() { 2147483647 }", &dt, &v) && dt == IR_INT32 && v == 2147483647.0,
       "literal: the largest int32 stays int32");
    ok(constant_of("def @main() { 2147483648 }", &dt, &v) && dt == IR_INT64 && v == 2147483648.0,
       "literal: an unsuffixed integer past int32 widens to int64, as in TVM");
    ok(constant_of("def @main() { -3000000000 }", &dt, &v) && dt == IR_INT64 && v == -3e9,
       "literal: and below int32's minimum");
    ok(constant_of("def @main() { inff }", &dt, &v) && dt == IR_FLOAT32 && isinf(v) && v > 0, "literal: inff");
    ok(constant_of("def @main() { -inff }", &dt, &v) && dt == IR_FLOAT32 && isinf(v) && v < 0, "literal: -inff");
    ok(constant_of("def @main() { 65504f16 }", &dt, &v) && dt == IR_FLOAT16 && v == 65504.0,
       "literal: 65504f16 is float16's largest value");
    ok(constant_of("def @main() { 1e-3f64 }", &dt, &v) && dt == IR_FLOAT64 && v == 1e-3, "literal: exponent and f64");
    const char *t = print_of("def @main() { 65505f16 }");
    ok(strstr(t, "ERROR the number 65505 does not fit in float16") != NULL, "literal: 65505f16 overflows (%s)", t);
    t = print_of("def @main() { -65505f16 }");
    ok(strstr(t, "does not fit in float16") != NULL, "literal: so does -65505f16 (%s)", t);
    t = print_of("def @main() { 300i8 }");
    ok(strstr(t, "does not fit in int8") != NULL, "literal: suffixed integers keep their range check (%s)", t);
    t = print_of("def @main() { 9223372036854775808 }");
    ok(strstr(t, "out of range") != NULL, "literal: past int64 is an error (%s)", t);
    t = print_of("def @main() { (inff, -inff, 3000000000) }");
    ok(strstr(t, "(inff, -inff, 3000000000i64)") != NULL, "literal: print forms read back (%s)", t);
}

static void test_types(void)
{
    const char *t = print_of("def @main(%z: int, %f: float) { (%z, %f) }");
    ok(strstr(t, "(%z: int32, %f: float32) -> (int32, float32)") != NULL, "types: int and float are int32 and float32 (%s)",
       t);
    t = print_of("def @main(%x: float32) -> _ { let %y: _ = exp(%x); %y }");
    ok(strstr(t, "-> float32") && strstr(t, "let %y = exp(%x);"), "types: the incomplete type _ is inferred (%s)", t);
    t = print_of("def @main(%x: (_, float32)) { %x }");
    ok(strstr(t, "ERROR the incomplete type _ can only be a whole annotation") != NULL, "types: _ inside a type (%s)", t);
    t = print_of("def @main(%x: _) { %x }");
    ok(strstr(t, "ERROR parameter %x needs a type annotation") != NULL, "types: a parameter of type _ (%s)", t);
}

static void test_polymorphism(void)
{
    const char *t = print_of("def @id[A](%x: A) -> A { %x }\n"
                             "def @main(%a: Tensor[(2), float32], %n: int32) { (@id(%a), @id(%n)) }");
    ok(strstr(t, "def @id[A](%x: A) -> A {") && strstr(t, "-> (Tensor[(2), float32], int32)"),
       "poly: @id is instantiated at two types (%s)", t);
    t = print_of("def @pair[A, B](%x: A, %y: B) -> (A, B) { (%x, %y) }\n"
                 "def @swap[A, B](%p: (A, B)) -> (B, A) { (%p.1, %p.0) }\n"
                 "def @main(%a: float32, %n: int32) { @swap(@pair(%a, %n)) }");
    ok(strstr(t, "def @main(%a: float32, %n: int32) -> (int32, float32)") != NULL,
       "poly: unification through tuples (%s)", t);
    t = print_of("def @apply[A, B](%f: fn (A) -> B, %x: A) -> B { %f(%x) }\n"
                 "def @main(%a: float32) { @apply(fn (%y: float32) { cast(%y, dtype=\"int32\") }, %a) }");
    ok(strstr(t, "def @main(%a: float32) -> int32") != NULL, "poly: unification through function types (%s)", t);
    t = print_of("def @same[A](%x: A, %y: A) -> A { %x }\n"
                 "def @main(%a: float32, %n: int32) { @same(%a, %n) }");
    ok(strstr(t, "ERROR call of @same: argument 2 has type int32, but the parameter expects float32: float32 and int32 "
                 "do not unify") != NULL,
       "poly: a failed unification names both types (%s)", t);
    t = print_of("def @mk[A](%x: float32) -> A { %x }");
    ok(strncmp(t, "ERROR the function body has type float32, but its declared return type is A", 70) == 0,
       "poly: a type parameter is rigid inside its def (%s)", t);
    t = print_of("def @bad[A](%x: A) -> A { nn.relu(%x) }");
    ok(strstr(t, "ERROR nn.relu") != NULL, "poly: ops need tensors, not a type parameter (%s)", t);
    t = print_of("def @f[A, A](%x: A) { %x }");
    ok(strstr(t, "ERROR type parameter A is declared twice") != NULL, "poly: duplicate type parameters (%s)", t);
    t = print_of("def @main(%a: float32) { %0 = fn [T](%x: T) -> T { %x }; %0(%a) }");
    ok(strstr(t, "fn [T](%x: T) -> T") && strstr(t, "-> float32"), "poly: a fn with type parameters, called (%s)", t);
    t = print_of("def @main(%a: float32) { let %g = fn [T](%x: T) -> T { %x }; %g(%a) }");
    ok(strstr(t, "ERROR call of %g: argument 1 has type float32, but the parameter expects T") != NULL,
       "poly: a closure in a variable is not polymorphic (%s)", t);

    /* and a polymorphic def runs */
    const char *text = "def @twice[A](%f: fn (A) -> A, %x: A) -> A { %f(%f(%x)) }\n"
                       "def @main(%a: float32) { @twice(fn (%y: float32) { %y * 3f }, %a + 1f) }";
    su_diags d = {0};
    ir_module *m = ir_parse("t.relay", text, strlen(text), &d);
    bool typed = m && ir_infer_types(m, &d);
    ok(typed, "poly: @twice type-checks");
    if (typed) {
        ir_tensor *a = ir_tensor_alloc(IR_FLOAT32, 0, NULL);
        *(float *)a->data = 2.0f;
        ir_value *arg = ir_value_tensor(a, true), *out = NULL;
        ir_interp *ip = ir_interp_new(m, NULL);
        bool ran = ir_interp_call(ip, "main", 1, &arg, &out, &d);
        ok(ran && out && out->kind == IR_VAL_TENSOR && *(float *)out->tensor->data == 27.0f,
           "poly: the interpreter runs @twice: (2 + 1) * 3 * 3 = 27");
        ir_value_release(out);
        ir_value_release(arg);
        ir_interp_free(ip);
    }
    ir_module_free(m);
    su_diags_free(&d);
}

/* The 3-D ops print their attributes that differ from TVM's defaults, and
 * the printout parses back to itself. */
static void test_ops_3d(void)
{
    const char *text = "def @main(%x: Tensor[(1, 4, 5, 6, 7), float32], %w: Tensor[(6, 2, 3, 3, 2), float32]) {\n"
                       "  %0 = nn.conv3d(%x, %w, strides=[1, 2, 1], padding=[1, 0, 1, 0, 1, 1], dilation=[1, 1, 1], "
                       "groups=2, data_layout=\"NCDHW\");\n"
                       "  (nn.max_pool3d(%0, pool_size=[2, 2, 2], ceil_mode=True), "
                       "nn.avg_pool3d(%0, pool_size=[3], padding=[1, 1, 1], count_include_pad=True))\n}";
    char first[8192];
    snprintf(first, sizeof first, "%s", print_of(text));
    ok(strstr(first, "nn.conv3d(%x, %w, strides=[1, 2, 1], padding=[1, 0, 1, 0, 1, 1], groups=2)") &&
           strstr(first, "nn.max_pool3d(%0, pool_size=[2, 2, 2], ceil_mode=True)") &&
           strstr(first, "nn.avg_pool3d(%0, pool_size=[3], padding=[1, 1, 1], count_include_pad=True)"),
       "3-D ops: defaults left out of the print");
    ok(same_print(text, first), "3-D ops: the print parses back to itself");
    const char *tr = "def @main(%x: Tensor[(1, 4, 3, 4, 5), float32], %w: Tensor[(4, 2, 3, 3, 2), float32]) { "
                     "nn.conv3d_transpose(%x, %w, strides=[2, 1, 2], output_padding=[1, 0, 1], kernel_layout=\"IODHW\") }";
    snprintf(first, sizeof first, "%s", print_of(tr));
    ok(strstr(first, "nn.conv3d_transpose(%x, %w, strides=[2, 1, 2], output_padding=[1, 0, 1])") && same_print(tr, first),
       "3-D ops: conv3d_transpose prints without its defaults and parses back");
    ok(strstr(print_of("def @main(%x: Tensor[(1, 4, 5, 6, 7), float32]) { nn.max_pool3d(%x) }"),
              "ERROR") != NULL, "3-D ops: max_pool3d without pool_size is an error");
}

int main(void)
{
    test_ops_3d();
    test_operators();
    test_sequencing_and_call_attrs();
    test_literals();
    test_types();
    test_polymorphism();
    return tap_done();
}
