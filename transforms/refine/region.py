"""What the page-level steps share: a block's text container, the page's main region, prose, class tokens.

The *main container* is the text container (the element holding a block's paragraph) with most of the kept
words; the *main region* adds its siblings of the same tag and class (a template repeats the wrapper around
each run of paragraphs: the cluster idea of Readability's ``grabArticle`` and of Viveros-Jiménez 2018 §4's
ancestor groups, applied after the classifier).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence

from lxml import etree

from newsclean.transforms import kernel
from newsclean.transforms.ancestor_filter import paragraph_of
from newsclean.transforms.blocks import TextBlock

_SENTENCE_END = re.compile(r"[.!?\u3002\uff01\uff1f\u0964](?:\s|$|[\"'\u201d\u2019)\u00bb])")
_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NON_ALNUM = re.compile(r"[^0-9a-zA-Z]+")


def text_container(block: TextBlock) -> etree._Element:
    """The element holding the block's paragraph: the parent of :func:`~newsclean.transforms.ancestor_filter.paragraph_of`
    its container (the paragraph itself at the root)."""
    para = paragraph_of(block.container)
    parent = para.getparent()
    return para if parent is None else parent


def last_page_memo(fn: Callable) -> Callable:
    """Decorator for a function of one page's blocks, ``fn(blocks, *args)``: its last answer is given again for the
    same list of blocks (the same object) and equal ``args`` (several page-level steps ask for the same page's; the
    answer is shared: read it, do not change it). One tuple is replaced at a time, so threads never see a mixed
    entry. ``.forget()`` drops the kept answer."""
    last: list[tuple | None] = [None]

    @functools.wraps(fn)
    def memo(blocks, *args):
        kept = last[0]
        if kept is not None and kept[0] is blocks and kept[1] == args:
            return kept[2]
        value = fn(blocks, *args)
        last[0] = (blocks, args, value)
        return value

    memo.forget = lambda: last.__setitem__(0, None)
    return memo


@last_page_memo
def text_containers(blocks: Sequence[TextBlock]) -> list[etree._Element]:
    """:func:`text_container` of every block, in order (kept for the page: :func:`last_page_memo`); the compiled
    kernel walks where :func:`newsclean.transforms.kernel.enabled` holds."""
    if kernel.enabled():
        try:
            return kernel.walks().text_containers(list(blocks))
        except kernel.Unsupported:
            pass
    return [text_container(b) for b in blocks]


def tag_class_signature(el: etree._Element) -> tuple[str, str]:
    """``(tag, class tokens sorted and space-joined)`` of ``el``: siblings with equal signatures are one
    repeated container (``("", ...)`` for a comment or processing instruction)."""
    tag = el.tag if isinstance(el.tag, str) else ""
    names = (el.get("class") or "").split()
    return (tag, names[0] if len(names) == 1 else " ".join(sorted(names)))


def main_container(blocks: Sequence[TextBlock], keep: Sequence[bool]) -> etree._Element | None:
    """The text container (:func:`text_container`) holding most words of the kept blocks, the first in
    document order on a tie; None when no block with words is kept."""
    if kernel.enabled():
        return kernel.walks().main_container(list(blocks), list(keep), text_containers(blocks))
    held: dict[etree._Element, int] = {}
    for b, k, el in zip(blocks, keep, text_containers(blocks)):
        if k and b.num_words:
            held[el] = held.get(el, 0) + b.num_words
    return max(held, key=held.__getitem__) if held else None  # dicts keep insertion order: first maximum


def main_region(blocks: Sequence[TextBlock], keep: Sequence[bool], same_signature_siblings: bool = True) -> set[etree._Element]:
    """The text containers (:func:`text_container`) of the main region: the one holding most kept words
    (first in document order on a tie) and, with ``same_signature_siblings``, its siblings of the same
    tag and class attribute. Empty when no block with words is kept."""
    best = main_container(blocks, keep)
    if best is None:
        return set()
    region = {best}
    parent = best.getparent()
    if same_signature_siblings and parent is not None:
        sig = tag_class_signature(best)
        region.update(el for el in parent if el is not best and tag_class_signature(el) == sig)
    return region


def is_prose(block: TextBlock, min_words: int, max_link_density: float, sentence_end: bool = True) -> bool:
    """True when ``block`` reads as running text: at least ``min_words`` words, link density (linked words /
    words, in [0, 1]) at most ``max_link_density``, and a sentence end (``. ! ?``, CJK and Devanagari full stops)
    when ``sentence_end``."""
    return (block.num_words >= min_words and block.link_density <= max_link_density
            and (not sentence_end or bool(_SENTENCE_END.search(block.text))))


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


def shared_elements(region: set[etree._Element]) -> set[etree._Element]:
    """The region's containers and all their ancestors."""
    shared: set[etree._Element] = set()
    for el in region:
        node = el
        while node is not None and node not in shared:
            shared.add(node)
            node = node.getparent()
    return shared
