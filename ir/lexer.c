/* lexer.c — turns Relay text into tokens. Comments (`//`, nested `/ * * /`,
 * which include TVM's `/ * ty=... * /` annotations) are skipped. A number right
 * after a `.` is read as plain digits, so that `%t.0.1` is two projections
 * rather than the float 0.1. A `-` right before a digit starts a negative
 * number, as in TVM, except after something that ends an operand (`%n -1`
 * is a subtraction): TVM would read the -1 as a number and then fail. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

typedef struct {
    su_arena *a;
    const su_source *src;
    const char *s;          /* text */
    uint32_t pos, len;
    su_diags *d;
    SU_VEC(ir_token) toks;
} lexer;

static su_span span(lexer *l, uint32_t b, uint32_t e)
{
    return (su_span){l->src, b, e};
}

static bool is_name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* Skips white space and comments; false on an unterminated block comment. */
static bool skip_space(lexer *l)
{
    for (;;) {
        while (l->pos < l->len && isspace((unsigned char)l->s[l->pos]))
            l->pos++;
        if (l->pos + 1 < l->len && l->s[l->pos] == '/' && l->s[l->pos + 1] == '/') {
            while (l->pos < l->len && l->s[l->pos] != '\n')
                l->pos++;
            continue;
        }
        if (l->pos + 1 < l->len && l->s[l->pos] == '/' && l->s[l->pos + 1] == '*') {
            uint32_t start = l->pos;
            int depth = 0;
            while (l->pos < l->len) {
                if (l->pos + 1 < l->len && l->s[l->pos] == '/' && l->s[l->pos + 1] == '*') {
                    depth++;
                    l->pos += 2;
                } else if (l->pos + 1 < l->len && l->s[l->pos] == '*' && l->s[l->pos + 1] == '/') {
                    depth--;
                    l->pos += 2;
                    if (depth == 0)
                        break;
                } else {
                    l->pos++;
                }
            }
            if (depth != 0) {
                su_error(l->d, span(l, start, start + 2), "unterminated /* comment");
                return false;
            }
            continue;
        }
        return true;
    }
}

/* Reads a dtype suffix (f, f16, f32, f64, i8 .. i64, u8) after a number. */
static bool number_suffix(lexer *l, ir_token *t)
{
    const char *p = l->s + l->pos;
    static const struct { const char *sfx; ir_dtype dt; } sfx[] = {
        {"f16", IR_FLOAT16}, {"f32", IR_FLOAT32}, {"f64", IR_FLOAT64}, {"i8", IR_INT8},
        {"i16", IR_INT16},   {"i32", IR_INT32},   {"i64", IR_INT64},   {"u8", IR_UINT8},
        {"f", IR_FLOAT32},
    };
    for (size_t i = 0; i < sizeof sfx / sizeof *sfx; i++) {
        size_t n = strlen(sfx[i].sfx);
        if (l->pos + n <= l->len && strncmp(p, sfx[i].sfx, n) == 0 &&
            (l->pos + n == l->len || !is_name_char(p[n]))) {
            t->dtype = sfx[i].dt;
            t->suffixed = true;
            l->pos += (uint32_t)n;
            return true;
        }
    }
    return !is_name_char(*p);
}

static bool lex_number(lexer *l, ir_token *t, bool digits_only)
{
    uint32_t b = l->pos;
    const char *s = l->s;
    if (s[l->pos] == '-')
        l->pos++;
    while (l->pos < l->len && isdigit((unsigned char)s[l->pos]))
        l->pos++;
    bool isfloat = false;
    if (!digits_only && l->pos < l->len && s[l->pos] == '.' && l->pos + 1 < l->len &&
        isdigit((unsigned char)s[l->pos + 1])) {
        isfloat = true;
        l->pos++;
        while (l->pos < l->len && isdigit((unsigned char)s[l->pos]))
            l->pos++;
    }
    if (!digits_only && l->pos < l->len && (s[l->pos] == 'e' || s[l->pos] == 'E')) {
        uint32_t q = l->pos + 1;
        if (q < l->len && (s[q] == '+' || s[q] == '-'))
            q++;
        if (q < l->len && isdigit((unsigned char)s[q])) {
            isfloat = true;
            l->pos = q;
            while (l->pos < l->len && isdigit((unsigned char)s[l->pos]))
                l->pos++;
        }
    }
    char buf[128];
    uint32_t n = l->pos - b;
    if (n >= sizeof buf) {
        su_error(l->d, span(l, b, l->pos), "number literal is too long");
        return false;
    }
    memcpy(buf, s + b, n);
    buf[n] = 0;
    t->dtype = isfloat ? IR_FLOAT32 : IR_INT32;
    if (!digits_only && !number_suffix(l, t)) {
        while (l->pos < l->len && is_name_char(s[l->pos]))
            l->pos++;
        su_error(l->d, span(l, b, l->pos), "malformed number '%.*s'", (int)(l->pos - b), s + b);
        return false;
    }
    if (isfloat || ir_dtype_is_float(t->dtype)) {
        t->kind = IR_TK_FLOAT;
        t->f = strtod(buf, NULL);
        /* float16 as TVM checks it: the magnitude may not pass its largest
         * finite value 65504; float32: the largest magnitude that still rounds
         * to a finite float (so that every printed float32 reads back) */
        bool over = t->dtype == IR_FLOAT16 ? !(fabs(t->f) <= 65504.0)
                    : t->dtype == IR_FLOAT32 ? !(fabs(t->f) < 3.4028235677973366e38)
                                             : !(fabs(t->f) < HUGE_VAL);
        if (over) {
            su_error(l->d, span(l, b, l->pos), "the number %s does not fit in %s", buf, ir_dtype_name(t->dtype));
            return false;
        }
        if (!ir_dtype_is_float(t->dtype)) {
            su_error(l->d, span(l, b, l->pos), "a fractional number cannot have the integer type %s",
                     ir_dtype_name(t->dtype));
            return false;
        }
    } else {
        t->kind = IR_TK_INT;
        errno = 0;
        t->i = strtoll(buf, NULL, 10);
        t->f = (double)t->i;
        if (errno == ERANGE) {
            su_error(l->d, span(l, b, l->pos), "integer literal %s is out of range", buf);
            return false;
        }
    }
    t->begin = b;
    t->end = l->pos;
    return true;
}

static bool lex_string(lexer *l, ir_token *t)
{
    uint32_t b = l->pos++;
    su_buf v = {0};
    while (l->pos < l->len && l->s[l->pos] != '"') {
        char c = l->s[l->pos++];
        if (c == '\n')
            break;
        if (c == '\\' && l->pos < l->len) {
            char e = l->s[l->pos++];
            c = e == 'n' ? '\n' : e == 't' ? '\t' : e;
            /* \xHH, which the printer writes for control characters */
            if (e == 'x' && l->pos + 1 < l->len && isxdigit((unsigned char)l->s[l->pos]) &&
                isxdigit((unsigned char)l->s[l->pos + 1])) {
                char hex[3] = {l->s[l->pos], l->s[l->pos + 1], 0};
                c = (char)strtol(hex, NULL, 16);
                l->pos += 2;
            }
        }
        su_buf_putc(&v, c);
    }
    if (l->pos >= l->len || l->s[l->pos] != '"') {
        su_buf_free(&v);
        su_error(l->d, span(l, b, b + 1), "unterminated string");
        return false;
    }
    l->pos++;
    t->kind = IR_TK_STRING;
    t->text = su_arena_strndup(l->a, su_buf_str(&v), v.len);
    su_buf_free(&v);
    t->begin = b;
    t->end = l->pos;
    return true;
}

/* Reads a name after a sigil (% or @); the sigil is at l->pos. */
static bool lex_sigil_name(lexer *l, ir_token *t, ir_token_kind k)
{
    uint32_t b = l->pos++;
    uint32_t nb = l->pos;
    while (l->pos < l->len && is_name_char(l->s[l->pos]))
        l->pos++;
    if (l->pos == nb) {
        su_error(l->d, span(l, b, b + 1), "expected a name after '%c'", l->s[b]);
        return false;
    }
    t->kind = k;
    t->text = su_arena_strndup(l->a, l->s + nb, l->pos - nb);
    t->begin = b;
    t->end = l->pos;
    return true;
}

/* The operators of the infix syntax, longest first; `->` is the arrow of
 * function types. */
static const struct { const char *text; char punct; } operators[] = {
    {"->", IR_P_ARROW}, {"==", IR_P_EQ}, {"!=", IR_P_NE}, {"<=", IR_P_LE}, {">=", IR_P_GE},
    {"+", '+'}, {"-", '-'}, {"/", '/'}, {"<", '<'}, {">", IR_P_GT}, {"!", '!'},
};

/* `inff` and `-inff`, TVM's spelling of float32 infinity, and `nanf`, which
 * the printer writes for a NaN constant (TVM's lexer has no NaN). */
static bool lex_inf(lexer *l, ir_token *t, uint32_t b, bool neg)
{
    uint32_t q = l->pos + (neg ? 1 : 0);
    bool inf = q + 4 <= l->len && strncmp(l->s + q, "inff", 4) == 0;
    bool nan = q + 4 <= l->len && strncmp(l->s + q, "nanf", 4) == 0;
    if (!(inf || nan) || (q + 4 < l->len && is_name_char(l->s[q + 4])))
        return false;
    t->kind = IR_TK_FLOAT;
    t->dtype = IR_FLOAT32;
    t->suffixed = true;
    t->f = nan ? NAN : neg ? -HUGE_VAL : HUGE_VAL;
    t->begin = b;
    t->end = l->pos = q + 4;
    return true;
}

/* VirtualDevice(device_type=1, ..., target=Target(id=5e6f, kind='llvm', keys={'cpu'}, ...)) as
 * TVM prints a virtual device: text that TVM's own lexer cannot read back (quotes, braces, hex
 * ids), kept whole as one token so that the annotation survives a round trip. The cursor is on
 * the '('; brackets are balanced, quoted strings skipped. */
static bool lex_raw_object(lexer *l, ir_token *t)
{
    const char *s = l->s;
    int depth = 0;
    char quote = 0;
    for (uint32_t i = l->pos; i < l->len; i++) {
        char c = s[i];
        if (quote) {
            if (c == '\\' && i + 1 < l->len)
                i++;
            else if (c == quote)
                quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '(' || c == '[' || c == '{') {
            depth++;
        } else if (c == ')' || c == ']' || c == '}') {
            if (--depth == 0) {
                l->pos = i + 1;
                t->kind = IR_TK_RAW;
                t->text = su_arena_strndup(l->a, s + t->begin, l->pos - t->begin);
                t->end = l->pos;
                return true;
            }
            if (depth < 0)
                break;
        }
    }
    su_error(l->d, span(l, t->begin, t->end), "unterminated %s(...): its brackets do not balance", t->text);
    return false;
}

static bool lex_one(lexer *l, ir_token *t, bool after_dot, bool after_operand)
{
    memset(t, 0, sizeof *t);
    const char *s = l->s;
    char c = s[l->pos];
    uint32_t b = l->pos;
    if (!after_operand && c == '-' && lex_inf(l, t, b, true))
        return true;
    if (lex_inf(l, t, b, false))
        return true;
    if (c == '%')
        return lex_sigil_name(l, t, IR_TK_LOCAL);
    if (c == '@')
        return lex_sigil_name(l, t, IR_TK_GLOBAL);
    if (c == '"')
        return lex_string(l, t);
    if (isdigit((unsigned char)c) ||
        (!after_operand && c == '-' && l->pos + 1 < l->len && isdigit((unsigned char)s[l->pos + 1])))
        return lex_number(l, t, after_dot);
    if (isalpha((unsigned char)c) || c == '_') {
        while (l->pos < l->len && (is_name_char(s[l->pos]) ||
                                   (s[l->pos] == '.' && l->pos + 1 < l->len && isalpha((unsigned char)s[l->pos + 1]))))
            l->pos++;
        t->kind = IR_TK_IDENT;
        t->text = su_arena_strndup(l->a, s + b, l->pos - b);
        t->begin = b;
        t->end = l->pos;
        if (strcmp(t->text, "VirtualDevice") == 0 && l->pos < l->len && s[l->pos] == '(')
            return lex_raw_object(l, t);
        return true;
    }
    for (size_t i = 0; i < sizeof operators / sizeof *operators; i++) {
        size_t n = strlen(operators[i].text);
        if (l->pos + n <= l->len && strncmp(s + l->pos, operators[i].text, n) == 0) {
            t->kind = IR_TK_PUNCT;
            t->punct = operators[i].punct;
            t->begin = b;
            t->end = l->pos += (uint32_t)n;
            return true;
        }
    }
    if (strchr("()[]{},;:=.#*?", c) && c) {
        t->kind = IR_TK_PUNCT;
        t->punct = c;
        t->begin = b;
        t->end = ++l->pos;
        return true;
    }
    if (isprint((unsigned char)c))
        su_error(l->d, span(l, b, b + 1), "unexpected character '%c'", c);
    else
        su_error(l->d, span(l, b, b + 1), "unexpected byte 0x%02x", (unsigned char)c);
    return false;
}

bool ir_lex(su_arena *a, const su_source *src, size_t end, ir_token **toks, size_t *ntoks, su_diags *d)
{
    lexer l = {a, src, src->text, 0, (uint32_t)(end < src->len ? end : src->len), d, {0}};
    bool okk = true;
    for (;;) {
        if (!skip_space(&l)) {
            okk = false;
            break;
        }
        if (l.pos >= l.len)
            break;
        const ir_token *prev = l.toks.len ? &l.toks.data[l.toks.len - 1] : NULL;
        bool after_dot = prev && prev->kind == IR_TK_PUNCT && prev->punct == '.';
        bool after_operand = prev && (prev->kind == IR_TK_LOCAL || prev->kind == IR_TK_GLOBAL ||
                                      prev->kind == IR_TK_INT || prev->kind == IR_TK_FLOAT ||
                                      (prev->kind == IR_TK_PUNCT && (prev->punct == ')' || prev->punct == ']')));
        ir_token t;
        if (!lex_one(&l, &t, after_dot, after_operand)) {
            okk = false;
            break;
        }
        su_vec_push(&l.toks, t);
    }
    ir_token eof = {0};
    eof.kind = IR_TK_EOF;
    /* end of file is reported just after the last token, not on a blank line */
    eof.begin = eof.end = l.toks.len ? l.toks.data[l.toks.len - 1].end : 0;
    su_vec_push(&l.toks, eof);
    *toks = l.toks.data;
    *ntoks = l.toks.len;
    return okk;
}
