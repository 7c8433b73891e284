"""What does DDP do with a parameter that takes no part in the forward pass?

The model owns two linear layers but its forward only uses the first. DDP's reducer waits
for a gradient for every parameter before it all-reduces a bucket, so without
`find_unused_parameters=True` the reduction never finishes, and the question is when and
how that surfaces. Three iterations are run with the flag off and on, recording every
iteration's gradients and the iteration and call (forward or backward) that raises, with
the exact message. A short process-group timeout keeps a stuck collective from hanging.
"""

import _harness as h
import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

NAME = "ddp-unused-parameters"
ASKS = ("With a parameter that is not used in forward, at which iteration and in which "
        "call does DDP fail with find_unused_parameters=False, with what message, and "
        "what are the gradients with find_unused_parameters=True?")
ITERATIONS = 3
TIMEOUT_SECONDS = 10


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.used = nn.Linear(2, 1)
        self.unused = nn.Linear(2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.used(x)


def rank_fn(rank: int, world_size: int, config: dict) -> dict:
    torch.manual_seed(0)
    model = Net()
    ddp = DistributedDataParallel(
        model, find_unused_parameters=config["find_unused_parameters"])
    x = torch.full((1, 2), rank + 1.0)
    iterations: list[dict] = []
    for iteration in range(1, ITERATIONS + 1):
        model.zero_grad(set_to_none=True)
        for call in ("forward", "backward"):
            try:
                if call == "forward":
                    loss = ddp(x).sum()
                else:
                    loss.backward()
            except Exception as exc:
                iterations.append({"iteration": iteration, "call": call, **h.error_data(exc)})
                return {"parameter_names": [n for n, _ in model.named_parameters()],
                        "iterations": iterations}
        iterations.append({"iteration": iteration, "grads": h.grads(model)})
    return {"parameter_names": [n for n, _ in model.named_parameters()],
            "iterations": iterations}


def first_error(ranks: list[dict]) -> dict | None:
    for step in ranks[0]["iterations"]:
        if "error" in step:
            return {"iteration": step["iteration"], "call": step["call"], **step["error"]}
    return None


def main() -> None:
    out = h.cli_out(NAME, __file__)
    runs, summary = [], {}
    for find_unused in (False, True):
        config = {"find_unused_parameters": find_unused, "timeout": TIMEOUT_SECONDS}
        ranks = h.expect_ok(h.run(rank_fn, 2, config))
        runs.append({"world_size": 2, "config": config, "ranks": ranks})
        grads = [[s["grads"] for s in r["iterations"] if "grads" in s] for r in ranks]
        summary[f"find_unused_{str(find_unused).lower()}"] = {
            "error": first_error(ranks),
            "error_messages_per_rank": [s["error"]["message"] for r in ranks
                                        for s in r["iterations"] if "error" in s],
            "grads_per_rank_per_iteration": grads,
            "grads_same_on_every_rank_per_iteration": [
                all(g[i] == grads[0][i] for g in grads) for i in range(len(grads[0]))],
        }
    summary["parameter_names"] = runs[0]["ranks"][0]["parameter_names"]
    h.record(NAME, ASKS, __file__, runs, summary, out)


if __name__ == "__main__":
    main()
