"""Alembic environment: the URL comes from Ringside's settings, or a connection is passed in.

Tests and ``ringside db`` hand over a connection through ``config.attributes``.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

# Importing the model modules registers their tables on Base.metadata.
import app.accounts.models
import app.practice.models
import app.questions.models  # noqa: F401
from app.config import get_settings
from app.db import Base, make_engine

config = context.config
target_metadata = Base.metadata


def run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters by copying
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        run(connection)
        return
    engine = make_engine(config.attributes.get("url") or get_settings().database_url)
    with engine.connect() as connection:
        run(connection)
    engine.dispose()


if context.is_offline_mode():
    context.configure(url=get_settings().database_url, target_metadata=target_metadata,
                      literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    run_online()
