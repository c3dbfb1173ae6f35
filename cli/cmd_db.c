/* cmd_db.c — `relay-tune db ...`: the tuning database from the command line.
 * export / import share logs as JSON lines, merge brings another database in,
 * stats and best answer questions (as text or JSON), gc drops old failures,
 * bench-add and benchmarks store and list benchmark results.
 * Every subcommand takes --db PATH; without it $RELAY_TUNE_DB, else
 * ./relay-tune.db. Exit status: 0 done, 1 failed (or, with import --strict,
 * a line was rejected), 2 bad usage. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void help(FILE *out)
{
    fprintf(out,
            "usage: relay-tune db COMMAND [--db PATH] [OPTIONS]\n"
            "  The tuning database: every measurement, in one SQLite file.\n"
            "  --db PATH   the database; default: $RELAY_TUNE_DB if set, else ./relay-tune.db\n"
            "\n"
            "commands:\n"
            "  export [--workload KEY] [--target T] [-o FILE]\n"
            "              write records as JSON lines (docs/log-format.md) to stdout or FILE\n"
            "  import FILE... [--strict]\n"
            "              bring in JSON-lines logs (FILE may be -); every line is validated;\n"
            "              prints \"imported N, duplicates D, rejected R\"; --strict exits 1\n"
            "              when a line was rejected (the valid lines are imported anyway)\n"
            "  merge OTHER.db...\n"
            "              bring in the records, sessions and benchmarks of other databases\n"
            "  stats [--json]\n"
            "              workloads, records, targets, sessions, failed records by kind\n"
            "  best [--target T] [--json]\n"
            "              best config of each workload with GFLOP/s and speedup over the\n"
            "              template's default config\n"
            "  gc [--days N]\n"
            "              delete failed records older than N days (default 30), compact the file\n"
            "  bench-add FILE...\n"
            "              store benchmark results given as JSON objects, one a line (FILE may\n"
            "              be -; fields in docs/benchmarks.md)\n"
            "  benchmarks [--model M] [--json]\n"
            "              benchmark results (of one model), newest first\n"
            "\n"
            "import, merge and bench-add create the database when it does not exist; the others\n"
            "need it.\n");
}

/* Options of every db subcommand; which ones a subcommand accepts is checked. */
typedef struct opts {
    const char *db, *workload, *target, *out, *days, *model;
    bool json, strict;
    const char *files[256];
    int nfiles;
} opts;

static int parse_opts(const char *cmd, int argc, char **argv, opts *o, const char *allowed)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = NULL;
        char key = 0;
        if (!strcmp(a, "--db"))
            slot = &o->db, key = 'D';
        else if (!strcmp(a, "--workload"))
            slot = &o->workload, key = 'w';
        else if (!strcmp(a, "--target"))
            slot = &o->target, key = 't';
        else if (!strcmp(a, "-o"))
            slot = &o->out, key = 'o';
        else if (!strcmp(a, "--days"))
            slot = &o->days, key = 'd';
        else if (!strcmp(a, "--model"))
            slot = &o->model, key = 'm';
        else if (!strcmp(a, "--json")) {
            o->json = true;
            key = 'j';
        } else if (!strcmp(a, "--strict")) {
            o->strict = true;
            key = 's';
        } else if (a[0] == '-' && a[1]) {
            cli_error("db %s: unknown option '%s'", cmd, a);
            return 2;
        } else {
            key = 'F';
            if (o->nfiles == (int)(sizeof o->files / sizeof *o->files)) {
                cli_error("db %s: too many files", cmd);
                return 2;
            }
            o->files[o->nfiles++] = a;
        }
        if (key != 'D' && !strchr(allowed, key)) {
            if (key == 'F')
                cli_error("db %s: unexpected argument '%s'", cmd, a);
            else
                cli_error("db %s: option '%s' does not apply", cmd, a);
            return 2;
        }
        if (slot) {
            if (i + 1 >= argc) {
                cli_error("db %s: option '%s' needs a value", cmd, a);
                return 2;
            }
            *slot = argv[++i];
        }
    }
    return 0;
}

static int cmd_export(opts *o, rt_db *db)
{
    FILE *f = o->out ? fopen(o->out, "w") : stdout;
    if (!f) {
        cli_error("db export: cannot write %s", o->out);
        return 1;
    }
    long long n = rt_db_export(db, o->workload, o->target, f, stderr);
    if (o->out && fclose(f) != 0 && n >= 0) {
        cli_error("db export: error writing %s", o->out);
        return 1;
    }
    if (n >= 0 && o->out)
        fprintf(stderr, "exported %lld records to %s\n", n, o->out);
    return n < 0;
}

static int cmd_import(opts *o, rt_db *db)
{
    rt_db_counts c = {0};
    int rc = 0;
    for (int i = 0; i < o->nfiles && rc == 0; i++) {
        bool std = !strcmp(o->files[i], "-");
        FILE *f = std ? stdin : fopen(o->files[i], "r");
        if (!f) {
            cli_error("db import: cannot read %s", o->files[i]);
            rc = 1;
            break;
        }
        if (rt_db_import(db, f, std ? "<stdin>" : o->files[i], &c, stderr) != 0)
            rc = 1;
        if (!std)
            fclose(f);
    }
    printf("imported %zu, duplicates %zu, rejected %zu\n", c.imported, c.duplicates, c.rejected);
    return rc ? rc : (o->strict && c.rejected > 0);
}

static int cmd_merge(opts *o, rt_db *db)
{
    rt_db_counts c = {0};
    int rc = 0;
    for (int i = 0; i < o->nfiles && rc == 0; i++)
        if (rt_db_merge(db, o->files[i], &c, stderr) != 0)
            rc = 1;
    printf("imported %zu, duplicates %zu, rejected %zu\n", c.imported, c.duplicates, c.rejected);
    return rc;
}

static int print_text(char *text)
{
    if (!text)
        return 1;
    fputs(text, stdout);
    free(text);
    return 0;
}

static int cmd_gc(opts *o, rt_db *db)
{
    double days = 30;
    if (o->days) {
        char *end;
        days = strtod(o->days, &end);
        if (end == o->days || *end || !(days >= 0)) {
            cli_error("db gc: --days needs a non-negative number, not '%s'", o->days);
            return 2;
        }
    }
    long long n = rt_db_gc(db, days, stderr);
    if (n < 0)
        return 1;
    printf("deleted %lld failed records older than %g days\n", n, days);
    return 0;
}

static int cmd_bench_add(opts *o, rt_db *db)
{
    long long n = 0;
    for (int i = 0; i < o->nfiles; i++) {
        bool std = !strcmp(o->files[i], "-");
        FILE *f = std ? stdin : fopen(o->files[i], "r");
        if (!f) {
            cli_error("db bench-add: cannot read %s", o->files[i]);
            return 1;
        }
        long long k = rt_db_bench_add(db, f, std ? "<stdin>" : o->files[i], stderr);
        if (!std)
            fclose(f);
        if (k < 0)
            return 1;
        n += k;
    }
    printf("stored %lld benchmark results\n", n);
    return 0;
}

int cli_cmd_db(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        help(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    static const struct {
        const char *name, *allowed;   /* option keys: w t o d m j s, F = file arguments */
        bool create;                  /* create the database when missing */
        int min_files;
    } cmds[] = {
        {"export", "wto", false, 0}, {"import", "Fs", true, 1}, {"merge", "F", true, 1},
        {"stats", "j", false, 0},    {"best", "tj", false, 0},  {"gc", "d", false, 0},
        {"bench-add", "F", true, 1}, {"benchmarks", "mj", false, 0},
    };
    const char *cmd = argv[1];
    size_t k = 0;
    while (k < sizeof cmds / sizeof *cmds && strcmp(cmds[k].name, cmd) != 0)
        k++;
    if (k == sizeof cmds / sizeof *cmds) {
        cli_error("db: unknown command '%s'", cmd);
        help(stderr);
        return 2;
    }
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            help(stdout);
            return 0;
        }
    opts o = {0};
    int rc = parse_opts(cmd, argc - 2, argv + 2, &o, cmds[k].allowed);
    if (rc)
        return rc;
    if (o.nfiles < cmds[k].min_files) {
        cli_error("db %s: needs a file argument", cmd);
        return 2;
    }
    const char *path = o.db ? o.db : rt_db_default_path();
    rt_db *db = rt_db_open(path, cmds[k].create ? RT_DB_CREATE : 0, stderr);
    if (!db)
        return 1;
    int flags = o.json ? RT_DB_JSON : 0;
    switch (k) {
    case 0: rc = cmd_export(&o, db); break;
    case 1: rc = cmd_import(&o, db); break;
    case 2: rc = cmd_merge(&o, db); break;
    case 3: rc = print_text(rt_db_stats(db, flags, stderr)); break;
    case 4: rc = print_text(rt_db_best(db, o.target, flags, stderr)); break;
    case 5: rc = cmd_gc(&o, db); break;
    case 6: rc = cmd_bench_add(&o, db); break;
    default: rc = print_text(rt_db_benchmarks(db, o.model, flags, stderr)); break;
    }
    rt_db_close(db);
    return rc;
}
