#!/usr/bin/env python3
"""A Financial1 stand-in at 001 Table V's write ratio, for rftl-standin.toml.

001 ran the full UMass Financial1 trace (3,698,864 requests, 17.66% writes,
5.24 KB on average, Table V); only its first 10,000 records are here
(../../../shared/traces/umass_financial1_head.ssdsim.ascii), and they are 59.23%
writes. This keeps the head's order, timestamps, addresses and sizes (its
footprint, locality and request-size mix) and turns writes into reads of the
same extent, chosen with a fixed seed, until 17.66% of the requests are writes.
It is a stand-in, not the full trace.

    python3 experiments/lazy-rtgc/financial_standin.py   # writes out/financial1-standin.ascii
"""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "..", "..", "shared", "traces", "umass_financial1_head.ssdsim.ascii")
DST = os.path.join(HERE, "out", "financial1-standin.ascii")
TARGET_WRITES = 0.1766  # 001 Table V


def main() -> None:
    with open(SRC) as f:
        rows = [line.split() for line in f if line.strip()]
    writes = [i for i, r in enumerate(rows) if r[4] == "0"]
    keep = round(TARGET_WRITES * len(rows))
    rng = random.Random(1)
    kept = set(rng.sample(writes, keep))
    for i in writes:
        if i not in kept:
            rows[i][4] = "1"
    os.makedirs(os.path.dirname(DST), exist_ok=True)
    with open(DST, "w") as f:
        f.write("\n".join(" ".join(r) for r in rows) + "\n")
    n_w = sum(1 for r in rows if r[4] == "0")
    print(f"{DST}: {len(rows)} requests, {n_w} writes ({100 * n_w / len(rows):.2f}%)")


if __name__ == "__main__":
    main()
