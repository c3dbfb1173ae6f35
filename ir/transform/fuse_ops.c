/* fuse_ops.c — operator fusion, following TVM's FuseOps. Each body (function
 * body, if branch, let value) is a dataflow graph; a post-dominator tree over
 * it and the ops' patterns decide which nodes join which group:
 *   phase 0: an out-elemwise-fusable op (conv2d, dense, ...) takes the
 *            elementwise/broadcast path to its immediate post-dominator;
 *            elementwise/broadcast ops fuse into injective or reduction
 *            post-dominators;
 *   phase 1: injective ops and tuples fuse along injective paths;
 *   phase 2: injective ops fuse into tuples already fused onward.
 * A group never exceeds max_fuse_depth ops. Every group of operator calls
 * becomes a function marked Primitive=1 whose parameters are the group's
 * inputs (scalar constants stay inside), called where the group's output was.
 * Control flow and calls of functions are opaque: never fused, but their own
 * bodies are fused in turn. */
#include <string.h>

#include "ir/transform/transform.h"

enum { NO_PARENT = -1 };

typedef struct edge { int to; ir_op_pattern pat; struct edge *next; } edge;

typedef struct gnode {
    ir_expr *e;
    ir_op_pattern pattern;
    bool extern_ref;        /* used outside this graph (result, nested body) */
    edge *outputs;          /* users inside the graph */
    /* post-dominator tree */
    int pdom, depth;
    ir_op_pattern pdom_pat; /* strongest pattern on the way to pdom */
    /* union-find group */
    int parent, num_nodes;
    ir_op_pattern gpattern;
    bool has_anchor;
} gnode;

typedef struct fuser {
    ir_module *m;
    int max_depth;
    ir_expr **repl;         /* replacement of a node, by id (outer scopes too) */
    int *owner;             /* graph index + 1 of a node in the current graph, by id */
    int *scope;             /* body whose graph holds the node (see place_def), by id */
    int *child_a, *child_b; /* bodies a node opens (if branches, let parts, fn body), by id */
    SU_VEC(int) sparent;    /* tree of bodies: parent, depth */
    SU_VEC(int) sdepth;
    int cur_scope;          /* the body whose graph is being fused */
    ir_expr **all;          /* every node of the def, by increasing id */
    size_t nall;
    size_t cap;
    gnode *g;               /* current graph, topological (id) order */
    int n;
    bool *visited;          /* CheckPath / CommitFuse */
    su_arena edges;
    int depth;
    bool failed;
} fuser;

static ir_expr *fuse_body(fuser *f, ir_expr *root, int scope);

static bool is_atom(const ir_expr *e)
{
    return e->kind == IR_VAR || e->kind == IR_GLOBAL || e->kind == IR_CONST || e->kind == IR_OP;
}

static ir_op_pattern combine(ir_op_pattern a, ir_op_pattern b) { return a > b ? a : b; }

/* ---- building the graph ---- */

static void grow(fuser *f, uint32_t id)
{
    if (id < f->cap)
        return;
    size_t old = f->cap, cap = old;
    f->repl = su_grow_zeroed(f->repl, &cap, id, sizeof *f->repl);
    cap = old;
    f->owner = su_grow_zeroed(f->owner, &cap, id, sizeof *f->owner);
    cap = old;
    f->scope = su_grow_zeroed(f->scope, &cap, id, sizeof *f->scope);
    cap = old;
    f->child_a = su_grow_zeroed(f->child_a, &cap, id, sizeof *f->child_a);
    cap = old;
    f->child_b = su_grow_zeroed(f->child_b, &cap, id, sizeof *f->child_b);
    for (size_t i = old; i < cap; i++)
        f->scope[i] = f->child_a[i] = f->child_b[i] = -1;
    f->cap = cap;
}

/* Index of x in the graph being fused, or -1 (enclosing bodies' graphs are
 * set aside while a nested body is fused, and their nodes are inputs here). */
static int graph_index(const fuser *f, const ir_expr *x)
{
    if (is_atom(x) || x->id >= f->cap || !f->owner[x->id] || f->scope[x->id] != f->cur_scope)
        return -1;
    return f->owner[x->id] - 1;
}

/* ---- placement: which body's graph holds each node ----
 * A graph has no statement order, so a node belongs to the innermost body
 * (if branch, let part, function body) that encloses all of its uses, as
 * the printer places bindings. Users are created after their operands, so a
 * pass in decreasing id order sees every use of a node before the node. */

typedef SU_VEC(ir_expr *) expr_vec;

typedef struct gatherer { fuser *f; expr_vec *all; } gatherer;

/* Collects the nodes of a def body; a primitive function is fused already. */
static ir_visit_step gather_node(ir_visitor *v, const ir_expr *e)
{
    gatherer *g = v->ctx;
    grow(g->f, e->id);
    if (is_atom(e))
        return IR_VISIT_SKIP;
    g->f->scope[e->id] = g->f->child_a[e->id] = g->f->child_b[e->id] = -1;
    su_vec_push(g->all, (ir_expr *)e);
    return ir_func_is_primitive(e) ? IR_VISIT_SKIP : IR_VISIT_DESCEND;
}

static int new_scope(fuser *f, int parent)
{
    su_vec_push(&f->sparent, parent);
    su_vec_push(&f->sdepth, parent < 0 ? 0 : f->sdepth.data[parent] + 1);
    return (int)f->sparent.len - 1;
}

static void use(fuser *f, ir_expr *e, int s)
{
    if (is_atom(e))
        return;
    int *cur = &f->scope[e->id];
    if (*cur < 0) {
        *cur = s;
        return;
    }
    int a = *cur, b = s;
    while (a != b) {
        if (f->sdepth.data[a] >= f->sdepth.data[b])
            a = f->sparent.data[a];
        else
            b = f->sparent.data[b];
    }
    *cur = a;
}

static int by_id(const void *a, const void *b)
{
    uint32_t x = (*(ir_expr *const *)a)->id, y = (*(ir_expr *const *)b)->id;
    return x < y ? -1 : x > y;
}

/* Places every node of a def body; the body itself is scope 0. */
static void place_def(fuser *f, ir_expr *body)
{
    expr_vec all = {0};
    gatherer g = {f, &all};
    ir_visitor v;
    ir_visitor_init(&v, gather_node, NULL, &g);
    ir_visit(&v, body);
    ir_visitor_free(&v);
    if (all.len > 1)
        qsort(all.data, all.len, sizeof *all.data, by_id);
    f->sparent.len = f->sdepth.len = 0;
    use(f, body, new_scope(f, -1));
    for (size_t k = all.len; k-- > 0;) {
        ir_expr *e = all.data[k];
        int s = f->scope[e->id];
        if (s < 0)
            continue;
        switch (e->kind) {
        case IR_IF:
            use(f, e->u.if_.cond, s);
            f->child_a[e->id] = new_scope(f, s);
            f->child_b[e->id] = new_scope(f, s);
            use(f, e->u.if_.then_branch, f->child_a[e->id]);
            use(f, e->u.if_.else_branch, f->child_b[e->id]);
            break;
        case IR_LET:
            f->child_a[e->id] = new_scope(f, s);
            f->child_b[e->id] = new_scope(f, s);
            use(f, e->u.let.value, f->child_a[e->id]);
            use(f, e->u.let.body, f->child_b[e->id]);
            break;
        case IR_FUNC:
            if (!ir_func_is_primitive(e)) {
                f->child_a[e->id] = new_scope(f, s);
                use(f, e->u.func.body, f->child_a[e->id]);
            }
            break;
        default: /* calls, tuples, projections: operands are used where the node is */
            for (int i = 0; i < ir_expr_nchildren(e); i++)
                use(f, ir_expr_child(e, i), s);
            break;
        }
    }
    free(f->all);
    f->all = all.data;
    f->nall = all.len;
}

static void add_edge(fuser *f, ir_expr *from, int to, ir_op_pattern pat)
{
    int gi = graph_index(f, from);
    if (gi < 0)
        return;
    gnode *src = &f->g[gi];
    if (to < 0) {
        src->extern_ref = true;
        return;
    }
    edge *ed = su_arena_alloc(&f->edges, sizeof *ed);
    *ed = (edge){to, pat, src->outputs};
    src->outputs = ed;
}

/* Marks a graph node reached from inside a nested body as used outside;
 * the walk goes no further through it. */
static ir_visit_step mark_nested_ref(ir_visitor *v, const ir_expr *e)
{
    fuser *f = v->ctx;
    grow(f, e->id);
    if (is_atom(e))
        return IR_VISIT_SKIP;
    int gi = graph_index(f, e);
    if (gi < 0)
        return IR_VISIT_DESCEND;
    f->g[gi].extern_ref = true;
    return IR_VISIT_SKIP;
}

/* Marks the graph nodes that the bodies nested in e (an if, let or
 * function of this graph) refer to; an if's condition is an edge of the
 * graph itself, made by build_edges. */
static void mark_nested_refs(fuser *f, ir_expr *e)
{
    ir_visitor v;
    ir_visitor_init(&v, mark_nested_ref, NULL, f);
    for (int i = e->kind == IR_IF; i < ir_expr_nchildren(e); i++)
        ir_visit(&v, ir_expr_child(e, i));
    ir_visitor_free(&v);
}

static bool same_shape(const ir_type *a, const ir_type *b)
{
    return a && b && a->kind == IR_TY_TENSOR && b->kind == IR_TY_TENSOR && a->ndim == b->ndim &&
           (a->ndim == 0 || memcmp(a->shape, b->shape, sizeof *a->shape * (size_t)a->ndim) == 0);
}

static bool all_tensor_fields(const ir_type *t)
{
    for (int i = 0; t && i < t->nfields; i++)
        if (t->fields[i]->kind != IR_TY_TENSOR)
            return false;
    return t != NULL;
}

static void build_edges(fuser *f, int i)
{
    gnode *gn = &f->g[i];
    ir_expr *e = gn->e;
    const ir_op_def *op = ir_call_op(e);
    if (op) {
        gn->pattern = op->pattern;
        for (int k = 0; k < e->u.call.nargs; k++) {
            ir_expr *a = e->u.call.args[k];
            ir_op_pattern ep = op->pattern;
            if (ep == IR_PAT_BROADCAST && same_shape(a->type, e->type))
                ep = IR_PAT_ELEMWISE;
            add_edge(f, a, i, ep);
        }
    } else if (e->kind == IR_CALL) {
        gn->pattern = IR_PAT_OPAQUE;
        add_edge(f, e->u.call.fn, i, IR_PAT_OPAQUE);
        for (int k = 0; k < e->u.call.nargs; k++)
            add_edge(f, e->u.call.args[k], i, IR_PAT_OPAQUE);
    } else if (e->kind == IR_TUPLE) {
        gn->pattern = IR_PAT_TUPLE;
        for (int k = 0; k < e->u.tuple.n; k++)
            add_edge(f, e->u.tuple.fields[k], i, IR_PAT_INJECTIVE);
    } else if (e->kind == IR_PROJ) {
        gn->pattern = IR_PAT_INJECTIVE;
        if (all_tensor_fields(e->u.proj.tuple->type))
            add_edge(f, e->u.proj.tuple, i, IR_PAT_INJECTIVE);
        else
            add_edge(f, e->u.proj.tuple, -1, IR_PAT_OPAQUE);
    } else {
        gn->pattern = IR_PAT_OPAQUE;
        if (e->kind == IR_IF)
            add_edge(f, e->u.if_.cond, -1, IR_PAT_OPAQUE);
        mark_nested_refs(f, e);
    }
}

/* ---- post-dominator tree ---- */

static int lca(fuser *f, int a, int b, ir_op_pattern *pat)
{
    while (a != b) {
        if (a == NO_PARENT || b == NO_PARENT)
            return NO_PARENT;
        if (f->g[a].depth < f->g[b].depth) {
            *pat = combine(*pat, f->g[b].pdom_pat);
            b = f->g[b].pdom;
        } else if (f->g[b].depth < f->g[a].depth) {
            *pat = combine(*pat, f->g[a].pdom_pat);
            a = f->g[a].pdom;
        } else {
            *pat = combine(*pat, combine(f->g[a].pdom_pat, f->g[b].pdom_pat));
            a = f->g[a].pdom;
            b = f->g[b].pdom;
        }
    }
    return a;
}

static void post_dominators(fuser *f)
{
    for (int i = f->n - 1; i >= 0; i--) {
        gnode *gn = &f->g[i];
        if (gn->extern_ref || !gn->outputs) {
            gn->pdom = NO_PARENT;
            gn->depth = 1;
            gn->pdom_pat = IR_PAT_OPAQUE;
            continue;
        }
        ir_op_pattern pat = IR_PAT_ELEMWISE;
        edge *ed = gn->outputs;
        int p = ed->to;
        pat = combine(pat, ed->pat);
        for (ed = ed->next; ed; ed = ed->next) {
            p = lca(f, p, ed->to, &pat);
            pat = combine(pat, ed->pat);
        }
        gn->pdom = p;
        gn->depth = p == NO_PARENT ? 1 : f->g[p].depth + 1;
        gn->pdom_pat = pat;
    }
}

/* ---- groups ---- */

static int root_of(fuser *f, int i)
{
    while (f->g[i].parent != i) {
        f->g[i].parent = f->g[f->g[i].parent].parent;
        i = f->g[i].parent;
    }
    return i;
}

static void merge(fuser *f, int child, int parent)
{
    child = root_of(f, child);
    parent = root_of(f, parent);
    if (child == parent)
        return;
    f->g[parent].num_nodes += f->g[child].num_nodes;
    f->g[child].parent = parent;
    if (f->g[child].has_anchor) {
        f->g[parent].has_anchor = true;
        f->g[parent].gpattern = combine(f->g[child].gpattern, f->g[parent].gpattern);
    }
}

typedef bool (*path_cond)(ir_op_pattern p, bool is_sink);

static bool check_path_(fuser *f, int src, int sink, path_cond cond)
{
    if (f->visited[src])
        return true;
    f->visited[src] = true;
    if (!cond(f->g[root_of(f, src)].gpattern, src == sink))
        return false;
    if (src == sink)
        return true;
    for (edge *ed = f->g[src].outputs; ed; ed = ed->next)
        if (!check_path_(f, ed->to, sink, cond))
            return false;
    return true;
}

static bool check_path(fuser *f, int src, int sink, path_cond cond)
{
    memset(f->visited, 0, sizeof *f->visited * (size_t)f->n);
    for (edge *ed = f->g[src].outputs; ed; ed = ed->next)
        if (!check_path_(f, ed->to, sink, cond))
            return false;
    return true;
}

static void commit_(fuser *f, int src, int sink, int target)
{
    if (src == sink || f->visited[src])
        return;
    f->visited[src] = true;
    merge(f, src, target);
    for (edge *ed = f->g[src].outputs; ed; ed = ed->next)
        commit_(f, ed->to, sink, target);
}

static void commit(fuser *f, int src, int sink)
{
    memset(f->visited, 0, sizeof *f->visited * (size_t)f->n);
    commit_(f, src, sink, sink);
}

static int count_upto_(fuser *f, int src, int sink)
{
    if (src == sink || f->visited[src])
        return 0;
    f->visited[src] = true;
    int sum = f->g[src].num_nodes;
    for (edge *ed = f->g[src].outputs; ed; ed = ed->next)
        sum += count_upto_(f, ed->to, sink);
    return sum;
}

static int count_with_child(fuser *f, int child, int sink)
{
    memset(f->visited, 0, sizeof *f->visited * (size_t)f->n);
    return f->g[root_of(f, sink)].num_nodes + count_upto_(f, child, sink);
}

static bool cond_broadcast(ir_op_pattern p, bool sink) { (void)sink; return p <= IR_PAT_BROADCAST; }
static bool cond_injective(ir_op_pattern p, bool sink) { (void)sink; return p <= IR_PAT_INJECTIVE; }
static bool cond_into_anchor(ir_op_pattern p, bool sink)
{
    return sink ? p <= IR_PAT_BROADCAST || p == IR_PAT_COMM_REDUCE || p == IR_PAT_INJECTIVE ||
                      p == IR_PAT_OUT_EWISE_FUSABLE
                : p <= IR_PAT_INJECTIVE;
}

static void run_phase(fuser *f, int phase)
{
    for (int i = 0; i < f->n; i++) {
        gnode *gn = &f->g[i];
        int gi = root_of(f, i);
        int dp = gn->pdom;
        if (dp == NO_PARENT || f->g[gi].gpattern == IR_PAT_OPAQUE)
            continue;
        if (count_with_child(f, i, dp) > f->max_depth)
            continue;
        int dpr = root_of(f, dp);
        if (phase == 2) {
            if (f->g[gi].gpattern > IR_PAT_INJECTIVE || f->g[dpr].gpattern == IR_PAT_TUPLE)
                continue;
            if (f->g[dp].gpattern == IR_PAT_TUPLE && f->g[dpr].gpattern <= IR_PAT_INJECTIVE &&
                check_path(f, i, dp, cond_injective))
                commit(f, i, dp);
            continue;
        }
        if (gi == dpr || f->g[dpr].gpattern == IR_PAT_TUPLE)
            continue;
        ir_op_pattern gp = f->g[gi].gpattern;
        if (gp == IR_PAT_OUT_EWISE_FUSABLE) {
            if (phase == 0 && gn->pdom_pat == IR_PAT_ELEMWISE && check_path(f, i, dp, cond_broadcast))
                commit(f, i, dp);
        } else if (gp <= IR_PAT_BROADCAST) {
            if ((gn->pdom_pat <= IR_PAT_INJECTIVE || gn->pdom_pat == IR_PAT_COMM_REDUCE) &&
                check_path(f, i, dp, cond_into_anchor))
                commit(f, i, dp);
        } else if (gp == IR_PAT_INJECTIVE || gp == IR_PAT_TUPLE) {
            if (phase == 1 && check_path(f, i, dp, cond_injective))
                commit(f, i, dp);
        }
    }
}

/* ---- turning groups into primitive functions ---- */

/* The expression that replaces x in the rewritten body (x itself for atoms
 * and for nodes of no graph). */
static ir_expr *outer(fuser *f, ir_expr *x)
{
    return !is_atom(x) && x->id < f->cap && f->repl[x->id] ? f->repl[x->id] : x;
}

typedef struct builder {
    fuser *f;
    int group;                  /* root index of the group being built */
    ir_expr **inner;            /* copy of a member inside the function, by graph index */
    SU_VEC(ir_expr *) inputs;   /* outside values, in order of first use */
    SU_VEC(ir_expr *) params;   /* one parameter per input */
} builder;

static bool in_group(builder *b, const ir_expr *x)
{
    int gi = graph_index(b->f, x);
    return gi >= 0 && root_of(b->f, gi) == b->group;
}

/* The value of operand x inside the function being built. */
static ir_expr *operand(builder *b, ir_expr *x)
{
    if (in_group(b, x))
        return b->inner[graph_index(b->f, x)];
    if ((x->kind == IR_CONST && x->u.constant.value->ndim == 0) || x->kind == IR_OP || x->kind == IR_GLOBAL)
        return x;
    for (size_t i = 0; i < b->inputs.len; i++)
        if (b->inputs.data[i] == x)
            return b->params.data[i];
    char name[32];
    snprintf(name, sizeof name, "p%zu", b->inputs.len);
    ir_expr *v = ir_var(b->f->m, x->span, name, x->type);
    v->type = x->type;
    su_vec_push(&b->inputs, x);
    su_vec_push(&b->params, v);
    return v;
}

static ir_expr *member_operand(void *ctx, const ir_expr *e, int i, ir_expr *x)
{
    (void)e, (void)i;
    return operand(ctx, x);
}

/* A member inside the function: its operands are the group's copies and
 * parameters (an op's callee stays itself), typed as it was. */
static ir_expr *copy_member(builder *b, ir_expr *e)
{
    ir_expr *r = tr_rebuild(b->f->m, e, member_operand, b);
    r->type = e->type;
    return r;
}

/* Builds `fn (%p0, ...) Primitive=1 { members }` for the group whose root is
 * graph node root and returns its call on the outer values of its inputs. */
static ir_expr *build_group(fuser *f, int root)
{
    builder b = {f, root_of(f, root), su_calloc((size_t)f->n + 1, sizeof(ir_expr *)), {0}, {0}};
    for (int i = 0; i <= root; i++)
        if (root_of(f, i) == b.group)
            b.inner[i] = copy_member(&b, f->g[i].e);
    ir_module *m = f->m;
    su_span sp = f->g[root].e->span;
    ir_attr_kv prim = {"Primitive", {.kind = IR_AV_INT, .i = 1}};
    ir_expr *fn = ir_func(m, sp, (int)b.params.len, b.params.data, NULL, b.inner[root], 1, &prim);
    ir_expr **args = su_malloc(sizeof *args * (b.inputs.len + 1));
    for (size_t i = 0; i < b.inputs.len; i++)
        args[i] = outer(f, b.inputs.data[i]);
    ir_expr *call = ir_call(m, sp, fn, (int)b.inputs.len, args, NULL);
    free(args);
    free(b.inner);
    su_vec_free(&b.inputs);
    su_vec_free(&b.params);
    return call;
}

/* The operand of a node that is not fused: a value computed in this graph
 * or an enclosing one is its replacement there; a nested body (if branch,
 * let part, function body) is fused in turn. */
static ir_expr *plain_operand(void *ctx, const ir_expr *e, int i, ir_expr *x)
{
    fuser *f = ctx;
    switch (e->kind) {
    case IR_IF: return i == 0 ? outer(f, x) : fuse_body(f, x, i == 1 ? f->child_a[e->id] : f->child_b[e->id]);
    case IR_LET: return fuse_body(f, x, i == 0 ? f->child_a[e->id] : f->child_b[e->id]);
    case IR_FUNC: return ir_func_is_primitive(e) ? x : fuse_body(f, x, f->child_a[e->id]);
    default: return outer(f, x);
    }
}

/* Partitions the built graph and rewrites it in topological order: a group
 * is built when its root (its last node) is reached. */
static void partition_and_rewrite(fuser *f, ir_expr *root)
{
    for (int i = 0; i < f->n; i++)
        build_edges(f, i);
    f->g[f->owner[root->id] - 1].extern_ref = true;
    for (int i = 0; i < f->n; i++) {
        f->g[i].gpattern = f->g[i].pattern;
        f->g[i].has_anchor = f->g[i].pattern == IR_PAT_OUT_EWISE_FUSABLE;
    }
    post_dominators(f);
    for (int phase = 0; phase < 3; phase++)
        run_phase(f, phase);
    for (int i = 0; i < f->n; i++) {
        ir_expr *e = f->g[i].e;
        if (root_of(f, i) != i)
            continue; /* a member: it lives inside its group's function */
        bool op_group = ir_call_op(e) || f->g[i].num_nodes > 1;
        f->repl[e->id] = op_group ? build_group(f, i) : tr_rebuild(f->m, e, plain_operand, f);
    }
}

/* Fuses the graph of body `scope` (whose result is root) and returns the
 * rewritten body. */
static ir_expr *fuse_body(fuser *f, ir_expr *root, int scope)
{
    if (is_atom(root) || f->scope[root->id] != scope)
        return outer(f, root); /* the result is computed in an enclosing body */
    if (++f->depth > 1000) {
        f->failed = true;
        f->depth--;
        return root;
    }
    /* the graph of an enclosing body is kept aside while this one is fused */
    gnode *saved_g = f->g;
    int saved_n = f->n, saved_scope = f->cur_scope;
    bool *saved_vis = f->visited;
    f->cur_scope = scope;
    int n = 0;
    for (size_t i = 0; i < f->nall; i++)
        n += f->scope[f->all[i]->id] == scope;
    f->g = su_calloc((size_t)n + 1, sizeof *f->g);
    f->visited = su_calloc((size_t)n + 1, sizeof *f->visited);
    f->n = 0;
    for (size_t i = 0; i < f->nall; i++) {
        ir_expr *e = f->all[i];
        if (f->scope[e->id] != scope)
            continue;
        f->g[f->n] = (gnode){.e = e, .parent = f->n, .num_nodes = 1};
        f->owner[e->id] = ++f->n;
    }
    partition_and_rewrite(f, root);
    ir_expr *result = f->repl[root->id];
    for (int i = 0; i < f->n; i++)
        f->owner[f->g[i].e->id] = 0;
    free(f->g);
    free(f->visited);
    f->g = saved_g;
    f->n = saved_n;
    f->cur_scope = saved_scope;
    f->visited = saved_vis;
    f->depth--;
    return result;
}

/* A def's function takes its fused body (ctx). */
static ir_expr *fused_body(void *ctx, const ir_expr *e, int i, ir_expr *x)
{
    (void)e, (void)i, (void)x;
    return ctx;
}

bool tr_fuse_ops(ir_module *m, const tr_options *o, su_diags *d)
{
    fuser f = {.m = m, .max_depth = o && o->max_fuse_depth > 0 ? o->max_fuse_depth : 256};
    su_arena_init(&f.edges);
    for (size_t i = 0; i < m->defs.len; i++) {
        ir_global_def *g = &m->defs.data[i];
        place_def(&f, g->func->u.func.body);
        ir_expr *body = fuse_body(&f, g->func->u.func.body, 0);
        if (body != g->func->u.func.body) {
            g->func = tr_rebuild(m, g->func, fused_body, body);
            g->global->type = NULL;
        }
    }
    free(f.repl);
    free(f.owner);
    free(f.scope);
    free(f.child_a);
    free(f.child_b);
    free(f.all);
    su_vec_free(&f.sparent);
    su_vec_free(&f.sdepth);
    su_arena_free(&f.edges);
    if (f.failed)
        su_error(d, (su_span){0}, "fuse-ops: the program is nested too deeply");
    return !f.failed;
}
