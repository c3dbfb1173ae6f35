/* tiny.h — what the tuner's tests share: the tiny model (a conv2d + relu
 * and a dense) and a temporary folder of their own, removed at exit, with
 * the kernel cache inside it. */
#ifndef RT_TESTS_TUNER_TINY_H
#define RT_TESTS_TUNER_TINY_H

#include <stdio.h>
#include <stdlib.h>

#include "support/support.h"

/* Tiny on purpose: the dense's space is measured whole (test_transfer), and
 * a dense of 256 inputs compiles about 8 times faster than one of 1024. */
static const char *MODEL =
    "#[version = \"0.0.5\"]\n"
    "def @main(%x: Tensor[(1, 8, 4, 4), float32], %w: Tensor[(16, 8, 3, 3), float32], %d: Tensor[(4, 256), float32]) {\n"
    "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3]);\n"
    "  %1 = nn.relu(%0);\n"
    "  %2 = reshape(%1, newshape=[1, 256]);\n"
    "  nn.dense(%2, %d, units=4)\n"
    "}\n";

static char dir[256];

static void cleanup(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "# could not remove %s\n", dir);
}

/* Makes dir ($TMPDIR/NAME-XXXXXX), removed at exit, and points
 * $RELAY_TUNE_CACHE into it. */
static void tiny_dir(const char *name)
{
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(dir, sizeof dir, "%s/%s-XXXXXX", tmp, name);
    if (!mkdtemp(dir))
        su_panic("mkdtemp");
    atexit(cleanup);
    char cache[300];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    setenv("RELAY_TUNE_CACHE", cache, 1);
}

#endif
