"""The site vote: what the block classifier decided for each recurring block structure of a site (issue #17).

Neighbour pages carry no labels, but the classifier's own content probabilities on them do say how the
site uses each of its recurring structures. Learning runs the chain's block classifier (both stages,
with the group's static-noise signature and site profile) on every distinct page of the neighbour
sample, each tree parsed once (:func:`newsclean.transforms.site_signature.learn_site_signature`), and
keeps, per *block structure*, the number of neighbour pages holding it and the mean over those pages of the page's mean content
probability on it. A block structure is the path digest of the block's container
(:class:`newsclean.transforms.site_profile.PathDigests`: tags, class names and ids from the root)
plus whether the block is a link block (link density > :data:`LINK_BLOCK`), so that a list of
related-story links and the article's prose in the same container are two structures.

On a page, a block whose structure is held by at least ``min_pages`` neighbours, and on which the
site agrees (site mean at least ``min_margin`` away from 0.5), gets ``p' = (1 - w) p + w m``
(``m`` the site mean, ``w`` = ``weight``) before the usual threshold and the page-level steps
(:func:`vote_probabilities`). A page without a profile (fewer than two neighbour pages: the
single-page sets) is unchanged. Means are quantised to 1/255 and at most ``max_structures`` kept,
so a vote is a few KB (10 bytes a structure: at most 5 KB by default) and stays a Beam side input with the profile
(:attr:`newsclean.transforms.site_profile.SiteProfile.vote`, a
:class:`~newsclean.transforms.site_profile.SiteVote`).

Related: the site style tree of Yi, Liu & Li ("Eliminating noisy information in Web pages for data
mining", KDD 2003; not in /work/shared/papers), whose nodes carry how a site's pages use each
presentation style; here the trained classifier's probability takes the place of their importance.
Measured on leave-one-data-set-out tune pages: docs/DECISIONS.md "Site vote".
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from newsclean.transforms.blocks import TextBlock
from newsclean.transforms.site_profile import PathDigests, SiteVote

LINK_BLOCK = 0.5
"""Link density (linked words / words, in [0, 1]) above which a block is a link block: its own structure."""

_LINK_SALT = 0x9E3779B97F4A7C15  # xor-ed into a link block's path digest
_LEVELS = 255


@dataclass(frozen=True)
class SiteVoteParams:
    """Parameters of the site vote (module docstring).

    weight: w in [0, 1], the site mean's share in a voted block's probability (0: no change, 1: the site's).
    min_pages: neighbour pages (>= 2) that must hold a structure for it to vote.
    min_margin: in [0, 0.5]; a structure votes only when its site mean is at least this far from 0.5.
    max_structures: most structures stored (by support, then digest): bounds the size.

    Raises:
        ValueError: a value outside these ranges.
    """

    weight: float = 0.5
    min_pages: int = 3
    min_margin: float = 0.3
    max_structures: int = 512

    def __post_init__(self) -> None:
        if not 0.0 <= self.weight <= 1.0:
            raise ValueError(f"weight must be in [0, 1], got {self.weight}")
        if self.min_pages < 2:
            raise ValueError(f"min_pages must be >= 2, got {self.min_pages}")
        if not 0.0 <= self.min_margin <= 0.5:
            raise ValueError(f"min_margin must be in [0, 0.5], got {self.min_margin}")
        if self.max_structures < 1:
            raise ValueError(f"max_structures must be >= 1, got {self.max_structures}")


def structure_keys(blocks: Sequence[TextBlock]) -> list[int]:
    """The block structure digest of each block (module docstring)."""
    digests = PathDigests()
    return [digests(b.container) ^ (_LINK_SALT if b.link_density > LINK_BLOCK else 0) for b in blocks]


def page_vote(blocks: Sequence[TextBlock], probs: Sequence[float]) -> dict[int, float]:
    """One neighbour page's say: structure digest -> mean content probability of its blocks there."""
    if len(blocks) != len(probs):
        raise ValueError(f"{len(blocks)} blocks but {len(probs)} probabilities")
    acc: dict[int, list[float]] = defaultdict(list)
    for key, p in zip(structure_keys(blocks), probs):
        acc[key].append(p)
    return {k: sum(ps) / len(ps) for k, ps in acc.items()}


def learn_site_vote(pages: Iterable[dict[int, float]], params: SiteVoteParams = SiteVoteParams()) -> SiteVote | None:
    """The :class:`SiteVote` of a neighbour sample (one :func:`page_vote` per page); None with fewer than
    two pages. Structures held by fewer than ``params.min_pages`` pages are not stored."""
    pages = list(pages)
    if len(pages) < 2:
        return None
    held: dict[int, list[float]] = defaultdict(list)
    for page in pages:
        for key, p in page.items():
            held[key].append(p)
    rows = sorted(((len(ps), k, sum(ps) / len(ps)) for k, ps in held.items() if len(ps) >= params.min_pages),
                  key=lambda r: (-r[0], r[1]))[:params.max_structures]
    return SiteVote(len(pages), array("Q", [k for _, k, _ in rows]).tobytes(), bytes(min(255, s) for s, _, _ in rows),
                    bytes(max(0, min(_LEVELS, round(m * _LEVELS))) for _, _, m in rows))


def vote_probabilities(blocks: Sequence[TextBlock], probs: Sequence[float], vote: SiteVote | None,
                       params: SiteVoteParams = SiteVoteParams()) -> list[float]:
    """Content probabilities (in [0, 1], one per block) after the site vote: ``(1 - w) p + w m`` for a block
    whose structure is held by >= ``min_pages`` neighbours with site mean ``m`` at least ``min_margin`` from
    0.5; others unchanged. ``vote`` None (no neighbours): ``probs`` unchanged (a new list)."""
    probs = list(probs)
    if vote is None or not blocks:
        return probs
    if len(blocks) != len(probs):
        raise ValueError(f"{len(blocks)} blocks but {len(probs)} probabilities")
    table = vote.table()
    w = params.weight
    out = []
    for key, p in zip(structure_keys(blocks), probs):
        support, mean = table.get(key, (0, 0.5))
        if support >= params.min_pages and abs(mean - 0.5) >= params.min_margin:
            p = (1 - w) * p + w * mean
        out.append(p)
    return out
