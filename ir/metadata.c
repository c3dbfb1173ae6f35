/* metadata.c — the `#[metadata]` section that follows a module's text when it
 * holds tensor constants (`meta[relay.Constant][i]`), in TVM's layout: a JSON
 * object graph whose root is a Map {"relay.Constant": Array[Constant...]},
 * each Constant's `data` attribute indexing `b64ndarrays`, the tensors in
 * TVM's NDArray binary format (magic, reserved, device, ndim, dtype, shape,
 * byte size, little-endian data), base64-encoded. Reading accepts that
 * subset; writing produces it. Shared logs and models are untrusted input:
 * every field is checked and a bad one is an error naming what is wrong. */
#include <jansson.h>
#include <string.h>

#include "ir/ir.h"

#define NDARRAY_MAGIC 0xDD5E40F096B4A13FULL

/* ---- base64 ---- */

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void b64_encode(su_buf *out, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        char q[4] = {B64[(v >> 18) & 63], B64[(v >> 12) & 63], i + 1 < n ? B64[(v >> 6) & 63] : '=',
                     i + 2 < n ? B64[v & 63] : '='};
        su_buf_putn(out, q, 4);
    }
}

static int b64_value(char c)
{
    const char *q = c ? strchr(B64, c) : NULL;
    return q ? (int)(q - B64) : -1;
}

/* Decodes s into a malloc'd buffer; NULL when s is not base64. */
static unsigned char *b64_decode(const char *s, size_t *n)
{
    size_t len = strlen(s);
    if (len % 4)
        return NULL;
    unsigned char *out = su_malloc(len / 4 * 3 + 1);
    size_t k = 0;
    for (size_t i = 0; i < len; i += 4) {
        int v[4];
        for (int j = 0; j < 4; j++) {
            v[j] = s[i + j] == '=' && i + 4 == len && j >= 2 ? 0 : b64_value(s[i + j]);
            if (v[j] < 0) {
                free(out);
                return NULL;
            }
        }
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        out[k++] = (unsigned char)(w >> 16);
        if (s[i + 2] != '=')
            out[k++] = (unsigned char)(w >> 8);
        if (s[i + 3] != '=')
            out[k++] = (unsigned char)w;
    }
    *n = k;
    return out;
}

/* ---- NDArray binary ---- */

/* DLPack type codes: 0 int, 1 uint, 2 float. */
static bool dl_type(ir_dtype dt, uint8_t *code, uint8_t *bits)
{
    *bits = (uint8_t)(ir_dtype_bytes(dt) * 8);
    *code = ir_dtype_is_float(dt) ? 2 : dt == IR_UINT8 || dt == IR_BOOL ? 1 : 0;
    if (dt == IR_BOOL)
        *bits = 1;
    return true;
}

static bool from_dl_type(uint8_t code, uint8_t bits, uint16_t lanes, ir_dtype *dt)
{
    if (lanes != 1)
        return false;
    for (int i = 0; i < IR_DTYPE_COUNT; i++) {
        uint8_t c, b;
        dl_type((ir_dtype)i, &c, &b);
        if (c == code && b == bits) {
            *dt = (ir_dtype)i;
            return true;
        }
    }
    return false;
}

static void put_le(su_buf *b, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        su_buf_putc(b, (char)(unsigned char)(v >> (8 * i)));
}

static uint64_t get_le(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void ndarray_encode(su_buf *out, const ir_tensor *t)
{
    su_buf raw = {0};
    put_le(&raw, NDARRAY_MAGIC, 8);
    put_le(&raw, 0, 8);
    put_le(&raw, 1, 4); /* kDLCPU */
    put_le(&raw, 0, 4);
    put_le(&raw, (uint64_t)t->ndim, 4);
    uint8_t code, bits;
    dl_type(t->dtype, &code, &bits);
    put_le(&raw, code, 1);
    put_le(&raw, bits, 1);
    put_le(&raw, 1, 2);
    for (int i = 0; i < t->ndim; i++)
        put_le(&raw, (uint64_t)t->shape[i], 8);
    uint64_t size = (uint64_t)(ir_tensor_numel(t) * ir_dtype_bytes(t->dtype));
    put_le(&raw, size, 8);
    su_buf_putn(&raw, t->data, size);
    b64_encode(out, (const unsigned char *)raw.data, raw.len);
    su_buf_free(&raw);
}

static const char *ndarray_decode(su_arena *a, const unsigned char *p, size_t n, ir_tensor **out)
{
    if (n < 28 || get_le(p, 8) != NDARRAY_MAGIC)
        return "not a TVM NDArray (bad magic)";
    int64_t ndim = (int32_t)get_le(p + 24, 4);
    if (ndim < 0 || ndim > IR_MAX_DIMS || n < 32 + (size_t)ndim * 8 + 8)
        return "bad rank or truncated header";
    ir_dtype dt;
    if (!from_dl_type(p[28], p[29], (uint16_t)get_le(p + 30, 2), &dt))
        return "unsupported element type";
    int64_t shape[IR_MAX_DIMS], numel = 1;
    for (int i = 0; i < ndim; i++) {
        shape[i] = (int64_t)get_le(p + 32 + 8 * i, 8);
        if (shape[i] < 0 || (shape[i] && numel > ((int64_t)1 << 40) / shape[i]))
            return "bad or too large shape";
        numel *= shape[i];
    }
    const unsigned char *q = p + 32 + 8 * ndim;
    uint64_t size = get_le(q, 8);
    if (size != (uint64_t)(numel * ir_dtype_bytes(dt)) || (size_t)(q + 8 - p) + size != n)
        return "data size does not match the shape";
    ir_tensor *t = ir_tensor_new(a, dt, (int)ndim, shape);
    memcpy(t->data, q + 8, size);
    *out = t;
    return NULL;
}

/* ---- the section ---- */

void ir_metadata_print(su_buf *out, const ir_tensor *const *consts, size_t n)
{
    /* node 0 null, 1 Map, 2 Array, 3.. Constant i */
    su_buf_puts(out, "#[metadata]\n{\n  \"root\": 1,\n  \"nodes\": [\n    {\"type_key\": \"\"},\n");
    su_buf_puts(out, "    {\"type_key\": \"Map\", \"keys\": [\"relay.Constant\"], \"data\": [2]},\n");
    su_buf_puts(out, "    {\"type_key\": \"Array\", \"data\": [");
    for (size_t i = 0; i < n; i++)
        su_buf_printf(out, "%s%zu", i ? ", " : "", i + 3);
    su_buf_puts(out, "]}");
    for (size_t i = 0; i < n; i++)
        su_buf_printf(out, ",\n    {\"type_key\": \"relay.Constant\", \"attrs\": {\"_checked_type_\": \"0\", "
                           "\"data\": \"%zu\", \"span\": \"0\"}}", i);
    su_buf_puts(out, "\n  ],\n  \"b64ndarrays\": [");
    for (size_t i = 0; i < n; i++) {
        su_buf_puts(out, i ? ",\n    \"" : "\n    \"");
        ndarray_encode(out, consts[i]);
        su_buf_putc(out, '"');
    }
    su_buf_puts(out, "\n  ],\n  \"attrs\": {\"tvm_version\": \"0.8.0\"}\n}\n");
}

/* Index of node i's entry in b64ndarrays, or -1. */
static long constant_data_index(json_t *nodes, json_int_t i)
{
    json_t *node = json_array_get(nodes, (size_t)i);
    const char *tk = json_string_value(json_object_get(node, "type_key"));
    const char *data = json_string_value(json_object_get(json_object_get(node, "attrs"), "data"));
    if (!tk || strcmp(tk, "relay.Constant") != 0 || !data)
        return -1;
    char *end;
    long k = strtol(data, &end, 10);
    return *end || k < 0 ? -1 : k;
}

const char *ir_metadata_parse(su_arena *a, const char *json, size_t len, ir_tensor ***consts, size_t *n)
{
    json_error_t err;
    json_t *doc = json_loadb(json, len, 0, &err);
    if (!doc)
        return su_arena_printf(a, "metadata is not valid JSON (%s at line %d)", err.text, err.line);
    const char *why = NULL;
    json_t *nodes = json_object_get(doc, "nodes"), *arrays = json_object_get(doc, "b64ndarrays");
    json_int_t root = json_integer_value(json_object_get(doc, "root"));
    json_t *map = json_array_get(nodes, (size_t)root);
    json_t *keys = json_object_get(map, "keys"), *mdata = json_object_get(map, "data");
    if (!json_is_array(nodes) || !json_is_array(arrays) || !json_is_array(keys) || !json_is_array(mdata)) {
        json_decref(doc);
        return "metadata lacks nodes, b64ndarrays or a root map";
    }
    *consts = NULL;
    *n = 0;
    for (size_t k = 0; k < json_array_size(keys); k++) {
        const char *key = json_string_value(json_array_get(keys, k));
        if (!key || strcmp(key, "relay.Constant") != 0)
            continue;
        json_t *arr = json_array_get(nodes, (size_t)json_integer_value(json_array_get(mdata, k)));
        json_t *items = json_object_get(arr, "data");
        size_t count = json_array_size(items);
        *consts = su_arena_alloc(a, (count + 1) * sizeof **consts);
        for (size_t i = 0; i < count && !why; i++) {
            long d = constant_data_index(nodes, json_integer_value(json_array_get(items, i)));
            const char *b64 = d >= 0 ? json_string_value(json_array_get(arrays, (size_t)d)) : NULL;
            size_t blen;
            unsigned char *bin = b64 ? b64_decode(b64, &blen) : NULL;
            if (!bin) {
                why = su_arena_printf(a, "metadata constant %zu has no valid data", i);
                break;
            }
            const char *bad = ndarray_decode(a, bin, blen, &(*consts)[i]);
            free(bin);
            if (bad)
                why = su_arena_printf(a, "metadata constant %zu: %s", i, bad);
        }
        if (!why)
            *n = count;
    }
    json_decref(doc);
    return why;
}
