"""ftlab.sweep on a Ray cluster of separate node processes: a head and a worker
node started with ``ray start`` in their own folders, a driver in a third, and
a trace the nodes cannot read at the driver's path. The trace travels with the
tasks; the rows equal the local sweep's."""

import os
import shutil
import socket
import subprocess
import sys

import pytest

import ftlab

TRACE_CONFIG = """
seed = 3
[device]
chip = "small-slc"
blocks_per_plane = 64
[workload]
trace = "private/hm0.csv"
trace_format = "msr"
[precondition]
fill = true
"""


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ray_cli():
    ray_bin = os.path.join(os.path.dirname(sys.executable), "ray")
    return ray_bin if os.path.exists(ray_bin) else shutil.which("ray")


@pytest.fixture
def cluster(tmp_path):
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install ray): the cluster test is skipped")
    cli = _ray_cli()
    if cli is None:
        pytest.skip("the ray command is not installed")
    env = dict(os.environ, RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")
    port = _free_port()
    address = f"127.0.0.1:{port}"
    head_dir, worker_dir = tmp_path / "head", tmp_path / "worker"
    head_dir.mkdir()
    worker_dir.mkdir()
    common = ["--num-cpus=1", "--object-store-memory=100000000", "--disable-usage-stats"]
    started = []
    try:
        subprocess.run(
            [cli, "start", "--head", f"--port={port}", "--include-dashboard=false", *common],
            cwd=head_dir, env=env, check=True, capture_output=True, timeout=180,
        )
        started.append(head_dir)
        subprocess.run(
            [cli, "start", f"--address={address}", *common],
            cwd=worker_dir, env=env, check=True, capture_output=True, timeout=180,
        )
        started.append(worker_dir)
        os.environ["RAY_AUTH_MODE"] = "disabled"
        ray.init(address=address, log_to_driver=False)
        yield ray
    finally:
        if ray.is_initialized():
            ray.shutdown()
        if started:
            subprocess.run([cli, "stop", "--force"], env=env, capture_output=True, timeout=120)


def test_a_two_node_sweep_ships_its_trace_and_equals_the_local_one(cluster, tmp_path, fixtures, monkeypatch):
    ray = cluster
    alive = [n for n in ray.nodes() if n["Alive"]]
    assert len(alive) == 2, alive
    # The driver's folder holds the trace under a relative path: the nodes,
    # started in other folders, do not see it there.
    driver = tmp_path / "driver"
    (driver / "private").mkdir(parents=True)
    shutil.copy(fixtures / "msr.csv", driver / "private" / "hm0.csv")
    monkeypatch.chdir(driver)
    base = ftlab.Config.from_toml(TRACE_CONFIG)
    grid = {"ftl.kind": ["pagemap", "dftl"], "seed": [1, 2]}

    local = ftlab.sweep(base, grid)
    assert local["error"].isna().all(), list(local["error"])
    remote = ftlab.sweep(base, grid, executor="ray", workers=4)
    import pandas as pd

    pd.testing.assert_frame_equal(remote, local)
    assert (remote["workload"].str.contains("private/hm0.csv")).all(), "rows name the original path"

    # Without shipping, the nodes cannot read it: the check above is not
    # passing by a shared folder.
    unshipped = ftlab.sweep(base, grid, executor="ray", workers=4, ship_traces=False)
    assert unshipped["error"].notna().all(), list(unshipped["error"])
    assert unshipped["error"].str.contains("hm0.csv").all()
