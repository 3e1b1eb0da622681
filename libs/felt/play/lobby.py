"""Before the first hand: who the player is, their chips, and which table they sit at.

Tokens are minted with the data directory's development key (as `felt token` does). In development the
player's wallet account is opened and topped up to the buy-in through the wallet's Issue, with a service
token; in production chips come from elsewhere and nothing is issued.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc

GAMES = {"nlhe": pb.GAME_NO_LIMIT_HOLDEM, "plo": pb.GAME_POT_LIMIT_OMAHA, "naiko": pb.GAME_NAIKO}
DEFAULT_SEATS = 6
# Buy-in range of the tables `felt play --create` makes, in big blinds (NK-6 leaves it to the table).
MIN_BUY_IN_BB, MAX_BUY_IN_BB, DEFAULT_BUY_IN_BB = 40, 200, 100


class LobbyError(RuntimeError):
    """Something the player must fix before sitting down; the message says what."""


def parse_blinds(text: str) -> tuple[int, int]:
    """ "50/100" -> (50, 100): positive whole chips, the big blind twice the small one (MP-2.3)."""
    try:
        small, big = (int(part) for part in text.split("/"))
    except ValueError:
        raise LobbyError(f"blinds must look like 50/100, not {text!r}") from None
    if not (small > 0 and big == 2 * small):
        raise LobbyError(f"blinds {text}: need a positive small blind and a big blind twice it (MP-2.3)")
    return small, big


def create_settings(
    game: str,
    blinds: str,
    bots: int,
    seats: int = DEFAULT_SEATS,
    decision_seconds: int = 0,
    time_bank_seconds: int = 0,
) -> pb.TableSettings:
    """A private table for the player (they host it), with `bots` seats the table fills with bots; the
    decision time and time bank in seconds (0: the service's defaults, 15 and 30)."""
    if game not in GAMES:
        raise LobbyError(f"unknown game {game!r}: {', '.join(GAMES)}")
    small, big = parse_blinds(blinds)
    if not 0 <= bots < seats:
        raise LobbyError(f"--bots must be between 0 and {seats - 1} (the table has {seats} seats)")
    if not (0 <= decision_seconds <= 600 and 0 <= time_bank_seconds <= 3600):
        raise LobbyError("--decision-seconds must be 0..600 and --time-bank 0..3600")
    return pb.TableSettings(
        game=GAMES[game],
        name=f"{game.upper()} {small}/{big}",
        small_blind=small,
        big_blind=big,
        min_buy_in=MIN_BUY_IN_BB * big,
        max_buy_in=MAX_BUY_IN_BB * big,
        seats=seats,
        bots_allowed=bots > 0,
        bot_seats=bots,
        private=True,
        decision_seconds=decision_seconds,
        time_bank_seconds=time_bank_seconds,
    )


def buy_in_for(settings: pb.TableSettings, wanted: int | None) -> int:
    """The buy-in asked for, or 100 big blinds kept inside the table's range."""
    if wanted is None:
        return max(settings.min_buy_in, min(settings.max_buy_in, DEFAULT_BUY_IN_BB * settings.big_blind))
    if not settings.min_buy_in <= wanted <= settings.max_buy_in:
        raise LobbyError(f"--buy-in must be {settings.min_buy_in}..{settings.max_buy_in} at this table")
    return wanted


@dataclass(frozen=True)
class Table:
    table_id: str
    settings: pb.TableSettings
    invite_code: str = ""


def choose_table(
    stub: pb_grpc.TableServiceStub,
    table_id: str | None,
    create: pb.TableSettings | None,
    invite_code: str = "",
) -> Table:
    """The table asked for (a private one shown by its invite code), a new one, or the default: the first
    table with a free seat in `default_order`."""
    if table_id:
        request = pb.GetTableRequest(table_id=table_id, invite_code=invite_code)
        info = stub.GetTable(request).table
        return Table(info.table_id, info.settings)
    if create is not None:
        made = stub.CreateTable(pb.CreateTableRequest(request_id=f"play-{uuid.uuid4().hex}", settings=create))
        return Table(made.table.table_id, made.table.settings, made.invite_code)
    listed = stub.ListTables(pb.ListTablesRequest(min_seats_free=1, page_size=100))
    if not listed.tables:
        raise LobbyError("no table has a free seat: make one with --create nlhe --bots 3")
    info = min(listed.tables, key=default_order)
    return Table(info.table_id, info.settings)


def default_order(info: pb.TableInfo) -> tuple[bool, bool, str]:
    """Where `felt play` sits without --table: plain No-Limit Hold'em first (the README's example; Naiko and
    Omaha are asked for by name), public tables before the player's own private ones, then by id."""
    return (info.settings.game != pb.GAME_NO_LIMIT_HOLDEM, info.settings.private, info.table_id)


def ensure_chips(wallet: wpb_grpc.WalletServiceStub, player: str, amount: int) -> int:
    """Development only: open the player's account if needed and issue what the buy-in lacks.

    Returns the chips issued (0 when the player already had enough)."""
    found = wallet.ListAccounts(wpb.ListAccountsRequest(kind=wpb.ACCOUNT_KIND_PLAYER, owner=player))
    if found.accounts:
        account = found.accounts[0]
    else:
        account = wallet.CreateAccount(
            wpb.CreateAccountRequest(
                request_id=f"play-account-{player}", kind=wpb.ACCOUNT_KIND_PLAYER, owner=player
            )
        ).account
    missing = amount - account.available
    if missing <= 0:
        return 0
    wallet.Issue(
        wpb.IssueRequest(
            request_id=f"play-issue-{uuid.uuid4().hex}",
            account_id=account.account_id,
            amount=missing,
            reason=wpb.ISSUE_REASON_PROMOTION,
            memo="felt play: development chips",
        )
    )
    return int(missing)
