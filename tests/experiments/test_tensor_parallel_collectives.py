"""The collectives torch's tensor parallelism really issued, against the tp-comm calculator.

`tp-comm` models Megatron: per layer, 2 all-reduces in forward and 2 in backward of a
b·s·h buffer, or with sequence parallelism an all-gather plus a reduce-scatter in place of
each. The recording (`tensor-parallel-collectives.json`, CommDebugMode over gloo) agrees
for layers laid out as Megatron lays them out. The documented differences are tested as
such: q/k/v that each convert their own input, a block input that needs no gradient, and
the LayerNorm gradients sequence parallelism leaves partial.
"""

from __future__ import annotations

import json

import pytest

from app.calculator import run
from app.config import ROOT

RECORD = json.loads((ROOT / "question_bank" / "experiments"
                     / "tensor-parallel-collectives.json").read_text(encoding="utf-8"))
SUMMARY = RECORD["summary"]
CONFIG = RECORD["runs"][0]["config"]
RUNS = {r["world_size"]: r for r in RECORD["runs"]}
WORLDS = [2, 4]
BYTES_PER_ELEMENT = 4  # float32
AR = "c10d_functional.all_reduce"
AG = "c10d_functional.all_gather_into_tensor"
RS = "c10d_functional.reduce_scatter_tensor"


def case(world: int, key: str) -> dict:
    return SUMMARY[f"world_size_{world}"][key]


def fwd_plus_bwd(entry: dict) -> dict[str, int]:
    total: dict[str, int] = {}
    for phase in ("forward", "backward"):
        for op, n in entry[phase].items():
            total[op] = total.get(op, 0) + n
    return total


def calculator(world: int, sp: bool) -> dict:
    return run("tp-comm", micro_batch=CONFIG["batch"], seq_len=CONFIG["seq"],
               hidden=CONFIG["hidden"], tp=world, bytes_per_element=BYTES_PER_ELEMENT,
               sequence_parallel=sp)


def expected_counts(out: dict) -> dict[str, int]:
    """The calculator's per-layer counts, keyed like CommDebugMode's, zeros left out."""
    counts = {AR: out["allreduces_per_layer"], AG: out["allgathers_per_layer"],
              RS: out["reduce_scatters_per_layer"]}
    return {op: n for op, n in counts.items() if n}


def halved(counts: dict[str, int]) -> dict[str, int]:
    return {op: n // 2 for op, n in counts.items()}


def ring_bytes(world: int, calls: list[dict]) -> float:
    """What a ring sends per rank for these recorded collectives: 2(t−1)/t of an all-reduce
    buffer, (t−1)/t of an all-gather's output and of a reduce-scatter's input."""
    share = (world - 1) / world
    sent = 0.0
    for c in calls:
        full = max(c["in_bytes"], c["out_bytes"])
        sent += (2 if c["op"] == "all_reduce" else 1) * share * full
    return sent


def test_every_case_ran_correctly_and_alike_on_every_rank():
    for world in WORLDS:
        for key, entry in SUMMARY[f"world_size_{world}"].items():
            assert "error" not in entry, key
            assert entry["correct_on_every_rank"], key
            assert entry["same_on_every_rank"], key


class TestAgreesWithMegatron:
    """Layers whose q/k/v share one input conversion (PrepareModuleInput) or a fused qkv
    projection: the layout the calculator's Megatron formula assumes."""

    @pytest.mark.parametrize("world", WORLDS)
    @pytest.mark.parametrize("sp", [False, True])
    @pytest.mark.parametrize("suffix", ["", "/input_no_grad"])
    def test_layer_counts_per_layer(self, world, sp, suffix):
        entry = case(world, f"layer_shared_input/{'sp' if sp else 'tp'}{suffix}")
        expected = expected_counts(calculator(world, sp))
        assert fwd_plus_bwd(entry) == expected
        # Half in forward, half in backward: 2 all-reduces each way, or 2 + 2 with sp.
        assert entry["forward"] == entry["backward"] == halved(expected)

    @pytest.mark.parametrize("world", WORLDS)
    @pytest.mark.parametrize("sp", [False, True])
    def test_fused_qkv_attention_plus_mlp_make_one_layer(self, world, sp):
        mode = "sp" if sp else "tp"
        total = fwd_plus_bwd(case(world, f"attention_fused_qkv/{mode}"))
        for op, n in fwd_plus_bwd(case(world, f"mlp/{mode}")).items():
            total[op] = total.get(op, 0) + n
        assert total == expected_counts(calculator(world, sp))

    @pytest.mark.parametrize("world", WORLDS)
    @pytest.mark.parametrize("sp", [False, True])
    def test_every_collective_moves_one_bsh_buffer(self, world, sp):
        out = calculator(world, sp)
        for key, entry in SUMMARY[f"world_size_{world}"].items():
            if key.split("/")[1] == ("sp" if sp else "tp"):
                assert entry["full_buffer_bytes"] == [out["bytes_per_allreduce"]], key
                # Sequence parallelism keeps 1/t of it per rank, on either side.
                shard = out["bytes_per_allreduce"] / world if sp else out["bytes_per_allreduce"]
                assert entry["shard_bytes"] == [shard], key

    @pytest.mark.parametrize("world", WORLDS)
    @pytest.mark.parametrize("sp", [False, True])
    def test_ring_traffic_of_the_recorded_collectives(self, world, sp):
        # CommDebugMode sees buffers, not gloo's algorithm: the ring cost is applied to the
        # recorded sizes here, then compared with the calculator's per-layer traffic.
        ranks = RUNS[world]["ranks"][0]
        recorded = ranks[f"layer_shared_input/{'sp' if sp else 'tp'}"]
        calls = recorded["forward_calls"] + recorded["backward_calls"]
        assert ring_bytes(world, calls) == pytest.approx(
            calculator(world, sp)["bytes_sent_per_rank_per_layer"])


class TestDocumentedDifferences:
    """Where torch's DTensor issues something else than the Megatron count, and why."""

    @pytest.mark.parametrize("world", WORLDS)
    def test_q_k_v_each_converting_their_input_add_two_collectives_per_layer(self, world):
        # ColwiseParallel on q, k and v makes three DTensors of one input: without sp their
        # three Partial input gradients are all-reduced separately in backward (Megatron
        # all-reduces once, behind the fused qkv's f operator); with sp each also
        # all-gathers the input in forward and reduce-scatters its gradient in backward.
        tp, sp = calculator(world, False), calculator(world, True)
        plain = case(world, "layer/tp")
        assert fwd_plus_bwd(plain) == {AR: tp["allreduces_per_layer"] + 2}
        assert plain["forward"] == {AR: 2} and plain["backward"] == {AR: 4}
        seq = case(world, "layer/sp")
        assert fwd_plus_bwd(seq) == {AG: sp["allgathers_per_layer"] + 2,
                                     RS: sp["reduce_scatters_per_layer"] + 2}
        assert seq["forward"] == {AG: 4, RS: 2} and seq["backward"] == {AG: 2, RS: 4}
        # The same three all-gathers, one per projection, in the forward calls.
        modules = [c.get("module") for c in RUNS[world]["ranks"][0]["layer/sp"]["forward_calls"]
                   if c["op"] == "all_gather_into_tensor"]
        assert modules == ["Layer.attn.inner.q", "Layer.attn.inner.k", "Layer.attn.inner.v",
                           "Layer.mlp.inner.fc1"]

    @pytest.mark.parametrize("world", WORLDS)
    @pytest.mark.parametrize("block", ["mlp", "attention", "attention_shared_input",
                                       "attention_fused_qkv"])
    def test_an_input_without_grad_skips_the_input_gradient_collective(self, world, block):
        # The calculator counts the backward collective of the block's input gradient; a
        # block whose input needs no gradient (first layer, frozen embeddings) skips it:
        # no all-reduce at all without sp, only the output gradient's all-gather with sp.
        assert case(world, f"{block}/tp/input_no_grad")["backward"] == {}
        assert case(world, f"{block}/sp/input_no_grad")["backward"] == {AG: 1}
        # Forward is unchanged.
        for mode in ("tp", "sp"):
            assert case(world, f"{block}/{mode}/input_no_grad")["forward"] == \
                case(world, f"{block}/{mode}")["forward"]

    @pytest.mark.parametrize("world", WORLDS)
    @pytest.mark.parametrize("key", ["mlp+ln", "attention+ln", "layer", "layer_shared_input"])
    @pytest.mark.parametrize("mode", ["tp", "sp"])
    def test_a_layernorm_in_front_needs_the_input_gradient_anyway(self, world, key, mode):
        # The LayerNorm's weights need the gradient of its output, so the collective stays:
        # in a real pre-LN layer the block input requiring grad or not changes nothing.
        assert case(world, f"{key}/{mode}/input_no_grad")["backward"] == \
            case(world, f"{key}/{mode}")["backward"]

    @pytest.mark.parametrize("world", WORLDS)
    @pytest.mark.parametrize("key", ["mlp+ln/sp", "attention+ln/sp", "layer/sp",
                                     "layer_shared_input/sp"])
    def test_sequence_parallel_layernorm_grads_are_left_partial(self, world, key):
        # SequenceParallel replicates the LayerNorm's weight and bias, but each rank computes
        # their gradient from its sequence shard: DTensor leaves it Partial and does not
        # all-reduce it in backward (full_tensor() does, and gives the right gradient).
        # Megatron all-reduces these over the tensor-parallel group after backward; the
        # calculator, which counts activation collectives only, has none under sp.
        grads = case(world, key)["replicated_grads"]
        norms = sorted(n for n in grads["partial"] if "norm." in n)
        assert norms and sorted(grads["partial"]) == norms
        assert sorted(grads["local_grad_wrong"]) == sorted(grads["full_tensor_right"]) == norms
        assert AR not in fwd_plus_bwd(case(world, key))
        assert calculator(world, True)["allreduces_per_layer"] == 0

    @pytest.mark.parametrize("world", WORLDS)
    def test_without_sequence_parallelism_every_gradient_is_complete(self, world):
        for key, entry in SUMMARY[f"world_size_{world}"].items():
            if key.split("/")[1] == "tp":
                assert entry["replicated_grads"] == {
                    "partial": [], "local_grad_wrong": [], "full_tensor_right": []}, key
