"""The exact return of the two Hold'em main games (optimal strategy), as last computed by `felt math`.

Computing them takes minutes (`holdem_main`), too long for `ListGames`; `felt math` writes the exact figures
with the configuration they were computed for to `known_rtp.json` beside this module (committed), and
`ListGames` serves them only when the table's configuration matches. A slow test recomputes the file and
fails if the committed one differs from what the code computes today.
"""

from __future__ import annotations

import json
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pokerrules.casino.config import ChConfig, GameConfig, ThbConfig
from pokerrules.casino.model import Game

if TYPE_CHECKING:
    from pokerrules.casino.gamemath.holdem_main import HoldemMain

PATH = Path(__file__).with_name("known_rtp.json")
RTP_DIGITS = 12  # decimal places of the readable percentage; the fraction is the exact figure


def configuration(config: GameConfig) -> dict[str, Any] | None:
    """What the main game's return depends on, as `holdem_main` computes it (None: not a Hold'em game).
    THB: nothing configurable (THB-4 with the THB-A3 reading is fixed; the Bonus is a separate bet).
    CH: the Ante paytable (CH-7.1) and the Dealer's qualifying pair (CH-5.2)."""
    if isinstance(config, ThbConfig):
        return {"game": str(Game.TEXAS_HOLDEM_BONUS), "readings": ["THB-A3"]}
    if isinstance(config, ChConfig):
        return {
            "game": str(Game.CASINO_HOLDEM),
            "readings": ["CH-A5"],
            "ante_paytable": dict(config.ante_paytable),
            "dealer_qualifying_pair": config.dealer_qualifying_pair,
        }
    return None


def _entry(config: GameConfig, net_per_ante: Fraction, bets: list[str]) -> dict[str, Any]:
    rtp = 1 + net_per_ante
    return {
        "configuration": configuration(config),
        "bets": bets,
        "strategy": "optimal (maximum expected value at every decision)",
        "net_per_ante": str(net_per_ante),
        "rtp_per_ante": str(rtp),
        "rtp_percent": f"{float(rtp * 100):.{RTP_DIGITS}f}",
    }


def figures(hm: HoldemMain) -> dict[str, Any]:
    """The file's content for one `holdem_main` result (computed for the default configurations)."""
    return {
        "computed_by": "felt math (pokerrules.casino.gamemath.holdem_main, complete enumeration)",
        "games": {
            str(Game.TEXAS_HOLDEM_BONUS): _entry(ThbConfig(), hm.thb_net, ["ANTE", "FLOP", "TURN", "RIVER"]),
            str(Game.CASINO_HOLDEM): _entry(ChConfig(), hm.ch_net, ["ANTE", "CALL"]),
        },
    }


def render(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def write(hm: HoldemMain, path: Path = PATH) -> Path:
    path.write_text(render(figures(hm)), encoding="utf-8")
    _load.cache_clear()
    return path


@cache
def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def main_game_rtp(config: GameConfig, path: Path = PATH) -> Fraction | None:
    """The main game's exact RTP per Ante under optimal strategy, if computed for exactly this configuration;
    None otherwise (another paytable or qualifier, or no figures written yet)."""
    wanted = configuration(config)
    if wanted is None:
        return None
    entry = _load(path).get("games", {}).get(wanted["game"])
    if entry is None or entry.get("configuration") != json.loads(json.dumps(wanted)):
        return None
    return Fraction(entry["rtp_per_ante"])
