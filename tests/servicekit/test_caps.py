"""Length caps on every string, bytes and list field of a request (issue 13, finding 7), read from the
descriptor, and undecodable bodies (finding 10): INVALID_ARGUMENT naming the field, before the token is
checked and before any of the request reaches a log line, never echoing the value back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import prometheus_client
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from servicekit import errors, testing
from servicekit.caps import Cap, RequestCaps
from servicekit.testing import RunningService, config_for_tests, running

from tests.servicekit import guarded_echo as echo
from tests.servicekit.guarded_echo import Posting, Request, Settings, Transfer

DESCRIPTOR = Request.DESCRIPTOR


def _refusal(caps: RequestCaps, request: Any) -> errors.DomainError:
    with pytest.raises(errors.DomainError) as refused:
        caps.check(request)
    return refused.value


OVER_THE_CAP = [
    # (request, field path, reason): each default comes from the field's name.
    (Request(request_id="r" * 129), "request_id", "FIELD_TOO_LONG"),
    (Request(table_id="t" * 129), "table_id", "FIELD_TOO_LONG"),
    (Request(settings=Settings(name="n" * 81)), "settings.name", "FIELD_TOO_LONG"),
    (Request(memo="m" * 257), "memo", "FIELD_TOO_LONG"),
    (Request(player_ids=["a", "b", "c", "p" * 129]), "player_ids[3]", "FIELD_TOO_LONG"),
    (Request(player_ids=["p"] * 101), "player_ids", "TOO_MANY_ITEMS"),
    (Request(labels={"seat": "v" * 257}), 'labels["seat"]', "FIELD_TOO_LONG"),
    (Request(labels={"k" * 129: "v"}), "labels<key 0>", "FIELD_TOO_LONG"),
    (Request(labels={str(i): "v" for i in range(101)}), "labels", "TOO_MANY_ITEMS"),
    (Request(blob=b"\x00" * 257), "blob", "FIELD_TOO_LONG"),
    (
        Request(
            transfers=[Transfer(), Transfer(postings=[Posting(), Posting(), Posting(account_id="a" * 129)])]
        ),
        "transfers[1].postings[2].account_id",
        "FIELD_TOO_LONG",
    ),
    (Request(seats=list(range(101))), "seats", "TOO_MANY_ITEMS"),
]


@pytest.mark.parametrize(("request_", "path", "reason"), OVER_THE_CAP)
def test_a_field_over_its_cap_is_refused_naming_its_path(request_: Any, path: str, reason: str) -> None:
    refused = _refusal(RequestCaps(), request_)
    assert errors.status_code(refused) is grpc.StatusCode.INVALID_ARGUMENT and refused.reason == reason
    assert [v.field for v in refused.violations] == [path]
    assert refused.metadata["field"] == path and int(refused.metadata["limit"]) in (80, 100, 128, 256)
    # Never the value: the message and the metadata are short and hold no run of the input.
    text = refused.message + json.dumps(dict(refused.metadata))
    assert len(text) < 200 and "ppp" not in text and "vvv" not in text and "kkk" not in text


CONTROLLED = [
    # (request, field path): ids and names are plain text (issue 23: NUL and newlines got through).
    (Request(request_id="r1\x00"), "request_id"),
    (Request(table_id="t\n1"), "table_id"),
    (Request(settings=Settings(name="my table\r\nFAKE LOG LINE")), "settings.name"),
    (Request(player_ids=["a", "b\x1b[31m"]), "player_ids[1]"),
    (
        Request(transfers=[Transfer(postings=[Posting(account_id="a\x7f")])]),
        "transfers[0].postings[0].account_id",
    ),
    (Request(request_id="r\x85"), "request_id"),  # C1 (NEL)
    (Request(table_id="t\u2028"), "table_id"),  # the Unicode line separator
    (Request(request_id="\t"), "request_id"),
]


@pytest.mark.parametrize(("request_", "path"), CONTROLLED)
def test_a_control_character_in_an_id_or_a_name_is_refused_naming_the_field(request_: Any, path: str) -> None:
    refused = _refusal(RequestCaps(), request_)
    assert errors.status_code(refused) is grpc.StatusCode.INVALID_ARGUMENT
    assert refused.reason == "CONTROL_CHARACTERS"
    assert [v.field for v in refused.violations] == [path]
    assert "\x00" not in refused.message and "\n" not in refused.message and "FAKE" not in refused.message


def test_free_text_and_printable_ids_and_names_pass() -> None:
    RequestCaps().check(
        Request(
            request_id="tn_1:hold:7",
            table_id="t-é-🂡",
            memo="a memo\nover two lines\x00",  # free text: not an id nor a name
            settings=Settings(name="Ana's table 👩‍👩‍👧 · 50/100"),  # a zero-width joiner is no control
            player_ids=["bot:tn_1:3", "ana"],
        )
    )


def test_a_service_marks_more_fields_plain_or_lifts_a_default() -> None:
    with pytest.raises(errors.DomainError):
        RequestCaps({"memo": Cap(plain=True)}).check(Request(memo="x\ny"))
    RequestCaps({"table_id": Cap(plain=False)}).check(Request(table_id="x\ny"))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_an_id_is_refused_exactly_when_it_holds_a_control_character(text: str) -> None:
    control = any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c in "\u2028\u2029" for c in text)
    try:
        RequestCaps().check(Request(table_id=text))
    except errors.DomainError as refused:
        assert control and refused.reason == "CONTROL_CHARACTERS"
    else:
        assert not control


def test_every_field_at_its_cap_passes() -> None:
    RequestCaps().check(
        Request(
            request_id="r" * 128,
            table_id="t" * 128,
            memo="ü" * 256,  # characters, not bytes
            settings=Settings(name="n" * 80),
            player_ids=["p" * 128] * 100,
            labels={f"{i:0128d}": "v" * 256 for i in range(100)},
            blob=b"\xff" * 256,
            transfers=[Transfer(transfer_id="x" * 128, postings=[Posting(account_id="a" * 128)] * 100)] * 100,
            seats=list(range(100)),
        )
    )


def test_a_service_overrides_caps_by_message_field_or_by_name() -> None:
    caps = RequestCaps(
        {
            "GuardedRequest.memo": Cap(length=10),
            "account_id": Cap(length=5),
            "felt.guarded.v1.Transfer.postings": Cap(items=2),
            "player_ids": Cap(items=500),
        }
    )
    assert _refusal(caps, Request(memo="m" * 11)).violations[0].field == "memo"
    caps.check(Request(memo="m" * 10, player_ids=["p"] * 500))
    moved = Request(transfers=[Transfer(postings=[Posting(account_id="a" * 6)])])
    assert _refusal(caps, moved).violations[0].field == "transfers[0].postings[0].account_id"
    many = Request(transfers=[Transfer(postings=[Posting()] * 3)])
    assert _refusal(caps, many).reason == "TOO_MANY_ITEMS"
    assert caps.unused_overrides([DESCRIPTOR]) == []
    typo = RequestCaps({"GuardedRequest.mem": Cap(length=1), "nothing_here": Cap(items=1)})
    assert typo.unused_overrides([DESCRIPTOR]) == ["GuardedRequest.mem", "nothing_here"]


_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=8)
# Ids and names hold no control character (CONTROL_CHARACTERS); the rest of the text is free.
_plain = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs", "Cc", "Zl", "Zp"]), max_size=8
)


@st.composite
def _within_caps(draw: Any) -> Any:
    """Requests the default caps let through, with long fields cut to their caps' length."""

    def long_text(cap: int, alphabet: st.SearchStrategy[str] = _text) -> str:
        return str(draw(alphabet)) * draw(st.integers(0, cap)) if draw(st.booleans()) else ""

    def cut(text: str, cap: int) -> str:
        return text[:cap]

    return Request(
        request_id=cut(long_text(128, _plain), 128),
        memo=cut(long_text(256), 256),
        settings=Settings(name=cut(long_text(80, _plain), 80), seats=draw(st.integers(-(2**31), 2**31 - 1))),
        player_ids=[cut(long_text(128, _plain), 128) for _ in range(draw(st.integers(0, 100)))],
        blob=draw(st.binary(max_size=256)),
        seats=draw(st.lists(st.integers(-(2**31), 2**31 - 1), max_size=100)),
        labels={cut(draw(_text), 128): cut(long_text(256), 256) for _ in range(draw(st.integers(0, 5)))},
    )


@settings(max_examples=60, deadline=None)
@given(_within_caps())
def test_the_receive_limit_holds_every_request_the_caps_let_through(request_: Any) -> None:
    caps = RequestCaps()
    caps.check(request_)
    assert len(request_.SerializeToString()) <= caps.max_request_bytes([DESCRIPTOR])  # type: ignore[operator]


def test_the_receive_limit_holds_the_largest_request() -> None:
    caps = RequestCaps()
    widest = "\U0001f0a1"  # four bytes of UTF-8 per character: the largest a capped string gets
    largest = Request(
        request_id=widest * 128,
        table_id=widest * 128,
        memo=widest * 256,
        settings=Settings(name=widest * 80, seats=-1),
        player_ids=[widest * 128] * 100,
        labels={widest * 126 + f"{i:02d}": widest * 256 for i in range(100)},
        blob=b"\xff" * 256,
        transfers=[
            Transfer(transfer_id=widest * 128, postings=[Posting(account_id=widest * 128, amount=-1)] * 100)
        ]
        * 100,
        seats=[-1] * 100,
    )
    caps.check(largest)
    bound = caps.max_request_bytes([DESCRIPTOR])
    assert bound is not None and len(largest.SerializeToString()) <= bound < 1.1 * len(
        largest.SerializeToString()
    )


# --- over a real socket --------------------------------------------------------------------------------


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[tuple[RunningService, echo.Handlers]]:
    handlers = echo.Handlers()
    with running(echo.spec_for(handlers), config_for_tests("evaluator", tmp_path)) as svc:
        yield svc, handlers


def _refused(call: Any, *args: Any) -> errors.ErrorDetails:
    with pytest.raises(grpc.RpcError) as refused:
        call(*args, timeout=10)
    return errors.details_of(refused.value)


def test_an_oversized_id_is_refused_before_the_token_and_never_logged(
    guarded: tuple[RunningService, echo.Handlers], capsys: pytest.CaptureFixture[str]
) -> None:
    svc, handlers = guarded
    capsys.readouterr()
    flood = "A" * 60_000
    anonymous = testing.channel(svc.address)  # no token at all: refused for its size first
    details = _refused(echo.method(anonymous, "Read"), Request(table_id=flood, request_id=flood))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT and details.reason == "FIELD_TOO_LONG"
    assert [v.field for v in details.violations] == ["request_id"]
    assert "AAAA" not in details.message and len(details.message) < 100
    details = _refused(echo.method(svc.channel("alice"), "Read"), Request(memo=flood))
    assert details.violations[0].field == "memo"
    assert handlers.calls == 0
    out = capsys.readouterr().out
    assert "AAAA" not in out
    lines = [json.loads(line) for line in out.splitlines() if '"event": "rpc"' in line]
    # Refused before their tokens were read, both are the peer's: the first is logged, the second counted
    # (servicekit.refusals: a flood writes a sample of lines, issue 24).
    assert [line["reason"] for line in lines] == ["FIELD_TOO_LONG"]
    assert all(len(json.dumps(line)) < 400 and line["request_id"] for line in lines)
    refused = prometheus_client.REGISTRY.get_sample_value(
        "felt_requests_refused_total",
        {"grpc_service": echo.SERVICE.full_name, "grpc_method": "Read", "reason": "FIELD_TOO_LONG"},
    )
    assert refused is not None and refused >= 2


def test_a_body_past_the_largest_request_is_not_even_read(
    guarded: tuple[RunningService, echo.Handlers],
) -> None:
    svc, handlers = guarded
    largest = svc.service.caps.max_request_bytes([DESCRIPTOR])
    assert largest is not None and largest <= svc.service.receive_bytes < largest + 1024
    eight_mib = Request(memo="A" * (8 * 1024 * 1024))
    with pytest.raises(grpc.RpcError) as refused:
        echo.method(testing.channel(svc.address), "Read")(eight_mib, timeout=10)
    assert refused.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED  # gRPC's own size check
    assert handlers.calls == 0


@pytest.mark.parametrize(
    ("body", "what"),
    [(b"\x0a\xff\xff\xff", "corrupt wire format"), (b"\x12\x02\xff\xfe", "bad UTF-8 in a string field")],
)
def test_an_undecodable_body_is_invalid_argument_naming_the_request(
    guarded: tuple[RunningService, echo.Handlers], body: bytes, what: str
) -> None:
    svc, handlers = guarded
    details = _refused(echo.raw_method(svc.channel("alice"), "Read"), body)
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT, what
    assert details.reason == "REQUEST_UNDECODABLE"
    assert [v.field for v in details.violations] == ["request"]
    assert details.metadata["message_type"] == "felt.guarded.v1.GuardedRequest"
    call = svc.channel("alice").unary_stream(
        f"/{echo.SERVICE.full_name}/Watch",
        request_serializer=lambda b: b,
        response_deserializer=echo.Response.FromString,
    )
    with pytest.raises(grpc.RpcError) as streamed:
        list(call(body, timeout=10))
    assert errors.details_of(streamed.value).reason == "REQUEST_UNDECODABLE"
    assert handlers.calls == 0 and handlers.watching == 0
