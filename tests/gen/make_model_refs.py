#!/usr/bin/python3
"""PyTorch's outputs for the model zoo on seeded weights, for the end-to-end
checks of the interpreter (tests/ir/test_models.c, tests/cli/run.sh).

Usage: /usr/bin/python3 tests/gen/make_model_refs.py [--out DIR] [MODEL ...]
(default DIR: tests/ref/models). Needs numpy, torch and torchvision.

No weights are stored. Every parameter of @main in benchmarks/models/M.relay
gets the values `relay-tune run --random-params 0` gives it: the stream of
tests/gen/seeded.py (the same PRNG as ir/random.c, bit for bit) with the
range its role calls for (the same table as ir/random.c, decided here from
the PyTorch module that owns the parameter). The PyTorch models are built
exactly as benchmarks/gen/make_zoo.py builds them (its own constructors),
loaded with these values, and run in float64 on the seeded input %data.

DIR/M.npz holds
  output             the float64 result rounded to float32
  param_sums         float64: the sum of each parameter's values, in @main's
                     order (%data first), so that a test that disagrees can
                     tell a weight mismatch from a kernel bug
  torch_fp32_error   float64: max |PyTorch float32 - float64| / max |float64|,
                     the error of PyTorch's own float32 kernels, for scale
"""
import argparse
import math
import os
import re
import sys

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "gen"))

import make_zoo  # noqa: E402
import seeded  # noqa: E402
from npzfile import write_npz  # noqa: E402

SEED = 0


def relay_params(path):
    """[(name, shape)] of @main's parameters, in order."""
    with open(path) as f:
        text = f.read()
    sig = re.search(r"^def @main\((.*?)\) ->", text, re.M).group(1)
    out = []
    for name, dims in re.findall(r"%(\w+): Tensor\[\(([0-9, ]*)\), float32\]", sig):
        out.append((name, tuple(int(d) for d in dims.split(",") if d.strip())))
    assert len(out) == sig.count("%"), "every parameter must be a float32 tensor"
    return out


def role_range(module, attr, shape):
    """[lo, hi) for a parameter, as ir/random.c's table decides it from the
    op that first uses the parameter (conv2d/dense weight, batch_norm and
    layer_norm statistics, bias_add's bias)."""
    if isinstance(module, (nn.Conv2d, nn.Linear)) and attr == "weight":
        a = seeded.he_bound(shape)
        return -a, a
    if isinstance(module, nn.BatchNorm2d):
        return {"weight": (0.5, 1.5), "bias": (-0.1, 0.1), "running_mean": (-0.1, 0.1),
                "running_var": (1.0, 3.0)}[attr]
    if isinstance(module, nn.LayerNorm):
        return {"weight": (0.5, 1.5), "bias": (-0.1, 0.1)}[attr]
    if isinstance(module, (nn.Conv2d, nn.Linear)) and attr == "bias":
        return -0.1, 0.1
    raise ValueError("no role for %s.%s" % (type(module).__name__, attr))


def seeded_state(model, params):
    """{state_dict key: float32 array} for every parameter but %data."""
    owners = {}
    for mname, mod in model.named_modules():
        for attr, t in list(mod.named_parameters(recurse=False)) + list(mod.named_buffers(recurse=False)):
            key = mname + "." + attr if mname else attr
            if not key.endswith("num_batches_tracked"):
                owners[key.replace(".", "_")] = (key, mod, attr, tuple(t.shape))
    state = {}
    for name, shape in params:
        if name == "data":
            continue
        key, mod, attr, tshape = owners.pop(name)
        assert tshape == shape, (name, tshape, shape)
        lo, hi = role_range(mod, attr, shape)
        state[key] = seeded.uniform(name, shape, SEED, lo, hi)
    assert not owners, "parameters PyTorch has but the Relay text lacks: %s" % sorted(owners)
    return state


def run(name, out_dir):
    ctor, input_shape, _ = make_zoo.MODELS[name]
    torch.manual_seed(0)
    model = ctor().eval()
    params = relay_params(os.path.join(ROOT, "benchmarks", "models", name + ".relay"))
    assert params[0] == ("data", tuple(input_shape)), params[0]
    state = seeded_state(model, params)
    data = seeded.uniform("data", input_shape, SEED, -1.0, 1.0)
    sums = [float(np.sum(data, dtype=np.float64))]
    for pname, _ in params[1:]:
        key = [k for k in state if k.replace(".", "_") == pname][0]
        sums.append(float(np.sum(state[key], dtype=np.float64)))
    model.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()}, strict=False)
    with torch.no_grad():
        y32 = model.float()(torch.from_numpy(data)).numpy()
        y64 = model.double()(torch.from_numpy(data.astype(np.float64))).numpy()
    scale = np.abs(y64).max()
    err32 = float(np.abs(y32 - y64).max() / scale)
    path = os.path.join(out_dir, name + ".npz")
    write_npz(path, {"output": y64.astype(np.float32), "param_sums": np.array(sums),
                     "torch_fp32_error": np.array(err32)}, compress=True)
    print("%-14s output %-16s max |y| %8.4g  PyTorch float32 error %.2e  -> %s (%d bytes)"
          % (name, y64.shape, scale, err32, os.path.relpath(path), os.path.getsize(path)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "ref", "models"))
    ap.add_argument("models", nargs="*", default=list(make_zoo.MODELS))
    opts = ap.parse_args()
    os.makedirs(opts.out, exist_ok=True)
    torch.set_num_threads(min(8, os.cpu_count() or 1))
    for name in opts.models:
        run(name, opts.out)


if __name__ == "__main__":
    main()
