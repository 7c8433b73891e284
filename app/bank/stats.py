"""Bank figures: ``ringside bank stats --json``."""

from __future__ import annotations

from collections import Counter
from typing import Any

from app.bank.checks import CheckResult
from app.bank.schema import KINDS, LANGUAGES, REVIEW_SCOPES, SENIORITIES, TOPICS


def bank_stats(result: CheckResult) -> dict[str, Any]:
    """Counts over the readable questions; a language counts a question only when the
    check found nothing missing in it."""
    questions = [f.question for f in result.files]
    incomplete = {(f.question, f.field.split(".")[1]) for f in result.findings
                  if f.field.startswith("translations.") and f.field.count(".") >= 1}

    def count(values: list[Any], keys: tuple[Any, ...]) -> dict[str, int]:
        counter = Counter(values)
        return {str(k): counter.get(k, 0) for k in keys}

    return {
        "total": len(questions),
        "by_topic": count([q.topic for q in questions], tuple(TOPICS)),
        "by_seniority": count([q.seniority for q in questions], SENIORITIES),
        "by_difficulty": count([q.difficulty for q in questions], (1, 2, 3)),
        "by_kind": count([q.kind for q in questions], KINDS),
        "languages": {lang: sum(1 for q in questions if lang in q.translations
                                and (q.id, lang) not in incomplete) for lang in LANGUAGES},
        "with_variants": sum(1 for q in questions if q.variants),
        "with_evidence": sum(1 for q in questions if q.evidence),
        # Per topic, how many questions cite a recorded experiment, and which experiments.
        "evidence_by_topic": {topic: sum(1 for q in questions if q.topic == topic and q.evidence)
                              for topic in TOPICS},
        "experiments_cited": dict(sorted(Counter(
            name for q in questions for name in {e.experiment for e in q.evidence}).items())),
        "min_follow_ups": min((min(len(t.follow_ups) for t in q.translations.values())
                               for q in questions if q.translations), default=0),
        "min_linked_follow_ups": min((len(q.follow_ups) for q in questions), default=0),
        "difficulty_by_seniority": {
            s: count([q.difficulty for q in questions if q.seniority == s], (1, 2, 3))
            for s in SENIORITIES},
        "reviewed": {scope: sum(1 for q in questions if any(r.scope == scope for r in q.reviewed))
                     for scope in REVIEW_SCOPES},
        "problems": len(result.findings),
    }
