"""PyTorch DistributedDataParallel: how gradients are synchronised and bucketed."""

from __future__ import annotations

from app.calculator.registry import N_, Output, Param, Quantity, Result, Step, bad, calculator
from app.calculator.units import BYTES
from app.calculator.units import significant as sig

MIB = 1024 * 1024
DEFAULT_BUCKET_CAP_MB = 25  # torch/nn/parallel/distributed.py: "bucket cap is 25 MiB"
DEFAULT_FIRST_BUCKET_BYTES = 1 * MIB  # reducer.hpp kDefaultFirstBucketBytes


def _vector(values: list[float]) -> str:
    return "[" + ", ".join(sig(v) for v in values) + "]"


@calculator(
    name="ddp-sync",
    title="DDP gradient synchronisation",
    area="ddp",
    summary="The gradient every rank holds after DDP's all-reduce: the average of the local "
            "gradients (default), or their sum under a comm hook that does not divide; with "
            "uneven local batches, how that differs from the sample-weighted pooled mean.",
    formula="average: ḡ = (1/W)·Σ g_r; sum hook: Σ g_r = W·ḡ; pooled mean: Σ b_r·g_r / Σ b_r",
    sources=(
        "PyTorch docs, notes/ddp.rst and DistributedDataParallel (gradients are averaged "
        "across ranks)",
        "Li et al., PyTorch Distributed, PVLDB 13(12), 2020",
    ),
    params=(
        Param("local_grads", "vector_list", "One gradient per rank, each a list of numbers "
              "(the rank's local mean gradient).", minimum=-1e100, maximum=1e100),
        Param("local_batch_sizes", "integer_list", "Optional samples per rank, to compare with "
              "the pooled mean over all samples.", default=None, minimum=1, maximum=1e12),
        Param("reduction", "choice", "average: DDP's default; sum: a comm hook that "
              "all-reduces with SUM and does not divide by the world size.",
              default="average", choices=("average", "sum")),
    ),
    outputs=(
        Output("synced_grad", "The gradient every rank holds after synchronisation."),
        Output("world_size", "Ranks W."),
        Output("scale_vs_average", "synced ÷ average: 1, or W for the sum hook (the effective "
               "learning rate is multiplied by it)."),
        Output("pooled_mean_grad", "Σ b_r·g_r / Σ b_r, the gradient of the mean loss over all "
               "samples; present with local_batch_sizes."),
        Output("pooled_loss_scales", "Factor per rank to multiply its local loss by so that "
               "the synchronised gradient equals the pooled mean: W·b_r/Σb (b_r/Σb for sum)."),
    ),
)
def ddp_sync(
    local_grads: list[list[float]],
    local_batch_sizes: list[int] | None = None,
    reduction: str = "average",
) -> Result:
    """All-reduce of local gradients as DDP does it; ``reduction='sum'`` is a non-dividing hook."""
    world = len(local_grads)
    width = len(local_grads[0])
    total = [sum(g[i] for g in local_grads) for i in range(width)]
    synced = total if reduction == "sum" else [t / world for t in total]
    outputs: dict[str, object] = {
        "synced_grad": synced,
        "world_size": world,
        "scale_vs_average": float(world) if reduction == "sum" else 1.0,
    }
    worked = [
        Step(N_("W = %(world)s ranks, local gradients %(grads)s"),
             {"world": world, "grads": ", ".join(_vector(g) for g in local_grads)}),
        Step(N_("sum hook: Σ g_r = %(synced)s") if reduction == "sum"
             else N_("average: (1/W)·Σ g_r = %(synced)s"), {"synced": _vector(synced)}),
    ]
    if local_batch_sizes is not None:
        if len(local_batch_sizes) != world:
            raise bad("local_batch_sizes", f"has {len(local_batch_sizes)} entries for "
                      f"{world} ranks")
        samples = sum(local_batch_sizes)
        pooled = [sum(b * g[i] for b, g in zip(local_batch_sizes, local_grads, strict=True))
                  / samples for i in range(width)]
        per_rank = world if reduction == "average" else 1
        outputs["pooled_mean_grad"] = pooled
        outputs["pooled_loss_scales"] = [per_rank * b / samples for b in local_batch_sizes]
        worked.append(Step(N_("pooled mean over %(samples)s samples: Σ b_r·g_r / Σ b_r = "
                              "%(pooled)s"), {"samples": samples, "pooled": _vector(pooled)}))
    return Result(outputs, worked)


def assign_buckets(sizes: list[float], order: list[int], limits: list[float]) -> list[list[int]]:
    """Greedy bucketing as ``compute_bucket_assignment_by_size`` in PyTorch's reducer.cpp.

    Parameters are taken in ``order``; a bucket closes as soon as its size reaches the
    current limit (the parameter that crosses it stays in), and each closed bucket
    advances to the next limit, the last one repeating.
    """
    buckets: list[list[int]] = []
    current: list[int] = []
    size = 0.0
    limit = 0
    for index in order:
        current.append(index)
        size += sizes[index]
        if size >= limits[limit]:
            buckets.append(current)
            current, size = [], 0.0
            limit = min(limit + 1, len(limits) - 1)
    if current:
        buckets.append(current)
    return buckets


@calculator(
    name="ddp-buckets",
    title="DDP gradient buckets",
    area="ddp",
    summary="The buckets PyTorch DDP all-reduces in steady state (from the second iteration "
            "on) for parameters of given sizes, and the order they are reduced in.",
    formula="gradient-ready order (reverse of registration); a bucket closes once it reaches "
            "its cap: 1 MiB for the first, then bucket_cap_mb MiB (25 by default)",
    sources=(
        "pytorch/pytorch torch/nn/parallel/distributed.py (_BucketCapacityConfig, "
        "_ddp_init_helper) and torch/csrc/distributed/c10d/reducer.cpp "
        "(compute_bucket_assignment_by_size, rebuild_buckets), torch 2.13",
        "Li et al., PyTorch Distributed, PVLDB 13(12), 2020 §3.2.3",
    ),
    params=(
        Param("param_bytes", "number_list", "Gradient bytes of each parameter, in "
              "registration order (model.parameters()).", unit=BYTES, minimum=0,
              exclusive_minimum=True, maximum=1e15),
        Param("bucket_cap_mb", "number", "DDP's bucket_cap_mb, in MiB as PyTorch computes it "
              "(× 1024 × 1024). Unset: 25 MiB with a 1 MiB first bucket; set: every bucket "
              "uses this cap.", default=None, minimum=0, maximum=1e9),
        Param("find_unused_parameters", "boolean", "With it DDP never rebuilds its buckets: "
              "they stay as built at construction, in registration order, reduced in reverse.",
              default=False),
    ),
    outputs=(
        Output("num_buckets", "Buckets, i.e. all-reduce calls per backward."),
        Output("buckets", "Parameter indices of each bucket, in reduction order."),
        Output("bucket_bytes", "Bytes of each bucket, in reduction order.", "B"),
        Output("first_bucket_cap_bytes", "Cap of the first bucket built.", "B"),
        Output("bucket_cap_bytes", "Cap of the other buckets.", "B"),
    ),
)
def ddp_buckets(
    param_bytes: list[float],
    bucket_cap_mb: float | None = None,
    find_unused_parameters: bool = False,
) -> Result:
    """Steady-state DDP buckets.

    Without ``find_unused_parameters`` DDP starts with one bucket, records the order in
    which gradients become ready during the first backward, and rebuilds its buckets in
    that order (here: reverse registration order). With it, the construction-time buckets
    (built over registration order, then reversed) are kept for good.
    """
    cap = int((DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb) * MIB)
    first = DEFAULT_FIRST_BUCKET_BYTES if bucket_cap_mb is None else cap
    limits = [first, cap] if first < cap else [cap]
    count = len(param_bytes)
    if find_unused_parameters:
        buckets = list(reversed(assign_buckets(param_bytes, list(range(count)), limits)))
        how = N_("buckets built in registration order at construction, reduced in reverse, "
                 "never rebuilt")
    else:
        buckets = assign_buckets(param_bytes, list(reversed(range(count))), limits)
        how = N_("buckets rebuilt after the first iteration in gradient-ready order (reverse "
                 "registration)")
    sizes = [sum(param_bytes[i] for i in bucket) for bucket in buckets]
    worked = [
        Step(N_("%(count)s parameters, %(bytes)s of gradients; caps: first %(first)s, then "
                "%(cap)s"), {"count": count, "bytes": Quantity(sum(param_bytes), "B"),
                             "first": Quantity(first, "B"), "cap": Quantity(cap, "B")}),
        Step(how),
    ] + [Step(N_("bucket %(index)s: parameters %(members)s = %(bytes)s"),
              {"index": str(k), "members": str(bucket), "bytes": Quantity(size, "B")})
         for k, (bucket, size) in enumerate(zip(buckets, sizes, strict=True))]
    return Result({"num_buckets": len(buckets), "buckets": buckets, "bucket_bytes": sizes,
                   "first_bucket_cap_bytes": first, "bucket_cap_bytes": cap}, worked)
