"""The contracts are complete from `protos/` alone: every event kind the casino engines and
service log is a typed CasinoEvent documented in the proto, and every ErrorInfo reason CasinoService,
TableService and EvaluatorService can refuse with is listed in the proto's comments (a client switches on
them without reading Felt's source)."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

import pytest
from poker.table.v1 import casino_service_pb2 as pb
from pokerrules.casino import errors as casino_errors
from pokerrules.multiplayer import errors as betting_errors
from pokerrules.naiko import errors as naiko_errors
from pokerrules.table import errors as table_errors

from services.table.casino.convert import EVENTS

ROOT = Path(__file__).resolve().parents[2]
PROTO = ROOT / "protos/poker/table/v1/casino_service.proto"
TABLE_PROTO = ROOT / "protos/poker/table/v1/table_service.proto"
EVALUATOR_PROTO = ROOT / "protos/poker/evaluator/v1/evaluator_service.proto"
SOURCES = [
    *sorted((ROOT / "libs/pokerrules/casino").glob("*.py")),
    *sorted((ROOT / "services/table/casino").glob("*.py")),
]


def logged_kinds() -> set[str]:
    pattern = re.compile(r'Event\(\s*"([A-Z_]+)"')
    return {kind for path in SOURCES for kind in pattern.findall(path.read_text())}


def test_every_logged_event_kind_is_a_typed_event() -> None:
    kinds = logged_kinds()
    assert len(kinds) >= 19 and kinds == set(EVENTS)
    oneof = pb.CasinoEvent.DESCRIPTOR.oneofs_by_name["event"]
    assert {field for field, _ in EVENTS.values()} == {f.name for f in oneof.fields}


def test_every_event_message_is_documented_in_the_proto() -> None:
    text = PROTO.read_text()
    oneof = pb.CasinoEvent.DESCRIPTOR.oneofs_by_name["event"]
    for field in oneof.fields:
        name = field.message_type.name
        match = re.search(rf"((?://[^\n]*\n)+)message {name} \{{", text)
        assert match, f"{name} has no comment in the proto"


# A reason raised through servicekit.errors: `errors.not_found("TABLE_NOT_FOUND", ...)`,
# `errors.invalid_argument("seat", "SEAT_REQUIRED", ...)`.
RAISED = re.compile(r'errors\.\w+\(\s*(?:"[a-z_.]+",\s*)?"([A-Z][A-Z0-9_]+)"')
# What every service answers through servicekit (auth, idempotency) and the wallet calls both games share.
SHARED = {
    "ROLE_NOT_ALLOWED",
    "REQUEST_ID_REQUIRED",
    "WALLET_UNAVAILABLE",
    "NO_PLAYER_ACCOUNT",
    "INSUFFICIENT_FUNDS",
}


def raised_in(*folders: str, besides: tuple[str, ...] = ()) -> set[str]:
    paths = [p for folder in folders for p in (ROOT / folder).glob("*.py") if p.name not in besides]
    return {r for path in paths for r in RAISED.findall(path.read_text())}


def reasons_of(module: ModuleType, internal: set[str]) -> set[str]:
    """A core's reason constants, without those only the service's own commands can meet."""
    found = {v for k, v in vars(module).items() if k.isupper() and isinstance(v, str)}
    assert internal <= found
    return found - internal


def listed_in(proto: Path, service: str) -> set[str]:
    """The reasons named in the service's own comment (the lines right above it) and its RPCs' comments."""
    text = proto.read_text()
    start = text.index(f"service {service} {{")
    block = text[start : text.index("\n}", start)]
    above = text[:start].rstrip("\n").split("\n")
    while above and above[-1].startswith("//"):
        block = above.pop() + "\n" + block
    return set(re.findall(r"\b[A-Z][A-Z0-9_]{2,}\b", block))


# What servicekit answers for any RPC: tokens, the caps on fields and lists, undecodable bodies, rate
# limits (servicekit.auth, .caps, .interceptor, .ratelimit).
PLATFORM = {
    "TOKEN_MALFORMED",
    "TOKEN_INVALID",
    "TOKEN_EXPIRED",
    "FIELD_TOO_LONG",
    "TOO_MANY_ITEMS",
    "REQUEST_UNDECODABLE",
    "RATE_LIMITED",
    "INTERNAL",
}
STREAMS = {"STREAMS_EXHAUSTED", "STREAMS_PER_CALLER_EXHAUSTED"}
# A call for a table another shard serves, or that is being taken over (services/table/routing.py).
SHARDS = {"TABLE_MOVED", "TABLE_MOVING"}

CASINO_REASONS = (
    raised_in("services/table/casino")
    | reasons_of(
        casino_errors,
        # The service never passes a balance (the wallet says INSUFFICIENT_FUNDS), deals and voids itself.
        {
            "INSUFFICIENT_CHIPS",
            "DECK_INVALID",
            "DECK_TOO_SHORT",
            "CARRY_INVALID",
            "WRONG_DECK_SET",
            "ROUND_FINISHED",
        },
    )
    | SHARED
    | PLATFORM
    | STREAMS
    | SHARDS
    | {"TOKEN_MISSING", "REQUEST_ID_REUSED"}
)
TABLE_REASONS = (
    raised_in("services/table/poker", besides=("director.py",))  # TableDirectorService's own
    | reasons_of(
        table_errors,
        # Configuration is checked field by field first (settings.*); the rest are the service's own commands.
        {
            "INVALID_CONFIG",
            "HAND_IN_PROGRESS",
            "NOT_ENOUGH_PLAYERS",
            "ALREADY_CONNECTED",
            "ALREADY_DISCONNECTED",
            "HANDS_HELD",  # the table starts hands itself
            "NOT_TOURNAMENT_TABLE",  # the director's commands
        },
    )
    | reasons_of(naiko_errors, set())  # UsePower, RespondToAnchor (Naiko mode)
    | reasons_of(
        betting_errors,
        # The dealing and setup commands are the table's, and it acts for the seat it found.
        {"INVALID_SETUP", "NO_NEXT_STREET", "NOT_YOUR_CARD", "DECK_EXHAUSTED", "UNKNOWN_SEAT"},
    )
    | SHARED
    | PLATFORM
    | STREAMS
    | SHARDS
    | {"TOKEN_MISSING", "REQUEST_ID_REUSED"}
)


HANDEVAL_REASON = re.compile(r'reason="([A-Z][A-Z0-9_]+)"')
EVALUATOR_REASONS = (
    raised_in("services/evaluator")
    | (
        set(HANDEVAL_REASON.findall((ROOT / "libs/handeval/api.py").read_text()))
        # The service maps the rule first and checks the buffer's type and the seed's range by the proto's types;
        # category_of and equity_vs_random are not RPCs.
        - {"UNKNOWN_RULE", "BAD_BUFFER", "BAD_SEED", "BAD_STRENGTH", "BAD_OPPONENTS"}
    )
    | PLATFORM
)


@pytest.mark.parametrize(
    ("proto", "service", "reasons"),
    [
        (PROTO, "CasinoService", CASINO_REASONS),
        (TABLE_PROTO, "TableService", TABLE_REASONS),
        (EVALUATOR_PROTO, "EvaluatorService", EVALUATOR_REASONS),
    ],
)
def test_every_reason_a_service_returns_is_listed_in_its_proto(
    proto: Path, service: str, reasons: set[str]
) -> None:
    assert len(reasons) > 8
    missing = reasons - listed_in(proto, service)
    assert not missing, f"{service}: reasons returned but not listed in {proto.name}: {sorted(missing)}"
