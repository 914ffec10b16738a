"""What the crawler and the cleaner both call binary data: one rule, decided as browsers sniff.

The crawler (:mod:`newsclean.crawler.discovery`) skips a response it finds binary instead of storing it as a page,
and the cleaner (:mod:`newsclean.pipeline.stages`) rejects one as ``not_html``; both ask :func:`looks_binary`, so a
page one side keeps the other keeps too. Source: WHATWG MIME Sniffing Standard, §7.1 "Identifying a resource with an
unknown MIME type" (the order of the rules: the HTML and XML signatures first) and §7.2 "Sniffing a mislabeled binary
resource" (binary data bytes). Like :mod:`newsclean.schemas.contract`, the module imports nothing from the rest of
newsclean.
"""

from __future__ import annotations

import codecs
import re

__all__ = ["looks_binary"]

_BINARY_BYTE = re.compile(rb"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]")
_BINARY_SIGNATURES = (b"\x89PNG", b"GIF8", b"\xff\xd8\xff", b"%PDF-", b"PK\x03\x04", b"\x1f\x8b", b"BZh",
                      b"\xfd7zXZ", b"RIFF", b"\x00\x00\x01\x00", b"wOFF", b"wOF2", b"OggS", b"\x1aE\xdf\xa3")
_HTML_SIGNATURE = re.compile(
    rb"(?:\xef\xbb\xbf)?[\t\n\x0c\r ]*(?:<(?:!DOCTYPE HTML|HTML|HEAD|SCRIPT|IFRAME|H1|DIV|FONT|TABLE|A|STYLE|TITLE|B"
    rb"|BODY|BR|P|!--)[ >]|<\?xml)", re.I)
"""WHATWG MIME Sniffing §7.1, "identifying a resource with an unknown MIME type": the HTML signatures (each followed
by a tag-terminating byte, space or ``>``) and the XML one (``<?xml``), after whitespace bytes and, here, a UTF-8
byte-order mark (§7.1 reads that mark as text too)."""


def looks_binary(body: bytes) -> bool:
    """Whether a payload (bytes) is binary data rather than text, decided as WHATWG MIME Sniffing §7.1 ("identifying a
    resource with an unknown MIME type") orders its rules: a payload that starts with an HTML or XML signature
    (:data:`_HTML_SIGNATURE`) or a UTF-16 byte-order mark is text; otherwise a file signature (PNG, GIF, JPEG, PDF,
    ZIP, gzip, ...) at its start, or a "binary data byte" (C0 controls other than TAB, LF, FF, CR, ESC) in its
    first 1024 bytes (§7.2), makes it binary. So one stray control byte in an HTML page does not (the parser reads
    it as a space: :func:`newsclean.transforms.parse.repair_markup`). Used on every page, whatever its ``Content-Type`` says: a server that
    labels an image ``text/html`` must not yield an article of replacement characters.
    """
    if body.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or _HTML_SIGNATURE.match(body):
        return False
    head = body[:1024]
    return head.startswith(_BINARY_SIGNATURES) or _BINARY_BYTE.search(head) is not None
