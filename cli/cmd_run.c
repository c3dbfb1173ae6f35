/* cmd_run.c — `relay-tune run MODEL.relay|MODEL.so`: runs a model's @main on
 * inputs read from .npz/.npy files (or seeded random values) with the
 * interpreter, or a compiled model (a .so, or a .relay compiled into the
 * cache with --target cpu), and writes or summarizes its result. Exit 0 on success, 1 when the model, a file or the
 * run fails, 2 for a usage error. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"

static void help(FILE *out)
{
    fprintf(out,
            "usage: relay-tune run MODEL.relay|MODEL.so [--params W.npz] [--input NAME=FILE.npy ...]\n"
            "                      [--output OUT.npy | --output-dir DIR] [--target interp|cpu|opencl]\n"
            "                      [--random-params SEED] [--db DB] [--layout-block N]\n"
            "  Runs @main of MODEL.relay and prints how long it took. Each parameter of @main\n"
            "  takes its value from --params or --input, by its name without the %%.\n"
            "  MODEL.so, a model compiled by `relay-tune compile`, runs natively; so does\n"
            "  MODEL.relay with --target cpu, compiled into the cache first (--params and\n"
            "  --random-params then bind weights, --db picks tuned configs, and the inputs\n"
            "  are the parameters left).\n"
            "  --params W.npz          arrays of an .npz (numpy.savez or savez_compressed);\n"
            "                          may be given several times\n"
            "  --input NAME=FILE.npy   the value of parameter %%NAME (overrides --params)\n"
            "  --random-params SEED    fill every parameter not given with seeded values\n"
            "                          (distributions: docs/interpreter.md)\n"
            "  --output OUT.npy        write the result (a tensor) to OUT.npy\n"
            "  --output-dir DIR        write each tensor of the result to DIR/I.npy, I being its\n"
            "                          index in the result tuple (0.npy for a single tensor;\n"
            "                          1.0.npy for field 0 of field 1)\n"
            "  --target interp|cpu|opencl  where to run: the reference interpreter (the default for a\n"
            "                          .relay), compiled for this CPU, or for an OpenCL device\n"
            "  --db DB                 (cpu) tuned configs from database DB\n"
            "  --layout-block N        (cpu) convs in NCHW[x]c, x up to N (docs/layouts.md)\n"
            "  --winograd [auto|all|off] [--winograd-tile 2|4]  (cpu) 3x3 stride-1 convs as Winograd convs:\n"
            "                          auto (default) where the target's vectors make it pay, all every\n"
            "                          one, off none (docs/winograd.md)\n"
            "  Without --output or --output-dir it prints each result tensor's type and a\n"
            "  summary of its values.\n");
}

/* Prints t's type and a summary of its values. */
static void summarize(const rt_tensor *t, const char *name)
{
    char *ty = rt_tensor_type(t);
    size_t n = 1;
    for (int i = 0; i < rt_tensor_ndim(t); i++)
        n *= (size_t)rt_tensor_shape(t)[i];
    printf("result%s%s: %s", *name ? " " : "", name, ty);
    free(ty);
    const char *dt = rt_tensor_dtype(t);
    const void *data = rt_tensor_cdata(t);
    if (n > 0 && (!strcmp(dt, "float32") || !strcmp(dt, "float64") || !strcmp(dt, "int32") || !strcmp(dt, "int64"))) {
        double lo = INFINITY, hi = -INFINITY, sum = 0;
        for (size_t i = 0; i < n; i++) {
            double v = !strcmp(dt, "float32") ? ((const float *)data)[i]
                       : !strcmp(dt, "float64") ? ((const double *)data)[i]
                       : !strcmp(dt, "int32") ? ((const int32_t *)data)[i]
                                              : (double)((const int64_t *)data)[i];
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
            sum += v;
        }
        printf("  min %.6g  max %.6g  mean %.6g", lo, hi, sum / (double)n);
        if (n <= 8) {
            printf("  [");
            for (size_t i = 0; i < n; i++)
                printf("%s%.6g", i ? ", " : "",
                       !strcmp(dt, "float32") ? ((const float *)data)[i]
                       : !strcmp(dt, "float64") ? ((const double *)data)[i]
                       : !strcmp(dt, "int32") ? ((const int32_t *)data)[i]
                                              : (double)((const int64_t *)data)[i]);
            printf("]");
        }
    }
    printf("\n");
}

/* A result: its tensors and their names, and what holds them. */
typedef struct outs {
    size_t n;
    const rt_tensor **t;
    const char **name;
    bool tuple;
    double seconds;         /* how long the run took */
    rt_module *m;           /* interp: the model and its result */
    rt_result *r;
    rt_cmodel *cm;          /* compiled: the model, its outputs and their names */
    rt_tensor **owned;
    char (*names)[24];
} outs;

static void outs_free(outs *r)
{
    for (size_t i = 0; r->owned && i < r->n; i++)
        rt_tensor_free(r->owned[i]);
    free(r->owned);
    free(r->names);
    free(r->t);
    free(r->name);
    rt_cmodel_free(r->cm);
    rt_result_free(r->r);
    rt_module_free(r->m);
}

static void outs_alloc(outs *r, size_t n, bool tuple)
{
    r->n = n;
    r->tuple = tuple;
    r->t = calloc(n + 1, sizeof *r->t);
    r->name = calloc(n + 1, sizeof *r->name);
}

/* Writes every tensor of r into dir (created when missing). */
static int write_dir(const outs *r, const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        cli_error("run: cannot create directory %s: %s", dir, strerror(errno));
        return 1;
    }
    for (size_t i = 0; i < r->n; i++) {
        const char *name = *r->name[i] ? r->name[i] : "0";
        size_t len = strlen(dir) + strlen(name) + 8;
        char *path = malloc(len);
        snprintf(path, len, "%s/%s.npy", dir, name);
        int rc = rt_tensor_save(r->t[i], path, stderr);
        free(path);
        if (rc)
            return 1;
    }
    return 0;
}

/* Runs natively: MODEL.so, or MODEL.relay compiled into the cache. */
static int run_compiled(const cli_opts *o, const rt_inputs *in, outs *res)
{
    if (!cli_is_so(o->model) && rt_target_check(o->target, 1, stderr) != 0)
        return 1;
    if (!(res->cm = cli_load_compiled(o, o->random, in, o->random)))
        return 1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (rt_cmodel_run(res->cm, stderr) != 0)
        return 1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    res->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    size_t n = rt_cmodel_num_outputs(res->cm);
    outs_alloc(res, n, n != 1);
    res->owned = calloc(n + 1, sizeof *res->owned);
    res->names = calloc(n + 1, sizeof *res->names);
    for (size_t i = 0; i < n; i++) {
        res->owned[i] = rt_cmodel_output(res->cm, i);
        if (res->tuple)
            snprintf(res->names[i], sizeof res->names[i], "%zu", i);
        res->t[i] = res->owned[i];
        res->name[i] = res->names[i];
    }
    return 0;
}

/* Runs @main with the reference interpreter. */
static int run_interp(const cli_opts *o, const rt_inputs *in, outs *res)
{
    rt_run_options opts = {0};
    opts.target = o->target;
    opts.random_params = o->random;
    opts.seed = (uint64_t)o->seed;
    opts.missing_hint = "(give it with --params FILE.npz or --input NAME=FILE.npy, or use --random-params SEED)";
    if (!(res->m = rt_module_load(o->model, stderr)) || !(res->r = rt_run(res->m, in, &opts, stderr)))
        return 1;
    outs_alloc(res, rt_result_count(res->r), rt_result_is_tuple(res->r));
    for (size_t i = 0; i < res->n; i++) {
        res->t[i] = rt_result_tensor(res->r, i);
        res->name[i] = rt_result_name(res->r, i);
    }
    res->seconds = rt_result_seconds(res->r);
    return 0;
}

/* Writes the result where the options say, or summarizes it. */
static int write_result(const cli_opts *o, const outs *res)
{
    if (o->output) {
        if (res->tuple) {
            cli_error("run: the result is a tuple of %zu tensors: write it with --output-dir DIR", res->n);
            return 1;
        }
        return rt_tensor_save(res->t[0], o->output, stderr) ? 1 : 0;
    }
    if (o->output_dir)
        return write_dir(res, o->output_dir);
    for (size_t i = 0; i < res->n; i++)
        summarize(res->t[i], res->name[i]);
    return 0;
}

/* Whether the model runs natively: a .so, or a target other than interp. */
static bool is_native(const cli_opts *o)
{
    return cli_is_so(o->model) || (o->target && strcmp(o->target, "interp") != 0);
}

/* The options' checks beyond the table: -1 to go on, else the status. */
static int check_options(const cli_opts *o)
{
    if (o->output && o->output_dir) {
        cli_error("run: give --output or --output-dir, not both");
        return 2;
    }
    if (cli_is_so(o->model) && (o->params.n || o->db)) {
        cli_error("run: %s is compiled already: its weights and configs are in it (no --params or --db)", o->model);
        return 2;
    }
    if (!is_native(o) && o->db) {
        cli_error("run: --db is for --target cpu");
        return 2;
    }
    return -1;
}

/* The inputs: --input files and, for the interpreter, the --params arrays
 * (a compiled model binds those as weights instead). */
static int load_inputs(const cli_opts *o, rt_inputs *in)
{
    if (!is_native(o))
        for (int i = 0; i < o->params.n; i++)
            if (rt_inputs_load_npz(in, o->params.v[i], stderr))
                return 1;
    return cli_load_inputs(o, in);
}

int cli_cmd_run(int argc, char **argv)
{
    cli_opts o = {.cmd = "run", .opt = {.winograd = RT_WINOGRAD_AUTO}};
    int rc = cli_options_parse(&o, CLI_RUN, argc, argv, help);
    if (rc < 0)
        rc = check_options(&o);
    if (rc >= 0) {
        cli_opts_free(&o);
        return rc;
    }
    rt_inputs *in = rt_inputs_new();
    outs res = {0};
    rc = load_inputs(&o, in);
    if (rc == 0)
        rc = is_native(&o) ? run_compiled(&o, in, &res) : run_interp(&o, in, &res);
    if (rc == 0)
        rc = write_result(&o, &res);
    if (rc == 0 && !is_native(&o))
        printf("ran @main of %s on %s in %.3f s\n", o.model, o.target ? o.target : "interp", res.seconds);
    else if (rc == 0) /* the object says what it runs on (a .so names no target) */
        printf("ran @main of %s on %s (compiled) in %.3f s\n", o.model, rt_cmodel_kind(res.cm), res.seconds);
    outs_free(&res);
    rt_inputs_free(in);
    cli_opts_free(&o);
    return rc;
}
