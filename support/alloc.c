/* alloc.c — allocation wrappers and small I/O helpers. Running out of memory is
 * not a condition relay-tune can recover from meaningfully, so it is reported
 * once and the process stops, instead of every caller checking for NULL. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "support/support.h"

static SU_NORETURN void out_of_memory(size_t n)
{
    fprintf(stderr, "relay-tune: out of memory (allocating %zu bytes)\n", n);
    abort();
}

void *su_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        out_of_memory(n);
    return p;
}

void *su_calloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        out_of_memory(count * size);
    return p;
}

void *su_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        out_of_memory(n);
    return q;
}

void *su_grow_zeroed(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need < *cap)
        return p;
    size_t n = *cap ? *cap : 256;
    while (n <= need)
        n *= 2;
    p = su_realloc(p, n * elem);
    memset((char *)p + *cap * elem, 0, (n - *cap) * elem);
    *cap = n;
    return p;
}

char *su_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(su_malloc(n), s, n);
}

void su_panic_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "relay-tune: internal error at %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

char *su_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    su_buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        su_buf_putn(&b, chunk, n);
    int err = ferror(f);
    fclose(f);
    if (err) {
        su_buf_free(&b);
        errno = EIO;
        return NULL;
    }
    if (len)
        *len = b.len;
    if (!b.data)
        return su_strdup("");
    return b.data;
}

bool su_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(data, 1, len, f) == len;
    int saved = errno;
    if (fclose(f) != 0 && ok) {
        ok = false;
        saved = errno;
    }
    errno = ok ? 0 : saved ? saved : EIO;
    return ok;
}
