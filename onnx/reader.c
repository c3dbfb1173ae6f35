/* reader.c — ONNX files into protobuf-c messages and tensors. Everything a
 * file says is checked before it is trusted: the opset range, every
 * tensor's size against its dims (so a hostile dims field never allocates
 * more than the data present), and external data paths, which must stay in
 * the model's folder (no absolute paths, no "..") and hold the bytes they
 * claim. Errors name the file and the tensor. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "onnx/onnx.h"

/* protobuf-c leaves absent optional strings NULL. */
static const char *str(const char *s)
{
    return s ? s : "";
}

/* protobuf-c's allocator over an arena: 64-byte aligned (tensor data),
 * freed with the arena. */
static void *arena_alloc(void *a, size_t n)
{
    return su_arena_alloc_aligned(a, n ? n : 1, 64);
}

static void arena_free(void *a, void *p)
{
    (void)a, (void)p;
}

Onnx__ModelProto *ox_model_unpack(const char *file, const uint8_t *data, size_t len, su_arena *arena,
                                  int64_t *opset, su_diags *d)
{
    su_span none = {0};
    ProtobufCAllocator alloc = {arena_alloc, arena_free, arena};
    Onnx__ModelProto *m = onnx__model_proto__unpack(arena ? &alloc : NULL, len, data);
    if (!m) {
        su_error(d, none, "%s: not an ONNX model: the protobuf is truncated or corrupt", file);
        return NULL;
    }
    if (!m->graph) {
        su_error(d, none, "%s: the ONNX model has no graph", file);
        if (!arena)
            onnx__model_proto__free_unpacked(m, NULL);
        return NULL;
    }
    *opset = -1;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m->opset_import[i];
        const char *dom = str(o->domain);
        if ((!*dom || !strcmp(dom, "ai.onnx")) && o->has_version)
            *opset = o->version;
    }
    if (*opset < 0) {
        su_error(d, none, "%s: the model imports no version of the default ONNX opset", file);
    } else if (*opset < OX_OPSET_MIN || *opset > OX_OPSET_MAX) {
        su_error(d, none, "%s: ONNX opset %lld is not supported (opsets %d to %d are)", file, (long long)*opset,
                 OX_OPSET_MIN, OX_OPSET_MAX);
    } else {
        return m;
    }
    if (!arena)
        onnx__model_proto__free_unpacked(m, NULL);
    return NULL;
}

bool ox_dtype(int32_t t, ir_dtype *out)
{
    switch (t) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: *out = IR_FLOAT32; return true;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: *out = IR_FLOAT64; return true;
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: *out = IR_FLOAT16; return true;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: *out = IR_INT8; return true;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT16: *out = IR_INT16; return true;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: *out = IR_INT32; return true;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: *out = IR_INT64; return true;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: *out = IR_UINT8; return true;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: *out = IR_BOOL; return true;
    default: return false;
    }
}

/* The value of external-data key `key`, or NULL. */
static const char *ext_key(const Onnx__TensorProto *tp, const char *key)
{
    for (size_t i = 0; i < tp->n_external_data; i++)
        if (!strcmp(str(tp->external_data[i]->key), key))
            return str(tp->external_data[i]->value);
    return NULL;
}

/* A non-negative decimal integer; false on anything else. */
static bool parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s)
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return true;
}

/* Reads `nbytes` of external data into dst. */
static bool read_external(const Onnx__TensorProto *tp, const char *dir, const char *what, void *dst, size_t nbytes,
                          su_buf *err)
{
    const char *loc = ext_key(tp, "location");
    if (!dir) {
        su_buf_printf(err, "tensor '%s' keeps its data in an external file, which is not allowed here", what);
        return false;
    }
    if (!loc || !*loc || loc[0] == '/' || strstr(loc, "..")) {
        su_buf_printf(err, "tensor '%s': external data location '%s' is not a file beside the model", what,
                      loc ? loc : "");
        return false;
    }
    uint64_t off = 0, len = nbytes;
    const char *o = ext_key(tp, "offset"), *l = ext_key(tp, "length");
    if ((o && !parse_u64(o, &off)) || (l && !parse_u64(l, &len))) {
        su_buf_printf(err, "tensor '%s': external data offset or length is not a number", what);
        return false;
    }
    if (len != nbytes) {
        su_buf_printf(err, "tensor '%s': external data holds %llu bytes, its dims need %zu", what,
                      (unsigned long long)len, nbytes);
        return false;
    }
    su_buf p = {0};
    su_buf_printf(&p, "%s/%s", dir, loc);
    FILE *f = fopen(su_buf_str(&p), "rb");
    bool ok = false;
    if (!f) {
        su_buf_printf(err, "tensor '%s': cannot open external data %s: %s", what, su_buf_str(&p), strerror(errno));
    } else if (off > (uint64_t)INT64_MAX || fseeko(f, (off_t)off, SEEK_SET) != 0 ||
               fread(dst, 1, nbytes, f) != nbytes) {
        su_buf_printf(err, "tensor '%s': external data %s is shorter than offset %llu + %zu bytes", what,
                      su_buf_str(&p), (unsigned long long)off, nbytes);
    } else {
        ok = true;
    }
    if (f)
        fclose(f);
    su_buf_free(&p);
    return ok;
}

/* Copies the typed-field values of tp into t (n of them were checked). */
static void copy_typed(const Onnx__TensorProto *tp, ir_tensor *t, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        switch (tp->data_type) {
        case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: ((float *)t->data)[i] = tp->float_data[i]; break;
        case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: ((double *)t->data)[i] = tp->double_data[i]; break;
        case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: ((int64_t *)t->data)[i] = tp->int64_data[i]; break;
        /* float16 keeps its bits in int32_data, as do the small integer types */
        case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: ((uint16_t *)t->data)[i] = (uint16_t)tp->int32_data[i]; break;
        default: ir_tensor_set_i64(t, i, tp->int32_data[i]); break;
        }
    }
}

/* The number of values tp's typed field for its type holds. */
static size_t typed_count(const Onnx__TensorProto *tp)
{
    switch (tp->data_type) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return tp->n_float_data;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: return tp->n_double_data;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return tp->n_int64_data;
    default: return tp->n_int32_data;
    }
}

ir_tensor *ox_tensor(su_arena *a, Onnx__TensorProto *tp, const char *dir, const char *what, bool borrow, su_buf *err)
{
    ir_dtype dt;
    if (!tp->has_data_type || !ox_dtype(tp->data_type, &dt)) {
        su_buf_printf(err, "tensor '%s' has data type %d, which relay-tune does not support", what,
                      tp->has_data_type ? tp->data_type : 0);
        return NULL;
    }
    if (tp->n_dims > IR_MAX_DIMS) {
        su_buf_printf(err, "tensor '%s' has rank %zu (at most %d is supported)", what, tp->n_dims, IR_MAX_DIMS);
        return NULL;
    }
    if (tp->segment) {
        su_buf_printf(err, "tensor '%s' is a segment of a larger tensor, which is not supported", what);
        return NULL;
    }
    /* the element count, bounded so that the byte size cannot overflow */
    int64_t n = 1;
    for (size_t i = 0; i < tp->n_dims; i++) {
        if (tp->dims[i] < 0 || (tp->dims[i] && n > ((int64_t)1 << 40) / tp->dims[i])) {
            su_buf_printf(err, "tensor '%s' has dims that are negative or too large", what);
            return NULL;
        }
        n *= tp->dims[i];
    }
    size_t nbytes = (size_t)n * (size_t)ir_dtype_bytes(dt);
    bool external = tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    if (!external && tp->has_raw_data && tp->raw_data.len != nbytes) {
        su_buf_printf(err, "tensor '%s' has %zu bytes of raw data, its dims need %zu", what, tp->raw_data.len, nbytes);
        return NULL;
    }
    if (!external && !tp->has_raw_data && typed_count(tp) != (size_t)n) {
        su_buf_printf(err, "tensor '%s' has %zu values, its dims need %lld", what, typed_count(tp), (long long)n);
        return NULL;
    }
    ir_tensor *t;
    if (a && borrow && !external && tp->has_raw_data && nbytes && ((uintptr_t)tp->raw_data.data & 63) == 0) {
        /* the unpacked message lives in the arena: point at its bytes */
        t = su_arena_alloc(a, sizeof *t);
        t->dtype = dt;
        t->ndim = (int)tp->n_dims;
        int64_t *shape = su_arena_alloc(a, sizeof *shape * (tp->n_dims ? tp->n_dims : 1));
        for (size_t i = 0; i < tp->n_dims; i++)
            shape[i] = tp->dims[i];
        t->shape = shape;
        t->data = tp->raw_data.data;
        tp->has_raw_data = false;   /* the tensor owns the bytes now */
        tp->raw_data.len = 0;
        goto bools;
    }
    t = a ? ir_tensor_new(a, dt, (int)tp->n_dims, tp->dims) : ir_tensor_alloc(dt, (int)tp->n_dims, tp->dims);
    if (!t) {
        su_buf_printf(err, "out of memory for tensor '%s' (%zu bytes)", what, nbytes);
        return NULL;
    }
    if (external) {
        if (!read_external(tp, dir, what, t->data, nbytes, err)) {
            if (!a)
                ir_tensor_free(t);
            return NULL;
        }
    } else if (tp->has_raw_data) {
        /* raw data is little-endian, as is every host relay-tune runs on */
        if (nbytes)
            memcpy(t->data, tp->raw_data.data, nbytes);
    } else {
        copy_typed(tp, t, n);
    }
bools:
    if (dt == IR_BOOL)  /* any nonzero byte is true; relay's bools are 0 or 1 */
        for (int64_t i = 0; i < n; i++)
            ((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
    return t;
}

ir_tensor *ox_tensor_file(const char *path, char **name, su_buf *err)
{
    size_t len;
    char *data = su_read_file(path, &len);
    if (!data) {
        su_buf_printf(err, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, (const uint8_t *)data);
    free(data);
    if (!tp) {
        su_buf_printf(err, "%s: not a serialized ONNX tensor (truncated or corrupt protobuf)", path);
        return NULL;
    }
    su_buf why = {0};
    ir_tensor *t = ox_tensor(NULL, tp, NULL, str(tp->name), false, &why);
    if (!t)
        su_buf_printf(err, "%s: %s", path, su_buf_str(&why));
    else if (name)
        *name = su_strdup(str(tp->name));
    su_buf_free(&why);
    onnx__tensor_proto__free_unpacked(tp, NULL);
    return t;
}
