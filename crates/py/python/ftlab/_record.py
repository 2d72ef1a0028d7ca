"""``Record``: a JSON object of a report with its fields as attributes."""

from __future__ import annotations

import copy
from typing import Any, ClassVar, Dict, FrozenSet, Iterator, List


class Record:
    """A JSON object of the report: its fields as attributes (``r.read_us.p99``)
    and as items (``r["read_us"]["p99"]``). A nested object comes back as its
    own class (``report.read_us`` is a ``LatencySummary``, ``report.flows`` a
    list of ``FlowReport``), a field that the JSON may leave out as None when
    it does, and a name that is no field raises AttributeError naming the
    fields there are."""

    __slots__ = ("_data",)
    # Generated from the report's schema (``_fields.py``): the class of each
    # nested object field, and the fields that may be left out.
    _fields: ClassVar[Dict[str, type]] = {}
    _optional: ClassVar[FrozenSet[str]] = frozenset()

    def __init__(self, data: Dict[str, Any]):
        object.__setattr__(self, "_data", data)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self._wrap(name, self._data[name])
        except KeyError:
            if name in self._optional:
                return None
            raise AttributeError(
                f"{type(self).__name__} has no field {name!r}; fields: {', '.join(self._data)}"
            ) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a report is read-only; use to_dict() for a copy to change")

    def __getitem__(self, name: str) -> Any:
        return self._wrap(name, self._data[name])

    def __contains__(self, name: object) -> bool:
        return name in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | set(self._data))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Record) and self._data == other._data

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._data!r})"

    def to_dict(self) -> Dict[str, Any]:
        """A deep copy of the fields, as the JSON output has them."""
        return copy.deepcopy(self._data)

    def _wrap(self, name: str, value: Any) -> Any:
        cls = self._fields.get(name, Record)
        if isinstance(value, dict):
            return cls(value)
        if isinstance(value, list) and name in self._fields:
            return [cls(v) if isinstance(v, dict) else v for v in value]
        return value
