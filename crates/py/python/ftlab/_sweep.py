"""``ftlab.sweep``: a grid of config keys over a base configuration, run on
local threads or as Ray tasks, returned as a DataFrame with the columns of
``ftlab sweep``'s CSV."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

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

    def submit(point: int) -> Any:
        text = plan.task(point)
        names = traces(text)
        return task.remote(text, columns, names, *[shipped[n] for n in names])

    def wait_any(pending: List[Any]) -> List[Any]:
        return ray.wait(pending, num_returns=1)[0]

    return _run_points(len(plan), workers, submit, wait_any, ray.get, lambda ref: ray.cancel(ref))


def _executor_rows(
    plan: Any, columns: List[str], executor: Any, workers: Optional[int], ship_traces: bool
) -> List[List[Any]]:
    """The rows of the points run on a ``concurrent.futures.Executor``."""
    import concurrent.futures as cf

    blobs: Dict[str, Optional[bytes]] = {}

    def submit(point: int) -> Any:
        text = plan.task(point)
        names: List[str] = []
        if ship_traces:
            for path in _traces_of(text):
                if path not in blobs:
                    try:
                        with open(path, "rb") as f:
                            blobs[path] = f.read()
                    except OSError:
                        # The run reports the missing file, as a local one would.
                        blobs[path] = None
                if blobs[path] is not None:
                    names.append(path)
        return executor.submit(_run_task, text, columns, names, *[blobs[n] for n in names])

    def wait_any(pending: List[Any]) -> List[Any]:
        return list(cf.wait(pending, return_when=cf.FIRST_COMPLETED).done)

    return _run_points(len(plan), workers, submit, wait_any, lambda f: f.result(), lambda f: f.cancel())


def _run_points(
    points: int,
    workers: Optional[int],
    submit: Callable[[int], Any],
    wait_any: Callable[[List[Any]], List[Any]],
    get: Callable[[Any], List[Any]],
    cancel: Callable[[Any], Any],
) -> List[List[Any]]:
    """Runs every point through ``submit`` with at most ``workers`` in flight
    (all of them if None): the rest are submitted as runs finish. Shows
    progress per point on a terminal; on Ctrl-C, cancels what is in flight and
    re-raises. The rows in run order."""
    limit = workers if workers else points
    show = sys.stderr.isatty()
    finished = 0
    pending: Dict[Any, int] = {}
    rows: List[Optional[List[Any]]] = [None] * points
    next_point = 0
    try:
        while next_point < points or pending:
            while next_point < points and len(pending) < limit:
                pending[submit(next_point)] = next_point
                next_point += 1
            for handle in wait_any(list(pending)):
                point = pending.pop(handle)
                rows[point] = get(handle)
                finished += 1
                if show:
                    sys.stderr.write(f"\rftlab.sweep: {finished}/{points} points done (last: run {point})")
                    sys.stderr.flush()
    except KeyboardInterrupt:
        for handle in pending:
            cancel(handle)
        raise
    finally:
        if show and finished:
            sys.stderr.write("\n")
    return [r for r in rows if r is not None]


def sweep(
    base: Any,
    grid: Dict[str, Sequence[Any]],
    executor: Any = "local",
    workers: Optional[int] = None,
    ship_traces: Optional[bool] = None,
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
    same files.

    ``executor`` may also be any ``concurrent.futures.Executor`` (a
    ``ProcessPoolExecutor``, ``ThreadPoolExecutor``, or one of a cluster
    library, e.g. ``dask.distributed.Client.get_executor()``, ``loky``,
    ``mpi4py.futures``): each point is submitted to it as a call of a
    module-level function with picklable arguments, at most ``workers`` at a
    time (None: all; the executor's own limit still holds). With
    ``ship_traces=True`` the traces' bytes go with each call, for executors
    whose workers do not see this machine's files; by default (None) they
    are shipped for Ray only. Ctrl-C cancels the points not started (runs
    under way in another process finish there)."""
    import pandas as pd

    plan = _ftlab.plan_sweep(_config(base), dict(grid))
    columns = plan.columns
    if executor == "local":
        rows = json.loads(plan.run_local(workers))
    elif executor == "ray":
        rows = _ray_rows(plan, columns, workers, True if ship_traces is None else ship_traces)
    elif callable(getattr(executor, "submit", None)):
        rows = _executor_rows(plan, columns, executor, workers, bool(ship_traces))
    else:
        raise ValueError(
            f'executor must be "local", "ray" or a concurrent.futures.Executor, got {executor!r}'
        )
    return pd.DataFrame(rows, columns=columns)
