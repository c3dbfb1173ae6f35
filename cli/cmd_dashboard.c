/* cmd_dashboard.c — `relay-tune dashboard` and `relay-tune report`: the
 * dashboard of a tuning database served over HTTP until Ctrl-C, and the
 * same pages written into one self-contained HTML file (docs/dashboard.md).
 * Both only read the database. Exit 0, 1 on failure, 2 for usage. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* The port a dashboard listens on unless --port says otherwise. */
#define DEFAULT_PORT 8765

static void help_dashboard(FILE *out)
{
    fprintf(out,
            "usage: relay-tune dashboard [--db DB] [--port N] [--host ADDR]\n"
            "  Serves the tuning and benchmark dashboard of DB (default $RELAY_TUNE_DB or\n"
            "  ./relay-tune.db) at http://127.0.0.1:%d/ until Ctrl-C. The database is opened\n"
            "  read-only; a tune writing it at the same time shows up live. --port 0 picks a\n"
            "  free port; --host 0.0.0.0 (or another numeric address) serves other machines.\n",
            DEFAULT_PORT);
}

static void help_report(FILE *out)
{
    fprintf(out,
            "usage: relay-tune report [--db DB] [--session ID] -o REPORT.html\n"
            "  Writes the dashboard's pages with their data and scripts inline into one HTML\n"
            "  file that opens from disk: every session (or the one --session names, with its\n"
            "  tasks) and the benchmarks. -o - writes to standard output.\n");
}

/* The options of both commands. */
typedef struct options {
    const char *db;        /* --db */
    const char *host;      /* dashboard --host (NULL: loopback) */
    int port;              /* dashboard --port */
    const char *session;   /* report --session (NULL: all) */
    const char *out;       /* report -o */
} options;

/* Reads the options of the dashboard (report false) or the report; returns
 * -1 to go on, else the exit status (0 after --help, 2 after a message). */
static int parse(bool report, int argc, char **argv, options *o)
{
    const char *cmd = report ? "report" : "dashboard";
    void (*help)(FILE *) = report ? help_report : help_dashboard;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return 0;
        } else if (!strcmp(a, "--db") && has_value) {
            o->db = argv[++i];
        } else if (!report && !strcmp(a, "--port") && has_value) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (!*argv[i] || *end || v < 0 || v > 65535) {
                cli_error("dashboard: --port takes a port number (0 to 65535), not '%s'", argv[i]);
                return 2;
            }
            o->port = (int)v;
        } else if (!report && !strcmp(a, "--host") && has_value) {
            o->host = argv[++i];
        } else if (report && !strcmp(a, "--session") && has_value) {
            o->session = argv[++i];
        } else if (report && !strcmp(a, "-o") && has_value) {
            o->out = argv[++i];
        } else {
            bool takes_value = !strcmp(a, "--db") || (report ? !strcmp(a, "--session") || !strcmp(a, "-o")
                                                              : !strcmp(a, "--port") || !strcmp(a, "--host"));
            cli_error(takes_value ? "%s: %s needs a value" : "%s: unknown option '%s'", cmd, a);
            help(stderr);
            return 2;
        }
    }
    return -1;
}

int cli_cmd_dashboard(int argc, char **argv)
{
    options o = {rt_db_default_path(), NULL, DEFAULT_PORT, NULL, NULL};
    int rc = parse(false, argc, argv, &o);
    if (rc >= 0)
        return rc;
    return rt_dashboard_serve(o.db, o.host, o.port, stdout, stderr) == 0 ? 0 : 1;
}

int cli_cmd_report(int argc, char **argv)
{
    options o = {rt_db_default_path(), NULL, 0, NULL, NULL};
    int rc = parse(true, argc, argv, &o);
    if (rc >= 0)
        return rc;
    if (!o.out) {
        cli_error("report: give the output file with -o REPORT.html (or -o - for standard output)");
        return 2;
    }
    return rt_dashboard_report(o.db, o.session, o.out, stderr) == 0 ? 0 : 1;
}
