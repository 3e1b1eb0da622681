"""Errors a client can switch on (issue 14): every ErrorInfo reason a service's code can return is listed
in its proto's comments, for every service of protos/poker/*/v1.

The reasons are found by reading the code (tests/reasons.py): the refusals raised in the service's files
and in every function of the modules they import that they reach by name, plus what the platform
(servicekit's interceptor: tokens, caps, undecodable bodies, rate limits, stream slots) answers for the
RPCs it applies to. A reason the scan finds but no caller can meet is named below with why, and the scan
must still find it (so the exception goes when the code does).

Two checks per service:
- the service: every reason found is listed in the proto, in the service's comment (what any RPC may
  return) or in one of its RPCs' comments;
- each RPC: the reasons raised on the way from the RPC's method through the servicer's own file(s) and
  servicekit (auth, idempotency), and the platform's reasons for it (RATE_LIMITED when a rate limit names
  the RPC, STREAMS_* for a server stream, TOKEN_MISSING unless the service serves anonymous callers), are
  in the service's comment or that RPC's comment. (What the cores behind the servicer refuse is checked
  service-wide: their commands are dispatched by shared code the scan cannot tell apart per RPC. The
  per-RPC lists of those reasons come from reading the code, and tests/test_contracts_exercised.py calls
  every RPC to check what it answers.)
"""

from __future__ import annotations

import ast
import importlib
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor, ServiceDescriptor
from poker.dealer.v1 import dealer_service_pb2
from poker.evaluator.v1 import evaluator_service_pb2
from poker.identity.v1 import identity_service_pb2
from poker.table.v1 import casino_service_pb2, table_director_service_pb2, table_service_pb2
from poker.tournament.v1 import tournament_service_pb2
from poker.wallet.v1 import wallet_service_pb2
from servicekit.caps import default_plain

from tests import reasons
from tests.reasons import ROOT

INTERCEPTOR = ROOT / "libs/servicekit/interceptor.py"
SERVICEKIT = frozenset((ROOT / "libs/servicekit").rglob("*.py"))
# What servicekit answers for any RPC of any service: bad tokens, fields over their caps, bodies that do
# not decode (auth, caps, interceptor), and INTERNAL (an unexpected fault: not a refusal, so not found
# by the scan).
ALWAYS = {
    "TOKEN_MALFORMED",
    "TOKEN_INVALID",
    "TOKEN_EXPIRED",
    "CLIENT_CERTIFICATE_REQUIRED",  # a service token off mutual TLS, or with another's certificate
    "FIELD_TOO_LONG",
    "TOO_MANY_ITEMS",
    "CONTROL_CHARACTERS",
    "REQUEST_UNDECODABLE",
    "INTERNAL",
}
ANONYMOUS_REFUSED = "TOKEN_MISSING"  # unless the service serves anonymous callers (the evaluator)
RATE_LIMITED = "RATE_LIMITED"  # the RPCs a rate limit of the service names
STREAMS = {"STREAMS_EXHAUSTED", "STREAMS_PER_CALLER_EXHAUSTED"}  # server streams, when the server caps them


@dataclass(frozen=True)
class Service:
    descriptor: ServiceDescriptor
    entries: tuple[str, ...]  # the servicer's own files
    server: str  # the module of its ServiceSpec (RATE_LIMITS, MAX_STREAMS, allow_anonymous)
    # When set, the scan follows only these files (besides the entries and servicekit): a servicer that
    # runs a core it shares with another service through one dispatcher.
    within: tuple[str, ...] = ()
    # More start points for that scan: files ("path"), or one function of a file ("path:function").
    starts: tuple[str, ...] = ()
    # Found by the scan, but no caller can meet them: why.
    unreachable: dict[str, str] = field(default_factory=dict)
    # Reasons made by an f-string the scan cannot resolve (`f"{self._label}_UNAVAILABLE"`): their values.
    templates: dict[str, set[str]] = field(default_factory=dict)
    # The servicer's own files, for the per-RPC check (default: the entries).
    servicer: tuple[str, ...] = ()
    # Per RPC, what the per-RPC trace finds but that RPC cannot meet (the trace does not follow branches).
    rpc_unreachable: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.descriptor.name

    @property
    def proto(self) -> Path:
        return ROOT / "protos" / self.descriptor.file.name

    def files(self) -> list[Path]:
        return [ROOT / entry for entry in self.entries]


# The table service's clients of the dealer and the wallet: servicekit.clients.calls names the dependency.
DEPENDENCIES_DOWN = {
    "*_UNAVAILABLE": {"DEALER_UNAVAILABLE", "WALLET_UNAVAILABLE"},
    "*_REFUSED_CREDENTIALS": {"DEALER_REFUSED_CREDENTIALS", "WALLET_REFUSED_CREDENTIALS"},
}


def own_cards(found: str) -> dict[str, str]:
    """handeval's reasons, where a core evaluates the cards the service dealt itself (never a client's)."""
    return dict.fromkeys(found.split(), "handeval checks the cards the service dealt itself")


SERVICES = [
    Service(
        dealer_service_pb2.DESCRIPTOR.services_by_name["DealerService"],
        ("services/dealer/servicer.py", "services/dealer/routing.py"),
        "services.dealer.server",
    ),
    Service(
        wallet_service_pb2.DESCRIPTOR.services_by_name["WalletService"],
        ("services/wallet/servicer.py",),
        "services.wallet.server",
    ),
    Service(
        evaluator_service_pb2.DESCRIPTOR.services_by_name["EvaluatorService"],
        ("services/evaluator/servicer.py",),
        "services.evaluator.server",
        unreachable={
            "UNKNOWN_RULE": "the servicer maps the rule first (UNSUPPORTED_RULE)",
            "BAD_BUFFER": "packed_cards is a proto bytes field: always a contiguous buffer",
            "BAD_SEED": "the seed is a uint64 field: always 0..2**64-1",
        },
    ),
    Service(
        table_director_service_pb2.DESCRIPTOR.services_by_name["TableDirectorService"],
        ("services/table/poker/director.py",),
        "services.table.server",
        # The director's commands run in the table core through the table's one dispatcher: follow the
        # director's own core functions and the table's lookup, locking and idempotency only.
        within=(
            "services/table/poker/requests.py",
            "services/table/poker/room.py",
            "services/table/poker/tables.py",
            "libs/pokerrules/table/director.py",
            "libs/pokerrules/table/state.py",
            "libs/pokerrules/table/config.py",
            "libs/pokerrules/table/handle.py",
        ),
        starts=("libs/pokerrules/table/director.py", "libs/pokerrules/table/handle.py:handle"),
        unreachable={
            "INVALID_CONFIG": "settings, blinds checked field by field first; the director deals no hand",
            # check_tournament_settings fills the buy-ins from the big blind and turns bots off.
            "BUY_IN_BELOW_BIG_BLIND": "a tournament table's buy-ins are its big blind",
            "BUY_IN_RANGE_EMPTY": "a tournament table's buy-ins are its big blind",
            "BOTS_NOT_ALLOWED": "a tournament table's settings have no bot seats",
            "TOO_MANY_BOT_SEATS": "a tournament table's settings have no bot seats",
            "INVALID_AMOUNT": "the servicer refuses a stack below 1 first (BAD_AMOUNT)",
        },
        templates=DEPENDENCIES_DOWN,
    ),
    Service(
        table_service_pb2.DESCRIPTOR.services_by_name["TableService"],
        tuple(
            str(p.relative_to(ROOT))
            for p in sorted((ROOT / "services/table/poker").glob("*.py"))
            if p.name != "director.py"  # TableDirectorService's own
        ),
        "services.table.server",
        unreachable={
            **own_cards(
                "UNKNOWN_CARD DUPLICATE_CARD WRONG_CARD_COUNT UNKNOWN_RULE BAD_ITERATIONS BAD_OPPONENTS"
                " BAD_SEED BAD_STRENGTH NOT_ENOUGH_CARDS TOO_FEW_HANDS TOO_MANY_HANDS UNSUPPORTED_RULE"
            ),
            "INVALID_CONFIG": "settings are checked field by field first (settings.*)",
            "HAND_IN_PROGRESS": "the table starts and ends hands itself",
            "NOT_ENOUGH_PLAYERS": "the table starts hands itself",
            "HANDS_HELD": "the table starts hands itself",
            "INVALID_SETUP": "the betting engine's setup is the table's",
            "UNKNOWN_SEAT": "the table acts for the seat it found",
            # Hands start on the table's clock, and recovery voids a hand it cannot resume.
            "DEALER_UNAVAILABLE": "only the table's clock and its recovery call the dealer",
            "DEALER_REFUSED_CREDENTIALS": "only the table's clock and its recovery call the dealer",
        },
        templates=DEPENDENCIES_DOWN,
        servicer=("services/table/poker/servicer.py",),
    ),
    Service(
        casino_service_pb2.DESCRIPTOR.services_by_name["CasinoService"],
        tuple(str(p.relative_to(ROOT)) for p in sorted((ROOT / "services/table/casino").glob("*.py"))),
        "services.table.server",
        unreachable={
            **own_cards(
                "UNKNOWN_CARD DUPLICATE_CARD WRONG_CARD_COUNT UNKNOWN_RULE BAD_BUFFER BAD_BUFFER_LENGTH"
            ),
            "INSUFFICIENT_CHIPS": "the service passes the engine no balance (the wallet: INSUFFICIENT_FUNDS)",
            "DECK_INVALID": "the service deals the engine its own shoe's cards",
            "DECK_TOO_SHORT": "the service deals the engine its own shoe's cards",
            "WRONG_DECK_SET": "the service deals the engine its own shoe's cards",
            "CARRY_INVALID": "the service voids and carries rounds itself",
            "ROUND_FINISHED": "the service deals and settles rounds itself",
        },
        templates=DEPENDENCIES_DOWN,
        servicer=("services/table/casino/servicer.py",),
        rpc_unreachable={
            "GetGameHistory": {"TABLE_ID_REQUIRED": "the table_id is optional, checked only when given"}
        },
    ),
    Service(
        tournament_service_pb2.DESCRIPTOR.services_by_name["TournamentService"],
        tuple(str(p.relative_to(ROOT)) for p in sorted((ROOT / "services/tournament").glob("*.py"))),
        "services.tournament.server",
        # The pure core, without its simulation (which plays hands with the betting engine): the service
        # plays none itself, the table service does.
        within=tuple(
            f"libs/pokerrules/tournament/{name}.py"
            for name in (
                "director",
                "errors",
                "spec",
                "levels",
                "spin",
                "payouts",
                "places",
                "seating",
                "commands",
                "events",
                "instructions",
            )
        ),
        unreachable={
            "RESULT_MISMATCH": "hand results come from the service's own table watchers, never a caller",
            "UNEXPECTED_HAND": "hand results come from the service's own table watchers, never a caller",
            "UNKNOWN_TABLE": "hand results come from the service's own table watchers, never a caller",
            "INVALID_COMMAND": "the servicer builds every command itself, with the clock's integer time",
        },
        templates={
            "*_UNAVAILABLE": {"DEALER_UNAVAILABLE", "WALLET_UNAVAILABLE", "TABLE_UNAVAILABLE"},
            "*_REFUSED_CREDENTIALS": {
                "DEALER_REFUSED_CREDENTIALS",
                "WALLET_REFUSED_CREDENTIALS",
                "TABLE_REFUSED_CREDENTIALS",
            },
        },
        servicer=("services/tournament/servicer.py",),
    ),
    Service(
        identity_service_pb2.DESCRIPTOR.services_by_name["IdentityService"],
        ("services/table/identity.py",),
        "services.table.server",
    ),
]


@cache
def platform_scan() -> frozenset[str]:
    code = reasons.Code(reasons.import_closure([INTERCEPTOR]))
    return frozenset(code.reachable([reasons.parsed(INTERCEPTOR)]))


def test_the_platform_answers_what_this_test_expects() -> None:
    """The interceptor's reasons are those assigned above to every RPC, or to some."""
    assert platform_scan() == (ALWAYS - {"INTERNAL"}) | {ANONYMOUS_REFUSED, RATE_LIMITED} | STREAMS


def platform_for(service: Service, rpc: str) -> set[str]:
    server = importlib.import_module(service.server)
    method = service.descriptor.methods_by_name[rpc]
    found = set(ALWAYS) - _caps_unbreakable(method.input_type)
    source = Path(server.__file__ or "").read_text(encoding="utf-8")
    anonymous = any(
        isinstance(node, ast.keyword)
        and node.arg == "allow_anonymous"
        and getattr(node.value, "value", False)
        for node in ast.walk(ast.parse(source))
    )
    if not anonymous:
        found.add(ANONYMOUS_REFUSED)
    if any(rpc in limit.methods for limit in getattr(server, "RATE_LIMITS", ())):
        found.add(RATE_LIMITED)
    if method.server_streaming and int(getattr(server, "MAX_STREAMS", 0)) > 0:
        found |= STREAMS
    return found


def _caps_unbreakable(message: Descriptor) -> set[str]:
    """The caps a request of this type cannot break: no text or bytes field (FIELD_TOO_LONG), no repeated
    or map field (TOO_MANY_ITEMS), no id or name (CONTROL_CHARACTERS), at any depth."""
    text = items = plain = False
    seen: set[str] = set()
    todo = [message]
    while todo:
        descriptor = todo.pop()
        if descriptor.full_name in seen:
            continue
        seen.add(descriptor.full_name)
        for f in descriptor.fields:
            text |= f.type in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES)
            items |= f.is_repeated
            plain |= default_plain(f.name, f.type)
            if f.message_type is not None:
                todo.append(f.message_type)
    return (
        ({"FIELD_TOO_LONG"} if not text else set())
        | ({"TOO_MANY_ITEMS"} if not items else set())
        | ({"CONTROL_CHARACTERS"} if not plain else set())
    )


def _resolved(service: Service, found: set[str]) -> set[str]:
    out = set()
    for reason in found:
        if "*" in reason:
            assert reason in service.templates, f"{service.name}: name the reasons {reason!r} stands for"
            out |= service.templates[reason]
        else:
            out.add(reason)
    return out


def service_reasons(service: Service) -> set[str]:
    """Every reason the service's code can return (with the platform's)."""
    entries = service.files()
    files = reasons.import_closure(entries)
    within = None
    if service.within:
        within = set(entries) | SERVICEKIT | {ROOT / path for path in service.within}
    starts: list[ast.AST] = [reasons.parsed(p) for p in entries]
    for start in service.starts:
        path, _, function = start.partition(":")
        tree = reasons.parsed(ROOT / path)
        files.add(ROOT / path)
        starts += [n for n in ast.walk(tree) if getattr(n, "name", None) == function] if function else [tree]
        assert len(starts) > len(entries), f"{start} not found"
    found = reasons.Code(files).reachable(starts, within=within)
    found = _resolved(service, found - platform_scan())
    stale = set(service.unreachable) - found
    assert not stale, f"{service.name}: exceptions the scan no longer finds, drop them: {sorted(stale)}"
    platform = set().union(*(platform_for(service, m.name) for m in service.descriptor.methods))
    return (found - set(service.unreachable)) | platform


def rpc_reasons(service: Service) -> dict[str, set[str]]:
    """Per RPC: the reasons on the way from its servicer method through the servicer's files and
    servicekit, and the platform's for it."""
    own = [ROOT / path for path in service.servicer] or service.files()
    code = reasons.Code(reasons.import_closure(service.files()))
    methods = reasons.servicer_methods(own, [m.name for m in service.descriptor.methods])
    assert set(methods) == {m.name for m in service.descriptor.methods}, "a servicer method not found"
    out = {}
    for name, method in methods.items():
        others = [m for other, m in methods.items() if other != name]  # an RPC's method calls no other
        found = code.reachable([method], within=set(own) | SERVICEKIT, besides=others) - platform_scan()
        found = _resolved(service, found) - set(service.unreachable)
        exceptions = service.rpc_unreachable.get(name, {})
        stale = set(exceptions) - found
        assert not stale, f"{service.name}.{name}: exceptions the scan no longer finds: {sorted(stale)}"
        out[name] = (found - set(exceptions)) | platform_for(service, name)
    return out


# Protos whose service is still being written (issue 12's tournament service, on its own branch): their
# servicer's reasons join SERVICES with it.
NOT_YET: tuple[str, ...] = ()


def test_every_service_of_the_protos_is_checked() -> None:
    declared = {
        (str(path.relative_to(ROOT / "protos")), name)
        for path in sorted((ROOT / "protos/poker").glob("*/v1/*.proto"))
        for name in re.findall(r"^service (\w+) \{", path.read_text(encoding="utf-8"), re.MULTILINE)
    }
    checked = {(s.descriptor.file.name, s.name) for s in SERVICES}
    unchecked = {d for d in declared - checked if not d[0].startswith(NOT_YET)}
    assert not unchecked, f"services whose reasons nobody checks: add them to SERVICES: {sorted(unchecked)}"
    assert checked <= declared


def unlisted(service: Service, proto: Path) -> set[str]:
    """The reasons the service returns that the proto lists nowhere for it."""
    header, per_rpc = reasons.listed(proto, service.name)
    return service_reasons(service) - header.union(*per_rpc.values())


def unlisted_per_rpc(service: Service, proto: Path) -> dict[str, list[str]]:
    """Per RPC, the reasons it returns that neither the service's comment nor the RPC's lists."""
    header, per_rpc = reasons.listed(proto, service.name)
    found = rpc_reasons(service)
    return {
        rpc: sorted(gap) for rpc, all_ in found.items() if (gap := all_ - header - per_rpc.get(rpc, set()))
    }


@pytest.mark.parametrize("service", SERVICES, ids=lambda s: s.name)
def test_every_reason_a_service_returns_is_listed_in_its_proto(service: Service) -> None:
    found = service_reasons(service)
    print(f"{service.name}: {len(found)} reasons")
    assert len(found) >= 6  # WhoAmI: the tokens, an undecodable body, INTERNAL
    missing = unlisted(service, service.proto)
    assert not missing, f"{service.name}: returned but not listed in {service.proto.name}: {sorted(missing)}"


@pytest.mark.parametrize("service", SERVICES, ids=lambda s: s.name)
def test_every_reason_an_rpc_returns_is_listed_for_it(service: Service) -> None:
    missing = unlisted_per_rpc(service, service.proto)
    assert not missing, f"{service.name}: reasons an RPC returns, not listed for it: {missing}"


def test_a_reason_left_out_of_the_proto_fails(tmp_path: Path) -> None:
    """The checks bite: a proto without SHOE_EXHAUSTED (a reason of the dealing core) fails the service's
    check; one whose Deal comment drops NOT_SHOE_OWNER (the servicer's) fails Deal's."""
    dealer = next(s for s in SERVICES if s.name == "DealerService")
    text = dealer.proto.read_text(encoding="utf-8")
    gone = tmp_path / "without_exhausted.proto"
    gone.write_text(re.sub(r"\bSHOE_EXHAUSTED\b", "", text), encoding="utf-8")
    assert unlisted(dealer, gone) == {"SHOE_EXHAUSTED"}
    end = text.index("  rpc Deal(")
    deal = text.rindex("// Errors:", 0, end)  # Deal's own comment
    dropped = text[:deal] + text[deal:end].replace("NOT_SHOE_OWNER", "") + text[end:]
    gone.write_text(dropped, encoding="utf-8")
    assert unlisted_per_rpc(dealer, gone) == {"Deal": ["NOT_SHOE_OWNER"]}


SAMPLE = """
from refusal import Kind, Refusal

CONSTANT = "FROM_CONSTANT"


class Base(Refusal):
    default_reason = "FROM_DEFAULT"


class Sub(Base):
    pass


class Carrier(Exception):
    def __init__(self, message, reason):
        self.message, self.reason = message, reason


def factory(reason):
    return Refusal(Kind.NOT_FOUND, reason)


def named(field):
    raise factory(f"{field.upper()}_REQUIRED")


def entry(flag):
    raise factory("FROM_LITERAL")
    raise factory(CONSTANT)
    raise factory("FROM_IF" if flag else "FROM_ELSE")
    which = "FROM_LOCAL"
    raise factory(which)
    raise Sub("a message")
    raise Carrier("a message", reason="FROM_CARRIER")
    named("table_id")


def unreached():
    raise factory("NEVER_REACHED")
"""


def test_the_scan_reads_every_way_a_reason_is_written(tmp_path: Path) -> None:
    module = tmp_path / "sample.py"
    module.write_text(SAMPLE, encoding="utf-8")
    code = reasons.Code({module})
    found = code.reachable(code.functions["entry"])
    assert found == {
        "FROM_LITERAL",
        "FROM_CONSTANT",
        "FROM_IF",
        "FROM_ELSE",
        "FROM_LOCAL",
        "FROM_DEFAULT",
        "FROM_CARRIER",
        "TABLE_ID_REQUIRED",
    }


def _rpc_comments(proto: Path) -> dict[str, str]:
    """Each RPC's comment (the // lines right above `rpc Name(`), its lines joined by spaces."""
    comments: dict[str, str] = {}
    block: list[str] = []
    for line in proto.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if stripped.startswith("//"):
            block.append(stripped[2:].strip())
            continue
        found = re.match(r"rpc (\w+)\(", stripped)
        if found:
            comments[found.group(1)] = " ".join(block)
        block = []
    return comments


def test_every_rate_limited_rpc_states_its_budget_in_its_proto() -> None:
    """Issue 23: every per-caller limit is documented where a client reads the contract: each limited RPC's
    comment states its group's budget as the code sets it (tests/rate_budgets.py), and no comment states a
    budget the code does not set."""
    from tests.rate_budgets import SERVERS, budget_line

    stated: set[tuple[str, str]] = set()
    for server, protos in SERVERS.items():
        comments: dict[str, str] = {}
        for proto in protos:
            comments |= _rpc_comments(ROOT / "protos" / proto)
        for limit in importlib.import_module(server).RATE_LIMITS:
            for method in limit.methods:
                assert method in comments, f"{server}: {method} has no RPC in {protos}"
                assert budget_line(limit, method) in comments[method], f"{method}: its budget is not stated"
                stated.add((server, method))
        for method, text in comments.items():
            if "Rate limit " in text:
                assert (server, method) in stated, f"{method} states a budget its service does not set"


def _field_comment(proto: Path, message: str, name: str) -> str:
    """The // lines right above field `name` in `message` of `proto`, joined by spaces."""
    inside, block = False, []
    for line in proto.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if stripped.startswith(f"message {message} "):
            inside, block = True, []
            continue
        if not inside:
            continue
        if stripped == "}":
            break
        if stripped.startswith("//"):
            block.append(stripped[2:].strip())
        elif re.match(rf"\S+ {name} = \d+;", stripped):
            return " ".join(block)
        else:
            block = []
    raise AssertionError(f"no field {message}.{name} in {proto}")


def test_every_meaning_change_is_said_at_its_field() -> None:
    """Issue 23: `buf breaking` cannot see a field that keeps its number and type but means something else
    (PlayerLeft.returned became 0, the chips in `pending`). protos/README.md lists such changes; each
    listed field's own comment says MEANING CHANGED and what to read instead."""
    policy = (ROOT / "protos" / "README.md").read_text(encoding="utf-8")
    listed = re.findall(r"`(poker\.\w+\.v\d+)\.(\w+)\.(\w+)`", policy)
    assert ("poker.table.v1", "PlayerLeft", "returned") in listed
    for package, message, name in listed:
        folder = ROOT / "protos" / package.replace(".", "/")
        comments = [
            _field_comment(proto, message, name)
            for proto in folder.glob("*.proto")
            if f"message {message} " in proto.read_text(encoding="utf-8")
        ]
        assert len(comments) == 1, f"{package}.{message}"
        assert "MEANING CHANGED" in comments[0] and "protos/README.md" in comments[0], f"{message}.{name}"
