/* run.c — the public tensor, inputs and run API: wraps heap tensors and the
 * .npy/.npz readers, matches named inputs to a function's parameters (or
 * fills them with seeded values), runs the function with the reference
 * interpreter and hands back the result's tensors. Every problem with the
 * user's files or parameters is reported here, in the user's terms: the
 * parameter's name, its type and the type of what was given, and where that
 * came from. */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "api/api.h"

/* ---- tensors ------------------------------------------------------------- */

rt_tensor *api_tensor_wrap(ir_tensor *t)
{
    rt_tensor *r = su_calloc(1, sizeof *r);
    r->t = t;
    return r;
}

rt_tensor *rt_tensor_new(const char *dtype, int ndim, const int64_t *shape)
{
    ir_dtype dt;
    if (!dtype || !ir_dtype_parse(dtype, strlen(dtype), &dt) || ndim < 0 || ndim > IR_MAX_DIMS)
        return NULL;
    ir_tensor *t = ir_tensor_alloc(dt, ndim, shape);
    return t ? api_tensor_wrap(t) : NULL;
}

static void print_error(FILE *errs, su_buf *msg)
{
    if (errs)
        fprintf(errs, "error: %s\n", su_buf_str(msg));
    su_buf_free(msg);
}

rt_tensor *rt_tensor_load(const char *path, FILE *errs)
{
    su_buf err = {0};
    ir_tensor *t = ir_npy_load(path, &err);
    if (!t) {
        print_error(errs, &err);
        return NULL;
    }
    su_buf_free(&err);
    return api_tensor_wrap(t);
}

int rt_tensor_save(const rt_tensor *t, const char *path, FILE *errs)
{
    su_buf err = {0};
    if (!ir_npy_save(path, t->t, &err)) {
        print_error(errs, &err);
        return -1;
    }
    return 0;
}

const char *rt_tensor_dtype(const rt_tensor *t) { return ir_dtype_name(t->t->dtype); }
int rt_tensor_ndim(const rt_tensor *t) { return t->t->ndim; }
const int64_t *rt_tensor_shape(const rt_tensor *t) { return t->t->shape; }
void *rt_tensor_data(rt_tensor *t) { return t->t->data; }
const void *rt_tensor_cdata(const rt_tensor *t) { return t->t->data; }
size_t rt_tensor_nbytes(const rt_tensor *t) { return ir_tensor_nbytes(t->t); }

char *rt_tensor_type(const rt_tensor *t)
{
    su_buf b = {0};
    ir_tensor_print_type(&b, t->t);
    return su_buf_take(&b);
}

void rt_tensor_free(rt_tensor *t)
{
    if (!t)
        return;
    ir_tensor_free(t->t);
    free(t);
}

/* ---- inputs ---------------------------------------------------------------- */

typedef struct input {
    char *name;
    rt_tensor *tensor;
    char *origin;           /* "x.npy", "W.npz" */
    bool strict;            /* a name that is no parameter is an error */
} input;

struct rt_inputs {
    SU_VEC(input) items;
};

bool api_inputs_item(const rt_inputs *in, size_t i, const char **name, const rt_tensor **t, const char **origin)
{
    if (i >= in->items.len)
        return false;
    *name = in->items.data[i].name;
    *t = in->items.data[i].tensor;
    *origin = in->items.data[i].origin;
    return true;
}

rt_inputs *rt_inputs_new(void)
{
    return su_calloc(1, sizeof(rt_inputs));
}

static input *find_input(const rt_inputs *in, const char *name)
{
    for (size_t i = 0; in && i < in->items.len; i++)
        if (!strcmp(in->items.data[i].name, name))
            return &in->items.data[i];
    return NULL;
}

void rt_inputs_set(rt_inputs *in, const char *name, rt_tensor *t, const char *origin, int strict)
{
    input *old = find_input(in, name);
    if (old) {
        rt_tensor_free(old->tensor);
        free(old->origin);
        old->tensor = t;
        old->origin = su_strdup(origin ? origin : "input");
        old->strict = strict;
        return;
    }
    input it = {su_strdup(name), t, su_strdup(origin ? origin : "input"), strict != 0};
    su_vec_push(&in->items, it);
}

int rt_inputs_load_npz(rt_inputs *in, const char *path, FILE *errs)
{
    su_buf err = {0};
    ir_npz *z = ir_npz_load(path, &err);
    if (!z) {
        print_error(errs, &err);
        return -1;
    }
    su_buf_free(&err);
    for (int i = 0; i < z->n; i++)
        rt_inputs_set(in, z->entries[i].name, api_tensor_wrap(ir_npz_take(z, i)), path, 0);
    ir_npz_free(z);
    return 0;
}

size_t rt_inputs_count(const rt_inputs *in)
{
    return in->items.len;
}

void rt_inputs_free(rt_inputs *in)
{
    if (!in)
        return;
    for (size_t i = 0; i < in->items.len; i++) {
        free(in->items.data[i].name);
        free(in->items.data[i].origin);
        rt_tensor_free(in->items.data[i].tensor);
    }
    su_vec_free(&in->items);
    free(in);
}

/* ---- results ---------------------------------------------------------------- */

struct rt_result {
    SU_VEC(rt_tensor *) tensors;    /* copies of the result's tensors */
    SU_VEC(char *) names;           /* their field paths */
    bool tuple;
    double seconds;
};

size_t rt_result_count(const rt_result *r) { return r->tensors.len; }
const rt_tensor *rt_result_tensor(const rt_result *r, size_t i) { return r->tensors.data[i]; }
const char *rt_result_name(const rt_result *r, size_t i) { return r->names.data[i]; }
int rt_result_is_tuple(const rt_result *r) { return r->tuple; }
double rt_result_seconds(const rt_result *r) { return r->seconds; }

void rt_result_free(rt_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->tensors.len; i++) {
        rt_tensor_free(r->tensors.data[i]);
        free(r->names.data[i]);
    }
    su_vec_free(&r->tensors);
    su_vec_free(&r->names);
    free(r);
}

/* Copies the tensors of v into r, depth first; false (with why) for a
 * closure, which has no data to hand back, or when memory runs out. */
static bool collect(rt_result *r, const ir_value *v, const char *path, su_buf *why)
{
    if (v->kind == IR_VAL_CLOSURE) {
        su_buf_printf(why, "the result%s%s is a function, not data", *path ? " field " : "", path);
        return false;
    }
    if (v->kind == IR_VAL_ADT || v->kind == IR_VAL_REF) {
        /* results are tensors (and tuples of them): files and compiled models hold nothing else */
        su_buf_printf(why, "the result%s%s is %s%s, not a tensor: return the tensors it holds (a match, ref_read)",
                      *path ? " field " : "", path, v->kind == IR_VAL_REF ? "a reference" : "a value of type ",
                      v->kind == IR_VAL_REF ? "" : v->ctor->adt->name);
        return false;
    }
    if (v->kind == IR_VAL_TUPLE) {
        for (int i = 0; i < v->n; i++) {
            char sub[256];
            snprintf(sub, sizeof sub, "%s%s%d", path, *path ? "." : "", i);
            if (!collect(r, v->items[i], sub, why))
                return false;
        }
        return true;
    }
    ir_tensor *copy = ir_tensor_clone(v->tensor);
    if (!copy) {
        su_buf_puts(why, "out of memory copying the result");
        return false;
    }
    su_vec_push(&r->tensors, api_tensor_wrap(copy));
    su_vec_push(&r->names, su_strdup(path));
    return true;
}

/* ---- rt_run ------------------------------------------------------------------ */

static const char *type_str(su_buf *b, const ir_type *t)
{
    su_buf_clear(b);
    ir_type_print(b, t);
    return su_buf_str(b);
}

/* The interpreter runs on a thread of its own with a large stack, because
 * evaluation recurses along the model's expressions and calls. */
typedef struct job {
    ir_interp *ip;
    const char *fn;
    int nargs;
    ir_value **args;
    ir_value *out;
    su_diags *d;
    bool ok;
    double seconds;
} job;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *run_job(void *arg)
{
    job *j = arg;
    double t0 = now();
    j->ok = ir_interp_call(j->ip, j->fn, j->nargs, j->args, &j->out, j->d);
    j->seconds = now() - t0;
    return NULL;
}

static void run_on_big_stack(job *j)
{
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)1 << 30);
    if (pthread_create(&t, &attr, run_job, j) != 0)
        run_job(j);
    else
        pthread_join(t, NULL);
    pthread_attr_destroy(&attr);
}

/* The argument for each parameter: a given input (checked against the
 * parameter's type), or seeded values, or a report of what is missing. */
static bool bind_params(const ir_expr *func, const char *fname, const rt_inputs *in, const rt_run_options *o,
                        ir_value **args, FILE *errs)
{
    su_buf a = {0}, b = {0}, missing = {0};
    int nmissing = 0, bad = 0;
    const char *first_missing = NULL;
    for (int i = 0; i < func->u.func.nparams; i++) {
        const ir_expr *p = func->u.func.params[i];
        const char *name = p->u.var.name;
        const ir_type *ty = p->type;
        input *it = find_input(in, name);
        if (it) {
            const ir_tensor *t = it->tensor->t;
            if (ty->kind != IR_TY_TENSOR || !ir_tensor_has_shape(t, ty->dtype, ty->ndim, ty->shape)) {
                su_buf_clear(&b);
                ir_tensor_print_type(&b, t);
                if (errs)
                    fprintf(errs, "error: parameter %%%s of @%s has type %s, but %s gives %s\n", name, fname,
                            type_str(&a, ty), it->origin, su_buf_str(&b));
                bad++;
                continue;
            }
            args[i] = ir_value_tensor(it->tensor->t, false);
        } else if (o->random_params && ty->kind == IR_TY_TENSOR) {
            ir_tensor *t = ir_tensor_alloc(ty->dtype, ty->ndim, ty->shape);
            if (!t) {
                if (errs)
                    fprintf(errs, "error: out of memory for parameter %%%s: %s\n", name, type_str(&a, ty));
                bad++;
                continue;
            }
            ir_random_param(func, i, o->seed, t);
            args[i] = ir_value_tensor(t, true);
        } else {
            if (!nmissing++)
                first_missing = name;
            if (nmissing <= 8)
                su_buf_printf(&missing, "%s%%%s", nmissing > 1 ? ", " : "", name);
            if (ty->kind != IR_TY_TENSOR) {
                if (errs)
                    fprintf(errs, "error: parameter %%%s of @%s has type %s, which no file can give\n", name,
                            fname, type_str(&a, ty));
                bad++;
                nmissing--;
            }
        }
    }
    if (nmissing == 1) {
        const ir_expr *p = NULL;
        for (int i = 0; i < func->u.func.nparams; i++)
            if (!strcmp(func->u.func.params[i]->u.var.name, first_missing))
                p = func->u.func.params[i];
        if (errs)
            fprintf(errs, "error: no value for parameter %%%s of @%s: %s%s%s\n", first_missing, fname,
                    type_str(&a, p->type), o->missing_hint ? " " : "", o->missing_hint ? o->missing_hint : "");
    } else if (nmissing > 1 && errs) {
        fprintf(errs, "error: no value for %d parameters of @%s: %s%s%s%s\n", nmissing, fname, su_buf_str(&missing),
                nmissing > 8 ? ", ..." : "", o->missing_hint ? " " : "", o->missing_hint ? o->missing_hint : "");
    }
    su_buf_free(&a);
    su_buf_free(&b);
    su_buf_free(&missing);
    return nmissing == 0 && bad == 0;
}

static bool is_param(const ir_expr *func, const char *name)
{
    for (int k = 0; k < func->u.func.nparams; k++)
        if (!strcmp(func->u.func.params[k]->u.var.name, name))
            return true;
    return false;
}

/* Inputs that name no parameter: an error for a strict one (a typo in
 * --input NAME=...), else one warning per file listing its extra arrays. */
static bool check_unused(const ir_expr *func, const char *fname, const rt_inputs *in, FILE *errs)
{
    bool ok = true;
    for (size_t i = 0; in && i < in->items.len; i++) {
        const input *it = &in->items.data[i];
        if (is_param(func, it->name))
            continue;
        if (it->strict) {
            if (errs)
                fprintf(errs, "error: input '%s' (%s) names no parameter of @%s\n", it->name, it->origin, fname);
            ok = false;
            continue;
        }
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !in->items.data[j].strict && !is_param(func, in->items.data[j].name) &&
                   !strcmp(in->items.data[j].origin, it->origin);
        if (seen)
            continue;
        su_buf names = {0};
        int count = 0;
        for (size_t j = i; j < in->items.len; j++) {
            const input *x = &in->items.data[j];
            if (x->strict || is_param(func, x->name) || strcmp(x->origin, it->origin))
                continue;
            if (count++ < 8)
                su_buf_printf(&names, "%s%s", count > 1 ? ", " : "", x->name);
        }
        if (errs)
            fprintf(errs, "warning: %s: %d array%s name%s no parameter of @%s (ignored): %s%s\n", it->origin, count,
                    count == 1 ? "" : "s", count == 1 ? "s" : "", fname, su_buf_str(&names), count > 8 ? ", ..." : "");
        su_buf_free(&names);
    }
    return ok;
}

rt_result *rt_run(const rt_module *m, const rt_inputs *in, const rt_run_options *opts, FILE *errs)
{
    rt_run_options none = {0};
    const rt_run_options *o = opts ? opts : &none;
    const char *target = o->target ? o->target : "interp";
    const char *fname = o->function ? o->function : "main";
    if (strcmp(target, "interp") != 0) {
        if (errs)
            fprintf(errs, "error: unknown target '%s': models run on 'interp' (the reference interpreter) today\n",
                    target);
        return NULL;
    }
    const ir_global_def *g = ir_module_find(m->ir, fname);
    if (!g) {
        if (errs)
            fprintf(errs, "error: %s has no function @%s\n", m->ir->source.name, fname);
        return NULL;
    }
    const ir_expr *func = g->func;
    int n = func->u.func.nparams;
    ir_value **args = su_calloc((size_t)(n ? n : 1), sizeof *args);
    rt_result *r = NULL;
    bool unused_ok = check_unused(func, fname, in, errs);
    if (bind_params(func, fname, in, o, args, errs) && unused_ok) {
        su_diags d = {0};
        ir_interp *ip = ir_interp_new(m->ir, NULL);
        job j = {ip, fname, n, args, NULL, &d, false, 0};
        run_on_big_stack(&j);
        if (j.ok) {
            r = su_calloc(1, sizeof *r);
            r->tuple = j.out->kind == IR_VAL_TUPLE;
            r->seconds = j.seconds;
            su_buf why = {0};
            if (!collect(r, j.out, "", &why)) {
                if (errs)
                    fprintf(errs, "error: @%s: %s\n", fname, su_buf_str(&why));
                rt_result_free(r);
                r = NULL;
            }
            su_buf_free(&why);
        } else if (errs) {
            su_diags_print(errs, &d);
        }
        ir_value_release(j.out);
        su_diags_free(&d);
        ir_interp_free(ip);
    }
    for (int i = 0; i < n; i++)
        ir_value_release(args[i]);
    free(args);
    return r;
}
