"""Type stubs for ftlab's native module (``ftlab/__init__.py`` re-exports its
public part; the rest serves ``ftlab.run``, ``ftlab.sweep`` and the HTML reports)."""

from typing import Any, Callable, List, Optional, Sequence, Tuple

from typing_extensions import final

from . import (
    Completion as Completion,
    Config as Config,
    ConfigError as ConfigError,
    ConfigFileError as ConfigFileError,
    Device as Device,
    DeviceError as DeviceError,
    Error as Error,
    RunError as RunError,
    TraceError as TraceError,
    TraceFileError as TraceFileError,
    admit as admit,
    bounds as bounds,
    presets as presets,
)

__all__ = [
    "presets",
    "Config",
    "Device",
    "Completion",
    "SweepPlan",
    "run_json",
    "report_html",
    "results_html",
    "figure",
    "latency_figure",
    "plan_sweep",
    "run_task",
    "bounds",
    "admit",
    "Error",
    "ConfigError",
    "TraceError",
    "DeviceError",
    "RunError",
    "TraceFileError",
    "ConfigFileError",
    "__version__",
]

__version__: str

def run_json(config: Config, progress: Optional[Callable[[int, int, bool], Any]] = None) -> str:
    """Runs `config`; its report as JSON text."""

def report_html(report_json: str, title: str = "") -> str:
    """The HTML page of a report given as JSON text."""

def results_html(text: str, origin: str = "results", title: str = "") -> str:
    """The HTML page of a results file's text; `origin` names it in errors."""

def latency_figure(report_json: str, path: Optional[str] = None) -> str:
    """The response-time distribution of a report (JSON text) as a figure; the SVG, also written to `path`."""

def figure(kind: str, spec_json: str, data_json: str, path: Optional[str] = None) -> str:
    """Draws a figure from a plot table and its data (JSON); the SVG, also written to `path`."""

@final
class SweepPlan:
    """The validated points of a sweep and the columns of its rows."""

    @property
    def columns(self) -> List[str]: ...
    def __len__(self) -> int: ...
    def task(self, i: int) -> str:
        """Point `i` as a self-contained TOML text for `run_task`."""
    def run_local(self, workers: Optional[int] = None, on_row: Optional[Callable[[int], Any]] = None) -> str:
        """Runs every point on local threads; the rows in run order as JSON text."""

def plan_sweep(base: Config, grid: Any) -> SweepPlan:
    """Expands and validates `grid` over `base`."""

def run_task(task: str, columns: Sequence[str], traces: Optional[Sequence[Tuple[str, str]]] = None) -> str:
    """Runs one point's TOML text; its row as JSON text."""
