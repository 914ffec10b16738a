"""Per-site evidence learnt from the neighbour pages of one (site, category): a :class:`SiteProfile`.

StaDyNoT (Barua et al. 2014 §3.1) learns from neighbour pages only what is *identical* on
all of them (static noise); what the neighbours also know, and one page does not, is where the site
puts its articles and which of its recurring boxes are boilerplate. Learnt from the same parsed
neighbour trees as the static-noise signature (:func:`newsclean.transforms.site_evidence.learn_site_evidence`
calls :func:`summarise_page` on each tree it parses), three pieces of evidence:

1. **content container consensus**: on each neighbour, the readability-style best cluster (the
   paragraphs' parent element holding the most prose: each block with link density <= 0.5 adds
   1 + commas + min(characters / 100, 3) to its paragraph's parent and half to the grandparent, as
   Readability and :mod:`newsclean.transforms.classifier.features` score); the *paths* of those elements and the
   share of neighbours that agree on each;
2. **recurring block structures**: per block container path, the share of neighbours holding it,
   the mean share of a neighbour's words it holds, its mean link density, and how often its text
   differs from every other neighbour's (same structure, different text: an article body, or a
   template box such as "related stories" when it holds few words and many links);
3. **recurring texts**: block texts found on two or more neighbours, with their support (a soft
   StaDyNoT: static noise needs a node on *every* neighbour, with the same attributes).

A *path* is the chain of element tokens from the root to an element, each token the tag, its
class names and its id, lower-cased, names holding a digit left out (``post-4711``, ``ad-slot-3``
differ per page), sorted; position among siblings is not part of it. Paths and texts are stored as
64-bit BLAKE2b digests and the ratios quantised to 1/255, so a profile is a few KB (at most
:attr:`SiteProfileParams.max_structures` + :attr:`SiteProfileParams.max_texts` entries) and stays
a Beam side input. Pages are the neighbour sample (at most ``--neighbour-sample``); fewer than
:attr:`SiteProfileParams.min_pages` give no profile.

The evidence is used as the ``site`` feature group of the learned block classifier
(:func:`newsclean.transforms.classifier.features.site_features`; trained, not in the shipped model) and by two
page-level steps of the shipped default: the site check (:mod:`newsclean.transforms.refine.site_check`) and
recurring texts (:mod:`newsclean.transforms.refine.recurring`).
"""

from __future__ import annotations

import hashlib
import re
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lxml import etree

from newsclean.transforms import kernel
from newsclean.transforms.blocks import extract_blocks
from newsclean.transforms.dom import element_token, paragraph_of
from newsclean.transforms.types import SITE_BLOCKS, PageSummary, TextBlock

_LEVELS = 255  # ratios in [0, 1] are stored as round(ratio * 255) in one byte


@dataclass(frozen=True)
class SiteProfileParams:
    """Parameters of profile learning.

    min_pages: neighbour pages needed to learn a profile (2: one page shows nothing recurring).
    min_support: pages (>= 2) that must hold a path or text for it to be stored.
    max_structures / max_texts: most path / text entries kept (by support, then words): bounds the size.
    max_content: most content-container paths kept.
    """

    min_pages: int = 2
    min_support: int = 2
    max_structures: int = 384
    max_texts: int = 384
    max_content: int = 4

    def __post_init__(self) -> None:
        if self.min_pages < 2 or self.min_support < 2:
            raise ValueError(f"min_pages and min_support must be >= 2, got {self.min_pages}, {self.min_support}")


@dataclass(frozen=True)
class SiteProfile:
    """Per-site evidence (module docstring), compact and hashable.

    pages: neighbour pages learnt from. structure_keys: path digests (``array('Q')`` bytes);
    structure_stats: 4 bytes per path: support, mean word share, text-varies share, mean link density,
    each a ratio in [0, 1] times 255. text_keys / text_support: text digests and their support (x 255).
    content: ``(path digest, support in [0, 1])`` of the best-cluster paths, most supported first.
    """

    pages: int
    structure_keys: bytes = b""
    structure_stats: bytes = b""
    text_keys: bytes = b""
    text_support: bytes = b""
    content: tuple[tuple[int, float], ...] = ()

    def structures(self) -> dict[int, tuple[float, float, float, float]]:
        """Path digest -> (support, word share, text varies, link density), ratios in [0, 1]."""
        keys = array("Q", self.structure_keys)
        stats = [b / _LEVELS for b in self.structure_stats]
        return {k: tuple(stats[4 * i:4 * i + 4]) for i, k in enumerate(keys)}

    def texts(self) -> dict[int, float]:
        """Text digest -> support (share of neighbour pages holding that block text), in [0, 1]."""
        return {k: s / _LEVELS for k, s in zip(array("Q", self.text_keys), self.text_support)}

    def nbytes(self) -> int:
        """Bytes of the stored evidence (keys, stats, content pairs at 16 bytes each)."""
        return (len(self.structure_keys) + len(self.structure_stats) + len(self.text_keys) + len(self.text_support)
                + 16 * len(self.content))


def _digest(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


class PathDigests:
    """Path digest of each element (module docstring), each computed once from its parent's."""

    def __init__(self) -> None:
        self._memo: dict[etree._Element, int] = {}
        self._steps: dict[tuple, int] = {}  # (parent's digest, tag, class, id) -> digest: siblings alike share it

    def __call__(self, el: etree._Element) -> int:
        chain = []
        node = el
        while node is not None and node not in self._memo:
            chain.append(node)
            node = node.getparent()
        value = self._memo[node] if node is not None else 0
        for node in reversed(chain):
            step = (value, node.tag, node.get("class"), node.get("id"))  # all element_token reads
            known = self._steps.get(step)
            if known is None:
                known = self._steps[step] = _digest(f"{value:x}/{element_token(node)}")
            value = self._memo[node] = known
        return value


_YEAR = re.compile(r"\b(?:19|20)\d\d\b")


@kernel.twin("text_digest")
def text_digest(text: str) -> int:
    """Digest of a block's text, case and whitespace folded and every year from 1900 to 2099 read as the same
    year: a copyright line recurs on a site's pages with the year it was written ("© 2005 The Associated Press.
    All rights reserved." on one page, "© 2006 ..." on the next). Other numbers stay: folding every digit would
    also make date lines and bylines recur, which some gold standards keep (docs/DECISIONS.md "Recurring texts").
    The compiled kernel computes the same where :func:`newsclean.transforms.kernel.enabled` holds."""
    if "19" in text or "20" in text:  # the regex only where a year can be (a substring test is ~10x cheaper)
        text = _YEAR.sub("1900", text)
    return _digest(" ".join(text.lower().split()))


def best_cluster(blocks: Sequence[TextBlock]) -> etree._Element | None:
    """The element holding the page's prose, Readability-style: blocks with link density <= 0.5 score
    1 + commas + min(characters / 100, 3) for their paragraph's parent and half that for its parent;
    the highest-scored element (the first on a tie), None without such blocks."""
    scores: Counter[etree._Element] = Counter()
    for b in blocks:
        if b.link_density > 0.5:
            continue
        parent = paragraph_of(b.container)
        parent = parent.getparent() if parent.getparent() is not None else parent
        grand = parent.getparent() if parent.getparent() is not None else parent
        add = 1 + b.text.count(",") + min(len(b.text) / 100, 3)
        scores[parent] += add
        scores[grand] += add / 2
    return max(scores, key=scores.__getitem__) if scores else None


@kernel.twin("summarise_page")
def summarise_page(root: etree._Element) -> PageSummary:
    """The :class:`PageSummary` of one parsed neighbour page (read only; the tree is not changed). The compiled kernel
    computes the same where :func:`newsclean.transforms.kernel.enabled` holds."""
    blocks = extract_blocks(root, SITE_BLOCKS, detail=False)  # a summary reads no text density and no pieces
    digests = PathDigests()
    words: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    texts: dict[int, list[str]] = defaultdict(list)
    for b in blocks:
        key = digests(b.container)
        words[key][0] += b.num_words
        words[key][1] += b.num_linked_words
        texts[key].append(b.text)
    best = best_cluster(blocks)
    return PageSummary({k: (w, lw, text_digest(" ".join(texts[k]))) for k, (w, lw) in words.items()},
                       sum(b.num_words for b in blocks), digests(best) if best is not None else None,
                       frozenset(text_digest(b.text) for b in blocks))


def _quantise(ratio: float) -> int:
    return max(0, min(_LEVELS, round(ratio * _LEVELS)))


def learn_site_profile(pages: Iterable[PageSummary], params: SiteProfileParams = SiteProfileParams()) -> SiteProfile | None:
    """The :class:`SiteProfile` of a neighbour sample, None when it has fewer than ``params.min_pages`` pages."""
    pages = list(pages)
    n = len(pages)
    if n < params.min_pages:
        return None
    holders: dict[int, list[tuple[int, int, int, int]]] = defaultdict(list)  # path -> (words, linked, text, page words)
    for page in pages:
        for key, (w, lw, td) in page.paths.items():
            holders[key].append((w, lw, td, page.words))
    stats = []
    for key, rows in holders.items():
        if len(rows) < params.min_support:
            continue
        text_count = Counter(r[2] for r in rows)
        share = sum(w / max(1, pw) for w, _, _, pw in rows) / n
        stats.append((len(rows), share, key, [
            len(rows) / n, share, sum(text_count[r[2]] == 1 for r in rows) / len(rows),
            sum(lw / max(1, w) for w, lw, _, _ in rows) / len(rows)]))
    stats.sort(key=lambda s: (-s[0], -s[1], s[2]))
    stats = stats[:params.max_structures]
    text_support = Counter(t for page in pages for t in page.texts)
    texts = sorted(((c, t) for t, c in text_support.items() if c >= params.min_support), key=lambda ct: (-ct[0], ct[1]))
    texts = texts[:params.max_texts]
    content = Counter(p.content_path for p in pages if p.content_path is not None)
    content = Counter({k: c for k, c in content.items() if c >= params.min_support})
    return SiteProfile(
        n,
        array("Q", [s[2] for s in stats]).tobytes(), bytes(_quantise(v) for s in stats for v in s[3]),
        array("Q", [t for _, t in texts]).tobytes(), bytes(_quantise(c / n) for c, _ in texts),
        tuple((k, c / n) for k, c in sorted(content.items(), key=lambda kc: (-kc[1], kc[0]))[:params.max_content]),
    )


@kernel.twin("content_supports", adapt=lambda supports, blocks, content: supports(list(blocks), content))
def content_supports(blocks: Sequence[TextBlock], content: dict[int, float]) -> list[float]:
    """:func:`content_support` of each block's container, one path digest and support memo for the page (by the
    compiled kernel where :func:`newsclean.transforms.kernel.enabled` holds)."""
    digests, memo = PathDigests(), {}
    return [content_support(b.container, digests, content, memo) for b in blocks]


def content_support(el: etree._Element, digests: PathDigests, content: dict[int, float],
                     memo: dict[etree._Element, float]) -> float:
    """Highest consensus support of a content path among ``el`` and its ancestors (0: none)."""
    chain = []
    node = el
    while node is not None and node not in memo:
        chain.append(node)
        node = node.getparent()
    best = memo[node] if node is not None else 0.0
    for node in reversed(chain):
        best = max(best, content.get(digests(node), 0.0))
        memo[node] = best
    return best
