/* cmd_run.c — `relay-tune run MODEL.relay`: runs a model's @main on inputs
 * read from .npz/.npy files (or seeded random values) and writes or
 * summarizes its result. Exit 0 on success, 1 when the model, a file or the
 * run fails, 2 for a usage error. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"

static void help(FILE *out)
{
    fprintf(out,
            "usage: relay-tune run MODEL.relay [--params W.npz] [--input NAME=FILE.npy ...]\n"
            "                      [--output OUT.npy | --output-dir DIR] [--target interp]\n"
            "                      [--random-params SEED]\n"
            "  Runs @main of MODEL.relay and prints how long it took. Each parameter of @main\n"
            "  takes its value from --params or --input, by its name without the %%.\n"
            "  --params W.npz          arrays of an .npz (numpy.savez or savez_compressed);\n"
            "                          may be given several times\n"
            "  --input NAME=FILE.npy   the value of parameter %%NAME (overrides --params)\n"
            "  --random-params SEED    fill every parameter not given with seeded values\n"
            "                          (distributions: docs/interpreter.md)\n"
            "  --output OUT.npy        write the result (a tensor) to OUT.npy\n"
            "  --output-dir DIR        write each tensor of the result to DIR/I.npy, I being its\n"
            "                          index in the result tuple (0.npy for a single tensor;\n"
            "                          1.0.npy for field 0 of field 1)\n"
            "  --target interp         where to run: the reference interpreter (the default)\n"
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

/* Writes every tensor of r into dir (created when missing). */
static int write_dir(const rt_result *r, const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        cli_error("run: cannot create directory %s: %s", dir, strerror(errno));
        return 1;
    }
    for (size_t i = 0; i < rt_result_count(r); i++) {
        const char *name = *rt_result_name(r, i) ? rt_result_name(r, i) : "0";
        size_t len = strlen(dir) + strlen(name) + 8;
        char *path = malloc(len);
        snprintf(path, len, "%s/%s.npy", dir, name);
        int rc = rt_tensor_save(rt_result_tensor(r, i), path, stderr);
        free(path);
        if (rc)
            return 1;
    }
    return 0;
}

int cli_cmd_run(int argc, char **argv)
{
    const char *model = NULL, *output = NULL, *output_dir = NULL;
    rt_run_options opts = {0};
    opts.missing_hint = "(give it with --params FILE.npz or --input NAME=FILE.npy, or use --random-params SEED)";
    const char **params = calloc((size_t)argc, sizeof *params), **inputs = calloc((size_t)argc, sizeof *inputs);
    int nparams = 0, ninputs = 0, rc = 2;
    rt_module *m = NULL;
    rt_inputs *in = NULL;
    rt_result *r = NULL;
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
        } else if (!strcmp(a, "--random-params") && has_value) {
            const char *s = argv[++i];
            char *end;
            errno = 0;
            unsigned long long seed = strtoull(s, &end, 10);
            if (!*s || *end || *s == '-' || errno) {
                cli_error("run: --random-params needs a seed (a non-negative integer), not '%s'", s);
                goto out;
            }
            opts.random_params = 1;
            opts.seed = (uint64_t)seed;
        } else if (a[0] == '-' && a[1]) {
            cli_error(has_value || strncmp(a, "--", 2) ? "run: unknown option '%s'" : "run: %s needs a value", a);
            help(stderr);
            goto out;
        } else if (!model) {
            model = a;
        } else {
            cli_error("run: more than one model file ('%s' and '%s')", model, a);
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
    if (!(m = rt_module_load(model, stderr)))
        goto out;
    in = rt_inputs_new();
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
    if (!(r = rt_run(m, in, &opts, stderr)))
        goto out;
    if (output) {
        if (rt_result_is_tuple(r)) {
            cli_error("run: the result is a tuple of %zu tensors: write it with --output-dir DIR",
                      rt_result_count(r));
            goto out;
        }
        if (rt_tensor_save(rt_result_tensor(r, 0), output, stderr))
            goto out;
    } else if (output_dir) {
        if (write_dir(r, output_dir))
            goto out;
    } else {
        for (size_t i = 0; i < rt_result_count(r); i++)
            summarize(rt_result_tensor(r, i), rt_result_name(r, i));
    }
    printf("ran @main of %s on %s in %.3f s\n", model, opts.target ? opts.target : "interp", rt_result_seconds(r));
    rc = 0;
out:
    rt_result_free(r);
    rt_inputs_free(in);
    rt_module_free(m);
    free(params);
    free(inputs);
    return rc;
}
