"""Lines of one paragraph take the paragraph's decision.

A ``<br>`` splits a paragraph into atomic text blocks (Kohlschütter 2010 §3.3: every tag but ``<a>`` separates
blocks), and the block classifier then decides on each line alone: the lines of a lyric or a poem, a standfirst with
manual breaks, a ``Name: ...`` line of an interview, a line that is one link (a source, a title link) are 2-8 word
blocks that look like navigation on their own, and are dropped from a paragraph the classifier otherwise keeps.

A *line run* is a maximal run of consecutive blocks (document order) with the same container element (the
nearest separator element holding the block's first text: ``<p>`` for every line of ``<p>a<br>b<br>c</p>``).
When the kept blocks of a run hold at least ``min_kept_share`` of its words, every block of the run is kept
(:func:`paragraph_lines_keep`); with ``drop_share`` set, a run whose kept blocks hold at most that share of its
words loses them too (a stray line kept from a dropped paragraph). The paragraph-level unit of jusText
(Pomikálek 2011 §3.1, which classifies whole ``<p>``/``<br>``-joined paragraphs) and of trafilatura, applied after a
block classifier. Measured on leave-one-data-set-out tune pages: evaluation/experiments-accuracy.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from newsclean.transforms.context import PageContext
from newsclean.transforms.types import TextBlock


@dataclass(frozen=True)
class ParagraphLinesParams:
    """Settings of :func:`paragraph_lines_keep`.

    min_kept_share: in (0, 1]: a run whose kept blocks hold at least this share of its words is kept whole.
    drop_share: in [0, 1) or None: a run whose kept blocks hold at most this share of its words is dropped whole
        (None: never).
    min_blocks: runs of fewer blocks are left alone (2: any split paragraph).
    max_run_words: runs of more words are left alone (a whole page of loose text in one ``<div>``; None: any).

    Raises ValueError for a share outside its range or ``min_blocks`` < 2.
    """

    min_kept_share: float = 0.5
    drop_share: float | None = None
    min_blocks: int = 2
    max_run_words: int | None = None

    def __post_init__(self) -> None:
        if not 0.0 < self.min_kept_share <= 1.0:
            raise ValueError(f"min_kept_share must be in (0, 1], got {self.min_kept_share!r}")
        if self.drop_share is not None and not 0.0 <= self.drop_share < self.min_kept_share:
            raise ValueError(f"drop_share must be in [0, min_kept_share) or None, got {self.drop_share!r}")
        if self.min_blocks < 2:
            raise ValueError(f"min_blocks must be >= 2, got {self.min_blocks}")

    def __call__(self, blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                 ctx: PageContext) -> list[bool]:
        """The step (:class:`~newsclean.transforms.refine.RefineStep`): :func:`paragraph_lines_keep`."""
        return paragraph_lines_keep(blocks, keep, self)


def line_runs(blocks: Sequence[TextBlock]) -> list[range]:
    """The maximal runs of consecutive blocks with the same container element, as index ranges, in order."""
    runs: list[range] = []
    start = 0
    for i in range(1, len(blocks) + 1):
        if i == len(blocks) or blocks[i].container is not blocks[start].container:
            runs.append(range(start, i))
            start = i
    return runs


def paragraph_lines_keep(blocks: Sequence[TextBlock], keep: Sequence[bool],
                         params: ParagraphLinesParams = ParagraphLinesParams()) -> list[bool]:
    """``keep`` with every line run (:func:`line_runs`) of at least ``params.min_blocks`` blocks given its
    majority's decision (:class:`ParagraphLinesParams`), words counted as ``TextBlock.num_words``. One flag per
    block; ``keep`` itself is not changed."""
    out = list(keep)
    for run in line_runs(blocks):
        if len(run) < params.min_blocks:
            continue
        words = sum(blocks[i].num_words for i in run)
        if not words or (params.max_run_words is not None and words > params.max_run_words):
            continue
        kept = sum(blocks[i].num_words for i in run if keep[i])
        if kept >= params.min_kept_share * words:
            decision = True
        elif params.drop_share is not None and kept <= params.drop_share * words:
            decision = False
        else:
            continue
        for i in run:
            out[i] = decision
    return out
