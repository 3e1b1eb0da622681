"""`felt simulate`: bot hands through the betting engine (no network), optionally written as PHH files.

`--game naiko` plays Naiko mode: No-Limit Hold'em with the bots' power policy (`pokerrules.bots.powers`)
through `pokerrules.naiko`; each power appears in the PHH files as a comment."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from pokerrules.bots.naiko_hands import play_naiko_hands
from pokerrules.multiplayer.bots import preset_bot_action, random_legal_action
from pokerrules.multiplayer.config import GameConfig
from pokerrules.multiplayer.phh import HandRecord, to_phh
from pokerrules.multiplayer.ranking import ranker_for
from pokerrules.multiplayer.simulation import play_hands

GAMES = {"nlhe": GameConfig.nlhe, "plo": GameConfig.plo, "naiko": GameConfig.nlhe}
BOTS = {"preset": preset_bot_action, "random": random_legal_action}


def _seats(text: str) -> int:
    value = int(text)
    if not 2 <= value <= 10:
        raise argparse.ArgumentTypeError("seats must be between 2 and 10")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("simulate", help="play bot hands through the engine (no network)")
    parser.add_argument("--game", choices=sorted(GAMES), default="nlhe")
    parser.add_argument("--seats", type=_seats, default=6, help="players at the table, 2..10")
    parser.add_argument("--hands", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--phh-out", type=Path, default=None, help="write each hand as DIR/hand-NNNNNN.phh")
    parser.add_argument("--small-blind", type=int, default=50)
    parser.add_argument("--big-blind", type=int, default=100)
    parser.add_argument("--ante", type=int, default=0, help="big blind ante (posted by the big blind)")
    parser.add_argument("--bot", choices=sorted(BOTS), default="preset")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    config = GAMES[args.game](args.small_blind, args.big_blind, args.ante)
    try:
        rank = ranker_for(config.variant)
    except (ImportError, AttributeError) as exc:
        print(f"felt simulate: the hand evaluator is not available ({exc})", file=sys.stderr)
        return 2
    if args.phh_out is not None:
        args.phh_out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    showdowns = 0
    played = 0
    play = play_naiko_hands if args.game == "naiko" else play_hands
    for hand in play(config, args.seats, args.hands, args.seed, rank, BOTS[args.bot]):
        played += 1
        showdowns += any(type(ev).__name__ == "CardsShown" for ev in hand.events)
        if args.phh_out is not None:
            record = HandRecord(config, hand.events, hand_number=hand.number, table=f"sim-{args.seed}")
            (args.phh_out / f"hand-{hand.number:06d}.phh").write_text(to_phh(record))
    elapsed = time.perf_counter() - started
    rate = played / elapsed if elapsed > 0 else float("inf")
    print(
        f"{played} {args.game} hands, {args.seats} seats, seed {args.seed}: {showdowns} showdowns, "
        f"{elapsed:.2f} s ({rate:.0f} hands/s)"
    )
    return 0
