#!/usr/bin/python3
"""profile_torch.py — PyTorch's side of `relay-tune bench --profile`: the
zoo's model as bench_e2e.py builds it (default: frozen +
torch.jit.optimize_for_inference), its ops timed one by one with
torch.profiler, to compare op by op with relay-tune's kernels
(docs/benchmarks.md, "Where resnet18's time goes").

usage: /usr/bin/python3 benchmarks/profile_torch.py [--variant eager|frozen|ofi]
           [--threads T] [--repeat N] [--warmup N] [--json] MODEL

Each of --repeat runs is profiled on its own; an op of the run (a top-level
event: one the profiler saw no other op around) is matched with the same op
of the other runs by its place in the run (a run that is one event, the
module's forward, stands for the events under it), and each gets the median and the
minimum of its times, in ms, beside the whole run's. Threads as bench_e2e.py
sets them (OMP_NUM_THREADS before torch is imported, torch.set_num_threads).
PyTorch 1.13's profiler records no event for the MKLDNN convolutions of a
frozen + optimize_for_inference graph (the ops it lists are the relus,
adds, pools, the linear layer and the layout conversions): there, the
convolutions' time is the run's less the ops'.
"""
import argparse
import json
import os
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="a zoo model's name or its .relay file (resnet18, ...)")
    ap.add_argument("--variant", choices=("eager", "frozen", "ofi"), default="ofi")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.repeat < 1 or a.threads < 1 or a.warmup < 0:
        sys.exit("profile_torch: --repeat and --threads must be at least 1, --warmup at least 0")
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_e2e  # the same models, built the same way (and the environment it cleans)
    import torch
    from torch.profiler import ProfilerActivity, profile
    name = bench_e2e.model_name(a.model)
    got = bench_e2e.torch_models(name, a.threads)
    if got is None:
        sys.exit("profile_torch: the zoo has no model %s" % name)
    built, failed = got
    if a.variant not in built:
        sys.exit("profile_torch: PyTorch cannot build %s %s: %s" % (name, a.variant, failed.get(a.variant)))
    model, x = built[a.variant]
    runs, totals = [], []
    with torch.inference_mode():
        for _ in range(a.warmup):
            model(x)
        for _ in range(a.repeat):
            with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as p:
                t0 = time.perf_counter()
                model(x)
                totals.append((time.perf_counter() - t0) * 1e3)
            evs = [e for e in p.events() if e.cpu_parent is None]
            while len(evs) == 1 and evs[0].cpu_children:  # the module's "forward": its ops are below it
                evs = list(evs[0].cpu_children)
            evs.sort(key=lambda e: e.time_range.start)
            runs.append([(e.name, str(e.input_shapes[0]) if e.input_shapes else "",
                          (e.time_range.end - e.time_range.start) * 1e-3) for e in evs])
    # a run whose ops differ from the first's (the profiler's own events) is left out
    ref = [(n, s) for n, s, _ in runs[0]]
    same = [r for r in runs if [(n, s) for n, s, _ in r] == ref]
    ops = []
    for i, (n, s) in enumerate(ref):
        t = [r[i][2] for r in same]
        ops.append({"op": i, "name": n, "input": s, "median_ms": statistics.median(t), "min_ms": min(t)})
    out = {"model": name, "variant": a.variant, "threads": torch.get_num_threads(), "runs": len(same),
           "median_ms": statistics.median(totals), "min_ms": min(totals),
           "sum_min_ms": sum(o["min_ms"] for o in ops), "sum_median_ms": sum(o["median_ms"] for o in ops),
           "ops": ops}
    if a.json:
        print(json.dumps(out))
        return
    print("%s %s on %d threads: run median %.3f ms, min %.3f ms (under the profiler); ops: sum of medians %.3f, "
          "of minimums %.3f ms, %d runs" % (name, a.variant, out["threads"], out["median_ms"], out["min_ms"],
                                            out["sum_median_ms"], out["sum_min_ms"], len(same)))
    print("%4s %9s %9s  %s" % ("op", "median", "min", "name and first input"))
    for o in ops:
        print("%4d %9.4f %9.4f  %s %s" % (o["op"], o["median_ms"], o["min_ms"], o["name"], o["input"]))


if __name__ == "__main__":
    main()
