"""One seeded run of the whole platform (issue 13, "a seeded whole-platform simulation").

Players with wallet accounts sit at two poker tables (one with bots) and two casino tables, act, bet,
decide and leave, each through the table service's own servicers over the in-process network; the
virtual clock moves, the table service's clocks tick (bots, time-outs, hands, betting windows); the wallet,
the dealer and the table service crash (between steps, or in the middle of a call to another service) and
restart from their files; the network loses requests and answers and delivers some twice; a player whose
call was lost sends it again with the same request id. After every step the invariants are checked:

- the ledger: every balance summed is the chips issued, no player or escrow account below zero, and the
  ledger's own invariants (GetLedgerSummary's) hold;
- each poker table recovered in memory with no buy-in in flight: its escrow holds exactly the chips on
  the table plus the stacks owed to players and not yet paid (MP chip conservation);
- every hand started once and ended once (played or voided, CH "malfunction voids"); every casino round
  settled or voided at most once;
- a request delivered twice is answered the same both times; no call ends in INTERNAL or UNKNOWN.

The run is a list of lines (the event log): the same seed gives the same bytes. Any randomness in the
services is the run's own: the dealer's server seeds come from the seed, and uuid4 (ids of accounts,
transfers, shoes) from a generator seeded by it.
"""

from __future__ import annotations

import contextlib
import hashlib
import random
import tempfile
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import grpc
from google.protobuf import text_format
from google.protobuf.message import Message
from ledger import model as lm
from poker.table.v1 import casino_service_pb2 as cpb
from poker.table.v1 import casino_service_pb2_grpc as cpb_grpc
from poker.table.v1 import table_service_pb2 as tpb
from poker.table.v1 import table_service_pb2_grpc as tpb_grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit.auth import Caller, Role
from servicekit.errors import details_of

from services.table.poker.money import escrow_owner
from services.wallet.callers import scope
from tests.simulation.network import Crash, Faults, Network
from tests.simulation.world import TABLE, Platform

FUNDS = 5_000
OPERATOR = Caller("ops", Role.OPERATOR)
POKER = ("sim-nl", "sim-plo")
CASINO = ("sim-thb", "sim-tcp")
BAD_CODES = (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)


class InvariantBroken(AssertionError):
    pass


@dataclass
class Result:
    seed: int
    steps: int
    log: list[str]
    hands: int
    rounds: int
    crashes: Counter[str]
    faults: int

    @property
    def text(self) -> bytes:
        return ("\n".join(self.log) + "\n").encode()

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text).hexdigest()[:16]


@dataclass
class Player:
    name: str
    table: Any
    casino: Any
    n: int = 0
    poker: str | None = None  # the poker table it believes it sits at
    casino_seat: tuple[str, int] | None = None
    retry: tuple[str, Message] | None = None  # a call whose answer it never got: sent again first

    def request_id(self) -> str:
        self.n += 1
        return f"{self.name}-r{self.n}"


@dataclass
class Checker:
    """The invariants, read straight from the services' stores (an observer, not a client)."""

    platform: Platform
    poker_seen: dict[str, int] = field(default_factory=lambda: dict.fromkeys(POKER, 0))
    casino_seen: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CASINO, 0))
    started: Counter[tuple[str, int]] = field(default_factory=Counter)
    ended: Counter[tuple[str, int]] = field(default_factory=Counter)
    settled: Counter[tuple[str, int]] = field(default_factory=Counter)
    voided: Counter[tuple[str, int]] = field(default_factory=Counter)
    lines: list[str] = field(default_factory=list)

    def fail(self, what: str) -> None:
        raise InvariantBroken(what)

    def check(self) -> None:
        self._ledger()
        self._poker_events()
        self._casino_events()
        self._escrows()

    def _ledger(self) -> None:
        store = self.platform.wallet.store
        if store is None:
            return
        summary = store.summary()
        if not summary.invariants_hold:
            self.fail(f"ledger invariants: {summary.violations}")
        held = sum(t.balance for t in summary.totals if t.kind is not lm.AccountKind.ISSUANCE)
        if held != summary.chips_issued:
            self.fail(f"balances sum to {held}, {summary.chips_issued} chips issued")
        for kind in (lm.AccountKind.PLAYER, lm.AccountKind.TABLE_ESCROW):
            token = ""
            while True:
                accounts, token = store.list_accounts(kind=kind, owner=None, page_size=500, page_token=token)
                for account in accounts:
                    if account.balance < 0:
                        self.fail(f"account {account.owner} ({kind.value}) at {account.balance}")
                if not token:
                    break

    def _escrows(self) -> None:
        room, wallet = self.platform.table.room, self.platform.wallet.store
        if room is None or wallet is None:
            return
        for table_id in POKER:
            table = room.tables[table_id]
            if not table.recovered or room.store.open_money(table_id):
                continue
            owed = [
                p.amount
                for p in room.store.open_payouts(table_id)
                if wallet.transfer_by_request(scope(TABLE), p.transfer_id) is None
            ]
            accounts, _ = wallet.list_accounts(
                kind=lm.AccountKind.TABLE_ESCROW, owner=escrow_owner(table_id), page_size=1, page_token=""
            )
            escrow = accounts[0].balance if accounts else 0
            on_table = table.state.chips_on_table()
            if escrow != on_table + sum(owed):
                self.fail(f"{table_id}: escrow {escrow} != {on_table} on the table + {sum(owed)} owed")

    def _poker_events(self) -> None:
        room = self.platform.table.room
        if room is None:
            return
        for table_id in POKER:
            for stored in room.store.events(table_id, self.poker_seen[table_id] + 1):
                self.poker_seen[table_id] = stored.seq
                event = tpb.TableEvent.FromString(stored.body)
                kind = event.WhichOneof("event")
                key = (table_id, event.hand_number)
                if kind == "hand_started":
                    self.started[key] += 1
                    if self.started[key] > 1:
                        self.fail(f"{table_id} hand {event.hand_number} started twice")
                    if event.hand_number > 1 and not self.ended[(table_id, event.hand_number - 1)]:
                        self.fail(f"{table_id} hand {event.hand_number} started before the last ended")
                elif kind in ("hand_ended", "hand_voided"):
                    self.ended[key] += 1
                    if self.ended[key] > 1 or not self.started[key]:
                        self.fail(f"{table_id} hand {event.hand_number} ended {self.ended[key]} times")
                text = kind if stored.private_player else text_format.MessageToString(event, as_one_line=True)
                self.lines.append(f"  event {table_id} {text}")

    def _casino_events(self) -> None:
        casino = self.platform.table.casino
        if casino is None:
            return
        for table_id in CASINO:
            for stored in casino.store.events(table_id, self.casino_seen[table_id] + 1):
                self.casino_seen[table_id] = stored.seq
                self.lines.append(f"  event {table_id} r{stored.round} {stored.kind} {stored.data}")
                key = (table_id, stored.round)
                if stored.kind == "ROUND_VOIDED":  # then settled as VOIDED: every stake returned
                    self.voided[key] += 1
                    if self.voided[key] > 1:
                        self.fail(f"{table_id} round {stored.round} voided {self.voided[key]} times")
                if stored.kind == "ROUND_SETTLED":
                    self.settled[key] += 1
                    if self.settled[key] > 1:
                        self.fail(f"{table_id} round {stored.round} settled {self.settled[key]} times")
                    if (stored.data.get("phase") == "VOIDED") != bool(self.voided[key]):
                        self.fail(f"{table_id} round {stored.round} settled as {stored.data} after voids")

    def balances(self) -> str:
        store = self.platform.wallet.store
        if store is None:
            return "wallet down"
        accounts, _ = store.list_accounts(kind=None, owner=None, page_size=500, page_token="")
        return " ".join(
            f"{a.owner or a.kind.value}={a.balance}" for a in sorted(accounts, key=lambda a: a.owner)
        )


@contextlib.contextmanager
def seeded_uuid4(rng: random.Random) -> Iterator[None]:
    with mock.patch.object(uuid, "uuid4", lambda: uuid.UUID(int=rng.getrandbits(128), version=4)):
        yield


class Simulation:
    def __init__(self, seed: int, root: Path, steps: int) -> None:
        self.seed = seed
        self.steps = steps
        self.rng = random.Random(seed)
        self.log: list[str] = []
        self.faults = Faults(lose_request=0.02, lose_answer=0.02, repeat=0.05, crash_caller=0.004)
        self.step = 0
        self.network = Network(random.Random(seed * 7919 + 1), self.faults)
        self.network.record = self.say
        self.platform = Platform(root, seed, self.rng, self.network)
        self.checker = Checker(self.platform, lines=self.log)
        self.crashes: Counter[str] = Counter()
        self.down_until: dict[str, int] = {}
        count = self.rng.randint(3, 6)
        self.players = [self._player(f"p{k}") for k in range(count)]

    def _player(self, name: str) -> Player:
        caller = Caller(name, Role.PLAYER)
        table = tpb_grpc.TableServiceStub(self.network.channel("table", caller))  # type: ignore[no-untyped-call]
        casino = cpb_grpc.CasinoServiceStub(self.network.channel("table", caller))  # type: ignore[no-untyped-call]
        return Player(name, table, casino)

    def say(self, line: str) -> None:
        self.log.append(f"{self.step} t={self.platform.clock.ms} {line}")

    # -- calls -----------------------------------------------------------------------------------------

    def call(self, who: str, rpc: Callable[[Any], Any], request: Message, attempts: int = 3) -> Any | None:
        """Send, again with the same request on a lost request or answer; None when it never got through.
        A crash of the table service while it handles the call propagates (the step restarts it)."""
        name = type(request).__name__.removesuffix("Request")
        for _ in range(attempts):
            try:
                response = rpc(request)
            except grpc.RpcError as error:
                details = details_of(error)
                if details.code in BAD_CODES:
                    raise InvariantBroken(f"{name} answered {details.code.name}: {details.message}") from None
                if details.code is grpc.StatusCode.UNAVAILABLE:
                    continue
                self.say(f"{who} {name} -> {details.code.name} {details.reason}")
                return None
            self.say(f"{who} {name} -> OK")
            return response
        self.say(f"{who} {name} -> lost")
        return False

    def setup(self) -> None:
        wallet = wpb_grpc.WalletServiceStub(self.network.channel("wallet", OPERATOR))  # type: ignore[no-untyped-call]
        for player in self.players:
            request = wpb.CreateAccountRequest(
                request_id=f"acct-{player.name}", kind=wpb.ACCOUNT_KIND_PLAYER, owner=player.name
            )
            account = self._until_ok("ops", wallet.CreateAccount, request).account.account_id
            issue = wpb.IssueRequest(
                request_id=f"fund-{player.name}",
                account_id=account,
                amount=FUNDS,
                reason=wpb.ISSUE_REASON_PROMOTION,
            )
            self._until_ok("ops", wallet.Issue, issue)

    def _until_ok(self, who: str, rpc: Callable[[Any], Any], request: Message) -> Any:
        for _ in range(50):
            response = self.call(who, rpc, request)
            if response:
                return response
        raise InvariantBroken(f"{type(request).__name__} never went through")

    # -- the run ---------------------------------------------------------------------------------------

    def run(self) -> Result:
        self.say(f"seed {self.seed} players {len(self.players)}")
        self.setup()
        for step in range(1, self.steps + 1):
            self.step = step
            self._guarded(self._one_step)
            self._guarded(self.checker.check)
            if self.network.internal:
                raise InvariantBroken(f"a handler failed (INTERNAL): {self.network.internal[:3]}")
            if self.network.mismatched_repeats:
                raise InvariantBroken(f"a repeat got another answer: {self.network.mismatched_repeats}")
        self._drain()
        hands = sum(1 for k in self.checker.ended)
        rounds = sum(1 for k in self.checker.settled)
        self.say(f"end hands={hands} rounds={rounds} crashes={dict(sorted(self.crashes.items()))}")
        return Result(self.seed, self.steps, self.log, hands, rounds, self.crashes, self.network.calls)

    def _guarded(self, work: Callable[[], None]) -> None:
        try:
            work()
        except Crash as crash:
            self._crashed(crash.process)

    def _crashed(self, name: str) -> None:
        self.crashes[name] += 1
        self.say(f"crash {name} (mid-call)")
        self.platform.processes[name].crash()
        self.platform.processes[name].start()
        self.network.dead.discard(name)

    def _one_step(self) -> None:
        rng, platform = self.rng, self.platform
        for name, until in sorted(self.down_until.items()):
            if self.step >= until:
                del self.down_until[name]
                platform.processes[name].start()
                self.say(f"restart {name}")
        roll = rng.random()
        if roll < 0.03 and len(self.down_until) < 2:
            name = rng.choice(sorted(set(platform.processes) - set(self.down_until)))
            self.crashes[name] += 1
            platform.processes[name].crash()
            self.down_until[name] = self.step + rng.randint(1, 4)
            self.say(f"crash {name}")
        elif roll < 0.5:
            self._tick(rng.randint(50, 4_000))
        else:
            self._tick(rng.randint(0, 300))
            self._play(rng.choice(self.players))

    def _tick(self, ms: int) -> None:
        self.platform.clock.advance(ms)
        if self.network.up.get("table"):
            self.platform.table.tick()

    # -- players ---------------------------------------------------------------------------------------

    def _play(self, player: Player) -> None:
        if not self.network.up.get("table"):
            return
        if player.retry is not None:
            rpc_name, request = player.retry
            stub = player.casino if rpc_name.startswith("C:") else player.table
            rpc = getattr(stub, rpc_name.removeprefix("C:"))
            player.retry = None
            self._send(player, rpc_name, rpc, request)
            return
        if self.rng.random() < 0.55:
            self._poker(player)
        else:
            self._casino(player)

    def _send(self, player: Player, rpc_name: str, rpc: Callable[[Any], Any], request: Message) -> Any:
        response = self.call(player.name, rpc, request)
        if response is False:
            player.retry = (rpc_name, request)  # sent again (same id) when the player next plays
            return None
        return response

    def _poker(self, player: Player) -> None:
        rng = self.rng
        if player.poker is None:
            table_id = rng.choice(POKER)
            view = self.call(
                player.name, player.table.GetTableView, tpb.GetTableViewRequest(table_id=table_id)
            )
            if view and view.view.your_seat:
                player.poker = table_id
                return
            request = tpb.JoinTableRequest(
                request_id=player.request_id(), table_id=table_id, buy_in=rng.choice((200, 500, 1000))
            )
            if self._send(player, "JoinTable", player.table.JoinTable, request):
                player.poker = table_id
            return
        table_id = player.poker
        got = self.call(player.name, player.table.GetTableView, tpb.GetTableViewRequest(table_id=table_id))
        if not got:
            return
        view = got.view
        if not view.your_seat:
            player.poker = None  # busted out, or left
            return
        if rng.random() < 0.05:
            request = tpb.LeaveTableRequest(request_id=player.request_id(), table_id=table_id)
            left = self._send(player, "LeaveTable", player.table.LeaveTable, request)
            if left:
                self.say(
                    f"  left returned={left.returned} pending={left.pending} later={left.leaving_after_hand}"
                )
                if not left.leaving_after_hand:
                    player.poker = None
            return
        if view.hand_in_play and view.seat_to_act == view.your_seat:
            legal = view.legal
            options = []
            if legal.can_check:
                options.append((tpb.ACTION_KIND_CHECK, 0))
            elif legal.call_amount:
                options.append((tpb.ACTION_KIND_CALL, 0))
            if legal.can_fold:
                options.append((tpb.ACTION_KIND_FOLD, 0))
            if legal.bet_kind and legal.min_to:
                options.append((legal.bet_kind, rng.randint(legal.min_to, max(legal.min_to, legal.max_to))))
            if legal.can_all_in and rng.random() < 0.1:
                options.append((tpb.ACTION_KIND_ALL_IN, 0))
            if not options:
                return
            kind, amount = rng.choice(options)
            version = view.version if rng.random() < 0.9 else view.version + 1  # now and then a stale one
            request = tpb.ActRequest(
                request_id=player.request_id(),
                table_id=table_id,
                expected_version=version,
                kind=kind,
                amount=amount,
            )
            self._send(player, "Act", player.table.Act, request)

    def _casino(self, player: Player) -> None:
        rng = self.rng
        if player.casino_seat is None:
            table_id = rng.choice(CASINO)
            request = cpb.JoinCasinoTableRequest(request_id=player.request_id(), table_id=table_id)
            joined = self._send(player, "C:JoinCasinoTable", player.casino.JoinCasinoTable, request)
            if joined:
                player.casino_seat = (table_id, joined.seat)
            return
        table_id, seat = player.casino_seat
        got = self.call(player.name, player.casino.GetRound, cpb.GetRoundRequest(table_id=table_id))
        if not got:
            return
        mine = next((s for s in got.round.seats if s.seat == seat and s.own), None)
        if mine is None:
            player.casino_seat = None  # released (idle) or left
            return
        if rng.random() < 0.05:
            request = cpb.LeaveCasinoTableRequest(
                request_id=player.request_id(), table_id=table_id, seat=seat
            )
            if self._send(player, "C:LeaveCasinoTable", player.casino.LeaveCasinoTable, request) is not None:
                player.casino_seat = None
            return
        phase = got.round.phase
        if (phase == "BETTING" and not mine.bets) or phase in ("SETTLED", "VOIDED"):  # a bet opens the next
            bets = [cpb.Bet(kind="ANTE", amount=rng.choice((5, 10, 25)))]
            request = cpb.PlaceBetsRequest(
                request_id=player.request_id(), table_id=table_id, seat=seat, bets=bets
            )
            self._send(player, "C:PlaceBets", player.casino.PlaceBets, request)
        elif got.round.phase == "BETTING" and rng.random() < 0.5:
            request = cpb.DealRoundRequest(request_id=player.request_id(), table_id=table_id)
            self._send(player, "C:DealRound", player.casino.DealRound, request)
        elif mine.legal_decisions:
            choice = rng.choice(list(mine.legal_decisions))
            request = cpb.DecideRequest(
                request_id=player.request_id(), table_id=table_id, seat=seat, decision=choice.decision
            )
            self._send(player, "C:Decide", player.casino.Decide, request)

    # -- the end ---------------------------------------------------------------------------------------

    def _drain(self) -> None:
        """No more faults: everything restarted, every player leaves, the clocks run until nothing is owed."""
        self.step += 1
        self.faults.lose_request = self.faults.lose_answer = self.faults.crash_caller = 0.0
        for name in sorted(self.down_until):
            self.platform.processes[name].start()
            self.say(f"restart {name}")
        self.down_until.clear()
        for player in self.players:
            player.retry = None
            for table_id in POKER:
                request = tpb.LeaveTableRequest(request_id=player.request_id(), table_id=table_id)
                self.call(player.name, player.table.LeaveTable, request)
            for table_id in CASINO:
                request = cpb.LeaveCasinoTableRequest(request_id=player.request_id(), table_id=table_id)
                self.call(player.name, player.casino.LeaveCasinoTable, request)
        for _ in range(120):
            self._tick(1_000)
            self.checker.check()
        room = self.platform.table.room
        assert room is not None
        for table_id in POKER:
            if room.store.open_payouts(table_id) or room.store.open_money(table_id):
                raise InvariantBroken(f"{table_id}: payouts or buy-ins still open after the drain")
            for player in self.players:
                if room.tables[table_id].state.find_seat(player.name) is not None:
                    raise InvariantBroken(f"{player.name} still seated at {table_id} after leaving")
        self.say(f"balances {self.checker.balances()}")


def run_seed(seed: int, steps: int = 150, root: Path | None = None) -> Result:
    """One run in a fresh directory (a temporary one unless `root` is given)."""
    with contextlib.ExitStack() as stack:
        if root is None:
            # In memory where the machine has it: the stores fsync every commit, the run needs none.
            scratch = "/dev/shm" if Path("/dev/shm").is_dir() else None
            root = Path(
                stack.enter_context(tempfile.TemporaryDirectory(prefix=f"felt-sim-{seed}-", dir=scratch))
            )
        stack.enter_context(seeded_uuid4(random.Random(seed * 104_729 + 3)))
        simulation = Simulation(seed, root, steps)
        stack.callback(simulation.platform.close)
        try:
            return simulation.run()
        except Exception as broken:
            broken.log = simulation.log  # type: ignore[attr-defined]
            raise
