"""``ftlab.sweep``: a grid of config keys over a base configuration, run on
local threads or as Ray tasks, returned as a DataFrame with the columns of
``ftlab sweep``'s CSV."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence

from . import _ftlab


def _run_task(task: str, columns: List[str]) -> List[Any]:
    """One sweep point (``SweepPlan.task``) run where this is called: a Ray
    worker, or any process with ftlab installed."""
    return json.loads(_ftlab.run_task(task, columns))


def _ray_rows(plan: Any, columns: List[str], workers: Optional[int]) -> List[List[Any]]:
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
    # At most `workers` runs in flight (all of them if None): the rest are
    # submitted as runs finish.
    limit = workers if workers else len(plan)
    pending: Dict[Any, int] = {}
    rows: List[Optional[List[Any]]] = [None] * len(plan)
    next_point = 0
    while next_point < len(plan) or pending:
        while next_point < len(plan) and len(pending) < limit:
            pending[task.remote(plan.task(next_point), columns)] = next_point
            next_point += 1
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            rows[pending.pop(ref)] = ray.get(ref)
    return [r for r in rows if r is not None]


def sweep(
    base: Any,
    grid: Dict[str, Sequence[Any]],
    executor: str = "local",
    workers: Optional[int] = None,
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
    started here), at most ``workers`` at a time (None: all)."""
    import pandas as pd

    from . import _config

    plan = _ftlab.plan_sweep(_config(base), dict(grid))
    columns = plan.columns
    if executor == "local":
        rows = json.loads(plan.run_local(workers))
    elif executor == "ray":
        rows = _ray_rows(plan, columns, workers)
    else:
        raise ValueError(f'executor must be "local" or "ray", got {executor!r}')
    return pd.DataFrame(rows, columns=columns)
