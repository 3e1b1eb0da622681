"""`felt math`: the exact game math (PAR sheet) of the banked casino games, with a Monte Carlo cross-check."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "math",
        help="exact return-to-player of the casino games (complete enumeration) and a simulation check",
    )
    parser.add_argument("--all", action="store_true", help="every game (the default when no --game is given)")
    parser.add_argument("--game", action="append", choices=("thb", "ch", "tcp"), help="one game; repeatable")
    parser.add_argument(
        "--simulate",
        type=int,
        default=20_000,
        metavar="ROUNDS",
        help="Monte Carlo rounds per game through the engine (0: none; default 20000)",
    )
    parser.add_argument("--seed", type=int, default=2026, help="simulation seed")
    parser.add_argument("--pool", type=int, default=1_000, help="Progressive pool in chips (1-chip stake)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="skip the exact Texas Hold'em Bonus and Casino Hold'em main games (the long enumeration)",
    )
    parser.add_argument("--processes", type=int, default=2, help="worker processes for the long enumeration")
    parser.add_argument(
        "--strategy-out",
        metavar="DIR",
        help="also write the derived Hold'em decisions for every hand and Flop class as CSV files here",
    )
    parser.add_argument("--output", help="write the Markdown report here instead of stdout")
    parser.add_argument(
        "--known-rtp",
        metavar="FILE",
        help="where to write the exact Hold'em main-game figures ListGames serves (default: the committed "
        "libs/pokerrules/casino/gamemath/known_rtp.json); written whenever those games are computed",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pokerrules.casino.gamemath.report import GAMES, build

    games = GAMES if args.all or not args.game else tuple(args.game)
    report = build(
        games,
        args.simulate,
        args.seed,
        args.pool,
        log=lambda m: print(m, file=sys.stderr),
        main_games=not args.quick,
        processes=args.processes,
    )
    if args.strategy_out and not args.quick:
        from pokerrules.casino.gamemath.holdem_main import holdem_main, write_strategies

        for path in write_strategies(holdem_main(args.processes), args.strategy_out):
            print(f"wrote {path}", file=sys.stderr)
    if not args.quick and ("thb" in games or "ch" in games):
        from pathlib import Path

        from pokerrules.casino.gamemath import known_rtp
        from pokerrules.casino.gamemath.holdem_main import holdem_main

        written = known_rtp.write(holdem_main(args.processes), Path(args.known_rtp or known_rtp.PATH))
        print(f"wrote {written}", file=sys.stderr)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(report)
    else:
        sys.stdout.write(report)
    return 0
