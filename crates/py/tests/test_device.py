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
