/* parser.c — Relay text (version 0.0.5, as TVM's astext() prints it) into a
 * module. One function per grammar rule; the first error stops the parse and
 * is recorded with its span, so that the CLI can print FILE:LINE:COL, the line
 * and a caret. Names are resolved while parsing: `%x` must be bound before use
 * (graph bindings `%0 = ...;`, parameters, lets), `@f` may be used before its
 * def and is checked at the end. Types are checked later by typeinfer.c.
 *
 *   module   := ('#' '[' 'version' '=' STRING ']')? (def | typedef)*
 *   def      := 'def' GLOBAL tparams? '(' params ')' ('->' annot)? '{' body '}'
 *   typedef  := 'extern'? 'type' IDENT tparams? ('{' (IDENT ('(' type % ',' ')')?) % ',' '}')?
 *   tparams  := '[' IDENT % ',' ']'
 *   params   := (LOCAL ('{' IDENT '=' attr '}')? (':' annot)? | IDENT '=' attr) % ','
 *   body     := (LOCAL '=' expr ';' | 'let' LOCAL (':' annot)? '=' expr ';' | expr ';')* expr
 *   expr     := unary (binop unary)*      binop by TVM's precedence: * / > + - > < <= > >= > == !=
 *   unary    := '-' unary | postfix
 *   postfix  := primary ('(' args ')' | '.' INT)*
 *   primary  := LOCAL | GLOBAL | IDENT(op) | IDENT(constructor) | number | True | False
 *             | 'fn' tparams? ... | 'if' ... | '{' body '}' | match | 'ref' '(' expr ')'
 *             | 'ref_read' '(' expr ')' | 'ref_write' '(' expr ',' expr ')'
 *             | ('on_device' | 'device_copy') '(' expr (',' IDENT '=' attr)* ')'
 *             | '(' ')' | '(' expr ')' | '(' expr (',' expr)* ','? ')'
 *   match    := ('match' | 'match' '?') postfix '{' (pattern '=' '>' expr) % ',' '}'
 *   pattern  := '_' | LOCAL (':' type)? | IDENT(constructor) ('(' pattern % ',' ')')? | '(' pattern % ',' ')'
 *   annot    := type | '_'                (the incomplete type: inference fills it in)
 *   type     := 'Tensor' '[' '(' INT % ',' ')' ',' IDENT ']' | IDENT(dtype, int, float) | IDENT(tparam)
 *             | IDENT(adt) ('[' type % ',' ']')? | 'ref' '(' type ')'
 *             | '(' type % ',' ')' | 'fn' '(' type % ',' ')' '->' type
 *
 * Infix operators become the calls TVM makes of them (`%a + %b` is
 * add(%a, %b)), so they print canonically as calls. `e1; e2` is TVM's
 * sequencing sugar, a let of an unnamed variable (printed `let %_ = e1;`).
 * A constructor without fields written alone (`Nil`) is a call of it with no
 * arguments, as in TVM. Virtual devices are kept as the text TVM printed
 * (the lexer reads `VirtualDevice(...)` whole). Constructs TVM reads that
 * relay-tune does not implement (free variables, kinds, dynamic shapes) are
 * refused by name.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

enum { MAX_DEPTH = 1000 };  /* nesting bound, so that no input overflows the stack */

typedef struct scope_entry { const char *name; ir_expr *e; } scope_entry;
typedef SU_VEC(ir_expr *) expr_vec;
typedef SU_VEC(const ir_type *) type_vec;
typedef SU_VEC(ir_attr_kv) kv_vec;
typedef SU_VEC(ir_ctor) ctor_vec;

typedef struct parser {
    ir_module *m;
    su_diags *d;
    ir_token *toks;
    size_t ntoks, pos;
    bool failed;
    int depth;
    SU_VEC(scope_entry) scope;      /* visible local names, innermost last */
    SU_VEC(size_t) marks;           /* scope.len at each scope's start */
    SU_VEC(ir_expr *) global_refs;  /* every @f used, checked at the end */
    SU_VEC(const ir_type *) tscope; /* visible type parameters, innermost last */
    SU_VEC(const ir_adt *) defined; /* type definitions parsed so far (the others are only named yet) */
} parser;

/* ---- tokens ---- */

static ir_token *peek(parser *p) { return &p->toks[p->pos]; }
static ir_token *peek_at(parser *p, size_t k)
{
    return &p->toks[p->pos + k < p->ntoks ? p->pos + k : p->ntoks - 1];
}
static ir_token *next(parser *p)
{
    ir_token *t = &p->toks[p->pos];
    if (t->kind != IR_TK_EOF)
        p->pos++;
    return t;
}
static bool is_punct(const ir_token *t, char c) { return t->kind == IR_TK_PUNCT && t->punct == c; }
static bool is_word(const ir_token *t, const char *w) { return t->kind == IR_TK_IDENT && strcmp(t->text, w) == 0; }

static su_span tok_span(parser *p, const ir_token *t)
{
    return (su_span){&p->m->source, t->begin, t->end};
}
static su_span span_from(parser *p, uint32_t begin)
{
    uint32_t end = p->pos ? p->toks[p->pos - 1].end : begin;
    return (su_span){&p->m->source, begin, end > begin ? end : begin};
}

/* Records an error at token t (only the first error of a parse is kept). */
static void *fail_at(parser *p, su_span sp, const char *fmt, ...) SU_PRINTF(3, 4);
static void *fail_at(parser *p, su_span sp, const char *fmt, ...)
{
    if (!p->failed) {
        va_list ap;
        va_start(ap, fmt);
        su_diag_vadd(p->d, SU_ERROR, sp, fmt, ap);
        va_end(ap);
    }
    p->failed = true;
    return NULL;
}

static void *unexpected(parser *p, const char *wanted)
{
    ir_token *t = peek(p);
    if (t->kind == IR_TK_EOF)
        return fail_at(p, tok_span(p, t), "expected %s, found end of file", wanted);
    return fail_at(p, tok_span(p, t), "expected %s, found '%.*s'", wanted, (int)(t->end - t->begin),
                   p->m->source.text + t->begin);
}

/* After an item of a list that `close` ends: consumes a ',' and leaves
 * `close` to the caller; anything else is an error naming what was wanted. */
static bool list_sep(parser *p, char close, const char *wanted)
{
    if (is_punct(peek(p), ',')) {
        next(p);
        return true;
    }
    if (is_punct(peek(p), close))
        return true;
    unexpected(p, wanted);
    return false;
}

static bool expect(parser *p, char c)
{
    if (is_punct(peek(p), c)) {
        next(p);
        return true;
    }
    char want[8];
    if (c == IR_P_ARROW)
        snprintf(want, sizeof want, "'->'");
    else
        snprintf(want, sizeof want, "'%c'", c);
    unexpected(p, want);
    return false;
}

static bool enter(parser *p)
{
    if (++p->depth > MAX_DEPTH) {
        fail_at(p, tok_span(p, peek(p)), "nesting is deeper than %d levels", MAX_DEPTH);
        return false;
    }
    return true;
}
static void leave(parser *p) { p->depth--; }

/* ---- scopes ---- */

static void push_scope(parser *p) { su_vec_push(&p->marks, p->scope.len); }
static void pop_scope(parser *p) { p->scope.len = p->marks.data[--p->marks.len]; }

static ir_expr *lookup(parser *p, const char *name)
{
    for (size_t i = p->scope.len; i-- > 0;)
        if (strcmp(p->scope.data[i].name, name) == 0)
            return p->scope.data[i].e;
    return NULL;
}

/* Binds name in the innermost scope; a second binding in the same scope is an error. */
static bool bind(parser *p, const ir_token *t, ir_expr *e)
{
    size_t start = p->marks.len ? p->marks.data[p->marks.len - 1] : 0;
    for (size_t i = start; i < p->scope.len; i++)
        if (strcmp(p->scope.data[i].name, t->text) == 0) {
            fail_at(p, tok_span(p, t), "%%%s is already defined in this scope", t->text);
            return false;
        }
    su_vec_push(&p->scope, ((scope_entry){t->text, e}));
    return true;
}

/* ---- types ---- */

static const ir_type *parse_type(parser *p);

static const ir_type *lookup_tparam(parser *p, const char *name)
{
    for (size_t i = p->tscope.len; i-- > 0;)
        if (strcmp(p->tscope.data[i]->name, name) == 0)
            return p->tscope.data[i];
    return NULL;
}

/* '[' IDENT, ... ']' after a def's name or `fn`: new type parameters, made
 * visible until the caller pops them (tscope.len back to what it was). */
static bool parse_tparams(parser *p, type_vec *out)
{
    if (!is_punct(peek(p), '['))
        return true;
    next(p);
    size_t first = p->tscope.len;
    while (!is_punct(peek(p), ']')) {
        ir_token *t = peek(p);
        if (t->kind != IR_TK_IDENT) {
            unexpected(p, "a type parameter name");
            return false;
        }
        for (size_t i = first; i < p->tscope.len; i++)
            if (strcmp(p->tscope.data[i]->name, t->text) == 0) {
                fail_at(p, tok_span(p, t), "type parameter %s is declared twice", t->text);
                return false;
            }
        const ir_type *v = ir_type_var(&p->m->arena, t->text);
        su_vec_push(&p->tscope, v);
        su_vec_push(out, v);
        next(p);
        if (is_punct(peek(p), ':')) {
            fail_at(p, tok_span(p, peek(p)), "kinds on type parameters (%s: Kind) are not supported", t->text);
            return false;
        }
        if (!list_sep(p, ']', "',' or ']'"))
            return false;
    }
    next(p);
    if (out->len == 0) {
        fail_at(p, span_from(p, peek(p)->begin), "an empty list of type parameters");
        return false;
    }
    return true;
}

static const ir_type *parse_tensor_type(parser *p)
{
    next(p); /* Tensor */
    if (!expect(p, '[') || !expect(p, '('))
        return NULL;
    SU_VEC(int64_t) dims = {0};
    while (!is_punct(peek(p), ')')) {
        ir_token *t = peek(p);
        if (is_punct(t, '?') || is_word(t, "Any")) {
            su_vec_free(&dims);
            return fail_at(p, tok_span(p, t), "dynamic dimensions are not supported: every extent must be a constant");
        }
        if (t->kind != IR_TK_INT || t->suffixed) {
            su_vec_free(&dims);
            return unexpected(p, "a dimension (an integer)");
        }
        if (t->i < 0) {
            su_vec_free(&dims);
            return fail_at(p, tok_span(p, t), "negative dimension %lld in a tensor type", (long long)t->i);
        }
        su_vec_push(&dims, t->i);
        next(p);
        /* bound the element count so that no size computation can overflow */
        int64_t numel = 1;
        for (size_t k = 0; k < dims.len && numel; k++) {
            if (dims.data[k] && numel > ((int64_t)1 << 48) / dims.data[k]) {
                su_vec_free(&dims);
                return fail_at(p, tok_span(p, t), "tensor type is too large (more than 2^48 elements)");
            }
            numel *= dims.data[k];
        }
        if (!list_sep(p, ')', "',' or ')' in a shape")) {
            su_vec_free(&dims);
            return NULL;
        }
    }
    next(p);
    const ir_type *ty = NULL;
    ir_token *dt = NULL;
    ir_dtype dtype;
    if (dims.len > IR_MAX_DIMS)
        fail_at(p, tok_span(p, peek(p)), "tensor rank %zu exceeds the maximum of %d", dims.len, IR_MAX_DIMS);
    else if (expect(p, ',')) {
        dt = peek(p);
        if (dt->kind != IR_TK_IDENT)
            unexpected(p, "a dtype such as float32");
        else if (!ir_dtype_parse(dt->text, strlen(dt->text), &dtype))
            fail_at(p, tok_span(p, dt), "unknown dtype '%s'", dt->text);
        else {
            next(p);
            if (expect(p, ']'))
                ty = ir_tensor_type(&p->m->arena, dtype, (int)dims.len, dims.data);
        }
    }
    su_vec_free(&dims);
    return ty;
}

/* '(' type, ... ')' — a tuple type; also the parameter list of a fn type. */
static bool parse_type_list(parser *p, type_vec *out)
{
    if (!expect(p, '('))
        return false;
    while (!is_punct(peek(p), ')')) {
        const ir_type *t = parse_type(p);
        if (!t)
            return false;
        su_vec_push(out, t);
        if (!list_sep(p, ')', "',' or ')'"))
            return false;
    }
    next(p);
    return true;
}

/* IDENT ('[' type, ... ']')? naming a type definition: the type applied to its arguments. */
static const ir_type *parse_adt_type(parser *p, const ir_adt *adt)
{
    ir_token *name = next(p);
    type_vec args = {0};
    const ir_type *ty = NULL;
    bool okk = true;
    if (is_punct(peek(p), '[')) {
        next(p);
        while (okk && !is_punct(peek(p), ']')) {
            const ir_type *a = parse_type(p);
            if (!(okk = a != NULL))
                break;
            su_vec_push(&args, a);
            okk = list_sep(p, ']', "',' or ']'");
        }
        if (okk)
            next(p);
    }
    if (okk && (int)args.len != adt->ntparams)
        fail_at(p, span_from(p, name->begin), "the type %s takes %d type argument%s, but %zu %s given", adt->name,
                adt->ntparams, adt->ntparams == 1 ? "" : "s", args.len, args.len == 1 ? "was" : "were");
    else if (okk)
        ty = ir_adt_type(&p->m->arena, adt, (int)args.len, args.data);
    su_vec_free(&args);
    return ty;
}

static const ir_type *parse_type_inner(parser *p)
{
    ir_token *t = peek(p);
    if (is_word(t, "Tensor"))
        return parse_tensor_type(p);
    if (is_punct(t, '(') || is_word(t, "fn")) {
        bool isfn = is_word(t, "fn");
        if (isfn)
            next(p);
        type_vec fields = {0};
        const ir_type *ty = NULL;
        if (parse_type_list(p, &fields)) {
            if (!isfn)
                ty = ir_tuple_type(&p->m->arena, (int)fields.len, fields.data);
            else if (expect(p, IR_P_ARROW)) {
                const ir_type *ret = parse_type(p);
                if (ret)
                    ty = ir_func_type(&p->m->arena, (int)fields.len, fields.data, ret);
            }
        }
        su_vec_free(&fields);
        return ty;
    }
    ir_dtype dt;
    if (t->kind == IR_TK_IDENT && ir_dtype_parse(t->text, strlen(t->text), &dt)) {
        next(p);
        return ir_scalar_type(&p->m->arena, dt);
    }
    /* the short names TVM's dtype parser takes: int is int32, float float32 */
    if (is_word(t, "int") || is_word(t, "float")) {
        next(p);
        return ir_scalar_type(&p->m->arena, is_word(t, "int") ? IR_INT32 : IR_FLOAT32);
    }
    if (t->kind == IR_TK_IDENT) {
        const ir_type *v = lookup_tparam(p, t->text);
        if (v) {
            next(p);
            return v;
        }
    }
    if (is_word(t, "_"))
        return fail_at(p, tok_span(p, t),
                       "the incomplete type _ can only be a whole annotation (%%x: _), not part of a type");
    if (is_word(t, "ref") && is_punct(peek_at(p, 1), '(')) {
        next(p);
        next(p);
        const ir_type *of = parse_type(p);
        return of && expect(p, ')') ? ir_ref_type(&p->m->arena, of) : NULL;
    }
    const ir_adt *adt = t->kind == IR_TK_IDENT ? ir_module_find_adt(p->m, t->text) : NULL;
    if (adt)
        return parse_adt_type(p, adt);
    if (t->kind == IR_TK_IDENT && is_punct(peek_at(p, 1), '['))
        return fail_at(p, tok_span(p, t), "unknown type %s[...]: no type definition (type %s[...] { ... }) declares it "
                       "before this use", t->text, t->text);
    if (t->kind == IR_TK_IDENT)
        return fail_at(p, tok_span(p, t),
                       "unknown type '%s' (expected Tensor[...], a dtype, a type parameter, a defined type, a tuple "
                       "or fn type)", t->text);
    return unexpected(p, "a type");
}

static const ir_type *parse_type(parser *p)
{
    if (!enter(p))
        return NULL;
    const ir_type *t = parse_type_inner(p);
    leave(p);
    return t;
}

/* An annotation after ':' or '->': a type, or TVM's incomplete type `_`,
 * which leaves *out NULL for inference to fill in. False on an error. */
static bool parse_annot(parser *p, const ir_type **out)
{
    *out = NULL;
    if (is_word(peek(p), "_")) {
        next(p);
        return true;
    }
    return (*out = parse_type(p)) != NULL;
}

/* ---- attribute values ---- */

static bool parse_attr_value(parser *p, ir_attr_val *out)
{
    memset(out, 0, sizeof *out);
    ir_token *t = peek(p);
    if (!enter(p))
        return false;
    bool okk = true;
    if (is_punct(t, '[')) {
        next(p);
        SU_VEC(ir_attr_val) items = {0};
        while (okk && !is_punct(peek(p), ']')) {
            ir_attr_val v;
            okk = parse_attr_value(p, &v);
            if (okk) {
                su_vec_push(&items, v);
                okk = list_sep(p, ']', "',' or ']'");
            }
        }
        if (okk)
            next(p);
        out->kind = IR_AV_LIST;
        out->n = (int)items.len;
        out->items = items.len ? su_arena_dup(&p->m->arena, items.data, items.len * sizeof *items.data) : NULL;
        su_vec_free(&items);
    } else if (t->kind == IR_TK_INT) {
        out->kind = IR_AV_INT;
        out->i = t->i;
        next(p);
    } else if (t->kind == IR_TK_FLOAT) {
        out->kind = IR_AV_FLOAT;
        out->f = t->f;
        next(p);
    } else if (t->kind == IR_TK_STRING) {
        out->kind = IR_AV_STR;
        out->s = t->text;
        next(p);
    } else if (is_word(t, "True") || is_word(t, "False")) {
        out->kind = IR_AV_BOOL;
        out->i = is_word(t, "True");
        next(p);
    } else if (is_word(t, "None")) {
        out->kind = IR_AV_NONE;
        next(p);
    } else if (t->kind == IR_TK_RAW) {
        out->kind = IR_AV_RAW;
        out->s = t->text;
        next(p);
    } else if (is_word(t, "meta") && is_punct(peek_at(p, 1), '[') && peek_at(p, 2)->kind == IR_TK_IDENT &&
               is_punct(peek_at(p, 3), ']') && is_punct(peek_at(p, 4), '[') && peek_at(p, 5)->kind == IR_TK_INT &&
               is_punct(peek_at(p, 6), ']')) {
        /* meta[VirtualDevice][0]: an object of TVM's metadata, kept as written */
        uint32_t begin = t->begin;
        for (int k = 0; k < 7; k++)
            next(p);
        out->kind = IR_AV_RAW;
        out->s = su_arena_strndup(&p->m->arena, p->m->source.text + begin, p->toks[p->pos - 1].end - begin);
    } else {
        okk = unexpected(p, "an attribute value (number, string, True, False, None or a list)") != NULL;
    }
    leave(p);
    return okk;
}

/* IDENT '=' value, with the cursor on IDENT. */
static bool parse_attr_kv(parser *p, ir_attr_kv *kv, su_span *sp)
{
    ir_token *name = next(p);
    *sp = tok_span(p, name);
    kv->name = name->text;
    next(p); /* = */
    return parse_attr_value(p, &kv->val);
}

static bool at_attr(parser *p)
{
    return peek(p)->kind == IR_TK_IDENT && is_punct(peek_at(p, 1), '=');
}

/* Normalizes written attributes against op's schema. */
static const ir_attrs *op_attrs(parser *p, const ir_op_def *op, const ir_attr_kv *kvs, const su_span *spans, int n,
                               su_span call_span)
{
    const ir_attr_schema *s = op->schema;
    ir_attr_val *vals = su_arena_alloc(&p->m->arena, (size_t)(s->n ? s->n : 1) * sizeof *vals);
    const ir_attrs *defaults = ir_op_default_attrs(&p->m->arena, op);
    for (int i = 0; i < s->n; i++)
        vals[i] = defaults->vals[i];
    uint64_t seen = 0;
    for (int k = 0; k < n; k++) {
        int idx = ir_op_attr_index(op, kvs[k].name, strlen(kvs[k].name));
        if (idx < 0) {
            su_buf names = {0};
            for (int i = 0; i < s->n; i++)
                su_buf_printf(&names, "%s%s", i ? ", " : "", s->defs[i].name);
            fail_at(p, spans[k], "%s has no attribute '%s' (%s%s)", op->name, kvs[k].name,
                    s->n ? "its attributes: " : "it takes no attributes", su_buf_str(&names));
            su_buf_free(&names);
            return NULL;
        }
        if (seen & (1ULL << idx))
            return fail_at(p, spans[k], "attribute '%s' is given twice", kvs[k].name);
        seen |= 1ULL << idx;
        const char *why = NULL;
        if (!ir_attr_coerce(&p->m->arena, s->defs[idx].type, &kvs[k].val, &vals[idx], &why))
            return fail_at(p, spans[k], "%s: attribute '%s' must be %s", op->name, kvs[k].name, why);
    }
    for (int i = 0; i < s->n; i++)
        if (s->defs[i].required && !(seen & (1ULL << i)))
            return fail_at(p, call_span, "%s: attribute '%s' is required", op->name, s->defs[i].name);
    ir_attrs *at = su_arena_alloc(&p->m->arena, sizeof *at);
    at->n = s->n;
    at->vals = vals;
    return at;
}

/* ---- expressions ---- */

static ir_expr *parse_expr(parser *p);
static ir_expr *parse_postfix(parser *p);
static ir_expr *parse_body(parser *p, char closer);

static ir_expr *parse_constant(parser *p)
{
    ir_token *t = next(p);
    const ir_tensor *v;
    if (t->kind == IR_TK_IDENT) { /* True / False */
        v = ir_tensor_scalar(&p->m->arena, IR_BOOL, is_word(t, "True"));
    } else {
        double x = t->kind == IR_TK_INT ? (double)t->i : t->f;
        /* as TVM does, an integer without a suffix that does not fit int32 is int64 */
        ir_dtype dt = t->kind == IR_TK_INT && !t->suffixed && (t->i > INT32_MAX || t->i < INT32_MIN) ? IR_INT64
                                                                                                    : t->dtype;
        static const struct { ir_dtype dt; double lo, hi; } range[] = {
            {IR_INT8, -128, 127}, {IR_INT16, -32768, 32767}, {IR_INT32, -2147483648.0, 2147483647.0},
            {IR_UINT8, 0, 255},
        };
        for (size_t i = 0; i < sizeof range / sizeof *range; i++)
            if (range[i].dt == dt && !(x >= range[i].lo && x <= range[i].hi))
                return fail_at(p, tok_span(p, t), "the constant %.*s does not fit in %s", (int)(t->end - t->begin),
                               p->m->source.text + t->begin, ir_dtype_name(t->dtype));
        v = t->kind == IR_TK_INT && dt == IR_INT64 ? ir_tensor_scalar_i64(&p->m->arena, t->i)
                                                    : ir_tensor_scalar(&p->m->arena, dt, x);
    }
    return ir_const(p->m, tok_span(p, t), v);
}

/* '{' virtual_device=VALUE '}' after a parameter's name, as TVM prints a
 * parameter's device; the value is kept (and printed back), not read. */
static const ir_attr_val *parse_param_device(parser *p)
{
    next(p); /* { */
    if (!is_word(peek(p), "virtual_device") || !is_punct(peek_at(p, 1), '=')) {
        unexpected(p, "virtual_device=... (the one annotation TVM prints on a parameter)");
        return NULL;
    }
    ir_attr_kv kv;
    su_span sp;
    if (!parse_attr_kv(p, &kv, &sp) || !expect(p, '}'))
        return NULL;
    return su_arena_dup(&p->m->arena, &kv.val, sizeof kv.val);
}

/* Parameters of a def or fn, with the function attributes that TVM prints among them. */
static bool parse_params(parser *p, expr_vec *params, kv_vec *attrs)
{
    if (!expect(p, '('))
        return false;
    while (!is_punct(peek(p), ')')) {
        if (at_attr(p)) {
            ir_attr_kv kv;
            su_span sp;
            if (!parse_attr_kv(p, &kv, &sp))
                return false;
            su_vec_push(attrs, kv);
        } else if (peek(p)->kind == IR_TK_LOCAL) {
            ir_token *name = next(p);
            const ir_type *annot = NULL;
            const ir_attr_val *vdev = NULL;
            if (is_punct(peek(p), '{') && !(vdev = parse_param_device(p)))
                return false;
            if (is_punct(peek(p), ':')) {
                next(p);
                if (!parse_annot(p, &annot))
                    return false;
            }
            ir_expr *v = ir_var(p->m, tok_span(p, name), name->text, annot);
            v->u.var.vdev = vdev;
            if (!bind(p, name, v))
                return false;
            su_vec_push(params, v);
        } else {
            unexpected(p, "a parameter (%name) or ')'");
            return false;
        }
        if (!list_sep(p, ')', "',' or ')'"))
            return false;
    }
    next(p);
    return true;
}

/* [A, ...] (params) -> T { body } after `fn`; also the shape of a def after its name. */
static ir_expr *parse_function(parser *p, uint32_t begin)
{
    expr_vec params = {0};
    kv_vec attrs = {0};
    type_vec tparams = {0};
    ir_expr *f = NULL;
    size_t tmark = p->tscope.len;
    push_scope(p);
    const ir_type *ret = NULL;
    if (parse_tparams(p, &tparams) && parse_params(p, &params, &attrs)) {
        bool okk = true;
        if (is_punct(peek(p), IR_P_ARROW)) {
            next(p);
            okk = parse_annot(p, &ret);
        }
        ir_expr *body = okk && expect(p, '{') ? parse_body(p, '}') : NULL;
        if (body && expect(p, '}')) {
            f = ir_func(p->m, span_from(p, begin), (int)params.len, params.data, ret, body, (int)attrs.len,
                        attrs.data);
            f->u.func.ntparams = (int)tparams.len;
            f->u.func.tparams = tparams.len ? su_arena_dup(&p->m->arena, tparams.data, tparams.len * sizeof *tparams.data)
                                            : NULL;
        }
    }
    pop_scope(p);
    p->tscope.len = tmark;
    su_vec_free(&params);
    su_vec_free(&attrs);
    su_vec_free(&tparams);
    return f;
}

static ir_expr *parse_if(parser *p)
{
    uint32_t begin = next(p)->begin; /* if */
    if (!expect(p, '('))
        return NULL;
    ir_expr *c = parse_expr(p);
    if (!c || !expect(p, ')') || !expect(p, '{'))
        return NULL;
    push_scope(p);
    ir_expr *t = parse_body(p, '}');
    pop_scope(p);
    if (!t || !expect(p, '}'))
        return NULL;
    if (!is_word(peek(p), "else"))
        return unexpected(p, "'else' (every if needs an else branch)");
    next(p);
    if (!expect(p, '{'))
        return NULL;
    push_scope(p);
    ir_expr *e = parse_body(p, '}');
    pop_scope(p);
    if (!e || !expect(p, '}'))
        return NULL;
    return ir_if(p->m, span_from(p, begin), c, t, e);
}

/* '(' ... ')': unit, parenthesized expression, tuple, or a nested body. */
static ir_expr *parse_paren(parser *p)
{
    uint32_t begin = next(p)->begin;
    if (is_word(peek(p), "let") || (peek(p)->kind == IR_TK_LOCAL && is_punct(peek_at(p, 1), '='))) {
        push_scope(p);
        ir_expr *b = parse_body(p, ')');
        pop_scope(p);
        return b && expect(p, ')') ? b : NULL;
    }
    SU_VEC(ir_expr *) fields = {0};
    bool comma = false;
    while (!is_punct(peek(p), ')')) {
        ir_expr *e = parse_expr(p);
        if (!e)
            goto fail;
        if (fields.len == 0 && is_punct(peek(p), ';') && !is_punct(peek_at(p, 1), ')')) {
            /* (e1; e2): sequencing inside parentheses */
            next(p);
            push_scope(p);
            ir_expr *body = parse_body(p, ')');
            pop_scope(p);
            su_vec_free(&fields);
            if (!body || !expect(p, ')'))
                return NULL;
            return ir_let(p->m, span_from(p, begin), ir_var(p->m, e->span, "_", NULL), e, body);
        }
        su_vec_push(&fields, e);
        comma = comma || is_punct(peek(p), ',');
        if (!list_sep(p, ')', "',' or ')'"))
            goto fail;
    }
    next(p);
    ir_expr *r = fields.len == 1 && !comma ? fields.data[0]
                                           : ir_tuple(p->m, span_from(p, begin), (int)fields.len, fields.data);
    su_vec_free(&fields);
    return r;
fail:
    su_vec_free(&fields);
    return NULL;
}

/* meta[relay.Constant][i]: a tensor constant from the #[metadata] section. */
static ir_expr *parse_meta(parser *p)
{
    ir_token *t = next(p);
    if (!expect(p, '['))
        return NULL;
    ir_token *kind = peek(p);
    if (!is_word(kind, "relay.Constant"))
        return fail_at(p, tok_span(p, kind), "only meta[relay.Constant][i] references are supported");
    next(p);
    if (!expect(p, ']') || !expect(p, '['))
        return NULL;
    ir_token *i = peek(p);
    if (i->kind != IR_TK_INT || i->suffixed || i->i < 0)
        return unexpected(p, "a constant index");
    next(p);
    if (!expect(p, ']'))
        return NULL;
    if ((uint64_t)i->i >= p->m->nmeta)
        return fail_at(p, span_from(p, t->begin), "meta[relay.Constant][%lld] does not exist: the #[metadata] section %s",
                       (long long)i->i, p->m->nmeta ? "has fewer constants" : "is missing");
    return ir_const(p->m, span_from(p, t->begin), p->m->meta[i->i]);
}

/* A word in expression position that names no operator nor constructor:
 * the constructs TVM reads that relay-tune does not implement are named,
 * the rest is unknown. */
static ir_expr *unknown_word(parser *p, const ir_token *t)
{
    static const struct { const char *word, *what; } refused[] = {
        {"free_var", "free variables (free_var) are not supported: every variable must be bound"},
        {"ref", "ref must be called: ref(value)"},
        {"ref_read", "ref_read must be called: ref_read(reference)"},
        {"ref_write", "ref_write must be called: ref_write(reference, value)"},
        {"on_device", "on_device must be called: on_device(value, virtual_device=...)"},
        {"device_copy", "device_copy must be called: device_copy(value, src_virtual_device=..., dst_virtual_device=...)"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        if (strcmp(t->text, refused[i].word) == 0)
            return fail_at(p, tok_span(p, t), "%s", refused[i].what);
    if (isupper((unsigned char)t->text[0]) && !strchr(t->text, '.'))
        return fail_at(p, tok_span(p, t),
                       "unknown constructor %s: no type definition (type T { %s(...), ... }) declares it, and it is "
                       "not an operator", t->text, t->text);
    return fail_at(p, tok_span(p, t), "unknown operator '%s'", t->text);
}

/* ---- algebraic data types, match, references, devices ---- */

static bool parse_pattern(parser *p, ir_pattern *out);

/* '(' pattern, ... ')' into a pattern's subpatterns. */
static bool parse_pattern_list(parser *p, ir_pattern *out)
{
    if (!expect(p, '('))
        return false;
    SU_VEC(ir_pattern) subs = {0};
    bool okk = true;
    while (okk && !is_punct(peek(p), ')')) {
        ir_pattern sub;
        if (!(okk = parse_pattern(p, &sub)))
            break;
        su_vec_push(&subs, sub);
        okk = list_sep(p, ')', "',' or ')' in a pattern");
    }
    if (okk)
        next(p);
    out->n = (int)subs.len;
    out->subs = subs.len ? su_arena_dup(&p->m->arena, subs.data, subs.len * sizeof *subs.data) : NULL;
    su_vec_free(&subs);
    return okk;
}

/* `_`, `%x[: T]` (bound in the clause's scope), `C(p, ...)`, `C` or `(p, ...)`. */
static bool parse_pattern(parser *p, ir_pattern *out)
{
    memset(out, 0, sizeof *out);
    ir_token *t = peek(p);
    if (!enter(p))
        return false;
    bool okk = true;
    if (is_word(t, "_")) {
        next(p);
        out->kind = IR_PT_WILD;
    } else if (t->kind == IR_TK_LOCAL) {
        next(p);
        const ir_type *annot = NULL;
        if (is_punct(peek(p), ':')) {
            next(p);
            okk = (annot = parse_type(p)) != NULL;
        }
        out->kind = IR_PT_VAR;
        out->var = ir_var(p->m, tok_span(p, t), t->text, annot);
        okk = okk && bind(p, t, out->var);
    } else if (t->kind == IR_TK_IDENT) {
        const ir_ctor *c = ir_module_find_ctor(p->m, t->text);
        next(p);
        out->kind = IR_PT_CTOR;
        out->ctor = c;
        if (!c)
            okk = fail_at(p, tok_span(p, t), "unknown constructor %s in a pattern (a variable is written %%%s)", t->text,
                          t->text) != NULL;
        else if (is_punct(peek(p), '('))
            okk = parse_pattern_list(p, out);
        if (okk && out->n != c->nfields)
            okk = fail_at(p, span_from(p, t->begin), "the pattern %s has %d field%s, but the constructor %s takes %d",
                          c->name, out->n, out->n == 1 ? "" : "s", c->name, c->nfields) != NULL;
    } else if (is_punct(t, '(')) {
        out->kind = IR_PT_TUPLE;
        okk = parse_pattern_list(p, out);
    } else {
        okk = unexpected(p, "a pattern (_, %x, a constructor or a tuple of patterns)") != NULL;
    }
    out->span = span_from(p, t->begin);
    leave(p);
    return okk;
}

/* match (e) { pattern => expr, ... } and match? (...) { ... }, after the word `match`. */
static ir_expr *parse_match(parser *p, uint32_t begin)
{
    bool partial = is_punct(peek(p), '?');
    if (partial)
        next(p);
    ir_expr *data = parse_postfix(p);
    if (!data || !expect(p, '{'))
        return NULL;
    SU_VEC(ir_clause) clauses = {0};
    ir_expr *m = NULL;
    while (!is_punct(peek(p), '}')) {
        ir_clause c;
        push_scope(p);
        bool okk = parse_pattern(p, &c.pat) && expect(p, '=');
        if (okk && !is_punct(peek(p), IR_P_GT))
            okk = unexpected(p, "'=>' after a pattern") != NULL;
        if (okk)
            next(p);
        c.body = okk ? parse_expr(p) : NULL;
        pop_scope(p);
        if (!c.body)
            goto done;
        su_vec_push(&clauses, c);
        if (!list_sep(p, '}', "',' or '}' after a match clause"))
            goto done;
    }
    next(p);
    if (!clauses.len)
        fail_at(p, span_from(p, begin), "a match needs at least one clause");
    else
        m = ir_match(p->m, span_from(p, begin), data, (int)clauses.len, clauses.data, partial);
done:
    su_vec_free(&clauses);
    return m;
}

/* ref(e), ref_read(r), ref_write(r, v), with the cursor on the word. */
static ir_expr *parse_ref(parser *p, ir_expr_kind kind)
{
    uint32_t begin = next(p)->begin;
    if (!expect(p, '('))
        return NULL;
    ir_expr *a = parse_expr(p), *b = NULL;
    if (!a)
        return NULL;
    if (kind == IR_REF_WRITE && (!expect(p, ',') || !(b = parse_expr(p))))
        return NULL;
    if (!expect(p, ')'))
        return NULL;
    su_span sp = span_from(p, begin);
    return kind == IR_REF_NEW ? ir_ref_expr(p->m, sp, kind, NULL, a)
           : kind == IR_REF_READ ? ir_ref_expr(p->m, sp, kind, a, NULL)
                                 : ir_ref_expr(p->m, sp, kind, a, b);
}

/* on_device(e, attrs) or device_copy(e, attrs), with the cursor on the word:
 * TVM's device annotations, kept with their attributes as written. */
static ir_expr *parse_device(parser *p, bool copy)
{
    uint32_t begin = next(p)->begin;
    if (!expect(p, '('))
        return NULL;
    ir_expr *v = parse_expr(p);
    if (!v)
        return NULL;
    kv_vec kvs = {0};
    ir_expr *r = NULL;
    while (is_punct(peek(p), ',')) {
        next(p);
        if (is_punct(peek(p), ')'))
            break;
        if (!at_attr(p)) {
            unexpected(p, copy ? "an attribute of device_copy (name=value): it takes one value"
                               : "an attribute of on_device (name=value): it takes one value");
            goto done;
        }
        ir_attr_kv kv;
        su_span sp;
        if (!parse_attr_kv(p, &kv, &sp))
            goto done;
        su_vec_push(&kvs, kv);
    }
    if (expect(p, ')'))
        r = ir_device(p->m, span_from(p, begin), copy, v, (int)kvs.len, kvs.data);
done:
    su_vec_free(&kvs);
    return r;
}

/* '{' body '}' in expression position (TVM's block). */
static ir_expr *parse_block(parser *p)
{
    next(p);
    push_scope(p);
    ir_expr *b = parse_body(p, '}');
    pop_scope(p);
    return b && expect(p, '}') ? b : NULL;
}

static ir_expr *parse_primary(parser *p)
{
    ir_token *t = peek(p);
    switch (t->kind) {
    case IR_TK_LOCAL: {
        ir_expr *e = lookup(p, t->text);
        if (!e)
            return fail_at(p, tok_span(p, t), "unknown variable %%%s", t->text);
        next(p);
        return e;
    }
    case IR_TK_GLOBAL: {
        /* each use is its own node, so that errors point at the use */
        next(p);
        ir_expr *g = ir_global(p->m, tok_span(p, t), t->text);
        su_vec_push(&p->global_refs, g);
        return g;
    }
    case IR_TK_INT:
    case IR_TK_FLOAT:
        return parse_constant(p);
    case IR_TK_PUNCT:
        if (t->punct == '(')
            return parse_paren(p);
        if (t->punct == '{')
            return parse_block(p);
        return unexpected(p, "an expression");
    case IR_TK_IDENT:
        if (is_word(t, "True") || is_word(t, "False"))
            return parse_constant(p);
        if (is_word(t, "fn")) {
            next(p);
            return parse_function(p, t->begin);
        }
        if (is_word(t, "if"))
            return parse_if(p);
        if (is_word(t, "meta"))
            return parse_meta(p);
        if (is_word(t, "let"))
            return fail_at(p, tok_span(p, t), "'let' must start a statement: let %%x = value; body");
        if (is_word(t, "match")) {
            next(p);
            return parse_match(p, t->begin);
        }
        if (is_punct(peek_at(p, 1), '(')) {
            if (is_word(t, "ref"))
                return parse_ref(p, IR_REF_NEW);
            if (is_word(t, "ref_read"))
                return parse_ref(p, IR_REF_READ);
            if (is_word(t, "ref_write"))
                return parse_ref(p, IR_REF_WRITE);
            if (is_word(t, "on_device") || is_word(t, "device_copy"))
                return parse_device(p, is_word(t, "device_copy"));
        }
        {
            const ir_ctor *c = ir_module_find_ctor(p->m, t->text);
            if (c) {
                next(p);
                return ir_ctor_ref(p->m, tok_span(p, t), c);
            }
        }
        {
            const ir_op_def *op = ir_op_lookup(t->text, strlen(t->text));
            if (!op)
                return unknown_word(p, t);
            next(p);
            return ir_op_ref(p->m, tok_span(p, t), op);
        }
    default:
        return unexpected(p, "an expression");
    }
}

/* '(' args, attrs ')' after a callee. */
static ir_expr *parse_call(parser *p, ir_expr *fn, uint32_t begin)
{
    next(p); /* ( */
    SU_VEC(ir_expr *) args = {0};
    SU_VEC(ir_attr_kv) kvs = {0};
    SU_VEC(su_span) spans = {0};
    ir_expr *call = NULL;
    while (!is_punct(peek(p), ')')) {
        if (at_attr(p)) {
            ir_attr_kv kv;
            su_span sp;
            if (!parse_attr_kv(p, &kv, &sp))
                goto done;
            su_vec_push(&kvs, kv);
            su_vec_push(&spans, sp);
        } else {
            if (kvs.len) {
                unexpected(p, "an attribute (name=value): arguments come before attributes");
                goto done;
            }
            ir_expr *a = parse_expr(p);
            if (!a)
                goto done;
            su_vec_push(&args, a);
        }
        if (!list_sep(p, ')', "',' or ')'"))
            goto done;
    }
    next(p);
    su_span sp = span_from(p, begin);
    const ir_attrs *attrs = NULL;
    if (fn->kind == IR_OP) {
        const ir_op_def *op = fn->u.op.def;
        if ((int)args.len < op->min_args || (int)args.len > op->max_args) {
            if (op->min_args == op->max_args)
                fail_at(p, sp, "%s takes %d argument%s, but %zu %s given", op->name, op->min_args,
                        op->min_args == 1 ? "" : "s", args.len, args.len == 1 ? "was" : "were");
            else
                fail_at(p, sp, "%s takes %d to %d arguments, but %zu were given", op->name, op->min_args,
                        op->max_args, args.len);
            goto done;
        }
        if (!(attrs = op_attrs(p, op, kvs.data, spans.data, (int)kvs.len, sp)))
            goto done;
    }
    if (fn->kind == IR_CTOR && (int)args.len != fn->u.ctor.def->nfields) {
        const ir_ctor *c = fn->u.ctor.def;
        fail_at(p, sp, "the constructor %s takes %d field%s, but %zu %s given", c->name, c->nfields,
                c->nfields == 1 ? "" : "s", args.len, args.len == 1 ? "was" : "were");
        goto done;
    }
    call = ir_call(p->m, sp, fn, (int)args.len, args.data, attrs);
    if (fn->kind != IR_OP && kvs.len) {
        /* TVM keeps attributes on any call; they mean nothing to a function, but they print back */
        call->u.call.nkvs = (int)kvs.len;
        call->u.call.kvs = su_arena_dup(&p->m->arena, kvs.data, kvs.len * sizeof *kvs.data);
    }
done:
    su_vec_free(&args);
    su_vec_free(&kvs);
    su_vec_free(&spans);
    return call;
}

static ir_expr *parse_postfix(parser *p)
{
    if (!enter(p))
        return NULL;
    uint32_t begin = peek(p)->begin;
    ir_expr *e = parse_primary(p);
    while (e) {
        if (is_punct(peek(p), '(')) {
            e = parse_call(p, e, begin);
        } else if (is_punct(peek(p), '.')) {
            next(p);
            ir_token *i = peek(p);
            if (i->kind != IR_TK_INT || i->suffixed || i->i < 0 || i->i > 1000000) {
                e = unexpected(p, "a tuple index after '.'");
                break;
            }
            next(p);
            e = ir_proj(p->m, span_from(p, begin), e, (int)i->i);
        } else {
            break;
        }
    }
    leave(p);
    /* a constructor without fields is its value: Nil is a call of Nil, as in TVM */
    if (e && e->kind == IR_CTOR && e->u.ctor.def->nfields == 0)
        e = ir_call(p->m, e->span, e, 0, NULL, NULL);
    if (e && e->kind == IR_OP && !p->failed)
        return fail_at(p, e->span, "operator %s must be called: %s(...)", e->u.op.def->name, e->u.op.def->name);
    return e;
}

/* `-x` is negative(x), as TVM parses it. */
static ir_expr *parse_unary(parser *p)
{
    if (!is_punct(peek(p), '-'))
        return parse_postfix(p);
    uint32_t begin = next(p)->begin;
    if (!enter(p))
        return NULL;
    ir_expr *x = parse_unary(p);
    leave(p);
    return x ? ir_op_call(p->m, span_from(p, begin), IR_OP_NEGATIVE, 1, &x, NULL) : NULL;
}

/* TVM's operator table: precedence (higher binds tighter), all left-associative. */
static const struct { char punct; int prec; ir_op_id op; } binops[] = {
    {'*', 12, IR_OP_MULTIPLY},   {'/', 12, IR_OP_DIVIDE},    {'+', 10, IR_OP_ADD},
    {'-', 10, IR_OP_SUBTRACT},   {'<', 8, IR_OP_LESS},       {IR_P_LE, 8, IR_OP_LESS_EQUAL},
    {IR_P_GT, 8, IR_OP_GREATER}, {IR_P_GE, 8, IR_OP_GREATER_EQUAL}, {IR_P_EQ, 7, IR_OP_EQUAL},
    {IR_P_NE, 7, IR_OP_NOT_EQUAL},
};

static int binop_at(parser *p)
{
    const ir_token *t = peek(p);
    for (int i = 0; t->kind == IR_TK_PUNCT && i < (int)(sizeof binops / sizeof *binops); i++)
        if (binops[i].punct == t->punct)
            return i;
    return -1;
}

/* Precedence climbing: operands joined by operators binding at least min_prec. */
static ir_expr *parse_binary(parser *p, int min_prec)
{
    if (!enter(p))
        return NULL;
    uint32_t begin = peek(p)->begin;
    ir_expr *lhs = parse_unary(p);
    int k;
    while (lhs && (k = binop_at(p)) >= 0 && binops[k].prec >= min_prec) {
        next(p);
        ir_expr *rhs = parse_binary(p, binops[k].prec + 1);
        ir_expr *ab[2] = {lhs, rhs};
        lhs = rhs ? ir_op_call(p->m, span_from(p, begin), binops[k].op, 2, ab, NULL) : NULL;
    }
    leave(p);
    return lhs;
}

static ir_expr *parse_expr(parser *p)
{
    return parse_binary(p, 0);
}

/* A sequence of bindings ending in an expression, up to (not including) closer. */
static ir_expr *parse_body(parser *p, char closer)
{
    if (!enter(p))
        return NULL;
    ir_expr *result = NULL;
    ir_token *t = peek(p);
    if (is_word(t, "let")) {
        uint32_t begin = next(p)->begin;
        ir_token *name = peek(p);
        if (name->kind != IR_TK_LOCAL) {
            leave(p);
            return unexpected(p, "a variable (%name) after 'let'");
        }
        next(p);
        const ir_type *annot = NULL;
        if (is_punct(peek(p), ':')) {
            next(p);
            if (!parse_annot(p, &annot)) {
                leave(p);
                return NULL;
            }
        }
        ir_expr *var = ir_var(p->m, tok_span(p, name), name->text, annot);
        ir_expr *value = expect(p, '=') ? parse_expr(p) : NULL;
        if (value && expect(p, ';')) {
            push_scope(p);
            ir_expr *body = bind(p, name, var) ? parse_body(p, closer) : NULL;
            pop_scope(p);
            if (body)
                result = ir_let(p->m, span_from(p, begin), var, value, body);
        }
    } else if (t->kind == IR_TK_LOCAL && is_punct(peek_at(p, 1), '=')) {
        next(p);
        next(p);
        ir_expr *value = parse_expr(p);
        if (value && expect(p, ';') && bind(p, t, value))
            result = parse_body(p, closer);
    } else if (is_punct(t, closer)) {
        result = fail_at(p, tok_span(p, t), "expected an expression before '%c': a body must end with its result",
                         closer);
    } else {
        uint32_t begin = t->begin;
        result = parse_expr(p);
        if (result && is_punct(peek(p), ';') && !is_punct(peek_at(p, 1), closer)) {
            /* e1; e2: TVM's sequencing, a let of a variable that no one can name */
            next(p);
            ir_expr *var = ir_var(p->m, result->span, "_", NULL);
            ir_expr *body = parse_body(p, closer);
            result = body ? ir_let(p->m, span_from(p, begin), var, result, body) : NULL;
        } else if (result && !is_punct(peek(p), closer)) {
            if (is_punct(peek(p), ';'))
                result = fail_at(p, tok_span(p, peek(p)),
                                 "unexpected ';': the last expression of a body has no ';' (or bind it: %%N = ...;)");
            else
                result = unexpected(p, closer == '}' ? "'}'" : "')'");
        }
    }
    leave(p);
    return result;
}

/* ---- module ---- */

static bool parse_version(parser *p)
{
    if (!is_punct(peek(p), '#'))
        return true;
    next(p);
    if (!expect(p, '['))
        return false;
    ir_token *w = peek(p);
    if (!is_word(w, "version")) {
        unexpected(p, "'version'");
        return false;
    }
    next(p);
    if (!expect(p, '='))
        return false;
    ir_token *v = peek(p);
    if (v->kind != IR_TK_STRING) {
        unexpected(p, "a version string such as \"0.0.5\"");
        return false;
    }
    if (strcmp(v->text, "0.0.5") != 0) {
        fail_at(p, tok_span(p, v), "unsupported Relay text version \"%s\" (relay-tune reads \"0.0.5\")", v->text);
        return false;
    }
    next(p);
    return expect(p, ']');
}

/* One constructor `C` or `C(T, ...)` of adt (its type parameters in scope). */
static bool parse_ctor(parser *p, ir_adt *adt, ctor_vec *out)
{
    ir_token *name = peek(p);
    if (name->kind != IR_TK_IDENT) {
        unexpected(p, "a constructor name");
        return false;
    }
    if (ir_module_find_ctor(p->m, name->text) || ir_op_lookup(name->text, strlen(name->text))) {
        fail_at(p, tok_span(p, name), "the constructor %s is defined twice (or names an operator)", name->text);
        return false;
    }
    if (ir_module_find_adt(p->m, name->text)) {
        /* TVM rejects it too: type Ayy { Lmao } with type Lmao { Ayy } */
        fail_at(p, tok_span(p, name), "the constructor %s has the name of a type", name->text);
        return false;
    }
    for (size_t i = 0; i < out->len; i++)
        if (strcmp(out->data[i].name, name->text) == 0) {
            fail_at(p, tok_span(p, name), "the constructor %s is defined twice", name->text);
            return false;
        }
    next(p);
    type_vec fields = {0};
    bool okk = !is_punct(peek(p), '(') || parse_type_list(p, &fields);
    if (okk) {
        ir_ctor c = {name->text, (int)out->len, (int)fields.len,
                     fields.len ? su_arena_dup(&p->m->arena, fields.data, fields.len * sizeof *fields.data) : NULL,
                     adt, tok_span(p, name)};
        su_vec_push(out, c);
    }
    su_vec_free(&fields);
    return okk;
}

/* `type Name[A, ...] { C(T, ...), ... }` or `extern type Name[A, ...]`. The
 * type is known from its name on, so constructors may be recursive. */
static bool parse_typedef(parser *p)
{
    ir_token *kw = peek(p);
    bool ext = is_word(kw, "extern");
    if (ext) {
        next(p);
        if (!is_word(peek(p), "type")) {
            unexpected(p, "'type' after 'extern'");
            return false;
        }
    }
    next(p); /* type */
    ir_token *name = peek(p);
    if (name->kind != IR_TK_IDENT) {
        unexpected(p, "a type name");
        return false;
    }
    /* named by the scan before parsing (prescan_types), so that earlier defs could use it */
    ir_adt *adt = (ir_adt *)ir_module_find_adt(p->m, name->text);
    for (size_t i = 0; adt && i < p->defined.len; i++)
        if (p->defined.data[i] == adt)
            adt = NULL;
    if (!adt) {
        fail_at(p, tok_span(p, name), "the type %s is already defined", name->text);
        return false;
    }
    su_vec_push(&p->defined, adt);
    next(p);
    size_t tmark = p->tscope.len;
    type_vec tparams = {0};
    ctor_vec ctors = {0};
    bool okk = parse_tparams(p, &tparams);
    if (okk && (int)tparams.len != adt->ntparams)
        okk = fail_at(p, tok_span(p, name), "internal error: the type %s changed its parameters", name->text) != NULL;
    if (okk) {
        adt->span = span_from(p, kw->begin);
        adt->tparams = tparams.len ? su_arena_dup(&p->m->arena, tparams.data, tparams.len * sizeof *tparams.data) : NULL;
    }
    if (adt && is_punct(peek(p), '{')) {
        if (ext)
            okk = fail_at(p, tok_span(p, peek(p)), "an extern type has no constructors") != NULL;
        else
            next(p);
        while (okk && !is_punct(peek(p), '}')) {
            okk = parse_ctor(p, adt, &ctors);
            okk = okk && list_sep(p, '}', "',' or '}' after a constructor");
        }
        if (okk)
            next(p);
    }
    if (adt && okk) {
        adt->is_extern = ext;
        adt->nctors = (int)ctors.len;
        adt->ctors = ctors.len ? su_arena_dup(&p->m->arena, ctors.data, ctors.len * sizeof *ctors.data) : NULL;
    }
    p->tscope.len = tmark;
    su_vec_free(&tparams);
    su_vec_free(&ctors);
    return adt && okk;
}

/* Names every type the module defines (`type T[A, B]` outside any braces)
 * before anything is parsed, as TVM does, so that a def may use a type
 * defined after it; constructors still come into scope at their type's
 * definition. */
static bool prescan_types(parser *p)
{
    int depth = 0;
    for (size_t i = p->pos; i + 1 < p->ntoks; i++) {
        const ir_token *t = &p->toks[i];
        if (t->kind == IR_TK_PUNCT && (t->punct == '{' || t->punct == '(' || t->punct == '['))
            depth++;
        else if (t->kind == IR_TK_PUNCT && (t->punct == '}' || t->punct == ')' || t->punct == ']'))
            depth--;
        if (depth != 0 || !is_word(t, "type") || p->toks[i + 1].kind != IR_TK_IDENT)
            continue;
        const ir_token *name = &p->toks[i + 1];
        ir_dtype dt;
        if (ir_dtype_parse(name->text, strlen(name->text), &dt) || is_word(name, "Tensor") || is_word(name, "int") ||
            is_word(name, "float") || ir_module_find_adt(p->m, name->text))
            continue;   /* the definition itself reports it */
        int n = 0;
        if (i + 2 < p->ntoks && is_punct(&p->toks[i + 2], '['))
            for (size_t k = i + 3; k < p->ntoks && !is_punct(&p->toks[k], ']'); k++)
                n += p->toks[k].kind == IR_TK_IDENT;
        ir_module_add_adt(p->m, tok_span(p, name), name->text, n, NULL);
    }
    return true;
}

static bool parse_def(parser *p)
{
    ir_token *kw = peek(p);
    if (is_word(kw, "type") || is_word(kw, "extern"))
        return parse_typedef(p);
    if (!is_word(kw, "def")) {
        unexpected(p, "'def' or 'type'");
        return false;
    }
    next(p);
    ir_token *name = peek(p);
    if (name->kind != IR_TK_GLOBAL) {
        unexpected(p, "a function name such as @main");
        return false;
    }
    next(p);
    if (ir_module_find(p->m, name->text)) {
        fail_at(p, tok_span(p, name), "@%s is defined twice", name->text);
        return false;
    }
    ir_expr *f = parse_function(p, kw->begin);
    if (!f)
        return false;
    ir_expr *g = ir_global(p->m, tok_span(p, name), name->text);
    ir_module_add(p->m, name->text, g, f);
    return true;
}

/* Finds a "#[metadata]" line; the text before it is Relay, the rest is the
 * JSON of the module's tensor constants. *end gets where Relay text ends. */
static bool read_metadata(ir_module *m, size_t *end, su_diags *d)
{
    const char *text = m->source.text, *hit = text;
    size_t len = m->source.len;
    while ((hit = strstr(hit, "#[metadata]")) && hit != text && hit[-1] != '\n')
        hit++;
    if (!hit)
        return true;
    *end = (size_t)(hit - text);
    const char *json = hit + strlen("#[metadata]");
    size_t n;
    const char *why = ir_metadata_parse(&m->arena, json, len - (size_t)(json - text), &m->meta, &n);
    if (why) {
        su_error(d, (su_span){&m->source, (uint32_t)*end, (uint32_t)*end + 11}, "%s", why);
        return false;
    }
    m->nmeta = n;
    return true;
}

ir_module *ir_parse(const char *filename, const char *text, size_t len, su_diags *d)
{
    ir_module *m = ir_module_new();
    m->source.name = su_arena_strdup(&m->arena, filename);
    m->source.text = su_arena_strndup(&m->arena, text, len);
    m->source.len = len;
    if (memchr(text, 0, len)) {
        uint32_t at = (uint32_t)((const char *)memchr(text, 0, len) - text);
        su_error(d, (su_span){&m->source, at, at + 1}, "unexpected NUL byte");
        ir_module_free(m);
        return NULL;
    }
    parser p = {.m = m, .d = d};
    size_t end = len;
    if (!read_metadata(m, &end, d)) {
        ir_module_free(m);
        return NULL;
    }
    if (!ir_lex(&m->arena, &m->source, end, &p.toks, &p.ntoks, d)) {
        free(p.toks);
        ir_module_free(m);
        return NULL;
    }
    bool okk = parse_version(&p) && prescan_types(&p);
    while (okk && peek(&p)->kind != IR_TK_EOF)
        okk = parse_def(&p);
    for (size_t i = 0; okk && i < p.global_refs.len; i++) {
        ir_expr *r = p.global_refs.data[i];
        if (!ir_module_find(m, r->u.global.name))
            okk = fail_at(&p, r->span, "unknown global function @%s", r->u.global.name) != NULL;
    }
    free(p.toks);
    su_vec_free(&p.scope);
    su_vec_free(&p.marks);
    su_vec_free(&p.global_refs);
    su_vec_free(&p.tscope);
    su_vec_free(&p.defined);
    if (!okk || p.failed) {
        ir_module_free(m);
        return NULL;
    }
    return m;
}
