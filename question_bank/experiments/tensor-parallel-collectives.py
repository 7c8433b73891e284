"""Which collectives does torch's tensor parallelism issue per block, in forward and backward?

Megatron tensor parallelism is usually summed up as "two all-reduces in forward and two in
backward per transformer layer" (one f/g pair around attention, one around the MLP), and
sequence parallelism as "each all-reduce becomes an all-gather plus a reduce-scatter".
This experiment parallelizes small blocks with `parallelize_module` (`ColwiseParallel`,
`RowwiseParallel`, `SequenceParallel`, `PrepareModuleInput`) on a CPU device mesh over
gloo and counts, with `CommDebugMode`, every collective of one forward and one backward:
a column-then-row MLP, an attention block with q/k/v column-parallel and the output
projection row-parallel (q, k and v each with its own ColwiseParallel input conversion;
with one `PrepareModuleInput` shared by q/k/v; with a fused per-head qkv projection), with
and without a LayerNorm in front, with and without sequence parallelism, with the block's
input requiring grad or not, and a whole pre-LN layer (attention + MLP with residuals).

Counts come from `CommDebugMode.get_comm_counts()`, one mode around forward and one
around backward. Bytes come from a subclass of `CommDebugMode` that, for every collective
the mode executes, also records the shape and size in bytes of the tensor it is given and
of the tensor it returns (CommDebugMode itself only keeps shapes of DTensor arguments, and
the collectives are dispatched on plain local tensors). Each parallel block's output and
input gradient are checked against the same block run unparallelized on every rank, and
so are the gradients of the parameters TP leaves replicated.
`from torch.distributed.tensor.debug import CommDebugMode` fails without NumPy in torch
2.13 (the package also imports `visualize_sharding`); the error is recorded and the mode is
taken from the module that import had already loaded.
"""

import itertools
import sys
import warnings
from typing import Any

import _harness as h
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
from torch.distributed.tensor import DTensor, Replicate, Shard
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    PrepareModuleInput,
    RowwiseParallel,
    SequenceParallel,
    parallelize_module,
)

try:
    from torch.distributed.tensor.debug import CommDebugMode

    PUBLIC_IMPORT: dict | str = "ok"
except ModuleNotFoundError as exc:
    # torch 2.13's debug/__init__.py imports visualize_sharding, which needs NumPy (not in
    # this venv); it has already loaded the mode's own module, which does not, before failing.
    PUBLIC_IMPORT = h.error_data(exc)
    CommDebugMode = sys.modules["torch.distributed.tensor.debug._comm_mode"].CommDebugMode

NAME = "tensor-parallel-collectives"
ASKS = ("Which collectives (kind, count, bytes) do ColwiseParallel/RowwiseParallel, with and "
        "without SequenceParallel, issue in forward and backward for an MLP, an attention "
        "block and a whole layer, with the block input requiring grad or not?")
BATCH, SEQ, HIDDEN, HEADS, FFN = 2, 8, 16, 4, 64
HEAD_DIM = HIDDEN // HEADS
LAYERS = ["layer", "layer_shared_input"]
TOLERANCE = 1e-5
# CommDebugMode's module tracker hooks every module's backward; when a block's input does
# not require grad, torch warns on each of those hooks. Expected here, and not the subject.
warnings.filterwarnings("ignore", message="Full backward hook is firing")


class MLP(nn.Module):
    """fc1 (column-parallel) → GELU → fc2 (row-parallel)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(HIDDEN, FFN)
        self.fc2 = nn.Linear(FFN, HIDDEN)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(x)))


class Attention(nn.Module):
    """Causal self-attention; shapes come from the projections' local outputs, so the same
    code runs on the full block and on a rank's share of the heads."""

    def __init__(self, fused: bool) -> None:
        super().__init__()
        self.fused = fused
        if fused:
            # Rows grouped per head as [q_h | k_h | v_h], as Megatron lays out its fused
            # projection, so a column shard holds whole heads.
            self.qkv = nn.Linear(HIDDEN, 3 * HIDDEN)
        else:
            self.q = nn.Linear(HIDDEN, HIDDEN)
            self.k = nn.Linear(HIDDEN, HIDDEN)
            self.v = nn.Linear(HIDDEN, HIDDEN)
        self.o = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.fused:
            qkv = self.qkv(x)
            b, s, _ = qkv.shape
            q, k, v = qkv.view(b, s, -1, 3, HEAD_DIM).unbind(3)
        else:
            q, k, v = self.q(x), self.k(x), self.v(x)
            b, s, _ = q.shape
            q, k, v = (t.view(b, s, -1, HEAD_DIM) for t in (q, k, v))
        out = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        return self.o(out.transpose(1, 2).reshape(b, s, -1))


class Block(nn.Module):
    """An optional LayerNorm in front of a sub-layer, no residual: y = inner(norm(x))."""

    def __init__(self, kind: str, layernorm: bool) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(HIDDEN) if layernorm else None
        self.inner = MLP() if kind == "mlp" else Attention(fused=kind.endswith("fused_qkv"))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x if self.norm is None else self.norm(x))


class Layer(nn.Module):
    """A pre-LN transformer layer: x + attention(LN(x)), then + MLP(LN(·))."""

    def __init__(self, attention: str) -> None:
        super().__init__()
        self.attn = Block(attention, layernorm=True)
        self.mlp = Block("mlp", layernorm=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(x)
        return x + self.mlp(x)


def block_plan(prefix: str, kind: str, layernorm: bool, sp: bool) -> dict:
    """The parallelize_module plan of one Block, keyed by module path."""
    sharded_in = {"input_layouts": Shard(1)} if sp else {}
    sharded_out = {"output_layouts": Shard(1)} if sp else {}
    plan = {}
    if sp and layernorm:
        plan[f"{prefix}norm"] = SequenceParallel()
    if kind == "mlp":
        plan[f"{prefix}inner.fc1"] = ColwiseParallel(**sharded_in)
        plan[f"{prefix}inner.fc2"] = RowwiseParallel(**sharded_out)
        return plan
    if kind == "attention_fused_qkv":
        plan[f"{prefix}inner.qkv"] = ColwiseParallel(**sharded_in)
    elif kind == "attention_shared_input":
        # One DTensor (and, with sequence parallelism, one all-gather) for q, k and v.
        layout = Shard(1) if sp else Replicate()
        plan[f"{prefix}inner"] = PrepareModuleInput(input_layouts=(layout,),
                                                    desired_input_layouts=(Replicate(),))
        plan.update({f"{prefix}inner.{p}": ColwiseParallel() for p in "qkv"})
    else:
        plan.update({f"{prefix}inner.{p}": ColwiseParallel(**sharded_in) for p in "qkv"})
    plan[f"{prefix}inner.o"] = RowwiseParallel(**sharded_out)
    return plan


def build(kind: str, layernorm: bool, sp: bool) -> tuple[nn.Module, dict]:
    """A fresh module with fixed weights (same on every rank) and its plan."""
    if kind in LAYERS:
        attention = "attention_shared_input" if kind == "layer_shared_input" else "attention"
        model: nn.Module = Layer(attention)
        plan = {**block_plan("attn.", attention, True, sp),
                **block_plan("mlp.", "mlp", True, sp)}
    else:
        model, plan = Block(kind, layernorm), block_plan("", kind, layernorm, sp)
    torch.manual_seed(2)
    for p in model.parameters():  # LayerNorm weights away from 1 too, so their grads vary
        nn.init.normal_(p, std=0.3)
    return model, plan


class SizedCommDebugMode(CommDebugMode):
    """CommDebugMode that also keeps, per collective, the shapes it was given and returned."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[dict] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        out = super().__torch_dispatch__(func, types, args, kwargs)
        if out is NotImplemented or isinstance(func, torch._ops.HigherOrderOperator):
            return out
        if func._overloadpacket in self.comm_registry:
            given = args[0]
            call = {"op": func._overloadpacket.__name__,
                    "shapes": f"{list(given.shape)} → {list(out.shape)}",
                    "in_bytes": given.numel() * given.element_size(),
                    "out_bytes": out.numel() * out.element_size()}
            # The module tracker only names the module in forward ("Global" in backward).
            if not self.advanced_module_tracker.is_bw:
                call["module"] = self.advanced_module_tracker.name
            self.calls.append(call)
        return out


def counts(mode: CommDebugMode) -> dict[str, int]:
    """get_comm_counts() without the zero entries, keyed by the op's name."""
    return {str(op): n for op, n in sorted(mode.get_comm_counts().items(), key=str) if n}


def local_piece(full: torch.Tensor, sp: bool, rank: int, world_size: int) -> torch.Tensor:
    return full.chunk(world_size, dim=1)[rank] if sp else full


def gather_sequence(local: torch.Tensor, sp: bool, world_size: int) -> torch.Tensor:
    """The full tensor from each rank's sequence shard (a plain all_gather, not counted)."""
    if not sp:
        return local
    pieces = [torch.empty_like(local) for _ in range(world_size)]
    dist.all_gather(pieces, local.contiguous())
    return torch.cat(pieces, dim=1)


def replicated_grads(model: nn.Module, reference: nn.Module) -> dict[str, list[str]]:
    """Parameters TP does not shard, sorted by what their gradient holds after backward."""
    ref = dict(reference.named_parameters())
    found: dict[str, list[str]] = {"partial": [], "local_grad_wrong": [],
                                   "full_tensor_right": []}
    for name, p in model.named_parameters():
        if isinstance(p, DTensor) and any(not pl.is_replicate() for pl in p.placements):
            continue
        grad = p.grad
        if isinstance(grad, DTensor) and any(pl.is_partial() for pl in grad.placements):
            found["partial"].append(name)
        local = grad.to_local() if isinstance(grad, DTensor) else grad
        if not torch.allclose(local, ref[name].grad, atol=TOLERANCE):
            found["local_grad_wrong"].append(name)
            # full_tensor() reduces a Partial gradient: the all-reduce backward left out.
            if isinstance(grad, DTensor) and torch.allclose(
                    grad.full_tensor(), ref[name].grad, atol=TOLERANCE):
                found["full_tensor_right"].append(name)
    return found


def one_case(kind: str, layernorm: bool, sp: bool, input_requires_grad: bool,
             rank: int, world_size: int, mesh: DeviceMesh) -> dict:
    """Forward + backward of one parallelized module under CommDebugMode."""
    model, plan = build(kind, layernorm, sp)
    reference, _ = build(kind, layernorm, sp)
    parallelize_module(model, mesh, plan)
    torch.manual_seed(3)
    x_full = torch.randn(BATCH, SEQ, HIDDEN)
    weight = torch.randn(BATCH, SEQ, HIDDEN)  # loss = Σ out·weight, so dL/dout varies
    x = local_piece(x_full, sp, rank, world_size).clone().requires_grad_(input_requires_grad)
    x_ref = x_full.clone().requires_grad_(True)

    forward_mode, backward_mode = SizedCommDebugMode(), SizedCommDebugMode()
    with forward_mode:
        out = model(x)
    out_local = out.to_local() if isinstance(out, DTensor) else out
    loss = (out_local * local_piece(weight, sp, rank, world_size)).sum()
    with backward_mode:
        loss.backward()

    ref_out = reference(x_ref)
    (ref_out * weight).sum().backward()
    return {
        "forward": counts(forward_mode),
        "backward": counts(backward_mode),
        "forward_calls": forward_mode.calls,
        "backward_calls": backward_mode.calls,
        "output": f"{type(out).__name__} {list(out_local.shape)}",
        "output_matches_reference": bool(torch.allclose(
            gather_sequence(out_local.detach(), sp, world_size), ref_out, atol=TOLERANCE)),
        "input_grad_matches_reference": None if not input_requires_grad else bool(
            torch.allclose(x.grad, local_piece(x_ref.grad, sp, rank, world_size),
                           atol=TOLERANCE)),
        "replicated_grads": replicated_grads(model, reference),
    }


def cases() -> list[tuple[str, bool, bool, bool]]:
    """(kind, layernorm, sequence_parallel, input_requires_grad) of every case."""
    both, grads = (False, True), (True, False)
    return [*itertools.product(["mlp", "attention"], both, both, grads),
            *itertools.product(["attention_shared_input", "attention_fused_qkv"], (False,),
                               both, grads),
            *itertools.product(LAYERS, (True,), both, grads)]


def case_key(kind: str, layernorm: bool, sp: bool, input_requires_grad: bool) -> str:
    """e.g. 'mlp+ln/sp/input_no_grad'."""
    return (f"{kind}{'+ln' if layernorm and kind not in LAYERS else ''}"
            f"{'/sp' if sp else '/tp'}{'' if input_requires_grad else '/input_no_grad'}")


def rank_fn(rank: int, world_size: int, config: dict) -> dict:
    mesh = init_device_mesh("cpu", (world_size,))
    return {case_key(*case): h.attempt(lambda case=case: one_case(*case, rank, world_size, mesh))
            for case in cases()}


def summarize(ranks: list[dict]) -> dict:
    """Rank 0's counts and buffer sizes per case, and whether every rank agrees."""
    compared = ("forward", "backward", "forward_calls", "backward_calls", "replicated_grads")
    summary = {}
    for key, first in ranks[0].items():
        if "error" in first:
            summary[key] = first
            continue
        calls = first["forward_calls"] + first["backward_calls"]
        summary[key] = {
            "forward": first["forward"],
            "backward": first["backward"],
            # The full-size side of each collective: all-reduce buffer, all-gather output,
            # reduce-scatter input.
            "full_buffer_bytes": sorted({max(c["in_bytes"], c["out_bytes"]) for c in calls}),
            "shard_bytes": sorted({min(c["in_bytes"], c["out_bytes"]) for c in calls}),
            "correct_on_every_rank": all(
                r[key]["output_matches_reference"]
                and r[key]["input_grad_matches_reference"] in (True, None) for r in ranks),
            "replicated_grads": first["replicated_grads"],
            "same_on_every_rank": all(
                {k: r[key][k] for k in compared} == {k: first[k] for k in compared}
                for r in ranks),
        }
    return summary


def per_layer(first: dict) -> dict[str, dict[str, int]]:
    """Collectives of one whole layer, forward + backward, by kind."""
    totals = {}
    for key, case in first.items():
        if key.startswith("layer") and "error" not in case:
            total: dict[str, int] = {}
            for phase in ("forward", "backward"):
                for op, n in case[phase].items():
                    total[op] = total.get(op, 0) + n
            totals[key] = total
    return totals


def main() -> None:
    out = h.cli_out(NAME, __file__)
    runs, summary = [], {}
    config = {"batch": BATCH, "seq": SEQ, "hidden": HIDDEN, "heads": HEADS, "ffn": FFN,
              "dtype": "float32", "mesh": "init_device_mesh('cpu', (world_size,))",
              "bytes_from": "SizedCommDebugMode: numel × element_size of each collective's "
                            "input and output tensor as dispatched"}
    for world_size in (2, 4):
        ranks = h.expect_ok(h.run(rank_fn, world_size, config))
        # Rank 0 in full; the other ranks only as far as the summary compares them.
        runs.append({"world_size": world_size, "config": config, "ranks": ranks[:1]})
        summary[f"world_size_{world_size}"] = summarize(ranks)
        summary[f"world_size_{world_size}_per_layer"] = per_layer(ranks[0])
    summary["import_torch_distributed_tensor_debug"] = PUBLIC_IMPORT
    h.record(NAME, ASKS, __file__, runs, summary, out)


if __name__ == "__main__":
    main()
