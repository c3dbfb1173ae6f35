/* model.c — the ahead-of-time compiled model (docs/compiled-model.md).
 * @main of an optimized module is a graph of calls of primitive functions
 * over its parameters (the model's inputs) and constants (its weights).
 * Each distinct primitive function (by workload key and by which of its
 * arguments are constants) is built once (schedule/build.c) with its
 * template — under the tuned config the caller resolved for its workload,
 * else the template's defaults — the packing of its constant arguments
 * hoisted into prologues. The prologues are built and run here, so the
 * object holds packed weights. Nothing here reads a database or config
 * text: configs arrive as values.
 * Intermediates get offsets in one arena from the liveness-based plan
 * (memplan.c). The result is C: kernel units (kernel entries hidden) and
 * one graph unit with the ABI of include/relaytune_model.h, the calls in
 * topological order and the weights, which an assembler `.incbin` pulls
 * from a file in the cache named by its hash. Generated identifiers come
 * from counters (k<N>); names from the model (input names) appear only as
 * escaped string literals.
 * An opencl target shares all of this up to the units: its object is one
 * host C unit (cl_unit) that carries the kernels as OpenCL C and keeps
 * weights and intermediates in device buffers (docs/opencl.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "targets/targets.h"

enum { B_INPUT, B_CONST, B_TEMP, B_OUTPUT };

/* A buffer of the graph. */
typedef struct mbuf {
    int kind;
    int index;              /* input / output number, or the temp's plan item */
    ir_dtype dtype;
    int ndim;
    const int64_t *shape;
    int64_t bytes;
    const void *data;       /* CONST: the values (the tensor's or a packed copy) */
    bool stored;            /* CONST: read directly by some kernel (goes into the blob) */
    int64_t offset;         /* CONST: in the blob */
    int first, last;        /* TEMP: the steps that write and last read it */
    int src_const, src_kernel, src_pro; /* packed CONST: what it was packed from */
} mbuf;

typedef SU_VEC(int) int_vec;
typedef SU_VEC(void *) ptr_vec;

/* A distinct kernel. */
typedef struct mkernel {
    char *key;              /* workload key + constness mask */
    const ir_expr *func;
    sch_kernel b;           /* the built kernel (its schedule owns the LoopIR) */
    const sch_lowered *l;   /* b.l */
    int np;                 /* kernel parameters (a tuple parameter's fields count one each) */
    bool *reads;            /* per kernel parameter: the kernel body loads from it */
} mkernel;

/* A call of a kernel: buffers of its arguments in the kernel's order. */
typedef struct mcall {
    int kernel;
    int_vec args;
} mcall;

/* What an expression evaluates to: its buffers, tuples flattened. */
typedef struct mval {
    const ir_expr *e;
    int_vec bufs;
} mval;

typedef struct mctx {
    const tg_target *t;
    tg_target host;         /* what builds the C of the model (for an opencl target: this host's cpu) */
    tg_target pack;         /* what builds the prologues, which run here: host, or this host's cpu when
                             * the host cannot run it (a cpu model compiled for a wider ISA) */
    bool cl;                /* an opencl target: kernels in OpenCL C, buffers on the device */
    const tg_model_opts *o;
    tg_model_info *info;
    const ir_expr *main;
    SU_VEC(mbuf) bufs;
    SU_VEC(mkernel) kernels;
    SU_VEC(mcall) calls;
    SU_VEC(mval) memo;
    int_vec outs;           /* the buffers of @main's result, in order */
    int *copy_from;         /* per output: the buffer copied into it after the calls, or -1
                               (a kernel's result written in place) */
    const mbuf **inb, **outb; /* the buffers of the inputs and outputs, by number */
    int nin, nout;
    ptr_vec owned;          /* the packed weights' memory */
    int64_t wbytes;         /* bytes of the weights' blob */
    su_buf blob_path;       /* the file that holds it (in the cache) */
    su_buf *units;          /* the translation units: the graph's, then the kernels' */
    int nu;
    int jobs;               /* compilers at once */
    su_buf err;
    bool failed;
} mctx;

static void fail(mctx *c, const char *fmt, const char *arg)
{
    if (!c->failed)
        su_buf_printf(&c->err, fmt, arg);
    c->failed = true;
}

static int64_t tensor_bytes(ir_dtype dt, int ndim, const int64_t *shape)
{
    int64_t n = ir_dtype_bytes(dt);
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    return n;
}

/* A new buffer of the graph (not packed from anything). */
static int push_buf(mctx *c, int kind, ir_dtype dt, int ndim, const int64_t *shape, int64_t bytes)
{
    mbuf b = {0};
    b.kind = kind;
    b.dtype = dt;
    b.ndim = ndim;
    b.shape = shape;
    b.bytes = bytes;
    b.src_const = b.src_kernel = b.src_pro = -1;
    su_vec_push(&c->bufs, b);
    return (int)c->bufs.len - 1;
}

static int new_buf(mctx *c, int kind, const ir_type *ty)
{
    return push_buf(c, kind, ty->dtype, ty->ndim, ty->shape, tensor_bytes(ty->dtype, ty->ndim, ty->shape));
}

static int leaves(const ir_type *t)
{
    if (t->kind != IR_TY_TUPLE)
        return 1;
    int n = 0;
    for (int i = 0; i < t->nfields; i++)
        n += leaves(t->fields[i]);
    return n;
}

static mval *memo_find(mctx *c, const ir_expr *e)
{
    for (size_t i = 0; i < c->memo.len; i++)
        if (c->memo.data[i].e == e)
            return &c->memo.data[i];
    return NULL;
}

/* The tuned config of workload wk in o->configs, or NULL (the defaults). */
static const sch_config *config_of(const mctx *c, const char *wk)
{
    for (int i = 0; i < c->o->nconfigs; i++)
        if (!strcmp(c->o->configs[i].workload_key, wk))
            return &c->o->configs[i].cfg;
    return NULL;
}

/* Builds f with its tuned config (a config that does not apply: with the
 * defaults, after a note) and the packs of the constants in mask hoisted. */
static bool build_kernel(mctx *c, const ir_expr *f, const char *tmpl, const char *wk, const char *mask,
                         sch_kernel *k)
{
    int np = (int)strlen(mask);     /* kernel parameters: a tuple's fields count one each */
    bool *consts = su_calloc((size_t)np + 1, sizeof *consts);
    for (int i = 0; i < np; i++)
        consts[i] = mask[i] == 'c';
    const sch_config *cfg = tmpl ? config_of(c, wk) : NULL;
    sch_build_opts bo = {.template_name = tmpl, .hw = &c->t->hw, .cfg = cfg, .param_const = consts};
    bool ok = sch_build(f, &bo, k);
    if (!ok && cfg && k->failed == SCH_BUILD_TEMPLATE) {
        if (c->o->notes)
            fprintf(c->o->notes, "relay-tune: note: config of task %s does not apply; using the defaults\n", tmpl);
        sch_kernel_free(k);
        bo.cfg = NULL;
        ok = sch_build(f, &bo, k);
    } else if (ok && cfg) {
        c->info->ntuned++;
    }
    free(consts);
    if (!ok && k->failed == SCH_BUILD_CREATE) {
        su_buf msg = {0};
        su_buf_printf(&msg, "cannot schedule a primitive function (%s): %s", wk, k->why ? k->why : "?");
        fail(c, "%s", su_buf_str(&msg));
        su_buf_free(&msg);
    } else if (!ok && k->failed == SCH_BUILD_LOWER)
        fail(c, "cannot lower a primitive function: %s", k->why);
    else if (!ok)
        fail(c, "schedule template failed on %s", wk);
    return ok;
}

/* Kernel for primitive function f called with constant arguments where
 * mask says; built once per distinct (workload, mask). */
static int get_kernel(mctx *c, const ir_expr *f, const char *mask)
{
    const char *tmpl = NULL;
    char *wk = sch_workload_key(f, &tmpl, NULL);
    su_buf key = {0};
    su_buf_printf(&key, "%s|%s", mask, wk);
    for (size_t i = 0; i < c->kernels.len; i++)
        if (!strcmp(c->kernels.data[i].key, su_buf_str(&key))) {
            su_buf_free(&key);
            free(wk);
            return (int)i;
        }
    mkernel k = {0};
    bool ok = build_kernel(c, f, tmpl, wk, mask, &k.b);
    free(wk);
    if (!ok) {
        sch_kernel_free(&k.b);
        su_buf_free(&key);
        return -1;
    }
    k.key = su_buf_take(&key);
    k.func = f;
    k.l = k.b.l;
    k.np = (int)strlen(mask);
    k.reads = su_calloc((size_t)k.np + 1, sizeof *k.reads);
    su_vec_push(&c->kernels, k);
    return (int)c->kernels.len - 1;
}

static void eval(mctx *c, const ir_expr *e, int_vec *out);

/* A new buffer of the graph shaped as the kernel's buffer a. */
static int buffer_like(mctx *c, int kind, const sch_buffer *a)
{
    return push_buf(c, kind, a->dtype, a->ndim, a->shape, a->size * ir_dtype_bytes(a->dtype));
}

/* The weight prologue p of kernel k packs from constant src: one buffer
 * per (constant, kernel, prologue), filled at compile time. */
static int packed_weight(mctx *c, int k, int p, int src)
{
    for (size_t j = 0; j < c->bufs.len; j++)
        if (c->bufs.data[j].src_const == src && c->bufs.data[j].src_kernel == k && c->bufs.data[j].src_pro == p)
            return (int)j;
    int id = buffer_like(c, B_CONST, c->kernels.data[k].l->prologues[p].packed);
    mbuf *b = &c->bufs.data[id];
    b->stored = true;
    b->src_const = src;
    b->src_kernel = k;
    b->src_pro = p;
    c->info->npacked++;
    return id;
}

/* A call of a primitive function: a step of the graph. */
static void eval_call(mctx *c, const ir_expr *e, int_vec *out)
{
    const ir_expr *f = e->u.call.fn;
    if (!f || f->kind != IR_FUNC || !ir_func_is_primitive(f)) {
        fail(c, "@main calls %s; a compiled model calls only fused (primitive) functions: optimize it first",
             f && f->kind == IR_OP ? "an operator directly" : "a function that is not primitive");
        return;
    }
    /* a tuple argument passes its fields, one kernel argument each (as the
     * schedule flattens a tuple parameter) */
    int_vec args = {0};
    for (int i = 0; i < e->u.call.nargs && !c->failed; i++) {
        int_vec a = {0};
        eval(c, e->u.call.args[i], &a);
        for (size_t j = 0; !c->failed && j < a.len; j++)
            su_vec_push(&args, a.data[j]);
        su_vec_free(&a);
    }
    int np = (int)args.len;
    char *mask = su_calloc((size_t)np + 1, 1);
    for (int i = 0; i < np && !c->failed; i++)
        mask[i] = c->bufs.data[args.data[i]].kind == B_CONST ? 'c' : 'v';
    int k = c->failed ? -1 : get_kernel(c, f, mask);
    free(mask);
    if (k < 0) {
        su_vec_free(&args);
        return;
    }
    mkernel *kn = &c->kernels.data[k];
    int step = (int)c->calls.len;
    mcall call = {k, {0}};
    for (int i = 0; i < np; i++) {
        int b = args.data[i];
        su_vec_push(&call.args, b);
        if (c->bufs.data[b].kind == B_TEMP)
            c->bufs.data[b].last = step;
    }
    /* packed weights: one per (constant, kernel, prologue) */
    for (int p = 0; p < kn->l->nprologues; p++)
        su_vec_push(&call.args, packed_weight(c, k, p, args.data[kn->l->prologues[p].param]));
    const sch_func *kf = kn->l->kernel;
    for (int i = 0; i < kf->nargs; i++) {
        if (kf->args[i]->scope != SCH_SCOPE_OUTPUT)
            continue;
        int id = buffer_like(c, B_TEMP, kf->args[i]);
        c->bufs.data[id].first = c->bufs.data[id].last = step;
        su_vec_push(&call.args, id);
        su_vec_push(out, id);
    }
    su_vec_push(&c->calls, call);
    su_vec_free(&args);
}

static void eval(mctx *c, const ir_expr *e, int_vec *out)
{
    if (c->failed)
        return;
    mval *m = memo_find(c, e);
    if (m) {
        for (size_t i = 0; i < m->bufs.len; i++)
            su_vec_push(out, m->bufs.data[i]);
        return;
    }
    int_vec v = {0};
    switch (e->kind) {
    case IR_VAR: {
        const ir_expr *fn = c->main;
        for (int i = 0; i < fn->u.func.nparams; i++)
            if (fn->u.func.params[i] == e) {
                const ir_type *ty = e->type ? e->type : e->u.var.annot;
                if (ty->kind == IR_TY_TUPLE) {
                    fail(c, "parameter %%%s is a tuple (unsupported in a compiled model)", e->u.var.name);
                    return;
                }
                int b = new_buf(c, B_INPUT, ty);
                c->bufs.data[b].index = i;
                su_vec_push(&v, b);
            }
        if (!v.len) {
            fail(c, "variable %%%s is not bound", e->u.var.name);
            return;
        }
        break;
    }
    case IR_CONST: {
        const ir_tensor *t = e->u.constant.value;
        int b = new_buf(c, B_CONST, e->type);
        c->bufs.data[b].data = t->data;
        su_vec_push(&v, b);
        break;
    }
    case IR_CALL: eval_call(c, e, &v); break;
    case IR_TUPLE:
        for (int i = 0; i < e->u.tuple.n; i++)
            eval(c, e->u.tuple.fields[i], &v);
        break;
    case IR_PROJ: {
        int_vec all = {0};
        eval(c, e->u.proj.tuple, &all);
        const ir_type *tt = e->u.proj.tuple->type;
        if (c->failed || !tt || tt->kind != IR_TY_TUPLE) {
            fail(c, "%s", "a projection of something that is not a tuple");
            su_vec_free(&all);
            return;
        }
        int at = 0;
        for (int i = 0; i < e->u.proj.index; i++)
            at += leaves(tt->fields[i]);
        int n = leaves(tt->fields[e->u.proj.index]);
        for (int i = 0; i < n && at + i < (int)all.len; i++)
            su_vec_push(&v, all.data[at + i]);
        su_vec_free(&all);
        break;
    }
    case IR_LET: {
        int_vec val = {0};
        eval(c, e->u.let.value, &val);
        mval bind = {e->u.let.var, val};
        su_vec_push(&c->memo, bind);
        eval(c, e->u.let.body, &v);
        break;
    }
    default: fail(c, "a compiled model cannot hold an expression of kind %s", ir_expr_kind_name(e->kind)); return;
    }
    if (c->failed) {
        su_vec_free(&v);
        return;
    }
    for (size_t i = 0; i < v.len; i++)
        su_vec_push(out, v.data[i]);
    mval mv = {e, v};
    su_vec_push(&c->memo, mv);
}

/* ---- emitting C ----------------------------------------------------------- */

/* s as a C string literal: printable ASCII but quote and backslash as is,
 * everything else as an octal escape. */
static void c_string(su_buf *b, const char *s)
{
    su_buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\' && *p != '?')
            su_buf_putc(b, (char)*p);
        else
            su_buf_printf(b, "\\%03o", *p);
    }
    su_buf_putc(b, '"');
}

static int64_t align64(int64_t v)
{
    return (v + 63) & ~(int64_t)63;
}

/* The tables of one side (inputs or outputs) of the ABI. */
static void emit_side(su_buf *g, const char *side, int n, const mbuf *const *bs, const char *const *names)
{
    su_buf_printf(g, "static const char *const %s_names[%d] = {", side, n + 1);
    for (int i = 0; i < n; i++) {
        c_string(g, names[i]);
        su_buf_puts(g, ", ");
    }
    su_buf_printf(g, "0};\nstatic const char *const %s_dtypes[%d] = {", side, n + 1);
    for (int i = 0; i < n; i++)
        su_buf_printf(g, "\"%s\", ", ir_dtype_name(bs[i]->dtype));
    su_buf_printf(g, "0};\nstatic const int %s_ndim[%d] = {", side, n + 1);
    for (int i = 0; i < n; i++)
        su_buf_printf(g, "%d, ", bs[i]->ndim);
    su_buf_printf(g, "0};\nstatic const size_t %s_bytes[%d] = {", side, n + 1);
    for (int i = 0; i < n; i++)
        su_buf_printf(g, "%lld, ", (long long)bs[i]->bytes);
    su_buf_puts(g, "0};\n");
    for (int i = 0; i < n; i++) {
        su_buf_printf(g, "static const int64_t %s_shape%d[%d] = {", side, i, bs[i]->ndim + 1);
        for (int d = 0; d < bs[i]->ndim; d++)
            su_buf_printf(g, "%lld, ", (long long)bs[i]->shape[d]);
        su_buf_puts(g, "0};\n");
    }
    su_buf_printf(g, "static const int64_t *const %s_shapes[%d] = {", side, n + 1);
    for (int i = 0; i < n; i++)
        su_buf_printf(g, "%s_shape%d, ", side, i);
    su_buf_puts(g, "0};\n");
}

/* The instance of a cpu model: its host buffers. */
static const char abi_struct[] =
    "struct rtm_model {\n"
    "    unsigned char *arena;\n"
    "    void *in[NIN + 1];\n"
    "    void *out[NOUT + 1];\n"
    "    double *prof;          /* rtm_profile's times, or NULL: not profiling */\n"
    "};\n";

/* The ABI's functions every back end shares: the tables' getters, the
 * host-side input and output buffers (m->in, m->out of either instance)
 * and rtm_create over the back end's rtm_setup and rtm_destroy. */
static const char abi_common[] =
    "static int rtm_setup(rtm_model *m);\n"
    "RTM_API void rtm_destroy(rtm_model *m);\n"
    "static void *rtm_alloc(size_t n)\n"
    "{\n"
    "    n = (n + 63) / 64 * 64;\n"
    "    void *p = aligned_alloc(64, n ? n : 64);\n"
    "    if (p)\n"
    "        memset(p, 0, n ? n : 64);\n"
    "    return p;\n"
    "}\n"
    "/* the host-side buffers of the inputs and outputs */\n"
    "static int rtm_host_alloc(rtm_model *m)\n"
    "{\n"
    "    int ok = 1;\n"
    "    for (int i = 0; i < NIN; i++)\n"
    "        ok &= (m->in[i] = rtm_alloc(in_bytes[i])) != 0;\n"
    "    for (int i = 0; i < NOUT; i++)\n"
    "        ok &= (m->out[i] = rtm_alloc(out_bytes[i])) != 0;\n"
    "    return ok;\n"
    "}\n"
    "static void rtm_host_free(rtm_model *m)\n"
    "{\n"
    "    for (int i = 0; i < NIN; i++)\n"
    "        free(m->in[i]);\n"
    "    for (int i = 0; i < NOUT; i++)\n"
    "        free(m->out[i]);\n"
    "}\n"
    "RTM_API int rtm_abi_version(void) { return 1; }\n"
    "RTM_API int rtm_num_inputs(void) { return NIN; }\n"
    "RTM_API int rtm_num_outputs(void) { return NOUT; }\n"
    "RTM_API size_t rtm_arena_bytes(void) { return ARENA; }\n"
    "RTM_API const char *rtm_input_name(int i) { return i >= 0 && i < NIN ? in_names[i] : 0; }\n"
    "RTM_API const char *rtm_input_dtype(int i) { return i >= 0 && i < NIN ? in_dtypes[i] : 0; }\n"
    "RTM_API int rtm_input_ndim(int i) { return i >= 0 && i < NIN ? in_ndim[i] : -1; }\n"
    "RTM_API const int64_t *rtm_input_shape(int i) { return i >= 0 && i < NIN ? in_shapes[i] : 0; }\n"
    "RTM_API size_t rtm_input_nbytes(int i) { return i >= 0 && i < NIN ? in_bytes[i] : 0; }\n"
    "RTM_API const char *rtm_output_name(int i) { return i >= 0 && i < NOUT ? out_names[i] : 0; }\n"
    "RTM_API const char *rtm_output_dtype(int i) { return i >= 0 && i < NOUT ? out_dtypes[i] : 0; }\n"
    "RTM_API int rtm_output_ndim(int i) { return i >= 0 && i < NOUT ? out_ndim[i] : -1; }\n"
    "RTM_API const int64_t *rtm_output_shape(int i) { return i >= 0 && i < NOUT ? out_shapes[i] : 0; }\n"
    "RTM_API size_t rtm_output_nbytes(int i) { return i >= 0 && i < NOUT ? out_bytes[i] : 0; }\n"
    "RTM_API int rtm_input_index(const char *name)\n"
    "{\n"
    "    for (int i = 0; name && i < NIN; i++)\n"
    "        if (!strcmp(in_names[i], name))\n"
    "            return i;\n"
    "    return -1;\n"
    "}\n"
    "RTM_API void *rtm_input(rtm_model *m, int i) { return m && i >= 0 && i < NIN ? m->in[i] : 0; }\n"
    "RTM_API const void *rtm_output(const rtm_model *m, int i) { return m && i >= 0 && i < NOUT ? m->out[i] : 0; }\n"
    "RTM_API int rtm_set_input(rtm_model *m, const char *name, const void *data, size_t nbytes)\n"
    "{\n"
    "    int i = rtm_input_index(name);\n"
    "    if (!m || i < 0 || nbytes != in_bytes[i] || (nbytes && !data))\n"
    "        return -1;\n"
    "    memcpy(m->in[i], data, nbytes);\n"
    "    return 0;\n"
    "}\n"
    "/* an instance: the host buffers, then what the back end's rtm_setup makes */\n"
    "RTM_API rtm_model *rtm_create(void)\n"
    "{\n"
    "    rtm_model *m = calloc(1, sizeof *m);\n"
    "    if (m && (!rtm_host_alloc(m) || !rtm_setup(m))) {\n"
    "        rtm_destroy(m);\n"
    "        return 0;\n"
    "    }\n"
    "    return m;\n"
    "}\n";

/* A cpu instance's life: its arena. */
static const char abi_functions[] =
    "RTM_API void rtm_destroy(rtm_model *m)\n"
    "{\n"
    "    if (!m)\n"
    "        return;\n"
    "    free(m->arena);\n"
    "    rtm_host_free(m);\n"
    "    free(m);\n"
    "}\n"
    "static int rtm_setup(rtm_model *m) { return (m->arena = rtm_alloc(ARENA)) != 0; }\n";

static bool write_blob(const char *path, const unsigned char *data, size_t n)
{
    if (access(path, R_OK) == 0)
        return true;
    su_buf tmp = {0};
    su_buf_printf(&tmp, "%s.%ld.tmp", path, (long)getpid());
    bool ok = su_write_file(su_buf_str(&tmp), data, n) && rename(su_buf_str(&tmp), path) == 0;
    if (!ok)
        unlink(su_buf_str(&tmp));
    su_buf_free(&tmp);
    return ok;
}

/* A path the assembler's .incbin can take inside a C string literal. */
static bool plain_path(const char *p)
{
    for (; *p; p++)
        if (*p < 0x20 || *p >= 0x7f || *p == '"' || *p == '\\' || *p == '?')
            return false;
    return true;
}

/* Builds and runs the prologues: fills the data of every packed constant. */
static bool pack_weights(mctx *c, ptr_vec *owned)
{
    su_buf src = {0};
    tg_c_prelude(&src);
    int any = 0;
    for (size_t k = 0; k < c->kernels.len; k++) {
        char name[32];
        snprintf(name, sizeof name, "k%zu", k);
        tg_kernel_c(&src, c->kernels.data[k].l, name, TG_KERNEL_PROLOGUES);
        any += c->kernels.data[k].l->nprologues;
    }
    if (!any) {
        su_buf_free(&src);
        return true;
    }
    tg_lib *lib = NULL;
    char *log = NULL;
    tg_err e = tg_build(su_buf_str(&src), &c->pack, &lib, &log);
    su_buf_free(&src);
    if (e) {
        fail(c, "cannot build the weight-packing prologues: %s", log ? log : tg_err_name(e));
        free(log);
        return false;
    }
    free(log);
    for (size_t i = 0; i < c->bufs.len; i++) {
        mbuf *b = &c->bufs.data[i];
        if (b->src_const < 0)
            continue;
        char name[48];
        snprintf(name, sizeof name, "k%d_p%d", b->src_kernel, b->src_pro);
        tg_entry_fn fn = (tg_entry_fn)tg_lib_sym(lib, name);
        void *dst = aligned_alloc(64, (size_t)align64(b->bytes ? b->bytes : 1));
        memset(dst, 0, (size_t)b->bytes);
        su_vec_push(owned, dst);
        void *args[2] = {(void *)c->bufs.data[b->src_const].data, dst};
        if (!fn || fn(args) != 0) {
            fail(c, "%s", "a weight-packing prologue failed");
            break;
        }
        b->data = dst;
    }
    tg_lib_close(lib);
    return !c->failed;
}

static void emit_arg(su_buf *g, const mbuf *b)
{
    switch (b->kind) {
    case B_INPUT: su_buf_printf(g, "m->in[%d]", b->index); break;
    case B_OUTPUT: su_buf_printf(g, "m->out[%d]", b->index); break;
    case B_TEMP: su_buf_printf(g, "A + %lld", (long long)b->offset); break;
    default:
        if (b->stored)
            su_buf_printf(g, "(void *)(W + %lld)", (long long)b->offset);
        else
            su_buf_puts(g, "0");
    }
}

/* ---- the phases of tg_model_compile ------------------------------------ */

/* @main's graph: its inputs (first, so their numbers are the parameters'),
 * then the calls its body makes, kernels built as they are met. */
static bool read_graph(mctx *c, const ir_module *m)
{
    ir_global_def *g = ir_module_find(m, "main");
    if (!g) {
        fail(c, "%s", "the module has no @main");
        return false;
    }
    c->main = g->func;
    if (c->main->u.func.ntparams) {
        /* the inputs' and outputs' buffers need their types known */
        fail(c, "%s", "@main has type parameters: a compiled model needs the types of its inputs and outputs");
        return false;
    }
    for (int i = 0; i < c->main->u.func.nparams; i++) {
        int_vec tmp = {0};
        eval(c, c->main->u.func.params[i], &tmp);
        su_vec_free(&tmp);
    }
    eval(c, c->main->u.func.body, &c->outs);
    return !c->failed;
}

/* Which constants go into the blob: those some kernel body reads (a
 * constant only packed is not stored). */
static void mark_stored(mctx *c)
{
    for (size_t k = 0; k < c->kernels.len; k++) {
        mkernel *kn = &c->kernels.data[k];
        for (int i = 0; i < kn->np; i++)
            kn->reads[i] = sch_stmt_reads(kn->l->kernel->body, kn->l->kernel->args[i]);
    }
    for (size_t s = 0; s < c->calls.len; s++) {
        const mcall *cl = &c->calls.data[s];
        const mkernel *kn = &c->kernels.data[cl->kernel];
        for (int i = 0; i < kn->np; i++)
            if (kn->reads[i] && c->bufs.data[cl->args.data[i]].kind == B_CONST)
                c->bufs.data[cl->args.data[i]].stored = true;
    }
}

/* The model's inputs and outputs: kernel results written in place (first
 * occurrence), the rest copied after the last call. */
static void place_outputs(mctx *c)
{
    c->nout = (int)c->outs.len;
    c->nin = c->main->u.func.nparams;
    c->outb = su_calloc((size_t)c->nout + 1, sizeof *c->outb);
    c->inb = su_calloc((size_t)c->nin + 1, sizeof *c->inb);
    c->copy_from = su_calloc((size_t)c->nout + 1, sizeof *c->copy_from);
    for (int i = 0; i < c->nout; i++) {
        mbuf *b = &c->bufs.data[c->outs.data[i]];
        c->copy_from[i] = -1;
        if (b->kind == B_TEMP) {
            b->kind = B_OUTPUT;
            b->index = i;
        } else {
            c->copy_from[i] = c->outs.data[i];
            if (b->kind == B_CONST)
                b->stored = true;
        }
    }
    for (size_t i = 0; i < c->bufs.len; i++)
        if (c->bufs.data[i].kind == B_INPUT && !c->inb[c->bufs.data[i].index])
            c->inb[c->bufs.data[i].index] = &c->bufs.data[i];
}

/* The intermediates' offsets in the arena (memplan.c). */
static void plan_memory(mctx *c)
{
    SU_VEC(tg_mem_item) items = {0};
    for (size_t i = 0; i < c->bufs.len; i++) {
        mbuf *b = &c->bufs.data[i];
        if (b->kind != B_TEMP)
            continue;
        b->index = (int)items.len;
        tg_mem_item it = {b->bytes, b->first, b->last, 0};
        su_vec_push(&items, it);
    }
    /* a device's intermediates are sub-buffers of one arena buffer, whose
     * origins must be aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN (at most
     * 4096 bytes on the devices we know) */
    c->info->mem = tg_memplan(items.data, (int)items.len, c->cl ? 4096 : 64);
    c->info->nintermediates = (int)items.len;
    for (size_t i = 0; i < c->bufs.len; i++)
        if (c->bufs.data[i].kind == B_TEMP)
            c->bufs.data[i].offset = items.data[c->bufs.data[i].index].offset;
    su_vec_free(&items);
}

/* The weights: packed, laid out in one blob and written to the cache under
 * the hash of their bytes (so the assembler's .incbin finds them). */
static bool store_weights(mctx *c)
{
    if (!pack_weights(c, &c->owned))
        return false;
    for (size_t i = 0; i < c->bufs.len; i++) {
        mbuf *b = &c->bufs.data[i];
        if (b->kind == B_CONST && b->stored) {
            b->offset = c->wbytes;
            c->wbytes = align64(c->wbytes + b->bytes);
            c->info->nconsts++;
        }
    }
    c->info->weight_bytes = c->wbytes;
    if (!c->wbytes)
        return true;
    unsigned char *blob = aligned_alloc(64, (size_t)c->wbytes);
    memset(blob, 0, (size_t)c->wbytes);
    for (size_t i = 0; i < c->bufs.len; i++) {
        mbuf *b = &c->bufs.data[i];
        if (b->kind == B_CONST && b->stored && b->bytes)
            memcpy(blob + b->offset, b->data, (size_t)b->bytes);
    }
    uint64_t h1 = su_hash_bytes(SU_HASH_INIT, blob, (size_t)c->wbytes);
    uint64_t h2 = su_hash_bytes(su_hash_u64(SU_HASH_INIT, 0x9e3779b97f4a7c15ULL), blob, (size_t)c->wbytes);
    char *dir = tg_cache_dir();
    su_buf_printf(&c->blob_path, "%s/w%016llx%016llx.bin", dir, (unsigned long long)h1, (unsigned long long)h2);
    free(dir);
    const char *path = su_buf_str(&c->blob_path);
    bool wrote = plain_path(path) && write_blob(path, blob, (size_t)c->wbytes);
    free(blob);
    if (!wrote)
        fail(c, "cannot write the weights to %s (or the path has characters the assembler cannot take)", path);
    return wrote;
}

/* The kernels' units: round robin over a few units compiled side by side
 * (units[0] is left for the graph). */
static void kernel_units(mctx *c)
{
    int nk = (int)c->kernels.len;
    int nku = nk < 2 * c->jobs ? nk : 2 * c->jobs;
    c->nu = nku + 1;
    c->units = su_calloc((size_t)c->nu, sizeof *c->units);
    for (int u = 0; u < nku; u++) {
        tg_c_prelude(&c->units[u + 1]);
        su_buf_puts(&c->units[u + 1], "#pragma GCC visibility push(hidden)\n");
    }
    for (int k = 0; k < nk; k++) {
        char name[32];
        snprintf(name, sizeof name, "k%d", k);
        tg_kernel_c(&c->units[1 + k % nku], c->kernels.data[k].l, name, TG_KERNEL_BODY);
    }
}

/* The graph unit's head: includes, sizes, the kernels' declarations and
 * the weights pulled in by the assembler. */
static void graph_head(mctx *c, su_buf *gu)
{
    /* the cpu unit's profile reads clock_gettime (POSIX) */
    if (!c->cl)
        su_buf_puts(gu, "#define _POSIX_C_SOURCE 200809L\n#include <time.h>\n");
    su_buf_puts(gu, "/* relay-tune compiled model: the graph, the weights and the ABI of relaytune_model.h */\n"
                    "#include <stddef.h>\n#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\n"
                    "#define RTM_API __attribute__((visibility(\"default\")))\n"
                    "typedef struct rtm_model rtm_model;\n");
    su_buf_printf(gu, "#define NIN %d\n#define NOUT %d\n#define ARENA %lld\n", c->nin, c->nout,
                  (long long)c->info->mem.peak);
    for (size_t k = 0; !c->cl && k < c->kernels.len; k++)
        su_buf_printf(gu, "__attribute__((visibility(\"hidden\"))) int k%zu(void *const *args);\n", k);
    if (!c->wbytes)
        return;
    su_buf_printf(gu,
                  "__asm__(\".pushsection .rodata\\n.balign 64\\n.globl rtm_weights\\n.hidden rtm_weights\\n"
                  ".type rtm_weights, @object\\nrtm_weights:\\n.incbin \\\"%s\\\"\\n.size rtm_weights, %lld\\n"
                  ".popsection\\n\");\n",
                  su_buf_str(&c->blob_path), (long long)c->wbytes);
    su_buf_puts(gu, "extern const unsigned char rtm_weights[] __attribute__((visibility(\"hidden\"), aligned(64)));\n");
}

/* The ABI's tables of the inputs (named after @main's parameters) and the
 * outputs (named by number). */
static void graph_tables(mctx *c, su_buf *gu)
{
    const char **in_names = su_calloc((size_t)c->nin + 1, sizeof *in_names);
    const char **out_names = su_calloc((size_t)c->nout + 1, sizeof *out_names);
    char (*onames)[16] = su_calloc((size_t)c->nout + 1, sizeof *onames);
    for (int i = 0; i < c->nin; i++)
        in_names[i] = c->main->u.func.params[i]->u.var.name;
    for (int i = 0; i < c->nout; i++) {
        snprintf(onames[i], sizeof onames[i], "%d", i);
        out_names[i] = onames[i];
        c->outb[i] = &c->bufs.data[c->outs.data[i]];
    }
    emit_side(gu, "in", c->nin, c->inb, in_names);
    emit_side(gu, "out", c->nout, c->outb, out_names);
    free(in_names);
    free(out_names);
    free(onames);
}

/* The post hook of step_name's walk: each op call's name, after its operands'. */
static void name_op(ir_visitor *v, const ir_expr *e)
{
    const ir_op_def *op = ir_call_op(e);
    su_buf *b = v->ctx;
    if (op)
        su_buf_printf(b, "%s%s", b->len ? "+" : "", op->name);
}

/* What a step of the profile is called: its function's ops in evaluation
 * order and its result's shape ("nn.conv2d+add+nn.relu 1x64x56x56"); op
 * names and shapes only, no text of the model. */
static void step_name(const ir_expr *f, su_buf *b)
{
    su_buf ops = {0};
    ir_visitor v;
    ir_visitor_init(&v, NULL, name_op, &ops);
    ir_visit(&v, f->u.func.body);
    ir_visitor_free(&v);
    su_buf_puts(b, ops.len ? su_buf_str(&ops) : "copy");
    su_buf_puts(b, " ");
    sch_shape_text(b, f->u.func.body->type);
    su_buf_free(&ops);
}

/* The profile's tables and functions (relaytune_model.h): each step's
 * name, kernel and FLOPs, and rtm_profile, which hands rtm_run the array
 * it writes each step's seconds into. The steps are the calls of rtm_run,
 * in order; the output copies after them are outside every step. */
static void graph_profile(mctx *c, su_buf *gu)
{
    int ns = (int)c->calls.len;
    su_buf_printf(gu, "#define NSTEPS %d\nstatic const char *const step_names[NSTEPS + 1] = {", ns);
    for (int s = 0; s < ns; s++) {
        su_buf name = {0};
        step_name(c->kernels.data[c->calls.data[s].kernel].func, &name);
        c_string(gu, su_buf_str(&name));
        su_buf_puts(gu, ", ");
        su_buf_free(&name);
    }
    su_buf_puts(gu, "0};\nstatic const int step_kernels[NSTEPS + 1] = {");
    for (int s = 0; s < ns; s++)
        su_buf_printf(gu, "%d, ", c->calls.data[s].kernel);
    su_buf_puts(gu, "0};\nstatic const long long step_flops[NSTEPS + 1] = {");
    for (int s = 0; s < ns; s++)
        su_buf_printf(gu, "%lldLL, ", (long long)sch_workload_flops(c->kernels.data[c->calls.data[s].kernel].func));
    su_buf_puts(gu, "0};\n"
                    "RTM_API int rtm_num_steps(void) { return NSTEPS; }\n"
                    "RTM_API const char *rtm_step_name(int i) { return i >= 0 && i < NSTEPS ? step_names[i] : 0; }\n"
                    "RTM_API int rtm_step_kernel(int i) { return i >= 0 && i < NSTEPS ? step_kernels[i] : -1; }\n"
                    "RTM_API long long rtm_step_flops(int i) { return i >= 0 && i < NSTEPS ? step_flops[i] : -1; }\n"
                    "RTM_API void rtm_profile(rtm_model *m, double *seconds) { if (m) m->prof = seconds; }\n"
                    "/* the seconds since *t into P[s], *t moved on: one clock read a step */\n"
                    "static __attribute__((unused)) void rtm_tick(double *P, int s, struct timespec *t)\n"
                    "{\n"
                    "    struct timespec u;\n"
                    "    clock_gettime(CLOCK_MONOTONIC, &u);\n"
                    "    P[s] = (double)(u.tv_sec - t->tv_sec) + (double)(u.tv_nsec - t->tv_nsec) * 1e-9;\n"
                    "    *t = u;\n"
                    "}\n");
}

/* rtm_run: the calls in order, then the outputs that are copies. When
 * profiling (m->prof set), each call's time goes to its step: one branch
 * a call when not. */
static void graph_run(mctx *c, su_buf *gu)
{
    su_buf_printf(gu, "RTM_API int rtm_run(rtm_model *m)\n{\n    unsigned char *A = m->arena;\n");
    su_buf_printf(gu, "    const unsigned char *W = %s;\n    (void)A;\n    (void)W;\n", c->wbytes ? "rtm_weights" : "0");
    su_buf_puts(gu, "    double *P = m->prof;\n    struct timespec T;\n    if (P)\n"
                    "        clock_gettime(CLOCK_MONOTONIC, &T);\n");
    for (size_t s = 0; s < c->calls.len; s++) {
        const mcall *cl = &c->calls.data[s];
        su_buf_printf(gu, "    {\n        void *const a[] = {");
        for (size_t i = 0; i < cl->args.len; i++) {
            if (i)
                su_buf_puts(gu, ", ");
            emit_arg(gu, &c->bufs.data[cl->args.data[i]]);
        }
        su_buf_printf(gu, "};\n        if (k%d(a))\n            return -1;\n        if (P)\n            rtm_tick(P, %zu, &T);\n    }\n",
                      cl->kernel, s);
    }
    for (int i = 0; i < c->nout; i++) {
        if (c->copy_from[i] < 0)
            continue;
        su_buf_printf(gu, "    memcpy(m->out[%d], ", i);
        emit_arg(gu, &c->bufs.data[c->copy_from[i]]);
        su_buf_printf(gu, ", %lld);\n", (long long)c->outb[i]->bytes);
    }
    su_buf_puts(gu, "    return 0;\n}\n");
}

/* The graph unit: the ABI of relaytune_model.h over the plan. */
static void graph_unit(mctx *c, su_buf *gu)
{
    graph_head(c, gu);
    graph_tables(c, gu);
    su_buf_puts(gu, abi_struct);
    su_buf_puts(gu, abi_common);
    su_buf_puts(gu, abi_functions);
    /* the ISA the kernels need, so that a loader can refuse a host without it
     * (tg_isa_name's names only: no text from the model) */
    su_buf_printf(gu, "RTM_API const char *rtm_target_isa(void) { return \"%s\"; }\n", tg_isa_name(c->t->isa));
    graph_profile(c, gu);
    graph_run(c, gu);
}

/* ---- the OpenCL back end: one C unit that drives the device -------------- */

/* The host side of an OpenCL model: create() makes the context, queue and
 * program (from the OpenCL C carried as a string), one device buffer per
 * input, output and stored weight (weights uploaded once), the arena of
 * intermediates as one buffer cut into sub-buffers at the plan's offsets,
 * and one scratch buffer of the largest kernel's need; run() writes the
 * inputs, enqueues the kernels in graph order on the in-order queue and
 * reads the outputs. */
static const char cl_struct[] =
    "struct rtm_model {\n"
    "    void *in[NIN + 1];\n"
    "    void *out[NOUT + 1];\n"
    "    cl_context ctx;\n"
    "    cl_command_queue q;\n"
    "    cl_program prog;\n"
    "    cl_kernel k[NE + 1];\n"
    "    cl_mem din[NIN + 1], dout[NOUT + 1], w[NW + 1], t[NT + 1];\n"
    "    cl_mem arena, scratch, dummy;\n"
    "};\n";

/* An OpenCL instance's life and its launches. */
static const char cl_functions[] =
    "static cl_mem rtm_buffer(rtm_model *m, size_t n, const void *init)\n"
    "{\n"
    "    cl_int err;\n"
    "    /* OpenCL has no empty buffers */\n"
    "    return clCreateBuffer(m->ctx, CL_MEM_READ_WRITE | (init && n ? CL_MEM_COPY_HOST_PTR : 0), n ? n : 4,\n"
    "                          init && n ? (void *)init : 0, &err);\n"
    "}\n"
    "RTM_API void rtm_destroy(rtm_model *m)\n"
    "{\n"
    "    if (!m)\n"
    "        return;\n"
    "    if (m->q)\n"
    "        clFinish(m->q);\n"
    "    rtm_host_free(m);\n"
    "    for (int i = 0; i < NIN; i++)\n"
    "        if (m->din[i])\n"
    "            clReleaseMemObject(m->din[i]);\n"
    "    for (int i = 0; i < NOUT; i++)\n"
    "        if (m->dout[i])\n"
    "            clReleaseMemObject(m->dout[i]);\n"
    "    for (int i = 0; i < NW; i++)\n"
    "        if (m->w[i])\n"
    "            clReleaseMemObject(m->w[i]);\n"
    "    for (int i = 0; i < NT; i++)\n"
    "        if (m->t[i])\n"
    "            clReleaseMemObject(m->t[i]);\n"
    "    cl_mem own[3] = {m->arena, m->scratch, m->dummy};\n"
    "    for (int i = 0; i < 3; i++)\n"
    "        if (own[i])\n"
    "            clReleaseMemObject(own[i]);\n"
    "    for (int i = 0; i < NE; i++)\n"
    "        if (m->k[i])\n"
    "            clReleaseKernel(m->k[i]);\n"
    "    if (m->prog)\n"
    "        clReleaseProgram(m->prog);\n"
    "    if (m->q)\n"
    "        clReleaseCommandQueue(m->q);\n"
    "    if (m->ctx)\n"
    "        clReleaseContext(m->ctx);\n"
    "    free(m);\n"
    "}\n"
    "/* the device the model was compiled for: by its indices, and it must still\n"
    " * be the device of that name */\n"
    "static cl_device_id rtm_device(void)\n"
    "{\n"
    "    cl_platform_id ps[16];\n"
    "    cl_device_id ds[16];\n"
    "    cl_uint np = 0, nd = 0;\n"
    "    char name[128] = {0};\n"
    "    if (clGetPlatformIDs(16, ps, &np) != CL_SUCCESS || (cl_uint)PLATFORM >= np ||\n"
    "        clGetDeviceIDs(ps[PLATFORM], CL_DEVICE_TYPE_ALL, 16, ds, &nd) != CL_SUCCESS || (cl_uint)DEVICE >= nd ||\n"
    "        clGetDeviceInfo(ds[DEVICE], CL_DEVICE_NAME, sizeof name - 1, name, 0) != CL_SUCCESS ||\n"
    "        strcmp(name, rtm_device_name))\n"
    "        return 0;\n"
    "    return ds[DEVICE];\n"
    "}\n"
    "/* PoCL starts LLVM, which gives the calling thread an alternate signal\n"
    " * stack of its own; ASan (or anyone who set one) then frees a stack it\n"
    " * did not make when the thread ends. Every entry that calls OpenCL keeps\n"
    " * the thread's own stack, as targets/opencl.c does. */\n"
    "static void rtm_stack_save(stack_t *s)\n"
    "{\n"
    "    if (sigaltstack(0, s) != 0)\n"
    "        s->ss_flags = SS_DISABLE;\n"
    "}\n"
    "static void rtm_stack_restore(const stack_t *s)\n"
    "{\n"
    "    stack_t cur;\n"
    "    if (sigaltstack(0, &cur) == 0 && cur.ss_sp != s->ss_sp) {\n"
    "        stack_t back = *s;\n"
    "        back.ss_flags &= SS_DISABLE;\n"
    "        sigaltstack(&back, 0);\n"
    "    }\n"
    "}\n"
    "static int rtm_setup_on(rtm_model *m)\n"
    "{\n"
    "    cl_device_id d = rtm_device();\n"
    "    cl_int err = CL_SUCCESS;\n"
    "    if (d)\n"
    "        m->ctx = clCreateContext(0, 1, &d, 0, 0, &err);\n"
    "    if (m->ctx)\n"
    "        m->q = clCreateCommandQueue(m->ctx, d, 0, &err);\n"
    "    const char *src = rtm_src;\n"
    "    if (m->q)\n"
    "        m->prog = clCreateProgramWithSource(m->ctx, 1, &src, 0, &err);\n"
    "    int ok = m->prog && clBuildProgram(m->prog, 1, &d, rtm_options, 0, 0) == CL_SUCCESS;\n"
    "    for (int i = 0; ok && i < NE; i++)\n"
    "        ok = (m->k[i] = clCreateKernel(m->prog, rtm_knames[i], &err)) != 0;\n"
    "    for (int i = 0; ok && i < NIN; i++)\n"
    "        ok = (m->din[i] = rtm_buffer(m, in_bytes[i], 0)) != 0;\n"
    "    for (int i = 0; ok && i < NOUT; i++)\n"
    "        ok = (m->dout[i] = rtm_buffer(m, out_bytes[i], 0)) != 0;\n"
    "    for (int i = 0; ok && i < NW; i++)\n"
    "        ok = (m->w[i] = rtm_buffer(m, rtm_wbytes[i], W + rtm_woff[i])) != 0;\n"
    "    ok = ok && (m->arena = rtm_buffer(m, ARENA, 0)) && (m->scratch = rtm_buffer(m, SCRATCH, 0)) &&\n"
    "         (m->dummy = rtm_buffer(m, 0, 0));\n"
    "    for (int i = 0; ok && i < NT; i++) {\n"
    "        cl_buffer_region r = {rtm_toff[i], rtm_tbytes[i]};\n"
    "        m->t[i] = rtm_tbytes[i] ? clCreateSubBuffer(m->arena, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &err)\n"
    "                                : rtm_buffer(m, 0, 0);\n"
    "        ok = m->t[i] != 0;\n"
    "    }\n"
    "    return ok;\n"
    "}\n"
    "static int rtm_setup(rtm_model *m)\n"
    "{\n"
    "    stack_t own;\n"
    "    rtm_stack_save(&own);\n"
    "    int ok = rtm_setup_on(m);\n"
    "    rtm_stack_restore(&own);\n"
    "    return ok;\n"
    "}\n"
    "/* kernel k over the buffers a[0..n) and the scratch buffer: its entries in\n"
    " * order, each over its NDRange (a local size of 0: the driver's choice) */\n"
    "static int rtm_call(rtm_model *m, int k, int n, const cl_mem *a)\n"
    "{\n"
    "    for (int e = rtm_kfirst[k]; e < rtm_kfirst[k] + rtm_kcount[k]; e++) {\n"
    "        for (int i = 0; i < n; i++)\n"
    "            if (clSetKernelArg(m->k[e], (cl_uint)i, sizeof a[i], &a[i]) != CL_SUCCESS)\n"
    "                return -1;\n"
    "        if (clSetKernelArg(m->k[e], (cl_uint)n, sizeof m->scratch, &m->scratch) != CL_SUCCESS)\n"
    "            return -1;\n"
    "        const size_t *l = rtm_klocal[e];\n"
    "        int any = l[0] || l[1] || l[2];\n"
    "        if (clEnqueueNDRangeKernel(m->q, m->k[e], (cl_uint)rtm_kdims[e], 0, rtm_kglobal[e], any ? l : 0, 0, 0,\n"
    "                                   0) != CL_SUCCESS)\n"
    "            return -1;\n"
    "    }\n"
    "    return 0;\n"
    "}\n";

/* A long text as C string literals, one per line (so no literal is huge). */
static void c_text(su_buf *g, const char *s)
{
    su_buf line = {0};
    for (const char *p = s; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p + 1) : strlen(p);
        su_buf_clear(&line);
        su_buf_putn(&line, p, n);
        su_buf_puts(g, "    ");
        c_string(g, su_buf_str(&line));
        su_buf_puts(g, "\n");
        p += n;
    }
    su_buf_free(&line);
}

/* Buffer id as the device buffer a kernel call takes (wnum: the weight
 * number of each stored constant). */
static void cl_arg(su_buf *g, const mctx *c, int id, const int *wnum)
{
    const mbuf *b = &c->bufs.data[id];
    switch (b->kind) {
    case B_INPUT: su_buf_printf(g, "m->din[%d]", b->index); break;
    case B_OUTPUT: su_buf_printf(g, "m->dout[%d]", b->index); break;
    case B_TEMP: su_buf_printf(g, "m->t[%d]", b->index); break;
    default:
        /* a constant that is only packed: no kernel reads it */
        if (b->stored)
            su_buf_printf(g, "m->w[%d]", wnum[id]);
        else
            su_buf_puts(g, "m->dummy");
    }
}

/* The program: every kernel k<N> in OpenCL C, and how each is launched
 * (ls[k]: its entries and NDRanges, from tg_cl_func). */
static void cl_program(mctx *c, su_buf *src, tg_cl_launch *ls, int64_t *scratch)
{
    su_buf_puts(src, tg_lang_cl_group.prelude);
    *scratch = 0;
    for (size_t k = 0; k < c->kernels.len; k++) {
        char name[32];
        snprintf(name, sizeof name, "k%zu", k);
        tg_cl_func(src, c->kernels.data[k].l->kernel, name, &c->t->cl, &ls[k]);
        if (ls[k].scratch > *scratch)
            *scratch = ls[k].scratch;
    }
}

/* The launch tables of the unit: every entry's name and NDRange, and each
 * kernel's first entry and count (rtm_call launches them in order). */
static void cl_launch_tables(su_buf *gu, const tg_cl_launch *ls, int nk)
{
    int ne = 0;
    for (int k = 0; k < nk; k++)
        ne += ls[k].n;
    su_buf names = {0}, dims = {0}, glob = {0}, loc = {0}, first = {0}, count = {0};
    int e = 0;
    for (int k = 0; k < nk; k++) {
        su_buf_printf(&first, "%d, ", e);
        su_buf_printf(&count, "%d, ", ls[k].n);
        for (int i = 0; i < ls[k].n; i++, e++) {
            const tg_cl_step *s = &ls[k].step[i];
            /* entry names come from counters (tg_cl_func): identifiers */
            su_buf_printf(&names, "\"%s\", ", s->name);
            su_buf_printf(&dims, "%d, ", s->dims);
            su_buf_printf(&glob, "{%lld, %lld, %lld}, ", (long long)s->global[0], (long long)s->global[1],
                          (long long)s->global[2]);
            su_buf_printf(&loc, "{%lld, %lld, %lld}, ", (long long)s->local[0], (long long)s->local[1],
                          (long long)s->local[2]);
        }
    }
    su_buf_printf(gu, "#define NE %d\n", ne);
    su_buf_printf(gu, "static const char *const rtm_knames[%d] = {%s0};\n", ne + 1, su_buf_str(&names));
    su_buf_printf(gu, "static const int rtm_kdims[%d] = {%s0};\n", ne + 1, su_buf_str(&dims));
    su_buf_printf(gu, "static const size_t rtm_kglobal[%d][3] = {%s{0}};\n", ne + 1, su_buf_str(&glob));
    su_buf_printf(gu, "static const size_t rtm_klocal[%d][3] = {%s{0}};\n", ne + 1, su_buf_str(&loc));
    su_buf_printf(gu, "static const int rtm_kfirst[%d] = {%s0};\n", nk + 1, su_buf_str(&first));
    su_buf_printf(gu, "static const int rtm_kcount[%d] = {%s0};\n", nk + 1, su_buf_str(&count));
    su_buf_free(&names);
    su_buf_free(&dims);
    su_buf_free(&glob);
    su_buf_free(&loc);
    su_buf_free(&first);
    su_buf_free(&count);
}

/* rtm_run on the device. */
static void cl_run(mctx *c, su_buf *gu, const int *wnum)
{
    su_buf_puts(gu, "static int rtm_run_on(rtm_model *m)\n{\n"
                    "    for (int i = 0; i < NIN; i++)\n"
                    "        if (in_bytes[i] && clEnqueueWriteBuffer(m->q, m->din[i], CL_FALSE, 0, in_bytes[i], m->in[i], "
                    "0, 0, 0) != CL_SUCCESS)\n"
                    "            return -1;\n");
    for (size_t s = 0; s < c->calls.len; s++) {
        const mcall *cl = &c->calls.data[s];
        su_buf_puts(gu, "    {\n        const cl_mem a[] = {");
        for (size_t i = 0; i < cl->args.len; i++) {
            if (i)
                su_buf_puts(gu, ", ");
            cl_arg(gu, c, cl->args.data[i], wnum);
        }
        su_buf_printf(gu, "};\n        if (rtm_call(m, %d, %zu, a))\n            return -1;\n    }\n", cl->kernel,
                      cl->args.len);
    }
    for (int i = 0; i < c->nout; i++) {
        if (c->copy_from[i] < 0 || !c->outb[i]->bytes)
            continue;
        su_buf_puts(gu, "    if (clEnqueueCopyBuffer(m->q, ");
        cl_arg(gu, c, c->copy_from[i], wnum);
        su_buf_printf(gu, ", m->dout[%d], 0, 0, %lld, 0, 0, 0) != CL_SUCCESS)\n        return -1;\n", i,
                      (long long)c->outb[i]->bytes);
    }
    su_buf_puts(gu, "    for (int i = 0; i < NOUT; i++)\n"
                    "        if (out_bytes[i] && clEnqueueReadBuffer(m->q, m->dout[i], CL_TRUE, 0, out_bytes[i], m->out[i], "
                    "0, 0, 0) != CL_SUCCESS)\n"
                    "            return -1;\n"
                    "    return clFinish(m->q) == CL_SUCCESS ? 0 : -1;\n}\n"
                    "RTM_API int rtm_run(rtm_model *m)\n{\n"
                    "    stack_t own;\n"
                    "    rtm_stack_save(&own);\n"
                    "    int r = rtm_run_on(m);\n"
                    "    rtm_stack_restore(&own);\n"
                    "    return r;\n}\n");
}

/* The one unit of an OpenCL model: the ABI, the program's source, the
 * tables of kernels, weights and intermediates, and the graph's calls. */
static void cl_unit(mctx *c, su_buf *gu)
{
    int nk = (int)c->kernels.len, nw = 0, nt = c->info->nintermediates;
    int *wnum = su_calloc(c->bufs.len + 1, sizeof *wnum);
    tg_cl_launch *ls = su_calloc((size_t)nk + 1, sizeof *ls);
    su_buf src = {0};
    int64_t scratch;
    cl_program(c, &src, ls, &scratch);
    su_buf_puts(gu, "/* relay-tune compiled model for OpenCL: the host side, the program, the weights and the ABI of "
                    "relaytune_model.h */\n"
                    "#define _DEFAULT_SOURCE\n#include <signal.h>\n"
                    "#define CL_TARGET_OPENCL_VERSION 120\n#include <CL/cl.h>\n");
    graph_head(c, gu);
    su_buf_printf(gu, "#define PLATFORM %d\n#define DEVICE %d\n#define NK %d\n#define SCRATCH %lld\n",
                  c->t->cl.platform, c->t->cl.device, nk, (long long)scratch);
    su_buf_puts(gu, "static const char rtm_device_name[] = ");
    c_string(gu, c->t->cl.name);
    su_buf_puts(gu, ";\nstatic const char rtm_options[] = ");
    c_string(gu, c->t->cflags);
    su_buf_puts(gu, ";\nstatic const char rtm_src[] =\n");
    c_text(gu, su_buf_str(&src));
    su_buf_puts(gu, "    ;\n");
    cl_launch_tables(gu, ls, nk);
    su_buf woff = {0}, wbytes = {0}, toff = {0}, tbytes = {0};
    for (size_t i = 0; i < c->bufs.len; i++) {
        const mbuf *b = &c->bufs.data[i];
        if (b->kind == B_CONST && b->stored) {
            wnum[i] = nw++;
            su_buf_printf(&woff, "%lld, ", (long long)b->offset);
            su_buf_printf(&wbytes, "%lld, ", (long long)b->bytes);
        }
    }
    /* intermediates by plan item; an output written in place is no longer one */
    int64_t *to = su_calloc((size_t)nt + 1, sizeof *to), *tb = su_calloc((size_t)nt + 1, sizeof *tb);
    for (size_t i = 0; i < c->bufs.len; i++)
        if (c->bufs.data[i].kind == B_TEMP) {
            to[c->bufs.data[i].index] = c->bufs.data[i].offset;
            tb[c->bufs.data[i].index] = c->bufs.data[i].bytes;
        }
    for (int i = 0; i < nt; i++) {
        su_buf_printf(&toff, "%lld, ", (long long)to[i]);
        su_buf_printf(&tbytes, "%lld, ", (long long)tb[i]);
    }
    su_buf_printf(gu, "#define NW %d\n#define NT %d\n", nw, nt);
    su_buf_printf(gu, "static const size_t rtm_woff[%d] = {%s0};\n", nw + 1, su_buf_str(&woff));
    su_buf_printf(gu, "static const size_t rtm_wbytes[%d] = {%s0};\n", nw + 1, su_buf_str(&wbytes));
    su_buf_printf(gu, "static const size_t rtm_toff[%d] = {%s0};\n", nt + 1, su_buf_str(&toff));
    su_buf_printf(gu, "static const size_t rtm_tbytes[%d] = {%s0};\n", nt + 1, su_buf_str(&tbytes));
    su_buf_printf(gu, "static const unsigned char *const W = %s;\n", c->wbytes ? "rtm_weights" : "0");
    graph_tables(c, gu);
    su_buf_puts(gu, cl_struct);
    su_buf_puts(gu, abi_common);
    su_buf_puts(gu, cl_functions);
    su_buf_puts(gu, "RTM_API const char *rtm_target_isa(void) { return \"opencl\"; }\n");
    cl_run(c, gu, wnum);
    free(to);
    free(tb);
    su_buf_free(&woff);
    su_buf_free(&wbytes);
    su_buf_free(&toff);
    su_buf_free(&tbytes);
    su_buf_free(&src);
    free(ls);
    free(wnum);
}

/* Compiles the units and links them into the model's shared object: at
 * o->out_path, else in the cache under the hash of the sources (an object
 * already there is reused). */
static bool link_model(mctx *c)
{
    const char **srcs = su_calloc((size_t)c->nu, sizeof *srcs);
    for (int u = 0; u < c->nu; u++)
        srcs[u] = su_buf_str(&c->units[u]);
    char *log = NULL;
    su_buf path = {0};
    if (c->o->out_path) {
        su_buf_puts(&path, c->o->out_path);
    } else {
        uint64_t h1 = su_hash_str(c->t->cflags), h2 = su_hash_u64(SU_HASH_INIT, 0x9e3779b97f4a7c15ULL);
        for (int u = 0; u < c->nu; u++) {
            h1 = su_hash_bytes(h1, srcs[u], strlen(srcs[u]) + 1);
            h2 = su_hash_bytes(h2, srcs[u], strlen(srcs[u]) + 1);
        }
        char *cdir = tg_cache_dir();
        su_buf_printf(&path, "%s/m%016llx%016llx.so", cdir, (unsigned long long)h1, (unsigned long long)h2);
        free(cdir);
    }
    tg_err e = !c->o->out_path && access(su_buf_str(&path), R_OK) == 0
                   ? TG_E_OK
                   : tg_build_shared(srcs, c->nu, &c->host, c->jobs, su_buf_str(&path), &log);
    c->info->path = su_buf_take(&path);
    free(srcs);
    if (e) {
        su_buf_printf(&c->err, "%s: %s", tg_err_name(e), log ? log : "");
        c->failed = true;
    }
    free(log);
    return !e;
}

static void mctx_free(mctx *c)
{
    su_buf_free(&c->err);
    for (int u = 0; u < c->nu; u++)
        su_buf_free(&c->units[u]);
    free(c->units);
    for (size_t i = 0; i < c->owned.len; i++)
        free(c->owned.data[i]);
    su_vec_free(&c->owned);
    su_vec_free(&c->outs);
    free(c->outb);
    free(c->inb);
    free(c->copy_from);
    su_buf_free(&c->blob_path);
    for (size_t i = 0; i < c->kernels.len; i++) {
        free(c->kernels.data[i].key);
        free(c->kernels.data[i].reads);
        sch_kernel_free(&c->kernels.data[i].b);
    }
    su_vec_free(&c->kernels);
    for (size_t i = 0; i < c->calls.len; i++)
        su_vec_free(&c->calls.data[i].args);
    su_vec_free(&c->calls);
    for (size_t i = 0; i < c->memo.len; i++)
        su_vec_free(&c->memo.data[i].bufs);
    su_vec_free(&c->memo);
    su_vec_free(&c->bufs);
}

bool tg_model_compile(const ir_module *m, const tg_target *t, const tg_model_opts *o, tg_model_info *info,
                      char **err)
{
    mctx c = {0};
    memset(info, 0, sizeof *info);
    *err = NULL;
    c.t = t;
    c.cl = t->kind == TG_OPENCL;
    c.host = *t;
    const char *why;
    if (c.cl && !tg_target_parse("cpu", &c.host, &why)) {
        *err = su_strdup(why);
        return false;
    }
    /* the host's C of an OpenCL model calls the ICD loader */
    c.host.link_opencl = c.cl;
    /* the prologues' C is the same for any ISA: where the target's
     * instructions would not run here, they are built for this host */
    c.pack = c.host;
    if (!c.cl && !tg_target_runnable(t, &why) && !tg_target_parse("cpu", &c.pack, &why)) {
        *err = su_strdup(why);
        return false;
    }
    c.o = o;
    c.info = info;
    c.jobs = o->jobs > 0 ? o->jobs : c.host.cores;
    bool ok = read_graph(&c, m);
    if (ok) {
        mark_stored(&c);
        place_outputs(&c);
        plan_memory(&c);
        ok = store_weights(&c);
    }
    if (ok && c.cl) {
        /* one unit: the kernels are OpenCL C inside it */
        c.nu = 1;
        c.units = su_calloc(1, sizeof *c.units);
        cl_unit(&c, &c.units[0]);
        ok = link_model(&c);
    } else if (ok) {
        kernel_units(&c);
        graph_unit(&c, &c.units[0]);
        ok = link_model(&c);
    }
    info->ncalls = (int)c.calls.len;
    info->nkernels = (int)c.kernels.len;
    info->ninputs = c.nin;
    info->noutputs = c.nout;
    if (!ok)
        *err = c.err.len ? su_buf_take(&c.err) : su_strdup("compile failed");
    mctx_free(&c);
    return ok;
}
