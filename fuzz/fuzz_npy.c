/* fuzz_npy.c — libFuzzer harness for the .npy and .npz readers. Any input
 * must be rejected with a message or accepted; nothing may crash, hang, leak
 * or allocate beyond what the input can justify. The first byte picks the
 * reader (even: .npy, odd: .npz) so that one corpus serves both. What is
 * accepted must also survive the writers: encoding it and reading it back
 * gives the same arrays, bit for bit.
 *   make fuzz-npy-run FUZZ_SECONDS=300 */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_or_die(const ir_tensor *a, const ir_tensor *b)
{
    if (!a || !b || !ir_tensor_has_shape(a, b->dtype, b->ndim, b->shape) ||
        memcmp(a->data, b->data, ir_tensor_nbytes(a)) != 0) {
        fprintf(stderr, "round trip changed an array\n");
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    bool npz = data[0] & 1;
    data++, size--;
    su_buf err = {0}, enc = {0}, err2 = {0};
    if (!npz) {
        ir_tensor *t = ir_npy_parse("fuzz.npy", data, size, &err);
        if (t) {
            ir_npy_encode(&enc, t);
            ir_tensor *back = ir_npy_parse("again.npy", enc.data, enc.len, &err2);
            same_or_die(back, t);
            ir_tensor_free(back);
        } else if (!strstr(su_buf_str(&err), "fuzz.npy")) {
            fprintf(stderr, "error without the file's name: %s\n", su_buf_str(&err));
            abort();
        }
        ir_tensor_free(t);
    } else {
        ir_npz *z = ir_npz_parse("fuzz.npz", data, size, &err);
        if (z) {
            const char **keys = malloc(sizeof *keys * (size_t)(z->n + 1));
            const ir_tensor **ts = malloc(sizeof *ts * (size_t)(z->n + 1));
            for (int i = 0; i < z->n; i++)
                keys[i] = z->entries[i].name, ts[i] = z->entries[i].tensor;
            if (ir_npz_encode(&enc, z->n, keys, ts, z->n % 2 == 0, &err2)) {
                ir_npz *back = ir_npz_parse("again.npz", enc.data, enc.len, &err2);
                if (!back || back->n != z->n) {
                    fprintf(stderr, "re-encoded archive does not read: %s\n", su_buf_str(&err2));
                    abort();
                }
                for (int i = 0; i < z->n; i++)
                    same_or_die(back->entries[i].tensor, ts[i]);
                ir_npz_free(back);
            }
            free(keys);
            free(ts);
        } else if (!strstr(su_buf_str(&err), "fuzz.npz")) {
            fprintf(stderr, "error without the file's name: %s\n", su_buf_str(&err));
            abort();
        }
        ir_npz_free(z);
    }
    su_buf_free(&err);
    su_buf_free(&err2);
    su_buf_free(&enc);
    return 0;
}
