/* onnx.h — the map of onnx/: the ONNX importer. A model file is read with
 * protobuf-c (code generated at build time from Debian's onnx.proto), its
 * initializers become constants, its graph inputs the parameters of @main,
 * and each node is converted into Relay operator calls that are typed (and
 * folded when their arguments are constants) as they are built, so that
 * converters can read every operand's static shape. Prefix: ox_. Depends on
 * ir/ and support/ only. docs/onnx.md lists the ops and opsets covered. */
#ifndef RT_ONNX_H
#define RT_ONNX_H

#include "ir/ir.h"
#include "onnx/onnx.pb-c.h"

/* ---- reader.c: model files, tensors, opsets ----------------------------- */

/* Oldest and newest opset of the default domain the importer accepts (6 is
 * opset 7 but for the legacy broadcast attribute, which is read too). */
#define OX_OPSET_MIN 6
#define OX_OPSET_MAX 17

/* Unpacks an ONNX model held in memory; NULL after recording an error that
 * names `file` (truncated or corrupt protobuf, no graph, an opset outside
 * OX_OPSET_MIN..MAX). *opset gets the default domain's version. With an
 * arena, every part of the message (raw tensor data included, 64-byte
 * aligned) is allocated there and lives as long as it, so that tensors can
 * borrow their data (ox_tensor); without, free the result with
 * onnx__model_proto__free_unpacked(m, NULL). */
Onnx__ModelProto *ox_model_unpack(const char *file, const uint8_t *data, size_t len, su_arena *arena,
                                  int64_t *opset, su_diags *d);
/* The relay dtype of an ONNX TensorProto data type; false when relay has none. */
bool ox_dtype(int32_t onnx_type, ir_dtype *out);
/* The tensor a TensorProto holds (typed fields, raw_data, or external data
 * in a file beside the model: dir is the model's folder, NULL to refuse
 * external data) as a tensor in arena a, or on the heap when a is NULL.
 * borrow (with an arena): tp was unpacked into that arena, and the tensor
 * points at its raw data instead of copying it (a 100 MB model is then
 * copied once, by the unpacking). NULL after writing to err why (a size
 * that does not match its dims, an unsupported type, a missing or short
 * external file), naming `what`. */
ir_tensor *ox_tensor(su_arena *a, Onnx__TensorProto *tp, const char *dir, const char *what, bool borrow, su_buf *err);
/* Reads a serialized TensorProto file (the backend tests' input_0.pb) into
 * a heap tensor; NULL after writing the reason to err. *name gets the
 * tensor's name (malloc'd, may be empty) when name is not NULL. */
ir_tensor *ox_tensor_file(const char *path, char **name, su_buf *err);

/* ---- import.c: graph → module ------------------------------------------- */

/* Reads an ONNX model file into a type-checked module whose @main takes the
 * graph's inputs (initializers are constants) and returns its output (a
 * tuple when there are several). NULL after recording errors in d: every
 * unsupported op is listed at once (op, opset, node names); other errors name
 * the file and the node or tensor. */
ir_module *ox_import_file(const char *path, su_diags *d);

/* How an import treats inputs and weights. */
typedef struct ox_options {
    int nbind;                          /* graph inputs given values at import time: they */
    const char *const *bind_names;      /* become constants (as if initializers) and are */
    const ir_tensor *const *bind_values;/* not parameters of @main (values copied) */
    bool weights_as_params;             /* float initializers of more than one element become
                                           parameters after the inputs, not constants */
    /* filled with weights_as_params: those parameters' names and values (the
     * arrays malloc'd for the caller to free, the tensors in the module) */
    int nweights;
    const char **weight_names;
    const ir_tensor **weights;
} ox_options;
/* ox_import_file with options (o may be NULL). */
ir_module *ox_import_file_opts(const char *path, ox_options *o, su_diags *d);
/* The same for a model held in memory; `file` names it in messages and its
 * folder is where external data is looked for (NULL dir refuses it). */
ir_module *ox_import(const char *file, const char *dir, const uint8_t *data, size_t len, ox_options *o,
                     su_diags *d);
/* True when the default-domain op `name` at `opset` has a converter. */
bool ox_op_supported(const char *name, int64_t opset);

/* The state of one import, which converters read and extend. */
typedef struct ox_ctx {
    ir_module *m;                   /* the module being built */
    su_diags *d;                    /* where errors go */
    const char *file;               /* the model file, for messages */
    int64_t opset;                  /* the default domain's version */
    const Onnx__NodeProto *node;    /* the node being converted (messages) */
} ox_ctx;

/* A converter: computes the node's outputs out[0..nout) from its inputs
 * in[0..nin) (NULL where an optional input is absent). Outputs a converter
 * leaves NULL are an error if the graph uses them. False after reporting. */
typedef bool (*ox_convert_fn)(ox_ctx *cx, const Onnx__NodeProto *n, ir_expr *const *in, int nin, ir_expr **out,
                              int nout);

/* ---- build.c: helpers converters share ---------------------------------- */

/* Most elements of a tensor a model may describe (a shape past it is
 * refused, so that no extent product overflows), of a constant the importer
 * builds, and of a folded result (a larger call is left to run time). */
#define OX_MAX_ELEMS ((int64_t)1 << 40)
#define OX_MAX_CONST ((int64_t)1 << 28)
#define OX_MAX_FOLD ((int64_t)1 << 24)
/* ... and the most FLOPs a folded call may cost (a convolution of constants
 * with a huge kernel would otherwise stall the import). */
#define OX_MAX_FOLD_FLOPS ((int64_t)1 << 24)

/* Records an error naming the file and the current node; returns false. */
bool ox_fail(ox_ctx *cx, const char *fmt, ...) SU_PRINTF(2, 3);
/* The node's attribute `name`, or NULL. */
const Onnx__AttributeProto *ox_attr(const Onnx__NodeProto *n, const char *name);
/* Integer attribute (def when absent). */
int64_t ox_attr_int(const Onnx__NodeProto *n, const char *name, int64_t def);
/* Float attribute (def when absent). */
double ox_attr_float(const Onnx__NodeProto *n, const char *name, double def);
/* String attribute as an arena string (def when absent). */
const char *ox_attr_str(ox_ctx *cx, const Onnx__NodeProto *n, const char *name, const char *def);
/* Integer-list attribute into out[max]; its length, or -1 when absent (or
 * longer than max, after reporting). */
int ox_attr_ints(ox_ctx *cx, const Onnx__NodeProto *n, const char *name, int64_t *out, int max);

/* Mutable normalized attrs of an op, holding its defaults. */
typedef struct ox_attrs {
    ir_attrs a;             /* what calls take */
    ir_attr_val *v;         /* the same values, to set */
} ox_attrs;
ox_attrs ox_attrs_new(ox_ctx *cx, ir_op_id op);
/* Setters of attribute idx (schema order, IR_* indices of ir.h). */
void ox_set_int(ox_attrs *at, int idx, int64_t v);
void ox_set_float(ox_attrs *at, int idx, double v);
void ox_set_bool(ox_attrs *at, int idx, bool v);
void ox_set_str(ox_attrs *at, int idx, const char *s);
void ox_set_ints(ox_ctx *cx, ox_attrs *at, int idx, int n, const int64_t *v);
void ox_set_none(ox_attrs *at, int idx);

/* An op call, typed at once and folded into a constant when every argument
 * is one; NULL after reporting a type error at the current node. */
ir_expr *ox_call(ox_ctx *cx, ir_op_id op, int nargs, ir_expr *const *args, const ox_attrs *at);
/* Shorthands of ox_call with default attributes. */
ir_expr *ox_call1(ox_ctx *cx, ir_op_id op, ir_expr *a);
ir_expr *ox_call2(ox_ctx *cx, ir_op_id op, ir_expr *a, ir_expr *b);
/* Field i of a tuple-valued expression (the field itself for a tuple node). */
ir_expr *ox_proj(ox_ctx *cx, ir_expr *tuple, int i);
/* Checks a shape a model gives (what names it): extents >= 0 and at most
 * OX_MAX_ELEMS elements; false after reporting. */
bool ox_check_shape(ox_ctx *cx, int nd, const int64_t *shape, const char *what);
/* A typed constant holding tensor t (in the module's arena). */
ir_expr *ox_const(ox_ctx *cx, const ir_tensor *t);
/* A rank-0 constant of dtype dt. */
ir_expr *ox_scalar(ox_ctx *cx, ir_dtype dt, double v);
/* A constant of the given shape filled with v; NULL after reporting when it
 * would exceed OX_MAX_CONST elements. */
ir_expr *ox_filled(ox_ctx *cx, ir_dtype dt, int ndim, const int64_t *shape, double v);
/* A 1-D int64 constant. */
ir_expr *ox_ints_const(ox_ctx *cx, int n, const int64_t *v);
/* The value of e when it is a constant, else NULL. */
const ir_tensor *ox_value(const ir_expr *e);
/* Reads a constant integer input (what names it in the error) into out[max];
 * its length, or -1 after reporting that it is not a constant (a dynamic
 * shape), not integers or too long. */
int ox_const_ints(ox_ctx *cx, const ir_expr *e, const char *what, int64_t *out, int max);
/* Reads a constant scalar input (what names it); false after reporting. */
bool ox_const_scalar(ox_ctx *cx, const ir_expr *e, const char *what, double *out);
/* The tensor type of e (converters only see typed tensor operands). */
const ir_type *ox_type(const ir_expr *e);
/* Normalizes an ONNX axis (negative from the end) into [0, ndim); false
 * after reporting. */
bool ox_axis(ox_ctx *cx, int64_t axis, int ndim, int *out);
/* reshape(e, shape) with an explicit shape. */
ir_expr *ox_reshape(ox_ctx *cx, ir_expr *e, int ndim, const int64_t *shape);
/* transpose(e, perm). */
ir_expr *ox_transpose(ox_ctx *cx, ir_expr *e, int ndim, const int64_t *perm);
/* add(a, b); a vector along the last axis added to a product (dense,
 * batch_matmul) is Relay's bias_add (the same sums), so that it stays a
 * bias for passes and for seeded weights. */
ir_expr *ox_add(ox_ctx *cx, ir_expr *a, ir_expr *b);
/* e broadcast to shape (numpy rules), or e when it has that shape. */
ir_expr *ox_broadcast_to(ox_ctx *cx, ir_expr *e, int nd, const int64_t *shape);
/* cast(e, dt), or e when it already has dtype dt. */
ir_expr *ox_cast(ox_ctx *cx, ir_expr *e, ir_dtype dt);

/* ---- convert_nn.c: convolution, dense, pooling, normalization, activations */
/* Each is an ox_convert_fn for the ONNX ops its comment names (the table in
 * import.c maps op names to them). */

/* Conv (1-D, 2-D). */
bool ox_conv_conv(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* ConvTranspose as nn.conv2d_transpose / nn.conv1d_transpose (pads from output_shape or auto_pad). */
bool ox_conv_conv_transpose(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Resize (opsets 10-17) and Upsample (7-9) as image.resize2d (NCHW, H and W only). */
bool ox_conv_resize(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Gemm. */
bool ox_conv_gemm(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* MatMul. */
bool ox_conv_matmul(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* MaxPool, AveragePool. */
bool ox_conv_pool(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* GlobalAveragePool, GlobalMaxPool. */
bool ox_conv_global_pool(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* BatchNormalization (inference). */
bool ox_conv_batch_norm(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* InstanceNormalization. */
bool ox_conv_instance_norm(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* LayerNormalization. */
bool ox_conv_layer_norm(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Softmax, LogSoftmax. */
bool ox_conv_softmax(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Relu, LeakyRelu, PRelu, Elu, Selu, Sigmoid, HardSigmoid, HardSwish, Tanh, Softplus, ThresholdedRelu, Shrink. */
bool ox_conv_activation(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Hardmax. */
bool ox_conv_hardmax(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Dropout (inference: the identity). */
bool ox_conv_dropout(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);

/* ---- convert_math.c: elementwise arithmetic, comparisons, reductions ---- */

/* Add, Sub, Mul, Div, Pow, Equal, Less, Greater, LessOrEqual, GreaterOrEqual, And, Or, Xor. */
bool ox_conv_binary(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Not, Abs, Neg, Exp, Log, Sqrt, Reciprocal, Erf, Floor, Ceil. */
bool ox_conv_unary(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Sum, Mean, Max, Min. */
bool ox_conv_variadic(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Clip. */
bool ox_conv_clip(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Where. */
bool ox_conv_where(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Cast, CastLike. */
bool ox_conv_cast(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* ReduceMean/Sum/Max/Min/Prod/L1/L2/SumSquare/LogSum/LogSumExp. */
bool ox_conv_reduce(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* ArgMax, ArgMin. */
bool ox_conv_argreduce(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);

/* ---- convert_tensor.c: shapes, layout, constants -------------------------- */

/* Identity. */
bool ox_conv_identity(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Constant. */
bool ox_conv_constant(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* ConstantOfShape. */
bool ox_conv_constant_of_shape(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Shape, Size (constants). */
bool ox_conv_shape(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Flatten. */
bool ox_conv_flatten(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Reshape. */
bool ox_conv_reshape(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Transpose. */
bool ox_conv_transpose(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Concat. */
bool ox_conv_concat(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Split. */
bool ox_conv_split(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Slice. */
bool ox_conv_slice(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Squeeze. */
bool ox_conv_squeeze(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Unsqueeze. */
bool ox_conv_unsqueeze(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Gather. */
bool ox_conv_gather(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Expand. */
bool ox_conv_expand(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Tile. */
bool ox_conv_tile(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Pad. */
bool ox_conv_pad(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* DepthToSpace. */
bool ox_conv_depth_to_space(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* SpaceToDepth. */
bool ox_conv_space_to_depth(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* EyeLike. */
bool ox_conv_eye_like(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Trilu. */
bool ox_conv_trilu(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);
/* Range (of constants). */
bool ox_conv_range(ox_ctx *, const Onnx__NodeProto *, ir_expr *const *, int, ir_expr **, int);

#endif
