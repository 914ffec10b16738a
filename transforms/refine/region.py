"""What the page-level steps share: a block's text container, the page's main region, prose (the class and id
tokens they read: :mod:`newsclean.transforms.dom`).

The *main container* is the text container (the element holding a block's paragraph) with most of the kept
words; the *main region* adds its siblings of the same tag and class (a template repeats the wrapper around
each run of paragraphs: the cluster idea of Readability's ``grabArticle`` and of Viveros-Jiménez 2018 §4's
ancestor groups, applied after the classifier).
"""

from __future__ import annotations

import functools
import re
import weakref
from collections.abc import Callable, Sequence

from lxml import etree

from newsclean.transforms import kernel
from newsclean.transforms.dom import paragraph_of, tag_class_signature
from newsclean.transforms.types import TextBlock

_SENTENCE_END = re.compile(r"[.!?\u3002\uff01\uff1f\u0964](?:\s|$|[\"'\u201d\u2019)\u00bb])")


def text_container(block: TextBlock) -> etree._Element:
    """The element holding the block's paragraph: the parent of :func:`~newsclean.transforms.dom.paragraph_of`
    its container (the paragraph itself at the root)."""
    para = paragraph_of(block.container)
    parent = para.getparent()
    return para if parent is None else parent


def page_memo(fn: Callable) -> Callable:
    """Decorator for a function of one page's blocks, ``fn(blocks, *args)``: its answer is given again for the same
    list of blocks (the same object, holding the same blocks) and equal ``args`` (several page-level steps ask for the
    same page's; the answer is shared: read it, do not change it). The answer is per-page state held on the page's
    first block, which references its list's blocks only weakly: it lives as long as the page's blocks and no longer,
    so no finished page's tree is kept alive. One tuple is replaced at a time, so threads never see a mixed entry.
    ``.forget(blocks)`` drops the answer held for ``blocks``."""
    slot = f"_page_memo_{fn.__name__}"

    @functools.wraps(fn)
    def memo(blocks, *args):
        if not blocks:
            return fn(blocks, *args)
        kept = getattr(blocks[0], slot, None)
        if kept is not None and kept[0] == id(blocks) and kept[2] == args and _same_blocks(kept[1], blocks):
            return kept[3]
        value = fn(blocks, *args)
        setattr(blocks[0], slot, (id(blocks), tuple(map(weakref.ref, blocks)), args, value))
        return value

    memo.forget = lambda blocks: blocks and vars(blocks[0]).pop(slot, None)
    return memo


def _same_blocks(refs: tuple[weakref.ref, ...], blocks: Sequence[TextBlock]) -> bool:
    """Whether ``refs`` (weak references) point at ``blocks``, in order."""
    return len(refs) == len(blocks) and all(ref() is b for ref, b in zip(refs, blocks))


@page_memo
@kernel.twin("text_containers", adapt=lambda containers, blocks: containers(list(blocks)))
def text_containers(blocks: Sequence[TextBlock]) -> list[etree._Element]:
    """:func:`text_container` of every block, in order (kept for the page: :func:`page_memo`); the compiled
    kernel walks where :func:`newsclean.transforms.kernel.enabled` holds."""
    return [text_container(b) for b in blocks]


def _compiled_main(main, blocks: Sequence[TextBlock], keep: Sequence[bool]) -> etree._Element | None:
    return main(list(blocks), list(keep), text_containers(blocks))


@kernel.twin("main_container", adapt=_compiled_main)
def main_container(blocks: Sequence[TextBlock], keep: Sequence[bool]) -> etree._Element | None:
    """The text container (:func:`text_container`) holding most words of the kept blocks, the first in
    document order on a tie; None when no block with words is kept."""
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
