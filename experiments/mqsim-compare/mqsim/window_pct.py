#!/usr/bin/env python3
"""Percentiles (nearest rank, us) of device response time by request type for requests that
ARRIVED in [t0, t1) seconds, from a run's rt.txt (arrival = completion - end-to-end delay).
Also reports how many requests of that window never completed (trace gives the window's size).
    python3 window_pct.py RUN_DIR TRACE t0 t1"""
import math, sys
d, trace, t0, t1 = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
pct = lambda v, p: v[max(1, math.ceil(p / 100 * len(v))) - 1]
got = {'0': [], '1': []}
for line in open(d + '/rt.txt'):
    p = line.split()
    if len(p) < 5: continue
    arr = (int(p[3]) - int(p[2])) / 1e9
    if t0 <= arr < t1: got[p[0]].append(int(p[1]) / 1000)
want = {'0': 0, '1': 0}
for line in open(trace):
    p = line.split()
    t = int(p[0]) / 1e9
    if t0 <= t < t1: want[p[4]] += 1
for k, name in (('0', 'writes'), ('1', 'reads')):
    v = sorted(got[k])
    if not v: print(f'{name}: 0 of {want[k]} completed'); continue
    print(f'{name}: {len(v)} of {want[k]} completed, mean={sum(v)/len(v):.1f} p50={pct(v,50):.1f} p90={pct(v,90):.1f} '
          f'p99={pct(v,99):.1f} p99.9={pct(v,99.9):.1f} max={v[-1]:.1f} us')
