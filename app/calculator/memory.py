"""Memory per device: model states under ZeRO/FSDP sharding, and activations per layer."""

from __future__ import annotations

from app.calculator.registry import N_, Output, Param, Quantity, Result, Step, bad, calculator
from app.calculator.units import BYTES

# Bytes per parameter: (weights, gradients, optimizer state) by precision and optimizer.
# Mixed precision keeps 16-bit weights and gradients and an fp32 master copy inside the
# optimizer state (ZeRO §3.1: K = 12 for Adam = master 4 + momentum 4 + variance 4).
BYTES_PER_PARAM = {
    ("mixed", "adam"): (2, 2, 12),
    ("mixed", "sgd-momentum"): (2, 2, 8),
    ("mixed", "sgd"): (2, 2, 4),
    ("fp32", "adam"): (4, 4, 8),
    ("fp32", "sgd-momentum"): (4, 4, 4),
    ("fp32", "sgd"): (4, 4, 0),
}
PRECISION_TEXT = {"mixed": N_("mixed precision"), "fp32": N_("fp32 precision")}
RECOMPUTE_TEXT = {"none": N_("none"), "selective": N_("selective"), "full": N_("full")}
OPTIMIZER_STATE_TEXT = {
    ("mixed", "adam"): N_("fp32 master weights 4 + Adam momentum 4 + variance 4"),
    ("mixed", "sgd-momentum"): N_("fp32 master weights 4 + momentum 4"),
    ("mixed", "sgd"): N_("fp32 master weights 4"),
    ("fp32", "adam"): N_("Adam momentum 4 + variance 4"),
    ("fp32", "sgd-momentum"): N_("momentum 4"),
    ("fp32", "sgd"): N_("none"),
}
FP32_GRAD_ACCUM_BYTES = 4  # Ultra-Scale Playbook: bf16 training with fp32 gradient buffers


@calculator(
    name="model-memory",
    title="Model-state memory per device (ZeRO / FSDP)",
    area="memory",
    summary="Bytes of parameters, gradients and optimizer state each device holds under "
            "ZeRO stage 0-3 (FSDP full-shard = stage 3) at a data-parallel degree.",
    formula="stage 0: (2+2+K)Ψ; stage 1: 2Ψ + 2Ψ + KΨ/N_d; stage 2: 2Ψ + (2+K)Ψ/N_d; "
            "stage 3: (2+2+K)Ψ/N_d (mixed precision, K = 12 for Adam)",
    sources=(
        "Rajbhandari et al., ZeRO, SC20 (arXiv:1910.02054) §3.1, §5, Figure 1, Table 1-2",
        "Hugging Face, The Ultra-Scale Playbook, memory and ZeRO sections",
    ),
    params=(
        Param("params", "number", "Ψ: number of parameters.", minimum=0, exclusive_minimum=True,
              maximum=1e16),
        Param("precision", "choice", "mixed: 16-bit weights and gradients plus an fp32 master "
              "copy (ZeRO's accounting); fp32: everything in 32 bits.", default="mixed",
              choices=("mixed", "fp32")),
        Param("optimizer", "choice", "Optimizer whose state is stored.", default="adam",
              choices=("adam", "sgd-momentum", "sgd")),
        Param("zero_stage", "integer", "0: plain data parallelism; 1: optimizer state sharded; "
              "2: + gradients; 3: + parameters (FSDP full shard).", default=0, minimum=0,
              maximum=3),
        Param("dp", "integer", "N_d: data-parallel degree (devices the states are sharded "
              "over).", default=1, minimum=1, maximum=10_000_000),
        Param("fp32_grad_accum", "boolean", "Keep an extra fp32 gradient buffer (4 bytes per "
              "parameter, sharded from stage 2), as bf16 training in nanotron does.",
              default=False),
        Param("mp", "integer", "N_m: model-parallel degree (tensor × pipeline) dividing every "
              "model state, as in ZeRO Table 2.", default=1, minimum=1, maximum=1_000_000),
        Param("device_bytes", "number", "Optional device memory: gives the largest model "
              "that fits (model states only).", unit=BYTES, default=None, minimum=0,
              exclusive_minimum=True, maximum=1e18),
    ),
    outputs=(
        Output("param_bytes", "Parameter bytes per device.", "B"),
        Output("grad_bytes", "Gradient bytes per device.", "B"),
        Output("optimizer_bytes", "Optimizer-state bytes per device (incl. fp32 master "
               "weights in mixed precision).", "B"),
        Output("total_bytes", "Model-state bytes per device.", "B"),
        Output("bytes_per_param", "Model-state bytes per device per parameter."),
        Output("max_params", "Largest Ψ whose model states fit in device_bytes.", None),
        Output("fits", "Whether the model states fit in device_bytes."),
    ),
)
def model_memory(
    params: float,
    precision: str = "mixed",
    optimizer: str = "adam",
    zero_stage: int = 0,
    dp: int = 1,
    fp32_grad_accum: bool = False,
    mp: int = 1,
    device_bytes: float | None = None,
) -> Result:
    """Per-device model states: ZeRO Figure 1 with K from the optimizer and precision."""
    if fp32_grad_accum and precision != "mixed":
        raise bad("fp32_grad_accum", "only applies to precision=mixed (fp32 gradients are "
                  "already 4 bytes)")
    w, g, k = BYTES_PER_PARAM[(precision, optimizer)]
    if fp32_grad_accum:
        g += FP32_GRAD_ACCUM_BYTES
    shard_w = dp if zero_stage >= 3 else 1
    shard_g = dp if zero_stage >= 2 else 1
    shard_k = dp if zero_stage >= 1 else 1
    per_param = w / shard_w / mp, g / shard_g / mp, k / shard_k / mp
    param_bytes, grad_bytes, optimizer_bytes = (b * params for b in per_param)
    total = param_bytes + grad_bytes + optimizer_bytes
    outputs: dict[str, float | bool] = {
        "param_bytes": param_bytes,
        "grad_bytes": grad_bytes,
        "optimizer_bytes": optimizer_bytes,
        "total_bytes": total,
        "bytes_per_param": total / params,
    }

    def term(b: int, shard: int) -> str:
        return f"{b}Ψ" + (f"/{shard}" if shard > 1 else "")

    mp_text = Step(N_(", all divided by N_m = %(mp)s"), {"mp": mp}) if mp > 1 else ""
    worked = [
        Step(N_("Ψ = %(params)s parameters, %(precision)s, %(optimizer)s, ZeRO stage "
                "%(stage)s, N_d = %(dp)s%(mp)s"),
             {"params": params, "precision": Step(PRECISION_TEXT[precision]),
              "optimizer": optimizer, "stage": str(zero_stage), "dp": dp, "mp": mp_text}),
        Step(N_("bytes per parameter: weights %(w)s, gradients %(g)s, optimizer state %(k)s "
                "(%(state)s)"), {"w": w, "g": g, "k": k,
                                 "state": Step(OPTIMIZER_STATE_TEXT[(precision, optimizer)])}),
        Step(N_("per device = %(terms)s = %(params)s + %(grads)s + %(state)s = %(total)s"),
             {"terms": f"{term(w, shard_w)} + {term(g, shard_g)} + {term(k, shard_k)}",
              "params": Quantity(param_bytes, "B"), "grads": Quantity(grad_bytes, "B"),
              "state": Quantity(optimizer_bytes, "B"), "total": Quantity(total, "B")}),
    ]
    if device_bytes is not None:
        outputs["max_params"] = device_bytes / (total / params)
        outputs["fits"] = total <= device_bytes
        worked.append(Step(N_("largest Ψ in %(memory)s = M / %(per_param)s B = %(max)s "
                              "parameters"), {"memory": Quantity(device_bytes, "B"),
                                              "per_param": total / params,
                                              "max": outputs["max_params"]}))
    return Result(outputs, worked)


@calculator(
    name="activation-memory",
    title="Activation memory per transformer layer",
    area="memory",
    summary="Bytes of activations a transformer layer stores for backward, with tensor and "
            "sequence parallelism and activation recomputation (16-bit activations).",
    formula="sbh(34 + 5as/h) without parallelism; sbh(10 + 24/t + 5as/(ht)) with tensor "
            "parallelism; sbh(34/t + 5as/(ht)) with sequence parallelism too; selective "
            "recompute drops the 5as/h term; full recompute keeps 2sbh",
    sources=(
        "Korthikanti et al., Reducing Activation Recomputation in Large Transformer Models, "
        "MLSys 2023 (arXiv:2205.05198) Eq. 1-6, Table 2",
    ),
    params=(
        Param("seq_len", "integer", "s: sequence length.", minimum=1, maximum=100_000_000),
        Param("micro_batch", "integer", "b: micro-batch size.", minimum=1, maximum=1_000_000),
        Param("hidden", "integer", "h: hidden size.", minimum=1, maximum=10_000_000),
        Param("heads", "integer", "a: attention heads.", minimum=1, maximum=1_000_000),
        Param("layers", "integer", "L: layers (the whole model, or the first stage of a 1F1B "
              "pipeline, which holds p micro-batches of L/p layers).", default=1, minimum=1,
              maximum=1_000_000),
        Param("tp", "integer", "t: tensor-parallel size.", default=1, minimum=1,
              maximum=1_000_000),
        Param("sequence_parallel", "boolean", "Shard layer norms and dropouts along the "
              "sequence (Megatron sequence parallelism).", default=False),
        Param("recompute", "choice", "none; selective (recompute attention scores, softmax "
              "and dropout); full (store only each layer's input).", default="none",
              choices=("none", "selective", "full")),
    ),
    outputs=(
        Output("bytes_per_layer", "Activation bytes one layer stores per device.", "B"),
        Output("total_bytes", "bytes_per_layer × layers.", "B"),
    ),
)
def activation_memory(
    seq_len: int,
    micro_batch: int,
    hidden: int,
    heads: int,
    layers: int = 1,
    tp: int = 1,
    sequence_parallel: bool = False,
    recompute: str = "none",
) -> Result:
    """Korthikanti et al. Eq. 1-4 and Table 2, in bytes (2-byte activations, 1-byte masks)."""
    s, b, h, a, t = seq_len, micro_batch, hidden, heads, tp
    sbh = s * b * h
    attention_scores = 5 * a * s / (h * t)  # softmax output, dropout mask and output
    if recompute == "full":
        factor, text = 2.0, "2"
    elif sequence_parallel:
        factor = 34 / t + (attention_scores if recompute == "none" else 0.0)
        text = "34/t + 5as/(ht)" if recompute == "none" else "34/t"
    else:
        factor = 10 + 24 / t + (attention_scores if recompute == "none" else 0.0)
        text = "10 + 24/t + 5as/(ht)" if recompute == "none" else "10 + 24/t"
    per_layer = sbh * factor
    worked = [
        Step(N_("s = %(s)s, b = %(b)s, h = %(h)s, a = %(a)s, t = %(t)s, L = %(layers)s, "
                "sequence parallelism: %(sp)s, recomputation: %(recompute)s"),
             {"s": s, "b": b, "h": h, "a": a, "t": t, "layers": layers,
              "sp": Step(N_("yes") if sequence_parallel else N_("no")),
              "recompute": Step(RECOMPUTE_TEXT[recompute])}),
        Step(N_("per layer = sbh·(%(formula)s) = %(sbh)s × %(factor)s = %(bytes)s"),
             {"formula": text, "sbh": sbh, "factor": factor,
              "bytes": Quantity(per_layer, "B")}),
        Step(N_("total = L × per layer = %(bytes)s"),
             {"bytes": Quantity(per_layer * layers, "B")}),
    ]
    return Result({"bytes_per_layer": per_layer, "total_bytes": per_layer * layers}, worked)
