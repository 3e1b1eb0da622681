"""A repeat of a request id returns the first result; the same id with other parameters is refused
with ALREADY_EXISTS naming what differs (AIP-155)."""

from __future__ import annotations

import json
from typing import Any

from ledger.errors import LedgerError, already_exists


def canonical(params: dict[str, Any]) -> str:
    """The stored form of a request's parameters: stable across processes and stores."""
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


def differing_fields(stored: dict[str, Any], new: dict[str, Any]) -> list[str]:
    return sorted(k for k in stored.keys() | new.keys() if stored.get(k) != new.get(k))


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
