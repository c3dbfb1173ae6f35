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
            "                      [--output OUT.npy | --output-dir DIR] [--target interp|cpu]\n"
            "                      [--random-params SEED] [--db DB]\n"
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
            "  --target interp|cpu     where to run: the reference interpreter (the default for a\n"
            "                          .relay) or compiled for this CPU\n"
            "  --db DB                 (cpu) tuned configs from database DB\n"
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

/* A result: its tensors and their names. */
typedef struct outs {
    size_t n;
    const rt_tensor **t;
    const char **name;
    bool tuple;
} outs;

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

int cli_cmd_run(int argc, char **argv)
{
    const char *model = NULL, *output = NULL, *output_dir = NULL, *dbp = NULL;
    rt_run_options opts = {0};
    opts.missing_hint = "(give it with --params FILE.npz or --input NAME=FILE.npy, or use --random-params SEED)";
    const char **params = calloc((size_t)argc, sizeof *params), **inputs = calloc((size_t)argc, sizeof *inputs);
    int nparams = 0, ninputs = 0, rc = 2;
    rt_module *m = NULL;
    rt_inputs *in = NULL;
    rt_result *r = NULL;
    rt_cmodel *cm = NULL;
    outs rest = {0};
    char **cnames = NULL;
    rt_tensor **ctensors = NULL;
    size_t ncout = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            rc = 0;
            goto out;
        } else if (!strcmp(a, "--params") && has_value) {
            params[nparams++] = argv[++i];
        } else if (!strcmp(a, "--input") && has_value) {
            inputs[ninputs++] = argv[++i];
        } else if (!strcmp(a, "--output") && has_value) {
            output = argv[++i];
        } else if (!strcmp(a, "--output-dir") && has_value) {
            output_dir = argv[++i];
        } else if (!strcmp(a, "--target") && has_value) {
            opts.target = argv[++i];
        } else if (!strcmp(a, "--db") && has_value) {
            dbp = argv[++i];
        } else if (!strcmp(a, "--random-params") && has_value) {
            unsigned long long seed;
            if (!cli_parse_seed("run", argv[++i], &seed))
                goto out;
            opts.random_params = 1;
            opts.seed = (uint64_t)seed;
        } else if (!cli_model_operand("run", a, has_value, &model, help)) {
            goto out;
        }
    }
    if (!model) {
        help(stderr);
        goto out;
    }
    if (output && output_dir) {
        cli_error("run: give --output or --output-dir, not both");
        goto out;
    }
    rc = 1;
    size_t len = strlen(model);
    bool so = len > 3 && !strcmp(model + len - 3, ".so");
    bool native = so || (opts.target && strcmp(opts.target, "interp") != 0);
    in = rt_inputs_new();
    if (!native)
        for (int i = 0; i < nparams; i++)
            if (rt_inputs_load_npz(in, params[i], stderr))
                goto out;
    for (int i = 0; i < ninputs; i++) {
        const char *eq = strchr(inputs[i], '=');
        if (!eq || eq == inputs[i] || !eq[1]) {
            cli_error("run: --input takes NAME=FILE.npy, not '%s'", inputs[i]);
            rc = 2;
            goto out;
        }
        char *name = strndup(inputs[i], (size_t)(eq - inputs[i]));
        if (name[0] == '%')
            memmove(name, name + 1, strlen(name));
        rt_tensor *t = rt_tensor_load(eq + 1, stderr);
        if (t)
            rt_inputs_set(in, name, t, eq + 1, 1);
        free(name);
        if (!t)
            goto out;
    }
    outs res = {0};
    double seconds = 0;
    if (native) {
        char *path = NULL;
        if (so && (nparams || dbp)) {
            cli_error("run: %s is compiled already: its weights and configs are in it (no --params or --db)", model);
            rc = 2;
            goto out;
        }
        if (!so && rt_target_check(opts.target, 1, stderr) != 0)
            goto out;
        if (!so) {
            rt_compile_options co = {0};
            co.target = opts.target;
            co.db_path = dbp;
            path = cli_compile(model, params, nparams, opts.random_params, opts.seed, &co, NULL, NULL);
            if (!path)
                goto out;
        }
        cm = rt_cmodel_load(path ? path : model, stderr);
        free(path);
        if (!cm || rt_cmodel_set_inputs(cm, in, opts.random_params, opts.seed, stderr) != 0)
            goto out;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        if (rt_cmodel_run(cm, stderr) != 0)
            goto out;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
        res.n = rt_cmodel_num_outputs(cm);
        res.tuple = res.n != 1;
        res.t = calloc(res.n + 1, sizeof *res.t);
        res.name = calloc(res.n + 1, sizeof *res.name);
        cnames = calloc(res.n + 1, sizeof *cnames);
        ctensors = calloc(res.n + 1, sizeof *ctensors);
        ncout = res.n;
        for (size_t i = 0; i < res.n; i++) {
            ctensors[i] = rt_cmodel_output(cm, i);
            cnames[i] = malloc(24);
            snprintf(cnames[i], 24, "%s", "");
            if (res.tuple)
                snprintf(cnames[i], 24, "%zu", i);
            res.t[i] = ctensors[i];
            res.name[i] = cnames[i];
        }
    } else {
        if (dbp) {
            cli_error("run: --db is for --target cpu");
            rc = 2;
            goto out;
        }
        if (!(m = rt_module_load(model, stderr)))
            goto out;
        if (!(r = rt_run(m, in, &opts, stderr)))
            goto out;
        res.n = rt_result_count(r);
        res.tuple = rt_result_is_tuple(r);
        res.t = calloc(res.n + 1, sizeof *res.t);
        res.name = calloc(res.n + 1, sizeof *res.name);
        for (size_t i = 0; i < res.n; i++) {
            res.t[i] = rt_result_tensor(r, i);
            res.name[i] = rt_result_name(r, i);
        }
        seconds = rt_result_seconds(r);
    }
    rest = res;
    if (output) {
        if (res.tuple) {
            cli_error("run: the result is a tuple of %zu tensors: write it with --output-dir DIR", res.n);
            goto out;
        }
        if (rt_tensor_save(res.t[0], output, stderr))
            goto out;
    } else if (output_dir) {
        if (write_dir(&res, output_dir))
            goto out;
    } else {
        for (size_t i = 0; i < res.n; i++)
            summarize(res.t[i], res.name[i]);
    }
    printf("ran @main of %s on %s in %.3f s\n", model, native ? "cpu (compiled)" : opts.target ? opts.target : "interp",
           seconds);
    rc = 0;
out:
    for (size_t i = 0; i < ncout; i++) {
        free(cnames[i]);
        rt_tensor_free(ctensors[i]);
    }
    free(cnames);
    free(ctensors);
    free(rest.t);
    free(rest.name);
    rt_cmodel_free(cm);
    rt_result_free(r);
    rt_inputs_free(in);
    rt_module_free(m);
    free(params);
    free(inputs);
    return rc;
}
