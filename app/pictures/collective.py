"""Collective pictures: the steps of one algorithm, the algorithms side by side, and the
traffic and α-β time of each over world sizes 2 to 1024.

Every number written comes from the ``collective`` calculator, run again with only the
algorithm (or the world size) changed; the geometry (who sends which chunk to whom at
each step) follows the algorithms the calculator's costs describe.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from app.calculator import get
from app.calculator.collectives import POWER_OF_TWO_ONLY, SUPPORTED
from app.calculator.registry import Evaluation
from app.i18n import N_, _
from app.pictures.common import (
    BLACK,
    BLUE,
    GREEN,
    INK,
    ORANGE,
    PURPLE,
    SKY_BLUE,
    TEXT_ON,
    VERMILLION,
    Figure,
    Table,
    arrow_head,
    legend_positions,
    nice_ticks,
    quantity,
    r,
    short_bytes,
)

ALGORITHM_NAMES = {
    "ring": N_("ring"),
    "tree": N_("tree"),
    "recursive-doubling": N_("recursive doubling"),
    "rabenseifner": N_("Rabenseifner"),
    "recursive-halving": N_("recursive halving"),
    "scatter-allgather": N_("scatter + all-gather"),
    "gloo": N_("gloo (measured)"),
}
# Colour, marker and dash per algorithm: any one of the three tells the lines apart.
STYLES = {
    "ring": (BLUE, "circle", ""),
    "tree": (ORANGE, "square", "7 4"),
    "recursive-doubling": (GREEN, "triangle", "2 3"),
    "rabenseifner": (PURPLE, "diamond", "9 3 2 3"),
    "recursive-halving": (SKY_BLUE, "triangle-down", "4 2"),
    "scatter-allgather": (VERMILLION, "cross", "1 2"),
    "gloo": (BLACK, "x", "6 2 1 2"),
}
CHUNK_COLOURS = (BLUE, ORANGE, GREEN, VERMILLION, SKY_BLUE, PURPLE, "#F0E442", "#000000")
CHUNK_LETTERS = "ABCDEFGH"
MAX_DRAWN_RANKS = 8  # beyond this the ring is drawn as a summary
ASSUMED_ALPHA_S = 5e-6
ASSUMED_BANDWIDTH = 12.5e9  # 100 Gbit/s
DRAWN_STEPS = {("all-reduce", "ring"), ("reduce-scatter", "ring"), ("all-gather", "ring"),
               ("all-reduce", "tree"), ("all-reduce", "recursive-doubling"),
               ("all-gather", "recursive-doubling")}

PANEL_W, PANEL_H, RING_R, NODE_R = 128, 172, 42, 10
ARROW = "#3d4650"
HEADER_H = 24


def algorithm_name(algorithm: str) -> str:
    return _(ALGORITHM_NAMES.get(algorithm, algorithm))


# ------------------------------------------------------------------------ steps geometry


@dataclass
class Node:
    rank: int | None  # None: the gap of a summarised ring
    x: float
    y: float
    label: str


@dataclass
class Transfer:
    src: int
    dst: int
    chunk: str  # the chunk letter, or "" when the whole buffer moves
    path: str
    heads: list[str]
    tag: tuple[float, float] | None = None
    colour: str = "#5b6470"  # the arrow
    tag_colour: str = ""  # the chunk's colour (its letter says the same)
    dashed: bool = False

    @property
    def tag_text_colour(self) -> str:
        return TEXT_ON.get(self.tag_colour, INK)


@dataclass
class Panel:
    index: int  # 1-based step number over the whole collective
    phase: str
    x: float
    y: float
    title: str
    caption: str
    bytes_per_sender: float
    nodes: list[Node]
    transfers: list[Transfer]
    centre: tuple[float, float]
    radius: float
    node_r: float = NODE_R


@dataclass
class Line:
    x: float
    y: float
    text: str
    value: float | None = None  # the calculator's number, for data-value
    bold: bool = False


@dataclass
class StepsBody:
    algorithm: str
    op: str
    world_size: int
    summary: bool
    panels: list[Panel]
    lines: list[Line] = field(default_factory=list)


def _positions(n: int, cx: float, cy: float, radius: float) -> list[tuple[float, float]]:
    return [(cx + radius * math.cos(-math.pi / 2 + 2 * math.pi * i / n),
             cy + radius * math.sin(-math.pi / 2 + 2 * math.pi * i / n)) for i in range(n)]


def _arc(i: int, n: int, cx: float, cy: float, radius: float, node_r: float
         ) -> tuple[str, str, tuple[float, float]]:
    """The clockwise arc from slot i to slot i+1 on the ring: path, arrow head, tag spot."""
    gap = (node_r + 3) / radius
    start = -math.pi / 2 + 2 * math.pi * i / n + gap
    end = -math.pi / 2 + 2 * math.pi * (i + 1) / n - gap
    x1, y1 = cx + radius * math.cos(start), cy + radius * math.sin(start)
    x2, y2 = cx + radius * math.cos(end), cy + radius * math.sin(end)
    large = 1 if end - start > math.pi else 0
    path = f"M{r(x1)},{r(y1)} A{r(radius)},{r(radius)} 0 {large} 1 {r(x2)},{r(y2)}"
    head = arrow_head(x2, y2, -math.sin(end), math.cos(end))
    middle = (start + end) / 2
    tag = (cx + (radius + 15) * math.cos(middle), cy + (radius + 15) * math.sin(middle))
    return path, head, tag


def _chord(a: tuple[float, float], b: tuple[float, float], node_r: float, two_way: bool
           ) -> tuple[str, list[str]]:
    dx, dy = b[0] - a[0], b[1] - a[1]
    length = math.hypot(dx, dy) or 1.0
    ux, uy = dx / length, dy / length
    x1, y1 = a[0] + ux * (node_r + 2), a[1] + uy * (node_r + 2)
    x2, y2 = b[0] - ux * (node_r + 2), b[1] - uy * (node_r + 2)
    heads = [arrow_head(x2, y2, ux, uy)]
    if two_way:
        heads.append(arrow_head(x1, y1, -ux, -uy))
    return f"M{r(x1)},{r(y1)} L{r(x2)},{r(y2)}", heads


def ring_transfers(op: str, n: int) -> list[tuple[str, list[tuple[int, int, int]]]]:
    """(phase, [(sender, receiver, chunk)]) per step of a ring collective on n ranks.

    Chunk c is the c-th of n equal pieces of the buffer; rank i ends up owning chunk i
    after the reduce-scatter, and every chunk after the all-gather.
    """
    steps: list[tuple[str, list[tuple[int, int, int]]]] = []
    if op in ("all-reduce", "reduce-scatter"):
        steps += [("reduce-scatter", [(i, (i + 1) % n, (i - 1 - s) % n) for i in range(n)])
                  for s in range(n - 1)]
    if op in ("all-reduce", "all-gather"):
        steps += [("all-gather", [(i, (i + 1) % n, (i - s) % n) for i in range(n)])
                  for s in range(n - 1)]
    return steps


def tree_transfers(n: int) -> list[tuple[str, list[tuple[int, int, int]]]]:
    """Binomial-tree reduce to rank 0, then broadcast from rank 0 (MPICH's trees)."""
    levels = math.ceil(math.log2(n)) if n > 1 else 0
    steps: list[tuple[str, list[tuple[int, int, int]]]] = []
    for k in range(levels):
        mask = 1 << k
        steps.append(("reduce", [(rank, rank - mask, -1) for rank in range(n)
                                 if rank % (2 * mask) == mask]))
    for k in reversed(range(levels)):
        mask = 1 << k
        steps.append(("broadcast", [(rank, rank + mask, -1) for rank in range(n)
                                    if rank % (2 * mask) == 0 and rank + mask < n]))
    return steps


def doubling_transfers(n: int) -> list[tuple[str, list[tuple[int, int, int]]]]:
    """Recursive doubling: at step k, rank i and rank i XOR 2^k exchange (both ways)."""
    levels = int(math.log2(n)) if n > 1 else 0
    return [("exchange", [(i, i ^ (1 << k), k) for i in range(n) if i < i ^ (1 << k)])
            for k in range(levels)]


def step_plan(op: str, algorithm: str, n: int, size: float
              ) -> list[tuple[str, list[tuple[int, int, int]], float]]:
    """Each step: its phase, its transfers and the bytes one sender sends in it."""
    if algorithm == "ring":
        return [(phase, moves, size / n) for phase, moves in ring_transfers(op, n)]
    if algorithm == "tree":
        return [(phase, moves, size) for phase, moves in tree_transfers(n)]
    if op == "all-gather":  # recursive doubling: the block exchanged doubles every step
        return [(phase, moves, size / n * 2 ** k)
                for k, (phase, moves) in enumerate(doubling_transfers(n))]
    return [(phase, moves, size) for phase, moves in doubling_transfers(n)]


def _phase_header(op: str, algorithm: str, phase: str, chunk: float) -> str:
    size = short_bytes(chunk)
    if algorithm == "ring":
        if phase == "reduce-scatter":
            return _("Reduce-scatter: send one chunk (S/p = %(size)s), add the one received",
                     size=size)
        if op == "all-gather":
            return _("All-gather: pass a block of S/p = %(size)s to the next rank", size=size)
        return _("All-gather: pass on the reduced chunk last received (S/p = %(size)s)",
                 size=size)
    if phase == "reduce":
        return _("Reduce to rank 0 along a binomial tree: each sender passes S = %(size)s",
                 size=size)
    if phase == "broadcast":
        return _("Broadcast from rank 0 along the same tree: S = %(size)s per sender",
                 size=size)
    if op == "all-gather":
        return _("Recursive doubling: partners swap all they hold; the block doubles")
    return _("Recursive doubling: partners swap S = %(size)s and both add", size=size)


PHASE_NAMES = {"reduce-scatter": N_("Reduce-scatter"), "all-gather": N_("All-gather"),
               "reduce": N_("Reduce"), "broadcast": N_("Broadcast"),
               "exchange": N_("Exchange")}


def steps_figure(evaluation: Evaluation, prefix: str) -> Figure | None:
    """Small multiples, one ring of ranks per step; a summary beyond 8 ranks."""
    params, outputs = evaluation.params, evaluation.outputs
    op, algorithm, n = params["op"], params["algorithm"], params["world_size"]
    size = params["message_bytes"]
    if (op, algorithm) not in DRAWN_STEPS or n < 2:
        return None
    if n > MAX_DRAWN_RANKS:
        return _ring_summary(evaluation, prefix) if algorithm == "ring" else None
    plan = step_plan(op, algorithm, n, size)
    phases = list(dict.fromkeys(phase for phase, _moves, _b in plan))
    rows = [[(i, step) for i, step in enumerate(plan) if step[0] == phase] for phase in phases]
    columns = max(len(row) for row in rows)
    width = max(20 + columns * PANEL_W, 600)
    panels: list[Panel] = []
    lines: list[Line] = []
    y = 8.0
    for row in rows:
        phase, _moves, chunk = row[0][1]
        lines.append(Line(10, y + 15, _phase_header(op, algorithm, phase, chunk), bold=True))
        y += HEADER_H
        for column, (index, (phase, moves, sent)) in enumerate(row):
            panels.append(_panel(index + 1, phase, moves, sent, n, 10 + column * PANEL_W, y,
                                 algorithm))
        y += PANEL_H
    steps, total = outputs["steps"], outputs["bytes_sent_per_rank"]
    y += 6
    if algorithm == "ring":
        text = _("%(steps)s steps × %(chunk)s = %(total)s sent by each rank",
                 steps=steps, chunk=short_bytes(size / n), total=quantity(total, "B"))
    elif algorithm == "tree":
        text = _("%(steps)s steps; the busiest rank (the root) sends %(total)s",
                 steps=steps, total=quantity(total, "B"))
    else:
        text = _("%(steps)s steps; each rank sends %(total)s", steps=steps,
                 total=quantity(total, "B"))
    lines.append(Line(10, y + 14, text, value=total, bold=True))
    y += 22
    if algorithm == "ring":
        lines.append(Line(10, y + 12, _("Letters name the chunk each rank sends; numbers in "
                                        "the circles are ranks.")))
        y += 20
    name = algorithm_name(algorithm)
    title = _("%(op)s with the %(algorithm)s algorithm on %(n)s ranks, step by step",
              op=op, algorithm=name, n=n)
    table = Table([_("Step"), _("Phase"), _("Sends"), _("Bytes per sender")],
                  [[str(p.index), _(PHASE_NAMES[p.phase]),
                    ", ".join(f"{t.src}→{t.dst}{' ' + t.chunk if t.chunk else ''}"
                              for t in p.transfers), short_bytes(p.bytes_per_sender)]
                   for p in panels])
    desc = _("%(n)s ranks, %(steps)s steps of %(op)s with the %(algorithm)s algorithm.",
             n=n, steps=steps, op=op, algorithm=name) + " " + text + "."
    return Figure("steps", f"{prefix}-steps", title, desc, width, y + 4,
                  StepsBody(algorithm, op, n, False, panels, lines), table)


def _panel(index: int, phase: str, moves: list[tuple[int, int, int]], sent: float, n: int,
           x: float, y: float, algorithm: str) -> Panel:
    cx, cy = x + PANEL_W / 2, y + 82
    spots = _positions(n, cx, cy, RING_R)
    nodes = [Node(i, px, py, str(i)) for i, (px, py) in enumerate(spots)]
    transfers = []
    for src, dst, chunk in moves:
        if algorithm == "ring":
            path, head, tag = _arc(src, n, cx, cy, RING_R, NODE_R)
            colour = CHUNK_COLOURS[chunk]
            transfers.append(Transfer(src, dst, CHUNK_LETTERS[chunk], path, [head], tag,
                                      ARROW, colour))
        else:
            path, heads = _chord(spots[src], spots[dst], NODE_R, phase == "exchange")
            transfers.append(Transfer(src, dst, "", path, heads, None, ARROW))
    return Panel(index, phase, x, y, _("Step %(n)s", n=index), short_bytes(sent), sent,
                 nodes, transfers, (cx, cy), RING_R)


def _ring_summary(evaluation: Evaluation, prefix: str) -> Figure:
    """A ring too large to draw rank by rank: seven ranks, a gap, and the numbers."""
    params, outputs = evaluation.params, evaluation.outputs
    op, n, size = params["op"], params["world_size"], params["message_bytes"]
    steps, total = outputs["steps"], outputs["bytes_sent_per_rank"]
    radius, cx, cy = 70.0, 100.0, 100.0
    shown: list[int | None] = [0, 1, 2, 3, None, n - 3, n - 2, n - 1]
    spots = _positions(len(shown), cx, cy, radius)
    nodes = [Node(rank, px, py, "…" if rank is None else str(rank))
             for rank, (px, py) in zip(shown, spots, strict=True)]
    transfers = []
    for slot, rank in enumerate(shown):
        following = shown[(slot + 1) % len(shown)]
        path, head, _tag = _arc(slot, len(shown), cx, cy, radius, 14)
        transfers.append(Transfer(rank if rank is not None else -1,
                                  following if following is not None else -1, "", path,
                                  [head], None, ARROW, "",
                                  dashed=rank is None or following is None))
    panel = Panel(1, "summary", 0, 0, "", "", size / n, nodes, transfers, (cx, cy), radius,
                  14)
    phases = len(ring_transfers(op, 2))
    lines = [
        Line(215, 40, _("%(n)s ranks: too many to draw one by one", n=n), bold=True),
        Line(215, 66, _("%(steps)s steps (%(per_phase)s per phase, %(phases)s phases)",
                        steps=steps, per_phase=n - 1, phases=phases)),
        Line(215, 90, _("Reduce-scatter step k (from 1): rank i sends chunk (i − k) mod p "
                        "to rank i + 1")),
        Line(215, 114, _("Each step: S/p = %(chunk)s per rank", chunk=short_bytes(size / n)),
             value=size / n),
        Line(215, 140, _("%(steps)s steps × %(chunk)s = %(total)s sent by each rank",
                         steps=steps, chunk=short_bytes(size / n),
                         total=quantity(total, "B")), value=total, bold=True),
    ]
    title = _("%(op)s with the %(algorithm)s algorithm on %(n)s ranks, summarised", op=op,
              algorithm=algorithm_name("ring"), n=n)
    desc = ". ".join(line.text for line in lines) + "."
    table = Table([_("Quantity"), _("Value")], [
        [_("Ranks"), str(n)], [_("Steps"), str(steps)],
        [_("Bytes per rank per step"), quantity(size / n, "B")],
        [_("Bytes sent by each rank"), quantity(total, "B")]])
    return Figure("steps", f"{prefix}-steps", title, desc, 680, 196,
                  StepsBody("ring", op, n, True, [panel], lines), table)


# ------------------------------------------------------------------------ comparison


@dataclass
class Bar:
    algorithm: str
    label: str
    y: float
    segments: list[tuple[float, float]]  # (x, width)
    value_text: str
    value: float | None
    chosen: bool
    colour: str

    @property
    def text_x(self) -> float:
        if not self.segments:
            return 170.0
        x, width = self.segments[-1]
        return r(x + width + 6)


@dataclass
class Group:
    metric: str
    title: str
    y: float
    bars: list[Bar]


@dataclass
class CompareBody:
    groups: list[Group]
    label_x: float
    bar_x: float
    lines: list[Line]


def timed_params(evaluation: Evaluation) -> tuple[dict[str, object], list[str]]:
    """The evaluation's parameters with α and β filled in when missing, and a note saying
    which values were assumed (times are drawn either way)."""
    params = dict(evaluation.params)
    if "time_s" in evaluation.outputs:
        return params, []
    assumed = []
    if params.get("alpha_s") is None:
        params["alpha_s"] = ASSUMED_ALPHA_S
        assumed.append(_("α = %(alpha)s", alpha=quantity(ASSUMED_ALPHA_S, "s")))
    if params.get("beta_s_per_byte") is None and params.get("bandwidth_bytes_per_s") is None:
        params["bandwidth_bytes_per_s"] = ASSUMED_BANDWIDTH
        assumed.append(_("a bandwidth of %(bandwidth)s",
                         bandwidth=quantity(ASSUMED_BANDWIDTH, "B/s")))
    return params, [_("Times assume %(values)s (not given).", values=", ".join(assumed))]


def _alternatives(evaluation: Evaluation) -> tuple[dict[str, dict[str, float] | None], list[str]]:
    """Each algorithm the operation supports, evaluated on the same input (None: cannot run)."""
    params, notes = timed_params(evaluation)
    calculator = get("collective")
    results: dict[str, dict[str, float] | None] = {}
    p = evaluation.params["world_size"]
    for algorithm in SUPPORTED[evaluation.params["op"]]:
        if algorithm in POWER_OF_TWO_ONLY and p & (p - 1):
            results[algorithm] = None
            continue
        results[algorithm] = calculator.evaluate({**params, "algorithm": algorithm}).outputs
    return results, notes


def compare_figure(evaluation: Evaluation, prefix: str) -> Figure | None:
    """Steps, bytes and α-β time of each algorithm for this operation, as bars."""
    results, notes = _alternatives(evaluation)
    if len(results) < 2:
        return None
    chosen = evaluation.params["algorithm"]
    label_x, bar_x, bar_w, row_h = 10.0, 170.0, 300.0, 22.0
    metrics = [("steps", _("Steps (each costs one α)"), None),
               ("bytes_sent_per_rank", _("Bytes sent by the busiest rank"), "B"),
               ("time_s", _("α-β time"), "s")]
    groups = []
    y = 6.0
    rows = []
    for metric, heading, unit in metrics:
        group = Group(metric, heading, y + 14, [])
        y += 24
        top = max((o[metric] for o in results.values() if o), default=0) or 1
        for algorithm, outputs in results.items():
            colour = STYLES[algorithm][0]
            label = algorithm_name(algorithm)
            if outputs is None:
                group.bars.append(Bar(algorithm, label, y, [], _("needs a power-of-two world "
                                                                  "size"), None,
                                      algorithm == chosen, colour))
                y += row_h
                continue
            value = outputs[metric]
            length = bar_w * value / top
            if metric == "steps" and value > 0 and length / value >= 5:
                step = length / value
                segments = [(r(bar_x + k * step), r(max(step - 1.5, 0.8))) for k in range(value)]
            else:
                segments = [(bar_x, r(length))]
            text = quantity(value, unit) if unit else str(value)
            group.bars.append(Bar(algorithm, label, y, segments, text, value,
                                  algorithm == chosen, colour))
            y += row_h
        groups.append(group)
        y += 8
    for algorithm, outputs in results.items():
        rows.append([algorithm_name(algorithm)] + (
            [str(outputs["steps"]), quantity(outputs["bytes_sent_per_rank"], "B"),
             quantity(outputs["time_s"], "s")] if outputs else ["—", "—", "—"]))
    op, n = evaluation.params["op"], evaluation.params["world_size"]
    lines = [Line(label_x, y + 10, note) for note in notes]
    lines.append(Line(label_x, y + 10 + 18 * len(notes),
                      _("Bold: the algorithm chosen above; segments of the steps bar are "
                        "single steps.")))
    y += 18 * len(lines) + 6
    title = _("%(op)s on %(n)s ranks: the algorithms compared", op=op, n=n)
    steps_text = [_("%(steps)s steps", steps=row[1]) for row in rows]
    desc = "; ".join(f"{row[0]}: {steps}, {row[2]}, {row[3]}"
                     for row, steps in zip(rows, steps_text, strict=True)) + ". " + " ".join(notes)
    table = Table([_("Algorithm"), _("Steps"), _("Bytes sent by the busiest rank"),
                   _("α-β time")], rows)
    return Figure("compare", f"{prefix}-compare", title, desc, 640, y,
                  CompareBody(groups, label_x, bar_x, lines), table, notes)


# ------------------------------------------------------------------------ world sizes


@dataclass
class Point:
    x: float
    y: float
    world_size: int
    value: float
    marker: str  # polygon points ("" for a circle)


@dataclass
class Series:
    algorithm: str
    label: str
    colour: str
    dash: str
    shape: str
    points: list[Point]

    @property
    def polyline(self) -> str:
        return " ".join(f"{p.x},{p.y}" for p in self.points)


@dataclass
class Plot:
    metric: str
    title: str
    x0: float
    y0: float
    w: float
    h: float
    xticks: list[tuple[float, str]]
    yticks: list[tuple[float, str]]
    series: list[Series]
    current_x: float | None
    current_label: str
    note: str = ""

    @property
    def current_anchor(self) -> str:
        return "end" if self.current_x and self.current_x > self.x0 + self.w * 0.75 else "start"


@dataclass
class ScalingBody:
    plots: list[Plot]
    legend: list[tuple[float, float, Series, str]]  # (x, y, series, marker points)
    lines: list[Line]
    legend_y: float


def _marker(shape: str, x: float, y: float, size: float = 4.0) -> str:
    if shape == "circle":
        return ""
    shapes = {
        "square": [(-1, -1), (1, -1), (1, 1), (-1, 1)],
        "triangle": [(0, -1.2), (1.1, 0.9), (-1.1, 0.9)],
        "triangle-down": [(0, 1.2), (1.1, -0.9), (-1.1, -0.9)],
        "diamond": [(0, -1.3), (1.3, 0), (0, 1.3), (-1.3, 0)],
        "cross": [(-0.4, -1.2), (0.4, -1.2), (0.4, -0.4), (1.2, -0.4), (1.2, 0.4), (0.4, 0.4),
                  (0.4, 1.2), (-0.4, 1.2), (-0.4, 0.4), (-1.2, 0.4), (-1.2, -0.4),
                  (-0.4, -0.4)],
        "x": [(-0.85, -1.15), (0, -0.3), (0.85, -1.15), (1.15, -0.85), (0.3, 0), (1.15, 0.85),
              (0.85, 1.15), (0, 0.3), (-0.85, 1.15), (-1.15, 0.85), (-0.3, 0), (-1.15, -0.85)],
    }
    return " ".join(f"{r(x + dx * size)},{r(y + dy * size)}" for dx, dy in shapes[shape])


def world_sizes(current: int) -> list[int]:
    """Powers of two from 2 to 1024, or to the first one past the chosen world size."""
    top = max(1024, 1 << max(current - 1, 1).bit_length())
    return [1 << k for k in range(1, top.bit_length())]


def winners(sizes: list[int], values: dict[str, list[float]]) -> list[tuple[str, int, int]]:
    """Runs of world sizes where one algorithm has the lowest value: (algorithm, from, to)."""
    runs: list[tuple[str, int, int]] = []
    for i, p in enumerate(sizes):
        best = min(values, key=lambda a: (values[a][i], list(values).index(a)))
        if runs and runs[-1][0] == best:
            runs[-1] = (best, runs[-1][1], p)
        else:
            runs.append((best, p, p))
    return runs


def scaling_figure(evaluation: Evaluation, prefix: str) -> Figure:
    """Bytes per rank and α-β time against the world size (log axis), one line per algorithm."""
    params, notes = timed_params(evaluation)
    op, current = evaluation.params["op"], evaluation.params["world_size"]
    sizes = world_sizes(current)
    calculator = get("collective")
    data: dict[str, dict[str, list[float]]] = {"bytes_sent_per_rank": {}, "time_s": {}}
    for algorithm in SUPPORTED[op]:
        runs = [calculator.evaluate({**params, "algorithm": algorithm, "world_size": p}).outputs
                for p in sizes]
        for metric in data:
            data[metric][algorithm] = [o[metric] for o in runs]
    x0, w, h = 84.0, 520.0, 150.0
    lg_top = math.log2(sizes[-1])

    def xpos(p: float) -> float:
        return r(x0 + w * (math.log2(p) - 1) / (lg_top - 1))

    xticks = [(xpos(p), str(p)) for p in sizes if p in (2, 8, 32, 128, 512) or p == sizes[-1]]
    names = [algorithm_name(a) for a in data["time_s"]]
    spots = legend_positions(names, swatch=34)
    legend_y = 16.0
    plots = []
    y0 = legend_y + 18 * spots[-1][1] + 34
    for metric, heading in (("bytes_sent_per_rank", _("Bytes sent per rank")),
                            ("time_s", _("α-β time"))):
        note = notes[0] if notes and metric == "time_s" else ""
        y0 += 16 if note else 0
        series_values = data[metric]
        flat = [v for values in series_values.values() for v in values]
        if metric == "time_s":
            positive = [v for v in flat if v > 0] or [1e-6]
            low = 10 ** math.floor(math.log10(min(positive)))
            high = 10 ** math.ceil(math.log10(max(positive)))
            high = high if high > low else low * 10
            span = math.log10(high) - math.log10(low)

            def ypos(v: float, y0: float = y0, low: float = low, span: float = span) -> float:
                return r(y0 + h - h * (math.log10(max(v, low)) - math.log10(low)) / span)

            decades = round(span)
            every = max(1, math.ceil(decades / 5))
            yticks = [(ypos(low * 10 ** k), quantity(low * 10 ** k, "s"))
                      for k in range(0, decades + 1, every)]
        else:
            ticks = nice_ticks(max(flat) or 1)
            top = ticks[-1]

            def ypos(v: float, y0: float = y0, top: float = top) -> float:
                return r(y0 + h - h * v / top)

            yticks = [(ypos(t), short_bytes(t)) for t in ticks]
        series = []
        for algorithm, values in series_values.items():
            colour, shape, dash = STYLES[algorithm]
            points = [Point(xpos(p), ypos(v), p, v, _marker(shape, xpos(p), ypos(v)))
                      for p, v in zip(sizes, values, strict=True)]
            series.append(Series(algorithm, algorithm_name(algorithm), colour, dash, shape,
                                 points))
        current_x = xpos(current) if current >= 2 else None
        plots.append(Plot(metric, heading, x0, y0, w, h, xticks, yticks, series, current_x,
                          _("p = %(n)s (chosen)", n=current), note))
        y0 += h + 64
    legend = [(x, legend_y + 18 * line, s, _marker(s.shape, x + 13, legend_y + 18 * line - 4))
              for (x, line), s in zip(spots, plots[0].series, strict=True)]
    lines = []
    y = y0 - 24
    for metric in ("bytes_sent_per_rank", "time_s"):
        parts = [_("%(algorithm)s for p = %(low)s–%(high)s", algorithm=algorithm_name(a),
                   low=lo, high=hi) if lo != hi else
                 _("%(algorithm)s for p = %(low)s", algorithm=algorithm_name(a), low=lo)
                 for a, lo, hi in winners(sizes, data[metric])]
        text = (_("Fewest bytes: %(where)s", where="; ".join(parts)) if metric != "time_s"
                else _("Fastest: %(where)s", where="; ".join(parts)))
        lines.append(Line(10, y, text, bold=True))
        y += 20
    title = _("%(op)s: bytes per rank and α-β time from 2 to %(top)s ranks", op=op,
              top=sizes[-1])
    desc = " ".join(line.text + "." for line in lines) + " " + " ".join(notes)
    names = [algorithm_name(a) for a in data["time_s"]]
    table = Table([_("Ranks")] + [_("%(algorithm)s: bytes", algorithm=a) for a in names]
                  + [_("%(algorithm)s: time", algorithm=a) for a in names],
                  [[str(p)] + [short_bytes(data["bytes_sent_per_rank"][a][i])
                               for a in data["time_s"]]
                   + [quantity(data["time_s"][a][i], "s") for a in data["time_s"]]
                   for i, p in enumerate(sizes)])
    return Figure("scaling", f"{prefix}-scaling", title, desc, 640, y + 4,
                  ScalingBody(plots, legend, lines, legend_y), table, notes)


def figures(evaluation: Evaluation, prefix: str) -> list[Figure]:
    found = [steps_figure(evaluation, prefix), compare_figure(evaluation, prefix),
             scaling_figure(evaluation, prefix)]
    return [f for f in found if f is not None]
