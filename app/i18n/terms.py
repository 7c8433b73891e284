"""One term per concept in each language: the glossary, its check and its synonyms.

``app/i18n/glossary/<lang>.yaml`` lists, for each concept (named by its English term),
the term this language uses and the variants to avoid. ``bank check`` and the catalog
tests flag a variant found in a text; search widens a query that names a concept to all
of that concept's names, so "气泡" finds the questions about the pipeline bubble and
"bulle" finds those that say "bubble".

Variants are matched on whole words in French and Turkish (with a plural or a Turkish
suffix after them), as substrings in Chinese; text in backticks, ``$…$`` math and any
phrase listed under ``allow`` (a legitimate use, such as a quoted option name) is skipped,
and so are ``{placeholders}`` and ``%(fields)s``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

GLOSSARY_DIR = Path(__file__).parent / "glossary"
GLOSSARY_LANGUAGES = ("fr", "tr", "zh")

# Skipped: code, math, links, and placeholders ({stages}, {=answer:GB}, %(optimizer)s).
_CODE_OR_MATH = re.compile(r"`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|https?://\S+|\{[^{}\n]*\}|%\(\w+\)s",
                           re.S)


@dataclass(frozen=True)
class Term:
    concept: str  # the English term, which names the concept
    preferred: str
    avoid: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    note: str = ""


class GlossaryError(ValueError):
    """A glossary file that cannot be used (named in the message)."""


@cache
def glossary(lang: str) -> tuple[Term, ...]:
    """The terms of ``lang`` (empty for English, which the glossaries translate from)."""
    path = GLOSSARY_DIR / f"{lang}.yaml"
    if lang not in GLOSSARY_LANGUAGES or not path.exists():
        return ()
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    terms = []
    for position, entry in enumerate(data.get("terms") or []):
        if not isinstance(entry, dict) or not entry.get("concept") or not entry.get("preferred"):
            raise GlossaryError(f"{path.name}: terms[{position}] needs a concept and a "
                                f"preferred term")
        terms.append(Term(str(entry["concept"]), str(entry["preferred"]),
                          tuple(str(v) for v in entry.get("avoid") or ()),
                          tuple(str(v) for v in entry.get("allow") or ()),
                          str(entry.get("note") or "")))
    return tuple(terms)


def _pattern(variant: str, lang: str) -> re.Pattern[str]:
    escaped = re.escape(variant)
    if lang == "zh" and not variant.isascii():
        return re.compile(escaped)
    suffix = r"[\wçğıöşüâîû'’]*" if lang == "tr" else r"(?:s|x|es)?"
    return re.compile(rf"(?<![\w-]){escaped}{suffix}(?![\w-])", re.IGNORECASE)


@cache
def _variant_patterns(lang: str) -> tuple[tuple[Term, str, re.Pattern[str]], ...]:
    return tuple((term, variant, _pattern(variant, lang))
                 for term in glossary(lang) for variant in term.avoid)


@dataclass(frozen=True)
class VariantUse:
    found: str
    term: Term

    def __str__(self) -> str:
        return f"'{self.found}' is a variant of '{self.term.preferred}' ({self.term.concept})"


def variant_uses(text: str, lang: str) -> list[VariantUse]:
    """The variants to avoid that ``text`` uses, outside code, math and allowed phrases."""
    patterns = _variant_patterns(lang)
    if not patterns:
        return []
    prose = " ".join(_CODE_OR_MATH.sub(" ", text).split())  # a variant may wrap a line
    lowered = prose.casefold()
    found: list[VariantUse] = []
    for term, variant, pattern in patterns:
        if variant.casefold() not in lowered:  # most texts name few concepts
            continue
        masked = prose
        for phrase in term.allow:
            masked = re.sub(re.escape(phrase), " ", masked, flags=re.IGNORECASE)
        for match in pattern.finditer(masked):
            found.append(VariantUse(match.group(0), term))
    return found


@cache
def _names() -> tuple[tuple[str, ...], ...]:
    """Every concept's names in every language: the English term, preferred and variants."""
    from app.questions.search import normalise

    groups: dict[str, set[str]] = {}
    for lang in GLOSSARY_LANGUAGES:
        for term in glossary(lang):
            names = groups.setdefault(normalise(term.concept), {normalise(term.concept)})
            names.add(normalise(term.preferred))
            names.update(normalise(v) for v in term.avoid)
    return tuple(tuple(sorted(n for n in names if n)) for names in groups.values())


def synonyms(needle: str) -> list[str]:
    """``needle`` (normalised) and, when it names a concept, that concept's other names."""
    found = [needle]
    for names in _names():
        if needle in names:
            found += [name for name in names if name not in found]
    return found
