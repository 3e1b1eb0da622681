"""`felt eval As Ks Qs Js Ts 2c 3d`: rank a hand from the command line."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("eval", help="rank a hand: category, best five cards, strength")
    parser.add_argument("cards", nargs="+", help="cards such as As Td 2c (Omaha: four hole cards first)")
    parser.add_argument(
        "--rule", choices=("holdem", "omaha", "three-card"), default="holdem", help="how the hand is formed"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import handeval  # imported here so `felt --help` never depends on the C extension

    try:
        cards = handeval.parse_cards(args.cards)
        if args.rule == "omaha":
            value = handeval.evaluate(handeval.Rule.OMAHA, cards[:4], cards[4:])
        elif args.rule == "three-card":
            value = handeval.evaluate(handeval.Rule.THREE_CARD, cards)
        else:
            value = handeval.evaluate(handeval.Rule.HOLDEM, cards)
    except (handeval.CardError, handeval.InvalidHand) as exc:
        print(f"felt eval: {exc}", file=sys.stderr)
        return 2
    print(f"category:  {value.category.name.replace('_', ' ').title()}")
    print(f"best:      {' '.join(handeval.card_text(c) for c in value.best)}")
    print(f"strength:  {value.strength}")
    print(f"hand:      {value.description}")
    return 0
