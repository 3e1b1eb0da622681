"""A sampling profiler for a service started by a benchmark, where py-spy cannot read the process (on this
machine `py-spy dump` fails with "Failed to find python version from target process").

Put this directory first on PYTHONPATH and name the output in H24_SAMPLE_OUT (`%p` in it: the process id, for
several processes of one module, such as tournament replicas); a process started with
`-m services.table` (or the module named in H24_SAMPLE_MODULE) then samples itself every 5 ms: the stack
of each thread weighted by the CPU time it used since the previous sample (/proc/self/task/*/schedstat),
collapsed (`a;b;c MICROSECONDS`), rewritten to the file every 2 s: where the CPU goes, the sampler's own
included. It costs the service CPU (about 4 ms per hand in bench/table_service): read its shares, not the
CPU figures of the same run.

    PYTHONPATH=bench/sampler H24_SAMPLE_OUT=/tmp/table.collapsed .venv/bin/python bench/table_service/run.py ...
"""

import collections
import os
import sys
import threading
import time

ROOT = os.getcwd() + "/"


def _run() -> None:
    out = os.environ.get("H24_SAMPLE_OUT", "").replace("%p", str(os.getpid()))
    module = os.environ.get("H24_SAMPLE_MODULE", "services.table")
    if not out or f"-m {module} " not in " ".join(getattr(sys, "orig_argv", [])) + " ":
        return
    counts: collections.Counter[str] = collections.Counter()  # stack -> microseconds on a core
    ran: dict[str, int] = {}  # thread id -> its CPU nanoseconds at the last sample
    last = time.monotonic()
    while True:
        time.sleep(0.005)
        by_native = {t.native_id: t.ident for t in threading.enumerate()}
        spent: dict[str, int] = {}
        for tid in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{tid}/schedstat") as f:
                    now_ns = int(f.read().split()[0])
            except OSError:
                continue
            spent[tid] = now_ns - ran.get(tid, now_ns)
            ran[tid] = now_ns
        frames = sys._current_frames()
        for tid, ns in spent.items():
            if ns <= 0:
                continue
            ident = by_native.get(int(tid))
            f = frames.get(ident) if ident is not None else None
            stack = []
            while f is not None:
                c = f.f_code
                stack.append(f"{c.co_name} ({c.co_filename.removeprefix(ROOT)}:{c.co_firstlineno})")
                f = f.f_back
            counts[";".join(reversed(stack)) or "(a thread without Python frames: grpc core, sqlite)"] += (
                ns // 1000
            )
        if time.monotonic() - last > 2:
            last = time.monotonic()
            with open(out + ".tmp", "w") as fh:
                for k, v in counts.items():
                    fh.write(f"{k} {v}\n")
            os.replace(out + ".tmp", out)


threading.Thread(target=_run, daemon=True, name="h24-sampler").start()
