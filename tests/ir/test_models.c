/* test_models.c — the end-to-end check of the interpreter: every model of the
 * zoo (benchmarks/models) runs on the seeded parameters of
 * `relay-tune run --random-params 0` and must match PyTorch's output on the
 * same weights and input (tests/ref/models, made by
 * tests/gen/make_model_refs.py, which builds the PyTorch models as the zoo's
 * generator does) with a maximum error below 1e-4 relative to the output's
 * magnitude. Before comparing outputs it checks that the parameters are the
 * ones PyTorch used (their sums), so that a failure says whether the weights
 * or the kernels disagree. */
#include <dirent.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "ir/ir.h"
#include "tests/tap.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void check_model(const char *srcdir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/ref/models/%s.npz", srcdir, name);
    su_buf err = {0};
    ir_npz *ref = ir_npz_load(path, &err);
    if (!ok(ref != NULL, "%s: reference reads", name)) {
        diag("%s", su_buf_str(&err));
        su_buf_free(&err);
        return;
    }
    snprintf(path, sizeof path, "%s/benchmarks/models/%s.relay", srcdir, name);
    size_t len;
    char *text = su_read_file(path, &len);
    su_diags d = {0};
    ir_module *m = text ? ir_parse(path, text, len, &d) : NULL;
    free(text);
    if (!ok(m && ir_infer_types(m, &d), "%s: model loads", name)) {
        su_diags_print(stderr, &d);
        goto done;
    }
    const ir_expr *f = ir_module_find(m, "main")->func;
    const ir_tensor *sums = ir_npz_find(ref, "param_sums"), *want = ir_npz_find(ref, "output");
    const ir_tensor *torch_err = ir_npz_find(ref, "torch_fp32_error");
    int n = f->u.func.nparams, bad = -1;
    ir_value **args = su_calloc((size_t)n, sizeof *args);
    for (int i = 0; i < n; i++) {
        const ir_type *ty = f->u.func.params[i]->type;
        ir_tensor *t = ir_tensor_alloc(ty->dtype, ty->ndim, ty->shape);
        ir_random_param(f, i, 0, t);
        double s = 0, mag = 0;
        for (int64_t k = 0; k < ir_tensor_numel(t); k++) {
            s += ((float *)t->data)[k];
            mag += fabs(((float *)t->data)[k]);
        }
        if (bad < 0 && (!sums || i >= ir_tensor_numel(sums) || fabs(s - ir_tensor_get(sums, i)) > 1e-9 * (mag + 1)))
            bad = i;
        args[i] = ir_value_tensor(t, true);
    }
    if (!ok(bad < 0 && sums && ir_tensor_numel(sums) == n, "%s: the %d seeded parameters are PyTorch's", name, n))
        diag("first mismatch: parameter %%%s", bad >= 0 ? f->u.func.params[bad]->u.var.name : "?");
    ir_interp *ip = ir_interp_new(m, NULL);
    ir_value *out = NULL;
    double t0 = now();
    bool ran = ir_interp_call(ip, "main", n, args, &out, &d);
    double secs = now() - t0;
    if (!ok(ran && out->kind == IR_VAL_TENSOR, "%s: runs in the interpreter (%.2f s)", name, secs)) {
        su_diags_print(stderr, &d);
    } else {
        const ir_tensor *got = out->tensor;
        bool same_type = want && ir_tensor_has_shape(got, want->dtype, want->ndim, want->shape);
        double scale = 0, worst = 0;
        for (int64_t k = 0; same_type && k < ir_tensor_numel(want); k++) {
            scale = fmax(scale, fabs(ir_tensor_get(want, k)));
            double e = fabs(ir_tensor_get(got, k) - ir_tensor_get(want, k));
            worst = e > worst || e != e ? e : worst;
        }
        double rel = worst / (scale > 0 ? scale : 1);
        ok(same_type && rel < 1e-4, "%s matches PyTorch: max error %.2e relative to max |y| = %.4g "
           "(PyTorch's own float32 error: %.2e)", name, rel, scale, torch_err ? ir_tensor_get(torch_err, 0) : NAN);
    }
    ir_value_release(out);
    for (int i = 0; i < n; i++)
        ir_value_release(args[i]);
    free(args);
    ir_interp_free(ip);
done:
    su_diags_free(&d);
    ir_module_free(m);
    ir_npz_free(ref);
}

int main(void)
{
    const char *srcdir = getenv("top_srcdir");
    srcdir = srcdir ? srcdir : ".";
    static const char *const models[] = {"mlp", "resnet18", "squeezenet1_0", "mobilenet_v2", "bert_layer", "resnet50"};
    for (size_t i = 0; i < sizeof models / sizeof *models; i++)
        check_model(srcdir, models[i]);
    /* every model of the zoo has a reference */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/benchmarks/models", srcdir);
    DIR *dp = opendir(dir);
    int zoo = 0, listed = 0;
    for (struct dirent *de; dp && (de = readdir(dp));) {
        size_t l = strlen(de->d_name);
        if (l > 6 && !strcmp(de->d_name + l - 6, ".relay")) {
            zoo++;
            for (size_t i = 0; i < sizeof models / sizeof *models; i++)
                listed += strlen(models[i]) == l - 6 && !strncmp(models[i], de->d_name, l - 6);
        }
    }
    if (dp)
        closedir(dp);
    ok(zoo > 0 && zoo == listed, "all %d zoo models are checked against PyTorch", zoo);
    return tap_done();
}
