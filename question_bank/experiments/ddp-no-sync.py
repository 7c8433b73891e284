"""Does `no_sync()` skip the all-reduce during gradient accumulation without changing the result?

Accumulating gradients over 4 micro-batches, DDP normally all-reduces after every
backward. Inside `with model.no_sync():` it only accumulates locally, and the
all-reduce of the next backward outside the context carries the accumulated sum. A comm
hook counts the all-reduce calls per micro-step, and the final gradients are compared
with those of the same accumulation synchronised at every micro-step: averaging is linear,
so both should agree (up to float rounding, since the additions happen in another order),
with 1 all-reduce instead of 4.
"""

import contextlib
import copy

import _harness as h
import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
from torch.nn.parallel import DistributedDataParallel

NAME = "ddp-no-sync"
ASKS = ("Accumulating over 4 micro-batches with no_sync() for the first 3, how many "
        "all-reduces run per micro-step, and are the final gradients those of syncing "
        "every micro-step?")
MICRO_BATCHES = 4


class CallCounter:
    def __init__(self) -> None:
        self.calls = 0


def counting_hook(state: CallCounter,
                  bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    state.calls += 1
    return allreduce_hook(None, bucket)


def accumulate(model: nn.Module, batches: list[torch.Tensor], use_no_sync: bool) -> dict:
    model = copy.deepcopy(model)
    ddp = DistributedDataParallel(model)
    counter = CallCounter()
    ddp.register_comm_hook(counter, counting_hook)
    calls_per_step = []
    for step, batch in enumerate(batches):
        last = step == len(batches) - 1
        context = ddp.no_sync() if use_no_sync and not last else contextlib.nullcontext()
        before = counter.calls
        with context:
            ddp(batch).pow(2).mean().backward()
        calls_per_step.append(counter.calls - before)
    return {"allreduce_calls_per_micro_step": calls_per_step, "grads": h.grads(model)}


def rank_fn(rank: int, world_size: int, config: dict) -> dict:
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    generator = torch.Generator().manual_seed(rank)
    batches = [torch.randn(3, 4, generator=generator) for _ in range(MICRO_BATCHES)]
    with_no_sync = accumulate(model, batches, use_no_sync=True)
    every_step = accumulate(model, batches, use_no_sync=False)
    pairs = list(zip(with_no_sync["grads"], every_step["grads"], strict=True))
    return {
        "no_sync": with_no_sync,
        "sync_every_step": every_step,
        "grads_exactly_equal": all(a == b for a, b in pairs),
        "grads_allclose": all(torch.allclose(torch.tensor(a), torch.tensor(b)) for a, b in pairs),
        "max_abs_difference": max(
            (torch.tensor(a) - torch.tensor(b)).abs().max().item() for a, b in pairs),
    }


def main() -> None:
    out = h.cli_out(NAME, __file__)
    ranks = h.expect_ok(h.run(rank_fn, 2))
    summary = {
        "allreduce_calls_with_no_sync": ranks[0]["no_sync"]["allreduce_calls_per_micro_step"],
        "allreduce_calls_without": ranks[0]["sync_every_step"]["allreduce_calls_per_micro_step"],
        "grads_exactly_equal": all(r["grads_exactly_equal"] for r in ranks),
        "grads_allclose": all(r["grads_allclose"] for r in ranks),
        "max_abs_difference": max(r["max_abs_difference"] for r in ranks),
        "same_grads_on_every_rank": all(r["no_sync"]["grads"] == ranks[0]["no_sync"]["grads"]
                                        for r in ranks),
    }
    runs = [{"world_size": 2, "config": {"micro_batches": MICRO_BATCHES}, "ranks": ranks}]
    h.record(NAME, ASKS, __file__, runs, summary, out)


if __name__ == "__main__":
    main()
