"""Pipeline parallelism: the bubble of GPipe, 1F1B and interleaved 1F1B schedules."""

from __future__ import annotations

from app.calculator.registry import N_, Output, Param, Result, Step, bad, calculator


@calculator(
    name="pipeline-bubble",
    title="Pipeline bubble",
    area="pipeline",
    summary="Idle time of a pipeline flush schedule, as a ratio to the ideal compute time "
            "(Megatron's definition) and as a fraction of the whole batch time (GPipe's).",
    formula="bubble / ideal = (p−1)/(v·m); bubble / total = (p−1)/(v·m + p − 1)",
    sources=(
        "Korthikanti et al., Reducing Activation Recomputation in Large Transformer Models "
        "(arXiv:2205.05198) §4.2.3",
        "Narayanan et al., Efficient Large-Scale Language Model Training on GPU Clusters "
        "Using Megatron-LM, SC21 (arXiv:2104.04473) §2.2.1-2.2.2",
        "Huang et al., GPipe, NeurIPS 2019 (arXiv:1811.06965) §2.3",
    ),
    params=(
        Param("stages", "integer", "p: pipeline stages.", minimum=1, maximum=100_000),
        Param("microbatches", "integer", "m: micro-batches per batch.", minimum=1,
              maximum=10_000_000),
        Param("schedule", "choice", "gpipe (all forwards, then all backwards), 1f1b "
              "(PipeDream-Flush) or interleaved (1F1B with v model chunks per device).",
              default="1f1b", choices=("gpipe", "1f1b", "interleaved")),
        Param("virtual_stages", "integer", "v: model chunks per device (interleaved only).",
              default=1, minimum=1, maximum=10_000),
    ),
    outputs=(
        Output("bubble_over_ideal", "Bubble time ÷ ideal time (p−1)/(v·m); can exceed 1."),
        Output("bubble_fraction_of_total", "Bubble time ÷ total batch time, in [0, 1)."),
        Output("inflight_microbatches", "Activations the first stage holds at once, in "
               "micro-batches of a whole stage: gpipe m; 1f1b min(p, m); interleaved "
               "min(p, m)·(1 + (p−1)/(p·v)) (Korthikanti et al. §4.2.3)."),
    ),
)
def pipeline_bubble(
    stages: int, microbatches: int, schedule: str = "1f1b", virtual_stages: int = 1
) -> Result:
    """Narayanan §2.2: t_pb / t_id = (p−1)/(v·m); GPipe's overhead is x / (1 + x)."""
    p, m, v = stages, microbatches, virtual_stages
    if schedule != "interleaved" and v != 1:
        raise bad("virtual_stages", f"only the interleaved schedule has model chunks; "
                  f"{schedule} needs virtual_stages = 1")
    if schedule == "interleaved" and v > 1 and m % p:
        raise bad("microbatches", f"the interleaved schedule needs a multiple of stages "
                  f"({p}), got {m}")
    over_ideal = (p - 1) / (v * m)
    of_total = over_ideal / (1 + over_ideal)
    inflight: float = m if schedule == "gpipe" else min(p, m)
    if schedule == "interleaved" and v > 1:
        # The longer warm-up of chunked stages, but never more than the m micro-batches
        # there are (torch's warm-up stops at v·m chunks: pipeline-schedules recording).
        inflight = min(min(p, m) * (1 + (p - 1) / (p * v)), m)
    worked = [
        Step(N_("%(schedule)s schedule, p = %(p)s stages, m = %(m)s micro-batches, v = %(v)s"),
             {"schedule": schedule, "p": p, "m": m, "v": v}),
        Step(N_("bubble / ideal = (p−1)/(v·m) = %(p1)s/(%(v)s·%(m)s) = %(ratio)s"),
             {"p1": p - 1, "v": v, "m": m, "ratio": over_ideal}),
        Step(N_("bubble / total = x/(1+x) = %(fraction)s"), {"fraction": of_total}),
        Step(N_("activations in flight on the first stage: %(count)s micro-batches"),
             {"count": inflight}),
    ]
    return Result({"bubble_over_ideal": over_ideal, "bubble_fraction_of_total": of_total,
                   "inflight_microbatches": inflight}, worked)
