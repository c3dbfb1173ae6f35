#!/usr/bin/python3
"""End-to-end latency of whole models: relay-tune untuned, relay-tune tuned,
and PyTorch 1.13 on the same architectures (issue 7's end-to-end benchmark).

Usage (`make bench-e2e DB=t.db` runs it with the environment below):

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE -u OMP_WAIT_POLICY OMP_NUM_THREADS=2 \\
    /usr/bin/python3 benchmarks/bench_e2e.py --relay-tune ./relay-tune [--db DB]
        [--repeat N] [--warmup N] [--rounds K] [--threads T] [--commit C] [--no-torch] [--no-store]
        benchmarks/models/resnet18.relay ...

For each model:

* untuned: `relay-tune bench MODEL --json` (weights: seeded random values,
  seed 0; every task under its template's default config);
* tuned: the same with `--db DB` (the best valid record of each task; tasks
  without one fall back to the default config, and relay-tune says so);
* PyTorch: the model as benchmarks/gen/make_zoo.py builds it (torchvision
  with weights=None, or its BertLayer), in eval mode, traced with
  torch.jit.trace and frozen (torch.jit.freeze), run under
  torch.inference_mode with torch.set_num_threads(T) (PyTorch defaults to
  one thread here), timed with time.perf_counter.

Every variant gets --warmup runs, then --repeat timed runs, in --rounds
interleaved rounds (untuned, tuned, PyTorch, untuned, ...), each keeping its
round of lowest median; the table gives medians in ms and the ratio tuned/PyTorch (the target: <= 1.0 for resnet18
and resnet50). With --db, every result is stored in the database's
benchmark table (config_source default, tuned, pytorch) with the commit and
host, through `relay-tune db bench-add` (docs/benchmarks.md).
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

# This machine sets these, which makes OpenBLAS (and so PyTorch where it uses
# it) pick slower kernels; they must be gone before torch is imported.
for _v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
    os.environ.pop(_v, None)

HERE = os.path.dirname(os.path.abspath(__file__))


def model_name(path):
    return os.path.basename(path).split(".")[0]


def relay_bench(relay_tune, model, db, repeat, warmup):
    """One `relay-tune bench --json` run; its statistics in seconds."""
    cmd = [relay_tune, "bench", model, "--repeat", str(repeat), "--warmup", str(warmup), "--json"]
    if db:
        cmd += ["--db", db]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("bench_e2e: %s failed:\n%s" % (" ".join(cmd), p.stderr))
    fallback = [ln for ln in p.stderr.splitlines() if "default config" in ln]
    r = json.loads(p.stdout)
    stats = {k: r[k + "_ms"] * 1e-3 for k in ("median", "min", "max", "mean", "stddev")}
    stats["repeats"] = r["repeat"]
    return stats, fallback


def torch_model(name, threads):
    """The PyTorch model of the zoo, jit-frozen, and its input; None when
    the zoo has no such model."""
    import torch
    sys.path.insert(0, os.path.join(HERE, "gen"))
    import make_zoo
    if name not in make_zoo.MODELS:
        return None
    torch.set_num_threads(threads)
    ctor, shape, _ = make_zoo.MODELS[name]
    torch.manual_seed(0)
    model = ctor().eval()
    x = torch.rand(*shape)
    with torch.inference_mode():
        return torch.jit.freeze(torch.jit.trace(model, x)), x


def torch_bench(frozen_x, repeat, warmup):
    """Times a model of torch_model; its statistics in seconds."""
    import torch
    frozen, x = frozen_x
    with torch.inference_mode():
        for _ in range(warmup):
            frozen(x)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            frozen(x)
            times.append(time.perf_counter() - t0)
    return {"median": statistics.median(times), "min": min(times), "max": max(times),
            "mean": statistics.fmean(times), "stddev": statistics.stdev(times) if len(times) > 1 else 0.0,
            "repeats": len(times)}


def result_json(model, source, st, commit):
    """One line for `relay-tune db bench-add`."""
    mean = min(max(st["mean"], st["min"]), st["max"])  # rounding must not leave [min, max]
    return json.dumps({"model": model, "target": "cpu", "config_source": source, "mean": mean,
                       "median": st["median"], "min": st["min"], "max": st["max"], "stddev": st["stddev"],
                       "repeats": st["repeats"], "commit": commit, "host": socket.gethostname(),
                       "timestamp": time.time()})


def git_commit():
    p = subprocess.run(["git", "-C", HERE, "describe", "--always", "--dirty"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    return p.stdout.strip() if p.returncode == 0 else ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="+", help="Relay files of the zoo (benchmarks/models/*.relay)")
    ap.add_argument("--relay-tune", default="./relay-tune")
    ap.add_argument("--db", help="tuned configs from, and results stored in, this database")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2,
                    help="interleaved rounds of the three; each keeps its round of lowest median")
    ap.add_argument("--threads", type=int, default=2, help="PyTorch's threads (relay-tune: OMP_NUM_THREADS)")
    ap.add_argument("--commit", default=None, help="stored with the results (default: git describe)")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--no-store", action="store_true")
    a = ap.parse_args()
    if a.repeat < 1 or a.warmup < 0 or a.threads < 1 or a.rounds < 1:
        ap.error("--repeat >= 1, --warmup >= 0, --threads >= 1, --rounds >= 1")
    if a.db and not os.path.exists(a.db):
        ap.error("%s: no such database (tune first: relay-tune tune MODEL --db %s)" % (a.db, a.db))
    commit = git_commit() if a.commit is None else a.commit
    print("threads: relay-tune OMP_NUM_THREADS=%s, PyTorch %d; OPENBLAS_CORETYPE unset; commit %s"
          % (os.environ.get("OMP_NUM_THREADS", "(unset)"), a.threads, commit or "-"))
    lines, rows = [], []
    for path in a.models:
        name = model_name(path)
        model = None if a.no_torch else torch_model(name, a.threads)
        untuned = tuned = pt = None
        fallback = []
        best = lambda old, new: new if old is None or new["median"] < old["median"] else old
        # the three in turn, so that a change of load on the machine hits all of them
        for _ in range(a.rounds):
            untuned = best(untuned, relay_bench(a.relay_tune, path, None, a.repeat, a.warmup)[0])
            if a.db:
                st, fallback = relay_bench(a.relay_tune, path, a.db, a.repeat, a.warmup)
                tuned = best(tuned, st)
            if model:
                pt = best(pt, torch_bench(model, a.repeat, a.warmup))
        rows.append((name, untuned, tuned, pt, fallback))
        for source, st in (("default", untuned), ("tuned", tuned), ("pytorch", pt)):
            if st:
                lines.append(result_json(os.path.basename(path), source, st, commit))
    print("\n%-14s %12s %12s %12s %9s %9s" % ("model (ms)", "untuned", "tuned", "PyTorch", "t/untuned",
                                               "t/PyTorch"))
    ms = lambda st: "%12.3f" % (st["median"] * 1e3) if st else "%12s" % "-"
    for name, untuned, tuned, pt, fallback in rows:
        best = tuned or untuned
        r_pt = "%9.2f" % (best["median"] / pt["median"]) if pt else "%9s" % "-"
        r_un = "%9.2f" % (best["median"] / untuned["median"]) if tuned else "%9s" % "-"
        print("%-14s %s %s %s %s %s" % (name, ms(untuned), ms(tuned), ms(pt), r_un, r_pt))
        for ln in fallback:
            print("    " + ln)
    print("(medians of %d runs after %d warm-up, the lowest of %d interleaved rounds; t/PyTorch: tuned"
          " (untuned without --db) over PyTorch, target <= 1.00 for resnet18 and resnet50)"
          % (a.repeat, a.warmup, a.rounds))
    for name, untuned, tuned, pt, _ in rows:
        if pt and name in ("resnet18", "resnet50"):
            r = (tuned or untuned)["median"] / pt["median"]
            print("%s: %s/PyTorch %.2f (target <= 1.00: %s)" % (name, "tuned" if tuned else "untuned", r,
                                                                  "met" if r <= 1.0 else "MISSED"))
    if a.db and not a.no_store:
        p = subprocess.run([a.relay_tune, "db", "bench-add", "--db", a.db, "-"], input="\n".join(lines) + "\n",
                           text=True)
        if p.returncode != 0:
            sys.exit(1)


if __name__ == "__main__":
    main()
