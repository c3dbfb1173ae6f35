/* import.c — an ONNX graph into a Relay module. The graph's inputs that are
 * not initializers become @main's parameters (static shapes only: a
 * symbolic dimension is refused naming the input), initializers become
 * constants, and the nodes, which ONNX keeps in topological order, are
 * converted one by one through the op table below. Before converting
 * anything, every node's op is looked up, so that an unsupported model is
 * refused with the whole list of what it lacks. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx/onnx.h"

/* The op table: ONNX op name, the first opset whose form the converter
 * reads (older forms are outside OX_OPSET_MIN anyway), the inputs every
 * form requires (checked before the converter runs), the converter. */
typedef struct ox_op {
    const char *name;
    int since;
    int min_in;
    ox_convert_fn fn;
} ox_op;

static const ox_op ops[] = {
    /* nn */
    {"Conv", 1, 2, ox_conv_conv},
    {"ConvTranspose", 1, 2, ox_conv_conv_transpose},
    {"Resize", 10, 1, ox_conv_resize},
    {"Upsample", 7, 1, ox_conv_resize},
    {"Gemm", 1, 2, ox_conv_gemm},
    {"MatMul", 1, 2, ox_conv_matmul},
    {"MaxPool", 1, 1, ox_conv_pool},
    {"AveragePool", 1, 1, ox_conv_pool},
    {"GlobalAveragePool", 1, 1, ox_conv_global_pool},
    {"GlobalMaxPool", 1, 1, ox_conv_global_pool},
    {"BatchNormalization", 1, 5, ox_conv_batch_norm},
    {"InstanceNormalization", 1, 3, ox_conv_instance_norm},
    {"LayerNormalization", 17, 2, ox_conv_layer_norm},
    {"Softmax", 1, 1, ox_conv_softmax},
    {"LogSoftmax", 1, 1, ox_conv_softmax},
    {"Relu", 1, 1, ox_conv_activation},
    {"LeakyRelu", 1, 1, ox_conv_activation},
    {"PRelu", 1, 2, ox_conv_activation},
    {"Elu", 1, 1, ox_conv_activation},
    {"Selu", 1, 1, ox_conv_activation},
    {"Sigmoid", 1, 1, ox_conv_activation},
    {"HardSigmoid", 1, 1, ox_conv_activation},
    {"HardSwish", 14, 1, ox_conv_activation},
    {"Tanh", 1, 1, ox_conv_activation},
    {"Softplus", 1, 1, ox_conv_activation},
    {"ThresholdedRelu", 10, 1, ox_conv_activation},
    {"Shrink", 9, 1, ox_conv_activation},
    {"Hardmax", 1, 1, ox_conv_hardmax},
    {"Dropout", 1, 1, ox_conv_dropout},
    /* math */
    {"Add", 1, 2, ox_conv_binary},
    {"Sub", 1, 2, ox_conv_binary},
    {"Mul", 1, 2, ox_conv_binary},
    {"Div", 1, 2, ox_conv_binary},
    {"Pow", 1, 2, ox_conv_binary},
    {"Equal", 1, 2, ox_conv_binary},
    {"Less", 1, 2, ox_conv_binary},
    {"Greater", 1, 2, ox_conv_binary},
    {"LessOrEqual", 12, 2, ox_conv_binary},
    {"GreaterOrEqual", 12, 2, ox_conv_binary},
    {"And", 1, 2, ox_conv_binary},
    {"Or", 1, 2, ox_conv_binary},
    {"Xor", 1, 2, ox_conv_binary},
    {"Not", 1, 1, ox_conv_unary},
    {"Abs", 1, 1, ox_conv_unary},
    {"Neg", 1, 1, ox_conv_unary},
    {"Exp", 1, 1, ox_conv_unary},
    {"Log", 1, 1, ox_conv_unary},
    {"Sqrt", 1, 1, ox_conv_unary},
    {"Reciprocal", 1, 1, ox_conv_unary},
    {"Erf", 9, 1, ox_conv_unary},
    {"Floor", 1, 1, ox_conv_unary},
    {"Ceil", 1, 1, ox_conv_unary},
    {"Sum", 1, 1, ox_conv_variadic},
    {"Mean", 1, 1, ox_conv_variadic},
    {"Max", 1, 1, ox_conv_variadic},
    {"Min", 1, 1, ox_conv_variadic},
    {"Clip", 1, 1, ox_conv_clip},
    {"Where", 9, 3, ox_conv_where},
    {"Cast", 1, 1, ox_conv_cast},
    {"CastLike", 15, 2, ox_conv_cast},
    {"ReduceMean", 1, 1, ox_conv_reduce},
    {"ReduceSum", 1, 1, ox_conv_reduce},
    {"ReduceMax", 1, 1, ox_conv_reduce},
    {"ReduceMin", 1, 1, ox_conv_reduce},
    {"ReduceL1", 1, 1, ox_conv_reduce},
    {"ReduceL2", 1, 1, ox_conv_reduce},
    {"ReduceSumSquare", 1, 1, ox_conv_reduce},
    {"ReduceLogSumExp", 1, 1, ox_conv_reduce},
    {"ReduceLogSum", 1, 1, ox_conv_reduce},
    {"ReduceProd", 1, 1, ox_conv_reduce},
    {"ArgMax", 1, 1, ox_conv_argreduce},
    {"ArgMin", 1, 1, ox_conv_argreduce},
    /* tensors */
    {"Identity", 1, 1, ox_conv_identity},
    {"Constant", 1, 0, ox_conv_constant},
    {"ConstantOfShape", 9, 1, ox_conv_constant_of_shape},
    {"Shape", 1, 1, ox_conv_shape},
    {"Size", 1, 1, ox_conv_shape},
    {"Flatten", 1, 1, ox_conv_flatten},
    {"Reshape", 5, 2, ox_conv_reshape},
    {"Transpose", 1, 1, ox_conv_transpose},
    {"Concat", 4, 1, ox_conv_concat},
    {"Split", 2, 1, ox_conv_split},
    {"Slice", 1, 1, ox_conv_slice},
    {"Squeeze", 1, 1, ox_conv_squeeze},
    {"Unsqueeze", 1, 1, ox_conv_unsqueeze},
    {"Gather", 1, 2, ox_conv_gather},
    {"Expand", 8, 2, ox_conv_expand},
    {"Tile", 6, 2, ox_conv_tile},
    {"Pad", 2, 1, ox_conv_pad},
    {"DepthToSpace", 1, 1, ox_conv_depth_to_space},
    {"SpaceToDepth", 1, 1, ox_conv_space_to_depth},
    {"EyeLike", 9, 1, ox_conv_eye_like},
    {"Trilu", 14, 1, ox_conv_trilu},
    {"Range", 11, 3, ox_conv_range},
};

static const ox_op *find_op(const char *name, int64_t opset)
{
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (!strcmp(ops[i].name, name) && opset >= ops[i].since)
            return &ops[i];
    return NULL;
}

bool ox_op_supported(const char *name, int64_t opset)
{
    return find_op(name, opset) != NULL;
}

static const char *str(const char *s)
{
    return s ? s : "";
}

static bool default_domain(const Onnx__NodeProto *n)
{
    const char *d = str(n->domain);
    return !*d || !strcmp(d, "ai.onnx");
}

/* Reports every unsupported op of the graph, each with its nodes; false
 * when there is one. */
static bool check_ops(ox_ctx *cx, const Onnx__GraphProto *g)
{
    bool ok = true;
    bool *done = su_calloc(g->n_node + 1, 1);
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        if (done[i] || (default_domain(n) && find_op(str(n->op_type), cx->opset)))
            continue;
        /* this op and every later node with the same op and domain */
        su_buf names = {0};
        int count = 0;
        for (size_t j = i; j < g->n_node; j++) {
            const Onnx__NodeProto *o = g->node[j];
            if (strcmp(str(o->op_type), str(n->op_type)) || strcmp(str(o->domain), str(n->domain)))
                continue;
            done[j] = true;
            if (count++ < 8)
                su_buf_printf(&names, "%s'%s'", count > 1 ? ", " : "", str(o->name));
        }
        if (count > 8)
            su_buf_printf(&names, " and %d more", count - 8);
        su_span none = {0};
        if (default_domain(n))
            su_error(cx->d, none, "%s: unsupported ONNX op %s (opset %lld) in %d node%s: %s", cx->file,
                     str(n->op_type), (long long)cx->opset, count, count > 1 ? "s" : "", su_buf_str(&names));
        else
            su_error(cx->d, none, "%s: unsupported op %s of domain '%s' in %d node%s: %s", cx->file,
                     str(n->op_type), str(n->domain), count, count > 1 ? "s" : "", su_buf_str(&names));
        su_buf_free(&names);
        ok = false;
    }
    free(done);
    return ok;
}

/* A Relay variable name for an ONNX value name: letters, digits and '_'
 * (others become '_'), not starting with a digit. */
static const char *var_name(ox_ctx *cx, const char *name)
{
    size_t n = strlen(name);
    char *s = su_arena_alloc(&cx->m->arena, n + 3);
    size_t k = 0;
    if (!n || !(isalpha((unsigned char)name[0]) || name[0] == '_'))
        s[k++] = 'v';
    for (size_t i = 0; i < n; i++)
        s[k++] = isalnum((unsigned char)name[i]) || name[i] == '_' ? name[i] : '_';
    s[k] = 0;
    return s;
}

/* The parameter for graph input vi. */
static ir_expr *input_var(ox_ctx *cx, const Onnx__ValueInfoProto *vi)
{
    const char *name = str(vi->name);
    const Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type) {
        ox_fail(cx, "graph input '%s' is not a tensor (sequences, maps and optionals are not supported)", name);
        return NULL;
    }
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    ir_dtype dt;
    if (!tt->has_elem_type || !ox_dtype(tt->elem_type, &dt)) {
        ox_fail(cx, "graph input '%s' has element type %d, which relay-tune does not support", name,
                tt->has_elem_type ? tt->elem_type : 0);
        return NULL;
    }
    if (!tt->shape) {
        ox_fail(cx, "graph input '%s' has no shape; only static shapes are supported", name);
        return NULL;
    }
    if (tt->shape->n_dim > IR_MAX_DIMS) {
        ox_fail(cx, "graph input '%s' has rank %zu (at most %d is supported)", name, tt->shape->n_dim, IR_MAX_DIMS);
        return NULL;
    }
    int64_t shape[IR_MAX_DIMS];
    for (size_t i = 0; i < tt->shape->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[i];
        if (dm->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE || dm->dim_value < 0) {
            const char *p = dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ? dm->dim_param : "";
            ox_fail(cx, "graph input '%s' has a dynamic dimension %zu ('%s'); only static shapes are supported "
                    "(export the model with fixed input sizes)", name, i, str(p));
            return NULL;
        }
        shape[i] = dm->dim_value;
    }
    if (!ox_check_shape(cx, (int)tt->shape->n_dim, shape, "a graph input"))
        return NULL;
    su_span none = {0};
    ir_expr *v = ir_var(cx->m, none, var_name(cx, name),
                        ir_tensor_type(&cx->m->arena, dt, (int)tt->shape->n_dim, shape));
    v->type = v->u.var.annot;
    return v;
}

/* The values of the graph by ONNX name. */
typedef struct values {
    su_map map;
} values;

static bool define(ox_ctx *cx, values *vs, const char *name, ir_expr *e)
{
    if (su_map_get(&vs->map, name))
        return ox_fail(cx, "value '%s' is defined twice", name);
    su_map_put(&vs->map, su_arena_strdup(&cx->m->arena, name), e);
    return true;
}

/* Weights that become parameters under weights_as_params: float tensors
 * of more than one element (shapes, axes and scalars stay constants, since
 * converters fold them). */
static bool is_weight(const ox_options *o, const ir_tensor *t)
{
    return o && o->weights_as_params && ir_dtype_is_float(t->dtype) && ir_tensor_numel(t) > 1;
}

typedef SU_VEC(ir_expr *) expr_vec;

static bool add_initializers(ox_ctx *cx, values *vs, const Onnx__GraphProto *g, const char *dir, ox_options *o,
                             expr_vec *wparams)
{
    su_buf err = {0};
    for (size_t i = 0; i < g->n_initializer; i++) {
        Onnx__TensorProto *tp = g->initializer[i];
        const char *name = str(tp->name);
        ir_tensor *t = ox_tensor(&cx->m->arena, tp, dir, name, true, &err);
        if (!t) {
            ox_fail(cx, "initializer %s", su_buf_str(&err));
            su_buf_free(&err);
            return false;
        }
        ir_expr *e;
        if (is_weight(o, t)) {
            su_span none = {0};
            e = ir_var(cx->m, none, var_name(cx, name), ir_tensor_type(&cx->m->arena, t->dtype, t->ndim, t->shape));
            e->type = e->u.var.annot;
            su_vec_push(wparams, e);
            o->weight_names = su_realloc(o->weight_names, sizeof *o->weight_names * (size_t)(o->nweights + 1));
            o->weights = su_realloc(o->weights, sizeof *o->weights * (size_t)(o->nweights + 1));
            o->weight_names[o->nweights] = e->u.var.name;
            o->weights[o->nweights++] = t;
        } else {
            e = ox_const(cx, t);
        }
        if (!define(cx, vs, name, e))
            return false;
    }
    if (g->n_sparse_initializer)
        return ox_fail(cx, "sparse initializers are not supported");
    return true;
}

/* The value bound to input `name`, or NULL. */
static const ir_tensor *bound(const ox_options *o, const char *name)
{
    for (int i = 0; o && i < o->nbind; i++)
        if (!strcmp(o->bind_names[i], name))
            return o->bind_values[i];
    return NULL;
}

/* @main's parameters: the inputs that no initializer or binding gives. */
static bool add_inputs(ox_ctx *cx, values *vs, const Onnx__GraphProto *g, const ox_options *b,
                       expr_vec *params)
{
    for (size_t i = 0; i < g->n_input; i++) {
        const char *name = str(g->input[i]->name);
        if (su_map_get(&vs->map, name))
            continue;   /* an initializer: ONNX lets it be listed as an input too */
        const ir_tensor *bv = bound(b, name);
        if (bv) {
            ir_tensor *t = ir_tensor_new(&cx->m->arena, bv->dtype, bv->ndim, bv->shape);
            if (ir_tensor_nbytes(bv))
                memcpy(t->data, bv->data, ir_tensor_nbytes(bv));
            if (!define(cx, vs, name, ox_const(cx, t)))
                return false;
            continue;
        }
        ir_expr *v = input_var(cx, g->input[i]);
        if (!v)
            return false;
        for (size_t j = 0; j < params->len; j++)
            if (!strcmp(params->data[j]->u.var.name, v->u.var.name))
                return ox_fail(cx, "graph inputs '%s' and another one both become parameter %%%s", name,
                               v->u.var.name);
        su_vec_push(params, v);
        if (!define(cx, vs, name, v))
            return false;
    }
    return true;
}

#define MAX_NODE_IO 1024

static bool convert_node(ox_ctx *cx, values *vs, const Onnx__NodeProto *n)
{
    cx->node = n;
    if (n->n_input > MAX_NODE_IO || n->n_output > MAX_NODE_IO)
        return ox_fail(cx, "too many inputs or outputs");
    ir_expr *in[MAX_NODE_IO] = {0}, *out[MAX_NODE_IO] = {0};
    for (size_t i = 0; i < n->n_input; i++) {
        const char *name = str(n->input[i]);
        in[i] = NULL;
        if (!*name)
            continue;   /* an optional input left out */
        if (!(in[i] = su_map_get(&vs->map, name)))
            return ox_fail(cx, "input '%s' is not a graph input, an initializer or an earlier node's output", name);
    }
    const ox_op *op = find_op(str(n->op_type), cx->opset);
    int need = op->fn == ox_conv_slice && cx->opset >= 10 ? 3 : op->min_in;
    for (int i = 0; i < need; i++)
        if ((size_t)i >= n->n_input || !in[i])
            return ox_fail(cx, "needs at least %d input%s, input %d is missing", need, need > 1 ? "s" : "", i);
    size_t before = cx->d->errors;
    if (!op->fn(cx, n, in, (int)n->n_input, out, (int)n->n_output)) {
        if (cx->d->errors == before)
            ox_fail(cx, "cannot be converted (an optional input it needs is missing)");
        return false;
    }
    if (cx->d->errors > before)
        return false;   /* a converter that reported and went on (an attribute it could not read) */
    for (size_t i = 0; i < n->n_output; i++) {
        const char *name = str(n->output[i]);
        if (!*name)
            continue;
        if (!out[i])
            return ox_fail(cx, "output %zu ('%s') is not supported", i, name);
        if (!define(cx, vs, name, out[i]))
            return false;
    }
    return true;
}

static ir_module *import_graph(ox_ctx *cx, const Onnx__GraphProto *g, const char *dir, ox_options *o)
{
    values vs = {0};
    expr_vec params = {0}, results = {0}, wparams = {0};
    bool ok = check_ops(cx, g) && add_initializers(cx, &vs, g, dir, o, &wparams) && add_inputs(cx, &vs, g, o, &params);
    for (size_t i = 0; ok && i < wparams.len; i++)
        su_vec_push(&params, wparams.data[i]);
    su_vec_free(&wparams);
    for (size_t i = 0; ok && i < g->n_node; i++)
        ok = convert_node(cx, &vs, g->node[i]);
    cx->node = NULL;
    for (size_t i = 0; ok && i < g->n_output; i++) {
        const char *name = str(g->output[i]->name);
        ir_expr *e = su_map_get(&vs.map, name);
        if (!e)
            ok = ox_fail(cx, "graph output '%s' is not computed by any node", name);
        else
            su_vec_push(&results, e);
    }
    if (ok && !results.len)
        ok = ox_fail(cx, "the graph has no outputs");
    ir_module *m = cx->m;
    if (ok) {
        su_span none = {0};
        ir_expr *body = results.len == 1 ? results.data[0] : ir_tuple(m, none, (int)results.len, results.data);
        ir_expr *f = ir_func(m, none, (int)params.len, params.data, NULL, body, 0, NULL);
        ir_module_add(m, "main", ir_global(m, none, "main"), f);
        ok = ir_infer_types(m, cx->d);
    }
    su_map_free(&vs.map);
    su_vec_free(&params);
    su_vec_free(&results);
    if (!ok) {
        ir_module_free(m);
        return NULL;
    }
    return m;
}

ir_module *ox_import(const char *file, const char *dir, const uint8_t *data, size_t len, ox_options *o,
                     su_diags *d)
{
    ox_ctx cx = {.d = d, .file = file};
    /* the message is unpacked into the module's arena, where initializers
     * keep their raw data without a copy */
    cx.m = ir_module_new();
    Onnx__ModelProto *mp = ox_model_unpack(file, data, len, &cx.m->arena, &cx.opset, d);
    if (!mp) {
        ir_module_free(cx.m);
        return NULL;
    }
    return import_graph(&cx, mp->graph, dir, o);
}

ir_module *ox_import_file(const char *path, su_diags *d)
{
    return ox_import_file_opts(path, NULL, d);
}

/* The file's bytes: mapped (a 100 MB model is not copied to be read), or
 * read when it cannot be mapped; NULL with errno set. */
static const uint8_t *map_file(const char *path, size_t *len, bool *mapped)
{
    *mapped = false;
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            close(fd);
            *mapped = true;
            *len = (size_t)st.st_size;
            return p;
        }
    }
    if (fd >= 0)
        close(fd);
    return (const uint8_t *)su_read_file(path, len);
}

ir_module *ox_import_file_opts(const char *path, ox_options *o, su_diags *d)
{
    size_t len;
    bool mapped;
    const uint8_t *data = map_file(path, &len, &mapped);
    if (!data) {
        su_span none = {0};
        su_error(d, none, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    /* external data files are looked for in the model's folder */
    const char *slash = strrchr(path, '/');
    char *dir = slash ? su_strdup(path) : su_strdup(".");
    if (slash)
        dir[slash - path] = 0;
    if (slash == path)
        strcpy(dir, "/");
    ir_module *m = ox_import(path, dir, data, len, o, d);
    free(dir);
    if (mapped)
        munmap((void *)data, len);
    else
        free((void *)data);
    return m;
}
