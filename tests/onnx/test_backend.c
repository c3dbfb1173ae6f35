/* test_backend.c — the ONNX project's own backend tests (Debian's
 * libonnx-testdata) run on the importer and the reference interpreter: each
 * test's model.onnx is imported, every test_data_set_N is run with its
 * input_*.pb tensors and the results are compared with output_*.pb as the
 * ONNX backend runner compares them (|got - want| <= atol + rtol * |want|,
 * rtol 1e-3, atol 1e-7; NaN matches NaN). One TAP line per test:
 *   ok                        the test passes
 *   ok ... # SKIP             not covered: the model uses an op without a converter
 *   not ok ... # TODO reason  covered, and listed in expected_failures.txt with why
 * A covered test that fails without being listed fails the run, and so does
 * a listed test that passes (TAP's unexpected pass), so the list stays true.
 * The per-op table (tests, passing) and the totals are printed as comments.
 *
 * Usage: test_backend [--cpu] [SUITE_DIR...] (default: the node,
 * pytorch-converted, pytorch-operator and simple suites under ONNX_TESTDATA).
 * --cpu also compiles each test that passes for the cpu target and checks
 * its first data set there (a compile per test, through the compile cache:
 * tests/onnx/backend_cpu.sh runs it in `make check`); the tests that pass on
 * the interpreter but not compiled are listed apart, in
 * expected_cpu_failures.txt, read in this mode only. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "onnx/onnx.h"

#ifndef ONNX_TESTDATA
#define ONNX_TESTDATA "/usr/share/libonnx-testdata/data"
#endif

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted entries of dir starting with prefix (malloc'd names). */
static int list_dir(const char *dir, const char *prefix, char ***out)
{
    DIR *d = opendir(dir);
    int n = 0, cap = 0;
    *out = NULL;
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, strlen(prefix)))
            continue;
        if (n == cap)
            *out = su_realloc(*out, sizeof **out * (size_t)(cap = cap ? 2 * cap : 64));
        (*out)[n++] = su_strdup(e->d_name);
    }
    closedir(d);
    if (n > 1)
        qsort(*out, (size_t)n, sizeof **out, cmp_str);
    return n;
}

static void free_list(char **l, int n)
{
    for (int i = 0; i < n; i++)
        free(l[i]);
    free(l);
}

/* ---- the expected failures ------------------------------------------------ */

typedef struct xfail {
    char *name;     /* suite/test */
    char *why;
} xfail;
static SU_VEC(xfail) xfails;

static void load_xfails(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    if (!f) {
        printf("# cannot read %s: every covered test must pass\n", path);
        return;
    }
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (!line[0] || line[0] == '#')
            continue;
        char *sp = strchr(line, ' ');
        if (sp)
            *sp++ = 0;
        xfail x = {su_strdup(line), su_strdup(sp ? sp : "(no reason given)")};
        su_vec_push(&xfails, x);
    }
    fclose(f);
}

static const char *xfail_why(const char *name)
{
    for (size_t i = 0; i < xfails.len; i++)
        if (!strcmp(xfails.data[i].name, name))
            return xfails.data[i].why;
    return NULL;
}

/* ---- per-op table ----------------------------------------------------------- */

typedef struct op_row {
    char *op;
    int tests, passing;
} op_row;
static SU_VEC(op_row) table;

static void count_op(const char *op, bool pass)
{
    for (size_t i = 0; i < table.len; i++)
        if (!strcmp(table.data[i].op, op)) {
            table.data[i].tests++;
            table.data[i].passing += pass;
            return;
        }
    op_row r = {su_strdup(op), 1, pass};
    su_vec_push(&table, r);
}

/* ---- one test ----------------------------------------------------------- */

/* The ops of the model no converter covers, as text ("" when covered);
 * *ops gets the distinct op types (for the table). */
static bool read_model(const char *path, su_buf *uncovered, char ***ops, int *nops)
{
    size_t len;
    char *data = su_read_file(path, &len);
    su_diags d = {0};
    int64_t opset;
    Onnx__ModelProto *m = data ? onnx__model_proto__unpack(NULL, len, (const uint8_t *)data) : NULL;
    *ops = NULL;
    *nops = 0;
    if (!m || !m->graph) {
        su_buf_printf(uncovered, "unreadable model");
        free(data);
        if (m)
            onnx__model_proto__free_unpacked(m, NULL);
        return false;
    }
    /* a model outside the opsets the importer reads is not covered either */
    Onnx__ModelProto *checked = ox_model_unpack(path, (const uint8_t *)data, len, NULL, &opset, &d);
    free(data);
    if (!checked) {
        const char *msg = d.len ? d.items[0].msg : "unreadable";
        const char *colon = strstr(msg, ".onnx: ");
        su_buf_printf(uncovered, "%s", colon ? colon + 7 : msg);
        opset = -1;
    } else {
        onnx__model_proto__free_unpacked(checked, NULL);
    }
    su_diags_free(&d);
    const Onnx__GraphProto *g = m->graph;
    for (size_t i = 0; i < g->n_node; i++) {
        const char *op = g->node[i]->op_type ? g->node[i]->op_type : "";
        bool dup = false;
        for (int j = 0; j < *nops; j++)
            dup |= !strcmp((*ops)[j], op);
        if (dup)
            continue;
        *ops = su_realloc(*ops, sizeof **ops * (size_t)(*nops + 1));
        (*ops)[(*nops)++] = su_strdup(op);
        const char *dom = g->node[i]->domain ? g->node[i]->domain : "";
        if (opset >= 0 && ((*dom && strcmp(dom, "ai.onnx")) || !ox_op_supported(op, opset)))
            su_buf_printf(uncovered, "%s%s", uncovered->len ? ", " : "", op);
    }
    onnx__model_proto__free_unpacked(m, NULL);
    return true;
}

static bool close_enough(const ir_tensor *got, const ir_tensor *want, su_buf *why)
{
    if (got->ndim != want->ndim || (got->ndim && memcmp(got->shape, want->shape, sizeof *got->shape * (size_t)got->ndim))) {
        su_buf_printf(why, "shape differs");
        return false;
    }
    if (got->dtype != want->dtype) {
        su_buf_printf(why, "dtype %s, expected %s", ir_dtype_name(got->dtype), ir_dtype_name(want->dtype));
        return false;
    }
    int64_t n = ir_tensor_numel(got);
    for (int64_t i = 0; i < n; i++) {
        double g = ir_tensor_get(got, i), w = ir_tensor_get(want, i);
        if (isnan(g) && isnan(w))
            continue;
        if (isinf(w) && g == w)
            continue;
        if (!(fabs(g - w) <= 1e-7 + 1e-3 * fabs(w))) {
            su_buf_printf(why, "element %lld is %.9g, expected %.9g", (long long)i, g, w);
            return false;
        }
    }
    return true;
}

/* The inputs of one data set, with their names (from the .pb files). */
typedef struct inputs {
    int n;
    char **names;
    ir_tensor **t;
} inputs;

static void inputs_free(inputs *in)
{
    for (int i = 0; i < in->n; i++) {
        free(in->names[i]);
        ir_tensor_free(in->t[i]);
    }
    free(in->names);
    free(in->t);
}

static bool read_inputs(const char *dir, inputs *in, su_buf *why)
{
    char **files;
    int n = list_dir(dir, "input_", &files);
    in->n = 0;
    in->names = su_calloc((size_t)(n > 0 ? n : 1), sizeof *in->names);
    in->t = su_calloc((size_t)(n > 0 ? n : 1), sizeof *in->t);
    bool ok = n >= 0;
    for (int i = 0; ok && i < n; i++) {
        su_buf path = {0};
        su_buf_printf(&path, "%s/%s", dir, files[i]);
        in->t[i] = ox_tensor_file(su_buf_str(&path), &in->names[i], why);
        su_buf_free(&path);
        ok = in->t[i] != NULL;
        in->n = i + 1;
    }
    if (n >= 0)
        free_list(files, n);
    return ok;
}

/* Integer, bool and scalar inputs are what converters need as constants
 * (shapes, axes, pads, training flags, ratios, pad values), and so are the
 * float scales and roi of Resize and Upsample, which the tests name so. */
static bool bindable(const char *name, const ir_tensor *t)
{
    return ir_dtype_is_int(t->dtype) || t->dtype == IR_BOOL || t->ndim == 0 || !strcmp(name, "scales") ||
           !strcmp(name, "roi");
}

/* Runs one test_data_set on module m (when bind, m is imported here with
 * the set's shape inputs bound); false with the reason in why. */
static bool run_set(const char *model, ir_module *m, bool bind, const char *dir, su_buf *why)
{
    inputs in;
    bool ok = read_inputs(dir, &in, why);
    ir_value **args = su_calloc((size_t)(in.n + 1), sizeof *args);
    int nargs = 0;
    if (ok && bind) {
        const char **names = su_calloc((size_t)(in.n + 1), sizeof *names);
        const ir_tensor **vals = su_calloc((size_t)(in.n + 1), sizeof *vals);
        ox_options b = {.bind_names = names, .bind_values = vals};
        for (int i = 0; i < in.n; i++)
            if (bindable(in.names[i], in.t[i])) {
                names[b.nbind] = in.names[i];
                vals[b.nbind++] = in.t[i];
            }
        su_diags d = {0};
        m = ox_import_file_opts(model, &b, &d);
        if (!m) {
            const char *msg = d.len ? d.items[0].msg : "import failed";
            const char *colon = strstr(msg, ".onnx: ");
            su_buf_printf(why, "import with shape inputs bound: %s", colon ? colon + 7 : msg);
            ok = false;
        }
        su_diags_free(&d);
        free(names);
        free(vals);
    }
    for (int i = 0; ok && i < in.n; i++)
        if (!bind || !bindable(in.names[i], in.t[i]))
            args[nargs++] = ir_value_tensor(in.t[i], false);
    const ir_expr *f = ok ? ir_module_find(m, "main")->func : NULL;
    if (ok && nargs != f->u.func.nparams) {
        su_buf_printf(why, "%d inputs for %d parameters", nargs, f->u.func.nparams);
        ok = false;
    }
    ir_value *res = NULL;
    su_diags d = {0};
    ir_interp *ip = ok ? ir_interp_new(m, NULL) : NULL;
    if (ok && !ir_interp_call(ip, "main", nargs, args, &res, &d)) {
        su_buf_printf(why, "interpreter: %s", d.len ? d.items[0].msg : "failed");
        ok = false;
    }
    ir_interp_free(ip);
    su_diags_free(&d);
    char **outs;
    int nout = list_dir(dir, "output_", &outs);
    if (ok) {
        int nres = res->kind == IR_VAL_TUPLE ? res->n : 1;
        if (nres != nout) {
            su_buf_printf(why, "%d results, %d expected", nres, nout);
            ok = false;
        }
        for (int i = 0; ok && i < nout; i++) {
            const ir_value *v = res->kind == IR_VAL_TUPLE ? res->items[i] : res;
            su_buf path = {0};
            su_buf_printf(&path, "%s/%s", dir, outs[i]);
            ir_tensor *want = ox_tensor_file(su_buf_str(&path), NULL, why);
            su_buf_free(&path);
            if (!want || v->kind != IR_VAL_TENSOR) {
                ok = false;
            } else if (!close_enough(v->tensor, want, why)) {
                su_buf_printf(why, " (output %d)", i);
                ok = false;
            }
            ir_tensor_free(want);
        }
    }
    ir_value_release(res);
    for (int i = 0; i < nargs; i++)
        ir_value_release(args[i]);
    free(args);
    inputs_free(&in);
    if (nout >= 0)
        free_list(outs, nout);
    if (bind)
        ir_module_free(m);
    return ok;
}

/* --cpu: data set `dir` compiled for the cpu target (optimized at -O3, the
 * default schedules) must match the expected outputs as the interpreter's
 * results do; false with why. */
static bool cpu_check(const char *model, bool bind, const char *dir, su_buf *why)
{
    inputs in;
    bool ok = read_inputs(dir, &in, why);
    const char **names = su_calloc((size_t)(in.n + 1), sizeof *names);
    const ir_tensor **vals = su_calloc((size_t)(in.n + 1), sizeof *vals);
    ox_options b = {.bind_names = names, .bind_values = vals};
    for (int i = 0; bind && i < in.n; i++)
        if (bindable(in.names[i], in.t[i])) {
            names[b.nbind] = in.names[i];
            vals[b.nbind++] = in.t[i];
        }
    su_diags d = {0};
    ir_module *m = ok ? ox_import_file_opts(model, &b, &d) : NULL;
    su_diags_free(&d);
    ok = m != NULL;
    rt_module r = {.ir = m};
    rt_opt_options oo = {.level = 3};
    rt_compile_options co = {.target = "cpu", .jobs = 2};
    FILE *errs = tmpfile();
    char *so = ok && rt_module_optimize(&r, &oo, errs) == 0 ? rt_model_compile(&r, NULL, &co, NULL, errs) : NULL;
    rt_cmodel *c = so ? rt_cmodel_load(so, errs) : NULL;
    ok = c != NULL;
    for (int i = 0, k = 0; ok && i < in.n; i++) {
        if (bind && bindable(in.names[i], in.t[i]))
            continue;
        rt_tensor *t = api_tensor_wrap(ir_tensor_clone(in.t[i]));
        ok = (size_t)k < rt_cmodel_num_inputs(c) && rt_cmodel_set_input(c, rt_cmodel_input_name(c, k), t, errs) == 0;
        k++;
        rt_tensor_free(t);
    }
    ok = ok && rt_cmodel_run(c, errs) == 0;
    char **outs;
    int nout = list_dir(dir, "output_", &outs);
    if (ok && (size_t)nout != rt_cmodel_num_outputs(c)) {
        su_buf_printf(why, "cpu: %zu outputs, %d expected", rt_cmodel_num_outputs(c), nout);
        ok = false;
    }
    for (int i = 0; ok && i < nout; i++) {
        su_buf path = {0};
        su_buf_printf(&path, "%s/%s", dir, outs[i]);
        ir_tensor *want = ox_tensor_file(su_buf_str(&path), NULL, why);
        rt_tensor *got = rt_cmodel_output(c, (size_t)i);
        su_buf_free(&path);
        if (!want || !got || !close_enough(got->t, want, why)) {
            su_buf_printf(why, " (cpu, output %d)", i);
            ok = false;
        }
        ir_tensor_free(want);
        rt_tensor_free(got);
    }
    if (!ok && !why->len) {   /* the compiler's or loader's message */
        char line[512] = "";
        rewind(errs);
        if (!fgets(line, sizeof line, errs))
            snprintf(line, sizeof line, "failed");
        line[strcspn(line, "\n")] = 0;
        su_buf_printf(why, "cpu: %s", line);
    }
    fclose(errs);
    rt_cmodel_free(c);
    free(so);
    tun_tasks_free(&r.tasks);
    free(r.pub);
    ir_module_free(m);
    free(names);
    free(vals);
    inputs_free(&in);
    if (nout >= 0)
        free_list(outs, nout);
    return ok;
}

static bool cpu_mode;

/* Imports and runs every data set of one test; false with why. A model
 * whose converters need some inputs as constants is imported again for
 * each data set with its shape inputs bound (*bound is then set). */
static bool run_test(const char *dir, su_buf *why, bool *bound)
{
    su_buf path = {0};
    su_buf_printf(&path, "%s/model.onnx", dir);
    su_diags d = {0};
    ir_module *m = ox_import_file(su_buf_str(&path), &d);
    *bound = false;
    if (!m) {
        /* the message without the file name, which the test name gives */
        const char *msg = d.len ? d.items[0].msg : "import failed";
        const char *colon = strstr(msg, ".onnx: ");
        if (strstr(msg, "computed at run time") || strstr(msg, "must be a constant")) {
            *bound = true;
        } else {
            su_buf_printf(why, "import: %s", colon ? colon + 7 : msg);
            su_diags_free(&d);
            su_buf_free(&path);
            return false;
        }
    }
    su_diags_free(&d);
    char **sets;
    int nsets = list_dir(dir, "test_data_set_", &sets);
    bool ok = nsets > 0;
    if (!ok)
        su_buf_printf(why, "no test data sets");
    for (int i = 0; ok && i < nsets; i++) {
        su_buf sd = {0};
        su_buf_printf(&sd, "%s/%s", dir, sets[i]);
        ok = run_set(su_buf_str(&path), m, *bound, su_buf_str(&sd), why);
        if (!ok && nsets > 1)
            su_buf_printf(why, " in %s", sets[i]);
        su_buf_free(&sd);
    }
    if (ok && cpu_mode) {
        su_buf sd = {0};
        su_buf_printf(&sd, "%s/%s", dir, sets[0]);
        ok = cpu_check(su_buf_str(&path), *bound, su_buf_str(&sd), why);
        su_buf_free(&sd);
    }
    if (nsets >= 0)
        free_list(sets, nsets);
    ir_module_free(m);
    su_buf_free(&path);
    return ok;
}

int main(int argc, char **argv)
{
    static const char *suites[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};
    if (argc > 1 && !strcmp(argv[1], "--cpu")) {
        cpu_mode = true;
        argv++, argc--;
    }
    const char *top = getenv("top_srcdir");
    for (int i = 0; i < (cpu_mode ? 2 : 1); i++) {
        su_buf xf = {0};
        su_buf_printf(&xf, "%s/tests/onnx/%s", top ? top : ".", i ? "expected_cpu_failures.txt" : "expected_failures.txt");
        load_xfails(su_buf_str(&xf));
        su_buf_free(&xf);
    }
    int nsuites = argc > 1 ? argc - 1 : 4;
    int n = 0, covered = 0, passing = 0, known = 0, uncovered = 0, failed = 0, nbound = 0;
    for (int s = 0; s < nsuites; s++) {
        su_buf sdir = {0};
        const char *suite = argc > 1 ? argv[s + 1] : suites[s];
        if (argc > 1)
            su_buf_puts(&sdir, suite);
        else
            su_buf_printf(&sdir, "%s/%s", ONNX_TESTDATA, suite);
        const char *sname = strrchr(suite, '/') ? strrchr(suite, '/') + 1 : suite;
        /* this suite's counts: tests, covered, passing, failing as listed */
        int s0[4] = {n, covered, passing, known};
        char **tests;
        int nt = list_dir(su_buf_str(&sdir), "test_", &tests);
        if (nt < 0) {
            if (s == 0 && argc == 1) {
                printf("1..0 # SKIP no ONNX backend test data in %s (Debian package libonnx-testdata)\n",
                       ONNX_TESTDATA);
                return 0;
            }
            printf("# cannot read %s\n", su_buf_str(&sdir));
            su_buf_free(&sdir);
            continue;
        }
        for (int t = 0; t < nt; t++) {
            char name[512], key[512];
            snprintf(key, sizeof key, "%s/%s", sname, tests[t]);
            snprintf(name, sizeof name, "%s", key);
            su_buf dir = {0}, unc = {0}, why = {0};
            su_buf_printf(&dir, "%s/%s", su_buf_str(&sdir), tests[t]);
            su_buf mpath = {0};
            su_buf_printf(&mpath, "%s/model.onnx", su_buf_str(&dir));
            char **ops;
            int nops;
            bool readable = read_model(su_buf_str(&mpath), &unc, &ops, &nops);
            su_buf_free(&mpath);
            n++;
            if (readable && unc.len) {
                uncovered++;
                printf("ok %d - %s # SKIP not covered: %s\n", n, name, su_buf_str(&unc));
            } else {
                covered++;
                bool bound = false;
                bool pass = readable && run_test(su_buf_str(&dir), &why, &bound);
                if (bound) {
                    nbound++;
                    strncat(name, " (shape inputs bound)", sizeof name - strlen(name) - 1);
                }
                if (!readable)
                    su_buf_printf(&why, "%s", su_buf_str(&unc));
                const char *xw = xfail_why(key);
                for (int i = 0; i < nops; i++)
                    if (strcmp(ops[i], "Constant") || nops == 1)
                        count_op(ops[i], pass);
                if (pass && !xw) {
                    passing++;
                    printf("ok %d - %s\n", n, name);
                } else if (pass) {
                    passing++;
                    printf("ok %d - %s # TODO listed as failing (%s) but passes: remove it from the list\n", n,
                           name, xw);
                } else if (xw) {
                    known++;
                    printf("not ok %d - %s # TODO %s\n", n, name, xw);
                    printf("#   %s\n", su_buf_str(&why));
                } else {
                    failed++;
                    printf("not ok %d - %s\n#   %s\n", n, name, su_buf_str(&why));
                }
            }
            for (int i = 0; i < nops; i++)
                free(ops[i]);
            free(ops);
            su_buf_free(&dir);
            su_buf_free(&unc);
            su_buf_free(&why);
            fflush(stdout);
        }
        free_list(tests, nt);
        su_buf_free(&sdir);
        printf("# suite %s: %d tests, %d covered (%d passing, %d failing as listed), %d not covered\n", sname, n - s0[0],
               covered - s0[1], passing - s0[2], known - s0[3], (n - s0[0]) - (covered - s0[1]));
    }
    printf("# per op (tests with the op, passing; Constant counted only alone):\n");
    for (size_t i = 0; i < table.len; i++) {
        printf("#   %-24s %4d %4d\n", table.data[i].op, table.data[i].tests, table.data[i].passing);
        free(table.data[i].op);
    }
    su_vec_free(&table);
    printf("# %d tests: %d covered (%d passing, %d failing as listed, %d failing unexpectedly), %d not covered; "
           "%d ran with their shape inputs bound as constants\n", n, covered, passing, known, failed, uncovered, nbound);
    for (size_t i = 0; i < xfails.len; i++) {
        free(xfails.data[i].name);
        free(xfails.data[i].why);
    }
    su_vec_free(&xfails);
    printf("1..%d\n", n);
    return failed ? 1 : 0;
}
