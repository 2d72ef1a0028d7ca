"""ftlab.Device: real bytes round trip, partial pages, trim, flush, power cut."""

import os

import pytest

import ftlab


@pytest.fixture
def dev(small):
    return ftlab.Device(small)


def test_round_trip_with_real_bytes(dev):
    ps = dev.page_size
    data = os.urandom(3 * ps)
    t = dev.write(ps, data)
    assert t > 0 and dev.now == t
    back, t2 = dev.read(ps, 3 * ps)
    assert back == data and t2 > t
    # Never written: zeroes.
    assert dev.read(10 * ps, ps)[0] == bytes(ps)
    c = dev.counters()
    assert c["writes"] == 1 and c["reads"] == 2 and c["bytes_written"] == 3 * ps


def test_partial_page_writes_merge_with_the_old_bytes(dev):
    ps = dev.page_size
    assert ps > 1024
    old = os.urandom(ps)
    dev.write(0, old)
    # One sector in the middle of the page, then one sector straddling two pages.
    dev.write(1024, b"\xab" * 512)
    dev.write(ps - 512, bytearray(b"\xcd" * 1024))
    back, _ = dev.read(0, 2 * ps)
    expected = bytearray(old + bytes(ps))
    expected[1024:1536] = b"\xab" * 512
    expected[ps - 512 : ps + 512] = b"\xcd" * 1024
    assert back == bytes(expected)
    assert dev.counters()["rmw_pages"] == 3


def test_trim_flush_and_times(dev):
    ps = dev.page_size
    dev.write(0, b"\x11" * ps)
    t = dev.trim(0, ps)
    assert t >= dev.now - 1
    assert dev.read(0, ps)[0] == bytes(ps)
    f = dev.flush()
    assert f >= t
    z = dev.write_zeroes(ps, ps)
    assert z >= f
    # A command at a later time waits for it; one before the clock is refused.
    later = dev.now + 1_000_000
    assert dev.write(0, b"\x22" * 512, at=later) > later
    with pytest.raises(ftlab.DeviceError, match="before the device's clock"):
        dev.read(0, 512, at=0)


def test_flushed_data_survives_a_power_cut(dev):
    ps = dev.page_size
    data = os.urandom(8 * ps)
    dev.write(0, data)
    dev.flush()
    cut = dev.cut_power()
    assert cut == dev.now
    recovered = dev.recover()
    assert recovered >= cut
    assert dev.read(0, 8 * ps)[0] == data


def test_device_reports_its_shape(dev):
    assert dev.sector == 512
    assert dev.capacity % dev.page_size == 0
    assert dev.ftl == "pagemap"
    assert dev.durability in ("on-ack", "on-flush")
    assert "pagemap" in repr(dev)


def test_several_commands_in_flight(dev, small):
    """submit_* return at once; step delivers completions in time order with
    their data, and several in flight finish sooner than one after another."""
    ps = dev.page_size
    blobs = [os.urandom(ps) for _ in range(8)]
    tags = [dev.submit_write(i * 64 * ps, blobs[i]) for i in range(8)]
    assert dev.in_flight == 8 and dev.now == 0
    assert dev.next_completion is not None and dev.next_completion > 0
    done = []
    while (c := dev.step()) is not None:
        assert isinstance(c, ftlab.Completion) and c.command == "write" and c.error is None
        assert c.completed >= c.submitted == 0 and c.latency_ns == c.completed
        assert dev.now == c.completed
        done.append(c)
    assert sorted(c.tag for c in done) == sorted(tags)
    assert all(a.completed <= b.completed for a, b in zip(done, done[1:]))
    parallel = done[-1].completed
    # The same writes one at a time, on a fresh device, take longer: the dies
    # worked side by side above.
    serial = ftlab.Device(small)
    for i in range(8):
        serial.write(i * 64 * ps, blobs[i])
    assert serial.now > parallel
    # Reads in flight return their bytes; wait() picks one, step() the rest.
    t0 = dev.now
    reads = {dev.submit_read(i * 64 * ps, ps, at=t0): i for i in range(8)}
    third = next(t for t, i in reads.items() if i == 3)
    c3 = dev.wait(third)
    assert c3.result() == blobs[3] and dev.in_flight == 7
    with pytest.raises(KeyError, match="not in flight"):
        dev.wait(third)
    rest = dev.step_until(dev.now + 10**9)
    assert len(rest) == 7 and dev.in_flight == 0
    for c in rest:
        assert c.data == blobs[reads[c.tag]]
    assert dev.step() is None and dev.next_completion is None


def test_a_failed_command_in_flight_carries_its_error(dev):
    tag = dev.submit_read(dev.capacity, 512)
    c = dev.wait(tag)
    assert isinstance(c.error, ftlab.DeviceError) and c.data is None
    assert "past the device" in str(c.error)
    with pytest.raises(ftlab.DeviceError, match="past the device"):
        c.result()
    # A submission before the clock is refused at once.
    dev.write(0, bytes(dev.page_size))
    with pytest.raises(ftlab.DeviceError, match="before the device's clock"):
        dev.submit_read(0, 512, at=0)


def test_a_power_cut_fails_the_commands_in_flight(dev):
    ps = dev.page_size
    tags = [dev.submit_write(i * ps, os.urandom(ps)) for i in range(4)]
    dev.cut_power(at=1)
    failed = [dev.wait(t) for t in tags]
    assert all(isinstance(c.error, ftlab.DeviceError) and "power was cut" in str(c.error) for c in failed)
    dev.recover()
    assert dev.read(0, ps)[0] == bytes(ps)


def test_a_zoned_device_takes_zone_commands(small):
    dev = ftlab.Device(small.replace(**{"ftl.kind": "zns", "device.store": "bytes"}))
    ps = dev.page_size
    zones = dev.zones()
    assert len(zones) > 4 and {z["state"] for z in zones} == {"empty"}
    z1 = zones[1]
    assert z1["write_pointer"] == z1["start"] and z1["capacity"] > 0
    data = os.urandom(2 * ps)
    offset, t = dev.zone_append(1, data)
    assert offset == z1["start"] and t > 0
    # A block write at the write pointer, then one off it: ZNS's Zone Invalid Write.
    dev.write(z1["start"] + 2 * ps, b"\x08" * ps)
    with pytest.raises(ftlab.DeviceError, match="write pointer"):
        dev.write(z1["start"] + 5 * ps, b"\x09" * ps)
    assert dev.read(z1["start"], 3 * ps)[0] == data + b"\x08" * ps
    z = dev.zones()[1]
    assert (z["write_pointer"] - z["start"], z["state"]) == (3 * ps, "implicitly-opened")
    dev.zone_manage(1, "finish")
    assert dev.zones()[1]["state"] == "full"
    dev.zone_manage(1, "reset")
    assert dev.zones()[1]["state"] == "empty"
    assert dev.read(z1["start"], ps)[0] == bytes(ps)
    with pytest.raises(ValueError, match="unknown action"):
        dev.zone_manage(1, "erase")
    assert dev.zones()[1]["zrwa"] is False
    with pytest.raises(ftlab.DeviceError, match="ftl.zrwa_pages"):
        dev.zone_manage(2, "open-zrwa")
    # A block device has no zones.
    with pytest.raises(ftlab.DeviceError, match="not zoned"):
        ftlab.Device(small).zones()


def test_zone_random_write_areas_take_writes_in_any_order_and_keep_flushed_ones_through_a_cut(small):
    config = small.replace(
        **{"ftl.kind": "zns", "device.store": "bytes", "ftl.zrwa_pages": 8, "ftl.zrwa_flush_granularity": 4}
    )
    dev = ftlab.Device(config)
    ps = dev.page_size
    dev.zone_manage(1, "open-zrwa")
    z = dev.zones()[1]
    assert (z["state"], z["zrwa"]) == ("explicitly-opened", True)
    s = z["start"]
    # Out of order and overwritten in the window: the write pointer stays.
    dev.write(s + 3 * ps, b"\x03" * ps)
    dev.write(s, b"\x01" * ps)
    dev.write(s + 3 * ps, b"\x33" * ps)
    assert dev.zones()[1]["write_pointer"] == s
    assert dev.read(s + 3 * ps, ps)[0] == b"\x33" * ps
    with pytest.raises(ftlab.DeviceError, match="ZRWA"):
        dev.zone_append(1, bytes(ps))
    # An explicit flush commits the window below upto; holes read as zeros.
    dev.zone_manage(1, "flush-zrwa", upto=s + 4 * ps)
    assert dev.zones()[1]["write_pointer"] == s + 4 * ps
    assert dev.read(s, 4 * ps)[0] == b"\x01" * ps + bytes(2 * ps) + b"\x33" * ps
    # A page flushed to the device survives a power cut in the ZRWA.
    dev.write(s + 5 * ps, b"\x05" * ps)
    dev.flush()
    dev.cut_power()
    dev.recover()
    z = dev.zones()[1]
    assert (z["state"], z["zrwa"], z["write_pointer"]) == ("closed", True, s + 4 * ps)
    assert dev.read(s + 5 * ps, ps)[0] == b"\x05" * ps
    # Errors name the input and what to give.
    with pytest.raises(ValueError, match="needs upto"):
        dev.zone_manage(1, "flush-zrwa")
    with pytest.raises(ValueError, match="page boundary"):
        dev.zone_manage(1, "flush-zrwa", upto=s + 1)
    with pytest.raises(ftlab.DeviceError, match="flush granularity"):
        dev.zone_manage(1, "flush-zrwa", upto=s + 5 * ps)
    with pytest.raises(ValueError, match="takes no upto"):
        dev.zone_manage(1, "open", upto=s)
    with pytest.raises(ValueError, match="open-zrwa or flush-zrwa"):
        dev.zone_manage(1, "zrwa")
