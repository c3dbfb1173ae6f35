#!/usr/bin/python3
"""Generate the relay-tune benchmark model zoo as Relay text (format 0.0.5).

Usage:
    /usr/bin/python3 benchmarks/gen/make_zoo.py [--out DIR] [--no-verify] [MODEL ...]

Writes DIR/<model>.relay (default DIR: benchmarks/models next to this
script's parent) for resnet18, resnet50, mobilenet_v2, squeezenet1_0,
bert_layer and mlp.  Needs torch and torchvision (weights=None, so no network
access).  The output is deterministic: it depends only on the model
architectures, never on weight values, time or environment.

How it works
------------
* torchvision models and the MLP are traced with torch.fx.symbolic_trace;
  every fx node is lowered to Relay ops.  Output shapes of every node come
  from running the traced graph on a zero input (fx ShapeProp), and are
  printed as `/* ty=... */` comments.
* The BERT encoder layer is emitted by hand (explicit emitter), with 2-D
  dense layers and 3-D nn.batch_matmul for attention.
* All weights / buffers are parameters of @main, named after the PyTorch
  state_dict key with '.' replaced by '_', in order of first use, after
  %data.  num_batches_tracked buffers are never emitted.
* The text is canonical: byte for byte what `relay-tune parse FILE` prints
  for it (TVM's printing conventions: attributes in schema order and only
  where they differ from the op's default, tuples bound as their own
  numbered bindings, bindings numbered in creation order; see "Text
  formatting helpers" below).  The script does this itself; it does not need
  the C build.

Self-checks (run unless --no-verify)
------------------------------------
* resnet18 and mlp: the op histogram is compared against a hand-counted
  expectation and the parameter count against the state_dict.
* Every model: the emitted *text* is parsed back by a tiny independent
  interpreter (torch-based implementations of the Relay op semantics), run
  with seeded random weights, and compared against the PyTorch model's
  output.  Every `/* ty=... */` comment and every parameter type in the
  signature is checked against the interpreted tensor shapes.
"""

import argparse
import collections
import fractions
import math
import operator
import os
import re
import sys

import numpy as np
import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.passes.shape_prop import ShapeProp

# --------------------------------------------------------------------------
# Text formatting helpers
#
# The emitted text is *canonical*: byte for byte what `relay-tune parse`
# prints for it (ir/printer.c, ir/attrs.c, ir/type.c), so parsing and printing
# it again changes nothing.  The conventions, all applied here in general:
#   * op attributes come in the op's schema order, and only those that differ
#     from the op's default are printed (TVM's convention); OP_SCHEMAS below
#     mirrors the IR_SCHEMA tables of ir/op_*.c;
#   * every call, tuple and tuple projection that the result uses is its own
#     numbered binding `%N = ...;`, numbered 0, 1, 2, ... in creation order
#     (operands always come before their users), so a tuple argument is
#     `%12 = (%9, %11) /* ty=(...) */;` followed by `concatenate(%12, ...)`;
#     the result is printed inline, and nodes it does not use are not printed;
#   * every binding and the result carry a `/* ty=... */` comment: a tensor
#     type, `float32` for a scalar, `(T1, T2)` for a tuple (`(T1,)` for one);
#   * floats are the shortest `%g` text that reads back as the same float32,
#     with an `f` suffix (`1e-05f`, `0.5f`, `6f`, `1e+05f`).
# --------------------------------------------------------------------------

DTYPE = "float32"


def _strtof(s):
    """The float32 that C's strtof reads from decimal text s (exactly rounded:
    nearest, ties to even; no double rounding through float64)."""
    with np.errstate(over="ignore"):
        f = np.float32(float(s))
        if not np.isfinite(f):
            return f
        around = (np.nextafter(f, np.float32(-np.inf)), f,
                  np.nextafter(f, np.float32(np.inf)))
    exact = fractions.Fraction(s)
    best = None
    for c in around:
        if not np.isfinite(c):
            continue
        odd = int(np.array(c, dtype=np.float32).view(np.uint32)) & 1
        key = (abs(fractions.Fraction(float(c)) - exact), odd)
        if best is None or key < best[0]:
            best = (key, c)
    return best[1]


def fmt_float(x):
    """A float32 as Relay text, as ir_print_float32 prints it: the shortest
    `%.<p>g` (p = 1..9) that reads back as the same float32, plus 'f'.

    1e-05 -> '1e-05f', 0.5 -> '0.5f', 6.0 -> '6f', 1/sqrt(2) -> '0.70710677f',
    100000.0 -> '1e+05f'.
    """
    with np.errstate(over="ignore"):
        f = np.float32(x)
    if np.isnan(f):
        return "nanf"
    if np.isinf(f):
        return "-inff" if f < 0 else "inff"
    for prec in range(1, 10):
        s = "%.*g" % (prec, float(f))
        if _strtof(s) == f:
            break
    return s + "f"


def fmt_string(s):
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif c < 0x20 or c == 0x7F:
            out.append("\\x%02x" % c)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def fmt_attr(v):
    """An attribute value as ir_attr_print spells it."""
    if v is None:
        return "None"
    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return fmt_float(v)
    if isinstance(v, str):
        return fmt_string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(fmt_attr(e) for e in v) + "]"
    raise TypeError("cannot format attribute %r" % (v,))


def fmt_shape(shape):
    return "(" + ", ".join(str(int(d)) for d in shape) + ")"


def tensor_ty(shape):
    shape = tuple(int(d) for d in shape)
    if len(shape) == 0:
        return DTYPE
    return "Tensor[%s, %s]" % (fmt_shape(shape), DTYPE)


def tuple_ty_of(field_tys):
    """A tuple type from its field types, as ir_type_print writes it."""
    field_tys = list(field_tys)
    return "(" + ", ".join(field_tys) + (",)" if len(field_tys) == 1 else ")")


def tuple_ty(shapes):
    return tuple_ty_of(tensor_ty(s) for s in shapes)


# --------------------------------------------------------------------------
# Op attribute schemas (mirror of the IR_SCHEMA tables in ir/op_*.c)
# --------------------------------------------------------------------------

# Attribute kinds, as ir_attr_type in ir/ir.h.
(AT_INT, AT_FLOAT, AT_BOOL, AT_STR, AT_INTS, AT_INTS_OPT, AT_INT_OPT,
 AT_INT_OR_INTS, AT_INTS2, AT_ANY) = (
    "int", "float", "bool", "str", "ints", "ints_opt", "int_opt",
    "int_or_ints", "ints2", "any")

_POOL2D = [("pool_size", AT_INTS, [1, 1]),
           ("strides", AT_INTS, [1, 1]),
           ("dilation", AT_INTS, [1, 1]),
           ("padding", AT_INTS, [0, 0]),
           ("layout", AT_STR, "NCHW"),
           ("out_layout", AT_STR, ""),
           ("ceil_mode", AT_BOOL, False)]
_NORM = [("epsilon", AT_FLOAT, 1e-05),
         ("center", AT_BOOL, True),
         ("scale", AT_BOOL, True)]
_REDUCE = [("axis", AT_INTS_OPT, None),
           ("keepdims", AT_BOOL, False),
           ("exclude", AT_BOOL, False)]
_SOFTMAX = [("axis", AT_INT, -1)]

# op name -> [(attribute, kind, default)] in schema (= printing) order.
OP_SCHEMAS = {
    "nn.conv2d": [("strides", AT_INTS, [1, 1]),
                  ("padding", AT_INTS, [0, 0]),
                  ("dilation", AT_INTS, [1, 1]),
                  ("groups", AT_INT, 1),
                  ("channels", AT_INT_OPT, None),
                  ("kernel_size", AT_INTS_OPT, None),
                  ("data_layout", AT_STR, "NCHW"),
                  ("kernel_layout", AT_STR, "OIHW"),
                  ("out_layout", AT_STR, ""),
                  ("out_dtype", AT_STR, "")],
    "nn.dense": [("units", AT_INT_OPT, None),
                 ("out_dtype", AT_STR, "")],
    "nn.batch_matmul": [("out_dtype", AT_STR, ""),
                        ("transpose_a", AT_BOOL, False),
                        ("transpose_b", AT_BOOL, True)],
    "nn.max_pool2d": _POOL2D,
    "nn.avg_pool2d": _POOL2D + [("count_include_pad", AT_BOOL, False)],
    "nn.global_avg_pool2d": [("layout", AT_STR, "NCHW"),
                             ("out_layout", AT_STR, "")],
    "nn.adaptive_avg_pool2d": [("output_size", AT_INTS_OPT, None),
                               ("layout", AT_STR, "NCHW"),
                               ("out_layout", AT_STR, "")],
    "nn.softmax": _SOFTMAX,
    "nn.log_softmax": _SOFTMAX,
    "nn.layer_norm": [("axis", AT_INT, -1)] + _NORM,
    "nn.batch_norm": [("axis", AT_INT, 1)] + _NORM,
    "nn.dropout": [("rate", AT_FLOAT, 0.5)],
    "nn.bias_add": [("axis", AT_INT, 1)],
    "nn.leaky_relu": [("alpha", AT_FLOAT, 0.25)],
    "nn.pad": [("pad_width", AT_INTS2, []),
               ("pad_mode", AT_STR, "constant")],
    "clip": [("a_min", AT_FLOAT, 0.0),
             ("a_max", AT_FLOAT, 0.0)],
    "cast": [("dtype", AT_STR, "")],
    "reshape": [("newshape", AT_INTS, []),
                ("allowzero", AT_BOOL, False)],
    "transpose": [("axes", AT_INTS_OPT, None)],
    "squeeze": [("axis", AT_INTS_OPT, None)],
    "expand_dims": [("axis", AT_INT, 0),
                    ("num_newaxis", AT_INT, 1)],
    "concatenate": [("axis", AT_INT, 0)],
    "split": [("indices_or_sections", AT_INT_OR_INTS, 1),
              ("axis", AT_INT, 0)],
    "strided_slice": [("begin", AT_INTS_OPT, None),
                      ("end", AT_INTS_OPT, None),
                      ("strides", AT_INTS_OPT, None),
                      ("slice_mode", AT_STR, "end"),
                      ("axes", AT_INTS_OPT, None)],
    "take": [("batch_dims", AT_INT, 0),
             ("axis", AT_INT_OPT, None),
             ("mode", AT_STR, "clip")],
    "sum": _REDUCE,
    "mean": _REDUCE,
    "max": _REDUCE,
    "min": _REDUCE,
    "argmax": [("axis", AT_INTS_OPT, None),
               ("keepdims", AT_BOOL, False),
               ("select_last_index", AT_BOOL, False),
               ("exclude", AT_BOOL, False)],
}
# Attributes TVM gives no default (ir_attr_def.required): the text must give
# them and the canonical printer always prints them.
REQUIRED_ATTRS = {("clip", "a_min"), ("clip", "a_max"), ("cast", "dtype"),
                  ("reshape", "newshape"), ("expand_dims", "axis"),
                  ("split", "indices_or_sections"), ("strided_slice", "begin"),
                  ("strided_slice", "end"), ("nn.max_pool2d", "pool_size"),
                  ("nn.avg_pool2d", "pool_size"), ("nn.pad", "pad_width")}
for _op in ("nn.relu", "nn.batch_flatten", "add", "subtract", "multiply",
            "divide", "power", "maximum", "minimum", "negative", "abs", "exp",
            "log", "sqrt", "rsqrt", "tanh", "sigmoid", "erf", "copy", "equal",
            "not_equal", "less", "less_equal", "greater", "greater_equal",
            "logical_and", "logical_or", "logical_not", "where"):
    OP_SCHEMAS[_op] = []


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_ints(v):
    return isinstance(v, (list, tuple)) and all(_is_int(e) for e in v)


def coerce_attr(op, name, kind, v):
    """v as the C parser stores it for an attribute of this kind (mirror of
    ir_attr_coerce, plus the float round trip through its text)."""
    def bad(what):
        raise TypeError("%s: attribute '%s' must be %s, got %r" % (op, name, what, v))

    if kind == AT_ANY:
        return v
    if kind in (AT_INT, AT_INT_OPT):
        if v is None and kind == AT_INT_OPT:
            return None
        return int(v) if _is_int(v) else bad("an integer")
    if kind == AT_FLOAT:
        if isinstance(v, (bool, np.bool_)) or not isinstance(
                v, (int, float, np.integer, np.floating)):
            bad("a number")
        text = fmt_float(float(v))[:-1]
        return float(text) if text not in ("nan", "inf", "-inf") else float(v)
    if kind == AT_BOOL:
        if isinstance(v, (bool, np.bool_)) or (_is_int(v) and v in (0, 1)):
            return bool(v)
        bad("True or False")
    if kind == AT_STR:
        return v if isinstance(v, str) else bad("a string")
    if kind in (AT_INTS, AT_INTS_OPT):
        if v is None and kind == AT_INTS_OPT:
            return None
        if _is_int(v):
            return [int(v)]
        return [int(e) for e in v] if _is_ints(v) else bad("a list of integers")
    if kind == AT_INT_OR_INTS:
        if _is_int(v):
            return int(v)
        return [int(e) for e in v] if _is_ints(v) else bad("integer(s)")
    if kind == AT_INTS2:
        if isinstance(v, (list, tuple)) and all(_is_ints(e) for e in v):
            return [[int(x) for x in e] for e in v]
        bad("a list of lists of integers")
    raise ValueError("unknown attribute kind %r" % kind)


def attr_equal(a, b):
    """Structural equality as ir_attr_equal (numbers compare by value)."""
    num = (int, float, np.integer, np.floating)
    a_bool = isinstance(a, (bool, np.bool_))
    b_bool = isinstance(b, (bool, np.bool_))
    if isinstance(a, num) and isinstance(b, num) and not a_bool and not b_bool:
        return float(a) == float(b)
    if a_bool or b_bool:
        return a_bool and b_bool and bool(a) == bool(b)
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(attr_equal(x, y) for x, y in zip(a, b))
    return False


def canonical_attrs(op, attrs):
    """The attributes the canonical printer shows for a call of `op`: in
    schema order, coerced, and only those that are required or differ from
    the default."""
    if op not in OP_SCHEMAS:
        raise KeyError("no attribute schema for op %s (copy it from ir/op_*.c "
                       "into OP_SCHEMAS)" % op)
    schema = OP_SCHEMAS[op]
    given = collections.OrderedDict()
    for k, v in attrs:
        if k in given:
            raise ValueError("%s: attribute '%s' is given twice" % (op, k))
        given[k] = v
    known = [n for n, _, _ in schema]
    unknown = [k for k in given if k not in known]
    if unknown:
        raise ValueError("%s has no attribute(s) %s (its attributes: %s)"
                         % (op, ", ".join(unknown), ", ".join(known) or "none"))
    out = []
    for name, kind, default in schema:
        required = (op, name) in REQUIRED_ATTRS
        if name in given:
            v = coerce_attr(op, name, kind, given[name])
            if required or not attr_equal(v, default):
                out.append((name, v))
        elif required:
            raise ValueError("%s: attribute '%s' is required" % (op, name))
    return out


# --------------------------------------------------------------------------
# Relay graph builder
# --------------------------------------------------------------------------


class Node:
    """A call, tuple or tuple projection.  Nodes get their `%N` number only
    when the text is printed (creation order among the nodes the result
    uses), exactly as the canonical printer numbers them."""

    __slots__ = ("seq", "kind", "op", "args", "attrs", "ty")

    def __init__(self, seq, kind, op, args, attrs, ty):
        self.seq, self.kind, self.op = seq, kind, op
        self.args, self.attrs, self.ty = args, attrs, ty


class RelayBuilder:
    """Accumulates call/tuple/projection nodes and @main parameters, and
    prints them as canonical Relay text.

    An operand is a Node, a parameter reference ("%name", as returned by
    param()), or a Python float (an inline float32 scalar constant).
    """

    def __init__(self, input_shape):
        self.params = [("data", tuple(int(d) for d in input_shape))]
        self.param_names = {"data"}
        self.param_types = {"%data": tensor_ty(input_shape)}
        self.nodes = []
        # Filled in by text(): histogram and number of the printed nodes.
        self.op_counts = collections.Counter()
        self.num_exprs = 0

    @property
    def data(self):
        return "%data"

    def param(self, name, shape):
        name = name.replace(".", "_")
        shape = tuple(int(d) for d in shape)
        if name not in self.param_names:
            self.param_names.add(name)
            self.params.append((name, shape))
            self.param_types["%" + name] = tensor_ty(shape)
        else:
            for n, s in self.params:
                if n == name:
                    assert s == shape, (name, s, shape)
        return "%" + name

    def type_of(self, ref):
        if isinstance(ref, Node):
            return ref.ty
        if isinstance(ref, float):
            return DTYPE
        return self.param_types[ref]

    def _node(self, kind, op, args, attrs, ty):
        assert ty, "every node needs its type (for the /* ty=... */ comment)"
        for a in args:
            assert isinstance(a, (Node, float)) or a in self.param_types, a
        n = Node(len(self.nodes), kind, op, list(args), attrs, ty)
        self.nodes.append(n)
        return n

    def tuple(self, fields):
        fields = list(fields)
        return self._node("tuple", None, fields, [],
                          tuple_ty_of(self.type_of(f) for f in fields))

    def op(self, name, args, attrs=(), ty=None):
        # A tuple operand is its own node, created (so numbered) before the
        # call, as the parser creates it while reading the call's arguments.
        args = [self.tuple(a) if isinstance(a, (list, tuple)) else a
                for a in args]
        return self._node("call", name, args, canonical_attrs(name, attrs), ty)

    def tuple_get(self, ref, index, ty):
        assert isinstance(ref, Node), ref
        return self._node("proj", int(index), [ref], [], ty)

    def text(self, result, ret_shape):
        assert self.type_of(result) == tensor_ty(ret_shape), (
            self.type_of(result), ret_shape)
        # The nodes the result uses, in creation order.
        live, stack = set(), [result]
        while stack:
            r = stack.pop()
            if isinstance(r, Node) and r.seq not in live:
                live.add(r.seq)
                stack.extend(r.args)
        order = [n for n in self.nodes if n.seq in live]
        # Numbers 0, 1, ... skipping any taken by a parameter name.
        names, used, num = {}, set(self.param_names), 0
        for n in order:
            while str(num) in used:
                num += 1
            names[n.seq] = str(num)
            used.add(str(num))
            num += 1

        def ref(a):
            if isinstance(a, Node):
                return "%" + names[a.seq]
            if isinstance(a, float):
                return fmt_float(a)
            return a

        def expr(n):
            if n.kind == "call":
                parts = [ref(a) for a in n.args]
                parts += ["%s=%s" % (k, fmt_attr(v)) for k, v in n.attrs]
                return "%s(%s)" % (n.op, ", ".join(parts))
            if n.kind == "tuple":
                inner = ", ".join(ref(a) for a in n.args)
                return "(" + inner + (",)" if len(n.args) == 1 else ")")
            return "%s.%d" % (ref(n.args[0]), n.op)

        self.op_counts = collections.Counter(
            n.op if n.kind == "call" else
            "Tuple" if n.kind == "tuple" else "TupleGetItem" for n in order)
        self.num_exprs = len(order)
        sig = ", ".join("%%%s: %s" % (n, tensor_ty(s)) for n, s in self.params)
        out = ['#[version = "0.0.5"]',
               "def @main(%s) -> %s {" % (sig, tensor_ty(ret_shape))]
        for n in order:
            if n is not result:
                out.append("  %%%s = %s /* ty=%s */;" % (names[n.seq], expr(n), n.ty))
        if isinstance(result, Node):
            out.append("  %s /* ty=%s */" % (expr(result), result.ty))
        else:
            out.append("  %s" % ref(result))
        out.append("}")
        return "\n".join(out) + "\n"


# --------------------------------------------------------------------------
# Common lowering helpers (shared by fx lowering and the BERT emitter)
# --------------------------------------------------------------------------


def pair(v):
    if isinstance(v, int):
        return [v, v]
    v = list(v)
    assert len(v) == 2, v
    return [int(e) for e in v]


def emit_conv2d(b, x, m, prefix, out_shape):
    assert isinstance(m, nn.Conv2d)
    assert m.padding_mode == "zeros" and not isinstance(m.padding, str), m
    w = b.param(prefix + ".weight", m.weight.shape)
    ph, pw = pair(m.padding)
    # All attributes are given; the builder prints those that differ from
    # nn.conv2d's defaults (padding is written as 4 values, so it always is).
    attrs = [("strides", pair(m.stride)),
             ("padding", [ph, pw, ph, pw]),
             ("dilation", pair(m.dilation)),
             ("groups", int(m.groups)),
             ("channels", int(m.out_channels)),
             ("kernel_size", pair(m.kernel_size))]
    y = b.op("nn.conv2d", [x, w], attrs, tensor_ty(out_shape))
    if m.bias is not None:
        bias = b.param(prefix + ".bias", m.bias.shape)
        y = b.op("nn.bias_add", [y, bias], [], tensor_ty(out_shape))
    return y


def emit_dense(b, x, weight_name, weight_shape, bias_name, bias_shape,
               out_shape):
    w = b.param(weight_name, weight_shape)
    y = b.op("nn.dense", [x, w], [("units", int(weight_shape[0]))],
             tensor_ty(out_shape))
    if bias_name is not None:
        bias = b.param(bias_name, bias_shape)
        y = b.op("nn.bias_add", [y, bias], [("axis", -1)],
                 tensor_ty(out_shape))
    return y


def emit_linear(b, x, m, prefix, out_shape):
    assert isinstance(m, nn.Linear)
    return emit_dense(b, x, prefix + ".weight", m.weight.shape,
                      None if m.bias is None else prefix + ".bias",
                      None if m.bias is None else m.bias.shape, out_shape)


def pool_attrs(kernel, stride, padding, dilation, ceil_mode):
    kernel = pair(kernel)
    stride = kernel if stride is None else pair(stride)
    ph, pw = pair(padding)
    return [("pool_size", kernel), ("strides", stride),
            ("dilation", [1, 1] if dilation is None else pair(dilation)),
            ("padding", [ph, pw, ph, pw]), ("ceil_mode", bool(ceil_mode))]


# --------------------------------------------------------------------------
# torch.fx lowering
# --------------------------------------------------------------------------


def node_arg(node, pos, name, default=None):
    if len(node.args) > pos:
        return node.args[pos]
    return node.kwargs.get(name, default)


def lower_fx(model, input_shape):
    """Trace `model` with torch.fx and lower it to Relay text."""
    model.eval()
    gm = torch.fx.symbolic_trace(model)
    with torch.no_grad():
        ShapeProp(gm).propagate(torch.zeros(input_shape))
    modules = dict(gm.named_modules())
    b = RelayBuilder(input_shape)
    env = {}
    result = None
    ret_shape = None

    def shape_of(node):
        return tuple(node.meta["tensor_meta"].shape)

    for node in gm.graph.nodes:
        if node.op == "placeholder":
            assert not env, "single input expected"
            env[node] = b.data
            continue
        if node.op == "output":
            result = env[node.args[0]]
            ret_shape = shape_of(node.args[0])
            continue
        out_shape = shape_of(node)
        ty = tensor_ty(out_shape)

        if node.op == "call_module":
            m = modules[node.target]
            prefix = node.target
            x = env[node.args[0]]
            if isinstance(m, nn.Conv2d):
                y = emit_conv2d(b, x, m, prefix, out_shape)
            elif isinstance(m, nn.BatchNorm2d):
                assert m.affine and m.track_running_stats
                args = [x,
                        b.param(prefix + ".weight", m.weight.shape),
                        b.param(prefix + ".bias", m.bias.shape),
                        b.param(prefix + ".running_mean", m.running_mean.shape),
                        b.param(prefix + ".running_var", m.running_var.shape)]
                c = (out_shape[1],)
                t = b.op("nn.batch_norm", args,
                         [("epsilon", float(m.eps))],
                         tuple_ty([out_shape, c, c]))
                y = b.tuple_get(t, 0, ty)
            elif isinstance(m, nn.ReLU6):
                y = b.op("clip", [x], [("a_min", 0.0), ("a_max", 6.0)], ty)
            elif isinstance(m, nn.ReLU):
                y = b.op("nn.relu", [x], [], ty)
            elif isinstance(m, (nn.Dropout, nn.Identity)):
                y = x  # eval mode: no-op
            elif isinstance(m, nn.MaxPool2d):
                y = b.op("nn.max_pool2d", [x],
                         pool_attrs(m.kernel_size, m.stride, m.padding,
                                    m.dilation, m.ceil_mode), ty)
            elif isinstance(m, nn.AvgPool2d):
                assert m.divisor_override is None
                attrs = pool_attrs(m.kernel_size, m.stride, m.padding, None,
                                   m.ceil_mode)
                attrs.append(("count_include_pad", bool(m.count_include_pad)))
                y = b.op("nn.avg_pool2d", [x], attrs, ty)
            elif isinstance(m, nn.AdaptiveAvgPool2d):
                y = b.op("nn.adaptive_avg_pool2d", [x],
                         [("output_size", pair(m.output_size))], ty)
            elif isinstance(m, nn.Linear):
                y = emit_linear(b, x, m, prefix, out_shape)
            elif isinstance(m, nn.Softmax):
                y = b.op("nn.softmax", [x], [("axis", int(m.dim))], ty)
            elif isinstance(m, nn.Flatten):
                y = lower_flatten(b, x, shape_of(node.args[0]), m.start_dim,
                                  m.end_dim, out_shape)
            else:
                raise NotImplementedError("module %s (%s)" % (node.target, m))
        elif node.op == "call_function":
            fn = node.target
            if fn in (operator.add, operator.iadd, torch.add):
                y = b.op("add", [env[node.args[0]], env[node.args[1]]], [], ty)
            elif fn is torch.flatten:
                x = node.args[0]
                y = lower_flatten(b, env[x], shape_of(x),
                                  node_arg(node, 1, "start_dim", 0),
                                  node_arg(node, 2, "end_dim", -1), out_shape)
            elif fn is torch.cat:
                tensors = node_arg(node, 0, "tensors")
                dim = node_arg(node, 1, "dim", 0)
                y = b.op("concatenate", [[env[t] for t in tensors]],
                         [("axis", int(dim))], ty)
            elif fn is F.adaptive_avg_pool2d:
                y = b.op("nn.adaptive_avg_pool2d", [env[node.args[0]]],
                         [("output_size", pair(node_arg(node, 1, "output_size")))],
                         ty)
            elif fn in (F.relu, torch.relu):
                y = b.op("nn.relu", [env[node.args[0]]], [], ty)
            elif fn in (torch.softmax, F.softmax):
                y = b.op("nn.softmax", [env[node.args[0]]],
                         [("axis", int(node_arg(node, 1, "dim")))], ty)
            else:
                raise NotImplementedError("function %s" % (fn,))
        elif node.op == "call_method":
            if node.target in ("view", "reshape"):
                y = b.op("reshape", [env[node.args[0]]],
                         [("newshape", [int(d) for d in out_shape])], ty)
            elif node.target == "flatten":
                x = node.args[0]
                y = lower_flatten(b, env[x], shape_of(x),
                                  node_arg(node, 1, "start_dim", 0),
                                  node_arg(node, 2, "end_dim", -1), out_shape)
            else:
                raise NotImplementedError("method %s" % node.target)
        else:
            raise NotImplementedError("fx node kind %s" % node.op)
        env[node] = y

    return b, b.text(result, ret_shape)


def lower_flatten(b, x, in_shape, start_dim, end_dim, out_shape):
    rank = len(in_shape)
    if start_dim < 0:
        start_dim += rank
    if end_dim < 0:
        end_dim += rank
    if start_dim == 1 and end_dim == rank - 1:
        return b.op("nn.batch_flatten", [x], [], tensor_ty(out_shape))
    return b.op("reshape", [x], [("newshape", [int(d) for d in out_shape])],
                tensor_ty(out_shape))


# --------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 512)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(512, 256)
        self.relu2 = nn.ReLU()
        self.fc3 = nn.Linear(256, 10)
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        x = self.relu1(self.fc1(x))
        x = self.relu2(self.fc2(x))
        return self.softmax(self.fc3(x))


# BERT-base encoder layer, HuggingFace-style module names (so the state_dict
# keys, and hence the Relay parameter names, look like BERT's).
BERT_SEQ, BERT_HIDDEN, BERT_HEADS, BERT_INTER = 128, 768, 12, 3072
BERT_HEAD_DIM = BERT_HIDDEN // BERT_HEADS
BERT_LN_EPS = 1e-12


class BertSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.query = nn.Linear(BERT_HIDDEN, BERT_HIDDEN)
        self.key = nn.Linear(BERT_HIDDEN, BERT_HIDDEN)
        self.value = nn.Linear(BERT_HIDDEN, BERT_HIDDEN)

    def forward(self, x):
        bsz, seq, _ = x.shape

        def heads(t):
            return t.view(bsz, seq, BERT_HEADS, BERT_HEAD_DIM).permute(0, 2, 1, 3)

        q, k, v = heads(self.query(x)), heads(self.key(x)), heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(BERT_HEAD_DIM)
        probs = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return ctx.view(bsz, seq, BERT_HIDDEN)


class BertDenseLN(nn.Module):
    """dense -> dropout -> (+ residual) -> LayerNorm (BertSelfOutput/BertOutput)."""

    def __init__(self, n_in):
        super().__init__()
        self.dense = nn.Linear(n_in, BERT_HIDDEN)
        self.LayerNorm = nn.LayerNorm(BERT_HIDDEN, eps=BERT_LN_EPS)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x, residual):
        return self.LayerNorm(self.dropout(self.dense(x)) + residual)


class BertAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.self = BertSelfAttention()
        self.output = BertDenseLN(BERT_HIDDEN)

    def forward(self, x):
        return self.output(self.self(x), x)


class BertIntermediate(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(BERT_HIDDEN, BERT_INTER)

    def forward(self, x):
        return F.gelu(self.dense(x))  # exact (erf) GELU


class BertLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = BertAttention()
        self.intermediate = BertIntermediate()
        self.output = BertDenseLN(BERT_INTER)

    def forward(self, x):
        a = self.attention(x)
        return self.output(self.intermediate(a), a)


def lower_bert(model):
    """Explicit emitter for BertLayer (2-D dense, 3-D batch_matmul)."""
    S, H, NH, D, I = BERT_SEQ, BERT_HIDDEN, BERT_HEADS, BERT_HEAD_DIM, BERT_INTER
    sd = model.state_dict()
    b = RelayBuilder((1, S, H))
    T = tensor_ty

    def dense(x, prefix, out_shape):
        return emit_dense(b, x, prefix + ".weight", sd[prefix + ".weight"].shape,
                          prefix + ".bias", sd[prefix + ".bias"].shape, out_shape)

    def layer_norm(x, prefix):
        return b.op("nn.layer_norm",
                    [x, b.param(prefix + ".weight", sd[prefix + ".weight"].shape),
                     b.param(prefix + ".bias", sd[prefix + ".bias"].shape)],
                    [("axis", -1), ("epsilon", BERT_LN_EPS)], T((S, H)))

    def split_heads(t):
        # (S, H) -> (1, S, NH, D) -> (1, NH, S, D) -> (NH, S, D)
        t = b.op("reshape", [t], [("newshape", [1, S, NH, D])], T((1, S, NH, D)))
        t = b.op("transpose", [t], [("axes", [0, 2, 1, 3])], T((1, NH, S, D)))
        return b.op("reshape", [t], [("newshape", [NH, S, D])], T((NH, S, D)))

    x = b.op("reshape", [b.data], [("newshape", [S, H])], T((S, H)))
    att = "attention.self."
    q = split_heads(dense(x, att + "query", (S, H)))
    k = split_heads(dense(x, att + "key", (S, H)))
    v = split_heads(dense(x, att + "value", (S, H)))
    # scores = Q . K^T  (batch_matmul default: transpose_b=True)
    s = b.op("nn.batch_matmul", [q, k], [], T((NH, S, S)))
    s = b.op("divide", [s, float(math.sqrt(D))], [], T((NH, S, S)))
    p = b.op("nn.softmax", [s], [("axis", -1)], T((NH, S, S)))
    # ctx = P . V  ==  batch_matmul(P, V^T) with V^T: (NH, D, S)
    vt = b.op("transpose", [v], [("axes", [0, 2, 1])], T((NH, D, S)))
    c = b.op("nn.batch_matmul", [p, vt], [], T((NH, S, D)))
    c = b.op("reshape", [c], [("newshape", [1, NH, S, D])], T((1, NH, S, D)))
    c = b.op("transpose", [c], [("axes", [0, 2, 1, 3])], T((1, S, NH, D)))
    c = b.op("reshape", [c], [("newshape", [S, H])], T((S, H)))
    a = dense(c, "attention.output.dense", (S, H))
    a = b.op("add", [a, x], [], T((S, H)))
    a = layer_norm(a, "attention.output.LayerNorm")
    # FFN with exact GELU: 0.5 * h * (1 + erf(h / sqrt(2)))
    h = dense(a, "intermediate.dense", (S, I))
    g = b.op("multiply", [h, float(1.0 / math.sqrt(2.0))], [], T((S, I)))
    g = b.op("erf", [g], [], T((S, I)))
    g = b.op("add", [g, 1.0], [], T((S, I)))
    g = b.op("multiply", [h, g], [], T((S, I)))
    g = b.op("multiply", [g, 0.5], [], T((S, I)))
    o = dense(g, "output.dense", (S, H))
    o = b.op("add", [o, a], [], T((S, H)))
    o = layer_norm(o, "output.LayerNorm")
    o = b.op("reshape", [o], [("newshape", [1, S, H])], T((1, S, H)))
    return b, b.text(o, (1, S, H))


def build_torchvision(name):
    import torchvision
    return getattr(torchvision.models, name)(weights=None)


IMAGE = (1, 3, 224, 224)
MODELS = collections.OrderedDict([
    ("resnet18", (lambda: build_torchvision("resnet18"), IMAGE, "fx")),
    ("resnet50", (lambda: build_torchvision("resnet50"), IMAGE, "fx")),
    ("mobilenet_v2", (lambda: build_torchvision("mobilenet_v2"), IMAGE, "fx")),
    ("squeezenet1_0", (lambda: build_torchvision("squeezenet1_0"), IMAGE, "fx")),
    ("bert_layer", (BertLayer, (1, BERT_SEQ, BERT_HIDDEN), "bert")),
    ("mlp", (MLP, (1, 784), "fx")),
])

EXPECTED_RET = {
    "resnet18": (1, 1000), "resnet50": (1, 1000), "mobilenet_v2": (1, 1000),
    "squeezenet1_0": (1, 1000), "bert_layer": (1, BERT_SEQ, BERT_HIDDEN),
    "mlp": (1, 10),
}

# Hand-counted op histograms (self-check).
EXPECTED_OPS = {
    # resnet18: conv1 + 8 BasicBlocks x 2 convs + 3 downsample convs = 20
    # convs, each followed by batch_norm + .0; relu: stem 1 + 2 per block;
    # 8 residual adds; maxpool; avgpool; flatten; fc (dense + bias_add).
    "resnet18": {"nn.conv2d": 20, "nn.batch_norm": 20, "TupleGetItem": 20,
                 "nn.relu": 17, "nn.max_pool2d": 1, "add": 8,
                 "nn.adaptive_avg_pool2d": 1, "nn.batch_flatten": 1,
                 "nn.dense": 1, "nn.bias_add": 1},
    "mlp": {"nn.dense": 3, "nn.bias_add": 3, "nn.relu": 2, "nn.softmax": 1},
}


def generate(name):
    ctor, input_shape, kind = MODELS[name]
    torch.manual_seed(0)
    model = ctor().eval()
    if kind == "fx":
        b, text = lower_fx(model, input_shape)
    else:
        b, text = lower_bert(model)
    return model, input_shape, b, text


# --------------------------------------------------------------------------
# Self-check: parse the emitted text back and interpret it with torch
# --------------------------------------------------------------------------


def split_top(s):
    """Split on ', ' at bracket depth 0."""
    parts, depth, cur = [], 0, []
    i = 0
    while i < len(s):
        ch = s[i]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    if cur:
        parts.append("".join(cur).strip())
    return parts


FLOAT_RE = re.compile(r"^-?[0-9.]+(e[-+]?[0-9]+)?f$")
INT_RE = re.compile(r"^-?[0-9]+$")


def parse_attr_value(v):
    if v in ("True", "False"):
        return v == "True"
    if INT_RE.match(v):
        return int(v)
    if FLOAT_RE.match(v):
        return float(v[:-1])
    if v.startswith("[") and v.endswith("]"):
        inner = v[1:-1].strip()
        return [parse_attr_value(e) for e in split_top(inner)] if inner else []
    raise ValueError("bad attribute value %r" % v)


def value_ty(v):
    if isinstance(v, tuple):
        return tuple_ty_of(value_ty(t) for t in v)
    return tensor_ty(v.shape)


def interpret(text, inputs):
    """Run Relay text (our restricted subset) on named torch tensors."""
    lines = text.split("\n")
    assert lines[0] == '#[version = "0.0.5"]', lines[0]
    m = re.match(r"^def @main\((.*)\) -> (.*) \{$", lines[1])
    assert m, lines[1]
    sig, ret_ty = m.group(1), m.group(2)
    env = {}
    for p in split_top(sig):
        pm = re.match(r"^%(\w+): (.*)$", p)
        assert pm, p
        pname, pty = pm.groups()
        assert pname in inputs, "unknown parameter %s" % pname
        assert tensor_ty(inputs[pname].shape) == pty, (pname, pty)
        env[pname] = inputs[pname]
    assert len(env) == len(inputs), "unused inputs: %s" % (set(inputs) - set(env))
    assert lines[-1] == "" and lines[-2] == "}", "bad tail"
    body = lines[2:-2]
    result = None
    for idx, line in enumerate(body):
        last = idx == len(body) - 1
        if last:
            lm = re.match(r"^  (.*?)(?: /\* ty=(.*) \*/)?$", line)
            expr, ty = lm.groups()
            assert not expr.startswith("%%%d =" % idx) and not line.endswith(";")
        else:
            lm = re.match(r"^  %(\d+) = (.*?)(?: /\* ty=(.*) \*/)?;$", line)
            assert lm, line
            assert int(lm.group(1)) == idx, "bindings must be numbered in order"
            expr, ty = lm.group(2), lm.group(3)
        val = eval_expr(expr, env)
        if ty is not None:
            assert value_ty(val) == ty, (line, value_ty(val))
        if last:
            result = val
        else:
            env[str(idx)] = val
    assert tensor_ty(result.shape) == ret_ty, (ret_ty, result.shape)
    return result


def eval_expr(expr, env):
    def ref(tok):
        if tok.startswith("%"):
            return env[tok[1:]]
        if FLOAT_RE.match(tok):
            return torch.tensor(float(tok[:-1]), dtype=torch.float32)
        raise ValueError("bad operand %r" % tok)

    tm = re.match(r"^%(\w+)\.(\d+)$", expr)
    if tm:
        return env[tm.group(1)][int(tm.group(2))]
    if expr.startswith("(") and expr.endswith(")"):  # tuple: (%a, %b) / (%a,)
        return tuple(ref(t) for t in split_top(expr[1:-1]))
    om = re.match(r"^([\w.]+)\((.*)\)$", expr)
    assert om, expr
    op, argstr = om.groups()
    args, attrs = [], {}
    for part in split_top(argstr):
        am = re.match(r"^([a-z_]+)=(.*)$", part)
        if am:
            attrs[am.group(1)] = parse_attr_value(am.group(2))
        elif part.startswith("("):
            raise ValueError("inline tuple %r: canonical text binds tuples" % part)
        else:
            args.append(ref(part))
    return apply_op(op, args, attrs)


def sym_pad(padding):
    t, l, btm, r = padding
    assert t == btm and l == r, padding
    return (t, l)


def apply_op(op, args, attrs):
    a = dict(attrs)
    if op == "nn.conv2d":
        x, w = args
        y = F.conv2d(x, w, stride=a.pop("strides", [1, 1]),
                     padding=sym_pad(a.pop("padding", [0, 0, 0, 0])),
                     dilation=a.pop("dilation", [1, 1]),
                     groups=a.pop("groups", 1))
        assert a.pop("channels", w.shape[0]) == w.shape[0]
        assert a.pop("kernel_size", list(w.shape[2:])) == list(w.shape[2:])
    elif op == "nn.batch_norm":
        x, g, bt, mean, var = args
        assert a.pop("axis", 1) == 1
        assert a.pop("center", True) and a.pop("scale", True)
        y = (F.batch_norm(x, mean, var, g, bt, training=False,
                          eps=a.pop("epsilon", 1e-5)), mean, var)
    elif op == "nn.relu":
        (x,) = args
        y = torch.relu(x)
    elif op == "clip":
        (x,) = args
        y = torch.clamp(x, a.pop("a_min", 0.0), a.pop("a_max", 0.0))
    elif op in ("nn.max_pool2d", "nn.avg_pool2d"):
        (x,) = args
        kw = dict(kernel_size=a.pop("pool_size", [1, 1]),
                  stride=a.pop("strides", [1, 1]),
                  padding=sym_pad(a.pop("padding", [0, 0, 0, 0])),
                  ceil_mode=a.pop("ceil_mode", False))
        if op == "nn.max_pool2d":
            y = F.max_pool2d(x, dilation=a.pop("dilation", [1, 1]), **kw)
        else:
            assert a.pop("dilation", [1, 1]) == [1, 1]
            y = F.avg_pool2d(x, count_include_pad=a.pop("count_include_pad", False),
                             **kw)
    elif op == "nn.adaptive_avg_pool2d":
        (x,) = args
        size = a.pop("output_size", None)
        y = F.adaptive_avg_pool2d(x, list(x.shape[2:]) if size is None else size)
    elif op == "nn.global_avg_pool2d":
        (x,) = args
        y = x.mean(dim=(2, 3), keepdim=True)
    elif op == "nn.batch_flatten":
        (x,) = args
        y = x.reshape(x.shape[0], -1)
    elif op == "reshape":
        (x,) = args
        y = x.reshape(a.pop("newshape"))
    elif op == "transpose":
        (x,) = args
        y = x.permute(a.pop("axes")).contiguous()
    elif op == "concatenate":
        (xs,) = args
        y = torch.cat(xs, dim=a.pop("axis", 0))
    elif op == "nn.dense":
        x, w = args
        assert a.pop("units", w.shape[0]) == w.shape[0]
        y = torch.matmul(x, w.t())
    elif op == "nn.bias_add":
        x, bias = args
        axis = a.pop("axis", 1)
        if axis < 0:
            axis += x.dim()
        shape = [1] * x.dim()
        shape[axis] = -1
        y = x + bias.reshape(shape)
    elif op == "nn.batch_matmul":
        x, w = args
        if a.pop("transpose_a", False):
            x = x.transpose(-1, -2)
        if a.pop("transpose_b", True):
            w = w.transpose(-1, -2)
        y = torch.bmm(x, w)
    elif op == "nn.softmax":
        (x,) = args
        y = torch.softmax(x, dim=a.pop("axis", -1))
    elif op == "nn.layer_norm":
        x, g, bt = args
        assert a.pop("axis", -1) == -1
        y = F.layer_norm(x, (x.shape[-1],), g, bt, eps=a.pop("epsilon", 1e-5))
    elif op in ("add", "multiply", "divide"):
        x, z = args
        y = {"add": torch.add, "multiply": torch.mul, "divide": torch.div}[op](x, z)
    elif op == "erf":
        (x,) = args
        y = torch.erf(x)
    else:
        raise NotImplementedError(op)
    assert not a, "unhandled attributes for %s: %s" % (op, a)
    return y


def randomize(model):
    """Seeded random weights, incl. non-trivial batch-norm statistics."""
    g = torch.Generator().manual_seed(1234)
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, nn.BatchNorm2d):
                c = mod.num_features
                mod.weight.copy_(torch.rand(c, generator=g) + 0.5)
                mod.bias.copy_(torch.randn(c, generator=g) * 0.1)
                mod.running_mean.copy_(torch.randn(c, generator=g) * 0.1)
                mod.running_var.copy_(torch.rand(c, generator=g) + 0.5)
            elif isinstance(mod, (nn.Linear, nn.Conv2d)) and mod.bias is not None:
                mod.bias.copy_(torch.randn(mod.bias.shape, generator=g) * 0.1)
            elif isinstance(mod, nn.LayerNorm):
                mod.weight.copy_(torch.rand(mod.weight.shape, generator=g) + 0.5)
                mod.bias.copy_(torch.randn(mod.bias.shape, generator=g) * 0.1)


def verify(name, model, input_shape, b, text):
    sd = collections.OrderedDict(
        (k, v) for k, v in model.state_dict().items()
        if not k.endswith("num_batches_tracked"))
    pnames = [n for n, _ in b.params]
    assert pnames[0] == "data"
    # Every (non-num_batches_tracked) state_dict entry is exactly one param.
    assert len(pnames) - 1 == len(sd), (name, len(pnames) - 1, len(sd))
    assert sorted(pnames[1:]) == sorted(k.replace(".", "_") for k in sd), name
    if name in EXPECTED_OPS:
        got = dict(b.op_counts)
        assert got == EXPECTED_OPS[name], (name, got)
    ret = re.search(r"\) -> (.*) \{\n", text).group(1)
    assert ret == tensor_ty(EXPECTED_RET[name]), (name, ret)

    randomize(model)
    model.eval()
    g = torch.Generator().manual_seed(42)
    x = torch.randn(input_shape, generator=g)
    inputs = {"data": x}
    for k, v in sd.items():
        inputs[k.replace(".", "_")] = v.detach().clone()
    with torch.no_grad():
        ref = model(x)
        got = interpret(text, inputs)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    err = (got - ref).abs().max().item() / max(ref.abs().max().item(), 1e-30)
    assert err < 1e-4, (name, err)
    return err


# --------------------------------------------------------------------------


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(here), "models"))
    ap.add_argument("--no-verify", action="store_true")
    ap.add_argument("models", nargs="*", default=list(MODELS))
    opts = ap.parse_args()
    torch.set_num_threads(min(8, os.cpu_count() or 1))
    os.makedirs(opts.out, exist_ok=True)
    for name in opts.models:
        if name not in MODELS:
            sys.exit("unknown model %s (choose from %s)" % (name, ", ".join(MODELS)))
        model, input_shape, b, text = generate(name)
        path = os.path.join(opts.out, name + ".relay")
        with open(path, "w", newline="\n") as f:
            f.write(text)
        nops = sum(b.op_counts.values())
        msg = "%-14s %5d exprs, %4d params (incl. %%data) -> %s" % (
            name, b.num_exprs, len(b.params), os.path.relpath(path))
        if not opts.no_verify:
            err = verify(name, model, input_shape, b, text)
            msg += "  [verified, rel err %.1e]" % err
        assert nops == b.num_exprs
        print(msg)


if __name__ == "__main__":
    main()
