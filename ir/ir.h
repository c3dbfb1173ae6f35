/* ir.h — the map of ir/: Relay types and expressions (algebraic data types
 * included), tensors and their .npy/.npz files, modules, the operator
 * registry (attributes, relations,
 * reference kernels), the text parser and printer, type inference, the
 * reference interpreter and seeded parameters. Prefix: ir_. Depends on
 * support/ only. One block per source file (the ref_*.c kernels are declared
 * by the OP table).
 *
 * Ownership: every node, type and string of a module lives in the module's
 * arena and is freed with it. Nodes are immutable once built, except the
 * `type` field of an expression, which type inference fills in once. Heap
 * tensors (ir_tensor_alloc) and interpreter values (reference-counted) have
 * the owners their blocks below name. */
#ifndef RT_IR_H
#define RT_IR_H

#include "support/support.h"

typedef struct ir_type ir_type;
typedef struct ir_expr ir_expr;
typedef struct ir_module ir_module;
typedef struct ir_op_def ir_op_def;
typedef struct ir_adt ir_adt;
typedef struct ir_ctor ir_ctor;

/* ---- dtype.c: element types ------------------------------------------- */

/* X(ID, name, bytes, class): class 'f' float, 'i' signed, 'u' unsigned, 'b' bool */
#define IR_DTYPES(X)                 \
    X(FLOAT32, "float32", 4, 'f')    \
    X(FLOAT16, "float16", 2, 'f')    \
    X(FLOAT64, "float64", 8, 'f')    \
    X(INT8, "int8", 1, 'i')          \
    X(INT16, "int16", 2, 'i')        \
    X(INT32, "int32", 4, 'i')        \
    X(INT64, "int64", 8, 'i')        \
    X(UINT8, "uint8", 1, 'u')        \
    X(BOOL, "bool", 1, 'b')

typedef enum {
#define X(id, name, bytes, cls) IR_##id,
    IR_DTYPES(X)
#undef X
    IR_DTYPE_COUNT
} ir_dtype;

/* Name as Relay spells it ("float32"). */
const char *ir_dtype_name(ir_dtype t);
/* Size of one element in bytes. */
int ir_dtype_bytes(ir_dtype t);
/* True for float16/32/64. */
bool ir_dtype_is_float(ir_dtype t);
/* True for signed and unsigned integers (not bool). */
bool ir_dtype_is_int(ir_dtype t);
/* Looks up a dtype by its n-character name; false when unknown. */
bool ir_dtype_parse(const char *s, size_t n, ir_dtype *out);

/* ---- type.c: Relay types ------------------------------------------------ */

typedef enum {
    IR_TY_TENSOR,   /* Tensor[(d0, d1, ...), dtype]; rank 0 is a scalar such as `float32` */
    IR_TY_TUPLE,    /* (T0, T1, ...) */
    IR_TY_FUNC,     /* fn (T0, T1, ...) -> R */
    IR_TY_VAR,      /* a type parameter `A` of `def @f[A](...)`: one node per declaration, equal only to itself */
    IR_TY_ADT,      /* an algebraic data type applied to its arguments: List[float32] (fields: the arguments) */
    IR_TY_REF,      /* a mutable reference ref(T) (fields[0]: T) */
    IR_TY_META,     /* an unknown that type inference solves (ndim: its number); never outside typeinfer.c */
} ir_type_kind;

struct ir_type {
    ir_type_kind kind;
    ir_dtype dtype;                 /* tensor: element type */
    int ndim;                       /* tensor: rank (0 for a scalar) */
    const int64_t *shape;           /* tensor: ndim static extents */
    int nfields;                    /* tuple: fields; func: parameters */
    const ir_type *const *fields;   /* tuple fields or func parameter types */
    const ir_type *ret;             /* func: result type */
    const char *name;               /* var: the parameter's name as written; adt: the type's name */
    const ir_adt *adt;              /* adt: its definition */
};

/* Builds a tensor type (shape copied into the arena). */
const ir_type *ir_tensor_type(su_arena *a, ir_dtype dt, int ndim, const int64_t *shape);
/* Builds a scalar (rank-0 tensor) type. */
const ir_type *ir_scalar_type(su_arena *a, ir_dtype dt);
/* Builds a tuple type (field array copied). */
const ir_type *ir_tuple_type(su_arena *a, int n, const ir_type *const *fields);
/* Builds a function type (parameter array copied). */
const ir_type *ir_func_type(su_arena *a, int n, const ir_type *const *params, const ir_type *ret);
/* Builds a type parameter named name (a new one each call). */
const ir_type *ir_type_var(su_arena *a, const char *name);
/* Builds the type adt[args] (argument array copied; n is the definition's number of type parameters). */
const ir_type *ir_adt_type(su_arena *a, const ir_adt *adt, int n, const ir_type *const *args);
/* Builds the reference type ref(t). */
const ir_type *ir_ref_type(su_arena *a, const ir_type *t);
/* True when t mentions a type parameter (a polymorphic type). */
bool ir_type_has_var(const ir_type *t);
/* True when t mentions an unknown of type inference (not solved yet). */
bool ir_type_has_meta(const ir_type *t);
/* Structural equality (type parameters: identity). */
bool ir_type_equal(const ir_type *a, const ir_type *b);
/* Number of elements of a tensor type (1 for a scalar). */
int64_t ir_type_numel(const ir_type *t);
/* Appends the Relay spelling of t ("Tensor[(1, 3), float32]", "float32", "(T, U)"). */
void ir_type_print(su_buf *b, const ir_type *t);
/* Relay spelling of t as an arena string (for messages). */
const char *ir_type_str(su_arena *a, const ir_type *t);
/* "(1, 3, 224, 224)" for a tensor type, its full spelling otherwise (for messages). */
const char *ir_shape_str(su_arena *a, const ir_type *t);

/* ---- tensor.c: dense tensors ------------------------------------------- */

/* A dense, C-order tensor with 64-byte aligned data. It has one of two
 * owners: an arena (ir_tensor_new; constants of a module live in its arena)
 * or the heap (ir_tensor_alloc: struct, shape and data are one block that
 * ir_tensor_free releases). Values of the interpreter and tensors read from
 * files are heap tensors. */
typedef struct ir_tensor {
    ir_dtype dtype;
    int ndim;
    const int64_t *shape;   /* ndim extents */
    void *data;             /* numel * dtype bytes, 64-byte aligned */
} ir_tensor;

/* Allocates a zeroed tensor in the arena. */
ir_tensor *ir_tensor_new(su_arena *a, ir_dtype dt, int ndim, const int64_t *shape);
/* Allocates a zeroed heap tensor; NULL when an extent is negative, the size
 * overflows or memory is short (callers report it). Free with ir_tensor_free. */
ir_tensor *ir_tensor_alloc(ir_dtype dt, int ndim, const int64_t *shape);
/* Frees a heap tensor (NULL is fine); never call it on an arena tensor. */
void ir_tensor_free(ir_tensor *t);
/* A heap copy of t (any owner); NULL when memory is short. */
ir_tensor *ir_tensor_clone(const ir_tensor *t);
/* A rank-0 tensor holding v converted to dt (saturating at the dtype's range). */
ir_tensor *ir_tensor_scalar(su_arena *a, ir_dtype dt, double v);
/* A rank-0 int64 tensor holding v exactly (doubles lose precision past 2^53). */
ir_tensor *ir_tensor_scalar_i64(su_arena *a, int64_t v);
/* Element i converted to double (any dtype). */
double ir_tensor_get(const ir_tensor *t, int64_t i);
/* Stores v into element i, converted as ir_tensor_scalar converts. */
void ir_tensor_set(ir_tensor *t, int64_t i, double v);
/* Element i as int64 (floats truncate toward zero and saturate; NaN is 0). */
int64_t ir_tensor_get_i64(const ir_tensor *t, int64_t i);
/* Stores v into element i: integers wrap to the dtype's width, bool is v != 0. */
void ir_tensor_set_i64(ir_tensor *t, int64_t i, int64_t v);
/* Number of elements. */
int64_t ir_tensor_numel(const ir_tensor *t);
/* Bytes of data (numel * dtype bytes). */
size_t ir_tensor_nbytes(const ir_tensor *t);
/* Elements of a shape; false when an extent is negative or the byte size of
 * elem_bytes-sized elements would pass SIZE_MAX / 2. */
bool ir_shape_numel(int ndim, const int64_t *shape, int elem_bytes, int64_t *numel);
/* True when t has dtype dt and this shape. */
bool ir_tensor_has_shape(const ir_tensor *t, ir_dtype dt, int ndim, const int64_t *shape);
/* Appends t's type as Relay spells it ("Tensor[(1, 3), float32]", "int64"). */
void ir_tensor_print_type(su_buf *b, const ir_tensor *t);

/* ---- npy.c: numpy .npy files --------------------------------------------- */

/* Reads a .npy image of len bytes (format 1.0, 2.0 or 3.0) into a heap tensor
 * in C order and host byte order (Fortran-order and byte-swapped files are
 * converted). name labels messages; on failure returns NULL and appends
 * "NAME: what is wrong" to err. */
ir_tensor *ir_npy_parse(const char *name, const void *data, size_t len, su_buf *err);
/* Reads a .npy file (see ir_npy_parse). */
ir_tensor *ir_npy_load(const char *path, su_buf *err);
/* Appends t as a .npy image (format 1.0, or 2.0 when the header needs it). */
void ir_npy_encode(su_buf *out, const ir_tensor *t);
/* Writes t to a .npy file; false after appending "PATH: cannot write: ..." to err. */
bool ir_npy_save(const char *path, const ir_tensor *t, su_buf *err);

/* ---- npz.c: numpy .npz archives ------------------------------------------ */

/* One array of an archive. */
typedef struct ir_npz_entry {
    char *name;             /* the key: member name without ".npy" (malloc'd) */
    ir_tensor *tensor;      /* heap tensor owned by the archive (NULL once taken) */
} ir_npz_entry;

/* The arrays of an .npz, in archive order. */
typedef struct ir_npz {
    int n;
    ir_npz_entry *entries;
} ir_npz;

/* Reads every array of an .npz image (numpy.savez or savez_compressed); NULL
 * after appending "NAME: entry 'KEY.npy': what is wrong" to err. */
ir_npz *ir_npz_parse(const char *name, const void *data, size_t len, su_buf *err);
/* Reads an .npz file (see ir_npz_parse). */
ir_npz *ir_npz_load(const char *path, su_buf *err);
/* The array stored under key, or NULL. */
const ir_tensor *ir_npz_find(const ir_npz *z, const char *key);
/* Moves entry i's tensor out of the archive (the caller frees it). */
ir_tensor *ir_npz_take(ir_npz *z, int i);
/* Frees the archive and the tensors still in it (NULL is fine). */
void ir_npz_free(ir_npz *z);
/* Appends n named tensors as an .npz image (members KEY.npy, deflated when
 * compress); false after appending a reason to err (zip64 sizes). */
bool ir_npz_encode(su_buf *out, int n, const char *const *keys, const ir_tensor *const *ts, bool compress,
                   su_buf *err);
/* Writes n named tensors to an .npz file; false after appending a reason. */
bool ir_npz_save(const char *path, int n, const char *const *keys, const ir_tensor *const *ts, bool compress,
                 su_buf *err);

/* ---- attrs.c: attribute values and schemas ----------------------------- */

typedef enum {
    IR_AV_NONE,     /* None */
    IR_AV_INT,      /* 3, -1 */
    IR_AV_FLOAT,    /* 1e-05f, 0.5f */
    IR_AV_BOOL,     /* True / False */
    IR_AV_STR,      /* "NCHW" */
    IR_AV_LIST,     /* [a, b, ...], possibly nested */
    IR_AV_RAW,      /* a value relay-tune keeps as TVM printed it and never reads: VirtualDevice(...),
                       meta[VirtualDevice][0] (s: the text, printed back verbatim) */
} ir_attr_kind;

typedef struct ir_attr_val {
    ir_attr_kind kind;
    int64_t i;                          /* IR_AV_INT; also IR_AV_BOOL (0/1) */
    double f;                           /* IR_AV_FLOAT */
    const char *s;                      /* IR_AV_STR, unescaped; IR_AV_RAW, as written */
    int n;                              /* IR_AV_LIST: items */
    const struct ir_attr_val *items;    /* IR_AV_LIST */
} ir_attr_val;

/* What an attribute accepts; values are checked against this when parsed. */
typedef enum {
    IR_AT_INT,          /* integer */
    IR_AT_FLOAT,        /* number (an integer is accepted and stored as float) */
    IR_AT_BOOL,         /* True/False (0/1 accepted) */
    IR_AT_STR,          /* string */
    IR_AT_INTS,         /* list of integers (a single integer is accepted as [n]) */
    IR_AT_INTS_OPT,     /* list of integers or None */
    IR_AT_INT_OPT,      /* integer or None */
    IR_AT_INT_OR_INTS,  /* integer or list of integers, kept as written (split) */
    IR_AT_INTS2,        /* list of lists of integers (pad_width) */
    IR_AT_ANY,          /* anything (kept as written) */
} ir_attr_type;

typedef struct ir_attr_def {
    const char *name;           /* as in TVM's attrs, e.g. "strides" */
    ir_attr_type type;
    const char *default_text;   /* default in Relay text syntax: "[1, 1]", "None", "1e-05f" */
    bool required;              /* TVM has no default: text must give it, and it is always printed
                                   (default_text is then only what built IR starts from) */
} ir_attr_def;

typedef struct ir_attr_schema {
    int n;
    const ir_attr_def *defs;
} ir_attr_schema;

/* Declares a schema from a list of ir_attr_def initializers. */
#define IR_SCHEMA(...) { (int)(sizeof((ir_attr_def[]){__VA_ARGS__}) / sizeof(ir_attr_def)), \
                         (const ir_attr_def[]){__VA_ARGS__} }

/* A call's attributes, normalized against its op's schema: one value per
 * schema entry, in schema order, defaults filled in. */
typedef struct ir_attrs {
    int n;
    const ir_attr_val *vals;
} ir_attrs;

/* A free-form named attribute (function attributes such as Primitive=1). */
typedef struct ir_attr_kv {
    const char *name;
    ir_attr_val val;
} ir_attr_kv;

/* Parses one attribute literal in Relay syntax (used for schema defaults);
 * returns false on malformed text. */
bool ir_attr_parse_literal(su_arena *a, const char *text, ir_attr_val *out);
/* Checks v against type t, converting where the schema allows (int → float,
 * int → [int]); on mismatch returns false and sets *why to a short reason. */
bool ir_attr_coerce(su_arena *a, ir_attr_type t, const ir_attr_val *v, ir_attr_val *out, const char **why);
/* Structural equality (int and float compare by value). */
bool ir_attr_equal(const ir_attr_val *a, const ir_attr_val *b);
/* Appends the Relay spelling of v ("[1, 1]", "1e-05f", "True", "\"NCHW\""). */
void ir_attr_print(su_buf *b, const ir_attr_val *v);
/* Appends a float as Relay prints it: shortest text that reads back as the
 * same float32, with an `f` suffix ("1e-05f", "0.5f", "2f"). */
void ir_print_float32(su_buf *b, double v);
/* Typed accessors into normalized attrs (idx from the op's schema order). */
const ir_attr_val *ir_attr_get(const ir_attrs *at, int idx);
int64_t ir_attr_int(const ir_attrs *at, int idx);
double ir_attr_float(const ir_attrs *at, int idx);
bool ir_attr_bool(const ir_attrs *at, int idx);
const char *ir_attr_str(const ir_attrs *at, int idx);
/* True when the attribute is None. */
bool ir_attr_is_none(const ir_attrs *at, int idx);
/* Copies an integer list (or single integer) into out[max]; returns the count,
 * or -1 when the value is not integers or has more than max items. */
int ir_attr_ints(const ir_attrs *at, int idx, int64_t *out, int max);
/* The same for one attribute value (None gives -1). */
int ir_attr_val_ints(const ir_attr_val *v, int64_t *out, int max);

/* ---- op_registry.c: the operator table (rows in ops.def) --------------- */

typedef enum {
#define OP(id, name, lo, hi, pat, schema, rel, flops, ref) IR_OP_##id,
#include "ir/ops.def"
#undef OP
    IR_OP_COUNT
} ir_op_id;

/* Op patterns as in TVM (fusion reads only these). */
typedef enum {
    IR_PAT_ELEMWISE = 0,            /* out[i] = f(in[i]) */
    IR_PAT_BROADCAST = 1,           /* elementwise with numpy broadcasting */
    IR_PAT_INJECTIVE = 2,           /* each output reads one input element (reshape, ...) */
    IR_PAT_COMM_REDUCE = 3,         /* commutative reduction */
    IR_PAT_OUT_EWISE_FUSABLE = 4,   /* complex op whose elementwise consumers can fuse (conv2d) */
    IR_PAT_TUPLE = 7,               /* tuple node */
    IR_PAT_OPAQUE = 8,              /* never fused */
} ir_op_pattern;

/* Context handed to a type relation: where to allocate and report. */
typedef struct ir_rel_ctx {
    su_arena *arena;        /* for result types and message strings */
    su_diags *diags;        /* where ir_rel_error reports */
    su_span span;           /* the call being checked */
    const ir_op_def *op;    /* the op being checked */
    ir_expr *const *arg_exprs; /* the call's arguments, for the few relations that read constant
                                  values (arange's bounds); NULL when unknown */
} ir_rel_ctx;

/* A type relation: argument types (+ normalized attrs) → result type, or NULL
 * after reporting through ir_rel_error. Arguments are already known. */
typedef const ir_type *(*ir_rel_fn)(ir_rel_ctx *cx, const ir_type *const *args, int nargs,
                                    const ir_attrs *attrs);
/* Floating-point operations of one call, from its types and attrs. */
typedef int64_t (*ir_flops_fn)(const ir_type *const *args, int nargs, const ir_attrs *attrs,
                               const ir_type *out);

/* One call of a reference kernel. Arguments and results are tensors: a tuple
 * argument (concatenate's) or result (split's, batch_norm's) is flattened
 * into its fields, in order. The results are already allocated, zeroed, with
 * the shapes and dtypes of the call's inferred type; the arguments have the
 * types the op's relation accepted, so a kernel checks only what depends on
 * values (an index out of range, an integer division by zero). */
typedef struct ir_ref_call {
    const ir_op_def *op;            /* the op called (shared kernels dispatch on op->id) */
    const ir_attrs *attrs;          /* normalized attributes */
    int nin;
    const ir_tensor *const *in;     /* arguments */
    int nout;
    ir_tensor *const *out;          /* results to fill */
    su_buf *err;                    /* on failure: why, without the op's name */
} ir_ref_call;
/* A reference kernel: computes c->out from c->in; false after writing c->err. */
typedef bool (*ir_ref_fn)(const ir_ref_call *c);
/* PyTorch's maximum and minimum of floats, which every max and min of the
 * project computes (reference kernels, LoopIR folding, the generated C's
 * rt_max_* / rt_min_*): NaN when either operand is NaN, else the larger
 * (smaller) one, x on a tie (so max(-0, 0) is -0, as torch.maximum says).
 * A plain `x > y ? x : y` drops a NaN in x and hides a model's faults. */
static inline double ir_max_nan(double x, double y) { return (x < y || y != y) ? y : x; }
static inline double ir_min_nan(double x, double y) { return (y < x || y != y) ? y : x; }
/* The same in float32, for kernels whose loops vectorize in float. */
static inline float ir_max_nanf(float x, float y) { return (x < y || y != y) ? y : x; }
static inline float ir_min_nanf(float x, float y) { return (y < x || y != y) ? y : x; }

struct ir_op_def {
    ir_op_id id;
    const char *name;               /* "nn.conv2d" */
    int min_args, max_args;         /* accepted argument counts */
    ir_op_pattern pattern;
    const ir_attr_schema *schema;   /* attribute names, types and defaults */
    ir_rel_fn rel;                  /* type relation */
    ir_flops_fn flops;              /* FLOP count */
    ir_ref_fn ref;                  /* reference kernel (the interpreter's, and every generated kernel's oracle) */
    const ir_attr_val *defaults;    /* schema defaults, parsed once at start-up */
};

/* Declarations generated from ops.def for the op_*.c and ref_*.c files to define. */
#define OP(id, name, lo, hi, pat, schema, rel, flops, ref)                                \
    extern const ir_attr_schema ir_schema_##schema;                                        \
    const ir_type *ir_rel_##rel(ir_rel_ctx *cx, const ir_type *const *args, int nargs,     \
                                const ir_attrs *attrs);                                    \
    int64_t ir_flops_##flops(const ir_type *const *args, int nargs, const ir_attrs *attrs, \
                             const ir_type *out);                                          \
    bool ir_ref_##ref(const ir_ref_call *c);
#include "ir/ops.def"
#undef OP

/* The op with this id. */
const ir_op_def *ir_op_get(ir_op_id id);
/* The op named by the n characters at name, or NULL. */
const ir_op_def *ir_op_lookup(const char *name, size_t n);
/* Index of attribute `name` in op's schema, or -1. */
int ir_op_attr_index(const ir_op_def *op, const char *name, size_t n);
/* Name of an op pattern ("elemwise", "out-elemwise-fusable", ...). */
const char *ir_pattern_name(ir_op_pattern p);
/* Normalized attrs holding only the op's defaults. */
const ir_attrs *ir_op_default_attrs(su_arena *a, const ir_op_def *op);

/* ---- attribute indices: positions in each op's schema ------------------ */

/* Where each attribute sits in the normalized attrs of a call (schema order,
 * defined by the IR_SCHEMA tables of ir/op_*.c). Type relations, reference
 * kernels and passes read attributes through these, so the order is written
 * once; tests/ir/test_ops.c checks every index against the schema's names. */
/* nn.conv2d's schema entries (op_nn.c), which the Winograd conv repeats before its own. */
#define IR_CONV2D_ATTRS                                                                          \
    {"strides", IR_AT_INTS, "[1, 1]"}, {"padding", IR_AT_INTS, "[0, 0]"},                        \
    {"dilation", IR_AT_INTS, "[1, 1]"}, {"groups", IR_AT_INT, "1"},                              \
    {"channels", IR_AT_INT_OPT, "None"}, {"kernel_size", IR_AT_INTS_OPT, "None"},                \
    {"data_layout", IR_AT_STR, "\"NCHW\""}, {"kernel_layout", IR_AT_STR, "\"OIHW\""},            \
    {"out_layout", IR_AT_STR, "\"\""}, {"out_dtype", IR_AT_STR, "\"\""}
enum {  /* nn.conv2d */
    IR_CONV_STRIDES, IR_CONV_PADDING, IR_CONV_DILATION, IR_CONV_GROUPS, IR_CONV_CHANNELS,
    IR_CONV_KERNEL_SIZE, IR_CONV_DATA_LAYOUT, IR_CONV_KERNEL_LAYOUT, IR_CONV_OUT_LAYOUT, IR_CONV_OUT_DTYPE
};
enum {  /* nn.conv2d_transpose, nn.conv1d_transpose, nn.conv3d_transpose */
    IR_CONVT_CHANNELS, IR_CONVT_KERNEL_SIZE, IR_CONVT_STRIDES, IR_CONVT_PADDING, IR_CONVT_OUTPUT_PADDING,
    IR_CONVT_DILATION, IR_CONVT_GROUPS, IR_CONVT_DATA_LAYOUT, IR_CONVT_KERNEL_LAYOUT, IR_CONVT_OUT_LAYOUT,
    IR_CONVT_OUT_DTYPE
};
enum { IR_DENSE_UNITS, IR_DENSE_OUT_DTYPE };                            /* nn.dense */
enum { IR_BMM_OUT_DTYPE, IR_BMM_TRANSPOSE_A, IR_BMM_TRANSPOSE_B };      /* nn.batch_matmul */
enum {  /* nn.max_pool2d, nn.avg_pool2d (count_include_pad: avg only) */
    IR_POOL_SIZE, IR_POOL_STRIDES, IR_POOL_DILATION, IR_POOL_PADDING, IR_POOL_LAYOUT, IR_POOL_OUT_LAYOUT,
    IR_POOL_CEIL_MODE, IR_POOL_COUNT_INCLUDE_PAD
};
enum { IR_GPOOL_LAYOUT, IR_GPOOL_OUT_LAYOUT };                          /* nn.global_avg_pool2d */
enum { IR_APOOL_OUTPUT_SIZE, IR_APOOL_LAYOUT, IR_APOOL_OUT_LAYOUT };    /* nn.adaptive_avg_pool2d */
enum { IR_SOFTMAX_AXIS };                                               /* nn.softmax, nn.log_softmax */
enum { IR_NORM_AXIS, IR_NORM_EPSILON, IR_NORM_CENTER, IR_NORM_SCALE };  /* nn.layer_norm, nn.batch_norm */
enum { IR_DROPOUT_RATE };                                               /* nn.dropout */
enum { IR_BIAS_ADD_AXIS };                                              /* nn.bias_add */
enum { IR_LEAKY_RELU_ALPHA };                                           /* nn.leaky_relu */
enum { IR_PAD_WIDTH, IR_PAD_MODE };                                     /* nn.pad */
enum { IR_CLIP_A_MIN, IR_CLIP_A_MAX };                                  /* clip */
enum { IR_CAST_DTYPE };                                                 /* cast */
enum { IR_RESHAPE_NEWSHAPE, IR_RESHAPE_ALLOWZERO };                     /* reshape */
enum { IR_TRANSPOSE_AXES };                                             /* transpose */
enum { IR_SQUEEZE_AXIS };                                               /* squeeze */
enum { IR_EXPAND_DIMS_AXIS, IR_EXPAND_DIMS_NUM_NEWAXIS };               /* expand_dims */
enum { IR_CONCAT_AXIS };                                                /* concatenate */
enum { IR_SPLIT_INDICES_OR_SECTIONS, IR_SPLIT_AXIS };                   /* split */
enum { IR_SLICE_BEGIN, IR_SLICE_END, IR_SLICE_STRIDES, IR_SLICE_MODE, IR_SLICE_AXES }; /* strided_slice */
enum { IR_TAKE_BATCH_DIMS, IR_TAKE_AXIS, IR_TAKE_MODE };                /* take */
enum { IR_REDUCE_AXIS, IR_REDUCE_KEEPDIMS, IR_REDUCE_EXCLUDE };         /* sum, mean, max, min */
enum { IR_LT_SRC_LAYOUT, IR_LT_DST_LAYOUT };                            /* layout_transform */
enum { IR_STACK_AXIS };                                                 /* stack */
enum { IR_UPS_SCALE_H, IR_UPS_SCALE_W, IR_UPS_LAYOUT, IR_UPS_METHOD, IR_UPS_ALIGN_CORNERS }; /* nn.upsampling */
enum {  /* image.resize2d */
    IR_RESIZE_ROI, IR_RESIZE_SIZE, IR_RESIZE_LAYOUT, IR_RESIZE_METHOD, IR_RESIZE_COORD_MODE, IR_RESIZE_ROUNDING,
    IR_RESIZE_CUBIC_ALPHA, IR_RESIZE_CUBIC_EXCLUDE, IR_RESIZE_EXTRAPOLATION, IR_RESIZE_OUT_DTYPE
};
enum { IR_ARANGE_START, IR_ARANGE_STOP, IR_ARANGE_STEP, IR_ARANGE_DTYPE };  /* arange */
enum { IR_FULL_SHAPE, IR_FULL_DTYPE };                                 /* full */
enum { IR_SHAPE_OF_DTYPE };                                             /* shape_of */
enum {  /* argmax */
    IR_ARGREDUCE_AXIS, IR_ARGREDUCE_KEEPDIMS, IR_ARGREDUCE_SELECT_LAST_INDEX, IR_ARGREDUCE_EXCLUDE
};

/* ---- op_util.c: helpers shared by type relations ------------------------ */

/* Reports a type error at the call, prefixed with the op's name. Returns NULL
 * so that a relation can `return ir_rel_error(...)`. */
const ir_type *ir_rel_error(ir_rel_ctx *cx, const char *fmt, ...) SU_PRINTF(2, 3);
/* Argument i as a tensor type, or NULL after reporting that it is not one. */
const ir_type *ir_rel_tensor(ir_rel_ctx *cx, const ir_type *const *args, int i);
/* Normalizes axis (negative counts from the end) into [0, ndim); false after
 * reporting when out of range. */
bool ir_rel_axis(ir_rel_ctx *cx, int64_t axis, int ndim, int *out);
/* Numpy broadcast of two shapes into out (rank max(na, nb)); false after
 * reporting both shapes when they are incompatible. */
bool ir_rel_broadcast_shapes(ir_rel_ctx *cx, const ir_type *a, const ir_type *b, int *ndim, int64_t *out);
/* Maximum tensor rank handled by relations. */
#define IR_MAX_DIMS 16

/* ---- op_layout.c: data layouts ("NCHW", "NHWC", "NCHW16c") ------------- */

/* A layout: one letter per axis, upper-case primal, lower-case a sub-axis
 * split off the primal axis of the same letter (the inner part). */
typedef struct ir_layout {
    int n;                          /* axes */
    char axis[IR_MAX_DIMS];         /* the letter of each axis */
    int64_t factor[IR_MAX_DIMS];    /* a sub-axis's extent; 0 for a primal axis */
} ir_layout;

/* Parses a layout string; NULL, or a reason it is malformed. */
const char *ir_layout_parse(const char *s, ir_layout *out);
/* The position of axis letter c, or -1. */
int ir_layout_find(const ir_layout *l, char c);
/* The extent of the sub-axis split off primal axis `primal`, or 1 when none is. */
int64_t ir_layout_factor(const ir_layout *l, char primal);
/* When layout l is a permutation of the four letters of canon ("NCHW",
 * "OIHW"), sets pos[i] to the position of canon[i] in l and returns true. */
bool ir_layout_perm(const char *l, const char *canon, int pos[4]);

/* ---- op_init.c -------------------------------------------------------------- */

/* The number of elements of arange(start, stop, step): ceil((stop - start) / step), at least 0. */
int64_t ir_arange_length(double start, double stop, double step);

/* ---- op_nn.c ---------------------------------------------------------------- */

/* True when a call of nn.conv2d has the layouts NCHW/OIHW (and an NCHW result),
 * the ones its templates and passes are written for. */
bool ir_conv2d_is_nchw(const ir_expr *call);
/* conv1d's stride, dilation and padding [left, right] from its attrs; false
 * when they do not have that form (the relation reports why). */
bool ir_conv1d_params(const ir_attrs *at, int64_t *stride, int64_t *dilation, int64_t pad[2]);
/* The window of a transposed convolution (ns = 1, 2 or 3 spatial axes). */
typedef struct ir_conv_transpose {
    int ns;
    int64_t stride[3], dilation[3], pad_lo[3], pad_hi[3], out_pad[3];
    int64_t groups;
} ir_conv_transpose;
/* Reads it from the attrs of nn.conv1d_transpose / nn.conv2d_transpose /
 * nn.conv3d_transpose; false when they do not have that form (the relation
 * reports why). */
bool ir_conv_transpose_params(const ir_attrs *at, int ns, ir_conv_transpose *p);
/* The window of nn.conv3d, nn.max_pool3d or nn.avg_pool3d, axes D, H, W. */
typedef struct ir_window3d {
    int64_t k[3];       /* pool_size (a convolution's kernel is its weight's: left as it was) */
    int64_t stride[3], dil[3];
    int64_t pad[6];     /* front, top, left, back, bottom, right */
} ir_window3d;
/* Reads it from the attrs of a 3-D convolution (pool false) or pool; false
 * when they do not have that form (the relation reports why). */
bool ir_window3d_params(const ir_attrs *at, bool pool, ir_window3d *w);

/* ---- ref_layout.c: kernels in other layouts ------------------------------ */

/* Runs fn, a kernel of canonical layouts, on call c whose rank-4 inputs and
 * output are in other orders: input i's canonical axis j is its axis
 * in_pos[i][j] (in_pos[i] NULL: already canonical), likewise out_pos for the
 * result. Permutes through heap temporaries; false with c->err set on failure. */
bool ir_ref_in_layouts(const ir_ref_call *c, const int *const *in_pos, const int *out_pos, ir_ref_fn fn);

/* ---- op_nchwc.c, ref_nchwc.c: nn.contrib_conv2d_NCHWc ----------------- */

/* Its blocks from its attrs: data NCHW[ib]c, weight OIHW[wib]i[wob]o, output
 * NCHW[ob]c ("" means wob); false when a layout is not of that form. */
bool ir_nchwc_blocks(const ir_attrs *at, int64_t *ib, int64_t *wib, int64_t *wob, int64_t *ob);
/* The same attrs for nn.conv2d in NCHW/OIHW: vals (at->n entries) gets a
 * copy with the layouts replaced, *out points at it. */
void ir_nchwc_plain_attrs(const ir_attrs *at, ir_attr_val *vals, ir_attrs *out);
/* The block b when the layout attribute at idx is NCHW[b]c and the one at
 * oidx is "" or the same (a pool on blocked data); 0 otherwise. */
int64_t ir_layout_blocked(const ir_attrs *at, int idx, int oidx);
/* at with its layouts at idx and oidx made "NCHW" and "": vals (at->n
 * entries) gets the copy, *out points at it. */
void ir_plain_layout_attrs(const ir_attrs *at, int idx, int oidx, ir_attr_val *vals, ir_attrs *out);
/* The relation of a pool on blocked data: plain (the op's own relation) on
 * the NCHW tensor it blocks, the result blocked the same way. */
const ir_type *ir_rel_blocked(ir_rel_ctx *cx, const ir_type *const *args, int nargs, const ir_attrs *attrs, int idx,
                              int oidx, ir_rel_fn plain);
/* The reference kernel of a pool on blocked data: plain on the unblocked
 * input, the result blocked again. */
bool ir_ref_blocked(const ir_ref_call *c, int idx, int oidx, ir_ref_fn plain);
/* Reference layout_transform of x from layout src to dst into out (whose
 * shape the relation gave); false with err set on a malformed layout. */
bool ir_ref_relayout(const ir_tensor *x, const char *src, const char *dst, ir_tensor *out, su_buf *err);

/* ---- winograd.c, op_winograd.c, ref_winograd.c: Winograd 3x3 convolution ---- */

/* Filter taps (3x3 only) and the largest input tile (F(4x4, 3x3): 6x6). */
enum { IR_WINO_R = 3, IR_WINO_MAX_ALPHA = 6 };
/* The attribute nn.contrib_conv2d_winograd_without_weight_transform adds
 * after conv2d's (whose IR_CONV_* indices it shares). */
enum { IR_WINO_TILE_SIZE = IR_CONV_OUT_DTYPE + 1 };
/* The transforms of F(m x m, 3 x 3): Y = A^T [(G g G^T) ⊙ (B^T d B)] A. */
typedef struct ir_winograd {
    int m, alpha;                                   /* output tile m x m, input tile alpha = m + 2 */
    double at[IR_WINO_MAX_ALPHA][IR_WINO_MAX_ALPHA]; /* A^T: m x alpha, the output transform */
    double g[IR_WINO_MAX_ALPHA][IR_WINO_R];         /* G: alpha x 3, the weight transform */
    double bt[IR_WINO_MAX_ALPHA][IR_WINO_MAX_ALPHA]; /* B^T: alpha x alpha, the input transform */
} ir_winograd;
/* The matrices of F(m, 3) from the alpha - 1 finite points pts[i] =
 * {numerator, denominator} (and infinity), in exact fractions; false when
 * alpha exceeds IR_WINO_MAX_ALPHA or two points coincide. */
bool ir_winograd_from_points(int m, const int64_t (*pts)[2], ir_winograd *w);
/* The project's matrices for m = 2 (points 0, +-1) and m = 4 (0, +-1, +-2); false for another m. */
bool ir_winograd_get(int m, ir_winograd *w);
/* A conv's padding (top, left, bottom, right) when its attrs (conv2d's
 * indices) have strides 1, dilation 1 and groups 1; false otherwise. */
bool ir_winograd_window(const ir_attrs *at, int64_t pad[4]);
/* The output tile m (4 or 2) for an output of oh x ow: the rule of docs/winograd.md. */
int ir_winograd_tile_for(int64_t oh, int64_t ow);

/* ---- op_image.c: nn.upsampling and image.resize2d ---------------------- */

/* One axis of a resize: output index y reads input coordinate (a*y + b) / d. */
typedef struct ir_resize_axis {
    int64_t a, b, d;    /* the exact fraction (d > 0) */
    int64_t in, out;    /* extents */
} ir_resize_axis;

/* Rounding of the nearest-neighbour coordinate (TVM's rounding_method). */
enum { IR_ROUND_FLOOR, IR_ROUND_CEIL, IR_ROUND_NEAREST_EVEN, IR_ROUND_PREFER_FLOOR, IR_ROUND_PREFER_CEIL };

/* How a call of nn.upsampling or image.resize2d maps output to input pixels. */
typedef struct ir_resize {
    bool nchw;          /* layout NCHW, else NHWC */
    int hdim;           /* the axis of H (W follows it) */
    bool linear;        /* (bi)linear */
    bool cubic;         /* (bi)cubic; neither: nearest neighbour */
    double alpha;       /* cubic: the kernel's a (TVM's cubic_alpha, ONNX's cubic_coeff_a) */
    bool exclude;       /* cubic: taps outside the image weigh 0, the others renormalized */
    int rounding;       /* nearest: IR_ROUND_* */
    ir_resize_axis h, w;
} ir_resize;

/* The plan of a resize of data with this shape; NULL, or what is not supported. */
const char *ir_resize_plan(const ir_op_def *op, const ir_attrs *at, int ndim, const int64_t *shape, ir_resize *r);
/* The nearest input index of output index y on axis ax, clamped to the image. */
int64_t ir_resize_round(const ir_resize *r, const ir_resize_axis *ax, int64_t y);
/* The two clamped taps of a linear interpolation at y and the weight of the second. */
void ir_resize_taps(const ir_resize_axis *ax, int64_t y, int64_t *i0, int64_t *i1, double *frac);
/* The four clamped taps of a cubic interpolation at y (floor of the input
 * coordinate - 1 .. + 2), and whether each lies inside the image. */
void ir_resize_cubic_taps(const ir_resize_axis *ax, int64_t y, int64_t idx[4], bool inside[4]);
/* The weights of the four cubic taps at fraction t in [0, 1) (Keys' kernel
 * with a = alpha; with exclude, those of taps outside renormalized away). */
void ir_resize_cubic_weights(double t, double alpha, bool exclude, const bool inside[4], double w[4]);
/* Floor division (b != 0). */
int64_t ir_floordiv(int64_t a, int64_t b);
/* The remainder of floor division: of b's sign (b != 0). */
int64_t ir_floormod(int64_t a, int64_t b);

/* ---- expr.c: expressions and their builders ---------------------------- */

/* X(ID, name): the expression kinds. */
#define IR_EXPR_KINDS(X)    \
    X(VAR, "Var")           /* a parameter, let-bound or function-local variable: %x */ \
    X(GLOBAL, "GlobalVar")  /* a module function: @f */ \
    X(CONST, "Constant")    /* a constant tensor: 2f, 1i64, True */ \
    X(CALL, "Call")         /* op / function / closure application with attrs */ \
    X(LET, "Let")           /* let %x = value; body */ \
    X(IF, "If")             /* if (c) { a } else { b } */ \
    X(TUPLE, "Tuple")       /* (a, b) */ \
    X(PROJ, "TupleGetItem") /* t.0 */ \
    X(FUNC, "Function")     /* fn (%x: T) -> R { body } */ \
    X(OP, "Op")             /* a reference to a registered operator: nn.conv2d */ \
    X(CTOR, "Constructor")  /* a constructor of an algebraic data type: Cons (Nil is a call of Nil with no arguments) */ \
    X(MATCH, "Match")       /* match (e) { pattern => body, ... }, or match? (partial: no exhaustiveness warning) */ \
    X(REF_NEW, "RefCreate") /* ref(e): a new mutable cell holding e */ \
    X(REF_READ, "RefRead")  /* ref_read(r) */ \
    X(REF_WRITE, "RefWrite")/* ref_write(r, v): stores v, gives () */ \
    X(DEVICE, "DeviceAnnotation") /* on_device(e, ...) / device_copy(e, ...): e on one device (an identity here) */

typedef enum {
#define X(id, name) IR_##id,
    IR_EXPR_KINDS(X)
#undef X
} ir_expr_kind;

struct ir_expr {
    ir_expr_kind kind;
    su_span span;           /* the source text this node came from */
    uint32_t id;            /* unique in its module, in creation order */
    const ir_type *type;    /* inferred type; NULL until type inference ran */
    union {
        struct {
            const char *name; const ir_type *annot;   /* name without %; annot may be NULL */
            const ir_attr_val *vdev;                 /* a parameter's {virtual_device=...} as written, or NULL (kept, printed) */
        } var;
        struct { const char *name; } global;                             /* name without @ */
        struct { const ir_tensor *value; } constant;
        struct {
            ir_expr *fn; int nargs; ir_expr **args;
            const ir_attrs *attrs;          /* NULL unless fn is an op */
            int nkvs; const ir_attr_kv *kvs; /* attributes written on a call of a function (kept, printed, unused) */
        } call;
        struct { ir_expr *var; ir_expr *value; ir_expr *body; } let;
        struct { ir_expr *cond; ir_expr *then_branch; ir_expr *else_branch; } if_;
        struct { int n; ir_expr **fields; } tuple;
        struct { ir_expr *tuple; int index; } proj;
        struct {
            int nparams; ir_expr **params;  /* IR_VAR nodes with annotations */
            const ir_type *ret_annot;       /* declared result type, or NULL */
            ir_expr *body;
            int nattrs; const ir_attr_kv *attrs; /* e.g. Primitive=1 */
            int ntparams; const ir_type *const *tparams; /* type parameters [A, B] (IR_TY_VAR), or none */
        } func;
        struct { const ir_op_def *def; } op;
        struct { const ir_ctor *def; } ctor;
        struct {
            ir_expr *data;                  /* the scrutinee */
            int n; const struct ir_clause *clauses; /* in order: the first that matches is taken */
            bool partial;                   /* match?: no exhaustiveness warning */
        } match;
        struct { ir_expr *ref; ir_expr *value; } ref;   /* REF_NEW: value; REF_READ: ref; REF_WRITE: both */
        struct {
            bool copy;                      /* device_copy (else on_device) */
            ir_expr *value;
            int nkvs; const ir_attr_kv *kvs; /* its attributes as written (virtual_device=..., kept, printed) */
        } device;
    } u;
};

/* The pattern kinds of match clauses. */
typedef enum {
    IR_PT_WILD,    /* _ */
    IR_PT_VAR,     /* %x, binding the matched value (var: an IR_VAR node) */
    IR_PT_CTOR,    /* Cons(p, q) or Nil: the value is made by that constructor, its fields match p, q */
    IR_PT_TUPLE,   /* (p, q): a tuple whose fields match */
} ir_pattern_kind;

typedef struct ir_pattern {
    ir_pattern_kind kind;
    su_span span;
    ir_expr *var;                       /* IR_PT_VAR */
    const ir_ctor *ctor;                /* IR_PT_CTOR */
    int n; const struct ir_pattern *subs; /* IR_PT_CTOR fields, IR_PT_TUPLE fields */
} ir_pattern;

typedef struct ir_clause {
    ir_pattern pat;
    ir_expr *body;
} ir_clause;

/* Name of an expression kind ("Call"). */
const char *ir_expr_kind_name(ir_expr_kind k);
/* Builders: allocate a node in m's arena (arrays are copied). */
ir_expr *ir_var(ir_module *m, su_span sp, const char *name, const ir_type *annot);
ir_expr *ir_global(ir_module *m, su_span sp, const char *name);
ir_expr *ir_const(ir_module *m, su_span sp, const ir_tensor *value);
ir_expr *ir_call(ir_module *m, su_span sp, ir_expr *fn, int nargs, ir_expr *const *args, const ir_attrs *attrs);
ir_expr *ir_let(ir_module *m, su_span sp, ir_expr *var, ir_expr *value, ir_expr *body);
ir_expr *ir_if(ir_module *m, su_span sp, ir_expr *c, ir_expr *t, ir_expr *e);
ir_expr *ir_tuple(ir_module *m, su_span sp, int n, ir_expr *const *fields);
ir_expr *ir_proj(ir_module *m, su_span sp, ir_expr *tuple, int index);
ir_expr *ir_func(ir_module *m, su_span sp, int nparams, ir_expr *const *params, const ir_type *ret_annot,
                 ir_expr *body, int nattrs, const ir_attr_kv *attrs);
ir_expr *ir_op_ref(ir_module *m, su_span sp, const ir_op_def *def);
ir_expr *ir_ctor_ref(ir_module *m, su_span sp, const ir_ctor *def);
ir_expr *ir_match(ir_module *m, su_span sp, ir_expr *data, int n, const ir_clause *clauses, bool partial);
/* ref(value), ref_read(ref), ref_write(ref, value): kind IR_REF_NEW, IR_REF_READ or IR_REF_WRITE. */
ir_expr *ir_ref_expr(ir_module *m, su_span sp, ir_expr_kind kind, ir_expr *ref, ir_expr *value);
ir_expr *ir_device(ir_module *m, su_span sp, bool copy, ir_expr *value, int nkvs, const ir_attr_kv *kvs);
/* An op call with normalized attrs (NULL attrs = all defaults). */
ir_expr *ir_op_call(ir_module *m, su_span sp, ir_op_id op, int nargs, ir_expr *const *args, const ir_attrs *attrs);
/* The attribute `name` of an operator call, or NULL when its op has no such attribute. */
const ir_attr_val *ir_call_attr(const ir_expr *call, const char *name);
/* The op called by e, or NULL when e is not a call of an operator. */
const ir_op_def *ir_call_op(const ir_expr *e);
/* True when e is a function marked Primitive=1 (fuse-ops makes them; a
 * compiled model's kernels are the calls of such functions). */
bool ir_func_is_primitive(const ir_expr *e);

/* ---- visit.c: read-only traversals ------------------------------------- */

/* The number of operands of e, numbered by ir_expr_child in evaluation order:
 * a call's callee then its arguments, a tuple's fields, a projection's tuple,
 * a let's value then its body, an if's condition then its branches, a
 * function's body. Variables that a let or a function binds are not
 * operands; variables, globals, constants and ops have none. */
int ir_expr_nchildren(const ir_expr *e);
/* Operand i of e (0 <= i < ir_expr_nchildren(e)). */
ir_expr *ir_expr_child(const ir_expr *e, int i);

/* What a walk does after its pre hook saw a node. */
typedef enum {
    IR_VISIT_DESCEND,   /* visit the node's operands */
    IR_VISIT_SKIP,      /* leave them (the hook may visit some itself) */
    IR_VISIT_STOP,      /* end the walk: the answer is known */
} ir_visit_step;

typedef struct ir_visitor ir_visitor;
/* Called once per node, before its operands. */
typedef ir_visit_step (*ir_visit_pre_fn)(ir_visitor *v, const ir_expr *e);
/* Called once per node, after its operands (at once when pre skipped them). */
typedef void (*ir_visit_post_fn)(ir_visitor *v, const ir_expr *e);

struct ir_visitor {
    ir_visit_pre_fn pre;    /* NULL: descend everywhere */
    ir_visit_post_fn post;  /* NULL: none */
    void *ctx;              /* the caller's state */
    uint32_t *seen;         /* the nodes visited this round (a set of id + 1) */
    size_t cap, len;
    bool stopped;           /* pre answered IR_VISIT_STOP */
};

/* Prepares a walk with hooks pre and post (either may be NULL) over ctx. */
void ir_visitor_init(ir_visitor *v, ir_visit_pre_fn pre, ir_visit_post_fn post, void *ctx);
/* Visits e and every node reachable from it, depth first, operands in order,
 * each node once per round (a node visited by an earlier call of the round
 * is not visited again); any depth (no recursion). Hooks may call ir_visit
 * on the same visitor. False when the walk was stopped. */
bool ir_visit(ir_visitor *v, const ir_expr *e);
/* True when e was visited in this round. */
bool ir_visited(const ir_visitor *v, const ir_expr *e);
/* Starts a new round: nothing is visited, the walk is not stopped. */
void ir_visitor_reset(ir_visitor *v);
/* Frees the visited set. */
void ir_visitor_free(ir_visitor *v);

/* ---- module.c: modules of global functions ----------------------------- */

/* One `def @name(...) { ... }` of a module. */
typedef struct ir_global_def {
    const char *name;       /* without @ */
    ir_expr *global;        /* the IR_GLOBAL node naming it */
    ir_expr *func;          /* its IR_FUNC */
} ir_global_def;

struct ir_module {
    su_arena arena;         /* owns every node, type and string below */
    su_source source;       /* text the module was parsed from (empty if built) */
    SU_VEC(ir_global_def) defs;  /* in definition order */
    su_map by_name;         /* name → ir_global_def index + 1 (as pointer-sized int) */
    SU_VEC(ir_adt *) adts;  /* `type` definitions, in definition order (ir/adt.c) */
    ir_tensor **meta;       /* meta[relay.Constant][i] of the parsed text */
    size_t nmeta;
    uint32_t next_id;       /* id for the next node */
};

/* An empty module. */
ir_module *ir_module_new(void);
/* Frees the module and everything in its arena. */
void ir_module_free(ir_module *m);
/* Adds `def @name = func`; false when the name is taken. */
bool ir_module_add(ir_module *m, const char *name, ir_expr *global, ir_expr *func);
/* The definition named name, or NULL. */
ir_global_def *ir_module_find(const ir_module *m, const char *name);

/* ---- adt.c: algebraic data types, match patterns, interpreter-only code -- */

/* One constructor of a `type` definition. */
struct ir_ctor {
    const char *name;               /* Cons */
    int tag;                        /* its position in the definition (values carry it) */
    int nfields;
    const ir_type *const *fields;   /* field types, over the definition's type parameters */
    const ir_adt *adt;              /* the type it makes */
    su_span span;                   /* where it is defined */
};

/* `type Name[A, ...] { C(T, ...), ... }`, or `extern type Name[A]`, which has no constructors. */
struct ir_adt {
    const char *name;
    int ntparams;
    const ir_type *const *tparams;  /* IR_TY_VAR, one node each */
    int nctors;
    ir_ctor *ctors;
    bool is_extern;
    su_span span;
};

/* A new type definition named name (no constructors yet) added to m; NULL when the name is taken. */
ir_adt *ir_module_add_adt(ir_module *m, su_span sp, const char *name, int ntparams, const ir_type *const *tparams);
/* The type definition named name, or NULL. */
const ir_adt *ir_module_find_adt(const ir_module *m, const char *name);
/* The constructor named name (of any type definition of m), or NULL. */
const ir_ctor *ir_module_find_ctor(const ir_module *m, const char *name);
/* The types of c's fields when its type is applied to args (adt->ntparams of them). */
const ir_type *ir_ctor_field_type(su_arena *a, const ir_ctor *c, const ir_type *const *args, int field);
/* For a typed match: a value no clause matches, written as a pattern ("Nil",
 * "Cons(_, Nil)"), or NULL when the clauses are exhaustive. */
const char *ir_match_missing(su_arena *a, const ir_expr *match);
/* Whether compile and tune can take m: its @main and the defs it calls must be
 * first-order tensor code (no match, constructor, reference, ADT-typed value
 * or device annotation); false after reporting the first such construct at
 * its place, naming it. Defs @main does not reach are dropped, so a module
 * that only defines types or helpers beside a tensor @main compiles. */
bool ir_module_first_order(ir_module *m, su_diags *d);

/* ---- lexer.c: Relay text → tokens ---------------------------------------- */

typedef enum {
    IR_TK_EOF,
    IR_TK_IDENT,    /* nn.conv2d, Tensor, fn, def, float32, True (dots allowed inside) */
    IR_TK_LOCAL,    /* %x, %0 (text without the %) */
    IR_TK_GLOBAL,   /* @main (text without the @) */
    IR_TK_INT,      /* 3, -1, 2i64 (suffix in dtype) */
    IR_TK_FLOAT,    /* 1e-05f, 0.5, 3f16 */
    IR_TK_STRING,   /* "NCHW" (value unescaped) */
    IR_TK_PUNCT,    /* ( ) [ ] { } , ; : = . # * ? + - / < ! and the IR_P_ codes below */
    IR_TK_RAW,      /* VirtualDevice(...) as TVM prints it, brackets balanced (text: all of it) */
} ir_token_kind;

/* punct codes of the tokens that are not one character, and of '>' (whose
 * character is the arrow's code) */
enum {
    IR_P_ARROW = '>',   /* -> */
    IR_P_GT = 'G',      /* > */
    IR_P_LE = 'L',      /* <= */
    IR_P_GE = 'g',      /* >= */
    IR_P_EQ = 'E',      /* == */
    IR_P_NE = 'N',      /* != */
};

typedef struct ir_token {
    ir_token_kind kind;
    uint32_t begin, end;    /* byte range in the source */
    char punct;             /* IR_TK_PUNCT: the character ('>' for "->") */
    const char *text;       /* IDENT/LOCAL/GLOBAL/STRING: arena copy of the name or value */
    int64_t i;              /* IR_TK_INT value */
    double f;               /* IR_TK_FLOAT value */
    bool suffixed;          /* number had a dtype suffix (f, f16, i64, ...) */
    ir_dtype dtype;         /* number: dtype from suffix, else int32 / float32 */
} ir_token;

/* Splits src's first `end` bytes into tokens (comments dropped), ending with IR_TK_EOF. Returns
 * false after recording an error (bad character, unterminated comment or
 * string, malformed number) in d. *toks is malloc'd. */
bool ir_lex(su_arena *a, const su_source *src, size_t end, ir_token **toks, size_t *ntoks, su_diags *d);

/* ---- metadata.c: the #[metadata] section (tensor constants) ------------ */

/* Appends "#[metadata]" and the JSON that holds consts in TVM's layout
 * (referred to as meta[relay.Constant][i] in the text). */
void ir_metadata_print(su_buf *out, const ir_tensor *const *consts, size_t n);
/* Reads the JSON of a metadata section: *consts gets the relay.Constant
 * tensors (in a), *n their number. Returns NULL, or a message saying what is
 * wrong (an arena string). */
const char *ir_metadata_parse(su_arena *a, const char *json, size_t len, ir_tensor ***consts, size_t *n);

/* ---- parser.c: Relay text (version 0.0.5) → module --------------------- */

/* Parses Relay text; the module keeps a copy of the text for spans. Returns
 * NULL after recording errors (FILE:LINE:COL) in d. Types are not checked. */
ir_module *ir_parse(const char *filename, const char *text, size_t len, su_diags *d);

/* ---- typeinfer.c: type inference and checking -------------------------- */

/* Infers the type of every expression of every definition, filling in
 * ir_expr.type; false after recording type errors in d. */
bool ir_infer_types(ir_module *m, su_diags *d);
/* Infers the types of e and of its untyped sub-expressions (for nodes a pass
 * builds); variables must be typed or annotated. False after recording errors. */
bool ir_infer_expr(ir_module *m, ir_expr *e, su_diags *d);

/* ---- interp.c: the reference interpreter ---------------------------------- */

typedef enum {
    IR_VAL_TENSOR,      /* a tensor */
    IR_VAL_TUPLE,       /* a tuple of values */
    IR_VAL_CLOSURE,     /* a function with the values of its free variables (or a constructor used as one) */
    IR_VAL_ADT,         /* a constructor applied to its fields */
    IR_VAL_REF,         /* a mutable cell (items[0]: what it holds now) */
} ir_value_kind;

/* A run-time value, reference-counted (ir_value_retain / ir_value_release). */
typedef struct ir_value ir_value;
struct ir_value {
    ir_value_kind kind;
    int refs;                   /* references held; freed when the last is released */
    ir_tensor *tensor;          /* tensor: its data */
    bool owned;                 /* tensor: a heap tensor freed with the value (else borrowed) */
    int n;                      /* tuple, adt: fields; closure: captured values; ref: 1 */
    ir_value **items;           /* tuple, adt: fields; closure: values of its function's free variables; ref: its value */
    const ir_expr *func;        /* closure: the IR_FUNC it runs (a def's function for @f); NULL for a constructor */
    const ir_ctor *ctor;        /* adt: the constructor that made it; closure: the constructor it applies, or NULL */
};

/* A tensor value; owned: ir_tensor_free the tensor with the value (it must be a
 * heap tensor), else the caller keeps the tensor alive longer than the value. */
ir_value *ir_value_tensor(ir_tensor *t, bool owned);
/* A tuple value that takes over one reference to each field. */
ir_value *ir_value_tuple(int n, ir_value *const *fields);
/* Adds a reference; returns v. */
ir_value *ir_value_retain(ir_value *v);
/* Drops a reference (NULL is fine); the last one frees the value. */
void ir_value_release(ir_value *v);
/* True when v is a value of type t (tensors: dtype and shape). */
bool ir_value_has_type(const ir_value *v, const ir_type *t);

typedef struct ir_interp_opts {
    int max_depth;              /* nesting of evaluation before it is an error (0: 100000) */
} ir_interp_opts;

/* An interpreter for a type-checked module (which must outlive it). */
typedef struct ir_interp ir_interp;
ir_interp *ir_interp_new(const ir_module *m, const ir_interp_opts *opts);
/* Frees the interpreter (NULL is fine). */
void ir_interp_free(ir_interp *ip);
/* Calls global function @name with args (borrowed; their types are checked);
 * on success *out is a new reference to the result. Errors (a bad argument,
 * a kernel's failure such as an index out of range, memory, runaway
 * recursion) are recorded in d at the expression that failed. */
bool ir_interp_call(ir_interp *ip, const char *name, int nargs, ir_value *const *args, ir_value **out,
                    su_diags *d);

/* ---- random.c: seeded parameter values ---------------------------------- */

/* Advances a splitmix64 state and returns its next 64-bit output. */
uint64_t ir_splitmix64(uint64_t *state);
/* Fills t with the seeded stream of parameter `name` (see random.c): floats
 * uniform in [lo, hi), integers lo + x mod (hi - lo), bools with p = 1/2. */
void ir_random_fill(ir_tensor *t, const char *name, uint64_t seed, double lo, double hi);
/* Fills t, the value of parameter `index` of func, with seeded values whose
 * range suits the parameter's first use (He-uniform conv2d/dense weights,
 * positive batch-norm variances, ...; the table is in random.c). */
void ir_random_param(const ir_expr *func, int index, uint64_t seed, ir_tensor *t);

/* ---- printer.c: module → Relay text ------------------------------------- */

typedef struct ir_print_opts {
    bool types;     /* append `/ * ty=... * /` to bindings whose type is known */
} ir_print_opts;

/* Appends the module as canonical Relay text; printing the parse of this
 * text again gives the same text. */
void ir_print_module(su_buf *out, const ir_module *m, const ir_print_opts *opts);
/* Appends one expression (with its bindings) as it would appear in a body. */
void ir_print_expr(su_buf *out, const ir_expr *e, const ir_print_opts *opts);

#endif
