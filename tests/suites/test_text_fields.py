"""Issue 23 in the suites' style: every RPC server reflection lists (a new one is covered by itself), two
kinds of text a client sends that used to get through or break a service.

- Ids and names are plain text: a request id, any `*_id` / `*_ids` entry or a `name`, at any depth of
  the request, holding a control character (NUL, a newline, an escape, DEL, a C1 control, the Unicode
  line separator) is refused INVALID_ARGUMENT CONTROL_CHARACTERS with a google.rpc BadRequest naming that
  field, with a player's, a service's and an operator's token alike (the caps check every request before
  the servicer: servicekit.caps), and nothing changes (the world looks the same after every refusal).
- Every `page_token` takes arbitrary text (hypothesis; "²" is a digit to str.isdigit and not to int()):
  the answer is OK or INVALID_ARGUMENT naming page_token, never INTERNAL or UNKNOWN.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from hypothesis import HealthCheck, Phase, example, given, seed, settings
from hypothesis import strategies as st
from servicekit import auth, testing
from servicekit.caps import default_plain
from servicekit.errors import details_of

from tests.suites.roles import ROLES
from tests.suites.stack import Rpc
from tests.suites.world import ALICE, World

pytestmark = pytest.mark.slow

MAX_DEPTH = 3
CONTROLS = ["a\x00b", "line\nbreak", "\x1b[2J", "del\x7f", "c1\x85", "sep\u2028"]
EXAMPLES = int(os.environ.get("FELT_FUZZ_EXAMPLES", "24"))
SEED = int(os.environ.get("FELT_FUZZ_SEED", str(random.randrange(1 << 32))))
F = FieldDescriptor


def plain_paths(descriptor: Descriptor, depth: int = 0) -> Iterator[list[FieldDescriptor]]:
    """The id and name fields of a message, at any depth (as the path of fields that leads there)."""
    for field in descriptor.fields:
        if field.type == F.TYPE_STRING and default_plain(field.name, field.type):
            yield [field]
        elif field.message_type is not None and depth < MAX_DEPTH:
            if field.message_type.GetOptions().map_entry:
                continue
            for rest in plain_paths(field.message_type, depth + 1):
                yield [field, *rest]


def put(message: Message, path: list[FieldDescriptor], value: str) -> str:
    """Set the field at `path` (the first entry of each list on the way) to `value`; its path as the
    services name it (`settings.name`, `player_ids[0]`)."""
    names: list[str] = []
    target: Any = message
    for field in path[:-1]:
        if field.is_repeated:
            target = getattr(target, field.name).add()
            names.append(f"{field.name}[0]")
        else:
            target = getattr(target, field.name)
            target.SetInParent()
            names.append(field.name)
    last = path[-1]
    if last.is_repeated:
        getattr(target, last.name).append(value)
        names.append(f"{last.name}[0]")
    else:
        setattr(target, last.name, value)
        names.append(last.name)
    return ".".join(names)


def test_a_control_character_in_any_id_or_name_of_any_rpc_is_refused_naming_it(
    platform: World, rpcs: list[Rpc]
) -> None:
    stack = platform.stack
    tokens = [
        stack.token(ALICE),
        stack.token("text-svc", auth.Role.SERVICE),
        stack.token("text-ops", auth.Role.OPERATOR),
    ]
    before = platform.snapshot()
    problems: list[str] = []
    cases = 0
    covered: set[str] = set()
    for rpc in rpcs:
        # Each token with its certificate: a service's counts only with its own (servicekit.tls).
        channels = [
            testing.channel(stack.addresses[rpc.service], name=testing.certificate_name(t)) for t in tokens
        ]
        for path in plain_paths(rpc.method.input_type):
            for k, value in enumerate(CONTROLS):
                request = rpc.request()
                where = put(request, path, value)
                cases += 1
                token = k % len(tokens)
                code, error = rpc.call(channels[token], request.SerializeToString(), tokens[token])
                details = details_of(error) if error is not None else None
                fields = [v.field for v in details.violations] if details is not None else []
                if code is not grpc.StatusCode.INVALID_ARGUMENT or details is None:
                    problems.append(f"{rpc.name} {where}={value!r}: {code.name}")
                elif details.reason != "CONTROL_CHARACTERS" or fields != [where]:
                    problems.append(f"{rpc.name} {where}={value!r}: {details.reason} naming {fields}")
                elif value in details.message:
                    problems.append(f"{rpc.name} {where}: the refusal echoes the value")
                covered.add(where.split(".")[-1].split("[")[0])
        for channel in channels:
            channel.close()
    print(f"\ncontrol characters: {cases} cases over {len(rpcs)} RPCs; fields {sorted(covered)}")
    assert {"request_id", "table_id", "tournament_id", "name", "player_id"} <= covered
    assert not problems, "\n".join(problems[:20])
    assert platform.snapshot() == before, "a refused request changed something"


# Tokens at the edges: digits str.isdigit takes and int() does not ("²") or reads in another script
# ("١٢"), a negative, a number past 64 bits, and the wallet's own token format ("<kind>:<seq>" in
# base64) with such a number inside.
EDGES = [
    "²",
    "١٢",
    "-1",
    "9" * 30,
    "YTo5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk",  # "a:" + 30 nines
    "dDo5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk",  # "t:" + 30 nines
    "YTotMQ",  # "a:-1"
]

# The request that gets each list past its other checks (a table, an account the caller may read).
LISTS: dict[str, Any] = {
    "poker.wallet.v1.WalletService/ListTransfers": lambda w: {"account_id": w["alice_account"]},
    "poker.table.v1.TableService/ListHandHistories": lambda w: {"table_id": w["public"]},
    "poker.table.v1.TableService/ExportHandHistories": lambda w: {"player_id": ALICE},  # as an operator
}


def test_every_page_token_takes_any_text_without_a_fault(
    platform: World, rpcs: list[Rpc], capsys: pytest.CaptureFixture[str]
) -> None:
    stack = platform.stack
    token = stack.token("text-ops", auth.Role.OPERATOR)
    lists = [rpc for rpc in rpcs if "page_token" in rpc.method.input_type.fields_by_name]
    names = {rpc.name for rpc in lists}
    assert {
        "poker.wallet.v1.WalletService/ListAccounts",
        "poker.wallet.v1.WalletService/ListTransfers",
        "poker.table.v1.TableService/ListTables",
        "poker.table.v1.TableService/ListHandHistories",
        "poker.tournament.v1.TournamentService/ListTournaments",
    } <= names, sorted(names)
    problems: list[str] = []
    outcomes: dict[str, int] = {}
    for rpc in lists:
        assert rpc.name in ROLES, rpc.name  # classified, so its roles are known
        base = LISTS.get(rpc.name, lambda w: {})(platform.fields())
        channel = testing.channel(stack.addresses[rpc.service])

        def make_case(rpc: Rpc, base: dict[str, Any], channel: grpc.Channel) -> Callable[[str], None]:
            def case(text: str) -> None:
                request = rpc.request(base)
                request.page_token = text  # type: ignore[attr-defined]
                code, error = rpc.call(channel, request.SerializeToString(), token)
                outcomes[code.name] = outcomes.get(code.name, 0) + 1
                if code is grpc.StatusCode.OK or error is None:
                    return
                details = details_of(error)
                fields = [v.field for v in details.violations]
                wrong = code is not grpc.StatusCode.INVALID_ARGUMENT or fields != ["page_token"]
                if wrong and len(problems) < 20:
                    problems.append(f"{rpc.name} page_token={text!r}: {code.name} {details.reason} {fields}")

            return case

        texts = st.one_of(st.text(max_size=40), st.from_regex(r"[A-Za-z0-9_=-]{1,64}", fullmatch=True))
        run = given(texts)(make_case(rpc, base, channel))
        for edge in EDGES:
            run = example(edge)(run)
        settings(
            max_examples=EXAMPLES * 4,
            database=None,
            deadline=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )(seed(SEED)(run))()
        channel.close()
    with capsys.disabled():
        print(f"\npage tokens: {len(lists)} lists, outcomes {outcomes}; FELT_FUZZ_SEED={SEED}")
    assert not problems, f"FELT_FUZZ_SEED={SEED}\n" + "\n".join(problems)
