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
    su_diag dg = {sev, su_buf_take(&b), NULL, 0, 0, NULL, 1};
    const su_source *src = span.src;
    if (src) {
        uint32_t beg = span.begin > src->len ? (uint32_t)src->len : span.begin;
        su_source_linecol(src, beg, &dg.line, &dg.col);
        uint32_t ls = beg - (uint32_t)(dg.col - 1), le = beg;
        while (le < src->len && src->text[le] != '\n')
            le++;
        dg.file = su_strdup(src->name);
        dg.line_text = su_malloc(le - ls + 1);
        memcpy(dg.line_text, src->text + ls, le - ls);
        dg.line_text[le - ls] = 0;
        uint32_t end = span.end < le ? span.end : le;
        dg.caret_len = end > beg + 1 ? (int)(end - beg) : 1;
    }
    d->items[d->len++] = dg;
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
    if (!dg->file) {
        fprintf(out, "%s: %s\n", sev_name(dg->sev), dg->msg);
        return;
    }
    fprintf(out, "%s:%d:%d: %s: %s\n", dg->file, dg->line, dg->col, sev_name(dg->sev), dg->msg);
    /* the source line, tabs kept so that the caret lines up */
    fprintf(out, "  %s\n  ", dg->line_text);
    for (int i = 0; i < dg->col - 1; i++)
        fputc(dg->line_text[i] == '\t' ? '\t' : ' ', out);
    fputc('^', out);
    for (int i = 1; i < dg->caret_len; i++)
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
    for (size_t i = 0; i < d->len; i++) {
        free(d->items[i].msg);
        free(d->items[i].file);
        free(d->items[i].line_text);
    }
    free(d->items);
    memset(d, 0, sizeof *d);
}
