"""Recorded experiments, read from their JSON (the web app never imports torch).

Each ``question_bank/experiments/<name>.py`` wrote ``<name>.json`` when it really ran;
``experiments.yaml`` beside them says in four languages what each one asks and what
the recording shows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from app.bank.schema import LANGUAGES
from app.i18n import DEFAULT_LANGUAGE


@dataclass(frozen=True)
class Experiment:
    name: str
    record: dict[str, Any]
    code: str
    texts: dict[str, dict[str, str]]  # lang -> {title, asks, finding}

    def text(self, field: str, lang: str) -> str:
        for candidate in (lang, DEFAULT_LANGUAGE):
            value = self.texts.get(candidate, {}).get(field)
            if value:
                return value
        fallback = {"title": self.name, "asks": str(self.record.get("asks", ""))}
        return fallback.get(field, "")

    @property
    def summary(self) -> dict[str, Any]:
        return dict(self.record.get("summary", {}))

    @property
    def runs(self) -> list[dict[str, Any]]:
        return list(self.record.get("runs", []))


@lru_cache(maxsize=8)
def _load(path: Path, stamp: tuple[float, ...]) -> dict[str, Experiment]:
    catalog_path = path / "experiments.yaml"
    catalog = yaml.safe_load(catalog_path.read_text(encoding="utf-8")) \
        if catalog_path.exists() else {}
    found = {}
    for record_path in sorted(path.glob("*.json")):
        name = record_path.stem
        script = record_path.with_suffix(".py")
        entry = (catalog or {}).get(name) or {}
        texts = {lang: {field: str(entry.get(field, {}).get(lang, ""))
                        for field in ("title", "asks", "finding")} for lang in LANGUAGES}
        found[name] = Experiment(
            name=name, record=json.loads(record_path.read_text(encoding="utf-8")),
            code=script.read_text(encoding="utf-8") if script.exists() else "", texts=texts)
    return found


def experiments(bank_dir: Path) -> dict[str, Experiment]:
    """Every recorded experiment, reloaded when a file changes."""
    path = bank_dir / "experiments"
    if not path.is_dir():
        return {}
    stamp = tuple(p.stat().st_mtime for p in sorted(path.glob("*.*")))
    return _load(path, stamp)
