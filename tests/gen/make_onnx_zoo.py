#!/usr/bin/python3
"""The model zoo as ONNX files, exported by torch.onnx.export, for
tests/onnx/zoo.sh: resnet18, mobilenet_v2, squeezenet1_0 and the BERT layer.

Usage: /usr/bin/python3 tests/gen/make_onnx_zoo.py [--out DIR] [--check] [MODEL ...]
(default DIR: tests/onnx/zoo). Needs Debian's python3-torch, python3-torchvision
and python3-onnx.

The PyTorch modules are the ones benchmarks/gen/make_zoo.py builds (its own
constructors, eval mode), exported at opset 17 with export_params=False and
training=PRESERVE (so that batch-norm is not folded into the convolutions), so
that the files hold the graphs only (tens of kilobytes, not 100 MB): every
weight is a graph input named after its state_dict key ('.' becomes '_' in
the Relay parameter). `relay-tune run M.onnx --random-params 0` then draws
each weight from the same seeded stream as the Relay zoo's parameter of the
same name, and tests/ref/models/M.npz (made by tests/gen/make_model_refs.py
from PyTorch on exactly those weights) is the reference.

--weights exports with the weights inside (export_params=True, batch-norm
folded as PyTorch does in eval mode): `--weights --out /tmp resnet50` makes the
~100 MB file that `make bench-onnx` times the import of (not committed).

--check loads the seeded weights into the PyTorch module (as
make_model_refs.py does) and verifies that the exported graph's inputs are
%data and the Relay zoo's parameters, with the same shapes.
"""
import argparse
import os
import sys

import onnx
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "gen"))

import make_model_refs  # noqa: E402
import make_zoo  # noqa: E402

MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_0", "bert_layer"]


def build(name):
    """(module, example input) as make_model_refs.run builds them, with the
    seeded weights loaded: the exporter merges parameters of equal values
    (fresh batch-norm weights are all ones), which distinct values prevent."""
    ctor, input_shape, _ = make_zoo.MODELS[name]
    torch.manual_seed(0)
    model = ctor().eval()
    params = make_model_refs.relay_params(os.path.join(ROOT, "benchmarks", "models", name + ".relay"))
    state = make_model_refs.seeded_state(model, params)
    model.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()}, strict=False)
    return model, torch.zeros(input_shape)


def export(name, out, check, weights=False):
    model, x = build(name)
    path = os.path.join(out, name + ".onnx")
    if weights:
        torch.onnx.export(model, x, path, input_names=["data"], output_names=["output"], opset_version=17)
        print("%s: %d bytes" % (path, os.path.getsize(path)))
        return
    torch.onnx.export(model, x, path, input_names=["data"], output_names=["output"], opset_version=17,
                      training=torch.onnx.TrainingMode.PRESERVE, export_params=False, do_constant_folding=False)
    g = onnx.load(path).graph
    inits = {t.name for t in g.initializer}
    inputs = [(i.name.replace(".", "_"), tuple(d.dim_value for d in i.type.tensor_type.shape.dim))
              for i in g.input if i.name not in inits]
    if check:
        want = make_model_refs.relay_params(os.path.join(ROOT, "benchmarks", "models", name + ".relay"))
        extra = sorted(set(inputs) - set(want))
        missing = sorted(set(want) - set(inputs))
        assert not extra and not missing, (name, "extra", extra, "missing", missing)
    print("%s: %d inputs, %d bytes" % (path, len(inputs), os.path.getsize(path)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "onnx", "zoo"))
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--weights", action="store_true")
    ap.add_argument("models", nargs="*", default=MODELS)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for m in a.models:
        export(m, a.out, a.check, a.weights)


if __name__ == "__main__":
    main()
