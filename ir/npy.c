/* npy.c — numpy's .npy format (versions 1.0, 2.0 and 3.0): reading into a
 * heap tensor in C order and host byte order, and writing.
 *
 * A .npy file is the magic "\x93NUMPY", a version (major, minor), a header
 * length (2 bytes little-endian in 1.0, 4 bytes in 2.0 and 3.0), a header
 * that is a Python dict literal — {'descr': '<f4', 'fortran_order': False,
 * 'shape': (2, 3), } — padded with spaces to a multiple of 64 bytes, then the
 * raw elements. A Fortran-order array is transposed into C order and a
 * byte-swapped one is swapped into host order on reading, so callers only
 * ever see plain tensors; every dtype outside IR_DTYPES (uint16, complex,
 * strings, objects, structured records) is refused by name.
 *
 * Nothing in the file is trusted: every length is checked against the bytes
 * that are actually there before anything is allocated or copied, and every
 * failure is a message naming the file (or "FILE: entry 'x.npy'" for an
 * entry of an .npz) — never a crash. fuzz/fuzz_npy.c keeps it that way. */
#include <errno.h>
#include <string.h>

#include "ir/ir.h"

/* Limit on the header dict's size; numpy itself refuses headers over 10000
 * bytes unless told otherwise. */
#define MAX_HEADER (1 << 20)

static bool host_is_little(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

static bool fail(su_buf *err, const char *name, const char *fmt, ...) SU_PRINTF(3, 4);
static bool fail(su_buf *err, const char *name, const char *fmt, ...)
{
    va_list ap;
    su_buf_printf(err, "%s: ", name);
    va_start(ap, fmt);
    su_buf_vprintf(err, fmt, ap);
    va_end(ap);
    return false;
}

/* ---- the header dict ---------------------------------------------------- */

typedef struct header {
    ir_dtype dtype;
    bool swap;              /* data byte order differs from the host's */
    bool fortran;           /* column-major data */
    int ndim;
    int64_t shape[IR_MAX_DIMS];
} header;

typedef struct cursor {
    const char *p, *end;
} cursor;

static void skip_ws(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static bool eat(cursor *c, char ch)
{
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

/* A Python string literal in ' or " quotes (no escapes are needed by numpy's
 * keys and dtype strings); copies at most cap-1 characters into out. */
static bool read_str(cursor *c, char *out, size_t cap)
{
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return false;
    char q = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' || n + 1 >= cap)
            return false;
        out[n++] = *c->p++;
    }
    if (c->p >= c->end)
        return false;
    c->p++;
    out[n] = 0;
    return true;
}

static bool read_word(cursor *c, const char *w)
{
    skip_ws(c);
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) >= n && memcmp(c->p, w, n) == 0) {
        c->p += n;
        return true;
    }
    return false;
}

/* A non-negative integer, optionally with Python 2's L suffix. */
static bool read_extent(cursor *c, int64_t *out)
{
    skip_ws(c);
    int64_t v = 0;
    const char *start = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        if (v > (INT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (*c->p++ - '0');
    }
    if (c->p == start)
        return false;
    if (c->p < c->end && *c->p == 'L')
        c->p++;
    *out = v;
    return true;
}

/* Maps a numpy type string ('<f4', '|b1', '>i8') to a dtype. */
static bool parse_descr(const char *name, const char *d, header *h, su_buf *err)
{
    static const struct { const char *code; ir_dtype dt; } codes[] = {
        {"f4", IR_FLOAT32}, {"f2", IR_FLOAT16}, {"f8", IR_FLOAT64}, {"i1", IR_INT8}, {"i2", IR_INT16},
        {"i4", IR_INT32}, {"i8", IR_INT64}, {"u1", IR_UINT8}, {"b1", IR_BOOL},
    };
    char order = d[0];
    const char *code = d + 1;
    if (order != '<' && order != '>' && order != '|' && order != '=')
        code = d, order = '=';
    for (size_t i = 0; i < sizeof codes / sizeof *codes; i++) {
        if (strcmp(code, codes[i].code) != 0)
            continue;
        h->dtype = codes[i].dt;
        bool little = order == '<' || (order != '>' && host_is_little());
        h->swap = ir_dtype_bytes(h->dtype) > 1 && little != host_is_little();
        return true;
    }
    const char *what = "";
    switch (code[0]) {
    case 'u': what = " (unsigned integers other than uint8)"; break;
    case 'c': what = " (complex numbers)"; break;
    case 'U': case 'S': case 'a': what = " (strings)"; break;
    case 'O': what = " (Python objects)"; break;
    case 'M': case 'm': what = " (dates and times)"; break;
    case 'V': what = " (raw records)"; break;
    }
    return fail(err, name, "unsupported dtype '%s'%s: relay-tune reads float16/32/64, int8/16/32/64, uint8 and bool",
                d, what);
}

static bool parse_dict(const char *name, const char *text, size_t len, header *h, su_buf *err)
{
    cursor c = {text, text + len};
    bool have_descr = false, have_order = false, have_shape = false;
    if (!eat(&c, '{'))
        return fail(err, name, "malformed header: it does not start with a dict");
    while (!eat(&c, '}')) {
        char key[32], val[64];
        if (!read_str(&c, key, sizeof key) || !eat(&c, ':'))
            return fail(err, name, "malformed header: expected 'key': value");
        if (!strcmp(key, "descr")) {
            skip_ws(&c);
            if (c.p < c.end && *c.p == '[')
                return fail(err, name, "structured (record) arrays are not supported");
            if (!read_str(&c, val, sizeof val))
                return fail(err, name, "malformed header: descr must be a type string such as '<f4'");
            if (!parse_descr(name, val, h, err))
                return false;
            have_descr = true;
        } else if (!strcmp(key, "fortran_order")) {
            if (read_word(&c, "True"))
                h->fortran = true;
            else if (read_word(&c, "False"))
                h->fortran = false;
            else
                return fail(err, name, "malformed header: fortran_order must be True or False");
            have_order = true;
        } else if (!strcmp(key, "shape")) {
            if (!eat(&c, '('))
                return fail(err, name, "malformed header: shape must be a tuple");
            h->ndim = 0;
            while (!eat(&c, ')')) {
                if (h->ndim == IR_MAX_DIMS)
                    return fail(err, name, "rank above the %d supported", IR_MAX_DIMS);
                if (!read_extent(&c, &h->shape[h->ndim]))
                    return fail(err, name, "malformed header: shape must hold non-negative integers");
                h->ndim++;
                if (!eat(&c, ',')) {
                    if (!eat(&c, ')'))
                        return fail(err, name, "malformed header: unterminated shape tuple");
                    break;
                }
            }
            have_shape = true;
        } else {
            return fail(err, name, "malformed header: unknown key '%s'", key);
        }
        if (!eat(&c, ',')) {
            if (!eat(&c, '}'))
                return fail(err, name, "malformed header: expected ',' or '}'");
            break;
        }
    }
    skip_ws(&c);
    if (c.p != c.end)
        return fail(err, name, "malformed header: text after the dict");
    if (!have_descr || !have_order || !have_shape)
        return fail(err, name, "malformed header: it needs descr, fortran_order and shape");
    return true;
}

/* ---- reading ------------------------------------------------------------ */

static void swap_bytes(uint8_t *p, int64_t n, int size)
{
    for (int64_t i = 0; i < n; i++, p += size)
        for (int a = 0, b = size - 1; a < b; a++, b--) {
            uint8_t t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* Copies column-major data of shape h->shape into t in C order. */
static void from_fortran(ir_tensor *t, const uint8_t *src)
{
    int nd = t->ndim, size = ir_dtype_bytes(t->dtype);
    int64_t n = ir_tensor_numel(t), fstride[IR_MAX_DIMS], idx[IR_MAX_DIMS] = {0}, off = 0;
    for (int i = 0; i < nd; i++)
        fstride[i] = i ? fstride[i - 1] * t->shape[i - 1] : 1;
    uint8_t *dst = t->data;
    for (int64_t k = 0; k < n; k++) {
        memcpy(dst + k * size, src + off * size, (size_t)size);
        /* next C-order index: the last axis moves fastest */
        for (int i = nd - 1; i >= 0; i--) {
            off += fstride[i];
            if (++idx[i] < t->shape[i])
                break;
            off -= fstride[i] * t->shape[i];
            idx[i] = 0;
        }
    }
}

ir_tensor *ir_npy_parse(const char *name, const void *data, size_t len, su_buf *err)
{
    const uint8_t *p = data;
    if (len < 10 || memcmp(p, "\x93NUMPY", 6) != 0) {
        fail(err, name, len < 6 ? "truncated: %zu bytes is too short for a .npy file"
                                : "not a .npy file (%zu bytes, no \\x93NUMPY magic)", len);
        return NULL;
    }
    int major = p[6], minor = p[7];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = (size_t)p[8] | (size_t)p[9] << 8;
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12) {
            fail(err, name, "truncated header (%zu bytes)", len);
            return NULL;
        }
        hlen = (size_t)p[8] | (size_t)p[9] << 8 | (size_t)p[10] << 16 | (size_t)p[11] << 24;
        hstart = 12;
    } else {
        fail(err, name, "unsupported .npy format version %d.%d (1.0, 2.0 and 3.0 are read)", major, minor);
        return NULL;
    }
    if (hlen > MAX_HEADER) {
        fail(err, name, "header of %zu bytes is larger than the %d accepted", hlen, MAX_HEADER);
        return NULL;
    }
    if (hlen > len - hstart) {
        fail(err, name, "truncated header: it says %zu bytes, the file has %zu after the preamble", hlen,
             len - hstart);
        return NULL;
    }
    header h = {0};
    if (!parse_dict(name, (const char *)p + hstart, hlen, &h, err))
        return NULL;
    int64_t numel;
    if (!ir_shape_numel(h.ndim, h.shape, ir_dtype_bytes(h.dtype), &numel)) {
        fail(err, name, "shape is too large");
        return NULL;
    }
    size_t need = (size_t)numel * (size_t)ir_dtype_bytes(h.dtype), have = len - hstart - hlen;
    if (have != need) {
        fail(err, name, have < need ? "truncated data: the header's shape needs %zu bytes, the file has %zu"
                                    : "the header's shape needs %zu bytes of data, but the file has %zu",
             need, have);
        return NULL;
    }
    ir_tensor *t = ir_tensor_alloc(h.dtype, h.ndim, h.shape);
    if (!t) {
        fail(err, name, "out of memory for %zu bytes of data", need);
        return NULL;
    }
    const uint8_t *raw = p + hstart + hlen;
    if (h.fortran && h.ndim > 1 && numel > 0)
        from_fortran(t, raw);
    else if (need)
        memcpy(t->data, raw, need);
    if (h.swap)
        swap_bytes(t->data, numel, ir_dtype_bytes(h.dtype));
    return t;
}

ir_tensor *ir_npy_load(const char *path, su_buf *err)
{
    size_t len;
    char *data = su_read_file(path, &len);
    if (!data) {
        su_buf_printf(err, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    ir_tensor *t = ir_npy_parse(path, data, len, err);
    free(data);
    return t;
}

/* ---- writing ------------------------------------------------------------ */

static const char *descr(ir_dtype dt)
{
    bool le = host_is_little();
    switch (dt) {
    case IR_FLOAT32: return le ? "<f4" : ">f4";
    case IR_FLOAT16: return le ? "<f2" : ">f2";
    case IR_FLOAT64: return le ? "<f8" : ">f8";
    case IR_INT8: return "|i1";
    case IR_INT16: return le ? "<i2" : ">i2";
    case IR_INT32: return le ? "<i4" : ">i4";
    case IR_INT64: return le ? "<i8" : ">i8";
    case IR_UINT8: return "|u1";
    case IR_BOOL: return "|b1";
    case IR_DTYPE_COUNT: break;
    }
    su_panic("bad dtype");
}

void ir_npy_encode(su_buf *out, const ir_tensor *t)
{
    su_buf h = {0};
    su_buf_printf(&h, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr(t->dtype));
    for (int i = 0; i < t->ndim; i++)
        su_buf_printf(&h, "%lld%s", (long long)t->shape[i], i + 1 < t->ndim ? ", " : t->ndim == 1 ? "," : "");
    su_buf_puts(&h, "), }");
    /* numpy pads the header with spaces so that the data starts at a
     * multiple of 64 bytes, and ends it with a newline */
    bool v2 = h.len + 11 > 65535;
    size_t pre = v2 ? 12 : 10, total = (pre + h.len + 1 + 63) / 64 * 64;
    while (pre + h.len + 1 < total)
        su_buf_putc(&h, ' ');
    su_buf_putc(&h, '\n');
    uint8_t head[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', v2 ? 2 : 1, 0};
    size_t n = h.len;
    for (size_t i = 0; i < (v2 ? 4u : 2u); i++)
        head[8 + i] = (uint8_t)(n >> (8 * i));
    su_buf_putn(out, (const char *)head, pre);
    su_buf_putn(out, h.data, h.len);
    su_buf_putn(out, t->data, ir_tensor_nbytes(t));
    su_buf_free(&h);
}

bool ir_npy_save(const char *path, const ir_tensor *t, su_buf *err)
{
    su_buf b = {0};
    ir_npy_encode(&b, t);
    bool ok = su_write_file(path, b.data, b.len);
    if (!ok)
        su_buf_printf(err, "%s: cannot write: %s", path, strerror(errno));
    su_buf_free(&b);
    return ok;
}
