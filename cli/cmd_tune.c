/* cmd_tune.c — `relay-tune tune MODEL.relay`: tunes the model's tasks on
 * this machine, storing every measurement in the database, and shows
 * progress: on a terminal one live line per task, otherwise one line per
 * batch. Ctrl-C (SIGINT) finishes and stores the batch in flight, prints
 * the summary and exits 0; a second one quits at once. The runner is
 * started first, before optimizing the model runs OpenMP kernels. */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

static void help(FILE *out)
{
    fprintf(out,
            "usage: relay-tune tune MODEL.relay --trials N [--target cpu] [--db DB] [--tuner xgb|ga|random|grid]\n"
            "                       [--scheduler gradient|fixed] [--no-transfer]\n"
            "                       [--tasks SELECTION] [--early-stopping N] [--seed S] [--jobs J]\n"
            "                       [--params W.npz | --random-params S] [-O0..3]\n"
            "                       [--plan-size N] [--objective rank|reg] [--epsilon F]\n"
            "  Searches each task's schedule, measuring every candidate in an isolated process and\n"
            "  checking it against the reference interpreter; every result goes into the database\n"
            "  (--db, else $RELAY_TUNE_DB, else ./relay-tune.db). Configs already measured for this\n"
            "  target count toward --trials and are not measured again: run the same command to\n"
            "  resume, raise --trials to tune longer. Ctrl-C stops after the batch in flight.\n"
            "  --trials N          trials over all tasks (each task's default config is always measured)\n"
            "  --tuner NAME        xgb (default: a cost model searched by simulated annealing),\n"
            "                      ga (genetic), random, or grid (index order)\n"
            "  --plan-size N       xgb: each batch comes from the model's best N unmeasured configs (64)\n"
            "  --objective rank|reg  xgb: the cost model ranks configs (default) or regresses speed\n"
            "  --epsilon F         xgb: share of random configs in each batch (0.05)\n"
            "  --scheduler NAME    gradient (default): after a round giving each task its default and a\n"
            "                      batch, each batch goes to the task whose gain would cut the model's time\n"
            "                      most; fixed: shares by FLOPs x calls, tasks one after the other. Trials\n"
            "                      a task leaves unused (early stop, space exhausted) go to the others\n"
            "  --no-transfer       tuners do not learn from the records of similar workloads\n"
            "  --tasks SELECTION   task indices, ranges and hash prefixes: 0,3-5,e6a6 (relay-tune tasks)\n"
            "  --early-stopping N  stop a task after N trials without improvement\n"
            "  --seed S            the tuners' and the inputs' seed (default 0)\n"
            "  --jobs J            compilers at once (default: the cores)\n"
            "  --params W.npz      the model's weights; --random-params S seeded ones (the default,\n"
            "                      seed 0: schedules depend on shapes, not on values)\n"
            "  measurement: --batch N (configs per batch), --per-unit N (candidates per compiler run),\n"
            "  --repeat N (3), --min-repeat-ms MS (40), --timeout S (10, per run), --compile-timeout S\n"
            "  (60, per candidate), --flush-cache, --papi-events A,B (PAPI counters where the host has them)\n"
            "  --progress auto|live|lines|none   how progress is shown on stderr (auto: live on a terminal)\n"
            "  --mpi               under mpirun (also implied there): rank 0 tunes and writes the database,\n"
            "                      the other ranks build and measure (docs/distributed.md)\n");
}

static volatile sig_atomic_t stop_flag;

static void on_sigint(int sig)
{
    (void)sig;
    if (stop_flag)
        _exit(130);
    stop_flag = 1;
    static const char msg[] = "\nrelay-tune: finishing the batch in flight (Ctrl-C again quits now)\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
}

typedef struct view {
    int mode;           /* 1 live line per task, 2 a line per batch, 0 none */
    char **lines;       /* live: each task's line (by position; NULL: not begun) */
    size_t nlines;
    int drawn;          /* live: lines on the screen */
} view;

/* Live mode: every begun task's line again, in place (the scheduler moves
 * from task to task). */
static void redraw(view *v)
{
    if (v->drawn)
        fprintf(stderr, "\033[%dA", v->drawn);
    v->drawn = 0;
    for (size_t i = 0; i < v->nlines; i++)
        if (v->lines[i]) {
            fprintf(stderr, "\r\033[K%s\n", v->lines[i]);
            v->drawn++;
        }
}

static void put_time(char *out, size_t n, double s)
{
    if (s < 0)
        snprintf(out, n, "?");
    else if (s < 60)
        snprintf(out, n, "%ds", (int)(s + 0.5));
    else if (s < 3600)
        snprintf(out, n, "%dm%02ds", (int)s / 60, (int)s % 60);
    else
        snprintf(out, n, "%dh%02dm", (int)s / 3600, (int)s % 3600 / 60);
}

static void on_progress(void *ctx, const rt_tune_progress *p)
{
    view *v = ctx;
    if (!v->mode)
        return;
    char line[512], left[32], best[64] = "-", speed[32] = "";
    put_time(left, sizeof left, p->left);
    if (p->best_gflops > 0)
        snprintf(best, sizeof best, "%.1f GFLOP/s", p->best_gflops);
    if (p->best_gflops > 0 && p->default_gflops > 0)
        snprintf(speed, sizeof speed, " (%.2fx)", p->best_gflops / p->default_gflops);
    char trials[64];
    if (p->budget > 0)
        snprintf(trials, sizeof trials, "%lld/%lld", p->trials, p->budget);
    else
        snprintf(trials, sizeof trials, "%lld", p->trials);
    snprintf(line, sizeof line, "[%zu/%zu] task %zu %s %.16s: %s trials, %lld failed, best %s%s, %s left", p->pos + 1,
             p->npos, p->task, p->info->template_name, p->info->hash, trials, p->errors, best, speed, left);
    if (v->mode == 1) {
        if (!v->lines) {
            v->nlines = p->npos;
            v->lines = calloc(p->npos + 1, sizeof *v->lines);
        }
        if (p->pos < v->nlines) {
            char end[600];
            snprintf(end, sizeof end, "%s%s%s", line,
                     p->event != RT_TUNE_TASK_END ? "" : p->early_stopped ? " (early stop)" : " (done)",
                     p->failure ? " (not tuned)" : "");
            free(v->lines[p->pos]);
            v->lines[p->pos] = strdup(end);
            redraw(v);
        }
    } else if (p->event == RT_TUNE_BATCH) {
        fprintf(stderr, "%s\n", line);
    } else if (p->event == RT_TUNE_TASK_END && p->failure) {
        fprintf(stderr, "[%zu/%zu] task %zu not tuned: %s\n", p->pos + 1, p->npos, p->task, p->failure);
    }
    fflush(stderr);
}

static bool parse_num(const char *opt, const char *s, double lo, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= lo)) {
        cli_error("tune: %s needs a number of at least %g, not '%s'", opt, lo, s);
        return false;
    }
    *out = v;
    return true;
}

int cli_cmd_tune(int argc, char **argv)
{
    const char *file = NULL, *params = NULL, *dbpath = NULL, *progress = "auto";
    int random_params = 1, have_trials = 0, mpi = rt_mpi_launched();
    unsigned long long random_seed = 0;
    rt_opt_options oo = {.level = 3};
    rt_tune_options o = {0};
    o.target = "cpu";
    o.tuner = "xgb";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        double x;
#define NUM(name, lo, dst)                                   \
    else if (!strcmp(a, name) && v) {                        \
        if (!parse_num(name, v, lo, &x))                     \
            return 2;                                        \
        dst;                                                 \
        i++;                                                 \
    }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return 0;
        } else if (a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3' && !a[3]) {
            oo.level = a[2] - '0';
        } else if (!strcmp(a, "--target") && v) {
            o.target = argv[++i];
        } else if (!strcmp(a, "--db") && v) {
            dbpath = argv[++i];
        } else if (!strcmp(a, "--tuner") && v) {
            o.tuner = argv[++i];
        } else if (!strcmp(a, "--objective") && v) {
            o.objective = argv[++i];
        } else if (!strcmp(a, "--scheduler") && v) {
            o.scheduler = argv[++i];
        } else if (!strcmp(a, "--no-transfer")) {
            o.no_transfer = 1;
        } else if (!strcmp(a, "--tasks") && v) {
            o.tasks = argv[++i];
        } else if (!strcmp(a, "--params") && v) {
            params = argv[++i];
            random_params = 0;
        } else if (!strcmp(a, "--progress") && v) {
            progress = argv[++i];
        } else if (!strcmp(a, "--papi-events") && v) {
            o.papi_events = argv[++i];
        } else if (!strcmp(a, "--flush-cache")) {
            o.flush_cache = 1;
        } else if (!strcmp(a, "--mpi")) {
            mpi = 1;
        }
        NUM("--trials", 0, (o.trials = (long long)x, have_trials = 1))
        NUM("--random-params", 0, (random_params = 1, random_seed = (unsigned long long)x, params = NULL))
        NUM("--early-stopping", 0, o.early_stopping = (long long)x)
        NUM("--seed", 0, o.seed = (unsigned long long)x)
        NUM("--jobs", 1, o.jobs = (int)x)
        NUM("--batch", 1, o.batch = (int)x)
        NUM("--per-unit", 1, o.per_unit = (int)x)
        NUM("--plan-size", 1, o.plan_size = (int)x)
        NUM("--epsilon", 0, o.epsilon = x > 0 ? x : -1)
        NUM("--repeat", 1, o.repeat = (int)x)
        NUM("--min-repeat-ms", 0, o.min_repeat_ms = x > 0 ? (int)x : -1)
        NUM("--timeout", 0.001, o.run_timeout = x)
        NUM("--compile-timeout", 0.001, o.compile_timeout = x)
        else if (a[0] == '-') {
            cli_error("tune: unknown option '%s' (or it needs a value)", a);
            help(stderr);
            return 2;
        } else if (!file) {
            file = a;
        } else {
            cli_error("tune: more than one model");
            return 2;
        }
#undef NUM
    }
    if (!file || !have_trials) {
        if (file)
            cli_error("tune: --trials N is required");
        help(stderr);
        return 2;
    }
    view vw = {!strcmp(progress, "live") ? 1 : !strcmp(progress, "lines") ? 2 : !strcmp(progress, "none") ? 0 : -1};
    if (vw.mode < 0) {
        if (strcmp(progress, "auto") != 0) {
            cli_error("tune: --progress takes auto, live, lines or none");
            return 2;
        }
        vw.mode = isatty(2) ? 1 : 2;
    }
    if (rt_target_check(o.target, 1, stderr) != 0)
        return 1;
    /* first, before anything can start threads */
    rt_runner *runner = rt_runner_start(stderr);
    if (!runner)
        return 1;
    /* under MPI, the ranks other than 0 only build and measure */
    rt_mpi *job = mpi ? rt_mpi_start(stderr) : NULL;
    if (mpi && (!job || rt_mpi_rank(job) > 0)) {
        int src = job ? rt_mpi_serve(job, runner, o.target, o.jobs, stderr) : -1;
        rt_runner_stop(runner);
        rt_mpi_stop(job, src == 0 ? 0 : 1);
        return src == 0 ? 0 : 1;
    }
    o.mpi = job;
    int rc = 1;
    rt_db *db = NULL;
    rt_tune_report *rep = NULL;
    rt_module *m = cli_load_model(file, &params, params != NULL, random_params, random_seed);
    if (!m)
        goto done;
    if (rt_module_optimize(m, &oo, stderr) != 0)
        goto done;
    db = rt_db_open(dbpath ? dbpath : rt_db_default_path(), RT_DB_CREATE, stderr);
    if (!db)
        goto done;
    size_t cmdlen = 1;
    for (int i = 0; i < argc; i++)
        cmdlen += strlen(argv[i]) + 1;
    char *cmd = calloc(1, cmdlen + 16);
    strcpy(cmd, "relay-tune");
    for (int i = 0; i < argc; i++) {
        strcat(cmd, " ");
        strcat(cmd, argv[i]);
    }
    o.model = file;
    o.command = cmd;
    o.stop = &stop_flag;
    o.progress = on_progress;
    o.progress_ctx = &vw;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    int trc = rt_tune(m, runner, db, &o, &rep, stderr);
    sigaction(SIGINT, &old, NULL);
    free(cmd);
    if (rep) {
        char *text = rt_tune_report_text(rep);
        fputs(text, stdout);
        fflush(stdout);
        free(text);
    }
    rc = trc == 0 ? 0 : 1;
done:
    for (size_t i = 0; i < vw.nlines; i++)
        free(vw.lines[i]);
    free(vw.lines);
    rt_tune_report_free(rep);
    rt_db_close(db);
    rt_module_free(m);
    rt_runner_stop(runner);
    rt_mpi_stop(job, rc);
    return rc;
}
