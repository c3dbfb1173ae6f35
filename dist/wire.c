/* wire.c — the messages between rank 0 and the other ranks, as JSON text
 * (jansson): readable in a debugger, checked field by field when read back,
 * and independent of either side's struct layout. A share names its task by
 * workload key and carries the task's function as Relay text the first time
 * a rank gets it, so a rank needs neither the model file nor its weights;
 * configs travel as record JSON (knob values, read back against the rank's
 * own space), results as their fields with error codes by name (the closed
 * set SU_MERRS). Doubles are printed with 17 digits, so costs arrive exact. */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "dist/dist.h"

static char *dump(json_t *o)
{
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(o);
    return s;
}

static json_t *target_json(const db_target *t)
{
    return json_pack("{s:s, s:s, s:s, s:i, s:s}", "name", t->name, "cpu", t->cpu ? t->cpu : "", "isa",
                     t->isa ? t->isa : "", "cores", t->cores, "os", t->os ? t->os : "");
}

char *dist_hello_json(const dist_hello *h)
{
    json_t *o = json_pack("{s:s, s:I, s:o}", "host", h->host, "pid", (json_int_t)h->pid, "target",
                          target_json(&h->target));
    if (h->error)
        json_object_set_new(o, "error", json_string(h->error));
    return dump(o);
}

/* A string member into a, or false with a reason naming it. */
static bool get_str(json_t *o, const char *name, su_arena *a, const char **out, su_buf *err)
{
    const char *s = json_string_value(json_object_get(o, name));
    if (!s) {
        su_buf_printf(err, "no string '%s'", name);
        return false;
    }
    *out = su_arena_strdup(a, s);
    return true;
}

static bool get_int(json_t *o, const char *name, json_int_t *out, su_buf *err)
{
    json_t *v = json_object_get(o, name);
    if (!json_is_integer(v)) {
        su_buf_printf(err, "no integer '%s'", name);
        return false;
    }
    *out = json_integer_value(v);
    return true;
}

static bool get_num(json_t *o, const char *name, double *out, su_buf *err)
{
    json_t *v = json_object_get(o, name);
    if (!json_is_number(v)) {
        su_buf_printf(err, "no number '%s'", name);
        return false;
    }
    *out = json_number_value(v);
    return true;
}

static json_t *load(const char *text, const char *what, su_buf *err)
{
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    if (!json_is_object(o)) {
        su_buf_printf(err, "%s: not a JSON object (%s)", what, o ? "another value" : je.text);
        json_decref(o);
        return NULL;
    }
    return o;
}

bool dist_hello_parse(const char *text, su_arena *a, dist_hello *out, su_buf *err)
{
    memset(out, 0, sizeof *out);
    json_t *o = load(text, "hello", err);
    if (!o)
        return false;
    json_t *t = json_object_get(o, "target");
    json_int_t pid = 0, cores = 0;
    bool ok = get_str(o, "host", a, &out->host, err) && get_int(o, "pid", &pid, err) && json_is_object(t) &&
              get_str(t, "name", a, &out->target.name, err) && get_str(t, "cpu", a, &out->target.cpu, err) &&
              get_str(t, "isa", a, &out->target.isa, err) && get_int(t, "cores", &cores, err) &&
              get_str(t, "os", a, &out->target.os, err);
    if (ok && json_object_get(o, "error"))
        ok = get_str(o, "error", a, &out->error, err);
    if (!ok && !err->len)
        su_buf_puts(err, "no object 'target'");
    out->pid = (long)pid;
    out->target.cores = (int)cores;
    json_decref(o);
    return ok;
}

char *dist_work_json(const dist_work *w)
{
    json_t *task = json_pack("{s:s, s:I}", "key", w->key, "flops", (json_int_t)w->flops);
    if (w->func)
        json_object_set_new(task, "func", json_string(w->func));
    json_t *pc = json_array();
    for (int i = 0; i < w->nparams; i++)
        json_array_append_new(pc, json_boolean(w->param_const[i]));
    json_object_set_new(task, "param_const", pc);
    json_t *cfgs = json_array();
    for (int i = 0; i < w->n; i++)
        json_array_append_new(cfgs, json_string(w->configs[i]));
    json_t *ev = json_array();
    for (int i = 0; i < w->run.nevents; i++)
        json_array_append_new(ev, json_string(w->run.events[i]));
    const ms_run_options *r = &w->run;
    json_t *run = json_pack("{s:i, s:i, s:i, s:i, s:f, s:b, s:o}", "warmup", r->warmup, "number", r->number, "repeat",
                            r->repeat, "min_repeat_ms", r->min_repeat_ms, "timeout", r->timeout_s, "flush_cache",
                            r->flush_cache, "events", ev);
    json_t *build = json_pack("{s:i, s:i, s:f}", "jobs", w->build.jobs, "per_unit", w->build.per_unit, "timeout",
                              w->build.timeout_s);
    /* the seed as text: a uint64_t does not fit JSON's integers */
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)w->seed);
    return dump(json_pack("{s:I, s:o, s:s, s:o, s:o, s:o}", "job", (json_int_t)w->job, "task", task, "seed", seed,
                          "configs", cfgs, "run", run, "build", build));
}

/* The run and build options of a share; false with a reason. */
static bool options_parse(json_t *o, su_arena *a, dist_work *w, su_buf *err)
{
    json_t *run = json_object_get(o, "run"), *build = json_object_get(o, "build");
    if (!json_is_object(run) || !json_is_object(build)) {
        su_buf_puts(err, "no objects 'run' and 'build'");
        return false;
    }
    json_int_t warmup, number, repeat, mrm, jobs, per_unit;
    int flush = json_is_true(json_object_get(run, "flush_cache"));
    if (!get_int(run, "warmup", &warmup, err) || !get_int(run, "number", &number, err) ||
        !get_int(run, "repeat", &repeat, err) || !get_int(run, "min_repeat_ms", &mrm, err) ||
        !get_num(run, "timeout", &w->run.timeout_s, err) || !get_int(build, "jobs", &jobs, err) ||
        !get_int(build, "per_unit", &per_unit, err) || !get_num(build, "timeout", &w->build.timeout_s, err))
        return false;
    if (repeat < 1 || repeat > MS_MAX_REPEAT || warmup < 0 || number < 0 || mrm < 0 || jobs < 0 || per_unit < 0 ||
        jobs > 4096 || per_unit > 4096 || warmup > 1000000 || number > 1000000 || mrm > 1000000) {
        su_buf_puts(err, "run or build options out of range");
        return false;
    }
    w->run.warmup = (int)warmup, w->run.number = (int)number, w->run.repeat = (int)repeat;
    w->run.min_repeat_ms = (int)mrm, w->run.flush_cache = flush;
    w->build.jobs = (int)jobs, w->build.per_unit = (int)per_unit;
    json_t *ev = json_object_get(run, "events");
    if (!json_is_array(ev) || json_array_size(ev) > MS_MAX_EVENTS) {
        su_buf_printf(err, "'events' is not an array of at most %d names", MS_MAX_EVENTS);
        return false;
    }
    for (size_t i = 0; i < json_array_size(ev); i++) {
        const char *s = json_string_value(json_array_get(ev, i));
        if (!s || strlen(s) >= MS_NAME) {
            su_buf_puts(err, "an event is not a short string");
            return false;
        }
        w->run.events[w->run.nevents++] = su_arena_strdup(a, s);
    }
    return true;
}

bool dist_work_parse(const char *text, su_arena *a, dist_work *w, su_buf *err)
{
    memset(w, 0, sizeof *w);
    json_t *o = load(text, "work", err);
    if (!o)
        return false;
    json_t *task = json_object_get(o, "task"), *cfgs = json_object_get(o, "configs"), *pc;
    json_int_t job, flops;
    const char *seed;
    bool ok = json_is_object(task) && json_is_array(cfgs) && json_is_array(pc = json_object_get(task, "param_const"));
    if (!ok)
        su_buf_puts(err, "work: no 'task' with 'param_const', or no 'configs'");
    ok = ok && get_int(o, "job", &job, err) && get_str(task, "key", a, &w->key, err) &&
         get_int(task, "flops", &flops, err) && get_str(o, "seed", a, &seed, err) && options_parse(o, a, w, err);
    if (ok && json_object_get(task, "func"))
        ok = get_str(task, "func", a, &w->func, err);
    if (ok) {
        w->job = (long)job;
        w->flops = flops;
        w->seed = strtoull(seed, NULL, 10);
        w->nparams = (int)json_array_size(pc);
        w->param_const = su_arena_alloc(a, ((size_t)w->nparams + 1) * sizeof *w->param_const);
        for (int i = 0; i < w->nparams; i++)
            w->param_const[i] = json_is_true(json_array_get(pc, (size_t)i));
        w->n = (int)json_array_size(cfgs);
        w->configs = su_arena_alloc(a, ((size_t)w->n + 1) * sizeof *w->configs);
        for (int i = 0; i < w->n && ok; i++) {
            const char *s = json_string_value(json_array_get(cfgs, (size_t)i));
            if (!(ok = s != NULL))
                su_buf_printf(err, "work: config %d is not a string", i);
            else
                w->configs[i] = su_arena_strdup(a, s);
        }
    }
    json_decref(o);
    return ok;
}

/* JSON has no NaN or infinity (json_real refuses them): a failed
 * measurement's numbers are never read, so they travel as 0. */
static double finite_or_0(double v)
{
    return isfinite(v) ? v : 0;
}

static json_t *result_json(const tun_result *r)
{
    json_t *costs = json_array();
    for (int i = 0; i < r->ncosts; i++)
        json_array_append_new(costs, json_real(finite_or_0(r->costs[i])));
    const ms_counters *c = &r->counters;
    json_t *names = json_array(), *values = json_array(), *missing = json_array();
    for (int i = 0; i < c->n; i++) {
        json_array_append_new(names, json_string(c->names[i]));
        json_array_append_new(values, json_integer(c->values[i]));
    }
    for (int i = 0; i < c->nmissing; i++)
        json_array_append_new(missing, json_string(c->missing[i]));
    return json_pack("{s:I, s:s, s:s, s:o, s:f, s:o, s:o, s:o, s:s, s:f, s:f, s:f}", "index", (json_int_t)r->index,
                     "error", su_merr_name(r->error), "msg", r->msg ? r->msg : "", "costs", costs, "mean", finite_or_0(r->mean),
                     "counters", names, "values", values, "missing", missing, "why", c->why, "build_time",
                     finite_or_0(r->build_time), "run_time", finite_or_0(r->run_time), "timestamp", r->timestamp);
}

char *dist_results_json(long job, int n, const tun_result *r)
{
    json_t *rs = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(rs, result_json(&r[i]));
    return dump(json_pack("{s:I, s:o}", "job", (json_int_t)job, "results", rs));
}

long dist_results_job(const char *text)
{
    json_t *o = json_loads(text, 0, NULL);
    json_t *j = json_object_get(o, "job");
    long job = json_is_integer(j) && json_is_array(json_object_get(o, "results")) ? (long)json_integer_value(j) : -1;
    json_decref(o);
    return job;
}

/* Copies at most MS_MAX_EVENTS strings of arr into names[][MS_NAME]; false when arr is not such an array. */
static bool names_into(json_t *arr, char (*names)[MS_NAME], int *n)
{
    if (!json_is_array(arr) || json_array_size(arr) > MS_MAX_EVENTS)
        return false;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const char *s = json_string_value(json_array_get(arr, i));
        if (!s)
            return false;
        snprintf(names[i], MS_NAME, "%s", s);
    }
    *n = (int)json_array_size(arr);
    return true;
}

static bool result_parse(json_t *o, tun_result *r, su_buf *err)
{
    json_int_t index;
    const char *ename = json_string_value(json_object_get(o, "error"));
    const char *msg = json_string_value(json_object_get(o, "msg"));
    const char *why = json_string_value(json_object_get(o, "why"));
    json_t *costs = json_object_get(o, "costs"), *values = json_object_get(o, "values");
    if (!json_is_object(o) || !ename || !su_merr_parse(ename, &r->error) || !msg || !why) {
        su_buf_puts(err, "a result without a known 'error', 'msg' or 'why'");
        return false;
    }
    if (!get_int(o, "index", &index, err) || !get_num(o, "mean", &r->mean, err) ||
        !get_num(o, "build_time", &r->build_time, err) || !get_num(o, "run_time", &r->run_time, err) ||
        !get_num(o, "timestamp", &r->timestamp, err))
        return false;
    r->index = index;
    ms_counters *c = &r->counters;
    if (!json_is_array(costs) || json_array_size(costs) > MS_MAX_REPEAT || !names_into(json_object_get(o, "counters"), c->names, &c->n) ||
        !names_into(json_object_get(o, "missing"), c->missing, &c->nmissing) || !json_is_array(values) ||
        json_array_size(values) != (size_t)c->n) {
        su_buf_puts(err, "a result's costs or counters are malformed");
        return false;
    }
    for (size_t i = 0; i < json_array_size(costs); i++) {
        json_t *v = json_array_get(costs, i);
        if (!json_is_number(v)) {
            su_buf_puts(err, "a cost is not a number");
            return false;
        }
        r->costs[r->ncosts++] = json_number_value(v);
    }
    for (int i = 0; i < c->n; i++)
        c->values[i] = (long long)json_integer_value(json_array_get(values, (size_t)i));
    snprintf(c->why, sizeof c->why, "%s", why);
    r->msg = su_strdup(msg);
    return true;
}

bool dist_results_parse(const char *text, int n, tun_result *out, su_buf *err)
{
    memset(out, 0, (size_t)n * sizeof *out);
    json_t *o = load(text, "results", err);
    if (!o)
        return false;
    json_t *rs = json_object_get(o, "results");
    bool ok = json_is_array(rs) && json_array_size(rs) == (size_t)n;
    if (!ok)
        su_buf_printf(err, "results: not an array of %d", n);
    for (int i = 0; ok && i < n; i++)
        ok = result_parse(json_array_get(rs, (size_t)i), &out[i], err);
    if (!ok)
        for (int i = 0; i < n; i++)
            tun_result_free(&out[i]);
    json_decref(o);
    return ok;
}
