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
            "usage: relay-tune tune MODEL.relay (--trials N | --time-budget T) [--target cpu|opencl] [--db DB]\n"
            "                       [--tuner xgb|ga|random|grid]\n"
            "                       [--scheduler gradient|fixed] [--no-transfer] [--confirm K]\n"
            "                       [--tasks SELECTION] [--early-stopping N] [--seed S] [--jobs J]\n"
            "                       [--params W.npz ...] [--random-params S] [-O0..3]\n"
            "                       [--plan-size N] [--objective rank|reg] [--epsilon F]\n"
            "  Searches each task's schedule, measuring every candidate in an isolated process and\n"
            "  checking it against the reference interpreter; every result goes into the database\n"
            "  (--db, else $RELAY_TUNE_DB, else ./relay-tune.db). Configs already measured for this\n"
            "  target count toward --trials and are not measured again: run the same command to\n"
            "  resume, raise --trials to tune longer. Ctrl-C stops after the batch in flight.\n"
            "  --trials N          trials over all tasks (each task's default config is always measured)\n"
            "  --time-budget T     wall time the run may take, confirmations included: 600, 90s, 10m,\n"
            "                      1h30m; the scheduler then weighs each task's gain per second of\n"
            "                      measuring (with --trials too, whichever runs out first ends the run)\n"
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
            "  --layout-block N [--layout-auto]   tune the convs in NCHW[x]c; with --layout-auto a task per\n"
            "                      conv and candidate block, which compile --layout-auto --db then chooses among\n"
            "  --winograd [auto|all|off] [--winograd-tile 2|4]   the 3x3 stride-1 convs tuned as Winograd\n"
            "                          convs: auto (default) where the target's vectors make it pay, all\n"
            "                          every one, off none (docs/winograd.md)\n"
            "  --early-stopping N  stop a task after N trials without improvement\n"
            "  --seed S            the tuners' and the inputs' seed (default 0)\n"
            "  --jobs J            compilers at once (default: the cores)\n"
            "  --confirm K         when a task ends, re-measure its best K configs side by side (3; 0:\n"
            "                      never) --confirm-rounds R times each (3): compiling uses the best median\n"
            "  --params W.npz      the model's weights (may be given several times); --random-params S\n"
            "                      seeded ones (the default, seed 0: schedules depend on shapes, not on\n"
            "                      values); with both, seeded ones for the parameters the files leave\n"
            "  measurement: --batch N (configs per batch), --per-unit N (candidates per compiler run),\n"
            "  --repeat N (3), --min-repeat-ms MS (10), --timeout S (10, per run), --compile-timeout S\n"
            "  (60, per candidate), --flush-cache, --papi-events A,B (PAPI counters where the host has them),\n"
            "  --cutoff F (2: a candidate F times slower than its task's best gets no more repeats; 0: all)\n"
            "  --progress auto|live|lines|none   how progress is shown on stderr (auto: live on a terminal)\n"
            "  --profile           end with where the run's time went: proposing, learning, code\n"
            "                      generation, compiling, loading, checking, timing, storing, ...\n"
            "  --mpi               under mpirun (also implied there): rank 0 tunes and writes the database,\n"
            "                      the other ranks build and measure (docs/distributed.md)\n"
            "  --target T          the target to tune for (cpu); given several times, the run tunes each task\n"
            "                      for every target at once, --trials spread over all of them\n"
            "  --rank-target T     under MPI: the target this rank measures for (default: the first --target);\n"
            "                      rank 0 measures only its own target's tasks, the ranks of the others theirs\n");
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
    char on[300] = "";
    if (p->ntargets > 1)
        snprintf(on, sizeof on, " on '%s'", p->target);
    snprintf(line, sizeof line, "[%zu/%zu] task %zu%s %s %.16s: %s trials, %lld failed, best %s%s, %s left", p->pos + 1,
             p->npos, p->task, on, p->info->template_name, p->info->hash, trials, p->errors, best, speed, left);
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

/* The progress view --progress asks for (view.mode); -1 after a message. */
static int view_mode(const char *progress)
{
    static const char *const modes[] = {"none", "live", "lines"};
    if (!progress || !strcmp(progress, "auto"))
        return isatty(2) ? 1 : 2;
    for (int i = 0; i < 3; i++)
        if (!strcmp(progress, modes[i]))
            return i;
    cli_error("tune: --progress takes auto, live, lines or none");
    return -1;
}

/* The command line, stored with the session: "relay-tune tune ..." (malloc'd). */
static char *command_line(int argc, char **argv)
{
    size_t len = strlen("relay-tune") + 1;
    for (int i = 0; i < argc; i++)
        len += strlen(argv[i]) + 1;
    char *cmd = malloc(len);
    strcpy(cmd, "relay-tune");
    for (int i = 0; i < argc; i++) {
        strcat(cmd, " ");
        strcat(cmd, argv[i]);
    }
    return cmd;
}

/* The model with its weights (--params, else seeded random ones; with
 * both, random ones for what the files leave), optimized; NULL after a message. */
static rt_module *load_model(const cli_opts *o)
{
    rt_module *m = cli_load_model(o->model, o->params.v, o->params.n, o->random || !o->params.n, o->seed);
    rt_opt_options opt = o->opt;
    opt.layout_tasks = opt.layout_auto; /* --layout-auto tunes every candidate block (docs/layouts.md) */
    opt.winograd_target = o->target; /* the first --target's vectors, for --winograd auto */
    if (m && rt_module_optimize(m, &opt, stderr) != 0) {
        rt_module_free(m);
        m = NULL;
    }
    return m;
}

/* Tunes with Ctrl-C finishing the batch in flight; prints the report. */
static int tune(rt_module *m, rt_runner *runner, rt_db *db, rt_tune_options *t, view *vw)
{
    t->stop = &stop_flag;
    t->progress = on_progress;
    t->progress_ctx = vw;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    rt_tune_report *rep = NULL;
    int trc = rt_tune(m, runner, db, t, &rep, stderr);
    sigaction(SIGINT, &old, NULL);
    if (rep) {
        char *text = rt_tune_report_text(rep);
        fputs(text, stdout);
        fflush(stdout);
        free(text);
    }
    rt_tune_report_free(rep);
    return trc == 0 ? 0 : 1;
}

int cli_cmd_tune(int argc, char **argv)
{
    cli_opts o = {.cmd = "tune", .opt = {.level = 3, .winograd = RT_WINOGRAD_AUTO}, .tune = {.tuner = "xgb"}};
    int rc = cli_options_parse(&o, CLI_TUNE, argc, argv, help);
    if (rc < 0 && !cli_option_given(&o, "--trials") && !cli_option_given(&o, "--time-budget")) {
        cli_error("tune: --trials N or --time-budget DURATION is required");
        help(stderr);
        rc = 2;
    }
    view vw = {rc < 0 ? view_mode(o.progress) : 0, NULL, 0, 0};
    if (rc < 0 && vw.mode < 0)
        rc = 2;
    if (rc >= 0) {
        cli_opts_free(&o);
        return rc;
    }
    o.target = o.targets.n ? o.targets.v[0] : NULL;
    const char *mine = o.tune.rank_target ? o.tune.rank_target : o.target ? o.target : "cpu";
    /* first, before anything can start threads; and before the targets'
     * checks, which for an opencl target start the OpenCL driver, whose
     * state the runner's children must not inherit (they start their own) */
    rt_runner *runner = rt_runner_start(stderr);
    /* the target this process measures for must run here; one process
     * measures every target, while under MPI the others are their own
     * ranks' (rank 0 checks that they parse, a worker need not know them) */
    bool alone = !o.mpi && !rt_mpi_launched(), ok = runner != NULL;
    for (int k = 0; ok && alone && k < o.targets.n; k++)
        ok = rt_target_check(o.targets.v[k], 1, stderr) == 0;
    if (!ok || rt_target_check(mine, 1, stderr) != 0) {
        rt_runner_stop(runner);
        cli_opts_free(&o);
        return 1;
    }
    /* under MPI, the ranks other than 0 only build and measure */
    bool mpi = o.mpi || rt_mpi_launched();
    rt_mpi *job = mpi ? rt_mpi_start(stderr) : NULL;
    if (mpi && (!job || rt_mpi_rank(job) > 0)) {
        int src = job ? rt_mpi_serve(job, runner, mine, o.tune.jobs, stderr) : -1;
        rt_runner_stop(runner);
        rt_mpi_stop(job, src == 0 ? 0 : 1);
        cli_opts_free(&o);
        return src == 0 ? 0 : 1;
    }
    o.tune.mpi = job;
    rc = 1;
    rt_db *db = NULL;
    char *cmd = command_line(argc, argv);
    rt_module *m = load_model(&o);
    if (m)
        db = rt_db_open(o.db ? o.db : rt_db_default_path(), RT_DB_CREATE, stderr);
    if (db) {
        o.tune.target = o.target ? o.target : "cpu";
        o.tune.targets = o.targets.v;
        o.tune.ntargets = o.targets.n;
        o.tune.model = o.model;
        o.tune.command = cmd;
        rc = tune(m, runner, db, &o.tune, &vw);
    }
    for (size_t i = 0; i < vw.nlines; i++)
        free(vw.lines[i]);
    free(vw.lines);
    free(cmd);
    rt_db_close(db);
    rt_module_free(m);
    rt_runner_stop(runner);
    rt_mpi_stop(job, rc);
    cli_opts_free(&o);
    return rc;
}
