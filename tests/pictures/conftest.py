"""Helpers for the picture tests: draw a figure as the pages do and read its SVG back."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator

import pytest

from app.i18n import current_language
from app.pictures import Figure
from app.web.templating import templates

SVG = re.compile(r"<svg class=\"picture[^\"]*\".*?</svg>", re.S)


def svgs(html: str) -> list[ET.Element]:
    """Every picture in a page, parsed as XML (so it must be well-formed)."""
    return [ET.fromstring(markup) for markup in SVG.findall(html)]


def draw(fig: Figure) -> str:
    """The HTML a page writes for ``fig`` (figure, SVG and table)."""
    return str(templates.env.get_template("pictures/figure.html").module.figure(fig))


def svg_of(fig: Figure) -> ET.Element:
    found = svgs(draw(fig))
    assert len(found) == 1
    return found[0]


def by_class(root: ET.Element, name: str) -> list[ET.Element]:
    """Elements whose class list holds ``name``."""
    return [e for e in root.iter() if name in (e.get("class") or "").split()]


def texts(root: ET.Element) -> list[str]:
    return ["".join(e.itertext()) for e in root.iter("text")]


@pytest.fixture
def lang() -> Iterator[Callable[[str], None]]:
    """Switch the language pictures are drawn in (English again afterwards)."""
    tokens = []

    def use(code: str) -> None:
        tokens.append(current_language.set(code))

    yield use
    for token in reversed(tokens):
        current_language.reset(token)
