/* test_opencl.c — the OpenCL target on this host's first device (PoCL on a
 * CPU): the target string queries the device; every primitive function of
 * the op models (op_models.h, one per op family plus fused epilogues),
 * lowered with its template's default config and without any schedule, is
 * written as OpenCL C (targets/lang_opencl.c), built with clBuildProgram
 * (one program per model), run on the device on random inputs and compared
 * with the reference kernels of ir/ref_*.c (max error relative to the
 * output's magnitude below 1e-4), the same oracle test_kernels holds the C
 * target to. A host without an OpenCL platform (or a build without OpenCL)
 * skips the whole test and says why. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "tests/codegen/harness.h"
#include "tests/tap.h"
#include "tuner/tuner.h"

#include "tests/codegen/op_models.h"

static const char *const zoo[] = {"resnet18", "mobilenet_v2", "squeezenet1_0", "bert_layer", "mlp"};
enum { NMODELS = sizeof models / sizeof *models, NZOO = sizeof zoo / sizeof *zoo, MAXK = 512 };

/* What the device executor needs to run one kernel of a built program. */
typedef struct cl_job {
    tg_cl_prog *prog;
    char name[32];
    tg_cl_launch launch;    /* how the kernel runs (tg_cl_func) */
    tg_cl_launch pro[8];    /* the same for its prologues */
    char *log;              /* why a run failed */
} cl_job;

static void buffer_bytes(const sch_func *f, int64_t *bytes, bool *out)
{
    for (int i = 0; i < f->nargs; i++) {
        bytes[i] = f->args[i]->size * ir_dtype_bytes(f->args[i]->dtype);
        out[i] = f->args[i]->scope == SCH_SCOPE_OUTPUT;
    }
}

/* hx_exec_fn on the device: the prologues, then the kernel. */
static int cl_exec(void *ctx, hx_kernel *k, void **args)
{
    cl_job *j = ctx;
    int64_t bytes[64];
    bool out[64];
    int np = k->s->nparams;
    for (int p = 0; p < k->l->nprologues; p++) {
        const sch_func *pf = k->l->prologues[p].fn;
        void *pa[2] = {args[k->l->prologues[p].param], args[np + p]};
        char name[48];
        snprintf(name, sizeof name, "%s_p%d", j->name, p);
        buffer_bytes(pf, bytes, out);
        if (tg_cl_run(j->prog, &j->pro[p], 2, pa, bytes, out, NULL, &j->log))
            return -1;
    }
    buffer_bytes(k->l->kernel, bytes, out);
    return tg_cl_run(j->prog, &j->launch, k->l->kernel->nargs, args, bytes, out, NULL, &j->log);
}

/* Whether a launch is one work-item: the schedule left the device nothing
 * to share out. */
static bool single_item(const tg_cl_launch *l)
{
    for (int s = 0; s < l->n; s++)
        for (int d = 0; d < l->step[s].dims; d++)
            if (l->step[s].global[d] > 1)
                return false;
    return true;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The target and its errors: a device that is not there, a bad option, a
 * program that does not build hands back its build log. */
static void target_checks(const tg_target *t)
{
    tg_target u;
    const char *why = "";
    /* (each call before its check: arguments are evaluated in no fixed order) */
    bool refused = !tg_target_parse("opencl -device=99", &u, &why);
    ok(refused && strstr(why, "no such device"), "a device that is not there is refused: %s", why);
    refused = !tg_target_parse("opencl -platform=x", &u, &why);
    ok(refused && strstr(why, "index"), "a bad index is refused: %s", why);
    refused = !tg_target_parse("opencl -gpu", &u, &why);
    ok(refused && strstr(why, "unknown opencl option"), "an unknown option is refused: %s", why);
    ok(t->cl.max_wg >= 1 && t->cl.compute_units >= 1 && t->cl.global_mem > 0 && t->cl.name[0] && t->cl.version[0],
       "the device's limits and identity are queried (%s, %d units, work-groups of %lld)", t->cl.name,
       t->cl.compute_units, (long long)t->cl.max_wg);
    su_buf b = {0};
    tg_target_features(t, &b);
    ok(strstr(su_buf_str(&b), t->cl.name) && strstr(su_buf_str(&b), t->cl.driver),
       "the record's identity names the device and its driver: %s", su_buf_str(&b));
    su_buf_free(&b);
    char *log = NULL;
    tg_cl_prog *p = tg_cl_build(t, "__kernel void broken(__global float *o) { o[0] = undeclared_name; }", &log);
    ok(!p && log && strstr(log, "undeclared_name"), "a program that does not build hands back its log");
    tg_cl_free(p);
    free(log);
    tg_lib *lib = NULL;
    tg_err e = tg_build("int f(void) { return 0; }", t, &lib, &log);
    ok(e == TG_E_COMPILE && !lib && log && strstr(log, "cpu targets only"),
       "the system compiler refuses an opencl target: %s", log ? log : "");
    free(log);
}

/* The device templates (templates/device_cl.c), whose random configs the
 * op models check. */
static const char *const device_templates[] = {"conv2d_nchw_cl", "depthwise_conv2d_nchw_cl", "group_conv2d_nchw_cl",
                                               "dense_cl", "batch_matmul_cl", "default_cl", "reduce_cl"};
enum { NDEVT = sizeof device_templates / sizeof *device_templates, RANDOM_CONFIGS = 2, MAX_WIDTHS = 4 };
/* The device templates with the knob vec whose widths the op models check
 * (all but dense_cl, whose register tile's columns are one vector or,
 * tile_n 1, scalar; and reduce_cl, which a cpu device does not take by
 * default: reduction_checks draws its random configs, vec among them). */
static const bool has_vec[NDEVT] = {true, true, true, false, true, true, false};

/* ---- launches of hand-made LoopIR (tg_cl_func's choices) ---------------- */

enum { LN = 64 };

typedef struct hand {
    su_arena a;
    uint32_t vars;
    sch_buffer *in, *out, *tmp;
} hand;

/* Buffers p0 (input), o0 (output) and t0 (a temporary) of LN floats. */
static void hand_init(hand *h)
{
    memset(h, 0, sizeof *h);
    su_arena_init(&h->a);
    int64_t n = LN;
    h->in = sch_buffer_new(&h->a, "p0", IR_FLOAT32, 1, &n, SCH_SCOPE_INPUT);
    h->out = sch_buffer_new(&h->a, "o0", IR_FLOAT32, 1, &n, SCH_SCOPE_OUTPUT);
    h->tmp = sch_buffer_new(&h->a, "t0", IR_FLOAT32, 1, &n, SCH_SCOPE_GLOBAL);
}

static const sch_expr *at(hand *h, sch_buffer *b, const sch_expr *i) { return sch_load(&h->a, b, i); }

/* for i in [0, LN) of kind k: dst[i] = f(src[i]) (times 2 plus add). */
static const sch_stmt *nest(hand *h, sch_loop_kind k, sch_buffer *dst, sch_buffer *src, double times, double add)
{
    sch_var *v = sch_var_new(&h->a, &h->vars, "i", IR_INT64);
    const sch_expr *i = sch_varref(&h->a, v);
    const sch_expr *e = sch_bin(&h->a, SCH_ADD, sch_bin(&h->a, SCH_MUL, at(h, src, i), sch_float(&h->a, IR_FLOAT32, times)),
                                sch_float(&h->a, IR_FLOAT32, add));
    return sch_for(&h->a, v, LN, k, sch_store(&h->a, dst, i, e));
}

/* The same as work-groups of `items` work-items: bound loops. */
static const sch_stmt *bound_nest(hand *h, int64_t items, double times)
{
    sch_var *g = sch_var_new(&h->a, &h->vars, "g", IR_INT64), *l = sch_var_new(&h->a, &h->vars, "l", IR_INT64);
    const sch_expr *i = sch_bin(&h->a, SCH_ADD, sch_bin(&h->a, SCH_MUL, sch_varref(&h->a, g), sch_int(&h->a, items)),
                                sch_varref(&h->a, l));
    const sch_stmt *st = sch_store(&h->a, h->out, i, sch_bin(&h->a, SCH_MUL, at(h, h->out, i),
                                                              sch_float(&h->a, IR_FLOAT32, times)));
    sch_stmt *inner = (sch_stmt *)sch_for(&h->a, l, items, SCH_LOOP_THREAD, st);
    inner->thread_axis = 3;
    sch_stmt *outer = (sch_stmt *)sch_for(&h->a, g, LN / items, SCH_LOOP_THREAD, inner);
    outer->thread_axis = 0;
    return outer;
}

/* Writes f for device d after `defines` (text before the prelude), builds
 * it, runs it on in[i] = i and compares o0 with want(i) = i * mul + add;
 * returns the launch in *l and, where text is not NULL, the source (the
 * caller frees it). */
static bool run_hand_text(const tg_target *t, const tg_cl_device *d, const sch_func *f, double mul, double add,
                          tg_cl_launch *l, const char *defines, char **text)
{
    su_buf src = {0};
    su_buf_puts(&src, defines);
    su_buf_puts(&src, tg_lang_cl_group.prelude);
    tg_cl_func(&src, f, "hand", d, l);
    char *log = NULL;
    tg_cl_prog *p = tg_cl_build(t, su_buf_str(&src), &log);
    float in[LN], out[LN] = {0};
    for (int i = 0; i < LN; i++)
        in[i] = (float)i;
    void *args[2] = {in, out};
    int64_t bytes[2] = {sizeof in, sizeof out};
    bool outs[2] = {false, true};
    bool good = p && !tg_cl_run(p, l, 2, args, bytes, outs, NULL, &log);
    for (int i = 0; good && i < LN; i++)
        good = fabs(out[i] - (i * mul + add)) < 1e-4;
    if (!good)
        diag("%s\n%s", log ? log : "", su_buf_str(&src));
    free(log);
    tg_cl_free(p);
    if (text)
        *text = su_buf_take(&src);
    su_buf_free(&src);
    return good;
}

static bool run_hand(const tg_target *t, const tg_cl_device *d, const sch_func *f, double mul, double add,
                     tg_cl_launch *l)
{
    return run_hand_text(t, d, f, mul, add, l, "", NULL);
}

/* tg_cl_func's choices on functions made by hand: a nest per launch over
 * work-groups (a parallel loop on the global index, bound loops on the
 * group and local ids), one work-item for a nest that is neither, kernel
 * temporaries across launches, bound loops the device cannot hold run as
 * one work-item, and a function of more nests than a launch holds as one
 * work-group. */
static void launch_checks(const tg_target *t)
{
    hand h;
    hand_init(&h);
    sch_buffer *args[2] = {h.in, h.out};
    /* t0 = p0 * 2 (parallel); o0 = t0 + 1 (serial); o0 *= 3 (bound) */
    const sch_stmt *three[3] = {nest(&h, SCH_LOOP_PARALLEL, h.tmp, h.in, 2, 0), nest(&h, SCH_LOOP_SERIAL, h.out, h.tmp, 1, 1),
                                bound_nest(&h, 4, 3)};
    sch_func f = {"hand", 2, args, sch_alloc(&h.a, h.tmp, sch_seq(&h.a, 3, three))};
    tg_cl_launch l;
    bool good = run_hand(t, &t->cl, &f, 6, 3, &l);
    ok(good && l.n == 3, "three nests run as three launches in order, a temporary across them (%d launches)", l.n);
    const tg_cl_step *s = l.step;
    ok(!strcmp(s[0].name, "hand") && !strcmp(s[1].name, "hand_1") && !strcmp(s[2].name, "hand_2"),
       "entries hand, hand_1, hand_2");
    ok(s[0].dims == 1 && s[0].local[0] >= 1 && s[0].global[0] >= LN && s[0].global[0] % s[0].local[0] == 0,
       "the parallel nest: global %lld, whole work-groups of %lld", (long long)s[0].global[0],
       (long long)s[0].local[0]);
    ok(s[1].global[0] == 1 && s[1].local[0] == 1, "the serial nest: one work-item");
    ok(s[2].dims == 1 && s[2].global[0] == LN && s[2].local[0] == 4, "the bound nest: global %lld local %lld",
       (long long)s[2].global[0], (long long)s[2].local[0]);
    tg_cl_device small = t->cl;
    small.max_wg = 2;
    good = run_hand(t, &small, &f, 6, 3, &l);
    ok(good && l.n == 3 && l.step[2].global[0] == 1, "bound loops a device cannot hold run as one work-item");
    /* o0 = p0, then TG_CL_MAX_STEPS nests o0 += 1: one launch too many */
    const sch_stmt *many[TG_CL_MAX_STEPS + 1];
    many[0] = nest(&h, SCH_LOOP_PARALLEL, h.out, h.in, 1, 0);
    for (int i = 1; i <= TG_CL_MAX_STEPS; i++)
        many[i] = nest(&h, SCH_LOOP_PARALLEL, h.out, h.out, 1, 1);
    sch_func g = {"hand", 2, args, sch_seq(&h.a, TG_CL_MAX_STEPS + 1, many)};
    good = run_hand(t, &t->cl, &g, 1, TG_CL_MAX_STEPS, &l);
    ok(good && l.n == 1 && l.step[0].global[0] == l.step[0].local[0] && l.step[0].global[0] > 1,
       "%d nests run as one work-group of %lld (barriers between nests)", TG_CL_MAX_STEPS + 1,
       (long long)l.step[0].global[0]);
    su_arena_free(&h.a);
}

/* for g in [0, LN / w) parallel, v in [0, w) vectorized:
 * o0[g * w + v] = max(p0[g * w + v] * 2 + 1, 0); strided: the lanes v * LN / w
 * + g apart instead, which no vector load reads. */
static sch_func vector_nest(hand *h, int64_t w, bool strided, sch_buffer **args)
{
    sch_var *g = sch_var_new(&h->a, &h->vars, "g", IR_INT64), *v = sch_var_new(&h->a, &h->vars, "v", IR_INT64);
    const sch_expr *gi = sch_varref(&h->a, g), *vi = sch_varref(&h->a, v);
    const sch_expr *i = strided ? sch_add(&h->a, sch_mul(&h->a, vi, sch_int(&h->a, LN / w)), gi)
                                : sch_add(&h->a, sch_mul(&h->a, gi, sch_int(&h->a, w)), vi);
    const sch_expr *e = sch_add(&h->a, sch_mul(&h->a, at(h, h->in, i), sch_float(&h->a, IR_FLOAT32, 2)),
                                sch_float(&h->a, IR_FLOAT32, 1));
    e = sch_max(&h->a, e, sch_float(&h->a, IR_FLOAT32, 0));
    const sch_stmt *body = sch_for(&h->a, v, w, SCH_LOOP_VECTORIZED, sch_store(&h->a, h->out, i, e));
    return (sch_func){"hand", 2, args, sch_for(&h->a, g, LN / w, SCH_LOOP_PARALLEL, body)};
}

/* Vectorized loops as OpenCL vector types (lang_opencl.c's vector forms):
 * a contiguous loop of 2 to 16 lanes is one vector statement (loads,
 * broadcast constants, vector max), through clang's float-aligned vectors
 * and through vloadN/vstoreN (RT_VLOADN, what other compilers get); a
 * strided one, or one wider than a vector, stays a loop; all give the same
 * results. */
static void vector_checks(const tg_target *t)
{
    hand h;
    hand_init(&h);
    sch_buffer *args[2] = {h.in, h.out};
    static const int64_t widths[] = {2, 4, 8, 16};
    for (size_t k = 0; k < sizeof widths / sizeof *widths; k++) {
        int64_t w = widths[k];
        char want[64], maxf[64];
        snprintf(want, sizeof want, "rt_vstore%lld(rt_max_float%lld(rt_vload%lld(p0 + ", (long long)w, (long long)w,
                 (long long)w);
        snprintf(maxf, sizeof maxf, "((float%lld)(2.0f))", (long long)w);
        sch_func f = vector_nest(&h, w, false, args);
        for (int portable = 0; portable < 2; portable++) {
            tg_cl_launch l;
            char *text = NULL;
            bool good = run_hand_text(t, &t->cl, &f, 2, 1, &l, portable ? "#define RT_VLOADN\n" : "", &text);
            ok(good && strstr(text, want) && strstr(text, maxf), "%lld contiguous lanes: one vector statement%s",
               (long long)w, portable ? " (vloadN/vstoreN)" : "");
            free(text);
        }
    }
    const struct { int64_t w; bool strided; const char *what; } loops[] = {
        {4, true, "strided lanes"}, {32, false, "32 lanes (wider than a vector)"}};
    for (size_t k = 0; k < sizeof loops / sizeof *loops; k++) {
        sch_func f = vector_nest(&h, loops[k].w, loops[k].strided, args);
        tg_cl_launch l;
        char *text = NULL;
        bool good = run_hand_text(t, &t->cl, &f, 2, 1, &l, "", &text);
        ok(good && !strstr(strstr(text, "__kernel"), "rt_vload"), "%s: a loop", loops[k].what);
        free(text);
    }
    su_arena_free(&h.a);
}

/* What the runs add up to. */
typedef struct totals {
    int group, single;      /* kernels run as one work-group, as one work-item */
    int grids;              /* kernels with a launch over many work-groups */
    int random[NDEVT];      /* random configs checked, per device template */
    int default_randoms;    /* random configs of each default-family function (0: one) */
    bool no_naive;          /* all ways but the unscheduled one (the op models check it) */
    int widths[NDEVT];      /* configs of each vector width (knob vec) checked, per device template */
    int vectors;            /* kernels with vector types */
    int stage_runs[2];      /* kernels run with local_stage forced off, on */
    int stage_ok[2];        /* of them, matching, with (on) or without (off: nor barriers) __local tiles */
    int staged_barriers;    /* matching staged kernels with barriers (a group of one item has none) */
    int two_d;              /* matching kernels with a launch over 2-D work-groups */
    double build_s, run_s;
} totals;

/* Whether some launch of l is many work-groups. */
static bool many_groups(const tg_cl_launch *l)
{
    for (int s = 0; s < l->n; s++) {
        int64_t groups = 1;
        for (int d = 0; d < l->step[s].dims; d++)
            groups *= l->step[s].local[d] ? l->step[s].global[d] / l->step[s].local[d] : 2;
        if (groups > 1)
            return true;
    }
    return false;
}

/* The space of func's template for t in *sp (*tmpl: its name); false
 * where the template does not apply. */
/* Whether target t keeps undilated depthwise convs in the flat form: a cpu
 * device that does not stage (the rule of stage.c's sch_create_for, stated
 * here on its own so that the tests check it). */
static bool keeps_flat_dw(const tg_target *t)
{
    return !t->hw.wg_reduce && t->hw.local_stage != 2;
}

static bool space_of(const ir_expr *func, const tg_target *t, sch_space *sp, const char **tmpl)
{
    su_diags d = {0};
    sch_schedule *s = sch_create_for(func, &t->hw, &d);
    su_diags_free(&d);
    if (!s)
        return false;
    bool done = sch_apply_template(s, NULL, &t->hw, NULL, sp) == SCH_E_OK;
    sch_free(s);
    *tmpl = sp->template_name;
    return done;
}

/* Sets knob `name` of config c (of space sp) to the candidate of value v;
 * false where the space has no such knob or candidate. */
static bool force_knob(const sch_space *sp, sch_config *c, const char *name, int64_t v)
{
    for (size_t i = 0; name && i < sp->knobs.len && (int)i < c->n; i++) {
        const sch_knob *k = &sp->knobs.data[i];
        for (int j = 0; !strcmp(k->name, name) && j < k->ncand; j++)
            if (k->nparts == 1 && k->cands[j] == v) {
                c->choice[i] = j;
                return true;
            }
    }
    return false;
}

/* Lowers func for t under a random config of its template's space (seeded
 * by *seed; NULL: the defaults), knob `knob` (NULL: none) at value; false
 * when none of a few draws lowers (the CPU knobs under a device template
 * can ask for a loop too long to unroll, dense_cl a work-group or tiles
 * the device cannot hold). *tmpl gets the space's template name. */
static bool prepare_random(hx_kernel *k, const ir_expr *func, const tg_target *t, unsigned *seed, const char **tmpl,
                           const char *knob, int64_t value)
{
    sch_space sp = {0};
    bool done = space_of(func, t, &sp, tmpl);
    for (int tries = 0; done && tries < 8; tries++) {
        sch_config c = {0};
        if (seed)
            sch_config_random(&sp, seed, &c);
        else
            sch_config_default(&sp, &c);
        done = (!knob || force_knob(&sp, &c, knob, value)) && hx_prepare_hw(k, func, NULL, &c, false, false, &t->hw);
        sch_config_free(&c);
        if (done)
            break;
        hx_kernel_free(k);
        done = true;
    }
    sch_space_free(&sp);
    return done && k->l;
}

/* Knob k of sp named name, or -1. */
static int knob_of(const sch_space *sp, const char *name)
{
    for (size_t k = 0; k < sp->knobs.len; k++)
        if (!strcmp(sp->knobs.data[k].name, name))
            return (int)k;
    return -1;
}

/* Lowers func for t with its template's defaults but candidate `cand` of
 * the knob vec; false where its space has no such candidate. *tmpl gets
 * the space's template name, *width the vector width. */
static bool prepare_width(hx_kernel *k, const ir_expr *func, const tg_target *t, int cand, const char **tmpl,
                          int64_t *width)
{
    sch_space sp = {0};
    bool done = space_of(func, t, &sp, tmpl);
    int v = done ? knob_of(&sp, "vec") : -1;
    done = v >= 0 && cand < sp.knobs.data[v].ncand;
    if (done) {
        sch_config c = {0};
        sch_config_default(&sp, &c);
        c.choice[v] = cand;
        *width = sp.knobs.data[v].cands[cand];
        done = hx_prepare_hw(k, func, NULL, &c, false, false, &t->hw);
        sch_config_free(&c);
    }
    sch_space_free(&sp);
    return done && k->l;
}

/* One function to check: where it is from and the range of its inputs. */
typedef struct fn_case {
    const ir_expr *func;
    const char *from;
    double lo, hi;
    const char *knob;       /* a knob set to value in its default and random configs (NULL: none) */
    int64_t value;
} fn_case;

/* Whether some launch of l runs over work-groups of two dimensions. */
static bool two_dims(const tg_cl_launch *l)
{
    for (int s = 0; s < l->n; s++)
        if (l->step[s].dims >= 2 && l->step[s].local[0] > 1 && l->step[s].local[1] > 1)
            return true;
    return false;
}

/* Checks functions fs[0..n) (of `label`) on the device: each lowered with its
 * template's defaults (and, when all_ways, with no schedule and with
 * RANDOM_CONFIGS seeded random configs of its template's space, one for
 * the default template's), all
 * written into one program (PoCL pays a fixed price per program), built,
 * run on random inputs and compared with the reference kernels. */
static void check_set(const tg_target *t, const char *label, const fn_case *fs, int n, bool all_ways, totals *tot)
{
    static hx_kernel ks[MAXK];
    static cl_job jobs[MAXK];
    static const char *hows[MAXK], *from[MAXK], *tmpls[MAXK];
    static char vecs[MAXK][16];
    static bool vector[MAXK], widths[MAXK], staged[MAXK], barriers[MAXK];
    static int stage[MAXK];
    static double lo[MAXK], hi[MAXK];
    int nk = 0, lowered = 0, wanted = 0;
    unsigned seed = 20261201u;
    su_buf src = {0};
    su_buf_puts(&src, tg_lang_cl_group.prelude);
    for (int f = 0; f < n; f++) {
        /* the default template's functions are many and alike: one random
         * config each */
        const char *family = NULL;
        free(sch_workload_key(fs[f].func, &family, NULL));
        int nrandom = family ? RANDOM_CONFIGS : tot->default_randoms ? tot->default_randoms : 1;
        int ways = all_ways ? 2 + nrandom + MAX_WIDTHS : 1;
        for (int way = 0; way < ways && nk < MAXK; way++) {
            hx_kernel *k = &ks[nk];
            bool naive = way == 1, random = way >= 2 && way < 2 + nrandom, width = way >= 2 + nrandom;
            tmpls[nk] = NULL;
            if (naive && tot->no_naive)
                continue;
            int64_t w = 0;
            if (width) {
                /* each candidate of the knob vec, where the template has it */
                if (!prepare_width(k, fs[f].func, t, way - 2 - nrandom, &tmpls[nk], &w)) {
                    hx_kernel_free(k);
                    continue;
                }
                snprintf(vecs[nk], sizeof vecs[nk], "vec %lld", (long long)w);
            } else if (random) {
                if (!prepare_random(k, fs[f].func, t, &seed, &tmpls[nk], fs[f].knob, fs[f].value)) {
                    diag("%s: no random config of %s lowers", fs[f].from, tmpls[nk] ? tmpls[nk] : "its template");
                    hx_kernel_free(k);
                    continue;
                }
            } else if (fs[f].knob && !naive) {
                wanted++;
                if (!prepare_random(k, fs[f].func, t, NULL, &tmpls[nk], fs[f].knob, fs[f].value)) {
                    hx_kernel_free(k);
                    continue;
                }
                lowered++;
            } else {
                wanted++;
                if (!hx_prepare_hw(k, fs[f].func, NULL, NULL, naive, false, t ? &t->hw : NULL)) {
                    hx_kernel_free(k);
                    continue;
                }
                lowered++;
            }
            cl_job *j = &jobs[nk];
            memset(j, 0, sizeof *j);
            snprintf(j->name, sizeof j->name, "k%d", nk);
            for (int p = 0; p < k->l->nprologues && p < 8; p++) {
                char pn[48];
                snprintf(pn, sizeof pn, "%s_p%d", j->name, p);
                tg_cl_func(&src, k->l->prologues[p].fn, pn, t ? &t->cl : NULL, &j->pro[p]);
            }
            size_t start = src.len;
            tg_cl_func(&src, k->l->kernel, j->name, t ? &t->cl : NULL, &j->launch);
            vector[nk] = strstr(su_buf_str(&src) + start, "rt_vload") != NULL;
            staged[nk] = strstr(su_buf_str(&src) + start, "__local float") != NULL;
            barriers[nk] = strstr(su_buf_str(&src) + start, "barrier(CLK_LOCAL_MEM_FENCE)") != NULL;
            /* (the vector widths keep the default local_stage) */
            stage[nk] = fs[f].knob && !strcmp(fs[f].knob, "local_stage") && !naive && !width ? (int)fs[f].value : -1;
            hows[nk] = naive ? "naive" : random ? "random config" : width ? vecs[nk] : "default";
            widths[nk] = width;
            from[nk] = fs[f].from;
            lo[nk] = fs[f].lo, hi[nk] = fs[f].hi;
            nk++;
        }
    }
    is_int(lowered, wanted, "%s: all %d functions lower", label, wanted);
    const char *text = su_buf_str(&src);
    ok(!strstr(text, "#pragma omp") && !strstr(text, "rt_alloc") && !strstr(text, "int64_t") &&
           !strstr(text, "args["),
       "%s: nothing of the C table in its OpenCL C", label);
    char *log = NULL;
    double t0 = now();
    tg_cl_prog *prog = tg_cl_build(t, text, &log);
    tot->build_s += now() - t0;
    if (!ok(prog != NULL, "%s: %d kernels build with clBuildProgram", label, nk))
        diag("%s\n%s", log ? log : "", getenv("RT_SHOW") ? text : "");
    free(log);
    for (int i = 0; prog && i < nk; i++) {
        hx_kernel *k = &ks[i];
        cl_job *j = &jobs[i];
        j->prog = prog;
        hx_tensor *in[64], *want[8], *got[8];
        hx_random_inputs(k->func, 1234u + (unsigned)i, lo[i], hi[i], in);
        int nw = hx_ref_run(k->func, in, want), ng = 0;
        t0 = now();
        int rc = hx_run_with(k, in, got, &ng, cl_exec, j);
        tot->run_s += now() - t0;
        double err = ng == nw ? 0 : INFINITY;
        for (int o = 0; o < nw && o < ng; o++) {
            double e = hx_max_rel_err(got[o], want[o]);
            err = e > err ? e : err;
        }
        bool single = single_item(&j->launch), grid = many_groups(&j->launch);
        *(single ? &tot->single : &tot->group) += 1;
        tot->grids += grid;
        bool good = rc == 0 && err < 1e-4;
        for (int d = 0; d < NDEVT && tmpls[i]; d++)
            *(widths[i] ? &tot->widths[d] : &tot->random[d]) += good && !strcmp(tmpls[i], device_templates[d]);
        tot->vectors += good && vector[i];
        if (stage[i] >= 0) {
            tot->stage_runs[stage[i]]++;
            tot->stage_ok[stage[i]] += good && staged[i] == (stage[i] == 1) && (stage[i] == 1 || !barriers[i]);
            tot->staged_barriers += good && stage[i] == 1 && barriers[i];
        }
        tot->two_d += good && two_dims(&j->launch);
        if (!ok(good, "%s (%s, %s, %s, %d launches): error %.2g", from[i], hows[i],
                tmpls[i] ? tmpls[i] : sch_template_name(k->s),
                single ? "one work-item" : grid ? "work-groups" : "one work-group", j->launch.n, err))
            diag("%s", j->log ? j->log : "");
        free(j->log);
        hx_tensors_free(in, k->func->u.func.nparams);
        hx_tensors_free(want, nw);
        hx_tensors_free(got, ng);
    }
    for (int i = 0; i < nk; i++)
        hx_kernel_free(&ks[i]);
    tg_cl_free(prog);
    su_buf_free(&src);
}

/* ---- work-group reductions (templates/reduce_cl.c) ------------------------ */

/* The reductions of `reductions` at n elements a row over `rows` rows:
 * relay text (static buffer) of kind k, NULL past the last kind. */
static const char *reduction_model(int k, int rows, int64_t n)
{
    static char text[512];
    /* global pooling: a plane of about n elements, rows channels */
    int64_t h = n == 1000 ? 25 : n == 3072 ? 48 : n, w = n == 1000 ? 40 : n == 3072 ? 64 : 1;
    const char *x = "%%x: Tensor[(%d, %lld), float32]";
    char xs[96];
    snprintf(xs, sizeof xs, x, rows, (long long)n);
    switch (k) {
    case 0: snprintf(text, sizeof text, HDR "def @main(%s) { nn.softmax(%%x) }", xs); break;
    case 1: snprintf(text, sizeof text, HDR "def @main(%s) { nn.log_softmax(%%x) }", xs); break;
    case 2:
        snprintf(text, sizeof text,
                 HDR "def @main(%s, %%g: Tensor[(%lld), float32], %%b: Tensor[(%lld), float32]) "
                     "{ nn.layer_norm(%%x, %%g, %%b, epsilon=1e-5f) }",
                 xs, (long long)n, (long long)n);
        break;
    case 3: snprintf(text, sizeof text, HDR "def @main(%s) { sum(%%x, axis=[1]) }", xs); break;
    case 4: snprintf(text, sizeof text, HDR "def @main(%s) { mean(%%x, axis=[1], keepdims=True) }", xs); break;
    case 5: snprintf(text, sizeof text, HDR "def @main(%s) { max(%%x, axis=[1]) }", xs); break;
    case 6: snprintf(text, sizeof text, HDR "def @main(%s) { sum(%%x) }", xs); break;
    case 7:
        snprintf(text, sizeof text, HDR "def @main(%%x: Tensor[(1, %d, %lld, %lld), float32]) { nn.global_avg_pool2d(%%x) }",
                 rows, (long long)h, (long long)w);
        break;
    case 8: snprintf(text, sizeof text, HDR "def @main(%s) { argmax(%%x, axis=[1]) }", xs); break;
    default: return NULL;
    }
    return text;
}

/* The OpenCL C and launch of func's default schedule on t, and its LoopIR
 * text. */
static bool reduction_source(const tg_target *t, const ir_expr *func, su_buf *src, tg_cl_launch *l, su_buf *text)
{
    hx_kernel k;
    if (!hx_prepare_hw(&k, func, NULL, NULL, false, false, &t->hw))
        return false;
    tg_cl_func(src, k.l->kernel, "red", &t->cl, l);
    sch_print_func(text, k.l->kernel);
    hx_kernel_free(&k);
    return true;
}

/* Whether func's kernel for the cpu target (its default schedule, as C)
 * is free of local memory and barriers. */
static bool cpu_plain(const ir_expr *func)
{
    hx_kernel k;
    if (!hx_prepare_hw(&k, func, NULL, NULL, false, false, NULL))
        return false;
    su_buf b = {0};
    sch_emit_func(&b, &tg_lang_c, k.l->kernel, "red");
    sch_print_func(&b, k.l->kernel);
    bool plain = !strstr(su_buf_str(&b), "shared") && !strstr(su_buf_str(&b), "barrier") &&
                 !strstr(su_buf_str(&b), "__local");
    su_buf_free(&b);
    hx_kernel_free(&k);
    return plain;
}

/* Forward: check_zoo is defined below. */
static void check_zoo(const tg_target *t, totals *tot, const char *const *names, int n);

/* Softmax, log_softmax, layer_norm, sum, mean, max, a sum of everything,
 * global pooling and argmax at rows of 7 and 1000 elements, softmax,
 * layer_norm, sum, the sum of everything and global pooling at 1 and 3072
 * (one row and five): each with its defaults and under three seeded random
 * configs of its template (reduce_cl where a row has two or more elements)
 * against the reference; the launches of the defaults:
 * one work-group a row (or element) of exactly the work-items the kernel's
 * local arrays are indexed by; the cpu target's kernels have neither.
 * All on target t, whose wg_reduce is on (-wg-reduce=1, whatever the
 * device); then the BERT layer's and resnet18's functions on it. */
static void reduction_checks(const tg_target *t)
{
    static const int64_t sizes[] = {1, 7, 1000, 3072};
    static const int rows[] = {1, 5};
    static fn_case cs[64];
    ir_module *mods[64];
    int nc = 0, nm = 0, local_ok = 0, local_want = 0, cpu_ok = 0, chose = 0, chose_want = 0, loopir_ok = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (size_t ri = 0; ri < sizeof rows / sizeof *rows; ri++)
            for (int kind = 0; reduction_model(kind, rows[ri], sizes[si]) && nm < 64; kind++) {
                bool odd = sizes[si] == 7 || sizes[si] == 1000;
                if (!odd && kind != 0 && kind != 2 && kind != 3 && kind != 6 && kind != 7)
                    continue;
                char name[48];
                snprintf(name, sizeof name, "reduction %d, %d x %lld", kind, rows[ri], (long long)sizes[si]);
                ir_module *m = mods[nm++] = hx_load(name, reduction_model(kind, rows[ri], sizes[si]));
                const ir_expr *f = hx_last_primitive(m);
                cs[nc++] = (fn_case){f, su_arena_strdup(&m->arena, name), -2, 2};
                su_diags d = {0};
                sch_schedule *s = sch_create(f, &d);
                su_diags_free(&d);
                const char *tmpl = s ? sch_device_template_of(s, "default", &t->hw) : "";
                bool want = sizes[si] > 1 || (kind == 6 && rows[ri] > 1);
                chose_want++;
                chose += !strcmp(tmpl, want ? "reduce_cl" : "default_cl");
                sch_free(s);
                cpu_ok += cpu_plain(f);
                if (!want)
                    continue;
                su_buf src = {0}, text = {0};
                tg_cl_launch l;
                local_want++;
                if (!reduction_source(t, f, &src, &l, &text))
                    continue;
                loopir_ok += strstr(su_buf_str(&text), "alloc s0: float32[") && strstr(su_buf_str(&text), "] shared\n") &&
                             strstr(su_buf_str(&text), " barrier\n");
                su_buf_free(&text);
                /* some launch declares __local arrays, over whole groups of
                 * exactly its items, and its code waits at barriers */
                bool good = strstr(su_buf_str(&src), "__local ") && strstr(su_buf_str(&src), "barrier(CLK_LOCAL_MEM_FENCE)");
                bool any = false;
                for (int i = 0; i < l.n; i++) {
                    const tg_cl_step *st = &l.step[i];
                    if (!st->local_mem)
                        continue;
                    any = true;
                    good = good && st->local[0] >= 2 && st->global[0] % st->local[0] == 0 &&
                           st->local_mem >= st->local[0] * 4;
                }
                local_ok += good && any;
                if (!(good && any))
                    diag("%s:\n%s", name, su_buf_str(&src));
                su_buf_free(&src);
            }
    is_int(chose, chose_want, "reduce_cl schedules every reduction of two or more elements a row, default_cl the others");
    is_int(local_ok, local_want, "their kernels keep partial results in __local arrays with barriers, launched over "
                                 "groups of exactly their work-items");
    is_int(loopir_ok, local_want, "their LoopIR text shows the shared arrays and the barriers");
    is_int(cpu_ok, nc, "no cpu kernel of them has local memory or a barrier");
    totals tot = {.default_randoms = 3, .no_naive = true};
    check_set(t, "reductions", cs, nc, true, &tot);
    diag("reductions: %d kernels over many work-groups, %d one work-group, %d one work-item; builds %.2f s, runs %.2f s",
         tot.grids, tot.group, tot.single, tot.build_s, tot.run_s);
    ok(tot.random[NDEVT - 1] >= 3 * local_want / 2, "random configs of reduce_cl match the reference (%d)",
       tot.random[NDEVT - 1]);
    for (int m = 0; m < nm; m++)
        ir_module_free(mods[m]);
    static const char *const with_reductions[] = {"bert_layer", "resnet18"};
    totals z = {0};
    check_zoo(t, &z, with_reductions, 2);
}

/* The distinct fused functions (by workload key) of zoo models names[0..n),
 * model by model. */
static void check_zoo(const tg_target *t, totals *tot, const char *const *names, int n)
{
    const char *dir = getenv("top_srcdir");
    su_map seen = {0};
    SU_VEC(char *) keys = {0};
    for (int z = 0; z < n; z++) {
        su_buf p = {0};
        su_buf_printf(&p, "%s/benchmarks/models/%s.relay", dir ? dir : ".", names[z]);
        size_t len;
        char *text = su_read_file(su_buf_str(&p), &len);
        if (!text)
            su_panic("cannot read %s", su_buf_str(&p));
        su_buf_free(&p);
        ir_module *mod = hx_load(names[z], text);
        free(text);
        const ir_expr **fs;
        size_t nf = hx_primitives(mod, &fs);
        fn_case *cs = su_calloc(nf + 1, sizeof *cs);
        int nd = 0;
        for (size_t f = 0; f < nf; f++) {
            char *key = sch_workload_key(fs[f], NULL, NULL);
            if (su_map_get(&seen, key)) {
                free(key);
                continue;
            }
            su_map_put(&seen, key, (void *)1);
            su_vec_push(&keys, key);
            cs[nd++] = (fn_case){fs[f], names[z], -1, 1};
        }
        totals mine = {0};
        check_set(t, names[z], cs, nd, false, &mine);
        diag("%s: %d distinct functions; builds %.2f s, runs %.2f s", names[z], nd, mine.build_s, mine.run_s);
        free(cs);
        tot->group += mine.group, tot->single += mine.single, tot->grids += mine.grids;
        tot->build_s += mine.build_s, tot->run_s += mine.run_s, tot->vectors += mine.vectors;
        free(fs);
        ir_module_free(mod);
    }
    for (size_t i = 0; i < keys.len; i++)
        free(keys.data[i]);
    su_vec_free(&keys);
    su_map_free(&seen);
}

/* Loads relay text `text` (named name) into *mod and appends its last
 * primitive function to out[nc..] twice, with local_stage forced off and
 * on; the new count. */
static int staged_pair(const char *name, const char *text, ir_module **mod, fn_case *out, int nc)
{
    *mod = hx_load(name, text);
    const ir_expr *f = hx_last_primitive(*mod);
    const char *from = su_arena_strdup(&(*mod)->arena, name);
    for (int on = 0; on < 2; on++)
        out[nc++] = (fn_case){f, from, -1, 1, "local_stage", on};
    return nc;
}

/* ---- dense_cl: 2-D work-groups, local-memory staging ------------------- */

/* nn.dense of M x K data and N x K weights (with a bias and a relu when
 * epilogue): relay text in a static buffer. */
static const char *dense_model(int64_t M, int64_t K, int64_t N, bool epilogue)
{
    static char text[512];
    char bias[64] = "";
    if (epilogue)
        snprintf(bias, sizeof bias, ", %%b: Tensor[(%lld), float32]", (long long)N);
    snprintf(text, sizeof text,
             HDR "def @main(%%x: Tensor[(%lld, %lld), float32], %%w: Tensor[(%lld, %lld), float32]%s) { %s }",
             (long long)M, (long long)K, (long long)N, (long long)K, bias,
             epilogue ? "nn.relu(nn.bias_add(nn.dense(%x, %w), %b))" : "nn.dense(%x, %w)");
    return text;
}

/* Dense functions of odd sizes (1, 7, 13, 109, 1000; K no multiple of any
 * tile_k), one with an epilogue, each with local_stage off and on: the
 * defaults otherwise and seeded random configs of dense_cl's space, against
 * the reference (1e-4); the staged kernels declare __local tiles and most
 * wait at barriers, the others do neither; some run over 2-D work-groups. */
static void dense_checks(const tg_target *t)
{
    static const int64_t shapes[][4] = {{1, 13, 7, 0},    {7, 109, 13, 0},  {13, 1000, 109, 0},
                                        {109, 7, 1000, 0}, {1000, 13, 1, 0}, {7, 1000, 109, 1}};
    enum { NS = sizeof shapes / sizeof *shapes };
    ir_module *mods[NS];
    fn_case cs[2 * NS];
    int nc = 0;
    for (int i = 0; i < NS; i++) {
        char name[64];
        snprintf(name, sizeof name, "dense %lldx%lldx%lld%s", (long long)shapes[i][0], (long long)shapes[i][1],
                 (long long)shapes[i][2], shapes[i][3] ? " + bias + relu" : "");
        nc = staged_pair(name, dense_model(shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3]), &mods[i], cs, nc);
    }
    totals tot = {.no_naive = true};
    check_set(t, "dense", cs, nc, true, &tot);
    diag("dense: %d kernels with local_stage off, %d on, %d over 2-D work-groups; builds %.2f s, runs %.2f s",
         tot.stage_runs[0], tot.stage_runs[1], tot.two_d, tot.build_s, tot.run_s);
    ok(tot.stage_runs[1] >= NS * 2 && tot.stage_ok[1] == tot.stage_runs[1],
       "dense with local_stage on: all %d kernels match and stage their tiles in __local memory", tot.stage_runs[1]);
    ok(tot.staged_barriers * 2 > tot.stage_runs[1], "most of them (%d) between barriers (the others: groups of one "
       "work-item)", tot.staged_barriers);
    ok(tot.stage_runs[0] >= NS * 2 && tot.stage_ok[0] == tot.stage_runs[0],
       "dense with local_stage off: all %d kernels match, with no __local memory", tot.stage_runs[0]);
    ok(tot.two_d > 0, "dense: %d kernels run over 2-D work-groups", tot.two_d);
    for (int i = 0; i < NS; i++)
        ir_module_free(mods[i]);
}

/* Whether the space of func's template (for t) has every knob of names. */
static bool has_knobs(const ir_expr *func, const tg_target *t, const char *const *names, int n, const char **tmpl)
{
    sch_space sp = {0};
    bool all = space_of(func, t, &sp, tmpl);
    for (int i = 0; all && i < n; i++)
        all = knob_of(&sp, names[i]) >= 0;
    sch_space_free(&sp);
    return all;
}

/* The checks of a set run with local_stage forced off and on (at least
 * want kernels each): every staged kernel matches and declares __local
 * arrays, every other matches with neither those nor barriers. */
static void stage_oks(const char *label, const totals *tot, int want)
{
    ok(tot->stage_runs[1] >= want && tot->stage_ok[1] == tot->stage_runs[1],
       "%s with local_stage on: all %d kernels match and stage their tiles in __local memory", label,
       tot->stage_runs[1]);
    ok(tot->stage_runs[0] >= want && tot->stage_ok[0] == tot->stage_runs[0],
       "%s with local_stage off: all %d kernels match, with no __local memory", label, tot->stage_runs[0]);
}

/* The assertions of a set of staged pairs (at least want kernels each
 * way) of template device_templates[d]: its random configs and vector
 * widths match, stage_oks, most staged kernels wait at barriers, some run
 * over 2-D work-groups. */
static void staged_set_oks(const char *label, const totals *tot, int d, int want)
{
    ok(tot->random[d] >= want, "%s: %d random configs of %s match", label, tot->random[d], device_templates[d]);
    ok(tot->widths[d] >= want, "%s: %d configs of its vector widths match", label, tot->widths[d]);
    stage_oks(label, tot, want);
    ok(tot->staged_barriers * 2 > tot->stage_runs[1], "most of them (%d) between barriers", tot->staged_barriers);
    ok(tot->two_d > 0, "%s: %d kernels run over 2-D work-groups", label, tot->two_d);
}

/* The functions of cases cs[0], cs[2], ... (n of them; cs holds each
 * with local_stage off, then on) under a GPU's defaults (a target with
 * work-group reductions: staging on), run on this device into *gt; false
 * where that target does not parse. */
static bool gpu_defaults(const char *label, const fn_case *cs, int n, totals *gt)
{
    tg_target gpu;
    const char *why = "";
    if (!ok(tg_target_parse("opencl -wg-reduce=1", &gpu, &why), "%s: a target with a GPU's defaults: %s", label, why))
        return false;
    static fn_case gs[64];
    for (int i = 0; i < n && i < 64; i++)
        gs[i] = (fn_case){cs[2 * i].func, cs[2 * i].from, -1, 1, "local_stage", 1};
    char name[96];
    snprintf(name, sizeof name, "%s, a GPU's defaults", label);
    *gt = (totals){.no_naive = true};
    check_set(&gpu, name, gs, n < 64 ? n : 64, false, gt);
    return true;
}

/* ---- batch_matmul_cl: dense_cl's GEMM per batch element ----------------- */

/* One batch_matmul of the checks: x (bx, m, k) or (bx, k, m) with ta, y
 * (by, n, k) with tb or (by, k, n), and a division after it (bert's
 * scores) when epilogue. */
typedef struct bmm_shape {
    int64_t bx, by, m, k, n;
    bool ta, tb, epilogue;
} bmm_shape;

/* Its relay text, in a static buffer. */
static const char *bmm_model(const bmm_shape *c)
{
    static char text[768];
    char call[192];
    snprintf(call, sizeof call, "nn.batch_matmul(%%x, %%y, transpose_a=%s, transpose_b=%s)",
             c->ta ? "True" : "False", c->tb ? "True" : "False");
    snprintf(text, sizeof text,
             HDR "def @main(%%x: Tensor[(%lld, %lld, %lld), float32], %%y: Tensor[(%lld, %lld, %lld), float32]) "
                 "{ %s%s%s }",
             (long long)c->bx, (long long)(c->ta ? c->k : c->m), (long long)(c->ta ? c->m : c->k), (long long)c->by,
             (long long)(c->tb ? c->n : c->k), (long long)(c->tb ? c->k : c->n), c->epilogue ? "divide(" : "", call,
             c->epilogue ? ", 8f)" : "");
    return text;
}

/* batch_matmuls of odd sizes (1, 3, 7, 13, 109; k no multiple of any
 * tile_k), every combination of transposes, a broadcast batch on either
 * side, one with an epilogue, each with local_stage off and on: the
 * defaults otherwise and seeded random configs of batch_matmul_cl's space
 * and each vector width, against the reference (1e-4); the staged kernels
 * declare __local tiles and most wait at barriers, the others do neither;
 * some run over 2-D work-groups; a GPU's defaults (staging on) too. */
static void bmm_checks(const tg_target *t)
{
    static const bmm_shape shapes[] = {
        {3, 3, 7, 13, 109, false, true, false},  {2, 2, 109, 7, 13, false, false, false},
        {1, 3, 13, 109, 7, true, true, false},   {3, 1, 13, 7, 1, true, false, false},
        {2, 2, 1, 13, 7, false, true, true},     {12, 12, 16, 13, 32, false, true, true},
    };
    enum { NS = sizeof shapes / sizeof *shapes };
    ir_module *mods[NS];
    fn_case cs[2 * NS];
    int nc = 0;
    for (int i = 0; i < NS; i++) {
        const bmm_shape *c = &shapes[i];
        char name[96];
        snprintf(name, sizeof name, "batch_matmul %lld/%lld x %lldx%lldx%lld%s%s%s", (long long)c->bx,
                 (long long)c->by, (long long)c->m, (long long)c->k, (long long)c->n, c->ta ? " ta" : "",
                 c->tb ? " tb" : "", c->epilogue ? " / 8" : "");
        nc = staged_pair(name, bmm_model(c), &mods[i], cs, nc);
    }
    totals tot = {.no_naive = true};
    check_set(t, "batch_matmul", cs, nc, true, &tot);
    diag("batch_matmul: %d kernels with local_stage off, %d on, %d over 2-D work-groups; builds %.2f s, runs %.2f s",
         tot.stage_runs[0], tot.stage_runs[1], tot.two_d, tot.build_s, tot.run_s);
    staged_set_oks("batch_matmul", &tot, 4, NS * 2);
    totals gt;
    if (gpu_defaults("batch_matmul", cs, NS, &gt)) {
        /* (odd sizes make groups of one item, which need no barrier) */
        ok(gt.stage_runs[1] == NS && gt.stage_ok[1] == NS && gt.staged_barriers > 0,
           "batch_matmul, a GPU's defaults: all %d staged kernels match, %d of them between barriers",
           gt.stage_ok[1], gt.staged_barriers);
    }
    static const char *const knobs[] = {"wg_m", "wg_n", "tile_m", "tile_n", "tile_k", "unroll_k", "local_stage",
                                        "vec"};
    const char *tmpl = "";
    bool has = has_knobs(cs[0].func, t, knobs, 8, &tmpl);
    ok(has && !strcmp(tmpl, "batch_matmul_cl"), "batch_matmul: %s has the knobs of work-group shape, tile, unroll, staging and vector width", tmpl);
    for (int i = 0; i < NS; i++)
        ir_module_free(mods[i]);
}

/* ---- conv2d_nchw_cl: 2-D work-groups, local-memory staging -------------- */

/* One conv of the checks: data N x C x H x W, K filters of KH x KW, a
 * stride and padding, an epilogue (0: none, 1: bias + relu, 2: a residual
 * add), groups and a dilation (0: 1). */
typedef struct conv_shape {
    int64_t n, c, h, w, k, kh, kw, stride, pad;
    int epilogue;
    int64_t groups, dil;
} conv_shape;

/* Its relay text, in a static buffer. */
static const char *conv_model(const conv_shape *c)
{
    static char text[1024];
    int64_t g = c->groups ? c->groups : 1, d = c->dil ? c->dil : 1;
    int64_t oh = (c->h + 2 * c->pad - d * (c->kh - 1) - 1) / c->stride + 1;
    int64_t ow = (c->w + 2 * c->pad - d * (c->kw - 1) - 1) / c->stride + 1;
    char extra[128] = "", conv[256];
    if (c->epilogue == 1)
        snprintf(extra, sizeof extra, ", %%b: Tensor[(%lld), float32]", (long long)c->k);
    else if (c->epilogue == 2)
        snprintf(extra, sizeof extra, ", %%r: Tensor[(%lld, %lld, %lld, %lld), float32]", (long long)c->n,
                 (long long)c->k, (long long)oh, (long long)ow);
    snprintf(conv, sizeof conv,
             "nn.conv2d(%%x, %%w, strides=[%lld, %lld], padding=[%lld, %lld, %lld, %lld], dilation=[%lld, %lld], "
             "groups=%lld)",
             (long long)c->stride, (long long)c->stride, (long long)c->pad, (long long)c->pad, (long long)c->pad,
             (long long)c->pad, (long long)d, (long long)d, (long long)g);
    char body[320];
    if (c->epilogue == 1)
        snprintf(body, sizeof body, "nn.relu(nn.bias_add(%s, %%b))", conv);
    else if (c->epilogue == 2)
        snprintf(body, sizeof body, "add(%s, %%r)", conv);
    else
        snprintf(body, sizeof body, "%s", conv);
    snprintf(text, sizeof text,
             HDR "def @main(%%x: Tensor[(%lld, %lld, %lld, %lld), float32], %%w: Tensor[(%lld, %lld, %lld, %lld), "
                 "float32]%s) { %s }",
             (long long)c->n, (long long)c->c, (long long)c->h, (long long)c->w, (long long)c->k,
             (long long)(c->c / g), (long long)c->kh, (long long)c->kw, extra, body);
    return text;
}

/* The functions of convs cs[0..n) (modules in mods), each with
 * local_stage off and on, in out; their number. */
static int conv_cases(const conv_shape *cs, int n, ir_module **mods, fn_case *out)
{
    int nc = 0;
    for (int i = 0; i < n; i++) {
        const conv_shape *c = &cs[i];
        char name[128];
        snprintf(name, sizeof name, "conv %lldx%lldx%lldx%lld k%lld %lldx%lld s%lld p%lld g%lld d%lld%s",
                 (long long)c->n, (long long)c->c, (long long)c->h, (long long)c->w, (long long)c->k,
                 (long long)c->kh, (long long)c->kw, (long long)c->stride, (long long)c->pad,
                 (long long)(c->groups ? c->groups : 1), (long long)(c->dil ? c->dil : 1),
                 c->epilogue == 1 ? " + bias + relu" : c->epilogue == 2 ? " + residual" : "");
        nc = staged_pair(name, conv_model(c), &mods[i], out, nc);
    }
    return nc;
}

/* The staged pair of each shape (mods and cs: n and 2 n slots) checked
 * against the reference, the totals into tot, and what they cost said. */
static void conv_set(const tg_target *t, const char *what, const conv_shape *shapes, int n, ir_module **mods,
                     fn_case *cs, totals *tot)
{
    int nc = conv_cases(shapes, n, mods, cs);
    *tot = (totals){.no_naive = true};
    check_set(t, what, cs, nc, true, tot);
    diag("%s: %d kernels with local_stage off, %d on, %d over 2-D work-groups; builds %.2f s, runs %.2f s", what,
         tot->stage_runs[0], tot->stage_runs[1], tot->two_d, tot->build_s, tot->run_s);
}

/* Plain convs of odd sizes (1, 3, 7, 13, 27 channels and pixels; strides 1
 * and 2; padding 0, 1 and a stem's 3; 1x1, 3x3, 5x5 and a 7x7 stem on 3
 * channels; a batch of 2; tiles that do not divide), with no epilogue, a
 * bias and relu or a residual add, each with local_stage off and on: the
 * defaults otherwise and seeded random configs of conv2d_nchw_cl's space,
 * against the reference (1e-4); the staged kernels declare __local tiles
 * and wait at barriers, the others do neither; some run over 2-D
 * work-groups. Then the knobs of each conv kind's space. */
static void conv_checks(const tg_target *t)
{
    static const conv_shape shapes[] = {
        {1, 3, 27, 27, 7, 7, 7, 2, 3, 1},  /* a stem */
        {2, 13, 7, 7, 27, 3, 3, 1, 1, 0},  /* a batch of 2 */
        {1, 27, 13, 13, 13, 1, 1, 1, 0, 1}, /* 1x1: the fused-pixel form */
        {1, 7, 13, 13, 27, 1, 1, 2, 0, 2}, /* 1x1 stride 2: its strided pixels */
        {1, 13, 13, 13, 7, 5, 5, 1, 0, 2}, /* 5x5, residual add */
        {2, 3, 7, 7, 1, 3, 3, 2, 1, 0},    /* one output channel */
        {1, 1, 13, 13, 3, 3, 3, 1, 1, 1},  /* one input channel */
        {1, 27, 7, 7, 13, 3, 3, 2, 0, 1},  /* stride 2, no padding */
        {1, 13, 1, 1, 27, 1, 1, 1, 0, 0},  /* one pixel */
        {1, 16, 14, 14, 32, 3, 3, 1, 1, 1}, /* tiles that divide */
    };
    enum { NS = sizeof shapes / sizeof *shapes };
    ir_module *mods[NS];
    fn_case cs[2 * NS];
    totals tot;
    conv_set(t, "conv", shapes, NS, mods, cs, &tot);
    ok(tot.random[0] >= NS * 2, "conv: %d random configs of conv2d_nchw_cl match", tot.random[0]);
    stage_oks("conv", &tot, NS * 2);
    ok(tot.staged_barriers > 0, "some of them (%d) between barriers (a cpu device's default groups are of one "
       "work-item, which need none)", tot.staged_barriers);
    ok(tot.two_d > 0, "conv: %d kernels run over 2-D work-groups", tot.two_d);
    /* a GPU's defaults (tiles of 4 x 4, groups of 8 x 16, staging on) */
    totals gt;
    if (gpu_defaults("conv", cs, NS, &gt)) {
        ok(gt.stage_runs[1] == NS && gt.stage_ok[1] == NS && gt.staged_barriers * 2 > NS,
           "conv, a GPU's defaults: all %d staged kernels match, %d of them between barriers", gt.stage_ok[1],
           gt.staged_barriers);
        ok(gt.two_d * 2 > NS, "conv, a GPU's defaults: %d kernels run over 2-D work-groups", gt.two_d);
    }
    /* every conv kind's space has the knobs: work-group shape,
     * per-work-item tile, staging (all but the flat depthwise form, which a
     * cpu device that does not stage keeps),
     * unroll, vector width */
    static const char *const plain[] = {"wg_oc", "wg_px", "tile_oc", "tile_px", "tile_ic", "unroll_kw",
                                        "local_stage", "vec"};
    static const char *const dw_flat[] = {"wg_items", "tile_c", "tile_r", "unroll_taps", "vec"};
    bool flat = keeps_flat_dw(t);
    const struct {
        const char *what, *text, *tmpl;
        const char *const *knobs;
        int n;
    } kinds[] = {
        {"a plain conv", HDR "def @main(%x: Tensor[(1, 8, 9, 9), float32], %w: Tensor[(16, 8, 3, 3), float32]) "
                             "{ nn.conv2d(%x, %w, padding=[1, 1, 1, 1]) }",
         "conv2d_nchw_cl", plain, 8},
        /* a device that stages (or is no cpu) takes depthwise convs in the
         * direct form; a cpu device that does not keeps the flat one, at any
         * stride (de-interleaved into phases) */
        {"a stride-2 depthwise conv", HDR "def @main(%x: Tensor[(1, 8, 9, 9), float32], %w: Tensor[(8, 1, 3, 3), "
                                          "float32]) { nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], "
                                          "groups=8) }",
         "depthwise_conv2d_nchw_cl", flat ? dw_flat : plain, flat ? 5 : 8},
        {"a dilated depthwise conv", HDR "def @main(%x: Tensor[(1, 8, 9, 9), float32], %w: Tensor[(8, 1, 3, 3), "
                                         "float32]) { nn.conv2d(%x, %w, padding=[2, 2, 2, 2], dilation=[2, 2], "
                                         "groups=8) }",
         "depthwise_conv2d_nchw_cl", plain, 8},
        {"a stride-1 depthwise conv", HDR "def @main(%x: Tensor[(1, 8, 9, 9), float32], %w: Tensor[(8, 1, 3, 3), "
                                          "float32]) { nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=8) }",
         "depthwise_conv2d_nchw_cl", flat ? dw_flat : plain, flat ? 5 : 8},
        {"a grouped conv", HDR "def @main(%x: Tensor[(1, 8, 9, 9), float32], %w: Tensor[(16, 4, 3, 3), float32]) "
                               "{ nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=2) }",
         "group_conv2d_nchw_cl", plain, 8},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        ir_module *m = hx_load(kinds[i].what, kinds[i].text);
        const char *tmpl = "";
        bool has = has_knobs(hx_last_primitive(m), t, kinds[i].knobs, kinds[i].n, &tmpl);
        ok(has && !strcmp(tmpl, kinds[i].tmpl), "%s: %s has the knobs of work-group shape, tile, unroll and vector "
           "width", kinds[i].what, tmpl);
        ir_module_free(m);
    }
    for (int i = 0; i < NS; i++)
        ir_module_free(mods[i]);
}

/* Grouped convs (2, 3 and 4 groups; 3 output channels a group, which no
 * power-of-two tile divides, in a batch of 2; a 1x1 one; a channel
 * multiplier of 2, one input channel a group), a dilated depthwise conv
 * (the direct form's depthwise kind), strides 1 and 2, a bias and relu and
 * a residual add, each with local_stage off
 * and on: conv2d_nchw_cl's form under their own templates' names, checked
 * as the plain convs are; a GPU's defaults too. */
static void group_checks(const tg_target *t)
{
    static const conv_shape shapes[] = {
        {1, 8, 9, 9, 16, 3, 3, 1, 1, 1, 2, 0}, {2, 6, 7, 7, 9, 3, 3, 2, 1, 2, 3, 0}, {1, 12, 5, 5, 12, 1, 1, 1, 0, 0, 4, 0},
        {1, 5, 9, 9, 10, 3, 3, 2, 1, 1, 5, 0}, {1, 7, 9, 9, 7, 3, 3, 1, 2, 2, 7, 2},
    };
    enum { NS = sizeof shapes / sizeof *shapes };
    ir_module *mods[NS];
    fn_case cs[2 * NS];
    totals tot;
    conv_set(t, "grouped conv", shapes, NS, mods, cs, &tot);
    ok(tot.random[1] > 0 && tot.random[1] + tot.random[2] >= NS * 2,
       "grouped conv: %d random configs of depthwise_conv2d_nchw_cl, %d of group_conv2d_nchw_cl match",
       tot.random[1], tot.random[2]);
    stage_oks("grouped conv", &tot, NS * 2);
    ok(tot.staged_barriers > 0, "some of them (%d) between barriers", tot.staged_barriers);
    totals gt;
    if (gpu_defaults("grouped conv", cs, NS, &gt)) {
        ok(gt.stage_runs[1] == NS && gt.stage_ok[1] == NS && gt.staged_barriers * 2 > NS,
           "grouped conv, a GPU's defaults: all %d staged kernels match, %d of them between barriers",
           gt.stage_ok[1], gt.staged_barriers);
    }
    for (int i = 0; i < NS; i++)
        ir_module_free(mods[i]);
}

/* ---- depthwise convs: the direct form on the device -------------------- */

/* Whether the space of the last primitive function of relay text `text`
 * on target t has the direct form's knobs (work-group shape, tiles,
 * local_stage); *tmpl gets its template's name. */
static bool dw_direct(const char *text, const tg_target *t, const char **tmpl)
{
    static const char *const knobs[] = {"wg_oc", "wg_px", "tile_oc", "tile_px", "local_stage"};
    ir_module *m = hx_load("a depthwise conv", text);
    bool has = has_knobs(hx_last_primitive(m), t, knobs, 5, tmpl);
    ir_module_free(m);
    return has;
}

/* mobilenet_v2's depthwise convs (3x3, padding 1; strides 1 and 2; widths
 * 112, 56, 14 and 7; a bias and relu, a residual add) in the direct form,
 * on this device under -local-stage=1 (a device that stages takes them
 * direct), each with local_stage off and on: the defaults otherwise, seeded
 * random configs of depthwise_conv2d_nchw_cl's space and each vector width,
 * against the reference (1e-4); the staged kernels declare __local patches
 * and wait at barriers, the others do neither; 2-D work-groups. Then a
 * GPU's defaults of them, and the form this device takes by default (a cpu
 * device: the flat one, no local_stage). */
static void depthwise_checks(const tg_target *t)
{
    static const conv_shape shapes[] = {
        {1, 8, 112, 112, 8, 3, 3, 1, 1, 1, 8, 0},   {1, 8, 112, 112, 8, 3, 3, 2, 1, 0, 8, 0},
        {1, 16, 56, 56, 16, 3, 3, 1, 1, 2, 16, 0},  {1, 16, 56, 56, 16, 3, 3, 2, 1, 1, 16, 0},
        {1, 24, 14, 14, 24, 3, 3, 1, 1, 1, 24, 0},  {1, 24, 14, 14, 24, 3, 3, 2, 1, 1, 24, 0},
        {1, 32, 7, 7, 32, 3, 3, 1, 1, 2, 32, 0},
    };
    enum { NS = sizeof shapes / sizeof *shapes };
    const char *tmpl = "", *why = "";
    bool flat = keeps_flat_dw(t), has = true;
    for (int i = 0; i < NS; i++)
        has = has && dw_direct(conv_model(&shapes[i]), t, &tmpl) != flat;
    ok(has && !strcmp(tmpl, "depthwise_conv2d_nchw_cl"), "depthwise convs on this %s device by default: %s, %s",
       t->cl.type, tmpl, flat ? "the flat form (no local_stage)" : "the direct form (local_stage)");
    tg_target st;
    if (!ok(tg_target_parse("opencl -local-stage=1", &st, &why), "a target that stages: %s", why))
        return;
    has = true;
    for (int i = 0; i < NS; i++)
        has = has && dw_direct(conv_model(&shapes[i]), &st, &tmpl);
    ok(has && !strcmp(tmpl, "depthwise_conv2d_nchw_cl"), "under -local-stage=1 every one is direct: %s has the "
       "knobs of work-group shape, tile and staging", tmpl);
    ir_module *mods[NS];
    fn_case cs[2 * NS];
    totals tot;
    conv_set(&st, "depthwise conv", shapes, NS, mods, cs, &tot);
    staged_set_oks("depthwise conv", &tot, 1, NS * 2);
    totals gt;
    if (gpu_defaults("depthwise conv", cs, NS, &gt)) {
        ok(gt.stage_runs[1] == NS && gt.stage_ok[1] == NS && gt.staged_barriers == NS,
           "depthwise conv, a GPU's defaults: all %d staged kernels match, %d of them between barriers",
           gt.stage_ok[1], gt.staged_barriers);
        ok(gt.two_d == NS, "depthwise conv, a GPU's defaults: %d kernels run over 2-D work-groups (channels x "
           "pixels)", gt.two_d);
    }
    for (int i = 0; i < NS; i++)
        ir_module_free(mods[i]);
}

int main(void)
{
    tg_target t;
    const char *why;
    if (!tg_target_parse("opencl", &t, &why)) {
        printf("1..0 # SKIP no OpenCL device: %s\n", why);
        return 0;
    }
    diag("device: %s (%s), %s", t.cl.name, t.cl.platform_name, t.cl.version);
    target_checks(&t);
    launch_checks(&t);
    /* (each parse before its check: arguments are evaluated in no fixed order) */
    tg_target tr;
    bool parsed = tg_target_parse("opencl -wg-reduce=1", &tr, &why);
    if (ok(parsed && tr.hw.wg_reduce, "-wg-reduce=1 turns work-group reductions on"))
        reduction_checks(&tr);
    ok(t.hw.wg_reduce == (strcmp(t.cl.type, "cpu") != 0), "by default they are %s on this %s device",
       t.hw.wg_reduce ? "on" : "off", t.cl.type);
    parsed = tg_target_parse("opencl -wg-reduce=0", &tr, &why);
    ok(parsed && !tr.hw.wg_reduce, "-wg-reduce=0 turns them off");
    why = "";
    parsed = tg_target_parse("opencl -wg-reduce=2", &tr, &why);
    ok(!parsed && strstr(why, "0 or 1"), "-wg-reduce=2 is refused: %s", why);
    vector_checks(&t);
    dense_checks(&t);
    bmm_checks(&t);
    conv_checks(&t);
    group_checks(&t);
    depthwise_checks(&t);
    totals ops = {0}, zoo_tot = {0};
    ir_module *mods[NMODELS];
    static fn_case cs[MAXK];
    int nc = 0;
    for (int m = 0; m < NMODELS; m++) {
        mods[m] = hx_load(models[m].name, models[m].text);
        const ir_expr **fs;
        size_t nf = hx_primitives(mods[m], &fs);
        for (size_t f = 0; f < nf && nc < MAXK; f++)
            cs[nc++] = (fn_case){fs[f], models[m].name, models[m].lo, models[m].hi};
        free(fs);
    }
    check_set(&t, "op models", cs, nc, true, &ops);
    for (int m = 0; m < NMODELS; m++)
        ir_module_free(mods[m]);
    diag("op models: %d kernels ran on work-items (%d of them over many work-groups), %d as one work-item; builds "
         "%.2f s, runs %.2f s",
         ops.group, ops.grids, ops.single, ops.build_s, ops.run_s);
    ok(ops.grids > 0, "some kernels run over many work-groups");
    for (int d = 0; d < NDEVT; d++)
        if (t.hw.wg_reduce || strcmp(device_templates[d], "reduce_cl"))
            ok(ops.random[d] > 0, "random configs of %s match the reference (%d)", device_templates[d], ops.random[d]);
    for (int d = 0; d < NDEVT; d++)
        if (has_vec[d])
            ok(ops.widths[d] > 0, "each vector width of %s matches the reference (%d configs)", device_templates[d],
               ops.widths[d]);
    ok(ops.vectors > 0, "op models: %d kernels with vector types match", ops.vectors);
    check_zoo(&t, &zoo_tot, zoo, NZOO);
    diag("zoo: %d kernels ran on work-items (%d of them over many work-groups), %d as one work-item; builds %.2f s, "
         "runs %.2f s",
         zoo_tot.group, zoo_tot.grids, zoo_tot.single, zoo_tot.build_s, zoo_tot.run_s);
    ok(zoo_tot.grids * 2 > zoo_tot.group + zoo_tot.single, "most zoo kernels run over many work-groups");
    ok(zoo_tot.vectors > 0, "zoo: %d kernels with vector types by default match", zoo_tot.vectors);
    return tap_done();
}
