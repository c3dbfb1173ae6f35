/* transform.h — the map of ir/transform/: graph passes over typed modules and
 * the pass manager that runs them. Prefix: tr_. Depends on ir/ and support/.
 *
 * A pass never mutates a node: it builds new nodes in the module's arena and
 * replaces the module's def functions; type inference then fills in the types
 * of the new nodes only (old nodes keep theirs). */
#ifndef RT_TRANSFORM_H
#define RT_TRANSFORM_H

#include "ir/ir.h"

/* ---- rewrite.c: bottom-up rebuilding of expressions -------------------- */

typedef struct tr_rewriter tr_rewriter;
/* Called on each node after its operands were rewritten (`e` is the node with
 * the new operands, possibly the original when none changed); returns the
 * node to use instead (often e itself). */
typedef ir_expr *(*tr_post_fn)(tr_rewriter *rw, ir_expr *e);

struct tr_rewriter {
    ir_module *m;
    tr_post_fn post;        /* the pass's rule */
    const ir_expr *orig;    /* while post runs: the original node being replaced */
    void *ctx;              /* the pass's state */
    ir_expr **memo;         /* rewritten node by original node id */
    size_t nmemo;
    int depth;              /* recursion guard */
    bool failed;            /* set when the graph was nested too deeply */
};

/* Prepares a rewriter for module m with rule post (ctx for the rule). */
void tr_rewriter_init(tr_rewriter *rw, ir_module *m, tr_post_fn post, void *ctx);
/* Rewrites e (memoized: a shared node is rewritten once). */
ir_expr *tr_rewrite(tr_rewriter *rw, ir_expr *e);
/* Rewrites the body of every def of the module in place of the old one. */
void tr_rewrite_module(tr_rewriter *rw);
/* Frees the rewriter's memo. */
void tr_rewriter_free(tr_rewriter *rw);
/* Rewrites every def of m with rule (ctx for the rule); false when the
 * graph was too deep or a rewritten node failed to type-check. */
bool tr_apply(ir_module *m, tr_post_fn rule, void *ctx);
/* Maps operand i of e (ir_expr_child numbering), which is x, to the operand
 * the rebuilt node takes. */
typedef ir_expr *(*tr_operand_fn)(void *ctx, const ir_expr *e, int i, ir_expr *x);
/* e over the operands map gives (asked in operand order): e itself when
 * none changed (its type kept), else a new untyped node of e's kind with
 * e's span, attributes, bound variables and annotations. */
ir_expr *tr_rebuild(ir_module *m, ir_expr *e, tr_operand_fn map, void *ctx);
/* Counts, over everything reachable from e (each shared node once, inside
 * functions too), the operator calls and the calls of primitive functions. */
void tr_count(const ir_expr *e, size_t *ops, size_t *primitive_calls);

/* ---- pass_manager.c: named passes at optimization levels --------------- */

typedef struct tr_options tr_options;
/* A pass: transforms m in place; false after recording errors in d. */
typedef bool (*tr_pass_fn)(ir_module *m, const tr_options *o, su_diags *d);

typedef struct tr_pass {
    const char *name;       /* "fuse-ops" */
    tr_pass_fn fn;
    int level;              /* runs at -O level and above */
    const char *help;       /* one line for --help */
} tr_pass;

/* Compares a module's defs before a pass (`before`, the old def table; passes
 * never mutate nodes, so the old functions are intact) with its defs now, by
 * running both (the interpreter's job); false with a description in why when
 * their results differ. */
typedef bool (*tr_check_fn)(void *ctx, ir_module *m, const ir_global_def *before, size_t nbefore, su_buf *why);

/* A conv's kernel time in seconds with input block ib and output block ob
 * (the database's best record of that conv2d_nchwc workload), or < 0 when
 * unknown (layout_dp.c then uses its analytic model). */
typedef double (*tr_layout_cost_fn)(void *ctx, const ir_expr *conv, int64_t ib, int64_t ob);

struct tr_options {
    int level;                  /* 0..3 */
    const char *print_after;    /* print the module after this pass (NULL: none) */
    bool print_after_all;       /* print the module after every pass */
    FILE *print_to;             /* where printouts go (stderr when NULL) */
    int max_fuse_depth;         /* fuse-ops: most ops in one function (0: 256) */
    int layout_block;           /* alter-layout: the most channels in a block (0: the pass is off) */
    bool layout_auto;           /* alter-layout: blocks chosen by layout_dp.c, layout_block = the vector lanes */
    int layout_force;           /* with layout_auto, k > 0: every conv takes its k-th candidate block
                                   (the last when it has fewer), its input its producer's: the graph whose
                                   tasks are those of block k (0: the DP's choice) */
    tr_layout_cost_fn layout_cost;  /* layout_dp.c: known kernel times (NULL: the analytic model only) */
    void *layout_cost_ctx;
    int winograd;               /* winograd: 3x3 stride-1 convs with constant weights as Winograd convs:
                                   TR_WINOGRAD_ALL every one, TR_WINOGRAD_AUTO those tr_winograd_pick
                                   takes (0: none) */
    int winograd_tile;          /* winograd: the output tile m, 2 or 4 (0: from each conv's shape) */
    int winograd_lanes;         /* TR_WINOGRAD_AUTO: the target's float32 vector lanes */
    const char *from_pass;      /* run the pipeline from this pass on (NULL: from the first) */
    const char *until_pass;     /* stop before this pass (NULL: run to the end); the two let a
                                   caller run the passes before one once and the rest several times */
    tr_check_fn check;          /* check mode: compare before/after each pass */
    void *check_ctx;
};

/* The passes in pipeline order; *n gets their number. */
const tr_pass *tr_passes(size_t *n);
/* The pass named name, or NULL. */
const tr_pass *tr_pass_find(const char *name);
/* Runs the pipeline for o->level on m, re-inferring types after each pass;
 * false after recording errors (including a check-mode mismatch) in d. */
bool tr_optimize(ir_module *m, const tr_options *o, su_diags *d);

/* ---- check.c: check mode (the interpreter before and after each pass) ---- */

typedef struct tr_checker tr_checker;
/* A checker running @main on inputs seeded with seed; a pass fails the
 * check when max |after - before| exceeds tol (0: 1e-4) times the largest
 * magnitude of the result before it (or 1, when that is smaller). */
tr_checker *tr_checker_new(uint64_t seed, double tol);
/* Frees the checker (NULL is fine). */
void tr_checker_free(tr_checker *c);
/* The tr_check_fn of a checker (ctx = the tr_checker). */
bool tr_check_interp(void *ctx, ir_module *m, const ir_global_def *before, size_t nbefore, su_buf *why);

/* ---- bind_params.c ------------------------------------------------------ */

/* Replaces the parameters of @main named names[i] (without %) by constants
 * values[i] and drops them from its signature; a type mismatch is an error
 * naming the parameter and both types. Parameters not named stay. */
bool tr_bind_params(ir_module *m, const char *const *names, const ir_tensor *const *values, size_t n, su_diags *d);

/* ---- one file per pass ------------------------------------------------- */

/* dce.c: drops let bindings whose variable is never used (values are pure). */
bool tr_dead_code(ir_module *m, const tr_options *o, su_diags *d);
/* cse.c: merges structurally equal operator calls, tuples and projections. */
bool tr_common_subexpr(ir_module *m, const tr_options *o, su_diags *d);
/* simplify_inference.c: batch_norm into scale and shift, dropout to identity. */
bool tr_simplify_inference(ir_module *m, const tr_options *o, su_diags *d);
/* canonicalize.c: bias_add into a broadcast add. */
bool tr_canonicalize(ir_module *m, const tr_options *o, su_diags *d);
/* fold_constant.c: evaluates operator calls whose arguments are constants
 * with the reference kernels. */
bool tr_fold_constant(ir_module *m, const tr_options *o, su_diags *d);
/* The value of typed op call e as a constant (a tuple of constants for a
 * tuple result) when its arguments are constants and its kernel succeeds;
 * else e itself. Shared with the ONNX importer, which folds as it builds. */
ir_expr *tr_fold_call(ir_module *m, ir_expr *e);
/* fold_scale_axis.c: multiply(conv2d(x, W), s) with constant W and a
 * per-output-channel constant s becomes conv2d(x, W * s) (also through a
 * constant bias add, and for nn.dense). */
bool tr_fold_scale_axis(ir_module *m, const tr_options *o, su_diags *d);
/* fuse_ops.c: partitions each function into primitive functions (TVM's
 * post-dominator algorithm over op patterns). */
bool tr_fuse_ops(ir_module *m, const tr_options *o, su_diags *d);
/* alter_layout.c: conv2d and the elementwise ops between convs in blocked
 * layouts (NCHW[x]c, x up to o->layout_block), weights packed at once. */
bool tr_alter_layout(ir_module *m, const tr_options *o, su_diags *d);
/* True for a conv2d the pass rewrites (NCHW/OIHW, groups=1, float, rank 4). */
bool tr_alter_conv_ok(const ir_expr *e);
/* True for an op that runs on blocked data in its operand's block
 * (elementwise of one operand, broadcast of two, NCHW pools). */
bool tr_alter_passes_block(const ir_expr *e);
/* winograd.c: conv2d with a constant 3x3 weight, stride 1, dilation 1,
 * groups 1 (NCHW) as nn.contrib_conv2d_winograd_without_weight_transform on
 * the weight transformed at once (only with o->winograd; docs/winograd.md). */
bool tr_winograd(ir_module *m, const tr_options *o, su_diags *d);
/* True for a conv2d the winograd pass rewrites. */
bool tr_winograd_conv_ok(const ir_expr *e);
enum { TR_WINOGRAD_ALL = 1, TR_WINOGRAD_AUTO = 2 };
/* The tile (4 or 2) the automatic rule computes conv e with on a target of
 * `lanes` float32 lanes, 0 for the direct conv (docs/winograd.md). */
int tr_winograd_pick(const ir_expr *e, int lanes);

/* ---- layout_dp.c: the graph-level choice of block factors ---- */

typedef struct tr_block_choice {
    uint32_t conv;              /* the conv2d node's id */
    int64_t ib, ob;             /* its input and output blocks */
} tr_block_choice;

typedef struct tr_block_choices {
    tr_block_choice *v;         /* by conv, in topological order */
    size_t n, edges;            /* convs and the edges between them */
    double total_s;             /* the chosen kernels' estimated time */
    double dp_s;                /* what the choice took */
} tr_block_choices;

/* The most candidate blocks a conv has (multiples of the lanes up to 4x the
 * lanes): layout_force's variants 1..TR_LAYOUT_VARIANTS cover them all. */
#define TR_LAYOUT_VARIANTS 4

/* Chooses every rewritable conv's blocks among the multiples of
 * o->layout_block (the lanes) dividing its channels, minimizing kernel time
 * (o->layout_cost, else analytic) plus the transforms between neighbours
 * (o->layout_force > 0: the forced variant instead, no search);
 * free out->v with free(). O(edges x blocks^2). */
void tr_layout_dp(ir_module *m, const tr_options *o, tr_block_choices *out);

#endif
