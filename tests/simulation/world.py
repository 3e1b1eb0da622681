"""The platform in one process on a virtual clock: the wallet, the dealer and the table service (its poker
room and its casino) as the services' own runtimes over their own stores, wired by `network.Network`.

Each service is a "process": its objects over its files in the data directory. A crash drops the objects
(what they had in memory is gone, what they committed stays) and a restart builds them again from the
files, as the real process does at start: the wallet reopens its ledger, the table service reopens its
logs and recovers every table (resumes the hand or voids it), the dealer starts with no shoes. Nothing
runs on a thread of its own: the simulation ticks the tables itself, and a finished hand's shoe is closed
in turn (`Inline`), so a seed always gives the same run.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Callable
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import Any

from dealing import DeterministicSeedSource, ShoeBook
from poker.dealer.v1 import dealer_service_pb2_grpc as dpb_grpc
from poker.table.v1 import casino_service_pb2_grpc as cpb_grpc
from poker.table.v1 import table_service_pb2_grpc as tpb_grpc
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit.auth import Caller, Role
from servicekit.clients.wallet import WalletCalls

from services.dealer.servicer import DealerServicer
from services.table.casino.casino import Casino
from services.table.casino.money import Wallet
from services.table.casino.servicer import CasinoServicer
from services.table.casino.shoe import Shoes
from services.table.casino.store import CasinoStore
from services.table.casino.table import SeatPolicy
from services.table.casino.tables import parse_tables as parse_casino_tables
from services.table.poker.cards import Dealer
from services.table.poker.money import Escrow
from services.table.poker.room import PokerRoom
from services.table.poker.runtime import Options
from services.table.poker.servicer import TableServicer
from services.table.poker.store import TableStore
from services.table.poker.tables import parse_tables as parse_poker_tables
from services.wallet.servicer import WalletServicer
from services.wallet.storage import LedgerStore, open_store
from tests.simulation.network import Network

EPOCH_MS = 1_800_000_000_000  # the virtual wall clock starts here (2027-01-15)
POKER_TABLES = "sim-nl:NLHE:5/10:200-1000:6:bots=2,sim-plo:PLO:5/10:200-1000:6"
CASINO_TABLES = "sim-thb:TEXAS_HOLDEM_BONUS:3:ANTE=5-50,sim-tcp:THREE_CARD_POKER:2:ANTE=5-50"
TABLE = Caller("table", Role.SERVICE)


class VirtualClock:
    def __init__(self) -> None:
        self.ms = 0

    def advance(self, ms: int) -> None:
        self.ms += ms

    def wall_ms(self) -> int:
        return EPOCH_MS + self.ms

    def seconds(self) -> float:
        return self.ms / 1000


class Inline(Executor):
    """Runs what is submitted at once, on the caller's thread."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:  # as a pool would: the error stays in the future
            future.set_exception(exc)
        return future


def _no_sleep(_seconds: float) -> None:
    """The clients' retry back-off: no wall-clock waiting in a simulation."""


def _without_sleep(client: Any) -> None:
    """A RetryingStub's `Calls` back-off switched off, wherever the client keeps its stub."""
    for path in (("_stub",), ("stub",), ("_dealer", "_stub"), ("_wallet", "stub")):
        target = client
        for name in path:
            target = getattr(target, name, None)
        calls = getattr(target, "_calls", None)
        if calls is not None:
            calls._sleep = _no_sleep


class WalletProcess:
    def __init__(self, root: Path, clock: VirtualClock, network: Network) -> None:
        self.dir = root / "wallet"
        self.dir.mkdir(parents=True, exist_ok=True)
        self._clock = clock
        self._network = network
        self.store: LedgerStore | None = None
        self.start()

    def start(self) -> None:
        store = self.store = open_store("", str(self.dir), clock=self._clock.wall_ms)
        servicer = WalletServicer(store, self._clock.wall_ms)
        self._network.serve("wallet", lambda s: wpb_grpc.add_WalletServiceServicer_to_server(servicer, s))

    def crash(self) -> None:
        self._network.down("wallet")
        if self.store is not None:
            self.store.close()  # committed rows stay in the file; nothing else survives
            self.store = None


class DealerProcess:
    def __init__(self, seed: int, clock: VirtualClock, network: Network) -> None:
        self._seed = seed
        self._clock = clock
        self._network = network
        self.incarnation = 0
        self.start()

    def start(self) -> None:
        self.incarnation += 1
        book = ShoeBook(
            DeterministicSeedSource(self._seed * 1_000 + self.incarnation), clock=self._clock.seconds
        )
        servicer = DealerServicer(book)
        self._network.serve("dealer", lambda s: dpb_grpc.add_DealerServiceServicer_to_server(servicer, s))

    def crash(self) -> None:
        self._network.down("dealer")  # its shoes were in memory only


class TableProcess:
    """The table service: the poker room and the casino over their logs, their servicers, their clients."""

    def __init__(self, root: Path, clock: VirtualClock, network: Network, seed: int = 0) -> None:
        self.dir = root / "table"
        self.dir.mkdir(parents=True, exist_ok=True)
        self._clock = clock
        self._network = network
        # The tables' own client seeds for players who give none: from the run's seed, so that a seed
        # replays its run byte for byte (the service uses the OS CSPRNG).
        self._fills = itertools.count()
        self._fill_seed = seed
        self.room: PokerRoom | None = None
        self.casino: Casino | None = None
        self._stores: list[Any] = []
        self.start()

    def start(self) -> None:
        net, clock = self._network, self._clock
        wallet = net.channel("wallet", TABLE, origin="table")
        dealer = net.channel("dealer", TABLE, origin="table")
        poker_store = TableStore(self.dir / "tables.sqlite3")
        casino_store = CasinoStore(self.dir / "casino.sqlite3", wall_clock_ms=clock.wall_ms)
        self._stores = [poker_store, casino_store]
        escrow = Escrow(WalletCalls(wallet, prefix="poker", sleep=_no_sleep))  # type: ignore[arg-type]
        cards = Dealer(dealer, self._table_seed)  # type: ignore[arg-type]
        _without_sleep(cards._dealer)
        options = Options(bot_pacing=False, hand_pause_ms=1_000, resume_hands=True)
        self.room = PokerRoom(
            parse_poker_tables(POKER_TABLES),
            poker_store,
            escrow,
            cards,
            clock.wall_ms,
            options,
            closer=Inline(),
        )
        chips = Wallet(wallet)  # type: ignore[arg-type]
        _without_sleep(chips)
        shoes = Shoes(dealer, self._table_seed)  # type: ignore[arg-type]
        _without_sleep(shoes)
        self.casino = Casino(
            parse_casino_tables(CASINO_TABLES),
            casino_store,
            chips,
            shoes,
            clock.seconds,
            betting_seconds=5.0,
            decision_seconds=10.0,
            policy=SeatPolicy(max_seats=2, idle_rounds=5, idle_seconds=120.0),
            retry_clock=clock.seconds,
        )
        room, casino = self.room, self.casino

        def add(server: Any) -> None:
            tpb_grpc.add_TableServiceServicer_to_server(TableServicer(room), server)
            cpb_grpc.add_CasinoServiceServicer_to_server(CasinoServicer(casino), server)

        net.serve("table", add)
        net.dead.discard("table")

    def tick(self) -> None:
        assert self.room is not None and self.casino is not None
        self.room.tick()
        self.casino.tick()

    def _table_seed(self) -> str:
        return hashlib.sha256(f"{self._fill_seed}:{next(self._fills)}".encode()).hexdigest()[:32]

    def crash(self) -> None:
        self._network.down("table")
        for store in self._stores:
            store.close()
        self._stores = []
        self.room = self.casino = None


class Platform:
    """The three processes on one network and one clock."""

    def __init__(self, root: Path, seed: int, rng: random.Random, network: Network) -> None:
        self.clock = VirtualClock()
        self.network = network
        self.wallet = WalletProcess(root, self.clock, network)
        self.dealer = DealerProcess(seed, self.clock, network)
        self.table = TableProcess(root, self.clock, network, seed)
        self.processes: dict[str, WalletProcess | DealerProcess | TableProcess] = {
            "wallet": self.wallet,
            "dealer": self.dealer,
            "table": self.table,
        }

    def restart(self, name: str) -> None:
        process = self.processes[name]
        if self.network.up.get(name):
            process.crash()
        process.start()

    def close(self) -> None:
        for name, process in self.processes.items():
            if self.network.up.get(name):
                process.crash()
