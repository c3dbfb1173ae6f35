/* measure.c — a measurement maps (target, task, config) to a result: costs,
 * an error code with its message, counters, build and run time. Per task,
 * the inputs are seeded random values for the primitive function's
 * parameters (ir_random_param: the ranges suit each parameter's use) and
 * the expected outputs are the reference interpreter's on the same inputs
 * (the function becomes @main of a temporary module); both are written once
 * to the task's data file, which every candidate's process maps and checks
 * its output against. A batch is built at once (measure/builder.c), then
 * each candidate that built runs in the runner's child, one after the
 * other, so that candidates never share the machine with each other or
 * with the compiler. */
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tuner/tuner.h"

/* A candidate's output matches when |o - e| <= ATOL_REL * max|e| + RTOL * |e|
 * everywhere: float32 sums in another order differ by a few ulps of the
 * output's magnitude (2e-6 at worst over the zoo), a wrong schedule by far
 * more than this. */
#define RTOL 1e-4
#define ATOL_REL 1e-4

struct tun_task_data {
    ms_task_data *data;
    double cutoff;          /* seconds a run past which a candidate's remaining repeats are skipped (0: never) */
};

void tun_task_data_set_cutoff(tun_task_data *td, double seconds)
{
    td->cutoff = seconds > 0 ? seconds : 0;
}

typedef SU_VEC(const ir_tensor *) tensor_vec;

/* Flattens a value into tensors (tuples depth first). */
static void flatten(ir_value *v, tensor_vec *out)
{
    if (v->kind == IR_VAL_TENSOR) {
        su_vec_push(out, v->tensor);
        return;
    }
    for (int i = 0; i < v->n; i++)
        flatten(v->items[i], out);
}

/* Seeded inputs of parameter i of f (of type t) as the kernel takes them,
 * in[*n...]: one tensor, or one per field of a tuple parameter (named
 * "p.j" for their seeded streams; a tuple's fields get no weight ranges);
 * *arg the interpreter's argument. False when one is not a tensor that
 * fits in memory. */
static bool task_input(const ir_expr *f, int i, const ir_type *t, uint64_t seed, ir_tensor **in, int *n,
                       ir_value **arg)
{
    if (t && t->kind == IR_TY_TUPLE) {
        ir_value **fields = su_calloc((size_t)t->nfields + 1, sizeof *fields);
        bool ok = true;
        for (int j = 0; j < t->nfields && ok; j++) {
            const ir_type *ft = t->fields[j];
            ok = ft->kind == IR_TY_TENSOR && (in[*n] = ir_tensor_alloc(ft->dtype, ft->ndim, ft->shape));
            if (ok) {
                char name[64];
                snprintf(name, sizeof name, "%s.%d", f->u.func.params[i]->u.var.name, j);
                ir_random_fill(in[*n], name, seed, -1, 1);
                fields[j] = ir_value_tensor(in[(*n)++], false);
            }
        }
        for (int j = 0; !ok && j < t->nfields; j++)
            ir_value_release(fields[j]);
        *arg = ok ? ir_value_tuple(t->nfields, fields) : NULL;
        free(fields);
        return ok;
    }
    if (!t || t->kind != IR_TY_TENSOR || !(in[*n] = ir_tensor_alloc(t->dtype, t->ndim, t->shape)))
        return false;
    ir_random_param(f, i, seed, in[*n]);
    *arg = ir_value_tensor(in[(*n)++], false);
    return true;
}

tun_task_data *tun_task_data_new(const tun_task *task, uint64_t seed, su_buf *err)
{
    const ir_expr *f = task->func;
    int np = f->u.func.nparams, nin = 0;
    ir_tensor **in = su_calloc((size_t)sch_param_count(f) + 1, sizeof *in);
    ir_value **args = su_calloc((size_t)np + 1, sizeof *args);
    tun_task_data *td = NULL;
    bool ok = true;
    for (int i = 0; i < np && ok; i++) {
        const ir_type *t = f->u.func.params[i]->type ? f->u.func.params[i]->type : f->u.func.params[i]->u.var.annot;
        if (!task_input(f, i, t, seed, in, &nin, &args[i])) {
            su_buf_printf(err, "task %s: parameter %d is not a tensor (or a tuple of tensors) that fits in memory",
                          task->hash, i);
            ok = false;
            break;
        }
    }
    /* the reference: the function as @main of a module of its own */
    ir_module *m = ok ? ir_module_new() : NULL;
    ir_value *res = NULL;
    if (ok) {
        su_span nowhere = {0};
        ir_module_add(m, "main", ir_global(m, nowhere, "main"), (ir_expr *)f);
        ir_interp *ip = ir_interp_new(m, NULL);
        su_diags d = {0};
        if (!ir_interp_call(ip, "main", np, args, &res, &d)) {
            su_buf_printf(err, "task %s: the reference interpreter failed", task->hash);
            for (size_t i = 0; i < d.len; i++)
                su_buf_printf(err, ": %s", d.items[i].msg);
            ok = false;
        }
        su_diags_free(&d);
        ir_interp_free(ip);
    }
    if (ok) {
        tensor_vec outs = {0};
        flatten(res, &outs);
        double big = 0;
        for (size_t o = 0; o < outs.len; o++)
            for (int64_t i = 0; i < ir_tensor_numel(outs.data[o]); i++) {
                double v = fabs(ir_tensor_get(outs.data[o], i));
                big = v > big && isfinite(v) ? v : big;
            }
        double atol = ATOL_REL * (big > 1e-2 ? big : 1e-2);
        ms_task_data *md = ms_task_data_create(NULL, nin, (const ir_tensor *const *)in, (int)outs.len, outs.data,
                                               RTOL, atol, err);
        su_vec_free(&outs);
        if (md) {
            td = su_calloc(1, sizeof *td);
            td->data = md;
        }
    }
    ir_value_release(res);
    for (int i = 0; i < np; i++)
        ir_value_release(args[i]);
    for (int i = 0; i < nin; i++)
        ir_tensor_free(in[i]);
    free(args);
    free(in);
    ir_module_free(m);
    return td;
}

void tun_task_data_free(tun_task_data *td)
{
    if (!td)
        return;
    ms_task_data_free(td->data);
    free(td);
}

void tun_result_free(tun_result *r)
{
    free(r->msg);
    memset(r, 0, sizeof *r);
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *tun_phase_name(tun_phase p)
{
    static const char *const names[TUN_PH_COUNT] = {
        [TUN_PH_PROPOSE] = "propose", [TUN_PH_LEARN] = "learn",   [TUN_PH_TRANSFER] = "transfer",
        [TUN_PH_DATA] = "task data",  [TUN_PH_CODEGEN] = "codegen", [TUN_PH_COMPILE] = "compile",
        [TUN_PH_LOAD] = "load",       [TUN_PH_CHECK] = "check",   [TUN_PH_TIME] = "time",
        [TUN_PH_STORE] = "store",     [TUN_PH_CONFIRM] = "confirm",
    };
    return p < TUN_PH_COUNT ? names[p] : "?";
}

/* An entry of the map of built candidates is one block, "symbol\0path":
 * the key is the block, the value its path, so that replacing an entry
 * (its object was removed and built again) frees the old key with it. */
static void remember(su_map *built, const char *symbol, const char *path)
{
    size_t ks = strlen(symbol) + 1, ps = strlen(path) + 1;
    char *blk = su_malloc(ks + ps);
    memcpy(blk, symbol, ks);
    memcpy(blk + ks, path, ps);
    char *prev = su_map_put(built, blk, blk + ks);
    if (prev)
        free(prev - ks);
}

void tun_built_free(su_map *built)
{
    for (size_t i = 0; i < built->cap; i++)
        free((char *)built->slots[i].key);
    su_map_free(built);
}

/* Builds candidates c[0..n) into b, compiling each entry once: a candidate
 * whose entry an earlier one of the batch has, or that m->built says was
 * built before (and whose object is still there), shares that object. A
 * task's confirmation measures its best configs round after round, each
 * built already by the batch that first measured it: compiling them again
 * cost as much as a batch (and a unit holding one entry twice does not
 * compile). */
static void build_new(const tun_measurer *m, const ms_candidate *c, int n, ms_built *b)
{
    ms_candidate *todo = su_calloc((size_t)n + 1, sizeof *todo);
    ms_built *got = su_calloc((size_t)n + 1, sizeof *got);
    int *from = su_calloc((size_t)n + 1, sizeof *from); /* i's builder: a todo index, or -1 - (earlier i) */
    int nt = 0;
    for (int i = 0; i < n; i++) {
        memset(&b[i], 0, sizeof b[i]);
        from[i] = nt;
        for (int j = 0; j < i && from[i] == nt; j++)
            if (strcmp(c[j].symbol, c[i].symbol) == 0)
                from[i] = -1 - j;
        if (from[i] != nt)
            continue;
        const char *path = m->built ? su_map_get(m->built, c[i].symbol) : NULL;
        if (path && access(path, R_OK) == 0) {
            b[i].so_path = su_strdup(path);
            from[i] = -1 - i;
            continue;
        }
        todo[nt++] = c[i];
    }
    if (nt)
        ms_build(todo, nt, m->target, &m->build, got);
    for (int i = 0; i < n; i++) {
        if (from[i] >= 0) {
            b[i] = got[from[i]];
            if (!b[i].error && m->built && b[i].so_path)
                remember(m->built, c[i].symbol, b[i].so_path);
        } else if (-1 - from[i] < i) {
            /* the same entry as an earlier one: its object or its error */
            const ms_built *e = &b[-1 - from[i]];
            b[i].error = e->error;
            b[i].msg = e->msg ? su_strdup(e->msg) : NULL;
            b[i].so_path = e->so_path ? su_strdup(e->so_path) : NULL;
        }
    }
    free(todo);
    free(got);
    free(from);
}

bool tun_measure(const tun_measurer *m, const tun_space *s, const tun_task_data *td, int n, const sch_config *cfgs,
                 tun_result *out)
{
    const tun_task *task = s->task;
    ms_candidate *c = su_calloc((size_t)n + 1, sizeof *c);
    ms_built *b = su_calloc((size_t)n + 1, sizeof *b);
    char (*sym)[64] = su_calloc((size_t)n + 1, sizeof *sym);
    for (int i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].index = tun_config_encode(s, &cfgs[i]);
        /* named by task and config: the same candidate is the same source,
         * so a batch built again (a resumed session) comes from the cache */
        if (out[i].index >= 0)
            snprintf(sym[i], sizeof sym[i], "k_%s_%lld", task->hash, (long long)out[i].index);
        else
            snprintf(sym[i], sizeof sym[i], "k_%s_bad%d", task->hash, i);
        c[i] = (ms_candidate){task->func, task->template_name, &cfgs[i], task->param_const, sym[i]};
    }
    double t0 = wall_now();
    build_new(m, c, n, b);
    if (m->profile) {
        double codegen = 0;
        for (int i = 0; i < n; i++)
            codegen += b[i].codegen_s;
        m->profile->seconds[TUN_PH_CODEGEN] += codegen;
        m->profile->seconds[TUN_PH_COMPILE] += wall_now() - t0 - codegen;
    }
    bool alive = true;
    for (int i = 0; i < n; i++) {
        tun_result *r = &out[i];
        r->build_time = b[i].build_time_s;
        r->timestamp = wall_now();
        if (b[i].error || !alive) {
            r->error = alive ? b[i].error : SU_MERR_UNKNOWN;
            r->msg = alive ? b[i].msg : su_strdup("not run: the runner process died");
            b[i].msg = alive ? NULL : b[i].msg;
            ms_built_free(&b[i]);
            continue;
        }
        ms_result mr;
        ms_run_options run = m->run;
        if (!run.stop_above)
            run.stop_above = td->cutoff;
        alive = ms_runner_measure(m->runner, td->data, b[i].so_path, sym[i], &run, &mr);
        r->error = mr.error;
        r->msg = su_strdup(mr.msg);
        r->ncosts = mr.ncosts;
        memcpy(r->costs, mr.costs, sizeof r->costs);
        r->mean = mr.mean;
        r->counters = mr.counters;
        r->run_time = mr.run_time_s;
        r->timestamp = wall_now();
        if (m->profile) {
            m->profile->seconds[TUN_PH_LOAD] += mr.load_s;
            m->profile->seconds[TUN_PH_CHECK] += mr.check_s;
            m->profile->seconds[TUN_PH_TIME] += mr.run_time_s - mr.load_s - mr.check_s;
        }
        ms_built_free(&b[i]);
    }
    free(c);
    free(b);
    free(sym);
    return alive;
}
