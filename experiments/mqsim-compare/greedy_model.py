#!/usr/bin/env python3
"""An independent, deliberately simple model of greedy garbage collection, to
check ftlab's GC copy count on the MQSim workload without sharing any code.

Scaled down (2,048 blocks of 32 pages instead of 256, so it runs in about a
minute): 76.3% of the physical pages hold data (400,000 of 524,288 in the real
workload), GC keeps 5% of the blocks free, writes are uniform random over the
data. Prints the valid-page copies per random write for one global victim pool
(ftlab's pagemap) and for 16 pools of 128 blocks with logical pages assigned
to pools statically (MQSim's per-plane GC).

    python3 greedy_model.py
"""
import random, sys
def sim(planes, blocks_per_plane, ppb, valid_pages, gc_free, writes, seed=1):
    rng = random.Random(seed)
    # state per plane
    nb = planes*blocks_per_plane
    valid = [0]*nb
    loc = {}  # lpn -> (block)
    content = [set() for _ in range(nb)]
    free = [list(range(p*blocks_per_plane, (p+1)*blocks_per_plane)) for p in range(planes)]
    active = [None]*planes; fill=[0]*planes
    copies = 0; erases = 0
    def alloc(p):
        nonlocal copies, erases
        if active[p] is None or fill[p] == ppb:
            active[p] = free[p].pop(0); fill[p] = 0
        b = active[p]; fill[p] += 1; return b
    def write(lpn, p, gc=False):
        nonlocal copies
        old = loc.get(lpn)
        if old is not None:
            valid[old] -= 1; content[old].discard(lpn)
        b = alloc(p); loc[lpn] = b; valid[b] += 1; content[b].add(lpn)
    def gc(p):
        nonlocal copies, erases
        while len(free[p]) <= gc_free:
            cands = [b for b in range(p*blocks_per_plane,(p+1)*blocks_per_plane) if b != active[p] and b not in free[p]]
            v = min(cands, key=lambda b: valid[b])
            for lpn in list(content[v]):
                write(lpn, p); copies += 1
            erases += 1; free[p].append(v); valid[v]=0; content[v]=set()
    plane_of = lambda lpn: lpn % planes
    for lpn in range(valid_pages):
        p = plane_of(lpn); gc(p); write(lpn, p)
    c0 = copies
    for _ in range(writes):
        lpn = rng.randrange(valid_pages); p = plane_of(lpn); gc(p); write(lpn, p)
    return (copies - c0)/writes
# scaled: 2048 blocks of 32 pages; 76.3% of physical valid; GC reserve 5%
ppb=32; total=2048*ppb; valid=int(0.763*total)
print("global greedy (1 pool of 2048):", sim(1, 2048, ppb, valid, int(0.05*2048), 3*valid))
print("per-plane greedy (16 x 128):", sim(16, 128, ppb, valid, int(0.05*128), 3*valid))
