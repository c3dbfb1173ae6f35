/* test_adt.c — algebraic data types, match, references and device
 * annotations end to end: each construct parses, prints, re-parses to the
 * same text, type-checks (unknowns solved by unification: Nil takes its
 * element type from where it is used) and runs in the interpreter on values
 * whose expected results the test computes itself. Also the exhaustiveness
 * warnings (the missing value they name), a match? that fails at run time,
 * and what compile and tune take (ir_module_first_order). Under ASan the
 * leak checker proves that constructed values and references are released. */
#include <math.h>
#include <string.h>

#include "ir/ir.h"
#include "tests/ir/roundtrip.h"
#include "tests/tap.h"

static const char *const PRELUDE =
    "type List[A] { Cons(A, List[A]), Nil }\n"
    "type Option[A] { Some(A), None }\n"
    "type Tree[A] { Leaf, Node(Tree[A], A, Tree[A]) }\n"
    "def @length[A](%l: List[A]) -> int32 { match (%l) { Cons(_, %t) => 1 + @length(%t), Nil => 0 } }\n"
    "def @map[A, B](%f: fn (A) -> B, %l: List[A]) -> List[B] {\n"
    "  match (%l) { Cons(%h, %t) => Cons(%f(%h), @map(%f, %t)), Nil => Nil }\n"
    "}\n"
    "def @foldl[A, B](%f: fn (A, B) -> A, %acc: A, %l: List[B]) -> A {\n"
    "  match (%l) { Cons(%h, %t) => @foldl(%f, %f(%acc, %h), %t), Nil => %acc }\n"
    "}\n"
    "def @concat[A](%a: List[A], %b: List[A]) -> List[A] {\n"
    "  match (%a) { Cons(%h, %t) => Cons(%h, @concat(%t, %b)), Nil => %b }\n"
    "}\n"
    "def @nth[A](%l: List[A], %n: int32) -> Option[A] {\n"
    "  match (%l) { Cons(%h, %t) => if (%n == 0) { Some(%h) } else { @nth(%t, %n - 1) }, Nil => None }\n"
    "}\n"
    "def @sum(%t: Tree[float32]) -> float32 {\n"
    "  match (%t) { Node(%l, %v, %r) => @sum(%l) + %v + @sum(%r), Leaf => 0f }\n"
    "}\n"
    "def @depth[A](%t: Tree[A]) -> int32 {\n"
    "  match (%t) { Node(%l, _, %r) => 1 + maximum(@depth(%l), @depth(%r)), Leaf => 0 }\n"
    "}\n"
    "def @count(%r: ref(int32), %n: int32) -> int32 {\n"
    "  if (%n > 0) { ref_write(%r, ref_read(%r) + %n); @count(%r, %n - 1) } else { ref_read(%r) }\n"
    "}\n";

/* PRELUDE followed by main (a static buffer). */
static const char *with_prelude(const char *main)
{
    static char buf[8192];
    snprintf(buf, sizeof buf, "%s%s", PRELUDE, main);
    return buf;
}

/* Parses and type-checks text; NULL after printing why. Warnings go to *warn (first one) when asked. */
static ir_module *load(const char *text, char *warn, size_t nwarn)
{
    su_diags d = {0};
    ir_module *m = ir_parse("t.relay", text, strlen(text), &d);
    if (m && !ir_infer_types(m, &d)) {
        ir_module_free(m);
        m = NULL;
    }
    if (!m)
        su_diags_print(stdout, &d);
    if (warn) {
        warn[0] = 0;
        for (size_t i = 0; i < d.len && !warn[0]; i++)
            if (d.items[i].sev == SU_WARNING)
                snprintf(warn, nwarn, "%s", d.items[i].msg);
    }
    su_diags_free(&d);
    return m;
}

/* print → parse → print gives the same text, and it type-checks. */
static bool fixed_point(const char *text)
{
    char first[8192];
    snprintf(first, sizeof first, "%s", roundtrip(text, true));
    if (strncmp(first, "ERROR", 5) == 0) {
        diag("%s", first);
        return false;
    }
    const char *second = roundtrip(first, true);
    if (strcmp(first, second) != 0)
        diag("first:\n%s\nsecond:\n%s", first, second);
    return strcmp(first, second) == 0;
}

static ir_value *vec(int n, const float *v)
{
    int64_t shape[1] = {n};
    ir_tensor *t = ir_tensor_alloc(IR_FLOAT32, 1, shape);
    memcpy(t->data, v, (size_t)n * sizeof *v);
    return ir_value_tensor(t, true);
}

static ir_value *scalar(ir_dtype dt, double v)
{
    ir_tensor *t = ir_tensor_alloc(dt, 0, NULL);
    ir_tensor_set(t, 0, v);
    return ir_value_tensor(t, true);
}

/* The module of the last run: a result may borrow its constants, so it lives until drop. */
static ir_module *held;

/* Releases a result of run and its module. */
static void drop(ir_value *r)
{
    ir_value_release(r);
    ir_module_free(held);
    held = NULL;
}

/* Runs @main of text on args (released here); the result, or NULL with the first error in msg. */
static ir_value *run(const char *text, int n, ir_value **args, char *msg, size_t nmsg)
{
    ir_module *m = held = load(text, NULL, 0);
    ir_value *out = NULL;
    if (m) {
        su_diags d = {0};
        ir_interp *ip = ir_interp_new(m, NULL);
        if (!ir_interp_call(ip, "main", n, args, &out, &d)) {
            ir_value_release(out);
            out = NULL;
        }
        if (msg)
            snprintf(msg, nmsg, "%s", d.len ? d.items[0].msg : "");
        ir_interp_free(ip);
        su_diags_free(&d);
    }
    for (int i = 0; i < n; i++)
        ir_value_release(args[i]);
    return out;
}

static double num(const ir_value *v)
{
    return v && v->kind == IR_VAL_TENSOR ? ir_tensor_get(v->tensor, 0) : NAN;
}

/* ---- parse, print, fixed point, types ---- */

static void test_print(void)
{
    ok(fixed_point(PRELUDE), "fixed point: List, Option, Tree and the defs over them");
    ok(fixed_point("type Pair[A, B] { MkPair(A, B) }\nextern type Storage[A]\ntype Unit\n"
                   "def @main(%p: Pair[float32, int32], %s: Storage[float32]) { match (%p) { MkPair(%a, _) => %a } }"),
       "fixed point: two type parameters, an extern type, a type without constructors");
    ok(fixed_point(with_prelude("def @main(%l: List[(float32, Option[int32])]) -> int32 {\n"
                                "  match? (%l) { Cons((%x: float32, Some(%n)), _) => %n, Cons((_, None), Nil) => 0 }\n"
                                "}")),
       "fixed point: nested constructor, tuple, annotated variable and wildcard patterns, match?");
    ok(fixed_point("def @main(%x: float32) { let %r = ref(%x); ref_write(%r, %x * 2f); ref_read(%r) }"),
       "fixed point: ref, ref_write, ref_read");
    ok(fixed_point("def @main(%x {virtual_device=VirtualDevice(device_type=2, virtual_device_id=0, "
                   "target=Target(kind='cuda', keys={'cuda', 'gpu'}, host=Target(kind='llvm')))}: float32, "
                   "virtual_device=meta[VirtualDevice][0]) {\n"
                   "  %0 = on_device(%x, virtual_device=meta[VirtualDevice][0], constrain_result=True);\n"
                   "  device_copy(%0, src_virtual_device=meta[VirtualDevice][0], dst_virtual_device=meta[VirtualDevice][1])\n"
                   "}"),
       "fixed point: virtual_device on a parameter and a function, on_device, device_copy");
    const char *t = roundtrip("def @main(%x {virtual_device=VirtualDevice(device_type=1, virtual_device_id=0)}: float32)"
                              " { on_device(%x, virtual_device=VirtualDevice(device_type=1, virtual_device_id=0)) }",
                              false);
    ok(strstr(t, "%x {virtual_device=VirtualDevice(device_type=1, virtual_device_id=0)}: float32") &&
           strstr(t, "on_device(%x, virtual_device=VirtualDevice(device_type=1, virtual_device_id=0))"),
       "devices: annotations print back as written (%s)", t);
}

static void test_types(void)
{
    const char *t = roundtrip(with_prelude("def @main(%x: float32) { Cons(%x, Nil) }"), false);
    ok(strstr(t, "def @main(%x: float32) -> List[float32]") != NULL, "types: Nil takes its type from Cons (%s)", t);
    t = roundtrip(with_prelude("def @main() { let %l: List[int64] = Nil; @length(%l) }"), false);
    ok(strstr(t, "-> int32") && strstr(t, "let %l: List[int64] = Nil;"), "types: Nil from an annotation (%s)", t);
    t = roundtrip(with_prelude("def @main(%l: List[Tensor[(2, 3), float32]]) {\n"
                               "  match (%l) { Cons(%h, _) => nn.relu(%h), Nil => 0f } }"),
                  false);
    ok(strstr(t, "ERROR the clauses of match have different types: Tensor[(2, 3), float32] and float32") == t,
       "types: a clause of another type is an error (%s)", t);
    t = roundtrip(with_prelude("def @main(%l: List[Tensor[(2, 3), float32]]) {\n"
                               "  match (%l) { Cons(%h, _) => nn.relu(%h), Nil => full(0f, shape=[2, 3]) } }"),
                  true);
    ok(strstr(t, "-> Tensor[(2, 3), float32]") && strstr(t, "nn.relu(%h) /* ty=Tensor[(2, 3), float32] */"),
       "types: a pattern variable has the field's type, so an op can use it (%s)", t);
    t = roundtrip(with_prelude("def @main(%x: int32) { let %r = ref(%x); ref_read(%r) }"), true);
    ok(strstr(t, "-> int32") && strstr(t, "ref(%x)"), "types: ref(int32) read back is int32 (%s)", t);
    t = roundtrip(with_prelude("def @main(%x: float32) { @map(Some, Cons(%x, Nil)) }"), false);
    ok(strstr(t, "-> List[Option[float32]]") != NULL, "types: a constructor passed as a function (%s)", t);
    t = roundtrip("type List[A] { Cons(A, List[A]), Nil }\ndef @main(%x: float32) { Cons(%x, Cons(1, Nil)) }", false);
    ok(strstr(t, "ERROR call of the constructor Cons: argument 2 has type List[int32], but the parameter expects "
                 "List[float32]") != NULL, "types: constructor fields unify (%s)", t);
}

/* ---- exhaustiveness ---- */

static void test_exhaustive(void)
{
    char w[512];
    struct { const char *clauses, *missing; } cases[] = {
        {"Cons(_, Cons(_, _)) => 0, Nil => 1", "Cons(_, Nil)"},
        {"Cons(_, _) => 0", "Nil"},
        {"Nil => 0", "Cons(_, _)"},
        {"Cons(Some(_), _) => 0, Nil => 1", "Cons(None, _)"},
        {"Cons(_, _) => 0, Nil => 1", NULL},
        {"_ => 0", NULL},
        {"%l => 0", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[512];
        snprintf(text, sizeof text, "def @main(%%l: List[Option[float32]]) { match (%%l) { %s } }", cases[i].clauses);
        ir_module *m = load(with_prelude(text), w, sizeof w);
        char want[128] = "";
        if (cases[i].missing)
            snprintf(want, sizeof want, "no clause matches %s (", cases[i].missing);
        ok(m && (cases[i].missing ? strstr(w, want) != NULL : w[0] == 0), "exhaustive: { %s } %s%s (warning: %s)",
           cases[i].clauses, cases[i].missing ? "misses " : "covers everything", cases[i].missing ? cases[i].missing : "",
           w[0] ? w : "none");
        ir_module_free(m);
    }
    ir_module *m = load(with_prelude("def @main(%p: (Option[int32], Option[int32])) -> int32 {\n"
                                     "  match (%p) { (Some(_), _) => 0, (None, None) => 1 } }"),
                        w, sizeof w);
    ok(m && strstr(w, "no clause matches (None, Some(_))"), "exhaustive: tuples of options (%s)", w);
    ir_module_free(m);
    m = load(with_prelude("def @main(%l: List[float32]) -> int32 { match? (%l) { Nil => 0 } }"), w, sizeof w);
    ok(m && w[0] == 0, "exhaustive: match? is never warned about (%s)", w);
    ir_module_free(m);
}

/* ---- running ---- */

static void test_run_lists(void)
{
    float a[3] = {1.5f, -2, 4}, b[3] = {0.25f, 3, -1}, c[3] = {2, 2, 2};
    char msg[512];
    /* tensors inside a list: mapped (+1) and summed with foldl */
    ir_value *args[3] = {vec(3, a), vec(3, b), vec(3, c)};
    ir_value *r = run(with_prelude("def @main(%a: Tensor[(3), float32], %b: Tensor[(3), float32], %c: Tensor[(3), float32]) {\n"
                                   "  %0 = Cons(%a, Cons(%b, Cons(%c, Nil)));\n"
                                   "  %1 = @map(fn (%t: Tensor[(3), float32]) { %t + 1f }, %0);\n"
                                   "  (@foldl(fn (%s: Tensor[(3), float32], %t: Tensor[(3), float32]) { %s + %t }, zeros_like(%a), %1),\n"
                                   "   @length(%1))\n"
                                   "}"),
                      3, args, msg, sizeof msg);
    bool good = r && r->kind == IR_VAL_TUPLE && r->n == 2;
    for (int i = 0; good && i < 3; i++)
        good = fabs(ir_tensor_get(r->items[0]->tensor, i) - (a[i] + b[i] + c[i] + 3)) < 1e-6;
    ok(good && num(r->items[1]) == 3, "run: a list of tensors mapped and summed by foldl, its length (%s)", msg);
    drop(r);

    /* concat and nth: Some at each index, None past the end */
    for (int n = 0; n <= 4; n++) {
        ir_value *in[2] = {scalar(IR_FLOAT32, 10), scalar(IR_INT32, n)};
        r = run(with_prelude("def @main(%x: float32, %n: int32) -> float32 {\n"
                             "  %0 = @concat(Cons(%x, Cons(%x + 1f, Nil)), Cons(%x + 2f, Cons(%x + 3f, Nil)));\n"
                             "  match (@nth(%0, %n)) { Some(%v) => %v, None => -1f }\n"
                             "}"),
                2, in, msg, sizeof msg);
        ok(num(r) == (n < 4 ? 10 + n : -1), "run: @nth(@concat(...), %d) is %s (%g, %s)", n, n < 4 ? "Some" : "None",
           num(r), msg);
        drop(r);
    }
}

static void test_run_tree_and_ref(void)
{
    char msg[512];
    ir_value *x[1] = {scalar(IR_FLOAT32, 0.5)};
    ir_value *r = run(with_prelude("def @main(%x: float32) {\n"
                                   "  %0 = Node(Node(Leaf, 1f, Leaf), %x, Node(Leaf, 3f, Node(Leaf, 4f, Leaf)));\n"
                                   "  (@sum(%0), @depth(%0))\n"
                                   "}"),
                      1, x, msg, sizeof msg);
    ok(r && r->n == 2 && num(r->items[0]) == 1 + 0.5 + 3 + 4 && num(r->items[1]) == 3,
       "run: a tree's sum and depth (%s)", msg);
    drop(r);

    for (int n = 0; n <= 20; n += 10) {
        int want = 0;
        for (int i = 1; i <= n; i++)
            want += i;
        ir_value *in[1] = {scalar(IR_INT32, n)};
        r = run(with_prelude("def @main(%n: int32) -> int32 { let %r = ref(0); @count(%r, %n) }"), 1, in, msg,
                sizeof msg);
        ok(num(r) == want, "run: a recursive def counting in a reference to %d gives %d (%g, %s)", n, want, num(r), msg);
        drop(r);
    }
    /* a write seen through another name of the same reference */
    ir_value *in[1] = {scalar(IR_FLOAT32, 3)};
    r = run("def @main(%x: float32) { let %r = ref(%x); let %s = %r; ref_write(%s, %x * 2f); ref_read(%r) }", 1, in,
            msg, sizeof msg);
    ok(num(r) == 6, "run: references are shared, not copied (%g, %s)", num(r), msg);
    drop(r);

    float v[2] = {7, -7};
    ir_value *d[1] = {vec(2, v)};
    r = run("def @main(%x: Tensor[(2), float32]) {\n"
            "  %0 = on_device(%x, virtual_device=meta[VirtualDevice][0], constrain_result=True);\n"
            "  device_copy(%0, src_virtual_device=meta[VirtualDevice][0], dst_virtual_device=meta[VirtualDevice][1])\n"
            "}",
            1, d, msg, sizeof msg);
    ok(r && r->kind == IR_VAL_TENSOR && ir_tensor_get(r->tensor, 0) == 7 && ir_tensor_get(r->tensor, 1) == -7,
       "run: on_device and device_copy are identities on one device (%s)", msg);
    drop(r);

    ir_value *l[1] = {scalar(IR_FLOAT32, 1)};
    r = run(with_prelude("def @main(%x: float32) -> float32 {\n"
                         "  match? (Cons(%x, Nil)) { Cons(_, Cons(%y, _)) => %y }\n"
                         "}"),
            1, l, msg, sizeof msg);
    ok(!r && strstr(msg, "no clause of this match? matches the value Cons(float32, Nil)"),
       "run: a partial match that fails names the value (%s)", msg);
    drop(r);
}

/* ---- what compile and tune take ---- */

static void test_first_order(void)
{
    struct { const char *main, *gist; } refused[] = {
        {"def @main(%x: float32) { @length(Cons(%x, Nil)) }", "@main uses the constructor Cons"},
        {"def @main(%l: List[float32]) { @length(%l) }", "@main uses a value of type List[float32]"},
        {"def @first(%x: float32) -> float32 { match (%x) { %y => %y } }\ndef @main(%x: float32) { @first(%x) }",
         "@main calls @first, which uses `match`"},
        {"def @main(%x: float32) { let %r = ref(%x); ref_read(%r) }", "@main uses `ref`"},
        {"def @main(%x: float32) { on_device(%x, virtual_device=meta[VirtualDevice][0]) }", "@main uses on_device"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        ir_module *m = load(with_prelude(refused[i].main), NULL, 0);
        su_diags d = {0};
        bool took = m && ir_module_first_order(m, &d);
        ok(m && !took && d.len && strstr(d.items[0].msg, refused[i].gist) &&
               strstr(d.items[0].msg, "relay-tune run --target interp"),
           "first order: %s is refused by name (%s)", refused[i].main, d.len ? d.items[0].msg : "no error");
        su_diags_free(&d);
        ir_module_free(m);
    }
    ir_module *m = load(with_prelude("def @main(%x: Tensor[(4), float32]) { nn.relu(%x) + 1f }"), NULL, 0);
    su_diags d = {0};
    size_t before = m ? m->defs.len : 0;
    bool took = m && ir_module_first_order(m, &d);
    size_t after = m ? m->defs.len : 0;
    ok(took && after == 1 && ir_module_find(m, "main") && !ir_module_find(m, "length") && before > 1,
       "first order: a tensor @main beside ADT code is taken, the defs it does not call dropped (%zu -> %zu)", before,
       after);
    su_diags_free(&d);
    ir_module_free(m);
}

int main(void)
{
    test_print();
    test_types();
    test_exhaustive();
    test_run_lists();
    test_run_tree_and_ref();
    test_first_order();
    return tap_done();
}
