#!/usr/bin/env python3
"""Per-flow response times of `ftlab mqsim` on MQSim's own files against MQSim's.

MQSim's figures are in per-flow.csv beside this script: MQSim 7ec40e3 built
with patches/all.patch and a log of every request's flow (see README.md), run
on its root ssdconfig.xml + workload.xml, on the same with
Ideal_Mapping_Table=true ("root-ideal"), and on two fast18 pairs, every
request completed. This script runs ftlab on the same files (the copies in
crates/lab/tests/data/mqsim; root-ideal a copy of the root ssdconfig.xml with
that one value changed) and prints, per scenario and flow, the requests
served, the mean and the p99 response time of both, and their ratio; a flow
whose mean and p99 are both within 15% of MQSim's is marked "ok".

Like is compared with like: the root file keeps MQSim's cached mapping
table (Ideal_Mapping_Table=false), and the import models it; root-ideal
and the fast18 files keep the whole map in RAM (Ideal_Mapping_Table=true),
and so does the import.

    python3 experiments/mqsim-compare/mqsim/flows.py target/release/ftlab
    python3 experiments/mqsim-compare/mqsim/flows.py target/release/ftlab --files root --set device.data_cache.queue_writebacks=false

Percentiles: MQSim's are nearest-rank over its log; ftlab's come from its
HDR histograms (3 significant digits). Exit status 0 whatever the ratios (it
is a measurement, not a test); 2 on bad input.
"""

import argparse
import csv
import json
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
DATA = HERE.parents[2] / "crates" / "lab" / "tests" / "data" / "mqsim"

# name in per-flow.csv -> (folder under DATA, ssdconfig, workload)
FILES = {
    "root": (".", "ssdconfig.xml", "workload.xml"),
    "root-ideal": (".", "ssdconfig.xml", "workload.xml"),
    "fast18/queue-fetch-size=16": (
        "fast18/queue-fetch-size",
        "ssdconfig-queue-fetch-size=16.xml",
        "workload-queue-fetch-size-flow-1-flow-2.xml",
    ),
    "fast18/backend-contention": (
        "fast18/backend-contention",
        "ssdconfig-backend-contention.xml",
        "workload-backend-contention-flow-1-flow-2.xml",
    ),
}


def reference():
    rows = {}
    with open(HERE / "per-flow.csv", newline="") as f:
        for r in csv.DictReader(f):
            rows[(r["files"], int(r["scenario"]), int(r["flow"]), r["op"])] = r
    return rows


# File pairs whose ssdconfig is the named one with Ideal_Mapping_Table=true.
IDEAL = {"root-ideal"}


def run_ftlab(ftlab, name, sets):
    folder, ssd, workload = FILES[name]
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "reports.json"
        if name in IDEAL:
            text = (DATA / folder / ssd).read_text()
            ideal = text.replace("<Ideal_Mapping_Table>false</Ideal_Mapping_Table>", "<Ideal_Mapping_Table>true</Ideal_Mapping_Table>")
            if ideal == text:
                sys.exit(f"error: {ssd} has no Ideal_Mapping_Table=false to turn on")
            ssd = pathlib.Path(tmp) / ("ideal-" + ssd)
            ssd.write_text(ideal)
        cmd = [ftlab, "mqsim", "-q", "--ssd", str(ssd), "--workload", workload, "-f", "json", "-o", str(out)]
        if sets:
            # Each scenario's config is written, then run again with the overrides.
            cmd += ["--out-dir", tmp]
            subprocess.run(cmd, cwd=DATA / folder, check=True, stderr=subprocess.DEVNULL)
            reports = []
            for toml in sorted(pathlib.Path(tmp).glob("scenario-*.toml"), key=lambda p: int(p.stem.split("-")[1])):
                one = pathlib.Path(tmp) / (toml.stem + "-set.json")
                run = [ftlab, "run", "-q", str(toml), "-f", "json", "-o", str(one)]
                for s in sets:
                    run += ["--set", s]
                subprocess.run(run, cwd=DATA / folder, check=True, stderr=subprocess.DEVNULL)
                r = json.loads(one.read_text())
                reports.append(r[0] if isinstance(r, list) else r)
            return reports
        subprocess.run(cmd, cwd=DATA / folder, check=True, stderr=subprocess.DEVNULL)
        r = json.loads(out.read_text())
        return r if isinstance(r, list) else [r]


def ratio(a, b):
    return b / a if a else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ftlab", help="the ftlab binary")
    ap.add_argument("--files", choices=sorted(FILES), action="append", help="only these file pairs (repeatable)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key (repeatable)")
    args = ap.parse_args()
    if not pathlib.Path(args.ftlab).is_file():
        print(f"error: {args.ftlab}: no such ftlab binary; build it with cargo build --release -p ftlab-cli", file=sys.stderr)
        return 2
    ref = reference()
    ftlab = str(pathlib.Path(args.ftlab).resolve())
    print("| files | scenario, flow | op | requests MQSim / ftlab | mean us MQSim / ftlab (ratio) | p99 us MQSim / ftlab (ratio) | within 15% |")
    print("|---|---|---|---|---|---|---|")
    ok = total = 0
    for name in args.files or list(FILES):
        for s, report in enumerate(run_ftlab(ftlab, name, args.set), start=1):
            for i, flow in enumerate(report["flows"]):
                ops = ["all"]
                if (name, s, i, "read") in ref and (name, s, i, "write") in ref:
                    ops += ["read", "write"]
                for op in ops:
                    m = ref.get((name, s, i, op))
                    if m is None:
                        continue
                    f = flow["response_us" if op == "all" else f"{op}_us"]
                    rm, rp = ratio(float(m["mean_us"]), f["mean"]), ratio(float(m["p99_us"]), f["p99"])
                    good = abs(rm - 1) <= 0.15 and abs(rp - 1) <= 0.15
                    if op == "all":
                        total += 1
                        ok += good
                    print(
                        f"| {name} | {s}, {i + 1} | {op} | {int(m['requests']):,} / {f['count']:,} "
                        f"| {float(m['mean_us']):,.1f} / {f['mean']:,.1f} ({rm:.2f}) "
                        f"| {float(m['p99_us']):,.1f} / {f['p99']:,.1f} ({rp:.2f}) | {'ok' if good else ''} |"
                    )
    print(f"\n{ok} of {total} flows within 15% of MQSim in both mean and p99")
    return 0


if __name__ == "__main__":
    sys.exit(main())
