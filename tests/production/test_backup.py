"""Backup and restore as the README documents them: ``ringside db backup`` of a database
in use (accounts, a draft, progress), ``ringside db restore`` into an empty database,
then every table compared row by row and the bank exported from both compared file by
file."""

from __future__ import annotations

import filecmp
from pathlib import Path

import pytest
from sqlalchemy import Engine, select, text
from sqlalchemy.orm import Session

from app.backup import BackupError, backup, restore
from app.bank.checks import check_bank
from app.bank.loader import export_bank, load_bank
from app.config import ROOT
from app.db import Base, make_engine
from app.questions.models import Question
from tests.conftest import migrate, postgres_database


def url_of(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=False)


@pytest.fixture
def target_url(engine: Engine, tmp_path: Path):
    """An empty database of the same backend as ``engine``."""
    if engine.dialect.name == "sqlite":
        yield f"sqlite:///{tmp_path / 'restored.db'}"
        return
    yield postgres_database("restore")
    postgres_database("restore", create=False)


def fill(engine: Engine) -> None:
    from app.accounts.service import create_user

    with Session(engine) as session, session.begin():
        load_bank(session, check_bank(ROOT / "question_bank").files)
        create_user(session, "backup@example.org", "a perfectly fine passphrase", "admin")
        row = session.scalars(select(Question).order_by(Question.slug)).first()
        row.status = "draft"


def dump(engine: Engine) -> dict[str, list[tuple]]:
    with engine.connect() as connection:
        tables = {name: sorted(map(tuple, connection.execute(table.select())), key=repr)
                  for name, table in Base.metadata.tables.items()}
        tables["alembic_version"] = list(connection.execute(
            text("SELECT version_num FROM alembic_version")))
    return tables


def test_backup_then_restore_into_an_empty_database(engine, target_url, tmp_path):
    fill(engine)
    file = tmp_path / "ringside.backup"
    assert "backed up" in backup(url_of(engine), file)
    assert file.stat().st_size > 10_000
    assert "restored" in restore(target_url, file)

    restored = make_engine(target_url)
    try:
        original = dump(engine)
        assert dump(restored) == original
        assert sum(map(len, original.values())) > 100  # not two empty databases
        exports = []
        for source in (engine, restored):
            directory = tmp_path / f"export-{len(exports)}"
            with Session(source) as session:
                export_bank(session, directory)
            exports.append(directory / "questions")
        comparison = filecmp.dircmp(*exports)
        assert not comparison.left_only and not comparison.right_only
        for sub in comparison.subdirs.values():
            assert not sub.diff_files and not sub.left_only and not sub.right_only
    finally:
        restored.dispose()


def test_restore_refuses_a_database_that_is_not_empty(engine, tmp_path):
    file = tmp_path / "ringside.backup"
    backup(url_of(engine), file)
    with pytest.raises(BackupError, match="not empty"):
        restore(url_of(engine), file)


def test_clear_messages_for_bad_paths(engine, tmp_path):
    with pytest.raises(BackupError, match="no backup file"):
        restore(url_of(engine), tmp_path / "nothing-here")
    existing = tmp_path / "taken"
    existing.write_text("keep me")
    with pytest.raises(BackupError, match="already exists"):
        backup(url_of(engine), existing)
    assert existing.read_text() == "keep me"


def test_the_cli_reports_errors_in_one_line(tmp_path, monkeypatch, capsys):
    from app.cli import main
    from app.config import get_settings

    monkeypatch.setenv("RINGSIDE_DATABASE_URL", f"sqlite:///{tmp_path / 'db.sqlite'}")
    get_settings.cache_clear()
    try:
        migrate(make_engine(f"sqlite:///{tmp_path / 'db.sqlite'}"))
        assert main(["db", "backup", str(tmp_path / "b.db")]) == 0
        assert main(["db", "restore", str(tmp_path / "b.db")]) == 2
        assert "not empty" in capsys.readouterr().err
    finally:
        get_settings.cache_clear()
