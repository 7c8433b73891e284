"""Memory pictures: stacked bars per device for ZeRO stages 0-3, and activations under
each recomputation policy.

Each bar is one run of the calculator with only the stage (or the recomputation)
changed, so the numbers written on a bar are the calculator's own.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.calculator import get
from app.calculator.memory import PRECISION_TEXT
from app.calculator.registry import Evaluation
from app.i18n import N_, _, ngettext, pgettext
from app.pictures.common import (
    BLUE,
    GREEN,
    INK,
    ORANGE,
    PURPLE,
    TEXT_ON,
    Figure,
    Table,
    legend_positions,
    nice_ticks,
    number,
    quantity,
    r,
    text_width,
)

# (key, label, colour, hatch): the hatch tells the parts apart without colour.
PARTS = (
    ("param_bytes", N_("Parameters"), BLUE, ""),
    ("grad_bytes", N_("Gradients"), ORANGE, "diagonal"),
    ("optimizer_bytes", N_("Optimizer state"), GREEN, "dots"),
    ("activation_bytes", N_("Activations"), PURPLE, "cross"),
)
STAGE_LABELS = {0: N_("Stage 0 (DDP)"), 1: N_("Stage 1"), 2: N_("Stage 2"),
                3: N_("Stage 3 (FSDP)")}
RECOMPUTE_LABELS = {"none": N_("No recomputation"), "selective": N_("Selective"),
                    "full": N_("Full recomputation")}
GB, GIB = 1e9, 2.0**30


@dataclass
class Segment:
    part: str
    label: str
    x: float
    width: float
    value: float
    colour: str
    hatch: str
    text: str  # written inside when it fits
    text_colour: str


@dataclass
class Bar:
    key: str  # the stage or the recomputation policy
    label: str
    y: float
    height: float
    segments: list[Segment]
    total: float
    total_text: str
    chosen: bool


@dataclass
class Marker:
    x: float
    label: str
    value: float


@dataclass
class BarsBody:
    bars: list[Bar]
    legend: list[tuple[float, float, str, str, str]]  # (x, y, label, colour, hatch)
    ticks: list[tuple[float, str]]
    x0: float
    top: float
    bottom: float
    marker: Marker | None
    lines: list[tuple[float, str]]
    axis_label: str = "GB"
    width: float = 640.0


def gb_and_gib(value: float) -> str:
    """Always both, as the issue asks: ``12.5 GB / 11.64 GiB``."""
    return f"{number(value / GB)} GB / {number(value / GIB)} GiB"


def _bars(rows: list[tuple[str, str, dict[str, float], bool]], parts: list[tuple],
          marker: tuple[str, float] | None, notes: list[str]) -> tuple[BarsBody, float]:
    x0 = r(max(text_width(label) for _k, label, _v, _c in rows) + 22)
    width, bar_h, gap = 330.0, 26.0, 14.0
    totals = [sum(values[key] for key, *_rest in parts) for _k, _l, values, _c in rows]
    scale_top = max(totals + ([marker[1]] if marker else [])) or 1.0
    ticks = nice_ticks(scale_top / GB, 4)
    top_value = ticks[-1] * GB

    def xpos(value: float) -> float:
        return r(x0 + width * value / top_value)

    labels = [_(label) for _key, label, _colour, _hatch in parts]
    legend = [(x, 16 + 18 * line, label, colour, hatch) for (x, line), label,
              (_k, _l, colour, hatch) in zip(legend_positions(labels), labels, parts,
                                             strict=True)]
    y = legend[-1][1] + 24
    bars = []
    for (key, label, values, chosen), total in zip(rows, totals, strict=True):
        segments = []
        start = 0.0
        for part, part_label, colour, hatch in parts:
            value = values[part]
            x, end = xpos(start), xpos(start + value)
            # A part's size inside it when it fits and the bar has several parts.
            text = number(value / GB, 3) if end - x >= 38 and len(parts) > 1 else ""
            segments.append(Segment(part, _(part_label), x, r(end - x), value, colour, hatch,
                                    text, TEXT_ON.get(colour, INK)))
            start += value
        bars.append(Bar(key, label, y, bar_h, segments, total, gb_and_gib(total), chosen))
        y += bar_h + gap
    axis_y = y
    tick_marks = [(xpos(t * GB), number(t)) for t in ticks]
    body_marker = None
    if marker:
        body_marker = Marker(xpos(marker[1]), marker[0], marker[1])
    lines = []
    y += 50 if marker else 34
    for note in notes:
        lines.append((y, note))
        y += 18
    body = BarsBody(bars, legend, tick_marks, x0, legend[-1][1] + 14, axis_y, body_marker,
                    lines, width=max(640.0, x0 + width + 140))
    return body, y


def model_memory_figure(evaluation: Evaluation, prefix: str,
                        activation_bytes: float | None = None) -> Figure:
    """Parameters, gradients and optimizer state per device at each ZeRO stage."""
    params = evaluation.params
    calculator = get("model-memory")
    parts = list(PARTS[:3]) + ([PARTS[3]] if activation_bytes else [])
    rows = []
    for stage in range(4):
        outputs = calculator.evaluate({**params, "zero_stage": stage}).outputs
        values = {key: outputs[key] for key, *_rest in PARTS[:3]}
        values["activation_bytes"] = activation_bytes or 0.0
        rows.append((str(stage), _(STAGE_LABELS[stage]), values,
                     stage == params["zero_stage"]))
    notes = [_("Ψ = %(params)s parameters, %(precision)s, %(optimizer)s, N_d = %(dp)s.",
               params=number(params["params"]), precision=_(PRECISION_TEXT[params["precision"]]),
               optimizer=params["optimizer"], dp=params["dp"])]
    if activation_bytes:
        notes.append(_("Activations (%(size)s) are the same at every stage: ZeRO does not "
                       "shard them.", size=gb_and_gib(activation_bytes)))
    marker = None
    if params.get("device_bytes"):
        marker = (_("device memory %(size)s", size=quantity(params["device_bytes"], "B")),
                  params["device_bytes"])
    body, height = _bars(rows, parts, marker, notes)
    title = _("Memory per device for ZeRO stages 0–3 at N_d = %(dp)s", dp=params["dp"])
    headers = [pgettext("ZeRO stage", "Stage"), *(_(label) for _k, label, *_rest in parts),
               _("Total")]
    table = Table(headers,
                  [[bar.label] + [gb_and_gib(s.value) for s in bar.segments]
                   + [bar.total_text] for bar in body.bars])
    desc = "; ".join(f"{bar.label}: {bar.total_text}" for bar in body.bars) + ". " + \
        " ".join(notes)
    return Figure("stacked-bars", f"{prefix}-memory", title, desc, body.width, height, body, table,
                  notes)


def activation_figure(evaluation: Evaluation, prefix: str) -> Figure:
    """Activation memory under no, selective and full recomputation, other inputs equal."""
    params = evaluation.params
    calculator = get("activation-memory")
    rows = []
    for policy in ("none", "selective", "full"):
        outputs = calculator.evaluate({**params, "recompute": policy}).outputs
        rows.append((policy, _(RECOMPUTE_LABELS[policy]),
                     {"activation_bytes": outputs["total_bytes"]},
                     policy == params["recompute"]))
    notes = [ngettext("%(num)d layer, s = %(s)s, b = %(b)s, h = %(h)s, a = %(a)s, t = %(t)s.",
                      "%(num)d layers, s = %(s)s, b = %(b)s, h = %(h)s, a = %(a)s, t = %(t)s.",
                      params["layers"], s=params["seq_len"], b=params["micro_batch"],
                      h=params["hidden"], a=params["heads"], t=params["tp"])]
    body, height = _bars(rows, [PARTS[3]], None, notes)
    title = _("Activation memory per device by recomputation policy")
    table = Table([_("Recomputation"), _("Activations")],
                  [[bar.label, bar.total_text] for bar in body.bars])
    desc = "; ".join(f"{bar.label}: {bar.total_text}" for bar in body.bars) + ". " + \
        " ".join(notes)
    return Figure("stacked-bars", f"{prefix}-activations", title, desc, body.width, height, body,
                  table, notes)
