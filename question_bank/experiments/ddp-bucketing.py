"""Which gradient buckets does DDP really all-reduce, under which caps, and when?

DDP groups gradients into buckets (25 MiB by default, with a smaller 1 MiB first bucket)
and all-reduces each bucket as soon as all its gradients are ready, to overlap
communication with the rest of backward. The documentation describes the caps; this
experiment watches the buckets that actually reach the comm hook, iteration by iteration,
for a model of about 38 MiB of fp32 parameters with tiny and large tensors, under several
`bucket_cap_mb` values and with `find_unused_parameters` off and on. It shows the layout
DDP starts with, the layout after it rebuilds the buckets from the order in which
gradients became ready in the first backward, and where the small first bucket ends up.
"""

import _harness as h
import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
from torch.nn.parallel import DistributedDataParallel

NAME = "ddp-bucketing"
ASKS = ("For a 38 MiB model, which parameters does DDP put in each all-reduced gradient "
        "bucket for bucket_cap_mb unset, 1, 5 and 25, with find_unused_parameters off and "
        "on, in the first iterations and after the bucket rebuild?")
# (in, out) of each nn.Linear in forward order: about 1.07 MiB of small layers at each end,
# so a 1 MiB bucket closes among them; two 16 MiB weights in the middle, which together
# exceed the 25 MiB cap and each exceed the 1 and 5 MiB caps.
LAYERS = [(64, 256), *[(256, 256)] * 4, (256, 2048), (2048, 2048), (2048, 2048), (2048, 256),
          *[(256, 256)] * 4, (256, 64)]
BUCKET_CAPS_MB = [None, 1, 5, 25]
ITERATIONS = 3
LOGGING_KEYS = ("bucket_sizes", "rebuilt_bucket_sizes", "rebuilt_per_bucket_size_limits",
                "per_bucket_size_limits", "bucket_cap_bytes", "has_rebuilt_buckets")


def build_model() -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(*(nn.Linear(i, o) for i, o in LAYERS))


class BucketLog:
    """Comm-hook state: records each bucket it is given, then does the default all-reduce."""

    def __init__(self, model: nn.Module) -> None:
        self.index_of = {id(p): i for i, p in enumerate(model.parameters())}
        self.calls: list[dict] = []

    def hook(self, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
        buffer = bucket.buffer()
        self.calls.append({
            "bucket_index": bucket.index(),
            "params": [self.index_of[id(p)] for p in bucket.parameters()],
            "bytes": buffer.numel() * buffer.element_size(),
            "is_last": bucket.is_last(),
        })
        return allreduce_hook(None, bucket)


def log_hook(state: BucketLog, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    return state.hook(bucket)


def logging_data(ddp: DistributedDataParallel) -> dict:
    data = ddp._get_ddp_logging_data()
    return {key: data[key] for key in LOGGING_KEYS if key in data}


def run_config(bucket_cap_mb: int | None, find_unused: bool, rank: int) -> dict:
    model = build_model()
    ddp = DistributedDataParallel(model, bucket_cap_mb=bucket_cap_mb,
                                  find_unused_parameters=find_unused)
    log = BucketLog(model)
    ddp.register_comm_hook(log, log_hook)
    result = {
        # The caps DDP resolved from its arguments (the first bucket's is a private field).
        "bucket_bytes_cap": ddp.bucket_bytes_cap,
        "first_bucket_bytes_cap": getattr(getattr(ddp, "_bucket_config", None),
                                          "first_bucket_bytes_cap", None),
        "logging_after_construction": logging_data(ddp),
        "iterations": [],
    }
    generator = torch.Generator().manual_seed(rank)
    for _ in range(ITERATIONS):
        log.calls = []
        model.zero_grad()
        ddp(torch.randn(4, LAYERS[0][0], generator=generator)).pow(2).mean().backward()
        result["iterations"].append(log.calls)
    result["logging_after_training"] = logging_data(ddp)
    return result


def rank_fn(rank: int, world_size: int, config: dict) -> dict:
    return run_config(config["bucket_cap_mb"], config["find_unused_parameters"], rank)


def _ints(logged: str | None) -> list[int] | None:
    """DDP logs bucket sizes as a string such as '4787456, 33570816'."""
    return None if logged is None else [int(x) for x in logged.split(",")]


def main() -> None:
    out = h.cli_out(NAME, __file__)
    model = build_model()
    layout = [{"index": i, "name": name, "shape": list(p.shape),
               "bytes": p.numel() * p.element_size()}
              for i, (name, p) in enumerate(model.named_parameters())]
    runs, summary = [], {"total_param_bytes": sum(p["bytes"] for p in layout), "configs": {}}
    for find_unused in (False, True):
        for cap in BUCKET_CAPS_MB:
            config = {"bucket_cap_mb": cap, "find_unused_parameters": find_unused}
            ranks = h.expect_ok(h.run(rank_fn, 2, config))
            runs.append({"world_size": 2, "config": config, "ranks": ranks})
            iterations = ranks[0]["iterations"]
            logged = ranks[0]["logging_after_training"]
            key = f"cap_{cap or 'unset'}_find_unused_{str(find_unused).lower()}"
            summary["configs"][key] = {
                "bucket_bytes_cap": ranks[0]["bucket_bytes_cap"],
                "first_bucket_bytes_cap": ranks[0]["first_bucket_bytes_cap"],
                "buckets_per_iteration": [[c["params"] for c in it] for it in iterations],
                "bucket_bytes_per_iteration": [[c["bytes"] for c in it] for it in iterations],
                "logged_bucket_sizes": _ints(logged.get("bucket_sizes")),
                "logged_rebuilt_bucket_sizes": _ints(logged.get("rebuilt_bucket_sizes")),
                "same_on_every_rank": all(r["iterations"] == iterations for r in ranks),
            }
    summary["parameters"] = layout
    h.record(NAME, ASKS, __file__, runs, summary, out)


if __name__ == "__main__":
    main()
