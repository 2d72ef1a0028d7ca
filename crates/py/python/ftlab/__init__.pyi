"""Type stubs for ftlab (the native part is ftlab._ftlab)."""

import concurrent.futures
import os
from typing import Any, Callable, Dict, Iterator, List, Literal, Optional, Sequence, Tuple, Union

import pandas
from typing_extensions import final

__all__ = [
    "Completion",
    "Config",
    "ConfigError",
    "ConfigFileError",
    "Device",
    "DeviceError",
    "Error",
    "Record",
    "Report",
    "RunError",
    "TraceError",
    "TraceFileError",
    "admit",
    "bounds",
    "plot",
    "presets",
    "report_html",
    "run",
    "sweep",
]

__version__: str

_PathOrText = Union[str, "os.PathLike[str]"]
Progress = Callable[[int, int, bool], Any]

class Error(Exception):
    """Base class of ftlab's errors."""

    errno: int
    """The Linux errno of the error's kind: 22 invalid, 28 no space, 95 unsupported, 5 I/O."""
    kind: Literal["invalid", "no-space", "unsupported", "io"]
    report: Optional[Dict[str, Any]]
    """The report of a run that stopped after it started (RunError), else None."""

class ConfigError(Error):
    """A bad configuration, key, value, sweep grid or task set: nothing ran."""

    key: Optional[str]
    """The key path of the bad setting (`ftl.gc_free_blocks`, `device.chip`, `device` for a device too
    small for the scheme) where the check that failed knows it, else None."""

class TraceError(Error):
    """A trace that cannot be read or has a malformed line."""

class TraceFileError(TraceError, OSError):
    """A trace file that cannot be opened; raised as its OSError subclass by errno
    (FileNotFoundError, PermissionError, ...), `.errno` the OS's (2: missing)."""

    message: str
    """ftlab's message (`str()` is Python's `[Errno 2] ...: 'path'`)."""
    errno: int
    """The OS's errno (2: missing)."""

class ConfigFileError(ConfigError, OSError):
    """A configuration file that cannot be opened; raised as its OSError subclass
    by errno, `.errno` the OS's."""

    message: str
    errno: int

class DeviceError(Error):
    """A device command failed; `.errno` tells its kind."""

class RunError(Error):
    """A run failed after it started; `.report` holds what it did until then."""

def presets() -> Dict[str, List[Dict[str, str]]]:
    """Chips, FTLs, workload presets and trace formats: {"chips": [{"name", "summary"}], ...}."""

@final
class Config:
    """A run configuration kept as its TOML table; keys are `--set` dotted paths."""

    def __new__(cls, **overrides: Any) -> "Config": ...
    @staticmethod
    def from_toml(source: _PathOrText, **overrides: Any) -> "Config":
        """Reads a TOML file (str path or os.PathLike) or TOML text, then sets `overrides`."""
    def set(self, key: str, value: Any) -> None:
        """Sets the dotted `key` (None removes it); ConfigError for an unknown key."""
    def replace(self, **overrides: Any) -> "Config":
        """A copy with `overrides` set."""
    def get(self, key: str) -> Any:
        """The value set at `key`, or None."""
    def validate(self) -> None:
        """Raises every error a run would raise before time zero."""
    def to_toml(self) -> str: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def __eq__(self, other: object, /) -> bool: ...

class Record:
    """A JSON object of a report: fields as attributes (typed in each subclass
    below) and as items. A field the JSON may leave out is None when it does."""

    def __init__(self, data: Dict[str, Any]) -> None: ...
    def __getitem__(self, name: str) -> Any: ...
    def __contains__(self, name: object) -> bool: ...
    def __iter__(self) -> Iterator[str]: ...
    def __eq__(self, other: object) -> bool: ...
    def to_dict(self) -> Dict[str, Any]: ...

# --- generated from the report's JSON Schema (classes): `FTLAB_BLESS=1 cargo test -p ftlab-cli --test schema`
__all__ += [
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

class PerPurpose(Record):
    """A count per purpose of the flash work (the JSON of `ftlab_ftl::PerPurpose`)."""

    host: int
    """Serving host requests."""
    gc: int
    """Garbage collection."""
    map: int
    """Mapping-table pages."""
    wear_leveling: int
    """Wear leveling."""
    checkpoint: int
    """FTL state checkpoints."""
    recovery: int
    """Rebuilding after a power cut."""

class PeriodSplit(Record):
    """Die time per host request, microseconds: host operations (`service_us`), garbage
    collection (`gc_us`), the other purposes (`other_us`: map, wear leveling,
    checkpoint, recovery) and idle. Null without requests."""

    service_us: Optional[float]
    """Die time of host operations per measured host request; with one request per
    period (002's evaluation) the four sum to the period, Figure 7's bar. Null
    without requests."""
    gc_us: Optional[float]
    """Die time of garbage collection per request."""
    other_us: Optional[float]
    """Die time of the other purposes (map, wear leveling, checkpoint, recovery) per
    request."""
    idle_us: Optional[float]
    """Idle die time per request."""

class DieTimeReport(Record):
    """How the dies spent the measured time (002 Figure 7: a period split into request
    service, partial garbage collection and idle). Die time is summed over the dies:
    `busy_ns` by purpose (`ftlab_ftl::Counters::die_ns`: each operation from its
    start on its die to its finish) and `idle_ns`, the rest of dies x `sim_seconds`;
    so `busy_ns` summed and `idle_ns` make dies x the measured time."""

    dies: int
    """Dies of the device."""
    busy_ns: PerPurpose
    """Die time of the operations of each purpose (as `flash_ops`)."""
    idle_ns: int
    """Dies x the measured time, less the busy time."""
    per_request: PeriodSplit
    """The same split per measured host request (one period when requests arrive one
    per period, as in 002's evaluation)."""

class EnergyByOp(Record):
    """Energy by operation kind, nanojoules (copybacks are in reads and programs)."""

    reads_nj: float
    """Page reads (copybacks included)."""
    oob_reads_nj: float
    """OOB reads."""
    programs_nj: float
    """Page programs (copybacks included)."""
    erases_nj: float
    """Erases."""

class EnergyByPurpose(Record):
    """Energy by purpose (`ftlab_ftl::Purpose`), nanojoules."""

    host_nj: float
    """Serving host requests."""
    gc_nj: float
    """Garbage collection."""
    map_nj: float
    """Mapping-table pages."""
    wear_leveling_nj: float
    """Wear leveling."""
    checkpoint_nj: float
    """FTL state checkpoints."""
    recovery_nj: float
    """Rebuilding after a power cut."""

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

    total_nj: float
    """Energy of every measured flash operation."""
    by_op: EnergyByOp
    """By operation kind."""
    by_purpose: EnergyByPurpose
    """By purpose."""
    host_read_access_nj: Optional[float]
    """Energy per host page read (Table VI's read access): the page and OOB reads of
    purpose host (a GFTL read's OOB search included) / `host_pages_read`; null
    without host reads."""
    host_write_access_nj: Optional[float]
    """Energy per host page written (Table VI's write access): everything else /
    `host_pages_written`, i.e. its own programs plus an equal share of all cleaning
    work (garbage-collection, map and wear-leveling reads, OOB reads and programs,
    and every erase), since cleaning runs because of writes. The paper does not say
    how it shares cleaning out; this is ftlab's reading. `host_read_access_nj x
    host_pages_read + host_write_access_nj x host_pages_written = total_nj`; null
    without host writes."""

class EraseStats(Record):
    """Erase counts over the good blocks."""

    mean: float
    """Mean erases per block."""
    std: float
    """Standard deviation."""
    min: int
    """Least-erased block."""
    max: int
    """Most-erased block."""
    wear_index: float
    """GFTL's wear index (002 Section VI): `std` / number of blocks × 100; lower is
    more even."""

class FlashOps(Record):
    """Flash operations by purpose during measurement."""

    reads: PerPurpose
    """Flash page reads by purpose (a copyback counts as a read and a program)."""
    programs: PerPurpose
    """Flash page programs by purpose."""
    erases: PerPurpose
    """Block erases by purpose."""
    oob_reads: PerPurpose
    """Out-of-band area reads by purpose (e.g. while rebuilding maps)."""
    copybacks: PerPurpose
    """In-plane page moves by purpose."""
    multi_plane: PerPurpose
    """Multi-plane commands by purpose (`device.commands.multi_plane`), each counted
    once here and per page or block in its kind."""
    suspensions: int
    """Host reads that suspended an erase under way
    (`device.commands.erase_suspension`); 0 without it."""

class LatencySummary(Record):
    """Response-time summary, microseconds. Percentiles are HDR-histogram values (three
    significant digits), never above `max`; mean and max are exact."""

    count: int
    """Requests of that type completed."""
    mean: float
    """Mean response time (exact)."""
    p50: float
    """Median."""
    p99: float
    """99th percentile."""
    p999: float
    """99.9th percentile."""
    p9999: float
    """99.99th percentile."""
    max: float
    """Worst response (exact)."""

class FlowReport(Record):
    """What one flow did, in a multi-flow run's report."""

    name: str
    """The flow as configured: its name."""
    workload: str
    """Its workload, as the report's `workload`."""
    priority: str
    """Its priority class: urgent, high, medium, low."""
    weight: int
    """Its weight among flows of its class."""
    queue_depth: int
    """Its queue depth."""
    first_page: int
    """First page of its part of the logical space (the space split equally, in order)."""
    pages: int
    """Pages of its part of the logical space."""
    requests: int
    """Requests it completed during measurement."""
    host_pages: int
    """Pages they read or wrote."""
    response_us: LatencySummary
    """Response-time summary of all its requests, sharing the device. Closed loop: from
    when the flow's queue had room for the request."""
    read_us: LatencySummary
    """The same, of its reads."""
    write_us: LatencySummary
    """The same, of its writes."""
    alone_response_us: Optional[LatencySummary]
    """The same flow's summary when it ran alone on a fresh device (same
    preconditioning, part of the space, seed); null with `metrics.slowdown = false`
    (the default of `ftlab mqsim` without `--slowdown`)."""
    slowdown: Optional[float]
    """`response_us.mean / alone_response_us.mean`: 1 alone, larger when the other
    flows slow it down; null when either run completed none of its requests or its
    alone mean is 0 (reads of pages never written take no time)."""
    unaligned_requests: int
    """Its measured requests whose offset or length is not a whole number of logical
    pages (served as the whole pages they touch)."""
    partial_page_writes: int
    """Pages it wrote in part, each a read-modify-write."""
    unwritten_page_reads: int
    """Pages it read that no write had reached (read as zeroes; with
    `ftl.unwritten_reads = "flash"` at a flash read's cost)."""

class LatencyDistribution(Record):
    """One operation's whole response-time distribution (JSON only: arrays are left out
    of CSV)."""

    percentiles: List[List[float]]
    """fio's default percentile list (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99,
    99.5, 99.9, 99.95, 99.99) as `[percent, µs]` pairs: HDR values (three
    significant digits) as the summary's percentiles, never above the exact max;
    empty when the operation has no request."""
    bins: List[List[int]]
    """Every non-empty bucket, in increasing order, as `[ns, requests]` pairs: the
    bucket's upper edge in **nanoseconds** (the highest HDR value in it) and the
    responses in it (those at or below the edge and above the previous bucket's).
    The buckets are fio's (`json+`: 64 a power of two, under 1.6% wide), the HDR
    histogram's merged into them; the counts are exact and add up to `count`; the
    last edge is the exact `max`. A CDF is the running sum of the counts over
    `count`."""

class LatencyDistributions(Record):
    """The response-time distributions of the measured requests, per operation."""

    read: LatencyDistribution
    """The reads' distribution (`latency.write` and `latency.trim` are the writes' and
    the trims'); both arrays empty when there was none."""
    write: LatencyDistribution
    """The writes' distribution, as `latency.read`."""
    trim: LatencyDistribution
    """The trims' distribution, as `latency.read`."""

class MemoryReport(Record):
    """RAM the simulator's structures hold at the end of a run, by part, from their
    allocated capacity (not estimates): what a run of this device costs in memory
    besides the program itself."""

    map_bytes: int
    """The FTL's logical-to-physical page table (0 for schemes that do not report
    theirs apart: then in `memory.ftl_other_bytes`)."""
    valid_bytes: int
    """The FTL's valid-page bitmap (likewise)."""
    ftl_other_bytes: int
    """The rest of the FTL: allocator, victim picker, caches, logs."""
    oob_bytes: int
    """The medium's OOB records (logical page, sequence number, kind and tag of every
    physical page)."""
    store_bytes: int
    """The medium's page contents (2 bytes a page for tokens of data pages)."""
    blocks_bytes: int
    """The medium's per-block state, wear model and timelines."""
    engine_bytes: int
    """The engine's model: each logical page's version (what the integrity check
    expects), the expiry table, the host queue's slots."""
    total_bytes: int
    """RAM the simulator's structures hold at the end of the run, from their allocated
    capacity: the sum of the parts."""
    bytes_per_physical_page: float
    """`memory.total_bytes` / `physical_pages`."""

class Stamp(Record):
    """When, where and how long a run took."""

    date: str
    """When the run started, RFC 3339 UTC."""
    host: str
    """The machine's host name."""
    wall_s: float
    """Wall-clock seconds the command took to run its simulations."""
    cpu_s: float
    """CPU seconds the process spent on them (user and system, every thread; runs side
    by side add up)."""
    cores: int
    """Cores the machine offers."""

class Provenance(Record):
    """The `provenance` object of a JSON report."""

    command: str
    """`run`, `compare`, `mqsim` or `sweep` (`run` for Python's `ftlab.run`, `sweep`
    for each row of `ftlab sweep` and Python's `ftlab.sweep`)."""
    ftlab: str
    """ftlab's version."""
    git_revision: Optional[str]
    """The git commit ftlab was built from; null when built outside a git checkout."""
    config: str
    """The effective configuration, as `ftlab run --print-config` prints it (flags and
    `--set` applied; a comparison's reports each carry their FTL's, with the shared
    `host.logical_pages`)."""
    cwd: Optional[str]
    """The folder the run started in, only when the configuration names a trace by a
    relative path (relative to it; `ftlab rerun` runs there)."""
    stamp: Optional[Stamp]
    """With `--stamp` only: when, where and how long. These differ from run to run;
    `ftlab rerun` sets them aside."""

class RberStats(Record):
    """Raw bit error rates of the good blocks by the wear model (Eq. 27 of
    000_ffe2fafb22bcad8e.txt), at the end of the run."""

    mean: float
    """Mean RBER."""
    p50: float
    """Median RBER (nearest rank)."""
    p99: float
    """99th-percentile RBER (nearest rank)."""
    max: float
    """Highest RBER."""

class TaskReport(Record):
    """Deadline misses of one periodic task."""

    name: str
    """The task's name."""
    jobs: int
    """Jobs released."""
    deadline_misses: int
    """Jobs that missed their deadline (release + period)."""
    worst_response_us: float
    """The longest response of one of its jobs."""
    admitted: bool
    """False: refused by the FTL's admission control, nothing issued (true without
    one)."""
    refused_by: Optional[str]
    """The failed test and by how much, or null."""

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

    interval_s: float
    """Width of one interval (adaptive, at most 4096 intervals, unless
    `metrics.interval_ms` fixes it)."""
    read_pages: List[int]
    """Host pages read completed per interval, interval 0 starting when measurement
    starts."""
    write_pages: List[int]
    """Host pages written completed per interval."""
    flash_programs: List[int]
    """Flash page programs of every purpose, counted in the interval of the first
    request completion after it was issued (work after the last completion is in the
    totals only); `flash_programs / write_pages` is the interval's write
    amplification. Sums to `flash_pages_programmed` when nothing runs after the last
    request."""
    gc_programs: List[int]
    """Page programs of garbage collection, counted as `flash_programs`; sums to
    `flash_ops.programs.gc`."""
    erases: List[int]
    """Erases, counted as `flash_programs`; sums to `erases`."""
    die_host_us: List[float]
    """Die time (as `die_time`) of host operations, counted as the flash work above (in
    the interval of the first request completion after it)."""
    die_gc_us: List[float]
    """Die time of garbage collection, as `die_host_us`."""
    die_other_us: List[float]
    """Die time of the other purposes (map, wear leveling, checkpoint, recovery), as
    `die_host_us`. The three sum to `die_time.busy_ns` when nothing runs after the
    last request."""
    die_idle_us: List[float]
    """Dies x the interval, less the three (at least 0; the last interval counts whole
    though the run ends inside it). Exact only where requests complete in every
    interval; over the run, `die_time` is exact."""
    gauges: Optional[Dict[str, List[float]]]
    """Only for an FTL with gauges (left out otherwise): per gauge name, its value
    after the last request completed in each interval (an interval without a
    completion keeps the value before it); same intervals as the other series."""

# --- end of generated (classes)

class Report(Record):
    """The result of one run: every field of `ftlab run -f json` as an attribute."""

    # --- generated from the report's JSON Schema (Report)
    ftl: str
    """FTL scheme (`ftl.kind`)."""
    chip: str
    """Chip preset (`device.chip`)."""
    workload: str
    """Generator preset or kind, `N periodic tasks`, or `PATH (format)` for a trace
    (`PATH (format) x N` when `workload.repeat` replays it N times)."""
    seed: int
    """Seed of every random draw (default 1)."""
    requests: int
    """Host requests completed during measurement (a trace request that address
    compaction splits counts once per piece; see `address`)."""
    host_pages_read: int
    """Pages the host read. Pages here and in `rmw_pages` and `logical_pages` are the
    FTL's logical pages: flash pages, or the FTL's smaller mapping unit
    (`ftl.unit_bytes` of `subpage`); the flash counters (programs, reads, WAF) count
    flash pages."""
    host_pages_written: int
    """Pages the host wrote."""
    host_pages_trimmed: int
    """Pages the host trimmed (discarded)."""
    rmw_pages: int
    """Partial-page writes served by read-modify-write."""
    flash_pages_read: int
    """Flash page reads of every purpose (a copyback counts as one read and one
    program)."""
    flash_pages_programmed: int
    """Flash page programs of every purpose."""
    gc_page_copies: int
    """Valid pages copied by garbage collection and wear leveling."""
    erases: int
    """Block erases (recovery erases excluded)."""
    waf: Optional[float]
    """Write amplification factor: `flash_pages_programmed` / host page programs; 1.0
    is ideal, the excess is GC, mapping and wear-leveling traffic; null before any
    host write."""
    read_us: LatencySummary
    """The response times of the measured host reads: count, mean, percentiles, max
    (`write_us` and `trim_us` are the writes' and the trims')."""
    write_us: LatencySummary
    """Response times of the measured host writes, as `read_us`."""
    trim_us: LatencySummary
    """Response times of the measured host trims, as `read_us`."""
    latency: LatencyDistributions
    """The whole response-time distribution per operation: fio's percentile list and
    the histogram's buckets (JSON only)."""
    erase_count: EraseStats
    """Erase counts of the good blocks at the end of the run (preconditioning
    included)."""
    rber: RberStats
    """Raw bit error rate of every good block at the end of the run, by the wear model
    (000 Section 6.2, Eq. 27: `log10 RBER = x_b + y_b log10(erases /
    device.wear.endurance_cycles)`; 0 for a block never erased)."""
    retired_fraction: float
    """Good blocks whose RBER reached the retirement threshold
    `device.wear.retirement_rber` (default 1e-2), over all good blocks; the blocks
    are not taken out of service, this only reports how many would be."""
    rber_cdf: List[List[float]]
    """Cumulative distribution of the good blocks' RBER at the end of the run (000
    Figure 10): 40 pairs `[rber, fraction]`, `rber` at fixed points evenly spaced in
    log10 from 1e-5 to 1e-1 (the same in every run), `fraction` the share of good
    blocks with RBER ≤ `rber` (never-erased blocks, RBER 0, count at every point).
    JSON only."""
    erase_histogram: List[List[int]]
    """The good blocks' erase counts at the end of the run: pairs `[erase count,
    blocks]`, one for each count some block has, in increasing order. JSON only."""
    stopped_at_retired_fraction: bool
    """True when the measured run ended because `workload.stop_at_retired_fraction` of
    the good blocks reached the retirement RBER (000 Section 6.2 runs until 2%);
    checked before each request is dispatched, so `retired_fraction` is then at
    least that value. False when the workload ended first or the key is not set."""
    space_utilization: float
    """`logical_pages` / `physical_pages` (1 − effective over-provisioning)."""
    logical_pages: int
    """Pages the FTL exports to the host."""
    physical_pages: int
    """Pages of the device."""
    ram_bytes: int
    """RAM the FTL reports for its mapping and bookkeeping."""
    memory: MemoryReport
    """The RAM of the simulator's structures by part (JSON; in CSV, the `memory.*`
    columns)."""
    ftl_bound_us: Optional[float]
    """The FTL's promised worst-case service time of one page command for this chip and
    configuration; null for schemes that promise none."""
    bound_us: Optional[float]
    """The bound page commands were checked against: `metrics.bound_us` (`--bound-us`)
    when set, so any scheme can be held to a real-time scheme's promise, else
    `ftl_bound_us`; null when there is neither."""
    bound_violations: Optional[int]
    """Page commands (read-modify-writes apart) whose service time exceeded `bound_us`;
    null when there is no bound (never 0 by default). A page command's **service
    time** runs from the later of its readiness (its request's dispatch — its
    admission into the device under `per-die-edf` — or, under dispatch by request,
    the completion of the request's earlier pages) and the end of the last host
    operation of another command on the die its own host operations use, to its
    completion. Waiting behind other host commands is queueing and not counted;
    waiting behind garbage-collection, map or wear-leveling work on its die is
    service, whenever that work was reserved (e.g. a GC step an earlier write left
    after its acknowledgement), and so is waiting for the channel. The same
    definition holds in both dispatch modes and at every queue depth."""
    max_service_us: float
    """The longest service time of a page command, measured as for `bound_violations`.
    On a channel shared by several dies, Lazy-RTGC's and WAO-GC's `bound_us` carry
    the other dies' collection copies that cross the channel (without copyback, or
    with several planes a die: `(dies a channel - 1) x 2 x alpha` page transfers)
    and Telomere's one block-summary transfer a die; that holds with one request at
    a time. With several requests in flight the other dies may have several
    collection steps reserved ahead on the channel, the promise does not hold, and
    the violations are reported as such."""
    rmw_bound_us: Optional[float]
    """Twice `bound_us`: the bound a read-modify-write page command (a partial-page
    write: a read of the page, then a write of it) is checked against, two page
    commands each within `bound_us`; null when there is no bound."""
    rmw_bound_violations: Optional[int]
    """Read-modify-write page commands whose service time (as for `bound_violations`)
    exceeded `rmw_bound_us`; null when there is no bound."""
    max_rmw_service_us: float
    """The longest service time of a read-modify-write page command (0 when there was
    none)."""
    deadline_misses: int
    """Jobs of periodic tasks that missed their deadline (release + period), summed
    over tasks."""
    tasks_refused: int
    """Tasks the FTL's admission control refused (they issue nothing); 0 without
    admission control."""
    tasks: List[TaskReport]
    """Per periodic task, its jobs and deadline misses (JSON only)."""
    sim_seconds: float
    """Simulated time measured (not wall-clock time)."""
    iops: float
    """Measured host requests per simulated second (0 for a run of no time)."""
    read_mb_per_s: float
    """Bytes the measured reads asked for, 10^6 a simulated second."""
    write_mb_per_s: float
    """Bytes the measured writes asked for, 10^6 a simulated second."""
    throughput: ThroughputSeries
    """Host pages completed per interval, and the flash work of each interval (JSON
    only)."""
    die_time: DieTimeReport
    """How the dies spent the measured time, in total and per host request."""
    flash_ops: FlashOps
    """The flash operations by kind and purpose."""
    integrity: str
    """`"ok"` when every read, during the run and in a final read-back of every logical
    page, returned the data last written; otherwise a description of the first
    mismatch (the exit status is then 1); `"not checked: the run was interrupted"`
    after Ctrl-C (no final read-back, no mismatch during the run)."""
    integrity_errors: int
    """Mismatching reads found."""
    expired_reads: int
    """Page reads the FTL refused because the data's lifetime was over when the read
    ran (a late task read; Telomere), counted rather than failing the run."""
    late_requests: int
    """Trace requests out of time order beyond the reorder window (issued at the latest
    time seen)."""
    skipped_lines: int
    """Malformed trace lines skipped (`--skip-bad-lines`)."""
    address: Optional[str]
    """How trace addresses were folded into the device (modulo, compact, ...); null
    without a trace."""
    error: Optional[str]
    """Null when the run ran to its end; otherwise why it stopped early (a flash or FTL
    error, a malformed trace line, Ctrl-C: "interrupted after N measured requests"),
    and every other field reports what the run did until then. The final read-back
    of every page is skipped, so `integrity` covers only the reads the run made. The
    table shows it on an `error` line; the exit status is 1 (130 after Ctrl-C)."""
    provenance: Provenance
    """How the report was made: enough to run it again (`ftlab rerun`)."""
    energy: Optional[EnergyReport]
    """The energy of the measured flash work, with `[device.energy]`; left out
    otherwise."""
    fairness: Optional[float]
    """Smallest flow slowdown / largest (1: every flow slowed alike); null unless every
    flow has a slowdown; left out of single-workload reports."""
    flows: Optional[List[FlowReport]]
    """One object a flow, in the order of the `[[flow]]` tables (MQSim's flows in file
    order); left out of single-workload reports."""
    ftl_curves: Optional[Dict[str, List[float]]]
    """Only for an FTL with curves (left out otherwise): each curve at the end of the
    run, an array. Janus-FTL: `ghost_hit_rates`, the ghost buffers' estimate of the
    page-mapping area's hit rate at 0, 1, 2, ... fused blocks that its last
    adaptation decision used (left out before the first); `ftlab janus-model
    --hit-rates REPORT.json` evaluates Eq. 1-5 on it. Not in CSV output."""
    ftl_gauges: Optional[Dict[str, float]]
    """Only for an FTL with gauges (left out otherwise): each gauge's value at the end
    of the run (the last values of `throughput.gauges`). In `ftlab run -f csv` they
    are columns `ftl_gauges.NAME`; sweep rows carry `ftl_gauges.NAME` only when a
    `[[plot]]` of the sweep plots it (null for a run whose FTL has no such gauge)."""
    max_read_block_us: Optional[float]
    """Only with `host.dispatch = "per-die-edf"` (absent otherwise, and when the FTL
    never names the die of a read): the longest time a host read page command
    waited, after it became ready, for flash work already reserved on its die at
    that moment — the non-preemptive operation it did not choose. When the FTL
    puts writes on free dies (pagemap does) and no garbage collection runs, that is
    at most one flash operation (with its wait for the channel), so at most the
    erase time; garbage collection the FTL reserves on the die counts whole. Waiting
    for commands with earlier deadlines and for the channel is not counted."""
    unsupported: Optional[List[str]]
    """Settings of an imported configuration (`ftlab mqsim`) that ftlab does not model,
    each naming the MQSim element, its value and what ftlab does instead; left out
    when empty."""
    # --- end of generated (Report)
    @classmethod
    def from_json(cls, text: str) -> "Report": ...
    def to_json(self, indent: Optional[int] = 2) -> str: ...
    def save_html(self, path: str, title: str = "") -> None: ...
    def scalars(self) -> Dict[str, Any]:
        """Scalar fields with dotted names: the columns of `ftlab run -f csv`."""
    def latency_figure(self, file: Optional[_PathOrText] = None) -> str:
        """The response-time distribution as a figure (SVG; with `file`, also SVG, PNG or PDF)."""
    def latency_cdf(self) -> pandas.DataFrame:
        """Columns op, fraction, latency_us: one row per histogram bucket."""
    def latency_percentiles(self) -> pandas.DataFrame:
        """Columns op, percentile, latency_us: fio's default percentile list."""
    def timeseries(self) -> pandas.DataFrame:
        """Columns time_s, read_pages, write_pages, flash_programs, gc_programs, erases, waf."""
    def erase_counts(self) -> pandas.DataFrame:
        """The erase-count distribution: columns erase_count, blocks (summary: report.erase_count)."""
    def rber_distribution(self) -> pandas.DataFrame:
        """Columns rber, fraction."""
    def tasks_frame(self) -> pandas.DataFrame: ...
    def zones(self) -> pandas.DataFrame: ...
    def fdp_handles(self) -> pandas.DataFrame: ...
    def fdp_events(self) -> pandas.DataFrame:
        """Columns time_us, type, name, pid, group, pages_moved: the FDP event log, oldest first."""
    def to_html(self, title: str = "") -> str:
        """One self-contained HTML page (inline SVG, no network)."""

def run(config: Union[Config, _PathOrText], progress: Union[bool, Progress] = True) -> Report:
    """Runs `config`; the GIL is released and Ctrl-C stops it."""

def sweep(
    base: Union[Config, _PathOrText],
    grid: Dict[str, Sequence[Any]],
    executor: Union[Literal["local", "ray"], concurrent.futures.Executor] = "local",
    workers: Optional[int] = None,
    ship_traces: Optional[bool] = None,
) -> pandas.DataFrame:
    """One row per grid point, with the columns of `ftlab sweep`'s CSV."""

@final
class Completion:
    """A command's completion (`Device.step`, `step_until`, `wait`); times in ns."""

    @property
    def tag(self) -> int: ...
    @property
    def command(self) -> Literal["read", "write", "trim", "write-zeroes", "flush"]: ...
    @property
    def submitted(self) -> int: ...
    @property
    def completed(self) -> int: ...
    @property
    def latency_ns(self) -> int: ...
    @property
    def data(self) -> Optional[bytes]:
        """The bytes a read returned; None for other commands and failures."""
    @property
    def error(self) -> Optional[DeviceError]:
        """Why the command failed, or None."""
    def result(self) -> Optional[bytes]:
        """`data`, or `error` raised."""

@final
class Device:
    """A simulated SSD with real bytes; times in ns. `read`, `write`, ... serve one
    command and return; `submit_*` put several in flight and return tags, and
    `step`, `step_until` and `wait` return their completions."""

    capacity: int
    page_size: int
    sector: int
    now: int
    ftl: str
    durability: Literal["on-ack", "on-flush"]
    def __new__(cls, config: Config) -> "Device": ...
    def write(self, offset: int, data: Union[bytes, bytearray, memoryview], *, fua: bool = False, at: Optional[int] = None) -> int: ...
    def read(self, offset: int, length: int, *, at: Optional[int] = None) -> Tuple[bytes, int]: ...
    def trim(self, offset: int, length: int, *, at: Optional[int] = None) -> int: ...
    def zones(self) -> List[Dict[str, Any]]:
        """The zone report of a zoned device (ftl.kind = "zns"): zone, start, capacity, write_pointer (bytes), state, zrwa (a Zone Random Write Area allocated)."""
    def zone_append(self, zone: int, data: Union[bytes, bytearray, memoryview], *, at: Optional[int] = None) -> Tuple[int, int]:
        """Zone Append of whole pages: (offset of the first byte written, completion ns)."""
    def zone_manage(self, zone: int, action: str, *, upto: Optional[int] = None, at: Optional[int] = None) -> int:
        """open, close, finish, reset, offline, open-zrwa or flush-zrwa (with upto, the byte offset the write pointer moves to) on a zone; the completion time, ns."""
    def write_zeroes(self, offset: int, length: int, *, fua: bool = False, at: Optional[int] = None) -> int: ...
    def flush(self, *, at: Optional[int] = None) -> int: ...
    def cut_power(self, at: Optional[int] = None) -> int: ...
    def recover(self) -> int: ...
    def counters(self) -> Dict[str, Any]: ...
    def submit_read(self, offset: int, length: int, *, at: Optional[int] = None) -> int: ...
    def submit_write(self, offset: int, data: Union[bytes, bytearray, memoryview], *, fua: bool = False, at: Optional[int] = None) -> int: ...
    def submit_trim(self, offset: int, length: int, *, at: Optional[int] = None) -> int: ...
    def submit_write_zeroes(self, offset: int, length: int, *, fua: bool = False, at: Optional[int] = None) -> int: ...
    def submit_flush(self, *, at: Optional[int] = None) -> int: ...
    def step(self) -> Optional[Completion]:
        """The next completion in time order; None when nothing is in flight."""
    def step_until(self, t: int) -> List[Completion]:
        """Every completion at or before `t`, in time order; the clock moves to `t`."""
    def wait(self, tag: int) -> Completion:
        """Command `tag`'s completion (KeyError when it is not in flight)."""
    @property
    def in_flight(self) -> int: ...
    @property
    def next_completion(self) -> Optional[int]: ...

def bounds(chip: str, *, with_transfer: bool = False) -> Dict[str, Any]:
    """The papers' bounds for `chip` and, under "as_run", each real-time FTL's as run."""

def admit(
    taskset: Union[_PathOrText, List[Dict[str, Any]]],
    policy: Literal["sip", "sharp", "waogc", "multilog"] = "sharp",
    chip: str = "telomere-1tb-ssd",
    *,
    blocks: Optional[int] = None,
    over_provisioning: Optional[float] = None,
    per_chip: bool = False,
    multilog_workload: Literal["random", "zipf"] = "random",
    waf: Optional[float] = None,
) -> Dict[str, Any]:
    """Telomere's admission (or a baseline's) for a periodic task set, as `ftlab admit -f json`."""

def report_html(results: Union[Report, pandas.DataFrame, _PathOrText], title: str = "") -> str:
    """One self-contained HTML page of a Report, a sweep's DataFrame or a results file."""

def plot(
    rows: Union[pandas.DataFrame, Sequence[Dict[str, Any]]],
    *,
    x: str,
    y: str,
    series: Optional[str] = None,
    kind: Literal["bars", "lines"] = "bars",
    stack: Optional[Sequence[str]] = None,
    file: Optional[_PathOrText] = None,
    title: Optional[str] = None,
    x_label: Optional[str] = None,
    y_label: Optional[str] = None,
    legend: Optional[str] = None,
    x_scale: Literal["linear", "log"] = "linear",
    x_range: Optional[Tuple[float, float]] = None,
    steps: bool = False,
) -> str:
    """A figure for a paper (the SVG; with `file`, also written as SVG, PNG or PDF)."""
