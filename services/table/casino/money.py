"""The casino's money in the wallet: player accounts, the house, each table's progressive pool, holds and
the settlement of a round (one atomic TransferBatch). Every call carries a request id derived from (table,
round, seat, bet) so that a retry (after a timeout, or after a crash of this service) never moves a chip
twice. The calls themselves (retries, account lookups, Hold and Release) are the table service's shared
`servicekit.clients.wallet.WalletCalls`, with the casino's request ids."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from pokerrules.casino import Settlement
from servicekit import errors
from servicekit.clients.wallet import WalletCalls

HOUSE_OWNER = "casino"


@dataclass
class HeldBet:
    """One wallet hold backing (part of) a bet."""

    seat: int
    bet: str
    hold_id: str
    amount: int


class Wallet:
    def __init__(self, channel: grpc.Channel, attempts: int = 4, backoff_seconds: float = 0.05) -> None:
        # prefix "casino": the request ids of the accounts it creates, as before the shared helper.
        self._wallet = WalletCalls(channel, attempts, backoff_seconds, prefix="casino")

    # Accounts ------------------------------------------------------------------------------------------

    def player(self, player_id: str) -> str:
        return self._wallet.account(wpb.ACCOUNT_KIND_PLAYER, player_id, create=False)

    def house(self) -> str:
        return self._wallet.account(wpb.ACCOUNT_KIND_HOUSE, HOUSE_OWNER, create=True)

    def pool(self, table_id: str) -> str:
        return self._wallet.account(wpb.ACCOUNT_KIND_JACKPOT_POOL, f"casino-{table_id}", create=True)

    def pool_balance(self, table_id: str) -> int:
        return self._wallet.balance(self.pool(table_id))

    # Holds ---------------------------------------------------------------------------------------------

    def hold(self, hold_id: str, player_id: str, amount: int, memo: str) -> None:
        """Reserve a bet's chips (player -> house). INSUFFICIENT_FUNDS comes back as the wallet says it."""
        request = wpb.HoldRequest(
            request_id=hold_id,
            from_account_id=self.player(player_id),
            to_account_id=self.house(),
            amount=amount,
            memo=memo,
        )
        self._wallet.hold(request, "not enough free chips for this bet")

    def release(self, hold_id: str) -> None:
        """Give a hold back; a hold that never reached the wallet, or was already released, is fine."""
        self._wallet.release(hold_id)

    def _hold_status(self, hold_id: str) -> wpb.Hold:
        request = wpb.GetHoldRequest(hold_request_id=hold_id)  # our Hold's request id
        hold: wpb.Hold = self._wallet.call(lambda: self._wallet.stub.GetHold(request)).hold
        return hold

    def _captured_by_us(self, hold_id: str, hold: wpb.Hold) -> bool:
        """Whether the hold was captured by our own capture of it (request id `<hold>-c`)."""
        request = wpb.GetTransferRequest(transfer_request_id=_capture_id(hold_id))
        try:
            transfer = self._wallet.call(lambda: self._wallet.stub.GetTransfer(request)).transfer
        except grpc.RpcError as error:
            if errors.details_of(error).reason == "TRANSFER_NOT_FOUND":
                return False
            raise
        return bool(transfer.transfer_id == hold.capture_transfer_id)

    # Settlement ----------------------------------------------------------------------------------------

    def settle(
        self,
        table_id: str,
        round_number: int,
        settlement: Settlement,
        holds: Sequence[HeldBet],
        players: Mapping[int, str],
    ) -> None:
        """The whole round in ONE atomic wallet batch: each bet's holds captured for the stake lost (the
        rest released), the house's payouts, the progressive pool's contribution and wins. Its request id is
        the round's, so a re-drive (a timeout, or this service restarted) replays it: nothing moves twice.
        Only a hold this table had already released makes the wallet refuse it; see below."""
        accounts = (self.house(), self.player, self.pool)
        request = settlement_batch(table_id, round_number, settlement, holds, players, *accounts)
        if not (request.transfers or request.resolutions):
            return
        try:
            self._wallet.call(lambda: self._wallet.stub.TransferBatch(request))
        except grpc.RpcError as error:
            if errors.details_of(error).reason not in ("HOLD_NOT_PENDING", "REQUEST_ID_REUSED"):
                raise
            self._settle_around_released(table_id, round_number, settlement, holds, players)

    def _settle_around_released(
        self,
        table_id: str,
        round_number: int,
        settlement: Settlement,
        holds: Sequence[HeldBet],
        players: Mapping[int, str],
    ) -> None:
        """Recovery when a hold of the round was already released by this table (a Clear Bets or a lowered
        bet whose `unhold` log entry a crash lost): that hold no longer backs its bet, its chips are back.
        The batch then carries the captures of the holds still ours and every payment, and the holds left
        to give back are released one by one. Both parts are the same on every re-drive (a hold whose
        capture is 0 never changes another's capture), so this too is a replay the second time."""
        live: list[HeldBet] = []
        for held in holds:
            got = self._hold_status(held.hold_id)
            mine = got.status == wpb.HOLD_STATUS_CAPTURED and self._captured_by_us(held.hold_id, got)
            if got.status == wpb.HOLD_STATUS_PENDING or mine:
                live.append(held)
        request = settlement_batch(
            table_id, round_number, settlement, live, players, self.house(), self.player, self.pool
        )
        captures = [r for r in request.resolutions if r.capture_amount > 0]
        del request.resolutions[:]
        request.resolutions.extend(captures)
        if request.transfers or request.resolutions:
            self._wallet.call(lambda: self._wallet.stub.TransferBatch(request))
        captured = {r.hold_request_id for r in captures}
        for held in live:
            if held.hold_id not in captured:
                self.release(held.hold_id)


def settlement_batch(
    table_id: str,
    round_number: int,
    settlement: Settlement,
    holds: Sequence[HeldBet],
    players: Mapping[int, str],
    house: str,
    player_account: Callable[[str], str],
    pool_account: Callable[[str], str],
) -> wpb.TransferBatchRequest:
    """The settlement of a round as one TransferBatch: the same round always gives the same request."""
    batch_id = settlement_batch_id(table_id, round_number)
    by_bet: dict[tuple[int, str], list[HeldBet]] = {}
    for held in holds:
        by_bet.setdefault((held.seat, held.bet), []).append(held)
    resolutions = []
    for result in settlement.results:
        lost = result.lost
        for held in by_bet.pop((result.seat, str(result.bet)), []):
            take = min(lost, held.amount)
            lost -= take
            resolutions.append(_resolution(held.hold_id, take))
    for leftover in by_bet.values():  # holds of bets the engine dropped (no Ante at the deal)
        resolutions += [_resolution(held.hold_id, 0) for held in leftover]
    transfers = []
    if settlement.pool_contribution:
        transfers.append(
            _pay(
                f"{batch_id}-pool",
                house,
                pool_account(table_id),
                settlement.pool_contribution,
                "progressive contribution",
            )
        )
    for seat in sorted({r.seat for r in settlement.results}):
        for from_pool in (False, True):
            won = sum(r.won for r in settlement.results if r.seat == seat and r.from_pool == from_pool)
            if won <= 0:
                continue
            transfers.append(
                _pay(
                    f"{batch_id}-s{seat}{'-pool' if from_pool else ''}",
                    pool_account(table_id) if from_pool else house,
                    player_account(players[seat]),
                    won,
                    f"casino {table_id} round {round_number} seat {seat}",
                )
            )
    return wpb.TransferBatchRequest(request_id=batch_id, transfers=transfers, resolutions=resolutions)


def settlement_batch_id(table_id: str, round_number: int) -> str:
    return f"cas-{table_id}-r{round_number}-settle"


def _resolution(hold_id: str, capture: int) -> wpb.HoldResolution:
    # Derived from the hold: the same round always sends the same batch, so a re-drive is a replay.
    return wpb.HoldResolution(
        hold_request_id=hold_id,
        capture_amount=capture,
        capture_request_id=_capture_id(hold_id) if capture else "",
    )


def _capture_id(hold_id: str) -> str:
    return f"{hold_id}-c"


def _pay(transfer_id: str, payer: str, payee: str, amount: int, memo: str) -> wpb.TransferSpec:
    return wpb.TransferSpec(
        request_id=transfer_id,
        postings=[
            wpb.Posting(account_id=payer, side=wpb.POSTING_SIDE_DEBIT, amount=amount),
            wpb.Posting(account_id=payee, side=wpb.POSTING_SIDE_CREDIT, amount=amount),
        ],
        memo=memo,
    )
