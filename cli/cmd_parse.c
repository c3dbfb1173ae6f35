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

int cli_cmd_parse(int argc, char **argv)
{
    const char *file = NULL, *out = NULL;
    int flags = RT_PRINT_TYPES;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            help(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--no-types")) {
            flags &= ~RT_PRINT_TYPES;
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            cli_error("parse: unknown option '%s'", argv[i]);
            help(stderr);
            return 2;
        } else if (!file) {
            file = argv[i];
        } else {
            cli_error("parse: more than one input file");
            return 2;
        }
    }
    if (!file) {
        help(stderr);
        return 2;
    }
    rt_module *m;
    if (!strcmp(file, "-")) {
        size_t len;
        char *text = read_stdin(&len);
        if (!text) {
            cli_error("parse: cannot read standard input");
            return 1;
        }
        m = rt_module_parse("<stdin>", text, len, stderr);
        free(text);
    } else {
        m = rt_module_load(file, stderr);
    }
    if (!m)
        return 1;
    char *text = rt_module_to_text(m, flags);
    int rc = cli_write_output("parse", out, text);
    free(text);
    rt_module_free(m);
    return rc;
}
