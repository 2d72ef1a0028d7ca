#!/usr/bin/env python3
"""Writes table3-summary.csv from table3-throughput.csv (Figures 13-14): each
FTL's write and read pages per second, from the 1-second
intervals, mean, min and max, over four windows:

- before: 10-97 s, writes only (the read tasks start at 97 s);
- after: 100-160 s, once the reads arrive;
- filling: 10-47 s, writes only, before the device is first full;
- full: 48-97 s, writes only, after the page-map FTL's first garbage collection
  (the board's 86,016 pages are written by 47.8 s at 1,800 pages per second).

    python3 experiments/telomere/table3-summary.py [OUTDIR]   # default: this folder
"""
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
WINDOWS = [("before", 10.0, 97.0), ("after", 100.0, 160.0), ("filling", 10.0, 47.0), ("full", 48.0, 97.0)]


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else HERE
    with open(os.path.join(HERE, "table3-throughput.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    ftls = list(dict.fromkeys(r["ftl"] for r in rows))
    with open(os.path.join(outdir, "table3-summary.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["ftl", "window", "from_s", "to_s", "write_mean", "write_min", "write_max", "read_mean",
                    "read_min", "read_max"])
        for ftl in ftls:
            for name, lo, hi in WINDOWS:
                sel = [r for r in rows if r["ftl"] == ftl and lo <= float(r["t_s"]) <= hi]
                wr = [float(r["write_pages_per_s"]) for r in sel]
                rd = [float(r["read_pages_per_s"]) for r in sel]
                w.writerow([ftl, name, lo, hi, f"{sum(wr) / len(wr):.1f}", min(wr), max(wr),
                            f"{sum(rd) / len(rd):.1f}", min(rd), max(rd)])


if __name__ == "__main__":
    main()
