/* tap.h — a tiny TAP producer for the C unit tests. Each check prints
 * "ok N - name" or "not ok N - name" (with a diagnostic line), and
 * tap_done() prints the plan and returns the exit status. automake's
 * tap-driver counts every check, so CI's "N passed, N failed" is per check. */
#ifndef RT_TAP_H
#define RT_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

static void tap_vok(int cond, const char *file, int line, const char *fmt, va_list ap)
{
    tap_n++;
    printf("%sok %d - ", cond ? "" : "not ", tap_n);
    vprintf(fmt, ap);
    printf("\n");
    if (!cond) {
        tap_failed++;
        printf("# failed at %s:%d\n", file, line);
    }
    fflush(stdout);
}

static inline int tap_ok_at(int cond, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tap_vok(cond, file, line, fmt, ap);
    va_end(ap);
    return cond;
}

/* ok(cond, "name %d", ...): one check. */
#define ok(cond, ...) tap_ok_at(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
/* is_int(got, want, "name"): integer equality with both values shown on failure. */
#define is_int(got, want, ...) do { \
        long long g_ = (long long)(got), w_ = (long long)(want); \
        if (!ok(g_ == w_, __VA_ARGS__)) printf("#   got %lld, want %lld\n", g_, w_); \
    } while (0)
/* is_str(got, want, "name"): string equality. */
#define is_str(got, want, ...) do { \
        const char *g_ = (got), *w_ = (want); \
        int c_ = g_ && w_ && strcmp(g_, w_) == 0; \
        if (!ok(c_, __VA_ARGS__)) printf("#   got  \"%s\"\n#   want \"%s\"\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
    } while (0)
/* diag("...") prints a comment line. */
#define diag(...) do { printf("# "); printf(__VA_ARGS__); printf("\n"); } while (0)

/* Prints the plan; returns 0 when every check passed. */
static inline int tap_done(void)
{
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}

#endif
