"""felt.play.lobby (blinds, table settings, buy-in) and `felt play` refusing bad input before any table."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from felt.cli import main
from felt.play import lobby
from poker.table.v1 import table_service_pb2 as pb
from servicekit.testing import free_port


def test_blinds_parse_and_refuse_clearly() -> None:
    assert lobby.parse_blinds("50/100") == (50, 100)
    assert lobby.parse_blinds("1/2") == (1, 2)
    for bad in ("100", "a/b", "100/50", "0/100", "50/100/200", "100/100", "70/100"):  # MP-2.3
        with pytest.raises(lobby.LobbyError, match="blinds"):
            lobby.parse_blinds(bad)


def test_created_table_is_private_with_bots_and_a_buy_in_range_in_big_blinds() -> None:
    settings = lobby.create_settings("plo", "25/50", bots=3)
    assert settings.game == pb.GAME_POT_LIMIT_OMAHA and settings.private
    assert (settings.small_blind, settings.big_blind) == (25, 50)
    assert (settings.min_buy_in, settings.max_buy_in) == (2_000, 10_000)
    assert settings.bots_allowed and settings.bot_seats == 3 and settings.seats == 6
    assert not lobby.create_settings("nlhe", "50/100", bots=0).bots_allowed
    with pytest.raises(lobby.LobbyError, match="--bots"):
        lobby.create_settings("nlhe", "50/100", bots=6)  # bots leave a seat for the player


def test_buy_in_defaults_to_100_big_blinds_inside_the_range() -> None:
    settings = pb.TableSettings(big_blind=100, min_buy_in=2_000, max_buy_in=20_000)
    assert lobby.buy_in_for(settings, None) == 10_000
    assert (
        lobby.buy_in_for(pb.TableSettings(big_blind=100, min_buy_in=2_000, max_buy_in=5_000), None) == 5_000
    )
    assert lobby.buy_in_for(settings, 3_000) == 3_000
    with pytest.raises(lobby.LobbyError, match=r"2000\.\.20000"):
        lobby.buy_in_for(settings, 1_000)


def felt_play(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str]:
    """`felt play` in this process (its data directory setting is undone after the test)."""
    monkeypatch.setenv("FELT_DATA_DIR", os.environ.get("FELT_DATA_DIR", ""))
    code = main(["play", "--player", "ana", *args])
    return code, capsys.readouterr().err


def test_bad_blinds_are_refused_before_calling_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = felt_play(
        monkeypatch, capsys, "--data-dir", str(tmp_path), "--create", "nlhe", "--blinds", "100/50"
    )
    assert code == 2 and "blinds 100/50" in err


def test_no_table_service_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    port = free_port()  # a port nobody listens on
    code, err = felt_play(monkeypatch, capsys, "--data-dir", str(tmp_path), "--address", f"127.0.0.1:{port}")
    assert code == 1 and "UNAVAILABLE" in err, err
