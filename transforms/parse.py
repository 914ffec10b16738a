"""Bytes -> text -> lxml tree, robust to the encodings and broken markup of real news pages.

Charset order (WHATWG Encoding §4.1 "decode" and HTML §13.2.3.2 "determining the character encoding",
simplified): a byte-order mark wins (UTF-8, UTF-16BE, UTF-16LE), then the HTTP ``charset`` parameter, then
``<meta charset>`` / ``http-equiv`` in the first 4096 bytes (a ``<meta>`` naming UTF-16 means UTF-8, as in the
prescan: the tag was read as ASCII bytes), then strict UTF-8, then statistical detection
(:func:`detect_charset`). A declared charset that fails to decode strictly falls through to the next source, and
so does a declared UTF-16 on a body without a NUL byte in its first 4096 bytes (ASCII markup in UTF-16 has one in
every character); the last resort is UTF-8 with replacement characters.

The result is checked (WHATWG does not): servers and templates often declare Windows-1251 or ISO-8859-1 for a
body that is UTF-8. A body that is valid UTF-8 with multi-byte sequences, whose declared (HTTP or ``<meta>``)
reading holds more mojibake than its UTF-8 reading, is UTF-8. Mojibake is what ftfy's detector
(``ftfy.badness``: character sequences that UTF-8 read in a legacy code page produces) finds; text that still has
:data:`MOJIBAKE_MAX_PER_WORD` or more of it per word is rejected (``decode_error``), never an article.

Parsing uses lxml.html after a repair step: every ``</body>`` and ``</html>`` end tag is dropped
first, because libxml2 stops keeping content after a stray ``</html>`` that some real pages
carry in the middle of the document; the parser closes both at EOF
(measured on the shared data: docs/DECISIONS.md, "Parser repair step").
html5-parser (an HTML5-conformant parser) would avoid the trap too, but its wheels link their own
libxml2, which refuses to load beside lxml's wheels (``different versions of libxml2``) unless
lxml is built from source: the repair step keeps the install to plain wheels.

Two constructs of XHTML and old HTML that libxml2's HTML parser reads differently from what a reader sees are
rewritten before parsing (:func:`resolve_cdata`, :func:`resolve_noframes`): a CDATA section outside scripts,
styles and comments is text (XML 1.0 §2.7; HTML parsers end it at its first ``>`` as a bogus comment), and
``<noframes>`` content, raw text to an HTML parser, is the document's content in a ``<frameset>`` document (what
a browser without frames shows) and is hidden elsewhere (what a browser with frames shows).

The document's frame is read as an HTML5 parser reads it: XML declarations at its start are dropped
(:func:`drop_xml_declarations`; lxml refuses a ``str`` that starts with one), an ``<html`` start tag with markup
inside it ends before that markup (:func:`repair_html_start_tag`), and the elements libxml2 (an HTML 4 parser) keeps
in ``<head>`` because it does not know them (``<section>``, ``<article>``, ...) move to the body
(:func:`move_head_content`). C0 control characters, raw or as numeric character references, are read as spaces
(:func:`repair_markup`).

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
import functools
import html
import json
import re
import threading
from collections.abc import Iterator

import ftfy
import lxml.html
from charset_normalizer import from_bytes
from ftfy.badness import BADNESS_RE, badness
from lxml import etree

from newsclean.schemas.records import RejectReason
from newsclean.schemas.sniff import looks_binary
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
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_END_BODY_HTML = re.compile(r"</\s*(?:body|html)\s*>", re.I)
_XML_DECLS = re.compile(r"(?:\s*<\?xml[^>]*(?:>|\Z))+", re.I)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")
# A numeric character reference to a character _CONTROL matches (decimal 0-8, 11, 12, 14-31; hex 0-8, b, c, e-1f).
_CONTROL_REF = re.compile(r"&#(?:[xX]0*(?:1[0-9a-fA-F]|[0-8bcefBCEF])(?![0-9a-fA-F])"
                          r"|0*(?:[0-8]|1[124-9]|2[0-9]|3[01])(?![0-9]));?")
# Raw-text spans in document order; group 1 is a <noscript> span's content (scripts, styles and
# comments are matched only so that a "<noscript>" inside them is not taken for one).
_RAW_TEXT_SPAN = re.compile(
    r"<script\b.*?</script\s*>|<style\b.*?</style\s*>|<!--.*?-->|<noscript\b[^>]*>(.*?)</noscript\s*>",
    re.I | re.S,
)
_NOSCRIPT_START = re.compile(r"<noscript\b", re.I)
_NOFRAMES_START = re.compile(r"<noframes\b", re.I | re.A)
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
(and at 2048 with ``huge_tree``) silently, dropping the rest of the page (400 unclosed
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
    """Python codec name for a charset label, or None when unknown. Windows-1252 replaces Latin-1 (WHATWG), and
    the label ``utf-16`` is UTF-16LE (WHATWG Encoding §4.2: Python's ``utf-16`` reads a BOM-less body in the
    machine's byte order)."""
    if not name:
        return None
    try:
        codec = codecs.lookup(name.strip().strip("\"'")).name
    except LookupError:
        return None
    if codec == "utf-16":
        return "utf-16-le"
    return "cp1252" if codec in ("latin-1", "iso8859-1", "ascii") else codec


def sniff_meta_charset(body: bytes) -> str | None:
    """Charset label declared by a ``<meta>`` tag in the first :data:`SNIFF_BYTES` bytes, if any."""
    m = _META_CHARSET.search(body[:SNIFF_BYTES])
    return m.group(1).decode("ascii", "ignore") if m else None


def _meta_codec(body: bytes) -> str | None:
    """Codec of the ``<meta>`` declaration (:func:`sniff_meta_charset`): UTF-16 and UTF-32 become UTF-8, since a tag
    found by reading the bytes as ASCII is not in a wide encoding (WHATWG HTML §13.2.3.2, "prescan")."""
    codec = _codec(sniff_meta_charset(body))
    return "utf-8" if codec is not None and codec.startswith(("utf-16", "utf-32")) else codec


def _candidates(body: bytes, http_charset: str | None) -> Iterator[tuple[str | None, bytes, str]]:
    """``(codec, bytes to decode, source)`` in the order of the module docstring; ``source`` is ``bom``, ``http``,
    ``meta``, ``utf-8`` or ``detected``."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            yield name, body[len(bom):], "bom"
    yield _codec(http_charset), body, "http"
    yield _meta_codec(body), body, "meta"
    yield "utf-8", body, "utf-8"
    yield detect_charset(body), body, "detected"


def _fits(codec: str, data: bytes, source: str) -> bool:
    """Whether a declared ``codec`` may be tried on ``data``: a wide encoding (UTF-16, UTF-32) not announced by a BOM
    needs a NUL byte in the first :data:`SNIFF_BYTES` bytes, which ASCII markup in it has in every character."""
    return source == "bom" or not codec.startswith(("utf-16", "utf-32")) or b"\x00" in data[:SNIFF_BYTES]


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


MOJIBAKE_MAX_PER_WORD = 0.05
"""Mojibake sequences (:func:`mojibake_sequences`) per word (:func:`newsclean.transforms.text.count_words`) of a
decoded page's visible text at or above which the page is rejected (``decode_error``): one in 20 words. Measured
(docs/DECISIONS.md, "Mojibake"): the most on a page of the shared data sets is 0.0144 (msv-big9 "class (1).htm",
22 stray ``â€™`` in 1,526 words); UTF-8 news paragraphs read as Windows-1252 have 0.14 (German) to 0.6 (French),
read as Windows-1251 1.2 (Russian)."""

_LONG_ASCII_RUN = re.compile(r"([\x00-\x7f]{2})[\x00-\x7f]{2,}([\x00-\x7f]{2})")
"""A run of ASCII characters longer than the two on either side of non-ASCII text that a pattern of ftfy's
detector (``ftfy.badness.BADNESS_RE``) can reach; group 1 and 2: those two at each end."""


def _without_long_ascii_runs(text: str) -> str:
    """``text`` with every ASCII run longer than four characters cut to its two ends around a NUL pair."""
    return _LONG_ASCII_RUN.sub("\\1\x00\x00\\2", text)


def has_mojibake(text: str) -> bool:
    """Whether ``text`` holds a mojibake sequence (:func:`mojibake_sequences` > 0; stops at the first)."""
    return not text.isascii() and BADNESS_RE.search(_without_long_ascii_runs(text)) is not None


def mojibake_sequences(text: str) -> int:
    """Number of mojibake sequences in ``text``: matches of ftfy's detector (``ftfy.badness.badness``, ftfy 6).
    Its patterns never match ASCII alone and reach at most two ASCII characters beside non-ASCII ones, so it
    runs on ``text`` with every longer ASCII run cut to its two ends around a NUL pair (which no pattern
    crosses): the same count, checked on every shared page, at a 70th of the cost (docs/DECISIONS.md,
    "Mojibake"). 0 for ASCII text."""
    if text.isascii():
        return 0
    return badness(_without_long_ascii_runs(text))


def remove_tags(markup: str, replacement: str = " ") -> str:
    """``_TAG.sub(replacement, markup)`` (every ``<…>`` replaced), in time linear in ``len(markup)``: the regex alone
    scans from each ``<`` to the end of a text that has no ``>`` after it (quadratic on ``"<a " * 100_000``), so it
    runs only up to the last ``>``; past it no tag can end."""
    last = markup.rfind(">")
    if last < 0:
        return markup
    return _TAG.sub(replacement, markup[:last + 1]) + markup[last + 1:]


def visible_text(markup: str) -> str:
    """``markup`` without scripts, styles, comments, ``<noscript>`` spans and tags (entities stay as written)."""
    return remove_tags(_join_outside(markup, raw_text_spans(markup)))


def mojibake_per_word(markup: str) -> float:
    """Mojibake sequences (:func:`mojibake_sequences`) per word of the visible text of decoded ``markup``
    (:func:`visible_text`): 0.0 for a page without any; may exceed 1 (a word of Windows-1251 mojibake holds several)."""
    if not has_mojibake(markup):  # the common case: one cheap pass over the whole page
        return 0.0
    text = visible_text(markup)
    bad = mojibake_sequences(text)
    return bad / max(count_words(text), 1) if bad else 0.0


def _prefer_utf8(body: bytes, text: str, codec: str) -> tuple[str, str]:
    """``(text, codec)`` of a declared reading of ``body``, or its UTF-8 reading when ``body`` is valid UTF-8 with
    multi-byte sequences and the declared reading holds more mojibake (see the module docstring)."""
    if body.isascii() or not has_mojibake(text):
        return text, codec
    try:
        utf8 = body.decode("utf-8")
    except UnicodeDecodeError:
        return text, codec
    return (utf8, "utf-8") if mojibake_sequences(utf8) < mojibake_sequences(text) else (text, codec)


def _first_decoding(body: bytes, http_charset: str | None) -> tuple[str, str]:
    """The first candidate (:func:`_candidates`) that decodes ``body`` strictly, checked by :func:`_prefer_utf8`
    when declared; UTF-8 with replacement characters when none does."""
    for codec, data, source in _candidates(body, http_charset):
        if codec is None or not _fits(codec, data, source):
            continue
        try:
            text = data.decode(codec)
        except (UnicodeDecodeError, LookupError):
            continue
        return _prefer_utf8(body, text, codec) if source in ("http", "meta") and codec != "utf-8" else (text, codec)
    return body.decode("utf-8", errors="replace"), "utf-8"


def decode_html(body: bytes, http_charset: str | None = None) -> tuple[str, str]:
    """Decode an HTML payload (see the module docstring for the order and the checks). Returns
    ``(text, codec_name)``, ``codec_name`` a Python codec name (``utf-8``, ``utf-16-be``, ``cp1251``, ...).

    Raises :class:`ExtractionError`: ``EMPTY_BODY`` when ``body`` is empty or whitespace only; ``DECODE_ERROR``
    when the decoded text holds :data:`MOJIBAKE_MAX_PER_WORD` or more mojibake sequences per word that
    :func:`repaired_mojibake` cannot undo.
    """
    if not body or not body.strip():
        raise ExtractionError(RejectReason.EMPTY_BODY, "payload has no bytes")
    text, codec = _first_decoding(body, http_charset)
    per_word = mojibake_per_word(text)
    if per_word >= MOJIBAKE_MAX_PER_WORD:
        repaired = repaired_mojibake(text)
        if repaired is None:
            raise ExtractionError(RejectReason.DECODE_ERROR,
                                  f"the text read as {codec} is mojibake ({per_word:.2f} mojibake sequences per word)")
        text = repaired
    return text, codec


def repaired_mojibake(text: str) -> str | None:
    """``text`` with its mojibake undone by ftfy's ``fix_encoding`` (ftfy 6: re-encodes the sequences its detector
    finds and decodes them again, touching nothing else), where that leaves fewer than
    :data:`MOJIBAKE_MAX_PER_WORD` sequences per word: a page stored with its text encoded twice
    (``Earthâ\x80\x99s`` for ``Earth’s``, served as valid UTF-8). None when the repair changes nothing or leaves
    the text mojibake still (a page read in the wrong single-byte code page)."""
    fixed = ftfy.fix_encoding(text)
    return fixed if fixed != text and mojibake_per_word(fixed) < MOJIBAKE_MAX_PER_WORD else None


_JSON_START = re.compile(r"\s*[\[{]")
_JSON_START_BYTES = re.compile(rb"(?:\xef\xbb\xbf)?\s*[\[{]")


def looks_like_json(body: bytes | str) -> bool:
    """Whether a payload (bytes, or text already decoded) is one JSON document (RFC 8259) with an object or array at
    its top: an API response served as ``text/html``, which is no page (``not_html``). Parsed by the standard
    library (bytes in UTF-8, -16 or -32, RFC 8259 §8.1); a body that fails to parse, or nests deeper than Python's
    recursion limit, is not JSON. Only a body whose first non-space character is ``{`` or ``[`` is parsed."""
    start = _JSON_START_BYTES if isinstance(body, bytes) else _JSON_START
    if not start.match(body):
        return False
    try:
        json.loads(body)
    except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return False
    return True


#: The MIME types of an HTML page (WHATWG MIME Sniffing §4.6 "HTML MIME type", and XHTML's).
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


def parse_content_type(value: str | None) -> tuple[str, str | None]:
    """Split a ``Content-Type`` header value into ``(mime_type, charset)``.

    ``mime_type`` is lower-cased without parameters (``""`` when the header is missing);
    ``charset`` is the ``charset`` parameter with quotes stripped, or ``None``.
    Example: ``'text/html; Charset="UTF-8"'`` -> ``('text/html', 'UTF-8')``.
    """
    if not value:
        return "", None
    parts = value.split(";")
    mime = parts[0].strip().lower()
    charset = None
    for param in parts[1:]:
        name, _, val = param.partition("=")
        if name.strip().lower() == "charset":
            charset = val.strip().strip("\"'").strip() or None
    return mime, charset


def looks_like_html(body: bytes) -> bool:
    """Sniff an HTML document in the first 1024 bytes (``<!doctype html``, ``<html``, ``<head``, ``<body``)."""
    head = body[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return any(tag in head for tag in (b"<!doctype html", b"<html", b"<head", b"<body"))


def html_refusal(body: bytes, mime_type: str) -> tuple[RejectReason, str] | None:
    """Why an HTTP payload ``body`` (bytes, content coding removed) served as ``mime_type`` (lower-cased, no
    parameters; ``""``: no ``Content-Type``) is no HTML page, or None when it may be one. In this order: a MIME
    type not in :data:`HTML_TYPES` (``not_html``), a body of zero bytes or only whitespace (``empty_body``), no
    MIME type and a body that does not sniff as HTML (:func:`looks_like_html`), a body that sniffs as binary
    (:func:`~newsclean.schemas.sniff.looks_binary`, WHATWG MIME Sniffing §7.1) or is a JSON document
    (:func:`looks_like_json`), whatever its type says (``not_html``)."""
    if mime_type and mime_type not in HTML_TYPES:
        return RejectReason.NOT_HTML, f"Content-Type {mime_type}"
    if not body.strip():
        return RejectReason.EMPTY_BODY, "payload has no bytes"
    if not mime_type and not looks_like_html(body):
        return RejectReason.NOT_HTML, "no Content-Type and the body does not look like HTML"
    if looks_binary(body):
        return RejectReason.NOT_HTML, f"Content-Type {mime_type or 'missing'} but the body is binary data"
    if looks_like_json(body):
        return RejectReason.NOT_HTML, f"Content-Type {mime_type or 'missing'} but the body is a JSON document"
    return None


_CONTROL_CHARS = tuple(map(chr, (*range(0x00, 0x09), 0x0b, 0x0c, *range(0x0e, 0x20))))  # what _CONTROL matches


def repair_markup(text: str) -> str:
    """``text`` (decoded markup) with every C0 control character other than TAB, LF and CR, and every numeric
    character reference to one (``&#8;``, ``&#x0B;``: libxml2 writes the control into the text), read as a space,
    and every ``</body>``/``</html>`` end tag dropped."""
    if "&#" in text:  # one C scan; the regex only where a reference may be
        text = _CONTROL_REF.sub(" ", text)
    if _has_control(text):
        text = _CONTROL.sub(" ", text)  # the regex only where needed
    return _drop_end_body(text)


@kernel.twin("has_control")
def _has_control(text: str) -> bool:
    """Whether ``text`` holds a character :data:`_CONTROL` matches (one scan)."""
    return any(c in text for c in _CONTROL_CHARS)


def _cut_end_body(end_body_spans, text: str) -> str:
    spans = end_body_spans(text)
    return _replace_spans(text, spans, lambda span: "") if spans else text


@kernel.twin("end_body_spans", adapt=_cut_end_body)
def _drop_end_body(text: str) -> str:
    """``text`` without its ``</body>``/``</html>`` end tags."""
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
    for words, whole in prefix_word_counts(text, ">", remove_tags):
        if whole or unwrap_ratio * (inner_words + words) > inner_words:
            return words
    raise AssertionError("prefix_word_counts ends with the whole text")


def _word_count(markup: str) -> int:
    """Words (:func:`newsclean.transforms.text.count_words`) of ``markup`` with its tags removed (a rough count:
    entities stay as they are)."""
    return count_words(remove_tags(markup))


def resolve_noscript(text: str, unwrap_ratio: float = NOSCRIPT_UNWRAP_RATIO) -> str:
    """``text`` with every ``<noscript>…</noscript>`` span cut (an HTML5 browser with scripting on),
    or with only their tags dropped when their content holds at least ``unwrap_ratio`` (in [0, 1])
    of the page's words (the page's no-script rendering is its content). See the module docstring.
    """
    if not _NOSCRIPT_START.search(text):  # one C scan (lowering the text first costs more)
        return text
    spans = raw_text_spans(text)  # one pass; the text between spans is sliced out
    noscripts = [s for s in spans if s[2] >= 0]  # scripts, styles and comments stay as they are
    if not noscripts:
        return text
    inner_words = sum(_word_count(text[s[2]:s[3]]) for s in noscripts)
    unwrap = inner_words > 0 and inner_words >= unwrap_ratio * (
        inner_words + _outside_words_bound(_join_outside(text, spans), inner_words, unwrap_ratio))
    return _replace_spans(text, noscripts, lambda s: text[s[2]:s[3]] if unwrap else " ")


Span = tuple[int, int, int, int]
"""A raw-text span: ``(start, end, inner start, inner end)``, the inner part a ``<noscript>``'s content
(``-1, -1`` for a script, style or comment): ``m.start(), m.end(), *m.span(1)`` of a _RAW_TEXT_SPAN match."""


def raw_text_spans(text: str) -> list[Span]:
    """Every match of ``_RAW_TEXT_SPAN.finditer(text)`` as a :data:`Span`, in order (the same spans).

    The regex scans script bodies character by character for their end; here each span's start comes
    from :data:`_SPAN_START` and its end from a substring search of the lowercased text, which has the
    same result when ``text`` holds none of :data:`_CASE_FOLD_TRAPS` (else the regex runs). The compiled
    kernel does the same scan where :func:`newsclean.transforms.kernel.enabled` holds."""
    if any(c in text for c in _CASE_FOLD_TRAPS):
        return [(m.start(), m.end(), *m.span(1)) for m in _RAW_TEXT_SPAN.finditer(text)]
    return _scanned_spans(text)


@kernel.twin("raw_text_spans")
def _scanned_spans(text: str) -> list[Span]:
    """:func:`raw_text_spans` of a text holding none of :data:`_CASE_FOLD_TRAPS`."""
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


_RAW_OR_TARGET = r"<(?:(script|style)\b|!--|({target}))"  # one leading "<": re scans for it in C
_RAW_END = {name: re.compile(rf"</{name}[\t\n\f\r ]*>", re.I | re.A) for name in ("script", "style")}


@functools.cache
def _scanner(target: str) -> re.Pattern:
    """Pattern finding, left to right, a script, style or comment start (group 1: script or style) or ``"<"``
    followed by ``target`` (group 2); ASCII case folding only, as an HTML tokenizer."""
    return re.compile(_RAW_OR_TARGET.format(target=target), re.I | re.A)


def sections_outside_raw_text(text: str, target: str, close) -> Iterator[tuple[re.Match, tuple[int, int]]]:
    """Each match of ``"<"`` and the regex ``target`` in ``text`` outside scripts, styles and comments (the match
    starts at the ``"<"``), with ``close(text, m)``:
    ``(start, end)`` of the section's end, from which the scan goes on. Stops at the first unterminated script,
    style, comment or section (the parser reads such a one to the end of the document)."""
    scan, pos = _scanner(target), 0
    while (m := scan.search(text, pos)) is not None:
        if m.group(2) is not None:
            end = close(text, m)
        elif m.group(1) is not None:
            found = _RAW_END[m.group(1).lower()].search(text, m.end())
            end = None if found is None else found.span()
        else:
            j = text.find("-->", m.start() + 4)
            end = None if j < 0 else (j, j + 3)
        if end is None:
            return
        if m.group(2) is not None:
            yield m, end
        pos = end[1]


_SCRIPT_CDATA = re.compile(r"(?://|/\*)[\t\n\f\r ]*<!\[CDATA\[")


def _all_after_script_markers(text: str) -> bool:
    """Whether every ``<![CDATA[`` of ``text`` follows a script comment marker: ``text.count("<![CDATA[") ==
    len(_SCRIPT_CDATA.findall(text))``, found from each section backwards (the sections are few; the regex scans
    the whole page). Each match of that pattern ends at its own section and no section has a marker that another
    match uses (a section holds no ``/``)."""
    start = text.find("<![CDATA[")
    while start >= 0:
        before = start
        while before and text[before - 1] in "\t\n\f\r ":
            before -= 1
        if before < 2 or text[before - 2:before] not in ("//", "/*"):
            return False
        start = text.find("<![CDATA[", start + 9)
    return True


def _cdata_end(text: str, m: re.Match) -> tuple[int, int] | None:
    j = text.find("]]>", m.end())
    return None if j < 0 else (j, j + 3)


def resolve_cdata(text: str) -> str:
    """``text`` with every CDATA section (``<![CDATA[…]]>``) outside scripts, styles and comments replaced by its
    content, escaped: the text an XML parser reads there (XML 1.0 §2.7), which an HTML parser would cut at its first
    ``>`` (WHATWG HTML "CDATA section" is for foreign content only). An unterminated section is left as it is.
    A page whose every section follows a script comment marker (``//<![CDATA[``, ``/*<![CDATA[*/``: the way
    scripts hide their content from XML parsers) is returned as it is without scanning its markup (sections
    in scripts stay, and that marker in text is rare: 494 of the 638 shared pages with CDATA, none of the 15
    whose text this changes)."""
    count = text.count("<![CDATA[")  # one C scan
    if not count or _all_after_script_markers(text):
        return text
    parts, last = [], 0
    for m, (end_start, end) in sections_outside_raw_text(text, r"!\[CDATA\[", _cdata_end):
        parts += [text[last:m.start()], html.escape(text[m.end():end_start], quote=False)]
        last = end
    return "".join(parts) + text[last:] if parts else text


_NOFRAMES_END = re.compile(r"</noframes[\t\n\f\r ]*>", re.I | re.A)


def _noframes_end(text: str, m: re.Match) -> tuple[int, int] | None:
    gt = text.find(">", m.end())  # the start tag's end (a find, not a regex: linear on hostile input)
    found = None if gt < 0 else _NOFRAMES_END.search(text, gt + 1)
    return None if found is None else found.span()


def resolve_noframes(text: str) -> str:
    """``text`` as a reader sees its ``<noframes>`` content (raw text to an HTML parser, so its tags would become
    words): in a document with a ``<frameset>`` (outside scripts, styles and comments) that content is the page (a
    browser without frames shows it): the document is what precedes the first ``<frameset>`` followed by the
    content of every ``<noframes>``; in any other document every ``<noframes>…</noframes>`` is cut (a browser
    with frames hides it)."""
    if not _NOFRAMES_START.search(text):  # one C scan
        return text
    spans = [(m.start(), end[1], text.find(">", m.end()) + 1, end[0])
             for m, end in sections_outside_raw_text(text, r"noframes\b", _noframes_end)]
    if not spans:
        return text
    frameset = next(sections_outside_raw_text(text, r"frameset\b", lambda _text, m: (m.start(), m.end())), None)
    if frameset is not None:
        return text[:frameset[0].start()] + " ".join(text[s[2]:s[3]] for s in spans)
    return _replace_spans(text, spans, lambda span: " ")


def drop_xml_declarations(text: str) -> str:
    """``text`` (decoded markup) without the XML declarations (``<?xml version="1.0" encoding="utf-8"?>``, and any
    ``<?xml…>`` instruction) at its start, with the whitespace around them: :data:`_XML_DECLS`. lxml refuses a
    ``str`` that starts with a declaration naming an encoding ("Unicode strings with encoding declaration are not
    supported"); an HTML parser reads one as a bogus comment that ends at its first ``>`` (WHATWG HTML §13.2.5.6
    "tag open state", ``<?``), so one without its ``?``, or two in a row, are dropped as well. Runs on the text as it
    reaches the parser (after :func:`repair_markup`: an end tag or control before a declaration is gone by then)."""
    m = _XML_DECLS.match(text)
    return text[m.end():] if m else text


# The attributes of a start tag as an HTML tokenizer reads them (WHATWG HTML §13.2.5.32-38): names, and values
# after "=", quoted (to the closing quote or the end of the text) or not; ends before the first ">" outside quotes.
_START_TAG_ATTRS = re.compile(r"""(?:[^>"'=]++|=[\t\n\f\r ]*+(?:"[^"]*+"?|'[^']*+'?)?|["'])*+""")
_ATTR_TOKEN = re.compile(r"""[^"'=]+|=[\t\n\f\r ]*(?:("[^"]*"?|'[^']*'?))?|["']""")
_MARKUP_START = re.compile(r"<(?:[A-Za-z][A-Za-z0-9-]*[\t\n\f\r />]|!--|/[A-Za-z])")


def _open_quote(attrs: str) -> str:
    """The quote character (``"`` or ``'``) of a value that ``attrs`` (a start tag's attributes, as
    :data:`_START_TAG_ATTRS` reads them) leaves unterminated at its end, or ``""``."""
    values = _ATTR_TOKEN.findall(attrs)  # each token's quoted value, "" for the others: the last one is at the end
    value = values[-1] if values else ""
    return value[0] if value and (len(value) == 1 or value[-1] != value[0]) else ""


def _html_tag_end(text: str, m: re.Match) -> tuple[int, int]:
    """``(start, end)`` of the ``>`` that ends the ``<html`` start tag matched by ``m`` (``(len, len)`` at none)."""
    end = _START_TAG_ATTRS.match(text, m.end()).end()
    return (end, end + 1) if end < len(text) else (end, end)


def repair_html_start_tag(text: str) -> str:
    """``text`` (decoded markup) with its ``<html`` start tag (the first outside scripts, styles and comments) ended
    before the first markup inside it (:data:`_MARKUP_START`: ``<`` and a tag name, ``</``, ``<!--``), its
    unterminated value quoted. Such a tag is a broken one: ``<html lang="en"`` without ``>`` before ``<head>`` is
    harmless, but a value whose quote never closes (``<html lang='en``) makes a tokenizer (WHATWG HTML §13.2.5.36-37,
    the quoted "attribute value" states; libxml2 too) read the rest of the page, or all of it up to the next
    quote, as that value: lxml then finds no document ("Document is empty") or one without its first part."""
    m, (end, _) = next(sections_outside_raw_text(text, r"html(?=[\t\n\f\r /<>])", _html_tag_end), (None, (0, 0)))
    inner = None if m is None else _MARKUP_START.search(text, m.end(), end)
    if inner is None:
        return text
    attrs = text[m.end():inner.start()].split("<", 1)[0].rstrip("\t\n\f\r /")  # no "/>": the element stays open
    return f"{text[:m.end()]}{attrs}{_open_quote(attrs)}>{text[inner.start():]}"


_ELEMENT_VISIBLE_TEXT = etree.XPath(".//text()[not(parent::script or parent::style)][not(ancestor::template)]",
                                    smart_strings=False)


@kernel.twin("visible_text")
def element_visible_text(el: etree._Element) -> str:
    """The text of ``el``'s descendants in document order, without its own tail and without the text a reader never
    sees as text: that of ``<script>`` and ``<style>`` (raw text, WHATWG HTML §13.1.2) and anything under a
    ``<template>`` (inert content, §4.12.3): ``"".join(el.itertext())`` less those (comments are not text); "" for
    an element under a ``<template>``. The compiled kernel's walk where :func:`newsclean.transforms.kernel.enabled` holds (the
    XPath costs about 2 ms on a shared page, ten times ``string()``)."""
    return "".join(_ELEMENT_VISIBLE_TEXT(el))


HEAD_TAGS = frozenset({"base", "basefont", "bgsound", "link", "meta", "title", "noscript", "noframes", "style",
                       "script", "template"})
"""The start tags an HTML5 parser keeps in ``<head>`` (WHATWG HTML §13.2.6.4.4, the "in head" insertion mode); any
other start tag, or text, ends the head and opens the body."""


def move_head_content(root: etree._Element) -> None:
    """Move, in place, every child element of ``root``'s ``<head>`` whose tag is not a :data:`HEAD_TAGS` one and that
    holds visible text (:func:`element_visible_text`) to the start of ``<body>`` (made after the head when there is
    none), in document order.

    libxml2's HTML parser (HTML 4) keeps an element it does not know (``<section>``, ``<article>``, ``<main>``,
    ``<header>``, a custom element) in ``<head>`` when it comes before any ``<body>``, with everything inside it, so
    a page without a ``<body>`` tag kept its text in the head, where no text block is read; an HTML5 parser puts
    it in the body (§13.2.6.4.4). Elements without text stay (nothing reads them as text), and so do the
    :data:`HEAD_TAGS` ones that follow a moved element (metadata reads the head's ``<meta>``)."""
    head = root.find("head")
    strays = [] if head is None else [el for el in head if isinstance(el.tag, str) and el.tag not in HEAD_TAGS
                                      and element_visible_text(el).strip()]
    if not strays:
        return
    body = root.find("body")
    if body is None:
        body = root.makeelement("body", {})
        head.addnext(body)
    lead, body.text = body.text, None
    for i, el in enumerate(strays):
        body.insert(i, el)  # with its tail
    strays[-1].tail = (strays[-1].tail or "") + (lead or "") or None


def parse_html(text: str) -> etree._Element:
    """Parse decoded HTML into an lxml.html root ``<html>`` element (after :func:`resolve_cdata`,
    :func:`repair_markup`, :func:`resolve_noframes`, :func:`resolve_noscript`, :func:`drop_xml_declarations` and
    :func:`repair_html_start_tag`; then :func:`move_head_content`).

    Raises :class:`ExtractionError`: ``NOT_HTML`` when ``text`` is a JSON document (:func:`looks_like_json`);
    ``PARSE_ERROR`` when lxml builds no tree or a tree without the
    text the markup holds; ``EMPTY_BODY`` when the document is blank or has markup but no text;
    ``TOO_DEEP`` when elements nest deeper than :data:`MAX_DEPTH`.
    """
    if looks_like_json(text):
        raise ExtractionError(RejectReason.NOT_HTML, "the document is JSON, not HTML")
    repaired = repair_html_start_tag(drop_xml_declarations(
        resolve_noscript(resolve_noframes(repair_markup(resolve_cdata(text))))))
    if not repaired.strip():
        raise ExtractionError(RejectReason.EMPTY_BODY, "document has no markup or text")
    try:
        root = lxml.html.document_fromstring(repaired, parser=html_parser())
    except (etree.ParserError, ValueError) as exc:
        if not remove_tags(repaired, "").strip():
            raise ExtractionError(RejectReason.EMPTY_BODY, "document has markup but no text") from exc
        raise ExtractionError(RejectReason.PARSE_ERROR, f"lxml could not parse: {exc}") from exc
    if root is None:
        raise ExtractionError(RejectReason.PARSE_ERROR, "lxml returned no root element")
    if _too_deep(root):
        raise ExtractionError(RejectReason.TOO_DEEP, f"elements nested deeper than {MAX_DEPTH} levels")
    move_head_content(root)
    if not any(piece.strip() for piece in root.itertext()):  # root.text_content().strip(), without the join
        source_text = remove_tags(_join_outside(repaired, raw_text_spans(repaired)), "").strip()
        if source_text:  # the parser lost the text: not the chain's "no content"
            raise ExtractionError(RejectReason.PARSE_ERROR,
                                  f"the parsed tree has none of the document's {len(source_text)} characters of text")
    return root


@kernel.twin("too_deep", adapt=lambda too_deep, root: too_deep(root, MAX_DEPTH))
def _too_deep(root: etree._Element) -> bool:
    """Whether an element lies :data:`MAX_DEPTH` elements below the document's root element (:data:`_TOO_DEEP`; the
    compiled kernel's walk where :func:`newsclean.transforms.kernel.enabled` holds)."""
    return bool(_TOO_DEEP(root))


def html_parser() -> lxml.html.HTMLParser:
    """This thread's lxml.html parser (lxml parsers must not be shared between threads).

    ``huge_tree`` lifts libxml2's depth limit of 256 (see :data:`MAX_DEPTH`). ``collect_ids=False``: libxml2 builds
    no table of the ``id`` attributes (5 % of the parse; nothing here asks for an element by its id, XPath's ``id()``
    would find none). Every element is an ``lxml.html.HtmlElement`` through a lookup done in C
    (``ElementDefaultClassLookup``): lxml.html's own lookup runs a Python method for every element
    proxy, to give form controls their own classes, which the chain never uses (its cost:
    docs/DECISIONS.md, "Element class lookup").
    """
    parser = getattr(_PARSERS, "parser", None)
    if parser is None:
        parser = _PARSERS.parser = lxml.html.HTMLParser(huge_tree=True, collect_ids=False)  # depth: MAX_DEPTH
        parser.set_element_class_lookup(etree.ElementDefaultClassLookup(
            element=lxml.html.HtmlElement, comment=lxml.html.HtmlComment,
            pi=lxml.html.HtmlProcessingInstruction, entity=lxml.html.HtmlEntity))
    return parser
