/* embed_weights.c — a test helper that turns a graph-only ONNX model (every
 * weight a graph input, as tests/gen/make_onnx_zoo.py exports the zoo) into
 * a model that carries its weights, as the models users have do, without
 * committing the weights: each graph input after the first becomes an
 * initializer whose values are the seeded stream that
 * `relay-tune run --random-params SEED` would draw for it (ir_random_param on
 * the imported @main), stored as ONNX external data in one file beside the
 * output model. The first input's seeded values go to a .npy file. PyTorch
 * ran on exactly these numbers for tests/ref/models/M.npz (see
 * tests/gen/make_model_refs.py), so `relay-tune run OUT.onnx --input
 * data=DATA.npy` must match it.
 *
 * Usage: embed_weights IN.onnx OUT.onnx DATA.npy [SEED]  (seed 0 by default)
 * The weights go to OUT.onnx.weights (its base name is the location). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "onnx/onnx.h"

static int fail(const char *msg, const char *path)
{
    fprintf(stderr, "embed_weights: %s: %s\n", path, msg);
    return 1;
}

/* A string-string entry of external_data (the strings outlive the model). */
static Onnx__StringStringEntryProto *entry(const char *key, const char *value)
{
    Onnx__StringStringEntryProto *e = su_calloc(1, sizeof *e);
    onnx__string_string_entry_proto__init(e);
    e->key = su_strdup(key);
    e->value = su_strdup(value);
    return e;
}

/* An initializer for parameter t named name, whose bytes are at offset of
 * the external file `location`. */
static Onnx__TensorProto *external_tensor(const char *name, const ir_tensor *t, const char *location, size_t offset)
{
    Onnx__TensorProto *p = su_calloc(1, sizeof *p);
    onnx__tensor_proto__init(p);
    p->name = su_strdup(name);
    p->n_dims = (size_t)t->ndim;
    p->dims = su_calloc((size_t)t->ndim + 1, sizeof *p->dims);
    memcpy(p->dims, t->shape, (size_t)t->ndim * sizeof *p->dims);
    p->has_data_type = true;
    p->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    p->has_data_location = true;
    p->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    char off[32], len[32];
    snprintf(off, sizeof off, "%zu", offset);
    snprintf(len, sizeof len, "%zu", ir_tensor_nbytes(t));
    p->n_external_data = 3;
    p->external_data = su_calloc(3, sizeof *p->external_data);
    p->external_data[0] = entry("location", location);
    p->external_data[1] = entry("offset", off);
    p->external_data[2] = entry("length", len);
    return p;
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: embed_weights IN.onnx OUT.onnx DATA.npy [SEED]\n");
        return 2;
    }
    const char *in = argv[1], *out = argv[2], *npy = argv[3];
    uint64_t seed = argc == 5 ? strtoull(argv[4], NULL, 10) : 0;
    su_diags d = {0};
    ir_module *m = ox_import_file(in, &d);
    if (!m)
        return fail(d.len ? d.items[0].msg : "import failed", in);
    ir_global_def *g = ir_module_find(m, "main");
    size_t len;
    char *bytes = su_read_file(in, &len);
    Onnx__ModelProto *mp = bytes ? onnx__model_proto__unpack(NULL, len, (const uint8_t *)bytes) : NULL;
    if (!g || !mp || !mp->graph || mp->graph->n_initializer != 0 || (int)mp->graph->n_input != g->func->u.func.nparams)
        return fail("not a graph-only model (every graph input a parameter of @main, no initializers)", in);
    const ir_expr *f = g->func;
    int n = f->u.func.nparams;
    su_buf wpath = {0}, err = {0};
    su_buf_printf(&wpath, "%s.weights", out);
    const char *location = strrchr(su_buf_str(&wpath), '/') ? strrchr(su_buf_str(&wpath), '/') + 1 : su_buf_str(&wpath);
    FILE *wf = fopen(su_buf_str(&wpath), "wb");
    if (!wf)
        return fail("cannot write the weights file", su_buf_str(&wpath));
    Onnx__GraphProto *gp = mp->graph;
    Onnx__TensorProto **inits = su_calloc((size_t)n, sizeof *inits);
    size_t offset = 0;
    for (int i = 0; i < n; i++) {
        const ir_type *t = f->u.func.params[i]->u.var.annot;
        if (!t || t->kind != IR_TY_TENSOR || t->dtype != IR_FLOAT32)
            return fail("a graph input that is not a float32 tensor", in);
        ir_tensor *v = ir_tensor_alloc(t->dtype, t->ndim, t->shape);
        if (!v)
            return fail("out of memory", in);
        ir_random_param(f, i, seed, v);
        if (i == 0 && !ir_npy_save(npy, v, &err))
            return fail(su_buf_str(&err), npy);
        if (i > 0) {
            inits[gp->n_initializer++] = external_tensor(gp->input[i]->name, v, location, offset);
            if (fwrite(v->data, 1, ir_tensor_nbytes(v), wf) != ir_tensor_nbytes(v))
                return fail("cannot write the weights file", su_buf_str(&wpath));
            offset += ir_tensor_nbytes(v);
        }
        ir_tensor_free(v);
    }
    if (fclose(wf) != 0)
        return fail("cannot write the weights file", su_buf_str(&wpath));
    /* the weights are initializers now, and no longer inputs */
    Onnx__ValueInfoProto **inputs = gp->input;
    size_t ninputs = gp->n_input;
    gp->initializer = inits;
    gp->n_input = 1;
    size_t size = onnx__model_proto__get_packed_size(mp);
    uint8_t *packed = malloc(size ? size : 1);
    onnx__model_proto__pack(mp, packed);
    FILE *of = fopen(out, "wb");
    bool ok = of && fwrite(packed, 1, size, of) == size;
    ok = of && fclose(of) == 0 && ok;
    printf("%s: %d weights (%zu bytes) in %s, input %s\n", out, n - 1, offset, location, npy);
    /* give the unpacked model back the arrays it owns before freeing it */
    gp->n_input = ninputs;
    gp->input = inputs;
    for (size_t i = 0; i < gp->n_initializer; i++)
        onnx__tensor_proto__free_unpacked(inits[i], NULL);
    gp->initializer = NULL;
    gp->n_initializer = 0;
    onnx__model_proto__free_unpacked(mp, NULL);
    free(inits);
    free(packed);
    free(bytes);
    su_buf_free(&wpath);
    su_buf_free(&err);
    ir_module_free(m);
    su_diags_free(&d);
    return ok ? 0 : fail("cannot write the model", out);
}
