"""A candidate's practice: an anonymous profile, mock interviews, attempts, review cards."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base, utcnow


class Profile(Base):
    """A browser, known by a random token in an HttpOnly cookie; only its hash is stored."""

    __tablename__ = "profile"

    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class MockInterview(Base):
    """One mock interview; its whole state lives here so a reload resumes it."""

    __tablename__ = "mock_interview"

    id: Mapped[int] = mapped_column(primary_key=True)
    public_id: Mapped[str] = mapped_column(String(32), unique=True)
    profile_id: Mapped[int] = mapped_column(ForeignKey("profile.id", ondelete="CASCADE"),
                                            index=True)
    seniority: Mapped[str] = mapped_column(String(10))
    topics: Mapped[list[Any]]
    lang: Mapped[str] = mapped_column(String(8))
    seconds_per_question: Mapped[int | None]
    # [{"slug", "seed"}] in order; steps records what happened at each step.
    plan: Mapped[list[Any]]
    steps: Mapped[list[Any]]
    position: Mapped[int] = mapped_column(default=0)
    stage: Mapped[str] = mapped_column(String(12), default="question")  # question|follow_up|done
    step_started_at: Mapped[datetime] = mapped_column(default=utcnow)
    # The clock of the current step lives here: a reload shows the time really left.
    paused_at: Mapped[datetime | None]
    paused_seconds: Mapped[float] = mapped_column(default=0.0, server_default="0")
    extra_seconds: Mapped[int] = mapped_column(default=0, server_default="0")
    draft: Mapped[str | None] = mapped_column(String(4000))  # the answer typed so far
    # An open answer (or spoken follow-up) being self-checked: {"answer": str, "ticks": [...]}
    assessment: Mapped[dict[str, Any] | None]
    purpose: Mapped[str] = mapped_column(String(10), default="mock", server_default="mock")
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]


class Attempt(Base):
    """One graded answer, in a mock interview or on a question page."""

    __tablename__ = "attempt"

    id: Mapped[int] = mapped_column(primary_key=True)
    profile_id: Mapped[int] = mapped_column(ForeignKey("profile.id", ondelete="CASCADE"),
                                            index=True)
    question_id: Mapped[int] = mapped_column(ForeignKey("question.id", ondelete="CASCADE"))
    interview_id: Mapped[int | None] = mapped_column(
        ForeignKey("mock_interview.id", ondelete="CASCADE"))
    correct: Mapped[bool]
    score: Mapped[float]
    mistake: Mapped[str | None] = mapped_column(String(80))
    seconds: Mapped[float | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)


class ReviewCard(Base):
    """Spaced-repetition state (FSRS) of one question for one profile."""

    __tablename__ = "review_card"
    __table_args__ = (UniqueConstraint("profile_id", "question_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    profile_id: Mapped[int] = mapped_column(ForeignKey("profile.id", ondelete="CASCADE"))
    question_id: Mapped[int] = mapped_column(ForeignKey("question.id", ondelete="CASCADE"))
    card: Mapped[dict[str, Any]]
    due_at: Mapped[datetime] = mapped_column(index=True)
    # The card before its last review, so the candidate's own rating can replace the one
    # the grade gave (again / hard / good / easy) without counting a second review.
    before: Mapped[dict[str, Any] | None]
    reviewed_at: Mapped[datetime | None]
