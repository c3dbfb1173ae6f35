/* harness.c — loading models, lowering, building and running kernels for
 * the code generation tests (see harness.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/codegen/harness.h"

ir_module *hx_load(const char *name, const char *text)
{
    su_diags d = {0};
    ir_module *m = ir_parse(name, text, strlen(text), &d);
    tr_options o = {.level = 3};
    if (!m || !ir_infer_types(m, &d) || !tr_optimize(m, &o, &d)) {
        su_diags_print(stderr, &d);
        su_panic("test model %s does not load", name);
    }
    su_diags_free(&d);
    return m;
}

typedef SU_VEC(const ir_expr *) expr_vec;

static void walk(const ir_expr *e, expr_vec *out)
{
    switch (e->kind) {
    case IR_CALL:
        for (int i = 0; i < e->u.call.nargs; i++)
            walk(e->u.call.args[i], out);
        if (ir_func_is_primitive(e->u.call.fn)) {
            for (size_t i = 0; i < out->len; i++)
                if (out->data[i] == e->u.call.fn)
                    return;
            su_vec_push(out, e->u.call.fn);
        }
        break;
    case IR_TUPLE:
        for (int i = 0; i < e->u.tuple.n; i++)
            walk(e->u.tuple.fields[i], out);
        break;
    case IR_PROJ: walk(e->u.proj.tuple, out); break;
    case IR_LET:
        walk(e->u.let.value, out);
        walk(e->u.let.body, out);
        break;
    default: break;
    }
}

size_t hx_primitives(const ir_module *m, const ir_expr ***out)
{
    expr_vec v = {0};
    ir_global_def *g = ir_module_find(m, "main");
    if (g)
        walk(g->func->u.func.body, &v);
    *out = v.data;
    return v.len;
}

const ir_expr *hx_last_primitive(const ir_module *m)
{
    const ir_expr **fs;
    size_t n = hx_primitives(m, &fs);
    const ir_expr *f = n ? fs[n - 1] : NULL;
    free(fs);
    return f;
}

static int next_kernel;

bool hx_prepare(hx_kernel *k, const ir_expr *func, const char *tmpl, const sch_config *cfg, bool naive, bool hoist)
{
    return hx_prepare_hw(k, func, tmpl, cfg, naive, hoist, NULL);
}

sch_schedule *hx_schedule(const ir_expr *f)
{
    su_diags d = {0};
    sch_schedule *s = sch_create(f, &d);
    su_diags_print(stderr, &d);
    su_diags_free(&d);
    return s;
}

void hx_config_random_kept(const ir_expr *func, const char *tmpl, const sch_space *sp, const sch_hw *hw,
                           unsigned *seed, sch_config *c)
{
    for (int tries = 0;; tries++) {
        sch_config_random(sp, seed, c);
        su_diags d = {0};
        sch_schedule *s = sch_create_for(func, hw, &d);
        sch_err e = s ? sch_apply_template(s, tmpl, hw, c, NULL) : SCH_E_OK;
        sch_free(s);
        su_diags_free(&d);
        if (e != SCH_E_BAD_CONFIG || tries == 1000)
            return;
        sch_config_free(c);
    }
}

bool hx_prepare_hw(hx_kernel *k, const ir_expr *func, const char *tmpl, const sch_config *cfg, bool naive, bool hoist,
                   const sch_hw *hw)
{
    su_diags d = {0};
    memset(k, 0, sizeof *k);
    k->func = func;
    snprintf(k->name, sizeof k->name, "k%d", next_kernel++);
    k->s = sch_create_for(func, hw, &d);
    if (!k->s) {
        su_diags_print(stderr, &d);
        su_diags_free(&d);
        return false;
    }
    su_diags_free(&d);
    if (!naive) {
        sch_err e = sch_apply_template(k->s, tmpl, hw, cfg, NULL);
        if (e) {
            fprintf(stderr, "# template: %s: %s\n", sch_err_name(e), k->s->err_msg);
            return false;
        }
    }
    bool consts[64];
    for (int i = 0; i < 64; i++)
        consts[i] = true;
    sch_lower_opts o = {consts, hoist, false};
    k->l = sch_lower(k->s, &o);
    if (!k->l)
        fprintf(stderr, "# lower: %s\n", k->s->err_msg);
    return k->l != NULL;
}

tg_lib **hx_build(hx_kernel *ks, int n, int *nlibs)
{
    return hx_build_units(ks, n, 0, nlibs);
}

tg_lib **hx_build_units(hx_kernel *ks, int n, int units, int *nlibs)
{
    tg_target t;
    const char *why;
    if (!tg_target_parse("cpu", &t, &why))
        su_panic("%s", why);
    /* one translation unit per core, compiled side by side */
    int nu = units > 0 ? units : n < t.cores ? n : t.cores;
    nu = nu < 1 ? 1 : nu;
    su_buf *src = su_calloc((size_t)nu, sizeof *src);
    const char **texts = su_calloc((size_t)nu, sizeof *texts);
    size_t bytes = 0;
    for (int u = 0; u < nu; u++)
        tg_c_prelude(&src[u]);
    for (int i = 0; i < n; i++) {
        su_buf *b = &src[i % nu];
        tg_kernel_c(b, ks[i].l, ks[i].name, TG_KERNEL_BODY | TG_KERNEL_PROLOGUES);
    }
    for (int u = 0; u < nu; u++) {
        texts[u] = su_buf_str(&src[u]);
        bytes += src[u].len;
    }
    tg_lib **libs = su_calloc((size_t)nu, sizeof *libs);
    char *log;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    tg_err e = tg_build_many(texts, nu, &t, t.cores, libs, &log);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("# built %d kernels (%zu bytes of C, %d units) in %.1f s\n", n, bytes, nu,
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
    for (int u = 0; u < nu; u++)
        su_buf_free(&src[u]);
    free(src);
    free(texts);
    if (e) {
        fprintf(stderr, "# build: %s\n%s\n", tg_err_name(e), log ? log : "");
        free(log);
        hx_close(libs, nu);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        tg_lib *lib = libs[i % nu];
        ks[i].fn = (tg_entry_fn)tg_lib_sym(lib, ks[i].name);
        for (int p = 0; p < ks[i].l->nprologues && p < 8; p++) {
            char name[48];
            snprintf(name, sizeof name, "%s_p%d", ks[i].name, p);
            ks[i].pro[p] = (tg_entry_fn)tg_lib_sym(lib, name);
        }
    }
    *nlibs = nu;
    return libs;
}

void hx_close(tg_lib **libs, int n)
{
    for (int i = 0; libs && i < n; i++)
        tg_lib_close(libs[i]);
    free(libs);
}

void hx_kernel_free(hx_kernel *k)
{
    sch_free(k->s);
    k->s = NULL;
}

static void *alloc_buffer(const sch_buffer *b)
{
    size_t bytes = (size_t)(b->size ? b->size : 1) * (size_t)ir_dtype_bytes(b->dtype);
    void *p = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    memset(p, 0, bytes);
    return p;
}

static void store(const sch_buffer *b, void *p, int64_t i, double v)
{
    switch (b->dtype) {
    case IR_FLOAT32: ((float *)p)[i] = (float)v; break;
    case IR_FLOAT64: ((double *)p)[i] = v; break;
    case IR_FLOAT16: ((_Float16 *)p)[i] = (_Float16)v; break;
    case IR_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case IR_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
    case IR_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case IR_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    default: ((uint8_t *)p)[i] = (uint8_t)v; break;
    }
}

static double load(const sch_buffer *b, const void *p, int64_t i)
{
    switch (b->dtype) {
    case IR_FLOAT32: return ((const float *)p)[i];
    case IR_FLOAT64: return ((const double *)p)[i];
    case IR_FLOAT16: return ((const _Float16 *)p)[i];
    case IR_INT32: return ((const int32_t *)p)[i];
    case IR_INT64: return (double)((const int64_t *)p)[i];
    case IR_INT8: return ((const int8_t *)p)[i];
    case IR_INT16: return ((const int16_t *)p)[i];
    default: return ((const uint8_t *)p)[i];
    }
}

/* The CPU executor: the loaded prologues, then the kernel. */
static int cpu_exec(void *ctx, hx_kernel *k, void **args)
{
    (void)ctx;
    int np = k->s->nparams;
    for (int p = 0; p < k->l->nprologues; p++) {
        void *pa[2] = {args[k->l->prologues[p].param], args[np + p]};
        k->pro[p](pa);
    }
    return k->fn(args);
}

int hx_run(hx_kernel *k, hx_tensor *const *inputs, hx_tensor **outputs, int *nout)
{
    return hx_run_with(k, inputs, outputs, nout, cpu_exec, NULL);
}

int hx_run_with(hx_kernel *k, hx_tensor *const *inputs, hx_tensor **outputs, int *nout, hx_exec_fn exec, void *ctx)
{
    const sch_func *f = k->l->kernel;
    void *args[64];
    int np = k->s->nparams, no = 0;
    for (int i = 0; i < f->nargs; i++) {
        args[i] = alloc_buffer(f->args[i]);
        if (i < np)
            for (int64_t j = 0; j < f->args[i]->size; j++)
                store(f->args[i], args[i], j, inputs[i]->v[j]);
    }
    int rc = exec(ctx, k, args);
    for (int i = 0; i < f->nargs; i++) {
        if (f->args[i]->scope == SCH_SCOPE_OUTPUT) {
            const sch_buffer *b = f->args[i];
            hx_tensor *t = hx_tensor_new(b->dtype, b->ndim, b->shape);
            for (int64_t j = 0; j < b->size; j++)
                t->v[j] = load(b, args[i], j);
            outputs[no++] = t;
        }
        free(args[i]);
    }
    *nout = no;
    return rc;
}

void hx_random_inputs(const ir_expr *func, unsigned seed, double lo, double hi, hx_tensor **inputs)
{
    for (int i = 0; i < func->u.func.nparams; i++) {
        const ir_expr *p = func->u.func.params[i];
        const ir_type *t = p->type ? p->type : p->u.var.annot;
        hx_tensor *x = hx_tensor_new(t->dtype, t->ndim, t->shape);
        for (int64_t j = 0; j < x->n; j++) {
            double r = (double)rand_r(&seed) / RAND_MAX;
            if (ir_dtype_is_float(t->dtype))
                x->v[j] = (double)(float)(lo + (hi - lo) * r);
            else if (t->dtype == IR_BOOL)
                x->v[j] = r < 0.5;
            else
                x->v[j] = (double)(rand_r(&seed) % 4);
        }
        inputs[i] = x;
    }
}

double hx_max_rel_err(const hx_tensor *got, const hx_tensor *want)
{
    if (!got || !want || got->n != want->n)
        return INFINITY;
    double m = 1e-6, e = 0;
    for (int64_t i = 0; i < want->n; i++)
        m = fabs(want->v[i]) > m ? fabs(want->v[i]) : m;
    for (int64_t i = 0; i < want->n; i++) {
        double d = fabs(got->v[i] - want->v[i]);
        if (isnan(got->v[i]) != isnan(want->v[i]))
            return INFINITY;
        if (!isnan(d) && d / m > e)
            e = d / m;
    }
    return e;
}

static char cache_dir[64];

static void remove_cache(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "# could not remove %s\n", cache_dir);
}

void hx_temp_cache(void)
{
    snprintf(cache_dir, sizeof cache_dir, "/tmp/relay-tune-test-XXXXXX");
    if (!mkdtemp(cache_dir))
        su_panic("mkdtemp failed");
    setenv("RELAY_TUNE_CACHE", cache_dir, 1);
    atexit(remove_cache);
}

/* ---- the reference kernels as the oracle -------------------------------- */

typedef struct refval {
    int n;
    ir_tensor **t;          /* heap tensors (owned by the walk) or borrowed */
} refval;

typedef struct refwalk {
    const ir_expr *func;
    ir_tensor **inputs;
    refval *memo;           /* by node id */
    uint32_t cap;
    SU_VEC(ir_tensor *) owned;
} refwalk;

static ir_tensor *own(refwalk *w, ir_tensor *t)
{
    su_vec_push(&w->owned, t);
    return t;
}

static refval ref_eval(refwalk *w, const ir_expr *e)
{
    if (e->id < w->cap && w->memo[e->id].n)
        return w->memo[e->id];
    refval r = {0, NULL};
    switch (e->kind) {
    case IR_VAR:
        for (int i = 0; i < w->func->u.func.nparams; i++)
            if (w->func->u.func.params[i] == e) {
                r.n = 1;
                r.t = su_malloc(sizeof *r.t);
                r.t[0] = w->inputs[i];
            }
        break;
    case IR_CONST:
        r.n = 1;
        r.t = su_malloc(sizeof *r.t);
        r.t[0] = (ir_tensor *)e->u.constant.value;
        break;
    case IR_TUPLE: {
        SU_VEC(ir_tensor *) all = {0};
        for (int i = 0; i < e->u.tuple.n; i++) {
            refval f = ref_eval(w, e->u.tuple.fields[i]);
            for (int j = 0; j < f.n; j++)
                su_vec_push(&all, f.t[j]);
        }
        r.n = (int)all.len;
        r.t = all.data;
        break;
    }
    case IR_PROJ: {
        refval tv = ref_eval(w, e->u.proj.tuple);
        r.n = 1;
        r.t = su_malloc(sizeof *r.t);
        r.t[0] = tv.t[e->u.proj.index];
        break;
    }
    case IR_CALL: {
        const ir_op_def *op = ir_call_op(e);
        if (!op)
            su_panic("reference oracle: a call of a function");
        SU_VEC(const ir_tensor *) in = {0};
        for (int i = 0; i < e->u.call.nargs; i++) {
            refval a = ref_eval(w, e->u.call.args[i]);
            for (int j = 0; j < a.n; j++)
                su_vec_push(&in, a.t[j]);
        }
        const ir_type *ty = e->type;
        r.n = ty->kind == IR_TY_TUPLE ? ty->nfields : 1;
        r.t = su_malloc((size_t)r.n * sizeof *r.t);
        for (int k = 0; k < r.n; k++) {
            const ir_type *ft = ty->kind == IR_TY_TUPLE ? ty->fields[k] : ty;
            r.t[k] = own(w, ir_tensor_alloc(ft->dtype, ft->ndim, ft->shape));
        }
        su_buf err = {0};
        ir_ref_call c = {op, e->u.call.attrs, (int)in.len, in.data, r.n, r.t, &err};
        if (!op->ref(&c))
            su_panic("reference kernel of %s failed: %s", op->name, su_buf_str(&err));
        su_buf_free(&err);
        su_vec_free(&in);
        break;
    }
    default: su_panic("reference oracle: cannot evaluate a %s", ir_expr_kind_name(e->kind));
    }
    if (e->id < w->cap)
        w->memo[e->id] = r;
    return r;
}

static uint32_t max_node_id(const ir_expr *e)
{
    uint32_t m = e->id;
    if (e->kind == IR_CALL)
        for (int i = 0; i < e->u.call.nargs; i++) {
            uint32_t k = max_node_id(e->u.call.args[i]);
            m = k > m ? k : m;
        }
    else if (e->kind == IR_TUPLE)
        for (int i = 0; i < e->u.tuple.n; i++) {
            uint32_t k = max_node_id(e->u.tuple.fields[i]);
            m = k > m ? k : m;
        }
    else if (e->kind == IR_PROJ) {
        uint32_t k = max_node_id(e->u.proj.tuple);
        m = k > m ? k : m;
    }
    return m;
}

int hx_ref_run(const ir_expr *func, hx_tensor *const *inputs, hx_tensor **outputs)
{
    int np = func->u.func.nparams;
    refwalk w = {func, su_calloc((size_t)np + 1, sizeof *w.inputs), NULL, 0, {0}};
    for (int i = 0; i < np; i++) {
        const hx_tensor *x = inputs[i];
        w.inputs[i] = own(&w, ir_tensor_alloc(x->dtype, x->ndim, x->shape));
        for (int64_t j = 0; j < x->n; j++)
            ir_tensor_set(w.inputs[i], j, x->v[j]);
    }
    w.cap = max_node_id(func->u.func.body) + 1;
    w.memo = su_calloc(w.cap, sizeof *w.memo);
    refval r = ref_eval(&w, func->u.func.body);
    for (int k = 0; k < r.n; k++) {
        const ir_tensor *t = r.t[k];
        hx_tensor *o = hx_tensor_new(t->dtype, t->ndim, t->shape);
        for (int64_t j = 0; j < o->n; j++)
            o->v[j] = ir_tensor_get(t, j);
        outputs[k] = o;
    }
    int n = r.n;
    for (uint32_t i = 0; i < w.cap; i++)
        free(w.memo[i].t);
    if (w.memo[func->u.func.body->id].t != r.t)
        free(r.t);
    free(w.memo);
    for (size_t i = 0; i < w.owned.len; i++)
        ir_tensor_free(w.owned.data[i]);
    su_vec_free(&w.owned);
    free(w.inputs);
    return n;
}

enum { MAX_IO = 64 };     /* a function's parameters or outputs the check holds */

/* Runs kernel k on inputs and returns its error against want[0..nw). */
static double kernel_error(hx_kernel *k, hx_tensor *const *inputs, hx_tensor *const *want, int nw)
{
    hx_tensor *got[MAX_IO];
    int ng = 0;
    int rc = hx_run(k, inputs, got, &ng);
    double err = rc == 0 && ng == nw ? 0 : INFINITY;
    for (int o = 0; o < nw && o < ng; o++) {
        double e = hx_max_rel_err(got[o], want[o]);
        err = e > err ? e : err;
    }
    for (int o = 0; o < ng; o++)
        hx_tensor_free(got[o]);
    return err;
}

/* Prints kernel k's schedule as a TAP comment, under the label of its case. */
static void print_off(const hx_cases *cs, int c, const hx_kernel *k, double err)
{
    su_buf b = {0};
    sch_trace_print(&b, k->s);
    printf("# %s: error %.2g with the schedule\n%s\n", cs->labels ? cs->labels[c] : sch_template_name(k->s), err,
           su_buf_str(&b));
    su_buf_free(&b);
}

bool hx_check_cases(hx_kernel *ks, int n, const hx_cases *cs, double *err, int *bad, double *worst)
{
    double tol = cs->tol > 0 ? cs->tol : 1e-4;
    int nlibs = 0;
    tg_lib **libs = hx_build(ks, n, &nlibs);
    for (int c = 0; bad && c < cs->n; c++) {
        bad[c] = 0;
        worst[c] = 0;
    }
    /* case by case, so that one case's tensors are alive at a time */
    for (int c = 0; c < cs->n; c++) {
        const ir_expr *f = cs->funcs ? cs->funcs[c] : ks[c].func;
        hx_tensor *in[MAX_IO], *want[MAX_IO];
        int nw = 0;
        if (libs) {
            if (f->u.func.nparams > MAX_IO)
                su_panic("a case of %d parameters", f->u.func.nparams);
            hx_random_inputs(f, cs->seed + (unsigned)c, cs->lo ? cs->lo[c] : -1, cs->hi ? cs->hi[c] : 1, in);
            nw = hx_ref_run(f, in, want);
            if (cs->on_case)
                cs->on_case(cs->ctx, c, in, want, nw);
        }
        for (int i = 0; i < n; i++) {
            if ((cs->owner ? cs->owner[i] : i) != c)
                continue;
            err[i] = libs ? kernel_error(&ks[i], in, want, nw) : INFINITY;
            if (!(err[i] < tol)) {
                if (libs)
                    print_off(cs, c, &ks[i], err[i]);
                if (bad)
                    bad[c]++;
            }
            if (worst)
                worst[c] = err[i] > worst[c] ? err[i] : worst[c];
        }
        if (libs) {
            hx_tensors_free(in, f->u.func.nparams);
            hx_tensors_free(want, nw);
        }
    }
    hx_close(libs, nlibs);
    return libs != NULL;
}
