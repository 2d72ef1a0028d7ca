#!/usr/bin/env python3
"""Figures 13-14 and Table 3 of the Telomere paper, simulated.

Runs table3.toml through Telomere SiP, Telomere SharP, WAO-GC and the page-map
FTL, writes table3-admission.csv (which tasks each admits, deadline misses,
copies) and table3-throughput.csv (write and read pages per second over time),
and, when matplotlib is installed, fig13-write.svg and fig14-read.svg.

    python3 experiments/telomere/table3.py        (from the repository root)
"""
import csv
import json
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FTLAB = shlex.split(os.environ.get("FTLAB", "cargo run --release --quiet -p ftlab-cli --"))
FTLS = ["telomere-sip", "telomere-sharp", "waogc", "pagemap"]


def ftlab(args):
    return subprocess.run(FTLAB + args, check=True, capture_output=True, text=True).stdout


def config(kind, refused=()):
    """table3.toml for the FTL `kind`, without the tasks in `refused`. Only
    Telomere has a default pool to keep to one chip (`pool_dies`)."""
    text = open(os.path.join(HERE, "table3.toml")).read()
    if not kind.startswith("telomere"):
        text = text.replace('kind = "telomere-sharp"\npool_dies = 1', 'kind = "telomere-sharp"')
    head, *tasks = text.split("[[workload.task]]")
    kept = [t for t in tasks if not any(f'name = "{n}"' in t for n in refused)]
    path = os.path.join(HERE, "out", f"table3-{kind}.toml")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(head + "".join("[[workload.task]]" + t for t in kept))
    return path


def waogc_refusals():
    """The tasks WAO-GC's admission test (Eq. 24-26, `ftlab admit --policy
    waogc`) refuses on the same device: the waogc FTL has no admission control of
    its own, so the host applies it at open time. The FTL keeps its GC reserve
    and an open block per chip (32 blocks) out of its logical space, so admission
    sees the other 304 blocks."""
    verdict = json.loads(ftlab(["admit", os.path.join(HERE, "table3-tasks.toml"), "--chip", "cosmos-openssd",
                                "--blocks", str(16 * 21 - 32), "--policy", "waogc", "-f", "json"]))
    return {t["name"]: t["refused_by"] for t in verdict["tasks"] if not t["admitted"]}


def run(kind):
    refused = waogc_refusals() if kind == "waogc" else {}
    path = config(kind, refused)
    report = json.loads(ftlab(["run", path, "--set", f"ftl.kind=\"{kind}\"", "-f", "json"]))
    names = [t["name"] for t in report["tasks"]]
    for name, test in refused.items():
        report["tasks"].insert(int(name[3:]) if name[3:].isdigit() else len(names),
                               {"name": name, "admitted": False, "refused_by": f"{test} (ftlab admit --policy waogc)",
                                "jobs": 0, "deadline_misses": 0, "worst_response_us": 0.0})
    return report


def main():
    reports = {kind: run(kind) for kind in FTLS}
    with open(os.path.join(HERE, "table3-admission.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["ftl", "task", "admitted", "refused_by", "jobs", "deadline_misses", "worst_response_us",
                    "gc_page_copies", "waf", "expired_reads", "bound_violations", "max_read_block_us"])
        for kind, r in reports.items():
            for t in r["tasks"]:
                w.writerow([kind, t["name"], t["admitted"], t["refused_by"] or "", t["jobs"], t["deadline_misses"],
                            t["worst_response_us"], r["gc_page_copies"], r["waf"], r["expired_reads"],
                            r["bound_violations"], r.get("max_read_block_us", "")])
    with open(os.path.join(HERE, "table3-throughput.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["ftl", "t_s", "write_pages_per_s", "read_pages_per_s"])
        for kind, r in reports.items():
            s = r["throughput"]
            dt = s["interval_s"]
            for i, (wp, rp) in enumerate(zip(s["write_pages"], s["read_pages"])):
                w.writerow([kind, round((i + 1) * dt, 6), wp / dt, rp / dt])
    for kind, r in reports.items():
        admitted = [t["name"] for t in r["tasks"] if t["admitted"]]
        print(f"{kind:15} admits {' '.join(admitted):32} misses {r['deadline_misses']:6} "
              f"copies {r['gc_page_copies']:8} waf {r['waf']:.3f} bound violations {r['bound_violations']} "
              f"max read block {r.get('max_read_block_us')} us")
    try:
        import matplotlib

        matplotlib.use("svg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install matplotlib): CSVs written, no plots", file=sys.stderr)
        return
    for key, name, title in [("write_pages", "fig13-write.svg", "Figure 13: write throughput, Table 3 task set"),
                             ("read_pages", "fig14-read.svg", "Figure 14: read throughput, Table 3 task set")]:
        plt.figure(figsize=(9, 4.5))
        for kind, r in reports.items():
            s = r["throughput"]
            dt = s["interval_s"]
            plt.plot([(i + 1) * dt for i in range(len(s[key]))], [v / dt for v in s[key]], label=kind)
        plt.xlabel("time (s)")
        plt.ylabel("pages per second")
        plt.title(title)
        plt.legend()
        plt.tight_layout()
        plt.savefig(os.path.join(HERE, name))
        plt.close()


if __name__ == "__main__":
    main()
