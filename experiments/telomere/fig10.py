#!/usr/bin/env python3
"""Figure 10 of the Telomere paper: the CDF of block RBER when 2% of the blocks
are retired, for Telomere with health binning (HB), RBER balancing (RBER) and a
FIFO free list (noWL), and the page-map FTL with RBER balancing and FIFO.

Writes fig10-rber.csv (per run: RBER quantiles, retired fraction, host pages
written before the stop) and fig10-cdf.csv (the report's rber_cdf points), and
fig10-cdf.svg when matplotlib is installed.

    python3 experiments/telomere/fig10.py        (from the repository root)
"""
import csv
import json
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FTLAB = shlex.split(os.environ.get("FTLAB", "cargo run --release --quiet -p ftlab-cli --"))
# The page-map FTL keeps 12 free blocks: with its default 2 the free list is too
# short for any order to matter.
PAGEMAP = ["ftl.kind=\"pagemap\"", "ftl.over_provisioning=0.1", "ftl.gc_free_blocks=12"]
RUNS = [
    ("Telomere HB", ["ftl.free_order=\"health-bin\""]),
    ("Telomere RBER", ["ftl.free_order=\"rber\""]),
    ("Telomere noWL", ["ftl.free_order=\"fifo\""]),
    ("Pagemap RBER", PAGEMAP + ["ftl.free_order=\"rber\""]),
    ("Pagemap noWL", PAGEMAP + ["ftl.free_order=\"fifo\""]),
]


def run(sets):
    args = FTLAB + ["run", os.path.join(HERE, "wear.toml"), "-f", "json"]
    for s in sets:
        args += ["--set", s]
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)


def main():
    reports = [(name, run(sets)) for name, sets in RUNS]
    with open(os.path.join(HERE, "fig10-rber.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["run", "rber_p50", "rber_p99", "rber_max", "retired_fraction", "stopped_at_retired_fraction",
                    "host_pages_written", "erases", "gc_page_copies"])
        for name, r in reports:
            w.writerow([name, r["rber"]["p50"], r["rber"]["p99"], r["rber"]["max"], r["retired_fraction"],
                        r["stopped_at_retired_fraction"], r["host_pages_written"], r["erases"], r["gc_page_copies"]])
            print(f"{name:14} p50 {r['rber']['p50']:.3e} p99 {r['rber']['p99']:.3e} max {r['rber']['max']:.3e} "
                  f"retired {r['retired_fraction']:.4f} host pages {r['host_pages_written']}")
    with open(os.path.join(HERE, "fig10-cdf.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["run", "rber", "fraction"])
        for name, r in reports:
            for x, y in r["rber_cdf"]:
                w.writerow([name, x, y])
    try:
        import matplotlib

        matplotlib.use("svg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install matplotlib): CSVs written, no plot", file=sys.stderr)
        return
    plt.figure(figsize=(8, 4.5))
    for name, r in reports:
        xs, ys = zip(*r["rber_cdf"])
        plt.step(xs, ys, where="post", label=name)
    plt.xscale("log")
    plt.xlim(1e-4, 1e-1)
    plt.xlabel("block RBER at the end of the run")
    plt.ylabel("fraction of blocks")
    plt.title("Figure 10: RBER CDF when 2% of the blocks are retired")
    plt.legend()
    plt.tight_layout()
    plt.savefig(os.path.join(HERE, "fig10-cdf.svg"))
    plt.close()


if __name__ == "__main__":
    main()
