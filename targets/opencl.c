/* opencl.c — OpenCL through the ICD loader: this host's platforms and
 * devices, a device's limits (what an opencl target describes), programs
 * built from generated OpenCL C with clBuildProgram (a failed build hands
 * back its log), running one kernel over host buffers, and timing a
 * function's launches over buffers bound once (measurement). A build without
 * OpenCL (configure found no ocl-icd-opencl-dev / opencl-headers) keeps
 * these entry points and refuses every request with that reason, so
 * `--target opencl` says what is missing instead of failing to link. */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "targets/targets.h"

#if HAVE_OPENCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

bool tg_cl_built(void)
{
    return true;
}

/* PoCL starts LLVM, which gives the calling thread an alternate signal
 * stack of its own (at the first clGetDeviceIDs); when that thread ends,
 * ASan (and anything else that set one) then frees a stack it did not make
 * and aborts. Every entry point below keeps the thread's own stack. */
static void altstack_save(stack_t *s)
{
    if (sigaltstack(NULL, s) != 0)
        s->ss_flags = SS_DISABLE;
}

static void altstack_restore(const stack_t *s)
{
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp != s->ss_sp) {
        stack_t back = *s;
        back.ss_flags &= SS_DISABLE;
        sigaltstack(&back, NULL);
    }
}

/* The platforms (at most 16) and one platform's devices (at most 16). */
static cl_uint platforms(cl_platform_id *out)
{
    cl_uint n = 0;
    if (clGetPlatformIDs(16, out, &n) != CL_SUCCESS)
        return 0;
    return n > 16 ? 16 : n;
}

static cl_uint devices(cl_platform_id p, cl_device_id *out)
{
    cl_uint n = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 16, out, &n) != CL_SUCCESS)
        return 0;
    return n > 16 ? 16 : n;
}

/* A string of the device, cut to n bytes (clGetDeviceInfo refuses a buffer
 * shorter than the whole string). */
static void str_info(cl_device_id d, cl_device_info what, char *out, size_t n)
{
    char whole[2048];
    if (clGetDeviceInfo(d, what, sizeof whole, whole, NULL) != CL_SUCCESS)
        whole[0] = 0;
    whole[sizeof whole - 1] = 0;
    snprintf(out, n, "%s", whole);
}

static cl_ulong ulong_info(cl_device_id d, cl_device_info what)
{
    cl_ulong v = 0;
    return clGetDeviceInfo(d, what, sizeof v, &v, NULL) == CL_SUCCESS ? v : 0;
}

static cl_uint uint_info(cl_device_id d, cl_device_info what)
{
    cl_uint v = 0;
    return clGetDeviceInfo(d, what, sizeof v, &v, NULL) == CL_SUCCESS ? v : 0;
}

static void describe(cl_platform_id p, cl_device_id d, tg_cl_device *o)
{
    if (clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof o->platform_name, o->platform_name, NULL) != CL_SUCCESS)
        o->platform_name[0] = 0;
    o->platform_name[sizeof o->platform_name - 1] = 0;
    str_info(d, CL_DEVICE_NAME, o->name, sizeof o->name);
    str_info(d, CL_DEVICE_VENDOR, o->vendor, sizeof o->vendor);
    str_info(d, CL_DRIVER_VERSION, o->driver, sizeof o->driver);
    str_info(d, CL_DEVICE_VERSION, o->version, sizeof o->version);
    cl_device_type type = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL) != CL_SUCCESS)
        type = 0;
    snprintf(o->type, sizeof o->type, "%s",
             type & CL_DEVICE_TYPE_GPU ? "gpu" : type & CL_DEVICE_TYPE_CPU ? "cpu"
             : type & CL_DEVICE_TYPE_ACCELERATOR ? "accelerator" : "other");
    o->compute_units = (int)uint_info(d, CL_DEVICE_MAX_COMPUTE_UNITS);
    size_t wg = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL) != CL_SUCCESS)
        wg = 1;
    o->max_wg = (int64_t)wg;
    o->wg_dims = (int)uint_info(d, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
    size_t items[16] = {0};
    if (clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof items, items, NULL) != CL_SUCCESS)
        items[0] = wg;
    for (int i = 0; i < 3; i++)
        o->max_items[i] = i < o->wg_dims ? (int64_t)items[i] : 1;
    o->local_mem = (int64_t)ulong_info(d, CL_DEVICE_LOCAL_MEM_SIZE);
    o->global_mem = (int64_t)ulong_info(d, CL_DEVICE_GLOBAL_MEM_SIZE);
    o->global_cache = (int64_t)ulong_info(d, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
    o->vec_float = (int)uint_info(d, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT);
    o->fp64 = ulong_info(d, CL_DEVICE_DOUBLE_FP_CONFIG) != 0;
}

/* The ids of device `device` of platform `platform`; false with *why. */
static bool find(int platform, int device, cl_platform_id *pp, cl_device_id *dp, const char **why)
{
    cl_platform_id ps[16];
    cl_device_id ds[16];
    cl_uint np = platforms(ps);
    if (!np)
        return *why = "this host has no OpenCL platform (install an ICD, such as pocl-opencl-icd)", false;
    if (platform < 0 || (cl_uint)platform >= np)
        return *why = "no such OpenCL platform on this host (relay-tune targets lists them)", false;
    cl_uint nd = devices(ps[platform], ds);
    if (device < 0 || (cl_uint)device >= nd)
        return *why = "no such device on this OpenCL platform (relay-tune targets lists them)", false;
    *pp = ps[platform];
    *dp = ds[device];
    return true;
}

static bool cl_query_on(int platform, int device, tg_cl_device *out, const char **why)
{
    memset(out, 0, sizeof *out);
    cl_platform_id p;
    cl_device_id d;
    if (!find(platform, device, &p, &d, why))
        return false;
    out->platform = platform;
    out->device = device;
    describe(p, d, out);
    return true;
}

static int cl_list_on(su_buf *b)
{
    cl_platform_id ps[16];
    cl_uint np = platforms(ps);
    int count = 0;
    if (!np)
        su_buf_puts(b, "OpenCL: no platform on this host (install an ICD, such as pocl-opencl-icd)\n");
    for (cl_uint i = 0; i < np; i++) {
        cl_device_id ds[16];
        cl_uint nd = devices(ps[i], ds);
        for (cl_uint j = 0; j < nd; j++) {
            tg_cl_device o = {0};
            describe(ps[i], ds[j], &o);
            su_buf_printf(b, "opencl -platform=%u -device=%u: %s, %s (%s)\n", i, j, o.name, o.platform_name, o.type);
            count++;
        }
    }
    return count;
}

struct tg_cl_prog {
    cl_context ctx;
    cl_command_queue q;
    cl_program prog;
    cl_device_id dev;
};

void tg_cl_free(tg_cl_prog *p)
{
    if (!p)
        return;
    if (p->prog)
        clReleaseProgram(p->prog);
    if (p->q)
        clReleaseCommandQueue(p->q);
    if (p->ctx)
        clReleaseContext(p->ctx);
    free(p);
}

static char *msg(const char *what, cl_int err)
{
    su_buf b = {0};
    su_buf_printf(&b, "%s (OpenCL error %d)", what, (int)err);
    return su_buf_take(&b);
}

static tg_cl_prog *cl_build_on(const tg_target *t, const char *src, char **log)
{
    *log = NULL;
    const char *why;
    cl_platform_id p;
    cl_device_id d;
    if (t->kind != TG_OPENCL || !find(t->cl.platform, t->cl.device, &p, &d, &why)) {
        *log = su_strdup(t->kind != TG_OPENCL ? "not an opencl target" : why);
        return NULL;
    }
    tg_cl_prog *g = su_calloc(1, sizeof *g);
    g->dev = d;
    cl_int err;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)p, 0};
    g->ctx = clCreateContext(props, 1, &d, NULL, NULL, &err);
    if (!g->ctx) {
        *log = msg("cannot create an OpenCL context", err);
        goto fail;
    }
    /* profiling on: measurement times launches by their events */
    g->q = clCreateCommandQueue(g->ctx, d, CL_QUEUE_PROFILING_ENABLE, &err);
    if (!g->q) {
        *log = msg("cannot create an OpenCL command queue", err);
        goto fail;
    }
    g->prog = clCreateProgramWithSource(g->ctx, 1, &src, NULL, &err);
    if (!g->prog) {
        *log = msg("cannot create an OpenCL program", err);
        goto fail;
    }
    err = clBuildProgram(g->prog, 1, &d, "-cl-std=CL1.2", NULL, NULL);
    if (err != CL_SUCCESS) {
        size_t n = 0;
        clGetProgramBuildInfo(g->prog, d, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
        su_buf b = {0};
        su_buf_printf(&b, "clBuildProgram failed (OpenCL error %d):\n", (int)err);
        char *text = su_malloc(n + 1);
        if (clGetProgramBuildInfo(g->prog, d, CL_PROGRAM_BUILD_LOG, n, text, NULL) != CL_SUCCESS)
            n = 0;
        text[n] = 0;
        su_buf_puts(&b, text);
        free(text);
        *log = su_buf_take(&b);
        goto fail;
    }
    return g;
fail:
    tg_cl_free(g);
    return NULL;
}

/* Enqueues step s of a launch (its kernel's arguments are set); the event
 * is kept in *ev when profiling is wanted. */
static cl_int cl_enqueue(tg_cl_prog *p, cl_kernel k, const tg_cl_step *s, cl_event *ev)
{
    size_t global[3], local[3];
    bool any_local = false;
    for (int d = 0; d < s->dims; d++) {
        global[d] = (size_t)s->global[d];
        local[d] = (size_t)s->local[d];
        any_local |= s->local[d] > 0;
    }
    return clEnqueueNDRangeKernel(p->q, k, (cl_uint)s->dims, NULL, global, any_local ? local : NULL, 0, NULL, ev);
}

/* Nanoseconds between an event's start and end, 0 when unknown. */
static int64_t event_ns(cl_event e)
{
    cl_ulong a = 0, b = 0;
    if (clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof a, &a, NULL) != CL_SUCCESS ||
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof b, &b, NULL) != CL_SUCCESS || b < a)
        return 0;
    return (int64_t)(b - a);
}

static int cl_run_on(tg_cl_prog *p, const tg_cl_launch *l, int nargs, void *const *args, const int64_t *bytes,
                     const bool *out, int64_t *device_ns, char **log)
{
    *log = NULL;
    cl_int err;
    cl_mem *mem = su_calloc((size_t)nargs + 1, sizeof *mem);
    cl_kernel ks[TG_CL_MAX_STEPS] = {0};
    cl_event evs[TG_CL_MAX_STEPS] = {0};
    int rc = -1;
    for (int i = 0; i <= nargs; i++) {
        size_t n = (size_t)(i < nargs ? bytes[i] : l->scratch);
        bool in = i < nargs && !out[i];
        /* OpenCL has no empty buffers */
        mem[i] = clCreateBuffer(p->ctx, CL_MEM_READ_WRITE | (in && n ? CL_MEM_COPY_HOST_PTR : 0), n ? n : 4,
                                in && n ? args[i] : NULL, &err);
        if (!mem[i]) {
            *log = msg("cannot create a device buffer", err);
            goto done;
        }
    }
    for (int s = 0; s < l->n; s++) {
        if (!(ks[s] = clCreateKernel(p->prog, l->step[s].name, &err))) {
            *log = msg("no such kernel in the program", err);
            goto done;
        }
        for (int i = 0; i <= nargs; i++)
            if ((err = clSetKernelArg(ks[s], (cl_uint)i, sizeof mem[i], &mem[i])) != CL_SUCCESS) {
                *log = msg("cannot set a kernel argument", err);
                goto done;
            }
        if ((err = cl_enqueue(p, ks[s], &l->step[s], device_ns ? &evs[s] : NULL)) != CL_SUCCESS) {
            *log = msg("cannot launch the kernel", err);
            goto done;
        }
    }
    for (int i = 0; i < nargs; i++)
        if (out[i] && bytes[i] &&
            (err = clEnqueueReadBuffer(p->q, mem[i], CL_TRUE, 0, (size_t)bytes[i], args[i], 0, NULL, NULL)) !=
                CL_SUCCESS) {
            *log = msg("cannot read an output back", err);
            goto done;
        }
    if ((err = clFinish(p->q)) != CL_SUCCESS) {
        *log = msg("the kernel failed", err);
        goto done;
    }
    if (device_ns) {
        *device_ns = 0;
        for (int s = 0; s < l->n; s++)
            *device_ns += event_ns(evs[s]);
    }
    rc = 0;
done:
    for (int s = 0; s < TG_CL_MAX_STEPS; s++) {
        if (evs[s])
            clReleaseEvent(evs[s]);
        if (ks[s])
            clReleaseKernel(ks[s]);
    }
    for (int i = 0; i <= nargs; i++)
        if (mem[i])
            clReleaseMemObject(mem[i]);
    free(mem);
    return rc;
}

bool tg_cl_query(int platform, int device, tg_cl_device *out, const char **why)
{
    stack_t own;
    altstack_save(&own);
    bool r = cl_query_on(platform, device, out, why);
    altstack_restore(&own);
    return r;
}

int tg_cl_list(su_buf *b)
{
    stack_t own;
    altstack_save(&own);
    int r = cl_list_on(b);
    altstack_restore(&own);
    return r;
}

tg_cl_prog *tg_cl_build(const tg_target *t, const char *src, char **log)
{
    stack_t own;
    altstack_save(&own);
    tg_cl_prog *r = cl_build_on(t, src, log);
    altstack_restore(&own);
    return r;
}

int tg_cl_run(tg_cl_prog *p, const tg_cl_launch *l, int nargs, void *const *args, const int64_t *bytes,
              const bool *out, int64_t *device_ns, char **log)
{
    stack_t own;
    altstack_save(&own);
    int r = cl_run_on(p, l, nargs, args, bytes, out, device_ns, log);
    altstack_restore(&own);
    return r;
}

/* ---- bound buffers and timed launches (measurement) ---------------------
 * tg_cl_run copies every buffer in and out per call, which is right for one
 * run and wrong for timing: measurement binds the buffers once, runs a
 * function's launches many times over them and sums the launches' device
 * time from their profiling events, then reads the outputs back. */

struct tg_cl_bound {
    tg_cl_prog *p;
    int n;
    cl_mem *mem;            /* the buffers, n of them */
    cl_mem scratch;         /* grown to the largest launch's need */
    int64_t scratch_bytes;
};

/* Events of at most this many launches are held at once. */
enum { EVENT_CHUNK = 256 };

static tg_cl_bound *cl_bind_on(tg_cl_prog *p, int n, const int64_t *bytes, void *const *init, char **log)
{
    *log = NULL;
    tg_cl_bound *b = su_calloc(1, sizeof *b);
    b->p = p;
    b->n = n;
    b->mem = su_calloc((size_t)n + 1, sizeof *b->mem);
    for (int i = 0; i < n; i++) {
        cl_int err;
        size_t sz = bytes[i] > 0 ? (size_t)bytes[i] : 4; /* OpenCL has no empty buffers */
        bool copy = init && init[i] && bytes[i] > 0;
        b->mem[i] = clCreateBuffer(p->ctx, CL_MEM_READ_WRITE | (copy ? CL_MEM_COPY_HOST_PTR : 0), sz,
                                   copy ? init[i] : NULL, &err);
        if (!b->mem[i]) {
            *log = msg("cannot create a device buffer", err);
            tg_cl_unbind(b);
            return NULL;
        }
    }
    return b;
}

/* Sets kernel k's arguments: buffers idx[0..nidx) of b, then the scratch. */
static cl_int set_args(tg_cl_bound *b, cl_kernel k, int nidx, const int *idx)
{
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < nidx && err == CL_SUCCESS; i++)
        err = clSetKernelArg(k, (cl_uint)i, sizeof(cl_mem), &b->mem[idx[i]]);
    return err == CL_SUCCESS ? clSetKernelArg(k, (cl_uint)nidx, sizeof(cl_mem), &b->scratch) : err;
}

static int cl_time_on(tg_cl_bound *b, const tg_cl_launch *l, int nidx, const int *idx, int runs, int64_t *device_ns,
                      char **log)
{
    *log = NULL;
    *device_ns = 0;
    cl_int err;
    for (int i = 0; i < nidx; i++)
        if (idx[i] < 0 || idx[i] >= b->n)
            return *log = su_strdup("a launch names a buffer that is not bound"), -1;
    if (!b->scratch || l->scratch > b->scratch_bytes) {
        if (b->scratch)
            clReleaseMemObject(b->scratch);
        b->scratch_bytes = l->scratch > 4 ? l->scratch : 4;
        if (!(b->scratch = clCreateBuffer(b->p->ctx, CL_MEM_READ_WRITE, (size_t)b->scratch_bytes, NULL, &err)))
            return *log = msg("cannot create the scratch buffer", err), -1;
    }
    cl_kernel ks[TG_CL_MAX_STEPS] = {0};
    cl_event *evs = su_calloc((size_t)EVENT_CHUNK * TG_CL_MAX_STEPS, sizeof *evs);
    int rc = -1;
    for (int s = 0; s < l->n; s++) {
        if (!(ks[s] = clCreateKernel(b->p->prog, l->step[s].name, &err))) {
            *log = msg("no such kernel in the program", err);
            goto done;
        }
        if ((err = set_args(b, ks[s], nidx, idx)) != CL_SUCCESS) {
            *log = msg("cannot set a kernel argument", err);
            goto done;
        }
    }
    for (int done_runs = 0; done_runs < runs;) {
        int chunk = runs - done_runs < EVENT_CHUNK ? runs - done_runs : EVENT_CHUNK, ne = 0;
        for (int r = 0; r < chunk; r++)
            for (int s = 0; s < l->n; s++)
                if ((err = cl_enqueue(b->p, ks[s], &l->step[s], &evs[ne++])) != CL_SUCCESS) {
                    evs[--ne] = NULL;
                    *log = msg("cannot launch the kernel", err);
                    goto done;
                }
        if ((err = clFinish(b->p->q)) != CL_SUCCESS) {
            *log = msg("the kernel failed", err);
            goto done;
        }
        for (int e = 0; e < ne; e++) {
            *device_ns += event_ns(evs[e]);
            clReleaseEvent(evs[e]);
            evs[e] = NULL;
        }
        done_runs += chunk;
    }
    rc = 0;
done:
    for (int e = 0; e < EVENT_CHUNK * TG_CL_MAX_STEPS; e++)
        if (evs[e])
            clReleaseEvent(evs[e]);
    free(evs);
    for (int s = 0; s < TG_CL_MAX_STEPS; s++)
        if (ks[s])
            clReleaseKernel(ks[s]);
    return rc;
}

static int cl_read_on(tg_cl_bound *b, int i, void *dst, int64_t bytes, char **log)
{
    *log = NULL;
    if (i < 0 || i >= b->n)
        return *log = su_strdup("no such bound buffer"), -1;
    cl_int err = bytes > 0 ? clEnqueueReadBuffer(b->p->q, b->mem[i], CL_TRUE, 0, (size_t)bytes, dst, 0, NULL, NULL)
                           : CL_SUCCESS;
    return err == CL_SUCCESS ? 0 : (*log = msg("cannot read a buffer back", err), -1);
}

tg_cl_bound *tg_cl_bind(tg_cl_prog *p, int n, const int64_t *bytes, void *const *init, char **log)
{
    stack_t own;
    altstack_save(&own);
    tg_cl_bound *r = cl_bind_on(p, n, bytes, init, log);
    altstack_restore(&own);
    return r;
}

int tg_cl_time(tg_cl_bound *b, const tg_cl_launch *l, int nidx, const int *idx, int runs, int64_t *device_ns,
               char **log)
{
    stack_t own;
    altstack_save(&own);
    int r = cl_time_on(b, l, nidx, idx, runs, device_ns, log);
    altstack_restore(&own);
    return r;
}

int tg_cl_read(tg_cl_bound *b, int i, void *dst, int64_t bytes, char **log)
{
    stack_t own;
    altstack_save(&own);
    int r = cl_read_on(b, i, dst, bytes, log);
    altstack_restore(&own);
    return r;
}

void tg_cl_unbind(tg_cl_bound *b)
{
    if (!b)
        return;
    for (int i = 0; i < b->n; i++)
        if (b->mem[i])
            clReleaseMemObject(b->mem[i]);
    if (b->scratch)
        clReleaseMemObject(b->scratch);
    free(b->mem);
    free(b);
}

#else /* !HAVE_OPENCL */

static const char no_opencl[] = "this relay-tune was built without OpenCL (configure found no "
                                "ocl-icd-opencl-dev / opencl-headers; install them and reconfigure)";

bool tg_cl_built(void)
{
    return false;
}

bool tg_cl_query(int platform, int device, tg_cl_device *out, const char **why)
{
    (void)platform;
    (void)device;
    memset(out, 0, sizeof *out);
    *why = no_opencl;
    return false;
}

int tg_cl_list(su_buf *b)
{
    su_buf_printf(b, "OpenCL: %s\n", no_opencl);
    return 0;
}

struct tg_cl_prog {
    int unused;
};

tg_cl_prog *tg_cl_build(const tg_target *t, const char *src, char **log)
{
    (void)t;
    (void)src;
    *log = su_strdup(no_opencl);
    return NULL;
}

int tg_cl_run(tg_cl_prog *p, const tg_cl_launch *l, int nargs, void *const *args, const int64_t *bytes,
              const bool *out, int64_t *device_ns, char **log)
{
    (void)p, (void)l, (void)nargs, (void)args, (void)bytes, (void)out, (void)device_ns;
    *log = su_strdup(no_opencl);
    return -1;
}

void tg_cl_free(tg_cl_prog *p)
{
    free(p);
}

struct tg_cl_bound {
    int unused;
};

tg_cl_bound *tg_cl_bind(tg_cl_prog *p, int n, const int64_t *bytes, void *const *init, char **log)
{
    (void)p, (void)n, (void)bytes, (void)init;
    *log = su_strdup(no_opencl);
    return NULL;
}

int tg_cl_time(tg_cl_bound *b, const tg_cl_launch *l, int nidx, const int *idx, int runs, int64_t *device_ns,
               char **log)
{
    (void)b, (void)l, (void)nidx, (void)idx, (void)runs;
    *device_ns = 0;
    *log = su_strdup(no_opencl);
    return -1;
}

int tg_cl_read(tg_cl_bound *b, int i, void *dst, int64_t bytes, char **log)
{
    (void)b, (void)i, (void)dst, (void)bytes;
    *log = su_strdup(no_opencl);
    return -1;
}

void tg_cl_unbind(tg_cl_bound *b)
{
    free(b);
}

#endif
