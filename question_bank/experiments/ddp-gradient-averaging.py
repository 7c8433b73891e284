"""Does DDP average the gradients across ranks, or sum them?

Two ranks hold the same `nn.Linear(2, 1, bias=False)` and feed different inputs, so their
local gradients differ. After `backward()` under DDP every rank holds the same gradient;
comparing it with the local gradients and with a plain all-reduce SUM shows that DDP's
default reduction is the mean, which is why the learning rate does not have to be scaled
by the world size to keep the same step for the same global batch.
"""

import copy

import _harness as h
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

NAME = "ddp-gradient-averaging"
ASKS = ("With two ranks whose local gradients differ, what gradient does every rank hold "
        "after DDP's backward: the sum or the mean of the local gradients?")


def rank_fn(rank: int, world_size: int, config: dict) -> dict:
    torch.manual_seed(0)
    model = nn.Linear(2, 1, bias=False)
    plain = copy.deepcopy(model)
    x = torch.full((1, 2), rank + 1.0)

    plain(x).sum().backward()
    local_grad = plain.weight.grad.clone()

    ddp = DistributedDataParallel(model)
    ddp(x).sum().backward()

    summed = local_grad.clone()
    dist.all_reduce(summed, op=dist.ReduceOp.SUM)
    return {
        "input": h.tensor_data(x),
        "weight": h.tensor_data(model.weight),
        "local_grad": h.tensor_data(local_grad),
        "ddp_grad": h.tensor_data(model.weight.grad),
        "allreduce_sum": h.tensor_data(summed),
    }


def main() -> None:
    out = h.cli_out(NAME, __file__)
    ranks = h.expect_ok(h.run(rank_fn, 2))
    summary = {
        "local_grads": [r["local_grad"][0] for r in ranks],
        "ddp_grad": ranks[0]["ddp_grad"][0],
        "ddp_grad_same_on_every_rank": all(r["ddp_grad"] == ranks[0]["ddp_grad"] for r in ranks),
        "allreduce_sum": ranks[0]["allreduce_sum"][0],
    }
    runs = [{"world_size": 2, "config": {}, "ranks": ranks}]
    h.record(NAME, ASKS, __file__, runs, summary, out)


if __name__ == "__main__":
    main()
