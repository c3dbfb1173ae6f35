#!/usr/bin/python3
"""End-to-end latency of whole models: relay-tune untuned, relay-tune tuned,
and PyTorch 1.13 at its best on the same architectures (issue 7's end-to-end
benchmark, made honest by issue 12).

Usage (`make bench-e2e DB=t.db` runs it with the environment below):

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE -u OMP_WAIT_POLICY OMP_NUM_THREADS=2 \\
    /usr/bin/python3 benchmarks/bench_e2e.py --relay-tune ./relay-tune [--fma-peak benchmarks/fma_peak]
        [--db DB] [--repeat N] [--warmup N] [--rounds K] [--threads T] [--commit C] [--no-torch]
        [--no-store] benchmarks/models/resnet18.relay ...

Before the models, the host's FP32 FMA peak is measured on 1 and on T
threads (benchmarks/fma_peak, bench_peak.c) and printed with the host's ISA;
every stored result carries both. Both sides run on T threads (default 2):
OMP_NUM_THREADS=T is set for relay-tune and before torch is imported, and
torch.set_num_threads(T).

For each model:

* untuned: `relay-tune bench MODEL --json` (weights: seeded random values,
  seed 0; every task under its template's default config);
* tuned: the same with `--db DB` (the best valid record of each task; tasks
  without one fall back to the default config, and relay-tune says so);
* PyTorch, three ways, on the model as benchmarks/gen/make_zoo.py builds it
  (torchvision with weights=None, or its BertLayer), in eval mode, run
  under torch.inference_mode, timed with time.perf_counter:
  eager (the module itself), frozen (torch.jit.freeze(torch.jit.trace(...)))
  and frozen + torch.jit.optimize_for_inference ("ofi": MKLDNN layouts and
  fused conv-bn-relu where PyTorch finds them). A variant PyTorch cannot
  build for a model is reported and left out.

The fastest PyTorch variant of a model (lowest median) is its baseline:
the ratios u/PT and t/PT are untuned and tuned over that one, and the
column `vs` says which it was, so that relay-tune is never compared with a
PyTorch that a user would have made faster.

Every variant gets --warmup runs, then --repeat timed runs, in --rounds
interleaved rounds (untuned, tuned, eager, frozen, ofi, untuned, ...), each
keeping its round of lowest median, so that a change of load on the machine
hits all of them alike. The table gives medians in ms and the ratios, then
issue 12's targets. With --db, every result is stored in the database's
benchmark table (config_source default, tuned, pytorch-eager,
pytorch-frozen, pytorch-ofi) with the commit, host, ISA, peak and threads,
through `relay-tune db bench-add` (docs/benchmarks.md).
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


# PyTorch's variants, in the order they run and print
VARIANTS = ("eager", "frozen", "ofi")


def torch_models(name, threads):
    """The zoo's PyTorch model in each variant: {variant: (callable, input)}
    and {variant: why} for those PyTorch could not build; None when the zoo
    has no such model."""
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
    built, failed = {"eager": (model, x)}, {}
    with torch.inference_mode():
        # each its own trace: optimize_for_inference rewrites the module it is given
        builders = {"frozen": lambda: torch.jit.freeze(torch.jit.trace(model, x)),
                    "ofi": lambda: torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.trace(model, x)))}
        for variant, build in builders.items():
            try:
                m = build()
                m(x)  # a variant that builds but cannot run is no baseline either
                built[variant] = (m, x)
            except Exception as e:  # PyTorch raises many kinds; the reason is printed
                failed[variant] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
    return built, failed


def torch_bench(model_x, repeat, warmup):
    """Times one variant of torch_models; its statistics in seconds."""
    import torch
    model, x = model_x
    with torch.inference_mode():
        for _ in range(warmup):
            model(x)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            model(x)
            times.append(time.perf_counter() - t0)
    return {"median": statistics.median(times), "min": min(times), "max": max(times),
            "mean": statistics.fmean(times), "stddev": statistics.stdev(times) if len(times) > 1 else 0.0,
            "repeats": len(times)}


def fma_peak(path, threads):
    """The host's ISA and FP32 FMA peak (benchmarks/fma_peak --json)."""
    cmd = [path, "--threads", str(threads), "--json"]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        sys.exit("bench_e2e: cannot run the FMA peak probe %s: %s (make benchmarks/fma_peak, or give --fma-peak)"
                 % (path, e.strerror))
    if p.returncode != 0:
        sys.exit("bench_e2e: %s failed:\n%s" % (" ".join(cmd), p.stderr))
    return json.loads(p.stdout)


def result_json(model, source, st, commit, peak):
    """One line for `relay-tune db bench-add`."""
    mean = min(max(st["mean"], st["min"]), st["max"])  # rounding must not leave [min, max]
    return json.dumps({"model": model, "target": "cpu", "config_source": source, "mean": mean,
                       "median": st["median"], "min": st["min"], "max": st["max"], "stddev": st["stddev"],
                       "repeats": st["repeats"], "commit": commit, "host": socket.gethostname(),
                       "timestamp": time.time(), "isa": peak["isa"], "peak_gflops": peak["gflops"],
                       "threads": peak["threads"]})


def git_commit():
    p = subprocess.run(["git", "-C", HERE, "describe", "--always", "--dirty"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    return p.stdout.strip() if p.returncode == 0 else ""


def lowest(old, new):
    """The statistics of the round with the lower median."""
    return new if old is None or new["median"] < old["median"] else old


def run_model(path, a):
    """Times one model, every variant in each round; a row of the table."""
    name = model_name(path)
    zoo = None if a.no_torch else torch_models(name, a.threads)
    built, failed = zoo if zoo else ({}, {})
    row = {"name": name, "untuned": None, "tuned": None, "fallback": [], "failed": failed}
    row.update({v: None for v in VARIANTS})
    # all variants in turn, so that a change of load on the machine hits all of them
    for _ in range(a.rounds):
        row["untuned"] = lowest(row["untuned"], relay_bench(a.relay_tune, path, None, a.repeat, a.warmup)[0])
        if a.db:
            st, row["fallback"] = relay_bench(a.relay_tune, path, a.db, a.repeat, a.warmup)
            row["tuned"] = lowest(row["tuned"], st)
        for v in VARIANTS:
            if v in built:
                row[v] = lowest(row[v], torch_bench(built[v], a.repeat, a.warmup))
    timed = [v for v in VARIANTS if row[v]]
    row["best"] = min(timed, key=lambda v: row[v]["median"]) if timed else None
    return row


# issue 12's targets: (models, which of ours, bound on ours / PyTorch-best)
TARGETS = ((("resnet18", "resnet50", "mobilenet_v2", "squeezenet1_0"), "untuned", 1.0),
           (("resnet18", "resnet50", "mobilenet_v2"), "tuned", 0.8))


def print_table(rows, a):
    ms = lambda st: "%10.3f" % (st["median"] * 1e3) if st else "%10s" % "-"
    ratio = lambda x, y: "%6.2f" % (x["median"] / y["median"]) if x and y else "%6s" % "-"
    print("\n%-14s %10s %10s %10s %10s %10s  %-6s %6s %6s %6s" % ("model (ms)", "untuned", "tuned", "PT eager",
                                                              "PT frozen", "PT ofi", "vs", "u/PT", "t/PT",
                                                              "t/u"))
    for r in rows:
        pt = r[r["best"]] if r["best"] else None
        print("%-14s %s %s %s %s %s  %-6s %s %s %s" % (r["name"], ms(r["untuned"]), ms(r["tuned"]), ms(r["eager"]),
                                                     ms(r["frozen"]), ms(r["ofi"]), r["best"] or "-",
                                                     ratio(r["untuned"], pt), ratio(r["tuned"], pt),
                                                     ratio(r["tuned"], r["untuned"])))
        for v, why in r["failed"].items():
            print("    PyTorch %s: cannot build it: %s" % (v, why))
        for ln in r["fallback"]:
            print("    " + ln)
    print("(medians of %d runs after %d warm-up, the lowest of %d interleaved rounds; PT: PyTorch eager,"
          " frozen (jit.trace + jit.freeze), frozen + jit.optimize_for_inference; vs: the fastest of the three,"
          " which u/PT (untuned) and t/PT (tuned) divide by; t/u: tuned over untuned)" % (a.repeat, a.warmup,
                                                                                        a.rounds))
    for models, ours, bound in TARGETS:
        for r in rows:
            if r["name"] in models and r["best"] and r[ours]:
                q = r[ours]["median"] / r[r["best"]]["median"]
                print("%s: %s/PyTorch-best (%s) %.2f (target <= %.2f: %s)"
                      % (r["name"], ours, r["best"], q, bound, "met" if q <= bound else "MISSED"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="+", help="Relay files of the zoo (benchmarks/models/*.relay)")
    ap.add_argument("--relay-tune", default="./relay-tune")
    ap.add_argument("--fma-peak", default=None,
                    help="the FMA peak probe (default: benchmarks/fma_peak beside --relay-tune)")
    ap.add_argument("--db", help="tuned configs from, and results stored in, this database")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2,
                    help="interleaved rounds of all variants; each keeps its round of lowest median")
    ap.add_argument("--threads", type=int, default=2, help="threads of relay-tune and of PyTorch")
    ap.add_argument("--commit", default=None, help="stored with the results (default: git describe)")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--no-store", action="store_true")
    a = ap.parse_args()
    if a.repeat < 1 or a.warmup < 0 or a.threads < 1 or a.rounds < 1:
        ap.error("--repeat >= 1, --warmup >= 0, --threads >= 1, --rounds >= 1")
    if a.db and not os.path.exists(a.db):
        ap.error("%s: no such database (tune first: relay-tune tune MODEL --db %s)" % (a.db, a.db))
    # the same thread count on both sides, set before torch is imported
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    commit = git_commit() if a.commit is None else a.commit
    probe = a.fma_peak or os.path.join(os.path.dirname(os.path.abspath(a.relay_tune)), "benchmarks", "fma_peak")
    peak = fma_peak(probe, a.threads)
    print("threads: %d (relay-tune OMP_NUM_THREADS=%s, PyTorch torch.set_num_threads); OPENBLAS_CORETYPE unset;"
          " commit %s" % (a.threads, os.environ["OMP_NUM_THREADS"], commit or "-"))
    busy = "; BUSY HOST: the probe's threads ran %.0f%% of the time" % (peak["share"] * 100) \
        if peak["share"] < 0.9 else ""
    print("host ISA %s; FP32 FMA peak %.1f GFLOP/s on 1 thread, %.1f on %d%s"
          % (peak["isa"], peak["gflops1"], peak["gflops"], peak["threads"], busy))
    rows = [run_model(path, a) for path in a.models]
    if not a.no_torch:
        import torch
        print("PyTorch %s, %d threads" % (torch.__version__, torch.get_num_threads()))
    print_table(rows, a)
    lines = []
    for path, r in zip(a.models, rows):
        for source, key in (("default", "untuned"), ("tuned", "tuned"), ("pytorch-eager", "eager"),
                            ("pytorch-frozen", "frozen"), ("pytorch-ofi", "ofi")):
            if r[key]:
                lines.append(result_json(os.path.basename(path), source, r[key], commit, peak))
    if a.db and not a.no_store:
        p = subprocess.run([a.relay_tune, "db", "bench-add", "--db", a.db, "-"], input="\n".join(lines) + "\n",
                           text=True)
        if p.returncode != 0:
            sys.exit(1)


if __name__ == "__main__":
    main()
