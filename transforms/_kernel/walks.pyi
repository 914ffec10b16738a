"""Typed interface of the compiled tree walks (``walks.pyx`` and its ``.pxi`` files), as the binding table in
:mod:`newsclean.transforms.kernel` calls them. Each function does the work of the reference function named in its
docstring and returns the same; a walk that meets a node it does not read (an entity reference, XInclude markers, a
namespaced element or attribute) raises :class:`~newsclean.transforms.kernel.Unsupported` before it changes anything.
Word counts are ``TextBlock.num_words``; text is ``str`` (characters), digests 64-bit unsigned integers."""

from collections.abc import Callable, Container, Sequence

import numpy as np
from lxml import etree

from newsclean.transforms.context import PageContext
from newsclean.transforms.dynamic_noise import DynamicNoiseParams
from newsclean.transforms.noise_removal import NoiseRemovalParams
from newsclean.transforms.refine.teaser_cards import TeaserCardsParams
from newsclean.transforms.static_noise import StaticNoiseParams, StaticNoiseSignature
from newsclean.transforms.types import BlockParams, PageSummary, TextBlock

Span = tuple[int, int, int, int]

KERNEL_GROUPS: tuple[str, ...]
"""The feature groups :func:`block_features` computes."""

# text (characters)
def count_words(text: str) -> int:
    """``text.count_words(text)``."""
def has_control(text: str) -> bool:
    """Whether ``text`` holds a C0 control other than TAB, LF, CR (``parse._has_control``)."""
def end_body_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every ``</body>``/``</html>`` end tag (``parse._drop_end_body`` cuts them)."""
def raw_text_spans(text: str) -> list[Span]:
    """``parse.raw_text_spans(text)`` for a text holding none of ``parse._CASE_FOLD_TRAPS``."""
def text_digest(text: str) -> int:
    """``site_profile.text_digest(text)``."""
def alnum_casefold(text: str) -> str:
    """``page_type._folded(text)``."""

# the tree (an lxml element; the tree is changed only where said)
def visible_text(el: etree._Element) -> str:
    """``parse.element_visible_text(el)``."""
def too_deep(root: etree._Element, levels: int) -> bool:
    """``parse._too_deep(root)`` with ``levels`` = ``parse.MAX_DEPTH``."""
def page_keys(root: etree._Element) -> set[int]:
    """``static_noise.page_keys(root)``."""
def mark_static_noise(root: etree._Element, signature: StaticNoiseSignature, params: StaticNoiseParams) -> int:
    """``static_noise.mark_static_noise``: elements marked (the tree changes)."""
def mark_dynamic_noise(root: etree._Element, params: DynamicNoiseParams) -> int:
    """``dynamic_noise.mark_dynamic_noise``: elements marked (the tree changes)."""
def marked_elements(root: etree._Element, attribute: str, value: str | None = None) -> list[etree._Element]:
    """Elements under and including ``root`` holding ``attribute`` (with ``value``: that value), document order."""
def remove_non_informative(root: etree._Element, params: NoiseRemovalParams) -> int:
    """``noise_removal.remove_non_informative``: elements removed (the tree changes)."""
def prune_empty(body: etree._Element) -> None:
    """``chain._prune_empty(body)`` (the tree changes)."""
def extract_blocks(root: etree._Element, params: BlockParams, detail: bool = True) -> list[TextBlock]:
    """``blocks.extract_blocks(root, params, detail)``."""
def summarise_page(root: etree._Element) -> PageSummary:
    """``site_profile.summarise_page(root)``."""
def item_types(root: etree._Element) -> list[str]:
    """``metadata.item_types(root)``."""
def page_tags(root: etree._Element, is_canonical: Callable[[etree._Element], bool], max_headings: int
              ) -> tuple[dict[str, list[str]], list[str], str | None, etree._Element | None, tuple[etree._Element, ...]]:
    """The fields of ``metadata.page_tags(root)``'s ``PageTags``, in order."""

# one page's blocks (lists: the caller converts)
def blocks_text(blocks: list[TextBlock]) -> str:
    """``chain.blocks_text(blocks)`` before its NFC normalisation."""
def clear_dropped(blocks: list[TextBlock], keep: Sequence[bool]) -> None:
    """``chain._clear_dropped(blocks, keep)`` (the tree changes)."""
def block_features(blocks: list[TextBlock], ctx: PageContext, lexicon: object) -> np.ndarray:
    """The :data:`KERNEL_GROUPS` columns of ``features.block_features``: ``(len(blocks), len(FEATURE_NAMES))``."""
def context_groups(blocks: list[TextBlock]) -> list[tuple[int, int]]:
    """``features.context_groups(blocks)``."""
def context_features(p: Sequence[float], groups: Sequence[tuple[int, int]], word_counts: Sequence[int]) -> np.ndarray:
    """``features.context_features``: shape ``(len(p), 10)``."""
def site_columns(blocks: list[TextBlock], content: dict, structures: dict, texts: dict) -> np.ndarray:
    """``features._site_columns``: shape ``(len(blocks), 7)``."""
def structure_columns(blocks: list[TextBlock], support: Sequence[float] | None, coverage: float) -> np.ndarray:
    """``features._structure_columns``: shape ``(len(blocks), 8)``."""
def content_supports(blocks: list[TextBlock], content: dict[int, float]) -> list[float]:
    """``site_profile.content_supports(blocks, content)``."""
def text_containers(blocks: list[TextBlock]) -> list[etree._Element]:
    """``refine.region.text_containers(blocks)``."""
def main_container(blocks: list[TextBlock], keep: list[bool], containers: list[etree._Element]) -> etree._Element | None:
    """``refine.region.main_container(blocks, keep)`` given ``text_containers(blocks)``."""
def element_words(blocks: list[TextBlock], min_link_words: int, min_link_density: float
                  ) -> dict[etree._Element, tuple[int, int, int]]:
    """``refine.teaser_cards._element_words``: ``(words, link blocks, linked words)`` per element."""
def card_flags(blocks: list[TextBlock], nodes: list[etree._Element | None], params: TeaserCardsParams,
               stop: Container[etree._Element]) -> list[bool]:
    """``refine.teaser_cards._card_flags``."""
def byline_boxes(blocks: list[TextBlock], scope: etree._Element, box_levels: int, max_words: int,
                 kind: Callable[[etree._Element], int], hint_words: tuple[str, ...]) -> list[etree._Element]:
    """``byline._byline_boxes`` (``kind``: a ``byline._BoxKinds``)."""
def box_roles(blocks: list[TextBlock], nodes: list[etree._Element], own: Callable[[etree._Element, dict], str | None],
              max_caption_words: int, hint_words: tuple[str, ...]) -> list[str | None]:
    """``roles._Boxes.roles_of(nodes)``."""
def under_element(nodes: list[etree._Element | None], scope: etree._Element) -> list[bool]:
    """``ancestor_filter.under_element(nodes, scope)``."""
def under_any_named(nodes: list[etree._Element | None], hit: Callable[[etree._Element], bool],
                    stop: Container[etree._Element], attributes: tuple[bytes, ...], tags: tuple[bytes, ...],
                    class_words: tuple[str, ...] = ()) -> list[bool]:
    """``ancestor_filter._under_named`` (names as bytes, class words sorted)."""
