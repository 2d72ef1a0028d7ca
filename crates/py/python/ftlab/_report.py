"""The report of one run: every field of ``ftlab run -f json`` as an attribute,
plus pandas DataFrames of its latency percentiles, throughput time series and
wear figures."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Optional, Tuple

from ._fields import REPORT_FIELDS, REPORT_OPTIONAL
from ._record import Record

# The percentile fields of a latency summary and the fraction of requests at or
# below each (``max`` is the whole distribution).
_PERCENTILES: Tuple[Tuple[str, float], ...] = (
    ("p50", 0.5),
    ("p99", 0.99),
    ("p999", 0.999),
    ("p9999", 0.9999),
    ("max", 1.0),
)


# A zone report's state codes (``ZoneState::code`` in ftlab_ftl).
_ZONE_STATES = (
    "empty",
    "implicitly-opened",
    "explicitly-opened",
    "closed",
    "full",
    "read-only",
    "offline",
)


def _pandas():
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - pandas is a dependency
        raise ImportError("ftlab's DataFrames need pandas: pip install pandas") from e
    return pandas


def _flatten(prefix: str, value: Any, out: Dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else k, v, out)
    elif not isinstance(value, list):
        out[prefix] = value


class Report(Record):
    """The result of one run (``ftlab.run``): every field of ``ftlab run -f
    json`` as an attribute (``report.waf``, ``report.write_us.p99``), the dict
    with ``to_dict()``, and DataFrames: ``latency_cdf()``, ``latency_percentiles()``, ``timeseries()``,
    ``erase_counts()``, ``rber_distribution()``, ``tasks_frame()``, and for the
    zoned and FDP devices ``zones()`` and ``fdp_handles()``. Field meanings:
    crates/cli/FIELDS.md."""

    __slots__ = ()
    _fields = REPORT_FIELDS
    _optional = REPORT_OPTIONAL

    @classmethod
    def from_json(cls, text: str) -> "Report":
        """A report from the JSON text of ``ftlab run -f json`` (or ``to_json``)."""
        return cls(json.loads(text))

    def to_json(self, indent: Optional[int] = 2) -> str:
        """The report as JSON text, as ``ftlab run -f json`` writes it."""
        return json.dumps(self._data, indent=indent)

    def save_html(self, path: str, title: str = "") -> None:
        """Writes ``to_html()`` to ``path``."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_html(title))

    def scalars(self) -> Dict[str, Any]:
        """The scalar fields with dotted names (``read_us.p99``): the columns of
        ``ftlab run -f csv`` and of a sweep's rows (the time series left out)."""
        out: Dict[str, Any] = {}
        _flatten("", {k: v for k, v in self._data.items() if k != "throughput"}, out)
        return out

    def latency_cdf(self):
        """Each operation's response-time distribution as a cumulative
        distribution: a DataFrame with columns ``op`` (read, write, trim),
        ``fraction`` (of the operation's requests at or below) and
        ``latency_us``, one row per histogram bucket (``latency.<op>.bins``:
        the bucket's upper edge and the fraction of requests up to it; the last
        row is the exact max at fraction 1.0). A report without buckets (an
        older one) gives its percentiles p50 to p99.99 and the max instead.
        Operations with no request are left out. For a plot that shows the
        tail, put ``-log10(1 - fraction)`` (nines) on the x axis."""
        pd = _pandas()
        rows = []
        for op in ("read", "write", "trim"):
            summary = self._data.get(f"{op}_us") or {}
            if not summary.get("count"):
                continue
            bins = ((self._data.get("latency") or {}).get(op) or {}).get("bins") or []
            total = sum(n for _, n in bins)
            if total:
                seen = 0
                for ns, n in bins:
                    seen += n
                    rows.append((op, seen / total, ns / 1000.0))
                continue
            for field, fraction in _PERCENTILES:
                rows.append((op, fraction, summary.get(field)))
        return pd.DataFrame(rows, columns=["op", "fraction", "latency_us"])

    def latency_figure(self, file: Optional[str] = None) -> str:
        """The response-time distribution as a figure for a paper, as the HTML
        report draws it: a line per operation, percentiles on an axis that
        gives the tail as much room as the body (0%, 90%, 99%, 99.9%, ...),
        response times on a log axis. Returns the SVG; with ``file``, also
        writes it as SVG, PNG or PDF by its extension."""
        from . import _ftlab

        return _ftlab.latency_figure(self.to_json(indent=None), None if file is None else os.fspath(file))

    def latency_percentiles(self):
        """fio's default percentile list per operation: a DataFrame with
        columns ``op``, ``percentile`` (1 to 99.99) and ``latency_us``, as fio's
        ``clat_ns.percentile`` (``latency.<op>.percentiles``). Operations with
        no request are left out."""
        pd = _pandas()
        rows = []
        for op in ("read", "write", "trim"):
            for pct, us in ((self._data.get("latency") or {}).get(op) or {}).get("percentiles") or []:
                rows.append((op, pct, us))
        return pd.DataFrame(rows, columns=["op", "percentile", "latency_us"])

    def timeseries(self):
        """Host pages and flash work per interval during measurement: a
        DataFrame with columns ``time_s`` (the interval's start),
        ``read_pages``, ``write_pages``, ``flash_programs``, ``gc_programs``,
        ``erases`` and ``waf`` (``flash_programs / write_pages``, NaN in an
        interval without host writes); the interval is
        ``throughput.interval_s`` (``metrics.interval_ms`` sets it). Flash
        work counts in the interval of the first request completion after it
        was issued. An FTL with gauges (``throughput.gauges``, e.g. Janus-FTL's
        ``fused_blocks``) adds one column per gauge after ``waf``, named
        ``gauge.<name>``: its value after the last request completed in the
        interval."""
        pd = _pandas()
        t = self._data.get("throughput") or {}
        names = ["read_pages", "write_pages", "flash_programs", "gc_programs", "erases"]
        cols = {k: list(t.get(k) or []) for k in names}
        step = t.get("interval_s") or 0.0
        n = max(len(v) for v in cols.values())
        frame = {"time_s": [i * step for i in range(n)]}
        for k in names:
            frame[k] = cols[k] + [0] * (n - len(cols[k]))
        frame["waf"] = [p / w if w else float("nan") for p, w in zip(frame["flash_programs"], frame["write_pages"])]
        for name, values in sorted((t.get("gauges") or {}).items()):
            frame[f"gauge.{name}"] = list(values) + [float("nan")] * (n - len(values))
        return pd.DataFrame(frame)

    def erase_counts(self):
        """The good blocks' erase counts at the end of the run as a
        distribution: columns ``erase_count`` and ``blocks`` (how many good
        blocks were erased that many times), one row per count some block
        has. Its summary (mean, std, min, max, wear index) is
        ``report.erase_count``."""
        pd = _pandas()
        return pd.DataFrame(self._data.get("erase_histogram") or [], columns=["erase_count", "blocks"])

    def rber_distribution(self):
        """The good blocks' raw bit error rates at the end of the run as a
        cumulative distribution: columns ``rber`` and ``fraction``."""
        pd = _pandas()
        return pd.DataFrame(self._data.get("rber_cdf") or [], columns=["rber", "fraction"])

    def tasks_frame(self):
        """One row per periodic task (jobs, deadline misses, worst response,
        admission verdict); empty without a task set."""
        pd = _pandas()
        return pd.DataFrame(self._data.get("tasks") or [])

    def zones(self):
        """The zone report at the end of the run of a zoned device
        (``zns-host``): one row per zone with columns ``zone``, ``state`` (its
        ZNS state: ``empty``, ``implicitly-opened``, ``explicitly-opened``,
        ``closed``, ``full``, ``read-only``, ``offline``) and
        ``written_pages``, and from the host FTL ``valid_pages`` and
        ``stream`` (the stream the zone was last opened for); empty for
        another FTL. Zone counts over time: ``timeseries()``, columns
        ``gauge.zones_*``."""
        pd = _pandas()
        curves = self._data.get("ftl_curves") or {}
        states = curves.get("zone_state_by_zone")
        if states is None:
            return pd.DataFrame(columns=["zone", "state", "written_pages"])
        frame = {"zone": list(range(len(states))), "state": [_ZONE_STATES[int(c)] for c in states]}
        for key, col in (
            ("zone_written_pages_by_zone", "written_pages"),
            ("zone_valid_pages_by_zone", "valid_pages"),
            ("zone_stream_by_zone", "stream"),
        ):
            if key in curves:
                frame[col] = [int(v) for v in curves[key]]
        return pd.DataFrame(frame)

    def fdp_handles(self):
        """The FDP statistics per reclaim unit handle of an ``fdp`` device,
        since measurement started: one row per handle with columns
        ``handle``, ``host_pages``, ``media_pages`` and ``waf``
        (``media_pages / host_pages``, NaN for a handle without host writes);
        empty for another FTL. Each handle over time: ``timeseries()``,
        columns ``gauge.fdp_host_pages_h<handle>`` and
        ``gauge.fdp_media_pages_h<handle>``."""
        pd = _pandas()
        curves = self._data.get("ftl_curves") or {}
        host = curves.get("fdp_host_pages_by_handle")
        media = curves.get("fdp_media_pages_by_handle")
        if host is None or media is None:
            return pd.DataFrame(columns=["handle", "host_pages", "media_pages", "waf"])
        return pd.DataFrame(
            {
                "handle": list(range(len(host))),
                "host_pages": [int(v) for v in host],
                "media_pages": [int(v) for v in media],
                "waf": [m / h if h else float("nan") for h, m in zip(host, media)],
            }
        )

    def fdp_events(self):
        """The FDP event log of an ``fdp`` device, oldest first (the newest
        64 events; the log persists across power cuts as of the last FLUSH):
        one row per event with columns ``time_us``, ``type`` (its NVMe code:
        0 reclaim unit not fully written, 3 invalid placement identifier, 128
        media reallocated), ``name``, ``pid`` (the placement identifier, -1
        for none), ``group`` (the reclaim group) and ``pages_moved`` (media
        reallocated); empty for another FTL."""
        pd = _pandas()
        curves = self._data.get("ftl_curves") or {}
        columns = ["time_us", "type", "name", "pid", "group", "pages_moved"]
        kinds = curves.get("fdp_event_type")
        if kinds is None:
            return pd.DataFrame(columns=columns)
        names = {0: "reclaim unit not fully written", 3: "invalid placement identifier", 128: "media reallocated"}
        return pd.DataFrame(
            {
                "time_us": [float(v) for v in curves["fdp_event_time_us"]],
                "type": [int(v) for v in kinds],
                "name": [names.get(int(v), "other") for v in kinds],
                "pid": [int(v) for v in curves["fdp_event_pid"]],
                "group": [int(v) for v in curves["fdp_event_group"]],
                "pages_moved": [int(v) for v in curves["fdp_event_pages_moved"]],
            },
            columns=columns,
        )

    def to_html(self, title: str = "") -> str:
        """The report as one self-contained HTML page (inline SVG, no network)."""
        from . import _ftlab

        return _ftlab.report_html(self.to_json(indent=None), title)

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        d = self._data
        return (
            f"<ftlab.Report ftl={d.get('ftl')!r} chip={d.get('chip')!r} "
            f"requests={d.get('requests')} waf={d.get('waf')} integrity={d.get('integrity')!r}>"
        )
