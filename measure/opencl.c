/* opencl.c — measuring candidates on an OpenCL device. The builder side runs
 * in the tool: each candidate is scheduled and lowered as for the CPU
 * (ms_schedule), written as OpenCL C by tg_cl_func (its prologues and its
 * kernel, with the launches tg_cl_func describes) and saved, with that
 * description, as a candidate file in the cache. Nothing here makes an
 * OpenCL object in the tool: the program is built in the runner's child,
 * which owns its context, so a driver that crashes, a kernel that traps and
 * one that hangs cost that child (and one record) under the runner's
 * watchdog, never the session. The child maps the task's data, builds the
 * program (a failed clBuildProgram is a COMPILE_ERROR with the build log),
 * binds every buffer once (inputs uploaded once), runs the prologues once,
 * checks the kernel's first output against the reference, then times
 * warm-up and repeats by the launches' profiling events: the record's costs
 * are device seconds per run. Cache flushing and PAPI counters are CPU
 * notions and are not applied here.
 *
 * The candidate file is text, so that a person can read what was measured:
 *     RTCLK1
 *     device PLATFORM DEVICE
 *     buffers N inputs NIN outputs NOUT
 *     bytes B0 B1 ... (N of them: parameters, packed weights, outputs)
 *     funcs F
 *     func NIDX SCRATCH NSTEPS I0 I1 ...   (F of them, the kernel last)
 *     step NAME DIMS G0 G1 G2 L0 L1 L2      (NSTEPS after each func)
 *     source NBYTES
 *     <the OpenCL C> */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "measure/measure.h"

#define MAGIC "RTCLK1\n"

enum { MAX_BUF = 64, MAX_FUNCS = 9 };

static ms_cl_source_hook hook;
static void *hook_ctx;

void ms_cl_set_source_hook(ms_cl_source_hook fn, void *ctx)
{
    hook = fn;
    hook_ctx = ctx;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the builder's side: candidate files ---- */

static void put_func(su_buf *h, const tg_cl_launch *l, int nidx, const int *idx)
{
    su_buf_printf(h, "func %d %lld %d", nidx, (long long)l->scratch, l->n);
    for (int i = 0; i < nidx; i++)
        su_buf_printf(h, " %d", idx[i]);
    su_buf_putc(h, '\n');
    for (int s = 0; s < l->n; s++) {
        const tg_cl_step *st = &l->step[s];
        su_buf_printf(h, "step %s %d %lld %lld %lld %lld %lld %lld\n", st->name, st->dims, (long long)st->global[0],
                      (long long)st->global[1], (long long)st->global[2], (long long)st->local[0],
                      (long long)st->local[1], (long long)st->local[2]);
    }
}

static int64_t buffer_bytes(const sch_func *f, int i)
{
    return f->args[i]->size * ir_dtype_bytes(f->args[i]->dtype);
}

/* The candidate file of one lowered candidate: header and source (at most
 * MAX_FUNCS - 1 prologues and MAX_BUF buffers, which ms_cl_build checks). */
static void candidate_text(const sch_lowered *l, const char *symbol, const tg_target *t, su_buf *file)
{
    const sch_func *kf = l->kernel;
    int nout = 0;
    for (int i = 0; i < kf->nargs; i++)
        nout += kf->args[i]->scope == SCH_SCOPE_OUTPUT;
    int np = kf->nargs - l->nprologues - nout;
    su_buf src = {0}, name = {0};
    su_buf_puts(&src, tg_lang_cl_group.prelude);
    tg_cl_launch pro[MAX_FUNCS], kl;
    for (int p = 0; p < l->nprologues; p++) {
        su_buf_clear(&name);
        su_buf_printf(&name, "%s_p%d", symbol, p);
        tg_cl_func(&src, l->prologues[p].fn, su_buf_str(&name), &t->cl, &pro[p]);
    }
    tg_cl_func(&src, kf, symbol, &t->cl, &kl);
    if (hook)
        hook(&src, symbol, hook_ctx);
    su_buf_puts(file, MAGIC);
    su_buf_printf(file, "device %d %d\nbuffers %d inputs %d outputs %d\nbytes", t->cl.platform, t->cl.device,
                  kf->nargs, np, nout);
    for (int i = 0; i < kf->nargs; i++)
        su_buf_printf(file, " %lld", (long long)buffer_bytes(kf, i));
    int nf = l->nprologues + 1;
    su_buf_printf(file, "\nfuncs %d\n", nf);
    for (int p = 0; p < nf - 1; p++) {
        int idx[2] = {l->prologues[p].param, np + p};
        put_func(file, &pro[p], 2, idx);
    }
    int idx[MAX_BUF];
    for (int i = 0; i < kf->nargs; i++)
        idx[i] = i;
    put_func(file, &kl, kf->nargs, idx);
    su_buf_printf(file, "source %zu\n", src.len);
    su_buf_putn(file, su_buf_str(&src), src.len);
    su_buf_free(&src);
    su_buf_free(&name);
}

/* Writes text to dir/NAME-HASH.clk (through a file of its own, renamed into
 * place, so that two tuners writing one candidate never see half a file);
 * the path (malloc'd), or NULL with *why. */
static char *write_candidate(const char *dir, const char *symbol, const su_buf *text, const char **why)
{
    su_buf path = {0}, tmp = {0};
    su_buf_printf(&path, "%s/%s-%016llx.clk", dir, symbol,
                  (unsigned long long)su_hash_bytes(su_hash_str(symbol), text->data, text->len));
    su_buf_printf(&tmp, "%s.%ld.tmp", su_buf_str(&path), (long)getpid());
    FILE *f = fopen(su_buf_str(&tmp), "wb");
    bool ok = f && fwrite(text->data, 1, text->len, f) == text->len;
    ok = f && fclose(f) == 0 && ok;
    ok = ok && rename(su_buf_str(&tmp), su_buf_str(&path)) == 0;
    if (!ok) {
        *why = strerror(errno);
        unlink(su_buf_str(&tmp));
        su_buf_free(&path);
    }
    su_buf_free(&tmp);
    return ok ? su_buf_take(&path) : NULL;
}

void ms_cl_build(const ms_candidate *cands, int n, const tg_target *t, ms_built *out)
{
    char *dir = tg_cache_dir();
    su_buf text = {0};
    for (int i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        double t0 = now_s();
        sch_kernel k;
        if (ms_schedule(&cands[i], t, &k, &out[i]) &&
            (k.l->nprologues > MAX_FUNCS - 1 || k.l->kernel->nargs > MAX_BUF)) {
            out[i].error = SU_MERR_INSTANTIATION;
            out[i].msg = su_strdup("the kernel has more buffers or weight prologues than an OpenCL candidate holds "
                                   "(64 buffers, 8 prologues)");
            sch_kernel_free(&k);
        } else if (out[i].error == SU_MERR_NONE) {
            su_buf_clear(&text);
            candidate_text(k.l, cands[i].symbol, t, &text);
            sch_kernel_free(&k);
            const char *why = "";
            if (!(out[i].so_path = write_candidate(dir, cands[i].symbol, &text, &why))) {
                out[i].error = SU_MERR_UNKNOWN;
                su_buf m = {0};
                su_buf_printf(&m, "cannot write the OpenCL candidate into %s: %s", dir, why);
                out[i].msg = su_buf_take(&m);
            }
        }
        out[i].build_time_s = out[i].codegen_s = now_s() - t0;
    }
    su_buf_free(&text);
    free(dir);
}

bool ms_cl_is_candidate(const char *path)
{
    char head[sizeof MAGIC - 1];
    FILE *f = fopen(path, "rb");
    bool yes = f && fread(head, 1, sizeof head, f) == sizeof head && !memcmp(head, MAGIC, sizeof head);
    if (f)
        fclose(f);
    return yes;
}

/* ---- the child's side ---- */

/* One function of a candidate: its launches over bound buffers idx[]. */
typedef struct cl_func {
    int nidx;
    int idx[MAX_BUF];
    tg_cl_launch launch;
} cl_func;

/* A candidate file, read. */
typedef struct cl_cand {
    int platform, device;
    int nbuf, nin, nout;
    int64_t bytes[MAX_BUF];
    int nf;
    cl_func f[MAX_FUNCS];
    const char *src;            /* into the file's text */
} cl_cand;

static bool read_func(const char **p, const cl_cand *c, cl_func *f)
{
    long long scratch;
    int nsteps, k;
    if (sscanf(*p, "func %d %lld %d%n", &f->nidx, &scratch, &nsteps, &k) != 3 || f->nidx < 1 || f->nidx > c->nbuf ||
        nsteps < 1 || nsteps > TG_CL_MAX_STEPS || scratch < 0)
        return false;
    *p += k;
    f->launch.n = nsteps;
    f->launch.scratch = scratch;
    for (int i = 0; i < f->nidx; i++) {
        if (sscanf(*p, " %d%n", &f->idx[i], &k) != 1 || f->idx[i] < 0 || f->idx[i] >= c->nbuf)
            return false;
        *p += k;
    }
    for (int s = 0; s < nsteps; s++) {
        tg_cl_step *st = &f->launch.step[s];
        long long g[3], l[3];
        if (sscanf(*p, " step %63s %d %lld %lld %lld %lld %lld %lld%n", st->name, &st->dims, &g[0], &g[1], &g[2],
                   &l[0], &l[1], &l[2], &k) != 8 || st->dims < 1 || st->dims > 3)
            return false;
        *p += k;
        for (int d = 0; d < 3; d++) {
            if (g[d] < 0 || l[d] < 0)
                return false;
            st->global[d] = g[d];
            st->local[d] = l[d];
        }
    }
    return true;
}

/* Parses a candidate file's text; false when it is malformed. */
static bool read_candidate(const char *text, size_t len, cl_cand *c)
{
    memset(c, 0, sizeof *c);
    if (len < sizeof MAGIC - 1 || memcmp(text, MAGIC, sizeof MAGIC - 1) != 0)
        return false;
    const char *p = text + sizeof MAGIC - 1;
    int k;
    if (sscanf(p, "device %d %d buffers %d inputs %d outputs %d bytes%n", &c->platform, &c->device, &c->nbuf, &c->nin,
               &c->nout, &k) != 5 || c->nbuf < 1 || c->nbuf > MAX_BUF || c->nin < 0 || c->nout < 1 ||
        c->nin + c->nout > c->nbuf)
        return false;
    p += k;
    for (int i = 0; i < c->nbuf; i++) {
        long long b;
        if (sscanf(p, " %lld%n", &b, &k) != 1 || b < 0)
            return false;
        c->bytes[i] = b;
        p += k;
    }
    if (sscanf(p, " funcs %d%n", &c->nf, &k) != 1 || c->nf < 1 || c->nf > MAX_FUNCS)
        return false;
    p += k;
    for (int f = 0; f < c->nf; f++) {
        while (*p == ' ' || *p == '\n')
            p++;
        if (!read_func(&p, c, &c->f[f]))
            return false;
    }
    size_t n;
    if (sscanf(p, " source %zu%n", &n, &k) != 1)
        return false;
    p += k;
    if (*p++ != '\n' || (size_t)(p - text) + n != len)
        return false;
    c->src = p;
    return true;
}

/* Sets res's error and message: what, then detail (NULL: none). */
static void set_error(ms_result *res, su_merr e, const char *what, const char *detail)
{
    res->error = e;
    su_buf b = {0};
    su_buf_printf(&b, "%s%s%s", what, detail ? ": " : "", detail ? detail : "");
    snprintf(res->msg, sizeof res->msg, "%s", su_buf_str(&b)); /* cut to fit */
    su_buf_free(&b);
}

/* A device log in the record's message: its lines joined, cut to fit. */
static void fail_log(ms_result *res, su_merr e, const char *what, const char *log)
{
    char flat[MS_MSG];
    size_t n = 0;
    for (const char *c = log ? log : ""; *c && n < sizeof flat - 1; c++)
        if (!(*c == '\n' && (n == 0 || flat[n - 1] == ' ')))
            flat[n++] = *c == '\n' || *c == '\t' ? ' ' : *c;
    flat[n] = 0;
    set_error(res, e, what, flat);
}

/* Whether the data file is the one the candidate was written for. */
static bool matches(const cl_cand *c, const ms_child_data *d)
{
    if (d->nin != c->nin || d->nout != c->nout)
        return false;
    for (int i = 0; i < c->nin; i++)
        if (d->bytes[i] != c->bytes[i])
            return false;
    for (int o = 0; o < c->nout; o++)
        if (d->bytes[d->nin + o] != c->bytes[c->nbuf - c->nout + o])
            return false;
    return true;
}

/* Runs function f of the candidate `runs` times; its device seconds a run
 * (and the wall seconds a run in *wall), or -1 after setting res's error. */
static double run(tg_cl_bound *b, const cl_func *f, int runs, double *wall, ms_result *res)
{
    char *log = NULL;
    int64_t ns = 0;
    double t0 = now_s();
    if (tg_cl_time(b, &f->launch, f->nidx, f->idx, runs, &ns, &log) != 0) {
        fail_log(res, SU_MERR_RUNTIME_ERROR, "the kernel did not run", log);
        free(log);
        return -1;
    }
    if (wall)
        *wall = (now_s() - t0) / runs;
    return (double)ns * 1e-9 / runs;
}

/* The first run, its check, warm-up and the timed repeats of the kernel. */
static void time_kernel(const cl_cand *c, tg_cl_bound *b, const ms_child_data *d, const ms_run_options *o,
                        ms_result *res, double t_check)
{
    const cl_func *k = &c->f[c->nf - 1];
    if (run(b, k, 1, NULL, res) < 0)
        return;
    for (int i = 0; i < c->nout; i++) {
        int bi = c->nbuf - c->nout + i;
        void *got = su_malloc((size_t)c->bytes[bi] + 1);
        char *log = NULL;
        bool ok = tg_cl_read(b, bi, got, c->bytes[bi], &log) == 0;
        if (!ok)
            fail_log(res, SU_MERR_RUNTIME_ERROR, "cannot read the output back", log);
        ok = ok && ms_child_check(d, i, got, res);
        free(got);
        free(log);
        if (!ok)
            return;
    }
    res->check_s = now_s() - t_check;
    double wall = 0, dev = 0;
    for (int i = 0; i < (o->warmup > 1 ? o->warmup : 1); i++)
        if ((dev = run(b, k, 1, &wall, res)) < 0)
            return;
    /* runs per repeat: enough for min_repeat_ms of the slower of device and
     * wall time (launches cost the host time of their own) */
    int number = o->number > 0 ? o->number : 1;
    double one = fmax(dev, wall);
    if (o->min_repeat_ms > 0 && one > 0)
        number = (int)fmax(number, fmin(ceil(o->min_repeat_ms * 1e-3 / one), 1 << 16));
    int repeat = o->repeat < 1 ? 1 : o->repeat > MS_MAX_REPEAT ? MS_MAX_REPEAT : o->repeat;
    double sum = 0;
    int r = 0;
    for (; r < repeat; r++) {
        if (r > 0 && o->stop_above > 0 && res->costs[r - 1] > o->stop_above) {
            res->stopped = true;
            break;
        }
        if ((res->costs[r] = run(b, k, number, NULL, res)) < 0)
            return;
        sum += res->costs[r];
    }
    ms_result_timed(res, r, repeat, number, sum, o->stop_above);
}

/* Builds the program and binds the buffers; then time_kernel. */
static void measure(const cl_cand *c, const ms_child_data *d, const ms_run_options *o, ms_result *res, double t0)
{
    tg_target t = {.kind = TG_OPENCL};
    t.cl.platform = c->platform;
    t.cl.device = c->device;
    /* a watchdog kill from here on is a compile that did not end */
    set_error(res, SU_MERR_COMPILE_TIMEOUT, "clBuildProgram did not finish", NULL);
    char *log = NULL;
    /* the driver's compiler may print its diagnostics too: the record has
     * them, the tool's terminal should not */
    fflush(stderr);
    int err_fd = dup(2), null_fd = open("/dev/null", O_WRONLY);
    if (null_fd >= 0)
        dup2(null_fd, 2);
    tg_cl_prog *prog = tg_cl_build(&t, c->src, &log);
    if (err_fd >= 0)
        dup2(err_fd, 2);
    if (err_fd >= 0)
        close(err_fd);
    if (null_fd >= 0)
        close(null_fd);
    if (!prog) {
        fail_log(res, SU_MERR_COMPILE_ERROR, "the OpenCL program does not build", log);
        free(log);
        return;
    }
    set_error(res, SU_MERR_UNKNOWN, "the candidate's process ended without a result", NULL);
    void *init[MAX_BUF] = {0};
    void *outs[MAX_BUF] = {0};
    for (int i = 0; i < c->nin; i++)
        init[i] = (void *)d->data[i];
    for (int i = c->nbuf - c->nout; i < c->nbuf; i++) {
        /* NaN: an element never written shows */
        init[i] = outs[i] = su_malloc((size_t)c->bytes[i] + 1);
        memset(outs[i], 0xff, (size_t)c->bytes[i]);
    }
    tg_cl_bound *b = tg_cl_bind(prog, c->nbuf, c->bytes, init, &log);
    for (int i = 0; i < c->nbuf; i++)
        free(outs[i]);
    if (!b) {
        fail_log(res, SU_MERR_RUNTIME_ERROR, "cannot bind the buffers", log);
        free(log);
        tg_cl_free(prog);
        return;
    }
    bool ok = true;
    for (int p = 0; p < c->nf - 1 && ok; p++)
        ok = run(b, &c->f[p], 1, NULL, res) >= 0;
    double t_check = now_s();
    res->load_s = t_check - t0;
    if (ok)
        time_kernel(c, b, d, o, res, t_check);
    tg_cl_unbind(b);
    tg_cl_free(prog);
}

void ms_cl_child(const char *cand_path, const char *data_path, const ms_run_options *o, ms_result *res)
{
    double t0 = now_s();
    size_t len = 0;
    char *text = su_read_file(cand_path, &len);
    cl_cand c;
    ms_child_data d;
    if (!text || !read_candidate(text, len, &c))
        set_error(res, SU_MERR_UNKNOWN, "the OpenCL candidate file is malformed", cand_path);
    else if (!ms_child_map(data_path, &d, res))
        ; /* res says why */
    else if (!matches(&c, &d))
        set_error(res, SU_MERR_UNKNOWN, "the OpenCL candidate does not take the task data's tensors", cand_path);
    else
        measure(&c, &d, o, res, t0);
    free(text);
}
