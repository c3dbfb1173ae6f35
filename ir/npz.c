/* npz.c — numpy's .npz archives: a zip file with one .npy member per array
 * (numpy.savez stores them, numpy.savez_compressed deflates them). Model
 * weights travel in this format, keyed by parameter name.
 *
 * The zip is read through its central directory (the authoritative list of
 * members, at the end of the file), with the zip64 records numpy writes for
 * large archives; each member's data is found through its local header,
 * inflated with zlib when compressed, checked against its CRC-32 and handed
 * to ir_npy_parse. Writing produces a plain zip (no zip64: an archive of 4 GiB
 * or more is refused) with fixed timestamps, so equal inputs give equal files.
 *
 * As in npy.c nothing read is trusted: every offset and size is checked
 * against the file before use, an inflated size is bounded by what deflate
 * can reach from the compressed bytes before any allocation, and errors name
 * the archive and the member ("W.npz: entry 'w.npy': CRC mismatch"). */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <zlib.h>

#include "ir/ir.h"

enum {
    SIG_LOCAL = 0x04034b50,     /* local file header */
    SIG_CENTRAL = 0x02014b50,   /* central directory file header */
    SIG_EOCD = 0x06054b50,      /* end of central directory */
    SIG_EOCD64 = 0x06064b50,    /* zip64 end of central directory */
    SIG_LOC64 = 0x07064b50,     /* zip64 end of central directory locator */
    METHOD_STORED = 0,
    METHOD_DEFLATE = 8,
};

/* deflate cannot expand data by more than 1032:1; anything claiming more is
 * corrupt, and refusing it early bounds the memory a small file can ask for. */
#define MAX_RATIO 1032

static uint64_t rd(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static bool fail(su_buf *err, const char *fmt, ...) SU_PRINTF(2, 3);
static bool fail(su_buf *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    su_buf_vprintf(err, fmt, ap);
    va_end(ap);
    return false;
}

/* ---- reading ------------------------------------------------------------ */

/* One member as the central directory describes it. */
typedef struct member {
    char name[512];
    uint16_t flags, method;
    uint32_t crc;
    uint64_t csize, usize, offset;
} member;

typedef struct zip {
    const char *file;       /* for messages */
    const uint8_t *p;
    size_t len;
    uint64_t count, cd_offset, cd_size;
} zip;

/* Finds the end-of-central-directory record (and its zip64 form). */
static bool find_directory(zip *z, su_buf *err)
{
    if (z->len < 22)
        return fail(err, "%s: not a zip archive (%zu bytes; an .npz is a zip file)", z->file, z->len);
    size_t lo = z->len > 22 + 65535 ? z->len - 22 - 65535 : 0, at = SIZE_MAX;
    for (size_t i = z->len - 22 + 1; i-- > lo;)
        if (rd(z->p + i, 4) == SIG_EOCD && i + 22 + rd(z->p + i + 20, 2) <= z->len) {
            at = i;
            break;
        }
    if (at == SIZE_MAX)
        return fail(err, "%s: not a zip archive (no end-of-directory record; truncated?)", z->file);
    const uint8_t *e = z->p + at;
    if (rd(e + 4, 2) != 0 || rd(e + 6, 2) != 0)
        return fail(err, "%s: multi-disk zip archives are not supported", z->file);
    z->count = rd(e + 10, 2);
    z->cd_size = rd(e + 12, 4);
    z->cd_offset = rd(e + 16, 4);
    if (z->count == 0xffff || z->cd_size == 0xffffffff || z->cd_offset == 0xffffffff) {
        if (at < 20 || rd(e - 20, 4) != SIG_LOC64)
            return fail(err, "%s: zip64 archive without its zip64 locator", z->file);
        uint64_t off = rd(e - 20 + 8, 8);
        if (off > z->len || z->len - off < 56 || rd(z->p + off, 4) != SIG_EOCD64)
            return fail(err, "%s: corrupt zip64 end-of-directory record", z->file);
        const uint8_t *e64 = z->p + off;
        z->count = rd(e64 + 32, 8);
        z->cd_size = rd(e64 + 40, 8);
        z->cd_offset = rd(e64 + 48, 8);
    }
    if (z->cd_offset > z->len || z->cd_size > z->len - z->cd_offset)
        return fail(err, "%s: the central directory lies outside the file (truncated?)", z->file);
    if (z->count > z->cd_size / 46)
        return fail(err, "%s: corrupt central directory (%llu entries cannot fit in %llu bytes)", z->file,
                    (unsigned long long)z->count, (unsigned long long)z->cd_size);
    return true;
}

/* Applies a zip64 extra field (id 1) to the sizes and offset that the fixed
 * fields mark as 0xffffffff. */
static bool zip64_extra(const zip *z, const uint8_t *x, size_t xlen, member *m, su_buf *err)
{
    while (xlen >= 4) {
        size_t id = (size_t)rd(x, 2), sz = (size_t)rd(x + 2, 2);
        if (sz > xlen - 4)
            return fail(err, "%s: entry '%s': corrupt extra field", z->file, m->name);
        if (id == 1) {
            const uint8_t *q = x + 4, *qe = x + 4 + sz;
            uint64_t *fields[3] = {&m->usize, &m->csize, &m->offset};
            for (int i = 0; i < 3; i++) {
                if (*fields[i] != 0xffffffff)
                    continue;
                if (qe - q < 8)
                    return fail(err, "%s: entry '%s': short zip64 extra field", z->file, m->name);
                *fields[i] = rd(q, 8);
                q += 8;
            }
        }
        x += 4 + sz;
        xlen -= 4 + sz;
    }
    return true;
}

/* Reads the central directory entry at *pos into m and advances *pos. */
static bool read_central(const zip *z, uint64_t *pos, member *m, su_buf *err)
{
    uint64_t end = z->cd_offset + z->cd_size;
    if (end - *pos < 46 || rd(z->p + *pos, 4) != SIG_CENTRAL)
        return fail(err, "%s: corrupt central directory entry at offset %llu", z->file, (unsigned long long)*pos);
    const uint8_t *c = z->p + *pos;
    m->flags = (uint16_t)rd(c + 8, 2);
    m->method = (uint16_t)rd(c + 10, 2);
    m->crc = (uint32_t)rd(c + 16, 4);
    m->csize = rd(c + 20, 4);
    m->usize = rd(c + 24, 4);
    size_t nlen = (size_t)rd(c + 28, 2), xlen = (size_t)rd(c + 30, 2), clen = (size_t)rd(c + 32, 2);
    m->offset = rd(c + 42, 4);
    if (46 + nlen + xlen + clen > end - *pos)
        return fail(err, "%s: corrupt central directory entry at offset %llu", z->file, (unsigned long long)*pos);
    if (nlen >= sizeof m->name)
        return fail(err, "%s: an entry name of %zu bytes is too long", z->file, nlen);
    memcpy(m->name, c + 46, nlen);
    m->name[nlen] = 0;
    if (memchr(m->name, 0, nlen))
        return fail(err, "%s: an entry name contains a NUL byte", z->file);
    if (!zip64_extra(z, c + 46 + nlen, xlen, m, err))
        return false;
    *pos += 46 + nlen + xlen + clen;
    return true;
}

/* Inflates raw deflate data of csize bytes into exactly usize bytes. */
static bool inflate_member(const zip *z, const member *m, const uint8_t *src, uint8_t *dst, su_buf *err)
{
    z_stream s;
    memset(&s, 0, sizeof s);
    if (inflateInit2(&s, -MAX_WBITS) != Z_OK)
        return fail(err, "%s: entry '%s': cannot start zlib", z->file, m->name);
    uint64_t in_left = m->csize, out_left = m->usize;
    s.next_in = (Bytef *)src;
    s.next_out = dst;
    int rc = Z_OK;
    while (rc == Z_OK) {
        if (s.avail_in == 0 && in_left) {
            s.avail_in = in_left > UINT_MAX ? UINT_MAX : (uInt)in_left;
            in_left -= s.avail_in;
        }
        if (s.avail_out == 0 && out_left) {
            s.avail_out = out_left > UINT_MAX ? UINT_MAX : (uInt)out_left;
            out_left -= s.avail_out;
        }
        uInt before_in = s.avail_in, before_out = s.avail_out;
        rc = inflate(&s, Z_NO_FLUSH);
        if (rc == Z_BUF_ERROR || (rc == Z_OK && before_in == s.avail_in && before_out == s.avail_out))
            break;  /* no progress: input ended early or output is full */
    }
    bool complete = rc == Z_STREAM_END && s.avail_out == 0 && out_left == 0;
    inflateEnd(&s);
    if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT)
        return fail(err, "%s: entry '%s': corrupt compressed data", z->file, m->name);
    if (!complete)
        return fail(err, "%s: entry '%s': compressed data does not decompress to the %llu bytes the directory "
                    "states (truncated or corrupt)", z->file, m->name, (unsigned long long)m->usize);
    return true;
}

/* The member's uncompressed bytes: a pointer into the file when stored,
 * else a malloc'd buffer returned in *owned too. */
static const uint8_t *member_data(const zip *z, const member *m, uint8_t **owned, su_buf *err)
{
    *owned = NULL;
    if (m->flags & 1) {
        fail(err, "%s: entry '%s' is encrypted", z->file, m->name);
        return NULL;
    }
    if (m->offset > z->len || z->len - m->offset < 30 || rd(z->p + m->offset, 4) != SIG_LOCAL) {
        fail(err, "%s: entry '%s': its local header is missing (truncated or corrupt file)", z->file, m->name);
        return NULL;
    }
    const uint8_t *l = z->p + m->offset;
    uint64_t start = m->offset + 30 + rd(l + 26, 2) + rd(l + 28, 2);
    if (start > z->len || m->csize > z->len - start) {
        fail(err, "%s: entry '%s': truncated data (%llu bytes expected)", z->file, m->name,
             (unsigned long long)m->csize);
        return NULL;
    }
    const uint8_t *src = z->p + start;
    if (m->method == METHOD_STORED) {
        if (m->csize != m->usize) {
            fail(err, "%s: entry '%s': stored sizes differ (%llu and %llu)", z->file, m->name,
                 (unsigned long long)m->csize, (unsigned long long)m->usize);
            return NULL;
        }
        return src;
    }
    if (m->method != METHOD_DEFLATE) {
        fail(err, "%s: entry '%s': compression method %d is not supported (only stored and deflate)", z->file,
             m->name, m->method);
        return NULL;
    }
    if (m->usize / MAX_RATIO > m->csize || m->usize > SIZE_MAX / 2) {
        fail(err, "%s: entry '%s': %llu compressed bytes cannot hold %llu bytes (corrupt sizes)", z->file, m->name,
             (unsigned long long)m->csize, (unsigned long long)m->usize);
        return NULL;
    }
    uint8_t *buf = malloc(m->usize ? (size_t)m->usize : 1);
    if (!buf) {
        fail(err, "%s: entry '%s': out of memory for %llu bytes", z->file, m->name, (unsigned long long)m->usize);
        return NULL;
    }
    if (!inflate_member(z, m, src, buf, err)) {
        free(buf);
        return NULL;
    }
    *owned = buf;
    return buf;
}

/* crc32 of n bytes, in chunks that fit zlib's uInt. */
static uint32_t crc_of(const uint8_t *p, uint64_t n)
{
    uLong c = crc32(0L, Z_NULL, 0);
    while (n) {
        uInt k = n > UINT_MAX ? UINT_MAX : (uInt)n;
        c = crc32(c, p, k);
        p += k;
        n -= k;
    }
    return (uint32_t)c;
}

void ir_npz_free(ir_npz *z)
{
    if (!z)
        return;
    for (int i = 0; i < z->n; i++) {
        free(z->entries[i].name);
        ir_tensor_free(z->entries[i].tensor);
    }
    free(z->entries);
    free(z);
}

ir_npz *ir_npz_parse(const char *name, const void *data, size_t len, su_buf *err)
{
    zip z = {name, data, len, 0, 0, 0};
    if (!find_directory(&z, err))
        return NULL;
    ir_npz *out = su_calloc(1, sizeof *out);
    out->entries = su_calloc(z.count ? (size_t)z.count : 1, sizeof *out->entries);
    uint64_t pos = z.cd_offset;
    for (uint64_t i = 0; i < z.count; i++) {
        member m;
        if (!read_central(&z, &pos, &m, err))
            goto fail;
        size_t nl = strlen(m.name);
        if (nl < 4 || strcmp(m.name + nl - 4, ".npy") != 0) {
            fail(err, "%s: entry '%s' is not a .npy array", name, m.name);
            goto fail;
        }
        m.name[nl - 4] = 0;
        if (ir_npz_find(out, m.name)) {
            fail(err, "%s: entry '%s.npy' appears twice", name, m.name);
            goto fail;
        }
        m.name[nl - 4] = '.';
        uint8_t *owned;
        const uint8_t *bytes = member_data(&z, &m, &owned, err);
        if (!bytes)
            goto fail;
        if (crc_of(bytes, m.usize) != m.crc) {
            free(owned);
            fail(err, "%s: entry '%s': CRC mismatch (the data is corrupt)", name, m.name);
            goto fail;
        }
        su_buf label = {0};
        su_buf_printf(&label, "%s: entry '%s'", name, m.name);
        ir_tensor *t = ir_npy_parse(su_buf_str(&label), bytes, (size_t)m.usize, err);
        su_buf_free(&label);
        free(owned);
        if (!t)
            goto fail;
        m.name[nl - 4] = 0;
        out->entries[out->n].name = su_strdup(m.name);
        out->entries[out->n].tensor = t;
        out->n++;
    }
    return out;
fail:
    ir_npz_free(out);
    return NULL;
}

ir_npz *ir_npz_load(const char *path, su_buf *err)
{
    size_t len;
    char *data = su_read_file(path, &len);
    if (!data) {
        su_buf_printf(err, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    ir_npz *z = ir_npz_parse(path, data, len, err);
    free(data);
    return z;
}

const ir_tensor *ir_npz_find(const ir_npz *z, const char *key)
{
    for (int i = 0; i < z->n; i++)
        if (strcmp(z->entries[i].name, key) == 0)
            return z->entries[i].tensor;
    return NULL;
}

ir_tensor *ir_npz_take(ir_npz *z, int i)
{
    ir_tensor *t = z->entries[i].tensor;
    z->entries[i].tensor = NULL;
    return t;
}

/* ---- writing ------------------------------------------------------------ */

static void wr(su_buf *b, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        su_buf_putc(b, (char)(uint8_t)(v >> (8 * i)));
}

/* Deflates n bytes (raw deflate, zlib's default level as numpy uses). */
static bool deflate_all(const uint8_t *src, size_t n, su_buf *out)
{
    z_stream s;
    memset(&s, 0, sizeof s);
    if (deflateInit2(&s, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return false;
    uint8_t chunk[1 << 16];
    size_t left = n;
    int rc;
    s.next_in = (Bytef *)src;
    do {
        if (s.avail_in == 0 && left) {
            s.avail_in = left > UINT_MAX ? UINT_MAX : (uInt)left;
            left -= s.avail_in;
        }
        s.next_out = chunk;
        s.avail_out = sizeof chunk;
        rc = deflate(&s, left || s.avail_in ? Z_NO_FLUSH : Z_FINISH);
        su_buf_putn(out, (const char *)chunk, sizeof chunk - s.avail_out);
    } while (rc == Z_OK || rc == Z_BUF_ERROR);
    deflateEnd(&s);
    return rc == Z_STREAM_END;
}

bool ir_npz_encode(su_buf *out, int n, const char *const *keys, const ir_tensor *const *ts, bool compress,
                   su_buf *err)
{
    su_buf cd = {0}, npy = {0}, packed = {0};
    const uint16_t dos_time = 0, dos_date = (0 << 9) | (1 << 5) | 1; /* 1980-01-01 00:00 */
    size_t base = out->len;
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        su_buf_clear(&npy);
        su_buf_clear(&packed);
        ir_npy_encode(&npy, ts[i]);
        uint32_t crc = crc_of((const uint8_t *)npy.data, npy.len);
        const su_buf *body = &npy;
        if (compress) {
            if (!deflate_all((const uint8_t *)npy.data, npy.len, &packed)) {
                ok = fail(err, "entry '%s.npy': zlib failed to compress it", keys[i]);
                break;
            }
            body = &packed;
        }
        size_t nlen = strlen(keys[i]) + 4, offset = out->len - base;
        if (npy.len >= 0xffffffffu || offset >= 0xffffffffu || nlen > 0xffff) {
            ok = fail(err, "entry '%s.npy': archives of 4 GiB or more (zip64) are not written", keys[i]);
            break;
        }
        uint16_t method = compress ? METHOD_DEFLATE : METHOD_STORED;
        /* local header */
        wr(out, SIG_LOCAL, 4), wr(out, 20, 2), wr(out, 0, 2), wr(out, method, 2);
        wr(out, dos_time, 2), wr(out, dos_date, 2), wr(out, crc, 4);
        wr(out, body->len, 4), wr(out, npy.len, 4), wr(out, nlen, 2), wr(out, 0, 2);
        su_buf_puts(out, keys[i]);
        su_buf_puts(out, ".npy");
        su_buf_putn(out, body->data ? body->data : "", body->len);
        /* its central directory entry */
        wr(&cd, SIG_CENTRAL, 4), wr(&cd, 20, 2), wr(&cd, 20, 2), wr(&cd, 0, 2), wr(&cd, method, 2);
        wr(&cd, dos_time, 2), wr(&cd, dos_date, 2), wr(&cd, crc, 4);
        wr(&cd, body->len, 4), wr(&cd, npy.len, 4), wr(&cd, nlen, 2), wr(&cd, 0, 2), wr(&cd, 0, 2);
        wr(&cd, 0, 2), wr(&cd, 0, 2), wr(&cd, 0x81a4u << 16, 4) /* -rw-r--r-- */, wr(&cd, offset, 4);
        su_buf_puts(&cd, keys[i]);
        su_buf_puts(&cd, ".npy");
    }
    size_t cd_offset = out->len - base;
    if (ok && (n > 0xfffe || cd_offset + cd.len >= 0xffffffffu))
        ok = fail(err, "archives of 4 GiB or 65535 entries or more (zip64) are not written");
    if (ok) {
        su_buf_putn(out, cd.data ? cd.data : "", cd.len);
        wr(out, SIG_EOCD, 4), wr(out, 0, 2), wr(out, 0, 2), wr(out, (uint64_t)n, 2), wr(out, (uint64_t)n, 2);
        wr(out, cd.len, 4), wr(out, cd_offset, 4), wr(out, 0, 2);
    }
    su_buf_free(&cd);
    su_buf_free(&npy);
    su_buf_free(&packed);
    return ok;
}

bool ir_npz_save(const char *path, int n, const char *const *keys, const ir_tensor *const *ts, bool compress,
                 su_buf *err)
{
    su_buf b = {0}, why = {0};
    bool ok = ir_npz_encode(&b, n, keys, ts, compress, &why);
    if (!ok)
        su_buf_printf(err, "%s: %s", path, su_buf_str(&why));
    else if (!(ok = su_write_file(path, b.data, b.len)))
        su_buf_printf(err, "%s: cannot write: %s", path, strerror(errno));
    su_buf_free(&b);
    su_buf_free(&why);
    return ok;
}
