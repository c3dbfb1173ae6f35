/* cmd_parse.c — `relay-tune parse FILE`: parse and type-check a Relay text
 * file and print it back as canonical Relay text, with every def carrying its
 * inferred return type. Exit 0 when the module is well typed, 1 otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void help(FILE *out)
{
    fprintf(out,
            "usage: relay-tune parse FILE [--no-types] [-o OUT]\n"
            "  Parses and type-checks FILE (Relay text, version 0.0.5) and prints it\n"
            "  with inferred types. FILE may be - for standard input, or an ONNX model (.onnx).\n"
            "  --no-types  omit the /* ty=... */ comments on bindings\n"
            "  -o OUT      write the printout to OUT instead of standard output\n");
}

static char *read_stdin(size_t *len)
{
    size_t cap = 1 << 16, n = 0, k;
    char *buf = malloc(cap + 1);
    if (!buf)
        return NULL;
    while ((k = fread(buf + n, 1, cap - n, stdin)) > 0) {
        n += k;
        if (n == cap) {
            char *nb = realloc(buf, (cap *= 2) + 1);
            if (!nb) {
                free(buf);
                return NULL;
            }
            buf = nb;
        }
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

/* The module of file, or of standard input for "-"; NULL after a message. */
static rt_module *load(const char *file)
{
    if (strcmp(file, "-") != 0)
        return rt_module_load(file, stderr);
    size_t len;
    char *text = read_stdin(&len);
    if (!text) {
        cli_error("parse: cannot read standard input");
        return NULL;
    }
    rt_module *m = rt_module_parse("<stdin>", text, len, stderr);
    free(text);
    return m;
}

int cli_cmd_parse(int argc, char **argv)
{
    cli_opts o = {.cmd = "parse"};
    int rc = cli_options_parse(&o, CLI_PARSE, argc, argv, help);
    rt_module *m = rc < 0 ? load(o.model) : NULL;
    if (m)
        rc = cli_write_module("parse", o.out, m, !o.no_types);
    rt_module_free(m);
    cli_opts_free(&o);
    return rc >= 0 ? rc : 1;
}
