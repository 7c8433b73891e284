"""Authoring a question in the admin: validate the YAML text with every bank check, save
drafts and published versions with revisions, refuse stale saves, archive and restore."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from app.bank.checks import Finding, check_question, parse_question
from app.bank.loader import canonical, fill_row, question_from_row, record_revision, to_yaml
from app.bank.schema import QuestionFile
from app.config import get_settings
from app.db import utcnow
from app.questions.models import Question, QuestionRevision

MAX_TEXT = 400_000


class StaleEdit(Exception):
    """Someone saved the question since this form was opened."""

    def __init__(self, current_version: int) -> None:
        self.current_version = current_version


@dataclass
class Checked:
    """The outcome of checking a form: the question when it parses, and every problem."""

    question: QuestionFile | None
    problems: list[Finding] = field(default_factory=list)


def known_ids(session: Session) -> set[str]:
    """Ids a follow-up may point to: every question not archived."""
    return set(session.scalars(select(Question.slug).where(Question.status != "archived")))


def check_text(session: Session, text: str, ids: set[str] | None = None) -> Checked:
    """Run the schema and every `bank check` rule on the form's YAML."""
    if len(text) > MAX_TEXT:
        return Checked(None, [Finding("(form)", "-", "(text)", "is too long")])
    question, problems = parse_question(text, "(form)")
    if question is None:
        return Checked(None, problems)
    ids = (known_ids(session) if ids is None else ids) | {question.id}
    return Checked(question, check_question(question, "(form)", ids, get_settings().bank_dir))


def load(session: Session, slug: str) -> Question | None:
    return session.scalars(select(Question).where(Question.slug == slug).options(
        selectinload(Question.translations), selectinload(Question.tags),
        selectinload(Question.evidence))).one_or_none()


def save(session: Session, row: Question | None, question: QuestionFile, status: str,
         author: str, expected_version: int | None, note: str = "",
         confirm_translations: bool = False) -> Question:
    """Create or update, keeping a revision. A stale version is refused, never merged."""
    stale: list[str] = []
    if row is not None:
        if expected_version != row.version_id:
            raise StaleEdit(row.version_id)
        if question.id != row.slug:
            raise ValueError("the id of a question cannot change")
        if row.status == "published" and status == "draft":
            # The live version stays live: the draft waits as a revision until published.
            session.add(QuestionRevision(question_id=row.id, version=row.version_id,
                                         status="draft", author=author[:254], note=note[:200],
                                         content=canonical(question)))
            session.flush()
            return row
        stale = stale_after(question_from_row(row), question, list(row.stale_languages))
    else:
        row = Question(slug=question.id, translations=[], tags=[], evidence=[])
        session.add(row)
    fill_row(row, question, status)
    row.stale_languages = [] if confirm_translations else stale
    session.flush()
    record_revision(session, row, author, note)
    return row


SOURCE_LANGUAGE = "en"
WATCHED = ("prompt", "explanation")


def stale_after(before: QuestionFile, after: QuestionFile, stale: list[str]) -> list[str]:
    """Languages to review after this edit.

    Changing the English prompt or explanation makes every other language whose own
    texts did not change in the same edit stale; updating a language's texts clears it.
    """
    def texts(question: QuestionFile, lang: str) -> tuple[str, ...]:
        translation = question.translations.get(lang)
        return tuple(getattr(translation, f) for f in WATCHED) if translation else ()

    english_changed = texts(before, SOURCE_LANGUAGE) != texts(after, SOURCE_LANGUAGE)
    result = []
    for lang in after.translations:
        if lang == SOURCE_LANGUAGE:
            continue
        updated = texts(before, lang) != texts(after, lang)
        if (lang in stale or english_changed) and not updated:
            result.append(lang)
    return sorted(result)


def archive(session: Session, row: Question, author: str, expected_version: int | None
            ) -> None:
    if expected_version != row.version_id:
        raise StaleEdit(row.version_id)
    row.status, row.deleted_at = "archived", utcnow()
    session.flush()
    record_revision(session, row, author, "archived")


def revisions(session: Session, row: Question) -> list[dict[str, Any]]:
    """Newest first, each with the diff from the revision before it."""
    found = session.scalars(select(QuestionRevision).where(
        QuestionRevision.question_id == row.id).order_by(QuestionRevision.id)).all()
    out, previous = [], ""
    for revision in found:
        text = to_yaml(QuestionFile.model_validate(revision.content))
        diff = "".join(difflib.unified_diff(previous.splitlines(keepends=True),
                                            text.splitlines(keepends=True),
                                            "before", "after", n=1))
        out.append({"revision": revision, "diff": diff})
        previous = text
    return list(reversed(out))


def revision(session: Session, row: Question, revision_id: int) -> QuestionFile | None:
    found = session.scalars(select(QuestionRevision).where(
        QuestionRevision.id == revision_id, QuestionRevision.question_id == row.id)
    ).one_or_none()
    return None if found is None else QuestionFile.model_validate(found.content)


def current_text(row: Question) -> str:
    return to_yaml(question_from_row(row))


def pending_draft(session: Session, row: Question) -> QuestionFile | None:
    """A draft saved over the published version and not yet published: the newest
    revision, when it is a draft and the question is live."""
    if row.status != "published":
        return None
    newest = session.scalars(select(QuestionRevision).where(
        QuestionRevision.question_id == row.id).order_by(QuestionRevision.id.desc()).limit(1)
    ).one_or_none()
    if newest is None or newest.status != "draft":
        return None
    return QuestionFile.model_validate(newest.content)


NEW_QUESTION = """\
id: my-new-question
topic: collectives
tags: [all-reduce]
seniority: mid
difficulty: 2
kind: numeric
answer:
  calculator:
    name: collective
    output: bytes_sent_per_rank
    params: {op: all-reduce, world_size: 8, message_bytes: 800 MB}
  value: 1.4 GB
sources: [Patarasuk & Yuan, JPDC 2009]
translations:
  en:
    title: ...
    prompt: ...
    explanation: ...
    follow_ups: [..., ...]
    guidance: {why_asked: ..., structure: [..., ...], model_answer: ...}
"""
