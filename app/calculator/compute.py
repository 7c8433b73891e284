"""Training compute: 6·N·D FLOPs, time to train and model FLOPs utilisation (MFU)."""

from __future__ import annotations

from app.calculator.registry import N_, Output, Param, Quantity, Result, Step, bad, calculator
from app.calculator.units import FLOP_PER_SECOND

PF_DAY = 1e15 * 86_400  # FLOPs in one petaFLOP/s-day


@calculator(
    name="training-flops",
    title="Training compute and time",
    area="compute",
    summary="FLOPs to train N parameters on D tokens (6 per parameter per token: 2 forward, "
            "4 backward) and the time it takes at a given MFU.",
    formula="C = 6·N·D; time = C / (gpus · peak · MFU)",
    sources=(
        "Kaplan et al., Scaling Laws for Neural Language Models (arXiv:2001.08361) §2.1",
        "Brown et al., GPT-3 (arXiv:2005.14165) Table D.1",
    ),
    params=(
        Param("params", "number", "N: parameters.", minimum=0, exclusive_minimum=True,
              maximum=1e16),
        Param("tokens", "number", "D: training tokens.", minimum=0, exclusive_minimum=True,
              maximum=1e18),
        Param("gpus", "integer", "Accelerators.", default=None, minimum=1, maximum=10_000_000),
        Param("peak_flops_per_gpu", "number", "Peak dense FLOP/s of one accelerator "
              "(A100 bf16: 312 TFLOP/s).", unit=FLOP_PER_SECOND, default=None, minimum=1,
              maximum=1e20),
        Param("mfu", "number", "Model FLOPs utilisation, a fraction in (0, 1].", default=None,
              minimum=1e-6, maximum=1),
    ),
    outputs=(
        Output("flops", "Training FLOPs, 6·N·D.", "FLOP"),
        Output("pf_days", "The same in petaFLOP/s-days (8.64e19 FLOPs each)."),
        Output("time_s", "Wall-clock time; present when gpus, peak and mfu are given.", "s"),
    ),
)
def training_flops(
    params: float,
    tokens: float,
    gpus: int | None = None,
    peak_flops_per_gpu: float | None = None,
    mfu: float | None = None,
) -> Result:
    """C ≈ 6ND (Kaplan §2.1): 2ND forward, 4ND backward, attention ignored."""
    flops = 6 * params * tokens
    outputs: dict[str, float] = {"flops": flops, "pf_days": flops / PF_DAY}
    worked = [Step(N_("C = 6·N·D = 6 × %(params)s × %(tokens)s = %(flops)s = %(pf_days)s "
                      "PF-days"), {"params": params, "tokens": tokens,
                                   "flops": Quantity(flops, "FLOP"),
                                   "pf_days": flops / PF_DAY})]
    timing = {"gpus": gpus, "peak_flops_per_gpu": peak_flops_per_gpu, "mfu": mfu}
    given = [k for k, v in timing.items() if v is not None]
    if given and len(given) < len(timing):
        missing = next(k for k, v in timing.items() if v is None)
        raise bad(missing, "is needed with " + " and ".join(given) + " to compute the time")
    if gpus is not None and peak_flops_per_gpu is not None and mfu is not None:
        time = flops / (gpus * peak_flops_per_gpu * mfu)
        outputs["time_s"] = time
        worked.append(Step(N_("time = C / (GPUs · peak · MFU) = %(flops)s / (%(gpus)s × "
                              "%(peak)s × %(mfu)s) = %(time)s"),
                           {"flops": Quantity(flops, "FLOP"), "gpus": gpus,
                            "peak": Quantity(peak_flops_per_gpu, "FLOP/s"), "mfu": mfu,
                            "time": Quantity(time, "s")}))
    return Result(outputs, worked)


@calculator(
    name="mfu",
    title="Model FLOPs utilisation",
    area="compute",
    summary="Achieved model FLOP/s over peak, from measured tokens per second; the attention "
            "term is counted when the model's shape is given, as PaLM does.",
    formula="FLOPs/token = 6N + 12·L·H·Q·T; MFU = FLOPs/token × tokens/s ÷ (gpus × peak)",
    sources=(
        "Chowdhery et al., PaLM (arXiv:2204.02311) §4.1, Appendix B",
        "Korthikanti et al. (arXiv:2205.05198) §6.3, Table 5",
    ),
    params=(
        Param("params", "number", "N: parameters.", minimum=0, exclusive_minimum=True,
              maximum=1e16),
        Param("tokens_per_s", "number", "Measured training throughput, tokens per second "
              "over the whole job.", minimum=0, exclusive_minimum=True, maximum=1e15),
        Param("gpus", "integer", "Accelerators.", minimum=1, maximum=10_000_000),
        Param("peak_flops_per_gpu", "number", "Peak FLOP/s of one accelerator.",
              unit=FLOP_PER_SECOND, minimum=1, maximum=1e20),
        Param("layers", "integer", "L: layers (for the attention term).", default=None,
              minimum=1, maximum=1_000_000),
        Param("heads", "integer", "H: attention heads.", default=None, minimum=1,
              maximum=1_000_000),
        Param("head_dim", "integer", "Q: dimension per head.", default=None, minimum=1,
              maximum=1_000_000),
        Param("seq_len", "integer", "T: sequence length.", default=None, minimum=1,
              maximum=100_000_000),
    ),
    outputs=(
        Output("flops_per_token", "Model FLOPs per token.", "FLOP"),
        Output("achieved_flops_per_s", "Model FLOPs per second over the job.", "FLOP/s"),
        Output("mfu", "Model FLOPs utilisation, a fraction."),
    ),
)
def mfu(
    params: float,
    tokens_per_s: float,
    gpus: int,
    peak_flops_per_gpu: float,
    layers: int | None = None,
    heads: int | None = None,
    head_dim: int | None = None,
    seq_len: int | None = None,
) -> Result:
    """PaLM Appendix B: tokens/s × (6N + 12LHQT) ÷ peak; rematerialisation is not counted."""
    shape = {"layers": layers, "heads": heads, "head_dim": head_dim, "seq_len": seq_len}
    given = [k for k, v in shape.items() if v is not None]
    if given and len(given) < len(shape):
        missing = next(k for k, v in shape.items() if v is None)
        raise bad(missing, "the attention term needs layers, heads, head_dim and seq_len "
                  "together")
    attention = 12 * layers * heads * head_dim * seq_len if layers and heads and head_dim \
        and seq_len else 0
    per_token = 6 * params + attention
    achieved = per_token * tokens_per_s
    peak = gpus * peak_flops_per_gpu
    attention_text = Step(" + 12·L·H·Q·T = %(dense)s + %(attention)s", {
        "dense": Quantity(6 * params, "FLOP"), "attention": Quantity(attention, "FLOP")}) \
        if attention else ""
    worked = [
        Step(N_("FLOPs per token = 6N%(attention)s = %(per_token)s"),
             {"attention": attention_text, "per_token": Quantity(per_token, "FLOP")}),
        Step(N_("achieved = %(per_token)s × %(tokens)s tokens/s = %(achieved)s"),
             {"per_token": Quantity(per_token, "FLOP"), "tokens": tokens_per_s,
              "achieved": Quantity(achieved, "FLOP/s")}),
        Step(N_("MFU = achieved / (%(gpus)s × %(peak)s) = %(mfu)s"),
             {"gpus": gpus, "peak": Quantity(peak_flops_per_gpu, "FLOP/s"),
              "mfu": achieved / peak}),
    ]
    return Result({"flops_per_token": per_token, "achieved_flops_per_s": achieved,
                   "mfu": achieved / peak}, worked)
