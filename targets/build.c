/* build.c — generated C into a loaded shared object. The system compiler
 * ($RELAY_TUNE_CC, else cc) runs with the target's flags; its output is
 * cached under a name made of a 128-bit hash of the compiler, the flags and
 * the source, so that the same kernel is compiled once per machine. The
 * cache lives in $RELAY_TUNE_CACHE, $XDG_CACHE_HOME/relay-tune or
 * ~/.cache/relay-tune; tests point $RELAY_TUNE_CACHE at a temporary
 * directory. A compile writes to a file of its own and renames it into
 * place, so that concurrent builders of the same kernel never see half a
 * file. The source stays next to the object, for people reading it. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "targets/targets.h"

extern char **environ;

static const char *const err_names[] = {
#define X(id, name) name,
    TG_ERRORS(X)
#undef X
};

const char *tg_err_name(tg_err e)
{
    return err_names[e];
}

struct tg_lib {
    void *handle;
    char *path;
};

static bool make_dirs(const char *path);

char *tg_cache_dir(void)
{
    const char *e = getenv("RELAY_TUNE_CACHE");
    su_buf b = {0};
    if (e && *e)
        su_buf_puts(&b, e);
    else if ((e = getenv("XDG_CACHE_HOME")) && *e)
        su_buf_printf(&b, "%s/relay-tune", e);
    else
        su_buf_printf(&b, "%s/.cache/relay-tune", (e = getenv("HOME")) && *e ? e : "/tmp");
    /* every writer into the cache (units, weights) finds it there; a
     * failure shows when the first file cannot be written */
    make_dirs(su_buf_str(&b));
    return su_buf_take(&b);
}

/* mkdir -p. */
static bool make_dirs(const char *path)
{
    char *p = su_strdup(path);
    bool ok = true;
    for (char *c = p + 1; ok; c++) {
        if (*c != '/' && *c)
            continue;
        char save = *c;
        *c = 0;
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            ok = false;
        *c = save;
        if (!save)
            break;
    }
    free(p);
    return ok;
}

static bool write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    size_t n = strlen(text);
    bool ok = fwrite(text, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

/* Splits flags at spaces into argv entries (flags never quote). */
static int split_flags(char *flags, char **argv, int max)
{
    int n = 0;
    for (char *t = strtok(flags, " "); t && n < max; t = strtok(NULL, " "))
        argv[n++] = t;
    return n;
}

/* Starts the compiler on src, writing out; its stderr goes to log_path.
 * Returns the child's pid, or -1. The compiler gets a process group of its
 * own: a time limit kills the whole group (the driver and its cc1 and as),
 * and a Ctrl-C at the terminal, meant for the tool, does not kill the
 * compilers of the batch the tool is finishing. */
static pid_t spawn_compiler(const char *cc, const char *cflags, bool object, const char *src, const char *out,
                            const char *log_path)
{
    char *flags = su_strdup(cflags);
    char *argv[64];
    int n = 0;
    argv[n++] = (char *)cc;
    n += split_flags(flags, argv + n, 48);
    if (object)
        argv[n++] = "-c";
    argv[n++] = "-o";
    argv[n++] = (char *)out;
    argv[n++] = (char *)src;
    if (!object)
        argv[n++] = "-lm";
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, cc, &fa, &at, argv, environ);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    free(flags);
    return rc == 0 ? pid : -1;
}

/* Kernels use OpenMP, whose worker threads outlive any one kernel: unloading
 * libgomp with the last kernel that needed it would pull the code from under
 * them. Load it once, never to be unloaded. */
static void pin_once(void)
{
    /* (the handle is deliberately never closed) */
    (void)dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
}

static void pin_openmp(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, pin_once);
}

/* One translation unit on its way to a loaded object. */
typedef struct unit {
    const char *src;
    su_buf so, c, tmp, lg;  /* object, source, temporary object, compiler log */
    pid_t pid;              /* running compiler, or -1 */
    double started;         /* when its compiler started (seconds, monotonic) */
    double seconds;         /* how long it took (0 for a cache hit) */
    tg_err err;
    char *log;
} unit;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void unit_fail(unit *u, tg_err e, const char *why)
{
    u->err = e;
    if (!u->log)
        u->log = su_strdup(why);
}

/* A compiler finished: install its output or record why not. */
static void unit_finish(unit *u, int status)
{
    u->pid = -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        size_t n;
        u->err = TG_E_COMPILE;
        u->log = su_read_file(su_buf_str(&u->lg), &n);
        if (!u->log)
            u->log = su_strdup("the compiler could not be run");
        unlink(su_buf_str(&u->tmp));
    } else if (rename(su_buf_str(&u->tmp), su_buf_str(&u->so)) != 0) {
        unit_fail(u, TG_E_IO, strerror(errno));
        unlink(su_buf_str(&u->tmp));
    }
    unlink(su_buf_str(&u->lg));
}

/* Waits until one running compiler of units[0..n) ends (only our own
 * children: a library must not reap its caller's), killing compilers that
 * run past timeout_s (0: no limit). */
static void wait_one(unit *units, int n, double timeout_s)
{
    for (;;) {
        for (int i = 0; i < n; i++) {
            unit *u = &units[i];
            if (u->pid <= 0)
                continue;
            int st;
            pid_t r = waitpid(u->pid, &st, WNOHANG);
            if (r == 0 && timeout_s > 0 && now_s() - u->started > timeout_s) {
                kill(-u->pid, SIGKILL);
                while ((r = waitpid(u->pid, &st, 0)) < 0 && errno == EINTR)
                    ;
                u->pid = -1;
                u->seconds = now_s() - u->started;
                unlink(su_buf_str(&u->tmp));
                unlink(su_buf_str(&u->lg));
                su_buf b = {0};
                su_buf_printf(&b, "the compiler ran longer than %.3g s and was killed", timeout_s);
                u->err = TG_E_TIMEOUT;
                free(u->log);
                u->log = su_buf_take(&b);
                return;
            }
            if (r == 0 || (r < 0 && errno == EINTR))
                continue;
            u->seconds = now_s() - u->started;
            if (r < 0) {
                u->pid = -1;
                unit_fail(u, TG_E_COMPILE, "lost the compiler process");
            } else {
                unit_finish(u, st);
            }
            return;
        }
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
}

static const char *compiler(void)
{
    const char *cc = getenv("RELAY_TUNE_CC");
    return cc && *cc ? cc : "cc";
}

/* Compiles srcs[0..n) into cached shared objects (or, with object, object
 * files), up to jobs at once, each within timeout_s (0: no limit);
 * units[i].so names the result, units[i].err says whether it is there. */
static void compile_units(const char *const *srcs, int n, const tg_target *t, int jobs, double timeout_s, bool object,
                          unit *units, const char *dir)
{
    if (t->kind != TG_CPU) {
        /* the system compiler builds C for cpu targets only; OpenCL C is
         * built for its device by tg_cl_build */
        for (int i = 0; i < n; i++) {
            units[i].src = srcs[i];
            units[i].pid = -1;
            unit_fail(&units[i], TG_E_COMPILE, "the system compiler builds cpu targets only (opencl: tg_cl_build)");
        }
        return;
    }
    const char *cc = compiler();
    if (jobs < 1)
        jobs = 1;
    bool dir_ok = make_dirs(dir);
    int running = 0;
    for (int i = 0; i < n; i++) {
        unit *u = &units[i];
        u->src = srcs[i];
        u->pid = -1;
        /* the key: two FNV-1a streams over compiler, flags and source */
        uint64_t h1 = su_hash_str(cc), h2 = su_hash_u64(SU_HASH_INIT, 0x9e3779b97f4a7c15ULL);
        h1 = su_hash_bytes(h1, t->cflags, strlen(t->cflags));
        h1 = su_hash_bytes(h1, u->src, strlen(u->src));
        h2 = su_hash_bytes(h2, u->src, strlen(u->src));
        h2 = su_hash_bytes(h2, t->cflags, strlen(t->cflags));
        h2 = su_hash_bytes(h2, cc, strlen(cc));
        su_buf_printf(&u->so, "%s/%016llx%016llx.%s", dir, (unsigned long long)h1, (unsigned long long)h2,
                      object ? "o" : "so");
        if (access(su_buf_str(&u->so), R_OK) == 0)
            continue;
        su_buf_printf(&u->c, "%s/%016llx%016llx.c", dir, (unsigned long long)h1, (unsigned long long)h2);
        su_buf_printf(&u->tmp, "%s.%ld.%d.tmp", su_buf_str(&u->so), (long)getpid(), i);
        su_buf_printf(&u->lg, "%s.%ld.%d.log", su_buf_str(&u->so), (long)getpid(), i);
        if (!dir_ok || !write_file(su_buf_str(&u->c), u->src)) {
            unit_fail(u, TG_E_IO, strerror(errno));
            continue;
        }
        while (running >= jobs) {
            wait_one(units, n, timeout_s);
            running--;
        }
        u->started = now_s();
        u->pid = spawn_compiler(cc, t->cflags, object, su_buf_str(&u->c), su_buf_str(&u->tmp), su_buf_str(&u->lg));
        if (u->pid < 0)
            unit_fail(u, TG_E_COMPILE, "the compiler could not be run");
        else
            running++;
    }
    while (running > 0) {
        wait_one(units, n, timeout_s);
        running--;
    }
}

static void unit_free(unit *u)
{
    free(u->log);
    su_buf_free(&u->so);
    su_buf_free(&u->c);
    su_buf_free(&u->tmp);
    su_buf_free(&u->lg);
}

void tg_build_units(const char *const *srcs, int n, const tg_target *t, const tg_build_opts *o, tg_lib **out,
                    tg_err *errs, char **logs, double *seconds)
{
    char *dir = tg_cache_dir();
    unit *units = su_calloc((size_t)(n ? n : 1), sizeof *units);
    compile_units(srcs, n, t, o && o->jobs > 0 ? o->jobs : 1, o ? o->timeout_s : 0, false, units, dir);
    for (int i = 0; i < n; i++) {
        unit *u = &units[i];
        out[i] = NULL;
        if (!u->err) {
            pin_openmp();
            void *h = dlopen(su_buf_str(&u->so), RTLD_NOW | RTLD_LOCAL);
            if (!h) {
                unit_fail(u, TG_E_LOAD, dlerror());
            } else {
                tg_lib *l = su_calloc(1, sizeof *l);
                l->handle = h;
                l->path = su_buf_take(&u->so);
                out[i] = l;
            }
        }
        errs[i] = u->err;
        if (logs) {
            logs[i] = u->log;
            u->log = NULL;
        }
        if (seconds)
            seconds[i] = u->seconds;
        unit_free(u);
    }
    free(units);
    free(dir);
}

tg_err tg_build_many(const char *const *srcs, int n, const tg_target *t, int jobs, tg_lib **out, char **log)
{
    tg_err *errs = su_calloc((size_t)(n ? n : 1), sizeof *errs);
    char **logs = su_calloc((size_t)(n ? n : 1), sizeof *logs);
    tg_build_opts o = {jobs, 0};
    tg_build_units(srcs, n, t, &o, out, errs, logs, NULL);
    tg_err err = TG_E_OK;
    if (log)
        *log = NULL;
    for (int i = 0; i < n; i++) {
        if (errs[i] && !err) {
            err = errs[i];
            if (log) {
                *log = logs[i];
                logs[i] = NULL;
            }
        }
        free(logs[i]);
    }
    free(errs);
    free(logs);
    return err;
}

tg_err tg_build_shared(const char *const *srcs, int n, const tg_target *t, int jobs, const char *out_path, char **log)
{
    if (log)
        *log = NULL;
    char *dir = tg_cache_dir();
    unit *units = su_calloc((size_t)(n ? n : 1), sizeof *units);
    compile_units(srcs, n, t, jobs, 0, true, units, dir);
    tg_err err = TG_E_OK;
    for (int i = 0; i < n && !err; i++)
        if (units[i].err) {
            err = units[i].err;
            if (log) {
                *log = units[i].log;
                units[i].log = NULL;
            }
        }
    if (!err) {
        /* link: cc -shared -fopenmp -o OUT.tmp UNITS... -lm, then rename */
        su_buf tmp = {0}, lg = {0};
        su_buf_printf(&tmp, "%s.%ld.tmp", out_path, (long)getpid());
        su_buf_printf(&lg, "%s/link.%ld.log", dir, (long)getpid());
        const char **argv = su_calloc((size_t)n + 10, sizeof *argv);
        int a = 0;
        argv[a++] = compiler();
        argv[a++] = "-shared";
        argv[a++] = "-fopenmp";
        argv[a++] = "-o";
        argv[a++] = su_buf_str(&tmp);
        for (int i = 0; i < n; i++)
            argv[a++] = su_buf_str(&units[i].so);
        if (t->link_opencl)
            argv[a++] = "-lOpenCL";
        argv[a++] = "-lm";
        argv[a] = NULL;
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 2, su_buf_str(&lg), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        pid_t pid;
        int st = 0;
        if (posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ) != 0) {
            err = TG_E_COMPILE;
        } else {
            pid_t r;
            while ((r = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
                ;
            if (r < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                err = TG_E_COMPILE;
        }
        posix_spawn_file_actions_destroy(&fa);
        if (err) {
            size_t len;
            char *text = su_read_file(su_buf_str(&lg), &len);
            if (log)
                *log = text ? text : su_strdup("the linker could not be run");
            else
                free(text);
            unlink(su_buf_str(&tmp));
        } else if (rename(su_buf_str(&tmp), out_path) != 0) {
            err = TG_E_IO;
            if (log)
                *log = su_strdup(strerror(errno));
            unlink(su_buf_str(&tmp));
        }
        unlink(su_buf_str(&lg));
        free(argv);
        su_buf_free(&tmp);
        su_buf_free(&lg);
    }
    for (int i = 0; i < n; i++)
        unit_free(&units[i]);
    free(units);
    free(dir);
    return err;
}

tg_err tg_build(const char *src, const tg_target *t, tg_lib **out, char **log)
{
    return tg_build_many(&src, 1, t, 1, out, log);
}

void *tg_lib_sym(tg_lib *l, const char *name)
{
    return dlsym(l->handle, name);
}

const char *tg_lib_path(const tg_lib *l)
{
    return l->path;
}

void tg_lib_close(tg_lib *l)
{
    if (!l)
        return;
    dlclose(l->handle);
    free(l->path);
    free(l);
}
