"""The parts of a tournament's service data that grow with the field: its entries' money state, its
tables' ids and how far each table's events were read. They are kept in rows of their own (`tn_maps`),
one per key, and a change writes the keys it touched, so a change costs what it changes and not the size
of the field (a 10,000-player tournament's data was ~1 MB of JSON, copied and written on every hand
result and every registration).

A change works on a copy of the data (`copy_data`): the small part deep-copied, each map a `Tracked`
shallow copy that remembers the keys set or removed. A map's values are replaced, never changed in place
(the copy shares them with the state it came from).
"""

from __future__ import annotations

import json
from typing import Any

MAPS = ("entries", "tables", "watch")
# In the stored JSON: the maps are in tn_maps (absent: a row written before, the maps inside the JSON).
IN_ROWS = "maps_in_rows"


class Tracked(dict[str, Any]):
    """A dict that remembers which keys were set or removed since it was made."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.changed: set[str] = set()

    def __setitem__(self, key: str, value: Any) -> None:
        self.changed.add(key)
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self.changed.add(key)
        super().__delitem__(key)

    def pop(self, key: str, *default: Any) -> Any:
        self.changed.add(key)
        return super().pop(key, *default)

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def popitem(self) -> tuple[str, Any]:
        raise TypeError("Tracked maps do not pop items")

    def clear(self) -> None:
        raise TypeError("Tracked maps are not cleared")


def copy_data(data: dict[str, Any]) -> dict[str, Any]:
    """A copy a change may modify: the small part deep-copied (through JSON: what is stored), each map a
    Tracked shallow copy."""
    small = {k: v for k, v in data.items() if k not in MAPS}
    copied: dict[str, Any] = json.loads(json.dumps(small))
    for name in MAPS:
        if name in data:
            copied[name] = Tracked(data[name])
    return copied


def changed_keys(data: dict[str, Any]) -> dict[str, set[str]] | None:
    """The keys of each map a change touched; None when every key must be written (data that has not
    been written in rows yet: a tournament stored before the maps had rows of their own)."""
    if not data.get(IN_ROWS):
        return None
    out: dict[str, set[str]] = {}
    for name in MAPS:
        value = data.get(name)
        if value is None:
            continue
        if not isinstance(value, Tracked):
            return None
        out[name] = set(value.changed)
    return out
