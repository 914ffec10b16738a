"""Hyperlink pre-processing filters of Ghorbani et al. 2014 §3, optional first step of the chain.

- Filter 1 (Algorithm 1): remove every hyperlink, anchor text included (tail text is kept).
- Filter 2 (Algorithm 2): remove every attribute of every ``<a>``; the anchor keeps only its text.
- Filter 3 (Algorithm 3): normalise each hyperlink so its markup length matches its anchor text:
  the attribute part is replaced by a run of LT - 7 spaces, LT being the anchor text length
  (7 = the characters of ``<a></a>``). On a tree this is one padding attribute, which changes the
  serialised code/text ratio that line-based extractors read; block features do not change.
"""

from __future__ import annotations

from lxml import etree

FILTERS = (1, 2, 3)
PAD_ATTR = "data-newsclean-pad"


def filter1_remove_links(root: etree._Element) -> int:
    """Filter 1: drop all ``<a>`` elements with their text. Returns the number removed."""
    anchors = list(root.iter("a"))
    for a in anchors:
        if a.getparent() is not None:
            a.drop_tree()
    return len(anchors)


def filter2_strip_link_attributes(root: etree._Element) -> int:
    """Filter 2: clear the attributes of every ``<a>``. Returns the number of anchors changed."""
    anchors = list(root.iter("a"))
    for a in anchors:
        a.attrib.clear()
    return len(anchors)


def filter3_normalise_links(root: etree._Element) -> int:
    """Filter 3: replace each anchor's attributes by ``max(0, LT - 7)`` spaces. Returns anchors changed."""
    anchors = list(root.iter("a"))
    for a in anchors:
        text_len = len("".join(a.itertext()))
        a.attrib.clear()
        a.set(PAD_ATTR, " " * max(0, text_len - 7))
    return len(anchors)


def apply_link_filter(root: etree._Element, which: int | None) -> int:
    """Apply Filter ``which`` (1, 2 or 3; None = none). Raises ValueError for another number."""
    if which is None:
        return 0
    funcs = {1: filter1_remove_links, 2: filter2_strip_link_attributes, 3: filter3_normalise_links}
    if which not in funcs:
        raise ValueError(f"link filter must be one of {FILTERS} or None, got {which}")
    return funcs[which](root)
