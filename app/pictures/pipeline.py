"""The pipeline schedule as a timeline: one row per stage, forward, backward and idle cells.

The schedule is simulated, not drawn from the formula: each stage runs its operations in
the order of its schedule (GPipe: all forwards, then all backwards; 1F1B: warm-up
forwards, one forward one backward, cool-down backwards; interleaved: Megatron-LM's order
over v model chunks) as soon as the operation it depends on is done. With a forward as
long as a backward, every stage ends up idle for 2(p−1) of 2(v·m + p − 1) slots: the
calculator's bubble fraction, which the picture writes and the tests compare.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.calculator.registry import Evaluation
from app.i18n import N_, _, pgettext
from app.pictures.common import (
    BLUE,
    INK,
    ORANGE,
    SKY_BLUE,
    TEXT_ON,
    VERMILLION,
    Figure,
    Table,
    legend_positions,
    number,
    percent,
    r,
)

SCHEDULE_NAMES = {"gpipe": N_("GPipe"), "1f1b": N_("1F1B"),
                  "interleaved": N_("interleaved 1F1B")}
MAX_STAGES = 16  # rows drawn one by one
MAX_OPERATIONS = 40_000  # simulated at most; beyond, totals only
DRAW_ALL_UP_TO = 48  # time slots drawn without cutting the busy middle
MAX_COLUMNS = 120  # after cutting, more than this is drawn as totals
KEEP = 2  # busy slots kept either side of a cut
LABEL_W, GRID_W = 78.0, 540.0

Op = tuple[str, int, int]  # ("F" | "B", micro-batch, chunk)


def stage_orders(p: int, m: int, schedule: str, v: int) -> list[list[Op]]:
    """The order in which each stage runs its forwards and backwards."""
    orders = []
    for d in range(p):
        if schedule == "gpipe":
            seq = [("F", j, 0) for j in range(m)] + [("B", j, 0) for j in range(m)]
        elif v == 1:
            warm = min(p - 1 - d, m)
            seq = [("F", j, 0) for j in range(warm)]
            for i in range(m - warm):
                seq += [("F", warm + i, 0), ("B", i, 0)]
            seq += [("B", j, 0) for j in range(m - warm, m)]
        else:  # Megatron-LM's interleaved order: groups of p micro-batches per chunk
            total = m * v

            def forward(k: int) -> Op:
                return ("F", (k // (p * v)) * p + k % p, (k // p) % v)

            def backward(k: int) -> Op:
                return ("B", (k // (p * v)) * p + k % p, v - 1 - (k // p) % v)

            warm = min((p - d - 1) * 2 + (v - 1) * p, total)
            seq = [forward(k) for k in range(warm)]
            for i in range(total - warm):
                seq += [forward(warm + i), backward(i)]
            seq += [backward(k) for k in range(total - warm, total)]
        orders.append(seq)
    return orders


def simulate(p: int, m: int, schedule: str, v: int = 1) -> list[list[Op | None]]:
    """Each stage's slots: the operation it runs, or None when idle (one slot each)."""
    orders = stage_orders(p, m, schedule, v)
    virtual = p * v
    done: dict[tuple[str, int, int], int] = {}
    free = [0] * p
    nxt = [0] * p
    placed: list[list[tuple[int, Op]]] = [[] for _stage in range(p)]
    left = sum(len(o) for o in orders)
    while left:
        moved = False
        for d in range(p):
            while nxt[d] < len(orders[d]):
                kind, j, chunk = orders[d][nxt[d]]
                stage = chunk * p + d  # the virtual stage this chunk is
                if kind == "F":
                    dep = None if stage == 0 else ("F", stage - 1, j)
                else:
                    dep = ("F", stage, j) if stage == virtual - 1 else ("B", stage + 1, j)
                if dep is not None and dep not in done:
                    break
                start = max(free[d], done[dep] if dep else 0)
                done[(kind, stage, j)] = free[d] = start + 1
                placed[d].append((start, (kind, j, chunk)))
                nxt[d] += 1
                left -= 1
                moved = True
        if not moved:  # pragma: no cover - the orders above never deadlock
            raise RuntimeError("pipeline schedule deadlocked")
    length = max(free)
    grid: list[list[Op | None]] = [[None] * length for _stage in range(p)]
    for d, ops in enumerate(placed):
        for start, op in ops:
            grid[d][start] = op
    return grid


def columns(grid: list[list[Op | None]]) -> list[tuple[str, int, int]]:
    """The slots to draw, ("slot", t, t), with long all-busy stretches cut: ("cut", a, b)."""
    length = len(grid[0])
    if length <= DRAW_ALL_UP_TO:
        return [("slot", t, t) for t in range(length)]
    full = [all(row[t] is not None for row in grid) for t in range(length)]
    drawn: list[tuple[str, int, int]] = []
    t = 0
    while t < length:
        if not full[t]:
            drawn.append(("slot", t, t))
            t += 1
            continue
        end = t
        while end < length and full[end]:
            end += 1
        if end - t > 2 * KEEP + 2:
            drawn += [("slot", u, u) for u in range(t, t + KEEP)]
            drawn.append(("cut", t + KEEP, end - KEEP - 1))
            drawn += [("slot", u, u) for u in range(end - KEEP, end)]
        else:
            drawn += [("slot", u, u) for u in range(t, end)]
        t = end
    return drawn


@dataclass
class Cell:
    kind: str  # forward, backward, bubble
    x: float
    y: float
    width: float
    height: float
    fill: str
    text: str
    text_colour: str
    slots: int = 1
    hint: str = ""


@dataclass
class Cut:
    x: float
    width: float
    slots: int  # time slots not drawn
    forward: int  # cells not drawn, all stages together
    backward: int


@dataclass
class PipelineBody:
    schedule: str
    stages: int
    microbatches: int
    chunks: int
    summary: bool
    cells: list[Cell]
    cuts: list[Cut]
    rows: list[tuple[float, str]]
    grid_top: float
    grid_bottom: float
    grid_right: float
    legend: list[tuple[float, float, str, str, str]]  # (x, y, label, fill, kind)
    lines: list[tuple[float, str, float | None]] = field(default_factory=list)
    slots_per_stage: int = 0
    idle_per_stage: int = 0


def _fill(kind: str, chunk: int) -> str:
    if kind == "F":
        return SKY_BLUE if chunk % 2 == 0 else BLUE
    return ORANGE if chunk % 2 == 0 else VERMILLION


def pipeline_figure(evaluation: Evaluation, prefix: str) -> Figure:
    params, outputs = evaluation.params, evaluation.outputs
    p, m = params["stages"], params["microbatches"]
    schedule, v = params["schedule"], params["virtual_stages"]
    v = v if schedule == "interleaved" else 1
    drawable = p <= MAX_STAGES and 2 * p * m * v <= MAX_OPERATIONS
    return schedule_figure(simulate(p, m, schedule, v) if drawable else None, schedule, p, m,
                           v, outputs, prefix)


def schedule_figure(grid: list[list[Op | None]] | None, schedule: str, p: int, m: int, v: int,
                    outputs: dict[str, float], prefix: str, title: str | None = None
                    ) -> Figure:
    """A schedule's timeline: ``grid`` simulated (the calculator's) or as a recording ran;
    ``outputs`` holds the bubble fractions and the micro-batches in flight it states."""
    name = _(SCHEDULE_NAMES[schedule])
    slots, idle = 2 * (v * m + p - 1), 2 * (p - 1)
    fraction = outputs["bubble_fraction_of_total"]
    entries = [(_("Forward"), SKY_BLUE, "forward"), (_("Backward"), ORANGE, "backward"),
               (_("Bubble (idle)"), "#ffffff", "bubble")]
    if v > 1:
        entries = [(_("Forward, odd chunks"), SKY_BLUE, "forward"),
                   (_("Forward, even chunks"), BLUE, "forward"),
                   (_("Backward, odd chunks"), ORANGE, "backward"),
                   (_("Backward, even chunks"), VERMILLION, "backward"),
                   (_("Bubble (idle)"), "#ffffff", "bubble")]
    legend = [(x, 16 + 18 * line, *entry) for (x, line), entry in
              zip(legend_positions([e[0] for e in entries]), entries, strict=True)]
    top = legend[-1][1] + 18
    drawn = columns(grid) if grid else []
    body: PipelineBody
    if grid and len(drawn) <= MAX_COLUMNS:
        body = _timeline(grid, drawn, schedule, p, m, v, legend, top)
    else:
        body = _totals(schedule, p, m, v, slots, idle, legend, top)
    body.slots_per_stage, body.idle_per_stage = slots, idle
    y = body.grid_bottom + 34
    lines = [
        (y, _("Bubble: %(fraction)s of the batch time (%(idle)s idle slots of %(slots)s "
              "per stage)", fraction=percent(fraction), idle=idle, slots=slots), fraction),
        (y + 20, _("Bubble ÷ ideal time = (p−1)/(v·m) = %(ratio)s",
                   ratio=number(outputs["bubble_over_ideal"])), outputs["bubble_over_ideal"]),
        (y + 40, _("Activations in flight on the first stage: %(n)s micro-batches",
                   n=number(outputs["inflight_microbatches"])),
         outputs["inflight_microbatches"]),
        (y + 60, _("A slot is one forward or one backward of one model chunk; the numbers "
                   "are micro-batches."), None),
    ]
    if body.cuts:
        cut = sum(c.slots for c in body.cuts)
        lines.append((y + 80, _("⋯ marks %(slots)s time slots where every stage is busy, "
                                "not drawn.", slots=cut), None))
    if body.summary:
        lines.append((y + 80, _("Too many cells to draw one by one: one stage's time is "
                                "shown as totals."), None))
    body.lines = lines
    height = lines[-1][0] + 12
    title = title or (_("%(schedule)s schedule: %(p)s stages, %(m)s micro-batches, %(v)s "
                        "chunks per stage", schedule=name, p=p, m=m, v=v) if v > 1 else
                      _("%(schedule)s schedule: %(p)s stages, %(m)s micro-batches",
                        schedule=name, p=p, m=m))
    desc = " ".join(text for _y, text, _v in lines)
    table = _table(grid, p) if grid else Table(
        [_("Quantity"), _("Value")],
        [[_("Slots per stage"), str(slots)], [_("Idle slots per stage"), str(idle)],
         [_("Bubble fraction"), percent(fraction)]])
    return Figure("pipeline", f"{prefix}-pipeline", title, desc,
                  max(body.grid_right + 12, 600), height, body, table)


def _timeline(grid: list[list[Op | None]], drawn: list[tuple[str, int, int]], schedule: str,
              p: int, m: int, v: int, legend: list, top: float) -> PipelineBody:
    units = sum(1.5 if kind == "cut" else 1 for kind, *_r in drawn)
    cw = max(6.0, min(26.0, GRID_W / units))
    rh = 22.0 if p <= 8 else 15.0
    label = cw >= 14 and rh >= 15
    cells: list[Cell] = []
    cuts: list[Cut] = []
    x = LABEL_W
    xs: dict[int, float] = {}
    for kind, a, b in drawn:
        if kind == "cut":
            forward = sum(1 for row in grid for t in range(a, b + 1) if row[t][0] == "F")
            cuts.append(Cut(r(x), r(cw * 1.5), b - a + 1, forward,
                            p * (b - a + 1) - forward))
            x += cw * 1.5
        else:
            xs[a] = x
            x += cw
    right = x
    for d, row in enumerate(grid):
        y = top + d * rh
        run: list[int] = []

        def flush(run: list[int], y: float = y) -> None:
            if run:
                cells.append(Cell("bubble", r(xs[run[0]]), r(y + 1), r(cw * len(run)),
                                  r(rh - 2), "#ffffff", "", INK, len(run)))

        for kind, t, _b in drawn:
            if kind == "cut" or row[t] is not None:
                flush(run)
                run = []
                if kind == "cut":
                    continue
                op, j, chunk = row[t]
                fill = _fill(op, chunk)
                hint = (_("forward of micro-batch %(j)s", j=j + 1) if op == "F" else
                        _("backward of micro-batch %(j)s", j=j + 1))
                if v > 1:
                    hint += ", " + _("chunk %(c)s", c=chunk + 1)
                cells.append(Cell("forward" if op == "F" else "backward", r(xs[t]), r(y + 1),
                                  r(cw), r(rh - 2), fill, str(j + 1) if label else "",
                                  TEXT_ON.get(fill, INK), 1, hint))
            else:
                run.append(t)
        flush(run)
    rows = [(top + d * rh + rh / 2 + 4, _("Stage %(n)s", n=d + 1)) for d in range(p)]
    return PipelineBody(schedule, p, m, v, False, cells, cuts, rows, top, top + p * rh,
                        right, legend)


def _totals(schedule: str, p: int, m: int, v: int, slots: int, idle: int, legend: list,
            top: float) -> PipelineBody:
    """One stage's time as three blocks: forwards, backwards, idle."""
    rh = 26.0
    unit = GRID_W / slots
    x = LABEL_W
    cells = []
    for kind, count, fill in (("forward", v * m, SKY_BLUE), ("backward", v * m, ORANGE),
                              ("bubble", idle, "#ffffff")):
        cells.append(Cell(kind, r(x), top + 1, r(unit * count), rh - 2, fill,
                          str(count) if unit * count > 30 else "", TEXT_ON.get(fill, INK),
                          count))
        x += unit * count
    return PipelineBody(schedule, p, m, v, True, cells, [],
                        [(top + rh / 2 + 4, _("Each stage"))], top, top + rh, LABEL_W + GRID_W,
                        legend)


def _table(grid: list[list[Op | None]], p: int) -> Table:
    rows = []
    for d, row in enumerate(grid):
        busy = [t for t, op in enumerate(row) if op is not None]
        rows.append([_("Stage %(n)s", n=d + 1),
                     str(sum(1 for op in row if op and op[0] == "F")),
                     str(sum(1 for op in row if op and op[0] == "B")),
                     str(sum(1 for op in row if op is None)),
                     str(busy[0] + 1), str(busy[-1] + 1)])
    return Table([pgettext("pipeline stage", "Stage"), _("Forward slots"), _("Backward slots"),
                  _("Idle slots"), _("First busy slot"), _("Last busy slot")], rows)
