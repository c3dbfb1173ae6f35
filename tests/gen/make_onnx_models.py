#!/usr/bin/python3
"""Generate the ONNX fixtures of tests/onnx/ (committed; tests need no Python).

Usage:
    /usr/bin/python3 tests/gen/make_onnx_models.py [--out DIR]

Needs Debian's python3-torch and python3-onnx. Writes to DIR (default
tests/onnx/models next to this script's parent):

* small_cnn.onnx — a small CNN (conv + batch-norm + relu, max-pool, a strided
  grouped conv, global average pool, flatten, linear, softmax) exported by
  torch.onnx.export (opset 13) with seeded weights; small_cnn_x.npy, its input
  (named "data"), and small_cnn_y.npy, PyTorch's output in eval mode.
* small_cnn_ext.onnx + small_cnn_ext.data — the same model with every
  initializer kept as external data beside it.
* upsampler.onnx — a conv, then nearest and bilinear upsampling by 2 (Resize
  with constant scales, opset 13); upsampler_x.npy and upsampler_y.npy, its
  input ("data") and PyTorch's output.
* error fixtures, built with onnx.helper: unsupported.onnx (three
  unsupported ops, two of them in two nodes each), dynamic.onnx (a symbolic
  batch dimension), opset18.onnx (an opset past 17), escape.onnx (external
  data outside the model's folder), short_ext.onnx (external data shorter than
  its dims), bad_raw.onnx (raw data shorter than its dims).
* costly_fold.onnx — a 3-D Conv whose operands are both initializers, with
  pads that make it cost 2^26 FLOPs: too much to fold while importing (the
  fuzzer found such a model stalling the import), so it stays a call.
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
import torch


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.pool = torch.nn.MaxPool2d(2)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1, groups=2)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn1(self.conv1(x))))
        x = torch.relu(self.conv2(x))
        x = torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
        return torch.softmax(self.fc(x), dim=1)


def small_cnn(out):
    torch.manual_seed(0)
    m = SmallCNN()
    with torch.no_grad():  # batch-norm statistics that are not the identity
        m.bn1.running_mean.uniform_(-0.5, 0.5)
        m.bn1.running_var.uniform_(0.5, 1.5)
        m.bn1.weight.uniform_(0.5, 1.5)
        m.bn1.bias.uniform_(-0.5, 0.5)
    m.eval()
    x = torch.rand(1, 3, 16, 16) * 2 - 1
    with torch.no_grad():
        y = m(x)
    path = os.path.join(out, "small_cnn.onnx")
    torch.onnx.export(m, x, path, input_names=["data"], output_names=["prob"], opset_version=13)
    np.save(os.path.join(out, "small_cnn_x.npy"), x.numpy())
    np.save(os.path.join(out, "small_cnn_y.npy"), y.numpy())
    model = onnx.load(path)
    onnx.save_model(model, os.path.join(out, "small_cnn_ext.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="small_cnn_ext.data", size_threshold=0)


class Upsampler(torch.nn.Module):
    """A conv, then nearest and bilinear (half-pixel) upsampling by 2: torch.onnx
    writes Resize nodes with constant scales."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        x = torch.nn.functional.interpolate(self.conv(x), scale_factor=2, mode="nearest")
        return torch.nn.functional.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)


def upsampler(out):
    torch.manual_seed(1)
    m = Upsampler().eval()
    x = torch.rand(1, 3, 5, 6) * 2 - 1
    with torch.no_grad():
        y = m(x)
    torch.onnx.export(m, x, os.path.join(out, "upsampler.onnx"), input_names=["data"], output_names=["y"],
                      opset_version=13)
    np.save(os.path.join(out, "upsampler_x.npy"), x.numpy())
    np.save(os.path.join(out, "upsampler_y.npy"), y.numpy())


def graph_model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="make_onnx_models")


def errors(out):
    f = TensorProto.FLOAT
    x = helper.make_tensor_value_info("x", f, [2, 3])
    y = helper.make_tensor_value_info("y", f, [2, 3])
    # three unsupported ops: Cos and Sin twice each, Round once
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="relu"),
             helper.make_node("Cos", ["a"], ["b"], name="cos1"),
             helper.make_node("Sin", ["b"], ["c"], name="sin1"),
             helper.make_node("Cos", ["c"], ["d"], name="cos2"),
             helper.make_node("Sin", ["d"], ["e"], name="sin2"),
             helper.make_node("Round", ["e"], ["y"], name="round1")]
    onnx.save(graph_model(nodes, [x], [y]), os.path.join(out, "unsupported.onnx"))
    dyn = helper.make_tensor_value_info("x", f, ["N", 3])
    dyo = helper.make_tensor_value_info("y", f, ["N", 3])
    onnx.save(graph_model([helper.make_node("Relu", ["x"], ["y"])], [dyn], [dyo]), os.path.join(out, "dynamic.onnx"))
    onnx.save(graph_model([helper.make_node("Relu", ["x"], ["y"])], [x], [y], opset=18),
              os.path.join(out, "opset18.onnx"))
    # initializers whose data is not what they claim
    def ext_model(name, location, offset):
        w = TensorProto()
        w.name = "w"
        w.data_type = f
        w.dims.extend([2, 3])
        w.data_location = TensorProto.EXTERNAL
        for k, v in (("location", location), ("offset", str(offset)), ("length", "24")):
            e = w.external_data.add()
            e.key, e.value = k, v
        m = graph_model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [x], [y], inits=[w])
        onnx.save(m, os.path.join(out, name))
    ext_model("escape.onnx", "../../../etc/passwd", 0)
    ext_model("short_ext.onnx", "small_cnn_x.npy", 1 << 20)
    w = numpy_helper.from_array(np.ones((2, 3), np.float32), "w")
    w.raw_data = w.raw_data[:10]
    onnx.save(graph_model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [x], [y], inits=[w]),
              os.path.join(out, "bad_raw.onnx"))


def costly_fold(out):
    f = TensorProto.FLOAT
    b = helper.make_tensor_value_info("b", f, [4])
    y = helper.make_tensor_value_info("y", f, [4, 4, 52, 25, 65])
    w = numpy_helper.from_array(np.full((4, 3, 2, 2, 2), 0.5, np.float32), "w")
    conv = helper.make_node("Conv", ["w", "w", "b"], ["y"], name="conv", kernel_shape=[2, 2, 2],
                            pads=[51, 0, 0, 0, 24, 64])
    onnx.save(graph_model([conv], [b], [y], inits=[w]), os.path.join(out, "costly_fold.onnx"))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(here, "..", "onnx", "models"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    small_cnn(a.out)
    upsampler(a.out)
    errors(a.out)
    costly_fold(a.out)


if __name__ == "__main__":
    main()
