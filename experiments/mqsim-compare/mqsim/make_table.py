#!/usr/bin/env python3
"""Builds the markdown table rows of RESULTS.md from runs/*/summary.txt (written by percentiles.py)."""
import re, sys, os
runs = sys.argv[1:]
hdr = ('| run | requests completed (of 1,000,000) | writes / reads completed | mean | p50 | p90 | p99 | p99.9 | max | '
       'page programs | page reads | block erases | MP program / read / erase cmds | suspend program / erase cmds | '
       'GC postponed / resumed | wall / user CPU |')
print(hdr)
print('|' + '---|' * hdr.count('|')[:-1] if False else '|' + '---|' * (hdr.count('|') - 1))
for r in runs:
    s = open(os.path.join('runs', r, 'summary.txt')).read()
    def g(pat, default='?'):
        m = re.search(pat, s)
        return m.group(1) if m else default
    m = re.search(r'device response, all: n=(\d+) mean=([\d.]+) min=([\d.]+) p50=([\d.]+) p90=([\d.]+) p99=([\d.]+) p99.9=([\d.]+) max=([\d.]+)', s)
    n, mean, mn, p50, p90, p99, p999, mx = m.groups()
    nw = g(r'writes: n=(\d+)'); nr = g(r'reads: n=(\d+)')
    d = re.search(r'DERIVED page programs = (\d+), page reads = (\d+), block erases = (\d+)', s)
    if d is None:
        d = re.match(r'(.)(.)(.)', '???')  # no MQSim output file (the run crashed)
    f = lambda x: f'{float(x):,.1f}'
    i = lambda x: f'{int(x):,}' if x not in ('?', None) else '?'
    err = os.path.join('runs', r, 'stderr.txt')
    gc = re.search(r'GC postponed (\d+), postponed GC resumed (\d+)', open(err).read()) if os.path.exists(err) else None
    mpp = i(g(r"Issued_Flash_Multiplane_Program_CMD = (\d+)")); mpr = i(g(r"Issued_Flash_Multiplane_Read_CMD = (\d+)")); mpe = i(g(r"Issued_Flash_Multiplane_Erase_CMD = (\d+)"))
    sp = i(g(r"Issued_Flash_Suspend_Program_CMD = (\d+)")); se = i(g(r"Issued_Flash_Suspend_Erase_CMD = (\d+)"))
    wall = g(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)"); user = g(r"User time \(seconds\): (\S+)")
    print(f'| {r} | {i(n)} | {i(nw)} / {i(nr)} | {f(mean)} | {f(p50)} | {f(p90)} | {f(p99)} | {f(p999)} | {f(mx)} | '
          f'{i(d.group(1))} | {i(d.group(2))} | {i(d.group(3))} | '
          f'{mpp} / {mpr} / {mpe} | {sp} / {se} | '
          f'{(gc.group(1) + " / " + gc.group(2)) if gc else "n/a"} | '
          f'{wall} / {user} s |')
