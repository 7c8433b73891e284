"""Migrations on SQLite and PostgreSQL: one head, up from empty, down to base and up again,
and the models match what the migrations build."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

# The model modules register their tables on the metadata the migrations must match.
import app.accounts.models
import app.practice.models
import app.questions.models  # noqa: F401
from app.db import Base
from tests.conftest import alembic_config, migrate


def test_single_head():
    assert len(ScriptDirectory.from_config(alembic_config()).get_heads()) == 1


def test_up_down_up(empty_engine):
    migrate(empty_engine)
    assert {"question", "question_translation", "question_tag", "question_evidence"} <= set(
        inspect(empty_engine).get_table_names())
    migrate(empty_engine, "base", down=True)
    assert set(inspect(empty_engine).get_table_names()) <= {"alembic_version"}
    migrate(empty_engine)
    assert "question" in inspect(empty_engine).get_table_names()


def test_models_match_migrations(engine):
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, Base.metadata) == []


def test_evidence_is_backfilled_from_specs(empty_engine):
    """Questions loaded before the evidence table existed get their citations filled in."""
    from sqlalchemy import text

    migrate(empty_engine, "b2eebf7ff4ef")
    with empty_engine.begin() as connection:
        connection.execute(text(
            "INSERT INTO question (slug, topic, seniority, difficulty, kind, spec, content_hash,"
            " version_id, created_at, updated_at) VALUES ('q', 'collectives', 'mid', 1, 'open',"
            " :spec, 'h', 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"),
            {"spec": '{"evidence": [{"experiment": "ddp-no-sync", "path": "a", "value": 1}]}'})
    migrate(empty_engine)
    with empty_engine.connect() as connection:
        rows = connection.execute(text("SELECT experiment FROM question_evidence")).all()
    assert [r[0] for r in rows] == ["ddp-no-sync"]
