"""Card text <-> code (code = 4 × rank + suit; ranks 23456789TJQKA, suits cdhs)."""

from __future__ import annotations

import pytest
from handeval import RANKS, SUITS, CardError, card_text, parse_card, parse_cards
from hypothesis import given, settings
from hypothesis import strategies as st


def test_codes_follow_rank_then_suit() -> None:
    assert parse_card("2c") == 0
    assert parse_card("2s") == 3
    assert parse_card("3c") == 4
    assert parse_card("As") == 51
    assert parse_card("Td") == 4 * 8 + 1


@pytest.mark.parametrize("text", ["As", "as", "AS", "aS", " As "])
def test_parsing_is_case_insensitive(text: str) -> None:
    assert parse_card(text) == 51


def test_ten_may_be_written_10() -> None:
    assert parse_card("10s") == parse_card("Ts")
    assert parse_card("10H") == parse_card("th")
    assert card_text(parse_card("10d")) == "Td"


@pytest.mark.parametrize("text", ["", "A", "Ax", "1s", "11s", "100s", "Asd", "ZZ", "0s", "T", "s"])
def test_bad_text_raises_card_error(text: str) -> None:
    with pytest.raises(CardError) as info:
        parse_card(text)
    assert info.value.reason == "UNKNOWN_CARD"
    assert info.value.text == text
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("code", [-1, 52, 200])
def test_card_text_rejects_bad_codes(code: int) -> None:
    with pytest.raises(CardError):
        card_text(code)


def test_every_code_round_trips_in_canonical_form() -> None:
    texts = [card_text(c) for c in range(52)]
    assert len(set(texts)) == 52
    assert all(t[0] in RANKS and t[1] in SUITS for t in texts)
    assert parse_cards(texts) == list(range(52))
    assert parse_cards(t.lower() for t in texts) == list(range(52))


@settings(deadline=None)
@given(st.text(max_size=4))
def test_parse_card_never_fails_other_than_card_error(text: str) -> None:
    try:
        code = parse_card(text)
    except CardError:
        return
    assert 0 <= code < 52
