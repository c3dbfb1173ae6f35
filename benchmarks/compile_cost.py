#!/usr/bin/python3
"""What each candidate of a tuning run costs gcc (issue 17: why compile per
trial grew between two commits).

Usage:

    /usr/bin/python3 benchmarks/compile_cost.py --cache DIR --db DB [--top N]

DIR is the run's compiler cache (RELAY_TUNE_CACHE), DB its database. Each
cached unit (several candidates in one translation unit) is cut into its
candidates, the prelude kept in front of each, and every candidate is
compiled alone with the target's flags (the host's AVX-512 or AVX2 ones,
read from `relay-tune targets`), one after the other, so that each gets its
own CPU seconds (user + sys of gcc), which the load on a shared host
inflates less than wall time. The candidates are joined with the database's
records by entry name (k_<workload hash>_<config index>), and the report
gives the distribution of a candidate's compile, the share of the slow
kernels (over twice their task's best) and the share of the wide register
tiles (a conv's channel-vector way holding 28 or more accumulators), then
the share the conv template rejects since the fifth round (and whether a
task's best is among them), then the N costliest candidates with their
tiles. Compare two commits' runs of the same command (docs/tuning.md,
"Faster trials", fourth and fifth rounds).
"""
import argparse
import glob
import json
import os
import re
import resource
import sqlite3
import subprocess
import sys
import tempfile

ENTRY = re.compile(r'\bk_([0-9a-f]{16})_(\d+)')


def host_target(relay_tune):
    """The cpu target's flags, float32 lanes and vector registers, as
    `relay-tune targets` prints them."""
    out = subprocess.run([relay_tune, 'targets'], capture_output=True, text=True, check=True).stdout
    isa = re.search(r'\((\d+) float32 lanes, (\d+) vector registers', out)
    for line in out.splitlines():
        line = line.strip()
        if line.startswith('cflags:') and isa:
            return line.split(':', 1)[1].split(), int(isa.group(1)), int(isa.group(2))
    sys.exit('compile_cost: no cflags, lanes or registers in `relay-tune targets`')


def rejected(k, channels, lanes, vregs):
    """Whether the conv template rejects the config since the fifth round
    (schedule/templates/conv2d.c, reject_losing_tile): a channel-vector
    tile whose tile_oc is not whole vectors where the channels are, or
    whose accumulators and weight vectors exceed the registers."""
    if k.get('vec_ow') != 0 or 'tile_ow' not in k or 'tile_oc' not in k:
        return False
    kb, owb = k['tile_oc'][1], k['tile_ow'][1]
    vecs = -(-kb // lanes)
    return (channels % lanes == 0 and kb % lanes != 0) or vecs * owb + vecs > vregs


def out_channels(args):
    """The conv's output channels: the weight's first dimension in the
    workload's shapes ("1x64x56x56, 64x64x3x3"), or 0."""
    try:
        shapes = json.loads(args).get('shapes', '').split(', ')
        return int(shapes[1].split('x')[0])
    except (ValueError, IndexError, AttributeError):
        return 0


def candidates(path):
    """The unit's prelude and its candidates as (key, lines): a candidate
    starts at the first line naming one of its entries."""
    prelude, chunks, cur, key = None, [], [], None
    for line in open(path).read().split('\n'):
        m = ENTRY.search(line)
        if m and (m.group(1), int(m.group(2))) != key:
            if key is None:
                prelude = cur
            else:
                chunks.append((key, cur))
            key, cur = (m.group(1), int(m.group(2))), []
        cur.append(line)
    if key is not None:
        chunks.append((key, cur))
    return prelude or [], chunks


def cpu_of(cmd):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--cache', required=True)
    ap.add_argument('--db', required=True)
    ap.add_argument('--top', type=int, default=10)
    ap.add_argument('--relay-tune', default='./relay-tune')
    o = ap.parse_args()
    flags, lanes, vregs = host_target(o.relay_tune)
    units = sorted(glob.glob(os.path.join(o.cache, '*.c')))
    if not units:
        sys.exit(f'compile_cost: no units in {o.cache}')
    cost, lines = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        src, obj = os.path.join(tmp, 'c.c'), os.path.join(tmp, 'c.so')
        for u in units:
            prelude, chunks = candidates(u)
            for key, body in chunks:
                open(src, 'w').write('\n'.join(prelude + body) + '\n')
                cost[key] = cpu_of(['gcc'] + flags + ['-o', obj, src])
                lines[key] = len(body)
    con = sqlite3.connect(o.db)
    best = dict(con.execute('select workload_id, min(mean_cost) from records where error = 0 group by workload_id'))
    rows = con.execute('select w.hash, r.config_index, r.config, r.mean_cost, r.error, r.workload_id, w.args '
                       'from records r join workloads w on w.id = r.workload_id').fetchall()
    seen, slow, wide, nslow, nwide = [], 0.0, 0.0, 0, 0
    rej, nrej, best_rej, top = 0.0, 0, [], []
    for h, ci, cfg, mc, err, wid, args in rows:
        k = {e[0]: e[2] for e in json.loads(cfg)['entities'] if e[0] != 'template_version'}
        is_rej = rejected(k, out_channels(args), lanes, vregs)
        if is_rej and err == 0 and mc == best.get(wid):
            best_rej.append(h)
        c = cost.get((h, ci))
        if c is None:
            continue
        seen.append(c)
        if is_rej:
            rej, nrej = rej + c, nrej + 1
        ratio = mc / best[wid] if err == 0 and wid in best else float('inf')
        if ratio > 2:
            slow, nslow = slow + c, nslow + 1
        if k.get('vec_ow') == 0 and 'tile_ow' in k and -(-k['tile_oc'][1] // lanes) * k['tile_ow'][1] >= 28:
            wide, nwide = wide + c, nwide + 1
        tiles = {n: v for n, v in k.items() if n.startswith('tile') or n in ('vec_ow', 'unroll_kw')}
        top.append((c, h, ratio, lines[(h, ci)], tiles))
    if not seen:
        sys.exit('compile_cost: no record of the database matches a cached candidate')
    seen.sort()
    n, tot = len(seen), sum(seen)
    print(f'{n} candidates ({len(cost) - n} cached ones without a record), {tot:.1f} CPU s of gcc, '
          f'{tot / n:.3f} s each: median {seen[n // 2]:.2f}, 90th percentile {seen[int(n * 0.9)]:.2f}, '
          f'max {seen[-1]:.2f}')
    print(f'  kernels over 2x their task best: {nslow} candidates, {slow:.1f} s ({100 * slow / tot:.0f}%)')
    print(f'  channel-vector tiles of >= 28 accumulators: {nwide} candidates, {wide:.1f} s ({100 * wide / tot:.0f}%)')
    print(f'  rejected by the conv template since the fifth round ({lanes} lanes, {vregs} registers): {nrej} '
          f'candidates, {rej:.1f} s ({100 * rej / tot:.0f}%); task bests among all records: '
          f'{len(best_rej)} {" ".join(best_rej)}')
    top.sort(key=lambda x: -x[0])
    for c, h, ratio, nl, tiles in top[:o.top]:
        print(f'  {c:5.2f} s  {h}  {nl:4d} lines  cost/best {ratio:6.2f}  {json.dumps(tiles)}')


if __name__ == '__main__':
    main()
