/* test_schedule.c — schedules: the stages a fused function becomes,
 * primitives (split/fuse round trips, reorder, annotations, compute_at,
 * cache_write, pack) and their typed errors, traces (print, JSON, replay),
 * config spaces (JSON round trip and checking), and golden LoopIR of small
 * functions under their default schedules (tests/schedule/golden/). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/codegen/harness.h"
#include "tests/tap.h"

#define HDR "#[version = \"0.0.5\"]\n"

static const char *CONV = HDR
    "def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 3, 3), float32], %b: Tensor[(8), float32]) {\n"
    "  nn.relu(nn.bias_add(nn.conv2d(%x, %w, padding=[1, 1]), %b))\n"
    "}\n";
static const char *EW = HDR "def @main(%x: Tensor[(4, 64), float32]) { exp(%x) }\n";
static const char *POOL = HDR
    "def @main(%x: Tensor[(1, 32, 56, 56), float32]) { nn.max_pool2d(%x, pool_size=[3, 3], padding=[1, 1]) }\n";
static const char *DENSE = HDR
    "def @main(%x: Tensor[(8, 16), float32], %w: Tensor[(32, 16), float32]) { nn.dense(%x, %w) }\n";

/* The primitive function of a model with the anchor (or the last one). */
static const ir_expr *prim(ir_module *m)
{
    return hx_last_primitive(m);
}

static sch_schedule *create(const ir_expr *f)
{
    return hx_schedule(f);
}

/* LoopIR text of a schedule (malloc'd). */
static char *lowered(sch_schedule *s, bool hoist)
{
    bool consts[16] = {true, true, true, true, true, true, true, true};
    sch_lower_opts o = {consts, hoist, false};
    sch_lowered *l = sch_lower(s, &o);
    su_buf b = {0};
    if (!l) {
        su_buf_printf(&b, "error: %s", s->err_msg);
        return su_buf_take(&b);
    }
    for (int i = 0; i < l->nprologues; i++)
        sch_print_func(&b, l->prologues[i].fn);
    sch_print_func(&b, l->kernel);
    return su_buf_take(&b);
}

static char *golden(const char *name)
{
    const char *dir = getenv("top_srcdir");
    su_buf p = {0};
    su_buf_printf(&p, "%s/tests/schedule/golden/%s", dir ? dir : ".", name);
    size_t n;
    char *t = su_read_file(su_buf_str(&p), &n);
    su_buf_free(&p);
    return t;
}

static void check_golden(const char *name, const char *got)
{
    char *want = golden(name);
    if (getenv("RT_UPDATE_GOLDEN")) {
        const char *dir = getenv("top_srcdir");
        su_buf p = {0};
        su_buf_printf(&p, "%s/tests/schedule/golden/%s", dir ? dir : ".", name);
        FILE *f = fopen(su_buf_str(&p), "w");
        if (f) {
            fputs(got, f);
            fclose(f);
        }
        su_buf_free(&p);
    }
    is_str(got, want ? want : "(missing golden file)", "golden LoopIR %s", name);
    free(want);
}

static sch_iter *it(sch_tensor *t, const char *name)
{
    return sch_find_iter(t, name);
}

/* The function of model text (in *m, *f) scheduled by its template with
 * the defaults, its space in sp. */
static sch_schedule *with_defaults(const char *name, const char *text, ir_module **m, const ir_expr **f, sch_space *sp)
{
    *m = hx_load(name, text);
    *f = prim(*m);
    sch_schedule *s = create(*f);
    is_int(sch_apply_template(s, NULL, NULL, NULL, sp), SCH_E_OK, "the template of %s runs with its defaults", name);
    return s;
}

/* The default template's knobs, on a pooling: the space as printed, and
 * what non-default values do to the loop nest. */
static void test_default_space(void)
{
    ir_module *m;
    const ir_expr *f;
    sch_space sp = {0};
    sch_schedule *s = with_defaults("pool", POOL, &m, &f, &sp);
    su_buf b = {0};
    sch_space_print(&b, &sp);
    ok(strstr(su_buf_str(&b), "template default (version 2):") &&
           strstr(su_buf_str(&b), "  tile_vec: split 56 into 2: *[1,56] [2,28] ") &&
           strstr(su_buf_str(&b), "  par_depth: choice: 0 1 2 *3\n") &&
           strstr(su_buf_str(&b), "  unroll_red: annotate kw: *none unroll\n"),
       "the pooling's space: vector tile, parallel depth, window unrolling");
    char *dflt = lowered(s, false);
    sch_free(s);
    /* the default config is the template's own schedule; others change it */
    sch_config c;
    sch_config_default(&sp, &c);
    s = create(f);
    sch_apply_template(s, NULL, NULL, &c, NULL);
    char *again = lowered(s, false);
    is_str(again, dflt, "the default config lowers as no config does");
    free(again);
    sch_free(s);
    c.choice[0] = 3;                   /* tile_vec [7,8] */
    c.choice[1] = 1;                   /* the batch loop alone parallel */
    c.choice[2] = 1;                   /* unroll the window's row */
    s = create(f);
    is_int(sch_apply_template(s, NULL, NULL, &c, NULL), SCH_E_OK, "a non-default config applies");
    char *other = lowered(s, false);
    /* the input padded with -inf is a stage of its own before the pool's
     * nest (compute_nn.c), parallel by sch_tmpl_root's rule: the knobs are
     * the pool's, so its nest is what they change */
    const char *copy = strstr(other, "= select("), *pool = copy ? strstr(copy, "\n  for ") : NULL;
    ok(pool && strstr(pool, "vectorized for ow.i in 0..8 {") && strstr(pool, "unrolled for kw in 0..3 {") &&
           !strstr(pool, "parallel for"),
       "it tiles the vector loop, unrolls the window and leaves the batch of one serial");
    free(other);
    sch_free(s);
    sch_config_free(&c);
    free(dflt);
    su_buf_free(&b);
    sch_space_free(&sp);
    ir_module_free(m);
}

/* A dense whose k blocks sit outside its row tiles: the product of a
 * column panel accumulates in a buffer, and each row tile in a local tile
 * of its own around the inner k loop (what keeps it in registers). */
static void test_blocked_reduction(void)
{
    ir_module *m;
    const ir_expr *f;
    sch_space sp = {0};
    sch_free(with_defaults("dense", DENSE, &m, &f, &sp));
    sch_schedule *s;
    sch_config c;
    char *why = NULL;
    ok(sch_config_parse(&sp, "{\"knobs\":{\"tile_x\":[2,16],\"tile_y\":[2,4],\"pack_weight\":1,\"tile_k\":[2,8],"
                             "\"order_k\":[1,0]}}", &c, &why),
       "a config with k blocks outside the rows (%s)", why ? why : "parsed");
    free(why);
    s = create(f);
    is_int(sch_apply_template(s, NULL, NULL, &c, NULL), SCH_E_OK, "it applies");
    char *text = lowered(s, false);
    ok(strstr(text, "alloc l0: float32[8, 16] local") && strstr(text, "alloc l1: float32[4, 16] local") &&
           strstr(text, "l1[j.i + i.i * 16] = l0[") && strstr(text, "l1[j.i + i.i * 16] = l1[j.i + i.i * 16] + ") &&
           strstr(text, "= l1[j.i + i.i * 16]"),
       "the panel's buffer, and a tile loaded, accumulated and stored around k.i");
    free(text);
    sch_free(s);
    sch_config_free(&c);
    sch_space_free(&sp);
    ir_module_free(m);
}

/* Splits whose factor does not divide (lower.c's partition): a vectorized
 * or unrolled inner part gets full tiles without a guard and a tail of the
 * remainder's constant extent; two such axes give four parts; a reduction
 * axis likewise; a serial inner part keeps its guard. */
static const char *EW109 = HDR "def @main(%x: Tensor[(13, 109), float32]) { exp(%x) }\n";
static const char *DENSE109 = HDR
    "def @main(%x: Tensor[(2, 109), float32], %w: Tensor[(16, 109), float32]) { nn.dense(%x, %w) }\n";

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

static void test_tails(void)
{
    ir_module *m = hx_load("ew109", EW109);
    sch_schedule *s = create(prim(m));
    sch_tensor *out = s->outputs[0];
    sch_iter *o, *i, *o0, *i0;
    ok(!sch_split(s, out, it(out, "ax1"), 16, &o, &i) && !sch_annotate(s, out, i, SCH_LOOP_VECTORIZED),
       "split 109 by 16, its inner part vectorized");
    char *text = lowered(s, false);
    ok(strstr(text, "for ax1.o in 0..6 {") && strstr(text, "vectorized for ax1.i in 0..16 {") &&
           strstr(text, "vectorized for ax1.i in 0..13 {") && strstr(text, "o0[ax0 * 109 + ax1.i + 96] = ") &&
           !strstr(text, "if ("),
       "6 full tiles without a guard, then a 13-tail at 96");
    check_golden("tail_109.txt", text);
    free(text);
    ok(!sch_split(s, out, it(out, "ax0"), 4, &o0, &i0) && !sch_reorder(s, out, 4, (sch_iter *[]){o0, o, i0, i}) &&
           !sch_annotate(s, out, i0, SCH_LOOP_UNROLLED),
       "and 13 by 4 unrolled, inside both outer loops");
    text = lowered(s, false);
    ok(count(text, "unrolled for ax0.i in 0..4 {") == 2 && count(text, "unrolled for ax0.i in 0..1 {") == 0 &&
           count(text, "vectorized for ax1.i in 0..16 {") == 2 && count(text, "vectorized for ax1.i in 0..13 {") == 2 &&
           strstr(text, "o0[ax1.i + 1404] = ") && !strstr(text, "if ("),
       "four parts: full x full, full x tail, tail (one row) x full, tail x tail");
    check_golden("tail_nested.txt", text);
    free(text);
    sch_free(s);
    /* a serial inner part keeps its guard (no copy of the body) */
    s = create(prim(m));
    out = s->outputs[0];
    ok(!sch_split(s, out, it(out, "ax1"), 16, &o, &i), "split 109 by 16, left serial");
    text = lowered(s, false);
    ok(strstr(text, "if (ax1.o * 16 + ax1.i < 109)") && count(text, "for ax1.i in") == 1,
       "a serial split keeps one loop and its guard");
    free(text);
    sch_free(s);
    ir_module_free(m);

    /* a reduction axis: k (109) by 16, unrolled */
    m = hx_load("dense109", DENSE109);
    s = create(prim(m));
    out = s->outputs[0];
    ok(!sch_split(s, out, it(out, "k"), 16, &o, &i) && !sch_annotate(s, out, i, SCH_LOOP_UNROLLED) &&
           !sch_annotate(s, out, it(out, "j"), SCH_LOOP_PARALLEL),
       "split the reduction 109 by 16, unrolled");
    text = lowered(s, false);
    ok(strstr(text, "for k.o in 0..6 {") && strstr(text, "unrolled for k.i in 0..16 {") &&
           strstr(text, "unrolled for k.i in 0..13 {") && !strstr(text, "if ("),
       "the reduction's full blocks and its 13-tail, no guard");
    check_golden("tail_reduction.txt", text);
    free(text);
    sch_free(s);
    ir_module_free(m);
}

int main(void)
{
    /* ---- stages of a fused conv ---- */
    ir_module *mc = hx_load("conv", CONV);
    const ir_expr *fc = prim(mc);
    sch_schedule *s = create(fc);
    ok(s != NULL, "a fused conv becomes a schedule");
    sch_tensor *conv = sch_find_tensor(s, "conv2d1"), *pad = sch_find_tensor(s, "pad0");
    ok(conv && conv->reduce == SCH_RED_SUM && conv->nraxes == 3, "conv2d is a sum over ic, kh, kw");
    ok(pad && pad->attach == SCH_ATTACH_INLINE, "its padding starts inlined");
    ok(s->noutputs == 1 && s->outputs[0]->attach == SCH_ATTACH_ROOT, "the epilogue is the output, at the root");
    is_str(sch_template_name(s), "conv2d_nchw", "the template family from the anchor");
    ok(sch_anchor(s) == conv, "the anchor is the conv");
    char *naive = lowered(s, false);
    check_golden("conv2d_naive.txt", naive);
    free(naive);

    /* ---- typed errors naming the loops ---- */
    sch_tensor *out = s->outputs[0];
    sch_iter *o, *i;
    is_int(sch_split(s, conv, it(conv, "oc"), 0, &o, &i), SCH_E_BAD_FACTOR, "split by 0");
    is_int(sch_split(s, conv, it(conv, "nope"), 2, &o, &i), SCH_E_NO_ITER, "split of an unknown loop");
    is_int(sch_fuse(s, conv, it(conv, "n"), it(conv, "oh"), NULL), SCH_E_NOT_ADJACENT, "fuse of loops not adjacent");
    ok(s->err_msg && strstr(s->err_msg, "oh") && strstr(s->err_msg, "n"), "the message names the loops: %s",
       s->err_msg);
    is_int(sch_fuse(s, conv, it(conv, "ow"), it(conv, "ic"), NULL), SCH_E_MIXED_REDUCE, "fuse of spatial and reduction");
    is_int(sch_annotate(s, conv, it(conv, "kh"), SCH_LOOP_VECTORIZED), SCH_E_BAD_ANNOTATION, "vectorizing a reduction");
    is_int(sch_annotate(s, conv, it(conv, "oc"), SCH_LOOP_UNROLLED), SCH_E_OK, "unrolling a short loop");
    is_int(sch_compute_at(s, out, conv, it(conv, "n")), SCH_E_BAD_ATTACH, "compute_at of an output");
    is_int(sch_compute_inline(s, conv), SCH_E_BAD_ATTACH, "inlining a reduction");
    ok(s->trace.len == 1, "failed primitives leave no trace (%zu steps)", s->trace.len);
    sch_free(s);

    /* ---- split then fuse round-trips ---- */
    ir_module *me = hx_load("ew", EW);
    s = create(prim(me));
    out = s->outputs[0];
    char *before = lowered(s, false);
    sch_iter *ax1 = it(out, "ax1"), *f;
    ok(!sch_split(s, out, ax1, 16, &o, &i) && !sch_fuse(s, out, o, i, &f), "split ax1 by 16, fuse it back");
    char *after = lowered(s, false);
    const char *want_store = "o0[ax0 * 64 + ax1.o.ax1.i.f] = exp(p0[ax0 * 64 + ax1.o.ax1.i.f])";
    ok(strstr(after, want_store) != NULL, "the fused loop indexes like the original: %s", want_store);
    ok(strstr(before, "o0[ax0 * 64 + ax1] = exp(p0[ax0 * 64 + ax1])") != NULL, "the original indexing");
    free(before);
    free(after);
    /* split with a factor that does not divide: a guard */
    sch_iter *ax0 = it(out, "ax0");
    ok(!sch_split(s, out, ax0, 3, &o, &i), "split ax0 (4) by 3");
    after = lowered(s, false);
    ok(strstr(after, "if (ax0.o * 3 + ax0.i < 4)") != NULL, "a guard for the last, partial block");
    free(after);
    /* reorder */
    ok(!sch_reorder(s, out, 2, (sch_iter *[]){f, o}), "reorder the fused loop outside ax0.o");
    is_str(out->leaves.data[0]->name, "ax1.o.ax1.i.f", "reorder moved the loop");
    ok(!sch_annotate(s, out, f, SCH_LOOP_PARALLEL) && !sch_annotate(s, out, i, SCH_LOOP_VECTORIZED), "annotate");
    after = lowered(s, false);
    ok(strstr(after, "parallel for ax1.o.ax1.i.f in 0..64") && strstr(after, "vectorized for ax0.i in 0..3"),
       "annotations reach LoopIR");
    free(after);
    su_buf tb = {0};
    sch_trace_print(&tb, s);
    is_str(su_buf_str(&tb),
           "split(exp0, ax1, 16)\nfuse(exp0, ax1.o, ax1.i)\nsplit(exp0, ax0, 3)\n"
           "reorder(exp0, ax1.o.ax1.i.f, ax0.o)\nannotate(exp0, ax1.o.ax1.i.f, parallel)\n"
           "annotate(exp0, ax0.i, vectorized)\n",
           "the trace prints one primitive a line");
    su_buf_free(&tb);
    /* replay of the JSON trace on a fresh schedule gives the same LoopIR */
    char *json = sch_trace_json(s);
    sch_schedule *s2 = create(prim(me));
    is_int(sch_trace_replay_json(s2, json), SCH_E_OK, "the JSON trace replays");
    char *l1 = lowered(s, false), *l2 = lowered(s2, false);
    is_str(l2, l1, "replay gives the same LoopIR");
    free(l1);
    free(l2);
    free(json);
    is_int(sch_trace_replay_json(s2, "[{\"p\":\"split\",\"stage\":\"exp0\",\"loops\":[\"zz\"],\"value\":2}]"),
           SCH_E_NO_ITER, "a trace naming an unknown loop fails typed");
    is_int(sch_trace_replay_json(s2, "{"), SCH_E_BAD_TRACE, "malformed JSON is a bad trace");
    sch_free(s2);
    sch_free(s);

    /* ---- compute_at and cache_write: an accumulator tile ---- */
    ir_module *md = hx_load("dense", DENSE);
    s = create(prim(md));
    sch_tensor *d = sch_anchor(s), *cache;
    ok(d && d->output == 0, "dense alone is its own output");
    is_int(sch_cache_write(s, d, &cache), SCH_E_OK, "cache_write");
    ok(cache && cache->reduce == SCH_RED_SUM && d->reduce == SCH_RED_NONE && sch_anchor(s) == cache,
       "the cache computes the sum; the output copies it");
    sch_iter *jo, *ji;
    ok(!sch_split(s, d, it(d, "j"), 8, &jo, &ji), "tile the output");
    is_int(sch_compute_at(s, cache, d, jo), SCH_E_OK, "compute the product at the tile loop");
    is_int(sch_reorder(s, cache, 3, (sch_iter *[]){it(cache, "k"), it(cache, "i"), it(cache, "j")}), SCH_E_OK,
           "reduction outermost in the cache");
    after = lowered(s, false);
    ok(strstr(after, "alloc l0: float32[1, 8] local") != NULL, "an accumulator of one tile (8)");
    ok(strstr(after, "l0[j] = l0[j] + p0[i * 16 + k] * p1[j.o * 128 + j * 16 + k]") != NULL,
       "the tile accumulates at local indices");
    ok(strstr(after, "o0[i * 32 + j.o * 8 + j.i] = l0[j.i]") != NULL, "the output reads the tile once");
    free(after);
    sch_free(s);

    /* ---- pack: a weight layout; hoisted into a prologue ---- */
    s = create(prim(md));
    d = sch_anchor(s);
    sch_tensor *pk;
    is_int(sch_pack(s, d, sch_find_tensor(s, "p1"), 0, 16, &pk), SCH_E_OK, "pack the weight (32, 16) by 16 rows");
    ok(pk && pk->ndim == 3 && pk->shape[0] == 2 && pk->shape[1] == 16 && pk->shape[2] == 16, "to (2, 16, 16)");
    after = lowered(s, true);
    ok(strstr(after, "func pack_p1(p0: float32[32, 16], w0: float32[2, 16, 16] out)") != NULL,
       "hoisted: a prologue packs the weight");
    ok(strstr(after, "func kernel(p0: float32[8, 16], p1: float32[32, 16], w0: float32[2, 16, 16], "
                     "o0: float32[8, 32] out)") != NULL, "the kernel takes the packed weight");
    free(after);
    is_int(sch_pack(s, d, sch_find_tensor(s, "p1"), 2, 4, NULL), SCH_E_BAD_ATTACH, "pack of a tensor no longer read");
    sch_free(s);

    /* ---- pack of two axes (OIHW[x]i[y]o) and bind, checked by running ---- */
    s = create(fc);
    conv = sch_find_tensor(s, "conv2d1");
    int axes[2] = {1, 0};
    int64_t factors[2] = {3, 4};
    is_int(sch_pack_axes(s, conv, sch_find_tensor(s, "p1"), 2, axes, factors, &pk), SCH_E_OK,
           "pack the conv weight OIHW -> OIHW[3]i[4]o");
    ok(pk && pk->ndim == 6 && pk->shape[0] == 2 && pk->shape[1] == 2 && pk->shape[4] == 3 && pk->shape[5] == 4,
       "to (2, 2, 3, 3, 3, 4): 4 input channels in blocks of 3, the last block padded");
    out = s->outputs[0];
    is_int(sch_bind(s, out, it(out, "ax1"), 3), SCH_E_OK, "bind the output's channels to local axis x");
    is_int(sch_bind(s, out, it(out, "ax2"), 3), SCH_E_BAD_ANNOTATION, "two loops on one work-item axis");
    is_int(sch_bind(s, conv, it(conv, "kh"), 0), SCH_E_BAD_ANNOTATION, "binding a reduction loop");
    su_buf_free(&tb);
    sch_trace_print(&tb, s);
    is_str(su_buf_str(&tb), "pack(conv2d1, p1, axes=[1, 0], factors=[3, 4])\nannotate(relu3, ax1, thread 3)\n",
           "the trace of a two-axis pack and a bind");
    su_buf_free(&tb);
    json = sch_trace_json(s);
    s2 = create(fc);
    is_int(sch_trace_replay_json(s2, json), SCH_E_OK, "which replays from JSON");
    l1 = lowered(s, true);
    l2 = lowered(s2, true);
    is_str(l2, l1, "to the same LoopIR");
    ok(strstr(l1, "thread (axis 3) for ax1 in 0..8 {") != NULL, "the bound loop in LoopIR");
    free(l1);
    free(l2);
    free(json);
    sch_free(s2);
    {
        bool consts[8] = {true, true, true, true, true, true, true, true};
        sch_lower_opts lo = {consts, true, false};
        hx_kernel k = {.func = fc, .s = s, .l = sch_lower(s, &lo)};
        snprintf(k.name, sizeof k.name, "packed");
        hx_temp_cache();
        int nl = 0;
        tg_lib **lib = k.l ? hx_build(&k, 1, &nl) : NULL;
        hx_tensor *in[4], *want[2], *got[2];
        int ng = 0;
        hx_random_inputs(fc, 5, -1, 1, in);
        hx_ref_run(fc, in, want);
        int rc = lib ? hx_run(&k, in, got, &ng) : -1;
        double err = rc == 0 && ng == 1 ? hx_max_rel_err(got[0], want[0]) : INFINITY;
        ok(err < 1e-4, "the conv with the packed weight and the bound loop computes right (error %.2g)", err);
        for (int p = 0; p < fc->u.func.nparams; p++)
            hx_tensor_free(in[p]);
        hx_tensor_free(want[0]);
        for (int o2 = 0; o2 < ng; o2++)
            hx_tensor_free(got[o2]);
        hx_close(lib, nl);
    }
    sch_free(s);

    /* ---- config spaces ---- */
    s = create(fc);
    sch_space sp = {0};
    is_int(sch_apply_template(s, NULL, NULL, NULL, &sp), SCH_E_OK, "the conv template runs with defaults");
    const sch_knob *k = sch_space_knob(&sp, "tile_oc");
    ok(k && k->kind == SCH_KNOB_SPLIT && k->ncand == 5 && k->cands[2] == 2 && k->cands[3] == 7,
       "tile_oc: the 4 factorizations of 8 and the rule's 7 rows with a tail, [2,7]");
    k = sch_space_knob(&sp, "tile_ic");
    ok(k && k->kind == SCH_KNOB_SPLIT && k->ncand == 3 && k->cands[2 * k->dflt] == 1, "tile_ic: 3 splits of 4, "
       "unblocked by default");
    k = sch_space_knob(&sp, "order_outer");
    ok(k && k->kind == SCH_KNOB_REORDER && k->ncand == 2 && k->dflt == 0 && !strcmp(k->loops[1], "oh"),
       "order_outer: two orders of oc and oh");
    k = sch_space_knob(&sp, "unroll_kw");
    ok(k && k->kind == SCH_KNOB_ANNOTATE && k->ncand == 2 && k->cands[k->dflt] == SCH_LOOP_SERIAL,
       "unroll_kw: annotates kw, none by default");
    ok(sch_space_size(&sp) == 4800, "4800 configs (%lld)", (long long)sch_space_size(&sp));
    sch_config c = {0}, c2 = {0};
    sch_config_default(&sp, &c);
    json = sch_config_json(&sp, &c);
    is_str(json, "{\"template\":\"conv2d_nchw\",\"knobs\":{\"vec_ow\":0,\"tile_oc\":[1,8],\"tile_ow\":[1,6],"
                 "\"tile_ic\":[1,4],\"pad_inline\":0,\"unroll_kw\":[\"none\"],\"pack_weight\":1,"
                 "\"order_outer\":[0,1],\"order_ic\":[0,1]}}", "the default config as JSON");
    char *why = NULL;
    ok(sch_config_parse(&sp, json, &c2, &why) && c2.n == c.n && !memcmp(c.choice, c2.choice, (size_t)c.n * sizeof(int)),
       "JSON round trip");
    sch_config_free(&c2);
    free(json);
    static const struct { const char *json, *why; } bad[] = {
        {"{\"knobs\":{\"vec_ow\":0,\"tile_oc\":[2,4],\"tile_ow\":[1,6],\"tile_ic\":[1,4],\"pad_inline\":0,"
         "\"unroll_kw\":[\"none\"],\"pack_weight\":1,\"order_outer\":[0,1],\"order_ic\":[1,0],\"x\":1}}",
         "unknown knob x"},
        {"{\"knobs\":{\"vec_ow\":0,\"tile_oc\":[3,3],\"tile_ow\":[1,6],\"tile_ic\":[1,4],\"pad_inline\":0,"
         "\"unroll_kw\":[\"none\"],\"pack_weight\":1,\"order_outer\":[0,1],\"order_ic\":[1,0]}}",
         "knob tile_oc has a value outside its candidates"},
        {"{\"knobs\":{\"vec_ow\":0,\"tile_oc\":[2,4],\"tile_ow\":[1,6],\"tile_ic\":[1,4],\"pad_inline\":0,"
         "\"unroll_kw\":[\"vec\"],\"pack_weight\":1,\"order_outer\":[0,1],\"order_ic\":[1,0]}}",
         "knob unroll_kw has a value outside its candidates"},
        {"{\"knobs\":{\"vec_ow\":0,\"tile_oc\":[2,4],\"tile_ow\":[1,6],\"tile_ic\":[1,4],\"pad_inline\":0,"
         "\"unroll_kw\":[\"none\"],\"pack_weight\":1,\"order_outer\":[0,0],\"order_ic\":[1,0]}}",
         "knob order_outer has a value outside its candidates"},
        {"{\"knobs\":{\"vec_ow\":1,\"tile_oc\":[2,4],\"tile_ic\":[1,4],\"pad_inline\":0,\"unroll_kw\":[\"none\"],"
         "\"pack_weight\":1,\"order_outer\":[0,1],\"order_ic\":[1,0]}}",
         "knob tile_ow is missing"},
        {"{\"template\":\"dense\",\"knobs\":{}}", "config is for template dense"},
        {"[1, 2]", "config is not a JSON object"},
    };
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
        why = NULL;
        bool rejected = !sch_config_parse(&sp, bad[b].json, &c2, &why);
        ok(rejected && why && !strcmp(why, bad[b].why), "rejected: %s", why ? why : "(accepted)");
        free(why);
    }
    /* every config of the space schedules and lowers */
    int fails = 0;
    for (int64_t n = 0; n < sch_space_size(&sp); n++) {
        sch_config cfg = {(int)sp.knobs.len, malloc(sp.knobs.len * sizeof(int))};
        int64_t r = n;
        for (size_t kk = 0; kk < sp.knobs.len; kk++) {
            cfg.choice[kk] = (int)(r % sp.knobs.data[kk].ncand);
            r /= sp.knobs.data[kk].ncand;
        }
        sch_schedule *t = create(fc);
        if (sch_apply_template(t, NULL, NULL, &cfg, NULL) || !sch_lower(t, NULL))
            fails++;
        sch_free(t);
        sch_config_free(&cfg);
    }
    is_int(fails, 0, "all 4800 configs lower");
    sch_config c3 = {1, (int[]){0}};
    sch_schedule *t3 = create(fc);
    is_int(sch_apply_template(t3, NULL, NULL, &c3, NULL), SCH_E_BAD_CONFIG, "a config of the wrong size");
    sch_free(t3);
    after = lowered(s, true);
    check_golden("conv2d_default.txt", after);
    free(after);
    su_buf_free(&tb);
    sch_trace_print(&tb, s);
    check_golden("conv2d_default_trace.txt", su_buf_str(&tb));
    su_buf_free(&tb);
    sch_config_free(&c);
    sch_space_free(&sp);
    sch_free(s);

    ir_module_free(mc);
    ir_module_free(me);
    ir_module_free(md);
    test_default_space();
    test_blocked_reduction();
    test_tails();
    return tap_done();
}
