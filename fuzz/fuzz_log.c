/* fuzz_log.c — libFuzzer harness for the JSON-lines log (shared logs are
 * untrusted input). The input is imported as a log into an empty in-memory
 * database: every line must be imported, skipped as a duplicate or rejected
 * with a reason, and the counts must add up to the non-blank lines. Whatever
 * was imported is then exported, imported into a second empty database
 * (nothing may be rejected there: what we write we must read) and exported
 * again, which must give the same bytes (the round trip is exact).
 *   make fuzz-log-run FUZZ_SECONDS=600 */
#include <stdlib.h>
#include <string.h>

#include "db/db.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void count_reject(void *ctx, size_t where, const char *why)
{
    size_t *n = ctx;
    (*n)++;
    if (!why || !why[0]) {
        fprintf(stderr, "line %zu rejected without a reason\n", where);
        abort();
    }
}

static db *fresh(void)
{
    su_buf err = {0};
    db *d = db_open(":memory:", NULL, &err);
    if (!d) {
        fprintf(stderr, "cannot open a memory database: %s\n", su_buf_str(&err));
        abort();
    }
    su_buf_free(&err);
    return d;
}

static char *export_all(db *d, size_t *len, size_t *records)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!db_export(d, NULL, f, records)) {
        fprintf(stderr, "export failed: %s\n", db_errmsg(d));
        abort();
    }
    fclose(f);
    return text;
}

/* Imports len bytes of text; the counts must cover every non-blank line. */
static db_counts import(db *d, const char *text, size_t len, size_t *reasons)
{
    db_counts c = {0};
    FILE *f = fmemopen((void *)text, len ? len : 1, "r");
    if (!len) {
        fclose(f);
        return c;
    }
    if (!db_import(d, f, "fuzz.jsonl", &c, count_reject, reasons)) {
        fprintf(stderr, "import failed: %s\n", db_errmsg(d));
        abort();
    }
    fclose(f);
    return c;
}

static size_t nonblank_lines(const char *p, size_t n)
{
    size_t lines = 0;
    bool content = false;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n') {
            lines += content;
            content = false;
        } else if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r') {
            content = true;
        }
    }
    return lines + content;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1 << 16))
        return 0;
    db *d = fresh();
    size_t reasons = 0;
    db_counts c = import(d, (const char *)data, size, &reasons);
    size_t want = nonblank_lines((const char *)data, size);
    if (c.added + c.duplicates + c.rejected != want || reasons != c.rejected) {
        fprintf(stderr, "counts do not add up: %zu + %zu + %zu for %zu lines, %zu reasons\n", c.added, c.duplicates,
                c.rejected, want, reasons);
        abort();
    }
    size_t len1, n1;
    char *first = export_all(d, &len1, &n1);
    if (n1 != c.added) {
        fprintf(stderr, "imported %zu but exported %zu\n", c.added, n1);
        abort();
    }
    db *e = fresh();
    size_t reasons2 = 0;
    db_counts c2 = import(e, first, len1, &reasons2);
    if (c2.added != n1 || c2.rejected || c2.duplicates) {
        fprintf(stderr, "re-import of our own export: added %zu, duplicates %zu, rejected %zu of %zu\n%s", c2.added,
                c2.duplicates, c2.rejected, n1, first);
        abort();
    }
    size_t len2, n2;
    char *second = export_all(e, &len2, &n2);
    if (len1 != len2 || memcmp(first, second, len1) != 0) {
        fprintf(stderr, "export is not a fixed point:\n--- first\n%s--- second\n%s", first, second);
        abort();
    }
    free(first);
    free(second);
    db_close(d);
    db_close(e);
    return 0;
}
