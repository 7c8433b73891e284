"""Pictures of recorded experiments: what torch really did, beside what the calculator says.

Each builder reads an experiment's recorded ``summary`` (never a formula for the measured
side) and returns :class:`Figure` records drawn by the same templates as the calculators'
pictures: bars of bytes per rank or per implementation, and a pipeline schedule as it ran.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.calculator import run
from app.i18n import _
from app.pictures.common import BLUE, ORANGE, Figure, Table, number, quantity, r, text_width
from app.pictures.pipeline import Op, schedule_figure
from app.pictures.progress import TopicBar, TopicBarsBody

MiB = 2**20


def value_bars(rows: list[tuple[str, float, str]], figure_id: str, title: str,
               headers: list[str], colour: str = BLUE, details: list[str] | None = None
               ) -> Figure:
    """Horizontal bars of ``(label, value, text)`` on one scale, the text after each bar;
    the table under the picture gives ``details`` (or the same texts)."""
    x0 = r(max((text_width(label, 12) for label, *_rest in rows), default=60) + 16)
    full, top = 340.0, max((value for _l, value, _t in rows), default=0.0) or 1.0
    bars, y = [], 8.0
    for label, value, text in rows:
        bars.append(TopicBar(label, y, r(full * value / top), value / top, text, None))
        y += 28
    ticks = [(r(x0 + full * t), quantity(top * t, "B")) for t in (0, 0.5, 1)]
    table = Table(headers, [[label, detail] for (label, _v, _t), detail in zip(
        rows, details or [text for _l, _v, text in rows], strict=True)])
    desc = "; ".join(f"{label}: {text}" for label, _v, text in rows)
    room = max((text_width(text, 12) for _l, _v, text in rows), default=100) + 16
    return Figure("topic-bars", figure_id, title, desc, r(x0 + full + room), y + 22,
                  TopicBarsBody(bars, x0, full, ticks, y, colour), table)


def _collective_traffic(summary: dict[str, Any]) -> list[Figure]:
    """A broadcast's bytes per rank on 8 ranks (the binomial tree), and each operation's
    rank 0 against the calculator's gloo algorithm, at 4 MiB."""
    size, world = 4 * MiB, 8
    measured = summary["bytes_by_rank_up_to_4_MiB"]
    expected = run("collective", op="broadcast", world_size=world, message_bytes=size,
                   algorithm="gloo")["bytes_sent_by_rank"]
    rows = []
    for rank, formula in enumerate(measured["broadcast"][str(world)]["sent"]):
        sent = _linear(formula, size)
        rows.append((_("rank %(n)s", n=rank), sent, _(
            "%(measured)s measured; calculator %(expected)s", measured=quantity(sent, "B"),
            expected=quantity(expected[rank], "B"))))
    broadcast = value_bars(rows, "recorded-broadcast", _(
        "Bytes each rank sent in a broadcast of 4 MiB on 8 ranks (gloo, measured)"),
        [_("Rank"), _("Bytes sent")])
    rows = []
    for op, calls in (("all-reduce", "all_reduce"), ("all-gather", "all_gather_into_tensor"),
                      ("reduce-scatter", "reduce_scatter_tensor"), ("broadcast", "broadcast"),
                      ("all-to-all", "all_to_all_single")):
        sent = _linear(measured[calls][str(world)]["sent"][0], size)
        model = run("collective", op=op, world_size=world, message_bytes=size,
                    algorithm="gloo")["bytes_sent_by_rank"][0]
        rows.append((op, sent, _("%(measured)s measured; calculator %(expected)s",
                                 measured=quantity(sent, "B"),
                                 expected=quantity(model, "B"))))
    ops = value_bars(rows, "recorded-collectives", _(
        "Bytes rank 0 sent per collective of 4 MiB on 8 ranks (gloo, measured)"),
        [_("Operation"), _("Bytes sent")], ORANGE)
    return [broadcast, ops]


def _linear(formula: str, size: int) -> float:
    """The recorded fit "3/2·S + 1728" (exact for every size up to 4 MiB) at ``size``."""
    share, overhead = formula.split("·S + ")
    numerator, _slash, denominator = share.partition("/")
    return int(numerator) * size / int(denominator or 1) + int(overhead)


IMPLEMENTATIONS = (("ddp", "DDP"), ("ddp-bucket-view", "DDP, gradient_as_bucket_view"),
                   ("zero1", "ZeroRedundancyOptimizer"), ("fsdp2-reshard", "FSDP2"))


def _zero_memory(summary: dict[str, Any]) -> list[Figure]:
    """Bytes rank 0 holds after a step, by implementation (Adam, fp32, 4 ranks), and the
    uneven model's per-rank optimizer state under ZeroRedundancyOptimizer."""
    cases = summary["world_size_4"]
    rows, details = [], []
    for key, label in IMPLEMENTATIONS:
        case = cases.get(f"even/{key}/adam/fp32")
        if case is None:
            continue
        parts = case["param_bytes"][0] + case["grad_bytes"][0] + case["state_bytes"][0]
        held = case.get("total_unique_bytes", [parts])[0]  # DDP's bucket copy counted
        rows.append((label, held, quantity(held, "B")))
        details.append(_("%(total)s: parameters %(p)s, gradients %(g)s, optimizer state "
                         "%(s)s, other (DDP's bucket) %(o)s", total=quantity(held, "B"),
                         p=quantity(case["param_bytes"][0], "B"),
                         g=quantity(case["grad_bytes"][0], "B"),
                         s=quantity(case["state_bytes"][0], "B"),
                         o=quantity(held - parts, "B")))
    even = value_bars(rows, "recorded-memory", _(
        "Bytes rank 0 holds after one step, 4 ranks, Adam, fp32 (measured)"),
        [_("Implementation"), _("Bytes held")], details=details)
    uneven = cases.get("uneven/zero1/adam/fp32")
    if uneven is None:
        return [even]
    share = sum(uneven["state_bytes"]) / len(uneven["state_bytes"])
    rows = [(_("rank %(n)s", n=rank), held, _("%(held)s (%(ratio)s × an even share)",
                                                  held=quantity(held, "B"),
                                                  ratio=number(held / share, 3)))
            for rank, held in enumerate(uneven["state_bytes"])]
    return [even, value_bars(rows, "recorded-zero1-uneven", _(
        "Adam state per rank under ZeroRedundancyOptimizer, model with one large layer "
        "(measured)"), [_("Rank"), _("Optimizer state")], ORANGE)]


def _pipeline_schedules(summary: dict[str, Any]) -> list[Figure]:
    """Two schedules as torch ran them on 4 ranks and 8 micro-batches."""
    figures = []
    for key in ("1f1b_p4_m8", "interleaved_p4_m8"):
        case = summary.get(key)
        if case is None:
            continue
        p, m, v = int(case["stages"]), int(case["microbatches"]), int(case["stages_per_rank"])
        grid: list[list[Op | None]] = [[None if a is None else _action(a, p) for a in row]
                                       for row in case["timeline"]]
        slots, idle = case["slots_per_stage"], case["idle_slots_per_stage"][0]
        outputs = {"bubble_fraction_of_total": idle / slots,
                   "bubble_over_ideal": idle / (slots - idle),
                   "inflight_microbatches": case["max_stashed_chunks"][0] / v}
        figures.append(schedule_figure(grid, case["schedule"], p, m, v, outputs,
                                       f"recorded-{case['schedule']}", _(
            "As torch ran it: %(schedule)s, %(p)s ranks, %(m)s micro-batches",
            schedule=case["schedule"], p=p, m=m)))
    return figures


def _action(action: str, ranks: int) -> Op:
    """torch's '5B2' (stage 5, backward, micro-batch 2) as ('B', 2, chunk)."""
    kind = "F" if "F" in action else "B"
    stage, microbatch = action.split(kind)
    return kind, int(microbatch), int(stage) // ranks  # virtual stage s sits on rank s % p


def _ddp_communication_volume(summary: dict[str, Any]) -> list[Figure]:
    """Bytes a rank sends per steady DDP iteration, by variant, against the ring."""
    rows = []
    grad_bytes = summary["grad_bytes"]
    for world in (2, 4):
        ring = run("collective", op="all-reduce", world_size=world,
                   message_bytes=grad_bytes)["bytes_sent_per_rank"]
        for variant, label in (("allreduce", _("all-reduce")),
                               ("fp16_compress_hook", _("fp16 hook"))):
            case = summary[f"world_size_{world}"]["variants"].get(variant)
            if case is None:
                continue
            sent = case["steady"]["sent"][0]
            expected = ring / 2 if variant == "fp16_compress_hook" else ring
            rows.append((_("%(n)s ranks, %(variant)s", n=world, variant=label), sent, _(
                "%(measured)s measured; ring %(expected)s", measured=quantity(sent, "B"),
                expected=quantity(expected, "B"))))
    return [value_bars(rows, "recorded-ddp", _(
        "Bytes rank 0 sends per DDP iteration, 4 MiB of gradients (measured)"),
        [_("Case"), _("Bytes sent")])]


BUILDERS: dict[str, Callable[[dict[str, Any]], list[Figure]]] = {
    "collective-traffic": _collective_traffic,
    "zero-memory": _zero_memory,
    "pipeline-schedules": _pipeline_schedules,
    "ddp-communication-volume": _ddp_communication_volume,
}


def for_experiment(name: str, summary: dict[str, Any]) -> list[Figure]:
    """The pictures of a recording (none for those a table already says best)."""
    builder = BUILDERS.get(name)
    return builder(summary) if builder else []
