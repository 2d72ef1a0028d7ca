"""Errors map to exception classes carrying the Rust message and an errno."""

import errno

import pytest

import ftlab


def test_unknown_keys_are_config_errors_naming_the_key(small):
    with pytest.raises(ftlab.ConfigError, match="blocks_per_plan") as e:
        small.set("device.blocks_per_plan", 3)
    assert e.value.errno == errno.EINVAL and e.value.kind == "invalid"
    assert isinstance(e.value, ftlab.Error)
    with pytest.raises(ftlab.ConfigError, match="chipx"):
        ftlab.Config.from_toml("[device]\nchipx = 1\n")
    with pytest.raises(ftlab.ConfigError, match="dotted path"):
        small.set("a..b", 1)
    with pytest.raises(TypeError, match="not a config value"):
        small.set("seed", object())


def test_bad_values_fail_before_time_zero(small):
    cfg = small.replace(**{"ftl.kind": "nosuch"})
    with pytest.raises(ftlab.ConfigError, match="nosuch"):
        cfg.validate()
    with pytest.raises(ftlab.ConfigError, match="nosuch"):
        ftlab.run(cfg, progress=False)


def test_config_errors_name_the_key_path(small):
    with pytest.raises(ftlab.ConfigError, match="gc_free_blocks must be at least 1") as e:
        small.replace(**{"ftl.gc_free_blocks": 0}).validate()
    assert e.value.key == "ftl.gc_free_blocks"
    with pytest.raises(ftlab.ConfigError, match="unknown chip") as e:
        ftlab.run(small.replace(**{"device.chip": "nosuch"}), progress=False)
    assert e.value.key == "device.chip"
    with pytest.raises(ftlab.ConfigError, match="too small") as e:
        tiny = {"device.channels": 1, "device.ways": 1, "device.dies": 1, "device.planes": 1}
        ftlab.run(small.replace(**tiny, **{"device.blocks_per_plane": 2}), progress=False)
    assert e.value.key == "device"


def test_a_missing_config_file_is_named(tmp_path):
    missing = tmp_path / "missing.toml"
    with pytest.raises(ftlab.ConfigError, match="missing.toml"):
        ftlab.Config.from_toml(str(missing))


def test_bad_traces_are_trace_errors(small, fixtures, tmp_path):
    bad = small.replace(
        **{
            "workload.generator": None,
            "workload.trace": str(fixtures / "malformed_line3.umass.csv"),
            "workload.trace_format": "umass",
        }
    )
    with pytest.raises(ftlab.TraceError, match=r"malformed_line3.umass.csv:3: expected 5") as e:
        ftlab.run(bad, progress=False)
    assert e.value.errno == errno.EINVAL
    missing = bad.replace(**{"workload.trace": str(tmp_path / "nope.csv")})
    with pytest.raises(ftlab.Error, match="nope.csv"):
        ftlab.run(missing, progress=False)


def test_a_missing_trace_is_a_file_not_found_error(small, tmp_path):
    path = str(tmp_path / "nope.csv")
    missing = small.replace(
        **{"workload.generator": None, "workload.trace": path, "workload.trace_format": "umass"}
    )
    with pytest.raises(FileNotFoundError) as e:
        ftlab.run(missing, progress=False)
    assert isinstance(e.value, ftlab.TraceFileError) and isinstance(e.value, ftlab.TraceError)
    assert isinstance(e.value, ftlab.Error)
    assert e.value.errno == errno.ENOENT and e.value.filename == path and e.value.kind == "io"
    assert "cannot read trace" in e.value.message and path in e.value.message
    # A directory is no trace either: its own OSError subclass.
    directory = small.replace(
        **{"workload.generator": None, "workload.trace": str(tmp_path), "workload.trace_format": "umass"}
    )
    with pytest.raises(ftlab.TraceError) as e:
        ftlab.run(directory, progress=False)
    assert isinstance(e.value, OSError) and e.value.errno == errno.EISDIR


def test_a_missing_config_file_is_a_file_not_found_error(tmp_path):
    missing = tmp_path / "missing.toml"
    with pytest.raises(FileNotFoundError) as e:
        ftlab.Config.from_toml(str(missing))
    assert isinstance(e.value, ftlab.ConfigFileError) and isinstance(e.value, ftlab.ConfigError)
    assert e.value.errno == errno.ENOENT and e.value.filename == str(missing) and e.value.key is None


def test_device_errors_carry_errno(small):
    dev = ftlab.Device(small)
    with pytest.raises(ftlab.DeviceError, match="multiple of the 512-byte sector") as e:
        dev.write(100, b"x" * 512)
    assert e.value.errno == errno.EINVAL
    with pytest.raises(ftlab.DeviceError, match="runs past") as e:
        dev.read(dev.capacity, 512)
    assert e.value.errno == errno.EINVAL
    dev.cut_power()
    with pytest.raises(ftlab.DeviceError, match="powered off") as e:
        dev.read(0, 512)
    assert e.value.errno == errno.EIO and e.value.kind == "io"


TASK = [{"name": "a", "read_pages": 1, "read_period_ms": 10.0, "write_pages": 1, "write_period_ms": 10.0, "lifetime_ms": 100.0}]


def test_admit_and_bounds_errors_are_config_errors():
    with pytest.raises(ftlab.ConfigError, match="unknown chip `nosuch`"):
        ftlab.bounds("nosuch")
    with pytest.raises(ftlab.ConfigError, match="policy"):
        ftlab.admit(TASK, policy="nosuch", chip="small-slc")
    with pytest.raises(ftlab.ConfigError, match=r"no \[\[task\]\] table"):
        ftlab.admit([], policy="sip", chip="small-slc")


def test_every_config_error_has_its_key(small):
    # Overrides: an unknown key, a value of the wrong type, a path that is not one.
    for key, value in (("device.blocks_per_plan", 3), ("device.blocks_per_plane", "many"), ("a..b", 1)):
        with pytest.raises(ftlab.ConfigError) as e:
            small.set(key, value)
        assert e.value.key == key, e.value
    # TOML text: the key of the line at fault.
    with pytest.raises(ftlab.ConfigError, match="chipx") as e:
        ftlab.Config.from_toml("[device]\nchipx = 1\n")
    assert e.value.key == "device.chipx"
    # A sweep: a grid point the run refuses, a grid value that is not a list.
    with pytest.raises(ftlab.ConfigError, match="grid point 1 of 2") as e:
        ftlab.sweep(small, {"ftl.gc_free_blocks": [2, 0]})
    assert e.value.key == "ftl.gc_free_blocks"
    with pytest.raises(ftlab.ConfigError, match="list of values") as e:
        ftlab.sweep(small, {"seed": 3})
    assert e.value.key == "seed"
    # Arguments of the admission test name themselves.
    with pytest.raises(ftlab.ConfigError, match="policy") as e:
        ftlab.admit(TASK, policy="nosuch", chip="small-slc")
    assert e.value.key == "policy"
    with pytest.raises(ftlab.ConfigError, match="unknown chip") as e:
        ftlab.bounds("nosuch")
    assert e.value.key == "chip"
