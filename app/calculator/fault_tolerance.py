"""Fault tolerance: cluster MTBF and the checkpoint interval that wastes the least time."""

from __future__ import annotations

import math

from app.calculator.registry import N_, Output, Param, Quantity, Result, Step, bad, calculator
from app.calculator.units import SECONDS


def daly_interval(checkpoint_cost: float, mtbf: float) -> float:
    """Daly's higher-order optimum: √(2δM)·[1 + ⅓√(δ/2M) + ⅑(δ/2M)] − δ, or M when δ ≥ 2M."""
    if checkpoint_cost >= 2 * mtbf:
        return mtbf
    r = checkpoint_cost / (2 * mtbf)
    return math.sqrt(2 * checkpoint_cost * mtbf) * (1 + math.sqrt(r) / 3 + r / 9) \
        - checkpoint_cost


@calculator(
    name="checkpoint-interval",
    title="Checkpoint interval (Young / Daly)",
    area="fault-tolerance",
    summary="How often to checkpoint a long job so that checkpoint cost plus lost work is "
            "smallest, from the checkpoint cost and the cluster's mean time between failures.",
    formula="M_cluster = M_node / nodes; τ_Young = √(2·C·M); "
            "τ_Daly = √(2CM)·[1 + ⅓√(C/2M) + ⅑·C/2M] − C",
    sources=(
        "Young, A first order approximation to the optimum checkpoint interval, CACM 17(9), "
        "1974",
        "Daly, A higher order estimate of the optimum checkpoint interval for restart dumps, "
        "FGCS 22(3), 2006",
    ),
    params=(
        Param("checkpoint_cost_s", "number", "C: time to write one checkpoint.", unit=SECONDS,
              minimum=0, exclusive_minimum=True, maximum=1e9),
        Param("mtbf_s", "number", "M: mean time between failures of the whole job.",
              unit=SECONDS, default=None, minimum=0, exclusive_minimum=True, maximum=1e12),
        Param("node_mtbf_s", "number", "Mean time between failures of one node (instead of "
              "mtbf_s).", unit=SECONDS, default=None, minimum=0, exclusive_minimum=True,
              maximum=1e12),
        Param("nodes", "integer", "Nodes in the job (with node_mtbf_s).", default=None,
              minimum=1, maximum=10_000_000),
    ),
    outputs=(
        Output("cluster_mtbf_s", "Mean time between failures of the job (independent, "
               "exponentially distributed node failures).", "s"),
        Output("young_interval_s", "Young's interval √(2·C·M).", "s"),
        Output("daly_interval_s", "Daly's higher-order interval.", "s"),
        Output("waste_fraction", "Expected fraction of time lost at Young's interval, "
               "C/τ + τ/(2M) (first order)."),
    ),
)
def checkpoint_interval(
    checkpoint_cost_s: float,
    mtbf_s: float | None = None,
    node_mtbf_s: float | None = None,
    nodes: int | None = None,
) -> Result:
    """Young (1974) and Daly (2006) optimum checkpoint intervals."""
    if mtbf_s is not None and (node_mtbf_s is not None or nodes is not None):
        raise bad("mtbf_s", "give either mtbf_s, or node_mtbf_s with nodes, not both")
    if mtbf_s is None:
        if node_mtbf_s is None:
            raise bad("mtbf_s", "is required (or give node_mtbf_s and nodes)")
        if nodes is None:
            raise bad("nodes", "is required with node_mtbf_s")
        mtbf = node_mtbf_s / nodes
        first = Step(N_("M = M_node / nodes = %(node)s / %(nodes)s = %(mtbf)s"),
                     {"node": Quantity(node_mtbf_s, "s"), "nodes": nodes,
                      "mtbf": Quantity(mtbf, "s")})
    else:
        mtbf = mtbf_s
        first = Step("M = %(mtbf)s", {"mtbf": Quantity(mtbf, "s")})
    young = math.sqrt(2 * checkpoint_cost_s * mtbf)
    daly = daly_interval(checkpoint_cost_s, mtbf)
    waste = checkpoint_cost_s / young + young / (2 * mtbf)
    worked = [
        first,
        Step("τ_Young = √(2·C·M) = √(2 × %(cost)s × %(mtbf)s) = %(young)s",
             {"cost": Quantity(checkpoint_cost_s, "s"), "mtbf": Quantity(mtbf, "s"),
              "young": Quantity(young, "s")}),
        Step("τ_Daly = %(daly)s", {"daly": Quantity(daly, "s")}),
        Step(N_("time lost ≈ C/τ + τ/(2M) = %(percent)s %%"), {"percent": waste * 100}),
    ]
    return Result({"cluster_mtbf_s": mtbf, "young_interval_s": young, "daly_interval_s": daly,
                   "waste_fraction": waste}, worked)
