"""The wallet's page tokens (issue 23): opaque "<kind>:<seq>" in base64; any other text a client sends is
INVALID_ARGUMENT MALFORMED_PAGE_TOKEN naming page_token, never a fault (a number past the database's
64-bit integers once reached SQLite and answered INTERNAL)."""

from __future__ import annotations

import base64

import grpc
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from servicekit import errors

from services.wallet.storage.base import MAX_SEQ, decode_token, encode_token


def b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def test_a_token_we_gave_reads_back() -> None:
    for seq in (0, 1, 12_345, MAX_SEQ):
        assert decode_token("a", encode_token("a", seq), 0) == seq
    assert decode_token("t", "", 99) == 99


@pytest.mark.parametrize(
    "token",
    [
        b64("a:" + "9" * 30),
        b64("a:-1"),
        b64("a:²"),
        b64("a:١٢"),
        b64("t:5"),
        b64("a: 5"),
        b64("a:1_0"),
        "²",
        "%%",
    ],
)
def test_a_token_that_is_not_ours_is_malformed(token: str) -> None:
    with pytest.raises(errors.DomainError) as refused:
        decode_token("a", token, 0)
    assert errors.status_code(refused.value) is grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.reason == "MALFORMED_PAGE_TOKEN"
    assert [v.field for v in refused.value.violations] == ["page_token"]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=70), st.text(max_size=40).map(lambda t: b64("a:" + t))))
@example(b64("a:" + "9" * 40))
def test_any_text_is_a_position_or_malformed_never_a_fault(token: str) -> None:
    try:
        seq = decode_token("a", token, 0)
    except errors.DomainError as refused:
        assert refused.reason == "MALFORMED_PAGE_TOKEN"
    else:
        assert 0 <= seq <= MAX_SEQ
