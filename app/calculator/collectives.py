"""Collective communication: steps, bytes per rank, bus bandwidth and alpha-beta-gamma time.

Costs follow Thakur, Rabenseifner & Gropp, "Optimization of Collective Communication
Operations in MPICH" (IJHPCA 2005), as quoted in MPICH's ``src/mpi/coll/*.c``; the ring
all-reduce is Patarasuk & Yuan (JPDC 2009), whose 2(p-1)/p*n per-rank traffic is the
lower bound for any all-reduce. Bus-bandwidth factors are those of nccl-tests
``doc/PERFORMANCE.md``.

Message sizes follow nccl-tests: for all-reduce, broadcast and reduce ``S`` is the
buffer each rank holds; for all-gather, reduce-scatter and all-to-all it is the whole
array (every rank ends up with, or starts from, S bytes in p blocks of S/p).

For tree-shaped algorithms the ranks do not all send the same amount; the per-rank
byte counts are those of the busiest rank, which is what bounds the time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.calculator.registry import N_, Output, Param, Quantity, Result, Step, bad, calculator
from app.calculator.units import BYTES, BYTES_PER_SECOND, SECONDS, SECONDS_PER_BYTE

OPS = ("all-reduce", "all-gather", "reduce-scatter", "broadcast", "reduce", "all-to-all")
ALGORITHMS = ("ring", "tree", "recursive-doubling", "recursive-halving", "rabenseifner",
              "scatter-allgather")

# Which algorithms each operation supports; the first is its default.
SUPPORTED = {
    "all-reduce": ("ring", "tree", "recursive-doubling", "rabenseifner"),
    "all-gather": ("ring", "recursive-doubling"),
    "reduce-scatter": ("ring", "recursive-halving"),
    "broadcast": ("ring", "tree", "scatter-allgather"),
    "reduce": ("ring", "tree"),
    "all-to-all": ("ring",),
}
POWER_OF_TWO_ONLY = ("recursive-doubling", "recursive-halving", "rabenseifner")

# nccl-tests doc/PERFORMANCE.md: busbw = algbw * factor(n).
BUSBW_FACTOR_TEXT = {
    "all-reduce": "2(p−1)/p", "all-gather": "(p−1)/p", "reduce-scatter": "(p−1)/p",
    "all-to-all": "(p−1)/p", "broadcast": "1", "reduce": "1",
}


@dataclass(frozen=True)
class Cost:
    """Per-algorithm cost: steps (alpha terms), bytes on the busiest rank, beta and gamma bytes."""

    steps: int
    sent: float
    received: float
    beta_bytes: float  # bytes on the critical path, multiplied by beta
    gamma_bytes: float  # bytes reduced on the critical path, multiplied by gamma
    formulas: dict[str, str]


def busbw_factor(op: str, p: int) -> float:
    """nccl-tests bus-bandwidth factor: 2(p−1)/p, (p−1)/p or 1."""
    if op == "all-reduce":
        return 2 * (p - 1) / p
    if op in ("all-gather", "reduce-scatter", "all-to-all"):
        return (p - 1) / p
    return 1.0


def _binomial_subtree(rank: int, p: int) -> int:
    """Size of the subtree rooted at ``rank`` in MPICH's binomial tree rooted at 0."""
    lowbit = rank & -rank
    return min(lowbit, p - rank)


def cost(op: str, algorithm: str, p: int, n: float) -> Cost:
    """Steps and bytes for one collective; see the module docstring for conventions."""
    lg = math.ceil(math.log2(p)) if p > 1 else 0
    ring_share = (p - 1) * n / p
    match op, algorithm:
        case "all-reduce", "ring":
            return Cost(2 * (p - 1), 2 * ring_share, 2 * ring_share, 2 * ring_share, ring_share,
                        {"steps": "2(p−1)", "bytes": "2(p−1)/p · S",
                         "time": "2(p−1)·α + 2(p−1)/p·S·β + (p−1)/p·S·γ"})
        case "all-reduce", "tree":
            return Cost(2 * lg, lg * n, lg * n, 2 * lg * n, lg * n,
                        {"steps": "2⌈log₂p⌉ (binomial reduce, then broadcast)",
                         "bytes": "⌈log₂p⌉ · S (the root)",
                         "time": "2⌈log₂p⌉·α + 2⌈log₂p⌉·S·β + ⌈log₂p⌉·S·γ"})
        case "all-reduce", "recursive-doubling":
            return Cost(lg, lg * n, lg * n, lg * n, lg * n,
                        {"steps": "log₂p", "bytes": "log₂p · S",
                         "time": "log₂p·α + log₂p·S·β + log₂p·S·γ"})
        case "all-reduce", "rabenseifner":
            return Cost(2 * lg, 2 * ring_share, 2 * ring_share, 2 * ring_share, ring_share,
                        {"steps": "2·log₂p (recursive halving, then doubling)",
                         "bytes": "2(p−1)/p · S",
                         "time": "2·log₂p·α + 2(p−1)/p·S·β + (p−1)/p·S·γ"})
        case "all-gather", "ring":
            return Cost(p - 1, ring_share, ring_share, ring_share, 0.0,
                        {"steps": "p−1", "bytes": "(p−1)/p · S", "time": "(p−1)·α + (p−1)/p·S·β"})
        case "all-gather", "recursive-doubling":
            return Cost(lg, ring_share, ring_share, ring_share, 0.0,
                        {"steps": "log₂p", "bytes": "(p−1)/p · S",
                         "time": "log₂p·α + (p−1)/p·S·β"})
        case "reduce-scatter", "ring":
            return Cost(p - 1, ring_share, ring_share, ring_share, ring_share,
                        {"steps": "p−1", "bytes": "(p−1)/p · S",
                         "time": "(p−1)·α + (p−1)/p·S·β + (p−1)/p·S·γ"})
        case "reduce-scatter", "recursive-halving":
            return Cost(lg, ring_share, ring_share, ring_share, ring_share,
                        {"steps": "log₂p", "bytes": "(p−1)/p · S",
                         "time": "log₂p·α + (p−1)/p·S·β + (p−1)/p·S·γ"})
        case "broadcast", "ring":
            # A chain from the root, the buffer cut into p chunks and pipelined.
            steps = 2 * (p - 1)
            return Cost(steps, n if p > 1 else 0.0, n if p > 1 else 0.0, steps * n / p, 0.0,
                        {"steps": "2(p−1) (chain, S cut into p pipelined chunks)",
                         "bytes": "S", "time": "2(p−1)·α + 2(p−1)/p·S·β"})
        case "broadcast", "tree":
            return Cost(lg, lg * n, n if p > 1 else 0.0, lg * n, 0.0,
                        {"steps": "⌈log₂p⌉", "bytes": "⌈log₂p⌉ · S sent by the root, S received",
                         "time": "⌈log₂p⌉·(α + S·β)"})
        case "broadcast", "scatter-allgather":
            largest_subtree = max((_binomial_subtree(r, p) for r in range(1, p)), default=0)
            return Cost(lg + p - 1, 2 * ring_share, largest_subtree * n / p + ring_share,
                        2 * ring_share, 0.0,
                        {"steps": "⌈log₂p⌉ + p − 1 (binomial scatter, then ring all-gather)",
                         "bytes": "2(p−1)/p · S sent by the root",
                         "time": "(⌈log₂p⌉ + p − 1)·α + 2(p−1)/p·S·β"})
        case "reduce", "ring":
            steps = 2 * (p - 1)
            return Cost(steps, n if p > 1 else 0.0, n if p > 1 else 0.0, steps * n / p,
                        steps * n / p,
                        {"steps": "2(p−1) (chain to the root, S cut into p pipelined chunks)",
                         "bytes": "S", "time": "2(p−1)·(α + S/p·β + S/p·γ)"})
        case "reduce", "tree":
            return Cost(lg, n if p > 1 else 0.0, lg * n, lg * n, lg * n,
                        {"steps": "⌈log₂p⌉", "bytes": "S sent, ⌈log₂p⌉ · S received by the root",
                         "time": "⌈log₂p⌉·(α + S·β + S·γ)"})
        case "all-to-all", "ring":
            # Pairwise exchange in ring order: at step k, rank i sends block i+k to rank i+k.
            return Cost(p - 1, ring_share, ring_share, ring_share, 0.0,
                        {"steps": "p−1 (pairwise exchange in ring order)",
                         "bytes": "(p−1)/p · S", "time": "(p−1)·α + (p−1)/p·S·β"})
    raise AssertionError(f"unsupported pair {op}/{algorithm} passed validation")


@calculator(
    name="collective",
    title="Collective communication cost",
    area="collectives",
    summary="Steps, bytes per rank, bus-bandwidth factor and alpha-beta time of one collective.",
    formula="ring all-reduce: 2(p−1) steps, 2(p−1)/p·S bytes sent per rank; "
            "time = steps·α + bytes·β + reduced bytes·γ",
    sources=(
        "Thakur, Rabenseifner & Gropp, Optimization of Collective Communication Operations "
        "in MPICH, IJHPCA 19(1), 2005",
        "Patarasuk & Yuan, Bandwidth optimal all-reduce algorithms for clusters of "
        "workstations, JPDC 69(2), 2009",
        "NVIDIA/nccl-tests doc/PERFORMANCE.md (algbw, busbw)",
    ),
    params=(
        Param("op", "choice", "The collective operation.", choices=OPS),
        Param("algorithm", "choice", "How it is carried out; each operation supports only "
              "some algorithms (recursive ones need a power-of-two world size).",
              default="ring", choices=ALGORITHMS),
        Param("world_size", "integer", "Number of ranks p.", minimum=1, maximum=1_000_000),
        Param("message_bytes", "number", "S: for all-reduce, broadcast and reduce the buffer "
              "each rank holds; for all-gather, reduce-scatter and all-to-all the whole array.",
              unit=BYTES, minimum=0, maximum=1e18),
        Param("alpha_s", "number", "α: latency per step.", unit=SECONDS, default=None,
              minimum=0, maximum=1e3),
        Param("beta_s_per_byte", "number", "β: transfer time per byte (1 / link bandwidth).",
              unit=SECONDS_PER_BYTE, default=None, minimum=0, maximum=1.0),
        Param("bandwidth_bytes_per_s", "number", "Link bandwidth; another way to give β "
              "(β = 1/bandwidth).", unit=BYTES_PER_SECOND, default=None, minimum=1,
              maximum=1e18),
        Param("gamma_s_per_byte", "number", "γ: reduction compute time per byte.",
              unit=SECONDS_PER_BYTE, default=0.0, minimum=0, maximum=1.0),
    ),
    outputs=(
        Output("steps", "Communication steps (each costs one α)."),
        Output("bytes_sent_per_rank", "Bytes sent by a rank (the busiest one for trees).", "B"),
        Output("bytes_received_per_rank", "Bytes received by a rank (the busiest one).", "B"),
        Output("busbw_factor", "nccl-tests bus bandwidth ÷ algorithm bandwidth."),
        Output("time_s", "α-β-γ time; present when α and β (or bandwidth) are given.", "s"),
    ),
)
def collective(
    op: str,
    algorithm: str,
    world_size: int,
    message_bytes: float,
    alpha_s: float | None = None,
    beta_s_per_byte: float | None = None,
    bandwidth_bytes_per_s: float | None = None,
    gamma_s_per_byte: float = 0.0,
) -> Result:
    """Cost of one collective on ``world_size`` ranks; see :func:`cost` for each algorithm."""
    p, n = world_size, message_bytes
    if algorithm not in SUPPORTED[op]:
        raise bad("algorithm", f"{algorithm} does not apply to {op}; use one of "
                  f"{', '.join(SUPPORTED[op])}")
    if algorithm in POWER_OF_TWO_ONLY and p & (p - 1):
        raise bad("world_size", f"{algorithm} needs a power-of-two world size, got {p}")
    if beta_s_per_byte is not None and bandwidth_bytes_per_s is not None:
        raise bad("bandwidth_bytes_per_s", "give either beta_s_per_byte or "
                  "bandwidth_bytes_per_s, not both")
    beta = 1.0 / bandwidth_bytes_per_s if bandwidth_bytes_per_s else beta_s_per_byte
    c = cost(op, algorithm, p, n)
    outputs: dict[str, float | int] = {
        "steps": c.steps,
        "bytes_sent_per_rank": c.sent,
        "bytes_received_per_rank": c.received,
        "busbw_factor": busbw_factor(op, p),
    }
    worked = [
        Step(N_("%(algorithm)s %(op)s on p = %(p)s ranks, S = %(size)s"),
             {"algorithm": algorithm, "op": op, "p": p, "size": Quantity(n, "B")}),
        Step(N_("steps = %(formula)s = %(steps)s"),
             {"formula": c.formulas["steps"], "steps": c.steps}),
        Step(N_("bytes sent per rank = %(formula)s = %(bytes)s"),
             {"formula": c.formulas["bytes"], "bytes": Quantity(c.sent, "B")}),
        Step(N_("busbw factor = %(formula)s = %(factor)s"),
             {"formula": BUSBW_FACTOR_TEXT[op], "factor": outputs["busbw_factor"]}),
    ]
    if alpha_s is not None and beta is not None:
        time = c.steps * alpha_s + c.beta_bytes * beta + c.gamma_bytes * gamma_s_per_byte
        outputs["time_s"] = time
        worked.append(Step(N_("time = %(formula)s with α = %(alpha)s, β = %(beta)s s/B, "
                              "γ = %(gamma)s s/B = %(time)s"),
                           {"formula": c.formulas["time"], "alpha": Quantity(alpha_s, "s"),
                            "beta": beta, "gamma": gamma_s_per_byte,
                            "time": Quantity(time, "s")}))
    return Result(outputs, worked)
