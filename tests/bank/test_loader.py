"""bank load / export: one transaction, idempotent, and a faithful round trip."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import selectinload

from app.bank.checks import check_bank
from app.bank.loader import export_bank, load_bank, question_from_row
from app.config import ROOT
from app.questions.models import Question, QuestionTranslation

BANK = ROOT / "question_bank"


@pytest.fixture(scope="module")
def bank():
    result = check_bank(BANK)
    assert result.ok
    return result


def test_load_then_export_reproduces_the_files(session, bank, tmp_path):
    report = load_bank(session, bank.files)
    session.commit()
    assert report.created == len(bank.files)
    export_bank(session, tmp_path)
    for bank_file in bank.files:
        exported = tmp_path / bank_file.path.relative_to(BANK)
        assert exported.read_text(encoding="utf-8") == bank_file.path.read_text(encoding="utf-8")
    assert len(list(tmp_path.rglob("*.yaml"))) == len(bank.files)


def test_load_is_idempotent(session, bank):
    load_bank(session, bank.files)
    session.commit()
    versions = dict(session.execute(select(Question.slug, Question.version_id)).all())
    report = load_bank(session, bank.files)
    session.commit()
    assert report.unchanged == len(bank.files) and report.created == report.updated == 0
    assert dict(session.execute(select(Question.slug, Question.version_id)).all()) == versions
    count = session.scalar(select(func.count()).select_from(QuestionTranslation))
    assert count == 4 * len(bank.files)


def test_changed_question_is_updated_in_place(session, bank):
    load_bank(session, bank.files)
    session.commit()
    first = bank.files[0]
    edited = first.question.model_copy(update={"difficulty": 3 if first.question.difficulty
                                               != 3 else 1})
    report = load_bank(session, [type(first)(first.path, edited)])
    session.commit()
    assert report.updated == 1
    row = session.scalars(select(Question).where(Question.slug == edited.id)
                          .options(selectinload(Question.translations),
                                   selectinload(Question.tags))).one()
    assert row.version_id == 2
    assert question_from_row(row) == edited


def test_cli_load_of_a_broken_bank_changes_nothing(tmp_path, monkeypatch, capsys):
    from app import config, db
    from app.cli import main as cli_main

    url = f"sqlite:///{tmp_path / 'cli.db'}"
    monkeypatch.setenv("RINGSIDE_DATABASE_URL", url)
    for cached in (config.get_settings, db.engine, db.session_factory):
        cached.cache_clear()
    try:
        assert cli_main(["db", "upgrade"]) == 0
        assert cli_main(["bank", "load"]) == 0
        broken = tmp_path / "bank"
        shutil.copytree(BANK, broken)
        target = next((broken / "questions").rglob("*.yaml"))
        target.write_text(target.read_text().replace("difficulty:", "difficulty: 9\nx_:", 1))
        capsys.readouterr()
        assert cli_main(["bank", "load", str(broken)]) == 1
        assert "the database is unchanged" in capsys.readouterr().err
        assert cli_main(["bank", "export", str(tmp_path / "out")]) == 0
        out_files = sorted(p.relative_to(tmp_path / "out") for p in
                           (tmp_path / "out").rglob("*.yaml"))
        assert out_files == sorted(p.relative_to(BANK) for p in (BANK / "questions").rglob(
            "*.yaml"))
    finally:
        for cached in (config.get_settings, db.engine, db.session_factory):
            cached.cache_clear()


def test_search_text_is_normalised(session, bank):
    load_bank(session, bank.files)
    session.commit()
    texts = session.scalars(select(QuestionTranslation.search_text)).all()
    assert all(t == t.casefold() and "ı" not in t for t in texts)


def test_export_skips_archived(session, bank, tmp_path: Path):
    from app.db import utcnow

    load_bank(session, bank.files)
    row = session.scalars(select(Question).limit(1)).one()
    row.status, row.deleted_at = "archived", utcnow()
    deleted = row.slug
    session.commit()
    export_bank(session, tmp_path)
    assert deleted not in {p.stem for p in tmp_path.rglob("*.yaml")}
