# Generated from the report's JSON Schema (`ftlab schema`) by crates/cli/tests/schema.rs;
# do not edit: run `FTLAB_BLESS=1 cargo test -p ftlab-cli --test schema`.
"""The classes of a report's nested objects (``report.read_us`` is a
``LatencySummary``), generated from the report's JSON Schema."""

from __future__ import annotations

from typing import ClassVar, Dict, FrozenSet

from ._record import Record


class PerPurpose(Record):
    """A count per purpose of the flash work (the JSON of `ftlab_ftl::PerPurpose`)."""

    __slots__ = ()


class PeriodSplit(Record):
    """Die time per host request, microseconds: host operations (`service_us`), garbage
    collection (`gc_us`), the other purposes (`other_us`: map, wear leveling,
    checkpoint, recovery) and idle. Null without requests."""

    __slots__ = ()


class DieTimeReport(Record):
    """How the dies spent the measured time (002 Figure 7: a period split into request
    service, partial garbage collection and idle). Die time is summed over the dies:
    `busy_ns` by purpose (`ftlab_ftl::Counters::die_ns`: each operation from its
    start on its die to its finish) and `idle_ns`, the rest of dies x `sim_seconds`;
    so `busy_ns` summed and `idle_ns` make dies x the measured time."""

    __slots__ = ()
    _fields: ClassVar[Dict[str, type]] = {
        "busy_ns": PerPurpose,
        "per_request": PeriodSplit,
    }


class EnergyByOp(Record):
    """Energy by operation kind, nanojoules (copybacks are in reads and programs)."""

    __slots__ = ()


class EnergyByPurpose(Record):
    """Energy by purpose (`ftlab_ftl::Purpose`), nanojoules."""

    __slots__ = ()


class EnergyReport(Record):
    """The energy of the measured flash work, nanojoules (`[device.energy]`).

    Per access, as Table VI of 002 is read here (the paper does not spell out its
    accounting): a host read access costs the page and OOB reads done for the host
    (purpose host: a GFTL read's OOB search included), divided by the host pages
    read; a host write access costs everything else, divided by the host pages
    written: its own programs plus an equal share of all cleaning work
    (garbage-collection, map, wear-leveling reads, OOB reads and programs, and every
    erase), since cleaning runs because of writes. So `host_read_access_nj *
    host_pages_read + host_write_access_nj * host_pages_written = total_nj`. Null
    where the run read (wrote) no page."""

    __slots__ = ()
    _fields: ClassVar[Dict[str, type]] = {
        "by_op": EnergyByOp,
        "by_purpose": EnergyByPurpose,
    }


class EraseStats(Record):
    """Erase counts over the good blocks."""

    __slots__ = ()


class FlashOps(Record):
    """Flash operations by purpose during measurement."""

    __slots__ = ()
    _fields: ClassVar[Dict[str, type]] = {
        "copybacks": PerPurpose,
        "erases": PerPurpose,
        "multi_plane": PerPurpose,
        "oob_reads": PerPurpose,
        "programs": PerPurpose,
        "reads": PerPurpose,
    }


class LatencySummary(Record):
    """Response-time summary, microseconds. Percentiles are HDR-histogram values (three
    significant digits), never above `max`; mean and max are exact."""

    __slots__ = ()


class FlowReport(Record):
    """What one flow did, in a multi-flow run's report."""

    __slots__ = ()
    _fields: ClassVar[Dict[str, type]] = {
        "alone_response_us": LatencySummary,
        "read_us": LatencySummary,
        "response_us": LatencySummary,
        "write_us": LatencySummary,
    }


class LatencyDistribution(Record):
    """One operation's whole response-time distribution (JSON only: arrays are left out
    of CSV)."""

    __slots__ = ()


class LatencyDistributions(Record):
    """The response-time distributions of the measured requests, per operation."""

    __slots__ = ()
    _fields: ClassVar[Dict[str, type]] = {
        "read": LatencyDistribution,
        "trim": LatencyDistribution,
        "write": LatencyDistribution,
    }


class MemoryReport(Record):
    """RAM the simulator's structures hold at the end of a run, by part, from their
    allocated capacity (not estimates): what a run of this device costs in memory
    besides the program itself."""

    __slots__ = ()


class Stamp(Record):
    """When, where and how long a run took."""

    __slots__ = ()


class Provenance(Record):
    """The `provenance` object of a JSON report."""

    __slots__ = ()
    _fields: ClassVar[Dict[str, type]] = {
        "stamp": Stamp,
    }
    _optional: ClassVar[FrozenSet[str]] = frozenset({"cwd", "stamp"})


class RberStats(Record):
    """Raw bit error rates of the good blocks by the wear model (Eq. 27 of
    000_ffe2fafb22bcad8e.txt), at the end of the run."""

    __slots__ = ()


class TaskReport(Record):
    """Deadline misses of one periodic task."""

    __slots__ = ()


class ThroughputSeries(Record):
    """Host pages completed per interval, and the flash work of each interval (counted
    when a request completing in it first saw it): write amplification over time is
    `flash_programs / write_pages`, garbage collection's activity `gc_programs` and
    `erases`. `die_host_us`, `die_gc_us`, `die_other_us`: the time the dies were
    occupied by host operations, by garbage collection and by the other purposes
    (map, wear leveling, checkpoint), summed over the dies (see
    `ftlab_ftl::Counters::die_ns`): an interval holds the die time of the operations
    issued from its first request completion to the first completion in a later
    interval (before the first completion: the first interval's; after the last: the
    last's), so a request's service at an interval's start may be counted in the
    interval before; `die_idle_us` the rest of the interval's die time (dies x
    interval, less the three, at least 0; the last interval counts whole, though the
    run ends inside it). The split is exact over the run (they sum to the report's
    `die_time`) and close where requests complete in every interval. `gauges`: the
    FTL's gauges (`ftlab_ftl::Ftl::gauges`, e.g. Janus-FTL's `fused_blocks`) per
    interval, each the value after the last request completed in it (an interval
    without one keeps the value before it); left out of the JSON for schemes without
    gauges."""

    __slots__ = ()
    _optional: ClassVar[FrozenSet[str]] = frozenset({"gauges"})


# The classes of the report's own nested fields.
REPORT_FIELDS: Dict[str, type] = {
    "die_time": DieTimeReport,
    "energy": EnergyReport,
    "erase_count": EraseStats,
    "flash_ops": FlashOps,
    "flows": FlowReport,
    "latency": LatencyDistributions,
    "memory": MemoryReport,
    "provenance": Provenance,
    "rber": RberStats,
    "read_us": LatencySummary,
    "tasks": TaskReport,
    "throughput": ThroughputSeries,
    "trim_us": LatencySummary,
    "write_us": LatencySummary,
}

# The report's fields that may be left out (None when they are).
REPORT_OPTIONAL: FrozenSet[str] = frozenset({"energy", "fairness", "flows", "ftl_curves", "ftl_gauges", "max_read_block_us", "unsupported"})

__all__ = [
    "PerPurpose",
    "PeriodSplit",
    "DieTimeReport",
    "EnergyByOp",
    "EnergyByPurpose",
    "EnergyReport",
    "EraseStats",
    "FlashOps",
    "LatencySummary",
    "FlowReport",
    "LatencyDistribution",
    "LatencyDistributions",
    "MemoryReport",
    "Stamp",
    "Provenance",
    "RberStats",
    "TaskReport",
    "ThroughputSeries",
]
