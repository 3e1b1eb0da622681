"""`felt play`: sit at a table of the table service and play from the terminal (see felt.play)."""

from __future__ import annotations

import argparse
import contextlib
import getpass
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
from poker.dealer.v1 import dealer_service_pb2 as dpb
from poker.dealer.v1 import dealer_service_pb2_grpc as dpb_grpc
from poker.table.v1 import casino_service_pb2 as cpb
from poker.table.v1 import casino_service_pb2_grpc as cpb_grpc
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from poker.tournament.v1 import tournament_service_pb2 as tpb
from poker.tournament.v1 import tournament_service_pb2_grpc as tpb_grpc
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import auth, client, shards, tls, tokens
from servicekit.config import ConfigError, data_dir, default_port, setting

from felt.play import casino, casino_text, listing, lobby, render, terminal, tournament
from felt.play.session import Console, Extras, Session
from felt.play.stream import describe_error

EPILOG = """\
Your player token is minted with the data directory's development key (like `felt token`) and renewed
before it expires, however long you play; a --token given instead cannot be renewed here, and you are
warned 10 minutes before it expires. In
development (FELT_ENV is not production) `felt play` also makes sure you have chips: it opens your wallet
account and issues what your buy-in lacks, through the wallet's Issue with a service token. You are
asked for an action only at your turn; leave with q there, or with Ctrl-C at any time: your stack goes
back to your wallet (at the end of the hand you are in, folding or checking for you meanwhile).

At your turn:  f fold · x check · c call (checks when nothing is to call) · b 300 bet to 300
               r 600 raise to 600 · a all-in · p 2x / p 3x / p 4x / p 33% / p 50% / p 75% / p pot presets
               Enter redraws the table · ? help · q leave
Any time:      sitout · sitin · topup [N] · lobby (tables, tournaments, your balance) · q leave
               At a terminal the prompt counts your decision time (and time bank) down every second
               and lines are read between turns too. Sat out after missed turns, you are asked to sit
               in again (y or sitin).
Naiko tables:  before your action: peek (Lirikan Diam-diam) · swap 2d (Tukar Lengan Baju, discards 2d)
               · anchor 4 (Jangkar Pendek on seat 4); a Jangkar Pendek on you asks at once, with its
               countdown: s shield (Perisai Segel) · n pass (silence lets the window run out)

Casino: --casino thb|ch|tcp (Texas Hold'em Bonus, Casino Hold'em, Three Card Poker; or a casino table
id) sits at the game's table: ante 10 bonus 5 (the table's bets by name), rebet, clear, deal, then the
decisions offered (f fold, flop, c call, p play, b bet, x check); the settlement shows each bet's line
and the pay-table rows that paid; q leaves. Each round shows its shoe and commitment.

Lobby: --lobby lists the tables (players, stakes, average pot, hands per hour), the tournaments (entries,
start), the casino tables and your wallet balance, and exits; `lobby` at a table shows the same.

Tournaments: --sng registers you at the Sit & Go `felt up` keeps open (bots fill the seats left) and
plays it to the end (--spin: its Spin); --tournament ID plays a tournament you registered for
(registering you first while its registration is open). The tournament seats you and moves you between
tables by itself; the standings show after each hand. q or Ctrl-C stops following, but you stay in: a
player away is folded and blinded off (come back with --tournament ID). In development the buy-in and
fee are issued.
"""


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "play",
        help="play at a table from the terminal (against bots or friends)",
        description="Sit at a table of the table service and play from the terminal.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--address",
        default=setting("FELT_TABLE_ADDRESS", f"127.0.0.1:{default_port('table')}"),
        help="the table service, or some of its shards comma-separated: felt play follows its table to "
        "the shard serving it, through takeovers (FELT_TABLE_ADDRESS, default %(default)s)",
    )
    parser.add_argument(
        "--wallet-address",
        default=setting("FELT_WALLET_ADDRESS", f"127.0.0.1:{default_port('wallet')}"),
        help="the wallet, for development chips (FELT_WALLET_ADDRESS, default %(default)s)",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--table", metavar="ID", help="sit at this table (default: the first with a free seat)"
    )
    where.add_argument("--create", choices=sorted(lobby.GAMES), help="host a new private table of this game")
    where.add_argument(
        "--sng", action="store_true", help="register at the open Sit & Go of `felt up` and play it to the end"
    )
    where.add_argument("--spin", action="store_true", help="the same with the open Spin of `felt up`")
    where.add_argument("--tournament", metavar="ID", help="play this tournament (registering you if open)")
    where.add_argument(
        "--casino",
        metavar="GAME",
        help="a banked casino game: thb (Texas Hold'em Bonus), ch (Casino Hold'em), tcp (Three Card "
        "Poker), or a casino table's id",
    )
    where.add_argument(
        "--lobby",
        action="store_true",
        help="list the tables, tournaments and casino tables and your wallet balance, then exit",
    )
    parser.add_argument(
        "--dealer-address",
        default=setting("FELT_DEALER_ADDRESS", f"127.0.0.1:{default_port('dealer')}"),
        help="the dealer, for a casino round's shoe commitment (FELT_DEALER_ADDRESS, default %(default)s)",
    )
    parser.add_argument(
        "--tournament-address",
        default=setting("FELT_TOURNAMENT_ADDRESS", f"127.0.0.1:{default_port('tournament')}"),
        help="the tournament service (FELT_TOURNAMENT_ADDRESS, default %(default)s)",
    )
    parser.add_argument("--blinds", default="50/100", help="with --create: small/big blind (%(default)s)")
    parser.add_argument(
        "--bots", type=int, default=3, help="with --create: seats filled by bots (%(default)s)"
    )
    parser.add_argument("--seats", type=int, default=lobby.DEFAULT_SEATS, help="with --create: 2..10")
    parser.add_argument(
        "--decision-seconds", type=int, default=0, help="with --create: seconds per decision (default 15)"
    )
    parser.add_argument(
        "--time-bank",
        type=int,
        default=0,
        metavar="SECONDS",
        help="with --create: each player's time bank (30)",
    )
    parser.add_argument("--invite", default="", metavar="CODE", help="invite code of a private table")
    parser.add_argument("--player", default=None, metavar="NAME", help="your player id (default: $USER)")
    parser.add_argument("--buy-in", type=int, default=None, help="chips to sit with (default 100 big blinds)")
    parser.add_argument("--data-dir", help="local state directory with the development key (FELT_DATA_DIR)")
    parser.add_argument(
        "--token", help="a player token issued elsewhere: no local key is used and no chips are issued"
    )
    parser.add_argument(
        "--ca",
        metavar="FILE",
        help="the CA certificate the services' TLS certificates chain to (FELT_TLS_CA_FILE; default: "
        "the development CA `felt up` made in the data directory)",
    )
    parser.set_defaults(func=run)


def player_token(
    given: str | None,
    keys: auth.Keys | None,
    player: str,
    warn: Callable[[str], None],
    clock: Callable[[], float] = time.time,
) -> tokens.TokenSource:
    """The player's token for a session that may outlast one: signed here with the development key and
    renewed before it expires, or the one given with --token (it cannot be renewed: `warn` says so
    before it expires)."""
    if keys is None:
        assert given is not None
        return tokens.GivenToken(given, warn, clock=clock)
    return tokens.RenewingToken(keys, player, auth.Role.PLAYER, clock=clock)


def _warn(message: str) -> None:
    print(f"felt: {message}", file=sys.stderr, flush=True)


def _terminal_read(prompt: str) -> str:
    return input(prompt)


def _terminal_write(line: str) -> None:
    print(line, flush=True)


@contextlib.contextmanager
def _console() -> Iterator[Console]:
    """At a terminal: the live line editor (felt.play.terminal), given back as it was on exit; from a
    pipe or a file: a line read when one is asked for."""
    if not terminal.is_terminal():
        yield Console(_terminal_read, _terminal_write)
        return
    with terminal.Terminal() as live:

        def read(prompt: str) -> str:
            while True:
                line = live.line(lambda: prompt, 3600.0)
                if line is not None:
                    return line

        yield Console(read, live.write, live)


def run(args: argparse.Namespace) -> int:
    # Ctrl-C leaves the table (KeyboardInterrupt, felt.play.session), even when felt play was started
    # from a shell that ran its parent in the background: such a shell starts it with SIGINT ignored,
    # and Python then installs no handler of its own (a CI run found felt play deaf to Ctrl-C).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if args.data_dir:
        os.environ["FELT_DATA_DIR"] = args.data_dir
    if args.ca:
        os.environ[tls.CA_FILE_ENV] = args.ca  # every channel below trusts it (servicekit.client)
    player = args.player or os.environ.get("USER") or getpass.getuser() or "player"
    try:
        tls.trust_files(data_dir())  # a missing CA is said once, here, not as a failed call
        keys = None if args.token else auth.load_keys(data_dir())
        token = player_token(args.token, keys, player, _warn)
        create = (
            lobby.create_settings(
                args.create, args.blinds, args.bots, args.seats, args.decision_seconds, args.time_bank
            )
            if args.create
            else None
        )
    except (ConfigError, lobby.LobbyError) as exc:
        print(f"felt: {exc}", file=sys.stderr)
        return 2
    if args.sng or args.spin or args.tournament:
        return _play_tournament(args, player, keys, token)
    seeds = [a.strip() for a in args.address.split(",") if a.strip()]
    pool = shards.ChannelPool(lambda address: client.channel(address, token))
    with contextlib.closing(pool):
        router = shards.Router(pool, seeds)
        stub: Any = shards.RoutedStub(router, pb_grpc.TableServiceStub)
        casino_stub: Any = shards.RoutedStub(router, cpb_grpc.CasinoServiceStub)
        with client.channel(args.wallet_address, token) as wallet_channel:
            # Any tournament replica answers the lobby's reads (issue 25).
            tournaments: Any = _tournament_stub(args, pool)
            wallet = wpb_grpc.WalletServiceStub(wallet_channel)  # type: ignore[no-untyped-call]

            def lobby_lines() -> list[str]:
                return listing.lines(listing.read(stub, tournaments, casino_stub, wallet))

            if args.lobby:
                for line in lobby_lines():
                    print(line, flush=True)
                return 0
            extras = Extras(chips=lambda amount: _issued(args, keys, player, amount), lobby=lobby_lines)
            if args.casino:
                return _play_casino(args, keys, player, token, casino_stub, extras)
            return _play_table(args, keys, player, stub, create, extras)


def _play_table(
    args: argparse.Namespace,
    keys: auth.Keys | None,
    player: str,
    stub: Any,
    create: Any,
    extras: Extras,
) -> int:
    """At a poker table: the one asked for, a new one (--create) or the default (lobby.default_order)."""
    try:
        table = lobby.choose_table(stub, args.table, create, args.invite)
        buy_in = lobby.buy_in_for(table.settings, args.buy_in)
        _development_chips(args, keys, player, buy_in)
    except lobby.LobbyError as exc:
        print(f"felt: {exc}", file=sys.stderr)
        return 2
    except grpc.RpcError as error:
        print(f"felt: {describe_error(error)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # before sitting down: nothing to give back
        return 130
    header = f"{player} at {table.table_id} ({render.GAME_NAMES.get(table.settings.game, '?')})"
    if table.invite_code:
        header += f"; friends join with --table {table.table_id} --invite {table.invite_code}"
    print(header, flush=True)
    with _console() as console:
        session = Session(stub, table.table_id, console, buy_in, invite_code=args.invite, extras=extras)
        return session.run()


def _play_casino(
    args: argparse.Namespace,
    keys: auth.Keys | None,
    player: str,
    token: tokens.TokenSource,
    stub: Any,
    extras: Extras,
) -> int:
    """--casino GAME: a seat at the game's casino table, round after round."""
    try:
        table = casino.choose_table(stub, args.casino)
        # The game's pay tables and settlement lines (its first ListGames computes exact RTPs: seconds).
        games = stub.ListGames(cpb.ListGamesRequest(), timeout=60.0).games
        game = next((g for g in games if g.game == table.game), None)
        _development_chips(args, keys, player, args.buy_in or casino_text.DEFAULT_CHIPS)
    except LookupError as exc:
        print(f"felt: {exc}", file=sys.stderr)
        return 2
    except grpc.RpcError as error:
        print(f"felt: {describe_error(error)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    with client.channel(args.dealer_address, token) as dealer_channel:
        dealer = dpb_grpc.DealerServiceStub(dealer_channel)  # type: ignore[no-untyped-call]

        def commitment(shoe_id: str) -> str:
            shoe = dealer.GetShoe(dpb.GetShoeRequest(shoe_id=shoe_id), timeout=5.0).shoe
            return str(shoe.commitment)

        with _console() as console:
            return casino.CasinoSession(stub, table, game, console, commitment, extras).run()


def _issued(args: argparse.Namespace, keys: auth.Keys | None, player: str, amount: int) -> int:
    """In development with the local key: make sure the player's wallet holds `amount`; the chips issued."""
    if keys is None or setting("FELT_ENV", "development") == "production":
        return 0
    # An operator's token: a service's counts only with its certificate on the wallet's internal port.
    operator_token = auth.issue_token(keys, "felt-play", auth.Role.OPERATOR, 300)
    with client.channel(args.wallet_address, operator_token) as wallet_channel:
        wallet = wpb_grpc.WalletServiceStub(wallet_channel)  # type: ignore[no-untyped-call]
        return lobby.ensure_chips(wallet, player, amount)


def _development_chips(args: argparse.Namespace, keys: auth.Keys | None, player: str, amount: int) -> None:
    """In development with the local key: make sure the player's wallet holds `amount` (said when issued)."""
    issued = _issued(args, keys, player, amount)
    if issued:
        print(f"Issued {issued} development chips to {player}'s wallet.", flush=True)


def _tournament_stub(args: argparse.Namespace, pool: shards.ChannelPool) -> Any:
    """The tournament service's stub, following each tournament to the replica directing it
    (TOURNAMENT_MOVED, issue 25); --tournament-address may list several replicas."""
    seeds = [a.strip() for a in args.tournament_address.split(",") if a.strip()]
    router = shards.Router(pool, seeds)
    return shards.RoutedStub(router, tpb_grpc.TournamentServiceStub, key="tournament_id")


def _play_tournament(
    args: argparse.Namespace, player: str, keys: auth.Keys | None, token: tokens.TokenSource
) -> int:
    """--sng / --tournament: register if needed (chips issued in development), then follow it."""
    seeds = [a.strip() for a in args.address.split(",") if a.strip()]
    pool = shards.ChannelPool(lambda address: client.channel(address, token))
    with contextlib.closing(pool):
        stub: Any = _tournament_stub(args, pool)
        # The tournament's tables may live on any shard: the router follows TABLE_MOVED (issue 15).
        tables: Any = shards.RoutedStub(shards.Router(pool, seeds), pb_grpc.TableServiceStub)
        try:
            if args.sng or args.spin:
                found = tournament.find_open(stub, tpb.FORMAT_SPIN if args.spin else tpb.FORMAT_SIT_AND_GO)
            else:
                request = tpb.GetTournamentRequest(tournament_id=args.tournament)
                found = stub.GetTournament(request).tournament
            for line in tournament.describe(found):
                print(line, flush=True)
            spin = None  # the seed felt play registers at a Spin with (docs/fairness.md section 11)
            if not _registered(stub, found.tournament_id):
                _development_chips(args, keys, player, found.buy_in + found.fee)
                found, spin = tournament.register(stub, found, _terminal_write)
        except tournament.TournamentError as exc:
            print(f"felt: {exc}", file=sys.stderr)
            return 2
        except grpc.RpcError as error:
            print(f"felt: {describe_error(error)}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            return 130
        with _console() as console:
            session = tournament.TournamentSession(
                stub, tables, found.tournament_id, player, console, from_seq=found.last_seq + 1, spin=spin
            )
            return session.run()


def _registered(stub: tpb_grpc.TournamentServiceStub, tournament_id: str) -> bool:
    try:
        stub.GetMyTable(tpb.GetMyTableRequest(tournament_id=tournament_id))
    except grpc.RpcError as error:
        if "NOT_REGISTERED" in describe_error(error):
            return False
        raise
    return True  # eliminated too: felt play shows the place and follows the rest (no re-entry here)
