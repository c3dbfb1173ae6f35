/* diag.c — diagnostics as values. A phase records errors with the span of the
 * offending text; the CLI prints them as "FILE:LINE:COL: error: MSG" followed by
 * the source line and a caret under the span, as compilers do. */
#include <stdlib.h>
#include <string.h>

#include "support/support.h"

void su_source_linecol(const su_source *src, uint32_t off, int *line, int *col)
{
    int l = 1, c = 1;
    if (off > src->len)
        off = (uint32_t)src->len;
    for (uint32_t i = 0; i < off; i++) {
        if (src->text[i] == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l;
    *col = c;
}

void su_diag_vadd(su_diags *d, su_severity sev, su_span span, const char *fmt, va_list ap)
{
    size_t max = d->max_errors ? d->max_errors : 20;
    if (sev == SU_ERROR && d->errors >= max) {
        d->errors++;
        return;
    }
    if (d->len == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 8;
        d->items = su_realloc(d->items, d->cap * sizeof *d->items);
    }
    su_buf b = {0};
    su_buf_vprintf(&b, fmt, ap);
    d->items[d->len++] = (su_diag){sev, span, su_buf_take(&b)};
    if (sev == SU_ERROR)
        d->errors++;
}

void su_diag_add(su_diags *d, su_severity sev, su_span span, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    su_diag_vadd(d, sev, span, fmt, ap);
    va_end(ap);
}

void su_error(su_diags *d, su_span span, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    su_diag_vadd(d, SU_ERROR, span, fmt, ap);
    va_end(ap);
}

static const char *sev_name(su_severity s)
{
    return s == SU_ERROR ? "error" : s == SU_WARNING ? "warning" : "note";
}

void su_diag_print(FILE *out, const su_diag *dg)
{
    const su_source *src = dg->span.src;
    if (!src) {
        fprintf(out, "%s: %s\n", sev_name(dg->sev), dg->msg);
        return;
    }
    int line, col;
    su_source_linecol(src, dg->span.begin, &line, &col);
    fprintf(out, "%s:%d:%d: %s: %s\n", src->name, line, col, sev_name(dg->sev), dg->msg);
    /* the source line, tabs kept so that the caret lines up */
    uint32_t b = dg->span.begin > src->len ? (uint32_t)src->len : dg->span.begin;
    uint32_t ls = b;
    while (ls > 0 && src->text[ls - 1] != '\n')
        ls--;
    uint32_t le = b;
    while (le < src->len && src->text[le] != '\n')
        le++;
    fprintf(out, "  %.*s\n  ", (int)(le - ls), src->text + ls);
    for (uint32_t i = ls; i < b; i++)
        fputc(src->text[i] == '\t' ? '\t' : ' ', out);
    fputc('^', out);
    uint32_t e = dg->span.end < le ? dg->span.end : le;
    for (uint32_t i = b + 1; i < e; i++)
        fputc('~', out);
    fputc('\n', out);
}

void su_diags_print(FILE *out, const su_diags *d)
{
    for (size_t i = 0; i < d->len; i++)
        su_diag_print(out, &d->items[i]);
    size_t max = d->max_errors ? d->max_errors : 20;
    if (d->errors > max)
        fprintf(out, "(%zu more errors not shown)\n", d->errors - max);
}

void su_diags_free(su_diags *d)
{
    for (size_t i = 0; i < d->len; i++)
        free(d->items[i].msg);
    free(d->items);
    memset(d, 0, sizeof *d);
}
