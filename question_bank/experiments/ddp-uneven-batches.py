"""With uneven local batches, does DDP give the gradient of the pooled batch?

Rank 0 holds 1 sample and rank 1 holds 3, and each rank averages its loss over its own
batch. DDP then averages the two local means with equal weight, so the lone sample on
rank 0 counts three times as much as each sample on rank 1. The model is linear in its
input (loss = mean of w·x), so each sample's gradient is the sample itself and every
number can be checked by hand. Scaling each rank's loss by
world_size * local_batch / global_batch restores the pooled mean.
"""

import copy

import _harness as h
import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

NAME = "ddp-uneven-batches"
ASKS = ("With 1 sample on rank 0 and 3 on rank 1 and a locally averaged loss, is DDP's "
        "gradient the mean over all 4 samples, and does scaling each loss by "
        "world_size*local_batch/global_batch make it so?")
# Sample i's gradient of w·x with respect to w is x itself.
SAMPLES = [[1.0, 10.0], [2.0, 20.0], [3.0, 30.0], [4.0, 40.0]]
BATCHES = [SAMPLES[:1], SAMPLES[1:]]


def model_grad(model: nn.Module, batch: torch.Tensor, scale: float = 1.0,
               ddp: bool = False) -> list:
    model = copy.deepcopy(model)
    net = DistributedDataParallel(model) if ddp else model
    (net(batch).mean() * scale).backward()
    return h.tensor_data(model.weight.grad[0])


def rank_fn(rank: int, world_size: int, config: dict) -> dict:
    torch.manual_seed(0)
    model = nn.Linear(2, 1, bias=False)
    local = torch.tensor(BATCHES[rank])
    scale = world_size * len(local) / len(SAMPLES)
    return {
        "local_batch": h.tensor_data(local),
        "local_grad": model_grad(model, local),
        "ddp_grad": model_grad(model, local, ddp=True),
        "pooled_grad_one_process": model_grad(model, torch.tensor(SAMPLES)),
        "loss_scale": scale,
        "ddp_grad_scaled_loss": model_grad(model, local, scale=scale, ddp=True),
    }


def main() -> None:
    out = h.cli_out(NAME, __file__)
    ranks = h.expect_ok(h.run(rank_fn, 2))
    summary = {
        "local_batch_sizes": [len(b) for b in BATCHES],
        "local_grads": [r["local_grad"] for r in ranks],
        "ddp_grad": ranks[0]["ddp_grad"],
        "pooled_grad": ranks[0]["pooled_grad_one_process"],
        "loss_scales": [r["loss_scale"] for r in ranks],
        "ddp_grad_scaled_loss": ranks[0]["ddp_grad_scaled_loss"],
    }
    runs = [{"world_size": 2, "config": {"samples": SAMPLES}, "ranks": ranks}]
    h.record(NAME, ASKS, __file__, runs, summary, out)


if __name__ == "__main__":
    main()
