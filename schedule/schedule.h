/* schedule.h — the map of schedule/: tensor compute definitions of ops, the
 * loop-nest IR (LoopIR), the arithmetic simplifier, schedules (stages with
 * their loop structure, changed by primitives recorded as a replayable
 * trace), lowering of a scheduled fused function to LoopIR, config spaces and
 * the schedule templates. Prefix: sch_. Depends on ir/ and support/ only.
 *
 * The pipeline, for one primitive (fused) function:
 *
 *   sch_create(func)        compute definitions: one stage (a tensor defined by
 *                           an expression over reads of other tensors, with
 *                           reduction axes) per op output; injective stages
 *                           that are not outputs are marked inline
 *   sch_apply_template(...) a template (or any caller) applies primitives:
 *                           split, fuse, reorder, annotate, compute_at,
 *                           compute_inline/root, cache_write, pack; each one is
 *                           recorded in the schedule's trace
 *   sch_lower(s)            one LoopIR function: inlined stages substituted,
 *                           attached stages computed inside their consumer's
 *                           loop over the region it reads, indices simplified
 *
 * sch_build (build.c) is the three in one call, with a config value; it is
 * how every part of the project turns a function into a kernel.
 *
 * Ownership: everything a schedule creates (stages, expressions, LoopIR)
 * lives in the schedule's arena and is freed by sch_free. Names of stages,
 * loops and buffers come from op names and counters, never from user text. */
#ifndef RT_SCHEDULE_H
#define RT_SCHEDULE_H

#include "ir/ir.h"

typedef struct sch_var sch_var;
typedef struct sch_expr sch_expr;
typedef struct sch_stmt sch_stmt;
typedef struct sch_buffer sch_buffer;
typedef struct sch_func sch_func;
typedef struct sch_tensor sch_tensor;
typedef struct sch_hw sch_hw;
typedef struct sch_iter sch_iter;
typedef struct sch_schedule sch_schedule;

/* ---- expr.c: LoopIR expressions ---------------------------------------- */

/* A scalar variable: a loop counter, a stage axis or a let binding. Variables
 * compare by identity; the name is a hint for printers (uniqued there). */
struct sch_var {
    uint32_t id;            /* creation order in its arena (stable across runs) */
    const char *name;       /* "k", "ax0", "n.k.f": our own text */
    ir_dtype dtype;         /* IR_INT64 for indices */
};

/* X(ID, text): expression kinds. Binary kinds use a and b. */
#define SCH_EXPR_KINDS(X)                                                          \
    X(INT, "int")           /* integer constant i (dtype: int64, int32, bool...) */ \
    X(FLOAT, "float")       /* floating constant f */                              \
    X(VAR, "var")           /* variable var */                                     \
    X(ADD, "+")                                                                    \
    X(SUB, "-")                                                                    \
    X(MUL, "*")                                                                    \
    X(DIV, "/")             /* integers: floor division; floats: division */      \
    X(MOD, "%")             /* integers: floor modulo (sign of the divisor) */    \
    X(MIN, "min")                                                                  \
    X(MAX, "max")                                                                  \
    X(EQ, "==")             /* comparisons: bool result */                         \
    X(NE, "!=")                                                                    \
    X(LT, "<")                                                                     \
    X(LE, "<=")                                                                    \
    X(GT, ">")                                                                     \
    X(GE, ">=")                                                                    \
    X(AND, "&&")            /* logical, on bools */                                \
    X(OR, "||")                                                                    \
    X(NOT, "!")             /* a only */                                           \
    X(SELECT, "select")     /* a ? b : c, only the chosen side is evaluated */     \
    X(CAST, "cast")         /* a converted to dtype */                             \
    X(CALL, "call")         /* math intrinsic fn over args */                      \
    X(LOAD, "load")         /* buf[a], a flat element index */                     \
    X(READ, "read")         /* tensor[args...]: compute level, before lowering */

typedef enum {
#define X(id, text) SCH_##id,
    SCH_EXPR_KINDS(X)
#undef X
    SCH_EXPR_KIND_COUNT
} sch_expr_kind;

/* X(ID, name): math intrinsics (each language names them: sch_lang.intrinsics). */
#define SCH_INTRINSICS(X)   \
    X(EXP, "exp")           \
    X(LOG, "log")           \
    X(SQRT, "sqrt")         \
    X(TANH, "tanh")         \
    X(ERF, "erf")           \
    X(FABS, "fabs")         \
    X(POW, "pow")           \
    X(FLOOR, "floor")

typedef enum {
#define X(id, name) SCH_FN_##id,
    SCH_INTRINSICS(X)
#undef X
    SCH_FN_COUNT
} sch_intrinsic;

struct sch_expr {
    sch_expr_kind kind;
    ir_dtype dtype;             /* result type */
    int64_t i;                  /* INT value */
    double f;                   /* FLOAT value */
    sch_var *var;               /* VAR */
    const sch_expr *a, *b, *c;  /* operands (SELECT: a cond, b then, c else) */
    sch_intrinsic fn;           /* CALL */
    sch_buffer *buf;            /* LOAD */
    sch_tensor *tensor;         /* READ */
    int n;                      /* READ indices / CALL arguments */
    const sch_expr *const *args;
};

/* Name of an expression kind ("+", "select"). */
const char *sch_expr_kind_name(sch_expr_kind k);
/* Name of an intrinsic ("exp"). */
const char *sch_intrinsic_name(sch_intrinsic fn);
/* A new variable (its id from a counter kept with the arena's owner). */
sch_var *sch_var_new(su_arena *a, uint32_t *counter, const char *name, ir_dtype dt);

/* Builders. They fold constant operands and the identities x+0, x*1, x*0
 * (integers only), so that compute definitions read naturally. */
const sch_expr *sch_int(su_arena *a, int64_t v);                       /* int64 */
const sch_expr *sch_const_int(su_arena *a, ir_dtype dt, int64_t v);    /* any int/bool dtype */
const sch_expr *sch_float(su_arena *a, ir_dtype dt, double v);
const sch_expr *sch_const(su_arena *a, ir_dtype dt, double v);         /* INT or FLOAT by dtype */
const sch_expr *sch_varref(su_arena *a, sch_var *v);
const sch_expr *sch_bin(su_arena *a, sch_expr_kind k, const sch_expr *x, const sch_expr *y);
const sch_expr *sch_not(su_arena *a, const sch_expr *x);
const sch_expr *sch_select(su_arena *a, const sch_expr *c, const sch_expr *t, const sch_expr *f);
const sch_expr *sch_cast(su_arena *a, ir_dtype dt, const sch_expr *x);
const sch_expr *sch_call(su_arena *a, sch_intrinsic fn, ir_dtype dt, int n, const sch_expr *const *args);
const sch_expr *sch_call1(su_arena *a, sch_intrinsic fn, const sch_expr *x);
const sch_expr *sch_load(su_arena *a, sch_buffer *b, const sch_expr *index);
const sch_expr *sch_read(su_arena *a, sch_tensor *t, int n, const sch_expr *const *idx);
#define sch_add(a, x, y) sch_bin(a, SCH_ADD, x, y)
#define sch_sub(a, x, y) sch_bin(a, SCH_SUB, x, y)
#define sch_mul(a, x, y) sch_bin(a, SCH_MUL, x, y)
#define sch_div(a, x, y) sch_bin(a, SCH_DIV, x, y)
#define sch_mod(a, x, y) sch_bin(a, SCH_MOD, x, y)
#define sch_min(a, x, y) sch_bin(a, SCH_MIN, x, y)
#define sch_max(a, x, y) sch_bin(a, SCH_MAX, x, y)
/* x && y where either may be NULL (meaning true). */
const sch_expr *sch_and(su_arena *a, const sch_expr *x, const sch_expr *y);

/* True for integer and bool constants of value v. */
bool sch_is_int(const sch_expr *e, int64_t v);
/* True when the expression kind is a binary operator. */
bool sch_is_binary(sch_expr_kind k);
/* Structural equality (variables and buffers by identity). */
bool sch_expr_equal(const sch_expr *x, const sch_expr *y);
/* Number of nodes (shared nodes counted at each use). */
size_t sch_expr_size(const sch_expr *e);
/* True when e mentions variable v. */
bool sch_expr_uses(const sch_expr *e, const sch_var *v);
/* True when pred(ctx, n) holds for a node n of e (e itself included; NULL e: false). */
bool sch_expr_any(const sch_expr *e, bool (*pred)(const void *ctx, const sch_expr *n), const void *ctx);
/* e with vars[i] replaced by vals[i] (shares unchanged subtrees). */
const sch_expr *sch_substitute(su_arena *a, const sch_expr *e, int n, sch_var *const *vars,
                               const sch_expr *const *vals);
/* Rebuilds e bottom-up, replacing each READ by fn(ctx, read) (the read's
 * indices already rewritten); NULL from fn keeps the read. */
typedef const sch_expr *(*sch_read_fn)(void *ctx, const sch_expr *read);
const sch_expr *sch_map_reads(su_arena *a, const sch_expr *e, sch_read_fn fn, void *ctx);

/* ---- stmt.c: LoopIR statements, buffers and functions ------------------ */

/* X(ID, name): loop kinds. */
#define SCH_LOOP_KINDS(X)                                                  \
    X(SERIAL, "serial")                                                    \
    X(PARALLEL, "parallel")     /* iterations spread over threads */       \
    X(VECTORIZED, "vectorized") /* iterations as SIMD lanes */             \
    X(UNROLLED, "unrolled")     /* body repeated extent times */           \
    X(THREAD, "thread")         /* bound to a work-item axis (OpenCL) */    \
    X(ROLLED, "rolled")         /* kept a loop: the compiler may not unroll it */

typedef enum {
#define X(id, name) SCH_LOOP_##id,
    SCH_LOOP_KINDS(X)
#undef X
    SCH_LOOP_KIND_COUNT
} sch_loop_kind;

/* Where a buffer lives. */
typedef enum {
    SCH_SCOPE_INPUT,    /* a kernel argument read by the kernel */
    SCH_SCOPE_OUTPUT,   /* a kernel argument the kernel writes */
    SCH_SCOPE_GLOBAL,   /* a temporary of the whole kernel (heap) */
    SCH_SCOPE_LOCAL,    /* a temporary of one loop iteration (registers / stack) */
    SCH_SCOPE_SHARED,   /* shared by the work-items of a work-group (OpenCL __local):
                           allocated once at the top of the kernel; only device
                           schedules make it (a work-group reduction) */
    SCH_SCOPE_COUNT
} sch_scope;

struct sch_buffer {
    const char *name;       /* "p0", "o0", "t1", "l2": our own counters */
    ir_dtype dtype;
    int ndim;
    const int64_t *shape;   /* logical shape, for printing; accesses are flat */
    int64_t size;           /* elements */
    sch_scope scope;
};

/* X(ID, name): statement kinds. */
#define SCH_STMT_KINDS(X)                                                   \
    X(FOR, "for")       /* for var in [0, extent) of kind loop: body */     \
    X(STORE, "store")   /* buf[index] = value */                            \
    X(IF, "if")         /* if (cond) then_s else else_s (may be NULL) */    \
    X(LET, "let")       /* let var = value in body */                       \
    X(ALLOC, "alloc")   /* buf allocated around body */                     \
    X(SEQ, "seq")       /* items in order */                               \
    X(BARRIER, "barrier") /* every work-item of the work-group waits here until all have
                             arrived, and sees their writes to SHARED buffers; only
                             device schedules make it, never inside a bound loop */

typedef enum {
#define X(id, name) SCH_S_##id,
    SCH_STMT_KINDS(X)
#undef X
} sch_stmt_kind;

struct sch_stmt {
    sch_stmt_kind kind;
    sch_var *var;               /* FOR, LET */
    int64_t extent;             /* FOR */
    sch_loop_kind loop;         /* FOR */
    int thread_axis;            /* FOR of kind THREAD: which work-item axis */
    const sch_stmt *body;       /* FOR, LET, ALLOC */
    sch_buffer *buf;            /* STORE, ALLOC */
    const sch_expr *index;      /* STORE */
    const sch_expr *value;      /* STORE, LET */
    const sch_expr *cond;       /* IF */
    const sch_stmt *then_s, *else_s;    /* IF */
    int n;                      /* SEQ */
    const sch_stmt *const *items;       /* SEQ */
};

/* A LoopIR function: buffers in, buffers out, one body. */
struct sch_func {
    const char *name;           /* "kernel", "pack_p1": our own text */
    int nargs;
    sch_buffer *const *args;    /* scope INPUT or OUTPUT */
    const sch_stmt *body;
};

const char *sch_loop_kind_name(sch_loop_kind k);
/* A buffer of the given shape (copied). */
sch_buffer *sch_buffer_new(su_arena *a, const char *name, ir_dtype dt, int ndim, const int64_t *shape,
                           sch_scope scope);
const sch_stmt *sch_for(su_arena *a, sch_var *v, int64_t extent, sch_loop_kind k, const sch_stmt *body);
const sch_stmt *sch_store(su_arena *a, sch_buffer *b, const sch_expr *index, const sch_expr *value);
const sch_stmt *sch_if(su_arena *a, const sch_expr *cond, const sch_stmt *then_s, const sch_stmt *else_s);
const sch_stmt *sch_let(su_arena *a, sch_var *v, const sch_expr *value, const sch_stmt *body);
const sch_stmt *sch_alloc(su_arena *a, sch_buffer *b, const sch_stmt *body);
/* A sequence of n statements; NULL items are dropped, one item is returned
 * as is, nested sequences are flattened; NULL when nothing is left. */
const sch_stmt *sch_seq(su_arena *a, int n, const sch_stmt *const *items);
const sch_stmt *sch_seq2(su_arena *a, const sch_stmt *x, const sch_stmt *y);
/* A work-group barrier (SCH_S_BARRIER). */
const sch_stmt *sch_barrier(su_arena *a);
/* Calls fn on every expression of s (not recursing into expressions). */
void sch_stmt_visit_exprs(const sch_stmt *s, void (*fn)(void *ctx, const sch_expr *e), void *ctx);
/* Whether an expression of s loads from buffer b. */
bool sch_stmt_reads(const sch_stmt *s, const sch_buffer *b);
/* Whether pred holds at some statement of s: s itself or any statement inside it. */
bool sch_stmt_any(const sch_stmt *s, bool (*pred)(const void *ctx, const sch_stmt *n), const void *ctx);
/* The hooks of sch_stmt_map: an expression's or a statement's replacement
 * (never called on NULL). */
typedef const sch_expr *(*sch_expr_map_fn)(void *ctx, const sch_expr *e);
typedef const sch_stmt *(*sch_stmt_map_fn)(void *ctx, const sch_stmt *s);
/* s with each of its own expressions replaced by fe(ctx, e) and each of its
 * child statements by fs(ctx, child) (a NULL hook keeps them): s itself when
 * nothing changed, else rebuilt by the constructors above (a child that
 * became NULL is dropped); one level, a walk's fs recurses by calling it. */
const sch_stmt *sch_stmt_map(su_arena *a, const sch_stmt *s, sch_expr_map_fn fe, sch_stmt_map_fn fs, void *ctx);
/* s with vars[i] replaced by vals[i] in every expression. */
const sch_stmt *sch_stmt_substitute(su_arena *a, const sch_stmt *s, int n, sch_var *const *vars,
                                    const sch_expr *const *vals);

/* ---- emit.c: the LoopIR walk that every language shares ---------------- */

/* The walk prints LoopIR through a language record (sch_lang): every piece of
 * text comes from the record's forms, the walk only decides which form a
 * node takes, the operands' precedence contexts, names, indentation and the
 * bounds of loop counters. A form is a pattern in which `$` marks a slot:
 *
 *   $0 $1 $2  operands (expressions: a, b, c; statements: see each form)
 *   $*        a call's or a read's arguments, joined by ", "
 *   $t        the type of the node (an expression's result, a buffer's
 *             elements, a let's variable, a reduction's accumulator)
 *   $b        a buffer's (or a read tensor's) name     $v  a variable's name
 *   $n        a loop's extent as an int64 literal      $N  the same, decimal
 *   $a        a thread loop's work-item axis           $F  an intrinsic's name
 *   $r        a reduction's accumulator                $o  its operator's name
 *   $s        a buffer's shape ("8, 32")   $e  its elements   $z  its bytes
 *   $f        the entry point's name       $h  the LoopIR function's name
 *   $i        an argument's position       $A  the parameter list
 *   $W        the entry's argument list    $p  a loop's mark (sch_lang.mark)
 *   $$        a dollar sign
 *
 * Statement forms are lists of lines (sch_lang_line), each printed at the
 * current depth plus its own; a line that is exactly "$B" is the nested
 * statement (a loop's or a let's body, an if's then), "$O" an if's else,
 * "$U" a reduction's update (sch_lang_reduction.update), "$P" one line per
 * parameter (sch_lang.param_line), "$p" the loop's mark on a line of its own
 * (no line where the mark is NULL). A slot without a value in the node at
 * hand, or a form the node needs and the table lacks, is a bug of the table
 * and panics. */

/* One line of a statement form; a list ends with text NULL. */
typedef struct sch_lang_line {
    int depth;              /* levels below the statement's own */
    const char *text;       /* pattern */
} sch_lang_line;

/* How one expression kind prints. Operands print in context `prec`; an
 * infix form puts itself in parentheses where its context binds tighter (or
 * as tight, on the right), so the walk never adds parentheses elsewhere. */
typedef struct sch_lang_op {
    const char *form;       /* pattern over $0 $1 $2 $* $t $b $F; NULL: the kind cannot be printed */
    int prec;               /* binding strength (higher binds tighter); operands' context */
    bool infix;             /* `$0 op $1`: parenthesized by precedence */
} sch_lang_op;
/* An infix operator's form: SCH_INFIX("+", 5). */
#define SCH_INFIX(op, prec) {"$0 " op " $1", prec, true}
/* The infix operators as C spells them (so do OpenCL C and LoopIR text), for
 * sch_lang.ops: || binds loosest (1), && next (2), then == and != (eq), the
 * orderings (rel), + and - (add), and *, / and % (mul). */
#define SCH_INFIX_OPS(eq, rel, add, mul)                                                                  \
    [SCH_OR] = SCH_INFIX("||", 1), [SCH_AND] = SCH_INFIX("&&", 2), [SCH_EQ] = SCH_INFIX("==", eq),       \
    [SCH_NE] = SCH_INFIX("!=", eq), [SCH_LT] = SCH_INFIX("<", rel), [SCH_LE] = SCH_INFIX("<=", rel),     \
    [SCH_GT] = SCH_INFIX(">", rel), [SCH_GE] = SCH_INFIX(">=", rel), [SCH_ADD] = SCH_INFIX("+", add),    \
    [SCH_SUB] = SCH_INFIX("-", add), [SCH_MUL] = SCH_INFIX("*", mul), [SCH_DIV] = SCH_INFIX("/", mul),   \
    [SCH_MOD] = SCH_INFIX("%", mul)

/* What a loop is, as the walk classifies it: the language gives each a mark
 * (an annotation line above the loop, or words before it). */
typedef enum {
    SCH_MARK_SERIAL,
    SCH_MARK_PARALLEL,          /* the outermost parallel loop of a nest */
    SCH_MARK_PARALLEL_NESTED,   /* a parallel loop inside another one */
    SCH_MARK_VECTORIZED,        /* a vectorized loop with independent iterations */
    SCH_MARK_VECTORIZED_CARRIED,/* one whose iterations store to one element (a
                                   reduction the language has no reduction form for) */
    SCH_MARK_UNROLLED,
    SCH_MARK_THREAD,            /* bound to work-item axis $a */
    SCH_MARK_ROLLED,            /* a serial loop the compiler may not unroll */
    SCH_MARK_COUNT
} sch_loop_mark;

/* A vectorized loop whose body is `b[i] = b[i] OP e` (OP +, max or min; i
 * and b fixed over the loop): lanes accumulate apart in a local ($r), and
 * the loop names the combining operator ($o). Lines: $0 is the store's
 * index; the update: $1 is e. */
typedef struct sch_lang_reduction {
    const sch_lang_line *lines;     /* NULL: such loops print as other loops */
    const char *update[3];          /* the update of $r by $1: for +, max, min */
    const char *op[3];              /* $o for +, max, min */
} sch_lang_reduction;

/* A dtype whose values are computed in a wider type (C: float16 values are
 * floats): the elements of kernel arguments (buffers of scope input or
 * output) are held in the narrow storage type, every load from them widens,
 * every store into them rounds, and temporaries hold values. */
typedef struct sch_lang_storage {
    const char *type;               /* $t of an argument's elements; NULL: the dtype is not stored apart */
    int value_bytes;                /* bytes of one value of types[dtype], which temporaries hold */
    sch_lang_op load;               /* a LOAD from an argument: $b[$0] widened to types[dtype] */
    sch_lang_op cast;               /* a CAST to the dtype: $0 rounded to the storage type, as a value */
    const sch_lang_line *store;     /* a STORE into an argument: $1 rounded into $b[$0] (NULL: the store form) */
} sch_lang_storage;

/* Vector types (OpenCL C's float4, float8...): a vectorized loop of N
 * iterations (N one of 2, 3, 4, 8, 16 and at most max) whose body is one
 * store of float32 lanes, contiguous in the loop's counter, prints as one
 * vector statement instead of a loop. In the value, loads contiguous in the
 * counter take `load`, operands that do not use it `broadcast`, and the
 * operators +, -, *, /, min, max and math calls their ops[] forms with $t
 * the vector type (types[dtype] followed by N). Every other loop (a strided
 * or carried access, a cast, a comparison) prints as a loop. */
typedef struct sch_lang_vector {
    int max;                        /* widest vector (0: vectorized loops print as loops) */
    sch_lang_op load;               /* $b, $0 lane 0's index, $N */
    sch_lang_op broadcast;          /* $0 a scalar, $t the vector type */
    const sch_lang_line *store;     /* $b, $0 lane 0's index, $1 the vector value, $N */
} sch_lang_vector;

/* A language: C + OpenMP (targets/), LoopIR text (print.c). */
typedef struct sch_lang {
    const char *name;               /* "C", for messages */
    const char *indent;             /* one level of indentation */
    const char *const *types;       /* $t by dtype (IR_DTYPE_COUNT entries); NULL: Relay's names */
    const sch_lang_storage *storage;/* by dtype (IR_DTYPE_COUNT entries); NULL: every dtype is its own value type */
    /* literals: an INT (of dtype: a cast where the language needs one) and a FLOAT */
    void (*int_lit)(su_buf *b, ir_dtype dt, int64_t v);
    void (*float_lit)(su_buf *b, ir_dtype dt, double v);
    sch_lang_op ops[SCH_EXPR_KIND_COUNT];   /* by kind; INT, FLOAT and VAR are not used */
    /* Infix forms of precedence up to mixed_prec (comparisons, logic) are
     * parenthesized inside one another unless of the same level (0: never). */
    int mixed_prec;
    /* Integer DIV and MOD are floor operations: ops[] prints them where the
     * divisor is a positive constant and the numerator provably
     * non-negative, floor_div / floor_mod elsewhere (form NULL: ops[]). */
    sch_lang_op floor_div, floor_mod;
    sch_lang_op float_mod[2];               /* MOD of float32 (and narrower), of float64 (NULL: ops[]) */
    const char *intrinsics[SCH_FN_COUNT][2];/* $F of a call: [1] float64, [0] other types; NULL: its name */
    /* names of variables: "<prefix><counter>" for loops (and variables no
     * loop or let binds) and lets; NULL: the variable's hint, with _N where
     * two variables of one function share a hint */
    const char *loop_var, *let_var;
    const char *acc_var;                    /* $r: "<prefix><counter>" */
    /* statements */
    const sch_lang_line *store;             /* $b[$0] = $1 */
    const sch_lang_line *if_then;           /* $0 the condition; $B */
    const sch_lang_line *if_else;           /* $0; $B, $O */
    const sch_lang_line *let;               /* $v = $0; $B */
    const sch_lang_line *loop;              /* $v, $n; $p; $B */
    const char *mark[SCH_MARK_COUNT];       /* $p by what the loop is (NULL: none) */
    /* a form of its own for loops of a mark (NULL: loop), such as a thread
     * loop that is a work-item index in OpenCL C */
    const sch_lang_line *loops[SCH_MARK_COUNT];
    sch_lang_reduction reduction;
    sch_lang_vector vector;                 /* vectorized loops as vector types */
    const sch_lang_line *alloc[SCH_SCOPE_COUNT]; /* by buffer scope: $b $t $s $e $z; $B (SHARED:
                                               NULL in languages without work-groups) */
    const sch_lang_line *barrier;           /* a work-group barrier (NULL: the language has none) */
    const sch_lang_line *alloc_small;       /* a LOCAL buffer of at most small_bytes (NULL: alloc[]) */
    int64_t small_bytes;
    /* functions */
    const sch_lang_line *func;              /* $f $h $A $W; $P, $B */
    const char *param[4];                   /* one of $A by scope: $b $t $s $i */
    const char *no_params;                  /* $A of a function without parameters */
    const char *param_line[4];              /* $P's line by scope (NULL: none) */
    const char *entry_arg[4];               /* one of $W by scope */
    const char *prelude;                    /* what a unit of this language starts with, once */
} sch_lang;

/* Appends e (names of variables: their hints as they are). */
void sch_emit_expr(su_buf *b, const sch_lang *l, const sch_expr *e);
/* Appends s at `depth` levels of indentation (names uniqued in s). */
void sch_emit_stmt(su_buf *b, const sch_lang *l, const sch_stmt *s, int depth);
/* Appends function f with the language's func form; entry is $f (NULL: f's name). */
void sch_emit_func(su_buf *b, const sch_lang *l, const sch_func *f, const char *entry);

/* ---- print.c: LoopIR as text ------------------------------------------- */

/* Appends an expression ("p0[((i * 32) + j)]"). Names of variables come from
 * their hints, uniqued per printer run. */
void sch_print_expr(su_buf *b, const sch_expr *e);
/* Appends a statement, indented by `indent` levels of two spaces. */
void sch_print_stmt(su_buf *b, const sch_stmt *s, int indent);
/* Appends a whole function. */
void sch_print_func(su_buf *b, const sch_func *f);

/* ---- simplify.c: arithmetic simplification ----------------------------- */

/* Known ranges of variables (inclusive), e.g. loop counters [0, extent-1]. */
typedef struct sch_range { const sch_var *var; int64_t lo, hi; } sch_range;
typedef struct sch_bounds_ctx { SU_VEC(sch_range) r; } sch_bounds_ctx;

void sch_bounds_push(sch_bounds_ctx *c, const sch_var *v, int64_t lo, int64_t hi);
/* Pushes v's range as the bounds of the integer expression value (a let's),
 * where they are known; whether it pushed (the caller pops only then). */
bool sch_bounds_push_value(sch_bounds_ctx *c, const sch_var *v, const sch_expr *value);
void sch_bounds_pop(sch_bounds_ctx *c);
void sch_bounds_free(sch_bounds_ctx *c);
/* Inclusive bounds of an integer expression; false when unbounded (then
 * *lo, *hi are INT64_MIN / INT64_MAX where unknown). */
bool sch_bounds(const sch_bounds_ctx *c, const sch_expr *e, int64_t *lo, int64_t *hi);
/* Simplifies an expression: folds constants, puts sums of products into a
 * canonical linear form (like terms merged, (x/c)*c + x%c = x), divides and
 * takes remainders of linear forms by constants, decides comparisons,
 * min/max and selects from the variables' bounds. */
const sch_expr *sch_simplify(su_arena *a, const sch_bounds_ctx *c, const sch_expr *e);
/* Simplifies a statement: loop counters get their bounds, loops of extent 1
 * disappear, guards that are always true (or false) are removed. */
const sch_stmt *sch_simplify_stmt(su_arena *a, sch_bounds_ctx *c, const sch_stmt *s);

/* ---- compute.c: stages and compute definitions of ops ------------------ */

/* How a stage combines the values of its reduction. */
typedef enum { SCH_RED_NONE, SCH_RED_SUM, SCH_RED_MAX, SCH_RED_MIN, SCH_RED_PROD } sch_reduce;

/* Where a stage is computed. */
typedef enum {
    SCH_ATTACH_ROOT,    /* its own loop nest at the top of the kernel (a full buffer) */
    SCH_ATTACH_INLINE,  /* substituted into every reader */
    SCH_ATTACH_AT,      /* inside a loop of another stage, over the region that loop reads */
} sch_attach;

/* A split or fuse of a stage's iteration variables. */
typedef struct sch_rel {
    bool fuse;              /* false: split parent into outer, inner by factor */
    sch_iter *parent;       /* split: the split iter; fuse: the fused result */
    sch_iter *outer, *inner;
    int64_t factor;         /* split: the inner extent */
} sch_rel;

/* An iteration variable of a stage: a root axis (spatial or reduction) or
 * one made by split/fuse. Leaves are the stage's loops, outermost first. */
struct sch_iter {
    const char *name;       /* "k", "k.o", "n.k.f" */
    sch_var *var;           /* the root axis' variable (root iters only) */
    int64_t extent;         /* over the full (root) domain */
    bool reduce;            /* a reduction iteration */
    sch_loop_kind kind;     /* annotation */
    int thread_axis;        /* kind THREAD: the work-item axis (see sch_bind) */
    bool leaf;              /* still a loop (not split or fused away) */
    int root_dim;           /* root iters: axis index (reduction axes follow the spatial ones) */
};

typedef enum { SCH_TENSOR_PARAM, SCH_TENSOR_COMPUTE } sch_tensor_kind;

struct sch_tensor {
    sch_tensor_kind kind;
    const char *name;       /* "p0" for parameters, "conv2d0" for stages */
    int id;                 /* index in the schedule's tensor list */
    ir_dtype dtype;
    int ndim;
    const int64_t *shape;
    /* PARAM */
    int param;              /* parameter position in the function */
    /* COMPUTE */
    const char *op;         /* the op that defined it ("nn.conv2d"), or "copy"/"pack"/"const" */
    const ir_expr *call;    /* the call that defined it (attributes for templates), or NULL */
    sch_var **axes;         /* ndim spatial axes */
    int nraxes;             /* reduction axes */
    sch_var **raxes;
    int64_t *rext;
    sch_reduce reduce;      /* how the body's values combine over the reduction */
    const sch_expr *body;   /* the value (READs of other tensors) */
    bool injective;         /* no reduction and only reads (inlinable) */
    int output;             /* output position, or -1 */
    const sch_tensor *pack_of;  /* pack stages: the parameter they repack */
    /* schedule state */
    sch_attach attach;
    sch_tensor *attach_to;  /* SCH_ATTACH_AT: the consumer */
    sch_iter *attach_iter;  /* SCH_ATTACH_AT: the consumer's loop */
    SU_VEC(sch_iter *) iters;   /* every iter ever made (roots first) */
    SU_VEC(sch_iter *) leaves;  /* current loops, outermost first */
    SU_VEC(sch_rel) rels;       /* splits and fuses in order */
    /* lowering state (valid during sch_lower) */
    struct sch_lowering *lw;
    bool shared;            /* a cache_read stage in SHARED memory (cache_read.c): lowering
                               copies its region cooperatively, between barriers */
};

/* Context of one op's compute definition. */
typedef struct sch_cctx {
    sch_schedule *s;
    su_arena *a;
    const ir_expr *call;    /* the call being defined; attributes by ir_call_attr */
    su_diags *d;
    const char *tag;        /* name of the next stage ("pad", "rowmax"); NULL: the op's */
    bool canonical;         /* inside sch_compute_in_layouts: the data is NCHW/OIHW whatever
                               the layout attributes say */
} sch_cctx;
/* Defines the outputs of one call from its inputs (tuple arguments arrive
 * flattened); false after reporting through sch_cctx_error. */
typedef bool (*sch_compute_fn)(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);

/* A new tensor (parameter or stage) appended to the schedule's list. */
sch_tensor *sch_tensor_add(sch_schedule *s, sch_tensor_kind kind, const char *name, ir_dtype dt, int ndim,
                           const int64_t *shape);
/* A new iter of stage t (appended to t's iters, not to its leaves). */
sch_iter *sch_iter_new(sch_schedule *s, sch_tensor *t, const char *name, sch_var *var, int64_t extent,
                       bool reduce, int root_dim);
/* The compute definition of an op, or NULL. */
sch_compute_fn sch_compute_of(ir_op_id op);
/* A new stage of the given shape; its axes are named names[i] (NULL: ax0...). */
sch_tensor *sch_stage_new(sch_cctx *cx, ir_dtype dt, int ndim, const int64_t *shape, const char *const *names);
/* Adds a reduction axis of extent n to stage t; returns its variable. */
sch_var *sch_stage_raxis(sch_cctx *cx, sch_tensor *t, const char *name, int64_t n);
/* Reports an error at the call being defined; returns false. */
bool sch_cctx_error(sch_cctx *cx, const char *fmt, ...) SU_PRINTF(2, 3);
/* The read of tensor t at the numpy-broadcast position of an output of rank
 * n indexed by idx (t's axes align right; extents of 1 read index 0). */
const sch_expr *sch_read_bcast(su_arena *a, sch_tensor *t, int n, const sch_expr *const *idx);
/* The read of t at the stage's own axes (same shape). */
const sch_expr *sch_read_axes(su_arena *a, sch_tensor *t, sch_tensor *stage);
/* Attributes of the call by name: an integer, a float, a bool, a string,
 * an integer list (copied into out[max]; the count, -1 when not integers). */
int64_t sch_attr_int(const sch_cctx *cx, const char *name);
double sch_attr_float(const sch_cctx *cx, const char *name);
bool sch_attr_bool(const sch_cctx *cx, const char *name);
const char *sch_attr_str(const sch_cctx *cx, const char *name);
int sch_attr_ints(const sch_cctx *cx, const char *name, int64_t *out, int max);
bool sch_attr_is_none(const sch_cctx *cx, const char *name);
/* The call's result type (a tensor), or field i of a tuple result. */
const ir_type *sch_out_type(const sch_cctx *cx, int i);
/* A stage shaped like the call's result (field i). */
sch_tensor *sch_stage_like(sch_cctx *cx, int i, const char *const *names);
/* The lowest / highest value of dt (-inf / inf for floats). */
const sch_expr *sch_lowest(su_arena *a, ir_dtype dt);
const sch_expr *sch_highest(su_arena *a, ir_dtype dt);

/* compute_nn.c, compute_tensor.c, compute_transform.c, compute_reduce.c:
 * one function per op family, named in the table of compute.c. */
bool sch_compute_conv2d(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_conv1d(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_conv3d(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_pool3d(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_conv_transpose(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
/* compute_nchwc.c: nn.contrib_conv2d_NCHWc, blocks innermost (the axis schedules vectorize). */
bool sch_compute_conv2d_nchwc(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
/* compute_winograd.c: the Winograd conv as pad, input transform, batched GEMM, output transform. */
bool sch_compute_conv2d_winograd(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
/* compute_layout.c: the context of a wrapped definition: the same call and
 * attributes with its result typed `result`, layouts read as canonical. */
sch_cctx sch_cctx_canonical(const sch_cctx *cx, const ir_type *result);
/* The block b when the call's layout attribute `name` is NCHW[b]c (and
 * out_name "" or the same), outside a canonical wrapper; else 0. */
int64_t sch_layout_block(const sch_cctx *cx, const char *name, const char *out_name);
/* A pool on blocked data: fn (its plain definition) on an unblocking stage,
 * the result blocked again by a reading stage (both injective: inlined). */
bool sch_compute_blocked(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout, int64_t b,
                         sch_compute_fn fn);
bool sch_compute_dense(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_batch_matmul(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_pool2d(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_global_pool2d(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_adaptive_pool2d(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_softmax(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_layer_norm(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_batch_norm(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_dropout(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_bias_add(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_pad(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_unary(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_binary(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_where(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_reshape(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_transpose(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
/* compute_layout.c: layout_transform, stack. */
bool sch_compute_layout_transform(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_stack(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
/* True when layout attribute `name` (or, when it is "", attribute dflt) is a
 * permutation of canon other than canon itself; pos gets its positions. */
bool sch_layout_permuted(const sch_cctx *cx, const char *name, const char *dflt, const char *canon, int pos[4]);
/* Defines a call whose rank-4 inputs and result are in other orders of the
 * canonical letters with fn, a definition for the canonical layouts: input i
 * (in_pos[i] non-NULL) is read through a transposing stage, fn runs on a
 * canonical view of the call, and a last stage transposes its result. */
bool sch_compute_in_layouts(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout,
                            const int *const *in_pos, const int *out_pos, sch_compute_fn fn);
/* compute_image.c: nn.upsampling, image.resize2d. */
bool sch_compute_resize(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
/* compute_init.c: zeros_like, ones_like, full, shape_of. */
bool sch_compute_init(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_concatenate(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_split(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_strided_slice(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_take(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_reduce(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);
bool sch_compute_argmax(sch_cctx *cx, sch_tensor *const *in, int nin, sch_tensor **out, int *nout);

/* ---- stage.c: schedules ------------------------------------------------- */

/* X(ID, name): typed schedule errors (what a tuner counts as an invalid config). */
#define SCH_ERRORS(X)                                                             \
    X(OK, "ok")                                                                   \
    X(UNSUPPORTED, "unsupported")       /* an op or dtype lowering cannot handle */ \
    X(NO_STAGE, "no such stage")                                                  \
    X(NO_ITER, "no such loop")                                                    \
    X(BAD_FACTOR, "bad factor")         /* split factor out of range */          \
    X(NOT_ADJACENT, "loops not adjacent") /* fuse of loops that are not neighbours */ \
    X(MIXED_REDUCE, "spatial and reduction loops mixed")                          \
    X(BAD_ANNOTATION, "bad annotation") /* e.g. vectorizing a reduction loop */   \
    X(BAD_ATTACH, "bad compute location")                                         \
    X(BAD_CONFIG, "bad config")         /* a config that is not in the space */  \
    X(BAD_TRACE, "bad trace")           /* a trace that does not replay */

typedef enum {
#define X(id, name) SCH_E_##id,
    SCH_ERRORS(X)
#undef X
} sch_err;

struct sch_schedule {
    su_arena arena;         /* owns every stage, expression and LoopIR node */
    const ir_expr *func;    /* the primitive function */
    uint32_t next_var;      /* variable id counter */
    int next_stage;         /* stage name counter */
    SU_VEC(sch_tensor *) tensors;   /* parameters, then stages in topological order */
    int nparams;
    int noutputs;
    sch_tensor **outputs;   /* the function's results in order */
    SU_VEC(struct sch_step) trace;  /* primitives applied, in order */
    sch_err err;            /* last error of a primitive */
    char *err_msg;          /* its message (malloc'd), naming the loops involved */
    bool dw_direct;         /* depthwise convs in the direct form, never the flat one: a device
                               that is no cpu or stages (sch_create_for), where conv2d_cl.c tiles
                               them on 2-D work-groups and stages their patches */
};

const char *sch_err_name(sch_err e);
/* Builds the stages of a primitive function (Primitive=1, typed). Injective
 * stages that are not outputs start inline, the others at the root. NULL
 * after reporting in d when an op or type is not supported. */
sch_schedule *sch_create(const ir_expr *func, su_diags *d);
/* sch_create in the forms of machine hw (NULL: a CPU's): on a device that
 * is no cpu or stages (sch_hw.wg_reduce or local_stage 2) every depthwise
 * conv direct (docs/opencl.md, "Grouped and depthwise convs"). */
sch_schedule *sch_create_for(const ir_expr *func, const sch_hw *hw, su_diags *d);
/* The parameter tensor that expression e of s's function is: a tensor
 * parameter, or a field of a tuple parameter read by projection (`%p0.1`:
 * the tuple's fields are parameter tensors of their own, in order); NULL
 * for anything else. Templates find weights by it. */
sch_tensor *sch_param_tensor(const sch_schedule *s, const ir_expr *e);
/* The number of parameter tensors (kernel parameters) of a primitive
 * function: a tuple parameter's fields count one each. */
int sch_param_count(const ir_expr *func);
void sch_free(sch_schedule *s);
/* Stage or parameter by name, or NULL. */
sch_tensor *sch_find_tensor(const sch_schedule *s, const char *name);
/* An iter of a stage by name (leaf or not), or NULL. */
sch_iter *sch_find_iter(const sch_tensor *t, const char *name);
/* Records err with a message; returns err (helper for primitives). */
sch_err sch_fail(sch_schedule *s, sch_err err, const char *fmt, ...) SU_PRINTF(3, 4);
/* Position of a leaf in t's loop order, or -1. */
int sch_leaf_pos(const sch_tensor *t, const sch_iter *it);
/* The stage that anchors the function (conv2d, dense, ...): the first
 * reduction stage, or NULL. */
sch_tensor *sch_anchor(const sch_schedule *s);
/* True when stage r reads tensor t (after inlining). */
bool sch_reads(const sch_schedule *s, const sch_tensor *r, const sch_tensor *t);
/* A stage's body with inlined stages substituted (arena). */
const sch_expr *sch_inlined_body(sch_schedule *s, const sch_tensor *t);

/* ---- loop_transform.c: split, fuse, reorder ----------------------------- */

/* Splits leaf it into outer (extent ceil(n/factor)) and inner (factor). */
sch_err sch_split(sch_schedule *s, sch_tensor *t, sch_iter *it, int64_t factor, sch_iter **outer, sch_iter **inner);
/* Fuses two adjacent leaves (outer directly around inner) into one. */
sch_err sch_fuse(sch_schedule *s, sch_tensor *t, sch_iter *outer, sch_iter *inner, sch_iter **fused);
/* Reorders leaves: the n listed leaves take, in the given order, the
 * positions they occupied; the others stay where they are. */
sch_err sch_reorder(sch_schedule *s, sch_tensor *t, int n, sch_iter *const *order);

/* ---- annotate.c: vectorize, parallel, unroll, bind ---------------------- */

/* Sets a leaf's loop kind (checked: vectorize and unroll need a constant,
 * small extent; parallel and vectorize need a spatial loop). */
sch_err sch_annotate(sch_schedule *s, sch_tensor *t, sch_iter *it, sch_loop_kind k);
/* Binds a spatial leaf to work-item axis `axis` (0..2: work-group x, y, z;
 * 3..5: local x, y, z), for targets with thread grids (OpenCL); the C
 * target runs such loops serially. A reduction leaf may be bound to a local
 * axis (3..5): the work-items of a group share its iterations and lowering
 * combines their partial results in a tree in SHARED memory with barriers
 * (a work-group reduction, lower.c). */
sch_err sch_bind(sch_schedule *s, sch_tensor *t, sch_iter *it, int axis);

/* ---- compute_at.c: compute locations ------------------------------------ */

/* Computes stage t inside loop `it` of its reader `consumer`, over the
 * region of t that one iteration of that loop reads. Other readers of t
 * must be computed at the same loop (a row statistic read by the next one
 * and by the output); the region then covers their reads too. */
sch_err sch_compute_at(sch_schedule *s, sch_tensor *t, sch_tensor *consumer, sch_iter *it);
/* Substitutes t into its readers (injective stages only, not outputs). */
sch_err sch_compute_inline(sch_schedule *s, sch_tensor *t);
/* Computes t in its own loop nest at the top of the kernel. */
sch_err sch_compute_root(sch_schedule *s, sch_tensor *t);

/* ---- cache_write.c ------------------------------------------------------ */

/* Makes a new stage that computes what t computed (same body, reduction and
 * loops), and turns t into a copy of it; compute_at then places the new
 * stage's results in an accumulator tile local to a loop of t. */
sch_err sch_cache_write(sch_schedule *s, sch_tensor *t, sch_tensor **cache);

/* ---- cache_read.c: a producer's tile staged in work-group memory -------- */

/* A new stage *cache copies tensor p (a parameter or a stage read directly
 * by consumer's body) and consumer reads the copy instead (TVM's
 * cache_read). Only scope SHARED: computed (sch_compute_at) at a loop of
 * consumer that lies outside its work-item loops, lowering copies the
 * region one iteration of that loop reads into a __local buffer, each
 * work-item a strided share, with a barrier after the copy and one after
 * the consumer's use. Lowering fails where the consumer has no work-item
 * loops inside that loop; templates ask only on devices (sch_tmpl_stage). */
sch_err sch_cache_read(sch_schedule *s, sch_tensor *consumer, sch_tensor *p, sch_scope scope, sch_tensor **cache);

/* ---- pack.c: layout packing ------------------------------------------- */

/* Repacks parameter p, as read by stage t, splitting axis `axis` by factor
 * and moving the inner part innermost (OIHW -> OIHW[f]o for axis 0 of a conv
 * weight; (N, K) -> (N/f, K, f) for a dense weight; NCHW -> NCHW[f]c for
 * axis 1 of data); rows past the end are zero. The pack stage is computed
 * at the root, or once ahead of time when lowering hoists it. */
sch_err sch_pack(sch_schedule *s, sch_tensor *t, sch_tensor *p, int axis, int64_t factor, sch_tensor **packed);
/* The same for n axes at once: each axes[j] splits by factors[j], and the
 * blocks are appended innermost in that order: axes {1, 0} with factors
 * {x, y} turn an OIHW weight into OIHW[x]i[y]o. */
sch_err sch_pack_axes(sch_schedule *s, sch_tensor *t, sch_tensor *p, int n, const int *axes, const int64_t *factors,
                      sch_tensor **packed);

/* ---- trace.c: the schedule as a replayable trace ------------------------ */

/* X(ID, name): primitives. */
#define SCH_PRIMS(X)                    \
    X(SPLIT, "split")                   \
    X(FUSE, "fuse")                     \
    X(REORDER, "reorder")               \
    X(ANNOTATE, "annotate")             \
    X(COMPUTE_AT, "compute_at")         \
    X(COMPUTE_INLINE, "compute_inline") \
    X(COMPUTE_ROOT, "compute_root")     \
    X(CACHE_WRITE, "cache_write")       \
    X(PACK, "pack")                     \
    X(CACHE_READ, "cache_read")

typedef enum {
#define X(id, name) SCH_P_##id,
    SCH_PRIMS(X)
#undef X
} sch_prim;

/* One applied primitive. Names are those of the schedule (stable for the
 * same function), so a trace replays on a fresh schedule. */
typedef struct sch_step {
    sch_prim prim;
    const char *stage;          /* the stage acted on */
    int n;                      /* iters named */
    const char **iters;         /* split/annotate: 1; fuse: 2; reorder: n; compute_at: the consumer's loop */
    const char *other;          /* compute_at: the consumer; pack: the parameter */
    int64_t value;              /* split: factor; annotate: loop kind; pack: first axis */
    int64_t value2;             /* pack: first factor; annotate thread: work-item axis */
    int npack;                  /* pack: blocked axes */
    const int64_t *pack;        /* pack: axis, factor pairs */
} sch_step;

/* Records a step (strings copied into the arena). */
void sch_trace_add(sch_schedule *s, sch_prim p, const char *stage, int n, const char *const *iters,
                   const char *other, int64_t value, int64_t value2);
/* Records a pack of n axes (value/value2 hold the first axis and factor). */
void sch_trace_pack(sch_schedule *s, const char *stage, const char *param, int n, const int *axes,
                    const int64_t *factors);
/* Appends the trace as text, one primitive a line ("split(conv2d0, k, 32)"). */
void sch_trace_print(su_buf *b, const sch_schedule *s);
/* The trace as a JSON array (malloc'd text). */
char *sch_trace_json(const sch_schedule *s);
/* Applies the steps of a JSON trace to s (a fresh schedule of the same
 * function); SCH_E_BAD_TRACE or the failing primitive's error otherwise. */
sch_err sch_trace_replay_json(sch_schedule *s, const char *json);

/* ---- bound.c: regions read by a loop (for compute_at) ------------------- */

/* The region of producer p read by the expressions e[0..ne), where the
 * variables inner[0..ninner) range over [0, ext) and every other variable is
 * fixed: per axis a minimum (an expression of the fixed variables) and an
 * extent. Axes whose region cannot be bounded this way get [0, shape). */
void sch_region(su_arena *a, int ne, const sch_expr *const *e, const sch_tensor *p, int ninner,
                sch_var *const *inner, const int64_t *ext, const sch_expr **mins, int64_t *extents);

/* ---- lower.c: schedule -> LoopIR --------------------------------------- */

typedef struct sch_lower_opts {
    const bool *param_const;    /* per parameter: known ahead of time (weights); may be NULL */
    bool hoist_packs;           /* pack stages of constant parameters become prologues */
    bool no_simplify;           /* keep the raw index arithmetic (for tests) */
} sch_lower_opts;

/* A prologue: packs parameter `param` into the kernel's extra input `packed`. */
typedef struct sch_prologue {
    int param;
    sch_buffer *packed;
    sch_func *fn;               /* args: the parameter, the packed buffer */
} sch_prologue;

typedef struct sch_lowered {
    sch_func *kernel;           /* args: parameters, then hoisted packed buffers, then outputs */
    int nprologues;
    sch_prologue *prologues;
} sch_lowered;

/* Lowers the schedule; NULL with s->err set when it cannot. */
sch_lowered *sch_lower(sch_schedule *s, const sch_lower_opts *o);

/* ---- space.c: config spaces, knobs and configs -------------------------- */

/* X(ID, name, tag): knob kinds, as AutoTVM has them; the tag names the kind
 * in tuning records (docs/log-format.md). */
#define SCH_KNOB_KINDS(X)                                                                  \
    X(SPLIT, "split", "sp")         /* a factorization of an extent into nparts factors */ \
    X(CHOICE, "choice", "ot")       /* one of a list of integers */                        \
    X(REORDER, "reorder", "re")     /* an order of nparts named loops */                   \
    X(ANNOTATE, "annotate", "an")   /* a loop kind for each of nparts named loops */

typedef enum {
#define X(id, name, tag) SCH_KNOB_##id,
    SCH_KNOB_KINDS(X)
#undef X
} sch_knob_kind;

/* One tunable decision: one of ncand candidates, each nparts integers.
 * Split: the factors, outermost first. Choice: the value. Reorder: the
 * order of the loops, outermost first, as positions in `loops` (the
 * template's own order is 0, 1, ...). Annotate: a sch_loop_kind per loop
 * of `loops` (SERIAL: none). */
typedef struct sch_knob {
    const char *name;           /* "tile_oc" */
    sch_knob_kind kind;
    int64_t extent;             /* split: the extent factorized */
    int nparts;                 /* values per candidate (choice: 1) */
    int ncand;                  /* candidates */
    int64_t *cands;             /* ncand x nparts values */
    int dflt;                   /* the default candidate (the template's heuristic) */
    char **loops;               /* reorder, annotate: the nparts loops' names (malloc'd); else NULL */
} sch_knob;

typedef struct sch_space {
    const char *template_name;
    SU_VEC(sch_knob) knobs;
} sch_space;

/* A point of a space: one candidate index per knob. */
typedef struct sch_config {
    int n;
    int *choice;
} sch_config;

void sch_space_free(sch_space *sp);
void sch_config_free(sch_config *c);
/* Number of points (saturating at INT64_MAX). */
int64_t sch_space_size(const sch_space *sp);
/* The knob named name, or NULL. */
const sch_knob *sch_space_knob(const sch_space *sp, const char *name);
/* True when a and b (spaces of one template's code) schedule the same loop
 * nest: the knobs of one, by name and kind, are all knobs of the other. */
bool sch_space_same_form(const sch_space *a, const sch_space *b);
/* The default config of a space (each knob at its default). */
void sch_config_default(const sch_space *sp, sch_config *c);
/* A uniformly random config (rand_r on *seed). */
void sch_config_random(const sch_space *sp, unsigned *seed, sch_config *c);
/* Name of a knob kind ("split") and its tag in tuning records ("sp"). */
const char *sch_knob_kind_name(sch_knob_kind k);
const char *sch_knob_kind_tag(sch_knob_kind k);
/* The JSON name of an annotation ("none", "unroll", "vec", "parallel"). */
const char *sch_annotation_name(sch_loop_kind k);
/* The JSON value of candidate c of knob k (a new reference): a split's
 * factors [2, 32], a choice's integer 1, a reorder's loop positions
 * [1, 0, 2], an annotation per loop ["unroll"]. */
struct json_t;
struct json_t *sch_knob_value(const sch_knob *k, int c);
/* The config as JSON (malloc'd): {"template": ..., "knobs": {"tile_oc": [2, 32], "unroll": 1}}. */
char *sch_config_json(const sch_space *sp, const sch_config *c);
/* Parses a config and checks each knob against the space (every knob of the
 * space must be given a candidate value; unknown knobs are errors). False
 * with a message (malloc'd) in *why. */
bool sch_config_parse(const sch_space *sp, const char *json, sch_config *c, char **why);
/* The candidate of knob k whose value is the JSON v (sch_knob_value's form),
 * or -1. */
int sch_knob_candidate(const sch_knob *k, struct json_t *v);
/* Appends the space as text, one knob a line with its candidates. */
void sch_space_print(su_buf *b, const sch_space *sp);

/* ---- template.c and templates/: schedule templates ---------------------- */

/* What templates know of the machine (targets/ fills it in from the
 * target; schedule/ does not look at the host itself). */
typedef struct sch_hw {
    int lanes;                  /* float32 lanes of a vector register (16 for AVX-512) */
    int vregs;                  /* vector registers (32 for AVX-512) */
    int cores;                  /* threads a parallel loop gets */
    int fma;                    /* FMA pipes of a core */
    int64_t l1, l2, l3;         /* data cache bytes: L1d and L2 per core, L3 */
    int64_t parallel_min;       /* the least work (iterations) a default loop nest goes
                                   parallel for (0: 16384, what a thread pool pays back;
                                   1: a device's work-items, which also take a nest's only
                                   loop, its vector loop, as its parallel loop) */
    int64_t wg_max;             /* a device's largest work-group (0: not a device, whose
                                   functions take the CPU templates; > 0: the device
                                   templates of templates/device_cl.c) */
    bool wg_reduce;             /* a device's reductions as work-group reductions
                                   (templates/reduce_cl.c): on where local memory pays
                                   (not a cpu device; the target option -wg-reduce=0|1) */
    int64_t wg_axis_max[3];     /* a device's largest work-group along each axis (0: wg_max) */
    int local_stage;            /* the default of the device templates' knob local_stage: 0 on
                                   where wg_reduce is, 1 off, 2 on (the target option
                                   -local-stage=0|1) */
    bool fused_fma;             /* the ISA multiplies and adds in one instruction (AVX2,
                                   AVX-512; not x86-64 or SSE4.2, nor a device): the
                                   accumulator rules of sch_hw_short_of_acc apply */
} sch_hw;

/* The defaults when nothing is known: AVX-512, two cores, two FMA pipes,
 * 32K L1d, 1M L2, 32M L3. */
extern const sch_hw sch_hw_default;

/* What a template sees: the schedule, the space it defines knobs in, and
 * the config that decides them (NULL: each knob's default). */
typedef struct sch_tctx {
    sch_schedule *s;
    sch_space *space;
    const sch_config *cfg;
    const sch_hw *hw;
    int next_knob;              /* knobs are defined in the same order every run */
    sch_err err;
} sch_tctx;

/* Defines (once) a split knob over extent into nparts factors whose inner
 * factor is at most max_inner (0: any); dflt are the default factors (NULL:
 * the first candidate). Returns the chosen factors (nparts values). */
const int64_t *sch_define_split(sch_tctx *t, const char *name, int64_t extent, int nparts, int64_t max_inner,
                                const int64_t *dflt);
/* Which factorizations a split knob offers (AutoTVM's "factors" policy,
 * or "power2" with pow2), bounded so that spaces stay measurable. */
typedef struct sch_split_policy {
    int64_t max_inner;          /* the innermost factor at most this (0: any) */
    int64_t max_outer;          /* the outermost factor at most this (0: any) */
    bool pow2;                  /* every factor but the outermost a power of two */
} sch_split_policy;
/* sch_define_split with a policy; when no factorization fits it, every one
 * is a candidate. */
const int64_t *sch_define_split_policy(sch_tctx *t, const char *name, int64_t extent, int nparts,
                                       const sch_split_policy *p, const int64_t *dflt);
/* A two-part split knob of a tile: the exact factorizations (inner at most
 * max_inner, 0: any) and the tiles of tails (ntails of them) that leave a
 * tail, as (ceil(extent / f), f); dflt the default factors. */
const int64_t *sch_define_tile_split(sch_tctx *t, const char *name, int64_t extent, int64_t max_inner, int ntails,
                                     const int64_t *tails, const int64_t *dflt);
/* Defines a choice knob among n values; returns the chosen value. */
int64_t sch_define_knob(sch_tctx *t, const char *name, int n, const int64_t *values, int64_t dflt);
/* Defines a reorder knob over nloops loops (named for printing: "oc",
 * "oh"), its ncand candidates each an order of them (nloops positions into
 * loops, outermost first; orders is ncand x nloops), candidate dflt the
 * default. Returns the chosen order. */
const int64_t *sch_define_reorder(sch_tctx *t, const char *name, int nloops, const char *const *loops, int ncand,
                                  const int64_t *orders, int dflt);
/* Defines an annotate knob over nloops loops, its ncand candidates each a
 * sch_loop_kind per loop (SERIAL: none); returns the chosen kinds. */
const int64_t *sch_define_annotate(sch_tctx *t, const char *name, int nloops, const char *const *loops, int ncand,
                                   const int64_t *kinds, int dflt);

/* A template: applies primitives to t->s, consulting knobs. */
typedef void (*sch_template_fn)(sch_tctx *t);

/* The template for a template name ("conv2d_nchw", "dense", ...), or the
 * default one ("injective" / "reduce") for NULL or an unknown name. */
sch_template_fn sch_template_find(const char *name);
/* The version of a template's configs (the default template's for NULL or
 * an unknown name): it changes when a stored config would schedule
 * differently, so that old tuning records are recognized as stale. */
int sch_template_version(const char *name);
/* Registers template fn under name (kept, not copied) at version; false
 * when the name is taken or the registry is full. For templates outside
 * schedule/: a test's deliberately broken one. */
bool sch_template_register(const char *name, sch_template_fn fn, int version);
/* The template name a schedule gets: its task's (from the anchor op) or
 * "default". */
const char *sch_template_name(const sch_schedule *s);
/* Runs the template with cfg (NULL: defaults) for machine hw (NULL:
 * sch_hw_default), filling space (may be NULL). On a primitive's failure
 * returns its error (s->err_msg says why). */
sch_err sch_apply_template(sch_schedule *s, const char *name, const sch_hw *hw, const sch_config *cfg,
                           sch_space *space);

/* ---- workload.c: what a primitive function is to tuning and compiling --- */

/* The template family of an anchor call ("conv2d_nchw", "dense", ...), or
 * NULL when the call is not tunable (the table of op families). */
const char *sch_call_template(const ir_expr *call);
/* The workload key of primitive function f (malloc'd), and its template
 * name (static string) or NULL when f has no tunable anchor; *anchor (may
 * be NULL) gets the anchor's op. */
char *sch_workload_key(const ir_expr *f, const char **template_name, const ir_op_def **anchor);
/* The template a device (sch_hw.wg_max > 0) schedules a function of
 * template `name` with: its device template ("conv2d_nchw" ->
 * "conv2d_nchw_cl", "default" -> "default_cl"), or name itself when the
 * family has none (conv2d_nchwc) or name is a device template already. */
const char *sch_device_template(const char *name);
/* The template a device (hw->wg_max > 0) schedules s of template `name`
 * with: sch_device_template's, but reduce_cl instead of default_cl where
 * s has work-group reductions (sch_reduce_cl_fits). */
const char *sch_device_template_of(const sch_schedule *s, const char *name, const sch_hw *hw);
/* The FLOPs of f's body (the ops' own counts, summed). */
int64_t sch_workload_flops(const ir_expr *f);
/* Appends a tensor type's shape as a key writes it ("1x64x56x56", "scalar"). */
void sch_shape_text(su_buf *b, const ir_type *t);

/* ---- build.c: a primitive function to LoopIR under a config ------------- */

/* What a kernel is built with. The template reads its knobs through its
 * sch_tctx, the same way whether a tuner is defining the space or a
 * compiler applies a chosen config: only the config differs. */
typedef struct sch_build_opts {
    const char *template_name;  /* NULL: the function's own (sch_template_name) */
    const sch_hw *hw;           /* the machine (NULL: sch_hw_default) */
    const sch_config *cfg;      /* the config (NULL: the template's defaults) */
    const char *cfg_json;       /* instead of cfg: config text from the command line,
                                   read in the template's space (sch_config_parse) */
    const bool *param_const;    /* per parameter: a weight, its packing hoisted (NULL: none) */
    bool space_only;            /* stop after the template: only the space is wanted */
} sch_build_opts;

/* Where a build stopped. */
typedef enum {
    SCH_BUILT,                  /* it did not: the kernel is there */
    SCH_BUILD_CREATE,           /* the function has no compute definition */
    SCH_BUILD_CONFIG,           /* cfg_json does not fit the space */
    SCH_BUILD_TEMPLATE,         /* the template failed (err says how; BAD_CONFIG: the config) */
    SCH_BUILD_LOWER,            /* lowering failed */
} sch_build_step;

/* A built kernel and what it was built from. */
typedef struct sch_kernel {
    sch_build_step failed;      /* SCH_BUILT, or the step that failed */
    sch_err err;                /* the schedule's error when TEMPLATE or LOWER failed */
    char *why;                  /* a failure's reason (malloc'd), else NULL */
    sch_schedule *s;            /* the schedule, which owns the LoopIR (NULL: CREATE failed) */
    sch_lowered *l;             /* kernel and prologues (NULL on a failure or space_only) */
    sch_space space;            /* the template's space, as the run that applied cfg defined it
                                   (with cfg_json: the defaults' run, which read the text) */
    sch_config cfg;             /* the config applied: the one given, or the defaults */
    su_diags diags;             /* sch_create's diagnostics */
} sch_kernel;

/* Schedules fn (typed, primitive), runs its template under the config and
 * lowers it; false with k->failed, k->err and k->why set when a step
 * fails. k is always to be freed with sch_kernel_free. */
bool sch_build(const ir_expr *fn, const sch_build_opts *o, sch_kernel *k);
void sch_kernel_free(sch_kernel *k);

/* templates/default.c: injective, reduction, pooling, softmax, layer_norm;
 * and the helpers every template shares. */
void sch_template_default(sch_tctx *t);
/* templates/conv2d.c: conv2d_nchw, depthwise_conv2d_nchw, group_conv2d_nchw
 * (a 1x1 unpadded conv, of any stride, goes to sch_template_conv2d_1x1). */
void sch_template_conv2d(sch_tctx *t);
/* A register tile of *kb channels (dividing K) x *owb columns (any width:
 * the last tile may be a tail) for widths whose divisors leave the usual one
 * tiny: the most useful lane FMAs per step over a whole row within the
 * accumulators (docs/targets.md). */
void sch_tmpl_fallback_tile(int64_t K, int64_t OW, const sch_hw *hw, int64_t *kb, int64_t *owb);
/* The default register tile of kb channels x wb columns (or pixels) of a
 * conv vectorized along the columns (vec_w) or the channels. */
void sch_tmpl_register_tile(const sch_hw *hw, int64_t K, int64_t W, bool vec_w, int64_t *kb, int64_t *wb);
/* Whether a conv of K channels and W columns (pixels) whose columns make
 * whole vectors should still vectorize the channels by default: the tile
 * along the columns is short of accumulators (sch_hw_short_of_acc) and the
 * one along the channels is not (AVX2's power-of-two channels: 8 rows of
 * one vector against 16 channels x 6 columns). */
bool sch_tmpl_rows_short(const sch_hw *hw, int64_t K, int64_t W);
/* Rejects, with SCH_E_BAD_CONFIG naming `what` and the knob vec_knob, a CPU
 * channel-vector tile of kb channels that is not whole vectors where the K
 * channels are (lanes wasted in every FMA); true when it did (nothing on
 * a device, a scalar ISA or after an error). */
bool sch_tmpl_reject_part_vectors(sch_tctx *t, const char *what, const char *vec_knob, int64_t K, int64_t kb);
/* The non-divisor tiles a conv's tile knob offers besides the divisors
 * (cols: the column knob's, else the channel knob's), at most max, into out
 * (6 slots); returns how many. */
int sch_tmpl_tile_cands(const sch_hw *hw, int64_t K, int64_t W, bool cols, int64_t max, int64_t *out);
/* A conv's output loops: order[0..n) reordered (the batch, the two outer
 * tile loops, the tile's own), the first three fused into the parallel
 * loop *f, the last vectorized. */
void sch_tmpl_conv_output(sch_tctx *t, sch_tensor *o, int n, sch_iter *const *order, sch_iter **f);
/* templates/conv2d_1x1.c: a conv of compute_nn.c's pixel-fused form (1x1,
 * no padding, one group, any stride: a strided one's subsampled input
 * copied once or read in place) tiled as a GEMM over the pixels. */
void sch_template_conv2d_1x1(sch_tctx *t);
/* templates/conv2d_dw_flat.c: a depthwise conv of compute_nn.c's flat form
 * (each padded plane, or phase of it at a stride, a 1-D conv), every stage
 * at the channel tile, tiled in whole vectors. */
void sch_template_dw_flat(sch_tctx *t);
/* templates/conv2d_nchwc.c: nn.contrib_conv2d_NCHWc, vectorized over the block. */
void sch_template_conv2d_nchwc(sch_tctx *t);
/* templates/conv2d_winograd.c: the Winograd conv, its stages at the root and the batched GEMM tiled. */
void sch_template_conv2d_winograd(sch_tctx *t);
/* templates/matmul.c: dense and batch_matmul. */
void sch_template_matmul(sch_tctx *t);
/* templates/device_cl.c: the re-gridded device templates (a conv that
 * conv2d_nchw_cl does not take, a matmul batch_matmul_cl and dense_cl do
 * not, default_cl): the family's CPU template, then each root stage's
 * parallel loop as work-groups of wg_items work-items (bound loops,
 * sch_bind). */
void sch_template_conv2d_cl(sch_tctx *t);
void sch_template_matmul_cl(sch_tctx *t);
void sch_template_default_cl(sch_tctx *t);
/* templates/dense_cl.c: dense_cl, nn.dense on a 2-D work-group (wg_m x
 * wg_n work-items, each a tile_m x tile_n register tile, k blocked by
 * tile_k), its operands' k-block tiles staged in local memory with knob
 * local_stage; other matmuls go to sch_template_matmul_cl. */
void sch_template_dense_cl(sch_tctx *t);
/* Stages tensor p of stage consumer in SHARED memory at consumer's loop at
 * (sch_cache_read + sch_compute_at); its copy's buffer in the order of
 * p's axes order[0..p->ndim) (NULL: p's own). Fails (t->err) on a target
 * without work-groups (hw->wg_max 0), whose C has no __local memory. */
sch_tensor *sch_tmpl_stage(sch_tctx *t, sch_tensor *consumer, sch_tensor *p, sch_iter *at, const int *order);
/* The device step every template above ends with, for other device
 * templates: each root stage's parallel loop as work-groups of wg_items
 * work-items (defines the knob wg_items). */
void sch_tmpl_device_grid(sch_tctx *t);
/* The device step's knob vec (templates/device_cl.c) for other device
 * templates: every work-item's vectorized loops split into vectors of the
 * width it picks (defines the knob vec). */
void sch_tmpl_device_vec(sch_tctx *t);
/* The largest power of two at most w (and 16) dividing n (1 where none): a
 * vector width OpenCL C has a type for. */
int64_t sch_tmpl_pow2_divisor(int64_t n, int64_t w);
/* Defines the knob vec of sch_tmpl_device_vec (the same candidates and
 * default) and returns the width chosen. */
int64_t sch_tmpl_device_vec_knob(sch_tctx *t);
/* sch_tmpl_device_vec's step under a width already chosen (w: vec's value). */
void sch_tmpl_device_vectorize(sch_tctx *t, int64_t w);
/* dense_cl.c's rules, which conv2d_cl shares: the largest work-group along
 * work-item axis `axis` (0: x, 1: y) at most cap (1 on a machine without
 * work-groups); */
int64_t sch_tmpl_cl_axis_cap(const sch_hw *hw, int axis, int64_t cap);
/* the largest power of two v at most cap and dflt for which v x tile
 * divides extent (a default with no tail); */
int64_t sch_tmpl_cl_pow2_default(int64_t cap, int64_t dflt, int64_t extent, int64_t tile);
/* a choice knob among the powers of two up to cap (dflt one of them); */
int64_t sch_tmpl_cl_pow2_knob(sch_tctx *t, const char *name, int64_t cap, int64_t dflt);
/* leaf it of a split into groups x items x tile (factors clamped to the
 * extent), the three loops in *g, *w, *r. */
void sch_tmpl_cl_tile3(sch_tctx *t, sch_tensor *a, sch_iter *it, int64_t items, int64_t tile, sch_iter **g,
                       sch_iter **w, sch_iter **r);
/* dense_cl.c's GEMM on a 2-D work-group, which batch_matmul_cl shares: the
 * product a (batch leading leaves, then rows i, columns j, reduction k)
 * tiled into blocks of wg_m x wg_n work-items, each a tile_m x tile_n
 * register tile; the operands' k-block tiles staged in local memory with
 * knob local_stage (templates/dense_cl.c). The caller fills the fields
 * above the knobs. */
typedef struct sch_cl_gemm {
    const char *name;               /* the template, for errors */
    sch_tensor *a;                  /* the product */
    int batch;                      /* its batch leaves (0 or 1: bound to group axis 2) */
    sch_tensor *lhs, *rhs;          /* the operands staged (rows x k, k x columns) */
    const int *lhs_order, *rhs_order; /* their staged buffers' axis orders (NULL: their own) */
    bool can_stage;                 /* whether local_stage is a knob (lhs and rhs are tensors a reads) */
    sch_tensor *pack;               /* the operand packed in the register form (NULL: none) */
    int pack_axis;                  /* its column axis */
    bool unroll_knob;               /* define unroll_k (k blocks unrolled; tile_k up to 32) */
    bool vec_knob;                  /* the caller defines vec (sch_tmpl_device_vec) after */
    int64_t wg_m, wg_n, tm, tn, tk, unroll, stage; /* the knobs */
} sch_cl_gemm;
/* Defines g's knobs (tile_m, tile_n, wg_m, wg_n, tile_k, [unroll_k],
 * [local_stage]) with the device's defaults; false (t->err) for a config
 * the device cannot hold. */
bool sch_tmpl_cl_gemm_plan(sch_tctx *t, sch_cl_gemm *g);
/* Schedules g's product as its knobs say, then the stages left as
 * default_cl does. */
void sch_tmpl_cl_gemm(sch_tctx *t, const sch_cl_gemm *g);
/* templates/batch_matmul_cl.c: batch_matmul_cl, nn.batch_matmul as
 * dense_cl's GEMM with the batch on group axis 2, knobs unroll_k and vec
 * too; other forms take sch_template_matmul_cl. */
void sch_template_batch_matmul_cl(sch_tctx *t);
/* templates/conv2d_cl.c: conv2d_nchw_cl, a plain or grouped (direct form) nn.conv2d on a
 * 2-D work-group (wg_oc x wg_px work-items, each a tile_oc x tile_px
 * register tile; batch and rows on group axis 2), input channels blocked by
 * tile_ic, the blocks' input patch and weights staged in local memory with
 * knob local_stage; other forms take sch_template_conv2d_cl. */
void sch_template_conv2d_nchw_cl(sch_tctx *t);
/* templates/reduce_cl.c: reduce_cl, the work-group reductions (softmax,
 * log_softmax and layer_norm rows, global pooling, sum/mean/max/min/prod,
 * argmax): a group of wg_reduce work-items for each row or element, their
 * partial results combined in local memory (lower.c). */
void sch_template_reduce_cl(sch_tctx *t);
/* Whether reduce_cl schedules s on machine hw (a device with wg_reduce):
 * s has reductions of two or more elements, none of a pooling window or of
 * float16. */
bool sch_reduce_cl_fits(const sch_schedule *s, const sch_hw *hw);

/* Runs a primitive unless an earlier one failed; the first error sticks. */
#define SCH_TRY(t, call) do { if (!(t)->err) (t)->err = (call); } while (0)
/* Schedules a root stage for the machine: its innermost spatial loop (fused
 * with the ones outside it while shorter than a vector) vectorized and
 * innermost, reduction loops outside it, the remaining spatial loops fused
 * into one that is parallel when the stage is big enough to pay for
 * threads. Does nothing to a stage whose loops were transformed already. */
void sch_tmpl_root(sch_tctx *t, sch_tensor *st);
/* Computes each reduction stage that is not an output inside its reader, at
 * the innermost of the reader's loops that its reads depend on (a row
 * statistic under the row loop); the others get sch_tmpl_root. */
void sch_tmpl_attach_reductions(sch_tctx *t);
/* Schedules every root stage not scheduled yet with sch_tmpl_root. */
void sch_tmpl_finish(sch_tctx *t);
/* The divisor of n (at most max) for a vectorized tile: the largest multiple
 * of lanes if one divides n, else the largest divisor. */
int64_t sch_tmpl_vector_factor(int64_t n, int64_t max, int lanes);
/* The largest divisor of n that is at most max. */
int64_t sch_tmpl_divisor(int64_t n, int64_t max);
/* A tile of n for the machine rule's tile `rule` where the best divisor is
 * d: the rule's own (leaving a tail) when d is under 2/3 of it, else d. */
int64_t sch_tmpl_tail_tile(int64_t n, int64_t rule, int64_t d);
/* The rule's tile and its neighbours at +-step, those in [2, max], into
 * out (3 slots); returns how many. */
int sch_tmpl_tail_cands(int64_t rule, int64_t step, int64_t max, int64_t *out);
/* templates/machine.c: the sizes templates derive from the target
 * (docs/targets.md). Accumulators a register tile may hold. */
int sch_hw_acc_regs(const sch_hw *hw);
/* Accumulators needed in flight to keep the FMA pipes busy. */
int sch_hw_min_acc(const sch_hw *hw);
/* Registers a conv's taps keep live beyond its register tile where the
 * compiler unrolls their short kw loop (2 or 3 taps; none for other kw):
 * a tile that leaves fewer keeps its taps a loop (docs/targets.md). */
int64_t sch_hw_tap_regs(int64_t kw);
/* Whether a register tile of acc accumulators is short of them: no more
 * than the bare sch_hw_min_acc, where measured tiles ran far below those
 * with a few more (AVX2's 8, docs/targets.md; AVX-512's 9 ran well); never
 * without fused multiply-adds (sch_hw.fused_fma), whose separate products
 * need registers of their own (SSE's 56-wide 3x3 convs ran 0.8x as fast
 * on the tiles the rule would give them). */
bool sch_hw_short_of_acc(const sch_hw *hw, int64_t acc);
/* Vector registers n lanes fill (the last one partly). */
int64_t sch_hw_vectors(const sch_hw *hw, int64_t n);
/* The default width in lanes of a register tile's row (two vectors). */
int sch_hw_row_lanes(const sch_hw *hw);
/* The widest vectorized tile dimension a knob offers (four vectors). */
int sch_hw_max_cols(const sch_hw *hw);
/* The longest unrolled tile dimension a knob offers (one vector a row: as
 * many rows as accumulators). */
int sch_hw_max_rows(const sch_hw *hw);
/* The vector tile of a memory-bound loop: a power of two whose 16 float32
 * streams fit L1. */
int64_t sch_hw_stream_tile(const sch_hw *hw);
/* The largest block of extent (extent / d for d = 1..max_outer dividing it)
 * whose bytes_per x block fits L2; the smallest such block when none does. */
int64_t sch_hw_l2_block(const sch_hw *hw, int64_t extent, int64_t bytes_per, int64_t max_outer);
/* The anchor *a (rank ndim, 0: any; nraxes reduction axes) and the output
 * stage *o it is computed into: its reader, or a copy made by cache_write
 * when the anchor is itself the output (*a is then the cache). False when
 * the shapes do not fit (the default template ran instead) or a primitive
 * failed (t->err). */
bool sch_tmpl_anchor_output(sch_tctx *t, int ndim, int nraxes, sch_tensor **a, sch_tensor **o);
/* The only non-inline stage that reads t, or NULL. */
sch_tensor *sch_tmpl_reader(const sch_schedule *s, const sch_tensor *t);
/* The stage of a's call (other than a) whose name starts with prefix (its
 * compute definition's "pad", "stride"), or NULL. */
sch_tensor *sch_tmpl_call_stage(const sch_schedule *s, const sch_tensor *a, const char *prefix);
/* Bit d set for each root axis of t that leaf `it` derives from. */
uint64_t sch_leaf_roots(const sch_tensor *t, const sch_iter *it);

#endif
