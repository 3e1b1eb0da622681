"""A repeat of a request id returns the first result; the same id with other parameters is refused
with ALREADY_EXISTS naming what differs (AIP-155). Which requests count as the same id is the store's
business: it scopes request ids by caller (two callers never share one)."""

from __future__ import annotations

import json
from typing import Any

from ledger.errors import LedgerError, already_exists


def canonical(params: dict[str, Any]) -> str:
    """The stored form of a request's parameters: stable across processes and stores."""
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


def differing_fields(stored: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    """The names of the parameters that differ; inside lists of equal length of objects (a batch's
    transfers and resolutions) down to the item's field, e.g. `resolutions[2].capture_amount`."""
    out: list[str] = []
    for k in sorted(stored.keys() | new.keys()):
        a, b = stored.get(k), new.get(k)
        if a == b:
            continue
        name = f"{prefix}{k}"
        if isinstance(a, list) and isinstance(b, list) and _objects(a, b):
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                out += differing_fields(x, y, f"{name}[{i}].")
        else:
            out.append(name)
    return out


def _objects(a: list[Any], b: list[Any]) -> bool:
    return len(a) == len(b) and all(isinstance(v, dict) for v in a + b)


def same_request(stored_op: str, stored_params: str, op: str, params: dict[str, Any]) -> bool:
    """Whether a stored request is this one: the same operation and parameters."""
    return stored_op == op and json.loads(stored_params) == json.loads(canonical(params))


def check_replay(
    request_id: str, stored_op: str, stored_params: str, op: str, params: dict[str, Any]
) -> None:
    """Raises unless the replay carries the first request's operation and parameters."""
    if stored_op != op:
        raise _conflict(
            request_id, ["operation"], f"request_id {request_id!r} was used by {stored_op}, not {op}"
        )
    fields = differing_fields(json.loads(stored_params), json.loads(canonical(params)))
    if fields:
        raise _conflict(
            request_id,
            fields,
            f"request_id {request_id!r} was used with different {', '.join(fields)}",
        )


def _conflict(request_id: str, fields: list[str], message: str) -> LedgerError:
    return already_exists("REQUEST_ID_REUSED", message, request_id=request_id, differs=",".join(fields))
