"""Placeholders in the bank's texts, filled as each language writes numbers."""

from __future__ import annotations

import pytest

from app.bank.texts import TextValues, fill


@pytest.mark.parametrize(("lang", "shown"), [
    ("en", "1.6 GB on 1,024 ranks"),
    ("fr", "1,6 GB on 1\u202f024 ranks"),
    ("tr", "1,6 GB on 1.024 ranks"),
    ("zh", "1.6 GB on 1,024 ranks"),
])
def test_a_drawn_quantity_is_written_with_the_languages_decimal_sign(lang, shown):
    """A variant value such as ``1.6 GB`` read '1.6 GB' on a French page."""
    values = TextValues({"message_bytes": "1.6 GB", "world_size": 1024}, {})
    assert fill("{message_bytes} on {world_size} ranks", values, lang) == shown


def test_a_quantity_in_math_is_written_for_tex():
    values = TextValues({"message_bytes": "2.5 GB"}, {})
    assert fill("$S = {message_bytes}$", values, "fr") == "$S = 2{,}5 GB$"
