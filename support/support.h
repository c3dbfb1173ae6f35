/* support.h — the map of support/: memory, strings, hashing and diagnostics
 * that every other part of relay-tune builds on. Depends on libc only.
 * Prefix: su_. One block per source file. */
#ifndef RT_SUPPORT_H
#define RT_SUPPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__GNUC__)
#define SU_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define SU_NORETURN __attribute__((noreturn))
#else
#define SU_PRINTF(f, a)
#define SU_NORETURN
#endif

/* ---- alloc.c: allocation that never returns NULL ---------------------- */

/* malloc/calloc/realloc that print a message and abort on exhaustion. */
void *su_malloc(size_t n);
void *su_calloc(size_t count, size_t size);
void *su_realloc(void *p, size_t n);
/* Grows array p of *cap elements of elem bytes so that index `need` fits
 * (doubling, at least 256), zero-filling the new part; returns the array. */
void *su_grow_zeroed(void *p, size_t *cap, size_t need, size_t elem);
/* Duplicates a NUL-terminated string (su_malloc'd). */
char *su_strdup(const char *s);
/* Prints "relay-tune: internal error: ..." with file:line and aborts. */
SU_NORETURN void su_panic_at(const char *file, int line, const char *fmt, ...) SU_PRINTF(3, 4);
#define su_panic(...) su_panic_at(__FILE__, __LINE__, __VA_ARGS__)
/* Reads a whole file into a NUL-terminated buffer; NULL (errno set) on failure. */
char *su_read_file(const char *path, size_t *len);
/* Writes len bytes to path (created or truncated); false (errno set) on failure. */
bool su_write_file(const char *path, const void *data, size_t len);

/* ---- arena.c: bump allocator freed in one call ------------------------ */

typedef struct su_arena_chunk su_arena_chunk;
typedef struct su_arena {
    su_arena_chunk *head;   /* newest chunk; older ones linked behind it */
    size_t used;            /* bytes used in head */
    size_t total;           /* bytes handed out over the arena's life */
} su_arena;

/* Initializes an empty arena (no allocation until first use). */
void su_arena_init(su_arena *a);
/* Returns n zeroed bytes aligned to 16, valid until su_arena_free. */
void *su_arena_alloc(su_arena *a, size_t n);
/* Returns n zeroed bytes aligned to `align` (a power of two, at most 4096). */
void *su_arena_alloc_aligned(su_arena *a, size_t n, size_t align);
/* Copies n bytes into the arena. */
void *su_arena_dup(su_arena *a, const void *p, size_t n);
/* Copies a string of length n (not necessarily terminated) and terminates it. */
char *su_arena_strndup(su_arena *a, const char *s, size_t n);
/* Copies a NUL-terminated string into the arena. */
char *su_arena_strdup(su_arena *a, const char *s);
/* printf into the arena. */
char *su_arena_printf(su_arena *a, const char *fmt, ...) SU_PRINTF(2, 3);
/* Releases every chunk; the arena is empty and reusable afterwards. */
void su_arena_free(su_arena *a);

/* ---- vec: growable arrays (macros, header only) ----------------------- */

/* SU_VEC(T) declares an anonymous struct {T *data; size_t len, cap;}. */
#define SU_VEC(T) struct { T *data; size_t len, cap; }
/* Appends one element, growing geometrically. */
#define su_vec_push(v, x) do { \
        if ((v)->len == (v)->cap) { \
            (v)->cap = (v)->cap ? (v)->cap * 2 : 8; \
            (v)->data = su_realloc((v)->data, (v)->cap * sizeof *(v)->data); \
        } \
        (v)->data[(v)->len++] = (x); \
    } while (0)
/* Frees the storage and empties the vector. */
#define su_vec_free(v) do { free((v)->data); (v)->data = NULL; (v)->len = (v)->cap = 0; } while (0)

/* ---- buf.c: growable string builder ----------------------------------- */

typedef struct su_buf {
    char *data;   /* NUL-terminated contents (NULL while empty and unallocated) */
    size_t len;   /* length without the terminator */
    size_t cap;   /* allocated bytes */
} su_buf;

/* Appends n bytes. */
void su_buf_putn(su_buf *b, const char *s, size_t n);
/* Appends a NUL-terminated string. */
void su_buf_puts(su_buf *b, const char *s);
/* Appends one character. */
void su_buf_putc(su_buf *b, char c);
/* Appends formatted text. */
void su_buf_printf(su_buf *b, const char *fmt, ...) SU_PRINTF(2, 3);
void su_buf_vprintf(su_buf *b, const char *fmt, va_list ap);
/* Returns the contents ("" when empty); stays owned by the buffer. */
const char *su_buf_str(const su_buf *b);
/* Empties the buffer, keeping its storage. */
void su_buf_clear(su_buf *b);
/* Frees the storage. */
void su_buf_free(su_buf *b);
/* Returns the contents as a malloc'd string and resets the buffer. */
char *su_buf_take(su_buf *b);

/* ---- hash.c: hashing and a string-keyed map ---------------------------- */

/* 64-bit FNV-1a of n bytes, continuing from h (start with SU_HASH_INIT). */
#define SU_HASH_INIT 0xcbf29ce484222325ULL
uint64_t su_hash_bytes(uint64_t h, const void *p, size_t n);
/* Mixes a 64-bit value into h. */
uint64_t su_hash_u64(uint64_t h, uint64_t v);
/* FNV-1a of a NUL-terminated string. */
uint64_t su_hash_str(const char *s);

/* Open-addressing map from string (not copied: the caller keeps it alive) to pointer. */
typedef struct su_map_entry { const char *key; uint64_t hash; void *value; } su_map_entry;
typedef struct su_map {
    su_map_entry *slots;  /* capacity slots; key == NULL marks an empty one */
    size_t cap;           /* power of two, or 0 */
    size_t len;           /* occupied slots */
} su_map;

/* Returns the value stored under key, or NULL. */
void *su_map_get(const su_map *m, const char *key);
/* Stores value under key, replacing any previous value; returns the previous one. */
void *su_map_put(su_map *m, const char *key, void *value);
/* Frees the slots (not keys or values). */
void su_map_free(su_map *m);

/* ---- diag.c: sources, spans and user-facing diagnostics --------------- */

/* A source text that spans point into: a file read by the parser. */
typedef struct su_source {
    const char *name;     /* file name as the user gave it */
    const char *text;     /* contents, NUL-terminated */
    size_t len;           /* bytes in text */
} su_source;

/* A byte range [begin, end) of a source; src == NULL means "no location". */
typedef struct su_span {
    const su_source *src;
    uint32_t begin, end;
} su_span;

/* Line and column (both 1-based) of a byte offset in a source. */
void su_source_linecol(const su_source *src, uint32_t off, int *line, int *col);

typedef enum { SU_ERROR, SU_WARNING, SU_NOTE } su_severity;

/* A diagnostic keeps its own copy of the location and the source line, so
 * that it can be printed after the source (say, a failed module) is freed. */
typedef struct su_diag {
    su_severity sev;
    char *msg;            /* malloc'd message, without location */
    char *file;           /* malloc'd file name, or NULL for no location */
    int line, col;        /* 1-based position of the span's start */
    char *line_text;      /* malloc'd text of that source line */
    int caret_len;        /* columns the span covers on that line (>= 1) */
} su_diag;

/* A list of diagnostics collected by a phase (parser, type checker, ...). */
typedef struct su_diags {
    su_diag *items;
    size_t len, cap;
    size_t errors;        /* how many items are SU_ERROR */
    size_t max_errors;    /* stop recording errors past this many (0 = 20) */
} su_diags;

/* Records a diagnostic at span. */
void su_diag_add(su_diags *d, su_severity sev, su_span span, const char *fmt, ...) SU_PRINTF(4, 5);
void su_diag_vadd(su_diags *d, su_severity sev, su_span span, const char *fmt, va_list ap);
/* Shorthand for an error. */
void su_error(su_diags *d, su_span span, const char *fmt, ...) SU_PRINTF(3, 4);
/* Prints one diagnostic: "FILE:LINE:COL: error: MSG", the source line and a caret. */
void su_diag_print(FILE *out, const su_diag *dg);
/* Prints every diagnostic in order. */
void su_diags_print(FILE *out, const su_diags *d);
/* Frees the messages and empties the list. */
void su_diags_free(su_diags *d);

/* ---- merr.c: measurement error codes ----------------------------------- */

/* The closed set of ways one measurement of a candidate config can end. Shared
 * by measure/ (which produces them) and db/ (which stores them), so it lives
 * here. The numbers are stored in tuning databases and must never change; a
 * new kind gets a new number. The names appear in JSON-lines logs.
 * X(ID, number, "name", description) */
#define SU_MERRS(X)                                                                         \
    X(NONE, 0, "none", "measured successfully")                                            \
    X(INVALID_CONFIG, 1, "invalid_config", "the config does not fit its template's space")  \
    X(INSTANTIATION, 2, "instantiation", "the template could not lower the config")         \
    X(COMPILE_ERROR, 3, "compile_error", "the generated source failed to compile")          \
    X(COMPILE_TIMEOUT, 4, "compile_timeout", "compiling took longer than the limit")        \
    X(RUNTIME_ERROR, 5, "runtime_error", "the kernel crashed or was killed by a signal")    \
    X(RUN_TIMEOUT, 6, "run_timeout", "running took longer than the limit")                  \
    X(WRONG_ANSWER, 7, "wrong_answer", "the output differs from the reference kernel")      \
    X(UNKNOWN, 8, "unknown", "failed for a reason the runner could not classify")

typedef enum {
#define X(id, num, name, desc) SU_MERR_##id = num,
    SU_MERRS(X)
#undef X
    SU_MERR_COUNT
} su_merr;

/* The log name of an error code ("compile_error"); "?" for a number out of range. */
const char *su_merr_name(su_merr e);
/* One-line description of an error code. */
const char *su_merr_desc(su_merr e);
/* Looks up an error code by its log name; false when unknown. */
bool su_merr_parse(const char *name, su_merr *out);
/* True when n is the number of a known error code. */
bool su_merr_valid(long long n);

#endif
