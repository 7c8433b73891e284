"""Progress pictures: accuracy (or score) by topic as bars, accuracy over time as a line."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from babel.dates import format_date

from app.i18n import _, current_language, ngettext
from app.pictures.common import BLUE, GRID, Figure, Table, percent, r, text_width


@dataclass
class TopicBar:
    label: str
    y: float
    width: float
    value: float
    text: str
    count: int | None


@dataclass
class TopicBarsBody:
    bars: list[TopicBar]
    x0: float
    full: float
    ticks: list[tuple[float, str]]
    bottom: float
    colour: str = BLUE


def topic_bars(rows: list[tuple[str, float, int | None]], figure_id: str, title: str,
               value_header: str | None = None) -> Figure:
    """One bar per topic, 0-100 %; ``rows`` are (label, fraction, answers or None)."""
    # Labels are drawn at 12 units and never cut ("FLOPs, MFU and bottlenecks", "并行策略组合"):
    # the picture widens instead, with the bars and the "75% · 12 answers" room after them.
    x0 = r(max((text_width(label, 12) for label, *_rest in rows), default=60) + 16)
    full = 340.0
    bars = []
    y = 8.0
    for label, value, count in rows:
        text = percent(value) + (" · " + ngettext("%(num)d answer", "%(num)d answers", count)
                                 if count is not None else "")
        bars.append(TopicBar(label, y, r(full * value), value, text, count))
        y += 28
    ticks = [(r(x0 + full * t), percent(t)) for t in (0, 0.5, 1)]
    desc = "; ".join(f"{b.label}: {b.text}" for b in bars)
    counted = any(count is not None for *_x, count in rows)
    headers = [_("Topic"), value_header or _("Accuracy")] + ([_("Answers")] if counted else [])
    table = Table(headers, [[b.label, percent(b.value)] + ([str(b.count)] if b.count is not None
                                                            else []) for b in bars])
    return Figure("topic-bars", figure_id, title, desc, r(x0 + full + 150), y + 22,
                  TopicBarsBody(bars, x0, full, ticks, y), table)


@dataclass
class TrendPoint:
    x: float
    y: float
    day: str
    value: float
    answers: int


@dataclass
class TrendBody:
    points: list[TrendPoint]
    x0: float
    x1: float
    y0: float
    y1: float
    yticks: list[tuple[float, str]]
    xlabels: list[tuple[float, str, str]]  # (x, text, anchor)
    colour: str = BLUE
    grid: str = GRID

    @property
    def polyline(self) -> str:
        return " ".join(f"{p.x},{p.y}" for p in self.points)


def _day(text: str) -> str:
    return format_date(date.fromisoformat(text), format="medium", locale=current_language.get())


def trend(days: list[dict], figure_id: str, title: str) -> Figure:
    """Accuracy per day: ``days`` as the history gives them ({day, accuracy, answers})."""
    x0, x1, y0, y1 = 60.0, 600.0, 10.0, 110.0
    dates = [date.fromisoformat(d["day"]) for d in days]
    span = max((dates[-1] - dates[0]).days, 1) if dates else 1

    def xpos(day: date) -> float:  # by date, so a gap of a week looks like one
        return r(x0 + (x1 - x0) * (day - dates[0]).days / span) if len(dates) > 1 else \
            (x0 + x1) / 2

    points = [TrendPoint(xpos(day), r(y1 - (y1 - y0) * d["accuracy"]), _day(d["day"]),
                         d["accuracy"], d["answers"]) for day, d in zip(dates, days, strict=True)]
    yticks = [(r(y1 - (y1 - y0) * t), percent(t)) for t in (0, 0.25, 0.5, 0.75, 1)]
    xlabels = [(points[0].x, points[0].day, "start")]
    if len(points) > 2:
        middle = points[len(points) // 2]
        if points[0].x + 110 < middle.x < points[-1].x - 110:  # only where it has room
            xlabels.append((middle.x, middle.day, "middle"))
    if len(points) > 1:
        xlabels.append((points[-1].x, points[-1].day, "end"))
    desc = "; ".join(f"{p.day}: {percent(p.value)}" for p in points)
    table = Table([_("Day"), _("Accuracy"), _("Answers")],
                  [[p.day, percent(p.value), str(p.answers)] for p in points])
    return Figure("trend", figure_id, title, desc, 640, y1 + 32,
                  TrendBody(points, x0, x1, y0, y1, yticks, xlabels), table)
