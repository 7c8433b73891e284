"""Counting the bytes a rank process really sends and receives, for the traffic experiments.

gloo writes with writev, which the process's ``wchar`` (/proc/self/io) counts, and reads
with recv(2), which ``rchar`` does not: bytes received come from each socket's TCP_INFO
counters, less the bytes the kernel retransmitted. A ``Meter`` fences every rank on a
store held by the parent process (no gloo traffic involved) around each measured window,
so no byte of a neighbouring operation falls inside or outside it by timing. Shared by
``collective-traffic`` and ``ddp-communication-volume``.
"""

from __future__ import annotations

import datetime
import json
import os
import socket
import struct
import threading

import torch.distributed as dist

# struct tcp_info (linux/tcp.h) byte offsets of the u64 counters read here.
TCPI_BYTES_RECEIVED, TCPI_BYTES_SENT, TCPI_BYTES_RETRANS = 128, 200, 208
STORE_TIMEOUT = datetime.timedelta(seconds=60)


def proc_io() -> tuple[int, int, int]:
    """(rchar, wchar, length of the text read); that read itself adds its length to rchar."""
    fd = os.open("/proc/self/io", os.O_RDONLY)
    try:
        raw = os.read(fd, 4096)
    finally:
        os.close(fd)
    fields = dict(line.split(b": ") for line in raw.splitlines())
    return int(fields[b"rchar"]), int(fields[b"wchar"]), len(raw)


def store_port(store: object) -> int:
    """The port of the TCPStore under the default group's prefix stores."""
    while hasattr(store, "underlying_store"):
        store = store.underlying_store
    return store.port


def tcp_sockets(excluded_ports: set[int]) -> list[socket.socket]:
    """A duplicate of each connected TCP socket of this process, store sockets left out."""
    found: dict[str, socket.socket] = {}
    for name in sorted(os.listdir("/proc/self/fd")):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:  # the listing's own descriptor, closed since
            continue
        if not target.startswith("socket:") or target in found:
            continue
        sock = socket.socket(fileno=os.dup(int(name)))
        try:
            ports = {sock.getsockname()[1], sock.getpeername()[1]}
        except (OSError, IndexError):  # not connected, or not an IP socket
            sock.close()
            continue
        if sock.type != socket.SOCK_STREAM or ports & excluded_ports:
            sock.close()
            continue
        found[target] = sock
    return list(found.values())


def tcp_counters(sock: socket.socket) -> tuple[int, int, int]:
    """(bytes sent, bytes received, bytes retransmitted) on this socket since it opened.

    `tcpi_bytes_sent` counts a retransmitted byte again; on a loaded loopback the kernel
    does retransmit now and then (a tail-loss probe resends the last segment when the ACK
    is late), so the bytes the process sent are sent − retransmitted.
    """
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    return tuple(struct.unpack_from("Q", raw, offset)[0]
                 for offset in (TCPI_BYTES_SENT, TCPI_BYTES_RECEIVED, TCPI_BYTES_RETRANS))


def thread_rchar() -> dict[str, tuple[str, int]]:
    """rchar of every thread of this process but the calling one: {tid: (name, rchar)}."""
    own, found = str(threading.get_native_id()), {}
    for tid in os.listdir("/proc/self/task"):
        if tid == own:
            continue
        try:
            with open(f"/proc/self/task/{tid}/comm") as comm, \
                    open(f"/proc/self/task/{tid}/io") as io:
                found[tid] = (comm.read().strip(), int(io.readline().split()[1]))
        except OSError:  # the thread ended meanwhile
            continue
    return found


class Meter:
    """The rank's counters, and fences on the parent's store around each measured window."""

    def __init__(self, rank: int, world_size: int, port: int, prefix: str) -> None:
        self.rank, self.world_size = rank, world_size
        client = dist.TCPStore("127.0.0.1", port, is_master=False, timeout=STORE_TIMEOUT)
        self.store = dist.PrefixStore(prefix, client)  # one store serves every run
        excluded = {port, store_port(dist.distributed_c10d._get_default_store())}
        self.sockets = tcp_sockets(excluded)
        # A socket is known by its (local, peer) ports; its other end, in the peer's
        # process, has them swapped. A port alone is not enough: two ranks' outgoing
        # connections may get the same ephemeral port.
        ends = [(s.getsockname()[1], s.getpeername()[1]) for s in self.sockets]
        self.store.set(f"ends/{rank}", json.dumps(ends))
        owner = {}
        for other in range(world_size):
            self.store.wait([f"ends/{other}"])
            for local, peer in json.loads(self.store.get(f"ends/{other}")):
                owner[(local, peer)] = other
        self.peers = [owner[(peer, local)] for local, peer in ends]
        self.fences = 0

    def fence(self) -> None:
        """Every rank reaches this point before any goes on (no gloo traffic involved)."""
        self.fences += 1
        self.store.set(f"fence/{self.fences}/{self.rank}", "1")
        self.store.wait([f"fence/{self.fences}/{r}" for r in range(self.world_size)])

    def read(self) -> tuple[int, int, int, list[tuple[int, int, int]]]:
        rchar, wchar, length = proc_io()
        return rchar, wchar, length, [tcp_counters(s) for s in self.sockets]
