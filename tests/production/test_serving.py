"""``ringside serve`` turns Nagle's algorithm off on every connection, including on the
listening socket uvicorn binds itself for ``--workers N`` (whose ``proto`` is 0, so asyncio
leaves ``TCP_NODELAY`` off: uvicorn issue #3149, ~40 ms per keep-alive request)."""

from __future__ import annotations

import asyncio
import socket
from concurrent.futures import ThreadPoolExecutor

import uvicorn
from uvicorn.server import ServerState

from app.serving import NoDelayHTTPProtocol


async def nodelay_of_accepted_connection(sock: socket.socket, config: uvicorn.Config) -> int:
    loop = asyncio.get_running_loop()
    made: asyncio.Future[int] = loop.create_future()

    class Observed(NoDelayHTTPProtocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            made.set_result(transport.get_extra_info("socket").getsockopt(
                socket.IPPROTO_TCP, socket.TCP_NODELAY))

    state = ServerState()
    server = await loop.create_server(
        lambda: Observed(config=config, server_state=state, app_state={}), sock=sock)
    _reader, writer = await asyncio.open_connection(*sock.getsockname())
    try:
        return await asyncio.wait_for(made, timeout=5)
    finally:
        writer.close()
        server.close()


def test_connections_on_the_multi_worker_socket_get_tcp_nodelay():
    config = uvicorn.Config("app.main:app", host="127.0.0.1", port=0, http=NoDelayHTTPProtocol)
    config.load()
    sock = config.bind_socket()  # the listener uvicorn hands its workers
    # A thread of its own: the browser tests leave an event loop running in this one.
    with ThreadPoolExecutor(max_workers=1) as thread:
        nodelay = thread.submit(asyncio.run, nodelay_of_accepted_connection(sock, config))
        assert nodelay.result(timeout=10) != 0


def test_serve_uses_the_protocol(monkeypatch):
    from app import cli

    seen = {}
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: seen.update(kwargs))
    assert cli.main(["serve", "--workers", "3", "--port", "8765"]) == 0
    assert seen["http"] is NoDelayHTTPProtocol and seen["workers"] == 3
