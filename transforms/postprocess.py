"""Post-processing: remove noise-marked nodes and non-informative formatting tags.

StaDyNoT (Barua et al. 2014) §3.3. Removing a node keeps its tail text (lxml ``drop_tree``),
since the tail belongs to the parent, not to the removed node.

Decisions the paper leaves open, fixed here:
- A static-noise node whose subtree still holds text that is *not* static (a container with a
  repeated label, such as a ``<div>`` whose own text is "Advertisement" around the article)
  loses only its own text; its children stay. Static evidence is about the own text (§3.1 key).
- A ``<form>`` holding at least :attr:`PostProcessParams.form_unwrap_ratio` of the body's
  characters is unwrapped (tag dropped, content kept) rather than removed: ASP.NET pages wrap
  the whole page, article included, in one ``<form>``.
- Comments and processing instructions are removed too (they are never text).
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree

from newsclean.transforms.marks import DYNAMIC, NOISE_ATTR, STATIC, is_element, mark_of
from newsclean.transforms.text import count_words

NON_INFORMATIVE_TAGS = (
    "img", "link", "script", "style", "noscript", "embed", "object",
    "param", "form", "input", "caption", "meta", "textarea",
)


@dataclass(frozen=True)
class PostProcessParams:
    """§3.3 parameters: the non-informative tag list and the form unwrapping ratio in [0, 1] (1.01 = never)."""

    non_informative_tags: tuple[str, ...] = NON_INFORMATIVE_TAGS
    form_unwrap_ratio: float = 0.5  # of the page's whitespace tokens


@dataclass
class RemovalCounts:
    """Nodes removed by post-processing, per cause."""

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


_MARKED_DYNAMIC = etree.XPath(f"descendant-or-self::*[@{NOISE_ATTR} = '{DYNAMIC}']")  # document order
_MARKED_STATIC = etree.XPath(f"descendant-or-self::*[@{NOISE_ATTR} = '{STATIC}']")


def remove_noise(root: etree._Element, stages: tuple[str, ...] = (DYNAMIC, STATIC)) -> RemovalCounts:
    """Remove dynamic-noise subtrees, then static-noise nodes (own text only for containers).

    ``stages`` limits removal to the marks of those stages (the others stay on the tree).
    """
    counts = RemovalCounts()
    for el in _MARKED_DYNAMIC(root) if DYNAMIC in stages else ():
        if not _inside_removed(el):
            drop_keep_tail(el)
            counts.dynamic += 1
    for el in _MARKED_STATIC(root) if STATIC in stages else ():
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
    return count_words("".join(el.itertext()))


def _attached(el: etree._Element, root: etree._Element) -> bool:
    node = el
    while node.getparent() is not None:
        node = node.getparent()
    return node is root


def remove_non_informative(root: etree._Element, params: PostProcessParams = PostProcessParams()) -> int:
    """Remove the §3.3 tags plus comments and PIs; big forms are unwrapped. Returns elements removed."""
    body_words = max(1, _word_count(root)) if root.find(".//form") is not None else 1
    removed = 0
    for el in list(root.iter(etree.Comment, etree.ProcessingInstruction)):
        drop_keep_tail(el)
    for el in list(root.iter(*params.non_informative_tags)):
        if not _attached(el, root):
            continue  # already gone with a removed ancestor
        if el.tag == "form" and _word_count(el) >= params.form_unwrap_ratio * body_words:
            el.drop_tag()
            continue
        drop_keep_tail(el)
        removed += 1
    return removed
