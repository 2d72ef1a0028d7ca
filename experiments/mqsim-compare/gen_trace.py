#!/usr/bin/env python3
"""Writes the MQSim comparison trace in MQSim's ASCII format.

Each line is `time_ns dev lba_sectors size_sectors op` with op 0 = write: a
sequential fill of 400,000 8 KiB pages, then 600,000 uniform random 8 KiB
overwrites of the filled range, one request per millisecond. Seeded, so the
file is the same on every machine.

    python3 gen_trace.py [OUT]      (default: out/mqsim-compare.trace)
"""
import os
import random
import sys

FILL = 400_000
OVERWRITES = 600_000
SECTORS_PER_PAGE = 16  # 8 KiB pages of 512-byte sectors
GAP_NS = 1_000_000


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "out", "mqsim-compare.trace")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    rng = random.Random(20261122)
    with open(out, "w") as f:
        t = 0
        lines = []
        for page in range(FILL):
            lines.append(f"{t} 0 {page * SECTORS_PER_PAGE} {SECTORS_PER_PAGE} 0\n")
            t += GAP_NS
        for _ in range(OVERWRITES):
            page = rng.randrange(FILL)
            lines.append(f"{t} 0 {page * SECTORS_PER_PAGE} {SECTORS_PER_PAGE} 0\n")
            t += GAP_NS
        f.writelines(lines)
    print(f"wrote {FILL + OVERWRITES} requests to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
