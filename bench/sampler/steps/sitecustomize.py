"""CPU per step of the table service's hands: the thread CPU time (time.thread_time) of each call to the
steps below, summed, patched in 8 s after a process started with `-m services.table` (once it imported
them) and written as JSON {step: [cpu seconds, calls]} every 2 s to H24_CPU_OUT. A step's CPU is its
calling thread's only (a writer waiting for another's group commit costs nothing here; the leader pays
the COMMIT). Divide by the calls of Dealer.deal (one per hand) for figures per hand.

    PYTHONPATH=bench/sampler/steps H24_CPU_OUT=/tmp/steps.json .venv/bin/python bench/table_service/run.py ...
"""

import importlib
import json
import os
import sys
import threading
import time


def _go():
    out = os.environ.get("H24_CPU_OUT")
    if not out or "-m services.table " not in " ".join(getattr(sys, "orig_argv", [])) + " ":
        return
    time.sleep(8)
    acc = {}
    lock = threading.Lock()

    def wrap(mod, cls, name):
        m = importlib.import_module(mod)
        owner = getattr(m, cls) if cls else m
        f = getattr(owner, name)
        key = f"{cls or mod}.{name}"

        def w(*a, **k):
            t = time.thread_time()
            try:
                return f(*a, **k)
            finally:
                d = time.thread_time() - t
                with lock:
                    s = acc.setdefault(key, [0.0, 0])
                    s[0] += d
                    s[1] += 1

        setattr(owner, name, w)

    for mod, cls, name in [
        ("services.table.poker.store", "TableStore", "commit"),
        ("services.table.poker.runtime", "PokerTable", "prepare"),
        ("services.table.poker.runtime", "PokerTable", "execute"),
        ("services.table.poker.runtime", "PokerTable", "_number"),
        ("services.table.poker.runtime", "PokerTable", "_pay_out"),
        ("services.table.poker.cards", "Dealer", "deal"),
        ("services.table.poker.clock", "TableClock", "tick"),
        ("services.table.poker.clock", "TableClock", "_bots_between_hands"),
        ("services.table.poker.money", "Escrow", "buy_in"),
        ("services.table.poker.money", "Escrow", "pay_out"),
        ("services.table.poker.money", "Escrow", "fund_bot"),
        ("services.table.storage.sqlite", "SqliteDatabase", "_commit_group"),
    ]:
        try:
            wrap(mod, cls, name)
        except Exception as e:
            acc[f"ERR {mod}.{name}"] = [0, repr(e)]
    while True:
        time.sleep(2)
        with lock:
            snap = {k: list(v) for k, v in acc.items()}
        with open(out + ".tmp", "w") as fh:
            json.dump(snap, fh)
        os.replace(out + ".tmp", out)


threading.Thread(target=_go, daemon=True).start()
