"""The tournament contract is complete from protos/ alone (as tests/table/test_contracts.py checks for the
other services): every ErrorInfo reason TournamentService can return is listed in its proto's comments,
and every event of the pure core has its typed TournamentEvent, documented in the proto."""

from __future__ import annotations

import re
from pathlib import Path

from poker.tournament.v1 import tournament_service_pb2 as pb
from pokerrules.tournament import errors as core_errors
from pokerrules.tournament import events as core_events

from services.tournament.servicer import PRECONDITIONS

ROOT = Path(__file__).resolve().parents[2]
PROTO = ROOT / "protos/poker/tournament/v1/tournament_service.proto"
RAISED = re.compile(r'errors\.\w+\(\s*(?:"[a-z_.\[\]]+",\s*)?"([A-Z][A-Z0-9_]+)"')
PLATFORM = {
    "TOKEN_MISSING", "TOKEN_MALFORMED", "TOKEN_INVALID", "TOKEN_EXPIRED", "FIELD_TOO_LONG", "TOO_MANY_ITEMS",
    "REQUEST_UNDECODABLE", "RATE_LIMITED", "INTERNAL", "ROLE_NOT_ALLOWED", "REQUEST_ID_REQUIRED",
    "REQUEST_ID_REUSED", "STREAMS_EXHAUSTED", "STREAMS_PER_CALLER_EXHAUSTED",
}  # fmt: skip
# What the wallet and dealer clients answer for the service (servicekit.clients).
DEPENDENCIES = {
    "WALLET_UNAVAILABLE", "WALLET_REFUSED_CREDENTIALS", "DEALER_UNAVAILABLE", "DEALER_REFUSED_CREDENTIALS",
    "TABLE_UNAVAILABLE",
    "TABLE_REFUSED_CREDENTIALS",
    "INSUFFICIENT_FUNDS", "NO_PLAYER_ACCOUNT",
}  # fmt: skip
# `_text(field, ...)` refuses an empty id with <FIELD>_REQUIRED.
REQUIRED = {"TOURNAMENT_ID_REQUIRED"}


def listed() -> set[str]:
    text = PROTO.read_text()
    start = text.index("service TournamentService {")
    block = text[start : text.index("\n}", start)]
    above = text[:start].rstrip("\n").split("\n")
    while above and above[-1].startswith("//"):
        block = above.pop() + "\n" + block
    return set(re.findall(r"\b[A-Z][A-Z0-9_]{2,}\b", block))


def test_every_reason_the_service_returns_is_listed_in_its_proto() -> None:
    raised = {
        r for path in (ROOT / "services/tournament").glob("*.py") for r in RAISED.findall(path.read_text())
    }
    core = {v for k, v in vars(core_errors).items() if k.isupper() and isinstance(v, str)}
    # The results of the tables are the service's own commands; a malformed command cannot be sent.
    internal = {"UNKNOWN_TABLE", "UNEXPECTED_HAND", "RESULT_MISMATCH", "INVALID_COMMAND"}
    assert core >= PRECONDITIONS
    reasons = raised | (core - internal) | PLATFORM | DEPENDENCIES | REQUIRED
    assert len(reasons) > 30
    missing = reasons - listed()
    assert not missing, f"reasons returned but not listed in {PROTO.name}: {sorted(missing)}"


def test_every_core_event_is_a_typed_event_documented_in_the_proto() -> None:
    kinds = {
        name
        for name, value in vars(core_events).items()
        if isinstance(value, type) and issubclass(value, core_events.TournamentEvent)
    } - {"TournamentEvent"}
    oneof = pb.TournamentEvent.DESCRIPTOR.oneofs_by_name["event"]
    assert {f.message_type.name for f in oneof.fields} == kinds
    text = PROTO.read_text()
    for name in kinds:
        assert re.search(rf"((?://[^\n]*\n)+)message {name} \{{", text), f"{name} has no comment in the proto"
