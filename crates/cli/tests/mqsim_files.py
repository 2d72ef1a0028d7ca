#!/usr/bin/env python3
"""MQSim's own files run to completion under `ftlab mqsim`.

Runs every pair of MQSim's root files and of each `fast18/` folder (every
ssdconfig against every workload file of its folder; copies with their licence
in crates/lab/tests/data/mqsim) at full size, each under a wall-clock limit,
and checks that each one ends: exit status 0 (the one workload MQSim ships with
git merge-conflict markers: status 2 and the error naming its line), every
scenario's report written, its integrity "ok", every flow served requests, and
a run bounded by simulated time reached its stop time. A run that loops (a
flow whose requests take no time never reaches its stop time) hits the limit
and fails the check.

    python3 crates/cli/tests/mqsim_files.py [FTLAB] [--jobs N] [--limit SECONDS]

FTLAB defaults to target/release/ftlab. Exits 1 naming each pair that failed.
"""
import argparse
import concurrent.futures
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
DATA = HERE.parent.parent / "lab" / "tests" / "data" / "mqsim"
BROKEN = "fast18/backend-contention/workload-backend-contention-flow-1.xml"


def pairs():
    out = [("ssdconfig.xml", "workload.xml")]
    for folder in sorted((DATA / "fast18").iterdir()):
        if not folder.is_dir():
            continue
        ssds = sorted(p for p in folder.glob("ssdconfig*.xml"))
        workloads = sorted(p for p in folder.glob("workload*.xml"))
        for s in ssds:
            for w in workloads:
                out.append((str(s.relative_to(DATA)), str(w.relative_to(DATA))))
    return out


def stop_seconds(toml_text):
    """The largest flow stop time of a written scenario config, in s (None: none)."""
    stops = [float(m) / 1000.0 for m in re.findall(r"^stop_ms = ([0-9.e+]+)$", toml_text, re.M)]
    return max(stops) if stops else None


def check(ftlab, ssd, workload, limit):
    with tempfile.TemporaryDirectory() as out:
        start = time.monotonic()
        try:
            p = subprocess.run(
                [ftlab, "mqsim", "-q", "--ssd", ssd, "--workload", workload, "--out-dir", out],
                cwd=DATA, capture_output=True, text=True, timeout=limit,
            )
        except subprocess.TimeoutExpired:
            return f"did not end within {limit} s (a flow that never reaches its stop time?)"
        wall = time.monotonic() - start
        if workload == BROKEN:
            if p.returncode == 2 and ":69" in p.stderr and "merge-conflict" in p.stderr:
                return None, wall, "refused (merge-conflict markers, line 69)"
            return f"expected the merge-conflict error (status 2), got status {p.returncode}: {p.stderr[-400:]}"
        if p.returncode != 0:
            return f"exit status {p.returncode}: {p.stderr[-600:]}"
        reports = sorted(pathlib.Path(out).glob("scenario-*.json"))
        if not reports:
            return "no scenario report written"
        summary = []
        for r in reports:
            j = json.loads(r.read_text())
            name = r.stem
            if j.get("error"):
                return f"{name}: stopped with error {j['error']}"
            if j.get("integrity") != "ok":
                return f"{name}: integrity {j.get('integrity')!r}"
            flows = j.get("flows") or []
            if not flows or any(f["requests"] == 0 for f in flows):
                return f"{name}: a flow served no request: {[(f['name'], f['requests']) for f in flows]}"
            stop = stop_seconds((pathlib.Path(out) / f"{name}.toml").read_text())
            if stop is not None and j["sim_seconds"] < 0.99 * stop:
                return f"{name}: ended at {j['sim_seconds']:.3f} s of simulated time, before its stop time {stop:.3f} s"
            summary.append(f"{name} {j['requests']} requests in {j['sim_seconds']:.2f} s")
        return None, wall, "; ".join(summary)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ftlab", nargs="?", default="target/release/ftlab")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--limit", type=float, default=900.0, help="wall-clock seconds a pair may take")
    args = ap.parse_args()
    ftlab = str(pathlib.Path(args.ftlab).resolve())
    if not os.access(ftlab, os.X_OK):
        sys.exit(f"error: {args.ftlab} is not an ftlab binary; build it (cargo build --release -p ftlab-cli) or name it")
    todo = pairs()
    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(check, ftlab, s, w, args.limit): (s, w) for s, w in todo}
        for fut in concurrent.futures.as_completed(futures):
            s, w = futures[fut]
            r = fut.result()
            if isinstance(r, str):
                failed.append((s, w, r))
                print(f"FAIL     {s} + {w}: {r}", flush=True)
            else:
                _, wall, what = r
                print(f"ok       {s} + {w} ({wall:.0f} s): {what}", flush=True)
    if failed:
        print(f"{len(failed)} of {len(todo)} MQSim file pairs failed", file=sys.stderr)
        sys.exit(1)
    print(f"all {len(todo)} MQSim file pairs ran to completion")


if __name__ == "__main__":
    main()
