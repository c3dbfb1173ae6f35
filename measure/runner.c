/* runner.c — runs compiled candidates in isolation. ms_runner_start forks a
 * small single-threaded runner process; for every candidate the runner forks
 * a child that maps the task's data file, loads the shared object, checks
 * the output against the expected one on the first run, then times it
 * (warm-up, `number` runs per repeat grown to min_repeat_ms, `repeat`
 * repeats, optional cache flush, PAPI counters). The runner waits with a
 * time limit and turns a signal, a hang, a load failure or a wrong answer
 * into an error code of the record. An OpenCL candidate (measure/opencl.c)
 * runs in the same kind of child, which builds its program and times it on
 * the device. Forking the runner before the tool
 * starts threads matters: a child forked from a process whose OpenMP pool
 * is running can deadlock in its first parallel region. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "measure/measure.h"

#define DATA_MAGIC "RTMSDAT1"

/* ---- the task data file ---- */

struct ms_task_data {
    char path[4096];
};

typedef struct data_header {
    char magic[8];
    uint32_t nin, nout;
    double rtol, atol;
} data_header;

typedef struct tensor_header {
    uint32_t dtype, ndim;
    int64_t shape[IR_MAX_DIMS];
    uint64_t nbytes;    /* data follows, at the next multiple of 64 */
} tensor_header;

static void put_tensor(su_buf *b, const ir_tensor *t)
{
    tensor_header h = {(uint32_t)t->dtype, (uint32_t)t->ndim, {0}, 0};
    for (int i = 0; i < t->ndim; i++)
        h.shape[i] = t->shape[i];
    h.nbytes = (uint64_t)(ir_tensor_numel(t) * ir_dtype_bytes(t->dtype));
    su_buf_putn(b, (const char *)&h, sizeof h);
    while (b->len % 64)
        su_buf_putc(b, 0);
    su_buf_putn(b, t->data, h.nbytes);
    while (b->len % 64)
        su_buf_putc(b, 0);
}

ms_task_data *ms_task_data_create(const char *dir, int nin, const ir_tensor *const *in, int nout,
                                  const ir_tensor *const *expected, double rtol, double atol, su_buf *err)
{
    if (!dir)
        dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    ms_task_data *t = su_calloc(1, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s/relay-tune-task-XXXXXX", dir);
    int fd = mkstemp(t->path);
    if (fd < 0) {
        su_buf_printf(err, "cannot create a task data file in %s: %s", dir, strerror(errno));
        free(t);
        return NULL;
    }
    su_buf b = {0};
    data_header h = {DATA_MAGIC, (uint32_t)nin, (uint32_t)nout, rtol, atol};
    memcpy(h.magic, DATA_MAGIC, 8);
    su_buf_putn(&b, (const char *)&h, sizeof h);
    for (int i = 0; i < nin; i++)
        put_tensor(&b, in[i]);
    for (int i = 0; i < nout; i++)
        put_tensor(&b, expected[i]);
    size_t done = 0;
    while (done < b.len) {
        ssize_t w = write(fd, b.data + done, b.len - done);
        if (w <= 0) {
            su_buf_printf(err, "cannot write %s: %s", t->path, strerror(errno));
            close(fd);
            unlink(t->path);
            su_buf_free(&b);
            free(t);
            return NULL;
        }
        done += (size_t)w;
    }
    close(fd);
    su_buf_free(&b);
    return t;
}

void ms_task_data_free(ms_task_data *t)
{
    if (!t)
        return;
    unlink(t->path);
    free(t);
}

ms_run_options ms_run_defaults(void)
{
    ms_run_options o = {0};
    o.warmup = 1;
    o.number = 1;
    o.repeat = 3;
    o.timeout_s = 10;
    return o;
}

/* ---- the wire between the tool and the runner ---- */

typedef struct request {
    char data_path[4096];
    char so_path[4096];
    char symbol[256];
    int warmup, number, repeat, min_repeat_ms, flush_cache, nevents;
    double timeout_s, stop_above;
    char events[MS_MAX_EVENTS][MS_NAME];
} request;

struct ms_runner {
    pid_t pid;
    int req_fd, resp_fd;
};

static bool write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        c += w;
        n -= (size_t)w;
    }
    return true;
}

static bool read_all(int fd, void *p, size_t n)
{
    char *c = p;
    while (n) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        c += r;
        n -= (size_t)r;
    }
    return true;
}

/* ---- the candidate's child ---- */

typedef struct mapped {
    const tensor_header *h;
    const void *data;
} mapped;

static void fail(ms_result *res, su_merr e, const char *fmt, ...) SU_PRINTF(3, 4);
static void fail(ms_result *res, su_merr e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    res->error = e;
    vsnprintf(res->msg, sizeof res->msg, fmt, ap);
    va_end(ap);
}

/* Walks the mapped file; false when it is not a well-formed task file. */
static bool map_tensors(const char *base, size_t size, mapped *ts, uint32_t n_total)
{
    size_t off = sizeof(data_header);
    for (uint32_t i = 0; i < n_total; i++) {
        if (off + sizeof(tensor_header) > size)
            return false;
        const tensor_header *h = (const void *)(base + off);
        off += sizeof *h;
        off = (off + 63) / 64 * 64;
        if (h->nbytes > size - off || h->ndim > IR_MAX_DIMS || h->dtype >= IR_DTYPE_COUNT)
            return false;
        ts[i] = (mapped){h, base + off};
        off += h->nbytes;
        off = (off + 63) / 64 * 64;
    }
    return true;
}

static double elem(const void *p, uint32_t dt, size_t i)
{
    ir_tensor t = {(ir_dtype)dt, 0, NULL, (void *)p};
    return ir_tensor_get(&t, (int64_t)i);
}

/* Compares output i with the expected tensor; false (with the message) on a mismatch. */
static bool check_output(ms_result *res, int i, const void *got, const mapped *want, double rtol, double atol)
{
    size_t n = want->h->nbytes / (size_t)ir_dtype_bytes((ir_dtype)want->h->dtype);
    for (size_t k = 0; k < n; k++) {
        double g = elem(got, want->h->dtype, k), w = elem(want->data, want->h->dtype, k);
        double e = fabs(g - w);
        if (e > res->max_abs_err || e != e)
            res->max_abs_err = e;
        if (!(e <= atol + rtol * fabs(w)) && !(g != g && w != w)) {
            fail(res, SU_MERR_WRONG_ANSWER, "output %d, element %zu: got %.9g, want %.9g", i, k, g, w);
            return false;
        }
    }
    return true;
}

static void flush_caches(void)
{
    static char *junk;
    enum { JUNK = 64 << 20 };
    if (!junk)
        junk = malloc(JUNK);
    if (!junk)
        return;
    for (size_t i = 0; i < JUNK; i += 64)
        junk[i]++;
}

typedef int (*kernel_fn)(void *const *args);

/* Maps the task's data file into ts (its header in *h); false after
 * setting res's error. */
static bool map_data(const char *path, ms_result *res, mapped *ts, const data_header **h)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fail(res, SU_MERR_UNKNOWN, "cannot open the task data %s", path);
        return false;
    }
    const char *base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    *h = (const void *)base;
    if (base == MAP_FAILED || (size_t)st.st_size < sizeof **h || memcmp((*h)->magic, DATA_MAGIC, 8) != 0 ||
        (*h)->nin + (*h)->nout > 64 || !map_tensors(base, (size_t)st.st_size, ts, (*h)->nin + (*h)->nout)) {
        fail(res, SU_MERR_UNKNOWN, "the task data file %s is malformed", path);
        return false;
    }
    return true;
}

/* Maps the task's data into ts (its header in *h) and loads the candidate;
 * its entry, or NULL after setting res's error. */
static kernel_fn load(const request *rq, ms_result *res, mapped *ts, const data_header **h)
{
    if (!map_data(rq->data_path, res, ts, h))
        return NULL;
    void *so = dlopen(rq->so_path, RTLD_NOW | RTLD_LOCAL);
    if (!so) {
        fail(res, SU_MERR_COMPILE_ERROR, "cannot load the candidate: %s", dlerror());
        return NULL;
    }
    kernel_fn entry = (kernel_fn)dlsym(so, rq->symbol);
    if (!entry)
        fail(res, SU_MERR_COMPILE_ERROR, "the candidate has no entry %s", rq->symbol);
    return entry;
}

/* Margin over min_repeat_ms when sizing a pass from a run's time: enough
 * that a pass sized from a warm run reaches it despite a little jitter,
 * small because every repeat is that much longer than it needs to be. */
#define PASS_MARGIN 1.05

/* Runs per repeat: grown until one pass of them lasts min_repeat_ms, sized
 * from the warm run's time (warm_ns: the second call; the first call runs
 * cold and packs weights, so sizing from it falls short and costs a pass
 * thrown away). *first_cost: seconds a run of the pass that reached it, a
 * repeat like the others (0: none was timed); *thrown: passes that fell
 * short and were not kept. */
static int calibrate(const request *rq, kernel_fn entry, void **args, int64_t warm_ns, double *first_cost,
                     int *thrown)
{
    int number = rq->number > 0 ? rq->number : 1;
    if (rq->min_repeat_ms > 0 && warm_ns > 0)
        number = (int)fmax(number, fmin(ceil(rq->min_repeat_ms * 1e6 * PASS_MARGIN / (double)warm_ns), 1 << 24));
    *first_cost = 0;
    *thrown = 0;
    while (rq->min_repeat_ms > 0) {
        int64_t t0 = ms_clock_ns();
        for (int i = 0; i < number; i++)
            entry(args);
        double ms = (double)(ms_clock_ns() - t0) * 1e-6;
        if (ms >= rq->min_repeat_ms || number >= (1 << 24)) {
            *first_cost = ms * 1e-3 / number;
            break;
        }
        (*thrown)++;
        double grow = ms > 0 ? rq->min_repeat_ms / ms * PASS_MARGIN : 16;
        number = (int)fmin(ceil(number * fmax(grow, 1.25)), 1 << 24);
    }
    return number;
}

/* The timed repeats (the calibrating pass counts as the first unless
 * repeats flush the caches or count events), stopping once one is over
 * the cutoff. */
static void time_repeats(const request *rq, ms_result *res, kernel_fn entry, void **args, int number,
                         double first_cost)
{
    const char *ev[MS_MAX_EVENTS];
    for (int i = 0; i < rq->nevents; i++)
        ev[i] = rq->events[i];
    ms_papi_set *ps = ms_papi_open(ev, rq->nevents, &res->counters);
    int repeat = rq->repeat < 1 ? 1 : rq->repeat > MS_MAX_REPEAT ? MS_MAX_REPEAT : rq->repeat;
    double sum = 0;
    int r = 0;
    if (first_cost > 0 && !rq->flush_cache && !ps) {
        res->costs[r++] = first_cost;
        sum += first_cost;
    }
    for (; r < repeat; r++) {
        if (r > 0 && rq->stop_above > 0 && res->costs[r - 1] > rq->stop_above) {
            repeat = r;
            res->stopped = true;
            break;
        }
        if (rq->flush_cache)
            flush_caches();
        ms_papi_start(ps);
        int64_t t0 = ms_clock_ns();
        for (int i = 0; i < number; i++)
            entry(args);
        int64_t t1 = ms_clock_ns();
        ms_papi_stop(ps, &res->counters);
        res->costs[r] = (double)(t1 - t0) * 1e-9 / number;
        sum += res->costs[r];
    }
    ms_papi_close(ps);
    ms_result_timed(res, repeat, rq->repeat, number, sum, rq->stop_above);
}

void ms_result_timed(ms_result *res, int done, int asked, int number, double sum, double cutoff)
{
    res->ncosts = done;
    res->mean = sum / done;
    res->number = number;
    res->error = SU_MERR_NONE;
    res->msg[0] = 0;
    if (res->stopped)
        snprintf(res->msg, sizeof res->msg, "timed %d of %d repeats: %.3g s a run is over the cutoff of %.3g s", done,
                 asked, res->costs[done - 1], cutoff);
}

/* ---- for measure/opencl.c: the task's data in an OpenCL candidate's child ---- */

bool ms_child_map(const char *path, ms_child_data *d, ms_result *res)
{
    mapped ts[64];
    const data_header *h;
    memset(d, 0, sizeof *d);
    if (!map_data(path, res, ts, &h))
        return false;
    d->nin = (int)h->nin;
    d->nout = (int)h->nout;
    d->rtol = h->rtol;
    d->atol = h->atol;
    for (uint32_t i = 0; i < h->nin + h->nout; i++) {
        d->data[i] = ts[i].data;
        d->bytes[i] = (int64_t)ts[i].h->nbytes;
        d->ref[i] = ts[i].h;
    }
    return true;
}

bool ms_child_check(const ms_child_data *d, int i, const void *got, ms_result *res)
{
    mapped want = {d->ref[d->nin + i], d->data[d->nin + i]};
    return check_output(res, i, got, &want, d->rtol, d->atol);
}

/* The request's run options, for a child that times on its own. */
static ms_run_options request_options(const request *rq)
{
    ms_run_options o = {rq->warmup, rq->number, rq->repeat, rq->min_repeat_ms, rq->timeout_s,
                        rq->flush_cache != 0, rq->stop_above, 0, {0}};
    return o;
}

static void child_run(const request *rq, ms_result *res)
{
    /* a fault in the candidate must end this child by its signal, even when
     * the host process installed handlers (a sanitizer, an application) */
    static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof faults / sizeof *faults; i++)
        signal(faults[i], SIG_DFL);
    if (ms_cl_is_candidate(rq->so_path)) {
        ms_run_options o = request_options(rq);
        ms_cl_child(rq->so_path, rq->data_path, &o, res);
        return;
    }
    int64_t t_load = ms_clock_ns();
    mapped ts[64];
    const data_header *h = NULL;
    kernel_fn entry = load(rq, res, ts, &h);
    if (!entry)
        return;
    int64_t t_check = ms_clock_ns();
    res->load_s = (double)(t_check - t_load) * 1e-9;
    void *args[64];
    for (uint32_t i = 0; i < h->nin; i++)
        args[i] = (void *)ts[i].data; /* read-only: a kernel writing its input crashes */
    for (uint32_t i = 0; i < h->nout; i++) {
        size_t nb = (ts[h->nin + i].h->nbytes + 63) / 64 * 64;
        args[h->nin + i] = aligned_alloc(64, nb ? nb : 64);
        memset(args[h->nin + i], 0xff, nb); /* NaN: an element never written shows */
    }
    int64_t t_first = ms_clock_ns();
    int rc = entry(args);
    int64_t first_ns = ms_clock_ns() - t_first;
    if (rc != 0) {
        fail(res, SU_MERR_RUNTIME_ERROR, "the candidate returned %d", rc);
        return;
    }
    for (uint32_t i = 0; i < h->nout; i++)
        if (!check_output(res, (int)i, args[h->nin + i], &ts[h->nin + i], h->rtol, h->atol))
            return;
    res->check_s = (double)(ms_clock_ns() - t_check) * 1e-9;
    /* the first call was the first warm-up; the last one sizes the passes.
     * One more warm call when the cold one was shorter than a pass: it
     * costs less than the pass that sizing from the cold call throws away */
    int64_t warm_ns = first_ns;
    int warmup = rq->warmup;
    if (warmup < 2 && rq->min_repeat_ms > 0 && (double)first_ns * 1e-6 < rq->min_repeat_ms)
        warmup = 2;
    for (int i = 1; i < warmup; i++) {
        int64_t t0 = ms_clock_ns();
        entry(args);
        warm_ns = ms_clock_ns() - t0;
    }
    double first_cost;
    int number = calibrate(rq, entry, args, warm_ns, &first_cost, &res->thrown);
    time_repeats(rq, res, entry, args, number, first_cost);
}

/* ---- the runner process ---- */

static const char *signal_name(int s)
{
    switch (s) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGKILL: return "SIGKILL";
    default: return "a signal";
    }
}

static void runner_handle(const request *rq, ms_result *shared, ms_result *out)
{
    memset(shared, 0, sizeof *shared);
    shared->error = SU_MERR_UNKNOWN;
    snprintf(shared->msg, sizeof shared->msg, "the candidate's process ended without a result");
    int64_t t0 = ms_clock_ns();
    pid_t pid = fork();
    if (pid == 0) {
        alarm((unsigned)ceil(rq->timeout_s) + 5); /* belt and braces if the runner dies */
        child_run(rq, shared);
        _exit(0);
    }
    if (pid < 0) {
        *out = *shared;
        snprintf(out->msg, sizeof out->msg, "fork failed: %s", strerror(errno));
        return;
    }
    int status = 0;
    bool timed_out = false;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            break;
        if ((double)(ms_clock_ns() - t0) * 1e-9 > rq->timeout_s) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            timed_out = true;
            break;
        }
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    *out = *shared;
    out->run_time_s = (double)(ms_clock_ns() - t0) * 1e-9;
    if (timed_out) {
        /* an OpenCL child marks its clBuildProgram as the compile it is */
        bool compiling = out->error == SU_MERR_COMPILE_TIMEOUT;
        out->error = compiling ? SU_MERR_COMPILE_TIMEOUT : SU_MERR_RUN_TIMEOUT;
        out->ncosts = 0;
        snprintf(out->msg, sizeof out->msg, "no result within %.3g s%s; the candidate was killed", rq->timeout_s,
                 compiling ? " (building its OpenCL program)" : "");
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0 && out->error == SU_MERR_UNKNOWN) {
        out->error = SU_MERR_RUNTIME_ERROR;
        out->ncosts = 0;
        snprintf(out->msg, sizeof out->msg, "the candidate's process exited with status %d before a result",
                 WEXITSTATUS(status));
    } else if (WIFSIGNALED(status)) {
        out->error = SU_MERR_RUNTIME_ERROR;
        out->ncosts = 0;
        snprintf(out->msg, sizeof out->msg, "the candidate was killed by %s (signal %d)", signal_name(WTERMSIG(status)),
                 WTERMSIG(status));
    }
}

static void runner_main(int req_fd, int resp_fd)
{
    /* Ctrl-C at a terminal reaches the whole process group; the tool
     * finishes the batch in flight, so the runner must live on until the
     * tool closes its pipe (which ends it) */
    signal(SIGINT, SIG_IGN);
    ms_papi_init(NULL, 0);
    ms_result *shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED)
        _exit(1);
    request rq;
    /* the task data files seen: a tool killed with SIGKILL cannot remove
     * its own, so the runner removes them when the tool's pipe closes */
    SU_VEC(char *) seen = {0};
    while (read_all(req_fd, &rq, sizeof rq)) {
        bool known = false;
        for (size_t i = 0; i < seen.len && !known; i++)
            known = !strcmp(seen.data[i], rq.data_path);
        if (!known)
            su_vec_push(&seen, su_strdup(rq.data_path));
        ms_result res;
        runner_handle(&rq, shared, &res);
        if (!write_all(resp_fd, &res, sizeof res))
            break;
    }
    for (size_t i = 0; i < seen.len; i++)
        unlink(seen.data[i]);
    _exit(0);
}

ms_runner *ms_runner_start(su_buf *err)
{
    int req[2], resp[2];
    if (pipe(req) != 0 || pipe(resp) != 0) {
        su_buf_printf(err, "cannot create pipes for the runner: %s", strerror(errno));
        return NULL;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        su_buf_printf(err, "cannot fork the runner: %s", strerror(errno));
        return NULL;
    }
    if (pid == 0) {
        close(req[1]);
        close(resp[0]);
        runner_main(req[0], resp[1]);
    }
    close(req[0]);
    close(resp[1]);
    ms_runner *r = su_calloc(1, sizeof *r);
    r->pid = pid;
    r->req_fd = req[1];
    r->resp_fd = resp[0];
    return r;
}

bool ms_runner_measure(ms_runner *r, const ms_task_data *t, const char *so_path, const char *symbol,
                       const ms_run_options *o, ms_result *out)
{
    request rq;
    memset(&rq, 0, sizeof rq);
    memset(out, 0, sizeof *out);
    if (strlen(t->path) >= sizeof rq.data_path || strlen(so_path) >= sizeof rq.so_path ||
        strlen(symbol) >= sizeof rq.symbol) {
        fail(out, SU_MERR_UNKNOWN, "a path or symbol name is too long for the runner");
        return true;
    }
    strcpy(rq.data_path, t->path);
    strcpy(rq.so_path, so_path);
    strcpy(rq.symbol, symbol);
    rq.warmup = o->warmup;
    rq.number = o->number;
    rq.repeat = o->repeat;
    rq.min_repeat_ms = o->min_repeat_ms;
    rq.flush_cache = o->flush_cache;
    rq.timeout_s = o->timeout_s > 0 ? o->timeout_s : 10;
    rq.stop_above = o->stop_above > 0 ? o->stop_above : 0;
    rq.nevents = o->nevents < MS_MAX_EVENTS ? o->nevents : MS_MAX_EVENTS;
    for (int i = 0; i < rq.nevents; i++)
        snprintf(rq.events[i], MS_NAME, "%s", o->events[i]);
    if (!write_all(r->req_fd, &rq, sizeof rq) || !read_all(r->resp_fd, out, sizeof *out)) {
        fail(out, SU_MERR_UNKNOWN, "the runner process died");
        return false;
    }
    return true;
}

void ms_runner_stop(ms_runner *r)
{
    if (!r)
        return;
    close(r->req_fd);
    close(r->resp_fd);
    waitpid(r->pid, NULL, 0);
    free(r);
}
