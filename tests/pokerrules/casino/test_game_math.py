"""Game math: the exact figures agree with textbook counts and the documents' RTP table, and a Monte Carlo
simulation through the real engine agrees with them (CH-10.1, CH-A7, TCP-5.1, TCP-5.2, THB-6.2)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from felt.cli import main as felt
from pokerrules.casino.config import TcpAnteRule
from pokerrules.casino.gamemath import sidebets
from pokerrules.casino.gamemath.report import build
from pokerrules.casino.gamemath.tables import BetMath
from pokerrules.casino.gamemath.tcp_main import strategy_table, tcp_main


def counts(bet: BetMath) -> dict[str, int]:
    return {line.name: line.count for line in bet.lines}


def test_thb_6_2_bonus_exact() -> None:
    """THB-6.2, THB-A5: 1326 × 1225 deals; the 1000 to 1 row is the 6 A-A holdings against the other A-A."""
    bonus = sidebets.thb_bonus()
    assert counts(bonus)["AA_PLAYER_AND_DEALER"] == 6
    assert counts(bonus)["AA"] == 6 * 1224
    assert counts(bonus)["AK_SUITED"] == 4 * 1225 and counts(bonus)["PAIR_2_TO_10"] == 9 * 6 * 1225
    assert isinstance(bonus.rtp, Fraction) and bonus.total == 1326 * 1225
    assert round(float(bonus.house_edge), 6) == 0.085406


def test_ch_10_1_aa_bonus_matches_the_documents_side_bet_optimal_rtp() -> None:
    """CH-10.1, CH-A7: 93.60 % for the side-bet optimal strategy; textbook five-card counts."""
    aa = sidebets.ch_aa_bonus()
    # Flush or better: 5,108 + 3,744 + 624 + 36 + 4; pair of aces 84,480 + two pair 123,552 + trips 54,912
    # + straight 10,200.
    assert counts(aa) == {"FLUSH_OR_HIGHER": 9_516, "ACES_TO_STRAIGHT": 273_144, "NO_WINNING_ROW": 2_316_300}
    assert round(float(aa.rtp) * 100, 2) == 93.60


def test_tcp_5_1_pair_plus_textbook_counts() -> None:
    """TCP-5.1, TCP-5.3: the 22,100 three-card hands by row (Mini Royal apart from the straight flushes)."""
    pair_plus = sidebets.tcp_pair_plus()
    assert counts(pair_plus) == {
        "MINI_ROYAL_FLUSH": 4,
        "STRAIGHT_FLUSH": 44,
        "THREE_OF_A_KIND": 52,
        "STRAIGHT": 720,
        "FLUSH": 1_096,
        "PAIR": 3_744,
        "NO_WINNING_ROW": 16_440,
    }


def test_tcp_5_2_six_card_bonus_textbook_counts() -> None:
    """TCP-5.2, TCP-4.3: best five of six over all 20,358,520 six-card sets (textbook six-card counts)."""
    six = sidebets.tcp_six_card_bonus()
    assert counts(six) == {
        "ROYAL_FLUSH": 188,
        "STRAIGHT_FLUSH": 1_656,
        "FOUR_OF_A_KIND": 14_664,
        "FULL_HOUSE": 165_984,
        "FLUSH": 205_792,
        "STRAIGHT": 361_620,
        "THREE_OF_A_KIND": 732_160,
        "NO_WINNING_ROW": 20_358_520 - 1_482_064,
    }


@pytest.mark.parametrize("rule", list(TcpAnteRule))
def test_tcp_optimal_strategy_is_q64(rule: TcpAnteRule) -> None:
    """TCP-3.1 to TCP-3.9, TCP-A3: the derived strategy plays Q-6-4 or better; without the Ante Bonus of the
    usual tables the edge is the textbook 3.373 % plus that bonus's 1168/22100."""
    main = tcp_main(rule)
    table = "\n".join(strategy_table(main))
    assert "| HIGH_CARD, weakest always played | Q-6-4 |" in table
    assert "| HIGH_CARD, strongest always folded | Q-6-3 |" in table
    assert abs(float(main.math.house_edge) - (0.033730 + 1168 / 22100)) < 1e-5
    assert round(float(main.play_probability), 4) == 0.6742


@pytest.mark.slow
def test_monte_carlo_through_the_engine_agrees_with_every_exact_figure(tmp_path: Path) -> None:
    """Every exact figure vs a simulation through `apply` (|z| < 3 is printed as agreement)."""
    report = build(("thb", "ch", "tcp"), rounds=3_000, seed=11, pool=2_000)
    rows = [
        line
        for line in report.splitlines()
        if line.startswith("| ") and ("agrees" in line or "DISAGREES" in line)
    ]
    assert len(rows) == 6 and all("DISAGREES" not in r for r in rows), rows


def test_felt_math_command(tmp_path: Path) -> None:
    out = tmp_path / "math.md"
    assert felt(["math", "--game", "thb", "--quick", "--simulate", "300", "--output", str(out)]) == 0
    text = out.read_text()
    assert "Texas Hold'em Bonus — Bonus" in text and "Monte Carlo" in text


def test_bet_rtps_follow_the_configured_paytable() -> None:
    """Paytables are configuration (THB-6.2, CH-7.2, TCP-5.1): the RTP served by ListGames follows them."""
    from pokerrules.casino import BetKind, ChConfig, TcpConfig, ThbConfig
    from pokerrules.casino.gamemath.summary import bet_rtps

    default = bet_rtps(ChConfig())[BetKind.AA_BONUS]
    richer = bet_rtps(ChConfig(aa_bonus_paytable={"FLUSH_OR_HIGHER": 30, "ACES_TO_STRAIGHT": 7}))[
        BetKind.AA_BONUS
    ]
    assert default is not None and richer is not None
    assert richer - default == Fraction(5 * 9_516, 2_598_960)
    thb = bet_rtps(ThbConfig())
    assert thb[BetKind.BONUS] == sidebets.thb_bonus().rtp
    tcp = bet_rtps(TcpConfig(), progressive_pool=1_000)
    assert tcp[BetKind.PROGRESSIVE] == Fraction(59, 85)  # 69.41 % at a 1,000-chip pool (docs/game-math.md)
