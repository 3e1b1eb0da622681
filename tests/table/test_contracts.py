"""The contracts are complete from `protos/` alone: every event kind the casino engines and
service log is a typed CasinoEvent documented in the proto. (Every ErrorInfo reason of every service is
listed in its proto's comments: tests/test_contracts.py.)"""

from __future__ import annotations

import re
from pathlib import Path

from poker.table.v1 import casino_service_pb2 as pb

from services.table.casino.convert import EVENTS

ROOT = Path(__file__).resolve().parents[2]
PROTO = ROOT / "protos/poker/table/v1/casino_service.proto"
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
