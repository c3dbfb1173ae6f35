#!/usr/bin/python3
"""Reference vectors for every operator's reference kernel.

Usage: /usr/bin/python3 tests/gen/make_op_vectors.py [--out DIR]
(default DIR: tests/ref/ops). Needs numpy and torch. The files are committed;
tests/ir/test_ref_ops.c reads them and needs no Python.

Each DIR/<family>.npz holds several cases. Case C is the arrays
  C.model        the Relay text of the case (uint8 bytes): one @main
  C.<param>      the value of each parameter %<param> of @main
  C.expected     the expected result (C.expected.0, .1, ... for a tuple)
  C.tol          float64 scalar: the largest error allowed, relative to
                 max(1, max |expected|); 0 means bit-exact
The expected values come from PyTorch (convolution, pooling, normalization,
softmax; computed in float64, then rounded) or numpy, never from relay-tune.
Where TVM's semantics differ from numpy's (integer division truncates,
`take` clips indices by default, reshape's special codes, strided_slice with
axes or in "size" mode, pooling with dilation) the expectation is written
out here from TVM's definition. Inputs are small and seeded so that the
files stay small (every file is at most a few tens of KB) and the same on
every run.
"""
import argparse
import collections
import os

import numpy as np
import torch
import torch.nn.functional as F

from npzfile import write_npz

RNG = np.random.default_rng(20240601)
FILES = collections.OrderedDict()   # family -> OrderedDict(key -> array)
F32_TOL = 2e-6


def rnd(*shape, lo=-1.0, hi=1.0, dtype=np.float32):
    return RNG.uniform(lo, hi, size=shape).astype(dtype)


def ints(*shape, lo=-5, hi=6, dtype=np.int32):
    return RNG.integers(lo, hi, size=shape).astype(dtype)


def ty(a):
    a = np.asarray(a)
    dt = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64",
          np.dtype(np.int32): "int32", np.dtype(np.int64): "int64",
          np.dtype(np.int8): "int8", np.dtype(np.uint8): "uint8",
          np.dtype(np.bool_): "bool", np.dtype(np.float16): "float16"}[a.dtype]
    if a.ndim == 0:
        return dt
    return "Tensor[(%s), %s]" % (", ".join(str(d) for d in a.shape), dt)


def case(family, name, expr, inputs, expected, tol=F32_TOL):
    """Adds case `name` of `family`: @main(inputs...) { expr }."""
    sig = ", ".join("%%%s: %s" % (k, ty(v)) for k, v in inputs.items())
    text = '#[version = "0.0.5"]\ndef @main(%s) {\n  %s\n}\n' % (sig, expr)
    d = FILES.setdefault(family, collections.OrderedDict())
    assert name + ".model" not in d, name
    d[name + ".model"] = np.frombuffer(text.encode(), dtype=np.uint8)
    for k, v in inputs.items():
        d["%s.%s" % (name, k)] = np.asarray(v)
    if isinstance(expected, tuple):
        for i, e in enumerate(expected):
            d["%s.expected.%d" % (name, i)] = np.asarray(e)
    else:
        d[name + ".expected"] = np.asarray(expected)
    d[name + ".tol"] = np.array(tol, dtype=np.float64)


def t64(a):
    return torch.from_numpy(np.asarray(a, dtype=np.float64))


def f32(t):
    return t.numpy().astype(np.float32) if isinstance(t, torch.Tensor) else np.asarray(t, np.float32)


# ---- nn ---------------------------------------------------------------------


def conv_ref(x, w, stride=(1, 1), pad=(0, 0, 0, 0), dil=(1, 1), groups=1):
    t, l, b, r = pad
    xp = F.pad(t64(x), (l, r, t, b))
    return F.conv2d(xp, t64(w), stride=stride, dilation=dil, groups=groups).numpy()


def gen_conv2d():
    fam = "conv2d"
    x, w = rnd(1, 4, 9, 9), rnd(8, 4, 3, 3)
    case(fam, "basic", "nn.conv2d(%x, %w, padding=[1, 1], channels=8, kernel_size=[3, 3])",
         {"x": x, "w": w}, f32(conv_ref(x, w, pad=(1, 1, 1, 1))))
    case(fam, "stride2_dilation2", "nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1], dilation=[2, 2])",
         {"x": x, "w": w}, f32(conv_ref(x, w, (2, 2), (1, 1, 1, 1), (2, 2))))
    case(fam, "asymmetric_padding", "nn.conv2d(%x, %w, strides=[1, 2], padding=[0, 1, 2, 1])",
         {"x": x, "w": w}, f32(conv_ref(x, w, (1, 2), (0, 1, 2, 1))))
    case(fam, "one_padding_value", "nn.conv2d(%x, %w, padding=[2])",
         {"x": x, "w": w}, f32(conv_ref(x, w, pad=(2, 2, 2, 2))))
    wg = rnd(6, 2, 3, 3)
    case(fam, "groups2", "nn.conv2d(%x, %w, padding=[1, 1], groups=2)",
         {"x": x, "w": wg}, f32(conv_ref(x, wg, pad=(1, 1, 1, 1), groups=2)))
    wd = rnd(4, 1, 3, 3)
    case(fam, "depthwise_stride2", "nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1], groups=4)",
         {"x": x, "w": wd}, f32(conv_ref(x, wd, (2, 2), (1, 1, 1, 1), groups=4)))
    wm = rnd(8, 1, 3, 2)
    case(fam, "depthwise_multiplier2_dilated", "nn.conv2d(%x, %w, padding=[2, 1, 0, 1], dilation=[2, 1], groups=4)",
         {"x": x, "w": wm}, f32(conv_ref(x, wm, (1, 1), (2, 1, 0, 1), (2, 1), groups=4)))
    w1 = rnd(5, 4, 1, 1)
    case(fam, "pointwise", "nn.conv2d(%x, %w)", {"x": x, "w": w1}, f32(conv_ref(x, w1)))
    case(fam, "pointwise_stride2", "nn.conv2d(%x, %w, strides=[2, 2])",
         {"x": x, "w": w1}, f32(conv_ref(x, w1, (2, 2))))
    xb, wb = rnd(2, 3, 7, 6), rnd(4, 3, 2, 3)
    case(fam, "batch2_rect_kernel", "nn.conv2d(%x, %w, padding=[1, 0])",
         {"x": xb, "w": wb}, f32(conv_ref(xb, wb, pad=(1, 0, 1, 0))))
    xl, wl = rnd(1, 8, 14, 14), rnd(20, 8, 3, 3)
    case(fam, "full_tiles", "nn.conv2d(%x, %w, padding=[1, 1], out_dtype=\"float32\")",
         {"x": xl, "w": wl}, f32(conv_ref(xl, wl, pad=(1, 1, 1, 1))))
    xi, wi = ints(1, 2, 5, 5), ints(3, 2, 3, 3)
    ref = conv_ref(xi, wi, pad=(1, 1, 1, 1)).round().astype(np.int32)
    case(fam, "int32", "nn.conv2d(%x, %w, padding=[1, 1])", {"x": xi, "w": wi}, ref, tol=0)


def gen_dense_bmm():
    fam = "dense"
    x, w = rnd(5, 20), rnd(17, 20)
    case(fam, "2d", "nn.dense(%x, %w, units=17)", {"x": x, "w": w}, f32(t64(x) @ t64(w).T))
    x3 = rnd(2, 3, 20)
    case(fam, "3d_data", "nn.dense(%x, %w)", {"x": x3, "w": w}, f32(t64(x3) @ t64(w).T))
    x1, w1 = rnd(1, 9), rnd(33, 9)
    case(fam, "one_row", "nn.dense(%x, %w)", {"x": x1, "w": w1}, f32(t64(x1) @ t64(w1).T))
    fam = "batch_matmul"
    a, b = rnd(3, 4, 6), rnd(3, 5, 6)
    case(fam, "transpose_b", "nn.batch_matmul(%a, %b)", {"a": a, "b": b},
         f32(t64(a) @ t64(b).transpose(1, 2)))
    bn = rnd(3, 6, 5)
    case(fam, "no_transpose", "nn.batch_matmul(%a, %b, transpose_b=False)", {"a": a, "b": bn},
         f32(t64(a) @ t64(bn)))
    at = rnd(3, 6, 4)
    case(fam, "transpose_a", "nn.batch_matmul(%a, %b, transpose_a=True, transpose_b=False)", {"a": at, "b": bn},
         f32(t64(at).transpose(1, 2) @ t64(bn)))
    case(fam, "both_transposed", "nn.batch_matmul(%a, %b, transpose_a=True)", {"a": at, "b": b},
         f32(t64(at).transpose(1, 2) @ t64(b).transpose(1, 2)))
    a1 = rnd(1, 4, 6)
    case(fam, "broadcast_batch", "nn.batch_matmul(%a, %b)", {"a": a1, "b": b},
         f32(t64(a1) @ t64(b).transpose(1, 2)))
    a5, b5 = rnd(2, 7, 19), rnd(1, 18, 19)
    case(fam, "edge_tiles", "nn.batch_matmul(%a, %b)", {"a": a5, "b": b5},
         f32(t64(a5) @ t64(b5).transpose(1, 2)))


def pool_ref(x, kind, k, s, pad, dil, ceil, include_pad):
    """TVM's pool2d, written out: output extents as the relation computes
    them; max skips taps in the padding; avg divides by the taps inside the
    data, or with count_include_pad by the taps up to the padding's end."""
    n, c, h, w = x.shape
    t, l, b, r = pad

    def out_len(size, lo, hi, kk, dd, ss):
        span = size + lo + hi - ((kk - 1) * dd + 1)
        if not ceil:
            return span // ss + 1
        o = (span + ss - 1) // ss + 1
        if (o - 1) * ss >= size + lo:
            o -= 1
        return o

    oh, ow = out_len(h, t, b, k[0], dil[0], s[0]), out_len(w, l, r, k[1], dil[1], s[1])
    y = np.zeros((n, c, oh, ow))
    x = x.astype(np.float64)
    for i in range(oh):
        for j in range(ow):
            hs, ws = i * s[0] - t, j * s[1] - l
            hh = [hs + a * dil[0] for a in range(k[0])]
            ww = [ws + a * dil[1] for a in range(k[1])]
            inside = [(p, q) for p in hh for q in ww if 0 <= p < h and 0 <= q < w]
            vals = np.stack([x[:, :, p, q] for p, q in inside], axis=-1)
            if kind == "max":
                y[:, :, i, j] = vals.max(axis=-1)
            else:
                cnt = (sum(1 for p in hh if p <= h + b - 1) * sum(1 for q in ww if q <= w + r - 1)
                       if include_pad else len(inside))
                y[:, :, i, j] = vals.sum(axis=-1) / cnt
    return y.astype(np.float32)


def gen_pool():
    fam = "pool2d"
    x = rnd(2, 3, 9, 8)
    tx = t64(x)
    case(fam, "max_3x3_s2_p1", "nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])",
         {"x": x}, f32(F.max_pool2d(tx, 3, 2, 1)))
    case(fam, "max_ceil_mode", "nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], ceil_mode=True)",
         {"x": x}, f32(F.max_pool2d(tx, 3, 2, 0, ceil_mode=True)))
    case(fam, "max_dilation", "nn.max_pool2d(%x, pool_size=[2, 3], strides=[1, 2], dilation=[2, 2], padding=[1, 1])",
         {"x": x}, f32(F.max_pool2d(tx, (2, 3), (1, 2), 1, dilation=2)))
    case(fam, "max_asymmetric_padding", "nn.max_pool2d(%x, pool_size=[2, 2], strides=[2, 2], padding=[1, 0, 0, 1])",
         {"x": x}, pool_ref(x, "max", (2, 2), (2, 2), (1, 0, 0, 1), (1, 1), False, False))
    case(fam, "avg_exclude_pad", "nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])",
         {"x": x}, f32(F.avg_pool2d(tx, 3, 2, 1, count_include_pad=False)))
    case(fam, "avg_include_pad", "nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], "
         "count_include_pad=True)", {"x": x}, f32(F.avg_pool2d(tx, 3, 2, 1, count_include_pad=True)))
    case(fam, "avg_ceil_include_pad", "nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], "
         "ceil_mode=True, count_include_pad=True)",
         {"x": x}, f32(F.avg_pool2d(tx, 3, 2, 1, ceil_mode=True, count_include_pad=True)))
    case(fam, "avg_ceil_exclude_pad", "nn.avg_pool2d(%x, pool_size=[2, 2], strides=[2, 2], padding=[1, 1], "
         "ceil_mode=True)", {"x": x}, f32(F.avg_pool2d(tx, 2, 2, 1, ceil_mode=True, count_include_pad=False)))
    case(fam, "avg_dilation", "nn.avg_pool2d(%x, pool_size=[2, 2], dilation=[2, 3], padding=[1, 1, 0, 0], "
         "count_include_pad=True)", {"x": x},
         pool_ref(x, "avg", (2, 2), (1, 1), (1, 1, 0, 0), (2, 3), False, True))
    case(fam, "global_avg", "nn.global_avg_pool2d(%x)", {"x": x}, f32(tx.mean(dim=(2, 3), keepdim=True)))
    x7 = rnd(1, 2, 7, 5)
    case(fam, "adaptive_uneven", "nn.adaptive_avg_pool2d(%x, output_size=[2, 3])", {"x": x7},
         f32(F.adaptive_avg_pool2d(t64(x7), (2, 3))))
    case(fam, "adaptive_one_value", "nn.adaptive_avg_pool2d(%x, output_size=[1])", {"x": x7},
         f32(F.adaptive_avg_pool2d(t64(x7), 1)))
    case(fam, "adaptive_none", "nn.adaptive_avg_pool2d(%x)", {"x": x7}, x7, tol=1e-7)
    case(fam, "adaptive_upsample", "nn.adaptive_avg_pool2d(%x, output_size=[9, 4])", {"x": x7},
         f32(F.adaptive_avg_pool2d(t64(x7), (9, 4))))


def gen_norm():
    fam = "softmax"
    x = rnd(2, 3, 5, lo=-4, hi=4)
    case(fam, "last_axis", "nn.softmax(%x)", {"x": x}, f32(torch.softmax(t64(x), -1)))
    case(fam, "axis1", "nn.softmax(%x, axis=1)", {"x": x}, f32(torch.softmax(t64(x), 1)))
    case(fam, "log_axis0", "nn.log_softmax(%x, axis=0)", {"x": x}, f32(torch.log_softmax(t64(x), 0)))
    case(fam, "log_last", "nn.log_softmax(%x, axis=-1)", {"x": x * 20}, f32(torch.log_softmax(t64(x * 20), -1)))
    fam = "layer_norm"
    x = rnd(3, 4, 6, lo=-2, hi=3)
    g, b = rnd(6, lo=0.5, hi=1.5), rnd(6)
    case(fam, "last_axis", "nn.layer_norm(%x, %g, %b)", {"x": x, "g": g, "b": b},
         f32(F.layer_norm(t64(x), (6,), t64(g), t64(b), 1e-5)))
    g4, b4 = rnd(4, lo=0.5, hi=1.5), rnd(4)
    ref = (t64(x) - t64(x).mean(1, keepdim=True)) / torch.sqrt(t64(x).var(1, unbiased=False, keepdim=True) + 1e-3)
    case(fam, "axis1_eps", "nn.layer_norm(%x, %g, %b, axis=1, epsilon=0.001f)", {"x": x, "g": g4, "b": b4},
         f32(ref * t64(g4)[None, :, None] + t64(b4)[None, :, None]))
    case(fam, "no_center_no_scale", "nn.layer_norm(%x, %g, %b, epsilon=1e-12f, center=False, scale=False)",
         {"x": x, "g": g, "b": b}, f32(F.layer_norm(t64(x), (6,), None, None, 1e-12)))
    fam = "batch_norm"
    x = rnd(2, 3, 4, 5, lo=-2, hi=2)
    g, b, m, v = rnd(3, lo=0.5, hi=1.5), rnd(3), rnd(3), rnd(3, lo=0.5, hi=2)
    ref = F.batch_norm(t64(x), t64(m), t64(v), t64(g), t64(b), False, 0.0, 1e-5)
    case(fam, "nchw", "nn.batch_norm(%x, %g, %b, %m, %v)", {"x": x, "g": g, "b": b, "m": m, "v": v},
         (f32(ref), m, v))
    x2 = rnd(4, 3)
    ref = (t64(x2) - t64(m)) / torch.sqrt(t64(v) + 1e-3)
    case(fam, "last_axis_no_center_no_scale",
         "%0 = nn.batch_norm(%x, %g, %b, %m, %v, axis=-1, epsilon=0.001f, center=False, scale=False);\n  %0.0",
         {"x": x2, "g": g, "b": b, "m": m, "v": v}, f32(ref))
    fam = "bias_add"
    x = rnd(2, 3, 4)
    b3, b4, b2 = rnd(3), rnd(4), rnd(2)
    case(fam, "axis1", "nn.bias_add(%x, %b)", {"x": x, "b": b3}, x + b3[None, :, None], tol=0)
    case(fam, "axis_last", "nn.bias_add(%x, %b, axis=-1)", {"x": x, "b": b4}, x + b4, tol=0)
    case(fam, "axis0", "nn.bias_add(%x, %b, axis=0)", {"x": x, "b": b2}, x + b2[:, None, None], tol=0)
    xi, bi = ints(2, 3), ints(3)
    case(fam, "int32", "nn.bias_add(%x, %b, axis=1)", {"x": xi, "b": bi}, xi + bi, tol=0)
    fam = "dropout"
    case(fam, "inference", "nn.dropout(%x, rate=0.3f)", {"x": x}, (x, np.ones_like(x)), tol=0)


# ---- elementwise ---------------------------------------------------------------


def gen_unary():
    fam = "unary"
    x = rnd(3, 7, lo=-3, hi=3)
    pos = rnd(3, 7, lo=0.1, hi=5)
    tx = t64(x)
    cases = [
        ("relu", "nn.relu(%x)", x, np.maximum(x, 0), 0),
        ("leaky_relu", "nn.leaky_relu(%x, alpha=0.1f)", x, f32(F.leaky_relu(tx, 0.1)), 1e-7),
        ("leaky_relu_default", "nn.leaky_relu(%x)", x, f32(F.leaky_relu(tx, 0.25)), 1e-7),
        ("negative", "negative(%x)", x, -x, 0),
        ("abs", "abs(%x)", x, np.abs(x), 0),
        ("exp", "exp(%x)", x, f32(torch.exp(tx)), 1e-6),
        ("log", "log(%x)", pos, f32(torch.log(t64(pos))), 1e-6),
        ("sqrt", "sqrt(%x)", pos, f32(torch.sqrt(t64(pos))), 1e-6),
        ("rsqrt", "rsqrt(%x)", pos, f32(torch.rsqrt(t64(pos))), 1e-6),
        ("tanh", "tanh(%x)", x, f32(torch.tanh(tx)), 1e-6),
        ("sigmoid", "sigmoid(%x)", x, f32(torch.sigmoid(tx)), 1e-6),
        ("erf", "erf(%x)", x, f32(torch.erf(tx)), 1e-6),
        ("clip", "clip(%x, a_min=-1.5f, a_max=2f)", x, np.clip(x, -1.5, 2), 0),
        ("copy", "copy(%x)", x, x, 0),
        ("floor", "floor(%x)", x, np.floor(x), 0),
        ("ceil", "ceil(%x)", x, np.ceil(x), 0),
    ]
    for name, expr, inp, exp, tol in cases:
        case(fam, name, expr, {"x": inp}, exp.astype(np.float32), tol=tol)
    xi = ints(9)
    case(fam, "negative_int32", "negative(%x)", {"x": xi}, -xi, tol=0)
    case(fam, "abs_int64", "abs(%x)", {"x": xi.astype(np.int64)}, np.abs(xi).astype(np.int64), tol=0)
    case(fam, "relu_int32", "nn.relu(%x)", {"x": xi}, np.maximum(xi, 0), tol=0)
    case(fam, "clip_int32", "clip(%x, a_min=-2f, a_max=3f)", {"x": xi}, np.clip(xi, -2, 3), tol=0)
    case(fam, "floor_int32", "floor(%x)", {"x": xi}, xi, tol=0)
    b = RNG.random(8) < 0.5
    case(fam, "logical_not", "logical_not(%x)", {"x": b}, ~b, tol=0)
    x64 = rnd(5, dtype=np.float64)
    case(fam, "exp_float64", "exp(%x)", {"x": x64}, np.exp(x64), tol=1e-15)
    fam = "cast"
    xc = rnd(10, lo=-4, hi=4)
    case(fam, "float32_to_int32", "cast(%x, dtype=\"int32\")", {"x": xc}, np.trunc(xc).astype(np.int32), tol=0)
    case(fam, "float32_to_int64", "cast(%x, dtype=\"int64\")", {"x": xc}, np.trunc(xc).astype(np.int64), tol=0)
    case(fam, "float32_to_bool", "cast(%x, dtype=\"bool\")", {"x": np.round(xc)}, np.round(xc) != 0, tol=0)
    case(fam, "float32_to_float64", "cast(%x, dtype=\"float64\")", {"x": xc}, xc.astype(np.float64), tol=0)
    case(fam, "float32_to_float16", "cast(%x, dtype=\"float16\")", {"x": xc}, xc.astype(np.float16), tol=0)
    xu = rnd(6, lo=0, hi=250)
    case(fam, "float32_to_uint8", "cast(%x, dtype=\"uint8\")", {"x": xu}, xu.astype(np.uint8), tol=0)
    xi = ints(7, lo=-100, hi=100)
    case(fam, "int32_to_float32", "cast(%x, dtype=\"float32\")", {"x": xi}, xi.astype(np.float32), tol=0)
    big = np.array([2**40 + 5, -(2**33) - 1, 7], dtype=np.int64)
    case(fam, "int64_to_int32_wraps", "cast(%x, dtype=\"int32\")", {"x": big}, big.astype(np.int32), tol=0)
    case(fam, "int32_to_int8_wraps", "cast(%x, dtype=\"int8\")", {"x": xi * 3}, (xi * 3).astype(np.int8), tol=0)
    case(fam, "bool_to_float32", "cast(%x, dtype=\"float32\")", {"x": b}, b.astype(np.float32), tol=0)


def gen_binary():
    fam = "binary"
    a, b = rnd(2, 3, 4), rnd(3, 1, lo=0.5, hi=2)
    ta, tb = t64(a), t64(b)
    ops = [("add", ta + tb), ("subtract", ta - tb), ("multiply", ta * tb), ("divide", ta / tb),
           ("maximum", torch.maximum(ta, tb)), ("minimum", torch.minimum(ta, tb))]
    for op, ref in ops:
        case(fam, op + "_broadcast", "%s(%%a, %%b)" % op, {"a": a, "b": b}, f32(ref), tol=1e-7)
    pa = rnd(2, 3, 4, lo=0.1, hi=3)
    case(fam, "power", "power(%a, %b)", {"a": pa, "b": b}, f32(t64(pa) ** tb), tol=1e-6)
    case(fam, "add_scalar_constant", "add(%a, 1.5f)", {"a": a}, a + np.float32(1.5), tol=0)
    case(fam, "subtract_scalar_first", "subtract(2f, %a)", {"a": a}, np.float32(2) - a, tol=0)
    r, c = rnd(4), rnd(2, 1, 4)
    case(fam, "multiply_rank_mismatch", "multiply(%a, %b)", {"a": r, "b": c}, r * c, tol=0)
    c5, r5 = rnd(5, 1), rnd(1, 6)
    case(fam, "add_outer", "add(%a, %b)", {"a": c5, "b": r5}, c5 + r5, tol=0)
    big1, big2 = rnd(64, 40), rnd(64, 40)
    case(fam, "add_same_shape", "add(%a, %b)", {"a": big1, "b": big2}, big1 + big2, tol=0)
    ia, ib = ints(2, 5, lo=-20, hi=20), ints(5, lo=1, hi=7) * np.where(RNG.random(5) < 0.5, -1, 1).astype(np.int32)
    case(fam, "add_int32", "add(%a, %b)", {"a": ia, "b": ib}, ia + ib, tol=0)
    case(fam, "divide_int32_truncates", "divide(%a, %b)", {"a": ia, "b": ib},
         np.trunc(ia / ib).astype(np.int32), tol=0)
    case(fam, "multiply_int64", "multiply(%a, %b)", {"a": ia.astype(np.int64), "b": ib.astype(np.int64)},
         (ia * ib).astype(np.int64), tol=0)
    case(fam, "maximum_int32", "maximum(%a, %b)", {"a": ia, "b": ib}, np.maximum(ia, ib), tol=0)
    pe = ints(6, lo=0, hi=4)
    pb = ints(6, lo=-3, hi=4)
    case(fam, "power_int32", "power(%a, %b)", {"a": pb, "b": pe}, pb ** pe, tol=0)
    wrap = np.array([2**31 - 1, -(2**31)], dtype=np.int32)
    case(fam, "add_int32_wraps", "add(%a, 1)", {"a": wrap}, wrap + np.int32(1), tol=0)
    x, y = RNG.random((3, 1)) < 0.5, RNG.random((1, 4)) < 0.5
    case(fam, "logical_and", "logical_and(%a, %b)", {"a": x, "b": y}, x & y, tol=0)
    case(fam, "logical_or", "logical_or(%a, %b)", {"a": x, "b": y}, x | y, tol=0)
    fam = "compare"
    a = np.round(rnd(3, 4) * 2) / 2
    b = np.round(rnd(4) * 2) / 2
    for op, fn in [("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less),
                   ("less_equal", np.less_equal), ("greater", np.greater), ("greater_equal", np.greater_equal)]:
        case(fam, op, "%s(%%a, %%b)" % op, {"a": a, "b": b}, fn(a, b), tol=0)
    ia, ib = ints(2, 3), ints(2, 1)
    case(fam, "less_int32", "less(%a, %b)", {"a": ia, "b": ib}, ia < ib, tol=0)
    case(fam, "equal_scalar", "equal(%a, 0)", {"a": ia}, ia == 0, tol=0)
    fam = "where"
    cond, xv, yv = RNG.random((3, 1)) < 0.5, rnd(1, 4), rnd(3, 4)
    case(fam, "broadcast", "where(%c, %x, %y)", {"c": cond, "x": xv, "y": yv}, np.where(cond, xv, yv), tol=0)
    case(fam, "scalar_branch", "where(%c, %x, 0f)", {"c": cond, "x": xv}, np.where(cond, xv, np.float32(0)), tol=0)
    ci, xi, yi = RNG.random(6) < 0.5, ints(6).astype(np.int64), ints(1).astype(np.int64)
    case(fam, "int64", "where(%c, %x, %y)", {"c": ci, "x": xi, "y": yi}, np.where(ci, xi, yi), tol=0)


# ---- transforms -----------------------------------------------------------------


def gen_transform():
    fam = "reshape"
    x = rnd(2, 3, 4)
    for name, ns, shape in [("plain", "[4, 6]", (4, 6)), ("minus1", "[-1, 4]", (6, 4)),
                            ("zero_copies", "[0, -1]", (2, 12)), ("minus2", "[2, -2]", (2, 3, 4)),
                            ("minus3", "[-3, 4]", (6, 4)), ("minus4", "[-4, 1, 2, -2]", (1, 2, 3, 4)),
                            ("minus4_infer", "[0, 0, -4, 2, -1]", (2, 3, 2, 2)), ("scalar_to_vector", "[24]", (24,))]:
        case(fam, name, "reshape(%%x, newshape=%s)" % ns, {"x": x}, x.reshape(shape), tol=0)
    case(fam, "batch_flatten", "nn.batch_flatten(%x)", {"x": x}, x.reshape(2, 12), tol=0)
    s = rnd(1, 3, 1, 2)
    case(fam, "squeeze_all", "squeeze(%x)", {"x": s}, s.reshape(3, 2), tol=0)
    case(fam, "squeeze_axis", "squeeze(%x, axis=[-2])", {"x": s}, s.reshape(1, 3, 2), tol=0)
    case(fam, "expand_dims", "expand_dims(%x, axis=1, num_newaxis=2)", {"x": x}, x.reshape(2, 1, 1, 3, 4), tol=0)
    case(fam, "expand_dims_negative", "expand_dims(%x, axis=-1)", {"x": x}, x.reshape(2, 3, 4, 1), tol=0)
    fam = "transpose"
    x4 = rnd(2, 3, 4, 5)
    case(fam, "axes", "transpose(%x, axes=[0, 2, 3, 1])", {"x": x4}, x4.transpose(0, 2, 3, 1), tol=0)
    case(fam, "reverse", "transpose(%x)", {"x": x4}, x4.transpose(), tol=0)
    case(fam, "negative_axes", "transpose(%x, axes=[-1, 0, -2, 1])", {"x": x4}, x4.transpose(3, 0, 2, 1), tol=0)
    xi = ints(3, 4).astype(np.int64)
    case(fam, "int64_2d", "transpose(%x, axes=[1, 0])", {"x": xi}, xi.T, tol=0)
    fam = "concatenate"
    a, b, c = rnd(2, 3, 4), rnd(2, 1, 4), rnd(2, 2, 4)
    case(fam, "axis1_three", "%0 = (%a, %b, %c);\n  concatenate(%0, axis=1)", {"a": a, "b": b, "c": c},
         np.concatenate([a, b, c], 1), tol=0)
    d = rnd(2, 3, 2)
    case(fam, "axis_last", "%0 = (%a, %d);\n  concatenate(%0, axis=-1)", {"a": a, "d": d},
         np.concatenate([a, d], -1), tol=0)
    case(fam, "axis0", "%0 = (%a, %a);\n  concatenate(%0)", {"a": a}, np.concatenate([a, a], 0), tol=0)
    fam = "split"
    x = rnd(2, 6, 3)
    case(fam, "sections", "split(%x, indices_or_sections=3, axis=1)", {"x": x}, tuple(np.split(x, 3, 1)), tol=0)
    case(fam, "indices", "split(%x, indices_or_sections=[1, 4], axis=1)", {"x": x}, tuple(np.split(x, [1, 4], 1)), tol=0)
    case(fam, "negative_axis", "split(%x, indices_or_sections=[2], axis=-1)", {"x": x},
         tuple(np.split(x, [2], -1)), tol=0)
    case(fam, "projection", "%0 = split(%x, indices_or_sections=2);\n  %0.1", {"x": x}, x[1:], tol=0)
    fam = "strided_slice"
    x = rnd(4, 5, 6)
    for name, attrs, ref in [
        ("basic", "begin=[1, 0], end=[3, 4]", x[1:3, 0:4]),
        ("strides", "begin=[0, 1, 0], end=[4, 5, 6], strides=[2, 2, 3]", x[0:4:2, 1:5:2, 0:6:3]),
        ("negative_stride", "begin=[3, -1], end=[0, 0], strides=[-1, -2]", x[3:0:-1, -1:0:-2]),
        ("negative_stride_to_start", "begin=[-1], end=[-5], strides=[-1]", x[-1:-5:-1]),
        ("reverse_all", "begin=[10], end=[-10], strides=[-1]", x[10:-10:-1]),
        ("end_beyond", "begin=[-2, 2], end=[100, 100]", x[-2:100, 2:100]),
        ("axes", "begin=[1, 2], end=[5, -1], axes=[2, 0]", x[2:-1, :, 1:5]),
        ("size_mode", "begin=[1, 1, 2], end=[2, -1, 3], slice_mode=\"size\"", x[1:3, 1:, 2:5]),
        ("empty", "begin=[2], end=[2]", x[2:2]),
    ]:
        case(fam, name, "strided_slice(%%x, %s)" % attrs, {"x": x}, ref, tol=0)
    fam = "take"
    d = rnd(4, 5)
    for name, attrs, idx, ref in [
        ("flat", "", np.array([0, 7, 19, 3], np.int32), d.flatten()[[0, 7, 19, 3]]),
        ("axis0_int64", ", axis=0", np.array([[3, 0], [1, 1]], np.int64), d[[[3, 0], [1, 1]]]),
        ("axis1", ", axis=1", np.array([4, 2, 2], np.int32), d[:, [4, 2, 2]]),
        ("clip_mode", ", axis=1", np.array([-3, 9, 1], np.int32), d[:, [0, 4, 1]]),
        ("wrap_mode", ", axis=0, mode=\"wrap\"", np.array([-1, 5, -6], np.int32), d[[3, 1, 2]]),
        ("fast_mode", ", axis=-1, mode=\"fast\"", np.array([1, 3], np.int32), d[:, [1, 3]]),
    ]:
        case(fam, name, "take(%%d, %%i%s)" % attrs, {"d": d, "i": idx}, ref, tol=0)
    db = rnd(2, 3, 4)
    ib = np.array([[2, 0], [1, 1]], np.int32)
    ref = np.stack([db[b][:, ib[b]] for b in range(2)])
    case(fam, "batch_dims", "take(%d, %i, batch_dims=1, axis=2)", {"d": db, "i": ib}, ref, tol=0)
    fam = "pad"
    x = rnd(2, 3)
    case(fam, "constant_value", "nn.pad(%x, 1.5f, pad_width=[[1, 0], [2, 1]])", {"x": x},
         np.pad(x, [(1, 0), (2, 1)], constant_values=1.5), tol=0)
    case(fam, "constant_zero", "nn.pad(%x, pad_width=[[0, 2], [0, 0]])", {"x": x},
         np.pad(x, [(0, 2), (0, 0)]), tol=0)
    case(fam, "edge", "nn.pad(%x, pad_width=[[2, 1], [1, 3]], pad_mode=\"edge\")", {"x": x},
         np.pad(x, [(2, 1), (1, 3)], mode="edge"), tol=0)
    x4 = rnd(1, 2, 4, 3)
    case(fam, "reflect", "nn.pad(%x, pad_width=[[0, 0], [0, 0], [2, 3], [1, 2]], pad_mode=\"reflect\")", {"x": x4},
         np.pad(x4, [(0, 0), (0, 0), (2, 3), (1, 2)], mode="reflect"), tol=0)
    v = rnd(3)
    case(fam, "reflect_wide", "nn.pad(%x, pad_width=[[5, 4]], pad_mode=\"reflect\")", {"x": v},
         np.pad(v, [(5, 4)], mode="reflect"), tol=0)
    xi = ints(2, 2)
    case(fam, "int32_value", "nn.pad(%x, 7, pad_width=[[1, 1], [0, 1]])", {"x": xi},
         np.pad(xi, [(1, 1), (0, 1)], constant_values=7), tol=0)


# ---- reductions ------------------------------------------------------------------


def gen_reduce():
    fam = "reduce"
    x = rnd(3, 4, 5)
    tx = t64(x)
    for op, fn in [("sum", torch.sum), ("mean", torch.mean)]:
        case(fam, op + "_all", "%s(%%x)" % op, {"x": x}, f32(fn(tx)), tol=1e-6)
        case(fam, op + "_axis1", "%s(%%x, axis=[1])" % op, {"x": x}, f32(fn(tx, 1)), tol=1e-6)
        case(fam, op + "_keepdims", "%s(%%x, axis=[-1], keepdims=True)" % op, {"x": x}, f32(fn(tx, -1, True)), tol=1e-6)
        case(fam, op + "_two_axes", "%s(%%x, axis=[0, 2])" % op, {"x": x}, f32(fn(tx, (0, 2))), tol=1e-6)
        case(fam, op + "_exclude", "%s(%%x, axis=[1], exclude=True)" % op, {"x": x}, f32(fn(tx, (0, 2))), tol=1e-6)
    case(fam, "max_axis0", "max(%x, axis=[0])", {"x": x}, x.max(0), tol=0)
    case(fam, "max_all", "max(%x)", {"x": x}, x.max(), tol=0)
    case(fam, "min_keepdims", "min(%x, axis=[1, 2], keepdims=True)", {"x": x}, x.min((1, 2), keepdims=True), tol=0)
    case(fam, "min_exclude", "min(%x, axis=[-1], exclude=True, keepdims=True)", {"x": x},
         x.min((0, 1), keepdims=True), tol=0)
    xi = ints(3, 4, lo=-50, hi=50)
    case(fam, "sum_int32", "sum(%x, axis=[1])", {"x": xi}, xi.sum(1).astype(np.int32), tol=0)
    case(fam, "max_int32", "max(%x, axis=[0])", {"x": xi}, xi.max(0), tol=0)
    case(fam, "mean_int32_truncates", "mean(%x, axis=[1])", {"x": xi},
         np.trunc(xi.sum(1) / 4).astype(np.int32), tol=0)
    case(fam, "prod_axis1", "prod(%x, axis=[1])", {"x": x}, f32(torch.prod(tx, 1)), tol=1e-6)
    case(fam, "prod_keepdims", "prod(%x, axis=[0, 2], keepdims=True)", {"x": x},
         f32(torch.prod(torch.prod(tx, 0, True), 2, True)), tol=1e-6)
    case(fam, "prod_int32", "prod(%x, axis=[1])", {"x": xi}, xi.prod(1).astype(np.int32), tol=0)
    fam = "argmax"
    xa = np.round(rnd(3, 4, 5) * 3)  # ties on purpose
    case(fam, "all", "argmax(%x)", {"x": xa}, np.array(np.argmax(xa), np.int32), tol=0)
    case(fam, "axis1", "argmax(%x, axis=[1])", {"x": xa}, np.argmax(xa, 1).astype(np.int32), tol=0)
    case(fam, "keepdims", "argmax(%x, axis=[-1], keepdims=True)", {"x": xa},
         np.argmax(xa, -1)[..., None].astype(np.int32), tol=0)
    last = xa.shape[2] - 1 - np.argmax(xa[:, :, ::-1], 2)
    case(fam, "select_last_index", "argmax(%x, axis=[2], select_last_index=True)", {"x": xa},
         last.astype(np.int32), tol=0)
    flat = xa.transpose(1, 0, 2).reshape(4, 15)
    case(fam, "exclude_flattens_reduced_axes", "argmax(%x, axis=[1], exclude=True)", {"x": xa},
         np.argmax(flat, 1).astype(np.int32), tol=0)
    xi = ints(2, 6)
    case(fam, "int32", "argmax(%x, axis=[1])", {"x": xi}, np.argmax(xi, 1).astype(np.int32), tol=0)


def gen_init():
    fam = "init"
    x = rnd(2, 3)
    case(fam, "zeros_like", "zeros_like(%x)", {"x": x}, np.zeros_like(x), tol=0)
    xi = ints(4)
    case(fam, "ones_like_int32", "ones_like(%x)", {"x": xi}, np.ones_like(xi), tol=0)
    v = np.array(0.375, np.float32)
    case(fam, "full", 'full(%v, shape=[2, 3, 2], dtype="float32")', {"v": v}, np.full((2, 3, 2), v), tol=0)
    case(fam, "full_cast_to_int32", 'full(%v, shape=[3], dtype="int32")', {"v": np.array(-2.75, np.float32)},
         np.full(3, -2, np.int32), tol=0)
    case(fam, "full_default_dtype", "full(%v, shape=[2, 2])", {"v": np.array(7, np.int64)},
         np.full((2, 2), 7, np.int64), tol=0)
    case(fam, "full_scalar", 'full(%v, shape=[], dtype="float64")', {"v": v}, np.array(0.375, np.float64), tol=0)
    x4 = rnd(2, 1, 5, 3)
    case(fam, "shape_of", "shape_of(%x)", {"x": x4}, np.array(x4.shape, np.int32), tol=0)
    case(fam, "shape_of_int64", 'shape_of(%x, dtype="int64")', {"x": x}, np.array(x.shape, np.int64), tol=0)


def gen_layout():
    fam = "layout_transform"
    x = rnd(2, 16, 3, 5)
    n, c, h, w = x.shape
    case(fam, "nchw_to_nhwc", 'layout_transform(%x, src_layout="NCHW", dst_layout="NHWC")', {"x": x},
         x.transpose(0, 2, 3, 1), tol=0)
    nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    case(fam, "nhwc_to_nchw", 'layout_transform(%x, src_layout="NHWC", dst_layout="NCHW")', {"x": nhwc},
         x, tol=0)
    blocked8 = x.reshape(n, c // 8, 8, h, w).transpose(0, 1, 3, 4, 2)
    case(fam, "nchw_to_nchw8c", 'layout_transform(%x, src_layout="NCHW", dst_layout="NCHW8c")', {"x": x},
         blocked8, tol=0)
    case(fam, "nchw8c_to_nchw", 'layout_transform(%x, src_layout="NCHW8c", dst_layout="NCHW")',
         {"x": np.ascontiguousarray(blocked8)}, x, tol=0)
    case(fam, "nchw8c_to_nhwc4c", 'layout_transform(%x, src_layout="NCHW8c", dst_layout="NHWC4c")',
         {"x": np.ascontiguousarray(blocked8)}, x.reshape(n, c // 4, 4, h, w).transpose(0, 3, 4, 1, 2), tol=0)
    wt = rnd(8, 4, 3, 3)
    case(fam, "oihw_to_hwio", 'layout_transform(%w, src_layout="OIHW", dst_layout="HWIO")', {"w": wt},
         wt.transpose(2, 3, 1, 0), tol=0)
    fam = "stack"
    a, b, c3 = rnd(2, 3), rnd(2, 3), rnd(2, 3)
    case(fam, "axis0", "%0 = (%a, %b, %c);\n  stack(%0)", {"a": a, "b": b, "c": c3}, np.stack([a, b, c3], 0), tol=0)
    case(fam, "axis1", "%0 = (%a, %b);\n  stack(%0, axis=1)", {"a": a, "b": b}, np.stack([a, b], 1), tol=0)
    case(fam, "axis_last", "%0 = (%a, %b, %a);\n  stack(%0, axis=-1)", {"a": a, "b": b},
         np.stack([a, b, a], -1), tol=0)
    ai = ints(4)
    case(fam, "int32_one_field", "%0 = (%a,);\n  stack(%0)", {"a": ai}, np.stack([ai], 0), tol=0)


def tvm_resize_coord(mode, y, n_in, n_out):
    """The input coordinate of output index y, as topi's resize defines it."""
    if mode == "asymmetric":
        return y * n_in / n_out
    if mode == "half_pixel" or (mode == "pytorch_half_pixel" and n_out > 1):
        return (y + 0.5) * n_in / n_out - 0.5
    if mode == "align_corners":
        return y * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    if mode == "tf_half_pixel_for_nn":
        return (y + 0.5) * n_in / n_out
    return 0.0


def tvm_resize_nchw(x, oh, ow, method, mode, rounding=""):
    """topi's resize2d in float64 for NCHW data (written from its definition)."""
    n, c, ih, iw = x.shape
    out = np.zeros((n, c, oh, ow))
    rnd = {"floor": np.floor, "ceil": np.ceil, "round": np.round,
           "round_prefer_floor": lambda v: np.ceil(v - 0.5), "round_prefer_ceil": lambda v: np.floor(v + 0.5)}
    if not rounding:
        rounding = "round" if mode == "align_corners" else "floor"
    for yy in range(oh):
        cy = tvm_resize_coord(mode, yy, ih, oh)
        for xx in range(ow):
            cx = tvm_resize_coord(mode, xx, iw, ow)
            if method == "nearest_neighbor":
                iy = int(min(max(rnd[rounding](cy), 0), ih - 1))
                ix = int(min(max(rnd[rounding](cx), 0), iw - 1))
                out[:, :, yy, xx] = x[:, :, iy, ix]
                continue
            y0, x0 = int(np.floor(cy)), int(np.floor(cx))
            fy, fx = cy - y0, cx - x0
            cl = lambda v, m: min(max(v, 0), m - 1)
            p = lambda a, b: x[:, :, cl(a, ih), cl(b, iw)].astype(np.float64)
            top = p(y0, x0) * (1 - fx) + p(y0, x0 + 1) * fx
            bot = p(y0 + 1, x0) * (1 - fx) + p(y0 + 1, x0 + 1) * fx
            out[:, :, yy, xx] = top * (1 - fy) + bot * fy
    return out


def tvm_resize_cubic_nchw(x, oh, ow, mode, alpha=-0.5, exclude=False):
    """topi's cubic resize2d in float64 for NCHW data (written from its definition):
    Keys' kernel over the taps floor(c) - 1 .. floor(c) + 2, clamped to the image,
    or with exclude those outside dropped and the weights renormalized."""
    n, c, ih, iw = x.shape
    A = alpha

    def weights(t, taps, size):
        w = np.array([((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A,
                      ((A + 2) * t - (A + 3)) * t * t + 1,
                      ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1,
                      ((A * (2 - t) - 5 * A) * (2 - t) + 8 * A) * (2 - t) - 4 * A])
        if exclude:
            w = np.where((taps >= 0) & (taps < size), w, 0.0)
            w = w / w.sum()
        return w

    out = np.zeros((n, c, oh, ow))
    xd = x.astype(np.float64)
    for yy in range(oh):
        cy = tvm_resize_coord(mode, yy, ih, oh)
        ty = np.floor(cy) + np.arange(-1, 3)
        wy = weights(cy - np.floor(cy), ty, ih)
        for xx in range(ow):
            cx = tvm_resize_coord(mode, xx, iw, ow)
            tx = np.floor(cx) + np.arange(-1, 3)
            wx = weights(cx - np.floor(cx), tx, iw)
            iy, ix = np.clip(ty, 0, ih - 1).astype(int), np.clip(tx, 0, iw - 1).astype(int)
            patch = xd[:, :, iy][:, :, :, ix]
            out[:, :, yy, xx] = np.einsum("ncjk,j,k->nc", patch, wy, wx)
    return out


def gen_cubic():
    fam = "resize_cubic"
    x = rnd(2, 3, 5, 7)
    tx = t64(x)
    # PyTorch's bicubic is Keys' kernel with a = -0.75, taps clamped: ONNX's cubic
    case(fam, "half_pixel_a075", 'image.resize2d(%x, size=[9, 4], method="cubic", cubic_alpha=-0.75f)', {"x": x},
         f32(F.interpolate(tx, size=(9, 4), mode="bicubic", align_corners=False)))
    case(fam, "align_corners_a075", 'image.resize2d(%x, size=[11, 13], method="cubic", '
         'coordinate_transformation_mode="align_corners", cubic_alpha=-0.75f)', {"x": x},
         f32(F.interpolate(tx, size=(11, 13), mode="bicubic", align_corners=True)))
    case(fam, "asymmetric_default_alpha", 'image.resize2d(%x, size=[8, 12], method="cubic", '
         'coordinate_transformation_mode="asymmetric")', {"x": x},
         f32(tvm_resize_cubic_nchw(x, 8, 12, "asymmetric")))
    case(fam, "half_pixel_exclude", 'image.resize2d(%x, size=[3, 10], method="cubic", cubic_exclude=1, '
         'cubic_alpha=-0.5f)', {"x": x}, f32(tvm_resize_cubic_nchw(x, 3, 10, "half_pixel", -0.5, True)))
    nhwc = lambda a: np.ascontiguousarray(np.asarray(a).transpose(0, 2, 3, 1))
    case(fam, "nhwc", 'image.resize2d(%x, size=[6, 6], layout="NHWC", method="cubic", cubic_alpha=-0.75f)',
         {"x": nhwc(x)}, nhwc(f32(F.interpolate(tx, size=(6, 6), mode="bicubic", align_corners=False))))
    case(fam, "upsampling_bicubic", 'nn.upsampling(%x, scale_h=2f, scale_w=3f, method="bicubic")', {"x": x},
         f32(tvm_resize_cubic_nchw(x, 10, 21, "asymmetric")))


def gen_image():
    fam = "resize"
    x = rnd(2, 3, 5, 7)
    tx = t64(x)
    nhwc = lambda a: np.ascontiguousarray(np.asarray(a).transpose(0, 2, 3, 1))
    # nearest with integer scales, asymmetric floor: PyTorch's "nearest"
    case(fam, "upsampling_nearest_2x", "nn.upsampling(%x, scale_h=2f, scale_w=2f)", {"x": x},
         f32(F.interpolate(tx, scale_factor=2, mode="nearest")))
    # bilinear align_corners: PyTorch's align_corners=True
    case(fam, "upsampling_bilinear_align_corners",
         'nn.upsampling(%x, scale_h=2f, scale_w=3f, method="bilinear", align_corners=True)', {"x": x},
         f32(F.interpolate(tx, size=(10, 21), mode="bilinear", align_corners=True)))
    # bilinear, asymmetric (TVM's upsampling default; PyTorch has no such mode)
    case(fam, "upsampling_bilinear_asymmetric", 'nn.upsampling(%x, scale_h=1.5f, scale_w=2.5f, method="bilinear")',
         {"x": x}, f32(tvm_resize_nchw(x, 8, 18, "linear", "asymmetric")))
    xh = nhwc(x)
    case(fam, "upsampling_nhwc", 'nn.upsampling(%x, scale_h=3f, scale_w=2f, layout="NHWC")', {"x": xh},
         nhwc(f32(F.interpolate(tx, scale_factor=(3, 2), mode="nearest"))))
    # resize2d linear half_pixel: PyTorch's bilinear with align_corners=False
    case(fam, "resize2d_linear_half_pixel", "image.resize2d(%x, size=[9, 4])", {"x": x},
         f32(F.interpolate(tx, size=(9, 4), mode="bilinear", align_corners=False)))
    case(fam, "resize2d_linear_nhwc", 'image.resize2d(%x, size=[11, 13], layout="NHWC")', {"x": xh},
         nhwc(f32(F.interpolate(tx, size=(11, 13), mode="bilinear", align_corners=False))))
    case(fam, "resize2d_nearest_asymmetric",
         'image.resize2d(%x, size=[8, 5], method="nearest_neighbor", coordinate_transformation_mode="asymmetric")',
         {"x": x}, f32(F.interpolate(tx, size=(8, 5), mode="nearest")))
    case(fam, "resize2d_nearest_align_corners",
         'image.resize2d(%x, size=[9, 13], method="nearest_neighbor", coordinate_transformation_mode="align_corners")',
         {"x": x}, f32(tvm_resize_nchw(x, 9, 13, "nearest_neighbor", "align_corners")))
    case(fam, "resize2d_nearest_half_pixel_prefer_ceil",
         'image.resize2d(%x, size=[3, 13], method="nearest_neighbor", coordinate_transformation_mode="half_pixel", '
         'rounding_method="round_prefer_ceil")',
         {"x": x}, f32(tvm_resize_nchw(x, 3, 13, "nearest_neighbor", "half_pixel", "round_prefer_ceil")))
    case(fam, "resize2d_nearest_tf_half_pixel_for_nn",
         'image.resize2d(%x, size=[4, 9], method="nearest_neighbor", coordinate_transformation_mode="tf_half_pixel_for_nn", '
         'rounding_method="floor")',
         {"x": x}, f32(tvm_resize_nchw(x, 4, 9, "nearest_neighbor", "tf_half_pixel_for_nn", "floor")))
    case(fam, "resize2d_linear_pytorch_half_pixel_to_one",
         'image.resize2d(%x, size=[1, 6], coordinate_transformation_mode="pytorch_half_pixel")',
         {"x": x}, f32(tvm_resize_nchw(x, 1, 6, "linear", "pytorch_half_pixel")))
    xi = ints(1, 2, 3, 4)
    case(fam, "resize2d_nearest_int32",
         'image.resize2d(%x, size=[6, 8], method="nearest_neighbor", coordinate_transformation_mode="asymmetric")',
         {"x": xi}, np.repeat(np.repeat(xi, 2, 2), 2, 3), tol=0)


def gen_nn_layouts():
    fam = "nn_layouts"
    nhwc = lambda a: np.ascontiguousarray(np.asarray(a).transpose(0, 2, 3, 1))
    x = rnd(2, 4, 7, 6)
    w = rnd(8, 4, 3, 3)
    hwio = np.ascontiguousarray(w.transpose(2, 3, 1, 0))
    ohwi = np.ascontiguousarray(w.transpose(0, 2, 3, 1))
    ref = f32(conv_ref(x, w, pad=(1, 1, 1, 1)))
    case(fam, "conv2d_nhwc_hwio", 'nn.conv2d(%x, %w, padding=[1, 1], data_layout="NHWC", kernel_layout="HWIO")',
         {"x": nhwc(x), "w": hwio}, nhwc(ref))
    case(fam, "conv2d_nhwc_ohwi_to_nchw",
         'nn.conv2d(%x, %w, padding=[1, 1], data_layout="NHWC", kernel_layout="OHWI", out_layout="NCHW")',
         {"x": nhwc(x), "w": ohwi}, ref)
    ref2 = f32(conv_ref(x, w, stride=(2, 1), pad=(0, 1, 1, 0), dil=(1, 2)))
    case(fam, "conv2d_nchw_hwio_strided",
         'nn.conv2d(%x, %w, strides=[2, 1], padding=[0, 1, 1, 0], dilation=[1, 2], kernel_layout="HWIO")',
         {"x": x, "w": hwio}, ref2)
    wd = rnd(4, 1, 3, 3)
    hwoi = np.ascontiguousarray(wd.transpose(2, 3, 0, 1))
    case(fam, "conv2d_depthwise_nhwc_hwoi",
         'nn.conv2d(%x, %w, padding=[1, 1], groups=4, data_layout="NHWC", kernel_layout="HWOI")',
         {"x": nhwc(x), "w": hwoi}, nhwc(f32(conv_ref(x, wd, pad=(1, 1, 1, 1), groups=4))))
    tx = t64(x)
    case(fam, "max_pool2d_nhwc", 'nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], layout="NHWC")',
         {"x": nhwc(x)}, nhwc(f32(F.max_pool2d(tx, 3, 2, 1))))
    case(fam, "avg_pool2d_nhwc_to_nchw",
         'nn.avg_pool2d(%x, pool_size=[2, 2], strides=[2, 2], layout="NHWC", out_layout="NCHW")',
         {"x": nhwc(x)}, f32(F.avg_pool2d(tx, 2, 2)))
    case(fam, "global_avg_pool2d_nhwc", 'nn.global_avg_pool2d(%x, layout="NHWC")', {"x": nhwc(x)},
         nhwc(f32(tx.mean(dim=(2, 3), keepdim=True))))
    case(fam, "adaptive_avg_pool2d_nhwc", 'nn.adaptive_avg_pool2d(%x, output_size=[3, 4], layout="NHWC")',
         {"x": nhwc(x)}, nhwc(f32(F.adaptive_avg_pool2d(tx, (3, 4)))))


def gen_conv1d():
    fam = "conv1d"
    x = rnd(2, 4, 17)
    w = rnd(6, 4, 3)
    conv = lambda x, w, s=1, p=(0, 0), d=1, g=1: f32(F.conv1d(F.pad(t64(x), p), t64(w), stride=s, dilation=d, groups=g))
    case(fam, "basic", "nn.conv1d(%x, %w, padding=[1, 1], channels=6, kernel_size=[3])", {"x": x, "w": w},
         conv(x, w, p=(1, 1)))
    case(fam, "strided_dilated_asymmetric", "nn.conv1d(%x, %w, strides=[2], padding=[2, 1], dilation=[2])",
         {"x": x, "w": w}, conv(x, w, s=2, p=(2, 1), d=2))
    wg = rnd(6, 2, 5)
    case(fam, "groups2", "nn.conv1d(%x, %w, padding=[2], groups=2)", {"x": x, "w": wg}, conv(x, wg, p=(2, 2), g=2))
    wd = rnd(4, 1, 3)
    case(fam, "depthwise", "nn.conv1d(%x, %w, groups=4)", {"x": x, "w": wd}, conv(x, wd, g=4))
    xi, wi = ints(1, 3, 9), ints(2, 3, 2)
    case(fam, "int32", "nn.conv1d(%x, %w)", {"x": xi, "w": wi},
         F.conv1d(torch.from_numpy(xi.astype(np.int64)).double(), torch.from_numpy(wi.astype(np.int64)).double())
         .numpy().astype(np.int32), tol=0)


def gen_conv_transpose():
    fam = "conv_transpose"

    def convt2(x, w, s=(1, 1), pad=(0, 0, 0, 0), op=(0, 0), d=(1, 1), g=1):
        """TVM's conv2d_transpose: PyTorch's without padding, cropped by (top, left, bottom, right)."""
        full = F.conv_transpose2d(t64(x), t64(w), stride=s, output_padding=op, groups=g, dilation=d).numpy()
        t, l, b, r = pad
        return f32(full[:, :, t:full.shape[2] - b, l:full.shape[3] - r])

    x = rnd(2, 4, 5, 6)
    w = rnd(4, 3, 3, 3)
    case(fam, "2d_stride2_output_padding", "nn.conv2d_transpose(%x, %w, strides=[2, 2], padding=[1, 1], "
         "output_padding=[1, 1])", {"x": x, "w": w}, convt2(x, w, s=(2, 2), pad=(1, 1, 1, 1), op=(1, 1)))
    case(fam, "2d_asymmetric_dilated_groups", "nn.conv2d_transpose(%x, %w, channels=6, strides=[2, 1], "
         "padding=[0, 1, 1, 0], dilation=[1, 2], groups=2)", {"x": x, "w": w},
         convt2(x, w, s=(2, 1), pad=(0, 1, 1, 0), d=(1, 2), g=2))
    case(fam, "2d_plain", "nn.conv2d_transpose(%x, %w)", {"x": x, "w": w}, convt2(x, w))
    y = rnd(2, 4, 9)
    v = rnd(4, 2, 4)
    full = F.conv_transpose1d(t64(y), t64(v), stride=3, output_padding=2).numpy()
    case(fam, "1d_stride3_padding_output_padding",
         "nn.conv1d_transpose(%y, %v, strides=[3], padding=[1, 2], output_padding=[2])", {"y": y, "v": v},
         f32(full[:, :, 1:full.shape[2] - 2]))
    vg = rnd(4, 1, 3)
    case(fam, "1d_depthwise", "nn.conv1d_transpose(%y, %v, padding=[1], groups=4)", {"y": y, "v": vg},
         f32(F.conv_transpose1d(t64(y), t64(vg), padding=1, groups=4)))


def gen_arange():
    fam = "arange"
    case(fam, "float32", "arange(0f, 5f, 1f)", {}, np.arange(0, 5, 1, dtype=np.float32), tol=0)
    case(fam, "int32_step3", 'arange(1, 10, 3, dtype="int32")', {}, np.arange(1, 10, 3, dtype=np.int32), tol=0)
    case(fam, "negative_step", "arange(2.5f, -1f, -0.75f)", {}, np.arange(2.5, -1, -0.75).astype(np.float32))
    case(fam, "fractional_float64", 'arange(0f, 1f, 0.1f, dtype="float64")', {},
         np.array([np.float32(0) + i * np.float64(np.float32(0.1)) for i in range(10)]), tol=1e-15)
    case(fam, "empty", "arange(3f, 1f, 1f)", {}, np.zeros(0, np.float32), tol=0)


def gen_conv3d():
    fam = "conv3d"
    x = rnd(1, 4, 4, 5, 6)
    w = rnd(6, 4, 3, 3, 2)

    def conv(x, w, s=1, p=(0,) * 6, d=1, g=1):
        # TVM's padding is (front, top, left, back, bottom, right); F.pad takes the last axis first
        tp = (p[2], p[5], p[1], p[4], p[0], p[3])
        return f32(F.conv3d(F.pad(t64(x), tp), t64(w), stride=s, dilation=d, groups=g))

    case(fam, "basic", "nn.conv3d(%x, %w, padding=[1, 1, 1], channels=6, kernel_size=[3, 3, 2])", {"x": x, "w": w},
         conv(x, w, p=(1, 1, 1, 1, 1, 1)))
    case(fam, "strided_dilated_asymmetric",
         "nn.conv3d(%x, %w, strides=[1, 2, 1], padding=[1, 0, 1, 0, 1, 1], dilation=[1, 1, 2])",
         {"x": x, "w": w}, conv(x, w, s=(1, 2, 1), p=(1, 0, 1, 0, 1, 1), d=(1, 1, 2)))
    wg = rnd(6, 2, 2, 3, 3)
    case(fam, "groups2", "nn.conv3d(%x, %w, padding=[1], groups=2)", {"x": x, "w": wg},
         conv(x, wg, p=(1,) * 6, g=2))
    wd = rnd(4, 1, 3, 1, 3)
    case(fam, "depthwise", "nn.conv3d(%x, %w, strides=[2], groups=4)", {"x": x, "w": wd}, conv(x, wd, s=2, g=4))
    tx = t64(x)
    case(fam, "max_pool", "nn.max_pool3d(%x, pool_size=[3, 3, 3], strides=[2, 2, 2], padding=[1, 1, 1])",
         {"x": x}, f32(F.max_pool3d(tx, 3, 2, 1)))
    case(fam, "max_pool_ceil_dilation", "nn.max_pool3d(%x, pool_size=[2, 2, 2], strides=[2, 1, 2], dilation=[1, 2, 1], "
         "ceil_mode=True)", {"x": x}, f32(F.max_pool3d(tx, 2, (2, 1, 2), 0, dilation=(1, 2, 1), ceil_mode=True)))
    case(fam, "max_pool_asymmetric", "nn.max_pool3d(%x, pool_size=[2, 2, 2], strides=[2, 2, 2], "
         "padding=[1, 0, 1, 0, 1, 0])", {"x": x},
         f32(F.max_pool3d(F.pad(tx, (1, 0, 0, 1, 1, 0), value=-np.inf), 2, 2)))
    case(fam, "avg_pool_exclude_pad", "nn.avg_pool3d(%x, pool_size=[3, 3, 3], strides=[2, 2, 2], padding=[1, 1, 1])",
         {"x": x}, f32(F.avg_pool3d(tx, 3, 2, 1, count_include_pad=False)))
    case(fam, "avg_pool_include_pad", "nn.avg_pool3d(%x, pool_size=[2, 3, 3], strides=[1, 2, 2], padding=[1, 1, 1], "
         "count_include_pad=True)", {"x": x}, f32(F.avg_pool3d(tx, (2, 3, 3), (1, 2, 2), 1, count_include_pad=True)))
    case(fam, "avg_pool_ceil_include_pad", "nn.avg_pool3d(%x, pool_size=[3, 3, 3], strides=[2, 2, 2], "
         "padding=[1, 1, 1], ceil_mode=True, count_include_pad=True)",
         {"x": x}, f32(F.avg_pool3d(tx, 3, 2, 1, ceil_mode=True, count_include_pad=True)))


def gen_conv3d_transpose():
    fam = "conv3d_transpose"

    def convt3(x, w, s=(1, 1, 1), pad=(0,) * 6, op=(0, 0, 0), d=(1, 1, 1), g=1):
        """TVM's conv3d_transpose: PyTorch's without padding, cropped by (front, top, left, back, bottom, right)."""
        full = F.conv_transpose3d(t64(x), t64(w), stride=s, output_padding=op, groups=g, dilation=d).numpy()
        f, t, l, b, bo, r = pad
        return f32(full[:, :, f:full.shape[2] - b, t:full.shape[3] - bo, l:full.shape[4] - r])

    x = rnd(1, 4, 3, 4, 5)
    w = rnd(4, 2, 3, 3, 2)
    case(fam, "plain", "nn.conv3d_transpose(%x, %w)", {"x": x, "w": w}, convt3(x, w))
    case(fam, "strided_padded_output_padding_groups", "nn.conv3d_transpose(%x, %w, strides=[2, 1, 2], "
         "padding=[1, 0, 1, 0, 1, 0], output_padding=[1, 0, 1], groups=2)", {"x": x, "w": w},
         convt3(x, w, s=(2, 1, 2), pad=(1, 0, 1, 0, 1, 0), op=(1, 0, 1), g=2))
    case(fam, "dilated", "nn.conv3d_transpose(%x, %w, padding=[1], dilation=[1, 2, 1])", {"x": x, "w": w},
         convt3(x, w, pad=(1,) * 6, d=(1, 2, 1)))


def nonfinite(*shape, which=0):
    """Random values with NaN, +inf, -inf and -0 planted by blocks of 8:
    one block in four holds a NaN, the next both infinities, the next -0s,
    the last none of them (so some rows and windows are clean)."""
    x = rnd(*shape).reshape(-1)
    for j in range(x.size):
        b, at = j // 8 + which, j % 8
        if b % 4 == 0 and at == (b * 3 + 1) % 8:
            x[j] = np.nan
        elif b % 4 == 1 and at == (b * 5) % 8:
            x[j] = np.inf
        elif b % 4 == 1 and at == (b * 5 + 4) % 8:
            x[j] = -np.inf
        elif j % 5 == 0 or (b % 4 == 2 and at % 2 == 0):
            x[j] = -0.0
    return x.reshape(shape)


def gen_nonfinite():
    """NaN, infinities and -0 as PyTorch treats them: max and min propagate
    NaN from either side, relu and clip keep it (and -0), pooling,
    reductions and softmax over a NaN give NaN, argmax answers the first
    NaN. relay-tune's generated kernels are checked against the same
    reference kernels (tests/codegen/test_nan.c)."""
    fam = "nonfinite"
    x, y = nonfinite(4, 16), nonfinite(4, 16, which=1)
    tx, tyy = torch.from_numpy(x), torch.from_numpy(y)
    with np.errstate(invalid="ignore"):
        case(fam, "relu_sqrt", "nn.relu(sqrt(%x))", {"x": x}, torch.relu(torch.sqrt(tx)).numpy(), tol=0)
    case(fam, "relu", "nn.relu(%x)", {"x": x}, torch.relu(tx).numpy(), tol=0)
    case(fam, "leaky_relu", "nn.leaky_relu(%x, alpha=0.25f)", {"x": x}, F.leaky_relu(tx, 0.25).numpy(), tol=0)
    case(fam, "clip", "clip(%x, a_min=-0.5f, a_max=0.5f)", {"x": x}, torch.clamp(tx, -0.5, 0.5).numpy(), tol=0)
    case(fam, "maximum", "maximum(%x, %y)", {"x": x, "y": y}, torch.maximum(tx, tyy).numpy(), tol=0)
    case(fam, "minimum", "minimum(%x, %y)", {"x": x, "y": y}, torch.minimum(tx, tyy).numpy(), tol=0)
    case(fam, "maximum_broadcast", "maximum(%x, %y)", {"x": x, "y": y[:1]},
         torch.maximum(tx, tyy[:1]).numpy(), tol=0)
    p = nonfinite(1, 2, 8, 8)
    tp = torch.from_numpy(p)
    case(fam, "max_pool2d", "nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])", {"x": p},
         F.max_pool2d(tp, 3, 2, 1).numpy(), tol=0)
    r = nonfinite(6, 8)
    tr = torch.from_numpy(r)
    case(fam, "max_axis1", "max(%x, axis=[1])", {"x": r}, torch.amax(tr, 1).numpy(), tol=0)
    case(fam, "min_axis1", "min(%x, axis=[1])", {"x": r}, torch.amin(tr, 1).numpy(), tol=0)
    case(fam, "argmax_axis1", "argmax(%x, axis=[1])", {"x": r}, torch.argmax(tr, 1).numpy().astype(np.int32), tol=0)
    case(fam, "softmax", "nn.softmax(%x)", {"x": r}, f32(torch.softmax(t64(r), -1)), tol=F32_TOL)


def gen_conv2d_nchwc():
    """nn.contrib_conv2d_NCHWc and the pools on NCHW[x]c data: inputs and
    expectation blocked with numpy from PyTorch on the plain tensors."""
    fam = "blocked"

    def block_data(x, b):
        n, c, h, w = x.shape
        return np.ascontiguousarray(x.reshape(n, c // b, b, h, w).transpose(0, 1, 3, 4, 2))

    def block_weight(w, ib, ob):
        o, i, kh, kw = w.shape
        return np.ascontiguousarray(w.reshape(o // ob, ob, i // ib, ib, kh, kw).transpose(0, 2, 4, 5, 3, 1))

    x, w = rnd(1, 8, 7, 6), rnd(8, 8, 3, 3)
    case(fam, "block4_pad1", 'nn.contrib_conv2d_NCHWc(%x, %w, padding=[1, 1], data_layout="NCHW4c", '
         'kernel_layout="OIHW4i4o")', {"x": block_data(x, 4), "w": block_weight(w, 4, 4)},
         block_data(f32(conv_ref(x, w, pad=(1, 1, 1, 1))), 4))
    w2 = rnd(4, 8, 1, 3)
    case(fam, "in8_out2_stride2", 'nn.contrib_conv2d_NCHWc(%x, %w, strides=[2, 2], padding=[0, 1, 0, 1], '
         'data_layout="NCHW8c", kernel_layout="OIHW8i2o", out_layout="NCHW2c")',
         {"x": block_data(x, 8), "w": block_weight(w2, 8, 2)},
         block_data(f32(conv_ref(x, w2, (2, 2), (0, 1, 0, 1))), 2))
    x3, w3 = rnd(2, 3, 5, 5), rnd(6, 3, 2, 2)
    case(fam, "stem_block3_dilated", 'nn.contrib_conv2d_NCHWc(%x, %w, dilation=[2, 2], data_layout="NCHW3c", '
         'kernel_layout="OIHW3i6o")', {"x": block_data(x3, 3), "w": block_weight(w3, 3, 6)},
         block_data(f32(conv_ref(x3, w3, dil=(2, 2))), 6))
    xp = rnd(1, 8, 9, 7)
    tp, bp = t64(xp), block_data(xp, 4)
    case(fam, "max_pool_nchw4c", 'nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], '
         'layout="NCHW4c")', {"x": bp}, block_data(f32(F.max_pool2d(tp, 3, 2, 1)), 4))
    case(fam, "avg_pool_nchw4c", 'nn.avg_pool2d(%x, pool_size=[2, 3], strides=[1, 2], padding=[1, 1], '
         'layout="NCHW4c", out_layout="NCHW4c")', {"x": bp},
         block_data(f32(F.avg_pool2d(tp, (2, 3), (1, 2), 1, count_include_pad=False)), 4))
    case(fam, "global_avg_pool_nchw8c", 'nn.global_avg_pool2d(%x, layout="NCHW8c")', {"x": block_data(xp, 8)},
         block_data(f32(tp.mean(dim=(2, 3), keepdim=True)), 8))
    case(fam, "adaptive_avg_pool_nchw2c", 'nn.adaptive_avg_pool2d(%x, output_size=[2, 3], layout="NCHW2c")',
         {"x": block_data(xp, 2)}, block_data(f32(F.adaptive_avg_pool2d(tp, (2, 3))), 2))


def winograd_g(m):
    """G of F(m x m, 3 x 3) by the Cook-Toom construction, in fractions:
    row t = [1, p_t, p_t^2] / prod_{u != t} (p_t - p_u) over the finite
    points (0, +-1 for m = 2; 0, +-1, +-2 for m = 4), then the row of
    infinity [0, 0, 1] (docs/winograd.md)."""
    from fractions import Fraction as Fr
    pts = [Fr(0), Fr(1), Fr(-1)] + ([Fr(2), Fr(-2)] if m == 4 else [])
    rows = []
    for t, p in enumerate(pts):
        f = Fr(1)
        for u, q in enumerate(pts):
            if u != t:
                f *= p - q
        rows.append([float(Fr(1) / f), float(p / f), float(p * p / f)])
    rows.append([0.0, 0.0, 1.0])
    return np.array(rows)


def gen_winograd():
    """The Winograd ops: U = G g G^T with numpy, and the conv on U against
    PyTorch's direct conv of the weight U came from."""
    fam = "winograd"
    for m, (n, c, h, w, k, pad) in ((4, (2, 3, 7, 7, 5, 1)), (2, (1, 17, 6, 9, 4, 0))):
        x, wt = rnd(n, c, h, w), rnd(k, c, 3, 3)
        g = winograd_g(m)
        u = np.einsum("xi,kcij,yj->xykc", g, wt.astype(np.float64), g)
        case(fam, "weight_transform_m%d" % m, "nn.contrib_conv2d_winograd_weight_transform(%%w, tile_size=%d)" % m,
             {"w": wt}, f32(u), tol=1e-6)
        case(fam, "conv_m%d_pad%d" % (m, pad),
             "nn.contrib_conv2d_winograd_without_weight_transform(%%x, %%u, padding=[%d, %d], tile_size=%d)"
             % (pad, pad, m), {"x": x, "u": f32(u)}, f32(conv_ref(x, wt, pad=(pad,) * 4)), tol=1e-5)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(here), "ref", "ops"))
    out = ap.parse_args().out
    os.makedirs(out, exist_ok=True)
    for gen in (gen_conv2d, gen_dense_bmm, gen_pool, gen_norm, gen_unary, gen_binary, gen_transform, gen_reduce, gen_init, gen_layout, gen_image, gen_nn_layouts, gen_conv1d, gen_conv_transpose, gen_arange, gen_conv3d, gen_cubic, gen_conv3d_transpose, gen_nonfinite,
                gen_conv2d_nchwc, gen_winograd):
        gen()
    total = 0
    for i, (fam, arrays) in enumerate(FILES.items()):
        path = os.path.join(out, fam + ".npz")
        # stored and deflated alternately, so that the tests read both kinds
        write_npz(path, arrays, compress=i % 2 == 1)
        size = os.path.getsize(path)
        total += size
        ncases = sum(1 for k in arrays if k.endswith(".model"))
        print("%-28s %3d cases %7d bytes" % (os.path.relpath(path), ncases, size))
    print("total %d bytes" % total)


if __name__ == "__main__":
    main()
