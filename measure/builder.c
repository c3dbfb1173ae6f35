/* builder.c — a batch of candidates (a primitive function, its template and
 * a config) into shared objects the runner can load. Each candidate is
 * scheduled with its config, lowered (packs of weights hoisted into
 * prologues) and emitted as C under its own entry name; several candidates
 * share a translation unit to spread the compiler's start-up, and the units
 * are compiled side by side. Every way a candidate can fail becomes its own
 * error code and message, never a failure of the batch:
 *   - a config that does not fit the template's space: INVALID_CONFIG;
 *   - a template or lowering that cannot handle the config: INSTANTIATION;
 *   - a unit that does not compile (or not within the time limit): each of
 *     its candidates is compiled again on its own, so that one bad
 *     candidate does not sink its neighbours; what still fails is its
 *     COMPILE_ERROR or COMPILE_TIMEOUT.
 * A candidate with prologues gets targets/kernel.c's wrapper entry, which
 * packs the weights once, as the compiled model does. For an opencl target
 * the batch goes to measure/opencl.c instead. */
#include <string.h>
#include <time.h>

#include "measure/measure.h"

/* Longest compiler log kept in a message. */
#define LOG_MAX 4096

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void set_msg(ms_built *b, su_merr e, const char *fmt, ...) SU_PRINTF(3, 4);
static void set_msg(ms_built *b, su_merr e, const char *fmt, ...)
{
    su_buf m = {0};
    va_list ap;
    va_start(ap, fmt);
    su_buf_vprintf(&m, fmt, ap);
    va_end(ap);
    b->error = e;
    free(b->msg);
    b->msg = su_buf_take(&m);
}

/* The compiler's log, cut to LOG_MAX bytes (at a character boundary). */
static void set_log(ms_built *b, su_merr e, const char *what, const char *log)
{
    size_t n = log ? strlen(log) : 0;
    if (n > LOG_MAX) {
        n = LOG_MAX;
        while (n > 0 && ((unsigned char)log[n] & 0xc0) == 0x80)
            n--;
    }
    set_msg(b, e, "%s%s%.*s%s", what, n ? ":\n" : "", (int)n, log ? log : "", n < (log ? strlen(log) : 0) ? "\n..." : "");
}

bool ms_schedule(const ms_candidate *c, const tg_target *t, sch_kernel *k, ms_built *out)
{
    sch_build_opts bo = {.template_name = c->template_name, .hw = &t->hw, .cfg = c->cfg, .param_const = c->param_const};
    if (sch_build(c->func, &bo, k))
        return true;
    if (k->failed == SCH_BUILD_CREATE)
        set_msg(out, SU_MERR_INSTANTIATION, "the function cannot be scheduled: %s", k->why);
    else if (k->failed == SCH_BUILD_LOWER)
        set_msg(out, SU_MERR_INSTANTIATION, "lowering failed: %s", k->why);
    else
        set_msg(out, k->err == SCH_E_BAD_CONFIG ? SU_MERR_INVALID_CONFIG : SU_MERR_INSTANTIATION, "%s: %s",
                sch_err_name(k->err), k->why);
    sch_kernel_free(k);
    return false;
}

/* Builds one candidate (schedule/build.c) and writes its C (targets/
 * kernel.c) into src; false with out's error set when it cannot. */
static bool emit(const ms_candidate *c, const tg_target *t, su_buf *src, ms_built *out)
{
    sch_kernel k;
    if (!ms_schedule(c, t, &k, out))
        return false;
    tg_kernel_c(src, k.l, c->symbol, TG_KERNEL_MEASURED);
    sch_kernel_free(&k);
    return true;
}

typedef SU_VEC(int) int_vec;

/* One translation unit: candidates idx[0..n) of the batch. */
typedef struct unit {
    int *idx;
    int n;
    su_buf src;
} unit;

/* Compiles units[0..nu) and hands their results to the candidates; units
 * that fail with more than one candidate are returned in *retry (the
 * candidates to compile again on their own). */
static void compile(unit *units, int nu, const tg_target *t, const ms_build_options *o, ms_built *out,
                    int_vec *retry)
{
    const char **srcs = su_calloc((size_t)nu + 1, sizeof *srcs);
    tg_lib **libs = su_calloc((size_t)nu + 1, sizeof *libs);
    tg_err *errs = su_calloc((size_t)nu + 1, sizeof *errs);
    char **logs = su_calloc((size_t)nu + 1, sizeof *logs);
    double *secs = su_calloc((size_t)nu + 1, sizeof *secs);
    double longest = 1;
    for (int u = 0; u < nu; u++) {
        srcs[u] = su_buf_str(&units[u].src);
        longest = units[u].n > longest ? units[u].n : longest;
    }
    /* the limit is per candidate: a unit of k gets k times as long */
    tg_build_opts bo = {o->jobs, o->timeout_s > 0 ? o->timeout_s * longest : 0};
    tg_build_units(srcs, nu, t, &bo, libs, errs, logs, secs);
    for (int u = 0; u < nu; u++) {
        unit *un = &units[u];
        for (int k = 0; k < un->n; k++) {
            ms_built *b = &out[un->idx[k]];
            b->build_time_s += secs[u] / un->n;
            if (!errs[u]) {
                b->so_path = su_strdup(tg_lib_path(libs[u]));
                continue;
            }
            if (un->n > 1 && (errs[u] == TG_E_COMPILE || errs[u] == TG_E_TIMEOUT)) {
                su_vec_push(retry, un->idx[k]);
                continue;
            }
            su_merr e = errs[u] == TG_E_TIMEOUT ? SU_MERR_COMPILE_TIMEOUT
                        : errs[u] == TG_E_COMPILE ? SU_MERR_COMPILE_ERROR : SU_MERR_UNKNOWN;
            set_log(b, e, tg_err_name(errs[u]), logs[u]);
        }
        tg_lib_close(libs[u]);
        free(logs[u]);
    }
    free(srcs);
    free(libs);
    free(errs);
    free(logs);
    free(secs);
}

void ms_build(const ms_candidate *cands, int n, const tg_target *t, const ms_build_options *opts, ms_built *out)
{
    if (t->kind == TG_OPENCL) {
        ms_cl_build(cands, n, t, out); /* the device builds in the candidate's child */
        return;
    }
    ms_build_options o = opts ? *opts : (ms_build_options){0};
    if (o.jobs < 1)
        o.jobs = t->cores > 0 ? t->cores : 1;
    /* emit each candidate on its own (kept for a retry) */
    su_buf *code = su_calloc((size_t)n + 1, sizeof *code);
    int_vec good = {0};
    for (int i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        double t0 = now_s();
        if (emit(&cands[i], t, &code[i], &out[i]))
            su_vec_push(&good, i);
        out[i].build_time_s = out[i].codegen_s = now_s() - t0;
    }
    /* spread the good ones over units: per_unit each, or one unit per job */
    int per = o.per_unit > 0 ? o.per_unit : (int)((good.len + (size_t)o.jobs - 1) / (size_t)o.jobs);
    per = per < 1 ? 1 : per;
    int nu = (int)((good.len + (size_t)per - 1) / (size_t)per);
    unit *units = su_calloc((size_t)nu + 1, sizeof *units);
    for (size_t g = 0; g < good.len; g++) {
        /* round robin, so that units are of similar size */
        unit *u = &units[g % (size_t)nu];
        if (!u->idx) {
            u->idx = su_calloc((size_t)per + 1, sizeof *u->idx);
            tg_c_prelude(&u->src);
        }
        u->idx[u->n++] = good.data[g];
        su_buf_puts(&u->src, su_buf_str(&code[good.data[g]]));
    }
    int_vec retry = {0};
    compile(units, nu, t, &o, out, &retry);
    for (int u = 0; u < nu; u++) {
        free(units[u].idx);
        su_buf_free(&units[u].src);
    }
    free(units);
    /* a failed unit: each of its candidates alone */
    if (retry.len) {
        units = su_calloc(retry.len, sizeof *units);
        for (size_t r = 0; r < retry.len; r++) {
            units[r].idx = &retry.data[r];
            units[r].n = 1;
            tg_c_prelude(&units[r].src);
            su_buf_puts(&units[r].src, su_buf_str(&code[retry.data[r]]));
        }
        int_vec none = {0};
        compile(units, (int)retry.len, t, &o, out, &none);
        su_vec_free(&none);
        for (size_t r = 0; r < retry.len; r++)
            su_buf_free(&units[r].src);
        free(units);
    }
    su_vec_free(&retry);
    su_vec_free(&good);
    for (int i = 0; i < n; i++)
        su_buf_free(&code[i]);
    free(code);
}

void ms_built_free(ms_built *b)
{
    free(b->msg);
    free(b->so_path);
    memset(b, 0, sizeof *b);
}
