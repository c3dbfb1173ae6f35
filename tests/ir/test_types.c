/* test_types.c — dtypes, types (construction, equality, printing), scalar
 * tensors and attribute values (literals, coercion, float printing). */
#include <math.h>
#include <string.h>

#include "ir/ir.h"
#include "tests/tap.h"

static su_arena A;

static const char *tys(const ir_type *t)
{
    return ir_type_str(&A, t);
}

static void test_dtypes(void)
{
    ir_dtype d;
    ok(ir_dtype_parse("float32", 7, &d) && d == IR_FLOAT32, "dtype: float32");
    ok(ir_dtype_parse("int64", 5, &d) && d == IR_INT64, "dtype: int64");
    ok(!ir_dtype_parse("float", 5, &d), "dtype: 'float' is unknown");
    ok(ir_dtype_bytes(IR_FLOAT16) == 2 && ir_dtype_bytes(IR_BOOL) == 1, "dtype: sizes");
    ok(ir_dtype_is_float(IR_FLOAT64) && !ir_dtype_is_float(IR_INT32) && ir_dtype_is_int(IR_UINT8) &&
           !ir_dtype_is_int(IR_BOOL), "dtype: classes");
}

static void test_types(void)
{
    int64_t s[] = {1, 3, 224, 224};
    const ir_type *t = ir_tensor_type(&A, IR_FLOAT32, 4, s);
    is_str(tys(t), "Tensor[(1, 3, 224, 224), float32]", "type: tensor prints as TVM does");
    is_str(tys(ir_tensor_type(&A, IR_INT32, 1, (int64_t[]){64})), "Tensor[(64), int32]", "type: 1-d");
    is_str(tys(ir_scalar_type(&A, IR_BOOL)), "bool", "type: scalar prints as its dtype");
    const ir_type *f2[] = {t, ir_scalar_type(&A, IR_FLOAT32)};
    const ir_type *tup = ir_tuple_type(&A, 2, f2);
    is_str(tys(tup), "(Tensor[(1, 3, 224, 224), float32], float32)", "type: tuple");
    is_str(tys(ir_tuple_type(&A, 1, f2)), "(Tensor[(1, 3, 224, 224), float32],)", "type: 1-tuple has a comma");
    is_str(tys(ir_func_type(&A, 1, f2, t)), "fn (Tensor[(1, 3, 224, 224), float32]) -> Tensor[(1, 3, 224, 224), float32]",
           "type: function");
    ok(ir_type_equal(t, ir_tensor_type(&A, IR_FLOAT32, 4, s)), "type: structural equality");
    int64_t s2[] = {1, 3, 224, 225};
    ok(!ir_type_equal(t, ir_tensor_type(&A, IR_FLOAT32, 4, s2)), "type: shapes differ");
    ok(!ir_type_equal(t, ir_tensor_type(&A, IR_FLOAT16, 4, s)), "type: dtypes differ");
    ok(!ir_type_equal(tup, ir_tuple_type(&A, 1, f2)), "type: tuple arity differs");
    is_int(ir_type_numel(t), 150528, "type: numel");
    is_str(ir_shape_str(&A, t), "(1, 3, 224, 224)", "type: shape string for messages");
}

static void test_scalars(void)
{
    ok(ir_tensor_get(ir_tensor_scalar(&A, IR_FLOAT16, 3.0), 0) == 3.0, "tensor: float16 3 round-trips");
    ok(ir_tensor_get(ir_tensor_scalar(&A, IR_FLOAT16, 0.1), 0) == 0.0999755859375, "tensor: float16 rounds to nearest");
    ok(ir_tensor_get(ir_tensor_scalar(&A, IR_INT64, 1e15), 0) == 1e15, "tensor: int64");
    ok(ir_tensor_get(ir_tensor_scalar(&A, IR_BOOL, 5), 0) == 1, "tensor: bool normalizes to 1");
    ir_tensor *t = ir_tensor_new(&A, IR_FLOAT32, 2, (int64_t[]){3, 5});
    ok(((uintptr_t)t->data % 64) == 0 && ir_tensor_numel(t) == 15, "tensor: 64-byte aligned data");
}

static const char *fstr(double v)
{
    su_buf b = {0};
    ir_print_float32(&b, v);
    const char *s = su_arena_strdup(&A, su_buf_str(&b));
    su_buf_free(&b);
    return s;
}

static const char *lit(const char *text)
{
    ir_attr_val v;
    if (!ir_attr_parse_literal(&A, text, &v))
        return "(parse error)";
    su_buf b = {0};
    ir_attr_print(&b, &v);
    const char *s = su_arena_strdup(&A, su_buf_str(&b));
    su_buf_free(&b);
    return s;
}

static void test_attrs(void)
{
    is_str(fstr(1e-05), "1e-05f", "float: 1e-05f");
    is_str(fstr(2.0), "2f", "float: 2f");
    is_str(fstr(0.5), "0.5f", "float: 0.5f");
    is_str(fstr(0.1), "0.1f", "float: 0.1 as float32 prints shortest");
    is_str(fstr(1e-12), "1e-12f", "float: 1e-12f");
    is_str(fstr(-6.0), "-6f", "float: negative");
    is_str(fstr(0.70710678118), "0.70710677f", "float: 1/sqrt(2)");
    is_str(lit("[1, 1]"), "[1, 1]", "literal: list");
    is_str(lit("[[0, 0], [1, 1]]"), "[[0, 0], [1, 1]]", "literal: nested list");
    is_str(lit("None"), "None", "literal: None");
    is_str(lit("True"), "True", "literal: True");
    is_str(lit("\"NCHW\""), "\"NCHW\"", "literal: string");
    is_str(lit("-1"), "-1", "literal: negative int");
    is_str(lit("1e-05f"), "1e-05f", "literal: float");
    is_str(lit("[1, "), "(parse error)", "literal: unterminated list is an error");
    ir_attr_val v, out;
    const char *why = NULL;
    ir_attr_parse_literal(&A, "3", &v);
    ok(ir_attr_coerce(&A, IR_AT_FLOAT, &v, &out, &why) && out.kind == IR_AV_FLOAT && out.f == 3.0,
       "coerce: int to float");
    ok(ir_attr_coerce(&A, IR_AT_INTS, &v, &out, &why) && out.kind == IR_AV_LIST && out.n == 1, "coerce: int to [int]");
    ok(!ir_attr_coerce(&A, IR_AT_STR, &v, &out, &why) && why && strstr(why, "string"), "coerce: int is not a string");
    ir_attr_parse_literal(&A, "[1, 2.5]", &v);
    ok(!ir_attr_coerce(&A, IR_AT_INTS, &v, &out, &why), "coerce: floats are not integers");
    ir_attr_val a, b;
    ir_attr_parse_literal(&A, "[1, 2]", &a);
    ir_attr_parse_literal(&A, "[1, 2]", &b);
    ok(ir_attr_equal(&a, &b), "attr equality: lists");
    ir_attr_parse_literal(&A, "1", &a);
    ir_attr_parse_literal(&A, "1f", &b);
    ok(ir_attr_equal(&a, &b), "attr equality: 1 == 1f");
}

int main(void)
{
    su_arena_init(&A);
    test_dtypes();
    test_types();
    test_scalars();
    test_attrs();
    su_arena_free(&A);
    return tap_done();
}
