"""The Hold'em main games' exact RTP (optimal strategy) served from `known_rtp.json`, written by `felt math`:
only for the configuration it was computed for; the slow test recomputes it from scratch."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from pokerrules.casino import BetKind, ChConfig, ThbConfig
from pokerrules.casino.config import CH_ANTE_PAYTABLE
from pokerrules.casino.gamemath import known_rtp
from pokerrules.casino.gamemath.summary import bet_rtps


def test_the_committed_figures_are_served_for_the_default_configurations() -> None:
    thb = known_rtp.main_game_rtp(ThbConfig())
    ch = known_rtp.main_game_rtp(ChConfig())
    assert thb is not None and ch is not None
    data = json.loads(known_rtp.PATH.read_text(encoding="utf-8"))
    assert thb == Fraction(data["games"]["TEXAS_HOLDEM_BONUS"]["rtp_per_ante"])
    assert ch == Fraction(data["games"]["CASINO_HOLDEM"]["rtp_per_ante"])
    # The exact edges docs/game-math.md derives (THB 578,107,733 / 28,381,438,800; CH 1,363,917,077 /
    # 63,213,204,600): the file and the PAR sheet come from the same enumeration.
    assert 1 - thb == Fraction(578_107_733, 28_381_438_800)
    assert 1 - ch == Fraction(1_363_917_077, 63_213_204_600)
    rtps = bet_rtps(ThbConfig())
    assert rtps[BetKind.ANTE] == rtps[BetKind.FLOP] == rtps[BetKind.RIVER] == thb
    assert bet_rtps(ChConfig())[BetKind.CALL] == ch


@pytest.mark.parametrize(
    "config",
    [
        ChConfig(dealer_qualifying_pair=3),  # CH-5.2 with another qualifier
        ChConfig(ante_paytable={**CH_ANTE_PAYTABLE, "FLUSH": 3}),  # CH-7.1 with another paytable
    ],
)
def test_another_configuration_has_no_known_rtp(config: ChConfig) -> None:
    assert known_rtp.main_game_rtp(config) is None
    assert bet_rtps(config)[BetKind.ANTE] is None and bet_rtps(config)[BetKind.AA_BONUS] is not None


def test_no_file_means_unknown(tmp_path: Path) -> None:
    assert known_rtp.main_game_rtp(ThbConfig(), tmp_path / "missing.json") is None


@pytest.mark.slow
@pytest.mark.timeout(1800)  # minutes of exact enumeration: far more on a machine busy with other work
def test_the_committed_file_is_what_the_enumeration_computes_today() -> None:
    """Recomputes both main games by the complete enumeration (minutes): a stale known_rtp.json fails."""
    from pokerrules.casino.gamemath.holdem_main import holdem_main

    assert known_rtp.PATH.read_text(encoding="utf-8") == known_rtp.render(known_rtp.figures(holdem_main(2)))
