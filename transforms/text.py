"""Text helpers shared by every stage: whitespace normalisation, words, content hashes.

A *word* is a whitespace-delimited character sequence holding at least one letter or digit
(Kohlschütter 2010 §3.3). Hashes are hex SHA-1 of the normalised text (lowercased, NFC,
whitespace runs collapsed), used for exact-duplicate detection.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

_WS = re.compile(r"\s+")
_ALNUM = re.compile(r"\w")  # \w on str covers Unicode letters and digits (and "_")


def collapse_ws(text: str | None) -> str:
    """``text`` with runs of whitespace turned into one space and ends stripped ('' for None)."""
    return _WS.sub(" ", text).strip() if text else ""


def words(text: str) -> list[str]:
    """Words of ``text``: whitespace-split tokens that contain a letter or digit."""
    # str.isalnum() is the fast path: an alphanumeric token always holds a \w character.
    return [t for t in text.split() if t.isalnum() or (_ALNUM.search(t) and t.strip("_"))]


def count_words(text: str) -> int:
    """Number of :func:`words` in ``text``."""
    return len(words(text))


def normalize_for_hash(text: str) -> str:
    """Text as compared for exact duplicates: NFC, lowercased, whitespace collapsed."""
    return collapse_ws(unicodedata.normalize("NFC", text).lower())


def content_hash(text: str) -> str:
    """Hex SHA-1 (40 characters) of :func:`normalize_for_hash` of ``text``."""
    return hashlib.sha1(normalize_for_hash(text).encode("utf-8")).hexdigest()
