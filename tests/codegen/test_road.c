/* test_road.c — the one road from (primitive function, config) to kernel:
 * the op → template table and the workload key (schedule/workload.c),
 * sch_build's steps and the way each one fails, tg_kernel_c's parts and
 * names, and a compiled model built from configs handed to it as values
 * (a config that does not apply falls back to the defaults, and says so). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/codegen/harness.h"
#include "tests/tap.h"

#define HDR "#[version = \"0.0.5\"]\n"

static const char *CONV = HDR
    "def @main(%x: Tensor[(1, 8, 6, 6), float32], %w: Tensor[(16, 8, 3, 3), float32]) {\n"
    "  nn.relu(nn.conv2d(%x, %w, padding=[1, 1]))\n"
    "}\n";
static const char *DEPTHWISE = HDR
    "def @main(%x: Tensor[(1, 8, 6, 6), float32], %w: Tensor[(8, 1, 3, 3), float32]) {\n"
    "  nn.conv2d(%x, %w, padding=[1, 1], groups=8)\n"
    "}\n";
static const char *NHWC = HDR
    "def @main(%x: Tensor[(1, 6, 6, 8), float32], %w: Tensor[(3, 3, 8, 16), float32]) {\n"
    "  nn.conv2d(%x, %w, padding=[1, 1], data_layout=\"NHWC\", kernel_layout=\"HWIO\")\n"
    "}\n";
static const char *EXP = HDR "def @main(%x: Tensor[(4, 64), float32]) { exp(%x) }\n";


/* The workload key and the template of a schedule agree: both read the
 * table of op families. */
static void test_families(void)
{
    static const struct {
        const char **text;
        const char *name;
    } cases[] = {{&CONV, "conv2d_nchw"}, {&DEPTHWISE, "depthwise_conv2d_nchw"}, {&NHWC, NULL}, {&EXP, NULL}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ir_module *m = hx_load("family.relay", *cases[i].text);
        const ir_expr *f = hx_last_primitive(m);
        const char *tmpl = "unset";
        const ir_op_def *anchor = NULL;
        char *key = sch_workload_key(f, &tmpl, &anchor);
        const char *want = cases[i].name;
        ok(want ? tmpl && !strcmp(tmpl, want) : tmpl == NULL, "case %zu: the key names template %s (%s)", i,
           want ? want : "none", key);
        ok(!strncmp(key, want ? want : "none", strlen(want ? want : "none")), "case %zu: the key starts with it", i);
        ok(want ? anchor && !strcmp(anchor->name, "nn.conv2d") : !anchor || strcmp(anchor->name, "exp") != 0,
           "case %zu: the anchor", i);
        su_diags d = {0};
        sch_schedule *s = sch_create(f, &d);
        is_str(sch_template_name(s), want ? want : "default", "case %zu: the schedule gets the same template", i);
        sch_free(s);
        su_diags_free(&d);
        free(key);
        ir_module_free(m);
    }
}

static void test_build(const ir_expr *f)
{
    sch_build_opts bo = {.space_only = true};
    sch_kernel k;
    bool built = sch_build(f, &bo, &k);
    ok(built && !k.l && k.space.knobs.len > 3, "space only: the space, no LoopIR (%zu knobs)",
       k.space.knobs.len);
    is_str(k.space.template_name, "conv2d_nchw", "the function's own template");
    int nknobs = (int)k.space.knobs.len;
    sch_config dflt;
    sch_config_default(&k.space, &dflt);
    ok(k.cfg.n == nknobs && !memcmp(k.cfg.choice, dflt.choice, (size_t)nknobs * sizeof *dflt.choice),
       "no config: the defaults are reported as applied");
    char *dj = sch_config_json(&k.space, &dflt);
    sch_kernel_free(&k);

    /* a config as a value: the last candidate of every knob */
    sch_config last = {nknobs, su_calloc((size_t)nknobs, sizeof *last.choice)};
    sch_build(f, &bo, &k);
    for (int i = 0; i < nknobs; i++)
        last.choice[i] = k.space.knobs.data[i].ncand - 1;
    sch_kernel_free(&k);
    bool consts[2] = {false, true};
    sch_build_opts vo = {.cfg = &last, .param_const = consts};
    ok(sch_build(f, &vo, &k) && k.l && k.failed == SCH_BUILT, "a config value builds");
    ok(k.cfg.choice != last.choice && !memcmp(k.cfg.choice, last.choice, (size_t)nknobs * sizeof *last.choice),
       "the config applied is a copy of the one given");
    char *lj = sch_config_json(&k.space, &k.cfg);
    sch_kernel_free(&k);

    /* the same config as command-line text: the same schedule */
    sch_build_opts jo = {.cfg_json = lj, .param_const = consts};
    ok(sch_build(f, &jo, &k) && k.l, "its JSON builds");
    ok(k.cfg.n == nknobs && !memcmp(k.cfg.choice, last.choice, (size_t)nknobs * sizeof *last.choice),
       "and reads back as the same config");
    su_buf t1 = {0};
    sch_trace_print(&t1, k.s);
    sch_kernel_free(&k);
    sch_build(f, &vo, &k);
    su_buf t2 = {0};
    sch_trace_print(&t2, k.s);
    is_str(su_buf_str(&t1), su_buf_str(&t2), "text and value give the same trace");
    sch_kernel_free(&k);
    su_buf_free(&t1);
    su_buf_free(&t2);
    sch_build_opts d0 = {.cfg_json = dj, .param_const = consts};
    ok(sch_build(f, &d0, &k) && k.l->nprologues == 1, "the default config packs the constant weight in a prologue");
    sch_kernel_free(&k);

    /* the ways a build fails */
    sch_build_opts bad = {.cfg_json = "{\"knobs\":{\"no_such_knob\":1}}"};
    built = sch_build(f, &bad, &k);
    ok(!built && k.failed == SCH_BUILD_CONFIG && k.err == SCH_E_BAD_CONFIG && k.why && *k.why &&
           !k.l,
       "config text outside the space: CONFIG (%s)", k.why ? k.why : "");
    sch_kernel_free(&k);
    sch_config shortc = {1, last.choice};
    sch_build_opts so = {.cfg = &shortc};
    built = sch_build(f, &so, &k);
    ok(!built && k.failed == SCH_BUILD_TEMPLATE && k.err == SCH_E_BAD_CONFIG && k.s,
       "a config of the wrong size: TEMPLATE, BAD_CONFIG (%s)", k.why ? k.why : "");
    sch_kernel_free(&k);
    last.choice[0] = 99;
    built = sch_build(f, &vo, &k);
    ok(!built && k.failed == SCH_BUILD_TEMPLATE && k.err == SCH_E_BAD_CONFIG,
       "a candidate out of range: TEMPLATE, BAD_CONFIG (%s)", k.why ? k.why : "");
    sch_kernel_free(&k);
    sch_config_free(&last);
    sch_config_free(&dflt);
    free(dj);
    free(lj);
}

/* An untyped function cannot be scheduled: CREATE, with the diagnostic. */
static void test_untyped(void)
{
    su_diags d = {0};
    ir_module *m = ir_parse("untyped.relay", EXP, strlen(EXP), &d);
    sch_build_opts bo = {0};
    sch_kernel k;
    bool built = sch_build(ir_module_find(m, "main")->func, &bo, &k);
    ok(m && !built && k.failed == SCH_BUILD_CREATE && !k.s &&
           k.diags.len == 1 && k.why && strstr(k.why, "not a typed function"),
       "an untyped function: CREATE, its diagnostic kept (%s)", k.why ? k.why : "");
    sch_kernel_free(&k);
    su_diags_free(&d);
    ir_module_free(m);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void test_kernel_c(const ir_expr *f)
{
    bool consts[2] = {false, true};
    sch_build_opts bo = {.param_const = consts};
    sch_kernel k;
    sch_build(f, &bo, &k);
    su_buf body = {0}, pro = {0}, all = {0};
    tg_kernel_c(&body, k.l, "kk", TG_KERNEL_BODY);
    tg_kernel_c(&pro, k.l, "kk", TG_KERNEL_PROLOGUES);
    tg_kernel_c(&all, k.l, "kk", TG_KERNEL_MEASURED);
    ok(count(su_buf_str(&body), "int kk(void *const *args)") == 1 && !strstr(su_buf_str(&body), "kk_p0"),
       "the body alone: the entry kk, no prologue");
    ok(strstr(su_buf_str(&pro), "int kk_p0(void *const *args)") && !strstr(su_buf_str(&pro), "int kk("),
       "the prologues alone: kk_p0");
    ok(strstr(su_buf_str(&all), "int kk_p0(void *const *args)") && strstr(su_buf_str(&all), "int kk_k(void *const *args)") &&
           strstr(su_buf_str(&all), "int kk(void *const *args)\n{\n    static void *w[1];"),
       "measured: the prologue, the kernel as kk_k and the wrapper kk packing once");
    /* the wrapper passes the parameters, the packed weight, then the output */
    ok(strstr(su_buf_str(&all), "void *a[4] = {args[0], args[1], w[0], args[2]};"),
       "the wrapper's arguments: parameters, packed weight, output");
    sch_kernel_free(&k);
    sch_build(f, &(sch_build_opts){0}, &k);
    su_buf plain = {0}, meas = {0};
    tg_kernel_c(&plain, k.l, "kk", TG_KERNEL_BODY);
    tg_kernel_c(&meas, k.l, "kk", TG_KERNEL_MEASURED);
    is_str(su_buf_str(&meas), su_buf_str(&plain), "no prologue: the measured kernel is the body alone");
    sch_kernel_free(&k);
    su_buf_free(&body);
    su_buf_free(&pro);
    su_buf_free(&all);
    su_buf_free(&plain);
    su_buf_free(&meas);
}

/* A compile with configs as values; the object's path is the hash of its
 * sources, so equal paths mean equal C. */
static char *compile(const ir_module *m, const tg_target *t, const tg_kernel_config *cfgs, int n, FILE *notes,
                     int *ntuned)
{
    tg_model_opts o = {NULL, cfgs, n, 1, notes};
    tg_model_info info;
    char *err = NULL;
    bool okk = tg_model_compile(m, t, &o, &info, &err);
    if (!okk)
        diag("compile: %s", err);
    free(err);
    *ntuned = info.ntuned;
    return okk ? info.path : (free(info.path), NULL);
}

static void test_model_configs(void)
{
    ir_module *m = hx_load("conv.relay", CONV);
    const ir_expr *f = hx_last_primitive(m);
    tg_target t;
    const char *why;
    tg_target_parse("cpu -mcpu=haswell -cores=1", &t, &why);
    char *key = sch_workload_key(f, NULL, NULL);
    sch_kernel k;
    sch_build(f, &(sch_build_opts){.hw = &t.hw, .space_only = true}, &k);
    tg_kernel_config kc = {key, {(int)k.space.knobs.len, su_calloc(k.space.knobs.len, sizeof(int))}};
    for (int i = 0; i < kc.cfg.n; i++)
        kc.cfg.choice[i] = k.space.knobs.data[i].ncand - 1;
    sch_kernel_free(&k);
    int nt = -1;
    char *p0 = compile(m, &t, NULL, 0, NULL, &nt);
    ok(p0 && nt == 0, "no configs: every kernel with its defaults");
    char *p1 = compile(m, &t, &kc, 1, NULL, &nt);
    ok(p1 && nt == 1 && strcmp(p0 ? p0 : "", p1) != 0, "a config for the workload: one kernel tuned, other C");
    tg_kernel_config other = {"dense|float32|in=1x1|body=nothing", kc.cfg};
    char *p2 = compile(m, &t, &other, 1, NULL, &nt);
    ok(p2 && nt == 0 && !strcmp(p0 ? p0 : "", p2), "a config of another workload: the defaults, the same C");
    kc.cfg.n = 1;
    char notes[4096] = {0};
    FILE *nf = fmemopen(notes, sizeof notes - 1, "w");
    char *p3 = compile(m, &t, &kc, 1, nf, &nt);
    fclose(nf);
    ok(p3 && nt == 0 && !strcmp(p0 ? p0 : "", p3), "a config that does not apply: the defaults, the same C");
    ok(strstr(notes, "config of task conv2d_nchw does not apply; using the defaults") != NULL, "and a note says so (%s)",
       notes);
    free(kc.cfg.choice);
    free(key);
    free(p0);
    free(p1);
    free(p2);
    free(p3);
    ir_module_free(m);
}

int main(void)
{
    hx_temp_cache();
    test_families();
    ir_module *m = hx_load("conv.relay", CONV);
    const ir_expr *f = hx_last_primitive(m);
    test_build(f);
    test_kernel_c(f);
    ir_module_free(m);
    test_untyped();
    test_model_configs();
    return tap_done();
}
