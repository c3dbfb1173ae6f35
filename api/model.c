/* model.c — compiled models in the public API: rt_model_compile (the
 * module's @main through tg_model_compile, with the best configs of a
 * tuning database when one is given, resolved once up front as parsed
 * configs) and rt_cmodel, a compiled model
 * loaded with dlopen and driven through the ABI of relaytune_model.h, with
 * the user's tensors checked against the model's inputs by name, dtype and
 * shape. */
#include <dlfcn.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "api/api.h"
#include "db/db.h"
#include "targets/targets.h"

/* ---- compiling ----------------------------------------------------------- */

/* The tuned configs of a module's tasks, resolved once before compiling. */
typedef struct resolved {
    SU_VEC(tg_kernel_config) cfgs; /* per tuned task: its key and parsed config */
    su_buf fallback;        /* tasks compiled with their default config */
    su_buf isa;             /* tasks with a config of another target of the same ISA */
} resolved;

/* Says each line of a task's notes (records skipped and why). */
static void print_notes(FILE *notes, size_t task, const char *hash, const char *text)
{
    for (const char *line = text, *end; notes && line && *line; line = end + 1) {
        end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line) - 1;
        fprintf(notes, "relay-tune: note: task %zu (%s): %.*s\n", task, hash, (int)(end - line), line);
    }
}

/* The best valid record of every task of m in d for target t (named
 * `tname` in records; tuner/best.c: exact target, then same ISA, stale and
 * invalid records skipped), as parsed configs: targets/ builds each kernel
 * with its workload's and never reads the database itself. */
static void resolve_configs(rt_module *m, db *d, const tg_target *t, const char *tname, FILE *notes, resolved *r)
{
    if (!api_module_tasks(m, tname, notes))
        return;
    for (size_t i = 0; i < m->tasks.len; i++) {
        const tun_task *task = &m->tasks.items[i];
        tun_space sp;
        tun_best b;
        su_buf err = {0};
        if (!tun_task_best(d, task, t, tname, &sp, &b, &err)) {
            if (notes)
                fprintf(notes, "relay-tune: error: %s\n", su_buf_str(&err));
            su_buf_free(&err);
            continue;
        }
        su_buf_free(&err);
        print_notes(notes, i, task->hash, b.notes);
        if (b.kind == TUN_BEST_NONE) {
            su_buf_printf(&r->fallback, " %zu", i);
        } else {
            if (b.kind == TUN_BEST_ISA)
                su_buf_printf(&r->isa, " %zu", i);
            tg_kernel_config kc = {task->key, b.cfg};
            b.cfg = (sch_config){0};
            su_vec_push(&r->cfgs, kc);
        }
        tun_best_free(&b);
        tun_space_free(&sp);
    }
}

static void resolved_free(resolved *r)
{
    for (size_t i = 0; i < r->cfgs.len; i++)
        sch_config_free(&r->cfgs.data[i].cfg);
    su_vec_free(&r->cfgs);
    su_buf_free(&r->fallback);
    su_buf_free(&r->isa);
}

/* The target of a compile (cpu or opencl); false after a message. */
static bool compile_target(const char *text, tg_target *t, FILE *errs)
{
    const char *why;
    if (!tg_target_parse(text ? text : "cpu", t, &why)) {
        if (errs)
            fprintf(errs, "relay-tune: error: target '%s': %s\n", text, why);
        return false;
    }
    return true;
}

/* The configs of the database at path for target t (none without a path);
 * false after a message when it cannot be opened. */
static bool configs_from_db(rt_module *m, const char *path, const tg_target *t, const char *tname, FILE *errs,
                            resolved *r)
{
    if (!path)
        return true;
    struct stat sb;
    if (stat(path, &sb) != 0) {
        if (errs)
            fprintf(errs, "relay-tune: error: %s: no such database\n", path);
        return false;
    }
    su_buf err = {0};
    db_open_opts dopts = {DB_OPEN_NO_CREATE | DB_OPEN_READONLY, 0, 0};
    db *d = db_open(path, &dopts, &err);
    if (!d && errs)
        fprintf(errs, "relay-tune: error: %s\n", su_buf_str(&err));
    su_buf_free(&err);
    if (d)
        resolve_configs(m, d, t, tname, errs, r);
    db_close(d);
    return d != NULL;
}

char *rt_model_compile(rt_module *m, const char *out_path, const rt_compile_options *o, rt_compile_report *report,
                       FILE *errs)
{
    rt_compile_options none = {0};
    if (!o)
        o = &none;
    tg_target t;
    if (!compile_target(o->target, &t, errs))
        return NULL;
    const char *tname = o->target ? o->target : "cpu";
    resolved r = {0};
    if (!configs_from_db(m, o->db_path, &t, tname, errs, &r))
        return NULL;
    tg_model_opts to = {out_path, r.cfgs.data, (int)r.cfgs.len, o->jobs, errs};
    tg_model_info info;
    char *err = NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    bool okk = tg_model_compile(m->ir, &t, &to, &info, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    /* the tasks that fell back to the default config, and those that took
     * a config of another target */
    if (okk && errs && r.isa.len)
        fprintf(errs, "relay-tune: note: tasks with configs of target than %s with the same ISA:%s\n", tname,
                su_buf_str(&r.isa));
    if (okk && errs && r.fallback.len)
        fprintf(errs, "relay-tune: note: tasks with no valid tuning record for %s (default config):%s\n", tname,
                su_buf_str(&r.fallback));
    resolved_free(&r);
    if (!okk) {
        if (errs)
            fprintf(errs, "relay-tune: error: compile: %s\n", err);
        free(err);
        free(info.path);
        return NULL;
    }
    if (report) {
        *report = (rt_compile_report){info.ncalls,
                                      info.nkernels,
                                      info.ntuned,
                                      info.ninputs,
                                      info.noutputs,
                                      info.nconsts,
                                      info.npacked,
                                      info.weight_bytes,
                                      info.nintermediates,
                                      info.mem.peak,
                                      info.mem.sum,
                                      info.mem.live,
                                      (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9};
    }
    return info.path;
}

/* ---- loading and running --------------------------------------------------- */

struct rt_cmodel {
    void *handle;
    void *inst;
    bool opencl;            /* an OpenCL model (rtm_target_isa "opencl"): its failures are the device's */
    int (*num_inputs)(void);
    int (*num_outputs)(void);
    const char *(*input_name)(int);
    const char *(*input_dtype)(int);
    int (*input_ndim)(int);
    const int64_t *(*input_shape)(int);
    size_t (*input_nbytes)(int);
    const char *(*output_dtype)(int);
    int (*output_ndim)(int);
    const int64_t *(*output_shape)(int);
    size_t (*output_nbytes)(int);
    void *(*input)(void *, int);
    const void *(*output)(const void *, int);
    int (*run)(void *);
    void (*destroy)(void *);
    size_t (*arena_bytes)(void);
    /* the profile: NULL in a model without one (optional symbols) */
    int (*num_steps)(void);
    const char *(*step_name)(int);
    int (*step_kernel)(int);
    long long (*step_flops)(int);
    void (*profile)(void *, double *);
};

rt_cmodel *rt_cmodel_load(const char *path, FILE *errs)
{
    /* the model's OpenMP threads outlive it: keep libgomp loaded for good */
    (void)dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
    /* dlopen searches the library path for a name without a slash */
    su_buf p = {0};
    su_buf_printf(&p, "%s%s", strchr(path, '/') ? "" : "./", path);
    void *h = dlopen(su_buf_str(&p), RTLD_NOW | RTLD_LOCAL);
    su_buf_free(&p);
    if (!h) {
        if (errs)
            fprintf(errs, "relay-tune: error: cannot load %s: %s\n", path, dlerror());
        return NULL;
    }
    rt_cmodel *c = su_calloc(1, sizeof *c);
    c->handle = h;
    int (*abi)(void) = (int (*)(void))dlsym(h, "rtm_abi_version");
    void *(*create)(void) = (void *(*)(void))dlsym(h, "rtm_create");
#define SYM(field, name) c->field = (__typeof__(c->field))dlsym(h, name)
    SYM(num_inputs, "rtm_num_inputs");
    SYM(num_outputs, "rtm_num_outputs");
    SYM(input_name, "rtm_input_name");
    SYM(input_dtype, "rtm_input_dtype");
    SYM(input_ndim, "rtm_input_ndim");
    SYM(input_shape, "rtm_input_shape");
    SYM(input_nbytes, "rtm_input_nbytes");
    SYM(output_dtype, "rtm_output_dtype");
    SYM(output_ndim, "rtm_output_ndim");
    SYM(output_shape, "rtm_output_shape");
    SYM(output_nbytes, "rtm_output_nbytes");
    SYM(input, "rtm_input");
    SYM(output, "rtm_output");
    SYM(run, "rtm_run");
    SYM(destroy, "rtm_destroy");
    SYM(arena_bytes, "rtm_arena_bytes");
    SYM(num_steps, "rtm_num_steps");
    SYM(step_name, "rtm_step_name");
    SYM(step_kernel, "rtm_step_kernel");
    SYM(step_flops, "rtm_step_flops");
    SYM(profile, "rtm_profile");
#undef SYM
    if (!c->num_steps || !c->step_name || !c->step_kernel || !c->step_flops || !c->profile)
        c->num_steps = NULL;    /* all of the profile or none */
    if (!abi || abi() != 1 || !create || !c->num_inputs || !c->num_outputs || !c->input_name || !c->input_dtype ||
        !c->input_ndim || !c->input_shape || !c->input_nbytes || !c->output_dtype || !c->output_ndim ||
        !c->output_shape || !c->output_nbytes || !c->input || !c->output || !c->run || !c->destroy ||
        !c->arena_bytes) {
        if (errs)
            fprintf(errs, "relay-tune: error: %s is not a relay-tune compiled model (ABI 1)\n", path);
        dlclose(h);
        free(c);
        return NULL;
    }
    /* a model of an ISA the host lacks would die of SIGILL in its first kernel */
    const char *(*isa)(void) = (const char *(*)(void))dlsym(h, "rtm_target_isa");
    tg_isa need;
    if (isa && tg_isa_parse(isa(), &need) && need > tg_host_isa()) {
        if (errs)
            fprintf(errs, "relay-tune: error: %s was compiled for %s, which this host cannot execute (it has %s)\n",
                    path, tg_isa_name(need), tg_isa_name(tg_host_isa()));
        dlclose(h);
        free(c);
        return NULL;
    }
    c->opencl = isa && !strcmp(isa(), "opencl");
    if (!(c->inst = create())) {
        if (errs)
            fprintf(errs, "relay-tune: error: %s: %s\n", path,
                    c->opencl ? "cannot set up its OpenCL device (the device it was compiled for is not on this "
                                "host, its program does not build there, or device memory is short)"
                              : "not enough memory for the model's buffers");
        rt_cmodel_free(c);
        return NULL;
    }
    return c;
}

size_t rt_cmodel_num_inputs(const rt_cmodel *c)
{
    return (size_t)c->num_inputs();
}

size_t rt_cmodel_num_outputs(const rt_cmodel *c)
{
    return (size_t)c->num_outputs();
}

const char *rt_cmodel_input_name(const rt_cmodel *c, size_t i)
{
    return c->input_name((int)i);
}

size_t rt_cmodel_arena_bytes(const rt_cmodel *c)
{
    return c->arena_bytes();
}

static void type_text(su_buf *b, const char *dtype, int ndim, const int64_t *shape)
{
    su_buf_puts(b, "Tensor[(");
    for (int d = 0; d < ndim; d++)
        su_buf_printf(b, "%s%lld", d ? ", " : "", (long long)shape[d]);
    su_buf_printf(b, "%s), %s]", ndim == 1 ? "," : "", dtype);
}

static int input_index(const rt_cmodel *c, const char *name)
{
    for (int i = 0; i < c->num_inputs(); i++)
        if (!strcmp(c->input_name(i), name))
            return i;
    return -1;
}

int rt_cmodel_set_input(rt_cmodel *c, const char *name, const rt_tensor *t, FILE *errs)
{
    int i = input_index(c, name);
    if (i < 0) {
        if (errs)
            fprintf(errs, "relay-tune: error: the model has no input named '%s'\n", name);
        return -1;
    }
    bool same = !strcmp(rt_tensor_dtype(t), c->input_dtype(i)) && rt_tensor_ndim(t) == c->input_ndim(i);
    for (int d = 0; same && d < c->input_ndim(i); d++)
        same = rt_tensor_shape(t)[d] == c->input_shape(i)[d];
    if (!same) {
        if (errs) {
            su_buf want = {0};
            type_text(&want, c->input_dtype(i), c->input_ndim(i), c->input_shape(i));
            char *got = rt_tensor_type(t);
            fprintf(errs, "relay-tune: error: input '%s' is a %s, but the value given is a %s\n", name,
                    su_buf_str(&want), got);
            free(got);
            su_buf_free(&want);
        }
        return -1;
    }
    memcpy(c->input(c->inst, i), rt_tensor_cdata(t), c->input_nbytes(i));
    return 0;
}

int rt_cmodel_set_inputs(rt_cmodel *c, const rt_inputs *in, int random, uint64_t seed, FILE *errs)
{
    int n = c->num_inputs();
    bool *given = su_calloc((size_t)n + 1, sizeof *given);
    const char *name, *origin;
    const rt_tensor *t;
    int rc = 0;
    for (size_t k = 0; in && api_inputs_item(in, k, &name, &t, &origin) && !rc; k++) {
        int i = input_index(c, name);
        if (i < 0) {
            if (errs)
                fprintf(errs, "relay-tune: error: %s: the model has no input named '%s'\n", origin ? origin : "",
                        name);
            rc = -1;
        } else if (rt_cmodel_set_input(c, name, t, errs)) {
            rc = -1;
        } else {
            given[i] = true;
        }
    }
    for (int i = 0; i < n && !rc; i++) {
        if (given[i])
            continue;
        if (!random) {
            if (errs)
                fprintf(errs, "relay-tune: error: input '%s' has no value (give it with --input %s=FILE.npy)\n",
                        c->input_name(i), c->input_name(i));
            rc = -1;
            break;
        }
        ir_dtype dt;
        const char *dn = c->input_dtype(i);
        if (!ir_dtype_parse(dn, strlen(dn), &dt))
            su_panic("compiled model input of dtype %s", dn);
        ir_tensor *x = ir_tensor_alloc(dt, c->input_ndim(i), c->input_shape(i));
        if (!x) {
            rc = -1;
            break;
        }
        ir_random_fill(x, c->input_name(i), seed, -1, 1);
        memcpy(c->input(c->inst, i), x->data, c->input_nbytes(i));
        ir_tensor_free(x);
    }
    free(given);
    return rc;
}

const char *rt_cmodel_kind(const rt_cmodel *c)
{
    return c->opencl ? "opencl" : "cpu";
}

int rt_cmodel_run(rt_cmodel *c, FILE *errs)
{
    if (c->run(c->inst) != 0) {
        if (errs)
            fprintf(errs, "relay-tune: error: the compiled model failed (%s)\n",
                    c->opencl ? "an OpenCL call failed" : "a kernel could not allocate memory");
        return -1;
    }
    return 0;
}

int rt_cmodel_num_steps(const rt_cmodel *c)
{
    return c->num_steps ? c->num_steps() : -1;
}

const char *rt_cmodel_step_name(const rt_cmodel *c, int i)
{
    return c->num_steps ? c->step_name(i) : NULL;
}

int rt_cmodel_step_kernel(const rt_cmodel *c, int i)
{
    return c->num_steps ? c->step_kernel(i) : -1;
}

int64_t rt_cmodel_step_flops(const rt_cmodel *c, int i)
{
    return c->num_steps ? c->step_flops(i) : -1;
}

int rt_cmodel_run_profiled(rt_cmodel *c, double *seconds, FILE *errs)
{
    if (!c->num_steps) {
        if (errs)
            fprintf(errs, "relay-tune: error: this compiled model has no per-kernel profile (%s)\n",
                    c->opencl ? "an OpenCL model" : "compiled by an older relay-tune: compile it again");
        return -1;
    }
    /* the profile is on for this run only, so that rt_cmodel_run stays untimed */
    c->profile(c->inst, seconds);
    int rc = rt_cmodel_run(c, errs);
    c->profile(c->inst, NULL);
    return rc;
}

rt_tensor *rt_cmodel_output(const rt_cmodel *c, size_t i)
{
    if (i >= rt_cmodel_num_outputs(c))
        return NULL;
    rt_tensor *t = rt_tensor_new(c->output_dtype((int)i), c->output_ndim((int)i), c->output_shape((int)i));
    if (t)
        memcpy(rt_tensor_data(t), c->output(c->inst, (int)i), c->output_nbytes((int)i));
    return t;
}

void rt_cmodel_free(rt_cmodel *c)
{
    if (!c)
        return;
    if (c->inst)
        c->destroy(c->inst);
    dlclose(c->handle);
    free(c);
}
