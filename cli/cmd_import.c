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
    cli_opts o = {.cmd = "import"};
    int rc = cli_options_parse(&o, CLI_IMPORT, argc, argv, help);
    rt_module *m = rc < 0 ? rt_onnx_import(o.model, o.params_out, stderr) : NULL;
    if (m)
        rc = cli_write_module("import", o.out, m, !o.no_types);
    rt_module_free(m);
    cli_opts_free(&o);
    return rc >= 0 ? rc : 1;
}
