#!/usr/bin/env python3
"""Writes table3-chips.csv: Telomere SiP, SharP and the page-map FTL on the
Table 3 task set (table3.toml) with the board's 16 chips (4 channels x 4 ways,
the preset; every task striped over 16 chips) and with 32 (4 x 8, striped over
32), which the paper does not rule out (it gives 21 blocks per chip, not the
number of chips). Per run: the tasks refused, when the first block is erased
(the device is first full), write and read pages per second before the reads
arrive (10-96 s) and after (100-160 s), and the deadline misses.

    python3 experiments/telomere/table3-chips.py [OUTDIR]   # default: this folder
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FTLAB = os.environ.get("FTLAB", os.path.join(ROOT, "target", "release", "ftlab"))


def run(ftl, ways):
    with open(os.path.join(HERE, "table3.toml")) as f:
        config = f.read().replace("granularity = 16", f"granularity = {4 * ways}")
    ftl_set = 'ftl={kind="pagemap"}' if ftl == "pagemap" else f"ftl.kind={ftl}"
    with tempfile.TemporaryDirectory() as tmp:
        toml, out = os.path.join(tmp, "table3.toml"), os.path.join(tmp, "run.json")
        with open(toml, "w") as f:
            f.write(config)
        subprocess.run([FTLAB, "run", toml, "--set", ftl_set, "--set", f"device.ways={ways}", "-f", "json", "-o", out],
                       check=True)
        with open(out) as f:
            return json.load(f)


def stats(xs):
    return f"{sum(xs) / len(xs):.1f}", min(xs), max(xs)


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else HERE
    with open(os.path.join(outdir, "table3-chips.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["ftl", "chips", "granularity", "physical_pages", "refused", "first_erase_s", "write_before_mean", "write_before_min",
                    "write_before_max", "write_after_mean", "write_after_min", "write_after_max", "read_after_mean",
                    "read_after_min", "read_after_max", "deadline_misses"])
        for ftl, ways in [(f, w) for f in ("telomere-sip", "telomere-sharp", "pagemap") for w in (4, 8)]:
            d = run(ftl, ways)
            tp = d["throughput"]
            # Interval k covers (k, k + 1] s; t_s = k + 1 as in table3-throughput.csv.
            sec = lambda key, lo, hi: [x for k, x in enumerate(tp[key]) if lo <= k + 1 <= hi]
            first = next((k + 1 for k, e in enumerate(tp["erases"]) if e > 0), "")
            refused = " ".join(t["name"] for t in d["tasks"] if not t.get("admitted"))
            w.writerow([ftl, 4 * ways, 4 * ways, d["physical_pages"], refused, first, *stats(sec("write_pages", 10, 96)),
                        *stats(sec("write_pages", 100, 160)), *stats(sec("read_pages", 100, 160)),
                        d["deadline_misses"]])


if __name__ == "__main__":
    main()
