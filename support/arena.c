/* arena.c — a bump allocator. Everything built while compiling one module (IR
 * nodes, types, strings) lives in its arena and is released in one call, which
 * keeps ownership simple: nodes never free each other. */
#include <stdlib.h>
#include <string.h>

#include "support/support.h"

struct su_arena_chunk {
    su_arena_chunk *next;   /* older chunk */
    size_t size;            /* usable bytes in mem */
    _Alignas(64) unsigned char mem[];
};

enum { CHUNK_MIN = 64 * 1024 };

void su_arena_init(su_arena *a)
{
    memset(a, 0, sizeof *a);
}

void *su_arena_alloc_aligned(su_arena *a, size_t n, size_t align)
{
    if (align < 16)
        align = 16;
    if (align > 4096 || (align & (align - 1)))
        su_panic("bad arena alignment %zu", align);
    size_t off = 0;
    if (a->head) {
        off = (a->used + align - 1) & ~(align - 1);
        /* offsets are aligned relative to mem, which is 64-aligned; larger
         * alignments are made absolute below */
        uintptr_t base = (uintptr_t)a->head->mem;
        off = ((base + off + align - 1) & ~(uintptr_t)(align - 1)) - base;
    }
    if (!a->head || off + n > a->head->size) {
        size_t size = n + align > CHUNK_MIN ? n + align : CHUNK_MIN;
        su_arena_chunk *c = malloc(sizeof *c + size);
        if (!c) {
            fprintf(stderr, "relay-tune: out of memory (arena chunk of %zu bytes)\n", size);
            abort();
        }
        c->next = a->head;
        c->size = size;
        a->head = c;
        uintptr_t base = (uintptr_t)c->mem;
        off = ((base + align - 1) & ~(uintptr_t)(align - 1)) - base;
    }
    void *p = a->head->mem + off;
    a->used = off + n;
    a->total += n;
    memset(p, 0, n);
    return p;
}

void *su_arena_alloc(su_arena *a, size_t n)
{
    return su_arena_alloc_aligned(a, n, 16);
}

void *su_arena_dup(su_arena *a, const void *p, size_t n)
{
    void *q = su_arena_alloc(a, n);
    if (n)
        memcpy(q, p, n);
    return q;
}

char *su_arena_strndup(su_arena *a, const char *s, size_t n)
{
    char *q = su_arena_alloc(a, n + 1);
    memcpy(q, s, n);
    q[n] = 0;
    return q;
}

char *su_arena_strdup(su_arena *a, const char *s)
{
    return su_arena_strndup(a, s, strlen(s));
}

char *su_arena_printf(su_arena *a, const char *fmt, ...)
{
    su_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    su_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    char *s = su_arena_strndup(a, su_buf_str(&b), b.len);
    su_buf_free(&b);
    return s;
}

void su_arena_free(su_arena *a)
{
    su_arena_chunk *c = a->head;
    while (c) {
        su_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    su_arena_init(a);
}
