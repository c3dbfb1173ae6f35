/* npycmp.c — a test helper: compares two arrays, each a .npy file or an
 * array of an .npz given as FILE.npz:KEY. Exit 0 when they have the same
 * dtype and shape and their largest difference, relative to
 * max(1e-30, max |B|), is at most TOL (default 0: bit-exact); else exit 1
 * and say why. A NaN in both at one position agrees, whatever its sign
 * and payload bits; a NaN on one side only differs. Prints the relative
 * error on success with -v.
 *   npycmp [-v] A B [TOL] */
#include <math.h>
#include <string.h>

#include "ir/ir.h"

static ir_tensor *load(const char *spec, su_buf *err)
{
    const char *colon = strstr(spec, ".npz:");
    if (!colon)
        return ir_npy_load(spec, err);
    char *path = strndup(spec, (size_t)(colon - spec) + 4);
    ir_npz *z = ir_npz_load(path, err);
    ir_tensor *t = NULL;
    for (int i = 0; z && i < z->n; i++)
        if (!strcmp(z->entries[i].name, colon + 5))
            t = ir_npz_take(z, i);
    if (z && !t)
        su_buf_printf(err, "%s has no array '%s'", path, colon + 5);
    ir_npz_free(z);
    free(path);
    return t;
}

int main(int argc, char **argv)
{
    bool verbose = argc > 1 && !strcmp(argv[1], "-v");
    argv += verbose, argc -= verbose;
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: npycmp [-v] A.npy|A.npz:KEY B.npy|B.npz:KEY [TOL]\n");
        return 2;
    }
    double tol = argc == 4 ? strtod(argv[3], NULL) : 0;
    su_buf err = {0};
    ir_tensor *a = load(argv[1], &err), *b = a ? load(argv[2], &err) : NULL;
    int rc = 1;
    if (!a || !b) {
        fprintf(stderr, "npycmp: %s\n", su_buf_str(&err));
    } else if (!ir_tensor_has_shape(a, b->dtype, b->ndim, b->shape)) {
        su_buf ta = {0}, tb = {0};
        ir_tensor_print_type(&ta, a);
        ir_tensor_print_type(&tb, b);
        fprintf(stderr, "npycmp: %s is %s but %s is %s\n", argv[1], su_buf_str(&ta), argv[2], su_buf_str(&tb));
        su_buf_free(&ta);
        su_buf_free(&tb);
    } else {
        double scale = 1e-30, worst = 0;
        for (int64_t i = 0; i < ir_tensor_numel(b); i++)
            scale = fmax(scale, fabs(ir_tensor_get(b, i)));
        size_t eb = (size_t)ir_dtype_bytes(b->dtype);
        bool bits = true;
        for (int64_t i = 0; i < ir_tensor_numel(b); i++) {
            double x = ir_tensor_get(a, i), y = ir_tensor_get(b, i), e = fabs(x - y);
            if (isnan(x) && isnan(y))
                continue;
            worst = e > worst || e != e ? e : worst;
            bits = bits && !memcmp((const char *)a->data + i * eb, (const char *)b->data + i * eb, eb);
        }
        bool same = tol == 0 ? bits : worst / scale <= tol;
        if (!same)
            fprintf(stderr, "npycmp: %s and %s differ: max error %.3g relative to %.3g (tolerance %g)\n", argv[1],
                    argv[2], worst / scale, scale, tol);
        else if (verbose)
            printf("%.3g\n", worst / scale);
        rc = same ? 0 : 1;
    }
    ir_tensor_free(a);
    ir_tensor_free(b);
    su_buf_free(&err);
    return rc;
}
