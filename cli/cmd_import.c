/* cmd_import.c — `relay-tune import MODEL.onnx -o MODEL.relay [--params-out
 * W.npz]`: an ONNX model as Relay text. With --params-out the weights are
 * parameters of @main (after the graph's inputs) whose values go to W.npz,
 * which `--params W.npz` of the other commands reads back; without, they
 * are constants in the text's metadata section. Every other command reads
 * MODEL.onnx directly too. Exit 0 on success, 1 when the model cannot be
 * imported (every unsupported op is listed), 2 on bad usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void help(FILE *out)
{
    fprintf(out,
            "usage: relay-tune import MODEL.onnx [-o OUT.relay] [--params-out W.npz] [--no-types]\n"
            "  Imports an ONNX model (opsets 6 to 17, static shapes) and prints it as Relay text.\n"
            "  -o OUT.relay         write the text to OUT.relay instead of standard output\n"
            "  --params-out W.npz   make the weights parameters of @main and write their values\n"
            "                       to W.npz (read back with --params W.npz); without it the\n"
            "                       weights are constants in the text\n"
            "  --no-types           omit the /* ty=... */ comments on bindings\n");
}

int cli_cmd_import(int argc, char **argv)
{
    const char *model = NULL, *out = NULL, *params = NULL;
    int flags = RT_PRINT_TYPES;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return 0;
        } else if (!strcmp(a, "-o") && has_value) {
            out = argv[++i];
        } else if (!strcmp(a, "--params-out") && has_value) {
            params = argv[++i];
        } else if (!strcmp(a, "--no-types")) {
            flags &= ~RT_PRINT_TYPES;
        } else if (!cli_model_operand("import", a, has_value, &model, help)) {
            return 2;
        }
    }
    if (!model) {
        help(stderr);
        return 2;
    }
    rt_module *m = rt_onnx_import(model, params, stderr);
    if (!m)
        return 1;
    char *text = rt_module_to_text(m, flags);
    int rc = cli_write_output("import", out, text);
    free(text);
    rt_module_free(m);
    return rc;
}
