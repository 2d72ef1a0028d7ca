#!/usr/bin/env python3
"""Split the PostMark DiskSim trace into one request per 2 KiB flash page.

002 (GFTL) logs every sector a file system touches and replays each read or write
as its own request, one per period L(p) ("no idle period", Section V). ftlab splits
a trace request into pages but times the request as a whole, so Table V's
per-access times need a trace of single-page requests. This writes
out/postmark-pages.trace (DiskSim ASCII, `time_ms devno blkno size flags`, 512 B
sectors): every page of every request of ../../../shared/traces/
disksim_ssd-postmark-aligned2.trace in trace order, 4 sectors (2 KiB) each,
one every PERIOD_US microseconds. Addresses are kept (ftlab's `compact` address
mode packs them), so the footprint is the original trace's: 3,066,776 pages.
"""
import os
import sys

PAGE_SECTORS = 4          # 2 KiB pages of the Samsung large-block chip (002 Table I)
PERIOD_US = 3630          # >= L(p) = 3625 us, GFTL's period for pi = 64 (largest of the sweep)

here = os.path.dirname(os.path.abspath(__file__))
src = os.path.join(here, "..", "..", "..", "shared", "traces", "disksim_ssd-postmark-aligned2.trace")
dst = os.path.join(here, "out", "postmark-pages.trace")
os.makedirs(os.path.dirname(dst), exist_ok=True)

n = 0
with open(src) as f, open(dst + ".tmp", "w") as out:
    lines = []
    for line in f:
        _, dev, blk, size, flags = line.split()
        blk, size, op = int(blk), int(size), int(flags) & 1
        first = blk // PAGE_SECTORS
        last = (blk + size - 1) // PAGE_SECTORS
        for page in range(first, last + 1):
            us = n * PERIOD_US
            lines.append(f"{us // 1000}.{us % 1000:03d} {dev} {page * PAGE_SECTORS} {PAGE_SECTORS} {op}\n")
            n += 1
        if len(lines) > 100000:
            out.writelines(lines)
            lines = []
    out.writelines(lines)
os.replace(dst + ".tmp", dst)
print(f"{dst}: {n} single-page requests, one every {PERIOD_US} us", file=sys.stderr)
