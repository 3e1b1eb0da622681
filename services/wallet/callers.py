"""Whose request a wallet request is: the key that scopes request ids (ARCHITECTURE "Conventions on the
wire", `servicekit.idempotency`). It names the caller's role and subject, JSON-encoded like the
platform's request keys so that no subject can spell another caller's key: a player whose subject is
`table` or `operator` is not the table service or an operator.

The wallet keeps one namespace per caller across its RPCs (not one per RPC as `request_key` allows):
a caller finds its own hold or transfer by the request id that made it, whichever RPC that was."""

from __future__ import annotations

import json

from servicekit.auth import Caller


def scope(caller: Caller) -> str:
    return json.dumps([caller.role.value, caller.subject])
