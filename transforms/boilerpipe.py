"""Boilerpipe block classification: the two decision trees of Kohlschütter et al. 2010 §4.

Algorithm 1 (densitometric classifier) uses link density and text density of the previous,
current and next block; Algorithm 2 uses link density and number of words. Both are written
verbatim below, thresholds included. The block before the first and after the last is an
empty block (all features 0), as in boilerpipe's implementation.

Options from §4.3.2 ("heuristic additions"), off by default:
- Largest Content Filter: keep only the content block with the most words.
- Main Content Filter: the largest content filter plus: drop content after a block that is
  solely a comments indicator (:data:`COMMENT_INDICATORS`; the paper counts 11 such strings
  without listing them: these are ours), and content before a block that equals the
  document's ``<title>`` (or is contained in it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from newsclean.transforms.types import TextBlock

COMMENT_INDICATORS = (
    "comments", "user comments", "reader comments", "readers' comments", "add your comment",
    "add a comment", "post a comment", "leave a comment", "have your say", "join the discussion",
    "what do you think?",
)


@dataclass(frozen=True)
class BoilerpipeParams:
    """Which classifier (1: text density, 2: number of words) and which §4.3.2 filters to apply."""

    algorithm: int = 2
    largest_content: bool = False
    main_content: bool = False

    def __post_init__(self) -> None:
        if self.algorithm not in (1, 2):
            raise ValueError(f"algorithm must be 1 or 2, got {self.algorithm}")


@dataclass(frozen=True)
class _Features:
    link_density: float = 0.0
    text_density: float = 0.0
    num_words: int = 0


_EMPTY = _Features()


def _features(block: TextBlock | None) -> _Features:
    if block is None:
        return _EMPTY
    return _Features(block.link_density, block.text_density, block.num_words)


def algorithm1(prev: _Features, curr: _Features, nxt: _Features) -> bool:
    """Algorithm 1, Densitometric Classifier. True = CONTENT, False = BOILERPLATE."""
    if curr.link_density <= 0.333333:
        if prev.link_density <= 0.555556:
            if curr.text_density <= 9:
                if nxt.text_density <= 10:
                    return not prev.text_density <= 4
                return True
            return not nxt.text_density == 0
        return not nxt.text_density <= 11
    return False


def algorithm2(prev: _Features, curr: _Features, nxt: _Features) -> bool:
    """Algorithm 2, Classifier based on Number of Words. True = CONTENT, False = BOILERPLATE."""
    if curr.link_density <= 0.333333:
        if prev.link_density <= 0.555556:
            if curr.num_words <= 16:
                if nxt.num_words <= 15:
                    return not prev.num_words <= 4
                return True
            return True
        if curr.num_words <= 40:
            return not nxt.num_words <= 17
        return True
    return False


def classify_blocks(blocks: Sequence[TextBlock], params: BoilerpipeParams = BoilerpipeParams()) -> list[bool]:
    """Content (True) or boilerplate (False) for each block, with the chosen decision tree."""
    tree = algorithm1 if params.algorithm == 1 else algorithm2
    feats = [_features(b) for b in blocks]
    padded = [_EMPTY, *feats, _EMPTY]
    return [tree(padded[i - 1], padded[i], padded[i + 1]) for i in range(1, len(padded) - 1)]


def largest_content_filter(blocks: Sequence[TextBlock], content: Sequence[bool]) -> list[bool]:
    """Keep only the content block with the most words (§4.3.2); first one on ties."""
    best = max((i for i, c in enumerate(content) if c), key=lambda i: blocks[i].num_words, default=None)
    return [i == best for i in range(len(content))]


def _is_comment_indicator(text: str) -> bool:
    return text.strip().lower().rstrip(":").strip() in {c.rstrip(":") for c in COMMENT_INDICATORS}


def main_content_filter(blocks: Sequence[TextBlock], content: Sequence[bool], title: str | None) -> list[bool]:
    """§4.3.2 Main Content Filter: cut after a comments indicator and before the title block, then largest content."""
    keep = list(content)
    start = _title_index(blocks, title)
    for i in range(len(blocks)):
        if i < start:
            keep[i] = False
    for i, block in enumerate(blocks):
        if i >= start and _is_comment_indicator(block.text):
            keep[i:] = [False] * (len(blocks) - i)
            break
    return largest_content_filter(blocks, keep)


def _title_index(blocks: Sequence[TextBlock], title: str | None) -> int:
    if not title:
        return 0
    t = title.strip().lower()
    for i, block in enumerate(blocks):
        b = block.text.strip().lower()
        if b and (b == t or (len(b) >= 15 and b in t)):
            return i
    return 0


def boilerpipe(blocks: Sequence[TextBlock], params: BoilerpipeParams = BoilerpipeParams(), title: str | None = None) -> list[bool]:
    """Classify ``blocks`` and apply the filters chosen in ``params``; returns keep flags."""
    content = classify_blocks(blocks, params)
    if params.main_content:
        return main_content_filter(blocks, content, title)
    if params.largest_content:
        return largest_content_filter(blocks, content)
    return content
