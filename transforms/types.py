"""The records the chain's stages and the compiled kernel build and read: block segmentation parameters, text
blocks (Kohlschütter et al. 2010 §3.3) and a neighbour page's summary (StaDyNoT §3.1, extended:
:mod:`newsclean.transforms.site_profile`).

Types only: the segmentation itself is :func:`newsclean.transforms.blocks.extract_blocks`, the summary
:func:`newsclean.transforms.site_profile.summarise_page`; ``transforms/_kernel`` builds the same objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from lxml import etree

from newsclean.transforms.text import words
from newsclean.transforms.vocab import INLINE_TAGS


@dataclass(frozen=True)
class BlockParams:
    """Block segmentation parameters (Kohlschütter 2010 §3.3, §4).

    non_separator_tags: tags whose boundaries do not split a block (paper: A only).
    wrap_width: column width of the text density word wrap, in characters (paper: 80).
    separate_marked: the boundary of a noise-marked element always splits blocks (so that a block
    is wholly inside or outside marked noise); used when noise is kept as a feature, not removed.
    skip_hidden: the text of :func:`~newsclean.transforms.blocks.hidden_elements` is no block (not in the papers,
        which read all text).
    max_hidden_share: the share in [0, 1] of the page's characters of text (outside
        :data:`~newsclean.transforms.vocab.SKIP_TAGS`) above which hidden elements are read as shown after all: a
        page that hides its content until a script reveals it (:func:`~newsclean.transforms.blocks.hides_most`).
    """

    non_separator_tags: tuple[str, ...] = ("a",)
    wrap_width: int = 80
    separate_marked: bool = False
    skip_hidden: bool = False
    max_hidden_share: float = 0.8


SITE_BLOCKS = BlockParams(non_separator_tags=INLINE_TAGS, skip_hidden=True)
"""Block segmentation of a neighbour page (:func:`newsclean.transforms.site_profile.summarise_page`): as the learned
chain's (inline tags join blocks, hidden elements are no blocks)."""


@dataclass
class TextBlock:
    """One atomic text block.

    text: whitespace-collapsed text; num_words / num_linked_words: word counts;
    text_density: Eq. (1) in words per line; container: nearest separator element holding the
    block's first text; pieces: ``(element, "text" | "tail")`` slots holding the block's text.
    """

    text: str
    num_words: int
    num_linked_words: int
    text_density: float
    container: etree._Element
    pieces: list[tuple[etree._Element, str]] = field(default_factory=list)

    @property
    def link_density(self) -> float:
        """Linked words / words, in [0, 1] (0 for a block without words)."""
        return self.num_linked_words / self.num_words if self.num_words else 0.0

    @cached_property
    def words(self) -> list[str]:
        """:func:`newsclean.transforms.text.words` of :attr:`text` (computed once; the builder sets it)."""
        return words(self.text)


@dataclass(frozen=True)
class PageSummary:
    """What one neighbour page contributes: per container path ``(words, linked words, text digest)``,
    its words, the path of its best cluster (None: no prose block), the digests of its block texts."""

    paths: dict[int, tuple[int, int, int]]
    words: int
    content_path: int | None
    texts: frozenset[int] = field(default_factory=frozenset)
