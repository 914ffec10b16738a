"""Authors as readers see them: the byline beside the article, where the page's structured data names none.

About half of the shared sets' pages name no author in JSON-LD, microdata or meta tags, but show a byline ("By
Jane Doe and John Roe") next to the headline or at the foot of the article. The byline is found after the block
decision, among the text blocks of the article's scope (the main container's ``scope_levels``-th ancestor,
:func:`~newsclean.transforms.refine.region.main_container`): the first block, in page order, whose container or one of
its ``box_levels`` nearest ancestors is a byline box, a class/id token
(:func:`~newsclean.transforms.dom.class_tokens`) in :data:`BYLINE_WORDS` (the class names trafilatura's
author XPaths look for: ``byline``, ``author``, ``writer``, ...), a ``rel="author"`` link or an ``itemprop`` naming
the author; or an inline element inside the block (a ``<span class="byline">``, an ``<a rel="author">``) that is one;
not inside a comment box. The box's text (at most :data:`~newsclean.transforms.metadata.MAX_NAME_CHARS`
characters) is split and normalised by trafilatura's ``normalize_authors`` (Barbaresi 2021), then cleaned by
:func:`~newsclean.transforms.metadata.clean_author_names` (no "By", no dates, no job titles, no handles). Reading only
the article's scope keeps comment authors and sidebar "authors" lists out, and costs a few class lookups per page.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from lxml import etree

from newsclean.transforms import kernel
from newsclean.transforms.ancestor_filter import under_element
from newsclean.transforms.dom import hinted_class_tokens, nth_ancestor, word_hint
from newsclean.transforms.metadata import MAX_NAME_CHARS, clean_author_names
from newsclean.transforms.refine.region import main_container
from newsclean.transforms.text import collapse_ws
from newsclean.transforms.types import TextBlock

BYLINE_WORDS = frozenset({
    "byline", "bylines", "byl", "author", "authors", "writer", "writers", "authorname", "author-name", "journalist",
    "contributor", "contributors", "zuozhe", "bianji", "autor", "auteur", "autore", "firma",
})
"""Class/id tokens of a byline box (trafilatura's author XPaths' names, and de/fr/es/it/pl ``autor``, ``auteur``,
``autore``, es ``firma``)."""

BYLINE_STEMS = ("author", "byline", "writer", "journalist", "autor", "auteur")
"""Parts of a class/id token that make it a byline box's (``postauthor``, ``entry-authorlink``: trafilatura's author
XPaths match ``[Aa]uthor`` and ``[Bb]yline`` anywhere in a class)."""

COMMENT_WORDS = frozenset({"comment", "comments", "reply", "replies", "respond", "disqus"})
"""Class/id tokens of a comment box: its "author" boxes are commenters."""


_BOX_WORDS = tuple(sorted(BYLINE_WORDS | COMMENT_WORDS | frozenset(BYLINE_STEMS)))
_BOX_HINT = word_hint(_BOX_WORDS)
"""Finds a byline or comment word or a byline stem inside a lowercased class/id string: a class name without one has
no token the byline boxes look for, so it is not tokenised."""

#: Bylines are short: longer blocks are not looked at (words, ``TextBlock.num_words``).
MAX_BYLINE_WORDS = 40


@dataclass(frozen=True)
class BylineParams:
    """Where :func:`byline_names` looks: the main container's ``scope_levels``-th ancestor; a block's container and
    its ``box_levels`` nearest ancestors; with ``stems``, a token holding one of :data:`BYLINE_STEMS` names a byline
    box too."""

    scope_levels: int = 6
    box_levels: int = 3
    stems: bool = True


def _names_byline(tokens: frozenset[str], stems: bool) -> bool:
    return not tokens.isdisjoint(BYLINE_WORDS) or (stems and any(s in t for t in tokens for s in BYLINE_STEMS))


_COMMENT_BOX, _BYLINE_BOX = 1, 2


class _BoxKinds:
    """Memo of what box each element is: a comment box (class/id tokens in :data:`COMMENT_WORDS`), else a byline
    box (a byline token, with ``stems`` a byline stem, or ``itemprop``/``rel`` naming the author), else neither (0).
    One page's blocks share their ancestors, so each element is read once."""

    def __init__(self, stems: bool):
        self.stems = stems
        self.memo: dict[etree._Element, int] = {}

    def __call__(self, node: etree._Element) -> int:
        kind = self.memo.get(node)
        if kind is None:
            tokens = hinted_class_tokens(node, _BOX_HINT)
            if not tokens.isdisjoint(COMMENT_WORDS):
                kind = _COMMENT_BOX
            elif _names_byline(tokens, self.stems) or \
                    "author" in f"{node.get('itemprop') or ''} {node.get('rel') or ''}".lower():
                kind = _BYLINE_BOX
            else:
                kind = 0
            self.memo[node] = kind
        return kind


def _box_of(el: etree._Element, levels: int, scope: etree._Element, kinds: _BoxKinds) -> etree._Element | None:
    """The nearest of ``el`` and its ``levels`` ancestors (not above ``scope``) that is a byline box; None when one
    of them is a comment box first, or none is a byline box."""
    node = el
    for _ in range(levels + 1):
        if node is None or not isinstance(node.tag, str):
            return None
        kind = kinds(node)
        if kind == _COMMENT_BOX:
            return None
        if kind == _BYLINE_BOX:
            return node
        if node is scope:
            return None
        node = node.getparent()
    return None


def _in_comments(el: etree._Element, levels: int, scope: etree._Element, kinds: _BoxKinds) -> bool:
    """Whether ``el`` or one of its ``levels`` nearest ancestors (not above ``scope``) is a comment box."""
    node = el
    for _ in range(levels + 1):
        if node is None or not isinstance(node.tag, str):
            return False
        if kinds(node) == _COMMENT_BOX:
            return True
        if node is scope:
            return False
        node = node.getparent()
    return False


def _inline_box(block: TextBlock, scope: etree._Element, kinds: _BoxKinds) -> etree._Element | None:
    """The first inline element holding some of the block's text, or an inline ancestor of one below the block's
    container (``<span class="byline"><a>Jane Doe</a></span>``, ``<a rel="author">``: inline tags do not split
    blocks, so the block's container is their parent), that is a byline box."""
    for el, slot in block.pieces:
        node = el if slot == "text" else el.getparent()
        while node is not None and node is not block.container and node is not scope:
            if _box_of(node, 0, scope, kinds) is not None:
                return node
            node = node.getparent()
    return None


def byline_names(blocks: Sequence[TextBlock], keep: Sequence[bool],
                 params: BylineParams = BylineParams()) -> tuple[str, ...]:
    """Author names from the article's byline (module docstring); empty when none is found or nothing is kept."""
    from trafilatura.metadata import normalize_authors

    main = main_container(blocks, keep)
    if main is None:
        return ()
    for box in _byline_boxes(blocks, nth_ancestor(main, params.scope_levels), params):
        text = collapse_ws(" ".join(box.itertext()))
        if 2 < len(text) < MAX_NAME_CHARS:
            names = clean_author_names((normalize_authors(None, text) or "").split("; "))
            if names:
                return names
    return ()


def _compiled_boxes(byline_boxes, blocks: Sequence[TextBlock], scope: etree._Element,
                    params: BylineParams) -> list[etree._Element]:
    return byline_boxes(list(blocks), scope, params.box_levels, MAX_BYLINE_WORDS, _BoxKinds(params.stems), _BOX_WORDS)


@kernel.twin("byline_boxes", adapt=_compiled_boxes)
def _byline_boxes(blocks: Sequence[TextBlock], scope: etree._Element, params: BylineParams) -> Iterator[etree._Element]:
    """The byline box of each block under ``scope`` of at most :data:`MAX_BYLINE_WORDS` words that has one, in page
    order: its container's or a near ancestor's (:func:`_box_of`), else, outside comment boxes, an inline element's
    (:func:`_inline_box`). The compiled kernel walks where :func:`newsclean.transforms.kernel.enabled` holds."""
    kinds = _BoxKinds(params.stems)
    inside = under_element([b.container for b in blocks], scope)
    for b, within in zip(blocks, inside):
        if not within or b.num_words > MAX_BYLINE_WORDS:
            continue
        box = _box_of(b.container, params.box_levels, scope, kinds)
        if box is None and not _in_comments(b.container, params.box_levels, scope, kinds):
            box = _inline_box(b, scope, kinds)
        if box is not None:
            yield box
