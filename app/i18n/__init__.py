"""UI strings through gettext catalogs, for the language of the current request.

Catalogs live in ``app/i18n/locale/<lang>/LC_MESSAGES/messages.po`` (extracted from
Python and templates with Babel, see the Makefile). They are compiled in memory when
first used, so there is no build step and no ``.mo`` file to forget.
"""

from __future__ import annotations

import io
from contextvars import ContextVar
from functools import cache
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations

LANGUAGES = ("en", "fr", "tr", "zh")
DEFAULT_LANGUAGE = "en"
LANGUAGE_NAMES = {"en": "English", "fr": "Français", "tr": "Türkçe", "zh": "中文"}
LOCALE_DIR = Path(__file__).parent / "locale"

current_language: ContextVar[str] = ContextVar("current_language", default=DEFAULT_LANGUAGE)


@cache
def translations(lang: str) -> NullTranslations:
    """The compiled catalog of ``lang`` (English strings are the msgids themselves)."""
    path = LOCALE_DIR / lang / "LC_MESSAGES" / "messages.po"
    if lang == DEFAULT_LANGUAGE or not path.exists():
        return NullTranslations()
    with path.open("rb") as po:
        catalog = read_po(po, locale=lang)
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    buffer.seek(0)
    return Translations(buffer)


def gettext(message: str, **variables: object) -> str:
    text = translations(current_language.get()).gettext(message)
    return text % variables if variables else text


def ngettext(singular: str, plural: str, n: int, **variables: object) -> str:
    text = translations(current_language.get()).ngettext(singular, plural, n)
    return text % {"num": n, **variables}


def pgettext(context: str, message: str, **variables: object) -> str:
    text = translations(current_language.get()).pgettext(context, message)
    return text % variables if variables else text


def N_(message: str) -> str:
    """Mark a module-level string for extraction; translate it with ``_()`` when shown."""
    return message


_ = gettext
