"""Naiko hands with powers as PHH, checked by PokerKit 0.7.7: every full (operator) history and every
player's own view loads and replays to the same finishing stacks. Runs in the benchmark venv (PokerKit is
not a project dependency), importing Felt's `libs/`:

    bench/.venv-engine/bin/python bench/engine/check_naiko_phh.py [--hands 300] [--seats 6] [--seed 11]

Bots bet at random and use powers by their policy (`pokerrules.bots.powers`); a swapped hand is written
with the cards it ended with, each power as a `#` comment (PokerKit reads those as no-ops).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "libs"))

from pokerrules.bots.naiko_hands import play_naiko_hands  # noqa: E402
from pokerrules.multiplayer import GameConfig  # noqa: E402
from pokerrules.multiplayer.events import HoleCardSwapped  # noqa: E402
from pokerrules.multiplayer.phh import HandRecord, to_phh  # noqa: E402
from pokerrules.multiplayer.ranking import ranker_for  # noqa: E402
from pokerrules.naiko.events import PowerUsed  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=300)
    parser.add_argument("--seats", type=int, default=6)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    from pokerkit import HandHistory

    config = GameConfig.nlhe(50, 100)
    rank = ranker_for(config.variant)
    checked = differing = swapped = 0
    powers: Counter[str] = Counter()
    for hand in play_naiko_hands(config, args.seats, args.hands, args.seed, rank):
        record = HandRecord(config, hand.events, hand_number=hand.number, table="naiko-check")
        swapped += any(isinstance(ev, HoleCardSwapped) for ev in hand.events)
        powers.update(ev.power.value for ev in hand.events if isinstance(ev, PowerUsed))
        for viewer in (None, *hand.state.seats):
            history = HandHistory.loads(to_phh(record, viewer))
            state = list(history)[-1]
            checked += 1
            if list(state.stacks) != list(history.finishing_stacks or []):
                differing += 1
                print(
                    f"hand {hand.number} viewer {viewer}: {list(state.stacks)} != {history.finishing_stacks}"
                )
    print(
        f"{args.hands} Naiko hands ({swapped} with a swap; powers used: {dict(sorted(powers.items()))}): "
        f"{checked} PHH histories (full and each player's view) loaded and replayed by PokerKit, "
        f"{differing} with different finishing stacks"
    )
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
