"""Bytes -> text -> lxml tree, robust to the encodings and broken markup of real news pages.

Charset order (WHATWG "encoding sniffing", simplified): a byte-order mark wins, then the HTTP
``charset`` parameter, then ``<meta charset>`` / ``http-equiv`` in the first 4096 bytes, then
strict UTF-8, then statistical detection (:func:`detect_charset`). A declared charset that
fails to decode strictly falls through to the next source; the last resort is UTF-8 with
replacement characters. (Issue #3 lists "HTTP charset first, then BOM and meta": we put the
BOM first as browsers do, since a BOM cannot be there by accident.)

Parsing uses lxml.html after a repair step: every ``</body>`` and ``</html>`` end tag is dropped
first, because libxml2 stops keeping content after a stray ``</html>`` that some real pages
carry in the middle of the document (issue #3, "Known traps"); the parser closes both at EOF
(measured on the shared data: docs/DECISIONS.md, "Parser repair step").
html5-parser (an HTML5-conformant parser) would avoid the trap too, but its wheels link their own
libxml2, which refuses to load beside lxml's wheels (``different versions of libxml2``) unless
lxml is built from source: the repair step keeps the install to plain wheels.

``<noscript>`` is read as an HTML5 browser with scripting enabled reads it (WHATWG HTML
"parsing `noscript`": raw text that ends at the first ``</noscript>``), which libxml2 does not
do: it parses the inside as markup, so ``<noscript><div id="x"></noscript>``, a pattern of
real pages, leaves the ``<div>`` open and the rest of the page ends up *inside* the
``<noscript>`` that noise removal removes (StaDyNoT §3.3 lists it as non-informative; pages of
the shared data lost nearly all their text to it: docs/DECISIONS.md, "noscript"). So every ``<noscript>…</noscript>`` span (outside scripts, styles and comments) is cut
before parsing, which is what a browser shows. One exception, what a browser *without*
scripting shows: when the spans hold at least :data:`NOSCRIPT_UNWRAP_RATIO` of the page's words
(a script-rendered page whose article is only in its ``<noscript>`` fallback), their tags are
dropped and their content kept.
"""

from __future__ import annotations

import codecs
import re
import threading
from collections.abc import Iterator

import lxml.html
from charset_normalizer import from_bytes
from lxml import etree

from newsclean.schemas.records import RejectReason
from newsclean.transforms import kernel
from newsclean.transforms.errors import ExtractionError
from newsclean.transforms.text import count_words

SNIFF_BYTES = 4096
DETECTOR_TRUSTED_LANGUAGES = frozenset({
    "Russian", "Ukrainian", "Bulgarian", "Belarusian", "Serbian", "Macedonian", "Kazakh", "Greek",
    "Arabic", "Farsi", "Hebrew", "Turkish", "Thai", "Vietnamese", "Chinese", "Japanese", "Korean",
    "Hindi", "Polish", "Czech", "Slovak", "Hungarian", "Slovene", "Croatian", "Romanian",
    "Lithuanian", "Latvian", "Estonian",
})
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_END_BODY_HTML = re.compile(r"</\s*(?:body|html)\s*>", re.I)
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>", re.I)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")
# Raw-text spans in document order; group 1 is a <noscript> span's content (scripts, styles and
# comments are matched only so that a "<noscript>" inside them is not taken for one).
_RAW_TEXT_SPAN = re.compile(
    r"<script\b.*?</script\s*>|<style\b.*?</style\s*>|<!--.*?-->|<noscript\b[^>]*>(.*?)</noscript\s*>",
    re.I | re.S,
)
_NOSCRIPT_START = re.compile(r"<noscript\b", re.I)
# Where a _RAW_TEXT_SPAN match can start (group 1: script or style): the spans are then found by this
# pattern and plain substring searches (:func:`raw_text_spans`) instead of the lazy ``.*?`` scans.
_SPAN_START = re.compile(r"<(?:(script|style)\b|!--|noscript\b)", re.I)
#: Characters other than ASCII that ``re.I`` matches to a letter of "script", "style" or "noscript"
#: (U+0130, U+0131, U+017F; found by trying every code point), and which ``str.lower`` does not map to it.
_CASE_FOLD_TRAPS = ("\u0130", "\u0131", "\u017f")
_TAG = re.compile(r"<[^>]*>")
_PARSERS = threading.local()
MAX_DEPTH = 512
"""Deepest element nesting kept, in elements below the root: libxml2 cuts a document at depth 256
(and at 2048 with ``huge_tree``) silently, dropping the rest of the page (issue #13: 400 unclosed
``<font>`` tags kept 253 of 400 paragraphs). The parser runs with ``huge_tree`` and a tree that
reaches this bound is rejected (``too_deep``) instead of being cleaned with its tail cut off; it
also keeps the chain's recursive tree walks (``dynamic_noise``) well below Python's default
recursion limit of 1000 frames (a Beam worker's stack already holds about 100)."""
_TOO_DEEP = etree.XPath("boolean(/*" + "/*" * MAX_DEPTH + ")")
NOSCRIPT_UNWRAP_RATIO = 0.5
"""Share in [0, 1] of a page's words (:func:`newsclean.transforms.text.count_words` of its markup-free text)
that its ``<noscript>`` content must reach to be kept (unwrapped) instead of cut; the same rule as a
page-wide ``<form>`` (:class:`newsclean.transforms.noise_removal.NoiseRemovalParams`)."""


def _codec(name: str | None) -> str | None:
    """Python codec name for a charset label, or None when unknown. Windows-1252 replaces Latin-1 (WHATWG)."""
    if not name:
        return None
    try:
        codec = codecs.lookup(name.strip().strip("\"'")).name
    except LookupError:
        return None
    return "cp1252" if codec in ("latin-1", "iso8859-1", "ascii") else codec


def sniff_meta_charset(body: bytes) -> str | None:
    """Charset label declared by a ``<meta>`` tag in the first :data:`SNIFF_BYTES` bytes, if any."""
    m = _META_CHARSET.search(body[:SNIFF_BYTES])
    return m.group(1).decode("ascii", "ignore") if m else None


def _candidates(body: bytes, http_charset: str | None):
    for bom, name in _BOMS:
        if body.startswith(bom):
            yield name, body[len(bom):]
    yield _codec(http_charset), body
    yield _codec(sniff_meta_charset(body)), body
    yield "utf-8", body
    yield detect_charset(body), body


def detect_charset(body: bytes) -> str:
    """Statistical detection (charset-normalizer) for undeclared, non-UTF-8 payloads.

    The detector is trusted only when it recognises a language that Windows-1252 cannot write
    (Cyrillic, Greek, Central European, ...); otherwise the WHATWG default for undeclared
    Western pages, Windows-1252, is used: on short Western text the detector often picks a
    Baltic or Central European code page and garbles every accent.
    """
    best = from_bytes(body[:200_000]).best()
    if best is not None and best.language in DETECTOR_TRUSTED_LANGUAGES:
        return _codec(best.encoding) or "cp1252"
    return "cp1252"


_BINARY_BYTE = re.compile(rb"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]")
_BINARY_SIGNATURES = (b"\x89PNG", b"GIF8", b"\xff\xd8\xff", b"%PDF-", b"PK\x03\x04", b"\x1f\x8b", b"BZh",
                      b"\xfd7zXZ", b"RIFF", b"\x00\x00\x01\x00", b"wOFF", b"wOF2", b"OggS", b"\x1aE\xdf\xa3")


def looks_binary(body: bytes) -> bool:
    """Whether a payload is binary data rather than text: a file signature (PNG, GIF, JPEG, PDF, ZIP,
    gzip, ...) at its start, or a "binary data byte" (C0 controls other than TAB, LF, FF, CR, ESC)
    in its first 1024 bytes (WHATWG MIME Sniffing §7.2, "rules for distinguishing if a resource is
    text or binary"). A UTF-16 byte-order mark makes it text. Used on every page, whatever its
    ``Content-Type`` says: a server that labels an image ``text/html`` must not yield an article
    of replacement characters.
    """
    if body.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    head = body[:1024]
    return head.startswith(_BINARY_SIGNATURES) or _BINARY_BYTE.search(head) is not None


def decode_html(body: bytes, http_charset: str | None = None) -> tuple[str, str]:
    """Decode an HTML payload. Returns ``(text, codec_name)``.

    Raises :class:`ExtractionError` (``EMPTY_BODY``) when ``body`` is empty or whitespace only.
    """
    if not body or not body.strip():
        raise ExtractionError(RejectReason.EMPTY_BODY, "payload has no bytes")
    for codec, data in _candidates(body, http_charset):
        if codec is None:
            continue
        try:
            return data.decode(codec), codec
        except (UnicodeDecodeError, LookupError):
            continue
    return body.decode("utf-8", errors="replace"), "utf-8"


_CONTROL_CHARS = tuple(map(chr, (*range(0x00, 0x09), 0x0b, 0x0c, *range(0x0e, 0x20))))  # what _CONTROL matches


def repair_markup(text: str) -> str:
    """Drop an XML declaration, C0 control characters and every ``</body>``/``</html>`` end tag."""
    text = _XML_DECL.sub("", text, count=1)
    if any(c in text for c in _CONTROL_CHARS):  # one fast scan per character, then the regex only if needed
        text = _CONTROL.sub(" ", text)
    return _END_BODY_HTML.sub("", text)


def prefix_word_counts(text: str, boundary: str | None = None, prepare=None, first: int = 4096,
                       growth: int = 8) -> Iterator[tuple[int, bool]]:
    """Lower bounds of ``count_words(prepare(text))``, growing: ``(words of a prefix, whether the prefix
    is all of text)``, the last one exact. The words of a prefix never exceed the whole's: a cut token
    is a prefix of its token, and a word whenever the cut is (it holds the letter or digit).
    ``boundary``: prefixes end right after this character (``">"`` for markup, so that ``prepare``
    removing tags never sees a cut tag); ``first``: characters of the first prefix, ``growth``: factor
    between prefixes (the work is at most growth / (growth - 1) of one full count)."""
    prepare = prepare or (lambda s: s)
    size = first
    while size < len(text):
        end = size if boundary is None else text.rfind(boundary, 0, size) + 1
        yield count_words(prepare(text[:end])), False
        size *= growth
    yield count_words(prepare(text)), True


def _outside_words_bound(text: str, inner_words: int, unwrap_ratio: float) -> int:
    """The words of ``text`` (markup) or a lower bound of them large enough to show that ``inner_words`` are
    below ``unwrap_ratio`` of all words (see :func:`prefix_word_counts`)."""
    for words, whole in prefix_word_counts(text, ">", lambda s: _TAG.sub(" ", s)):
        if whole or unwrap_ratio * (inner_words + words) > inner_words:
            return words
    raise AssertionError("prefix_word_counts ends with the whole text")


def _word_count(markup: str) -> int:
    """Words (:func:`newsclean.transforms.text.count_words`) of ``markup`` with its tags removed (a rough count:
    entities stay as they are)."""
    return count_words(_TAG.sub(" ", markup))


def resolve_noscript(text: str, unwrap_ratio: float = NOSCRIPT_UNWRAP_RATIO) -> str:
    """``text`` with every ``<noscript>…</noscript>`` span cut (an HTML5 browser with scripting on),
    or with only their tags dropped when their content holds at least ``unwrap_ratio`` (in [0, 1])
    of the page's words (the page's no-script rendering is its content). See the module docstring.
    """
    if not _NOSCRIPT_START.search(text):  # one C scan (lowering the text first costs more)
        return text
    spans = raw_text_spans(text)  # one pass; the text between spans is sliced out
    inner = [text[s[2]:s[3]] for s in spans if s[2] >= 0]
    if not inner:
        return text
    inner_words = sum(_word_count(part) for part in inner)
    unwrap = inner_words > 0 and inner_words >= unwrap_ratio * (
        inner_words + _outside_words_bound(_join_outside(text, spans), inner_words, unwrap_ratio))
    return _replace_spans(text, spans, lambda s: text[s[0]:s[1]] if s[2] < 0 else (text[s[2]:s[3]] if unwrap else " "))


Span = tuple[int, int, int, int]
"""A raw-text span: ``(start, end, inner start, inner end)``, the inner part a ``<noscript>``'s content
(``-1, -1`` for a script, style or comment): ``m.start(), m.end(), *m.span(1)`` of a _RAW_TEXT_SPAN match."""


def raw_text_spans(text: str) -> list[Span]:
    """Every match of ``_RAW_TEXT_SPAN.finditer(text)`` as a :data:`Span`, in order (the same spans).

    The regex scans script bodies character by character for their end; here each span's start comes
    from :data:`_SPAN_START` and its end from a substring search of the lowercased text, which has the
    same result when ``text`` holds none of :data:`_CASE_FOLD_TRAPS` (else the regex runs)."""
    if any(c in text for c in _CASE_FOLD_TRAPS):
        return [(m.start(), m.end(), *m.span(1)) for m in _RAW_TEXT_SPAN.finditer(text)]
    spans: list[Span] = []
    pos = 0
    while (m := _SPAN_START.search(text, pos)) is not None:
        span = _span_from(text, m)
        if span is None:
            pos = m.start() + 1  # no end: the regex fails here and tries the next character
        else:
            spans.append(span)
            pos = span[1]
    return spans


def _span_from(text: str, start: re.Match) -> Span | None:
    """The :data:`Span` whose opening :data:`_SPAN_START` matched at ``start``, or None when it has no end."""
    i, kind = start.start(), start.group(1)
    if kind is not None:  # <script\b.*?</script\s*>, <style\b.*?</style\s*>
        end = _end_tag(text, kind.lower(), start.end())
        return None if end is None else (i, end[1], -1, -1)
    if text.startswith("<!--", i):  # <!--.*?-->
        j = text.find("-->", i + 4)
        return None if j < 0 else (i, j + 3, -1, -1)
    gt = text.find(">", start.end())  # <noscript\b[^>]*>(.*?)</noscript\s*>
    end = None if gt < 0 else _end_tag(text, "noscript", gt + 1)
    return None if end is None else (i, end[1], gt + 1, end[0])


def _end_tag(text: str, name: str, pos: int) -> tuple[int, int] | None:
    """``(start, end)`` of the first ``</name\\s*>`` (``name`` lowercase, matched without case) at or after
    ``pos``: what a lazy ``.*?`` followed by that pattern finds; None when there is none. Without
    :data:`_CASE_FOLD_TRAPS` in ``text``, ``str.lower`` of a piece equals ``name`` exactly when ``re.I`` matches it."""
    while (j := text.find("</", pos)) >= 0:
        k = j + 2 + len(name)
        if text[j + 2:k].lower() == name:
            while k < len(text) and text[k].isspace():  # \s: str.isspace, as re's Unicode whitespace
                k += 1
            if k < len(text) and text[k] == ">":
                return j, k + 1
        pos = j + 1
    return None


def _join_outside(text: str, spans: list[Span]) -> str:
    """``text`` with every span replaced by one space: ``_RAW_TEXT_SPAN.sub(" ", text)`` from its spans."""
    return _replace_spans(text, spans, lambda span: " ")


def _replace_spans(text: str, spans: list[Span], replace) -> str:
    """``_RAW_TEXT_SPAN.sub`` of ``text`` given the pattern's spans in ``text`` (non-empty, in order);
    ``replace`` maps a :data:`Span` to its replacement."""
    parts, end = [], 0
    for span in spans:
        parts.append(text[end:span[0]])
        parts.append(replace(span))
        end = span[1]
    parts.append(text[end:])
    return "".join(parts)


def parse_html(text: str) -> etree._Element:
    """Parse decoded HTML into an lxml.html root ``<html>`` element (after :func:`repair_markup` and
    :func:`resolve_noscript`).

    Raises :class:`ExtractionError`: ``PARSE_ERROR`` when lxml builds no tree or a tree without the
    text the markup holds; ``EMPTY_BODY`` when the document is blank or has markup but no text;
    ``TOO_DEEP`` when elements nest deeper than :data:`MAX_DEPTH`.
    """
    repaired = resolve_noscript(repair_markup(text))
    if not repaired.strip():
        raise ExtractionError(RejectReason.EMPTY_BODY, "document has no markup or text")
    try:
        root = lxml.html.document_fromstring(repaired, parser=html_parser())
    except (etree.ParserError, ValueError) as exc:
        if not _TAG.sub("", repaired).strip():
            raise ExtractionError(RejectReason.EMPTY_BODY, "document has markup but no text") from exc
        raise ExtractionError(RejectReason.PARSE_ERROR, f"lxml could not parse: {exc}") from exc
    if root is None:
        raise ExtractionError(RejectReason.PARSE_ERROR, "lxml returned no root element")
    if _too_deep(root):
        raise ExtractionError(RejectReason.TOO_DEEP, f"elements nested deeper than {MAX_DEPTH} levels")
    if not any(piece.strip() for piece in root.itertext()):  # root.text_content().strip(), without the join
        source_text = _TAG.sub("", _RAW_TEXT_SPAN.sub(" ", repaired)).strip()
        if source_text:  # the parser lost the text: not the chain's "no content"
            raise ExtractionError(RejectReason.PARSE_ERROR,
                                  f"the parsed tree has none of the document's {len(source_text)} characters of text")
    return root


def _too_deep(root: etree._Element) -> bool:
    """Whether an element lies :data:`MAX_DEPTH` elements below the document's root element (:data:`_TOO_DEEP`; the
    compiled kernel's walk where :func:`newsclean.transforms.kernel.enabled` holds)."""
    if kernel.enabled():
        try:
            return kernel.walks().too_deep(root, MAX_DEPTH)
        except kernel.Unsupported:
            pass
    return bool(_TOO_DEEP(root))


def html_parser() -> lxml.html.HTMLParser:
    """This thread's lxml.html parser (lxml parsers must not be shared between threads).

    ``huge_tree`` lifts libxml2's depth limit of 256 (see :data:`MAX_DEPTH`). Every element is an ``lxml.html.HtmlElement`` through a lookup done in C
    (``ElementDefaultClassLookup``): lxml.html's own lookup runs a Python method for every element
    proxy, to give form controls their own classes, which the chain never uses (its cost:
    docs/DECISIONS.md, "Element class lookup").
    """
    parser = getattr(_PARSERS, "parser", None)
    if parser is None:
        parser = _PARSERS.parser = lxml.html.HTMLParser(huge_tree=True)  # depth bound: MAX_DEPTH
        parser.set_element_class_lookup(etree.ElementDefaultClassLookup(
            element=lxml.html.HtmlElement, comment=lxml.html.HtmlComment,
            pi=lxml.html.HtmlProcessingInstruction, entity=lxml.html.HtmlEntity))
    return parser
