"""Type stubs for ftlab (the native part is ftlab._ftlab)."""

import os
from typing import Any, Callable, Dict, Iterator, List, Literal, Optional, Sequence, Tuple, Union

import pandas

__version__: str

PathOrText = Union[str, "os.PathLike[str]"]
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

class ConfigFileError(ConfigError, OSError):
    """A configuration file that cannot be opened; raised as its OSError subclass
    by errno, `.errno` the OS's."""

    message: str

class DeviceError(Error):
    """A device command failed; `.errno` tells its kind."""

class RunError(Error):
    """A run failed after it started; `.report` holds what it did until then."""

def presets() -> Dict[str, List[Dict[str, str]]]:
    """Chips, FTLs, workload presets and trace formats: {"chips": [{"name", "summary"}], ...}."""

class Config:
    """A run configuration kept as its TOML table; keys are `--set` dotted paths."""

    def __init__(self, **overrides: Any) -> None: ...
    @staticmethod
    def from_toml(source: PathOrText, **overrides: Any) -> "Config":
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
    def __eq__(self, other: object) -> bool: ...

class Record:
    """A JSON object of a report: fields as attributes and items."""

    def __getattr__(self, name: str) -> Any: ...
    def __getitem__(self, name: str) -> Any: ...
    def __contains__(self, name: object) -> bool: ...
    def __iter__(self) -> Iterator[str]: ...
    def to_dict(self) -> Dict[str, Any]: ...

class Report(Record):
    """The result of one run: every field of `ftlab run -f json` as an attribute."""

    ftl: str
    chip: str
    workload: str
    seed: int
    requests: int
    host_pages_read: int
    host_pages_written: int
    host_pages_trimmed: int
    rmw_pages: int
    flash_pages_read: int
    flash_pages_programmed: int
    gc_page_copies: int
    erases: int
    waf: Optional[float]
    read_us: Record
    write_us: Record
    trim_us: Record
    latency: Record
    erase_count: Record
    rber: Record
    retired_fraction: float
    rber_cdf: List[List[float]]
    stopped_at_retired_fraction: bool
    space_utilization: float
    logical_pages: int
    physical_pages: int
    ram_bytes: int
    ftl_bound_us: Optional[float]
    bound_us: Optional[float]
    bound_violations: Optional[int]
    max_service_us: float
    rmw_bound_us: Optional[float]
    rmw_bound_violations: Optional[int]
    max_rmw_service_us: float
    deadline_misses: int
    tasks_refused: int
    tasks: List[Dict[str, Any]]
    sim_seconds: float
    throughput: Record
    flash_ops: Record
    integrity: str
    integrity_errors: int
    expired_reads: int
    late_requests: int
    skipped_lines: int
    address: Optional[str]
    error: Optional[str]
    @classmethod
    def from_json(cls, text: str) -> "Report": ...
    def to_json(self, indent: Optional[int] = 2) -> str: ...
    def save_html(self, path: str, title: str = "") -> None: ...
    def scalars(self) -> Dict[str, Any]:
        """Scalar fields with dotted names: the columns of `ftlab run -f csv`."""
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
    def to_html(self, title: str = "") -> str:
        """One self-contained HTML page (inline SVG, no network)."""

def run(config: Union[Config, PathOrText], progress: Union[bool, Progress] = True) -> Report:
    """Runs `config`; the GIL is released and Ctrl-C stops it."""

def sweep(
    base: Union[Config, PathOrText],
    grid: Dict[str, Sequence[Any]],
    executor: Literal["local", "ray"] = "local",
    workers: Optional[int] = None,
    ship_traces: bool = True,
) -> pandas.DataFrame:
    """One row per grid point, with the columns of `ftlab sweep`'s CSV."""

class Device:
    """A simulated SSD taken one command at a time with real bytes; times in ns."""

    capacity: int
    page_size: int
    sector: int
    now: int
    ftl: str
    durability: Literal["on-ack", "on-flush"]
    def __init__(self, config: Config) -> None: ...
    def write(self, offset: int, data: Union[bytes, bytearray, memoryview], *, fua: bool = False, at: Optional[int] = None) -> int: ...
    def read(self, offset: int, length: int, *, at: Optional[int] = None) -> Tuple[bytes, int]: ...
    def trim(self, offset: int, length: int, *, at: Optional[int] = None) -> int: ...
    def write_zeroes(self, offset: int, length: int, *, fua: bool = False, at: Optional[int] = None) -> int: ...
    def flush(self, *, at: Optional[int] = None) -> int: ...
    def cut_power(self, at: Optional[int] = None) -> int: ...
    def recover(self) -> int: ...
    def counters(self) -> Dict[str, Any]: ...

def bounds(chip: str, *, with_transfer: bool = False) -> Dict[str, Any]:
    """The papers' bounds for `chip` and, under "as_run", each real-time FTL's as run."""

def admit(
    taskset: Union[PathOrText, List[Dict[str, Any]]],
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

def report_html(results: Union[Report, pandas.DataFrame, PathOrText], title: str = "") -> str:
    """One self-contained HTML page of a Report, a sweep's DataFrame or a results file."""
