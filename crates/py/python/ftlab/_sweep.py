"""``ftlab.sweep``: a grid of config keys over a base configuration, run on
local threads or as Ray tasks, returned as a DataFrame with the columns of
``ftlab sweep``'s CSV."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict, List, Optional, Sequence, Union

from . import _ftlab


def _config(config: Union[_ftlab.Config, str, "os.PathLike[str]"]) -> _ftlab.Config:
    """A ``Config`` from a ``Config``, a config file's path or TOML text."""
    if isinstance(config, _ftlab.Config):
        return config
    if isinstance(config, (str, os.PathLike)):
        return _ftlab.Config.from_toml(config)
    raise TypeError(f"expected an ftlab.Config, a config file path or TOML text, got {type(config).__name__}")


def _run_task(task: str, columns: List[str], names: Sequence[str] = (), *blobs: bytes) -> List[Any]:
    """One sweep point (``SweepPlan.task``) run where this is called: a Ray
    worker, or any process with ftlab installed. ``names`` and ``blobs``: the
    traces the point reads, shipped with it (path in the task, contents), for
    a worker that does not share the driver's files."""
    traces = [(name, _local_copy(name, blob)) for name, blob in zip(names, blobs)]
    return json.loads(_ftlab.run_task(task, columns, traces or None))


def _local_copy(name: str, blob: bytes) -> str:
    """A file holding ``blob`` on this machine, named after ``name`` (so its
    extension, e.g. ``.gz``, still tells how to read it), written once per
    content and machine."""
    import hashlib
    import os
    import tempfile

    digest = hashlib.sha256(blob).hexdigest()[:32]
    folder = os.path.join(tempfile.gettempdir(), "ftlab-traces", digest)
    path = os.path.join(folder, os.path.basename(name) or "trace")
    if not os.path.exists(path):
        os.makedirs(folder, exist_ok=True)
        # Written aside and renamed: tasks side by side never read half a file.
        fd, tmp = tempfile.mkstemp(dir=folder)
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(tmp, path)
    return path


def _traces_of(task: str) -> List[str]:
    """The trace paths a point's task text names (its workload's and its
    flows')."""
    import tomllib

    config = tomllib.loads(task).get("config", {})
    paths = [config.get("workload", {}).get("trace")]
    paths += [flow.get("workload", {}).get("trace") for flow in config.get("flow", [])]
    return [p for p in paths if isinstance(p, str)]


def _ray_rows(plan: Any, columns: List[str], workers: Optional[int], ship_traces: bool) -> List[List[Any]]:
    try:
        import ray
    except ImportError as e:
        raise ImportError(
            'executor="ray" needs Ray: pip install "ray[default]" (or executor="local")'
        ) from e
    if not ray.is_initialized():
        # An existing cluster if RAY_ADDRESS names one, else a local one.
        ray.init()
    task = ray.remote(_run_task)
    # Each trace goes into the object store once and travels with the tasks
    # that read it, so workers on other machines need no shared file system.
    shipped: Dict[str, Any] = {}

    def traces(text: str) -> List[str]:
        if not ship_traces:
            return []
        names = []
        for path in _traces_of(text):
            if path not in shipped:
                try:
                    with open(path, "rb") as f:
                        shipped[path] = ray.put(f.read())
                except OSError:
                    # The run reports the missing file, as a local one would.
                    shipped[path] = None
            if shipped[path] is not None:
                names.append(path)
        return names

    # At most `workers` runs in flight (all of them if None): the rest are
    # submitted as runs finish.
    limit = workers if workers else len(plan)
    # Progress per point on a terminal.
    show = sys.stderr.isatty()
    finished = 0
    pending: Dict[Any, int] = {}
    rows: List[Optional[List[Any]]] = [None] * len(plan)
    next_point = 0
    while next_point < len(plan) or pending:
        while next_point < len(plan) and len(pending) < limit:
            text = plan.task(next_point)
            names = traces(text)
            ref = task.remote(text, columns, names, *[shipped[n] for n in names])
            pending[ref] = next_point
            next_point += 1
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            point = pending.pop(ref)
            rows[point] = ray.get(ref)
            finished += 1
            if show:
                sys.stderr.write(f"\rftlab.sweep: {finished}/{len(plan)} points done (last: run {point})")
                sys.stderr.flush()
    if show:
        sys.stderr.write("\n")
    return [r for r in rows if r is not None]


def sweep(
    base: Any,
    grid: Dict[str, Sequence[Any]],
    executor: str = "local",
    workers: Optional[int] = None,
    ship_traces: bool = True,
):
    """Runs ``base`` (a ``Config``, a config file path or TOML text) at every
    point of ``grid`` and returns a ``pandas.DataFrame``: one row per run, in
    run order, with the columns of ``ftlab sweep``'s CSV (``run``, the grid
    keys, the report's scalar fields, ``error``).

    ``grid`` maps dotted config keys to lists of values, e.g.
    ``{"ftl.kind": ["pagemap", "dftl"], "seed": [1, 2, 3]}``; the points are the
    product of the keys in sorted order, the last key fastest (as a sweep file's
    ``[grid]``), each validated before anything runs (``ConfigError``). A run
    that fails gives its row with the message in ``error``.

    ``executor``: ``"local"`` runs the points on ``workers`` threads of this
    process (None: one per core) with the GIL released; Ctrl-C
    (KeyboardInterrupt) stops it within a fraction of a second, the runs under
    way at their next request; ``"ray"`` runs each
    point as a Ray task (on the cluster ``ray.init`` was given, or a local one
    started here), at most ``workers`` at a time (None: all). With
    ``ship_traces`` (the default) each trace a point reads goes into Ray's
    object store once and travels with the tasks, so workers on other
    machines need no shared file system; their rows name the original paths,
    as the local run's do. ``ship_traces=False`` when every node sees the
    same files."""
    import pandas as pd

    plan = _ftlab.plan_sweep(_config(base), dict(grid))
    columns = plan.columns
    if executor == "local":
        rows = json.loads(plan.run_local(workers))
    elif executor == "ray":
        rows = _ray_rows(plan, columns, workers, ship_traces)
    else:
        raise ValueError(f'executor must be "local" or "ray", got {executor!r}')
    return pd.DataFrame(rows, columns=columns)
