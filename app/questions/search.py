"""Text normalisation for search that works the same on SQLite and PostgreSQL.

Both sides of a search are normalised: case folded, accents dropped, and the Turkish
dotless ı mapped to i (neither ``lower()`` nor ``casefold()`` knows Turkish: ``İ``
becomes ``i̇`` and ``ı`` stays). Chinese has no word breaks, so search is a
substring match on this column.
"""

from __future__ import annotations

import unicodedata


def normalise(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text.casefold())
    stripped = "".join(c for c in folded if not unicodedata.combining(c))
    return " ".join(stripped.replace("ı", "i").split())
