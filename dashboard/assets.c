/* assets.c — the embedded web assets and the page that boots them. The
 * files' bytes come from the table dashboard/embed.sh generates at build
 * time (each followed by a NUL, so scripts can be inlined as text); the
 * page is written here so that the server's page and the report's differ
 * only in linking or inlining the same files. */
#include <string.h>

#include "dashboard/dashboard.h"

/* generated: the files, ended by an entry with name NULL */
extern const dash_asset dash_assets[];

const dash_asset *dash_asset_find(const char *name)
{
    for (const dash_asset *a = dash_assets; a->name; a++)
        if (!strcmp(a->name, name))
            return a;
    return NULL;
}

void dash_put_script_json(su_buf *out, const char *json)
{
    for (const char *p = json; *p; p++) {
        switch (*p) {
        case '<': su_buf_puts(out, "\\u003c"); break;
        case '>': su_buf_puts(out, "\\u003e"); break;
        case '&': su_buf_puts(out, "\\u0026"); break;
        default: su_buf_putc(out, *p);
        }
    }
}

/* Appends the asset called name inside tag (inline) or as a link to it. */
static void put_asset(su_buf *out, const char *name, bool inline_)
{
    bool css = strstr(name, ".css") != NULL;
    if (!inline_) {
        su_buf_printf(out, css ? "<link rel=\"stylesheet\" href=\"/assets/%s\">\n" : "<script src=\"/assets/%s\"></script>\n",
                      name);
        return;
    }
    const dash_asset *a = dash_asset_find(name);
    su_buf_puts(out, css ? "<style>\n" : "<script>\n");
    su_buf_putn(out, (const char *)a->data, a->size);
    su_buf_puts(out, css ? "</style>\n" : "</script>\n");
}

void dash_page(su_buf *out, const char *data)
{
    bool inline_ = data != NULL;
    su_buf_puts(out, "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<link rel=\"icon\" href=\"data:,\">\n");
    su_buf_puts(out, inline_ ? "<title>relay-tune report</title>\n" : "<title>relay-tune dashboard</title>\n");
    put_asset(out, "style.css", inline_);
    su_buf_puts(out, "</head>\n<body>\n<header><a class=\"brand\" href=\"#/\">relay-tune</a>\n"
                     "<nav><a href=\"#/\">Sessions</a> <a href=\"#/benchmarks\">Benchmarks</a></nav>\n"
                     "<span id=\"status\"></span></header>\n<main id=\"app\"><p>Loading&hellip;</p></main>\n");
    put_asset(out, "chart.min.js", inline_);
    if (inline_) {
        su_buf_puts(out, "<script type=\"application/json\" id=\"rt-data\">");
        dash_put_script_json(out, data);
        su_buf_puts(out, "</script>\n");
    }
    put_asset(out, "app.js", inline_);
    su_buf_puts(out, "</body>\n</html>\n");
}
