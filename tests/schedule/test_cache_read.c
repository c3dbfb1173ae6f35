/* test_cache_read.c — cache_read (schedule/cache_read.c) and its lowering:
 * a dense's k-block tiles of both operands staged in SHARED memory at the
 * k-block loop of a 2-D work-group schedule, printed as LoopIR against a
 * golden file (the __local arrays sized by the tile each k block reads, the
 * copy shared out over the work-items, a barrier after it and one after
 * the use); the trace prints, and its JSON replays to the same LoopIR; the
 * errors: a tensor the stage does not read, a scope that is not built, a
 * stage computed where no work-item loop can share the copy or inside one;
 * dense_cl on a target without work-groups keeps its defaults (no staging,
 * nothing shared) and refuses a config that stages. Whether the staged
 * kernels compute the right thing is tests/codegen/test_opencl's part. */
#include <string.h>

#include "tests/codegen/harness.h"
#include "tests/tap.h"

#define HDR "#[version = \"0.0.5\"]\n"

static const char *DENSE = HDR
    "def @main(%x: Tensor[(8, 16), float32], %w: Tensor[(32, 16), float32]) { nn.dense(%x, %w) }\n";

/* LoopIR text of a schedule, or "error: why" (malloc'd). */
static char *lowered(sch_schedule *s)
{
    sch_lowered *l = sch_lower(s, NULL);
    su_buf b = {0};
    if (!l)
        su_buf_printf(&b, "error: %s", s->err_msg);
    else
        sch_print_func(&b, l->kernel);
    return su_buf_take(&b);
}

static void check_golden(const char *name, const char *got)
{
    const char *dir = getenv("top_srcdir");
    su_buf p = {0};
    su_buf_printf(&p, "%s/tests/schedule/golden/%s", dir ? dir : ".", name);
    if (getenv("RT_UPDATE_GOLDEN")) {
        FILE *f = fopen(su_buf_str(&p), "w");
        if (f) {
            fputs(got, f);
            fclose(f);
        }
    }
    size_t n;
    char *want = su_read_file(su_buf_str(&p), &n);
    is_str(got, want ? want : "(missing golden file)", "golden LoopIR %s", name);
    free(want);
    su_buf_free(&p);
}

static sch_iter *it(sch_tensor *t, const char *name)
{
    sch_iter *i = sch_find_iter(t, name);
    if (!i)
        su_panic("no loop %s in %s", name, t->name);
    return i;
}

/* The dense's loops as dense_cl shapes them (2 x 4 work-groups of 4 x 4
 * work-items, 1 x 2 register tiles, k blocks of 8); bound unless `plain`. */
static sch_tensor *shape(sch_schedule *s, bool plain)
{
    sch_tensor *d = sch_anchor(s);
    sch_split(s, d, it(d, "i"), 4, NULL, NULL);
    sch_split(s, d, it(d, "j"), 8, NULL, NULL);
    sch_split(s, d, it(d, "j.i"), 2, NULL, NULL);
    sch_split(s, d, it(d, "k"), 8, NULL, NULL);
    sch_iter *order[7] = {it(d, "i.o"), it(d, "j.o"), it(d, "k.o"), it(d, "i.i"), it(d, "j.i.o"), it(d, "k.i"),
                          it(d, "j.i.i")};
    sch_reorder(s, d, 7, order);
    if (!plain) {
        sch_bind(s, d, it(d, "i.o"), 1);
        sch_bind(s, d, it(d, "j.o"), 0);
        sch_bind(s, d, it(d, "i.i"), 4);
        sch_bind(s, d, it(d, "j.i.o"), 3);
    }
    sch_annotate(s, d, it(d, "j.i.i"), SCH_LOOP_VECTORIZED);
    return d;
}

/* Both operands staged at loop `at` of the dense (the weight k-major). */
static sch_err stage_both(sch_schedule *s, sch_tensor *d, const char *at)
{
    sch_tensor *x = sch_find_tensor(s, "p0"), *w = sch_find_tensor(s, "p1"), *cx, *cw;
    sch_err e = sch_cache_read(s, d, x, SCH_SCOPE_SHARED, &cx);
    if (!e)
        e = sch_compute_at(s, cx, d, it(d, at));
    if (!e)
        e = sch_cache_read(s, d, w, SCH_SCOPE_SHARED, &cw);
    if (!e) {
        sch_iter *k_major[2] = {cw->leaves.data[1], cw->leaves.data[0]};
        e = sch_reorder(s, cw, 2, k_major);
    }
    if (!e)
        e = sch_compute_at(s, cw, d, it(d, at));
    return e;
}

static void staged_golden(const ir_expr *f)
{
    sch_schedule *s = hx_schedule(f);
    sch_tensor *d = shape(s, false);
    is_int(stage_both(s, d, "k.o"), SCH_E_OK, "both operands staged at the k-block loop");
    char *text = lowered(s);
    check_golden("cache_read_dense.txt", text);
    ok(strstr(text, "alloc s1: float32[4, 8] shared") && strstr(text, "alloc s0: float32[8, 8] shared"),
       "the __local tiles are the k block's: 4 rows x 8 of the data, 8 x 8 columns of the weight (k-major)");
    su_buf tb = {0};
    sch_trace_print(&tb, s);
    ok(strstr(su_buf_str(&tb), "cache_read(dense0, p0)") && strstr(su_buf_str(&tb), "cache_read(dense0, p1)"),
       "the trace has the cache_reads: %s", su_buf_str(&tb));
    su_buf_free(&tb);
    char *json = sch_trace_json(s);
    sch_schedule *r = hx_schedule(f);
    is_int(sch_trace_replay_json(r, json), SCH_E_OK, "its JSON replays on a fresh schedule");
    char *again = lowered(r);
    is_str(again, text, "to the same LoopIR");
    free(again);
    free(json);
    free(text);
    sch_free(r);
    sch_free(s);
}

static void errors(const ir_expr *f)
{
    sch_schedule *s = hx_schedule(f);
    sch_tensor *d = sch_anchor(s), *c = NULL;
    is_int(sch_cache_read(s, d, d, SCH_SCOPE_SHARED, &c), SCH_E_BAD_ATTACH, "a tensor the stage does not read: %s",
           s->err_msg);
    is_int(sch_cache_read(s, d, sch_find_tensor(s, "p0"), SCH_SCOPE_LOCAL, &c), SCH_E_UNSUPPORTED,
           "a scope other than shared: %s", s->err_msg);
    sch_free(s);

    s = hx_schedule(f);
    d = shape(s, true);
    stage_both(s, d, "k.o");
    char *text = lowered(s);
    ok(strstr(text, "no work-item loops inside it") != NULL, "staged where no work-item loop shares the copy: %s",
       text);
    free(text);
    sch_free(s);

    s = hx_schedule(f);
    d = shape(s, false);
    stage_both(s, d, "k.i");
    text = lowered(s);
    ok(strstr(text, "inside its work-item loop") != NULL, "staged inside a work-item loop: %s", text);
    free(text);
    sch_free(s);
}

/* dense_cl on a target without work-groups (sch_hw_default): its defaults
 * stage nothing; a config that stages is refused by name. */
static void cpu_target(const ir_expr *f)
{
    sch_schedule *s = hx_schedule(f);
    sch_space sp = {0};
    is_int(sch_apply_template(s, "dense_cl", &sch_hw_default, NULL, &sp), SCH_E_OK,
           "dense_cl's defaults on a cpu machine");
    char *text = lowered(s);
    ok(!strstr(text, "shared") && !strstr(text, "barrier"), "stage nothing in shared memory");
    free(text);
    sch_free(s);
    const sch_knob *k = sch_space_knob(&sp, "local_stage");
    ok(k && k->ncand == 2 && k->cands[k->dflt] == 0, "its knob local_stage is off by default there");
    sch_config c = {0};
    sch_config_default(&sp, &c);
    for (int i = 0; i < c.n; i++)
        if (k && &sp.knobs.data[i] == k)
            c.choice[i] = 1;
    s = hx_schedule(f);
    is_int(sch_apply_template(s, "dense_cl", &sch_hw_default, &c, NULL), SCH_E_UNSUPPORTED,
           "a config that stages is refused");
    ok(s->err_msg && strstr(s->err_msg, "without work-groups"), "saying why: %s", s->err_msg ? s->err_msg : "");
    sch_free(s);
    sch_config_free(&c);
    sch_space_free(&sp);
}

int main(void)
{
    ir_module *m = hx_load("dense", DENSE);
    const ir_expr *f = hx_last_primitive(m);
    staged_golden(f);
    errors(f);
    cpu_target(f);
    ir_module_free(m);
    return tap_done();
}
