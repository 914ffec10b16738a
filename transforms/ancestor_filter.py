"""Ancestor filter: keep the content blocks under the one n-th ancestor that holds the most text.

Viveros-Jiménez et al. 2018 §4, run on Boilerpipe's content blocks:
1. a text node belongs to a *paragraph*: its closest ancestor whose tag is in
   :data:`PARAGRAPH_TAGS` (div, table, ul, ol, p, section, article, h1-h6, header, body); taking
   the closest such ancestor is what "a paragraph should not contain other paragraphs ... use
   the closest child" asks for on the path from the text up;
2. list the ancestors of every selected paragraph;
3. group paragraphs by their n-th ancestor (depth 2, the grandparent, was best in §5; 1-5 tried);
4. keep the group with the most text (characters of the content blocks), discard the rest.
A paragraph with fewer than ``depth`` ancestors groups under the topmost one.

Extension (off in the paper's configuration): :attr:`AncestorFilterParams.readmit_link_density`
re-admits blocks that Boilerpipe dropped but that lie under the winning ancestor and have a
link density at or below the given ratio: the ancestor has located the article, and inside it
short paragraphs, list items and sub-headings are article text far more often than not.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Container, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

from lxml import etree

from newsclean.transforms import kernel
from newsclean.transforms.dom import nth_ancestor, paragraph_of, under_any
from newsclean.transforms.types import TextBlock
from newsclean.transforms.vocab import PARAGRAPH_TAGS


@dataclass(frozen=True)
class AncestorFilterParams:
    """depth: which ancestor groups paragraphs (1 parent, 2 grandparent = paper default, up to 5).

    readmit_link_density: None (paper), or a link density in [0, 1] up to which dropped blocks
    under the winning ancestor are kept again.
    """

    depth: int = 2
    paragraph_tags: tuple[str, ...] = PARAGRAPH_TAGS
    readmit_link_density: float | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.depth <= 5:
            raise ValueError(f"depth must be in 1..5 (paper §5), got {self.depth}")


def under_any_named(nodes: Iterable[etree._Element | None], hit: Callable[[etree._Element], bool],
                    stop: Container[etree._Element] = (), attributes: Sequence[str] = (),
                    tags: Sequence[str] = (), class_words: Collection[str] = ()) -> list[bool]:
    """:func:`under_any` for a ``hit`` that is False for every element with none of ``attributes``, a tag not in
    ``tags`` and a class and id holding none of ``class_words`` as a substring once their ASCII letters are lowercased
    (the caller's promise; a rule on :func:`~newsclean.transforms.dom.class_tokens` keeps it: a token is a
    run of ASCII letters and digits of ``"class id"``, lowercased): the compiled kernel walks where
    :func:`newsclean.transforms.kernel.enabled` holds and asks ``hit`` only for the other elements."""
    return _under_named(nodes, hit, stop, attributes, tags, class_words)


def _compiled_under_named(under, nodes, hit, stop, attributes, tags, class_words) -> list[bool]:
    return under(list(nodes), hit, stop, tuple(a.encode() for a in attributes), tuple(t.encode() for t in tags),
                 tuple(sorted(class_words)))


@kernel.twin("under_any_named", adapt=_compiled_under_named)
def _under_named(nodes: Iterable[etree._Element | None], hit: Callable[[etree._Element], bool],
                 stop: Container[etree._Element], attributes: Sequence[str], tags: Sequence[str],
                 class_words: Collection[str]) -> list[bool]:
    """:func:`under_any_named` with every argument given (the reference reads only the first three)."""
    return under_any(nodes, hit, stop)


@kernel.twin("under_element", adapt=lambda under, nodes, scope: under(list(nodes), scope))
def under_element(nodes: Iterable[etree._Element | None], scope: etree._Element) -> list[bool]:
    """Per node, whether it is ``scope`` or lies under it (a None node: False): :func:`under_any` asking ``el is
    scope``, walked by the compiled kernel where :func:`newsclean.transforms.kernel.enabled` holds."""
    return under_any(nodes, lambda el: el is scope)


@dataclass(frozen=True)
class AncestorGroups:
    """The ancestor filter's grouping of content blocks (§4 steps 1-3).

    anchors: per block, the n-th ancestor of its paragraph (None for a block not kept);
    chars: characters (``len(block.text)``) of the kept blocks under each ancestor, in first-seen order;
    best: the ancestor holding the most characters (the first one on a tie), None when no block was kept.
    """

    anchors: list[etree._Element | None]
    chars: dict[etree._Element, int]
    best: etree._Element | None

    def in_best(self, i: int) -> bool:
        """True when block ``i`` was kept and belongs to the best group (§4 step 4)."""
        return self.best is not None and self.anchors[i] is self.best

    @cached_property
    def total_chars(self) -> int:
        """Characters of all grouped blocks (summed once: :meth:`share` is called per block)."""
        return sum(self.chars.values())

    def share(self, i: int) -> float:
        """Block ``i``'s group's share of all grouped characters, in [0, 1] (0 for a block not kept)."""
        anchor = self.anchors[i]
        return self.chars[anchor] / (self.total_chars or 1) if anchor is not None else 0.0


def ancestor_groups(blocks: Sequence[TextBlock], keep: Sequence[bool],
                    params: AncestorFilterParams = AncestorFilterParams()) -> AncestorGroups:
    """Group the kept blocks by their paragraph's ``params.depth``-th ancestor (§4 steps 1-3)."""
    chars: dict[etree._Element, int] = {}
    anchors: list[etree._Element | None] = [None] * len(blocks)
    for i, block in enumerate(blocks):
        if not keep[i]:
            continue
        anc = nth_ancestor(paragraph_of(block.container, params.paragraph_tags), params.depth)
        anchors[i] = anc
        chars[anc] = chars.get(anc, 0) + len(block.text)
    best = max(chars, key=chars.__getitem__) if chars else None
    return AncestorGroups(anchors, chars, best)


def ancestor_filter(blocks: Sequence[TextBlock], keep: Sequence[bool], params: AncestorFilterParams = AncestorFilterParams()) -> list[bool]:
    """Restrict ``keep`` to the blocks whose paragraph shares the best-filled n-th ancestor (§4 steps 1-4)."""
    groups = ancestor_groups(blocks, keep, params)
    if groups.best is None:
        return list(keep)
    result = [bool(keep[i]) and groups.in_best(i) for i in range(len(blocks))]
    if params.readmit_link_density is not None:
        result = _readmit(blocks, result, groups.best, params.readmit_link_density)
    return result


def _readmit(blocks: Sequence[TextBlock], keep: list[bool], ancestor: etree._Element, max_ld: float) -> list[bool]:
    inside = set(ancestor.iter())
    return [k or (b.link_density <= max_ld and b.container in inside) for k, b in zip(keep, blocks)]
