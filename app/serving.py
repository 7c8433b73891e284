"""``ringside serve``: uvicorn with the HTTP protocol set up for keep-alive latency."""

from __future__ import annotations

import asyncio
import socket

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class NoDelayHTTPProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with Nagle's algorithm off on every connection.

    asyncio turns ``TCP_NODELAY`` on only for sockets whose ``proto`` is TCP, and the
    listening socket uvicorn binds itself for ``--workers N`` has ``proto`` 0 (uvicorn
    issue #3149). Left on, Nagle holds the body of each keep-alive response (written
    after the headers) until the client's delayed ACK: about 40 ms a request on Linux.
    """

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)
