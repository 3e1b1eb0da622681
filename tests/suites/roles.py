"""The role table: who may call each RPC, and the request that aims it at another player's things.

The services check roles in code (`servicekit.auth.require_role` at the top of a handler, or a test of
`caller.role` / `caller.is_player` next to the resource); there is no declaration to read, so this table
says what those checks must be, and the auth matrix (test_auth_matrix.py) holds every service to it,
both ways: a role outside `roles` gets PERMISSION_DENIED (before the request is even read), a role inside
it is never refused for its role. Reflection lists the RPCs: one that is served and missing here fails
the suite until it is classified.

`owned` is the request (fields from `World.fields()`) with which player B reaches for player A's account,
hold, transfer, shoe, seat or private table: it must be refused (PERMISSION_DENIED, NOT_FOUND or
FAILED_PRECONDITION) and change nothing. `public` says instead why an RPC a player may call has no
other player's resource to reach for. `example` is a request a role outside `roles` sends with real ids
(a player issuing chips to herself): refused, and nothing moves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from servicekit.auth import Role

Fields = dict[str, Any]
Build = Callable[[Fields], dict[str, Any]]

ANYONE = frozenset({Role.ANONYMOUS, Role.PLAYER, Role.SERVICE, Role.OPERATOR})
SIGNED = frozenset({Role.PLAYER, Role.SERVICE, Role.OPERATOR})
PLATFORM = frozenset({Role.SERVICE, Role.OPERATOR})
PLAYER = frozenset({Role.PLAYER})
PLAYER_OR_OPERATOR = frozenset({Role.PLAYER, Role.OPERATOR})


@dataclass(frozen=True)
class Rule:
    roles: frozenset[Role]
    owned: Build | None = None
    public: str = ""
    example: Build | None = None


def _r(
    roles: frozenset[Role], owned: Build | None = None, public: str = "", example: Build | None = None
) -> Rule:
    return Rule(roles, owned, public, example)


_PURE = "a pure computation on the request"
_SHOE = lambda w: {"shoe_id": w["shoe"], "count": 1, "request_id": "b-shoe"}  # noqa: E731
_SEAT = lambda w: {"table_id": w["casino"], "seat": w["seat"], "request_id": "b-seat"}  # noqa: E731
_AT = lambda w: {"table_id": w["public"], "request_id": "b-at"}  # noqa: E731 - B is not seated there
_PRIVATE = lambda w: {"table_id": w["private"]}  # noqa: E731 - invisible to the uninvited
_FOR_ALICE = lambda w: {"request_id": "b-for-a", "tournament_id": "trn-suite", "player_id": "alice-suite"}  # noqa: E731

ROLES: dict[str, Rule] = {
    # -- evaluator: served without a token (ServiceSpec.allow_anonymous) ---------------------------
    "poker.evaluator.v1.EvaluatorService/Evaluate": _r(ANYONE, public=_PURE),
    "poker.evaluator.v1.EvaluatorService/EvaluateBatch": _r(ANYONE, public=_PURE),
    "poker.evaluator.v1.EvaluatorService/Compare": _r(ANYONE, public=_PURE),
    "poker.evaluator.v1.EvaluatorService/Equity": _r(ANYONE, public=_PURE),
    # -- dealer: a shoe is its creator's (`_require_owner`); Peek only for the platform -------------
    "poker.dealer.v1.DealerService/CreateShoe": _r(SIGNED, public="makes a shoe of the caller's own"),
    "poker.dealer.v1.DealerService/Deal": _r(SIGNED, owned=_SHOE),
    "poker.dealer.v1.DealerService/Burn": _r(SIGNED, owned=_SHOE),
    "poker.dealer.v1.DealerService/Peek": _r(PLATFORM, example=lambda w: {"shoe_id": w["shoe"]}),
    "poker.dealer.v1.DealerService/Draw": _r(
        SIGNED, owned=lambda w: {"shoe_id": w["shoe"], "label": "x", "outcomes": 6, "request_id": "b-draw"}
    ),
    "poker.dealer.v1.DealerService/CloseShoe": _r(
        SIGNED, owned=lambda w: {"shoe_id": w["shoe"], "request_id": "b-close"}
    ),
    "poker.dealer.v1.DealerService/Reveal": _r(SIGNED, owned=lambda w: {"shoe_id": w["shoe"]}),
    "poker.dealer.v1.DealerService/DealHand": _r(
        SIGNED, owned=lambda w: {"shoe_id": w["shoe"], "count": 1, "request_id": "b-hand"}
    ),
    "poker.dealer.v1.DealerService/Verify": _r(SIGNED, public=_PURE),
    "poker.dealer.v1.DealerService/GetShoe": _r(SIGNED, public="the public view of a shoe: no card, no seed"),
    # -- wallet: players read their own; chips move only by the platform (`_mover`) ----------------
    "poker.wallet.v1.WalletService/CreateAccount": _r(
        SIGNED,
        owned=lambda w: {"request_id": "b-acct", "kind": "ACCOUNT_KIND_PLAYER", "owner": "alice-suite"},
    ),
    "poker.wallet.v1.WalletService/GetAccount": _r(
        SIGNED, owned=lambda w: {"account_id": w["alice_account"]}
    ),
    "poker.wallet.v1.WalletService/ListAccounts": _r(SIGNED, owned=lambda w: {"owner": "alice-suite"}),
    "poker.wallet.v1.WalletService/Issue": _r(
        PLATFORM,
        example=lambda w: {
            "request_id": "p-issue",
            "account_id": w["alice_account"],
            "amount": 1000,
            "reason": "ISSUE_REASON_PROMOTION",
        },
    ),
    "poker.wallet.v1.WalletService/Transfer": _r(
        PLATFORM,
        example=lambda w: {
            "request_id": "p-tr",
            "from_account_id": w["bob_account"],
            "to_account_id": w["alice_account"],
            "amount": 1000,
        },
    ),
    "poker.wallet.v1.WalletService/TransferBatch": _r(
        PLATFORM,
        example=lambda w: {
            "request_id": "p-batch",
            "transfers": [
                {
                    "request_id": "p-batch-1",
                    "postings": [
                        {"account_id": w["bob_account"], "side": "POSTING_SIDE_DEBIT", "amount": 1000},
                        {"account_id": w["alice_account"], "side": "POSTING_SIDE_CREDIT", "amount": 1000},
                    ],
                }
            ],
        },
    ),
    "poker.wallet.v1.WalletService/Hold": _r(
        PLATFORM,
        example=lambda w: {
            "request_id": "p-hold",
            "from_account_id": w["bob_account"],
            "to_account_id": w["alice_account"],
            "amount": 1000,
            "ttl_ms": 60000,
        },
    ),
    "poker.wallet.v1.WalletService/Capture": _r(
        PLATFORM, example=lambda w: {"request_id": "p-cap", "hold_id": w["hold"], "amount": 10}
    ),
    "poker.wallet.v1.WalletService/Release": _r(
        PLATFORM, example=lambda w: {"request_id": "p-rel", "hold_id": w["hold"]}
    ),
    "poker.wallet.v1.WalletService/GetHold": _r(SIGNED, owned=lambda w: {"hold_id": w["hold"]}),
    "poker.wallet.v1.WalletService/GetTransfer": _r(SIGNED, owned=lambda w: {"transfer_id": w["transfer"]}),
    "poker.wallet.v1.WalletService/ListTransfers": _r(
        SIGNED, owned=lambda w: {"account_id": w["alice_account"]}
    ),
    "poker.wallet.v1.WalletService/GetLedgerSummary": _r(PLATFORM, example=lambda w: {}),
    # -- table service -----------------------------------------------------------------------------
    "poker.identity.v1.IdentityService/WhoAmI": _r(SIGNED, public="says who the caller is"),
    "poker.table.v1.CasinoService/ListGames": _r(SIGNED, public="the catalogue"),
    "poker.table.v1.CasinoService/ListCasinoTables": _r(
        SIGNED, public="the public tables and who sits where"
    ),
    "poker.table.v1.CasinoService/JoinCasinoTable": _r(PLAYER, owned=_SEAT, example=_SEAT),
    "poker.table.v1.CasinoService/LeaveCasinoTable": _r(PLAYER, owned=_SEAT, example=_SEAT),
    "poker.table.v1.CasinoService/PlaceBets": _r(
        PLAYER,
        owned=lambda w: {**_SEAT(w), "bets": [{"kind": "ANTE", "amount": 5}]},
        example=lambda w: {**_SEAT(w), "bets": [{"kind": "ANTE", "amount": 5}]},
    ),
    "poker.table.v1.CasinoService/Rebet": _r(PLAYER, owned=_SEAT, example=_SEAT),
    "poker.table.v1.CasinoService/ClearBets": _r(PLAYER, owned=_SEAT, example=_SEAT),
    "poker.table.v1.CasinoService/DealRound": _r(
        PLAYER, owned=lambda w: {"table_id": w["casino"], "request_id": "b-deal"}
    ),
    "poker.table.v1.CasinoService/Decide": _r(
        PLAYER,
        owned=lambda w: {**_SEAT(w), "decision": "CASINO_DECISION_FOLD"},
        example=lambda w: {**_SEAT(w), "decision": "CASINO_DECISION_FOLD"},
    ),
    "poker.table.v1.CasinoService/GetRound": _r(SIGNED, public="the round as the caller may see it"),
    "poker.table.v1.CasinoService/WatchCasinoTable": _r(SIGNED, public="the events the caller may see"),
    "poker.table.v1.CasinoService/GetGameHistory": _r(PLAYER, public="the caller's own rounds only"),
    "poker.table.v1.CasinoService/GetRoundProof": _r(
        PLAYER_OR_OPERATOR, owned=lambda w: {"table_id": w["casino"], "round": 1}
    ),
    # The tournament's side of the tables (TableDirectorService): the platform only.
    "poker.table.v1.TableDirectorService/CreateTournamentTable": _r(PLATFORM),
    "poker.table.v1.TableDirectorService/SeatPlayer": _r(PLATFORM),
    "poker.table.v1.TableDirectorService/RemovePlayer": _r(
        PLATFORM,
        example=lambda w: {"request_id": "p-rm", "table_id": w["public"], "player_id": "alice-suite"},
    ),
    "poker.table.v1.TableDirectorService/SetLevel": _r(PLATFORM),
    "poker.table.v1.TableDirectorService/ReleaseHands": _r(PLATFORM),
    "poker.table.v1.TableDirectorService/CloseTable": _r(
        PLATFORM, example=lambda w: {"request_id": "p-close", "table_id": w["private"]}
    ),
    "poker.table.v1.TableService/CreateTable": _r(
        PLAYER_OR_OPERATOR, public="makes a table of the caller's own"
    ),
    "poker.table.v1.TableService/ListTables": _r(SIGNED, public="lists the tables the caller may see"),
    "poker.table.v1.TableService/GetTable": _r(SIGNED, owned=_PRIVATE),
    "poker.table.v1.TableService/InvitePlayers": _r(
        PLAYER, owned=lambda w: {**_PRIVATE(w), "request_id": "b-inv", "player_ids": ["bob-suite"]}
    ),
    "poker.table.v1.TableService/JoinTable": _r(
        PLAYER,
        owned=lambda w: {**_PRIVATE(w), "request_id": "b-join", "buy_in": 500},
        example=lambda w: {"table_id": w["public"], "request_id": "s-join", "buy_in": 500},
    ),
    "poker.table.v1.TableService/LeaveTable": _r(PLAYER, owned=_AT),
    "poker.table.v1.TableService/TopUp": _r(PLAYER, owned=lambda w: {**_AT(w), "amount": 100}),
    "poker.table.v1.TableService/SitOut": _r(PLAYER, owned=_AT),
    "poker.table.v1.TableService/SitIn": _r(PLAYER, owned=_AT),
    "poker.table.v1.TableService/Act": _r(PLAYER, owned=lambda w: {**_AT(w), "kind": "ACTION_KIND_FOLD"}),
    "poker.table.v1.TableService/UsePower": _r(
        PLAYER, owned=lambda w: {**_AT(w), "power": "POWER_LIRIKAN_DIAM_DIAM"}
    ),
    "poker.table.v1.TableService/RespondToAnchor": _r(PLAYER, owned=_AT),
    "poker.table.v1.TableService/WatchTable": _r(SIGNED, owned=_PRIVATE),
    "poker.table.v1.TableService/GetTableView": _r(SIGNED, owned=_PRIVATE),
    "poker.table.v1.TableService/GetHandHistory": _r(
        SIGNED, owned=lambda w: {**_PRIVATE(w), "hand_number": 1}
    ),
    "poker.table.v1.TableService/ListHandHistories": _r(SIGNED, owned=_PRIVATE),
    "poker.table.v1.TableService/SubmitClientSeed": _r(
        PLAYER, owned=lambda w: {**_PRIVATE(w), "request_id": "b-seed", "hand_number": 1, "client_seed": "b"}
    ),
    "poker.table.v1.TableService/GetHandProof": _r(
        PLAYER_OR_OPERATOR, owned=lambda w: {**_PRIVATE(w), "hand_number": 1}
    ),
    # A player naming another player's hands: NOT_YOUR_HANDS.
    "poker.table.v1.TableService/ExportHandHistories": _r(
        SIGNED, owned=lambda w: {"player_id": "alice-suite"}
    ),
    # -- tournament (issue 12): classified from services/tournament/servicer.py as on the branch
    # tournament-service at 9ecd023, before it is served here (`_operator`, `_who`) ---------------------
    "poker.tournament.v1.TournamentService/CreateTournament": _r(PLATFORM),
    "poker.tournament.v1.TournamentService/ListTournaments": _r(SIGNED, public="the lobby"),
    "poker.tournament.v1.TournamentService/GetTournament": _r(SIGNED, public="the lobby's entry"),
    "poker.tournament.v1.TournamentService/Register": _r(SIGNED, owned=_FOR_ALICE),
    "poker.tournament.v1.TournamentService/Unregister": _r(SIGNED, owned=_FOR_ALICE),
    "poker.tournament.v1.TournamentService/GetStandings": _r(SIGNED, public="the public standings"),
    "poker.tournament.v1.TournamentService/WatchTournament": _r(SIGNED, public="the public events"),
    "poker.tournament.v1.TournamentService/GetMyTable": _r(
        SIGNED, owned=lambda w: {"tournament_id": "trn-suite", "player_id": "alice-suite"}
    ),
    "poker.tournament.v1.TournamentService/AddBots": _r(PLATFORM),
    "poker.tournament.v1.TournamentService/StartTournament": _r(PLATFORM),
    "poker.tournament.v1.TournamentService/PauseTournament": _r(PLATFORM),
    "poker.tournament.v1.TournamentService/ResumeTournament": _r(PLATFORM),
    "poker.tournament.v1.TournamentService/CancelTournament": _r(PLATFORM),
}
