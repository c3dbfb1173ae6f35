/* test_pool.c — the C prelude's pool of temporaries (rt_alloc, rt_free;
 * docs/codegen.md): blocks freed by one call are handed, uncleared, to the
 * next call of any kernel in the same object, from any thread. Two kernels
 * with temporaries over the pool's 16 KiB floor (a Winograd conv: V, M and
 * Y; a padded direct conv: its padded copy) built into one object are run
 * alternately, many times, from four threads at once, and every result is
 * compared with the reference kernels': a kernel that read a temporary
 * before writing it, or two calls sharing a block, would show here. */
#include <math.h>
#include <pthread.h>

#include "tests/codegen/harness.h"
#include "tests/tap.h"

#define HDR "#[version = \"0.0.5\"]\n"
enum { NK = 2, THREADS = 4, CALLS = 12 };

static const char *const texts[NK] = {
    HDR "def @main(%x: Tensor[(1, 32, 28, 28), float32], %u: Tensor[(6, 6, 32, 32), float32], %b: Tensor[(32), float32]) "
        "{ nn.relu(nn.bias_add(nn.contrib_conv2d_winograd_without_weight_transform(%x, %u, padding=[1, 1], "
        "channels=32, kernel_size=[3, 3], tile_size=4), %b)) }",
    HDR "def @main(%x: Tensor[(1, 16, 40, 40), float32], %w: Tensor[(16, 16, 3, 3), float32]) "
        "{ nn.conv2d(%x, %w, padding=[1, 1], channels=16, kernel_size=[3, 3]) }",
};
static const char *const names[NK] = {"winograd 32x28x28", "padded conv 16x40x40"};

static hx_kernel ks[NK];
static hx_tensor *inputs[NK][4], *want[NK][2];

/* What one thread saw: its calls off the reference, and its worst error. */
typedef struct caller_result {
    int id, bad;
    double worst;
} caller_result;

static void *caller(void *arg)
{
    caller_result *r = arg;
    for (int i = 0; i < CALLS; i++) {
        int k = (i + r->id) % NK;
        hx_tensor *got[2];
        int n = 0;
        int rc = hx_run(&ks[k], inputs[k], got, &n);
        double e = rc == 0 && n == 1 ? hx_max_rel_err(got[0], want[k][0]) : INFINITY;
        r->bad += !(e < 1e-4);
        r->worst = fmax(r->worst, e);
        hx_tensors_free(got, n);
    }
    return NULL;
}

int main(void)
{
    hx_temp_cache();
    ir_module *mods[NK];
    for (int k = 0; k < NK; k++) {
        mods[k] = hx_load(names[k], texts[k]);
        const ir_expr *f = hx_last_primitive(mods[k]);
        ok(f && hx_prepare(&ks[k], f, NULL, NULL, false, false), "%s: lowers with its template", names[k]);
        hx_random_inputs(f, 7 + (unsigned)k, -1, 1, inputs[k]);
        hx_ref_run(f, inputs[k], want[k]);
    }
    int nlibs = 0;
    tg_lib **libs = hx_build_units(ks, NK, 1, &nlibs); /* one object: one pool */
    ok(libs != NULL, "both kernels build into one object");
    if (libs) {
        pthread_t th[THREADS];
        caller_result r[THREADS];
        for (int t = 0; t < THREADS; t++) {
            r[t] = (caller_result){t, 0, 0};
            pthread_create(&th[t], NULL, caller, &r[t]);
        }
        int bad = 0;
        double worst = 0;
        for (int t = 0; t < THREADS; t++) {
            pthread_join(th[t], NULL);
            bad += r[t].bad;
            worst = fmax(worst, r[t].worst);
        }
        ok(bad == 0, "%d calls from %d threads at once, the kernels alternating: %d off the reference (worst "
           "error %.2g)", THREADS * CALLS, THREADS, bad, worst);
        hx_close(libs, nlibs);
    }
    for (int k = 0; k < NK; k++) {
        const ir_expr *f = hx_last_primitive(mods[k]);
        hx_tensors_free(inputs[k], f->u.func.nparams);
        hx_tensors_free(want[k], 1);
        hx_kernel_free(&ks[k]);
        ir_module_free(mods[k]);
    }
    return tap_done();
}
