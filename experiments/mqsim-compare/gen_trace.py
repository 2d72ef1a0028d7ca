#!/usr/bin/env python3
"""Writes the MQSim comparison traces in MQSim's ASCII format.

Each line is `time_ns dev lba_sectors size_sectors op` with op 0 = write,
1 = read: a sequential fill of 400,000 8 KiB pages, then 600,000 uniform
random 8 KiB requests over the filled range, one request per millisecond.
By default every request after the fill is a write (the overwrite workload);
with --mixed, 30% are writes and 70% reads (the workload of the suspension
comparison). Seeded, so the files are the same on every machine.

    python3 gen_trace.py [--mixed] [OUT]
    (default OUT: out/mqsim-compare.trace, with --mixed out/mqsim-mixed.trace)
"""
import os
import random
import sys

FILL = 400_000
REQUESTS = 600_000
SECTORS_PER_PAGE = 16  # 8 KiB pages of 512-byte sectors
GAP_NS = 1_000_000
WRITE_SHARE_MIXED = 0.3


def main() -> None:
    args = sys.argv[1:]
    mixed = "--mixed" in args
    args = [a for a in args if a != "--mixed"]
    here = os.path.dirname(os.path.abspath(__file__))
    name = "mqsim-mixed.trace" if mixed else "mqsim-compare.trace"
    out = args[0] if args else os.path.join(here, "out", name)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    rng = random.Random(20261126 if mixed else 20261122)
    with open(out, "w") as f:
        t = 0
        lines = []
        for page in range(FILL):
            lines.append(f"{t} 0 {page * SECTORS_PER_PAGE} {SECTORS_PER_PAGE} 0\n")
            t += GAP_NS
        for _ in range(REQUESTS):
            page = rng.randrange(FILL)
            op = (0 if rng.random() < WRITE_SHARE_MIXED else 1) if mixed else 0
            lines.append(f"{t} 0 {page * SECTORS_PER_PAGE} {SECTORS_PER_PAGE} {op}\n")
            t += GAP_NS
        f.writelines(lines)
    print(f"wrote {FILL + REQUESTS} requests to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
