"""Admin tests write to the shared HTTP-test database: put it back as the bank says
after each test, so the public-page tests still see exactly the bank."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import update
from sqlalchemy.orm import Session

from app.bank.checks import check_bank
from app.bank.loader import load_bank
from app.config import ROOT
from app.db import utcnow
from app.questions.models import Question


@pytest.fixture(autouse=True)
def restore_the_bank(web_engine) -> Iterator[None]:
    yield
    files = check_bank(ROOT / "question_bank").files
    with Session(web_engine) as session, session.begin():
        session.execute(update(Question).where(
            Question.slug.not_in([f.question.id for f in files])).values(
            status="archived", deleted_at=utcnow()))
        load_bank(session, files, author="test clean-up")
