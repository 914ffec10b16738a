"""Dynamic noise: link-heavy subtrees (related, most-read, recent lists) found by least common ancestors.

StaDyNoT (Barua et al. 2014) §3.2. Every ``<a>`` node is written as a *path string*
(``0(html)-1(body)-12(div)-0(div)-3(p)``: each step is the node's 0-based position among its
parent's element children and its tag). The least common ancestors of the anchors are the
candidate dynamic noise tags; a candidate is dynamic noise unless it is a ``<p>``, when

- its non-link text is shorter than α characters (spaces included), or
- its link fraction LF = link characters / all characters exceeds β.

Decisions the paper leaves open, fixed here (and measured in ``newsclean eval``):
- Candidates are the least common ancestors of each pair of anchors that are neighbours in
  document order; that yields the list nodes of Fig. 4 and never the LCA of the whole page.
- The stage reads "the output DOM tree of Stage 1": text of nodes already marked noise is not
  counted, and candidates are decided deepest first, so a wrapper around an article and a
  related-links box is judged on its remaining text once the box is marked.
- β is printed as "20"; as LF is a ratio in [0, 1] it is read as 20 % (0.2): read literally,
  the β test could never fire. 0.2 is kept as the paper's value although the data mildly prefer a
  laxer β (measurements: docs/DECISIONS.md, "Dynamic noise β"); the shipped learned chain reads the
  marks as one feature among many.
- ``<html>`` and ``<body>`` are never candidates (:attr:`DynamicNoiseParams.protected_tags`).
- Characters are counted on whitespace-collapsed text pieces.
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree

from newsclean.transforms import kernel
from newsclean.transforms.dom import ancestors_or_self, in_noise
from newsclean.transforms.marks import mark
from newsclean.transforms.vocab import DYNAMIC, NOISE_ATTR


@dataclass(frozen=True)
class DynamicNoiseParams:
    """Parameters of dynamic noise marking (StaDyNoT §3.2).

    alpha: non-link characters (spaces included) below which a candidate is noise; paper 50.
    beta: link fraction in [0, 1] above which a candidate is noise; paper "20" read as 0.2.
    never_noise_tags: candidates with these tags are never noise (paper: ``p``).
    protected_tags: never candidates (the whole page); not in the paper.
    """

    alpha: int = 50
    beta: float = 0.2
    never_noise_tags: tuple[str, ...] = ("p",)
    protected_tags: tuple[str, ...] = ("html", "body")


_ANCHORS_OUTSIDE_NOISE = etree.XPath(
    f"descendant-or-self::a[not(ancestor-or-self::*[@{NOISE_ATTR} != ''])]")  # mark_of() is a non-empty string


def candidate_nodes(root: etree._Element, params: DynamicNoiseParams = DynamicNoiseParams()) -> list[etree._Element]:
    """LCA candidates of neighbouring anchors outside marked noise, unique, deepest first.

    Each anchor's ancestors are listed once (it is the right of one pair and the left of the next)."""
    depth: dict[etree._Element, int] = {}
    protected = params.protected_tags
    previous: set[etree._Element] | None = None  # the left anchor's ancestors-or-self
    for anchor in _ANCHORS_OUTSIDE_NOISE(root):
        chain = [anchor, *anchor.iterancestors()]
        if previous is not None:
            for k, node in enumerate(chain):  # the least common ancestor (chain[-1], the root, is in both)
                if node in previous:
                    if node not in depth and node.tag not in protected:
                        depth[node] = len(chain) - k
                    break
        previous = set(chain)  # holds the proxies, so identity is stable while we compare
    return sorted(depth, key=lambda el: -depth[el])


class TextCounts:
    """Link and non-link characters under every element, excluding text of noise-marked elements.

    ``counts[el] = [link_chars, nonlink_chars]`` for the subtree of ``el``; :meth:`remove`
    subtracts a subtree that has just been marked from all its ancestors. ``pair_depths``: the
    least common ancestors of neighbouring anchors outside marked noise (below ``root``) with their
    depth, found in the same walk (what :func:`candidate_nodes` sorts; ``protected`` tags left out).
    ``candidates_only``: ``counts`` holds the candidates (``pair_depths``) only, all that
    :func:`mark_dynamic_noise` reads (a candidate's ancestors that are no candidates are never tested).
    """

    def __init__(self, root: etree._Element, protected: tuple[str, ...] = DynamicNoiseParams.protected_tags,
                 candidates_only: bool = False):
        self.counts: dict[etree._Element, list[int]] = {}
        self.pair_depths: dict[etree._Element, int] = {}
        self._fill(root, protected, candidates_only)

    def _fill(self, root: etree._Element, protected: tuple[str, ...], candidates_only: bool) -> None:
        """Counts of every element in one walk: an element's text and its children's tails count for it
        (link text inside an ``<a>``; none inside a marked element). Characters are summed into two
        running totals; an element's counts are the totals at its end minus those at its start. The
        least common ancestor of an anchor and the previous one is the deepest element open at both,
        i.e. the open element at the lowest depth the walk returned to in between (``low``)."""
        counts, pair_depths = self.counts, self.pair_depths
        starts: list[tuple[int, int, bool, bool, etree._Element]] = []  # per open element: totals at its
        # start, whether it is a link, whether it is marked, the element
        link = nonlink = 0  # running totals of characters in and outside links, outside noise
        links = marked = 0  # open <a> elements, open marked elements
        low = 0  # fewest open elements since the last anchor outside noise (0: none yet)
        for event, el in etree.iterwalk(root, events=("start", "end", "comment", "pi")):
            if event == "start":
                is_link = el.tag == "a"
                is_marked = bool(el.get(NOISE_ATTR))
                starts.append((link, nonlink, is_link, is_marked, el))
                links += is_link
                marked += is_marked
                if is_link and not marked:
                    if low:
                        node = starts[low - 1][4]
                        if node not in pair_depths and node.tag not in protected:
                            pair_depths[node] = low
                    low = len(starts)
                text = el.text
                if text and not marked and not text.isspace():
                    if links:
                        link += len(" ".join(text.split()))
                    else:
                        nonlink += len(" ".join(text.split()))
                continue
            if event == "end":
                link0, nonlink0, is_link, is_marked, _ = starts.pop()
                if not candidates_only or el in pair_depths:  # a candidate is one while it is open
                    counts[el] = [link - link0, nonlink - nonlink0]
                links -= is_link
                marked -= is_marked
                if not starts:
                    continue
                if len(starts) < low:
                    low = len(starts)
            tail = el.tail  # text of the parent (after an element's end, or a comment or processing instruction)
            if tail and not marked and not tail.isspace():
                if links:
                    link += len(" ".join(tail.split()))
                else:
                    nonlink += len(" ".join(tail.split()))

    def remove(self, el: etree._Element) -> None:
        """Subtract the subtree of ``el`` from its ancestors' counts (``el`` was just marked)."""
        link, nonlink = self.counts[el]
        for anc in ancestors_or_self(el.getparent()) if el.getparent() is not None else ():
            held = self.counts.get(anc)  # None: not counted (``candidates_only``)
            if held is not None:
                held[0] -= link
                held[1] -= nonlink
        self.counts[el] = [0, 0]


def is_dynamic_noise(link_chars: int, nonlink_chars: int, params: DynamicNoiseParams) -> bool:
    """§3.2 filter 2: non-link characters < α, or link fraction > β."""
    total = link_chars + nonlink_chars
    if nonlink_chars < params.alpha:
        return True
    return total > 0 and link_chars / total > params.beta


def mark_dynamic_noise(root: etree._Element, params: DynamicNoiseParams = DynamicNoiseParams()) -> int:
    """Mark (not remove) dynamic noise candidates of ``root`` that pass the §3.2 tests. Returns the count marked.

    Candidates as :func:`candidate_nodes` (found in the counting walk: :class:`TextCounts`). The compiled kernel
    does the same where :func:`newsclean.transforms.kernel.enabled` holds."""
    return _mark_dynamic(root, params)


@kernel.twin("mark_dynamic_noise", compare=kernel.TREE)
def _mark_dynamic(root: etree._Element, params: DynamicNoiseParams) -> int:
    """:func:`mark_dynamic_noise` with its settings given."""
    if root.getparent() is not None and in_noise(root.getparent()):
        return 0  # every anchor lies in marked noise: no candidate
    counts = TextCounts(root, params.protected_tags, candidates_only=True)
    marked = 0
    # No candidate lies in noise when it is decided: it is the ancestor of an anchor outside the static
    # marks, and dynamic marks so far went to candidates at least as deep (never to its ancestors).
    for el in sorted(counts.pair_depths, key=lambda el: -counts.pair_depths[el]):
        if el.tag in params.never_noise_tags:
            continue
        link, nonlink = counts.counts[el]
        if is_dynamic_noise(link, nonlink, params):
            mark(el, DYNAMIC)
            counts.remove(el)
            marked += 1
    return marked
