"""What every picture shares: the figure record, the palette, numbers and axis ticks.

A :class:`Figure` is plain data: positions, sizes and already-translated labels. The
SVG markup lives in ``templates/pictures/*.html``; nothing here writes markup.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from babel.numbers import format_percent

from app.calculator.units import format_quantity
from app.i18n import current_language
from app.web.numbers import localized_number, localized_unit

# Okabe & Ito (2008), "Color Universal Design": distinguishable with every common colour
# vision deficiency. Pictures never rely on colour alone: every series also has a label,
# a marker shape, a dash pattern or a hatch.
INK = "#1b1f24"
MUTED = "#5b6470"
GRID = "#d9dee4"
PAPER = "#ffffff"
BLACK = "#000000"
ORANGE = "#E69F00"
SKY_BLUE = "#56B4E9"
GREEN = "#009E73"
YELLOW = "#F0E442"
BLUE = "#0072B2"
VERMILLION = "#D55E00"
PURPLE = "#CC79A7"
PALETTE = (BLUE, ORANGE, GREEN, VERMILLION, SKY_BLUE, PURPLE, YELLOW, BLACK)
# Text drawn on a fill: dark on the light colours, white on the dark ones (WCAG AA).
TEXT_ON = {BLUE: PAPER, ORANGE: INK, GREEN: INK, VERMILLION: INK, SKY_BLUE: INK,
           PURPLE: INK, YELLOW: INK, BLACK: PAPER, PAPER: INK}


@dataclass(frozen=True)
class Table:
    """The text alternative shown next to a picture: the same numbers, as a table."""

    headers: list[str]
    rows: list[list[str]]


@dataclass
class Figure:
    """One picture: what the template draws (``body``) and what it says in words."""

    kind: str  # the macro in templates/pictures/ that draws it
    id: str  # unique on the page; prefixes every id inside the SVG
    title: str
    desc: str
    width: float
    height: float
    body: Any
    table: Table | None = None
    notes: list[str] = field(default_factory=list)


def r(value: float) -> float:
    """A coordinate rounded for the markup (0.1 px is finer than any screen)."""
    return round(value, 1)


def number(value: float, digits: int = 4) -> str:
    return _number(value, digits, current_language.get())


def quantity(value: float, unit: str | None) -> str:
    """As the pages write it: ``1.4 GB (1.304 GiB)``, ``38 ms``, in the request's locale."""
    return _quantity(value, unit, current_language.get())


# Babel formats a number in about 0.3 ms and a picture writes hundreds; the same values
# come back on every drawing (world sizes 2-1024, the same ticks), so they are cached.
@lru_cache(maxsize=8192)
def _number(value: float, digits: int, lang: str) -> str:
    return localized_number(value, digits)


@lru_cache(maxsize=8192)
def _quantity(value: float, unit: str | None, lang: str) -> str:
    return format_quantity(value, unit, number=localized_number, name=localized_unit)


def short_bytes(value: float) -> str:
    """Bytes with a decimal prefix only (``100 MB``), for labels in tight places."""
    return quantity(value, "B").split(" (")[0]


def percent(fraction: float) -> str:
    return format_percent(fraction, format="#,##0.#%", locale=current_language.get())


def nice_ticks(maximum: float, count: int = 4) -> list[float]:
    """Round tick values 0, step, 2·step… covering ``maximum`` (steps of 1, 2 or 5 × 10^k)."""
    if maximum <= 0:
        return [0.0, 1.0]
    raw = maximum / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(s * magnitude for s in (1, 2, 2.5, 5, 10) if s * magnitude >= raw)
    ticks = [0.0]
    while ticks[-1] < maximum * (1 - 1e-9):
        ticks.append(ticks[-1] + step)
    return ticks


def arrow_head(x: float, y: float, dx: float, dy: float, size: float = 6.0) -> str:
    """The points of a triangle whose tip is (x, y), pointing along (dx, dy)."""
    length = math.hypot(dx, dy) or 1.0
    ux, uy = dx / length, dy / length
    bx, by = x - ux * size, y - uy * size
    half = size * 0.55
    return (f"{r(x)},{r(y)} {r(bx - uy * half)},{r(by + ux * half)} "
            f"{r(bx + uy * half)},{r(by - ux * half)}")


def text_width(text: str, size: float = 11.0) -> float:
    """A rough width of ``text`` in a sans-serif font: wide for CJK, narrower for Latin."""
    return sum(size if ord(ch) >= 0x2E80 else size * 0.58 for ch in text)


def legend_positions(labels: list[str], width: float = 600.0, x0: float = 10.0,
                     swatch: float = 26.0) -> list[tuple[float, int]]:
    """Where each legend entry starts, (x, line), wrapping to a new line at ``width``."""
    spots = []
    x, line = x0, 0
    for label in labels:
        size = swatch + text_width(label) + 16
        if x > x0 and x + size > width:
            x, line = x0, line + 1
        spots.append((r(x), line))
        x += size
    return spots
