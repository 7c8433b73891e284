"""Whole-database backup and restore: ``ringside db backup FILE`` / ``db restore FILE``.

SQLite uses its online backup API (consistent while the app runs). PostgreSQL uses
``pg_dump --format=custom`` and ``pg_restore``, run with the password in the environment
rather than on the command line. A restore goes only into an empty database, so it never
mixes with or overwrites data already there. The YAML bank (``ringside bank export``)
is the human-readable half of a backup; this file is the complete one (accounts,
drafts, revisions, candidates' progress).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

from sqlalchemy import URL, inspect, make_url

from app.db import make_engine


class BackupError(Exception):
    """A backup or restore that cannot be done; the message says why."""


def _sqlite_path(url: URL) -> Path:
    if not url.database or url.database == ":memory:":
        raise BackupError("an in-memory SQLite database cannot be backed up")
    return Path(url.database)


def _libpq(url: URL) -> tuple[list[str], dict[str, str]]:
    """Connection arguments for the PostgreSQL tools, and the environment with the password."""
    env = dict(os.environ)
    if url.password:
        env["PGPASSWORD"] = str(url.password)
    args = ["--dbname", url.set(drivername="postgresql", password=None)
            .render_as_string(hide_password=False)]
    return args, env


def _run(tool: str, args: list[str], env: dict[str, str]) -> None:
    executable = shutil.which(tool)
    if executable is None:
        raise BackupError(f"{tool} is not installed (it comes with the PostgreSQL client)")
    # A fixed tool found on PATH, with arguments built here from the configured URL.
    result = subprocess.run([executable, *args], env=env, capture_output=True, text=True,  # noqa: S603
                            check=False)
    if result.returncode != 0:
        raise BackupError(f"{tool} failed: {result.stderr.strip()}")


def backup(database_url: str, target: Path) -> str:
    url = make_url(database_url)
    if target.exists():
        raise BackupError(f"{target} already exists; choose a new file name")
    if url.get_backend_name() == "sqlite":
        source = _sqlite_path(url)
        if not source.exists():
            raise BackupError(f"no SQLite database at {source}")
        with closing(sqlite3.connect(source)) as live, closing(sqlite3.connect(target)) as copy:
            live.backup(copy)
    else:
        args, env = _libpq(url)
        _run("pg_dump", ["--format=custom", "--no-owner", "--no-privileges",
                         "--file", str(target), *args], env)
    return f"backed up {url.render_as_string(hide_password=True)} to {target}"


def restore(database_url: str, source: Path) -> str:
    url = make_url(database_url)
    if not source.is_file():
        raise BackupError(f"no backup file at {source}")
    engine = make_engine(database_url)
    try:
        tables = inspect(engine).get_table_names()
    finally:
        engine.dispose()
    if tables:
        raise BackupError(f"the target database is not empty ({len(tables)} tables); restore "
                          "into a new, empty database")
    if url.get_backend_name() == "sqlite":
        with closing(sqlite3.connect(source)) as saved, \
                closing(sqlite3.connect(_sqlite_path(url))) as live:
            saved.backup(live)
    else:
        args, env = _libpq(url)
        _run("pg_restore", ["--no-owner", "--no-privileges", "--exit-on-error",
                            "--single-transaction", *args, str(source)], env)
    return f"restored {source} into {url.render_as_string(hide_password=True)}"
