"""The overhead of ftlab.run over the ftlab command on the same configuration.

    python crates/py/bench/overhead.py [path/to/release/ftlab] [repeats]

Runs one configuration (a filled small SLC device, then random writes and
reads, a few seconds of work) with the release `ftlab run CONFIG -f json -q`
and with `ftlab.run(config, progress=...)` in this process, alternating, and
prints the median wall and CPU times and their ratios (CPU time is the steadier
one on a shared machine). Both sides include writing the JSON report; the
command's side also includes starting a process. Benchmarks time things; tests
do not.
"""

import pathlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import ftlab

ROOT = pathlib.Path(__file__).resolve().parents[3]
CONFIG = """
seed = 3
[device]
chip = "small-slc"
blocks_per_plane = 256
[ftl]
kind = "dftl"
[workload.generator]
kind = "uniform"
requests = 200000
read_fraction = 0.3
[precondition]
fill = true
"""


def main() -> None:
    binary = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "target" / "release" / "ftlab")
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    with tempfile.TemporaryDirectory() as d:
        path = pathlib.Path(d) / "run.toml"
        path.write_text(CONFIG)
        cfg = ftlab.Config.from_toml(str(path))
        cli, py, py_progress = [], [], []
        cli_cpu, py_cpu = [], []
        # One of each first, untimed (page cache, CPU frequency).
        subprocess.run([binary, "run", str(path), "-f", "json", "-q"], check=True, capture_output=True)
        ftlab.run(cfg, progress=False)
        for _ in range(repeats):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            out = subprocess.run([binary, "run", str(path), "-f", "json", "-q"], check=True, capture_output=True)
            cli.append(time.perf_counter() - t)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cli_cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            t, c = time.perf_counter(), time.process_time()
            report = ftlab.run(cfg, progress=False)
            py.append(time.perf_counter() - t)
            py_cpu.append(time.process_time() - c)
            calls = []
            t = time.perf_counter()
            ftlab.run(cfg, progress=lambda *a: calls.append(a))
            py_progress.append(time.perf_counter() - t)
        assert ftlab.Report.from_json(out.stdout.decode()).to_dict() == report.to_dict(), "the two reports differ"
    c, p, q = statistics.median(cli), statistics.median(py), statistics.median(py_progress)
    print(f"requests: {report.requests} measured, {report.host_pages_written} pages written, {repeats} repeats")
    print(f"ftlab run (release binary): median {c:.3f} s  (all: {', '.join(f'{x:.3f}' for x in cli)})")
    print(f"ftlab.run, progress=False:  median {p:.3f} s  (all: {', '.join(f'{x:.3f}' for x in py)})")
    print(f"ftlab.run, progress=fn:     median {q:.3f} s  ({len(calls)} progress calls a run)")
    cc, pc = statistics.median(cli_cpu), statistics.median(py_cpu)
    print(f"CPU time, median: ftlab run {cc:.3f} s, ftlab.run {pc:.3f} s")
    print(f"ratio python/cli: wall {p / c:.3f} (progress=False), {q / c:.3f} (a progress callable); CPU {pc / cc:.3f}")


if __name__ == "__main__":
    main()
