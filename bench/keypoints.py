"""Key-point detection on open answers: precision and recall of the pre-ticks.

    python bench/keypoints.py [--details]

Runs ``suggested_ticks`` (app/practice/keypoints.py) on the paraphrase set
(tests/practice/paraphrases.yaml: answers written as candidates say them, each labelled
with the key points it really covers) and prints, per language, the precision and recall
of the ticks, micro-averaged over every (answer, key point) pair, for the rule before
2026-12 (kept below as ``old_rule``) and the current one. Figures, not pass/fail.
``--details`` lists every answer whose ticks differ from its labels.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.bank.checks import question_paths, read_question  # noqa: E402
from app.practice.keypoints import suggested_ticks  # noqa: E402
from app.questions.search import normalise  # noqa: E402
from app.questions.service import view  # noqa: E402

PARAPHRASES = ROOT / "tests" / "practice" / "paraphrases.yaml"
LANGUAGES = ("en", "fr", "tr", "zh")

_WORD = re.compile(r"[\w\-]{5,}|[\u4e00-\u9fff]{2,}")


def old_rule(answer: str, rubric: dict[str, str]) -> list[str]:
    """The rule before 2026-12, verbatim: 40% of a key point's words of 5+ characters (or
    Chinese runs) found as substrings of the answer."""
    said = normalise(answer)
    ticked = []
    for key, text in rubric.items():
        words = {w for w in _WORD.findall(normalise(text))}
        if words and sum(1 for w in words if w in said) / len(words) >= 0.4:
            ticked.append(key)
    return ticked


def new_rule(answer: str, rubric: dict[str, str], lang: str) -> list[str]:
    return suggested_ticks(answer, rubric, lang)


@dataclass
class Score:
    true_pos: int = 0
    false_pos: int = 0
    false_neg: int = 0
    misses: list[str] = field(default_factory=list)

    def add(self, ticked: set[str], covers: set[str]) -> None:
        self.true_pos += len(ticked & covers)
        self.false_pos += len(ticked - covers)
        self.false_neg += len(covers - ticked)

    @property
    def precision(self) -> float | None:
        ticks = self.true_pos + self.false_pos
        return self.true_pos / ticks if ticks else None

    @property
    def recall(self) -> float | None:
        labels = self.true_pos + self.false_neg
        return self.true_pos / labels if labels else None


def rubrics() -> dict[tuple[str, str], dict[str, str]]:
    """(question id, language) -> the rubric texts as the practice page shows them."""
    root = ROOT / "question_bank"
    found = {}
    for path in question_paths(root):
        question, _ = read_question(path, root)
        if question is not None and question.kind == "open":
            for lang in LANGUAGES:
                found[(question.id, lang)] = dict(view(question, lang).texts.rubric)
    return found


def measure(details: bool = False) -> dict[str, dict[str, Score]]:
    data = yaml.safe_load(PARAPHRASES.read_text(encoding="utf-8"))
    texts = rubrics()
    scores = {rule: {lang: Score() for lang in LANGUAGES} for rule in ("old", "new")}
    for qid, by_lang in data.items():
        for lang, answers in by_lang.items():
            rubric = texts[(qid, lang)]
            for number, item in enumerate(answers, 1):
                covers = set(item["covers"])
                old = set(old_rule(item["answer"], rubric))
                new = set(new_rule(item["answer"], rubric, lang))
                scores["old"][lang].add(old, covers)
                scores["new"][lang].add(new, covers)
                if details and new != covers:
                    print(f"{qid} {lang} #{number}: ticked {sorted(new)}, labelled "
                          f"{sorted(covers)}")
    return scores


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--details", action="store_true",
                        help="list the answers whose ticks differ from their labels")
    args = parser.parse_args()
    scores = measure(args.details)
    data = yaml.safe_load(PARAPHRASES.read_text(encoding="utf-8"))
    answers = sum(len(items) for by_lang in data.values() for items in by_lang.values())
    print(f"{len(data)} questions, {answers} answers "
          f"({PARAPHRASES.relative_to(ROOT)})\n")
    print("| language | old precision | old recall | new precision | new recall |")
    print("|---|---|---|---|---|")
    total = {rule: Score() for rule in scores}
    for lang in LANGUAGES:
        old, new = scores["old"][lang], scores["new"][lang]
        print(f"| {lang} | {percent(old.precision)} | {percent(old.recall)} | "
              f"{percent(new.precision)} | {percent(new.recall)} |")
        for rule in scores:
            for name in ("true_pos", "false_pos", "false_neg"):
                setattr(total[rule], name, getattr(total[rule], name)
                        + getattr(scores[rule][lang], name))
    old, new = total["old"], total["new"]
    print(f"| all | {percent(old.precision)} | {percent(old.recall)} | "
          f"{percent(new.precision)} | {percent(new.recall)} |")
    print("\nFor the README (Benchmarks):")
    print(f"Key-point pre-ticks on {answers} paraphrased answers (`make bench-keypoints`): "
          f"precision {percent(old.precision)} -> {percent(new.precision)}, recall "
          f"{percent(old.recall)} -> {percent(new.recall)} (old rule -> new), "
          + ", ".join(f"{lang} {percent(scores['new'][lang].precision)}/"
                      f"{percent(scores['new'][lang].recall)}" for lang in LANGUAGES)
          + " (precision/recall).")


if __name__ == "__main__":
    main()
