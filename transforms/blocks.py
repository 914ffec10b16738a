"""Atomic text blocks and their shallow text features.

Kohlschütter et al. 2010 §3.3 and §4: "Atomic text blocks are sequences of character data
which are separated by one or more HTML tags, except for A tags - in order to compute the link
density." Features per block:

- number of words: whitespace-delimited sequences holding a letter or digit (Han/Kana: per
  Unicode word boundaries, :mod:`newsclean.transforms.text`);
- link density: words inside ``<a>`` / all words, in [0, 1];
- text density, Eq. (1): wrap the text at ``w_max = 80`` columns; tokens on all lines but the
  last, divided by lines - 1; a one-line block's density is its number of words.

:attr:`BlockParams.non_separator_tags` is the paper's ``("a",)`` by default; the tuned chain
adds inline formatting tags (``em``, ``b``, ``span``...), as boilerpipe's own implementation does.

:attr:`BlockParams.skip_hidden` (off in the papers' configuration, on in the learned chain) leaves out the text of
elements a browser does not show when the page loads: an inline ``display: none`` or ``visibility: hidden`` style,
the ``hidden`` attribute, ``aria-hidden="true"`` (:func:`hidden_elements`; readability.js's ``_isProbablyVisible``
and trafilatura's discard rules drop the same). Measured: docs/DECISIONS.md, "Hidden elements".
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from lxml import etree

from newsclean.transforms import kernel
from newsclean.transforms.dom import is_hidden
from newsclean.transforms.marks import mark_of
from newsclean.transforms.text import _ALNUM, _SPACELESS_WORD, count_words, is_word, spaceless_units, words
from newsclean.transforms.types import BlockParams, TextBlock
from newsclean.transforms.vocab import SKIP_TAGS

_HIDING_CANDIDATES = etree.XPath("descendant::*[@style or @hidden or @aria-hidden]")
_TEXT_LENGTH = etree.XPath("string-length(normalize-space())")
_SKIPPED = " or ".join(f"self::{tag}" for tag in SKIP_TAGS)
# the outermost SKIP_TAGS elements under a node: text that no block holds, counted once
_SKIPPED_UNDER = etree.XPath(f"descendant::*[{_SKIPPED}][not(ancestor::*[{_SKIPPED}])]")


def hidden_elements(body: etree._Element) -> list[etree._Element]:
    """The outermost :func:`is_hidden` elements under ``body`` (not ``body`` itself), in document order.

    Linear in the elements: the candidates inside an outermost hidden element are looked up in its subtree once
    (the subtrees are disjoint), not by walking up from each candidate (quadratic on nested hidden elements)."""
    hidden: list[etree._Element] = []
    covered: set[etree._Element] = set()
    for el in _HIDING_CANDIDATES(body):
        if el in covered or not is_hidden(el):
            continue
        hidden.append(el)
        covered.update(_HIDING_CANDIDATES(el))
    return hidden


def hides_most(hidden: list[etree._Element], shown: list[TextBlock], max_share: float) -> bool:
    """Whether ``hidden`` (:func:`hidden_elements`) hold more than ``max_share`` (in [0, 1]) of the page's text,
    in characters outside :data:`SKIP_TAGS`, whitespace collapsed: theirs against theirs plus the ``shown``
    blocks' (a page that reveals its content by script, which skipping them would empty)."""
    hidden_chars = sum(map(_shown_length, hidden))
    return hidden_chars > max_share * (hidden_chars + sum(len(b.text) for b in shown))


def _shown_length(el: etree._Element) -> float:
    """Characters of text under ``el`` outside :data:`SKIP_TAGS` (as the blocks it is compared with), whitespace
    collapsed."""
    return _TEXT_LENGTH(el) - sum(_TEXT_LENGTH(skipped) for skipped in _SKIPPED_UNDER(el))


def wrap_lines(text: str, width: int = 80) -> list[list[str]]:
    """Greedy word wrap of ``text`` at ``width`` columns; returns the lines as lists of tokens.

    A token longer than ``width`` takes a line of its own. Han/Kana text may break between any
    two of its words without a space (:func:`newsclean.transforms.text.spaceless_units`); those characters
    are East Asian Wide and take two columns each, as on a fixed-width terminal.
    """
    lines: list[list[str]] = []
    current: list[str] = []
    used = 0
    for token in text.split():
        for i, unit in enumerate(spaceless_units(token)):
            size = _columns(unit)
            extra = size + (1 if current and i == 0 else 0)
            if current and used + extra > width:
                lines.append(current)
                current, used = [], 0
                extra = size
            current.append(unit)
            used += extra
    if current:
        lines.append(current)
    return lines


def _columns(unit: str) -> int:
    """Display columns of one wrap unit: two per East Asian Wide/Fullwidth character."""
    if unit.isascii():
        return len(unit)
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in unit)


def text_density(text: str, width: int = 80, num_words: int | None = None, tokens: list[str] | None = None) -> float:
    """Eq. (1) of Kohlschütter 2010: words on all wrapped lines but the last / (lines - 1); one line: its words.

    ``num_words``: the words of ``text`` when the caller has counted them already; ``tokens``: ``text.split()``
    when the caller has split it already.
    """
    if len(text) <= width // 2 or (len(text) <= width and text.isascii()):  # one line, however wide
        return float(count_words(text) if num_words is None else num_words)
    tokens = text.split() if tokens is None else tokens
    narrow = _narrow_tokens(text)  # every token one unit of len() columns
    if narrow and num_words == len(tokens):  # ... and every token a word
        lines = _wrapped_lines(" ".join(tokens), width)
        if lines is not None:
            return float(num_words) if len(lines) <= 1 else (num_words - lines[-1].count(" ") - 1) / (len(lines) - 1)
    # Words per wrapped line: a line's units hold no whitespace and are whole Han/Kana words or runs
    # free of them, so count_words(" ".join(line)) is the number of its units that are words.
    per_line = _ascii_line_words(tokens, width) if narrow else \
        [sum(map(is_word, line)) for line in wrap_lines(text, width)]
    if len(per_line) <= 1:
        return float(count_words(text) if num_words is None else num_words)
    return sum(per_line[:-1]) / (len(per_line) - 1)


def _wrapped_lines(joined: str, width: int) -> list[str] | None:
    """The lines of :func:`wrap_lines` as strings (units joined by single spaces), found in C by
    :func:`_line_pattern`, for ``joined``: tokens joined by single spaces, each one unit of ``len`` columns
    (:func:`_narrow_tokens`). None when a token is wider than ``width`` (it takes a line of its own, where the
    pattern cannot start: the lines found then leave out some of its characters)."""
    if width < 1:
        return None
    lines = _line_pattern(width).findall(joined)
    return lines if sum(map(len, lines)) + len(lines) - 1 == len(joined) else None


@lru_cache(maxsize=8)
def _line_pattern(width: int) -> re.Pattern:
    """A greedy line of at most ``width`` characters from a token's start to a token's end (the next character
    whitespace, or the text's end): with single separators, the longest run of whole tokens that fits, as the
    greedy word wrap builds each line."""
    return re.compile(rf"\S.{{0,{width - 1}}}(?=\s|\Z)", re.DOTALL)


def _narrow_tokens(text: str) -> bool:
    """Whether every whitespace-separated token of ``text`` is one wrap unit of ``len`` columns, as in ASCII
    text: no Han/Kana word (:func:`~newsclean.transforms.text.spaceless_units` keeps each token whole) and
    no East Asian Wide/Fullwidth character (:func:`_columns`)."""
    if text.isascii():
        return True
    return not _SPACELESS_WORD.search(text) and not any(map(_wide, set(text)))


@lru_cache(maxsize=1 << 14)
def _wide(char: str) -> bool:
    """Whether ``char`` takes two columns (East Asian Wide or Fullwidth)."""
    return unicodedata.east_asian_width(char) in "WF"


def _ascii_line_words(tokens: list[str], width: int) -> list[int]:
    """Words on each line of :func:`wrap_lines` for ``tokens`` of one unit and ``len`` columns each
    (ASCII text; any text for which :func:`_narrow_tokens` holds)."""
    counts: list[int] = []
    units = line_words = used = 0
    for token in tokens:
        extra = len(token) + (1 if units else 0)
        if units and used + extra > width:
            counts.append(line_words)
            units = line_words = 0
            used, extra = 0, len(token)
        units += 1
        line_words += token.isalnum() or bool(_ALNUM.search(token) and token.strip("_"))  # is_word, inlined
        used += extra
    if units:
        counts.append(line_words)
    return counts


class _Builder:
    """Turns the text pieces gathered between two separators into a block."""

    def __init__(self, params: BlockParams, detail: bool = True):
        self.params = params
        self.detail = detail
        self.blocks: list[TextBlock] = []

    def flush(self, pieces: list[tuple[etree._Element, str]], texts: list[str], linked: list[str],
              container: etree._Element) -> None:
        """Append the block of ``pieces`` ``(element, slot)`` holding ``texts`` (``linked``: those inside a link),
        the first piece's container ``container`` (no block without words). The block keeps the list ``pieces``."""
        tokens = "".join(texts).split()  # collapse_ws: one space between tokens
        if not tokens:
            return
        text = " ".join(tokens)
        ws = _words_of_tokens(tokens, text)
        if not ws:
            return
        n = len(ws)
        linked_words = sum([len(words(t)) for t in linked]) if linked else 0  # count_words, one call less
        if self.detail:
            block = TextBlock(text, n, min(linked_words, n), text_density(text, self.params.wrap_width, n, tokens),
                              container, pieces)
        else:
            block = TextBlock(text, n, min(linked_words, n), 0.0, container)
        block.words = ws  # the cached property's value, computed here already
        self.blocks.append(block)


def _words_of_tokens(tokens: list[str], text: str) -> list[str]:
    """:func:`~newsclean.transforms.text.words` of ``text``, given ``tokens == text.split()`` (split once)."""
    if text.isascii() or not _SPACELESS_WORD.search(text):
        return [t for t in tokens if t.isalnum() or (_ALNUM.search(t) and t.strip("_"))]  # words()' own test
    return words(text)


def extract_blocks(root: etree._Element, params: BlockParams = BlockParams(), detail: bool = True) -> list[TextBlock]:
    """Segment the ``<body>`` of ``root`` (or ``root`` itself) into atomic text blocks, in document order.

    ``detail=False`` leaves every block's ``text_density`` at 0.0 and its ``pieces`` empty, for a caller that
    reads neither (the word wrap and the pieces are a quarter of the blocks' cost:
    :func:`newsclean.transforms.site_profile.summarise_page`). With ``params.skip_hidden``, the text of
    :func:`hidden_elements` is no block, unless they hold most of the page's text (:func:`hides_most`).
    The compiled kernel does the same walk where :func:`newsclean.transforms.kernel.enabled` holds."""
    return _extract_blocks(root, params, detail)


@kernel.twin("extract_blocks")
def _extract_blocks(root: etree._Element, params: BlockParams, detail: bool) -> list[TextBlock]:
    """:func:`extract_blocks` with its settings given."""
    body = root.find("body") if root.tag == "html" else root
    body = root if body is None else body
    hidden = hidden_elements(body) if params.skip_hidden else []
    blocks = _segment(body, params, detail, frozenset(hidden))
    if hidden and hides_most(hidden, blocks, params.max_hidden_share):
        blocks = _segment(body, params, detail, frozenset())
    return blocks


def _segment(body: etree._Element, params: BlockParams, detail: bool,
             hidden: frozenset[etree._Element]) -> list[TextBlock]:
    """:func:`extract_blocks`' walk over ``body``, whose ``hidden`` elements are skipped like :data:`SKIP_TAGS`."""
    builder = _Builder(params, detail)
    non_separators = frozenset(params.non_separator_tags)
    separate_marked = params.separate_marked
    skip_tags = frozenset(SKIP_TAGS)
    # the pending block: its pieces (element, slot), their texts, those inside links, the first one's container
    pieces: list[tuple[etree._Element, str]] = []
    texts: list[str] = []
    linked: list[str] = []
    first: etree._Element | None = None
    has_text = False  # whether a piece of ``pieces`` holds more than whitespace (else flushing yields no block)
    containers: list[etree._Element] = []
    open_tags: list[tuple[bool, bool, bool]] = []  # (separator, skipped, link) of every element entered, not yet left
    kinds: dict[str, tuple[bool, bool, bool]] = {}  # the same, by tag (an element marked as noise may differ)
    links = 0
    skipping = 0
    for event, el in etree.iterwalk(body, events=("start", "end", "comment", "pi")):
        if event == "start":
            tag = el.tag
            kind = kinds.get(tag)
            if kind is None:
                kind = kinds[tag] = (tag not in non_separators, tag in skip_tags, tag == "a")
            separator, skip, link = kind
            if hidden and not skip and el in hidden:
                skip, kind = True, (separator, True, link)
            if not separator and separate_marked and mark_of(el) is not None:
                separator, kind = True, (True, skip, link)
            open_tags.append(kind)
            if skip:
                skipping += 1
            if separator:
                if pieces:
                    if has_text:
                        builder.flush(pieces, texts, linked, first)
                    pieces, texts, linked, has_text = [], [], [], False
                containers.append(el)
            if link:
                links += 1
            if not skipping:
                text = el.text
                if text:
                    if not pieces:
                        first = containers[-1]
                    pieces.append((el, "text"))
                    texts.append(text)
                    if links:
                        linked.append(text)
                    has_text = has_text or not text.isspace()
            continue
        if event == "end":
            separator, skip, link = open_tags.pop()
            if link:
                links -= 1
            if separator:
                if pieces:
                    if has_text:
                        builder.flush(pieces, texts, linked, first)
                    pieces, texts, linked, has_text = [], [], [], False
                containers.pop()
            if skip:
                skipping -= 1
            if skipping or el is body:
                continue
        elif skipping:  # a comment or processing instruction
            continue
        tail = el.tail
        if tail:
            if not pieces:
                first = containers[-1] if containers else body
            pieces.append((el, "tail"))
            texts.append(tail)
            if links:
                linked.append(tail)
            has_text = has_text or not tail.isspace()
    if has_text:
        builder.flush(pieces, texts, linked, first)
    return builder.blocks
