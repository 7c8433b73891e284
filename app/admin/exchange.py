"""Export the bank as a zip of YAML files, and import one with a preview first."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from app.bank.checks import BankFile, Finding, check_question, read_question_text
from app.bank.loader import content_hash, load_bank, question_from_row, to_yaml
from app.bank.schema import QuestionFile
from app.config import get_settings
from app.questions.models import Question

MAX_ZIP_BYTES = 5 * 1024 * 1024
MAX_FILES = 2000


def export_zip(session: Session, topic: str | None = None, status: str = "published") -> bytes:
    """questions/<topic>/<id>.yaml for every question with this status (and topic)."""
    query = select(Question).where(Question.status == status).order_by(Question.slug).options(
        selectinload(Question.translations), selectinload(Question.tags))
    if topic:
        query = query.where(Question.topic == topic)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for row in session.scalars(query):
            question = question_from_row(row)
            archive.writestr(f"questions/{question.topic}/{question.id}.yaml", to_yaml(question))
    return buffer.getvalue()


@dataclass
class Preview:
    added: list[QuestionFile] = field(default_factory=list)
    changed: list[QuestionFile] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    refused: list[Finding] = field(default_factory=list)

    @property
    def accepted(self) -> list[QuestionFile]:
        return self.added + self.changed


def preview_zip(session: Session, payload: bytes) -> Preview:
    """What importing this zip would add, change and refuse (nothing is written)."""
    preview = Preview()
    if len(payload) > MAX_ZIP_BYTES:
        preview.refused.append(Finding("(zip)", "-", "(file)", "is larger than 5 MB"))
        return preview
    try:
        archive = zipfile.ZipFile(io.BytesIO(payload))
        names = [n for n in archive.namelist() if n.endswith(".yaml")]
    except zipfile.BadZipFile:
        preview.refused.append(Finding("(zip)", "-", "(file)", "is not a zip archive"))
        return preview
    if len(names) > MAX_FILES:
        preview.refused.append(Finding("(zip)", "-", "(file)", f"has more than {MAX_FILES} "
                                       "question files"))
        return preview
    parsed: list[tuple[str, QuestionFile]] = []
    for name in names:
        path = PurePosixPath(name)
        info = archive.getinfo(name)
        if info.file_size > 512 * 1024:
            preview.refused.append(Finding(name, path.stem, "(file)", "is too large"))
            continue
        question, problems = read_question_text(archive.read(name), path, name)
        preview.refused += problems
        if question is not None and not problems:
            parsed.append((name, question))
    existing = {row.slug: row for row in session.scalars(select(Question).where(
        Question.slug.in_([q.id for _, q in parsed])))}
    known = set(session.scalars(select(Question.slug).where(Question.status != "archived")))
    ids = known | {q.id for _, q in parsed}
    for name, question in parsed:
        problems = check_question(question, name, ids, get_settings().bank_dir)
        if problems:
            preview.refused += problems
        elif question.id not in existing:
            preview.added.append(question)
        elif existing[question.id].content_hash != content_hash(question) or \
                existing[question.id].status != "published":
            preview.changed.append(question)
        else:
            preview.unchanged.append(question.id)
    return preview


def apply_zip(session: Session, payload: bytes, author: str) -> Preview:
    """Check again (the preview is not trusted) and publish what passes, in one go."""
    preview = preview_zip(session, payload)
    files = [BankFile(path=Path("(import)", q.topic, f"{q.id}.yaml"), question=q)
             for q in preview.accepted]
    load_bank(session, files, author=author)
    return preview
