/* papi.c — timing and hardware counters through PAPI. The clock is
 * PAPI_get_real_nsec; counters are read only where the host exposes them,
 * and when it does not (virtual machines often expose none) the record says
 * which were asked for and why they are missing, and tuning runs on time. */
#include <papi.h>
#include <string.h>
#include <time.h>

#include "measure/measure.h"

static int papi_state; /* 0 untried, 1 running, -1 unavailable */
static char papi_why[MS_MSG];

bool ms_papi_init(char *why, size_t n)
{
    if (papi_state == 0) {
        int rc = PAPI_library_init(PAPI_VER_CURRENT);
        if (rc == PAPI_VER_CURRENT) {
            papi_state = 1;
        } else {
            papi_state = -1;
            snprintf(papi_why, sizeof papi_why, "PAPI did not start: %s",
                     rc > 0 ? "library version mismatch" : PAPI_strerror(rc));
        }
    }
    if (why && n)
        snprintf(why, n, "%s", papi_state > 0 ? "" : papi_why);
    return papi_state > 0;
}

int64_t ms_clock_ns(void)
{
    if (papi_state > 0)
        return PAPI_get_real_nsec();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct ms_papi_set {
    int set;        /* PAPI event set */
    int n;          /* events in it (the first c->n names) */
};

static void add_missing(ms_counters *c, const char *name, const char *why)
{
    if (c->nmissing < MS_MAX_EVENTS)
        snprintf(c->missing[c->nmissing++], MS_NAME, "%s", name);
    if (!c->why[0])
        snprintf(c->why, sizeof c->why, "%s", why);
}

ms_papi_set *ms_papi_open(const char *const *events, int n, ms_counters *c)
{
    memset(c, 0, sizeof *c);
    char why[MS_MSG];
    if (!ms_papi_init(why, sizeof why)) {
        for (int i = 0; i < n; i++)
            add_missing(c, events[i], why);
        return NULL;
    }
    int set = PAPI_NULL;
    if (PAPI_create_eventset(&set) != PAPI_OK) {
        for (int i = 0; i < n; i++)
            add_missing(c, events[i], "PAPI could not create an event set");
        return NULL;
    }
    for (int i = 0; i < n && i < MS_MAX_EVENTS; i++) {
        int rc = PAPI_add_named_event(set, events[i]);
        if (rc == PAPI_OK) {
            snprintf(c->names[c->n++], MS_NAME, "%s", events[i]);
        } else {
            char w[MS_MSG];
            snprintf(w, sizeof w, "%s: %s (the host exposes no such counter)", events[i], PAPI_strerror(rc));
            add_missing(c, events[i], w);
        }
    }
    if (c->n == 0) {
        PAPI_destroy_eventset(&set);
        return NULL;
    }
    ms_papi_set *s = su_calloc(1, sizeof *s);
    s->set = set;
    s->n = c->n;
    return s;
}

void ms_papi_start(ms_papi_set *s)
{
    if (s)
        PAPI_start(s->set);
}

void ms_papi_stop(ms_papi_set *s, ms_counters *c)
{
    if (!s)
        return;
    long long v[MS_MAX_EVENTS] = {0};
    if (PAPI_stop(s->set, v) == PAPI_OK)
        for (int i = 0; i < s->n; i++)
            c->values[i] += v[i];
}

void ms_papi_close(ms_papi_set *s)
{
    if (!s)
        return;
    PAPI_cleanup_eventset(s->set);
    PAPI_destroy_eventset(&s->set);
    free(s);
}
