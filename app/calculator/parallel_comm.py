"""Communication volume of ZeRO data parallelism and of Megatron tensor parallelism."""

from __future__ import annotations

from app.calculator.registry import N_, Output, Param, Quantity, Result, Step, calculator


@calculator(
    name="zero-comm",
    title="ZeRO communication per step",
    area="memory",
    summary="Elements each data-parallel process communicates per training step under ZeRO, "
            "in the paper's convention (the ring factor (N−1)/N dropped).",
    formula="stages 0-2: reduce-scatter Ψ + all-gather Ψ = 2Ψ; stage 3: 3Ψ (parameters "
            "gathered in forward and again in backward, gradients reduce-scattered)",
    sources=("Rajbhandari et al., ZeRO, SC20 (arXiv:1910.02054) §7",),
    params=(
        Param("params", "number", "Ψ: parameters.", minimum=0, exclusive_minimum=True,
              maximum=1e16),
        Param("zero_stage", "integer", "ZeRO stage 0-3 (0 = plain data parallelism).",
              minimum=0, maximum=3),
        Param("bytes_per_element", "number", "Bytes per communicated element (2 for fp16 or "
              "bf16).", default=2, minimum=0, exclusive_minimum=True, maximum=64),
        Param("dp", "integer", "Optional data-parallel degree N, for the exact ring traffic.",
              default=None, minimum=1, maximum=10_000_000),
    ),
    outputs=(
        Output("elements_per_step", "2Ψ, or 3Ψ for stage 3."),
        Output("bytes_per_step", "elements × bytes per element.", "B"),
        Output("ring_bytes_sent_per_rank", "With dp: bytes_per_step × (N−1)/N, what a ring "
               "really sends.", "B"),
    ),
)
def zero_comm(
    params: float, zero_stage: int, bytes_per_element: float = 2, dp: int | None = None
) -> Result:
    """ZeRO §7: same volume as data parallelism up to stage 2, 1.5× at stage 3."""
    factor = 3 if zero_stage == 3 else 2
    elements = factor * params
    size = elements * bytes_per_element
    outputs = {"elements_per_step": elements, "bytes_per_step": size}
    worked = [Step(N_("stage %(stage)s: %(factor)sΨ = %(factor)s × %(params)s = %(elements)s "
                      "elements × %(bytes)s B = %(size)s"),
                   {"stage": str(zero_stage), "factor": factor, "params": params,
                    "elements": elements, "bytes": bytes_per_element,
                    "size": Quantity(size, "B")})]
    if dp is not None:
        outputs["ring_bytes_sent_per_rank"] = size * (dp - 1) / dp
        worked.append(Step(N_("ring, N = %(dp)s: × (N−1)/N = %(bytes)s"),
                           {"dp": dp, "bytes": Quantity(outputs["ring_bytes_sent_per_rank"],
                                                        "B")}))
    return Result(outputs, worked)


@calculator(
    name="tp-comm",
    title="Tensor-parallel communication per layer",
    area="tensor-parallel",
    summary="Collectives and bytes per transformer layer and micro-batch under Megatron "
            "tensor parallelism (the f and g operators around attention and the MLP).",
    formula="4 all-reduces of b·s·h per layer (2 forward, 2 backward); ring traffic "
            "8·b·s·h·(t−1)/t elements per device; sequence parallelism swaps each all-reduce "
            "for an all-gather plus a reduce-scatter at the same volume",
    sources=(
        "Shoeybi et al., Megatron-LM (arXiv:1909.08053) Figures 3-4",
        "Narayanan et al., SC21 (arXiv:2104.04473) §3.2",
        "Korthikanti et al. (arXiv:2205.05198) §4.2.2",
        "Rajbhandari et al., ZeRO §8 (6 all-reduces per block with recomputation)",
    ),
    params=(
        Param("micro_batch", "integer", "b: micro-batch size.", minimum=1, maximum=1_000_000),
        Param("seq_len", "integer", "s: sequence length.", minimum=1, maximum=100_000_000),
        Param("hidden", "integer", "h: hidden size.", minimum=1, maximum=10_000_000),
        Param("tp", "integer", "t: tensor-parallel size.", minimum=1, maximum=1_000_000),
        Param("bytes_per_element", "number", "Bytes per activation element.", default=2,
              minimum=0, exclusive_minimum=True, maximum=64),
        Param("layers", "integer", "Layers on this device.", default=1, minimum=1,
              maximum=1_000_000),
        Param("sequence_parallel", "boolean", "Megatron sequence parallelism.", default=False),
        Param("activation_recompute", "boolean", "Full recomputation replays the forward "
              "collectives in backward.", default=False),
    ),
    outputs=(
        Output("allreduces_per_layer", "All-reduces per layer, forward + backward."),
        Output("allgathers_per_layer", "All-gathers per layer (sequence parallelism)."),
        Output("reduce_scatters_per_layer", "Reduce-scatters per layer (sequence parallelism)."),
        Output("bytes_per_allreduce", "Size of each collective's buffer, b·s·h elements.", "B"),
        Output("bytes_sent_per_rank_per_layer", "Ring traffic each device sends per layer.",
               "B"),
        Output("bytes_sent_per_rank", "The same for all layers.", "B"),
    ),
)
def tp_comm(
    micro_batch: int,
    seq_len: int,
    hidden: int,
    tp: int,
    bytes_per_element: float = 2,
    layers: int = 1,
    sequence_parallel: bool = False,
    activation_recompute: bool = False,
) -> Result:
    """Narayanan §3.2: 8bsh(t−1)/t elements per layer per device per micro-batch."""
    t = tp
    pairs = 6 if activation_recompute else 4  # conjugate f/g collectives per layer
    if t == 1:
        pairs = 0  # one device: Megatron skips the collectives altogether
    buffer = micro_batch * seq_len * hidden * bytes_per_element
    # A ring all-reduce sends 2(t−1)/t of the buffer; all-gather and reduce-scatter (t−1)/t each.
    per_layer = pairs * 2 * (t - 1) / t * buffer
    allreduces = 0 if sequence_parallel else pairs
    gathers = pairs if sequence_parallel else 0
    kind = Step(N_("%(pairs)s all-gathers + %(pairs)s reduce-scatters") if sequence_parallel
                else N_("%(pairs)s all-reduces"), {"pairs": pairs})
    worked = [
        Step(N_("b = %(b)s, s = %(s)s, h = %(h)s, t = %(t)s: %(kind)s per layer of b·s·h = "
                "%(buffer)s"), {"b": micro_batch, "s": seq_len, "h": hidden, "t": t,
                                "kind": kind, "buffer": Quantity(buffer, "B")}),
        Step(N_("per layer: %(pairs)s × 2(t−1)/t × b·s·h = %(per_layer)s; × %(layers)s layers "
                "= %(total)s"), {"pairs": pairs, "per_layer": Quantity(per_layer, "B"),
                                 "layers": layers, "total": Quantity(per_layer * layers, "B")}),
    ]
    return Result({
        "allreduces_per_layer": allreduces,
        "allgathers_per_layer": gathers,
        "reduce_scatters_per_layer": gathers,
        "bytes_per_allreduce": buffer,
        "bytes_sent_per_rank_per_layer": per_layer,
        "bytes_sent_per_rank": per_layer * layers,
    }, worked)
