/* op_models.h — the small models of the code generation tests: one per op
 * family plus fused epilogues, with the range of their random inputs.
 * test_kernels checks each primitive function of them, test_model each whole
 * model compiled into a shared object. */
#ifndef RT_TEST_OP_MODELS_H
#define RT_TEST_OP_MODELS_H

#define HDR "#[version = \"0.0.5\"]\n"

static const struct op_model {
    const char *name;
    double lo, hi;          /* input range */
    const char *text;
} models[] = {
    {"conv2d+bias+relu", -1, 1, HDR "def @main(%x: Tensor[(1, 5, 9, 11), float32], %w: Tensor[(24, 5, 3, 3), float32], "
                                    "%b: Tensor[(24), float32]) { nn.relu(nn.bias_add(nn.conv2d(%x, %w, padding=[1, 1]), %b)) }"},
    {"conv2d stride 2, dilation", -1, 1, HDR "def @main(%x: Tensor[(2, 3, 13, 12), float32], %w: Tensor[(16, 3, 3, 3), float32]) "
                                             "{ nn.conv2d(%x, %w, strides=[2, 2], padding=[2, 1, 0, 1], dilation=[2, 1]) }"},
    {"conv2d 1x1 + residual", -1, 1, HDR "def @main(%x: Tensor[(1, 32, 7, 7), float32], %w: Tensor[(48, 32, 1, 1), float32], "
                                         "%r: Tensor[(1, 48, 7, 7), float32]) { add(nn.conv2d(%x, %w), %r) }"},
    /* 1x1 convs in the pixel-fused form (conv2d_1x1.c): 13x13 = 169 pixels
     * in no whole vector, a batch of 2, odd channel counts; 8x8 = 64 in
     * whole vectors; 3 input channels across a 109-wide image */
    {"conv2d 1x1 13x13 batch 2", -1, 1, HDR "def @main(%x: Tensor[(2, 19, 13, 13), float32], %w: Tensor[(40, 19, 1, 1), float32], "
                                            "%b: Tensor[(40), float32]) { nn.relu(nn.bias_add(nn.conv2d(%x, %w), %b)) }"},
    {"conv2d 1x1 8x8", -1, 1, HDR "def @main(%x: Tensor[(1, 24, 8, 8), float32], %w: Tensor[(20, 24, 1, 1), float32]) "
                                  "{ nn.conv2d(%x, %w) }"},
    {"conv2d 1x1 ic=3 109 wide", -1, 1, HDR "def @main(%x: Tensor[(1, 3, 2, 109), float32], %w: Tensor[(16, 3, 1, 1), float32]) "
                                            "{ nn.conv2d(%x, %w) }"},
    {"depthwise conv2d + clip", -1, 1, HDR "def @main(%x: Tensor[(1, 24, 10, 10), float32], %w: Tensor[(24, 1, 3, 3), float32]) "
                                           "{ clip(nn.conv2d(%x, %w, padding=[1, 1], groups=24), a_min=0f, a_max=6f) }"},
    /* stride-1 depthwise convs in the flat form (compute_nn.c, conv2d_dw_flat.c):
     * 7x7 and 13x13 planes (rows of masked vectors), a 14-wide plane whose
     * padded row is 16, a 112-wide one with bias and relu, a batch of 2 with
     * a 5x5 kernel and uneven padding, an unpadded one; stride 2 in the
     * same form */
    {"depthwise 7x7 + bias + relu", -1, 1, HDR "def @main(%x: Tensor[(1, 20, 7, 7), float32], %w: Tensor[(20, 1, 3, 3), float32], "
                                               "%b: Tensor[(20), float32]) { nn.relu(nn.bias_add(nn.conv2d(%x, %w, padding=[1, 1], groups=20), %b)) }"},
    {"depthwise 13x13", -1, 1, HDR "def @main(%x: Tensor[(1, 16, 13, 13), float32], %w: Tensor[(16, 1, 3, 3), float32]) "
                                   "{ nn.conv2d(%x, %w, padding=[1, 1], groups=16) }"},
    {"depthwise 14x14", -1, 1, HDR "def @main(%x: Tensor[(1, 6, 14, 14), float32], %w: Tensor[(6, 1, 3, 3), float32]) "
                                   "{ nn.conv2d(%x, %w, padding=[1, 1], groups=6) }"},
    {"depthwise 112 wide + bias + relu", -1, 1, HDR "def @main(%x: Tensor[(1, 8, 4, 112), float32], %w: Tensor[(8, 1, 3, 3), float32], "
                                                    "%b: Tensor[(8), float32]) { nn.relu(nn.bias_add(nn.conv2d(%x, %w, padding=[1, 1], groups=8), %b)) }"},
    {"depthwise 5x5 batch 2", -1, 1, HDR "def @main(%x: Tensor[(2, 3, 9, 11), float32], %w: Tensor[(3, 1, 5, 5), float32]) "
                                         "{ nn.conv2d(%x, %w, padding=[2, 1, 0, 3], groups=3) }"},
    {"depthwise unpadded", -1, 1, HDR "def @main(%x: Tensor[(1, 5, 6, 9), float32], %w: Tensor[(5, 1, 3, 3), float32]) "
                                      "{ nn.conv2d(%x, %w, groups=5) }"},
    {"depthwise stride 2", -1, 1, HDR "def @main(%x: Tensor[(1, 24, 16, 15), float32], %w: Tensor[(24, 1, 3, 3), float32]) "
                                      "{ nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1], groups=24) }"},
    /* strided depthwise convs in the flat form over de-interleaved phases
     * (compute_nn.c): odd planes (15x15, 113 wide), padding 1 and 0, a 5x5
     * kernel with uneven padding and a batch of 2, unequal strides; and a
     * channel multiplier (two outputs per input channel: the grouped form) */
    {"depthwise stride 2 15x15 + bias + relu", -1, 1, HDR "def @main(%x: Tensor[(1, 10, 15, 15), float32], %w: Tensor[(10, 1, 3, 3), float32], "
                                                         "%b: Tensor[(10), float32]) { nn.relu(nn.bias_add(nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1], groups=10), %b)) }"},
    {"depthwise stride 2 113 wide unpadded", -1, 1, HDR "def @main(%x: Tensor[(1, 4, 5, 113), float32], %w: Tensor[(4, 1, 3, 3), float32]) "
                                                       "{ nn.conv2d(%x, %w, strides=[2, 2], groups=4) }"},
    {"depthwise stride 2 5x5 batch 2", -1, 1, HDR "def @main(%x: Tensor[(2, 3, 13, 11), float32], %w: Tensor[(3, 1, 5, 5), float32]) "
                                                 "{ nn.conv2d(%x, %w, strides=[2, 2], padding=[2, 1, 1, 2], groups=3) }"},
    {"depthwise strides 2x3", -1, 1, HDR "def @main(%x: Tensor[(1, 6, 9, 14), float32], %w: Tensor[(6, 1, 3, 3), float32]) "
                                        "{ nn.conv2d(%x, %w, strides=[2, 3], padding=[1, 1], groups=6) }"},
    {"depthwise channel multiplier 2", -1, 1, HDR "def @main(%x: Tensor[(1, 4, 9, 9), float32], %w: Tensor[(8, 1, 3, 3), float32]) "
                                                 "{ nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1], groups=4) }"},
    {"group conv2d", -1, 1, HDR "def @main(%x: Tensor[(1, 8, 6, 6), float32], %w: Tensor[(12, 2, 3, 3), float32]) "
                                "{ nn.conv2d(%x, %w, groups=4) }"},
    {"dense+bias", -1, 1, HDR "def @main(%x: Tensor[(7, 40), float32], %w: Tensor[(50, 40), float32], %b: Tensor[(50), float32]) "
                              "{ add(nn.dense(%x, %w), %b) }"},
    {"dense gelu", -1, 1, HDR "def @main(%x: Tensor[(16, 32), float32], %w: Tensor[(64, 32), float32]) { "
                              "%0 = nn.dense(%x, %w); multiply(multiply(%0, add(erf(multiply(%0, 0.70710677f)), 1f)), 0.5f) }"},
    {"dense vector", -1, 1, HDR "def @main(%x: Tensor[(1, 30), float32], %w: Tensor[(10, 30), float32]) { nn.dense(%x, %w) }"},
    {"batch_matmul", -1, 1, HDR "def @main(%a: Tensor[(3, 9, 20), float32], %b: Tensor[(3, 17, 20), float32]) "
                                "{ divide(nn.batch_matmul(%a, %b), 8f) }"},
    {"batch_matmul nt bcast", -1, 1, HDR "def @main(%a: Tensor[(1, 20, 9), float32], %b: Tensor[(4, 20, 33), float32]) "
                                         "{ nn.batch_matmul(%a, %b, transpose_a=True, transpose_b=False) }"},
    {"max_pool2d ceil", -1, 1, HDR "def @main(%x: Tensor[(1, 4, 13, 13), float32]) "
                                   "{ nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], ceil_mode=True) }"},
    {"max_pool2d pad", -1, 1, HDR "def @main(%x: Tensor[(1, 4, 12, 12), float32]) "
                                  "{ nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1]) }"},
    {"avg_pool2d", -1, 1, HDR "def @main(%x: Tensor[(2, 3, 9, 9), float32]) "
                              "{ nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1]) }"},
    {"avg_pool2d incl", -1, 1, HDR "def @main(%x: Tensor[(1, 3, 8, 8), float32]) "
                                   "{ nn.avg_pool2d(%x, pool_size=[2, 3], padding=[1, 1], count_include_pad=True) }"},
    {"global_avg_pool2d", -1, 1, HDR "def @main(%x: Tensor[(1, 20, 7, 7), float32]) { nn.global_avg_pool2d(%x) }"},
    {"adaptive_avg_pool2d", -1, 1, HDR "def @main(%x: Tensor[(1, 3, 10, 7), float32]) "
                                       "{ nn.adaptive_avg_pool2d(%x, output_size=[3, 4]) }"},
    {"softmax", -3, 3, HDR "def @main(%x: Tensor[(2, 5, 37), float32]) { nn.softmax(%x) }"},
    {"log_softmax axis 1", -3, 3, HDR "def @main(%x: Tensor[(2, 5, 6), float32]) { nn.log_softmax(%x, axis=1) }"},
    {"layer_norm", -2, 2, HDR "def @main(%x: Tensor[(6, 40), float32], %g: Tensor[(40), float32], %b: Tensor[(40), float32]) "
                              "{ nn.layer_norm(%x, %g, %b, epsilon=1e-5f) }"},
    {"elementwise", 0.1, 2, HDR "def @main(%x: Tensor[(3, 33), float32], %y: Tensor[(33), float32]) { "
                                "%0 = add(log(%x), sqrt(%y)); %1 = multiply(tanh(%0), sigmoid(%x)); "
                                "%2 = subtract(rsqrt(%x), exp(negative(%y))); %3 = maximum(%1, %2); "
                                "%4 = power(%x, %y); add(minimum(%3, %4), abs(nn.leaky_relu(%0, alpha=0.1f))) }"},
    {"floor ceil", -3, 3, HDR "def @main(%x: Tensor[(3, 33), float32]) { "
                              "add(floor(%x), multiply(ceil(%x), 2f)) }"},
    {"compare where", -1, 1, HDR "def @main(%x: Tensor[(4, 5), float32], %y: Tensor[(5), float32]) { "
                                 "where(logical_and(greater(%x, %y), logical_not(equal(%x, %y))), %x, multiply(%y, 2f)) }"},
    {"transpose reshape", -1, 1, HDR "def @main(%x: Tensor[(6, 20), float32]) { "
                                     "%0 = reshape(%x, newshape=[1, 6, 4, 5]); %1 = transpose(%0, axes=[0, 2, 1, 3]); "
                                     "reshape(%1, newshape=[4, 30]) }"},
    {"flatten squeeze expand", -1, 1, HDR "def @main(%x: Tensor[(2, 3, 1, 4), float32]) { "
                                          "expand_dims(nn.batch_flatten(squeeze(%x, axis=[2])), axis=1) }"},
    {"concatenate", -1, 1, HDR "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 5), float32]) { "
                               "concatenate((%x, %y, %x), axis=1) }"},
    {"split", -1, 1, HDR "def @main(%x: Tensor[(6, 4), float32]) { %0 = split(%x, indices_or_sections=3); "
                         "add(%0.0, %0.2) }"},
    {"strided_slice", -1, 1, HDR "def @main(%x: Tensor[(7, 9), float32]) { "
                                 "strided_slice(%x, begin=[1, -7], end=[6, 9], strides=[2, 3]) }"},
    {"take", -1, 1, HDR "def @main(%x: Tensor[(5, 6), float32], %i: Tensor[(3, 2), int32]) { take(%x, %i, axis=1) }"},
    {"pad", -1, 1, HDR "def @main(%x: Tensor[(2, 3), float32]) { nn.pad(%x, 1.5f, pad_width=[[1, 0], [2, 3]]) }"},
    {"sum mean", -1, 1, HDR "def @main(%x: Tensor[(3, 4, 5), float32]) { "
                            "add(sum(%x, axis=[1], keepdims=True), mean(%x, axis=[1, 2], keepdims=True)) }"},
    {"max min", -1, 1, HDR "def @main(%x: Tensor[(3, 4, 5), float32]) { subtract(max(%x, axis=[0, 2]), min(%x, axis=[0, 2])) }"},
    {"prod", 0.5, 1.5, HDR "def @main(%x: Tensor[(3, 4, 5), float32]) { prod(%x, axis=[1]) }"},
    {"argmax", -1, 1, HDR "def @main(%x: Tensor[(3, 7), float32]) { argmax(%x, axis=[1]) }"},
    {"cast", -3, 3, HDR "def @main(%x: Tensor[(10), float32]) { cast(cast(%x, dtype=\"int32\"), dtype=\"float32\") }"},
    {"zeros ones full shape_of", -1, 1, HDR "def @main(%x: Tensor[(4, 2), float32], %v: float32) { "
                                            "%0 = add(zeros_like(%x), multiply(ones_like(%x), full(%v, shape=[4, 2]))); "
                                            "add(%0, cast(shape_of(%x), dtype=\"float32\")) }"},
    {"stack", -1, 1, HDR "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) { "
                         "nn.relu(stack((%x, %y, %x), axis=1)) }"},
    {"upsampling", -1, 1, HDR "def @main(%x: Tensor[(1, 3, 5, 7), float32]) { "
                              "%0 = nn.upsampling(%x, scale_h=2f, scale_w=2f); "
                              "%1 = nn.upsampling(%x, scale_h=2f, scale_w=2f, method=\"bilinear\", align_corners=True); "
                              "add(%0, %1) }"},
    {"resize2d cubic", -1, 1, HDR "def @main(%x: Tensor[(1, 3, 5, 7), float32]) { "
                                  "%0 = image.resize2d(%x, size=[9, 4], method=\"cubic\", cubic_alpha=-0.75f); "
                                  "%1 = image.resize2d(%x, size=[3, 10], method=\"cubic\", cubic_exclude=1, "
                                  "coordinate_transformation_mode=\"align_corners\"); "
                                  "%2 = nn.upsampling(%x, scale_h=2f, scale_w=1f, method=\"bicubic\"); "
                                  "(%0, %1, %2) }"},
    {"resize2d nhwc", -1, 1, HDR "def @main(%x: Tensor[(1, 5, 7, 3), float32]) { "
                                 "%0 = image.resize2d(%x, size=[9, 4], layout=\"NHWC\"); "
                                 "%1 = image.resize2d(%x, size=[9, 4], layout=\"NHWC\", method=\"nearest_neighbor\", "
                                 "coordinate_transformation_mode=\"align_corners\"); sigmoid(subtract(%0, %1)) }"},
    {"conv2d nhwc/hwio + pools", -1, 1, HDR "def @main(%x: Tensor[(1, 9, 11, 5), float32], %w: Tensor[(3, 3, 5, 8), float32], "
                                            "%b: Tensor[(8), float32]) { "
                                            "%0 = nn.conv2d(%x, %w, padding=[1, 1], data_layout=\"NHWC\", kernel_layout=\"HWIO\"); "
                                            "%1 = nn.relu(nn.bias_add(%0, %b, axis=3)); "
                                            "%2 = nn.max_pool2d(%1, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], layout=\"NHWC\"); "
                                            "%3 = nn.global_avg_pool2d(%1, layout=\"NHWC\"); add(%2, %3) }"},
    {"conv1d + relu", -1, 1, HDR "def @main(%x: Tensor[(2, 4, 17), float32], %w: Tensor[(6, 2, 3), float32]) { "
                                 "nn.relu(nn.conv1d(%x, %w, strides=[2], padding=[1, 2], dilation=[2], groups=2)) }"},
    {"conv2d_transpose", -1, 1, HDR "def @main(%x: Tensor[(2, 4, 5, 6), float32], %w: Tensor[(4, 3, 3, 3), float32]) { "
                                    "nn.relu(nn.conv2d_transpose(%x, %w, strides=[2, 1], padding=[0, 1, 1, 0], "
                                    "dilation=[1, 2], groups=2)) }"},
    {"conv1d_transpose", -1, 1, HDR "def @main(%y: Tensor[(2, 4, 9), float32], %v: Tensor[(4, 2, 4), float32]) { "
                                    "nn.conv1d_transpose(%y, %v, strides=[3], padding=[1, 2], output_padding=[2]) }"},
    {"arange", -1, 1, HDR "def @main(%x: Tensor[(5), float32]) { multiply(%x, arange(2.5f, -1f, -0.75f)) }"},
    {"conv3d + bias + relu", -1, 1, HDR "def @main(%x: Tensor[(1, 4, 5, 6, 7), float32], %w: Tensor[(6, 2, 3, 3, 2), float32], "
                                        "%b: Tensor[(6), float32]) { nn.relu(nn.bias_add(nn.conv3d(%x, %w, strides=[1, 2, 1], "
                                        "padding=[1, 0, 1, 0, 1, 1], dilation=[1, 1, 2], groups=2), %b)) }"},
    {"conv3d_transpose", -1, 1, HDR "def @main(%x: Tensor[(1, 4, 3, 4, 5), float32], %w: Tensor[(4, 2, 3, 3, 2), float32]) { "
                                    "nn.conv3d_transpose(%x, %w, strides=[2, 1, 2], padding=[1, 0, 1, 0, 1, 0], "
                                    "output_padding=[1, 0, 1], groups=2) }"},
    {"max_pool3d ceil", -1, 1, HDR "def @main(%x: Tensor[(1, 3, 5, 6, 7), float32]) "
                                   "{ nn.max_pool3d(%x, pool_size=[2, 2, 3], strides=[2, 2, 2], padding=[1, 0, 1], ceil_mode=True) }"},
    {"avg_pool3d", -1, 1, HDR "def @main(%x: Tensor[(2, 2, 4, 5, 6), float32]) "
                              "{ nn.avg_pool3d(%x, pool_size=[3, 3, 3], strides=[1, 2, 2], padding=[1, 1, 1]) }"},
    {"avg_pool3d incl ceil", -1, 1, HDR "def @main(%x: Tensor[(1, 2, 5, 5, 5), float32]) "
                                        "{ nn.avg_pool3d(%x, pool_size=[2, 2, 2], strides=[2, 2, 2], padding=[1, 1, 1], "
                                        "ceil_mode=True, count_include_pad=True) }"},
    {"layout_transform", -1, 1, HDR "def @main(%x: Tensor[(1, 16, 3, 5), float32]) { "
                                    "%0 = layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW8c\"); "
                                    "%1 = exp(%0); layout_transform(%1, src_layout=\"NCHW8c\", dst_layout=\"NHWC4c\") }"},
};

#endif
