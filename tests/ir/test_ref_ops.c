/* test_ref_ops.c — every reference kernel against the vectors PyTorch and
 * numpy computed (the .npz files of tests/ref/ops, made by
 * tests/gen/make_op_vectors.py).
 * Each case is a small Relay program with its inputs and expected result: it
 * is parsed, type-checked and run by the interpreter, and the result must
 * have the expected dtype and shape and agree within the case's tolerance
 * (0: bit for bit). One check per case; a final set of checks says that
 * every registered op ran in at least one case. */
#include <dirent.h>
#include <math.h>
#include <string.h>

#include "ir/ir.h"
#include "tests/tap.h"

static bool covered[IR_OP_COUNT];

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void mark_ops(const ir_expr *e, int depth)
{
    if (!e || depth > 10000)
        return;
    switch (e->kind) {
    case IR_CALL:
        if (ir_call_op(e))
            covered[ir_call_op(e)->id] = true;
        mark_ops(e->u.call.fn, depth + 1);
        for (int i = 0; i < e->u.call.nargs; i++)
            mark_ops(e->u.call.args[i], depth + 1);
        break;
    case IR_TUPLE:
        for (int i = 0; i < e->u.tuple.n; i++)
            mark_ops(e->u.tuple.fields[i], depth + 1);
        break;
    case IR_PROJ: mark_ops(e->u.proj.tuple, depth + 1); break;
    case IR_LET: mark_ops(e->u.let.value, depth + 1); mark_ops(e->u.let.body, depth + 1); break;
    default: break;
    }
}

typedef SU_VEC(const ir_tensor *) tensor_list;

static void flatten(const ir_value *v, tensor_list *out)
{
    if (v->kind == IR_VAL_TENSOR)
        su_vec_push(out, v->tensor);
    else if (v->kind == IR_VAL_TUPLE)
        for (int i = 0; i < v->n; i++)
            flatten(v->items[i], out);
}

/* Compares got with want: "" when they agree, else why (static buffer). */
/* A NaN expected and a NaN got agree whatever their sign and payload bits
 * (which C and PyTorch leave to the hardware); a NaN on one side only is an
 * error of any size. */
static bool both_nan(const ir_tensor *got, const ir_tensor *want, int64_t i)
{
    return isnan(ir_tensor_get(got, i)) && isnan(ir_tensor_get(want, i));
}

static const char *compare(const ir_tensor *got, const ir_tensor *want, double tol, double *err)
{
    static char why[512];
    su_buf a = {0}, b = {0};
    *err = 0;
    ir_tensor_print_type(&a, got);
    ir_tensor_print_type(&b, want);
    if (strcmp(su_buf_str(&a), su_buf_str(&b)) != 0) {
        snprintf(why, sizeof why, "got %s, want %s", su_buf_str(&a), su_buf_str(&b));
        su_buf_free(&a);
        su_buf_free(&b);
        return why;
    }
    su_buf_free(&a);
    su_buf_free(&b);
    int64_t n = ir_tensor_numel(want);
    bool fl = ir_dtype_is_float(want->dtype);
    if (tol == 0) {
        if (memcmp(got->data, want->data, ir_tensor_nbytes(want)) == 0)
            return "";
        for (int64_t i = 0; i < n; i++)
            if (!(fl && both_nan(got, want, i)) && memcmp((const char *)got->data + i * ir_dtype_bytes(want->dtype),
                       (const char *)want->data + i * ir_dtype_bytes(want->dtype), (size_t)ir_dtype_bytes(want->dtype))) {
                snprintf(why, sizeof why, "element %lld: got %.9g, want %.9g (exact match required)", (long long)i,
                         ir_tensor_get(got, i), ir_tensor_get(want, i));
                return why;
            }
    }
    double scale = 1, worst = 0;
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++)
        scale = fmax(scale, fabs(ir_tensor_get(want, i)));
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(ir_tensor_get(got, i) - ir_tensor_get(want, i));
        if (fl && both_nan(got, want, i))
            continue;
        if (!(d <= worst)) {    /* also catches NaN, and infinities that differ */
            worst = d;
            at = i;
        }
    }
    *err = worst / scale;
    if (*err <= tol)
        return "";
    snprintf(why, sizeof why, "element %lld: got %.9g, want %.9g: error %.3g relative to %.3g is above %.3g",
             (long long)at, ir_tensor_get(got, at), ir_tensor_get(want, at), worst, scale, tol);
    return why;
}

/* file and name are at most 255 and 511 bytes (see main), so every key and
 * label below fits its buffer. */
static void run_case(const char *file, const ir_npz *z, const char *name)
{
    char key[1024];
    snprintf(key, sizeof key, "%s.model", name);
    const ir_tensor *text = ir_npz_find(z, key);
    snprintf(key, sizeof key, "%s.tol", name);
    const ir_tensor *tolt = ir_npz_find(z, key);
    double tol = tolt ? ir_tensor_get(tolt, 0) : 0;
    su_diags d = {0};
    char label[1024];
    snprintf(label, sizeof label, "%s/%s", file, name);
    ir_module *m = ir_parse(label, text->data, (size_t)ir_tensor_numel(text), &d);
    if (!m || !ir_infer_types(m, &d)) {
        ok(0, "%s: the case's model type-checks", label);
        su_diags_print(stderr, &d);
        ir_module_free(m);
        su_diags_free(&d);
        return;
    }
    const ir_expr *f = ir_module_find(m, "main")->func;
    mark_ops(f->u.func.body, 0);
    int n = f->u.func.nparams;
    ir_value **args = su_calloc((size_t)n + 1, sizeof *args);
    bool have_all = true;
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof key, "%s.%s", name, f->u.func.params[i]->u.var.name);
        const ir_tensor *t = ir_npz_find(z, key);
        if (!t) {
            have_all = false;
            diag("%s: no input %s", label, key);
            break;
        }
        args[i] = ir_value_tensor((ir_tensor *)t, false);
    }
    ir_interp *ip = ir_interp_new(m, NULL);
    ir_value *out = NULL;
    if (have_all && ir_interp_call(ip, "main", n, args, &out, &d)) {
        tensor_list got = {0};
        flatten(out, &got);
        const char *why = "";
        double err = 0, worst = 0;
        for (size_t i = 0; i < got.len && !*why; i++) {
            snprintf(key, sizeof key, out->kind == IR_VAL_TUPLE ? "%s.expected.%zu" : "%s.expected", name, i);
            const ir_tensor *want = ir_npz_find(z, key);
            why = want ? compare(got.data[i], want, tol, &err) : "an expected result is missing";
            worst = fmax(worst, err);
        }
        snprintf(key, sizeof key, "%s.expected.%zu", name, got.len);
        if (!*why && out->kind == IR_VAL_TUPLE && ir_npz_find(z, key))
            why = "the result has fewer fields than expected";
        if (!ok(!*why, "%s (%s, error %.2g)", label, tol ? "within tolerance" : "exact", worst))
            diag("%s", why);
        su_vec_free(&got);
    } else {
        ok(0, "%s runs", label);
        su_diags_print(stderr, &d);
    }
    ir_value_release(out);
    for (int i = 0; i < n; i++)
        ir_value_release(args[i]);
    free(args);
    ir_interp_free(ip);
    ir_module_free(m);
    su_diags_free(&d);
}

int main(void)
{
    const char *srcdir = getenv("top_srcdir");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/ref/ops", srcdir ? srcdir : ".");
    DIR *dp = opendir(dir);
    if (!ok(dp != NULL, "open %s", dir))
        return tap_done();
    SU_VEC(char *) files = {0};
    for (struct dirent *de; (de = readdir(dp));)
        if (strlen(de->d_name) > 4 && !strcmp(de->d_name + strlen(de->d_name) - 4, ".npz"))
            su_vec_push(&files, su_strdup(de->d_name));
    closedir(dp);
    qsort(files.data, files.len, sizeof *files.data, cmp_str);
    int cases = 0;
    for (size_t i = 0; i < files.len; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, files.data[i]);
        su_buf err = {0};
        ir_npz *z = ir_npz_load(path, &err);
        if (!ok(z != NULL, "%s reads", files.data[i])) {
            diag("%s", su_buf_str(&err));
            su_buf_free(&err);
            continue;
        }
        su_buf_free(&err);
        files.data[i][strlen(files.data[i]) - 4] = 0;
        for (int k = 0; k < z->n; k++) {
            const char *key = z->entries[k].name;
            size_t len = strlen(key);
            if (len > 6 && len - 6 < 512 && !strcmp(key + len - 6, ".model")) {
                char name[512];
                snprintf(name, sizeof name, "%.*s", (int)(len - 6), key);
                run_case(files.data[i], z, name);
                cases++;
            }
        }
        ir_npz_free(z);
    }
    ok(cases >= 150, "%d cases ran (at least 150 expected)", cases);
    for (int id = 0; id < IR_OP_COUNT; id++)
        ok(covered[id], "coverage: %s has reference vectors", ir_op_get((ir_op_id)id)->name);
    for (size_t i = 0; i < files.len; i++)
        free(files.data[i]);
    su_vec_free(&files);
    return tap_done();
}
