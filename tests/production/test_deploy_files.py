"""docker-compose.yml and the Dockerfile cannot run here (no Docker engine); what can be
checked is that they say what the live-server test runs: the same ringside commands,
with arguments the CLI accepts, settings the app reads, and a database it waits for."""

from __future__ import annotations

import json
import re
import shlex

import yaml

from app.cli import build_parser
from app.config import ROOT, Settings


def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def dockerfile_cmd() -> list[list[str]]:
    text = (ROOT / "Dockerfile").read_text()
    (cmd,) = re.findall(r"^CMD (\[.*\])$", text, re.MULTILINE)
    shell = json.loads(cmd)[-1]
    shell = re.sub(r"\$\{[A-Z_]+:-([^}]+)\}", r"\1", shell).replace("exec ", "")
    return [shlex.split(part) for part in shell.split("&&")]


def test_the_image_runs_wait_migrate_load_serve():
    commands = dockerfile_cmd()
    assert [c[1:3] for c in commands] == [["db", "wait"], ["db", "upgrade"],
                                           ["bank", "load"], ["serve", "--host"]]
    for command in commands:
        assert command[0] == "ringside"
        build_parser().parse_args(command[1:])  # exits on an unknown option
    serve = commands[-1]
    assert int(serve[serve.index("--workers") + 1]) >= 2


def test_postgres_has_a_volume_and_a_healthcheck_the_app_waits_for():
    services = compose()["services"]
    db, app = services["db"], services["app"]
    assert "pg_isready" in " ".join(db["healthcheck"]["test"])
    assert any(v.endswith(":/var/lib/postgresql/data") for v in db["volumes"])
    assert app["depends_on"]["db"]["condition"] == "service_healthy"
    assert "HEALTHCHECK" in (ROOT / "Dockerfile").read_text()
    assert "/readyz" in (ROOT / "Dockerfile").read_text()


def test_configuration_comes_from_the_environment_and_is_known_to_the_app():
    environment = compose()["services"]["app"]["environment"]
    assert environment["RINGSIDE_ENV"] == "production"
    assert environment["RINGSIDE_DATABASE_URL"].startswith("postgresql+psycopg://")
    assert ":?" in environment["RINGSIDE_SECRET_KEY"]  # compose refuses to start without it
    known = {f"RINGSIDE_{name.upper()}" for name in Settings.model_fields}
    known |= {"RINGSIDE_WORKERS", "RINGSIDE_FORWARDED_ALLOW_IPS"}  # read by the CMD
    assert set(environment) <= known
    assert "RINGSIDE_WORKERS" in (ROOT / "Dockerfile").read_text()


def test_the_image_imports_the_app_from_its_source_tree():
    """``pip install .`` puts a copy of app/ in site-packages, where ROOT would have no
    templates, migrations or bank (``ringside db upgrade`` then fails: "No
    'script_location' key found"). Checked by hand on a non-editable install: with
    PYTHONPATH set to the source tree, db upgrade, bank load and serve --workers 2 work."""
    text = (ROOT / "Dockerfile").read_text()
    (workdir,) = re.findall(r"^WORKDIR (\S+)$", text, re.MULTILINE)
    assert re.search(rf"^ENV PYTHONPATH={re.escape(workdir)}$", text, re.MULTILINE)
