"""ftlab.presets, Config and run: the report, its DataFrames, determinism."""

import json
import pickle

import pandas as pd
import pytest

import ftlab


def test_presets_list_every_group():
    p = ftlab.presets()
    assert set(p) == {"chips", "ftls", "workloads", "formats"}
    names = {group: [item["name"] for item in items] for group, items in p.items()}
    assert "small-slc" in names["chips"]
    assert {"pagemap", "dftl", "gftl"} <= set(names["ftls"])
    assert "msr" in names["formats"]
    assert all(item["summary"] for items in p.values() for item in items)


def test_config_overrides_use_set_key_paths(small, tmp_path):
    cfg = ftlab.Config.from_toml(ftlab.Config.to_toml(small), **{"ftl.kind": "dftl", "seed": 3})
    assert cfg.get("ftl.kind") == "dftl"
    assert cfg.get("seed") == 3
    cfg.set("device.over_provisioning", 0.1)
    assert cfg.get("device.over_provisioning") == 0.1
    cfg.set("device.over_provisioning", None)
    assert cfg.get("device.over_provisioning") is None
    copy = cfg.replace(**{"workload.generator.requests": 10})
    assert copy.get("workload.generator.requests") == 10
    assert cfg.get("workload.generator.requests") == 2000
    # A file, by str or pathlib path, and pickling (what a Ray task receives).
    path = tmp_path / "run.toml"
    path.write_text(cfg.to_toml())
    assert ftlab.Config.from_toml(str(path)) == cfg
    assert ftlab.Config.from_toml(path) == cfg
    assert pickle.loads(pickle.dumps(cfg)) == cfg


def test_run_reports_every_json_field_as_attributes(small):
    report = ftlab.run(small, progress=False)
    d = report.to_dict()
    assert report.ftl == "pagemap" and report.chip == "small-slc"
    assert report.requests == 2000
    assert report.integrity == "ok"
    assert report.waf >= 1.0
    for key, value in d.items():
        attr = getattr(report, key)
        assert (attr.to_dict() if isinstance(attr, ftlab.Record) else attr) == value, key
    assert report.write_us.p99 == d["write_us"]["p99"]
    assert json.loads(report.to_json()) == d
    assert report.scalars()["write_us.p99"] == d["write_us"]["p99"]
    with pytest.raises(AttributeError, match="no field"):
        report.no_such_field


def test_report_dataframes(small):
    report = ftlab.run(small.replace(**{"metrics.interval_ms": 1.0}), progress=False)
    cdf = report.latency_cdf()
    assert list(cdf.columns) == ["op", "fraction", "latency_us"]
    writes = cdf[cdf.op == "write"]
    # One row per histogram bucket: the whole distribution, not five points.
    assert len(writes) == len(report.latency.write.bins) > 5
    assert writes.fraction.is_monotonic_increasing and writes.fraction.iloc[-1] == 1.0
    assert writes.latency_us.is_monotonic_increasing
    assert writes.latency_us.iloc[-1] == report.write_us.max
    assert "read" not in set(cdf.op)  # a write-only workload
    # The median's bucket holds the summary's p50 (fio's buckets: under 1.6%).
    at_median = writes[writes.fraction >= 0.5].latency_us.iloc[0]
    assert report.write_us.p50 <= at_median <= report.write_us.p50 * 1.016
    pct = report.latency_percentiles()
    assert list(pct.columns) == ["op", "percentile", "latency_us"]
    assert list(pct[pct.op == "write"].percentile) == [
        1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99
    ]
    assert pct[pct.op == "write"].latency_us.is_monotonic_increasing
    # An older report without buckets still gives its percentiles.
    old = ftlab.Report({k: v for k, v in report.to_dict().items() if k != "latency"})
    assert list(old.latency_cdf()[lambda d: d.op == "write"].fraction) == [0.5, 0.99, 0.999, 0.9999, 1.0]

    ts = report.timeseries()
    assert list(ts.columns) == [
        "time_s", "read_pages", "write_pages", "flash_programs", "gc_programs", "erases", "waf"
    ]
    assert ts.write_pages.sum() == report.host_pages_written
    assert ts.flash_programs.sum() == report.flash_pages_programmed
    assert ts.gc_programs.sum() == report.gc_page_copies
    assert ts.erases.sum() == report.erases
    assert ts.time_s.iloc[1] == pytest.approx(report.throughput.interval_s)

    erase = report.erase_counts()
    assert list(erase.columns) == ["erase_count", "blocks"]
    assert erase.erase_count.max() == report.erase_count.max
    assert erase.erase_count.min() == report.erase_count.min
    assert erase.blocks.sum() > 0
    assert isinstance(report.rber_distribution(), pd.DataFrame)


def test_timeseries_has_a_column_per_ftl_gauge(small):
    report = ftlab.run(
        small.replace(**{"ftl.kind": "janus", "precondition.fill": True, "metrics.interval_ms": 1.0}), progress=False
    )
    ts = report.timeseries()
    gauges = [c for c in ts.columns if c.startswith("gauge.")]
    assert "gauge.fused_blocks" in gauges and "gauge.target_fused_blocks" in gauges
    assert list(ts.columns[:7]) == [
        "time_s", "read_pages", "write_pages", "flash_programs", "gc_programs", "erases", "waf"
    ]
    assert ts["gauge.fused_blocks"].iloc[-1] == report.to_dict()["ftl_gauges"]["fused_blocks"]
    plain = ftlab.run(small.replace(**{"metrics.interval_ms": 1.0}), progress=False).timeseries()
    assert not any(c.startswith("gauge.") for c in plain.columns)


def test_same_config_twice_gives_identical_reports(small):
    cfg = small.replace(**{"ftl.kind": "dftl", "precondition.fill": True})
    first = ftlab.run(cfg, progress=False).to_dict()
    second = ftlab.run(cfg, progress=False).to_dict()
    assert first == second
    assert first["erases"] > 0


def test_progress_callable_is_called_and_can_stop_the_run(small):
    cfg = small.replace(**{"workload.generator.requests": 20000})
    calls = []
    ftlab.run(cfg, progress=lambda requests, sim_ns, measuring: calls.append((requests, sim_ns, measuring)))
    assert calls and calls[-1][0] > 0
    assert all(a[0] <= b[0] for a, b in zip(calls, calls[1:]))

    class Stop(Exception):
        pass

    def stop(*_):
        raise Stop()

    with pytest.raises(Stop):
        ftlab.run(cfg, progress=stop)


def test_run_accepts_a_path_or_toml_text(small, tmp_path):
    path = tmp_path / "run.toml"
    path.write_text(small.to_toml())
    assert ftlab.run(str(path), progress=False).to_dict() == ftlab.run(small.to_toml(), progress=False).to_dict()


def test_ctrl_c_stops_a_long_run(small):
    import os
    import signal
    import threading
    import time

    cfg = small.replace(**{"workload.generator.requests": 50_000_000})
    # Python turns SIGINT into KeyboardInterrupt only where the parent left it
    # alone (a shell's background job ignores it): install the handler here.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            ftlab.run(cfg, progress=False)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - started < 10
    # The interpreter and the package carry on.
    assert ftlab.run(small, progress=False).requests == 2000


def test_the_progress_line_stays_out_of_logs(small, capsys):
    ftlab.run(small.replace(**{"workload.generator.requests": 20000}), progress=True)
    assert capsys.readouterr().err == ""


def test_an_ftl_of_another_crate_runs_by_name(small):
    """ftlab-fifo-ftl registers its scheme where it is defined; linked into the
    module, it is listed and runs like any built-in scheme."""
    assert "fifo" in {item["name"] for item in ftlab.presets()["ftls"]}
    report = ftlab.run(small.replace(**{"ftl.kind": "fifo"}), progress=False)
    assert report.ftl == "fifo"
    assert report.integrity == "ok"


def test_a_saved_report_carries_its_provenance_and_reruns(small, tmp_path):
    """ftlab.run's report says how it was made, as `ftlab run -f json`'s does:
    saved with to_json, `ftlab rerun` runs it again and finds every field equal;
    a changed result is caught."""
    import os
    import shutil
    import subprocess

    report = ftlab.run(small, progress=False)
    p = report.provenance
    assert isinstance(p, ftlab.Provenance)
    assert p.command == "run" and p.ftlab == ftlab.__version__
    assert "seed = 7" in p.config and 'kind = "pagemap"' in p.config
    assert p.stamp is None
    assert "Provenance" in report.to_html()
    assert report.scalars()["provenance.config"] == p.config
    binary = os.environ.get("FTLAB_BIN") or shutil.which("ftlab")
    if not binary:
        pytest.skip("no ftlab binary (set FTLAB_BIN) to rerun with")
    saved = tmp_path / "r.json"
    saved.write_text(report.to_json())
    out = subprocess.run([binary, "rerun", "-q", str(saved)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "reproduced: 1 report" in out.stdout, out.stdout
    d = report.to_dict()
    d["erases"] += 1
    saved.write_text(json.dumps(d))
    out = subprocess.run([binary, "rerun", "-q", str(saved)], capture_output=True, text=True)
    assert out.returncode == 1 and "erases" in out.stderr, out.stderr


PLACED = """
seed = 3
[device]
chip = "small-slc"
blocks_per_plane = 64
[ftl]
kind = "{kind}"
{extra}
[metrics]
slowdown = false
[[flow]]
name = "random"
queue_depth = 4
stream = 0
[flow.workload.generator]
kind = "uniform"
requests = 20000
[[flow]]
name = "sequential"
queue_depth = 4
stream = 1
[flow.workload.generator]
kind = "sequential"
requests = 20000
"""


def test_an_fdp_device_reports_each_handles_waf():
    config = PLACED.format(kind="fdp", extra='handles = 2\nisolation = "persistently"')
    report = ftlab.run(ftlab.Config.from_toml(config), progress=False)
    h = report.fdp_handles()
    assert list(h.columns) == ["handle", "host_pages", "media_pages", "waf"]
    assert list(h.host_pages) == [20000, 20000]
    assert h.media_pages.sum() == report.to_dict()["ftl_gauges"]["fdp_media_pages"]
    # The sequential flow's handle copies less than the random one's.
    assert h.waf[1] < h.waf[0]
    ts = report.timeseries()
    assert ts["gauge.fdp_host_pages_h1"].iloc[-1] == 20000
    assert report.zones().empty
    # Garbage collection ran: the newest events of the log are media
    # reallocations, each with the pages it moved, oldest first.
    e = report.fdp_events()
    assert list(e.columns) == ["time_us", "type", "name", "pid", "group", "pages_moved"]
    assert 0 < len(e) <= 64
    assert set(e.name) == {"media reallocated"}
    assert (e.pages_moved > 0).all()
    assert e.time_us.is_monotonic_increasing
    assert set(e.pid) <= {0, 1}


def test_a_zoned_device_reports_its_zones():
    report = ftlab.run(ftlab.Config.from_toml(PLACED.format(kind="zns-host", extra="streams = 2")), progress=False)
    z = report.zones()
    assert list(z.columns) == ["zone", "state", "written_pages", "valid_pages", "stream"]
    assert set(z.state) <= {"empty", "implicitly-opened", "closed", "full"}
    assert (z.state == "full").sum() == report.to_dict()["ftl_gauges"]["zones_full"]
    assert (z.valid_pages <= z.written_pages).all()
    assert z.valid_pages.sum() <= 40000
    assert set(z.stream) == {0, 1}
    assert report.fdp_handles().empty
    assert report.fdp_events().empty
