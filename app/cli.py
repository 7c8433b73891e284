"""The ``ringside`` command: calculators now; the bank and the database as they arrive.

Bad input prints one line per problem on stderr and exits with status 2, never a
traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from app.calculator import InputError, calculators, get
from app.calculator.registry import UnknownCalculator, value_from_text
from app.calculator.units import format_quantity
from app.config import get_settings

if TYPE_CHECKING:
    from app.bank.checks import CheckResult

EXIT_USAGE = 2


class CliError(Exception):
    """A problem the user can fix; printed as one line on stderr."""


def _parse_assignments(pairs: Sequence[str]) -> dict[str, object]:
    params: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CliError(f"'{pair}': parameters are written key=value, e.g. world_size=8")
        if key in params:
            raise CliError(f"{key}: given twice")
        params[key] = value_from_text(value)
    return params


def cmd_calc(args: argparse.Namespace) -> int:
    if args.list:
        for c in calculators():
            print(f"{c.name:<22} {c.summary}")
        return 0
    if not args.name:
        raise CliError("name a calculator (ringside calc --list shows them)")
    try:
        calculator = get(args.name)
    except UnknownCalculator as exc:
        raise CliError(str(exc)) from None
    try:
        evaluation = calculator.evaluate(_parse_assignments(args.params))
    except InputError as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json.dumps(evaluation.outputs))
        return 0
    print(f"{calculator.title} ({calculator.name})")
    width = max(len(name) for name in evaluation.outputs)
    for name, value in evaluation.outputs.items():
        unit = calculator.output(name).unit
        shown = (format_quantity(value, unit) if isinstance(value, (int, float))
                 and not isinstance(value, bool) else json.dumps(value))
        print(f"  {name:<{width}}  {shown}")
    print("\nworked:")
    for line in evaluation.worked:
        print(f"  {line}")
    print(f"\nsources: {'; '.join(calculator.sources)}")
    return 0


def cmd_bank_check(args: argparse.Namespace) -> int:
    result = _checked_bank(args.path)
    for finding in result.findings:
        print(finding, file=sys.stderr)
    if result.findings:
        print(f"{len(result.findings)} problem(s) in {len(result.files)} readable question(s)",
              file=sys.stderr)
        return 1
    print(f"ok: {len(result.files)} questions checked")
    return 0


def _checked_bank(path: str | None) -> CheckResult:
    from app.bank.checks import check_bank

    root = Path(path) if path else get_settings().bank_dir
    if not root.is_dir():
        raise CliError(f"{root}: no such directory")
    return check_bank(root)


def cmd_bank_load(args: argparse.Namespace) -> int:
    from app.bank.loader import load_bank
    from app.db import session_factory

    result = _checked_bank(args.path)
    if result.findings:
        for finding in result.findings:
            print(finding, file=sys.stderr)
        print(f"not loaded: {len(result.findings)} problem(s); the database is unchanged",
              file=sys.stderr)
        return 1
    with session_factory()() as session, session.begin():
        report = load_bank(session, result.files)
    print(f"loaded {len(result.files)} questions: {report.created} new, {report.updated} "
          f"updated, {report.unchanged} unchanged")
    return 0


def cmd_bank_export(args: argparse.Namespace) -> int:
    from app.bank.loader import export_bank
    from app.db import session_factory

    directory = Path(args.directory) if args.directory else get_settings().bank_dir
    with session_factory()() as session:
        written = export_bank(session, directory)
    print(f"exported {len(written)} questions to {directory / 'questions'}")
    return 0


def cmd_bank_stats(args: argparse.Namespace) -> int:
    from app.bank.stats import bank_stats

    stats = bank_stats(_checked_bank(args.path))
    if args.json:
        print(json.dumps(stats))
    else:
        for key, value in stats.items():
            print(f"{key:<22} {value}")
    return 0


def cmd_bank_fmt(args: argparse.Namespace) -> int:
    from app.bank.loader import to_yaml

    result = _checked_bank(args.path)
    changed = 0
    for bank_file in result.files:
        text = to_yaml(bank_file.question)
        if bank_file.path.read_text(encoding="utf-8") != text:
            bank_file.path.write_text(text, encoding="utf-8")
            changed += 1
    print(f"{changed} file(s) rewritten in canonical form")
    return 0


def cmd_db(args: argparse.Namespace) -> int:
    if args.db_command == "wait":
        return _wait_for_database(args.timeout)
    if args.db_command in ("backup", "restore"):
        from app.backup import BackupError, backup, restore

        try:
            message = (backup if args.db_command == "backup" else restore)(
                get_settings().database_url, Path(args.file))
        except BackupError as exc:
            raise CliError(str(exc)) from None
        print(message)
        return 0
    from alembic import command
    from alembic.config import Config
    from alembic.util.exc import CommandError

    from app.config import ROOT

    config = Config(toml_file=ROOT / "pyproject.toml")
    try:
        if args.db_command == "upgrade":
            command.upgrade(config, args.revision)
        else:
            command.downgrade(config, args.revision)
    except CommandError as exc:
        raise CliError(str(exc)) from None
    print(f"database {args.db_command}d to {args.revision}")
    return 0


def _wait_for_database(timeout: float) -> int:
    """Until the database accepts connections (containers start in any order)."""
    import time

    from sqlalchemy import text
    from sqlalchemy.exc import OperationalError

    from app.db import engine

    deadline = time.monotonic() + timeout
    while True:
        try:
            with engine().connect() as connection:
                connection.execute(text("SELECT 1"))
            print("database is up")
            return 0
        except OperationalError as exc:
            if time.monotonic() >= deadline:
                raise CliError(f"database unreachable after {timeout:g} s: "
                               f"{str(exc.orig).strip().splitlines()[0]}") from None
            time.sleep(1)


def cmd_admin_create(args: argparse.Namespace) -> int:
    """The first admin (there is no default account) or more accounts."""
    import getpass

    from app.accounts.service import AccountError, create_user
    from app.db import session_factory

    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = getpass.getpass("Password: ")
        if getpass.getpass("Password again: ") != password:
            raise CliError("the two passwords differ")
    try:
        with session_factory()() as session, session.begin():
            create_user(session, args.email, password, args.role)
    except AccountError as exc:
        raise CliError(str(exc)) from None
    print(f"created {args.role} {args.email.strip().lower()}")
    return 0


def cmd_bank_schema(args: argparse.Namespace) -> int:
    from app.bank.schema import json_schema

    print(json.dumps(json_schema(), indent=2, ensure_ascii=False))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from app.serving import NoDelayHTTPProtocol

    if args.workers < 1:
        raise CliError("--workers must be at least 1")
    # Logging is configured by the app itself (JSON lines with a request id, app/logs.py);
    # proxy headers are trusted only from --forwarded-allow-ips (default: loopback).
    uvicorn.run("app.main:app", host=args.host, port=args.port, workers=args.workers,
                http=NoDelayHTTPProtocol, proxy_headers=True,
                forwarded_allow_ips=args.forwarded_allow_ips, log_config=None, access_log=False)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ringside", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    calc = sub.add_parser("calc", help="run a calculator",
                          description="Run a calculator: ringside calc collective op=all-reduce "
                                      "world_size=8 message_bytes=800MB")
    calc.add_argument("name", nargs="?", help="calculator name (see --list)")
    calc.add_argument("params", nargs="*", metavar="key=value",
                      help="a value is read as JSON where it parses, else as text with units")
    calc.add_argument("--json", action="store_true", help="print one JSON object of the outputs")
    calc.add_argument("--list", action="store_true", help="list the calculators")
    calc.set_defaults(handler=cmd_calc)

    bank = sub.add_parser("bank", help="check, load, export the question bank")
    bank_sub = bank.add_subparsers(dest="bank_command", required=True)
    check = bank_sub.add_parser("check", help="validate every question; exit 1 on problems")
    check.add_argument("path", nargs="?", help="bank directory (default: question_bank/)")
    check.set_defaults(handler=cmd_bank_check)
    schema = bank_sub.add_parser("schema", help="print the JSON Schema of a question file")
    schema.set_defaults(handler=cmd_bank_schema)
    load = bank_sub.add_parser("load", help="check, then upsert the bank into the database")
    load.add_argument("path", nargs="?", help="bank directory (default: question_bank/)")
    load.set_defaults(handler=cmd_bank_load)
    export = bank_sub.add_parser("export", help="write the database back as YAML files")
    export.add_argument("directory", nargs="?", help="target (default: question_bank/)")
    export.set_defaults(handler=cmd_bank_export)
    stats = bank_sub.add_parser("stats", help="counts by topic, seniority, kind, language")
    stats.add_argument("path", nargs="?", help="bank directory (default: question_bank/)")
    stats.add_argument("--json", action="store_true", help="print one JSON object")
    stats.set_defaults(handler=cmd_bank_stats)
    fmt = bank_sub.add_parser("fmt", help="rewrite the files in canonical form")
    fmt.add_argument("path", nargs="?", help="bank directory (default: question_bank/)")
    fmt.set_defaults(handler=cmd_bank_fmt)

    admin = sub.add_parser("admin", help="accounts of editors and admins")
    admin_sub = admin.add_subparsers(dest="admin_command", required=True)
    create = admin_sub.add_parser("create", help="create an account (the first admin too)")
    create.add_argument("email")
    create.add_argument("--role", choices=("admin", "editor"), default="admin")
    create.add_argument("--password-stdin", action="store_true",
                        help="read the password from the first line of stdin (scripts)")
    create.set_defaults(handler=cmd_admin_create)

    db = sub.add_parser("db", help="database migrations")
    db_sub = db.add_subparsers(dest="db_command", required=True)
    upgrade = db_sub.add_parser("upgrade", help="migrate up (default: to head)")
    upgrade.add_argument("revision", nargs="?", default="head")
    upgrade.set_defaults(handler=cmd_db)
    downgrade = db_sub.add_parser("downgrade", help="migrate down to REVISION ('base': empty)")
    downgrade.add_argument("revision")
    wait = db_sub.add_parser("wait", help="wait until the database accepts connections")
    wait.add_argument("--timeout", type=float, default=60.0, help="seconds (default 60)")
    backup = db_sub.add_parser("backup", help="copy the whole database to FILE "
                               "(SQLite online backup, or pg_dump custom format)")
    backup.add_argument("file")
    restore = db_sub.add_parser("restore", help="restore FILE into the configured database, "
                                "which must be empty")
    restore.add_argument("file")
    for command in (wait, backup, restore):
        command.set_defaults(handler=cmd_db)
    downgrade.set_defaults(handler=cmd_db)

    serve = sub.add_parser("serve", help="serve the web app with uvicorn")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1)
    serve.add_argument("--forwarded-allow-ips", default="127.0.0.1",
                       help="proxies whose X-Forwarded-For/Proto are trusted")
    serve.set_defaults(handler=cmd_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except CliError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
