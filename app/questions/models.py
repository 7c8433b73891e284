"""Questions in the database: the structural spec, one row per language, tags."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base, Timestamped, utcnow


class Question(Timestamped, Base):
    """One bank question. ``spec`` holds every language-independent field of its file."""

    __tablename__ = "question"

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(80), unique=True)
    topic: Mapped[str] = mapped_column(String(40), index=True)
    seniority: Mapped[str] = mapped_column(String(10), index=True)
    difficulty: Mapped[int]
    kind: Mapped[str] = mapped_column(String(20), index=True)
    spec: Mapped[dict[str, Any]]
    content_hash: Mapped[str] = mapped_column(String(64))
    # draft (being written, not public), published, archived (soft-deleted, deleted_at set)
    status: Mapped[str] = mapped_column(String(12), default="published",
                                        server_default="published", index=True)
    deleted_at: Mapped[datetime | None]
    version_id: Mapped[int] = mapped_column(default=1)
    # Languages whose texts predate the last change of the English prompt or explanation.
    stale_languages: Mapped[list[Any]] = mapped_column(default=list, server_default="[]")

    translations: Mapped[list[QuestionTranslation]] = relationship(
        back_populates="question", lazy="raise", cascade="all, delete-orphan",
        order_by="QuestionTranslation.lang")
    tags: Mapped[list[QuestionTag]] = relationship(
        lazy="raise", cascade="all, delete-orphan", order_by="QuestionTag.position")
    evidence: Mapped[list[QuestionEvidence]] = relationship(
        lazy="raise", cascade="all, delete-orphan")

    __mapper_args__ = {"version_id_col": version_id}  # noqa: RUF012 - SQLAlchemy reads it

    @classmethod
    def public(cls) -> ColumnElement[bool]:
        """Candidates see published questions only (not drafts, not archived ones)."""
        return cls.status == "published"


class QuestionTranslation(Base):
    """A question's texts in one language; ``content`` holds the texts beyond the prompt."""

    __tablename__ = "question_translation"
    __table_args__ = (UniqueConstraint("question_id", "lang"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    question_id: Mapped[int] = mapped_column(ForeignKey("question.id", ondelete="CASCADE"))
    lang: Mapped[str] = mapped_column(String(8))
    title: Mapped[str] = mapped_column(String(160))
    prompt: Mapped[str] = mapped_column(Text)
    explanation: Mapped[str] = mapped_column(Text)
    content: Mapped[dict[str, Any]]
    search_text: Mapped[str] = mapped_column(Text)

    question: Mapped[Question] = relationship(back_populates="translations", lazy="raise")


class QuestionTag(Base):
    __tablename__ = "question_tag"

    question_id: Mapped[int] = mapped_column(ForeignKey("question.id", ondelete="CASCADE"),
                                             primary_key=True)
    tag: Mapped[str] = mapped_column(String(80), primary_key=True, index=True)
    position: Mapped[int] = mapped_column(default=0)


class QuestionEvidence(Base):
    """Which recorded experiments a question cites (the experiment pages list them)."""

    __tablename__ = "question_evidence"

    question_id: Mapped[int] = mapped_column(ForeignKey("question.id", ondelete="CASCADE"),
                                             primary_key=True)
    experiment: Mapped[str] = mapped_column(String(80), primary_key=True, index=True)


class QuestionRevision(Base):
    """Every saved state of a question: who, when, and the whole file content."""

    __tablename__ = "question_revision"

    id: Mapped[int] = mapped_column(primary_key=True)
    question_id: Mapped[int] = mapped_column(ForeignKey("question.id", ondelete="CASCADE"),
                                             index=True)
    version: Mapped[int]
    status: Mapped[str] = mapped_column(String(12))
    author: Mapped[str] = mapped_column(String(254))
    note: Mapped[str] = mapped_column(String(200), default="")
    content: Mapped[dict[str, Any]]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
