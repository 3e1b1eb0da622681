"""Issue 6 integration: the dealer, the wallet and the table service run as processes; bots and scripted
players (each a gRPC client with its own token and WatchTable stream) play a few hundred hands over three
tables (NLHE and PLO, with bots; NLHE players only). One player drops her stream mid-hand when it is her
turn, the clock runs out (NK-7.3, NK-A4: the server checks or folds for her), and she resumes with
`from_seq`: she gets exactly the events she missed, then live ones (NK-7.5). At the end every player
leaves: the ledger's invariants hold, every player's wallet moved by exactly their nets, a players-only
table's escrow is back to 0 and a bot table's escrow equals the chips on it.

The same run is the leak scan (MP-1.2, NK-7.6): every message each viewer received (stream events, the
views of GetTableView / Act / JoinTable, errors, their own hand histories) is checked against the operator's
full hand histories (tests/integration/leakscan.py); the table service's log and metrics are scanned for
card text. Along the way: a three-hand break (SitOut / SitIn), re-buys after busting (TopUp), presets,
all-ins, pot-limit raises and illegal actions refused without effect.
"""

from __future__ import annotations

import contextlib
import os
import random
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import auth, testing
from servicekit.errors import details_of
from servicekit.testing import free_port

from tests.integration.leakscan import Hand, Received, Scan, Viewer, parse_full_phh, scan_log, scan_metrics

ROOT = Path(__file__).resolve().parents[2]
# Hands over the three tables, and at least a fifth of them at each.
HANDS = int(os.environ.get("FELT_TEST_TABLE_HANDS", "300"))
HANDS_PER_TABLE = HANDS // 5
FUNDS = 1_000_000
# Races a real client meets (a turn already gone by the time it answers) and the illegal actions the
# players send on purpose; anything else is a failure, except the refusals of calls that crossed the
# player's own LeaveTable (counted as "<REASON> (leaving)": the player must still leave, with its money).
EXPECTED_REASONS = {
    "STALE_VERSION",
    "NOT_YOUR_TURN",
    "TIME_EXPIRED",
    "BELOW_MIN_RAISE",
    "BELOW_MIN_BET",
    "NO_HAND_IN_PROGRESS",
}


def _start(
    name: str, data_dir: Path, env: dict[str, str], log: Path, metrics_port: int = 0
) -> tuple[subprocess.Popen[bytes], str]:
    port, internal = free_port(), free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", f"services.{name}", "--port", str(port), "--internal-port", str(internal),
             "--metrics-port", str(metrics_port or free_port()), "--data-dir", str(data_dir)],
            cwd=ROOT,
            env={**os.environ, "FELT_SHUTDOWN_GRACE_SECONDS": "2", **env},
            stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    address = f"127.0.0.1:{internal}"  # the internal port (mutual TLS): the services' and this test's
    with testing.channel(address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if health.Check(health_pb2.HealthCheckRequest(), timeout=1).status == 1:
                    return proc, address
            except grpc.RpcError:
                pass
            if proc.poll() is not None:
                break
            time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"{name} did not start:\n{log.read_text()[-3000:]}")


@dataclass
class Services:
    data_dir: Path
    table_address: str
    wallet_address: str
    table_log: Path
    table_metrics: str  # the table service's /metrics URL

    def keys(self) -> Any:
        return auth.load_keys(self.data_dir)

    def table(self, subject: str, role: auth.Role = auth.Role.PLAYER) -> pb_grpc.TableServiceStub:
        token = auth.issue_token(self.keys(), subject, role)
        return pb_grpc.TableServiceStub(testing.channel(self.table_address, token))

    def wallet(self) -> wpb_grpc.WalletServiceStub:
        token = auth.issue_token(self.keys(), "ops", auth.Role.OPERATOR)
        return wpb_grpc.WalletServiceStub(testing.channel(self.wallet_address, token))

    def fund(self, player: str, chips: int) -> str:
        wallet = self.wallet()
        account = wallet.CreateAccount(
            wpb.CreateAccountRequest(request_id=f"acct-{player}", kind=wpb.ACCOUNT_KIND_PLAYER, owner=player)
        ).account.account_id
        assert isinstance(account, str)
        wallet.Issue(
            wpb.IssueRequest(
                request_id=f"fund-{player}",
                account_id=account,
                amount=chips,
                reason=wpb.ISSUE_REASON_PROMOTION,
            )
        )
        return account

    def account(self, kind: wpb.AccountKind, owner: str) -> wpb.Account | None:
        found = self.wallet().ListAccounts(wpb.ListAccountsRequest(kind=kind, owner=owner)).accounts
        return found[0] if found else None

    def escrow(self, table_id: str) -> wpb.Account | None:
        """The table's escrow account (its owner names the table)."""
        return self.account(wpb.ACCOUNT_KIND_TABLE_ESCROW, f"table:{table_id}")


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    data_dir = tmp_path_factory.mktemp("felt")
    procs: list[subprocess.Popen[bytes]] = []
    try:
        dealer, dealer_address = _start(
            "dealer", data_dir, {"FELT_LOG_LEVEL": "WARNING"}, data_dir / "dealer.log"
        )
        procs.append(dealer)
        wallet, wallet_address = _start(
            "wallet", data_dir, {"FELT_LOG_LEVEL": "WARNING"}, data_dir / "wallet.log"
        )
        procs.append(wallet)
        table_log = data_dir / "table.log"
        metrics_port = free_port()
        table, table_address = _start(
            "table",
            data_dir,
            {
                "FELT_DEALER_ADDRESS": dealer_address,
                "FELT_WALLET_ADDRESS": wallet_address,
                # One idle public table instead of the default bot table: only the tables this test creates play.
                "FELT_TABLE_POKER_TABLES": "lobby:NLHE:5/10:200-1000:2",
                "FELT_TABLE_POKER_BOT_PACING": "0",  # bots answer at once
                "FELT_TABLE_POKER_HAND_PAUSE_MS": "0",
                # The scripted players act, bust and re-buy the instant they may against unpaced bots:
                # faster than a person's budgets for Act and TopUp/SitOut/SitIn (README "Limits per
                # caller"); every other limit stays on.
                "FELT_TABLE_RATE_ACT": "off",
                "FELT_TABLE_RATE_SEAT_STATE": "off",
                "FELT_LOG_LEVEL": "DEBUG",  # every line the service can write is scanned for cards
            },
            table_log,
            metrics_port,
        )
        procs.append(table)
        metrics = f"http://127.0.0.1:{metrics_port}/metrics"
        yield Services(data_dir, table_address, wallet_address, table_log, metrics)
    finally:
        for proc in reversed(procs):  # the table first: it closes its shoes with the dealer still up
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()


def _error_text(error: grpc.RpcError) -> tuple[str, str]:
    details = details_of(error)
    text = " ".join([details.message, details.reason, *(f"{k}={v}" for k, v in details.metadata.items())])
    return details.reason or str(details.code), text


# ---- scripted players --------------------------------------------------------------------------------

# style -> (all-in, raise, fold when facing a bet, illegal on purpose)
STYLES = {
    "caller": (0.0, 0.0, 0.05, 0.0),
    "aggro": (0.04, 0.35, 0.10, 0.03),
    "wild": (0.12, 0.25, 0.20, 0.03),
}


def choose(legal: pb.LegalActions, rng: random.Random, style: str) -> list[dict[str, Any]]:
    """The Act fields to send, in order: an illegal try first now and then (refused, nothing changes),
    then the decision."""
    all_in, raise_, fold, illegal = STYLES[style]
    can_raise = legal.max_to > 0
    tries: list[dict[str, Any]] = []
    if can_raise and legal.min_to > 1 and rng.random() < illegal:
        tries.append({"kind": legal.bet_kind, "amount": legal.min_to - 1, "illegal": True})
    r = rng.random()
    # All-in when offered: never above a pot-size raise (NK-3.7) nor into closed betting (NK-3.5).
    if r < all_in and legal.can_all_in:
        tries.append({"kind": pb.ACTION_KIND_ALL_IN})
    elif r < all_in and can_raise:
        tries.append({"kind": legal.bet_kind, "amount": legal.max_to})  # pot limit: the pot instead
    elif can_raise and r < all_in + raise_:
        pick = rng.random()
        if pick < 0.4:
            tries.append({"kind": legal.bet_kind, "amount": legal.min_to})
        elif pick < 0.7 and legal.presets:
            tries.append({"preset": rng.choice(legal.presets).preset})  # those offered now
        else:
            tries.append({"kind": legal.bet_kind, "amount": rng.randint(legal.min_to, legal.max_to)})
    elif legal.call_amount > 0 and r < all_in + raise_ + fold:
        tries.append({"kind": pb.ACTION_KIND_FOLD})
    else:
        tries.append({"kind": pb.ACTION_KIND_CHECK if legal.can_check else pb.ACTION_KIND_CALL})
    return tries


@dataclass
class Player:
    """A person at a table: one channel and token, one WatchTable stream (a thread), acting on its turns."""

    services: Services
    name: str
    table_id: str
    style: str
    buy_in: int
    disconnect_at_hand: int = 0  # drop the stream at the first own turn from this hand on (0: never)
    sit_out_at: int = 0  # sit out after this hand for three hands (0: never)
    sat_out_after: int = 0
    sat_in_after: int = 0
    rebuys: int = 0
    viewer: Viewer = field(init=False)
    events: list[pb.TableEvent] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    hand_nets: dict[int, int] = field(default_factory=dict)  # hand number -> net, as the stream told it
    seat: int = 0  # as the stream tells it (PlayerSeated / PlayerLeft of this player)
    dropped_seat: int = 0
    rail_seq_at_resume: int = 0
    leaving: bool = False
    left: threading.Event = field(default_factory=threading.Event)
    dropped: threading.Event = field(default_factory=threading.Event)
    dropped_after_seq: int = 0
    dropped_in_hand: int = 0
    resumed_from: int = 0
    stream_failures: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.viewer = Viewer(self.name)
        self.stub = self.services.table(self.name)
        self.rng = random.Random(self.name)
        self._lock = threading.Lock()
        self._calls = 0
        self._call: Any = None
        self._thread: threading.Thread | None = None
        self._closing = False

    # -- recording
    def _record(self, kind: str, message: Any) -> None:
        with self._lock:
            self.viewer.received.append(Received(self.table_id, kind, message))

    def _rid(self, what: str) -> str:
        self._calls += 1
        return f"{self.name}-{what}-{self._calls}"

    def _unary(self, method: Callable[..., Any], request: Any) -> Any:
        try:
            return method(request)
        except grpc.RpcError as error:
            reason, text = _error_text(error)
            self._record("error", text)
            crossed = self.leaving and not isinstance(request, pb.LeaveTableRequest)
            self.errors[f"{reason} (leaving)" if crossed else reason] += 1
            self.refused.append(f"{type(request).__name__}: {reason}: {text}")
            raise

    # -- seat
    def join(self) -> None:
        reply = self._unary(
            self.stub.JoinTable,
            pb.JoinTableRequest(request_id=self._rid("join"), table_id=self.table_id, buy_in=self.buy_in),
        )
        self._record("view", reply.view)

    def leave(self) -> None:
        self.leaving = True
        # `left` is set by the stream, at this player's PlayerLeft, never here: whatever came before it
        # (the last HandEnded and its nets) has been handled by then, even on a stream running behind
        # (a CI run once closed a lagging stream before its last HandEnded: the nets missed 10 chips).
        self._unary(
            self.stub.LeaveTable, pb.LeaveTableRequest(request_id=self._rid("leave"), table_id=self.table_id)
        )

    def _rebuy(self) -> None:
        """NK-6: a busted player re-buys (TopUp sits them in again); a server without TopUp yet: leave and
        join again."""
        try:
            self._unary(
                self.stub.TopUp,
                pb.TopUpRequest(request_id=self._rid("rebuy"), table_id=self.table_id, amount=self.buy_in),
            )
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.UNIMPLEMENTED:
                raise
            self.errors["UNIMPLEMENTED"] -= 1
            self._unary(
                self.stub.LeaveTable,
                pb.LeaveTableRequest(request_id=self._rid("bust"), table_id=self.table_id),
            )
            self.join()

    # -- stream
    def watch(self, from_seq: int = 1) -> None:
        self._closing = False
        self._call = self.stub.WatchTable(pb.WatchTableRequest(table_id=self.table_id, from_seq=from_seq))
        self._thread = threading.Thread(target=self._stream, args=(self._call,), daemon=True, name=self.name)
        self._thread.start()

    def close(self) -> None:
        self._closing = True
        if self._call is not None:
            self._call.cancel()
        if self._thread is not None:
            self._thread.join(10)

    def _stream(self, call: Any) -> None:
        try:
            for event in (e for reply in call for e in reply.events):
                self._record("event", event)
                self.events.append(event)
                if not self._on_event(event):
                    self._closing = True
                    call.cancel()
                    return
            self.stream_failures.append("the server ended the stream")
        except grpc.RpcError as error:
            # Cancelled by this harness (close, the disconnect) is the only quiet end: a stream that stops
            # by itself would make every count after it wrong without a word.
            if error.code() != grpc.StatusCode.CANCELLED or not self._closing:
                self.stream_failures.append(f"{error.code()}: {error.details()}")
        except Exception as error:  # a bug in this harness must fail the test, not hang it
            self.stream_failures.append(repr(error))
            call.cancel()

    def _on_event(self, event: pb.TableEvent) -> bool:
        """Handle one event; False drops the stream (the disconnect)."""
        which = event.WhichOneof("event")
        if which == "player_seated" and event.player_seated.player_id == self.name:
            self.seat = event.player_seated.seat
        elif which == "player_left" and event.player_left.player_id == self.name:
            self.seat = 0
            if self.leaving:
                self.left.set()
        elif which == "hand_ended":
            mine = [n.chips for n in event.hand_ended.nets if n.seat == self.seat]
            if mine:
                self.hand_nets[event.hand_number] = mine[0]
            stacks = {s.seat: s.chips for s in event.hand_ended.stacks}
            if self.seat and not self.leaving and stacks.get(self.seat) != 0:  # busted: the re-buy first
                self._break(event.hand_number)
        elif which == "player_sat_out" and event.player_sat_out.seat == self.seat and not self.leaving:
            try:
                if event.player_sat_out.reason == "BUSTED":
                    self._rebuy()
                    self.rebuys += 1
                elif event.player_sat_out.reason != "REQUESTED":
                    self._unary(
                        self.stub.SitIn,
                        pb.SitInRequest(request_id=self._rid("sitin"), table_id=self.table_id),
                    )
            except grpc.RpcError:
                pass  # counted in self.errors
        elif (
            which == "turn_to_act" and event.turn_to_act.seat == self.seat and self.seat and not self.leaving
        ):
            if (
                self.disconnect_at_hand
                and not self.dropped.is_set()
                and event.hand_number >= self.disconnect_at_hand
            ):
                self.dropped_after_seq, self.dropped_in_hand = event.seq, event.hand_number
                self.dropped_seat = self.seat
                self.dropped.set()
                return False
            self._turn()
        return True

    def _break(self, hand: int) -> None:
        """A short break (NK-6): sit out after hand `sit_out_at`, back three hands later."""
        try:
            if self.sit_out_at and not self.sat_out_after and hand >= self.sit_out_at:
                self._unary(
                    self.stub.SitOut, pb.SitOutRequest(request_id=self._rid("out"), table_id=self.table_id)
                )
                self.sat_out_after = hand
            elif self.sat_out_after and not self.sat_in_after and hand >= self.sat_out_after + 3:
                self.sat_in_after = hand
                self._sit_in_after_break()
        except grpc.RpcError:
            pass  # counted in self.errors

    def _sit_in_after_break(self) -> None:
        try:
            self._unary(self.stub.SitIn, pb.SitInRequest(request_id=self._rid("in"), table_id=self.table_id))
        except grpc.RpcError as error:
            # Busted in the hand still running when the break began: a re-buy sits them in (NK-6.1).
            if _error_text(error)[0] != "NO_CHIPS":
                raise
            self.errors["NO_CHIPS"] -= 1
            self._rebuy()
            self.rebuys += 1

    def _turn(self) -> None:
        """Answer a turn from the view (with its legal actions and version); a stale version (the hand
        moved on meanwhile) means: fetch the view again, as a front-end would."""
        for _ in range(3):
            try:
                view = self._unary(
                    self.stub.GetTableView, pb.GetTableViewRequest(table_id=self.table_id)
                ).view
            except grpc.RpcError:
                return
            self._record("view", view)
            if view.seat_to_act != self.seat or not view.hand_in_play:
                return  # the turn has gone (answered late, timed out): the stream brings the next one
            if not self._decide(view):
                return

    def _decide(self, view: pb.TableView) -> bool:
        """Act on `view`; True when it was stale."""
        for fields in choose(view.legal, self.rng, self.style):
            illegal = fields.pop("illegal", False)
            request = pb.ActRequest(
                request_id=self._rid("act"), table_id=self.table_id, expected_version=view.version, **fields
            )
            try:
                reply = self._unary(self.stub.Act, request)
            except grpc.RpcError as error:
                reason, text = _error_text(error)
                if reason == "STALE_VERSION":
                    return True
                if illegal:
                    continue  # refused as it should be; the decision follows with the same version
                self.refused.append(f"{text} for {fields} with {view.legal}".replace("\n", " "))
                if fields.get("kind") not in (pb.ACTION_KIND_CHECK, pb.ACTION_KIND_CALL, pb.ACTION_KIND_FOLD):
                    # Keep the game going; the refusal fails the test unless it was a race.
                    plain = pb.ACTION_KIND_CHECK if view.legal.can_check else pb.ACTION_KIND_CALL
                    retry = pb.ActRequest(
                        request_id=self._rid("act"),
                        table_id=self.table_id,
                        expected_version=view.version,
                        kind=plain,
                    )
                    with contextlib.suppress(grpc.RpcError):  # counted in self.errors
                        self._record("view", self._unary(self.stub.Act, retry).view)
                return False
            assert not illegal, f"{self.name}: an illegal action was accepted: {request}"
            self._record("view", reply.view)
            return False
        return False

    def read_own_histories(self, count: int) -> int:
        """Their last hands as they may see them (ListHandHistories, GetHandHistory): scanned too."""
        listed = self._unary(
            self.stub.ListHandHistories, pb.ListHandHistoriesRequest(table_id=self.table_id, page_size=count)
        )
        for summary in listed.hands:
            request = pb.GetHandHistoryRequest(table_id=self.table_id, hand_number=summary.hand_number)
            self._record("phh", self._unary(self.stub.GetHandHistory, request).phh)
        return len(listed.hands)

    @property
    def nets(self) -> int:
        """The chips won and lost over the hands played, as the stream told them."""
        return sum(self.hand_nets.values())

    def nets_report(self) -> str:
        """Where the stream's nets and the table's record of them differ, hand by hand (for a failure)."""
        recorded: dict[int, int] = {}
        token = ""
        while True:
            page = self.stub.ListHandHistories(
                pb.ListHandHistoriesRequest(table_id=self.table_id, page_size=100, page_token=token)
            )
            recorded.update({h.hand_number: h.net for h in page.hands if not h.voided})
            token = page.next_page_token
            if not token:
                break
        differing = {
            n: (self.hand_nets.get(n), recorded.get(n))
            for n in sorted(recorded.keys() | self.hand_nets.keys())
            if self.hand_nets.get(n) != recorded.get(n)
        }
        return (
            f"{self.name}: stream nets {self.nets} over {len(self.hand_nets)} hands, the "
            f"table's {sum(recorded.values())} over {len(recorded)}; (stream, table) where they differ: "
            f"{differing}; stream failures: {self.stream_failures}"
        )

    def resume(self) -> None:
        """NK-7.5: back after the drop, from the first event not yet received."""
        self.resumed_from = self.events[-1].seq + 1
        self.watch(self.resumed_from)


@dataclass
class Observer:
    """Someone watching a table without a seat: they get no hole cards at all."""

    services: Services
    name: str
    table_id: str
    viewer: Viewer = field(init=False)
    events: list[pb.TableEvent] = field(default_factory=list)
    hands_ended: int = 0
    failures: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.viewer = Viewer(self.name)
        self.stub = self.services.table(self.name)
        self._call = self.stub.WatchTable(pb.WatchTableRequest(table_id=self.table_id, from_seq=1))
        self._thread = threading.Thread(target=self._stream, daemon=True, name=self.name)
        self._thread.start()

    def _stream(self) -> None:
        try:
            for event in (e for reply in self._call for e in reply.events):
                self.events.append(event)
                self.viewer.received.append(Received(self.table_id, "event", event))
                if event.WhichOneof("event") == "hand_ended":
                    self.hands_ended += 1
                    if self.hands_ended % 10 == 0:  # now and then the view a watcher gets
                        view = self.stub.GetTableView(pb.GetTableViewRequest(table_id=self.table_id)).view
                        self.viewer.received.append(Received(self.table_id, "view", view))
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.CANCELLED:
                self.failures.append(f"{error.code()}: {error.details()}")

    def close(self) -> None:
        self._call.cancel()
        self._thread.join(10)


def wait_until(check: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached in {timeout} s: {what}")
        time.sleep(0.05)


# ---- the run -----------------------------------------------------------------------------------------


def _create(ops: pb_grpc.TableServiceStub, name: str, **settings: Any) -> str:
    reply = ops.CreateTable(
        pb.CreateTableRequest(request_id=f"create-{name}", settings=pb.TableSettings(name=name, **settings))
    )
    return str(reply.table.table_id)


@dataclass
class Run:
    services: Services
    tables: dict[str, str]  # name -> table id
    players: list[Player]
    observers: dict[str, Observer]
    hands: dict[tuple[str, int], Hand]
    funded: dict[str, int]
    seconds: float


@pytest.fixture(scope="module")
def run(services: Services) -> Run:
    started = time.monotonic()

    def mark(what: str) -> None:
        print(f"[{time.monotonic() - started:6.1f} s] {what}", flush=True)

    ops = services.table("ops", auth.Role.OPERATOR)
    nlhe = {
        "game": pb.GAME_NO_LIMIT_HOLDEM,
        "small_blind": 5,
        "big_blind": 10,
        "min_buy_in": 200,
        "max_buy_in": 1_000,
    }
    plo = {**nlhe, "game": pb.GAME_POT_LIMIT_OMAHA}
    clock = {"decision_seconds": 5, "time_bank_seconds": 5}  # a stuck player costs seconds, not minutes
    tables = {
        # Short clocks where the player drops, so her time-out comes within seconds of wall time.
        "nlhe-bots": _create(
            ops,
            "nlhe-bots",
            seats=6,
            bots_allowed=True,
            bot_seats=3,
            decision_seconds=3,
            time_bank_seconds=2,
            **nlhe,
        ),
        "plo-bots": _create(ops, "plo-bots", seats=6, bots_allowed=True, bot_seats=3, **clock, **plo),
        "nlhe-people": _create(ops, "nlhe-people", seats=4, **clock, **nlhe),
    }
    observers = {name: Observer(services, f"rail-{name}", table_id) for name, table_id in tables.items()}
    cast = [
        ("ana", "nlhe-bots", "caller", 0),
        ("dora", "nlhe-bots", "wild", 4),
        ("ben", "plo-bots", "aggro", 0),
        ("eve", "plo-bots", "wild", 0),
        ("cal", "nlhe-people", "caller", 0),
        ("fay", "nlhe-people", "aggro", 0),
        ("gus", "nlhe-people", "wild", 0),
        ("hal", "nlhe-people", "aggro", 0),
    ]
    players = []
    funded = {}
    for name, table, style, drop in cast:
        services.fund(name, FUNDS)
        funded[name] = FUNDS
        player = Player(services, name, tables[table], style, buy_in=600, disconnect_at_hand=drop)
        player.sit_out_at = 15 if name == "cal" else 0
        player.watch()
        player.join()
        players.append(player)
    dora = next(p for p in players if p.name == "dora")
    mark("seated")

    # Dora drops at her turn; the clock runs out (NK-7.3); she comes back while play goes on.
    dora.dropped.wait(60)
    assert dora.dropped.is_set(), "dora never had a turn"
    dora.close()
    mark(f"dora dropped in hand {dora.dropped_in_hand}")
    rail = observers["nlhe-bots"]

    def her_time_out() -> bool:
        return any(
            e.seq > dora.dropped_after_seq
            and e.WhichOneof("event") == "player_acted"
            and e.player_acted.seat == dora.dropped_seat
            and e.player_acted.timed_out
            for e in list(rail.events)
        )

    wait_until(her_time_out, 30, "dora's time-out while disconnected")
    time.sleep(0.5)  # some more of the table's play happens while she is away
    dora.rail_seq_at_resume = rail.events[-1].seq
    dora.resume()
    mark("dora back")

    deadline = time.monotonic() + 240

    def enough() -> bool:
        counts = [o.hands_ended for o in observers.values()]
        return sum(counts) >= HANDS and min(counts) >= HANDS_PER_TABLE

    while not enough():
        assert time.monotonic() < deadline, f"{HANDS} hands, {HANDS_PER_TABLE} at each table"
        time.sleep(1)
        if int(time.monotonic() - started) % 10 == 0:
            mark(f"hands so far: {[o.hands_ended for o in observers.values()]}")
    mark(f"hands played: {[o.hands_ended for o in observers.values()]}")
    for player in players:
        player.leave()
    for player in players:
        assert player.left.wait(30), f"{player.name} did not leave"
    time.sleep(0.3)  # the last events (PlayerLeft and whatever follows) reach every stream
    for player in players:
        player.close()
    for observer in observers.values():
        observer.close()

    mark("everyone left")
    histories = sum(player.read_own_histories(20) for player in players)
    mark(f"{histories} histories read by the players")
    # The truth: every hand any viewer heard of, from the operator's full PHH view.
    hands: dict[tuple[str, int], Hand] = {}
    wanted = {
        (r.table_id, n)
        for v in [*(p.viewer for p in players), *(o.viewer for o in observers.values())]
        for r in v.received
        for n in [getattr(r.message, "hand_number", 0)]
        if n
    }
    for table_id, number in sorted(wanted):

        def history(table_id: str = table_id, number: int = number) -> pb.GetHandHistoryResponse | None:
            try:
                reply: pb.GetHandHistoryResponse = ops.GetHandHistory(
                    pb.GetHandHistoryRequest(table_id=table_id, hand_number=number)
                )
                return reply
            except grpc.RpcError as error:
                if error.code() == grpc.StatusCode.NOT_FOUND:
                    return None  # still in play at a bot table: it ends within moments
                raise

        try:
            reply = wait_until(history, 10, f"hand {number} of {table_id}")
        except AssertionError:
            continue  # never finished: the scan reports it as unchecked
        if not reply.summary.voided:
            hands[(table_id, number)] = parse_full_phh(reply.phh)
    mark(f"{len(hands)} histories")
    return Run(services, tables, players, observers, hands, funded, time.monotonic() - started)


@pytest.mark.slow
def test_hundreds_of_hands_with_bots_and_players(run: Run) -> None:
    assert sum(o.hands_ended for o in run.observers.values()) >= HANDS
    for observer in run.observers.values():
        assert observer.hands_ended >= HANDS_PER_TABLE
        assert not observer.failures
    for player in run.players:
        assert not player.stream_failures, (player.name, player.stream_failures)
        unexpected = {
            r: n for r, n in player.errors.items() if n and r not in EXPECTED_REASONS and "(leaving)" not in r
        }
        for refusal in player.refused if unexpected else []:
            print(player.name, refusal)
        assert not unexpected, (player.name, unexpected, [r for r in player.refused if "STALE" not in r][:5])
    acted = Counter(
        e.player_acted.kind
        for o in run.observers.values()
        for e in o.events
        if e.WhichOneof("event") == "player_acted"
    )
    assert acted[pb.ACTION_KIND_RAISE] and acted[pb.ACTION_KIND_FOLD] and acted[pb.ACTION_KIND_CALL]
    # Nobody but dora (away on purpose) ever let the clock run out: the players answer every turn.
    timed_out = [
        (name, e.hand_number, e.player_acted.seat)
        for name, o in run.observers.items()
        for e in o.events
        if e.WhichOneof("event") == "player_acted" and e.player_acted.timed_out
    ]
    dora = next(p for p in run.players if p.name == "dora")
    assert (
        timed_out[:1] == [("nlhe-bots", dora.dropped_in_hand, dora.dropped_seat)] and len(timed_out) == 1
    ), timed_out
    all_ins = sum(
        e.player_acted.all_in
        for o in run.observers.values()
        for e in o.events
        if e.WhichOneof("event") == "player_acted"
    )
    assert all_ins > 0
    print(
        f"\n{sum(o.hands_ended for o in run.observers.values())} hands in {run.seconds:.1f} s; actions {dict(acted)}"
    )


def _seqs(events: list[pb.TableEvent]) -> list[int]:
    return [e.seq for e in events]


@pytest.mark.slow
def test_every_stream_has_every_public_event_once_and_only_its_own_private_ones(run: Run) -> None:
    """Each player's stream (from seq 1 while seated and after) against the rail's at the same table: the
    same public events, byte for byte, none missing or repeated; the rest is their own hole cards."""
    for player in run.players:
        rail = run.observers[next(n for n, t in run.tables.items() if t == player.table_id)]
        public = {e.seq: e for e in rail.events}
        seqs = _seqs(player.events)
        assert seqs == sorted(set(seqs)), player.name
        last = min(seqs[-1], max(public))
        own = 0
        dealt: set[int] = set()  # the hands they were dealt into, as their stream says
        for event in player.events:
            if event.seq > last:
                break
            if event.seq in public:
                assert event == public[event.seq], player.name
            elif event.WhichOneof("event") == "shoe_revealed":  # a hand they were dealt into, once over
                assert event.shoe_revealed.hand_number in dealt, (player.name, event)
            else:
                assert event.WhichOneof("event") == "hole_cards_dealt", (player.name, event)
                dealt.add(event.hand_number)
                own += 1
        mine = set(seqs)
        assert not [s for s in public if s <= last and s not in mine], player.name
        assert own > 10, player.name  # they were dealt in


@pytest.mark.slow
def test_a_break_and_re_buys(run: Run) -> None:
    """NK-6: a player who sits out is dealt no cards until they sit in again (the seat and stack kept);
    busted players re-buy (TopUp) and are dealt in again."""
    cal = next(p for p in run.players if p.name == "cal")
    assert cal.sat_out_after and cal.sat_in_after, (cal.sat_out_after, cal.sat_in_after)
    dealt = {e.hand_number for e in cal.events if e.WhichOneof("event") == "hole_cards_dealt"}
    away = set(range(cal.sat_out_after + 2, cal.sat_in_after + 1))
    assert away and not dealt & away, (sorted(away), sorted(dealt & away))
    assert max(dealt) > cal.sat_in_after  # back in
    rebuys = {p.name: p.rebuys for p in run.players}
    assert sum(rebuys.values()) > 0, rebuys
    print(f"\nre-buys: {rebuys}")


@pytest.mark.slow
def test_reconnection_gets_exactly_the_missed_events_then_live_ones(run: Run) -> None:
    """NK-7.3 the clock ran on while she was away (she timed out); NK-7.4 her seat was kept; NK-7.5 she
    resumed from the server's state: from_seq gave the missed events first, then live ones, and her whole
    sequence equals the public one (the rail's) plus her own private cards, with no gaps or repeats."""
    dora = next(p for p in run.players if p.name == "dora")
    rail = run.observers["nlhe-bots"]
    seqs = _seqs(dora.events)
    assert seqs == sorted(set(seqs)), "repeated or out-of-order events"
    before = [e for e in dora.events if e.seq <= dora.dropped_after_seq]
    after = [e for e in dora.events if e.seq > dora.dropped_after_seq]
    assert before and after and after[0].seq >= dora.resumed_from == dora.dropped_after_seq + 1
    public = {e.seq: e for e in rail.events}
    # What she missed: the public events up to her return, all delivered first (then live ones follow).
    missed = [s for s in public if dora.resumed_from <= s <= dora.rail_seq_at_resume]
    assert missed and [e.seq for e in after if e.seq in public][: len(missed)] == missed
    last = min(seqs[-1], max(public))
    for event in dora.events:
        if event.seq > last:
            break
        if event.seq in public:
            assert event == public[event.seq]
        else:  # the only events the rail does not see: her own hole cards, her hands' revealed seeds
            assert (
                event.WhichOneof("event") == "hole_cards_dealt"
                and event.hole_cards_dealt.seat == dora.dropped_seat
            ) or event.WhichOneof("event") == "shoe_revealed"
    mine = set(seqs)
    missing = [s for s in public if s <= last and s >= seqs[0] and s not in mine]
    assert not missing, f"public events she never got: {missing[:10]}"
    # While she was away the server acted for her (NK-A4) and her seat was kept (NK-7.4).
    timed_out = [e for e in after if e.WhichOneof("event") == "player_acted" and e.player_acted.timed_out]
    assert timed_out and timed_out[0].player_acted.seat == dora.dropped_seat
    assert timed_out[0].hand_number == dora.dropped_in_hand
    assert timed_out[0].player_acted.kind in (pb.ACTION_KIND_CHECK, pb.ACTION_KIND_FOLD)
    # NK-7.3: the clock ran on from her turn through the decision time and what was left of her time bank
    # (3 s + at most 2 s at her table), on the server's clock; the disconnect neither stopped nor reset it.
    turn = before[-1]
    assert turn.WhichOneof("event") == "turn_to_act" and turn.seq == dora.dropped_after_seq
    waited = timed_out[0].time_ms - turn.time_ms
    assert turn.turn_to_act.decision_ms - 100 <= waited <= 5_000 + 2_000, waited
    assert not any(
        e.WhichOneof("event") == "player_left"
        and e.player_left.player_id == "dora"
        and e.player_left.reason != "LEFT"
        for e in after
    )
    # The table saw her go (before her time-out) and come back (after it).
    connection = [
        (e.seq, e.player_connection.connected)
        for e in after
        if e.WhichOneof("event") == "player_connection" and e.player_connection.seat == dora.dropped_seat
    ]
    assert connection and connection[0][1] is False and connection[0][0] < timed_out[0].seq, connection
    assert any(connected and seq > timed_out[0].seq for seq, connected in connection), connection


@pytest.mark.slow
def test_no_viewer_ever_received_a_card_it_must_not_know(run: Run) -> None:
    """MP-1.2, NK-7.6: own hole cards from the deal, the board as dealt, showdown cards once shown; never
    another seat's hole cards, a burn card or an undealt card; observers get no hole cards at all."""
    viewers = [*(p.viewer for p in run.players), *(o.viewer for o in run.observers.values())]
    scan = Scan(run.hands)
    leaks = scan.run(viewers)
    assert not leaks, "\n".join(str(leak) for leak in leaks[:20])
    assert scan.checked["cards"] > 1000 and scan.checked["views"] > 100 and scan.checked["errors"] > 0
    assert scan.checked["histories"] > 50
    assert len(scan.unchecked_hands) <= len(run.tables), scan.unchecked_hands  # at most a last hand each
    for observer in run.observers.values():
        assert not any(e.WhichOneof("event") == "hole_cards_dealt" for e in observer.events)
        # What the rail does not get is exactly one HoleCardsDealt per seat dealt in, and the deal's
        # revelation of the hand before (one ShoeRevealed per player of it, docs/fairness.md section 11),
        # unless that one was revealed between hands: nothing else is private.
        seqs = {e.seq for e in observer.events}
        started = {e.hand_number: e for e in observer.events if e.WhichOneof("event") == "hand_started"}
        for ended in (e for e in observer.events if e.WhichOneof("event") == "hand_ended"):
            start = started.get(ended.hand_number)
            if start is None:
                continue
            hidden = sum(s not in seqs for s in range(start.seq, ended.seq))
            dealt = len(start.hand_started.stacks)
            before = started.get(ended.hand_number - 1)
            revealed = {0, len(before.hand_started.stacks)} if before is not None else {0}
            assert hidden - dealt in revealed, (observer.name, ended.hand_number, hidden)
    print(f"\nleak scan: {scan.checked}, {len(run.hands)} hands")


@pytest.mark.slow
def test_the_table_service_log_carries_no_cards(run: Run) -> None:
    log = run.services.table_log
    assert len(log.read_text().splitlines()) > 1000  # a line per RPC at least: the scan saw the run
    lines = scan_log(log)
    assert not lines, "\n".join(lines[:10])


@pytest.mark.slow
def test_the_table_service_metrics_carry_no_cards(run: Run) -> None:
    with urllib.request.urlopen(run.services.table_metrics, timeout=10) as reply:
        text = reply.read().decode()
    assert 'grpc_method="Act"' in text  # the scan saw the service's metrics
    lines = scan_metrics(text)
    assert not lines, "\n".join(lines[:10])


@pytest.mark.slow
def test_chips_are_conserved_across_every_account(run: Run) -> None:
    services = run.services
    wallet = services.wallet()
    summary = wallet.GetLedgerSummary(wpb.GetLedgerSummaryRequest())
    assert summary.invariants_hold, list(summary.violations)
    assert sum(t.balance for t in summary.totals) == 0  # the issuance account is minus every chip issued
    # Every player's wallet moved by exactly their nets over the hands they played; no hold is left.
    for player in run.players:
        account = services.account(wpb.ACCOUNT_KIND_PLAYER, player.name)
        assert account is not None
        assert account.pending == 0, player.name
        assert account.balance == run.funded[player.name] + player.nets, player.nets_report()
    ops = services.table("ops", auth.Role.OPERATOR)
    # Players only: everyone left, the escrow is empty.
    escrow = services.escrow(run.tables["nlhe-people"])
    assert escrow is not None and escrow.balance == 0 and escrow.pending == 0
    # Bot tables play on: the escrow equals the chips on the table (stacks and chips in the hand).
    for name in ("nlhe-bots", "plo-bots"):
        table_id = run.tables[name]

        def balanced(table_id: str = table_id) -> bool:
            view = ops.GetTableView(pb.GetTableViewRequest(table_id=table_id)).view
            on_table = sum(p.seat.stack + (p.committed if view.hand_in_play else 0) for p in view.players)
            escrow = services.escrow(table_id)
            return escrow is not None and escrow.balance == on_table

        wait_until(balanced, 10, f"{name}: escrow equals the chips on the table")
