#!/usr/bin/env python3
"""Writes the stand-ins for 004's two traces (OLTP Financial1, PC) in ssdsim
text format (`time_ns dev lba_sectors size_sectors op`, op 0 = write,
1 = read), for Figures 6 and 7 at the paper's device (8,192 blocks of 64
pages of 2 KiB, 1 GiB).

THESE ARE STAND-INS, NOT THE PAPER'S TRACES. The full UMass Financial1 trace
and the PC trace of 004's reference [15] are not obtainable here. Every
statistic a stand-in follows, and where it comes from, is listed below and in
README.md ("The paper-setup stand-in traces").

Every address lies in the first 80% of 1 GiB (6,553 blocks of 128 KiB), the
logical space at the largest over-provisioning of Figure 6 (20%), so the same
trace reaches the same pages at every over-provisioning (ftlab's `modulo`
folding never wraps it), as one trace did in the paper.

OLTP stand-in (`financial1-standin.trace`):
- requests: REQUESTS (default 1,000,000; Financial1 has about 5.3 million:
  `--requests 5334987` writes a full-length one);
- write share 0.77 of the requests (the commonly quoted characterization of
  Financial1; the 10,000-record head has 0.59);
- request sizes: drawn from the head's own size histograms, writes and reads
  apart (`../shared/traces/umass_financial1_head.ssdsim.ascii`: writes mostly
  0.5-4 KiB, 3.2 pages of 2 KiB on average; reads mostly 8 KiB);
- sequentiality: 0.45 of the writes start where the previous write ended
  (the head: 45% sequential by `ftlab trace stats`);
- footprint: FOOTPRINT (default 0.5) of the 6,553 blocks hold every write,
  at blocks spread over the space (the folding of the trace's 24 ASUs into
  1 GiB is not given by the paper: swept in README.md);
- locality: the block of a non-sequential write is drawn from a Zipf law of
  exponent THETA (default 1.0) over the footprint's blocks in a random order,
  its page uniformly within the block. THETA = 1.0 gives top-1%/10%/20% page
  shares over the first 19,229 written pages close to the head's
  (14.9% / 41.3% / 52.0%); the script prints the shares it got;
- reads: uniform over the footprint;
- arrivals: exponential gaps of mean 8.1 ms (Financial1: about 12 hours for
  5.3 million requests); ftlab's Figure 6/7 runs are closed loop, where
  arrivals do not matter.

PC stand-in (`pc-standin.trace`): 004 says only that the PC trace [15] came
from a word processor, a music player, a web browser and games on Windows XP,
is "mostly sequential writes", "quite short", and that its working set
"changes too quickly". So:
- requests: PC_REQUESTS (default 100,000, about 1.3 times the logical space written);
- write share 0.7 (an assumption: not given);
- 80% of the written pages are file writes: sequential runs of 64 KiB to
  2 MiB (32-1,024 pages, log-uniform) written as 64 KiB requests, each file at
  a random page-aligned place inside a moving window of 15% of the space
  that advances across the space over the trace (the quickly changing working
  set); 20% (PC_META, `--pc-meta`) are 4 KiB metadata writes uniform over a
  hot region of 2% of the space (an assumption: Windows XP's NTFS metadata
  and registry);
- reads: 64 KiB, uniform over the window.

    python3 experiments/janus/gen_traces.py [--requests N] [--footprint F]
        [--theta T] [--pc-requests N] [--pc-meta M] [--out DIR]

Seeded: the files are the same bytes on every machine.
"""
import argparse
import bisect
import math
import os
import random
from collections import Counter

SECTORS_PER_PAGE = 4  # 2 KiB pages of 512-byte sectors
PAGES_PER_BLOCK = 64
SPAN_BLOCKS = int(8192 * 0.8)  # the logical space at 20% over-provisioning
SPAN_PAGES = SPAN_BLOCKS * PAGES_PER_BLOCK
HERE = os.path.dirname(os.path.abspath(__file__))
HEAD = os.path.join(HERE, "..", "..", "..", "shared", "traces", "umass_financial1_head.ssdsim.ascii")


def head_sizes():
    """The head's request sizes in sectors, writes and reads apart."""
    writes, reads = Counter(), Counter()
    with open(HEAD) as f:
        for line in f:
            fields = line.split()
            if len(fields) != 5:
                continue
            (reads if fields[4] == "1" else writes)[int(fields[3])] += 1
    return writes, reads


class Sampler:
    """Draws from a histogram {value: count}."""

    def __init__(self, hist):
        self.values = sorted(hist)
        self.cum = []
        total = 0
        for v in self.values:
            total += hist[v]
            self.cum.append(total)
        self.total = total

    def draw(self, rng):
        return self.values[bisect.bisect_right(self.cum, rng.random() * self.total)]


class Zipf:
    """Ranks 0..n-1 with probability proportional to 1 / (rank + 1)^theta."""

    def __init__(self, n, theta):
        self.cum = []
        total = 0.0
        for k in range(n):
            total += 1.0 / (k + 1) ** theta
            self.cum.append(total)
        self.total = total

    def draw(self, rng):
        return min(bisect.bisect_right(self.cum, rng.random() * self.total), len(self.cum) - 1)


def shares(pages_written):
    counts = sorted(Counter(pages_written).values(), reverse=True)
    total = sum(counts)
    return [sum(counts[: max(1, int(len(counts) * f))]) / total for f in (0.01, 0.1, 0.2)], len(counts)


def financial1(out, requests, footprint, theta, seed=20261204):
    rng = random.Random(seed)
    wsizes, rsizes = head_sizes()
    ws, rs = Sampler(wsizes), Sampler(rsizes)
    nblocks = max(1, int(SPAN_BLOCKS * footprint))
    blocks = rng.sample(range(SPAN_BLOCKS), nblocks)  # Zipf rank -> block
    zipf = Zipf(nblocks, theta)
    t = 0
    prev_end = None  # sector after the previous write
    head_pages = []
    stats = Counter()
    with open(out, "w") as f:
        for _ in range(requests):
            t += int(rng.expovariate(1.0 / 8.1e6))
            if rng.random() < 0.77:
                size = ws.draw(rng)
                if prev_end is not None and rng.random() < 0.45 and prev_end + size <= SPAN_PAGES * SECTORS_PER_PAGE:
                    lba = prev_end
                    stats["sequential"] += 1
                else:
                    b = blocks[zipf.draw(rng)]
                    page = b * PAGES_PER_BLOCK + rng.randrange(PAGES_PER_BLOCK)
                    lba = min(page * SECTORS_PER_PAGE, SPAN_PAGES * SECTORS_PER_PAGE - size)
                prev_end = lba + size
                op = 0
                stats["writes"] += 1
                stats["write_sectors"] += size
                if len(head_pages) < 19229:
                    head_pages.extend(range(lba // SECTORS_PER_PAGE, (lba + size - 1) // SECTORS_PER_PAGE + 1))
            else:
                size = rs.draw(rng)
                b = blocks[rng.randrange(nblocks)]
                page = b * PAGES_PER_BLOCK + rng.randrange(PAGES_PER_BLOCK)
                lba = min(page * SECTORS_PER_PAGE, SPAN_PAGES * SECTORS_PER_PAGE - size)
                op = 1
            f.write(f"{t} 0 {lba} {size} {op}\n")
    (s1, s10, s20), distinct = shares(head_pages[:19229])
    print(
        f"{out}: {requests} requests, write share {stats['writes'] / requests:.3f}, "
        f"{stats['sequential'] / max(1, stats['writes']):.3f} of writes sequential, "
        f"mean write {stats['write_sectors'] / max(1, stats['writes']) / 2:.2f} KiB, "
        f"footprint {nblocks} blocks ({footprint:.0%} of {SPAN_BLOCKS}); first 19,229 written pages: "
        f"{distinct} distinct, top 1/10/20% take {s1:.3f}/{s10:.3f}/{s20:.3f}"
    )


def pc(out, requests, meta=0.2, seed=20261205):
    rng = random.Random(seed)
    window = int(SPAN_PAGES * 0.15)
    hot = int(SPAN_PAGES * 0.02)
    hot_base = SPAN_PAGES - hot
    files_span = hot_base  # files live below the hot region
    run = 32  # 64 KiB requests
    t = 0
    n = 0
    file_left = 0
    file_next = 0
    written = Counter()
    with open(out, "w") as f:
        while n < requests:
            t += int(rng.expovariate(1.0 / 2e6))
            # The window's start advances across the file space over the trace.
            start = int((files_span - window) * n / requests)
            if rng.random() < 0.3:
                page = start + rng.randrange(window - run)
                f.write(f"{t} 0 {page * SECTORS_PER_PAGE} {run * SECTORS_PER_PAGE} 1\n")
            elif rng.random() < meta * 32 / (meta * 32 + (1 - meta) * 2):
                # A 4 KiB metadata write: a share `meta` of the written pages.
                page = hot_base + 2 * rng.randrange(hot // 2)
                f.write(f"{t} 0 {page * SECTORS_PER_PAGE} {2 * SECTORS_PER_PAGE} 0\n")
                written["meta"] += 2
            else:
                if file_left == 0:
                    file_left = int(math.exp(rng.uniform(math.log(32), math.log(1024))))
                    file_next = start + rng.randrange(window - file_left)
                size = min(run, file_left)
                f.write(f"{t} 0 {file_next * SECTORS_PER_PAGE} {size * SECTORS_PER_PAGE} 0\n")
                file_next += size
                file_left -= size
                written["file"] += size
            n += 1
    total = written["meta"] + written["file"]
    print(
        f"{out}: {requests} requests, {total} pages written ({total / SPAN_PAGES:.2f} x the span), "
        f"{written['file'] / total:.3f} of them in file runs"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=1_000_000)
    ap.add_argument("--footprint", type=float, default=0.5)
    ap.add_argument("--theta", type=float, default=1.0)
    ap.add_argument("--pc-requests", type=int, default=100_000)
    ap.add_argument("--pc-meta", type=float, default=0.2)
    ap.add_argument("--out", default=os.path.join(HERE, "out"))
    ap.add_argument("--only", choices=["financial1", "pc"], default=None)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.only in (None, "financial1"):
        name = "financial1-standin.trace"
        if (a.requests, a.footprint, a.theta) != (1_000_000, 0.5, 1.0):
            name = f"financial1-standin-r{a.requests}-f{a.footprint:g}-t{a.theta:g}.trace"
        financial1(os.path.join(a.out, name), a.requests, a.footprint, a.theta)
    if a.only in (None, "pc"):
        name = "pc-standin.trace" if a.pc_meta == 0.2 else f"pc-standin-m{a.pc_meta:g}.trace"
        pc(os.path.join(a.out, name), a.pc_requests, a.pc_meta)


if __name__ == "__main__":
    main()
