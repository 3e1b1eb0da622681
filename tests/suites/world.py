"""What the auth matrix and the fuzz aim at: two funded players and the things player A owns (a wallet
account, a funding transfer, a hold, a dealer shoe, a seat at a public poker table, a private poker table
of her own, a casino seat), made through the real RPCs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from poker.dealer.v1 import dealer_service_pb2 as dpb
from poker.dealer.v1 import dealer_service_pb2_grpc as dpb_grpc
from poker.table.v1 import casino_service_pb2 as cpb
from poker.table.v1 import casino_service_pb2_grpc as cpb_grpc
from poker.table.v1 import table_service_pb2 as tpb
from poker.table.v1 import table_service_pb2_grpc as tpb_grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from servicekit import auth

from tests.suites.stack import Stack

ALICE, BOB = "alice-suite", "bob-suite"
PUBLIC_TABLE = "suite-nlhe"  # FELT_TABLE_POKER_TABLES of the suites' stack: no bots, so no hand starts alone
POKER_TABLES = f"{PUBLIC_TABLE}:NLHE:5/10:200-1000:6"
CASINO_TABLE = "thb-live-1"
CASINO_SEAT = 3
# Nothing moves on its own while the suites look: no round is dealt, no seat released for idling.
QUIET_ENV = {
    "FELT_RATE_LIMITS": "off",  # the suites call far faster than any person (the limits have tests of their own)
    "FELT_TABLE_POKER_TABLES": POKER_TABLES,
    "FELT_TABLE_BETTING_SECONDS": "3600",
    "FELT_TABLE_CASINO_IDLE_SECONDS": "36000",
}


@dataclass
class World:
    stack: Stack
    alice_account: str
    bob_account: str
    funding_transfer: str  # the Issue that funded alice
    hold_id: str  # an operator's hold on alice's account
    hold_request_id: str
    shoe_id: str  # created by alice (REVEAL_POLICY_OWNER)
    private_table: str  # alice's, invite-only
    invite_code: str

    def fields(self) -> dict[str, Any]:
        """Names for the requests of the role table (roles.py)."""
        return {
            "alice_account": self.alice_account,
            "bob_account": self.bob_account,
            "transfer": self.funding_transfer,
            "hold": self.hold_id,
            "hold_request": self.hold_request_id,
            "shoe": self.shoe_id,
            "private": self.private_table,
            "code": self.invite_code,
            "public": PUBLIC_TABLE,
            "casino": CASINO_TABLE,
            "seat": CASINO_SEAT,
        }

    def known_strings(self) -> list[str]:
        """Real ids, for the fuzz to mix with its random strings (deeper paths than NOT_FOUND)."""
        values = [str(v) for v in self.fields().values()]
        return [*values, ALICE, BOB, "ANTE", "NLHE"]

    def snapshot(self) -> dict[str, Any]:
        state = self.stack.snapshot(extra_tables=(self.private_table,))
        dealer = dpb_grpc.DealerServiceStub(
            self.stack.channel("dealer", self.stack.token(ALICE, auth.Role.PLAYER))
        )
        shoe = dealer.GetShoe(dpb.GetShoeRequest(shoe_id=self.shoe_id)).shoe
        state["shoe"] = (shoe.state, shoe.next_position, shoe.dealt_count, shoe.burned_count)
        return state


def build_world(stack: Stack) -> World:
    alice_account = stack.fund(ALICE, 100_000)
    bob_account = stack.fund(BOB, 100_000)
    wallet = stack.wallet()
    funding = wallet.GetTransfer(wpb.GetTransferRequest(transfer_request_id=f"fund-{ALICE}")).transfer
    house = wallet.ListAccounts(wpb.ListAccountsRequest(kind=wpb.ACCOUNT_KIND_HOUSE)).accounts
    if house:
        to_account = house[0].account_id
    else:
        to_account = wallet.CreateAccount(
            wpb.CreateAccountRequest(
                request_id="suite-house", kind=wpb.ACCOUNT_KIND_HOUSE, owner="suite-house"
            )
        ).account.account_id
    hold = wallet.Hold(
        wpb.HoldRequest(
            request_id="suite-hold",
            from_account_id=alice_account,
            to_account_id=to_account,
            amount=10,
            ttl_ms=3_600_000,
        )
    ).hold
    alice = stack.token(ALICE)
    tables = tpb_grpc.TableServiceStub(stack.channel("table", alice))
    tables.JoinTable(tpb.JoinTableRequest(request_id="suite-join", table_id=PUBLIC_TABLE, buy_in=500))
    created = tables.CreateTable(
        tpb.CreateTableRequest(
            request_id="suite-private",
            settings=tpb.TableSettings(
                game=tpb.GAME_NO_LIMIT_HOLDEM,
                name="alice's",
                small_blind=5,
                big_blind=10,
                min_buy_in=200,
                max_buy_in=1000,
                seats=6,
                private=True,
            ),
        )
    )
    tables.JoinTable(
        tpb.JoinTableRequest(
            request_id="suite-join-private",
            table_id=created.table.table_id,
            buy_in=500,
            invite_code=created.invite_code,
        )
    )
    casino = cpb_grpc.CasinoServiceStub(stack.channel("table", alice))
    casino.JoinCasinoTable(
        cpb.JoinCasinoTableRequest(table_id=CASINO_TABLE, seat=CASINO_SEAT, request_id="suite-casino")
    )
    dealer = dpb_grpc.DealerServiceStub(stack.channel("dealer", alice))
    shoe = dealer.CreateShoe(dpb.CreateShoeRequest(decks=1, request_id="suite-shoe"))
    return World(
        stack,
        alice_account,
        bob_account,
        funding.transfer_id,
        hold.hold_id,
        "suite-hold",
        shoe.shoe_id,
        created.table.table_id,
        created.invite_code,
    )
