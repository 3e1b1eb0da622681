"""`python bench/tls/plain_port.py <service> [felt serve flags]`: `felt serve <service>` with one more
port, plaintext, on FELT_BENCH_PLAINTEXT_PORT, for the TLS benchmark only.

Services serve TLS only and have no switch to turn it off (servicekit.tls; by design). To compare with
plaintext in the same run, this launcher adds an insecure listener to the service's one gRPC server
before it starts: the same process, threads, servicers and interceptor as its TLS ports, so the
transport is all that differs. (No client certificate there: a service token is refused on it, player
and operator tokens work as on the public port.) Never used outside bench/tls.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "libs")]

from felt.cli import main  # noqa: E402
from servicekit import server  # noqa: E402
from servicekit.config import ServerConfig  # noqa: E402

PORT_ENV = "FELT_BENCH_PLAINTEXT_PORT"
_add_ports = server.Service._add_ports


def _with_plaintext(self: server.Service, config: ServerConfig) -> tuple[int, int]:
    ports = _add_ports(self, config)
    address = f"{config.host}:{os.environ[PORT_ENV]}"
    if self.server.add_insecure_port(address) == 0:
        raise RuntimeError(f"cannot listen on {address}")
    return ports


server.Service._add_ports = _with_plaintext  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.exit(main(["serve", *sys.argv[1:]]))
