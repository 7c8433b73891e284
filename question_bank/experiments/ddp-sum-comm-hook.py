"""What changes when a DDP comm hook all-reduces with SUM and does not divide?

DDP's default reduction averages the gradients. A custom comm hook that only calls
`dist.all_reduce` (SUM) on the bucket leaves the world-size division out, so every rank
holds the sum: the gradient, and the SGD step taken from it, grow with the number of ranks.
This is the bug behind "the loss diverged when we went from 8 to 64 GPUs" after someone
wrote their own hook, and it is what the division in `allreduce_hook` is there for.
"""

import copy

import _harness as h
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

NAME = "ddp-sum-comm-hook"
ASKS = ("If a DDP comm hook all-reduces the gradient bucket with SUM and does not divide, "
        "how do the gradients and one SGD step compare with the default hook at world "
        "sizes 2 and 4?")
LR = 0.1
WORLD_SIZES = (2, 4)


def sum_hook(state: object, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    buffer = bucket.buffer()
    dist.all_reduce(buffer, op=dist.ReduceOp.SUM)
    future: torch.futures.Future = torch.futures.Future()
    future.set_result(buffer)
    return future


def train_step(model: nn.Module, x: torch.Tensor, hook: object) -> dict:
    ddp = DistributedDataParallel(model)
    if hook is not None:
        ddp.register_comm_hook(None, hook)
    before = model.weight.detach().clone()
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    ddp(x).sum().backward()
    optimizer.step()
    return {
        "grad": h.tensor_data(model.weight.grad[0]),
        "step": h.tensor_data((model.weight.detach() - before)[0]),
    }


def rank_fn(rank: int, world_size: int, config: dict) -> dict:
    torch.manual_seed(0)
    model = nn.Linear(2, 1, bias=False)
    x = torch.full((1, 2), rank + 1.0)
    return {
        "input": h.tensor_data(x[0]),
        "initial_weight": h.tensor_data(model.weight[0]),
        "default_hook": train_step(copy.deepcopy(model), x, None),
        "sum_hook": train_step(copy.deepcopy(model), x, sum_hook),
    }


def main() -> None:
    out = h.cli_out(NAME, __file__)
    runs, summary = [], {}
    for world_size in WORLD_SIZES:
        ranks = h.expect_ok(h.run(rank_fn, world_size, {"lr": LR}))
        runs.append({"world_size": world_size, "config": {"lr": LR}, "ranks": ranks})
        default, summed = ranks[0]["default_hook"], ranks[0]["sum_hook"]
        summary[f"world_size_{world_size}"] = {
            "default_grad": default["grad"],
            "sum_hook_grad": summed["grad"],
            "grad_ratio": summed["grad"][0] / default["grad"][0],
            "default_step": default["step"],
            "sum_hook_step": summed["step"],
            "step_ratio": round(summed["step"][0] / default["step"][0], 6),
        }
    h.record(NAME, ASKS, __file__, runs, summary, out)


if __name__ == "__main__":
    main()
