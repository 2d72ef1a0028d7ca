"""ftlab: NAND flash translation layers over a strict NAND model, from Python.

>>> import ftlab
>>> cfg = ftlab.Config.from_toml('''
... [device]
... chip = "small-slc"
... blocks_per_plane = 64
... [workload.generator]
... kind = "uniform"
... requests = 2000
... ''', **{"ftl.kind": "pagemap"})
>>> report = ftlab.run(cfg, progress=False)
>>> report.ftl, report.integrity
('pagemap', 'ok')

- ``presets()``: chips, FTLs, workload presets, trace formats;
- ``Config``: a run configuration from TOML, keys set with ``--set``'s dotted paths;
- ``run(config) -> Report``: one run (the GIL is released; Ctrl-C stops it);
- ``sweep(base, grid, executor="local"|"ray") -> pandas.DataFrame``: one row per
  run, the columns of ``ftlab sweep``'s CSV;
- ``Device(config)``: a simulated SSD with real bytes, one command at a time
  (``read``, ``write``, ...) or several in flight (``submit_*``, then ``step``,
  ``step_until``, ``wait``: ``Completion``s);
- ``bounds(chip)``, ``admit(taskset, policy, chip)``: the design-time calculators;
- ``plot(rows, x=..., y=..., series=...)``: a figure for a paper (SVG, PNG or PDF),
  drawn as ``ftlab sweep``'s ``[[plot]]`` tables and the HTML report draw theirs;
- ``ConfigError``, ``TraceError``, ``DeviceError``, ``RunError`` (all ``ftlab.Error``,
  with ``.errno``, ``.kind`` and ``.report``); a trace or configuration file that
  cannot be opened raises ``TraceFileError`` or ``ConfigFileError``, which are
  also ``OSError`` (``FileNotFoundError``, ``PermissionError``, ... by errno, with
  the OS's ``.errno`` and ``.filename``).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Optional, Sequence, Tuple, Union

from . import _ftlab
from ._ftlab import (
    Completion,
    Config,
    ConfigError,
    ConfigFileError,
    Device,
    DeviceError,
    Error,
    RunError,
    TraceError,
    TraceFileError,
    admit,
    bounds,
    presets,
)
from . import _fields
from ._fields import *  # noqa: F401,F403 - the report's nested classes
from ._record import Record
from ._report import Report
from ._sweep import _config, sweep

__version__ = _ftlab.__version__

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
    "presets",
    "plot",
    "report_html",
    "run",
    "sweep",
    *_fields.__all__,
]

Progress = Callable[[int, int, bool], Any]


class _ProgressLine:
    """``progress=True``: one line on stderr, rewritten as the run goes, where
    someone watches it (a terminal or a notebook; not a log file), as the
    ``ftlab`` command shows its bar only on a terminal."""

    def __init__(self) -> None:
        self.shown = False
        isatty = getattr(sys.stderr, "isatty", None)
        self.enabled = bool(isatty and isatty()) or "ipykernel" in sys.modules

    def __call__(self, requests: int, sim_ns: int, measuring: bool) -> None:
        if not self.enabled:
            return
        phase = "measuring" if measuring else "preconditioning"
        sys.stderr.write(f"\rftlab: {requests:,} requests, {sim_ns / 1e9:.3f} s simulated ({phase})  ")
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()


def run(config: Union[Config, str, "os.PathLike[str]"], progress: Union[bool, Progress] = True) -> Report:
    """Runs ``config`` (a ``Config``, a config file's path or TOML text) and
    returns its ``Report``.

    ``progress``: True shows a progress line on stderr (on a terminal or in a
    notebook), False nothing, or a
    callable ``progress(requests, sim_ns, measuring)`` called every few
    thousand requests. The GIL is released while the simulation runs; Ctrl-C
    (KeyboardInterrupt) stops it.

    Raises ``ConfigError`` or ``TraceError`` before time zero for bad input,
    and ``RunError`` (with ``.report``, what the run did until then) when the
    FTL or the flash fails it after it started."""
    cfg = _config(config)
    line = _ProgressLine() if progress is True else None
    callback: Optional[Progress] = line if line is not None else (progress if callable(progress) else None)
    try:
        text = _ftlab.run_json(cfg, callback)
    finally:
        if line is not None:
            line.close()
    return Report.from_json(text)


def report_html(results: Any, title: str = "") -> str:
    """One self-contained HTML page (inline SVG plots, no network fetch) of
    ``results``: a ``Report``, a sweep's ``pandas.DataFrame``, or the path of a
    results file (``ftlab run -f json``, ``ftlab sweep``'s CSV or JSON lines),
    as ``ftlab report RESULTS -o report.html`` writes it."""
    if isinstance(results, Report):
        return results.to_html(title)
    if hasattr(results, "to_csv"):
        return _ftlab.results_html(results.to_csv(index=False), "DataFrame", title)
    if isinstance(results, (str, os.PathLike)):
        with open(results, encoding="utf-8") as f:
            return _ftlab.results_html(f.read(), os.fspath(results), title)
    raise TypeError(f"report_html takes a Report, a DataFrame or a results file path, got {type(results).__name__}")


def _cell(v: Any) -> Any:
    """A table cell as JSON: NaN and None as null, numpy scalars as Python's."""
    if v is None:
        return None
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and v != v:
        return None
    if isinstance(v, (bool, int, float, str)):
        return v
    return str(v)


def plot(
    rows: Any,
    *,
    x: str,
    y: str,
    series: Optional[str] = None,
    kind: str = "bars",
    stack: Optional[Sequence[str]] = None,
    file: Optional[Union[str, "os.PathLike[str]"]] = None,
    title: Optional[str] = None,
    x_label: Optional[str] = None,
    y_label: Optional[str] = None,
    legend: Optional[str] = None,
    x_scale: str = "linear",
    x_range: Optional[Tuple[float, float]] = None,
    steps: bool = False,
) -> str:
    """A figure fit for a paper, drawn by ftlab's one plotting path (the same
    as ``ftlab sweep``'s ``[[plot]]`` tables and the HTML report): 3.5 inches
    wide, text at least 7 pt, SI-scaled units, titles from the report's field
    dictionary, a colour-blind-safe palette with hatches, dashes and markers.

    ``rows`` is a ``pandas.DataFrame`` (a sweep's, for one) or a list of
    dicts. ``kind="bars"``: one group of bars per value of ``x``, one bar per
    value of ``series`` (the mean where rows share both), or with ``stack``
    one bar per group of ``y`` and the ``stack`` columns on it.
    ``kind="lines"``: a line of ``(x, y)`` per value of ``series`` (one line
    without it), in the rows' order. Returns the SVG; with ``file``, also
    writes it as SVG, PNG (300 dpi) or PDF by the file's extension.
    """
    if hasattr(rows, "to_dict"):
        records = rows.to_dict(orient="records")
    else:
        records = [dict(r) for r in rows]
    columns: list = []
    for r in records:
        for k in r:
            if k not in columns:
                columns.append(k)
    for name, col in [("x", x), ("y", y), ("series", series)] + [("stack", s) for s in (stack or [])]:
        if col is not None and col not in columns:
            raise KeyError(f"plot: {name} = {col!r} is not a column; columns: {', '.join(map(str, columns))}")
    name = os.fspath(file) if file is not None else "figure.svg"
    spec: dict = {"file": os.path.basename(name), "title": title, "x": x, "y": y, "series": series,
                  "x_label": x_label, "y_label": y_label, "legend": legend}
    if kind == "bars":
        spec["stack"] = list(stack or [])
        data = {"columns": [str(c) for c in columns],
                "rows": [[_cell(r.get(c)) for c in columns] for r in records]}
    elif kind == "lines":
        if stack:
            raise ValueError("plot: stack is for kind=\"bars\"")
        spec.update({"each": "", "x_scale": x_scale, "x_range": list(x_range) if x_range else None, "steps": steps})
        lines: dict = {}
        for r in records:
            xv, yv = _cell(r.get(x)), _cell(r.get(y))
            if not isinstance(xv, (int, float)) or not isinstance(yv, (int, float)):
                continue
            key = str(_cell(r.get(series))) if series is not None else y
            lines.setdefault(key, []).append([xv, yv])
        data = {"lines": [[k, v] for k, v in lines.items()]}
    else:
        raise ValueError(f"plot: kind = {kind!r}; use \"bars\" or \"lines\"")
    import json

    return _ftlab.figure(kind, json.dumps(spec), json.dumps(data), name if file is not None else None)

