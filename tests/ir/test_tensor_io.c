/* test_tensor_io.c — heap tensors and the .npy/.npz readers and writers:
 * the files numpy wrote (tests/ref/io, made by tests/gen/make_io_files.py)
 * read back with the right dtype, shape and values in every supported
 * layout; what is written reads back identically; refused files say why;
 * and every truncation or corruption of a valid file is an error naming the
 * file (and entry), never a crash (this runs under ASan in CI). */
#include <string.h>

#include "ir/ir.h"
#include "tests/tap.h"

static const char *srcdir;

static char *path_of(const char *name)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/tests/ref/io/%s", srcdir, name);
    return buf;
}

/* The value make_io_files.py stores at flat index i for dtype dt. */
static double expected(ir_dtype dt, int64_t i)
{
    if (ir_dtype_is_float(dt))
        return (double)i * 0.5 - 1;
    if (dt == IR_BOOL)
        return i % 3 == 0;
    if (dt == IR_UINT8)
        return (double)i;
    return (double)(i - 3);
}

static bool values_ok(const ir_tensor *t)
{
    for (int64_t i = 0; i < ir_tensor_numel(t); i++)
        if (ir_tensor_get(t, i) != expected(t->dtype, i))
            return false;
    return true;
}

static const char *type_of(const ir_tensor *t)
{
    static char s[128];
    su_buf b = {0};
    ir_tensor_print_type(&b, t);
    snprintf(s, sizeof s, "%s", su_buf_str(&b));
    su_buf_free(&b);
    return s;
}

static void test_heap_tensors(void)
{
    int64_t shape[3] = {2, 3, 5};
    ir_tensor *t = ir_tensor_alloc(IR_FLOAT32, 3, shape);
    ok(t && ((uintptr_t)t->data & 63) == 0, "heap tensor data is 64-byte aligned");
    is_int(ir_tensor_nbytes(t), 120, "nbytes");
    bool zero = true;
    for (int i = 0; i < 30; i++)
        zero = zero && ((float *)t->data)[i] == 0;
    ok(zero, "heap tensor starts zeroed");
    ir_tensor_set(t, 4, 2.5);
    ir_tensor *c = ir_tensor_clone(t);
    ok(c && ir_tensor_get(c, 4) == 2.5 && ir_tensor_has_shape(c, IR_FLOAT32, 3, shape), "clone copies data and shape");
    is_str(type_of(t), "Tensor[(2, 3, 5), float32]", "type spelling");
    ir_tensor_free(t);
    ir_tensor_free(c);
    int64_t neg[2] = {2, -1}, huge[3] = {1LL << 40, 1LL << 40, 1LL << 40}, zhuge[3] = {1LL << 40, 0, 1LL << 40};
    ok(!ir_tensor_alloc(IR_FLOAT32, 2, neg), "negative extent is refused");
    ok(!ir_tensor_alloc(IR_FLOAT32, 3, huge), "overflowing size is refused");
    t = ir_tensor_alloc(IR_INT8, 3, zhuge);
    ok(t && ir_tensor_numel(t) == 0, "a zero extent makes an empty tensor whatever the others");
    ir_tensor_free(t);

    t = ir_tensor_alloc(IR_INT8, 0, NULL);
    ir_tensor_set_i64(t, 0, 300);
    is_int(ir_tensor_get_i64(t, 0), 44, "int8 stores wrap");
    ir_tensor_set(t, 0, 300.0);
    is_int(ir_tensor_get_i64(t, 0), 127, "int8 conversions from float saturate");
    ir_tensor_free(t);
    t = ir_tensor_alloc(IR_FLOAT16, 0, NULL);
    ir_tensor_set(t, 0, 0.333333);
    ok(ir_tensor_get(t, 0) == 0.333251953125, "float16 rounds to nearest");
    ir_tensor_free(t);
    t = ir_tensor_alloc(IR_INT64, 0, NULL);
    ir_tensor_set_i64(t, 0, INT64_MAX);
    ok(ir_tensor_get_i64(t, 0) == INT64_MAX, "int64 keeps all 64 bits");
    ir_tensor_free(t);
}

/* Reads path as .npy and checks dtype, shape and the arange values. */
static void check_npy(const char *file, ir_dtype dt, int ndim, const int64_t *shape)
{
    su_buf err = {0};
    ir_tensor *t = ir_npy_load(path_of(file), &err);
    if (!ok(t != NULL, "%s reads", file)) {
        diag("%s", su_buf_str(&err));
    } else {
        ok(ir_tensor_has_shape(t, dt, ndim, shape), "%s is %s", file, type_of(t));
        ok(values_ok(t), "%s holds the expected values", file);
    }
    ir_tensor_free(t);
    su_buf_free(&err);
}

static void test_npy_files(void)
{
    static const int64_t s234[3] = {2, 3, 4}, s5[1] = {5}, s03[2] = {0, 3};
    static const struct { const char *file; ir_dtype dt; } files[] = {
        {"float32.npy", IR_FLOAT32}, {"float16.npy", IR_FLOAT16}, {"float64.npy", IR_FLOAT64},
        {"int8.npy", IR_INT8},       {"int16.npy", IR_INT16},     {"int32.npy", IR_INT32},
        {"int64.npy", IR_INT64},     {"uint8.npy", IR_UINT8},     {"bool.npy", IR_BOOL},
        {"fortran.npy", IR_FLOAT32}, {"bigendian.npy", IR_FLOAT32}, {"bigendian_i64.npy", IR_INT64},
        {"fortran_bigendian.npy", IR_INT32}, {"v2.npy", IR_FLOAT32}, {"v3.npy", IR_FLOAT32},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        check_npy(files[i].file, files[i].dt, 3, s234);
    check_npy("vector.npy", IR_INT64, 1, s5);
    check_npy("empty.npy", IR_FLOAT32, 2, s03);
    su_buf err = {0};
    ir_tensor *t = ir_npy_load(path_of("scalar.npy"), &err);
    ok(t && t->ndim == 0 && ir_tensor_get(t, 0) == 2.5, "scalar.npy is a rank-0 2.5");
    ir_tensor_free(t);
    su_buf_free(&err);
}

/* Loading file fails with a message that contains each of the words. */
static void refused(const char *file, bool npz, const char *w1, const char *w2)
{
    su_buf err = {0};
    void *got = npz ? (void *)ir_npz_load(path_of(file), &err) : (void *)ir_npy_load(path_of(file), &err);
    const char *msg = su_buf_str(&err);
    bool good = !got && strstr(msg, file) && strstr(msg, w1) && (!w2 || strstr(msg, w2));
    if (!ok(good, "%s is refused: %s", file, w1))
        diag("message: %s", msg);
    if (npz)
        ir_npz_free(got);
    else
        ir_tensor_free(got);
    su_buf_free(&err);
}

static void test_refused(void)
{
    refused("uint16.npy", false, "unsupported dtype '<u2'", "unsigned");
    refused("complex.npy", false, "unsupported dtype", "complex");
    refused("unicode.npy", false, "unsupported dtype", "strings");
    refused("structured.npy", false, "structured", NULL);
    refused("object.npy", false, "unsupported dtype", "objects");
    refused("not_npy.npz", true, "entry 'readme.txt' is not a .npy array", NULL);
    refused("bzip2.npz", true, "entry 'a.npy'", "compression method 12");
    refused("float32.npz", true, "cannot read", NULL);
    refused("savez.npz", false, "not a .npy file", NULL);
    refused("float32.npy", true, "not a zip archive", NULL);
}

static void check_archive(const char *file)
{
    su_buf err = {0};
    ir_npz *z = ir_npz_load(path_of(file), &err);
    if (!ok(z != NULL, "%s reads", file)) {
        diag("%s", su_buf_str(&err));
        su_buf_free(&err);
        return;
    }
    is_int(z->n, 4, "%s has 4 arrays", file);
    const ir_tensor *a = ir_npz_find(z, "a"), *b = ir_npz_find(z, "b.weight"), *f = ir_npz_find(z, "flags"),
                    *s = ir_npz_find(z, "s");
    ok(a && a->dtype == IR_FLOAT32 && a->ndim == 3 && values_ok(a), "%s: a", file);
    ok(b && b->dtype == IR_INT64 && b->ndim == 1 && b->shape[0] == 5 && values_ok(b), "%s: b.weight (dotted key)",
       file);
    ok(f && f->dtype == IR_BOOL && f->ndim == 2 && values_ok(f), "%s: flags", file);
    ok(s && s->dtype == IR_INT32 && s->ndim == 0 && ir_tensor_get(s, 0) == 7, "%s: scalar s", file);
    ok(!ir_npz_find(z, "a.npy") && !ir_npz_find(z, "missing"), "%s: keys have no .npy suffix", file);
    ir_npz_free(z);
    su_buf_free(&err);
}

static void test_npz_files(void)
{
    check_archive("savez.npz");
    check_archive("savez_compressed.npz");
    check_archive("descriptor.npz");
    check_archive("zip64.npz");
}

static bool same(const ir_tensor *a, const ir_tensor *b)
{
    return a && b && ir_tensor_has_shape(a, b->dtype, b->ndim, b->shape) &&
           memcmp(a->data, b->data, ir_tensor_nbytes(a)) == 0;
}

static void test_round_trip(void)
{
    int64_t shape[3] = {3, 1, 4};
    ir_tensor *ts[IR_DTYPE_COUNT];
    const char *keys[IR_DTYPE_COUNT];
    for (int d = 0; d < IR_DTYPE_COUNT; d++) {
        ts[d] = ir_tensor_alloc((ir_dtype)d, 3, shape);
        for (int i = 0; i < 12; i++)
            ir_tensor_set(ts[d], i, expected((ir_dtype)d, i));
        keys[d] = ir_dtype_name((ir_dtype)d);
        su_buf b = {0}, err = {0};
        ir_npy_encode(&b, ts[d]);
        ok(b.len % 64 == ir_tensor_nbytes(ts[d]) % 64, "%s: .npy data starts at a multiple of 64", keys[d]);
        ir_tensor *back = ir_npy_parse("mem.npy", b.data, b.len, &err);
        ok(same(back, ts[d]), "%s: .npy round trip", keys[d]);
        ir_tensor_free(back);
        su_buf_free(&b);
        su_buf_free(&err);
    }
    for (int compress = 0; compress < 2; compress++) {
        su_buf b = {0}, err = {0};
        ok(ir_npz_encode(&b, IR_DTYPE_COUNT, keys, (const ir_tensor *const *)ts, compress, &err), "npz encodes");
        ir_npz *z = ir_npz_parse("mem.npz", b.data, b.len, &err);
        bool all = z && z->n == IR_DTYPE_COUNT;
        for (int d = 0; all && d < IR_DTYPE_COUNT; d++)
            all = same(ir_npz_find(z, keys[d]), ts[d]) && !strcmp(z->entries[d].name, keys[d]);
        ok(all, ".npz round trip (%s), in order", compress ? "deflated" : "stored");
        if (!z)
            diag("%s", su_buf_str(&err));
        ir_npz_free(z);
        su_buf_free(&b);
        su_buf_free(&err);
    }
    /* a header past 65535 bytes needs format 2.0 */
    int64_t big[IR_MAX_DIMS];
    for (int i = 0; i < IR_MAX_DIMS; i++)
        big[i] = 1;
    ir_tensor *t = ir_tensor_alloc(IR_FLOAT32, IR_MAX_DIMS, big);
    su_buf b = {0}, err = {0};
    ir_npy_encode(&b, t);
    ir_tensor *back = ir_npy_parse("mem.npy", b.data, b.len, &err);
    ok(same(back, t), "rank-16 .npy round trip");
    ir_tensor_free(back);
    ir_tensor_free(t);
    su_buf_free(&b);
    su_buf_free(&err);
    for (int d = 0; d < IR_DTYPE_COUNT; d++)
        ir_tensor_free(ts[d]);
}

/* Every prefix of a valid file and a sample of byte corruptions are either
 * rejected with a message naming the file or accepted; none crashes. */
static void test_corruption(const char *file, bool npz)
{
    size_t len;
    char *data = su_read_file(path_of(file), &len);
    if (!ok(data != NULL, "%s: read for corruption tests", file))
        return;
    int bad_msgs = 0, accepted = 0;
    for (size_t n = 0; n < len; n++) {
        su_buf err = {0};
        void *got = npz ? (void *)ir_npz_parse(file, data, n, &err) : (void *)ir_npy_parse(file, data, n, &err);
        if (got)
            accepted++;
        else if (!strstr(su_buf_str(&err), file))
            bad_msgs++;
        if (npz)
            ir_npz_free(got);
        else
            ir_tensor_free(got);
        su_buf_free(&err);
    }
    is_int(accepted, 0, "%s: every truncation is rejected", file);
    is_int(bad_msgs, 0, "%s: every truncation's message names the file", file);
    char *copy = su_malloc(len);
    bad_msgs = 0;
    for (size_t i = 0; i < len; i++) {
        for (int k = 0; k < 3; k++) {
            static const uint8_t flips[3] = {0xff, 0x01, 0x80};
            memcpy(copy, data, len);
            copy[i] = (char)(copy[i] ^ flips[k]);
            su_buf err = {0};
            void *got = npz ? (void *)ir_npz_parse(file, copy, len, &err) : (void *)ir_npy_parse(file, copy, len, &err);
            if (!got && !strstr(su_buf_str(&err), file))
                bad_msgs++;
            if (npz)
                ir_npz_free(got);
            else
                ir_tensor_free(got);
            su_buf_free(&err);
        }
    }
    is_int(bad_msgs, 0, "%s: every flipped byte is handled (no crash; errors name the file)", file);
    free(copy);
    free(data);
}

static void test_specific_corruptions(void)
{
    size_t len;
    char *data = su_read_file(path_of("savez.npz"), &len);
    su_buf err = {0};
    /* flip one byte of the first member (stored): its CRC catches it */
    char *p = memmem(data, len, "\x93NUMPY", 6);
    p[80] ^= 1;
    ir_npz *z = ir_npz_parse("savez.npz", data, len, &err);
    ok(!z && strstr(su_buf_str(&err), "savez.npz: entry 'a.npy': CRC mismatch"), "stored data corruption: CRC mismatch");
    ir_npz_free(z);
    su_buf_free(&err);
    free(data);

    data = su_read_file(path_of("float32.npy"), &len);
    ir_tensor *t = ir_npy_parse("x.npy", data, len - 4, &err);
    ok(!t && strstr(su_buf_str(&err), "x.npy: truncated data: the header's shape needs 96 bytes, the file has 92"),
       "truncated .npy data names both sizes");
    su_buf_clear(&err);
    t = ir_npy_parse("x.npy", data, 40, &err);
    ok(!t && strstr(su_buf_str(&err), "x.npy: truncated header"), "truncated .npy header");
    su_buf_free(&err);
    free(data);
}

/* Inputs the fuzzer found (fuzz/fuzz_npy.c), kept as regressions. */
static void test_fuzz_findings(void)
{
    su_buf err = {0};
    /* a 3.0 header of length 0: the message once read past the buffer */
    static const char empty_header[] = "\x93NUMPY\x03\x00\x00\x00\x00\x00";
    ir_tensor *t = ir_npy_parse("f.npy", empty_header, sizeof empty_header - 1, &err);
    ok(!t && strstr(su_buf_str(&err), "f.npy: malformed header: it does not start with a dict"),
       "fuzz finding: an empty header is refused (no over-read)");
    su_buf_clear(&err);
    /* an empty Fortran-order array whose other extents overflow int64 when
     * multiplied: numel and the transposition once overflowed */
    su_buf b = {0};
    const char *dict = "{'descr': '>f2', 'fortran_order': True, 'shape': (4222222222222222223, 3, 0), }";
    su_buf_putn(&b, "\x93NUMPY\x01\x00", 8);
    su_buf_putc(&b, (char)strlen(dict));
    su_buf_putc(&b, 0);
    su_buf_puts(&b, dict);
    t = ir_npy_parse("g.npy", b.data, b.len, &err);
    ok(t && ir_tensor_numel(t) == 0 && t->ndim == 3 && t->dtype == IR_FLOAT16,
       "fuzz finding: an empty array with huge extents reads as empty (no overflow)");
    ir_tensor_free(t);
    su_buf_free(&b);
    su_buf_free(&err);
}

int main(void)
{
    srcdir = getenv("top_srcdir");
    if (!srcdir)
        srcdir = ".";
    test_heap_tensors();
    test_npy_files();
    test_refused();
    test_npz_files();
    test_round_trip();
    test_specific_corruptions();
    test_fuzz_findings();
    test_corruption("float32.npy", false);
    test_corruption("fortran_bigendian.npy", false);
    test_corruption("savez.npz", true);
    test_corruption("savez_compressed.npz", true);
    test_corruption("descriptor.npz", true);
    test_corruption("zip64.npz", true);
    return tap_done();
}
