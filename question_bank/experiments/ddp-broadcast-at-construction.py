"""Whose weights and buffers does every rank hold once DDP is constructed?

Each rank builds the model with its own seed, so the initial weights differ, and gives a
registered buffer its own value. DDP broadcasts rank 0's parameters and buffers when it
is constructed, and by default broadcasts buffers again at the start of every forward.
The buffer here adds the input's sum in forward, which differs per rank, so each sync
point is visible. The same is recorded with `broadcast_buffers=False` (deprecated in
torch 2.13, and it also skips the buffer broadcast at construction) and its replacement
`forward_sync_buffers=False` (which still broadcasts them at construction).
"""

import warnings

import _harness as h
import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

NAME = "ddp-broadcast-at-construction"
ASKS = ("When ranks start from different weights and buffers, what does each rank hold "
        "right after DistributedDataParallel(...) and after forwards, by default, with "
        "broadcast_buffers=False and with forward_sync_buffers=False?")
VARIANTS = {
    "default": {},
    "broadcast_buffers_false": {"broadcast_buffers": False},
    "forward_sync_buffers_false": {"forward_sync_buffers": False},
}
FORWARDS = 2


class Net(nn.Module):
    def __init__(self, rank: int) -> None:
        super().__init__()
        self.linear = nn.Linear(2, 1)
        self.register_buffer("seen", torch.tensor([100.0 * (rank + 1)]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.seen += x.sum()
        return self.linear(x)


def state(model: Net) -> dict:
    return {"weight": h.tensor_data(model.linear.weight[0]),
            "bias": h.tensor_data(model.linear.bias),
            "buffer": h.tensor_data(model.seen)}


def run_variant(rank: int, kwargs: dict) -> dict:
    torch.manual_seed(rank + 1)
    model = Net(rank)
    result = {"before_ddp": state(model)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ddp = DistributedDataParallel(model, **kwargs)
    result["after_construction"] = state(model)
    result["construction_warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    x = torch.full((1, 2), rank + 1.0)
    for i in range(FORWARDS):
        ddp(x)
        result[f"after_forward_{i + 1}"] = state(model)
    return result


def rank_fn(rank: int, world_size: int, config: dict) -> dict:
    return run_variant(rank, VARIANTS[config["variant"]])


def main() -> None:
    out = h.cli_out(NAME, __file__)
    runs, summary = [], {}
    for variant, kwargs in VARIANTS.items():
        config = {"variant": variant, "ddp_kwargs": kwargs, "input_sum_per_rank": "2 * (rank + 1)"}
        ranks = h.expect_ok(h.run(rank_fn, 2, config))
        runs.append({"world_size": 2, "config": config, "ranks": ranks})
        summary[variant] = {
            stage: {"weights": [r[stage]["weight"] for r in ranks],
                    "buffers": [r[stage]["buffer"][0] for r in ranks]}
            for stage in ("before_ddp", "after_construction", "after_forward_1",
                          "after_forward_2")
        }
        summary[variant]["warnings"] = ranks[0]["construction_warnings"]
    h.record(NAME, ASKS, __file__, runs, summary, out)


if __name__ == "__main__":
    main()
