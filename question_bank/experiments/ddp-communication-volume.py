"""How many bytes does each rank send and receive in one DDP training iteration?

The textbook answer is a ring all-reduce of the gradients: 2(p−1)/p times the gradient
bytes per rank, half of that with fp16 compression. Here every rank process counts its own
traffic at the operating-system level around one iteration (forward, backward, optimizer
step) of a 4 MiB fp32 model, at 2 and 4 ranks:

- `wchar` of `/proc/self/io`: bytes passed to write-type system calls. gloo's TCP transport
  sends with `writev`, which `wchar` counts, but receives with `recv(2)`, which `rchar` does
  not count: `rchar` only sees files (a module imported lazily, the read of
  `/proc/self/io` itself), so received bytes come from the next counter.
- the kernel's counters of each gloo socket (`getsockopt(TCP_INFO)`): bytes sent (minus
  retransmitted ones) and received, per peer rank.

Variants: the default all-reduce, `fp16_compress_hook`, `bf16_compress_hook` (refused on a
CPU build, so its body is also run under another name), and a model with a BatchNorm layer
whose buffers DDP broadcasts at construction and at every forward, with and without
`broadcast_buffers=False`. The first iteration (one bucket holding every gradient), the
second (DDP rebuilds its buckets first) and the steady iterations are kept apart, as is
the construction. Each bucket size is then all-reduced alone with `dist.all_reduce`, to
see whether the iteration is exactly its buckets' all-reduces, and rank 0 sends 4 bytes
to rank 1 to measure gloo's per-message overhead.

Each window is fenced on a TCPStore served by the parent process (its client uses
send/recv, which `wchar` does not count, and its sockets are left out): after a
`dist.barrier()`, every rank reads its counters, no rank starts until all have read them,
and no rank reads again until all have finished, so no byte of a neighbouring operation
falls inside or outside a window by timing. Nothing prints inside a window (warnings are
captured, bytecode writing is off). The raw counters are kept under `timing`.
"""

import sys
import warnings
from collections.abc import Callable

import _harness as h
import _traffic as traffic
import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel

NAME = "ddp-communication-volume"
ASKS = ("How many bytes does each rank process send and receive, counted by the operating "
        "system, in one DDP iteration of a 4 MiB fp32 model at 2 and 4 ranks, with the "
        "default all-reduce, fp16_compress_hook and bf16_compress_hook, and with a "
        "BatchNorm model's buffers broadcast at every forward or not?")
WORLD_SIZES = (2, 4)
HIDDEN = 1024
FEATURES = 512
BATCH = 8
ITERATIONS = 5  # 1: one bucket, 2: rebuild, 3 to 5: steady
P2P_BYTES = 4  # rank 0 sends one float32 to rank 1: the payload of the overhead calibration
VARIANTS = {
    "allreduce": {"hook": None, "batchnorm": False},
    "fp16_compress_hook": {"hook": "fp16", "batchnorm": False},
    "bf16_compress_hook": {"hook": "bf16", "batchnorm": False},
    "batchnorm_broadcast_buffers": {"hook": None, "batchnorm": True},
    "batchnorm_broadcast_buffers_false": {"hook": None, "batchnorm": True,
                                          "broadcast_buffers": False},
}
COMM_DTYPE = {None: torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
# struct tcp_info (linux/tcp.h) byte offsets of the u64 counters read here.


def build_model(batchnorm: bool) -> nn.Sequential:
    torch.manual_seed(0)
    middle = [nn.BatchNorm1d(HIDDEN)] if batchnorm else []
    return nn.Sequential(nn.Linear(FEATURES, HIDDEN), *middle, nn.ReLU(),
                         nn.Linear(HIDDEN, FEATURES))


def bf16_hook_renamed(state: object,
                      bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """`bf16_compress_hook` itself, under a name DDP's registration check does not refuse."""
    return default_hooks.bf16_compress_hook(state, bucket)


class Meter(traffic.Meter):
    """The shared meter, with this experiment's window (counts per peer, raw counters kept)."""

    def __init__(self, rank: int, world_size: int, port: int, prefix: str) -> None:
        super().__init__(rank, world_size, port, prefix)
        self.raw: list[dict] = []

    def read(self) -> dict:  # type: ignore[override]
        rchar, wchar, length, sockets = super().read()
        return {"rchar": rchar, "wchar": wchar, "io_text": length, "sockets": sockets}

    def window(self, label: str, call: Callable[[], object]) -> tuple[object, dict]:
        """(what `call()` returned, the window's counts); raw counters go to `self.raw`."""
        dist.barrier()
        self.fence()  # the barrier is over on every rank, all its bytes read
        modules = set(sys.modules)
        before = self.read()
        self.fence()  # no rank starts before every rank has read its counters
        result = call()
        self.fence()  # every rank has finished: every byte of the call has arrived
        after = self.read()
        self.fence()  # no rank starts the next barrier before every rank has read
        sent_to, received_from = [0] * self.world_size, [0] * self.world_size
        raw_sent = retransmitted = 0
        for peer, (s0, r0, x0), (s1, r1, x1) in zip(self.peers, before["sockets"],
                                                    after["sockets"], strict=True):
            sent_to[peer] += (s1 - s0) - (x1 - x0)
            received_from[peer] += r1 - r0
            raw_sent += s1 - s0
            retransmitted += x1 - x0
        counts = {"wchar": after["wchar"] - before["wchar"],
                  "sent": sum(sent_to), "received": sum(received_from),
                  "sent_to": sent_to, "received_from": received_from,
                  "modules_imported": sorted(set(sys.modules) - modules)}
        # rchar is raw: it holds the lazily imported modules' bytecode, whose size depends
        # on the installation, and the length of the counters' own text.
        rchar = after["rchar"] - before["rchar"]
        self.raw.append({"window": label, "wchar": counts["wchar"], "rchar": rchar,
                         "io_text": before["io_text"],
                         "rchar_beyond_own_read": rchar - before["io_text"],
                         "tcpi_bytes_sent": raw_sent, "tcpi_bytes_retrans": retransmitted,
                         "tcpi_bytes_received": counts["received"]})
        return result, counts


def bucket_numels(ddp: DistributedDataParallel) -> list[int]:
    """Elements per gradient bucket, in all-reduce order, after DDP's rebuild."""
    logged = ddp._get_ddp_logging_data()
    sizes = logged.get("rebuilt_bucket_sizes") or logged["bucket_sizes"]
    return [int(size) // 4 for size in str(sizes).split(",")]  # logged in fp32 bytes


def rank_fn(rank: int, world_size: int, config: dict) -> dict:
    sys.dont_write_bytecode = True  # a lazily imported module must not write its .pyc
    warnings.simplefilter("ignore")  # nothing may reach stderr inside a window
    meter = Meter(rank, world_size, config["store_port"], config["store_prefix"])
    variant = VARIANTS[config["variant"]]
    model = build_model(variant["batchnorm"])
    kwargs = {k: variant[k] for k in ("broadcast_buffers",) if k in variant}
    out: dict = {"gloo_sockets": len(meter.sockets)}

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ddp, out["construction"] = meter.window(
            "construction", lambda: DistributedDataParallel(model, **kwargs))
    out["construction_warnings"] = sorted({f"{w.category.__name__}: {w.message}"
                                           for w in caught})
    if variant["hook"] == "fp16":
        ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
    elif variant["hook"] == "bf16":
        out["register_bf16_compress_hook"] = h.attempt(
            lambda: ddp.register_comm_hook(None, default_hooks.bf16_compress_hook))
        ddp.register_comm_hook(None, bf16_hook_renamed)

    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.01)
    generator = torch.Generator().manual_seed(rank)
    inputs = [torch.randn(BATCH, FEATURES, generator=generator) for _ in range(ITERATIONS)]

    def step(x: torch.Tensor) -> None:
        optimizer.zero_grad()
        ddp(x).pow(2).mean().backward()
        optimizer.step()

    out["iterations"] = [meter.window(f"iteration {i + 1}", lambda x=x: step(x))[1]
                         for i, x in enumerate(inputs)]

    # The same buckets all-reduced alone, in the dtype the hook sends.
    numels = bucket_numels(ddp)
    out["bucket_numels"] = numels
    dtype = COMM_DTYPE[variant["hook"]]
    out["bucket_allreduces"] = []
    for numel in numels:
        tensor = torch.ones(numel, dtype=dtype)
        out["bucket_allreduces"].append(
            meter.window(f"all_reduce {numel}", lambda t=tensor: dist.all_reduce(t))[1])

    if config["calibrate"]:
        payload = torch.ones(P2P_BYTES // 4)

        def send_recv() -> None:
            if rank == 0:
                dist.send(payload, dst=1)
            elif rank == 1:
                dist.recv(payload, src=0)

        out["idle"] = meter.window("idle", lambda: None)[1]
        out["send_recv"] = meter.window("send_recv", send_recv)[1]
    out["timing"] = meter.raw
    return out


def summarise_variant(ranks: list[dict], raw: list[list[dict]], grad_bytes: int) -> dict:
    """The per-rank counts of one variant at one world size, steady state first."""
    its = [r["iterations"] for r in ranks]
    steady = [it[-1] for it in its]

    def counts(window: Callable[[dict], dict]) -> dict:
        return {key: [window(r)[key] for r in ranks] for key in ("sent", "received")}

    standalone = [sum(w["sent"] for w in r["bucket_allreduces"]) for r in ranks]
    # The same windows on every rank, in the same order.
    windows = [[r["construction"], *r["iterations"], *r["bucket_allreduces"]] for r in ranks]
    return {
        "grad_bytes": grad_bytes,
        "bucket_numels": ranks[0]["bucket_numels"],
        "steady": counts(lambda r: r["iterations"][-1]),
        "steady_sent_per_grad_byte": [round(s["sent"] / grad_bytes, 4) for s in steady],
        "steady_iterations_identical": all(
            w == it[2] for it in its for w in it[2:]),
        "first_iteration": counts(lambda r: r["iterations"][0]),
        "second_iteration_with_rebuild": counts(lambda r: r["iterations"][1]),
        "construction": counts(lambda r: r["construction"]),
        "bucket_allreduces_alone_sent": standalone,
        "steady_minus_bucket_allreduces_alone": [
            s["sent"] - a for s, a in zip(steady, standalone, strict=True)],
        "wchar_equals_socket_bytes_sent": all(w["wchar"] == w["sent"]
                                              for ws in windows for w in ws),
        "bytes_sent_all_received": all(sum(w["sent"] for w in same) ==
                                       sum(w["received"] for w in same)
                                       for same in zip(*windows, strict=True)),
        # rchar beyond the read of /proc/self/io itself: no file is read and the
        # megabytes received through recv(2) are not counted.
        "steady_rchar_beyond_own_read": [
            next(w["rchar_beyond_own_read"] for w in rank_raw
                 if w["window"] == f"iteration {ITERATIONS}") for rank_raw in raw],
        "modules_imported_in_first_iteration": ranks[0]["iterations"][0]["modules_imported"],
        "construction_warnings": ranks[0]["construction_warnings"],
    }


def main() -> None:
    out = h.cli_out(NAME, __file__)
    # The fences' store lives in this process, so no rank's counters see its traffic.
    store = dist.TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False,
                          timeout=traffic.STORE_TIMEOUT)
    param_bytes = {bn: [p.numel() * p.element_size() for p in build_model(bn).parameters()]
                   for bn in (False, True)}
    grad_bytes = {bn: sum(sizes) for bn, sizes in param_bytes.items()}
    bn_buffers = [(name, b.numel() * b.element_size(), str(b.dtype))
                  for name, b in build_model(True).named_buffers()]
    runs, timing = [], {}
    summary: dict = {"grad_bytes": grad_bytes[False], "grad_bytes_batchnorm": grad_bytes[True],
                     "parameter_bytes": param_bytes[False],
                     "parameter_bytes_batchnorm": param_bytes[True],
                     "batchnorm_buffers": [{"name": n, "bytes": b, "dtype": d}
                                           for n, b, d in bn_buffers]}
    for world_size in WORLD_SIZES:
        by_variant, calibration = {}, {}
        for variant, spec in VARIANTS.items():
            config = {"variant": variant, "iterations": ITERATIONS, "batch": BATCH,
                      "calibrate": variant == "allreduce"}
            ranks = h.expect_ok(h.run(rank_fn, world_size, {
                **config, "store_port": store.port,
                "store_prefix": f"{variant}/{world_size}"}))
            raw = [r.pop("timing") for r in ranks]
            timing[f"{variant}/{world_size}"] = {
                "retransmitted_bytes": sum(w["tcpi_bytes_retrans"] for ws in raw for w in ws),
                "windows": raw}
            runs.append({"world_size": world_size, "config": config, "ranks": ranks})
            by_variant[variant] = summarise_variant(ranks, raw, grad_bytes[spec["batchnorm"]])
            if spec["hook"] == "bf16":
                by_variant[variant]["register_bf16_compress_hook"] = (
                    ranks[0]["register_bf16_compress_hook"])
            if config["calibrate"]:
                for window in ("idle", "send_recv"):
                    calibration[window] = {k: [r[window][k] for r in ranks]
                                           for k in ("wchar", "sent", "received")}
                calibration["send_recv"]["payload_bytes"] = P2P_BYTES
        with_buffers = by_variant["batchnorm_broadcast_buffers"]["steady"]["sent"]
        without = by_variant["batchnorm_broadcast_buffers_false"]["steady"]["sent"]
        summary[f"world_size_{world_size}"] = {
            "variants": by_variant,
            "idle_window": calibration["idle"],
            "send_recv_rank_0_to_1": calibration["send_recv"],
            "buffer_broadcast_per_forward_sent": [
                a - b for a, b in zip(with_buffers, without, strict=True)],
        }
    summary["timing"] = timing
    h.record(NAME, ASKS, __file__, runs, summary, out)


if __name__ == "__main__":
    main()
