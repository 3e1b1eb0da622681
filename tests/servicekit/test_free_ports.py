"""Ports handed to processes that bind them later are outside the kernel's ephemeral range (where any
outbound connection could take them first), never handed out twice, and free when handed out."""

from __future__ import annotations

import socket
from pathlib import Path

from servicekit.testing import free_port, free_ports


def test_ports_are_below_the_ephemeral_range_distinct_and_free() -> None:
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    ports = [free_port() for _ in range(200)] + free_ports(5)
    assert len(set(ports)) == len(ports)
    assert all(20_000 <= p < low for p in ports)
    block = ports[-5:]
    assert block == list(range(block[0], block[0] + 5))
    for port in ports[:20]:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))
