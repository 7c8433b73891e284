"""bank check: one broken fixture bank per check, each failing with its precise message."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.bank.checks import check_bank, resolve_path, same_value
from app.cli import main as cli_main

BROKEN = Path(__file__).parent / "broken"
CASES = sorted(p.name for p in BROKEN.iterdir() if p.is_dir())


def expected_message(case: str) -> str:
    for path in (BROKEN / case).rglob("*.yaml"):
        for line in path.read_text().splitlines():
            if line.startswith("# expect: "):
                return line.removeprefix("# expect: ")
    raise AssertionError(f"{case} has no '# expect:' line")


def test_there_is_a_fixture_for_every_check():
    assert len(CASES) >= 20


@pytest.mark.parametrize("case", CASES)
def test_broken_bank_is_refused_with_a_precise_message(case):
    result = check_bank(BROKEN / case)
    messages = [str(f) for f in result.findings]
    expected = expected_message(case)
    assert any(expected in m for m in messages), "\n".join(messages)
    # file: question id: field path: message
    finding = next(f for f in result.findings if expected in str(f))
    assert finding.file.endswith(".yaml") and finding.question and finding.field


@pytest.mark.parametrize("case", ["wrong-answer", "yaml-syntax", "missing-translation"])
def test_cli_check_exits_1_and_lists_problems(capsys, case):
    assert cli_main(["bank", "check", str(BROKEN / case)]) == 1
    err = capsys.readouterr().err
    assert expected_message(case) in err
    assert "Traceback" not in err


def test_cli_check_on_a_missing_directory(capsys):
    assert cli_main(["bank", "check", "/nonexistent/bank"]) == 2
    assert "no such directory" in capsys.readouterr().err


def test_evidence_paths():
    data = {"ranks": [{"grad": [1.0, 1.0]}, {"grad": [2.0, 2.0]}], "torch": "2.13.0"}
    assert resolve_path(data, "ranks[1].grad[0]") == 2.0
    assert resolve_path(data, "torch") == "2.13.0"
    with pytest.raises(KeyError):
        resolve_path(data, "ranks[2]")
    assert same_value([1.5, 1.5000000000001], [1.5, 1.5])
    assert not same_value(True, 1)
