"""A Babel extractor for the calculator registry's texts (titles, summaries, parameter and
output descriptions), so the calculator pages can be translated from a single source.

Wired in pyproject.toml ([[tool.babel.mappings]], method "app.i18n.extract:calculators")
for app/calculator/__init__.py; the pages show them with ``_()``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def calculators(fileobj: Any, keywords: Any, comment_tags: Any, options: Any
                ) -> Iterator[tuple[int, str, str, list[str]]]:
    from app.calculator import calculators as registered

    for calculator in registered():
        yield 0, "_", calculator.title, [f"calculator {calculator.name}: title"]
        yield 0, "_", calculator.summary, [f"calculator {calculator.name}: summary"]
        for param in calculator.params:
            yield 0, "_", param.description, [f"{calculator.name}.{param.name}"]
        for output in calculator.outputs:
            yield 0, "_", output.description, [f"{calculator.name} output {output.name}"]
