"""Files ⇄ database: load the bank in one transaction, export it back in the same format.

The YAML written here is canonical (field order of the schema, defaults left out,
long texts as block scalars), so ``load`` then ``export`` reproduces the files.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from app.bank.checks import BankFile
from app.bank.schema import QuestionFile
from app.questions.models import (
    Question,
    QuestionEvidence,
    QuestionRevision,
    QuestionTag,
    QuestionTranslation,
)
from app.questions.search import normalise

TOP_LEVEL = ("id", "topic", "tags", "seniority", "difficulty", "kind", "translations")
TRANSLATION_COLUMNS = ("title", "prompt", "explanation")


@dataclass(frozen=True)
class LoadReport:
    created: int
    updated: int
    unchanged: int


def canonical(question: QuestionFile) -> dict[str, Any]:
    """The question as plain data: schema field order, defaults left out."""
    return question.model_dump(mode="json", exclude_defaults=True)


def content_hash(question: QuestionFile) -> str:
    data = json.dumps(canonical(question), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(data.encode()).hexdigest()


def load_bank(session: Session, files: list[BankFile],
              author: str = "ringside bank load") -> LoadReport:
    """Upsert every question by id, publishing it. The caller commits (or rolls back)."""
    slugs = [f.question.id for f in files]
    existing = {q.slug: q for q in session.scalars(
        select(Question).where(Question.slug.in_(slugs))
        .options(selectinload(Question.translations), selectinload(Question.tags),
                 selectinload(Question.evidence)))}
    created = updated = unchanged = 0
    changed: list[Question] = []
    for bank_file in files:
        question = bank_file.question
        row = existing.get(question.id)
        if row is not None and row.content_hash == content_hash(question) \
                and row.status == "published":
            unchanged += 1
            continue
        if row is None:
            row = Question(slug=question.id, translations=[], tags=[], evidence=[])
            session.add(row)
            created += 1
        else:
            updated += 1
        fill_row(row, question, "published")
        row.stale_languages = []  # the files are reviewed: what they say is current
        changed.append(row)
    session.flush()
    for row in changed:
        record_revision(session, row, author, "loaded from the bank files")
    return LoadReport(created, updated, unchanged)


def record_revision(session: Session, row: Question, author: str, note: str = "") -> None:
    """Keep this state of the question (the row must be flushed: it needs its id)."""
    session.add(QuestionRevision(question_id=row.id, version=row.version_id, status=row.status,
                                 author=author[:254], note=note[:200],
                                 content=canonical(question_from_row(row))))


def fill_row(row: Question, question: QuestionFile, status: str) -> None:
    """Copy a question file into its row (translations, tags and citations too)."""
    digest = content_hash(question)
    row.status = status
    data = canonical(question)
    row.topic, row.seniority = question.topic, question.seniority
    row.difficulty, row.kind = question.difficulty, question.kind
    row.spec = {k: v for k, v in data.items() if k not in TOP_LEVEL}
    row.content_hash = digest
    row.deleted_at = None if status != "archived" else row.deleted_at
    row.tags = [QuestionTag(tag=tag, position=i) for i, tag in enumerate(question.tags)]
    row.evidence = [QuestionEvidence(experiment=name) for name in
                    dict.fromkeys(e.experiment for e in question.evidence)]
    by_lang = {t.lang: t for t in row.translations}
    keep = []
    for lang, texts in data["translations"].items():
        translation = by_lang.get(lang) or QuestionTranslation(lang=lang)
        translation.title, translation.prompt, translation.explanation = (
            texts["title"], texts["prompt"], texts["explanation"])
        translation.content = {k: v for k, v in texts.items() if k not in TRANSLATION_COLUMNS}
        translation.search_text = normalise(" ".join(
            [texts["title"], texts["prompt"], *question.tags]))
        keep.append(translation)
    row.translations = keep


def question_from_row(row: Question) -> QuestionFile:
    """Rebuild the file model from a row (its translations and tags loaded)."""
    translations = {t.lang: {"title": t.title, "prompt": t.prompt,
                             "explanation": t.explanation, **t.content}
                    for t in row.translations}
    data = {"id": row.slug, "topic": row.topic, "tags": [t.tag for t in row.tags],
            "seniority": row.seniority, "difficulty": row.difficulty, "kind": row.kind,
            **row.spec, "translations": translations}
    return QuestionFile.model_validate(data)


def export_bank(session: Session, directory: Path) -> list[Path]:
    """Write every live question to ``directory/questions/<topic>/<id>.yaml``."""
    rows = session.scalars(
        select(Question).where(Question.public()).order_by(Question.slug)
        .options(selectinload(Question.translations), selectinload(Question.tags)))
    written = []
    for row in rows:
        question = question_from_row(row)
        path = directory / "questions" / question.topic / f"{question.id}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(to_yaml(question), encoding="utf-8")
        written.append(path)
    return written


class _Dumper(yaml.SafeDumper):
    """Block scalars for multi-line texts, flow style for short scalar lists."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value.strip("\n") or value.endswith("\n") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _list(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.SequenceNode:
    flow = all(isinstance(v, (int, float, bool)) or (isinstance(v, str) and len(v) < 40
               and "\n" not in v) for v in value) and len(value) <= 12
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flow)


def _dict(dumper: yaml.SafeDumper, value: dict[str, Any]) -> yaml.MappingNode:
    scalars = all(isinstance(v, (int, float, bool)) or (isinstance(v, str) and "\n" not in v)
                  for v in value.values())
    short = len(", ".join(f"{k}: {v}" for k, v in value.items())) <= 72
    return dumper.represent_mapping("tag:yaml.org,2002:map", value,
                                    flow_style=bool(value) and scalars and short)


_Dumper.add_representer(str, _str)
_Dumper.add_representer(list, _list)
_Dumper.add_representer(dict, _dict)


def to_yaml(question: QuestionFile) -> str:
    """The canonical YAML text of a question."""
    return yaml.dump(canonical(question), Dumper=_Dumper, allow_unicode=True, sort_keys=False,
                     width=100, default_flow_style=False)
