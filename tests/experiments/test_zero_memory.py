"""The `model-memory` calculator against the bytes each rank really held in `zero-memory`.

The recording counts, after one step, the storage of parameters, gradients and optimizer
state on every rank for DDP (ZeRO stage 0), ZeroRedundancyOptimizer (stage 1) and FSDP2
(`reshard_after_forward=True` is stage 3; `False` keeps the gathered parameters from
forward to backward, like stage 2). Where the calculator's Ψ/N holds exactly the bytes must
match; every other gap is pinned here as a documented difference:

- Adam keeps a 4-byte `step` tensor per parameter tensor, which ZeRO's K leaves out;
- default DDP holds the gradients twice (`.grad` plus its flat buckets);
- ZeroRedundancyOptimizer gives whole parameters to ranks, so one large layer unbalances
  the state far beyond Ψ/N;
- FSDP2 pads dim-0 shards, and under bf16 mixed precision it keeps fp32 sharded
  parameters and gradients (4 + 4 + 8 bytes for Adam) where ZeRO counts 2 + 2 + 12: the
  same total, split differently;
- FSDP2's ZeRO-2-like mode holds the full parameters only between forward and backward.
"""

from __future__ import annotations

import json
import math

import pytest

from app.calculator import run
from app.config import ROOT

RECORD = json.loads(
    (ROOT / "question_bank" / "experiments" / "zero-memory.json").read_text(encoding="utf-8"))
SUMMARY = RECORD["summary"]
MODELS = SUMMARY["models"]
WORLD_SIZES = (2, 4)
OPTIMIZERS = ("adam", "sgd", "sgd-momentum")
FP32 = 4


def case(world: int, model: str, implementation: str, optimizer: str,
         precision: str = "fp32") -> dict:
    entry = SUMMARY[f"world_size_{world}"][f"{model}/{implementation}/{optimizer}/{precision}"]
    assert "errors" not in entry, entry
    return entry


def calc(model: str, optimizer: str, zero_stage: int, world: int,
         precision: str = "fp32") -> dict:
    return run("model-memory", params=MODELS[model]["total_params"], precision=precision,
               optimizer=optimizer, zero_stage=zero_stage, dp=world)


def moments(entry: dict) -> list[int]:
    """Optimizer-state bytes per rank without Adam's scalar `step` counters."""
    return [s - c for s, c in zip(entry["state_bytes"], entry["step_counter_bytes"],
                                  strict=True)]


def numels(model: str) -> list[int]:
    return [p["numel"] for p in MODELS[model]["parameters"]]


def test_every_case_ran_on_every_rank():
    for world in WORLD_SIZES:
        cases = SUMMARY[f"world_size_{world}"]
        assert len(cases) == 38
        for key, entry in cases.items():
            assert "errors" not in entry, key
            assert len(entry["param_bytes"]) == world, key
    assert MODELS["even"]["total_params"] == 1050624
    assert MODELS["uneven"]["total_params"] == 891179


@pytest.mark.parametrize("world", WORLD_SIZES)
@pytest.mark.parametrize("model", ["even", "uneven"])
@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_ddp_is_stage_0(world, model, optimizer):
    entry, out = case(world, model, "ddp", optimizer), calc(model, optimizer, 0, world)
    assert entry["param_bytes"] == [out["param_bytes"]] * world
    assert entry["grad_bytes"] == [out["grad_bytes"]] * world
    assert moments(entry) == [out["optimizer_bytes"]] * world


@pytest.mark.parametrize("world", WORLD_SIZES)
@pytest.mark.parametrize("model", ["even", "uneven"])
@pytest.mark.parametrize("implementation", ["ddp", "zero1", "fsdp2-reshard"])
def test_adam_step_counters_are_4_bytes_per_parameter_tensor(world, model, implementation):
    # Documented difference: K = 8 (fp32 Adam) counts the two moments only.
    entry = case(world, model, implementation, "adam")
    tensors = len(numels(model))
    if implementation == "zero1":  # one counter per parameter whose state the rank holds
        owners = entry["state_owner_by_param"]
        assert entry["step_counter_bytes"] == [4 * owners.count(r) for r in range(world)]
    else:
        assert entry["step_counter_bytes"] == [4 * tensors] * world
    for optimizer in ("sgd", "sgd-momentum"):
        assert case(world, model, implementation, optimizer)["step_counter_bytes"] == \
            [0] * world
    assert case(world, model, implementation, "sgd")["state_bytes"] == [0] * world


@pytest.mark.parametrize("world", WORLD_SIZES)
@pytest.mark.parametrize("model", ["even", "uneven"])
def test_default_ddp_holds_the_gradients_twice(world, model):
    # Documented difference: stage 0 counts 4Ψ of gradients; DDP's default also keeps its
    # flat all-reduce buckets, another 4Ψ, unless gradient_as_bucket_view=True.
    grads = calc(model, "adam", 0, world)["grad_bytes"]
    default, view = case(world, model, "ddp", "adam"), case(world, model, "ddp-bucket-view",
                                                           "adam")
    assert default["ddp_bucket_bytes"] == [grads] * world
    assert default["grads_are_bucket_views"] is False
    assert view["grads_are_bucket_views"] is True
    for entry, gradient_copies in ((default, 2), (view, 1)):
        assert entry["total_unique_bytes"] == [
            p + gradient_copies * g + s for p, g, s in
            zip(entry["param_bytes"], entry["grad_bytes"], entry["state_bytes"], strict=True)]


@pytest.mark.parametrize("world", WORLD_SIZES)
@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_zero1_even_model_is_exactly_stage_1(world, optimizer):
    # Four equal layers pack into equal halves and quarters: Ψ/N holds to the byte.
    entry, out = case(world, "even", "zero1", optimizer), calc("even", optimizer, 1, world)
    assert entry["param_bytes"] == [out["param_bytes"]] * world
    assert entry["grad_bytes"] == [out["grad_bytes"]] * world
    assert moments(entry) == [out["optimizer_bytes"]] * world


@pytest.mark.parametrize("world, largest_share", [(2, 1.7649), (4, 3.5298)])
def test_zero1_uneven_model_is_split_by_whole_parameter(world, largest_share):
    # Documented difference: ZeroRedundancyOptimizer gives each parameter to one rank
    # (largest first, to the least loaded rank), so the 786432-element weight alone sets
    # rank 0's state: 1.76× Ψ/N at 2 ranks and 3.53× at 4, while the others hold less.
    entry = case(world, "uneven", "zero1", "adam")
    owners, sizes = entry["state_owner_by_param"], numels("uneven")
    out = calc("uneven", "adam", 1, world)
    bytes_per_param = 8  # fp32 Adam: the two moments
    assert owners[0] == 0 and owners.count(0) == 1  # the large weight, alone on rank 0
    owned = [sum(n for n, owner in zip(sizes, owners, strict=True) if owner == rank)
             for rank in range(world)]
    assert moments(entry) == [bytes_per_param * n for n in owned]
    assert sum(moments(entry)) == calc("uneven", "adam", 0, 1)["optimizer_bytes"]
    assert max(moments(entry)) / out["optimizer_bytes"] == pytest.approx(largest_share,
                                                                        abs=1e-4)
    assert min(moments(entry)) < out["optimizer_bytes"]
    # Parameters and gradients stay replicated, as stage 1 says.
    assert entry["param_bytes"] == [out["param_bytes"]] * world
    assert entry["grad_bytes"] == [out["grad_bytes"]] * world
    # Momentum SGD follows the same owners (plain SGD has no state to place).
    assert case(world, "uneven", "zero1", "sgd-momentum")["state_owner_by_param"] == owners
    assert case(world, "uneven", "zero1", "sgd")["state_owner_by_param"] == [None] * len(owners)


@pytest.mark.parametrize("world", WORLD_SIZES)
@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_fsdp2_reshard_even_model_is_exactly_stage_3(world, optimizer):
    entry, out = case(world, "even", "fsdp2-reshard", optimizer), calc("even", optimizer, 3,
                                                                       world)
    assert entry["param_bytes"] == [out["param_bytes"]] * world
    assert entry["grad_bytes"] == [out["grad_bytes"]] * world
    assert moments(entry) == [out["optimizer_bytes"]] * world


@pytest.mark.parametrize("world, padding", [(2, 22), (4, 141)])
def test_fsdp2_uneven_model_pads_its_dim0_shards(world, padding):
    # Documented difference: every rank stores ceil(dim0 / N) rows of every parameter (the
    # last ranks' shards of the 10- and 3-row layers are partly or wholly padding), so
    # parameters and gradients exceed 4Ψ/N by a few bytes; the optimizer moments are built
    # from the unpadded local shards and add up to exactly 8Ψ over the ranks.
    entry, out = case(world, "uneven", "fsdp2-reshard", "adam"), calc("uneven", "adam", 3,
                                                                      world)
    padded = FP32 * sum(math.ceil(p["shape"][0] / world) * math.prod(p["shape"][1:])
                        for p in MODELS["uneven"]["parameters"])
    assert entry["param_bytes"] == entry["grad_bytes"] == [padded] * world
    assert padded - out["param_bytes"] == pytest.approx(padding)
    assert sum(moments(entry)) == calc("uneven", "adam", 0, 1)["optimizer_bytes"]
    ranks = next(r["ranks"] for r in RECORD["runs"] if r["world_size"] == world)
    unpadded = [r["uneven/fsdp2-reshard/adam/fp32"]["param_view_bytes"] for r in ranks]
    assert moments(entry) == [2 * b for b in unpadded]
    assert unpadded[-1] < padded  # the last rank's shard is the one padded


@pytest.mark.parametrize("world", WORLD_SIZES)
@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_fsdp2_mixed_precision_matches_the_stage_3_total_not_its_split(world, optimizer):
    # Documented difference: with MixedPrecisionPolicy(bf16, reduce fp32) FSDP2 keeps the
    # sharded parameters (its master copy) and gradients in fp32 and gathers bf16 copies
    # only for compute; ZeRO counts 16-bit parameters and gradients and puts the fp32 master
    # in the optimizer state. Per parameter: 4 + 4 + K-4 versus 2 + 2 + K, equal totals.
    entry = case(world, "even", "fsdp2-reshard", optimizer, "bf16-mixed")
    mixed, fp32 = (calc("even", optimizer, 3, world, p) for p in ("mixed", "fp32"))
    totals = [p + g + s for p, g, s in zip(entry["param_bytes"], entry["grad_bytes"],
                                           moments(entry), strict=True)]
    assert totals == [mixed["total_bytes"]] * world
    assert entry["param_bytes"] == [2 * mixed["param_bytes"]] * world
    assert entry["grad_bytes"] == [2 * mixed["grad_bytes"]] * world
    # The fp32 master (4 bytes, twice the 16-bit parameter) leaves ZeRO's optimizer state.
    assert moments(entry) == [mixed["optimizer_bytes"] - 2 * mixed["param_bytes"]] * world
    # ...which is exactly what fp32 stage 3 holds: the policy changes only what is gathered.
    assert entry["param_bytes"] == [fp32["param_bytes"]] * world
    assert moments(entry) == [fp32["optimizer_bytes"]] * world
    assert entry["gathered_dtype"] == "torch.bfloat16"


@pytest.mark.parametrize("world", WORLD_SIZES)
@pytest.mark.parametrize("precision, calc_precision, gathered_bytes_per_param",
                         [("fp32", "fp32", 4), ("bf16-mixed", "mixed", 2)])
def test_fsdp2_without_reshard_holds_stage_2_parameters_only_until_backward(
        world, precision, calc_precision, gathered_bytes_per_param):
    # Documented difference: stage 2 keeps the full parameters for the whole step; FSDP2's
    # ZeRO-2-like mode keeps them gathered from forward to backward (exactly stage 2's
    # parameter bytes, on top of its sharded fp32 copy), then reshards after backward.
    psi = MODELS["even"]["total_params"]
    stage2 = calc("even", "adam", 2, world, calc_precision)
    keep = case(world, "even", "fsdp2-no-reshard", "adam", precision)
    free = case(world, "even", "fsdp2-reshard", "adam", precision)
    assert keep["gathered_bytes_after_forward"] == [stage2["param_bytes"]] * world
    assert stage2["param_bytes"] == gathered_bytes_per_param * psi
    assert keep["layers_after_forward"] == ["UNSHARDED Parameter"] * 4
    assert keep["gathered_bytes_after_backward"] == keep["gathered_bytes_after_step"] == \
        [0] * world
    # After the step both modes hold the same sharded bytes.
    for field in ("param_bytes", "grad_bytes", "state_bytes"):
        assert keep[field] == free[field]
    # reshard_after_forward=True frees each layer after its forward: one layer at a time.
    largest_layer = max(a + b for a, b in zip(numels("even")[::2], numels("even")[1::2],
                                              strict=True))
    assert free["gathered_bytes_after_forward"] == [0] * world
    assert free["layers_after_forward"] == ["SHARDED DTensor"] * 4
    assert free["gathered_peak_bytes_in_forward"] == \
        [gathered_bytes_per_param * largest_layer] * world
    assert keep["gathered_peak_bytes_in_forward"] == [stage2["param_bytes"]] * world
    assert keep["gathered_dtype"] == ("torch.bfloat16" if precision == "bf16-mixed"
                                      else "torch.float32")
