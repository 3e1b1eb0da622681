"""Return to player of each bet of a configured table, for `ListGames`: exact where Felt computes it exactly,
None where it does not (a Progressive without a pool; a Hold'em main game whose configuration differs from
the one `felt math` computed, see `known_rtp`). Takes a few seconds the first time (enumeration), then is
cached. The Hold'em main games come from the committed `known_rtp.json` (minutes to compute)."""

from __future__ import annotations

from fractions import Fraction

from pokerrules.casino.config import ChConfig, GameConfig, TcpConfig, ThbConfig
from pokerrules.casino.gamemath import known_rtp, sidebets
from pokerrules.casino.gamemath.tcp_main import tcp_main
from pokerrules.casino.model import BetKind


def bet_rtps(config: GameConfig, progressive_pool: int | None = None) -> dict[BetKind, Fraction | None]:
    if isinstance(config, ThbConfig):
        main = known_rtp.main_game_rtp(config)  # per Ante, all main-game bets together, optimal strategy
        return {
            BetKind.ANTE: main,
            BetKind.FLOP: main,
            BetKind.TURN: main,
            BetKind.RIVER: main,
            BetKind.BONUS: sidebets.thb_bonus(config.bonus_paytable).rtp,
        }
    if isinstance(config, ChConfig):
        main = known_rtp.main_game_rtp(config)
        return {
            BetKind.ANTE: main,
            BetKind.CALL: main,
            BetKind.AA_BONUS: sidebets.ch_aa_bonus(config.aa_bonus_paytable).rtp,
        }
    assert isinstance(config, TcpConfig)
    main = tcp_main(config.ante_rule).math.rtp  # per Ante, Ante and Play together, optimal strategy
    rtps: dict[BetKind, Fraction | None] = {
        BetKind.ANTE: main,
        BetKind.PLAY: main,
        BetKind.PAIR_PLUS: sidebets.tcp_pair_plus(config.pair_plus_paytable).rtp,
        BetKind.SIX_CARD_BONUS: sidebets.tcp_six_card_bonus(config.six_card_paytable).rtp,
    }
    if config.progressive_offered:
        rtps[BetKind.PROGRESSIVE] = (
            None
            if progressive_pool is None
            else sidebets.tcp_progressive(progressive_pool, config.progressive_paytable).rtp
        )
    return rtps
