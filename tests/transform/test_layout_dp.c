/* test_layout_dp.c — the graph-level choice of block factors (layout_dp.c):
 * on a two-conv chain with kernel times handed in, a transform between the
 * convs when it is cheaper than either kernel's slow block, consistent
 * blocks when it is not; the rewritten module uses the chosen blocks; the
 * forced variants that tuning extracts the tasks of each block from; and
 * the DP's time on resnet50 (53 convs), with the analytic model and with
 * api/'s database callback, printed and bounded. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "ir/transform/transform.h"
#include "tests/tap.h"
#include "tests/transform/load.h"

static const char *chain =
    "#[version = \"0.0.5\"]\n"
    "def @main(%x: Tensor[(1, 16, 8, 8), float32], %w1: Tensor[(32, 16, 1, 1), float32],\n"
    "          %w2: Tensor[(32, 32, 1, 1), float32]) {\n"
    "  %0 = nn.conv2d(%x, %w1, padding=[0, 0], channels=32, kernel_size=[1, 1]);\n"
    "  %1 = nn.relu(%0);\n"
    "  nn.conv2d(%1, %w2, padding=[0, 0], channels=32, kernel_size=[1, 1])\n"
    "}\n";

/* Kernel times: the first conv (16 input channels) is fast only writing
 * block 8, the second (32 input channels) only reading block 32; the others
 * cost `slow` more. */
static double chain_cost(void *ctx, const ir_expr *conv, int64_t ib, int64_t ob)
{
    double slow = *(const double *)ctx;
    bool first = conv->u.call.args[0]->type->shape[1] == 16;
    return first ? (ob == 8 ? 1e-3 : 1e-3 + slow) : (ib == 32 ? 1e-3 : 1e-3 + slow);
}

static tr_block_choices choose(ir_module *m, double slow)
{
    tr_options o = {.level = 3, .layout_block = 8, .layout_auto = true, .layout_cost = chain_cost, .layout_cost_ctx = &slow};
    tr_block_choices c = {0};
    tr_layout_dp(m, &o, &c);
    return c;
}

static void chain_tests(void)
{
    ir_module *m = load(chain);
    if (!ok(m != NULL, "the chain parses"))
        return;
    /* the transform of (1, 32, 8, 8) floats moves 16 KiB: 1.6 us at 10 GB/s */
    tr_block_choices c = choose(m, 1e-3);
    is_int((long long)c.n, 2, "two convs");
    is_int((long long)c.edges, 1, "one edge between them");
    ok(c.n == 2 && c.v[0].ob == 8 && c.v[1].ib == 32,
       "slow kernels (1 ms) cost more than a transform: blocks 8 then 32 (got %lld, %lld)",
       c.n == 2 ? (long long)c.v[0].ob : 0, c.n == 2 ? (long long)c.v[1].ib : 0);
    ok(c.n == 2 && c.v[0].ib == 8 && c.v[1].ob == 8,
       "ties in kernel time go to the smallest block (input 8, output 8)");
    free(c.v);

    c = choose(m, 1e-8);
    ok(c.n == 2 && c.v[0].ob == c.v[1].ib,
       "kernels 10 ns slower cost less than a transform: consistent blocks (got %lld, %lld)",
       c.n == 2 ? (long long)c.v[0].ob : 0, c.n == 2 ? (long long)c.v[1].ib : 0);
    free(c.v);

    /* the pass applies the choice: a transform from 8 to 32 between the convs */
    double slow = 1e-3;
    tr_options o = {.level = 3, .layout_block = 8, .layout_auto = true, .layout_cost = chain_cost, .layout_cost_ctx = &slow};
    su_diags d = {0};
    bool done = tr_alter_layout(m, &o, &d) && ir_infer_types(m, &d);
    su_diags_print(stdout, &d);
    su_diags_free(&d);
    su_buf b = {0};
    ir_print_opts po = {false};
    ir_print_module(&b, m, &po);
    const char *s = su_buf_str(&b);
    ok(done && strstr(s, "src_layout=\"NCHW8c\", dst_layout=\"NCHW32c\"") && strstr(s, "kernel_layout=\"OIHW32i8o\"") &&
           strstr(s, "kernel_layout=\"OIHW16i8o\"") == NULL,
       "alter-layout with layout_auto uses the DP's blocks");
    if (!done || !strstr(s, "NCHW32c"))
        diag("%s", s);
    su_buf_free(&b);
    ir_module_free(m);
}

/* layout_force k: every conv in its k-th candidate block (8, 16, 32 for 32
 * channels at lanes 8; 8, 16 for the 16 input channels), the last when it
 * has fewer, each input in its producer's block: no search, no transform. */
static void forced_tests(void)
{
    ir_module *m = load(chain);
    if (!ok(m != NULL, "the chain parses"))
        return;
    static const int64_t want[5][3] = {{0}, {8, 8, 8}, {16, 16, 16}, {16, 32, 32}, {16, 32, 32}};
    for (int k = 1; k <= TR_LAYOUT_VARIANTS; k++) {
        double slow = 1e-3; /* kernel times that would make the DP choose otherwise */
        tr_options o = {.level = 3, .layout_block = 8, .layout_auto = true, .layout_force = k,
                        .layout_cost = chain_cost, .layout_cost_ctx = &slow};
        tr_block_choices c = {0};
        tr_layout_dp(m, &o, &c);
        ok(c.n == 2 && c.v[0].ib == want[k][0] && c.v[0].ob == want[k][1] && c.v[1].ib == want[k][1] &&
               c.v[1].ob == want[k][2],
           "variant %d: blocks %lld -> %lld -> %lld (got %lld -> %lld, %lld -> %lld)", k, (long long)want[k][0],
           (long long)want[k][1], (long long)want[k][2], c.n == 2 ? (long long)c.v[0].ib : 0,
           c.n == 2 ? (long long)c.v[0].ob : 0, c.n == 2 ? (long long)c.v[1].ib : 0, c.n == 2 ? (long long)c.v[1].ob : 0);
        free(c.v);
    }
    ir_module_free(m);
}

/* A database with no records (removed by the caller), as api/ reads it for
 * the DP: every lookup is made and misses, so the time is the callback's. */
static api_layout_costs *empty_db_costs(char *dir, size_t n)
{
    snprintf(dir, n, "/tmp/rt-layout-dp-XXXXXX");
    if (!mkdtemp(dir))
        return NULL;
    char path[4200];
    snprintf(path, sizeof path, "%s/t.db", dir);
    su_buf err = {0};
    db_open_opts dopts = {0, 0, 0};
    db *d = db_open(path, &dopts, &err);
    su_buf_free(&err);
    db_close(d);
    return d ? api_layout_costs_load(path, "cpu", stdout) : NULL;
}

static void resnet50_time(void)
{
    const char *dir = getenv("top_srcdir");
    char path[4096];
    snprintf(path, sizeof path, "%s/benchmarks/models/resnet50.relay", dir ? dir : ".");
    size_t len;
    char *text = su_read_file(path, &len);
    ir_module *m = text ? load(text) : NULL;
    free(text);
    if (!ok(m != NULL, "resnet50 loads (%s)", path))
        return;
    /* the graph alter-layout sees: seeded weights bound, the passes before it run */
    const ir_expr *f = m->defs.data[0].func;
    int np = f->u.func.nparams;
    const char **names = su_calloc((size_t)np, sizeof *names);
    const ir_tensor **vals = su_calloc((size_t)np, sizeof *vals);
    for (int i = 1; i < np; i++) {
        const ir_expr *p = f->u.func.params[i];
        ir_tensor *t = ir_tensor_new(&m->arena, p->type->dtype, p->type->ndim, p->type->shape);
        ir_random_param(f, i, 7, t);
        names[i - 1] = p->u.var.name, vals[i - 1] = t;
    }
    su_diags d = {0};
    bool prepared = tr_bind_params(m, names, vals, (size_t)np - 1, &d) && ir_infer_types(m, &d);
    size_t npass;
    const tr_pass *passes = tr_passes(&npass);
    tr_options o = {.level = 3, .layout_block = 16, .layout_auto = true};
    for (size_t i = 0; prepared && i < npass && strcmp(passes[i].name, "alter-layout"); i++)
        prepared = passes[i].level > 3 || (passes[i].fn(m, &o, &d) && ir_infer_types(m, &d));
    su_diags_print(stdout, &d);
    su_diags_free(&d);
    free(names);
    free(vals);
    ok(prepared, "resnet50: weights bound, the passes before alter-layout run");
    tr_block_choices c = {0};
    tr_layout_dp(m, &o, &c);
    is_int((long long)c.n, 53, "resnet50: the DP sees its 53 convs");
    ok(c.edges >= 52, "resnet50: at least one edge into every conv but the stem (%zu)", c.edges);
    diag("layout DP on resnet50: %zu convs, %zu edges, %.3f ms, estimated kernel time %.1f ms", c.n, c.edges,
         1e3 * c.dp_s, 1e3 * c.total_s);
    ok(c.dp_s < 0.5, "resnet50: the DP takes under 0.5 s (%.3f ms)", 1e3 * c.dp_s);
    char tmp[64];
    api_layout_costs *costs = empty_db_costs(tmp, sizeof tmp);
    if (ok(costs != NULL, "an empty database's kernel times load")) {
        o.layout_cost = api_layout_cost;
        o.layout_cost_ctx = costs;
        tr_block_choices cb = {0};
        tr_layout_dp(m, &o, &cb);
        bool same = cb.n == 53;
        for (size_t i = 0; same && i < cb.n; i++)
            same = cb.v[i].ib == c.v[i].ib && cb.v[i].ob == c.v[i].ob;
        ok(same, "resnet50: with no record the callback's DP chooses as the analytic model does");
        diag("layout DP on resnet50 with the database callback (every lookup made, none found): %.3f ms",
             1e3 * cb.dp_s);
        ok(cb.dp_s < 0.5, "resnet50: the DP with the callback takes under 0.5 s (%.3f ms)", 1e3 * cb.dp_s);
        free(cb.v);
    }
    api_layout_costs_free(costs);
    free(c.v);
    char dbpath[4200];
    snprintf(dbpath, sizeof dbpath, "%s/t.db", tmp);
    unlink(dbpath);
    rmdir(tmp);
    ir_module_free(m);
}

int main(void)
{
    chain_tests();
    forced_tests();
    resnet50_time();
    return tap_done();
}
