"""Report fields are typed: the nested objects come back as their classes
(generated from the report's JSON Schema, as the stubs are), a type checker
sees each field's type and rejects a misspelt one, and the stubs agree with
the runtime (``mypy.stubtest``)."""

import importlib.util
import subprocess
import sys
import textwrap

import pytest

import ftlab


def test_nested_objects_are_typed_records(small):
    r = ftlab.run(small, progress=False)
    assert isinstance(r.read_us, ftlab.LatencySummary)
    assert isinstance(r["write_us"], ftlab.LatencySummary)
    assert isinstance(r.latency.write, ftlab.LatencyDistribution)
    assert isinstance(r.flash_ops.programs, ftlab.PerPurpose)
    assert isinstance(r.die_time.per_request, ftlab.PeriodSplit)
    assert r.write_us.count == r.to_dict()["write_us"]["count"] > 0
    # A field the JSON leaves out (no [device.energy], no flows) is None; a
    # name that is no field still raises, naming the fields there are.
    assert "energy" not in r and r.energy is None
    assert r.flows is None
    with pytest.raises(AttributeError, match="no field 'wafx'"):
        r.wafx
    with pytest.raises(AttributeError, match="no field 'p98'"):
        r.read_us.p98


def test_arrays_of_objects_hold_their_class():
    r = ftlab.Report.from_json(
        '{"ftl": "pagemap", "tasks": [{"name": "t1", "jobs": 3}], "flows": [{"name": "f", "read_us": {"count": 1}}]}'
    )
    assert isinstance(r.tasks[0], ftlab.TaskReport) and r.tasks[0].jobs == 3
    assert isinstance(r.flows[0], ftlab.FlowReport)
    assert isinstance(r.flows[0].read_us, ftlab.LatencySummary)
    # Arrays of numbers stay lists; maps are plain records.
    r2 = ftlab.Report.from_json('{"rber_cdf": [[1e-5, 0.5]], "ftl_gauges": {"x": 1.0}}')
    assert r2.rber_cdf == [[1e-5, 0.5]]
    assert r2.ftl_gauges["x"] == 1.0


needs_mypy = pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")


@needs_mypy
def test_stubs_agree_with_the_runtime():
    out = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "ftlab"], capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stdout + out.stderr


@needs_mypy
def test_a_type_checker_sees_the_fields(tmp_path):
    src = tmp_path / "use.py"
    src.write_text(
        textwrap.dedent(
            """
            import ftlab
            r = ftlab.run("x.toml")
            ok: float = r.read_us.p99
            maybe: float = r.waf
            r.wafx
            if r.flows:
                s: float = r.flows[0].name
            reveal_type(r.energy)
            """
        )
    )
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", str(src)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    text = out.stdout + out.stderr
    assert out.returncode == 1, text
    assert 'has no attribute "wafx"' in text, text
    assert "use.py:5: error" in text and "float | None" in text, text  # waf may be null
    assert "use.py:8: error" in text, text  # a flow's name is a str
    assert 'Revealed type is "ftlab.EnergyReport | None"' in text, text
    assert "use.py:4:" not in text, text
