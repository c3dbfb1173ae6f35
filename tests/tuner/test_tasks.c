/* test_tasks.c — task extraction and workload keys: a key does not depend on
 * variable names, parameter order or the order of reading; equal layers are
 * one task with a count; different shapes or attributes are different tasks;
 * FLOP counts are those of the fused ops. */
#include <string.h>

#include "tests/tap.h"
#include "tuner/tuner.h"

static ir_module *fused(const char *text)
{
    su_diags d = {0};
    ir_module *m = ir_parse("t.relay", text, strlen(text), &d);
    tr_options o = {.level = 3};
    if (!m || !tr_optimize(m, &o, &d)) {
        su_diags_print(stdout, &d);
        ir_module_free(m);
        m = NULL;
    }
    su_diags_free(&d);
    return m;
}

static const char *LAYER =
    "def @main(%%%s: Tensor[(1, 8, 14, 14), float32], %%%s: Tensor[(16, 8, 3, 3), float32], %%b: Tensor[(16), float32]) {\n"
    "  %%0 = nn.conv2d(%%%s, %%%s, padding=[1, 1, 1, 1], kernel_size=[3, 3]);\n"
    "  %%1 = nn.bias_add(%%0, %%b);\n  nn.relu(%%1)\n}";

static char *key_of(const char *data, const char *weight)
{
    char text[1024];
    snprintf(text, sizeof text, LAYER, data, weight, data, weight);
    ir_module *m = fused(text);
    tun_tasks t = {0};
    if (m)
        tun_extract_tasks(m, &t);
    char *k = t.len == 1 ? su_strdup(t.items[0].key) : su_strdup("(no task)");
    tun_tasks_free(&t);
    ir_module_free(m);
    return k;
}

static void test_key_stability(void)
{
    char *a = key_of("x", "w"), *b = key_of("input_data", "conv_weight");
    is_str(a, b, "key: independent of variable names");
    const char *prefix = "conv2d_nchw|float32|in=1x8x14x14,16x8x3x3,16x1x1|body=";
    ok(strncmp(a, prefix, strlen(prefix)) == 0,
       "key: template, dtype and inputs in order of use (%s)", a);
    ok(strstr(a, "nn.conv2d(p0,p1,padding=[1, 1, 1, 1],kernel_size=[3, 3]);add(#0,p2);nn.relu(#1)") != NULL,
       "key: body structure with positional operands");
    free(a);
    free(b);
    /* the same layer written with operands of the add swapped is a different kernel */
    const char *swapped =
        "def @main(%x: Tensor[(1, 8, 14, 14), float32], %w: Tensor[(16, 8, 3, 3), float32], %b: Tensor[(16, 1, 1), float32]) {\n"
        "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], kernel_size=[3, 3]);\n  %1 = add(%b, %0);\n  nn.relu(%1)\n}";
    ir_module *m = fused(swapped);
    tun_tasks t = {0};
    tun_extract_tasks(m, &t);
    ok(t.len == 1 && strstr(t.items[0].key, "in=16x1x1,1x8x14x14,16x8x3x3") == NULL &&
           strstr(t.items[0].key, "in=1x8x14x14,16x8x3x3,16x1x1") != NULL,
       "key: inputs are numbered by first use in the body, not by parameter order");
    tun_tasks_free(&t);
    ir_module_free(m);
}

static void test_counts_and_flops(void)
{
    ir_module *m = fused("def @main(%x: Tensor[(1, 8, 14, 14), float32], %w: Tensor[(8, 8, 3, 3), float32],\n"
                         "          %w2: Tensor[(8, 8, 1, 1), float32], %d: Tensor[(10, 1568), float32]) {\n"
                         "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);\n  %1 = nn.relu(%0);\n"
                         "  %2 = nn.conv2d(%1, %w, padding=[1, 1, 1, 1]);\n  %3 = nn.relu(%2);\n"
                         "  %4 = nn.conv2d(%3, %w2);\n  %5 = nn.batch_flatten(%4);\n  nn.dense(%5, %d)\n}");
    tun_tasks t = {0};
    tun_extract_tasks(m, &t);
    is_int(t.len, 3, "tasks: two distinct convs and a dense (flatten has nothing to tune)");
    if (t.len == 3) {
        is_int(t.items[0].count, 2, "tasks: the repeated conv+relu counts 2 calls");
        is_int(t.items[0].flops, 2LL * 8 * 14 * 14 * 8 * 9 + 8 * 14 * 14, "tasks: FLOPs of conv + relu");
        is_str(t.items[1].template_name, "conv2d_nchw", "tasks: 1x1 conv template");
        is_str(t.items[2].template_name, "dense", "tasks: dense template");
        is_int(t.items[2].flops, 2LL * 10 * 1568, "tasks: dense FLOPs");
        ok(strlen(t.items[0].hash) == 16 && strcmp(t.items[0].hash, t.items[1].hash) != 0, "tasks: hashes differ");
    }
    tun_tasks_free(&t);
    ir_module_free(m);
    m = fused("def @main(%x: Tensor[(1, 8, 14, 14), float32], %w: Tensor[(8, 1, 3, 3), float32]) {\n"
              "  nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=8)\n}");
    tun_extract_tasks(m, &t);
    ok(t.len == 1 && !strcmp(t.items[0].template_name, "depthwise_conv2d_nchw"), "tasks: depthwise template");
    tun_tasks_free(&t);
    ir_module_free(m);
}

int main(void)
{
    test_key_stability();
    test_counts_and_flops();
    return tap_done();
}
