"""Malformed input: INVALID_ARGUMENT with a google.rpc.BadRequest naming the field; nothing changes.
Unknown tables: NOT_FOUND. Calls without a player token: UNAUTHENTICATED / PERMISSION_DENIED."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest
from poker.table.v1 import table_service_pb2 as pb
from servicekit.auth import Role
from servicekit.errors import details_of

from tests.table.poker.conftest import Stack, heads_up, reason, rid

# One stack for the module: each test has its own players and tables.

GOOD = pb.TableSettings(
    game=pb.GAME_NO_LIMIT_HOLDEM,
    small_blind=5,
    big_blind=10,
    min_buy_in=200,
    max_buy_in=1_000,
    seats=6,
    private=True,
)


def _settings(**changes: Any) -> pb.TableSettings:
    settings = pb.TableSettings()
    settings.CopyFrom(GOOD)
    for name, value in changes.items():
        setattr(settings, name, value)
    return settings


CREATE_CASES: list[tuple[dict[str, Any], str, str]] = [
    ({"game": pb.GAME_UNSPECIFIED}, "settings.game", "GAME_REQUIRED"),
    ({"small_blind": 0}, "settings.small_blind", "BLIND_NOT_POSITIVE"),
    ({"big_blind": 4}, "settings.big_blind", "BIG_BLIND_NOT_TWICE_SMALL"),
    ({"big_blind": 15}, "settings.big_blind", "BIG_BLIND_NOT_TWICE_SMALL"),  # MP-2.3: BB = 2 x SB
    ({"min_buy_in": 5}, "settings.min_buy_in", "BUY_IN_BELOW_BIG_BLIND"),
    ({"max_buy_in": 100}, "settings.max_buy_in", "BUY_IN_RANGE_EMPTY"),
    ({"seats": 1}, "settings.seats", "SEATS_OUT_OF_RANGE"),
    ({"seats": 11}, "settings.seats", "SEATS_OUT_OF_RANGE"),
    ({"bot_seats": 2}, "settings.bot_seats", "BOTS_NOT_ALLOWED"),
    ({"bots_allowed": True, "bot_seats": 6}, "settings.bot_seats", "TOO_MANY_BOT_SEATS"),
    ({"decision_seconds": 601}, "settings.decision_seconds", "DECISION_TIME_OUT_OF_RANGE"),
]


def test_create_table_settings_per_field(shared_stack: Stack) -> None:
    stack = shared_stack
    before = [t.table_id for t in stack.tables("ana").ListTables(pb.ListTablesRequest()).tables]
    for changes, field, why in CREATE_CASES:  # one server for all cases: each case is one call
        with pytest.raises(grpc.RpcError) as bad:
            stack.tables("ana").CreateTable(
                pb.CreateTableRequest(request_id=rid(), settings=_settings(**changes))
            )
        details = details_of(bad.value)
        assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert (details.reason, [v.field for v in details.violations]) == (why, [field]), changes
    assert [t.table_id for t in stack.tables("ana").ListTables(pb.ListTablesRequest()).tables] == before


def _bad(call: Callable[[], Any], field: str, why: str) -> None:
    with pytest.raises(grpc.RpcError) as bad:
        call()
    details = details_of(bad.value)
    assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT, details
    assert (details.reason, [v.field for v in details.violations]) == (why, [field])


def test_join_fields(shared_stack: Stack) -> None:
    stack = shared_stack
    stack.fund("joe", 20_000)
    t = stack.tables("joe")
    _bad(
        lambda: t.JoinTable(pb.JoinTableRequest(table_id="hu", buy_in=5_000)),
        "request_id",
        "REQUEST_ID_REQUIRED",
    )
    _bad(
        lambda: t.JoinTable(pb.JoinTableRequest(request_id=rid(), buy_in=5_000)),
        "table_id",
        "TABLE_ID_REQUIRED",
    )
    _bad(
        lambda: t.JoinTable(pb.JoinTableRequest(request_id=rid(), table_id="hu")), "buy_in", "BUY_IN_REQUIRED"
    )
    _bad(
        lambda: t.JoinTable(pb.JoinTableRequest(request_id=rid(), table_id="hu", buy_in=5_000, seat=7)),
        "seat",
        "NO_SUCH_SEAT",
    )
    with pytest.raises(grpc.RpcError) as low:
        t.JoinTable(pb.JoinTableRequest(request_id=rid(), table_id="hu", buy_in=100))
    assert reason(low.value) == "BUY_IN_BELOW_MIN"
    assert stack.balance("joe") == 20_000
    assert all(s.player_id != "joe" for s in stack.view("joe", "hu").table.seats)


def test_act_fields(shared_stack: Stack) -> None:
    stack = shared_stack
    heads_up(stack)
    t = stack.tables("ana")
    before = stack.view("ana", "hu")
    _bad(lambda: t.Act(pb.ActRequest(request_id=rid(), table_id="hu")), "kind", "ACTION_REQUIRED")
    _bad(
        lambda: t.Act(pb.ActRequest(request_id=rid(), table_id="hu", kind=pb.ACTION_KIND_RAISE)),
        "amount",
        "AMOUNT_REQUIRED",
    )
    _bad(
        lambda: t.Act(pb.ActRequest(request_id=rid(), table_id="hu", kind=pb.ACTION_KIND_CALL, amount=-1)),
        "amount",
        "AMOUNT_NEGATIVE",
    )
    _bad(lambda: t.Act(pb.ActRequest(request_id=rid(), table_id="hu", preset=99)), "preset", "UNKNOWN_PRESET")
    _bad(
        lambda: t.Act(pb.ActRequest(table_id="hu", kind=pb.ACTION_KIND_FOLD)),
        "request_id",
        "REQUEST_ID_REQUIRED",
    )
    assert stack.view("ana", "hu") == before


def test_top_up_and_pages(shared_stack: Stack) -> None:
    t = shared_stack.tables("tom")
    _bad(
        lambda: t.TopUp(pb.TopUpRequest(request_id=rid(), table_id="hu", amount=0)),
        "amount",
        "AMOUNT_NOT_POSITIVE",
    )
    _bad(lambda: t.ListTables(pb.ListTablesRequest(page_token="x")), "page_token", "BAD_PAGE_TOKEN")


def test_unknown_table_is_not_found(shared_stack: Stack) -> None:
    with pytest.raises(grpc.RpcError) as missing:
        shared_stack.tables("ana").GetTableView(pb.GetTableViewRequest(table_id="nope"))
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    assert reason(missing.value) == "TABLE_NOT_FOUND"


def test_a_token_is_needed_and_only_players_sit(shared_stack: Stack) -> None:
    stack = shared_stack
    anonymous = stack.table.channel(None)
    from poker.table.v1 import table_service_pb2_grpc as pb_grpc

    with pytest.raises(grpc.RpcError) as none:
        pb_grpc.TableServiceStub(anonymous).ListTables(pb.ListTablesRequest())
    assert none.value.code() == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(grpc.RpcError) as operator:
        stack.tables("ops", Role.OPERATOR).JoinTable(
            pb.JoinTableRequest(request_id=rid(), table_id="hu", buy_in=5_000)
        )
    assert operator.value.code() == grpc.StatusCode.PERMISSION_DENIED


# Issue 13, finding 10: input the store or the wallet could not take was answered INTERNAL.

INT64_MAX = 2**63 - 1


def test_hand_numbers_beyond_int64_name_the_field(shared_stack: Stack, hu: str) -> None:
    t = shared_stack.tables("ana")
    for number in (2**63, 2**64 - 1):
        _bad(
            lambda n=number: t.GetHandHistory(pb.GetHandHistoryRequest(table_id=hu, hand_number=n)),
            "hand_number",
            "HAND_NUMBER_OUT_OF_RANGE",
        )
    _bad(
        lambda: t.GetHandHistory(pb.GetHandHistoryRequest(table_id=hu)), "hand_number", "HAND_NUMBER_REQUIRED"
    )
    _bad(
        lambda: t.WatchTable(pb.WatchTableRequest(table_id=hu, from_seq=2**63)).next(),
        "from_seq",
        "FROM_SEQ_OUT_OF_RANGE",
    )


def test_a_watch_of_unknown_or_too_many_kinds_names_only(shared_stack: Stack, hu: str) -> None:
    t = shared_stack.tables("ana")
    for only, why in (
        (["hand_ended", "hand_endd"], "UNKNOWN_EVENT_KIND"),
        (["event"], "UNKNOWN_EVENT_KIND"),  # the oneof's own name is no kind
        (["hand_ended"] * 65, "TOO_MANY_KINDS"),
    ):
        _bad(
            lambda o=only: t.WatchTable(pb.WatchTableRequest(table_id=hu, only=o)).next(),  # type: ignore[misc]
            "only",
            why,
        )


def test_page_tokens_are_the_services_own_small_numbers(shared_stack: Stack, hu: str) -> None:
    t = shared_stack.tables("ana")
    ops = shared_stack.tables("ops", Role.OPERATOR)
    for token in ("12345678901234567890", "9" * 1000, "-1", "1e3", "٣"):
        # A token longer than any field's cap is refused before the service reads it (servicekit.caps).
        why = "FIELD_TOO_LONG" if len(token) > 256 else "BAD_PAGE_TOKEN"
        for stub in (t, ops):
            _bad(
                lambda s=stub, k=token: s.ListHandHistories(
                    pb.ListHandHistoriesRequest(table_id=hu, page_token=k)
                ),
                "page_token",
                why,
            )
            _bad(
                lambda s=stub, k=token: s.ListTables(pb.ListTablesRequest(page_token=k)),
                "page_token",
                why,
            )


def test_chip_amounts_are_capped_at_the_wallets_largest(shared_stack: Stack, hu: str) -> None:
    stack = shared_stack
    for name in ("small_blind", "big_blind", "min_buy_in", "max_buy_in"):
        huge = _settings(small_blind=5, big_blind=10, min_buy_in=200, max_buy_in=INT64_MAX)
        setattr(huge, name, INT64_MAX)
        if name != "max_buy_in":  # keep the others in order so the cap is the first thing wrong
            huge.max_buy_in = INT64_MAX
        _bad(
            lambda s=huge: stack.tables("ops", Role.OPERATOR).CreateTable(
                pb.CreateTableRequest(request_id=rid(), settings=s)
            ),
            f"settings.{name}",
            "AMOUNT_TOO_LARGE",
        )
    stack.fund("rich", 10**15)
    t = stack.tables("rich")
    for amount in (10**15 + 1, INT64_MAX):
        _bad(
            lambda a=amount: t.JoinTable(pb.JoinTableRequest(request_id=rid(), table_id=hu, buy_in=a)),
            "buy_in",
            "AMOUNT_TOO_LARGE",
        )
        _bad(
            lambda a=amount: t.TopUp(pb.TopUpRequest(request_id=rid(), table_id=hu, amount=a)),
            "amount",
            "AMOUNT_TOO_LARGE",
        )
        _bad(
            lambda a=amount: t.Act(
                pb.ActRequest(request_id=rid(), table_id=hu, kind=pb.ACTION_KIND_RAISE, amount=a)
            ),
            "amount",
            "AMOUNT_TOO_LARGE",
        )
    assert stack.balance("rich") == 10**15
    assert stack.escrow(hu) == 0


def test_ids_and_codes_are_capped_without_echo(shared_stack: Stack, hu: str) -> None:
    stack = shared_stack
    long_id = "t" * 100_000
    with pytest.raises(grpc.RpcError) as bad:
        stack.tables("ana").GetTable(pb.GetTableRequest(table_id=long_id))
    assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in details_of(bad.value).violations] == ["table_id"]
    assert "tttt" not in (bad.value.details() or "")
    stack.fund("coco", 5_000)
    _bad(
        lambda: stack.tables("coco").JoinTable(
            pb.JoinTableRequest(request_id=rid(), table_id=hu, buy_in=2_000, invite_code="c" * 65)
        ),
        "invite_code",
        "INVITE_CODE_TOO_LONG",
    )
    assert stack.balance("coco") == 5_000
