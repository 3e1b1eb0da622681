"""grpc.aio channels, for a process that holds many server streams open at once (issue 25: a tournament
director watches every table of a 10,000-player field, ~1,100 streams).

A stream read by a thread of the synchronous API costs that thread for its whole life, and grpc wakes every
blocked reader 10 times a second to look for an interrupt: 1,100 idle streams cost the reading process a
third of a core on this machine (`bench/tournament_service/idle_streams.py`), and their wake-ups starve its
other threads of the GIL. On grpc.aio the same streams are tasks of one event loop, woken only by their own
messages.

`AioChannels(tls_files, token)`: one channel per address, with the TLS files' current material (a channel
whose material has changed since is replaced for the next stream; streams running on the old one keep it,
as `servicekit.reloading_channel` does for the synchronous channels), and `metadata()`: the bearer token to
send with each call. Used on its event loop only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc

from servicekit import tls
from servicekit.client import CHANNEL_OPTIONS
from servicekit.config import data_dir


class AioChannels:
    def __init__(
        self,
        token: str | Callable[[], str] | None,
        tls_files: tls.TlsFiles | None = None,
        options: tuple[tuple[str, Any], ...] = (),
    ) -> None:
        self._watched = tls.watch(tls_files if tls_files is not None else tls.trust_files(data_dir()))
        self._token = (lambda: token) if isinstance(token, str) else token
        self._options = [*CHANNEL_OPTIONS, *options]
        self._channels: dict[str, tuple[int, grpc.aio.Channel]] = {}
        self._replaced: list[grpc.aio.Channel] = []

    def get(self, address: str) -> grpc.aio.Channel:
        material = self._watched.current()
        found = self._channels.get(address)
        if found is not None and found[0] == material.version:
            return found[1]
        if found is not None:
            self._replaced.append(found[1])  # its streams run on; closed with the others
        channel = grpc.aio.secure_channel(address, tls.channel_credentials(material), options=self._options)
        self._channels[address] = (material.version, channel)
        return channel

    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self._token()}"),) if self._token is not None else ()

    async def close(self) -> None:
        channels = [c for _, c in self._channels.values()] + self._replaced
        self._channels, self._replaced = {}, []
        for channel in channels:
            await channel.close(None)
