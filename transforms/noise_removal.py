"""Noise removal (StaDyNoT §3.3): remove noise-marked nodes and non-informative formatting tags.

StaDyNoT (Barua et al. 2014) §3.3. Removing a node keeps its tail text (lxml ``drop_tree``),
since the tail belongs to the parent, not to the removed node.

Decisions the paper leaves open, fixed here:
- A static-noise node whose subtree still holds text that is *not* static (a container with a
  repeated label, such as a ``<div>`` whose own text is "Advertisement" around the article)
  loses only its own text; its children stay. Static evidence is about the own text (§3.1 key).
- A ``<form>`` holding at least :attr:`NoiseRemovalParams.form_unwrap_ratio` of the page's
  visible words (:func:`~newsclean.transforms.parse.element_visible_text`: not the text of
  scripts, styles and templates, which an ASP.NET page holds by the thousand words) is unwrapped
  (tag dropped, content kept) rather than removed: ASP.NET pages wrap the whole page, article
  included, in one ``<form>``.
- Comments and processing instructions are removed too (they are never text).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lxml import etree

from newsclean.transforms import kernel
from newsclean.transforms.marks import is_element, mark_of, marked_elements
from newsclean.transforms.parse import element_visible_text, prefix_word_counts
from newsclean.transforms.text import count_words
from newsclean.transforms.vocab import DYNAMIC, STATIC

NON_INFORMATIVE_TAGS = (
    "img", "link", "script", "style", "noscript", "embed", "object",
    "param", "form", "input", "caption", "meta", "textarea",
)

FORM_CONTROL_TAGS = ("select",)
"""Form controls §3.3's list leaves out although its reason covers them ("tags ... used for ... creating form
elements"): a drop-down's ``<option>`` texts (a car make list, a blog's archive months, a 1998 jukebox's song
list) are never article text. Outside a removed ``<form>`` (a page-wide ASP.NET form is unwrapped, and many
pages hold a ``<select>`` without one) the learned classifier kept them as content. Added for the learned chain
only (``transforms.chain.LEARNED_NON_INFORMATIVE_TAGS``); ``paper`` keeps the list as printed. Measured on
leave-one-data-set-out tune pages: docs/DECISIONS.md, "Form controls". ``<button>`` measured worse (its labels
hold some must-contain snippets of trafilatura-eval) and is not here."""


@dataclass(frozen=True)
class NoiseRemovalParams:
    """§3.3 parameters: the non-informative tag list and the form unwrapping ratio in [0, 1] (1.01 = never)."""

    non_informative_tags: tuple[str, ...] = NON_INFORMATIVE_TAGS
    form_unwrap_ratio: float = 0.5  # of the page's visible words (parse.element_visible_text)


@dataclass
class RemovalCounts:
    """Nodes removed by noise removal (§3.3), per cause."""

    static: int = 0
    dynamic: int = 0
    non_informative: int = 0


def drop_keep_tail(el: etree._Element) -> None:
    """Remove ``el`` and its subtree, keeping its tail text in the parent."""
    if el.getparent() is not None:
        el.drop_tree()


def clear_own_text(el: etree._Element) -> None:
    """Remove ``el``'s own text (``.text`` and its children's tails), keeping its children."""
    el.text = None
    for child in el:
        child.tail = None


def _has_unmarked_text(el: etree._Element) -> bool:
    """True when some descendant outside static marks holds own text."""
    for node in el.iter():
        if node is el or not is_element(node):
            continue
        if mark_of(node) != STATIC and (_strip(node.text) or _strip(node.tail)):
            return True
    return False


def _strip(text: str | None) -> str:
    return text.strip() if text else ""


# The elements marked by a stage, in document order: descendant-or-self::*[@NOISE_ATTR = stage], written as the
# marks' parents, which libxml2 finds about a quarter faster (no predicate evaluated per element).


def remove_noise(root: etree._Element, stages: tuple[str, ...] = (DYNAMIC, STATIC)) -> RemovalCounts:
    """Remove dynamic-noise subtrees, then static-noise nodes (own text only for containers).

    ``stages`` limits removal to the marks of those stages (the others stay on the tree).
    """
    counts = RemovalCounts()
    for el in marked_elements(root, DYNAMIC) if DYNAMIC in stages else ():
        if not _inside_removed(el):
            drop_keep_tail(el)
            counts.dynamic += 1
    for el in marked_elements(root, STATIC) if STATIC in stages else ():
        if _has_unmarked_text(el):
            clear_own_text(el)
        else:
            drop_keep_tail(el)
        counts.static += 1
    return counts


def _inside_removed(el: etree._Element) -> bool:
    parent = el.getparent()
    while parent is not None:
        if mark_of(parent) == DYNAMIC:
            return True
        parent = parent.getparent()
    return False


def _word_count(el: etree._Element) -> int:
    return count_words(element_visible_text(el))


class _PageWords:
    """The words of a page's text, counted only as far as a comparison needs (:func:`prefix_word_counts`)."""

    def __init__(self, text: str):
        self._counts = prefix_word_counts(text)
        self.words, self.whole = next(self._counts)

    def lower_bound(self, enough: Callable[[int], bool]) -> int:
        """The page's words, or a lower bound of them for which ``enough`` holds (``enough`` must stay
        true for any larger count)."""
        while not (self.whole or enough(self.words)):
            self.words, self.whole = next(self._counts)
        return self.words


def _unwrap_form(form: etree._Element, page: _PageWords | None, ratio: float) -> bool:
    """Whether ``form`` holds at least ``ratio`` of the page's visible words (at least 1; ``element_visible_text``,
    counted by :func:`newsclean.transforms.text.count_words`): words of ``form`` >=
    ratio x max(1, page words), the page counted only as far as the answer needs (None: 1 word)."""
    words = _word_count(form)
    body_words = 1 if page is None else max(1, page.lower_bound(lambda n: ratio * max(1, n) > words))
    return words >= ratio * body_words


def remove_non_informative(root: etree._Element, params: NoiseRemovalParams = NoiseRemovalParams()) -> int:
    """Remove the §3.3 tags plus comments and PIs; big forms are unwrapped. Returns elements removed. The compiled
    kernel does the same where :func:`newsclean.transforms.kernel.enabled` holds."""
    return _remove_non_informative(root, params)


@kernel.twin("remove_non_informative", compare=kernel.TREE)
def _remove_non_informative(root: etree._Element, params: NoiseRemovalParams) -> int:
    """:func:`remove_non_informative` with its settings given."""
    page = _PageWords(element_visible_text(root)) if root.find(".//form") is not None else None  # before removal
    removed = 0
    for el in list(root.iter(etree.Comment, etree.ProcessingInstruction)):
        drop_keep_tail(el)
    tags = params.non_informative_tags
    gone: set[etree._Element] = set()  # elements of these tags under a removed one: removed with it
    for el in list(root.iter(*tags)):
        if el in gone:
            continue
        if el.tag == "form" and _unwrap_form(el, page, params.form_unwrap_ratio):
            el.drop_tag()
            continue
        if len(el) and el.getparent() is not None:  # drop_keep_tail leaves the root in place
            gone.update(el.iter(*tags))  # nothing changes a removed subtree: its members are known now
        drop_keep_tail(el)
        removed += 1
    return removed
