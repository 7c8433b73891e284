"""How many bytes of parameters, gradients and optimizer state does each rank really hold?

ZeRO's accounting says stage 1 shards the optimizer state, stage 2 the gradients too and
stage 3 the parameters as well, each over N ranks as Ψ/N. PyTorch ships two of these
designs: `ZeroRedundancyOptimizer` (stage 1 next to DDP), which gives whole parameters to
ranks, and FSDP2 `fully_shard`, which shards every parameter on dim 0 and, with
`reshard_after_forward=False`, keeps the gathered parameters from forward to backward
(ZeRO-2-like) instead of freeing them (ZeRO-3-like). After one training step this
experiment counts the tensor storage each rank holds (every storage once; the local shard
of a DTensor) for plain DDP, ZeroRedundancyOptimizer and FSDP2, with Adam, SGD and SGD
with momentum, in fp32 and under FSDP2's bf16 `MixedPrecisionPolicy`, at 2 and 4 ranks,
for an even MLP and for a model with one large and several small, oddly sized layers. It
also watches the gathered (unsharded) parameters during forward and just before backward.
"""

import time
from typing import Any

import _harness as h
import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.distributed.tensor import DTensor
from torch.nn.parallel import DistributedDataParallel

NAME = "zero-memory"
ASKS = ("After one training step, how many bytes of parameters, gradients and optimizer "
        "state does each rank hold under DDP, ZeroRedundancyOptimizer (ZeRO-1) and FSDP2 "
        "fully_shard with reshard_after_forward True (ZeRO-3-like) and False (ZeRO-2-like), "
        "at 2 and 4 ranks, with Adam, SGD and SGD with momentum, in fp32 and bf16 mixed "
        "precision, for an even MLP and a model with uneven layer sizes?")
# (in, out) of each nn.Linear. Even: four equal layers (4 MiB of fp32), every dim 0 divisible
# by 2 and 4 and the tensors packable into equal halves and quarters. Uneven: one large
# layer holding 88% of the parameters, then small ones whose output sizes 10 and 3 do not
# divide by 4 (FSDP2 pads its dim-0 shards; rank 3 gets no row of the 3-row layer).
MODELS = {
    "even": [(512, 512)] * 4,
    "uneven": [(512, 1536), (1536, 64), (64, 64), (64, 10), (10, 3)],
}
OPTIMIZERS: dict[str, tuple[type[torch.optim.Optimizer], dict[str, float]]] = {
    "adam": (torch.optim.Adam, {"lr": 1e-3}),
    "sgd": (torch.optim.SGD, {"lr": 0.1}),
    "sgd-momentum": (torch.optim.SGD, {"lr": 0.1, "momentum": 0.9}),
}
# ddp: DistributedDataParallel defaults; ddp-bucket-view: gradient_as_bucket_view=True;
# zero1: DDP + ZeroRedundancyOptimizer; fsdp2-reshard / fsdp2-no-reshard: fully_shard on
# every Linear and on the root with reshard_after_forward True / False.
IMPLEMENTATIONS = ["ddp", "ddp-bucket-view", "zero1", "fsdp2-reshard", "fsdp2-no-reshard"]
# MixedPrecisionPolicy is an FSDP2 argument; DDP and ZeroRedundancyOptimizer run in fp32.
PRECISIONS = {"fp32": None, "bf16-mixed": (torch.bfloat16, torch.float32)}
BATCH = 8
WORLD_SIZES = [2, 4]


def build_model(layers: list[tuple[int, int]]) -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(*(nn.Linear(i, o) for i, o in layers))


def local(tensor: torch.Tensor) -> torch.Tensor:
    """The part of a tensor this rank holds: a DTensor's local shard, else the tensor."""
    return tensor.to_local() if isinstance(tensor, DTensor) else tensor


def storage_key(tensor: torch.Tensor) -> tuple[int, int]:
    storage = local(tensor).untyped_storage()
    return storage.data_ptr(), storage.nbytes()


def unique_bytes(tensors: list[torch.Tensor]) -> int:
    """Bytes of the distinct storages behind `tensors` (each storage counted once)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for tensor in tensors:
        key = storage_key(tensor)
        if key[1] and key not in seen:
            seen.add(key)
            total += key[1]
    return total


def view_bytes(tensor: torch.Tensor) -> int:
    part = local(tensor)
    return part.numel() * part.element_size()


def layer_params(layer: nn.Module) -> list[Any]:
    """FSDP2's records of one layer's parameters (private API: FSDPParam)."""
    group = getattr(layer._get_fsdp_state(), "_fsdp_param_group", None)
    return [] if group is None else list(group.fsdp_params)


def unsharded_bytes(model: nn.Sequential) -> int:
    """Bytes of gathered parameter storage alive now (FSDP2 frees it by resizing to 0)."""
    total = 0
    for layer in model:
        for param in layer_params(layer):
            unsharded = getattr(param, "_unsharded_param", None)
            if unsharded is not None:
                total += unsharded.untyped_storage().nbytes()
    return total


def layer_states(model: nn.Sequential) -> list[str]:
    """Per layer: FSDP2's sharded state and the type of `weight` the module now exposes."""
    return [f"{layer_params(layer)[0].sharded_state.name} {type(layer.weight).__name__}"
            for layer in model]


class BucketLog:
    """DDP comm-hook state: the flat gradient buffers DDP all-reduces (its own storage)."""

    def __init__(self) -> None:
        self.buffers: list[torch.Tensor] = []

    def hook(self, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
        self.buffers.append(bucket.buffer())
        return allreduce_hook(None, bucket)


def log_hook(state: BucketLog, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    return state.hook(bucket)


def wrap(model: nn.Sequential, implementation: str, precision: str) -> tuple[nn.Module, Any]:
    """The model as the implementation trains it, and the DDP bucket log (None for FSDP2)."""
    if implementation.startswith("fsdp2"):
        dtypes = PRECISIONS[precision]
        policy = MixedPrecisionPolicy(param_dtype=dtypes[0], reduce_dtype=dtypes[1]) \
            if dtypes else MixedPrecisionPolicy()
        reshard = implementation == "fsdp2-reshard"
        for layer in model:
            fully_shard(layer, reshard_after_forward=reshard, mp_policy=policy)
        # The root owns no parameter here; left unset, FSDP2 would never reshard the
        # root's own parameters after forward, whatever the layers do.
        fully_shard(model, reshard_after_forward=reshard, mp_policy=policy)
        return model, None
    ddp = DistributedDataParallel(
        model, gradient_as_bucket_view=implementation == "ddp-bucket-view")
    log = BucketLog()
    ddp.register_comm_hook(log, log_hook)
    return ddp, log


def make_optimizer(model: nn.Module, implementation: str,
                   optimizer: str) -> tuple[torch.optim.Optimizer, torch.optim.Optimizer]:
    """(the optimizer stepped, the one whose `state` holds this rank's tensors)."""
    cls, kwargs = OPTIMIZERS[optimizer]
    if implementation == "zero1":
        zero = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=cls, **kwargs)
        return zero, zero.optim
    opt = cls(model.parameters(), **kwargs)
    return opt, opt


def measure(model: nn.Module, holder: torch.optim.Optimizer, stepped: torch.optim.Optimizer,
            implementation: str, log: BucketLog | None) -> dict:
    params = list(model.parameters())
    grads = [p.grad for p in params if p.grad is not None]
    states = [holder.state.get(p, {}) for p in params]
    state_tensors = [v for s in states for v in s.values() if isinstance(v, torch.Tensor)]
    by_key: dict[str, int] = {}
    for state in states:
        for key, value in state.items():
            if isinstance(value, torch.Tensor):
                by_key[key] = by_key.get(key, 0) + view_bytes(value)
    result: dict[str, Any] = {
        "param_bytes": unique_bytes(params),
        "grad_bytes": unique_bytes(grads),
        "state_bytes": unique_bytes(state_tensors),
        "state_bytes_by_key": dict(sorted(by_key.items())),
    }
    tracked = params + grads + state_tensors
    if log is not None:
        result["ddp_bucket_bytes"] = unique_bytes(log.buffers)
        grad_storages = {storage_key(g) for g in grads}
        result["grads_are_bucket_views"] = all(storage_key(b) in grad_storages
                                              for b in log.buffers)
        tracked = tracked + log.buffers
    result["total_unique_bytes"] = unique_bytes(tracked)
    if implementation == "zero1":
        result["params_with_state"] = [i for i, s in enumerate(states) if s]
        result["state_bytes_per_param"] = [
            sum(view_bytes(v) for v in s.values() if isinstance(v, torch.Tensor))
            for s in states]
        # The wrapper's own `state`; the local optimizer's is the one holding tensors.
        result["wrapper_state_entries"] = len(stepped.state)
    if implementation.startswith("fsdp2"):
        # The tensors' own bytes, without padding or neighbours sharing their storage.
        result["param_view_bytes"] = sum(view_bytes(p) for p in params)
        result["grad_view_bytes"] = sum(view_bytes(g) for g in grads)
        result["dtypes"] = {"param": str(params[0].dtype), "grad": str(grads[0].dtype),
                            "state": ", ".join(sorted({str(v.dtype) for v in state_tensors}))}
        result["local_dim0"] = [local(p).shape[0] for p in params]
        result["param_storage_bytes"] = [storage_key(p)[1] for p in params]
        result["grad_storage_bytes"] = [storage_key(g)[1] for g in grads]
    return result


def run_case(rank: int, layers: list[tuple[int, int]], implementation: str, optimizer: str,
             precision: str) -> dict:
    model = build_model(layers)
    wrapped, log = wrap(model, implementation, precision)
    stepped, holder = make_optimizer(model, implementation, optimizer)
    fsdp = implementation.startswith("fsdp2")
    inside: list[int] = []
    handles = []
    if fsdp:
        # prepend=True: runs inside each layer's forward, before FSDP2's post-forward reshard.
        handles = [layer.register_forward_hook(
            lambda *_: inside.append(unsharded_bytes(model)), prepend=True) for layer in model]
    generator = torch.Generator().manual_seed(rank)
    out = wrapped(torch.randn(BATCH, layers[0][0], generator=generator))
    gathered: dict[str, Any] = {}
    if fsdp:
        gathered = {"dtype": str(layer_params(model[0])[0]._unsharded_param.dtype),
                    "bytes_inside_each_layer_forward": inside,
                    "bytes_after_forward": unsharded_bytes(model),
                    "layers_after_forward": layer_states(model)}
    out.float().pow(2).mean().backward()
    if fsdp:
        gathered["bytes_after_backward"] = unsharded_bytes(model)
        gathered["layers_after_backward"] = sorted(set(layer_states(model)))
    stepped.step()
    for handle in handles:
        handle.remove()
    result = measure(model, holder, stepped, implementation, log)
    if fsdp:
        gathered["bytes_after_step"] = unsharded_bytes(model)
        result["gathered_params"] = gathered
    return result


def cases() -> list[tuple[str, str, str, str]]:
    found = []
    for model in MODELS:
        for implementation in IMPLEMENTATIONS:
            precisions = PRECISIONS if implementation.startswith("fsdp2") else ["fp32"]
            # The bucket view changes where gradients live, not the optimizer: Adam suffices.
            optimizers = ["adam"] if implementation == "ddp-bucket-view" else OPTIMIZERS
            for optimizer in optimizers:
                found.extend((model, implementation, optimizer, p) for p in precisions)
    return found


def case_key(model: str, implementation: str, optimizer: str, precision: str) -> str:
    return f"{model}/{implementation}/{optimizer}/{precision}"


def rank_fn(rank: int, world_size: int, config: dict) -> dict:
    results: dict[str, Any] = {"timing": {}}
    for case in cases():
        started = time.monotonic()
        results[case_key(*case)] = h.attempt(lambda case=case: run_case(rank, MODELS[case[0]],
                                                                          *case[1:]))
        results["timing"][case_key(*case)] = round(time.monotonic() - started, 3)
    return results


def layout(layers: list[tuple[int, int]]) -> dict:
    model = build_model(layers)
    params = [{"index": i, "name": name, "shape": list(p.shape), "numel": p.numel()}
              for i, (name, p) in enumerate(model.named_parameters())]
    return {"layers": [list(layer) for layer in layers], "parameters": params,
            "total_params": sum(p["numel"] for p in params)}


def summarize(ranks: list[dict]) -> dict:
    """Per case, the bytes each rank holds after the step (lists are indexed by rank)."""
    summary: dict[str, Any] = {}
    for case in cases():
        key = case_key(*case)
        per_rank = [r[key] for r in ranks]
        if any("error" in r for r in per_rank):
            summary[key] = {"errors": per_rank}
            continue
        entry = {field: [r[field] for r in per_rank]
                 for field in ("param_bytes", "grad_bytes", "state_bytes")}
        # Adam's per-parameter `step` counters: 4-byte scalar tensors in the state.
        entry["step_counter_bytes"] = [r["state_bytes_by_key"].get("step", 0) for r in per_rank]
        if case[1] == "zero1":
            # Which rank holds each parameter's optimizer state (None: nobody, e.g. plain SGD).
            owners = [None] * len(per_rank[0]["state_bytes_per_param"])
            for rank, r in enumerate(per_rank):
                for index in r["params_with_state"]:
                    owners[index] = rank
            entry["state_owner_by_param"] = owners
        if "ddp_bucket_bytes" in per_rank[0]:
            entry["ddp_bucket_bytes"] = [r["ddp_bucket_bytes"] for r in per_rank]
            entry["grads_are_bucket_views"] = per_rank[0]["grads_are_bucket_views"]
            entry["total_unique_bytes"] = [r["total_unique_bytes"] for r in per_rank]
        if case[1].startswith("fsdp2"):
            entry["gathered_dtype"] = per_rank[0]["gathered_params"]["dtype"]
            entry["gathered_peak_bytes_in_forward"] = [
                max(r["gathered_params"]["bytes_inside_each_layer_forward"]) for r in per_rank]
            entry["layers_after_forward"] = per_rank[0]["gathered_params"]["layers_after_forward"]
            for moment in ("after_forward", "after_backward", "after_step"):
                entry[f"gathered_bytes_{moment}"] = [r["gathered_params"][f"bytes_{moment}"]
                                                     for r in per_rank]
        summary[key] = entry
    return summary


def main() -> None:
    out = h.cli_out(NAME, __file__)
    runs, summary = [], {"models": {name: layout(layers) for name, layers in MODELS.items()}}
    for world_size in WORLD_SIZES:
        ranks = h.expect_ok(h.run(rank_fn, world_size, {}))
        runs.append({"world_size": world_size, "config": {}, "ranks": ranks})
        summary[f"world_size_{world_size}"] = summarize(ranks)
    h.record(NAME, ASKS, __file__, runs, summary, out)


if __name__ == "__main__":
    main()
