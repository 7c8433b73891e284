"""Browser tests: a live uvicorn server on loopback and Debian's headless Chromium.

Without Chromium the tests are skipped with a visible reason, except when
RINGSIDE_REQUIRE_BROWSER=1 (set by .ci/run), where a missing browser is an error.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from app.bank.checks import check_bank
from app.bank.loader import load_bank
from app.config import ROOT
from app.db import make_engine
from tests.conftest import migrate

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if CHROMIUM:
        return
    if os.environ.get("RINGSIDE_REQUIRE_BROWSER") == "1":
        raise pytest.UsageError("RINGSIDE_REQUIRE_BROWSER=1 but no chromium on PATH")
    skip = pytest.mark.skip(reason="no chromium on PATH (apt-get install chromium)")
    for item in items:
        if "tests/e2e/" in str(item.fspath):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    return {**browser_type_launch_args, "executable_path": CHROMIUM,
            "args": ["--no-sandbox", "--disable-background-networking",
                     "--disable-component-update", "--disable-gpu"]}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def e2e_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """A migrated SQLite database holding the real bank, for the live server."""
    path: Path = tmp_path_factory.mktemp("e2e") / "e2e.db"
    engine = make_engine(f"sqlite:///{path}")
    migrate(engine)
    with Session(engine) as session, session.begin():
        load_bank(session, check_bank(ROOT / "question_bank").files)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def live_server(e2e_engine: Engine) -> Iterator[str]:
    """The app on 127.0.0.1, its sessions bound to the e2e database."""
    from app.main import create_app

    app = create_app()
    app.state.session_factory = sessionmaker(bind=e2e_engine, expire_on_commit=False)
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)
