"""Tree helpers every stage shares: ancestors, paragraphs, hidden elements, noise marks and the words of an
element's ``class`` and ``id``.

Plain functions over lxml elements (no stage's decision is made here). Sources: the paragraph is Viveros-Jiménez
2018 §4's; hidden elements are what readability.js's ``_isProbablyVisible`` reads; the noise mark is StaDyNoT
§3's (Barua et al. 2014) "NOISE" attribute (:data:`~newsclean.transforms.vocab.NOISE_ATTR`); the class/id words
are the DOM context of Readability/Dragnet and the path tokens of :mod:`newsclean.transforms.site_profile`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Container, Iterable, Iterator, Sequence

from lxml import etree

from newsclean.transforms.vocab import NEGATIVE_WORDS, NOISE_ATTR, PARAGRAPH_TAGS, POSITIVE_WORDS

_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NON_ALNUM = re.compile(r"[^0-9a-zA-Z]+")


def paragraph_of(el: etree._Element, tags: Sequence[str] = PARAGRAPH_TAGS) -> etree._Element:
    """Closest ancestor-or-self of ``el`` with a paragraph tag (the topmost ancestor if none)."""
    if tags is PARAGRAPH_TAGS:
        tags = _PARAGRAPH_TAG_SET  # called per block by several stages: a set lookup per step
    node = el
    while node is not None:
        if node.tag in tags:
            return node
        parent = node.getparent()
        if parent is None:
            return node
        node = parent
    return el


_PARAGRAPH_TAG_SET = frozenset(PARAGRAPH_TAGS)


def nth_ancestor(el: etree._Element, depth: int) -> etree._Element:
    """The ``depth``-th ancestor of ``el`` (1 = parent), stopping at the root."""
    node = el
    for _ in range(depth):
        parent = node.getparent()
        if parent is None:
            break
        node = parent
    return node


def ancestors_or_self(el: etree._Element) -> Iterator[etree._Element]:
    """``el``, then its parent, ... up to the root."""
    node = el
    while node is not None:
        yield node
        node = node.getparent()


def under_any(nodes: Iterable[etree._Element | None], hit: Callable[[etree._Element], bool],
              stop: Container[etree._Element] = ()) -> list[bool]:
    """Per node, whether it or one of its ancestors below the first element in ``stop`` satisfies ``hit`` (a None
    node, or one in ``stop``: False; ``stop`` elements are never asked). Each element's answer is found once and
    shared by the nodes below it, so the whole call is linear in the tree however many nodes share ancestors (a
    ``hit`` element itself is asked again when reached again)."""
    memo: dict[etree._Element, bool] = {}
    out = []
    for node in nodes:
        path = []
        while node is not None and node not in stop and node not in memo and not hit(node):
            path.append(node)
            node = node.getparent()
        answer = node is not None and node not in stop and memo.get(node, True)
        for el in path:
            memo[el] = answer
        out.append(answer)
    return out


def shared_elements(region: set[etree._Element]) -> set[etree._Element]:
    """The region's containers and all their ancestors."""
    shared: set[etree._Element] = set()
    for el in region:
        node = el
        while node is not None and node not in shared:
            shared.add(node)
            node = node.getparent()
    return shared


def in_noise(el: etree._Element) -> bool:
    """Whether ``el`` or an ancestor carries a noise mark (:data:`~newsclean.transforms.vocab.NOISE_ATTR`, any
    stage)."""
    return any(n.get(NOISE_ATTR) for n in ancestors_or_self(el))


def is_hidden(el: etree._Element) -> bool:
    """Whether ``el`` is not shown when the page loads: an inline ``display: none`` / ``visibility: hidden``
    style, the ``hidden`` attribute, or ``aria-hidden="true"`` (as readability.js's ``_isProbablyVisible`` reads
    it). Class names (``.hidden``) are not read: that needs the style sheets."""
    style = el.get("style")
    if style and _HIDDEN_STYLE.search(style):
        return True
    return el.get("hidden") is not None or (el.get("aria-hidden") or "").strip().lower() == "true"


def tag_class_signature(el: etree._Element) -> tuple[str, str]:
    """``(tag, class tokens sorted and space-joined)`` of ``el``: siblings with equal signatures are one
    repeated container (``("", ...)`` for a comment or processing instruction)."""
    tag = el.tag if isinstance(el.tag, str) else ""
    names = (el.get("class") or "").split()
    return (tag, names[0] if len(names) == 1 else " ".join(sorted(names)))


def element_token(el: etree._Element) -> str:
    """The path token of ``el``: ``tag.class1.class2#id`` (lower case, sorted class names, names holding a digit left out)."""
    classes = (el.get("class") or "").lower()
    names = classes.split()
    if any(map(str.isdigit, classes)):  # some name holds a digit (most class attributes hold none)
        names = [c for c in names if not any(map(str.isdigit, c))]
    ident = (el.get("id") or "").strip().lower()
    tag = el.tag if isinstance(el.tag, str) else "#"
    return ".".join([tag, *sorted(set(names))]) + (f"#{ident}" if ident and not any(map(str.isdigit, ident)) else "")


def class_id_words(el: etree._Element) -> str:
    """``el``'s ``class`` and ``id`` joined by a space, lowercased (characters; " " when it has neither)."""
    return f"{el.get('class') or ''} {el.get('id') or ''}".lower()


@functools.lru_cache(maxsize=1 << 16)
def cue_words(names: str) -> tuple[int, int]:
    """How many of :data:`~newsclean.transforms.vocab.NEGATIVE_WORDS` and of
    :data:`~newsclean.transforms.vocab.POSITIVE_WORDS` occur in ``names`` (:func:`class_id_words`; (0, 0) when
    blank). Cached: pages and sites repeat their class names."""
    if not names.strip():
        return 0, 0
    return sum(map(names.__contains__, NEGATIVE_WORDS)), sum(map(names.__contains__, POSITIVE_WORDS))


def class_tokens(el: etree._Element) -> frozenset[str]:
    """Lowercased tokens of ``el``'s class and id attributes, split at non-alphanumerics and at camelCase
    humps (``RelatedCoverage-container`` -> related, coverage, container)."""
    raw = f"{el.get('class') or ''} {el.get('id') or ''}"
    return _cached_tokens(raw) if len(raw) <= MAX_CACHED_CLASS_CHARS else _tokens(raw)


MAX_CACHED_CLASS_CHARS = 256
"""Longest ``"class id"`` string whose tokens are kept for the next element that has it (the caches hold at most
16,384 strings: memory stays bounded whatever a page's class names)."""


def _tokens(raw: str) -> frozenset[str]:
    """:func:`class_tokens` of a ``"class id"`` string."""
    return frozenset(t.lower() for part in _NON_ALNUM.split(raw) for t in _HUMP.split(part) if t)


_cached_tokens = functools.lru_cache(maxsize=16384)(_tokens)  # a site's pages repeat their class names


@functools.cache
def word_hint(words: tuple[str, ...] | frozenset[str]) -> re.Pattern:
    """A pattern that finds any of ``words`` inside a lowercased class/id string: a prefilter for
    :func:`class_tokens` (a token equal to a word holds it as a substring), which spares tokenising class names
    that hold none of them. Built once per word set (``words`` hashable: a tuple or a frozenset)."""
    return re.compile("|".join(sorted(map(re.escape, words))))


def hinted_class_tokens(el: etree._Element, hint: re.Pattern) -> frozenset[str]:
    """:func:`class_tokens` of ``el`` when ``hint`` (:func:`word_hint`) finds one of its words in ``el``'s lowercased
    class and id; else empty (no token could be one of those words)."""
    cls, ident = el.get("class"), el.get("id")
    if not cls and not ident:
        return _NO_TOKENS
    raw = f"{cls or ''} {ident or ''}"
    if len(raw) > MAX_CACHED_CLASS_CHARS:
        return _hinted_tokens.__wrapped__(raw, hint)
    return _hinted_tokens(raw, hint)


@functools.lru_cache(maxsize=16384)
def _hinted_tokens(raw: str, hint: re.Pattern) -> frozenset[str]:
    return _tokens(raw) if hint.search(raw.lower()) else _NO_TOKENS


_NO_TOKENS: frozenset[str] = frozenset()
