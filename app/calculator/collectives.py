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
byte counts are those of the busiest rank, which is what bounds the time, and
``bytes_sent_by_rank`` lists what each rank sends (trees rooted at rank 0).

``algorithm="gloo"`` is what torch 2.13's gloo backend does on CPU tensors, as recorded by
``question_bank/experiments/collective-traffic.py`` (bytes counted by the operating system
on every rank, 2 to 8 ranks, 4 KiB to 16 MiB) and as ``gloo/*.cc`` spells out: a ring
all-reduce and all-gather, a reduce-scatter that is a whole all-reduce (twice the ring's
bytes), a binomial-tree broadcast, direct all-to-all, and a reduce made of a ring
reduce-scatter plus a gather to the root. The bytes are payload: gloo also writes 144
bytes of headers and notices per message, which the recording measures apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.calculator.registry import N_, Output, Param, Quantity, Result, Step, bad, calculator
from app.calculator.units import BYTES, BYTES_PER_SECOND, SECONDS, SECONDS_PER_BYTE

OPS = ("all-reduce", "all-gather", "reduce-scatter", "broadcast", "reduce", "all-to-all")
ALGORITHMS = ("ring", "tree", "recursive-doubling", "recursive-halving", "rabenseifner",
              "scatter-allgather", "gloo")

# Which algorithms each operation supports; the first is its default.
SUPPORTED = {
    "all-reduce": ("ring", "tree", "recursive-doubling", "rabenseifner", "gloo"),
    "all-gather": ("ring", "recursive-doubling", "gloo"),
    "reduce-scatter": ("ring", "recursive-halving", "gloo"),
    "broadcast": ("ring", "tree", "scatter-allgather", "gloo"),
    "reduce": ("ring", "tree", "gloo"),
    "all-to-all": ("ring", "gloo"),
}
POWER_OF_TWO_ONLY = ("recursive-doubling", "recursive-halving", "rabenseifner")
# Beyond this many ranks bytes_sent_by_rank is left out: one number per rank is no
# longer something to read.
MAX_LISTED_RANKS = 1024
# gloo/reduce.cc: segments of at most 1 MiB, at least two per rank.
GLOO_MAX_SEGMENT_BYTES = 1 << 20

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


def _binomial_children(rank: int, p: int) -> int:
    """Children of ``rank`` in MPICH's binomial tree rooted at 0: rank + 2^k for every
    2^k below the lowest set bit of rank (every 2^k for the root) that is still a rank."""
    lowbit = rank & -rank or p
    return sum(1 for k in range(p.bit_length()) if (1 << k) < lowbit and rank + (1 << k) < p)


def _gloo_broadcast_sends(rank: int, p: int) -> int:
    """Copies ``rank`` sends in gloo's broadcast from rank 0 (gloo/broadcast.cc): in round
    i, every rank r < 2^i sends to r + 2^i when that is a rank."""
    rounds = math.ceil(math.log2(p)) if p > 1 else 0
    return sum(1 for i in range(rounds) if rank < (1 << i) and rank + (1 << i) < p)


def gloo_reduce_segments(p: int, n: float) -> int:
    """Segments gloo's reduce cuts S into (gloo/reduce.cc): 2p while a segment is at most
    1 MiB, otherwise ⌈S / 1 MiB⌉ rounded up to a multiple of p. Its ring sends all but two
    of them: the ring reduce-scatter's (p−1)/p · S up to 2p MiB, close to all of S above."""
    if n <= 2 * p * GLOO_MAX_SEGMENT_BYTES:
        return 2 * p
    return p * math.ceil(math.ceil(n / GLOO_MAX_SEGMENT_BYTES) / p)


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
                         "time": "2⌈log₂p⌉·α + 2⌈log₂p⌉·S·β + ⌈log₂p⌉·S·γ",
                         "by_rank": "S to its parent (but the root) + S per child"})
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
                         "bytes": "S", "time": "2(p−1)·α + 2(p−1)/p·S·β",
                         "by_rank": "S, but 0 for the last rank of the chain"})
        case "broadcast", "tree":
            return Cost(lg, lg * n, n if p > 1 else 0.0, lg * n, 0.0,
                        {"steps": "⌈log₂p⌉", "bytes": "⌈log₂p⌉ · S sent by the root, S received",
                         "time": "⌈log₂p⌉·(α + S·β)", "by_rank": "S per child"})
        case "broadcast", "scatter-allgather":
            largest_subtree = max((_binomial_subtree(r, p) for r in range(1, p)), default=0)
            return Cost(lg + p - 1, 2 * ring_share, largest_subtree * n / p + ring_share,
                        2 * ring_share, 0.0,
                        {"steps": "⌈log₂p⌉ + p − 1 (binomial scatter, then ring all-gather)",
                         "bytes": "2(p−1)/p · S sent by the root",
                         "time": "(⌈log₂p⌉ + p − 1)·α + 2(p−1)/p·S·β",
                         "by_rank": "(subtree − 1)/p · S + (p−1)/p · S"})
        case "reduce", "ring":
            steps = 2 * (p - 1)
            return Cost(steps, n if p > 1 else 0.0, n if p > 1 else 0.0, steps * n / p,
                        steps * n / p,
                        {"steps": "2(p−1) (chain to the root, S cut into p pipelined chunks)",
                         "bytes": "S", "time": "2(p−1)·(α + S/p·β + S/p·γ)",
                         "by_rank": "S, but 0 for the root"})
        case "reduce", "tree":
            return Cost(lg, n if p > 1 else 0.0, lg * n, lg * n, lg * n,
                        {"steps": "⌈log₂p⌉", "bytes": "S sent, ⌈log₂p⌉ · S received by the root",
                         "time": "⌈log₂p⌉·(α + S·β + S·γ)", "by_rank": "S, but 0 for the root"})
        case "all-to-all", "ring":
            # Pairwise exchange in ring order: at step k, rank i sends block i+k to rank i+k.
            return Cost(p - 1, ring_share, ring_share, ring_share, 0.0,
                        {"steps": "p−1 (pairwise exchange in ring order)",
                         "bytes": "(p−1)/p · S", "time": "(p−1)·α + (p−1)/p·S·β"})
        case _, "gloo":
            return _gloo_cost(op, p, n)
    raise AssertionError(f"unsupported pair {op}/{algorithm} passed validation")


def _gloo_cost(op: str, p: int, n: float) -> Cost:
    """What torch 2.13's gloo backend does on CPU tensors, as recorded (see module doc)."""
    lg = math.ceil(math.log2(p)) if p > 1 else 0
    ring_share = (p - 1) * n / p
    match op:
        case "all-reduce" | "reduce-scatter":
            # reduce_scatter_tensor all-reduces the whole input and keeps its own block.
            how = ("ring; each rank's chunk goes as ≥ 2 segments of ≤ 1 MiB"
                   if op == "all-reduce" else "a whole ring all-reduce, then each rank "
                   "keeps its block")
            return Cost(2 * (p - 1), 2 * ring_share, 2 * ring_share, 2 * ring_share,
                        ring_share,
                        {"steps": f"2(p−1) ({how})", "bytes": "2(p−1)/p · S",
                         "time": "2(p−1)·α + 2(p−1)/p·S·β + (p−1)/p·S·γ"})
        case "all-gather":
            return Cost(p - 1, ring_share, ring_share, ring_share, 0.0,
                        {"steps": "p−1 (ring, each rank sending to the next)",
                         "bytes": "(p−1)/p · S", "time": "(p−1)·α + (p−1)/p·S·β"})
        case "all-to-all":
            return Cost(p - 1, ring_share, ring_share, ring_share, 0.0,
                        {"steps": "p−1 (every rank sends each block straight to its rank)",
                         "bytes": "(p−1)/p · S", "time": "(p−1)·α + (p−1)/p·S·β"})
        case "broadcast":
            return Cost(lg, lg * n, n if p > 1 else 0.0, lg * n, 0.0,
                        {"steps": "⌈log₂p⌉ (binomial tree: in round i, rank r < 2^i sends "
                                  "to r + 2^i)",
                         "bytes": "⌈log₂p⌉ · S sent by the root, S received",
                         "time": "⌈log₂p⌉·(α + S·β)",
                         "by_rank": "S for every round i with r < 2^i and r + 2^i < p"})
        case "reduce":
            segments = gloo_reduce_segments(p, n)
            ring = (segments - 2) / segments * n if p > 1 else 0.0
            block = n / p if p > 1 else 0.0
            share = "(p−1)/p · S" if segments == 2 * p else f"(1 − 2/{segments}) · S"
            # The root, receiving p − 1 blocks on top of its ring share, bounds the time.
            return Cost(p if p > 1 else 0, ring + block, ring + (p - 1) * block,
                        ring + (p - 1) * block, ring,
                        {"steps": f"p (ring reduce-scatter in {segments} segments, then "
                                  "every rank sends its block to the root)",
                         "bytes": f"{share} + S/p (every rank but the root)",
                         "time": f"p·α + ({share} + (p−1)/p · S)·β + {share}·γ",
                         "by_rank": f"{share}, plus S/p for every rank but the root"})
    raise AssertionError(f"unsupported pair {op}/gloo passed validation")


def sent_by_rank(op: str, algorithm: str, p: int, n: float) -> list[float]:
    """Bytes each rank sends, rank 0 first (the root of trees, chains and gloo's ops)."""
    if p < 2:
        return [0.0]
    match op, algorithm:
        case "all-reduce", "tree":
            # Binomial reduce (every rank but the root sends S once), then broadcast.
            return [float(((r != 0) + _binomial_children(r, p)) * n) for r in range(p)]
        case "broadcast", "ring":
            return [float(n)] * (p - 1) + [0.0]  # the chain's last rank sends nothing
        case "broadcast", "tree":
            return [float(_binomial_children(r, p) * n) for r in range(p)]
        case "broadcast", "scatter-allgather":
            # A rank passes on its subtree's blocks but its own, then the ring all-gather.
            subtree = [p] + [_binomial_subtree(r, p) for r in range(1, p)]
            return [(subtree[r] - 1) * n / p + (p - 1) * n / p for r in range(p)]
        case "reduce", "ring" | "tree":
            return [0.0] + [float(n)] * (p - 1)
        case "broadcast", "gloo":
            return [float(_gloo_broadcast_sends(r, p) * n) for r in range(p)]
        case "reduce", "gloo":
            sent = cost(op, algorithm, p, n).sent  # by every rank but the root
            return [sent - n / p] + [sent] * (p - 1)
    return [float(cost(op, algorithm, p, n).sent)] * p


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
              "some algorithms (recursive ones need a power-of-two world size). gloo: what "
              "torch 2.13's gloo backend does on CPU tensors, as measured.",
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
        Output("bytes_sent_by_rank", "Bytes each rank sends, rank 0 (the root) first; "
               "present up to 1024 ranks.", "B"),
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
    outputs: dict[str, float | int | list[float]] = {
        "steps": c.steps,
        "bytes_sent_per_rank": c.sent,
        "bytes_received_per_rank": c.received,
    }
    by_rank = sent_by_rank(op, algorithm, p, n) if p <= MAX_LISTED_RANKS else None
    if by_rank is not None:
        outputs["bytes_sent_by_rank"] = by_rank
    outputs["busbw_factor"] = busbw_factor(op, p)
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
    if by_rank is not None and min(by_rank) != max(by_rank):
        worked.insert(3, Step(N_("bytes sent by each rank = %(formula)s, from %(least)s to "
                                 "%(most)s"),
                              {"formula": c.formulas["by_rank"],
                               "least": Quantity(min(by_rank), "B"),
                               "most": Quantity(max(by_rank), "B")}))
    if alpha_s is not None and beta is not None:
        time = c.steps * alpha_s + c.beta_bytes * beta + c.gamma_bytes * gamma_s_per_byte
        outputs["time_s"] = time
        worked.append(Step(N_("time = %(formula)s with α = %(alpha)s, β = %(beta)s s/B, "
                              "γ = %(gamma)s s/B = %(time)s"),
                           {"formula": c.formulas["time"], "alpha": Quantity(alpha_s, "s"),
                            "beta": beta, "gamma": gamma_s_per_byte,
                            "time": Quantity(time, "s")}))
    return Result(outputs, worked)
