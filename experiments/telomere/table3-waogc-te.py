#!/usr/bin/env python3
"""Writes table3-waogc-te.csv: WAO-GC's admission of Table 3 on the Cosmos
board (`ftlab admit --policy waogc`, Eq. 24-26 of 000) as a function of the
erase time t_e, which the paper does not give for the board.

Rows: t_e from 1.5 ms (WAO-GC needs t_e >= t_r + t_w = 1.375 ms:
Eq. 7 of 001) to 12 ms in steps of 0.5 ms with the preset's t_r 75 us and
t_w 1300 us (also assumed: the paper prints no board timing), the edges of the
range that gives the paper's verdict (6.36/6.37 and 8.06/8.07 ms), and one row
with the only times the paper prints (its 1 TB SSD, Section 6.1.1: 0.2, 0.7
and 2.7 ms). `paper_verdict` is 1 where the admitted tasks are the paper's
(tau0-tau2, tau3-tau5 refused).

    python3 experiments/telomere/table3-waogc-te.py [OUTDIR]   # default: this folder
"""
import csv
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FTLAB = os.environ.get("FTLAB", os.path.join(ROOT, "target", "release", "ftlab"))
TASKS = os.path.join(HERE, "table3-tasks.toml")


def admit(t_r_us, t_w_us, t_e_us):
    out = subprocess.run(
        [FTLAB, "admit", TASKS, "--chip", "cosmos-openssd", "--policy", "waogc", "-f", "json",
         "--read-us", str(t_r_us), "--program-us", str(t_w_us), "--erase-us", str(t_e_us)],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else HERE
    rows = [("preset t_r, t_w", 75, 1300, te) for te in range(1500, 12001, 500)]
    rows += [("preset t_r, t_w", 75, 1300, te) for te in (6360, 6370, 8060, 8070)]
    rows.sort(key=lambda r: r[3])
    rows.append(("paper's 1 TB SSD times", 200, 700, 2700))
    with open(os.path.join(outdir, "table3-waogc-te.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["times", "t_r_us", "t_w_us", "t_e_us", "lambda", "admitted", "n_admitted",
                    "refused", "refused_by", "load", "write_pages_per_s", "paper_verdict"])
        for times, tr, tw, te in rows:
            a = admit(tr, tw, te)
            tasks = a["tasks"]
            ok = [t for t in tasks if t["admitted"]]
            no = [t for t in tasks if not t["admitted"]]
            load = max((t["throughput_load"] for t in ok), default=0.0)
            # Table 3: write pages per period and period (ms).
            rate = {"tau0": 16 / 80, "tau1": 16 / 40, "tau2": 16 / 40, "tau3": 16 / 40, "tau4": 11 / 40,
                    "tau5": 5 / 40}
            pages = round(1000 * sum(rate[t["name"]] for t in ok))
            w.writerow([times, tr, tw, te, f"{a['lambda']:.4f}", " ".join(t["name"] for t in ok), len(ok),
                        " ".join(t["name"] for t in no),
                        " ".join(sorted({t["refused_by"] for t in no})), f"{load:.4f}", pages,
                        int([t["name"] for t in ok] == ["tau0", "tau1", "tau2"])])


if __name__ == "__main__":
    main()
