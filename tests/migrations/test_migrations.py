"""Migrations on SQLite and PostgreSQL: one head, up from empty, down to base and up again,
and the models match what the migrations build."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from app.db import Base
from tests.conftest import alembic_config, migrate


def test_single_head():
    assert len(ScriptDirectory.from_config(alembic_config()).get_heads()) == 1


def test_up_down_up(empty_engine):
    migrate(empty_engine)
    assert {"question", "question_translation", "question_tag"} <= set(
        inspect(empty_engine).get_table_names())
    migrate(empty_engine, "base", down=True)
    assert set(inspect(empty_engine).get_table_names()) <= {"alembic_version"}
    migrate(empty_engine)
    assert "question" in inspect(empty_engine).get_table_names()


def test_models_match_migrations(engine):
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, Base.metadata) == []
