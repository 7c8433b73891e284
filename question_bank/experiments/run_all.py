"""Run every recorded experiment, or check that a fresh run reproduces the recordings.

    python question_bank/experiments/run_all.py            # re-record every <name>.json
    python question_bank/experiments/run_all.py --check    # fresh run vs recorded, exit 1 on drift
    python question_bank/experiments/run_all.py --only ddp-no-sync [--check]

Each experiment runs in its own subprocess with the interpreter this script was started
with (the one that has torch). This module does not import torch, so the app's tests can
import `differences` from it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# Keys that legitimately change from one run to the next.
IGNORED_TOP_LEVEL = {"recorded_at"}
IGNORED_ANYWHERE = {"timing"}
_MISSING = object()


def experiment_names() -> list[str]:
    return sorted(p.stem for p in HERE.glob("*.py")
                  if not p.name.startswith("_") and p.name != Path(__file__).name)


def differences(recorded: dict, fresh: dict) -> list[str]:
    """Every difference as 'json.path: recorded X, fresh Y', ignoring run-to-run keys."""
    found: list[str] = []
    _compare(recorded, fresh, "", found)
    return found


def _compare(recorded: Any, fresh: Any, path: str, found: list[str]) -> None:
    if isinstance(recorded, dict) and isinstance(fresh, dict):
        for key in list(recorded) + [k for k in fresh if k not in recorded]:
            if key in IGNORED_ANYWHERE or (not path and key in IGNORED_TOP_LEVEL):
                continue
            _compare(recorded.get(key, _MISSING), fresh.get(key, _MISSING),
                     f"{path}.{key}" if path else key, found)
    elif isinstance(recorded, list) and isinstance(fresh, list):
        for i in range(max(len(recorded), len(fresh))):
            _compare(recorded[i] if i < len(recorded) else _MISSING,
                     fresh[i] if i < len(fresh) else _MISSING, f"{path}[{i}]", found)
    elif not _same(recorded, fresh):
        found.append(f"{path or '$'}: recorded {_show(recorded)}, fresh {_show(fresh)}")


def _same(a: Any, b: Any) -> bool:
    # 1 == 1.0 == True in Python; a recording that changes type has changed.
    return type(a) is type(b) and a == b


def _show(value: Any) -> str:
    return "(missing)" if value is _MISSING else json.dumps(value, ensure_ascii=False)


def run_experiment(name: str, out: Path) -> tuple[bool, float, str]:
    """Run one experiment script writing `out`; (succeeded, seconds, its output)."""
    started = time.monotonic()
    proc = subprocess.run(  # noqa: S603 - our own script, run with our own interpreter
        [sys.executable, str(HERE / f"{name}.py"), "--out", str(out)],
        capture_output=True, text=True, check=False)
    return proc.returncode == 0, time.monotonic() - started, proc.stdout + proc.stderr


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="run into a temporary directory and compare with the recordings")
    parser.add_argument("--only", metavar="NAME", help="run only this experiment")
    args = parser.parse_args(argv)

    names = experiment_names()
    if args.only:
        if args.only not in names:
            parser.error(f"unknown experiment {args.only!r}; known: {', '.join(names)}")
        names = [args.only]

    failed = False
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ringside-experiments-") as tmp:
        for name in names:
            recorded_path = HERE / f"{name}.json"
            out = Path(tmp) / f"{name}.json" if args.check else recorded_path
            ok, seconds, output = run_experiment(name, out)
            if not ok:
                failed = True
                print(f"{name}: FAILED after {seconds:.1f} s\n{output}", file=sys.stderr)
                continue
            if not args.check:
                print(f"{name}: recorded in {seconds:.1f} s")
                continue
            if not recorded_path.exists():
                failed = True
                print(f"{name}: no recording {recorded_path.name}")
                continue
            recorded = json.loads(recorded_path.read_text(encoding="utf-8"))
            fresh = json.loads(out.read_text(encoding="utf-8"))
            found = differences(recorded, fresh)
            for line in found:
                print(f"{name}: {line}")
            failed = failed or bool(found)
            print(f"{name}: {'differs' if found else 'reproduced'} ({seconds:.1f} s)")
    print(f"total {time.monotonic() - started:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
