/* buf.c — a growable, always NUL-terminated string builder used by the printers
 * and by every message that is assembled in pieces. */
#include <stdlib.h>
#include <string.h>

#include "support/support.h"

static void reserve(su_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    b->data = su_realloc(b->data, cap);
    b->cap = cap;
}

void su_buf_putn(su_buf *b, const char *s, size_t n)
{
    reserve(b, n);
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void su_buf_puts(su_buf *b, const char *s)
{
    su_buf_putn(b, s, strlen(s));
}

void su_buf_putc(su_buf *b, char c)
{
    su_buf_putn(b, &c, 1);
}

void su_buf_vprintf(su_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        su_buf_putn(b, small, (size_t)n);
        return;
    }
    reserve(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void su_buf_printf(su_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    su_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

const char *su_buf_str(const su_buf *b)
{
    return b->data ? b->data : "";
}

void su_buf_clear(su_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = 0;
}

void su_buf_free(su_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

char *su_buf_take(su_buf *b)
{
    char *s = b->data ? b->data : su_strdup("");
    memset(b, 0, sizeof *b);
    return s;
}
