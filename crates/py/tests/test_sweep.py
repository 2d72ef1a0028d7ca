"""ftlab.sweep: local threads, Ray, and the CLI's CSV columns."""

import os
import pathlib
import shutil
import subprocess

import pandas as pd
import pytest

import ftlab

ROOT = pathlib.Path(__file__).resolve().parents[3]
GRID = {"ftl.kind": ["pagemap", "dftl"], "seed": [1, 2]}


def test_local_sweep_gives_one_row_per_run(small):
    df = ftlab.sweep(small, GRID, workers=2)
    assert list(df["run"]) == [0, 1, 2, 3]
    assert list(df["ftl.kind"]) == ["pagemap", "pagemap", "dftl", "dftl"]
    assert list(df["seed"]) == [1, 2, 1, 2]
    assert df["error"].isna().all()
    assert (df["waf"] >= 1.0).all()
    assert (df["requests"] == 2000).all()
    # A row equals the run of its point.
    one = ftlab.run(small.replace(**{"ftl.kind": "dftl", "seed": 2}), progress=False).scalars()
    row = df.iloc[3]
    for column in ("waf", "erases", "write_us.p99", "flash_pages_programmed"):
        assert row[column] == one[column], column


def test_a_bad_point_fails_before_anything_runs(small):
    with pytest.raises(ftlab.ConfigError, match="grid point 1 of 2"):
        ftlab.sweep(small, {"ftl.kind": ["pagemap", "nosuch"]})
    with pytest.raises(ftlab.ConfigError, match="list of values"):
        ftlab.sweep(small, {"seed": 3})
    with pytest.raises(ValueError, match="executor"):
        ftlab.sweep(small, GRID, executor="nosuch")
    with pytest.raises(ValueError, match="concurrent.futures.Executor"):
        ftlab.sweep(small, GRID, executor=object())


def _ftlab_binary():
    for candidate in (os.environ.get("FTLAB_BIN"), ROOT / "target" / "release" / "ftlab", ROOT / "target" / "debug" / "ftlab"):
        if candidate and pathlib.Path(candidate).is_file():
            return str(candidate)
    return shutil.which("ftlab")


def test_columns_equal_the_cli_csv_columns(small, tmp_path):
    binary = _ftlab_binary()
    if binary is None:
        pytest.skip("the ftlab binary is not built (cargo build -p ftlab-cli, or set FTLAB_BIN)")
    sweep_file = tmp_path / "sweep.toml"
    base = "\n".join(
        line.replace("[", "[base.", 1) if line.startswith("[") else line for line in small.to_toml().splitlines()
    )
    # Top-level keys of the base (seed) go under [base] before its subtables.
    sweep_file.write_text(
        "[base]\n" + base + '\n[grid]\n"ftl.kind" = ["pagemap", "dftl"]\nseed = [1, 2]\n'
    )
    out = tmp_path / "rows.csv"
    subprocess.run([binary, "sweep", str(sweep_file), "-o", str(out)], check=True, capture_output=True)
    # ftlab sweep writes rows as runs finish, so their order varies with load.
    cli = pd.read_csv(out).sort_values("run", ignore_index=True)
    df = ftlab.sweep(small, GRID).sort_values("run", ignore_index=True)
    assert list(df.columns) == list(cli.columns)
    for column in ("run", "ftl.kind", "seed", "waf", "erases", "requests"):
        assert list(df[column]) == list(cli[column]), column


def test_ray_sweep_matches_the_local_one(small):
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install ray) : the Ray executor is not tested")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    try:
        remote = ftlab.sweep(small, GRID, executor="ray", workers=2)
    finally:
        ray.shutdown()
    local = ftlab.sweep(small, GRID)
    pd.testing.assert_frame_equal(remote, local)


def test_any_concurrent_futures_executor(small, tmp_path):
    """A ThreadPoolExecutor and a ProcessPoolExecutor (spawned: fresh
    interpreters) give the local sweep's rows; with ship_traces the trace's
    bytes travel with each call, so a worker that cannot see the file still
    runs it, and without them every row fails on the missing file."""
    import concurrent.futures as cf
    import multiprocessing

    local = ftlab.sweep(small, GRID)
    with cf.ThreadPoolExecutor(2) as pool:
        pd.testing.assert_frame_equal(ftlab.sweep(small, GRID, executor=pool), local)
    with cf.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        pd.testing.assert_frame_equal(ftlab.sweep(small, GRID, executor=pool, workers=1), local)

    trace = tmp_path / "t.csv"
    shutil.copy(ROOT / "crates" / "workload" / "tests" / "fixtures" / "msr.csv", trace)
    traced = small.replace(**{"workload.trace": str(trace), "workload.trace_format": "msr", "workload.generator": None})
    grid = {"seed": [1, 2]}
    expected = ftlab.sweep(traced, grid)
    assert expected["error"].isna().all()
    # A process whose workers cannot see the trace: it is renamed away after
    # the plan reads the points (the rows must still name the original path).
    with cf.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:

        class Hiding:
            """Submits to the pool with the trace moved away while it runs."""

            def submit(self, fn, *args):
                if trace.exists():
                    trace.rename(tmp_path / "hidden.csv")
                return pool.submit(fn, *args)

        shipped = ftlab.sweep(traced, grid, executor=Hiding(), ship_traces=True)
        pd.testing.assert_frame_equal(shipped, expected)
        assert not trace.exists()
        missing = ftlab.sweep(traced.replace(), grid, executor=pool)
        assert missing["error"].str.contains("t.csv").all(), missing["error"]


def test_ctrl_c_stops_a_local_sweep_with_its_runs_under_way(small):
    """Ctrl-C stops the runs under way at their next request (not when they
    finish) and the points not started; the sweep raises KeyboardInterrupt and
    the next sweep runs normally."""
    import signal
    import threading
    import time

    # Four runs of 50 million requests each: minutes if they ran to the end.
    cfg = small.replace(**{"workload.generator.requests": 50_000_000})
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            ftlab.sweep(cfg, GRID, workers=2)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - started < 10
    df = ftlab.sweep(small, GRID, workers=2)
    assert df["error"].isna().all() and (df["requests"] == 2000).all()
