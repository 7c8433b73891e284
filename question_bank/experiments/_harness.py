"""Shared plumbing for the recorded experiments: start ranks, collect results, write JSON.

`run(fn, world_size, config)` starts one fresh process per rank (forked from a
multiprocessing forkserver), each with a gloo process group over loopback, one thread and
fixed seeds, and returns every rank's dict.
An exception inside a rank comes back as data, `{"error": {"type", "message"}}`, so an
experiment can record what PyTorch raised instead of crashing. The message is `str(exc)`
verbatim except for object addresses (`0x7f6c2f547b30` becomes `0x…`), which change from
run to run.

`record(...)` writes `<name>.json` next to the script with the inputs, the outputs and the
versions. Anything that varies from run to run lives under a `timing` key, which the replay
check (`run_all.py --check`) ignores along with `recorded_at`.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import queue
import random
import re
import socket
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

# torch warns at import when NumPy is missing; these experiments do not use NumPy.
_NUMPY_WARNING = "ignore:Failed to initialize NumPy"
warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

BACKEND = "gloo"
SEED = 0
# Seconds a whole run may take before its ranks are killed and reported as hung.
RUN_TIMEOUT = 120
# Seconds gloo waits in a collective before raising; short so a mismatch fails, not hangs.
COLLECTIVE_TIMEOUT = 30

_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{8,}\b")
_timings: list[float] = []


def error_data(exc: BaseException) -> dict[str, Any]:
    """An exception as recordable data: its class name and its message (addresses masked)."""
    message = _ADDRESS.sub("0x…", str(exc))
    return {"error": {"type": type(exc).__name__, "message": message}}


def attempt(call: Callable[[], Any]) -> Any:
    """The result of `call()`, or its exception as `error_data`."""
    try:
        return call()
    except Exception as exc:
        return error_data(exc)


def tensor_data(tensor: torch.Tensor | None) -> Any:
    """A tensor as nested lists (None stays None)."""
    return None if tensor is None else tensor.detach().tolist()


def grads(module: torch.nn.Module) -> list[Any]:
    """Every parameter's gradient, in registration order."""
    return [tensor_data(p.grad) for p in module.parameters()]


def seed_everything(seed: int = SEED) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _context() -> Any:
    # Each rank is a fresh process forked from a server that has already imported torch and
    # torch._dynamo (which DDP imports on construction): ~5 s saved per rank and per run
    # compared with spawn, and still no state shared with the parent.
    flags = os.environ.get("PYTHONWARNINGS", "")
    if _NUMPY_WARNING not in flags:  # the server imports torch before this module
        os.environ["PYTHONWARNINGS"] = ",".join(f for f in (flags, _NUMPY_WARNING) if f)
    context = mp.get_context("forkserver")
    context.set_forkserver_preload(["torch", "torch._dynamo"])
    return context


def _rank_main(fn: Callable, rank: int, world_size: int, config: dict, port: int,
               results: Any) -> None:
    torch.set_num_threads(1)
    seed_everything()
    try:
        dist.init_process_group(
            BACKEND, init_method=f"tcp://127.0.0.1:{port}", rank=rank,
            world_size=world_size,
            timeout=datetime.timedelta(seconds=config.get("timeout", COLLECTIVE_TIMEOUT)))
        result = fn(rank, world_size, config)
    except Exception as exc:
        result = error_data(exc)
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
    results.put((rank, result))


def run(fn: Callable[[int, int, dict], dict], world_size: int,
        config: dict | None = None) -> list[dict]:
    """Run `fn(rank, world_size, config)` on `world_size` fresh processes; every rank's dict.

    `fn` must be a module-level function (it is pickled by name). `config` may set
    `timeout` (seconds gloo waits in a collective) and `run_timeout` (seconds for the run).
    """
    config = dict(config or {})
    context = _context()
    results = context.Queue()
    port = _free_port()
    started = time.monotonic()
    processes = [context.Process(target=_rank_main,
                                 args=(fn, rank, world_size, config, port, results))
                 for rank in range(world_size)]
    for process in processes:
        process.start()
    by_rank: dict[int, dict] = {}
    deadline = started + config.get("run_timeout", RUN_TIMEOUT)
    while len(by_rank) < world_size:
        try:
            rank, result = results.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            break
        by_rank[rank] = result
    for process in processes:
        process.join(timeout=max(0.1, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join()
    _timings.append(round(time.monotonic() - started, 3))
    hung = {"error": {"type": "Hang", "message": "the rank did not finish in time"}}
    return [by_rank.get(rank, hung) for rank in range(world_size)]


def expect_ok(ranks: list[dict]) -> list[dict]:
    """The ranks' results, or a RuntimeError if any rank failed where no failure is studied."""
    failures = {rank: r["error"] for rank, r in enumerate(ranks) if "error" in r}
    if failures:
        raise RuntimeError(f"ranks failed: {failures}")
    return ranks


def cli_out(name: str, script_path: str) -> Path:
    """Where to write the recording: `--out PATH`, or `<name>.json` next to the script."""
    parser = argparse.ArgumentParser(description=f"Run the '{name}' experiment.")
    parser.add_argument("--out", type=Path, help="write the JSON here instead")
    args = parser.parse_args()
    return args.out or Path(script_path).with_name(f"{name}.json")


def record(name: str, asks: str, script_path: str, runs: list[dict], summary: dict,
           out: Path | None = None) -> Path:
    """Write the recording; `runs` is a list of {"world_size", "config", "ranks"}."""
    out = Path(out) if out else Path(script_path).with_name(f"{name}.json")
    data = {
        "name": name,
        "asks": asks,
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
        "backend": BACKEND,
        "world_sizes": sorted({r["world_size"] for r in runs}),
        "script_sha256": hashlib.sha256(Path(script_path).read_bytes()).hexdigest(),
        "recorded_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "runs": runs,
        "summary": summary,
        "timing": {"run_seconds": list(_timings), "cpu_count": os.cpu_count()},
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return out
