/* options.c — the one option table of the commands that read a model (run,
 * compile, bench, tune, opt, tasks, lower; parse and import): each row names an option, the commands that take
 * it, how its value is read and where it goes, so that an option shared by
 * several commands is spelt, checked and stored once, and the weight
 * options mean the same everywhere. Also the phases those commands share:
 * the --input files, and a model compiled into the cache. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

typedef enum {
    OPT_STR,        /* a word, the last one given */
    OPT_LIST,       /* a word, each one given, in order */
    OPT_FLAG,       /* no value: sets an int to 1 */
    OPT_SEED,       /* --random-params SEED: random weights (and inputs) from SEED */
    OPT_COUNT,      /* a whole number in [lo, hi] */
    OPT_REAL,       /* a number of at least lo */
    OPT_LEVEL,      /* -O0 .. -O3, no separate value */
    OPT_CHECK,      /* --check [SEED]: a flag, and a seed when the next word is a number */
    OPT_DURATION,   /* seconds: 90, 90s, 10m, 1h30m (a positive total) */
    OPT_WINOGRAD,   /* --winograd [auto|all|off]: 1 (all, also without the word), RT_WINOGRAD_AUTO, 0 */
} opt_kind;

typedef enum { AS_INT, AS_LL, AS_ULL, AS_DBL } opt_store;

typedef struct opt_row {
    const char *name;
    unsigned cmds;          /* CLI_RUN | ...: the commands that take it */
    opt_kind kind;
    size_t off;             /* where the value goes in cli_opts */
    opt_store as;           /* COUNT, REAL: the destination's type */
    double lo, hi;          /* COUNT: the range; REAL: the least value */
    bool zero_off;          /* 0 means "none" and is stored as -1 (the API reads 0 as its default) */
    bool alone;             /* the whole request: the command needs no model then */
} opt_row;

#define AT(field) offsetof(cli_opts, field)
#define MODEL_CMDS (CLI_RUN | CLI_COMPILE | CLI_BENCH | CLI_TUNE | CLI_OPT | CLI_TASKS | CLI_LOWER)
#define COMPILED_CMDS (CLI_RUN | CLI_COMPILE | CLI_BENCH | CLI_TUNE)

static const opt_row rows[] = {
    /* the weights: every command that takes a model */
    {"--params", MODEL_CMDS, OPT_LIST, AT(params), AS_INT, 0, 0, false},
    {"--random-params", MODEL_CMDS, OPT_SEED, AT(seed), AS_ULL, 0, 0, false},
    {"--input", CLI_RUN | CLI_BENCH, OPT_LIST, AT(inputs), AS_INT, 0, 0, false},
    /* the target, and the tuned configs of the commands that compile */
    {"--target", MODEL_CMDS & ~CLI_TUNE, OPT_STR, AT(target), AS_INT, 0, 0, false},
    /* tune: one or several targets at once (a task per task and target) */
    {"--target", CLI_TUNE, OPT_LIST, AT(targets), AS_INT, 0, 0, false},
    {"--rank-target", CLI_TUNE, OPT_STR, AT(tune.rank_target), AS_INT, 0, 0, false},
    {"--db", COMPILED_CMDS | CLI_OPT, OPT_STR, AT(db), AS_INT, 0, 0, false},
    /* the optimization */
    {"-O", CLI_TUNE | CLI_OPT | CLI_TASKS | CLI_LOWER, OPT_LEVEL, AT(opt.level), AS_INT, 0, 0, false},
    /* run */
    {"--output", CLI_RUN, OPT_STR, AT(output), AS_INT, 0, 0, false},
    {"--output-dir", CLI_RUN, OPT_STR, AT(output_dir), AS_INT, 0, 0, false},
    /* compile */
    {"-o", CLI_COMPILE | CLI_OPT | CLI_PARSE | CLI_IMPORT, OPT_STR, AT(out), AS_INT, 0, 0, false},
    {"-j", CLI_COMPILE, OPT_COUNT, AT(jobs), AS_INT, 0, INT_MAX, false},
    /* bench */
    {"--repeat", CLI_BENCH, OPT_COUNT, AT(runs), AS_INT, 1, 1000000, false},
    {"--warmup", CLI_BENCH, OPT_COUNT, AT(warmup), AS_INT, 0, 1000000, false},
    {"--json", CLI_BENCH | CLI_TASKS, OPT_FLAG, AT(json), AS_INT, 0, 0, false},
    {"--profile", CLI_BENCH, OPT_FLAG, AT(profile), AS_INT, 0, 0, false},
    /* opt */
    {"--print-after", CLI_OPT, OPT_STR, AT(opt.print_after), AS_INT, 0, 0, false},
    {"--print-after-all", CLI_OPT, OPT_FLAG, AT(opt.print_after_all), AS_INT, 0, 0, false},
    {"--layout-block", CLI_OPT | CLI_RUN | CLI_COMPILE | CLI_BENCH | CLI_TUNE | CLI_TASKS | CLI_LOWER, OPT_COUNT, AT(opt.layout_block), AS_INT, 0, 4096, false},
    {"--layout-auto", CLI_OPT | CLI_RUN | CLI_COMPILE | CLI_BENCH | CLI_TUNE | CLI_TASKS | CLI_LOWER, OPT_FLAG, AT(opt.layout_auto), AS_INT, 0, 0, false},
    {"--winograd", CLI_OPT | CLI_RUN | CLI_COMPILE | CLI_BENCH | CLI_TUNE | CLI_TASKS | CLI_LOWER, OPT_WINOGRAD, AT(opt.winograd), AS_INT, 0, 0, false},
    {"--winograd-tile", CLI_OPT | CLI_RUN | CLI_COMPILE | CLI_BENCH | CLI_TUNE | CLI_TASKS | CLI_LOWER, OPT_COUNT, AT(opt.winograd_tile), AS_INT, 2, 4, false},
    {"--max-fuse-depth", CLI_OPT, OPT_COUNT, AT(opt.max_fuse_depth), AS_INT, 1, INT_MAX, false},
    {"--check", CLI_OPT, OPT_CHECK, AT(opt.check_seed), AS_ULL, 0, 0, false},
    {"--stats", CLI_OPT, OPT_FLAG, AT(stats), AS_INT, 0, 0, false},
    {"--no-types", CLI_OPT | CLI_PARSE | CLI_IMPORT, OPT_FLAG, AT(no_types), AS_INT, 0, 0, false},
    {"--list-passes", CLI_OPT, OPT_FLAG, AT(list_passes), AS_INT, 0, 0, false, true},
    /* import */
    {"--params-out", CLI_IMPORT, OPT_STR, AT(params_out), AS_INT, 0, 0, false},
    /* tasks */
    {"--keys", CLI_TASKS, OPT_FLAG, AT(keys), AS_INT, 0, 0, false},
    {"--space", CLI_TASKS, OPT_FLAG, AT(space), AS_INT, 0, 0, false},
    /* lower */
    {"--task", CLI_LOWER, OPT_COUNT, AT(task), AS_LL, 0, (double)LLONG_MAX, false},
    {"--config", CLI_LOWER, OPT_STR, AT(config), AS_INT, 0, 0, false},
    {"--emit", CLI_LOWER, OPT_STR, AT(emit), AS_INT, 0, 0, false},
    /* tune: the search and the measurements */
    {"--trials", CLI_TUNE, OPT_COUNT, AT(tune.trials), AS_LL, 0, (double)LLONG_MAX, false},
    {"--time-budget", CLI_TUNE, OPT_DURATION, AT(tune.time_budget), AS_DBL, 0, 0, false},
    {"--tuner", CLI_TUNE, OPT_STR, AT(tune.tuner), AS_INT, 0, 0, false},
    {"--plan-size", CLI_TUNE, OPT_COUNT, AT(tune.plan_size), AS_INT, 1, INT_MAX, false},
    {"--objective", CLI_TUNE, OPT_STR, AT(tune.objective), AS_INT, 0, 0, false},
    {"--epsilon", CLI_TUNE, OPT_REAL, AT(tune.epsilon), AS_DBL, 0, 0, true},
    {"--scheduler", CLI_TUNE, OPT_STR, AT(tune.scheduler), AS_INT, 0, 0, false},
    {"--no-transfer", CLI_TUNE, OPT_FLAG, AT(tune.no_transfer), AS_INT, 0, 0, false},
    {"--tasks", CLI_TUNE, OPT_STR, AT(tune.tasks), AS_INT, 0, 0, false},
    {"--early-stopping", CLI_TUNE, OPT_COUNT, AT(tune.early_stopping), AS_LL, 0, (double)LLONG_MAX, false},
    {"--seed", CLI_TUNE, OPT_COUNT, AT(tune.seed), AS_ULL, 0, (double)LLONG_MAX, false},
    {"--jobs", CLI_TUNE, OPT_COUNT, AT(tune.jobs), AS_INT, 1, INT_MAX, false},
    {"--batch", CLI_TUNE, OPT_COUNT, AT(tune.batch), AS_INT, 1, INT_MAX, false},
    {"--confirm", CLI_TUNE, OPT_COUNT, AT(tune.confirm), AS_INT, 0, INT_MAX, true},
    {"--confirm-rounds", CLI_TUNE, OPT_COUNT, AT(tune.confirm_rounds), AS_INT, 1, INT_MAX, false},
    {"--per-unit", CLI_TUNE, OPT_COUNT, AT(tune.per_unit), AS_INT, 1, INT_MAX, false},
    {"--repeat", CLI_TUNE, OPT_COUNT, AT(tune.repeat), AS_INT, 1, INT_MAX, false},
    {"--min-repeat-ms", CLI_TUNE, OPT_COUNT, AT(tune.min_repeat_ms), AS_INT, 0, INT_MAX, true},
    {"--timeout", CLI_TUNE, OPT_REAL, AT(tune.run_timeout), AS_DBL, 0.001, 0, false},
    {"--compile-timeout", CLI_TUNE, OPT_REAL, AT(tune.compile_timeout), AS_DBL, 0.001, 0, false},
    {"--flush-cache", CLI_TUNE, OPT_FLAG, AT(tune.flush_cache), AS_INT, 0, 0, false},
    {"--papi-events", CLI_TUNE, OPT_STR, AT(tune.papi_events), AS_INT, 0, 0, false},
    {"--progress", CLI_TUNE, OPT_STR, AT(progress), AS_INT, 0, 0, false},
    {"--profile", CLI_TUNE, OPT_FLAG, AT(tune.profile), AS_INT, 0, 0, false},
    {"--mpi", CLI_TUNE, OPT_FLAG, AT(mpi), AS_INT, 0, 0, false},
    {"--cutoff", CLI_TUNE, OPT_REAL, AT(tune.cutoff), AS_DBL, 0, 0, true},
};

enum { NROWS = sizeof rows / sizeof rows[0] };
_Static_assert(NROWS <= 64, "cli_opts.given has a bit per row");

/* --winograd's word: its value (1 all, RT_WINOGRAD_AUTO, 0 off), or -1 for
 * a word that is not one (the next operand, then). */
static int winograd_word(const char *w)
{
    return !strcmp(w, "all") ? 1 : !strcmp(w, "auto") ? RT_WINOGRAD_AUTO : !strcmp(w, "off") ? 0 : -1;
}

static bool takes_value(const opt_row *r)
{
    return r->kind != OPT_FLAG && r->kind != OPT_LEVEL && r->kind != OPT_CHECK && r->kind != OPT_WINOGRAD;
}

/* The row of option a for command cmd, or -1; an option that needs a value
 * and has none does not match (cli_model_operand then says so). */
static int row_of(unsigned cmd, const char *a, bool has_value)
{
    for (int i = 0; i < NROWS; i++) {
        const opt_row *r = &rows[i];
        if (!(r->cmds & cmd))
            continue;
        if (r->kind == OPT_LEVEL ? !strncmp(a, r->name, 2) && a[2] >= '0' && a[2] <= '3' && !a[3]
                                 : !strcmp(a, r->name) && (has_value || !takes_value(r)))
            return i;
    }
    return -1;
}

/* Reads a --random-params seed; false after a message. */
static bool parse_seed(const char *cmd, const char *s, unsigned long long *seed)
{
    char *end;
    errno = 0;
    *seed = strtoull(s, &end, 10);
    if (!*s || *end || *s == '-' || errno) {
        cli_error("%s: --random-params needs a seed (a non-negative integer), not '%s'", cmd, s);
        return false;
    }
    return true;
}

/* Reads a duration: numbers each followed by h, m or s (s when last and
 * bare), adding up to more than 0 seconds; false after a message. */
static bool read_duration(const char *cmd, const char *name, const char *s, double *x)
{
    double total = 0;
    const char *p = s;
    bool ok = *p != 0;
    while (ok && *p) {
        char *end;
        double v = strtod(p, &end);
        ok = end != p && v >= 0 && *p != '-' && *p != '+';
        p = end;
        double unit = *p == 'h' ? 3600 : *p == 'm' ? 60 : 1;
        if (ok && (*p == 'h' || *p == 'm' || *p == 's'))
            p++;
        else
            ok = ok && !*p;
        total += v * unit;
    }
    if (!ok || !(total > 0) || total > 1e9) {
        cli_error("%s: %s takes a duration such as 600, 90s, 10m or 1h30m, not '%s'", cmd, name, s);
        return false;
    }
    *x = total;
    return true;
}

/* Reads a COUNT or REAL value into x; false after a message. */
static bool read_number(const char *cmd, const opt_row *r, const char *s, double *x)
{
    char *end;
    errno = 0;
    if (r->kind == OPT_COUNT) {
        long long v = strtoll(s, &end, 10);
        if (end == s || *end || errno || (double)v < r->lo || (double)v > r->hi) {
            if (r->hi >= INT_MAX)
                cli_error("%s: %s takes a whole number of at least %.0f, not '%s'", cmd, r->name, r->lo, s);
            else
                cli_error("%s: %s takes a whole number from %.0f to %.0f, not '%s'", cmd, r->name, r->lo, r->hi, s);
            return false;
        }
        *x = (double)v;
        return true;
    }
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= r->lo)) {
        cli_error("%s: %s needs a number of at least %g, not '%s'", cmd, r->name, r->lo, s);
        return false;
    }
    *x = v;
    return true;
}

static void store_number(void *dst, const opt_row *r, double x)
{
    if (r->zero_off && x == 0)
        x = -1;
    switch (r->as) {
    case AS_INT: *(int *)dst = (int)x; break;
    case AS_LL: *(long long *)dst = (long long)x; break;
    case AS_ULL: *(unsigned long long *)dst = (unsigned long long)x; break;
    case AS_DBL: *(double *)dst = x; break;
    }
}

/* Stores option a (row r) with value v (NULL when it takes none); false after a message. */
static bool store(cli_opts *o, const opt_row *r, const char *a, const char *v)
{
    void *dst = (char *)o + r->off;
    double x;
    switch (r->kind) {
    case OPT_STR: *(const char **)dst = v; return true;
    case OPT_LIST: {
        cli_list *l = dst;
        l->v = realloc(l->v, sizeof *l->v * (size_t)(l->n + 1));
        l->v[l->n++] = v;
        return true;
    }
    case OPT_FLAG: *(int *)dst = 1; return true;
    case OPT_WINOGRAD: *(int *)dst = v ? winograd_word(v) : 1; return true;
    case OPT_SEED:
        o->random = true;
        return parse_seed(o->cmd, v, dst);
    case OPT_LEVEL: *(int *)dst = a[2] - '0'; return true;
    case OPT_CHECK:
        o->opt.check = 1;
        if (v)
            *(unsigned long long *)dst = strtoull(v, NULL, 10);
        return true;
    case OPT_COUNT:
    case OPT_REAL:
        if (!read_number(o->cmd, r, v, &x))
            return false;
        store_number(dst, r, x);
        return true;
    case OPT_DURATION:
        if (!read_duration(o->cmd, r->name, v, &x))
            return false;
        *(double *)dst = x;
        return true;
    }
    return false;
}

int cli_options_parse(cli_opts *o, unsigned cmd, int argc, char **argv, void (*help)(FILE *))
{
    bool alone = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return 0;
        }
        int k = row_of(cmd, a, has_value);
        if (k < 0) {
            if (!cli_model_operand(o->cmd, a, has_value, &o->model, help))
                return 2;
            continue;
        }
        const char *v = takes_value(&rows[k]) ? argv[++i] : NULL;
        /* --check's seed is optional: the next word when it is a number */
        if (rows[k].kind == OPT_CHECK && has_value && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9')
            v = argv[++i];
        /* --winograd's word too: auto, all or off */
        if (rows[k].kind == OPT_WINOGRAD && has_value && winograd_word(argv[i + 1]) >= 0)
            v = argv[++i];
        if (!store(o, &rows[k], a, v))
            return 2;
        o->given |= UINT64_C(1) << k;
        alone |= rows[k].alone;
    }
    if (!o->model && !alone) {
        help(stderr);
        return 2;
    }
    /* --winograd-tile alone means every eligible conv at that tile, as before
       the automatic choice was the default */
    if (cli_option_given(o, "--winograd-tile") && !cli_option_given(o, "--winograd"))
        o->opt.winograd = 1;
    return -1;
}

bool cli_option_given(const cli_opts *o, const char *name)
{
    for (int i = 0; i < NROWS; i++)
        if (!strcmp(rows[i].name, name) && (o->given >> i & 1))
            return true;
    return false;
}

void cli_opts_free(cli_opts *o)
{
    free(o->params.v);
    free(o->inputs.v);
    free(o->targets.v);
    o->params = o->inputs = o->targets = (cli_list){0};
}

bool cli_is_so(const char *model)
{
    size_t len = strlen(model);
    return len > 3 && !strcmp(model + len - 3, ".so");
}

int cli_load_inputs(const cli_opts *o, rt_inputs *in)
{
    for (int i = 0; i < o->inputs.n; i++) {
        const char *a = o->inputs.v[i], *eq = strchr(a, '=');
        if (!eq || eq == a || !eq[1]) {
            cli_error("%s: --input takes NAME=FILE.npy, not '%s'", o->cmd, a);
            return 2;
        }
        char *name = strndup(a, (size_t)(eq - a));
        if (name[0] == '%')
            memmove(name, name + 1, strlen(name));
        rt_tensor *t = rt_tensor_load(eq + 1, stderr);
        if (t)
            rt_inputs_set(in, name, t, eq + 1, 1);
        free(name);
        if (!t)
            return 1;
    }
    return 0;
}

rt_cmodel *cli_load_compiled(const cli_opts *o, bool random_weights, const rt_inputs *in, bool random_inputs)
{
    char *path = NULL;
    bool so = cli_is_so(o->model);
    if (!so) {
        rt_compile_options co = {0};
        co.target = o->target;
        co.db_path = o->db;
        path = cli_compile(o->model, o->params.v, o->params.n, random_weights, o->seed, &o->opt, &co, NULL,
                           NULL);
        if (!path)
            return NULL;
    }
    rt_cmodel *cm = rt_cmodel_load(path ? path : o->model, stderr);
    free(path);
    if (cm && rt_cmodel_set_inputs(cm, in, random_inputs, o->seed, stderr) != 0) {
        rt_cmodel_free(cm);
        cm = NULL;
    }
    return cm;
}
