"""`felt verify`: check a hand, a casino round or a Spin draw from what was published (docs/fairness.md
section 11), with the stand-alone verifier (libs/dealing/verifier.py) and nothing else of Felt's."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import grpc
from servicekit.config import ConfigError

from felt import verification

EPILOG = """\
Offline, on a proof saved earlier (or a dealer Reveal saved as JSON):
  felt verify proof.json
Online, as a player of that hand or round (the proof is fetched, checked, and saved with --save):
  felt verify --table ID --hand N [--player NAME | --token TOKEN] [--save proof.json]
  felt verify --casino-table ID --round N [--player NAME | --token TOKEN]
  felt verify --tournament ID                       (a drawn Spin: its proof is public)

What is checked: SHA-256 of the revealed server seed is the commitment published before the seeds were
given; the mixed client seeds (yours among them, with --my-seed) give the order; every card you saw is
the shuffled card at its position; your cards open the commitments published at the deal; each draw
(the Naiko Carrusel, a Spin's multiplier) is the seed's. Exit 0 when everything holds, 1 when something
does not, 2 when the proof could not be had.
"""


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "verify",
        help="check a hand, a casino round or a Spin draw from what was published",
        description="Verify a hand, a casino round or a Spin draw with the stand-alone verifier.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("proof", nargs="?", help="a saved proof (JSON), - for standard input")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--table", metavar="ID", help="a poker table (with --hand)")
    where.add_argument("--casino-table", metavar="ID", help="a casino table (with --round)")
    where.add_argument("--tournament", metavar="ID", help="a Spin tournament, once its multiplier is drawn")
    parser.add_argument("--hand", type=int, default=0, metavar="N", help="the hand number")
    parser.add_argument("--round", type=int, default=0, metavar="N", help="the casino round number")
    parser.add_argument("--my-seed", help="the client seed you gave: it must be among the mixed ones")
    parser.add_argument("--save", metavar="FILE", help="write the fetched proof to FILE (JSON)")
    parser.add_argument("--player", default=None, metavar="NAME", help="your player id (default: $USER)")
    parser.add_argument("--token", help="a player token issued elsewhere (no local key is used)")
    parser.add_argument("--data-dir", help="local state directory with the development key (FELT_DATA_DIR)")
    parser.add_argument("--address", default=None, help="the table service (FELT_TABLE_ADDRESS)")
    parser.add_argument(
        "--ca", metavar="FILE", help="the services' CA (FELT_TLS_CA_FILE; default: felt up's development CA)"
    )
    parser.add_argument(
        "--tournament-address", default=None, help="the tournament service (FELT_TOURNAMENT_ADDRESS)"
    )
    parser.add_argument(
        "--wait", type=float, default=5.0, help="seconds to wait for a proof not revealed yet (%(default)s)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    online = args.table or args.casino_table or args.tournament
    if bool(online) == bool(args.proof):
        print("felt verify: give a saved proof, or --table/--casino-table/--tournament", file=sys.stderr)
        return 2
    try:
        document = verification.load(args.proof) if args.proof else _fetch(args)
    except (OSError, ValueError, ConfigError) as exc:  # ConfigError: no CA to trust
        print(f"felt verify: {exc}", file=sys.stderr)
        return 2
    except grpc.RpcError as exc:
        print(f"felt verify: {_reason(exc)}", file=sys.stderr)
        return 2
    if args.save:
        with open(args.save, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=1, ensure_ascii=False)
    outcome = verification.verify_document(document, args.my_seed)
    for line in verification.lines(outcome):
        print(line)
    return 0 if outcome.ok else 1


def _reason(error: grpc.RpcError) -> str:
    from servicekit.errors import details_of

    details = details_of(error)
    return f"{details.code.name} {details.reason}: {details.message}"


def _fetch(args: argparse.Namespace) -> dict[str, Any]:
    """The proof from the service that published it, as the verifier's document."""
    from poker.table.v1 import casino_service_pb2 as cpb
    from poker.table.v1 import casino_service_pb2_grpc as cpb_grpc
    from poker.table.v1 import table_service_pb2 as pb
    from poker.table.v1 import table_service_pb2_grpc as pb_grpc
    from poker.tournament.v1 import tournament_service_pb2 as tpb
    from poker.tournament.v1 import tournament_service_pb2_grpc as tpb_grpc
    from servicekit import auth, client, shards
    from servicekit.config import data_dir, default_port, setting
    from servicekit.errors import details_of

    if args.data_dir:
        os.environ["FELT_DATA_DIR"] = args.data_dir
    if args.ca:
        os.environ["FELT_TLS_CA_FILE"] = args.ca  # what every channel below trusts (servicekit.client)
    player = args.player or os.environ.get("USER") or "player"
    token = args.token or auth.issue_token(auth.load_keys(data_dir()), player, auth.Role.PLAYER, 600)

    def not_ready(error: Exception) -> bool:
        return isinstance(error, grpc.RpcError) and details_of(error).reason == "PROOF_NOT_READY"

    if args.tournament:
        address = args.tournament_address or setting(
            "FELT_TOURNAMENT_ADDRESS", f"127.0.0.1:{default_port('tournament')}"
        )
        with client.channel(address, token) as channel:
            stub = tpb_grpc.TournamentServiceStub(channel)  # type: ignore[no-untyped-call]
            found = stub.GetTournament(tpb.GetTournamentRequest(tournament_id=args.tournament)).tournament
        if not found.HasField("spin_proof"):
            raise ValueError("no Spin draw to verify there (not a Spin, or its multiplier is not drawn yet)")
        return verification.spin_document(found)
    address = args.address or setting("FELT_TABLE_ADDRESS", f"127.0.0.1:{default_port('table')}")
    pool = shards.ChannelPool(lambda at: client.channel(at, token))
    router = shards.Router(pool, address.split(","))
    try:
        if args.table:
            if args.hand <= 0:
                raise ValueError("--table needs --hand N (the hand number)")
            tables = shards.RoutedStub(router, pb_grpc.TableServiceStub)
            request = pb.GetHandProofRequest(table_id=args.table, hand_number=args.hand)
            response = verification.fetch_retrying(lambda: tables.GetHandProof(request), not_ready, args.wait)
            return verification.hand_document(response)
        if args.round <= 0:
            raise ValueError("--casino-table needs --round N (the round number)")
        casino = shards.RoutedStub(router, cpb_grpc.CasinoServiceStub)
        asked = cpb.GetRoundProofRequest(table_id=args.casino_table, round=args.round)
        answer = verification.fetch_retrying(lambda: casino.GetRoundProof(asked), not_ready, args.wait)
        return verification.round_document(answer)
    finally:
        pool.close()
