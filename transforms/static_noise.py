"""Static noise: nodes whose tag, attributes and own text repeat on every neighbour page.

StaDyNoT (Barua et al. 2014) §3.1. Each node of each neighbour page (same site and
category) gives the key ``tag-name : tag-attributes : tag-data``; its support is the number
of neighbour pages that hold the key (counted once per page). A key whose support reaches the
number of neighbour pages (the paper: "equals the number of neighbor pages") is a static noise
tag; :attr:`StaticNoiseParams.min_support` makes that fraction a parameter.

Decisions the paper leaves open, fixed here:
- ``tag-data`` is the node's *own* text (its ``.text`` and its children's tails, whitespace
  collapsed), not its subtree's text: a subtree key would make every container with a shared
  header static. A node with no own text gives no key, so a text-less container can never be
  static noise.
- Attributes are all of the node's attributes, sorted by name, as ``name=value``, except
  newsclean's own marks (``data-newsclean-*``), which a stage may have added meanwhile.
- Fewer than :attr:`StaticNoiseParams.min_pages` neighbour pages give an empty signature:
  with one page every node would be "on all neighbour pages".
- A node embedded in running text is not static noise: when its parent has own text that is
  *not* static (an ``<em>historic</em>`` or a ``<b>WASHINGTON</b>`` dateline inside a paragraph
  that differs per page), the node is part of that text (:attr:`StaticNoiseParams.keep_embedded`).
- Keys are stored as 64-bit BLAKE2b digests, so a signature stays small (8 bytes a key) when
  it is shipped to workers as a Beam side input.

Learning parses the neighbour pages; :func:`newsclean.transforms.site_evidence.learn_site_evidence` does that
once per page for this signature and the site profile together, and calls :func:`page_keys`,
:func:`distinct_indices` and :func:`signature_from_key_sets` here.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lxml import etree

from newsclean.transforms import kernel
from newsclean.transforms.marks import mark, own_text, own_texts
from newsclean.transforms.vocab import OWN_ATTR_PREFIX, STATIC


@dataclass(frozen=True)
class StaticNoiseParams:
    """Parameters of static noise learning (StaDyNoT §3.1).

    min_support: fraction in (0, 1] of neighbour pages that must hold a key; 1.0 = all (paper).
    min_pages: neighbour pages needed to learn anything (2: one page proves nothing static).
    keep_embedded: keep static nodes whose parent's own text is not static (see module doc).
    """

    min_support: float = 1.0
    min_pages: int = 2
    keep_embedded: bool = True

    def __post_init__(self) -> None:
        if not 0.0 < self.min_support <= 1.0:
            raise ValueError(f"min_support must be in (0, 1], got {self.min_support}")
        if self.min_pages < 1:
            raise ValueError(f"min_pages must be >= 1, got {self.min_pages}")


@dataclass(frozen=True)
class StaticNoiseSignature:
    """What is static on one (site, category): key digests and the number of neighbour pages they came from.
    Its truth value is that of its keys (whether any static noise was learnt)."""

    keys: frozenset[int] = frozenset()
    pages: int = 0

    def __len__(self) -> int:
        return len(self.keys)


def node_key(el: etree._Element) -> str | None:
    """The §3.1 key ``tag:attributes:own text`` of ``el``, or None when ``el`` has no own text."""
    text = own_text(el)
    return _key(el, text) if text else None


def _key(el: etree._Element, text: str) -> str:
    """:func:`node_key` of ``el`` given its own text (not empty)."""
    attrib = el.attrib
    attrs = ";".join([f"{k}={v}" for k, v in sorted(attrib.items()) if not k.startswith(OWN_ATTR_PREFIX)]) if attrib else ""
    return f"{el.tag}:{attrs}:{text}"


def key_digest(key: str) -> int:
    """64-bit integer digest of a node key (BLAKE2b)."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


@kernel.twin("page_keys")
def page_keys(root: etree._Element) -> set[int]:
    """The set of key digests of one page (support counts once per page). The compiled kernel computes the same
    where :func:`newsclean.transforms.kernel.enabled` holds."""
    return {key_digest(_key(el, text)) for el, text in own_texts(root).items()}


def signature_from_key_sets(key_sets: Iterable[set[int]], params: StaticNoiseParams = StaticNoiseParams()) -> StaticNoiseSignature:
    """Build the signature from per-page key sets: keys with support >= ceil(min_support * pages)."""
    support: Counter[int] = Counter()
    pages = 0
    for keys in key_sets:
        support.update(keys)
        pages += 1
    if pages < params.min_pages:
        return StaticNoiseSignature(frozenset(), pages)
    need = max(1, math.ceil(params.min_support * pages - 1e-9))
    return StaticNoiseSignature(frozenset(k for k, n in support.items() if n >= need), pages)


#: Jaccard similarity in [0, 1] of two pages' key sets at or above which they are one neighbour.
NEAR_IDENTICAL_JACCARD = 0.95


def distinct_neighbours(key_sets: Iterable[set[int]], threshold: float = NEAR_IDENTICAL_JACCARD) -> list[set[int]]:
    """Drop key sets that are (near-)identical to an earlier one: one page fetched twice is one neighbour.

    A page in a neighbour sample twice (a re-crawl, tracking parameters, a print variant) would hold
    its own article text on "every" neighbour page and have it learned as static noise. Two key sets are
    near-identical when their Jaccard similarity ``|A ∩ B| / |A ∪ B|`` is at least ``threshold`` (exact copies: 1.0). Merging two distinct pages only costs one neighbour;
    O(n²) in the sample size n (a bounded sample, ≤ ``--neighbour-sample``).
    """
    key_sets = list(key_sets)
    return [key_sets[i] for i in distinct_indices(key_sets, threshold)]


def distinct_indices(key_sets: Sequence[set[int]], threshold: float = NEAR_IDENTICAL_JACCARD) -> list[int]:
    """Positions in ``key_sets`` of the pages :func:`distinct_neighbours` keeps (the first of each near-identical run)."""
    kept: list[int] = []
    for i, keys in enumerate(key_sets):
        if not any(_near_identical(keys, key_sets[j], threshold) for j in kept):
            kept.append(i)
    return kept


def _near_identical(a: set[int], b: set[int], threshold: float) -> bool:
    common = len(a & b)
    union = len(a) + len(b) - common  # len(a | b), without building the union
    return union == 0 or common >= threshold * union


def is_static(el: etree._Element | None, signature: StaticNoiseSignature) -> bool | None:
    """True/False whether ``el``'s key is in ``signature``; None when ``el`` is None or has no own text."""
    key = node_key(el) if el is not None else None
    return None if key is None else key_digest(key) in signature.keys


def mark_static_noise(root: etree._Element, signature: StaticNoiseSignature,
                      params: StaticNoiseParams = StaticNoiseParams()) -> int:
    """Mark (not remove) every node of ``root`` whose key is in ``signature``. Returns the count marked. The compiled
    kernel does the same where :func:`newsclean.transforms.kernel.enabled` holds."""
    if not signature.keys:
        return 0
    return _mark_static(root, signature, params)


@kernel.twin("mark_static_noise", compare=kernel.TREE)
def _mark_static(root: etree._Element, signature: StaticNoiseSignature, params: StaticNoiseParams) -> int:
    """:func:`mark_static_noise` for a signature holding keys."""
    keys = signature.keys
    # is_static of every element with own text (the others: None); marks do not change keys (own attributes
    # are left out of them), so all answers come first and the marking after
    static = {el: key_digest(_key(el, text)) in keys for el, text in own_texts(root).items()}
    marked = 0
    for el, answer in static.items():
        if not answer:
            continue
        if params.keep_embedded and (static.get(el.getparent()) if el is not root else is_static(el.getparent(), signature)) is False:
            continue
        mark(el, STATIC)
        marked += 1
    return marked
