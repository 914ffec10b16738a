"""Noise marks kept on the tree between stages, and the walks that honour them.

StaDyNoT §3: "in each stage we only mark the noise tags, but we do not remove noise tags",
because removal would distort the tree the next stage reads. Marks are one attribute,
:data:`NOISE_ATTR`, whose value names the stage (``static`` or ``dynamic``); the paper's
"NOISE" attribute, namespaced so that it cannot clash with a page's own attributes.
"""

from __future__ import annotations

from collections.abc import Iterator

from lxml import etree

from newsclean.transforms import kernel
from newsclean.transforms.vocab import DYNAMIC, NOISE_ATTR, STATIC


def is_element(node) -> bool:
    """True for real elements; False for comments, processing instructions and entities."""
    return isinstance(node.tag, str)


def mark(el: etree._Element, stage: str) -> None:
    """Mark ``el`` as noise found by ``stage`` (a later stage may re-mark it, §3.2 last line)."""
    el.set(NOISE_ATTR, stage)


def mark_of(el: etree._Element) -> str | None:
    """The stage that marked ``el`` as noise, or None."""
    return el.get(NOISE_ATTR)


def own_text_pieces(el: etree._Element) -> Iterator[str]:
    """The text directly inside ``el``: its ``.text`` and the ``.tail`` of each child, in order."""
    if el.text:
        yield el.text
    for child in el:
        if child.tail:
            yield child.tail


def own_text(el: etree._Element) -> str:
    """:func:`own_text_pieces` joined, whitespace collapsed ('' when the element holds no text itself)."""
    text = el.text
    pieces = [text] if text else []  # own_text_pieces, without a generator (called for every element)
    for child in el:
        tail = child.tail
        if tail:
            pieces.append(tail)
    return " ".join(" ".join(pieces).split()) if pieces else ""


def own_texts(root: etree._Element) -> dict[etree._Element, str]:
    """:func:`own_text` of every element under and including ``root`` whose own text is not empty, in one
    XPath for the text nodes holding more than XML whitespace (each is an element's ``.text`` or a child's
    ``.tail``, in document order: an element's pieces keep their order). Pieces of whitespace alone add
    nothing to the collapsed text, so leaving them out changes none. Keys in the order of each element's
    first such piece (not document order: a parent's first piece may follow a child's)."""
    pieces: dict[etree._Element, list[str]] = {}
    for text in _TEXT_NODES(root):
        owner = text.getparent()
        if text.is_tail:
            owner = owner.getparent()
        held = pieces.get(owner)
        if held is None:
            pieces[owner] = [text]
        else:
            held.append(text)
    texts = {el: " ".join(" ".join(held).split()) for el, held in pieces.items()}
    return {el: text for el, text in texts.items() if text}  # no-break spaces alone: XPath keeps them, split not


_TEXT_NODES = etree.XPath("descendant-or-self::*/text()[normalize-space()]")


def strip_marks(root: etree._Element) -> None:
    """Remove every noise mark attribute from the tree (before serialising cleaned HTML). The compiled kernel finds
    the marked elements where :func:`newsclean.transforms.kernel.enabled` holds."""
    for el in marked_elements(root, None):
        del el.attrib[NOISE_ATTR]


_MARKED = {stage: etree.XPath(f"descendant-or-self::*/@{NOISE_ATTR}[. = '{stage}']/..") for stage in (DYNAMIC, STATIC)}
_MARKED[None] = etree.XPath(f"descendant-or-self::*[@{NOISE_ATTR}]")


def _compiled_marked(marked, root: etree._Element, stage: str | None) -> list[etree._Element]:
    return marked(root, NOISE_ATTR) if stage is None else marked(root, NOISE_ATTR, stage)


@kernel.twin("marked_elements", adapt=_compiled_marked)
def marked_elements(root: etree._Element, stage: str | None) -> list[etree._Element]:
    """The elements under and including ``root`` holding a noise mark (``stage`` None) or the mark ``stage``
    (:data:`~newsclean.transforms.vocab.DYNAMIC`, :data:`~newsclean.transforms.vocab.STATIC`), in document order.
    Raises KeyError for another ``stage``."""
    return _MARKED[stage](root)
