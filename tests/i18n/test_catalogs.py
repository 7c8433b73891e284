"""UI catalogs: complete, not fuzzy, placeholders intact, in sync with the code."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from babel.messages.pofile import read_po

from app.config import ROOT
from app.i18n import LANGUAGES, LOCALE_DIR, translations

PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]|%%")
TRANSLATED = [lang for lang in LANGUAGES if lang != "en"]


def catalog(lang: str):
    with (LOCALE_DIR / lang / "LC_MESSAGES" / "messages.po").open("rb") as po:
        return read_po(po, locale=lang)


@pytest.mark.parametrize("lang", TRANSLATED)
def test_catalog_is_complete_and_not_fuzzy(lang):
    entries = [m for m in catalog(lang) if m.id]
    assert entries
    for message in entries:
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        assert all(strings), f"{lang}: untranslated {message.id!r}"
        assert not message.fuzzy, f"{lang}: fuzzy {message.id!r}"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_placeholders_match(lang):
    for message in catalog(lang):
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        expected = sorted(set(PLACEHOLDER.findall(ids[-1])))
        for text in strings:
            assert sorted(set(PLACEHOLDER.findall(text))) == expected, (lang, message.id)


@pytest.mark.parametrize("lang", TRANSLATED)
def test_catalog_compiles_and_translates(lang):
    assert translations(lang).gettext("Skip to content") != "Skip to content"


def test_every_string_in_the_code_is_in_the_catalogs(tmp_path):
    """Extraction finds nothing the catalogs lack (run `make i18n-extract` when it fails)."""
    pot = tmp_path / "messages.pot"
    subprocess.run([sys.executable, "-m", "babel.messages.frontend", "extract", "-F",
                    "pyproject.toml", "-k", "_", "-k", "N_", "-k", "ngettext:1,2", "-k",
                    "pgettext:1c,2", "--no-location", "-o", str(pot), "."], cwd=ROOT,
                   check=True, capture_output=True)
    with pot.open("rb") as fh:
        extracted = {m.id if isinstance(m.id, str) else m.id[0] for m in read_po(fh) if m.id}
    for lang in TRANSLATED:
        known = {m.id if isinstance(m.id, str) else m.id[0] for m in catalog(lang) if m.id}
        assert extracted <= known, f"{lang} lacks {sorted(extracted - known)[:5]}"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_catalog_uses_the_glossary_terms(lang):
    """The UI says each concept the way the bank does (app/i18n/glossary/<lang>.yaml)."""
    from app.i18n.terms import variant_uses

    found = []
    for message in catalog(lang):
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        for text in strings:
            found += [f"{message.id!r}: {use}" for use in variant_uses(text or "", lang)]
    assert not found, "\n".join(found)
