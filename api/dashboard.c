/* dashboard.c — the public rt_dashboard_ API over dashboard/: serving until
 * a signal, and writing the report to a file. It owns no logic: it turns
 * error values into printed messages and waits for the stop. */
#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <string.h>

#include "api/api.h"
#include "dashboard/dashboard.h"

static sem_t stop_sem;

/* SIGINT and SIGTERM end the wait; sem_post is async-signal-safe, and the
 * signal may arrive on any thread of the process. */
static void on_stop(int sig)
{
    (void)sig;
    sem_post(&stop_sem);
}

int rt_dashboard_serve(const char *db_path, const char *host, int port, FILE *out, FILE *errs)
{
    su_buf err = {0};
    dash_server *s = dash_server_start(db_path, host, port, &err);
    if (!s) {
        if (errs)
            fprintf(errs, "relay-tune: error: dashboard: %s\n", su_buf_str(&err));
        su_buf_free(&err);
        return -1;
    }
    su_buf_free(&err);
    sem_init(&stop_sem, 0, 0);
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    const char *h = host ? host : "127.0.0.1";
    bool v6 = strchr(h, ':') != NULL;
    if (out) {
        fprintf(out, "relay-tune dashboard: serving %s at http://%s%s%s:%d/ (Ctrl-C stops)\n", db_path,
                v6 ? "[" : "", h, v6 ? "]" : "", dash_server_port(s));
        fflush(out);
    }
    while (sem_wait(&stop_sem) != 0 && errno == EINTR)
        ;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    dash_server_stop(s);
    sem_destroy(&stop_sem);
    return 0;
}

int rt_dashboard_report(const char *db_path, const char *session, const char *out_path, FILE *errs)
{
    /* read-only, like the server: a report never migrates or writes the file */
    su_buf html = {0};
    db_open_opts o = {DB_OPEN_READONLY | DB_OPEN_NO_CREATE, 0, 0};
    db *d = db_open(db_path, &o, &html);
    if (!d) {
        if (errs)
            fprintf(errs, "relay-tune: error: report: %s\n", su_buf_str(&html));
        su_buf_free(&html);
        return -1;
    }
    bool good = dash_report(d, session, &html);
    if (!good && errs)
        fprintf(errs, "relay-tune: error: report: %s\n", db_errmsg(d));
    db_close(d);
    if (good) {
        bool std = !strcmp(out_path, "-");
        FILE *f = std ? stdout : fopen(out_path, "w");
        good = f && fwrite(su_buf_str(&html), 1, strlen(su_buf_str(&html)), f) == strlen(su_buf_str(&html));
        if (f && !std)
            good &= fclose(f) == 0;
        else if (f)
            good &= fflush(f) == 0;
        if (!good && errs)
            fprintf(errs, "relay-tune: error: report: cannot write %s: %s\n", out_path, strerror(errno));
    }
    su_buf_free(&html);
    return good ? 0 : -1;
}
