/* test_model.c — whole compiled models against the interpreter. The memory
 * plan first: no two buffers live at the same step share bytes, on
 * hand-made and random lifetimes. Then every small op model of op_models.h
 * (all parameters inputs) and every zoo model (weights bound to seeded
 * random values, so that they are packed at compile time) is compiled into
 * one shared object through the public API, run on random inputs and
 * compared with the reference interpreter on the same inputs: max error
 * relative to the output's magnitude below 1e-4. Each model is compiled
 * once per run, into a temporary cache. */
#include <math.h>
#include <string.h>

#include "api/api.h"
#include "targets/targets.h"
#include "tests/codegen/harness.h"
#include "tests/codegen/op_models.h"
#include "tests/tap.h"

enum { NMODELS = sizeof models / sizeof *models };

static const char *const zoo[] = {"mlp", "resnet18", "resnet50", "mobilenet_v2", "squeezenet1_0", "bert_layer"};
enum { NZOO = sizeof zoo / sizeof *zoo };

/* ---- the memory plan ------------------------------------------------------ */

static bool plan_valid(const tg_mem_item *it, int n, tg_mem_stats st)
{
    for (int i = 0; i < n; i++) {
        if (it[i].offset % 64 || it[i].offset + it[i].bytes > st.peak)
            return false;
        for (int j = i + 1; j < n; j++) {
            bool live = it[i].first <= it[j].last && it[j].first <= it[i].last;
            bool overlap = it[i].offset < it[j].offset + it[j].bytes && it[j].offset < it[i].offset + it[i].bytes;
            if (live && overlap && it[i].bytes && it[j].bytes)
                return false;
        }
    }
    return st.peak >= st.live && st.peak <= st.sum + 64 * (int64_t)n;
}

static void test_memplan(void)
{
    /* a chain: each buffer read by the next call only; two slots suffice */
    tg_mem_item chain[6];
    for (int i = 0; i < 6; i++)
        chain[i] = (tg_mem_item){1000, i, i + 1, -1};
    tg_mem_stats st = tg_memplan(chain, 6, 64);
    ok(plan_valid(chain, 6, st), "chain: valid plan");
    is_int(st.peak, 2024, "chain: two 1000-byte slots 64-aligned (1024 + 1000), peak %lld", (long long)st.peak);
    is_int(st.sum, 6000, "chain: sum of all 6000");
    /* a residual block: the skip connection stays live across the block */
    tg_mem_item res[4] = {{4096, 0, 3, -1}, {4096, 1, 2, -1}, {4096, 2, 3, -1}, {4096, 3, 4, -1}};
    st = tg_memplan(res, 4, 64);
    ok(plan_valid(res, 4, st) && st.peak == 3 * 4096, "residual: three live at once, peak %lld", (long long)st.peak);
    /* random lifetimes */
    unsigned seed = 5;
    bool all = true;
    double worst = 1;
    for (int round = 0; round < 200; round++) {
        tg_mem_item it[40];
        int n = 1 + rand_r(&seed) % 40;
        for (int i = 0; i < n; i++) {
            int first = rand_r(&seed) % 30;
            it[i] = (tg_mem_item){1 + rand_r(&seed) % 100000, first, first + rand_r(&seed) % 8, -1};
        }
        st = tg_memplan(it, n, 64);
        all &= plan_valid(it, n, st);
        worst = (double)st.peak / (double)st.live > worst ? (double)st.peak / (double)st.live : worst;
    }
    ok(all, "200 random plans are valid (worst peak / live bytes %.2f)", worst);
}

/* ---- whole models ----------------------------------------------------------- */

static double get(const char *dt, const void *p, size_t i)
{
    if (!strcmp(dt, "float32"))
        return ((const float *)p)[i];
    if (!strcmp(dt, "float64"))
        return ((const double *)p)[i];
    if (!strcmp(dt, "int32"))
        return ((const int32_t *)p)[i];
    if (!strcmp(dt, "int64"))
        return (double)((const int64_t *)p)[i];
    if (!strcmp(dt, "int8"))
        return ((const int8_t *)p)[i];
    if (!strcmp(dt, "int16"))
        return ((const int16_t *)p)[i];
    return ((const uint8_t *)p)[i];
}

static size_t numel(const rt_tensor *t)
{
    size_t n = 1;
    for (int d = 0; d < rt_tensor_ndim(t); d++)
        n *= (size_t)rt_tensor_shape(t)[d];
    return n;
}

/* Random values: floats in [lo, hi], integers in [0, 3], bools 0/1. */
static rt_tensor *random_tensor(const char *dt, int ndim, const int64_t *shape, double lo, double hi, unsigned *seed)
{
    rt_tensor *t = rt_tensor_new(dt, ndim, shape);
    void *p = rt_tensor_data(t);
    for (size_t i = 0; i < numel(t); i++) {
        double r = (double)rand_r(seed) / RAND_MAX;
        if (!strcmp(dt, "float32"))
            ((float *)p)[i] = (float)(lo + (hi - lo) * r);
        else if (!strcmp(dt, "float64"))
            ((double *)p)[i] = lo + (hi - lo) * r;
        else if (!strcmp(dt, "int32"))
            ((int32_t *)p)[i] = rand_r(seed) % 4;
        else if (!strcmp(dt, "int64"))
            ((int64_t *)p)[i] = rand_r(seed) % 4;
        else
            ((uint8_t *)p)[i] = (uint8_t)(r < 0.5);
    }
    return t;
}

static double rel_err(const rt_tensor *got, const rt_tensor *want)
{
    if (!got || !want || numel(got) != numel(want) || strcmp(rt_tensor_dtype(got), rt_tensor_dtype(want)))
        return INFINITY;
    double m = 1e-6, e = 0;
    size_t n = numel(want);
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(get(rt_tensor_dtype(want), rt_tensor_cdata(want), i)));
    for (size_t i = 0; i < n; i++) {
        double a = get(rt_tensor_dtype(got), rt_tensor_cdata(got), i);
        double b = get(rt_tensor_dtype(want), rt_tensor_cdata(want), i);
        if (isnan(a) != isnan(b))
            return INFINITY;
        if (!isnan(a) && fabs(a - b) / m > e)
            e = fabs(a - b) / m;
    }
    return e;
}

/* Compiles the model (weights bound with seed when bind), runs it and the
 * interpreter on the same random inputs, and checks the outputs. */
static void check_model(const char *name, const char *text, bool bind, double lo, double hi)
{
    rt_module *ref = rt_module_parse(name, text, strlen(text), stderr);
    rt_module *m = rt_module_parse(name, text, strlen(text), stderr);
    if (!ok(ref && m, "%s: parses", name)) {
        rt_module_free(ref);
        rt_module_free(m);
        return;
    }
    if (bind) {
        rt_module_bind_random_params(ref, 11, 1, stderr);
        rt_module_bind_random_params(m, 11, 1, stderr);
    }
    rt_opt_options opt = {0};
    opt.level = 3;
    rt_compile_report rep;
    char *path = NULL;
    if (rt_module_optimize(m, &opt, stderr) == 0)
        path = rt_model_compile(m, NULL, NULL, &rep, stderr);
    rt_cmodel *c = path ? rt_cmodel_load(path, stderr) : NULL;
    if (!ok(c != NULL, "%s: compiles and loads", name)) {
        free(path);
        rt_module_free(ref);
        rt_module_free(m);
        return;
    }
    rt_inputs *in = rt_inputs_new();
    unsigned seed = 77;
    bool set = true;
    for (size_t i = 0; i < rt_cmodel_num_inputs(c); i++) {
        const char *iname = rt_cmodel_input_name(c, i);
        const ir_expr *p = NULL;
        ir_global_def *g = ir_module_find(m->ir, "main");
        for (int k = 0; k < g->func->u.func.nparams; k++)
            if (!strcmp(g->func->u.func.params[k]->u.var.name, iname))
                p = g->func->u.func.params[k];
        const ir_type *ty = p->type ? p->type : p->u.var.annot;
        rt_tensor *t = random_tensor(ir_dtype_name(ty->dtype), ty->ndim, ty->shape, lo, hi, &seed);
        set &= rt_cmodel_set_input(c, iname, t, stderr) == 0;
        rt_inputs_set(in, iname, t, "test", 1);
    }
    rt_result *r = rt_run(ref, in, NULL, stderr);
    bool ran = set && r && rt_cmodel_run(c, stderr) == 0 && rt_result_count(r) == rt_cmodel_num_outputs(c);
    double err = ran ? 0 : INFINITY;
    for (size_t i = 0; ran && i < rt_result_count(r); i++) {
        rt_tensor *o = rt_cmodel_output(c, i);
        err = fmax(err, rel_err(o, rt_result_tensor(r, i)));
        rt_tensor_free(o);
    }
    ok(err < 1e-4, "%s: compiled model matches the interpreter: error %.2g (%d calls, %d kernels, peak %lld of %lld bytes)",
       name, err, rep.calls, rep.kernels, rep.peak_bytes, rep.sum_bytes);
    rt_result_free(r);
    rt_inputs_free(in);
    rt_cmodel_free(c);
    free(path);
    rt_module_free(ref);
    rt_module_free(m);
}

int main(void)
{
    hx_temp_cache();
    test_memplan();
    for (int i = 0; i < NMODELS; i++)
        check_model(models[i].name, models[i].text, false, models[i].lo, models[i].hi);
    const char *dir = getenv("top_srcdir");
    for (int z = 0; z < NZOO; z++) {
        su_buf p = {0};
        su_buf_printf(&p, "%s/benchmarks/models/%s.relay", dir ? dir : ".", zoo[z]);
        size_t len;
        char *text = su_read_file(su_buf_str(&p), &len);
        if (ok(text != NULL, "reads %s", su_buf_str(&p)))
            check_model(zoo[z], text, true, -1, 1);
        free(text);
        su_buf_free(&p);
    }
    return tap_done();
}
