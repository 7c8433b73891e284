"""How many bytes does each rank really send and receive in gloo's collectives?

Textbook answers quote 2(p−1)/p·S per rank for an all-reduce, but what a backend puts on
the wire depends on its algorithms and its protocol. Here every rank process counts its
own traffic at the operating-system level around one collective (float32 CPU tensors,
2, 4 and 8 ranks, 4 KiB to 16 MiB, sizes as nccl-tests counts them):

- `wchar` of `/proc/self/io`: bytes the process passed to write-type system calls. gloo's
  TCP transport sends with `writev`, so it is counted; it receives with `recv(2)`, which
  `rchar` does not count (rchar stays under 8 bytes in every window, whatever arrived).
- the kernel's counters of each of the process's gloo sockets, one per peer
  (`getsockopt(TCP_INFO)`): bytes received, and bytes sent less retransmitted ones,
  which tells to which rank the bytes went.

The window is fenced by barriers on a separate TCPStore served by the parent process (its
client uses send/recv, not counted, and its sockets are left out): every rank reads its
counters, then no rank starts the collective until all have read them, and no rank reads
again until all have finished it, so no byte of a neighbouring operation (a peer's early
control message, the next barrier) can fall inside or outside the window by timing. An
idle window (the fences, no collective) shows the fences themselves count 0. Each window
is measured twice and must agree to the byte.
The overhead beyond the payload is derived per rank from the three sizes up to 4 MiB:
bytes = fraction·S + overhead. 16 MiB is past the size where gloo cuts a rank's chunk
into more than two 1 MiB segments (S > 2p MiB on 2 and 4 ranks), which changes the
message count, so it is left out of that fit.

What made counts differ from run to run, and what is done about it:
- the kernel retransmits a segment now and then on a loaded loopback (a tail-loss probe
  when an ACK is late) and `tcpi_bytes_sent` counts it again: `tcpi_bytes_retrans` is
  subtracted, after which the socket bytes equal `wchar`;
- torch 2.13 prints a `FutureWarning` at the first call of `all_gather_into_tensor` and
  `reduce_scatter_tensor`, which lands in `wchar`: every op runs once unmeasured first;
- `rchar` now and then gains one byte read by one of gloo's own threads (gloo_tcp_loop,
  whose event loop drains a 1-byte wake-up pipe, or pt_gloo_runloop), not socket data:
  rchar is kept in the raw counters only, with the threads whose rchar moved;
- two ranks' outgoing connections may get the same ephemeral port, so a socket's peer is
  found by its (local, peer) port pair, never by one port.
The raw counters of every window are kept under `timing`.
"""

import warnings
from fractions import Fraction

import _harness as h
import _traffic as traffic
import torch
import torch.distributed as dist

NAME = "collective-traffic"
ASKS = ("How many bytes does each rank process send and receive, counted by the operating "
        "system, in gloo's all_reduce, all_gather_into_tensor, reduce_scatter_tensor, "
        "broadcast, all_to_all_single and reduce at 2, 4 and 8 ranks from 4 KiB to 16 MiB, "
        "and how much of it is beyond the payload?")
WORLD_SIZES = (2, 4, 8)
KIB, MIB = 1024, 1024 * 1024
FIT_SIZES = (4 * KIB, 256 * KIB, 4 * MIB)  # bytes of float32, nccl-tests convention
SIZES = (*FIT_SIZES, 16 * MIB)
OPS = ("all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor", "broadcast",
       "all_to_all_single", "reduce")
FALLBACK = {"all_gather_into_tensor": "all_gather", "reduce_scatter_tensor": "reduce_scatter"}
ROOT = 0  # of broadcast and reduce
CALIBRATION_BYTES = 4096  # rank 0 sends this to rank 1 with dist.send: the known case
REPEATS = 2


class Meter(traffic.Meter):
    """The shared meter, with this experiment's window (counts and one raw line)."""

    def __init__(self, rank: int, world_size: int, port: int, prefix: str) -> None:
        super().__init__(rank, world_size, port, prefix)
        self.rchar: list[int] = []  # every window's, gloo's traffic not counted in it

    def window(self, call: object) -> tuple[dict, str]:
        """(counts, raw counters as one line) of `call()` between fences.

        Every count is deterministic but rchar, which now and then holds a byte read by
        another thread; the raw line names the threads whose rchar moved.
        """
        dist.barrier()
        self.fence()  # the barrier is over on every rank, all its bytes read
        threads_before = traffic.thread_rchar()  # read before the window: not counted in it
        before = self.read()
        self.fence()  # no rank starts before every rank has read its counters
        call()
        self.fence()  # every rank has finished: every byte of the call has arrived
        after = self.read()
        threads_after = traffic.thread_rchar()
        self.fence()  # no rank starts the next barrier before every rank has read
        sent_to, received = [0] * self.world_size, 0
        for peer, (s0, r0, x0), (s1, r1, x1) in zip(self.peers, before[3], after[3],
                                                    strict=True):
            sent_to[peer] += (s1 - s0) - (x1 - x0)
            received += r1 - r0
        counts = {"sent": sum(sent_to), "received": received, "wchar": after[1] - before[1],
                  "rchar": after[0] - before[0] - before[2], "sent_to": sent_to}
        totals = [[sum(column) for column in zip(*read[3], strict=True)]
                  for read in (before, after)]
        moved = {f"{name} {tid}": rchar - threads_before[tid][1]
                 for tid, (name, rchar) in threads_after.items()
                 if tid in threads_before and rchar != threads_before[tid][1]}
        raw = f"rchar {before[0]}→{after[0]} wchar {before[1]}→{after[1]} " + " ".join(
            f"{name} {b}→{a}" for name, b, a in zip(("sent", "received", "retransmitted"),
                                                    *totals, strict=True))
        raw += f" to {sent_to}" + (f" rchar of other threads {moved}" if moved else "")
        return counts, raw


def collective(op: str, rank: int, p: int, size: int, fallback: bool) -> object:
    """A call running `op` on tensors of `size` bytes (nccl-tests convention)."""
    n = size // 4
    if op == "all_reduce":
        t = torch.ones(n)
        return lambda: dist.all_reduce(t)
    if op == "reduce":
        t = torch.ones(n)
        return lambda: dist.reduce(t, dst=ROOT)
    if op == "broadcast":
        t = torch.full((n,), float(rank == ROOT))
        return lambda: dist.broadcast(t, src=ROOT)
    if op == "all_gather_into_tensor":
        out, inp = torch.zeros(n), torch.ones(n // p)
        if fallback:
            outs = list(out.chunk(p))
            return lambda: dist.all_gather(outs, inp)
        return lambda: dist.all_gather_into_tensor(out, inp)
    if op == "reduce_scatter_tensor":
        out, inp = torch.zeros(n // p), torch.ones(n)
        if fallback:
            inps = list(inp.chunk(p))
            return lambda: dist.reduce_scatter(out, inps)
        return lambda: dist.reduce_scatter_tensor(out, inp)
    if op == "all_to_all_single":
        out, inp = torch.zeros(n), torch.ones(n)
        return lambda: dist.all_to_all_single(out, inp)
    raise ValueError(op)


def warm_up(op: str, rank: int, world_size: int) -> dict:
    """Run `op` once unmeasured: the call used (the list form if the tensor form raises,
    with its error) and the warnings it emits."""
    entry: dict[str, object] = {"call": op}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            collective(op, rank, world_size, SIZES[0], False)()
        except Exception as exc:  # unsupported on gloo: record it, use the list form
            if op not in FALLBACK:
                raise
            entry.update(call=FALLBACK[op], error=h.error_data(exc)["error"])
            collective(op, rank, world_size, SIZES[0], True)()
    entry["warnings"] = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    return entry


def measure(meter: Meter, call: object) -> tuple[dict, str]:
    """The counts of `call` measured REPEATS times, whether the repeats agree, and the raw
    counters of every repeat."""
    counts, raw = [], []
    for _ in range(REPEATS):
        c, r = meter.window(call)
        counts.append(c)
        raw.append(r)
    for c in counts:  # rchar is not deterministic (see Meter.window): kept in the raw line
        meter.rchar.append(c.pop("rchar"))
    same = all(c == counts[0] for c in counts)
    return {**counts[0], "same_in_every_repeat": same}, " | ".join(raw)


def rank_fn(rank: int, world_size: int, config: dict) -> dict:
    meter = Meter(rank, world_size, config["store_port"], config["store_prefix"])
    raw: dict[str, str] = {}
    out: dict[str, object] = {"gloo_sockets": len(meter.sockets),
                              "peers": sorted(meter.peers)}
    out["idle"], raw["idle"] = measure(meter, lambda: None)
    payload = torch.ones(CALIBRATION_BYTES // 4)

    def send_recv() -> None:
        if rank == 0:
            dist.send(payload, dst=1)
        elif rank == 1:
            dist.recv(payload, src=0)

    out["send_recv"], raw["send_recv"] = measure(meter, send_recv)
    # One unmeasured call per op first: it records the op's warnings, and a warning
    # printed inside a window would add its bytes to wchar.
    ops: dict[str, dict] = {op: warm_up(op, rank, world_size) for op in OPS}
    warnings.simplefilter("ignore")
    for op, entry in ops.items():
        entry["sizes"] = {}
        for size in SIZES:
            call = collective(op, rank, world_size, size, "error" in entry)
            entry["sizes"][str(size)], raw[f"{op}/{size}"] = measure(meter, call)
    out["ops"] = ops
    # gloo reads with recv(2): rchar misses every received byte (a stray byte or so aside).
    out["rchar_under_8_bytes_in_every_window"] = max(meter.rchar) < 8
    out["timing"] = {"raw_counters": raw}
    return out


def fit(values: list[int]) -> tuple[str, bool]:
    """values = fraction·S + overhead over FIT_SIZES, as text, from the smallest and the
    largest size; and whether the middle size lies on that line to the byte."""
    sizes = FIT_SIZES
    fraction = Fraction(values[-1] - values[0], sizes[-1] - sizes[0])
    overhead = values[0] - fraction * sizes[0]
    exact = all(fraction * s + overhead == v for s, v in zip(sizes, values, strict=True))
    return f"{fraction}·S + {overhead}", exact


def summarise(runs: list[dict]) -> dict:
    """Headline numbers: every rank's bytes as fraction·S + overhead up to 4 MiB, the
    16 MiB counts, and the checks that make the counts trustworthy."""
    linear, fitted, large = True, {}, {}
    for op in OPS:
        fitted[op], large[op] = {}, {}
        for run in runs:
            p, ranks = str(run["world_size"]), run["ranks"]
            fitted[op][p], large[op][p] = {}, {}
            for key in ("sent", "received"):
                lines = [fit([r["ops"][op]["sizes"][str(s)][key] for s in FIT_SIZES])
                         for r in ranks]
                linear = linear and all(exact for _, exact in lines)
                fitted[op][p][key] = [text for text, _ in lines]
                large[op][p][key] = [r["ops"][op]["sizes"][str(SIZES[-1])][key] for r in ranks]
    windows = [[r["ops"][op]["sizes"][str(s)] for r in run["ranks"]]
               for run in runs for op in OPS for s in SIZES]
    first = runs[0]["ranks"]
    return {
        "sizes": list(SIZES),
        "root": ROOT,
        "calls": {op: first[0]["ops"][op]["call"] for op in OPS},
        "errors": {op: first[0]["ops"][op].get("error") for op in OPS},
        "warnings": {op: first[0]["ops"][op]["warnings"] for op in OPS},
        "calibration_send_recv": {
            "payload_bytes": CALIBRATION_BYTES,
            "sender": {k: first[0]["send_recv"][k] for k in ("sent", "wchar")},
            "receiver": {k: first[1]["send_recv"][k] for k in ("sent", "received", "wchar")},
        },
        "idle_window_counts_nothing": all(
            r["idle"][k] == 0 for run in runs for r in run["ranks"]
            for k in ("sent", "received", "wchar")),
        "every_window_same_in_every_repeat": all(
            c["same_in_every_repeat"] for window in windows for c in window),
        "wchar_equals_socket_bytes_sent": all(
            c["wchar"] == c["sent"] for window in windows for c in window),
        "bytes_sent_equal_bytes_received": all(
            sum(c["sent"] for c in window) == sum(c["received"] for c in window)
            for window in windows),
        "rchar_under_8_bytes_in_every_window": all(
            r["rchar_under_8_bytes_in_every_window"] for run in runs for r in run["ranks"]),
        "linear_to_the_byte_up_to_4_MiB": linear,
        "bytes_by_rank_up_to_4_MiB": fitted,
        "bytes_by_rank_at_16_MiB": large,
    }


def main() -> None:
    out = h.cli_out(NAME, __file__)
    # The fences' store lives in this process, so no rank's counters see its traffic.
    store = dist.TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False,
                          timeout=traffic.STORE_TIMEOUT)
    runs = []
    for world_size in WORLD_SIZES:
        config = {"sizes": list(SIZES), "dtype": "float32", "repeats": REPEATS}
        ranks = h.expect_ok(h.run(rank_fn, world_size, {
            **config, "store_port": store.port, "store_prefix": f"run{world_size}"}))
        runs.append({"world_size": world_size, "config": config, "ranks": ranks})
    h.record(NAME, ASKS, __file__, runs, summarise(runs), out)


if __name__ == "__main__":
    main()
