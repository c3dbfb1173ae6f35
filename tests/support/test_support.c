/* test_support.c — the support library: arena, string builder, hashing and
 * map, and the diagnostic format (file:line:col, source line, caret). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/support.h"
#include "tests/tap.h"

static void test_arena(void)
{
    su_arena a;
    su_arena_init(&a);
    char *p = su_arena_alloc(&a, 10);
    ok(p && ((uintptr_t)p % 16) == 0, "arena: 16-byte aligned");
    ok(p[0] == 0 && p[9] == 0, "arena: memory is zeroed");
    void *q = su_arena_alloc_aligned(&a, 100, 64);
    ok(((uintptr_t)q % 64) == 0, "arena: 64-byte alignment on request");
    void *big = su_arena_alloc(&a, 1 << 20);
    ok(big != NULL, "arena: allocation larger than a chunk");
    char *s = su_arena_printf(&a, "%s-%d", "x", 42);
    is_str(s, "x-42", "arena: printf");
    is_str(su_arena_strndup(&a, "hello", 3), "hel", "arena: strndup");
    su_arena_free(&a);
    ok(a.head == NULL, "arena: free empties it");
}

static void test_buf(void)
{
    su_buf b = {0};
    is_str(su_buf_str(&b), "", "buf: empty is \"\"");
    for (int i = 0; i < 1000; i++)
        su_buf_printf(&b, "%d,", i);
    ok(b.len > 3000 && strncmp(b.data, "0,1,2,", 6) == 0, "buf: grows across many appends");
    su_buf_clear(&b);
    su_buf_puts(&b, "ab");
    su_buf_putc(&b, 'c');
    is_str(su_buf_str(&b), "abc", "buf: clear then append");
    char *t = su_buf_take(&b);
    is_str(t, "abc", "buf: take");
    ok(b.data == NULL && b.len == 0, "buf: take resets");
    free(t);
}

static void test_hash_map(void)
{
    ok(su_hash_str("") == SU_HASH_INIT, "hash: empty string is the offset basis");
    ok(su_hash_str("a") == 0xaf63dc4c8601ec8cULL, "hash: FNV-1a of \"a\" is stable");
    su_map m = {0};
    char keys[300][8];
    for (int i = 0; i < 300; i++) {
        snprintf(keys[i], sizeof keys[i], "k%d", i);
        su_map_put(&m, keys[i], (void *)(uintptr_t)(i + 1));
    }
    int good = 1;
    for (int i = 0; i < 300; i++)
        good &= su_map_get(&m, keys[i]) == (void *)(uintptr_t)(i + 1);
    ok(good, "map: 300 keys survive growth");
    ok(su_map_get(&m, "missing") == NULL, "map: missing key is NULL");
    void *prev = su_map_put(&m, "k5", (void *)7);
    ok(prev == (void *)6 && su_map_get(&m, "k5") == (void *)7 && m.len == 300, "map: replace returns old value");
    su_map_free(&m);
}

static void test_diag(void)
{
    su_source src = {"f.relay", "line one\n  bad token here\nlast", 0};
    src.len = strlen(src.text);
    int l, c;
    su_source_linecol(&src, 11, &l, &c);
    ok(l == 2 && c == 3, "diag: line/col of an offset (got %d:%d)", l, c);
    su_diags d = {0};
    su_error(&d, (su_span){&src, 15, 20}, "something %s", "wrong");
    is_int(d.errors, 1, "diag: error counted");
    char buf[512] = {0};
    FILE *f = fmemopen(buf, sizeof buf, "w");
    su_diags_print(f, &d);
    fclose(f);
    is_str(buf, "f.relay:2:7: error: something wrong\n    bad token here\n        ^~~~~\n",
           "diag: FILE:LINE:COL, the line and a caret under the span");
    su_diags_free(&d);
    su_diags many = {0};
    many.max_errors = 3;
    for (int i = 0; i < 10; i++)
        su_error(&many, (su_span){0}, "e%d", i);
    ok(many.len == 3 && many.errors == 10, "diag: stops recording past max_errors but counts");
    su_diags_free(&many);
}

static void test_read_file(void)
{
    size_t len;
    ok(su_read_file("/nonexistent/file", &len) == NULL, "read_file: missing file is NULL");
    char path[] = "/tmp/rt_test_XXXXXX";
    int fd = mkstemp(path);
    ok(fd >= 0 && write(fd, "abc", 3) == 3, "read_file: temp file written");
    close(fd);
    char *t = su_read_file(path, &len);
    ok(t && len == 3 && strcmp(t, "abc") == 0, "read_file: contents and length");
    free(t);
    unlink(path);
}

int main(void)
{
    test_arena();
    test_buf();
    test_hash_map();
    test_diag();
    test_read_file();
    return tap_done();
}
